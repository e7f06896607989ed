//! The send side of a connection: a preallocated send buffer, a queue of
//! paced application messages, and the [`Conn`] handle the handler sends with.

use std::time::Instant;

use rand::RngCore;
use rand::rngs::StdRng;
use tickwire_codec::handshake::HandshakeError;
use tickwire_codec::{
    CloseCode, EncodeError, OpCode, Role, encode_close, encode_frame, header_len,
};

use crate::actions::Reserve;
use crate::config::Endpoint;
use crate::error::{DriverError, SendError};
use crate::id::ConnId;
use crate::region::{Region, RegionError};

impl From<RegionError> for SendError {
    fn from(e: RegionError) -> Self {
        match e {
            RegionError::TooLarge => SendError::TooLarge,
            RegionError::Full => SendError::Full,
        }
    }
}

/// A close the application asked for from inside a callback.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CloseRequest {
    pub(crate) code: CloseCode,
    reason: [u8; 123],
    len: u8,
}

impl CloseRequest {
    pub(crate) fn new(code: CloseCode, reason: &str) -> Result<CloseRequest, SendError> {
        if !code.is_valid_on_wire() || reason.len() > 123 {
            return Err(SendError::InvalidControl);
        }
        let mut bytes = [0u8; 123];
        bytes[..reason.len()].copy_from_slice(reason.as_bytes());
        Ok(CloseRequest {
            code,
            reason: bytes,
            len: reason.len() as u8,
        })
    }

    pub(crate) fn reason(&self) -> &str {
        // Built from a `&str` and cut at its end, so it is valid UTF-8.
        std::str::from_utf8(&self.reason[..usize::from(self.len)]).unwrap_or_default()
    }
}

/// The send side of one connection slot.
pub(crate) struct Outgoing {
    /// Encoded frames (and handshake bytes) waiting for the socket.
    wire: Region,
    /// Paced application frames, each prefixed by its length (u32, LE).
    outbox: Region,
    rate: Option<f64>,
    burst: f64,
    tokens: f64,
    refilled: Instant,
    role: Role,
    pub(crate) open: bool,
    pub(crate) close_request: Option<CloseRequest>,
}

impl Outgoing {
    pub(crate) fn new(wire: usize, outbox: usize, rate: Option<f64>, burst: u32) -> Outgoing {
        Outgoing {
            wire: Region::new(wire),
            outbox: Region::new(outbox),
            rate: rate.filter(|r| *r > 0.0),
            burst: f64::from(burst.max(1)),
            tokens: 0.0,
            refilled: Instant::now(),
            role: Role::Client,
            open: false,
            close_request: None,
        }
    }

    /// Prepares for a new connection in `role`.
    pub(crate) fn reset(&mut self, role: Role, now: Instant) {
        self.wire.clear();
        self.outbox.clear();
        self.tokens = self.burst;
        self.refilled = now;
        self.role = role;
        self.open = false;
        self.close_request = None;
    }

    /// Bytes waiting for the socket.
    pub(crate) fn pending(&self) -> &[u8] {
        self.wire.pending()
    }

    pub(crate) fn consume(&mut self, n: usize) {
        self.wire.consume(n);
    }

    /// The send buffer itself, for writing it to the socket.
    pub(crate) fn wire_mut(&mut self) -> &mut Region {
        &mut self.wire
    }

    /// Whether paced messages are waiting.
    pub(crate) fn has_queued(&self) -> bool {
        self.outbox.start != self.outbox.end
    }

    fn mask(&self, rng: &mut StdRng) -> Option<[u8; 4]> {
        // Clients mask with a fresh, unpredictable key per frame (RFC 6455 5.3).
        self.role
            .masks_outgoing()
            .then(|| rng.next_u32().to_ne_bytes())
    }

    /// Lets `write` put a handshake message (request, response or
    /// rejection) straight into the send buffer; it returns the length.
    pub(crate) fn push_handshake(
        &mut self,
        write: impl FnOnce(&mut [u8]) -> Result<usize, HandshakeError>,
    ) -> Result<(), HandshakeError> {
        let room = self.wire.buf.len() - (self.wire.end - self.wire.start);
        let space = self
            .wire
            .reserve(room)
            .map_err(|_| HandshakeError::InsufficientSize { required: room + 1 })?;
        let n = write(space)?;
        self.wire.commit(n);
        Ok(())
    }

