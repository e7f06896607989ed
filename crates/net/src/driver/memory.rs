//! Connections over an in-memory stream, for tickwire's own benchmarks and
//! fuzz targets (the `internals` feature, or `--cfg fuzzing`): the caller
//! plays the server and hands the driver bytes as a socket would, and the
//! driver reads and processes them with the code it runs on a socket
//! ([`on_readable`](Driver::on_readable)): receive buffer, TLS in place,
//! frames, handler. Only the system calls are missing. Such a connection
//! is never reconnected (there is nothing to dial).

use super::*;
use crate::socket::Pipe;

impl<H: Handler> Driver<H> {
    /// A client connection to `endpoint` over an in-memory stream whose
    /// reads return at most `max_read` bytes (0: as many as fit). Without
    /// `session`, its TLS handshake (for `wss`) and upgrade request start
    /// at once, as after a TCP connect; with one, the connection is open
    /// already, over that session.
    pub(crate) fn memory_open(
        &mut self,
        endpoint: Endpoint,
        max_read: usize,
        session: Option<TlsSession>,
    ) -> Result<ConnId, DriverError> {
        let index =
            take_slot(&mut self.free, &self.sizes, false, 0).ok_or(DriverError::NoFreeSlot)?;
        let serial = take_serial(&mut self.next_serial);
        let slot = &mut self.slots[index];
        slot.serial = serial;
        slot.generation = slot.generation.wrapping_add(1) & 0x7fff;
        slot.role = Role::Client;
        slot.endpoint = Some(endpoint);
        slot.attempt = 0;
        slot.fetch = false;
        slot.local_close = false;
        slot.reason = None;
        slot.clear_timers();
        slot.tx
            .set_pace(self.config.send_rate, self.config.send_burst);
        slot.socket = Some(Socket::Memory(Pipe {
            max_read,
            ..Pipe::default()
        }));
        match session {
            None => self.start_session(index),
            Some(session) => {
                let now = self.now;
                let slot = &mut self.slots[index];
                slot.tx.reset(Role::Client, now);
                slot.tls_out.clear();
                slot.rx.clear();
                slot.rx.decoder.reset_for(Role::Client);
                slot.tls = Some(session);
                slot.last_rx = now;
                self.opened(index);
            }
        }
        Ok(self.slots[index].id(index))
    }

    /// The peer sends `bytes`: the driver reads them (in reads of at most
    /// the stream's `max_read`) and processes each read as it processes a
    /// socket's. `bytes` is lent to the stream, not copied, and handed back
    /// as it was, unless the connection ended meanwhile.
    pub(crate) fn memory_deliver(
        &mut self,
        id: ConnId,
        bytes: &mut Vec<u8>,
    ) -> Result<(), DriverError> {
        let index = self.lookup(id)?;
        let Some(Socket::Memory(pipe)) = self.slots[index].socket.as_mut() else {
            return Err(DriverError::UnknownConnection);
        };
        std::mem::swap(&mut pipe.incoming, bytes);
        pipe.read_at = 0;
        // One call reads until a read comes back short or its budget is
        // spent; a socket's next edge (or the backlog) would call it again.
        loop {
            match self.slots[index].socket.as_mut() {
                Some(Socket::Memory(pipe)) if !pipe.drained() => {}
                Some(Socket::Memory(pipe)) => {
                    std::mem::swap(&mut pipe.incoming, bytes);
                    pipe.incoming.clear();
                    return Ok(());
                }
                _ => return Ok(()), // ended
            }
            self.on_readable(index, false);
        }
    }

    /// Appends what the driver wrote to the stream since the last call to
    /// `out`.
    pub(crate) fn memory_written(
        &mut self,
        id: ConnId,
        out: &mut Vec<u8>,
    ) -> Result<(), DriverError> {
        let index = self.lookup(id)?;
        match self.slots[index].socket.as_mut() {
            Some(Socket::Memory(pipe)) => {
                out.extend_from_slice(&pipe.written);
                pipe.written.clear();
                Ok(())
            }
            _ => Err(DriverError::UnknownConnection),
        }
    }

    /// Ends the in-memory connection `id` at once, as a failed socket would
    /// ([`Disconnect::Io`] `ConnectionAborted`), and frees its slot.
    pub(crate) fn memory_end(&mut self, id: ConnId) -> Result<(), DriverError> {
        let index = self.lookup(id)?;
        self.end(index, Disconnect::Io(io::ErrorKind::ConnectionAborted));
        Ok(())
    }
}
