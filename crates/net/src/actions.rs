//! What a handler asks of the driver from inside a callback, beyond its
//! own connection: a fetch or a new connection (its slot taken at once,
//! so the id is known in the callback), a message to another connection.
//! The driver carries them out as soon as the callback returns, before
//! it reads another socket. Everything here is allocated when the driver
//! is: asking allocates nothing.

use tickwire_codec::OpCode;

use crate::config::Endpoint;
use crate::error::SendError;
use crate::id::ConnId;

/// The requests made during callbacks and not yet carried out.
pub(crate) struct Actions {
    /// Connections and fetches whose slots are taken.
    pub(crate) opens: Vec<Open>,
    /// Messages for other connections: their bytes are in `bytes`.
    pub(crate) sends: Vec<QueuedSend>,
    pub(crate) bytes: Vec<u8>,
}

/// A connection or fetch asked for, its slot taken.
pub(crate) struct Open {
    pub(crate) index: usize,
    pub(crate) serial: u32,
    pub(crate) endpoint: Endpoint,
    pub(crate) fetch: bool,
}

/// A message for connection `id`: `bytes[start..start + len]`.
pub(crate) struct QueuedSend {
    pub(crate) id: ConnId,
    pub(crate) op: OpCode,
    pub(crate) start: usize,
    pub(crate) len: usize,
}

/// Messages a callback may queue for other connections at once: as many
/// as an order desk takes in one handler call (the feed's, 256), so that
/// a burst of orders from one market update goes as the callback returns.
const MAX_SENDS: usize = 256;

impl Actions {
    /// Room for a request per slot, and for `bytes` bytes of messages to
    /// other connections.
    pub(crate) fn new(slots: usize, bytes: usize) -> Actions {
        Actions {
            opens: Vec::with_capacity(slots),
            sends: Vec::with_capacity(MAX_SENDS),
            bytes: Vec::with_capacity(bytes),
        }
    }

    /// Whether anything waits to be carried out.
    pub(crate) fn pending(&self) -> bool {
        !self.opens.is_empty() || !self.sends.is_empty()
    }

    /// Queues a message for `id`; `Full` when the queue or its bytes are
    /// (never growing them).
    pub(crate) fn send(&mut self, id: ConnId, op: OpCode, data: &[u8]) -> Result<(), SendError> {
        if data.len() > self.bytes.capacity() {
            return Err(SendError::TooLarge);
        }
        if self.sends.len() == self.sends.capacity()
            || self.bytes.capacity() - self.bytes.len() < data.len()
        {
            return Err(SendError::Full);
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.sends.push(QueuedSend {
            id,
            op,
            start,
            len: data.len(),
        });
        Ok(())
    }
}

/// The smallest free slot whose buffer holds `need` bytes: the receive
/// buffer for a fetch (`fetch`), the message buffer for a WebSocket.
/// Between slots as large, the one whose other buffer is smaller, then
/// the one freed last (its memory is the warmest). A server connection
/// asks with `need` 0: a default slot while one is free, so that the
/// larger slots stay for the connections sized for them. Taken out of
/// `free`.
pub(crate) fn take_slot(
    free: &mut Vec<usize>,
    sizes: &[(usize, usize)],
    fetch: bool,
    need: usize,
) -> Option<usize> {
    let size = |i: usize| {
        let (read, message) = sizes[i];
        if fetch {
            (read, message)
        } else {
            (message, read)
        }
    };
    let at = free
        .iter()
        .enumerate()
        .filter(|&(_, &i)| size(i).0 >= need)
        .min_by_key(|&(k, &i)| (size(i), std::cmp::Reverse(k)))
        .map(|(k, _)| k)?;
    Some(free.remove(at))
}

/// The next connection serial (never 0).
pub(crate) fn take_serial(next: &mut u32) -> u32 {
    let serial = *next;
    *next = next.wrapping_add(1).max(1);
    serial
}

/// What of the driver a callback may reserve from: free slots (their
/// sizes), serials, and the queue of requests.
pub(crate) struct Reserve<'a> {
    pub(crate) free: &'a mut Vec<usize>,
    pub(crate) sizes: &'a [(usize, usize)],
    pub(crate) next_serial: &'a mut u32,
    pub(crate) actions: &'a mut Actions,
}

impl Reserve<'_> {
    /// Takes a slot for `endpoint` now; it connects when the callback
    /// returns.
    pub(crate) fn open(&mut self, endpoint: Endpoint, fetch: bool, need: usize) -> Option<ConnId> {
        let index = take_slot(self.free, self.sizes, fetch, need)?;
        let serial = take_serial(self.next_serial);
        self.actions.opens.push(Open {
            index,
            serial,
            endpoint,
            fetch,
        });
        Some(ConnId {
            index: index as u32,
            serial,
        })
    }
}