    /// Encodes a frame straight into the send buffer: protocol chores and
    /// unpaced sends.
    pub(crate) fn push_frame(
        &mut self,
        opcode: OpCode,
        payload: &[u8],
        rng: &mut StdRng,
    ) -> Result<(), SendError> {
        let mask = self.mask(rng);
        let len = header_len(payload.len(), mask.is_some()) + payload.len();
        let dst = self.wire.reserve(len)?;
        let n = encode_frame(dst, opcode, true, payload, mask).map_err(encode_error)?;
        self.wire.commit(n);
        Ok(())
    }

    /// Encodes a Close frame straight into the send buffer.
    pub(crate) fn push_close(
        &mut self,
        close: Option<(CloseCode, &str)>,
        rng: &mut StdRng,
    ) -> Result<(), SendError> {
        let mask = self.mask(rng);
        let dst = self.wire.reserve(2 + 4 + 125)?;
        let n = encode_close(dst, close, mask).map_err(encode_error)?;
        self.wire.commit(n);
        Ok(())
    }

    /// Sends an application message: through the outbox when paced, straight
    /// into the send buffer otherwise.
    pub(crate) fn send(
        &mut self,
        opcode: OpCode,
        payload: &[u8],
        rng: &mut StdRng,
    ) -> Result<(), SendError> {
        if !self.open {
            return Err(SendError::NotOpen);
        }
        if self.rate.is_none() {
            return self.push_frame(opcode, payload, rng);
        }
        let mask = self.mask(rng);
        let len = header_len(payload.len(), mask.is_some()) + payload.len();
        if len > self.wire.buf.len() {
            return Err(SendError::TooLarge);
        }
        let dst = self.outbox.reserve(4 + len)?;
        let n = encode_frame(&mut dst[4..], opcode, true, payload, mask).map_err(encode_error)?;
        dst[..4].copy_from_slice(&(n as u32).to_le_bytes());
        self.outbox.commit(4 + n);
        Ok(())
    }

    /// Paces application messages at `rate` a second (`None`: not at
    /// all), `burst` of them back to back.
    pub(crate) fn set_pace(&mut self, rate: Option<f64>, burst: u32) {
        self.rate = rate.filter(|r| *r > 0.0);
        self.burst = f64::from(burst.max(1));
        self.tokens = self.tokens.min(self.burst);
    }

    /// Moves paced frames whose turn has come into the send buffer. Returns
    /// when the next queued frame may go, if one is waiting.
    pub(crate) fn release(&mut self, now: Instant) -> Option<Instant> {
        let rate = self.rate?;
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate).min(self.burst);
        self.refilled = now;
        while self.tokens >= 1.0 && self.has_queued() {
            let queued = self.outbox.pending();
            let len = u32::from_le_bytes([queued[0], queued[1], queued[2], queued[3]]) as usize;
            let Ok(dst) = self.wire.reserve(len) else {
                // The send buffer is full; the frame waits for the socket to drain.
                return None;
            };
            dst.copy_from_slice(&self.outbox.pending()[4..4 + len]);
            self.wire.commit(len);
            self.outbox.consume(4 + len);
            self.tokens -= 1.0;
        }
        if self.has_queued() {
            let wait = (1.0 - self.tokens).max(0.0) / rate;
            Some(now + std::time::Duration::from_secs_f64(wait))
        } else {
            None
        }
    }
}

fn encode_error(e: EncodeError) -> SendError {
    match e {
        EncodeError::InsufficientSize { .. } => SendError::Full,
        _ => SendError::InvalidControl,
    }
}

/// A connection, as the handler sees it during a callback: its id, ways
/// to send and to close, and ways to act on the driver beyond it: fetch,
/// connect, send to another connection (carried out as soon as the
/// callback returns, before the driver reads another socket).
pub struct Conn<'a> {
    pub(crate) id: ConnId,
    pub(crate) out: &'a mut Outgoing,
    pub(crate) rng: &'a mut StdRng,
    pub(crate) reserve: Reserve<'a>,
}

impl Conn<'_> {
    /// This connection's id, stable across reconnects.
    pub fn id(&self) -> ConnId {
        self.id
    }

    /// Whether this end is the client or the server.
    pub fn role(&self) -> Role {
        self.out.role
    }

    /// Sends a text message (paced when `Config::send_rate` is set).
    pub fn send_text(&mut self, text: &str) -> Result<(), SendError> {
        self.out.send(OpCode::Text, text.as_bytes(), self.rng)
    }

    /// Sends a binary message (paced when `Config::send_rate` is set).
    pub fn send_binary(&mut self, data: &[u8]) -> Result<(), SendError> {
        self.out.send(OpCode::Binary, data, self.rng)
    }

    /// Sends a Ping right away (not paced); at most 125 bytes.
    pub fn send_ping(&mut self, data: &[u8]) -> Result<(), SendError> {
        if !self.out.open {
            return Err(SendError::NotOpen);
        }
        self.out.push_frame(OpCode::Ping, data, self.rng)
    }

    /// Starts the close handshake with `code` and `reason` (at most 123
    /// bytes) once the callback returns. The connection is not reconnected.
    pub fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), SendError> {
        self.out.close_request = Some(CloseRequest::new(code, reason)?);
        Ok(())
    }

    /// Fetches `endpoint` with one GET, as
    /// [`Driver::fetch`](crate::Driver::fetch) does, from inside the
    /// callback: its slot is taken now (the id its response will come
    /// with, in [`Handler::on_response`](crate::Handler::on_response), is
    /// returned), and it starts as soon as the callback returns. E.g. a
    /// book's REST snapshot, asked for by the message that found it
    /// stale.
    pub fn fetch(&mut self, endpoint: Endpoint) -> Result<ConnId, DriverError> {
        self.fetch_sized(endpoint, 0)
    }

    /// [`fetch`](Self::fetch) in a slot whose receive buffer holds a
    /// response of `max_response` bytes (see
    /// [`Config::sized_slots`](crate::Config::sized_slots)).
    pub fn fetch_sized(
        &mut self,
        endpoint: Endpoint,
        max_response: usize,
    ) -> Result<ConnId, DriverError> {
        self.reserve
            .open(endpoint, true, max_response)
            .ok_or(DriverError::NoFreeSlot)
    }

    /// Opens another WebSocket connection, as
    /// [`Driver::connect`](crate::Driver::connect) does, from inside the
    /// callback: its slot is taken now and it connects as soon as the
    /// callback returns.
    pub fn connect(&mut self, endpoint: Endpoint) -> Result<ConnId, DriverError> {
        self.connect_sized(endpoint, 0)
    }

    /// [`connect`](Self::connect) in a slot whose message buffer holds
    /// `max_message` bytes (see
    /// [`Config::sized_slots`](crate::Config::sized_slots)).
    pub fn connect_sized(
        &mut self,
        endpoint: Endpoint,
        max_message: usize,
    ) -> Result<ConnId, DriverError> {
        self.reserve
            .open(endpoint, false, max_message)
            .ok_or(DriverError::NoFreeSlot)
    }

    /// Sends a text message on another connection `id` (or this one) as
    /// soon as the callback returns (the frames after this message wait
    /// for it); a connection that is not open by then drops it. The
    /// messages one callback queues (at most 64) share a buffer the size
    /// of [`Config::outbox_size`](crate::Config::outbox_size): `Full` when
    /// it is, `TooLarge` for a message it can never hold.
    pub fn send_text_to(&mut self, id: ConnId, text: &str) -> Result<(), SendError> {
        self.reserve.actions.send(id, OpCode::Text, text.as_bytes())
    }

    /// [`send_text_to`](Self::send_text_to) for a binary message.
    pub fn send_binary_to(&mut self, id: ConnId, data: &[u8]) -> Result<(), SendError> {
        self.reserve.actions.send(id, OpCode::Binary, data)
    }
}
