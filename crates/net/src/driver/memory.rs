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
    /// reads return at most `chunk` bytes (0: as many as the read asks for). Without
    /// `session`, its TLS handshake (for `wss`) and upgrade request start
    /// at once, as after a TCP connect; with one, the connection is open
    /// already, over that session.
    pub(crate) fn memory_open(
        &mut self,
        endpoint: Endpoint,
        chunk: usize,
        session: Option<TlsSession>,
    ) -> Result<ConnId, DriverError> {
        let index =
            take_slot(&mut self.free, &self.sizes, false, 0).ok_or(DriverError::NoFreeSlot)?;
        let serial = take_serial(&mut self.next_serial);
        self.claim_client(index, serial, endpoint, false);
        let slot = &mut self.slots[index];
        slot.generation = slot.generation.wrapping_add(1) & 0x7fff;
        slot.reason = None;
        slot.clear_timers();
        slot.socket = Some(Socket::Memory(Pipe {
            chunk,
            ..Pipe::default()
        }));
        // Taken now: starting may already end the slot (the handler was
        // told this id either way).
        let id = slot.id(index);
        match session {
            None => self.start_session(index),
            Some(session) => {
                let now = self.now;
                let slot = &mut self.slots[index];
                slot.tx.reset(Role::Client, now);
                slot.tls_out.clear();
                slot.rx.reset(Role::Client);
                slot.tls = Some(session);
                slot.last_rx = now;
                self.opened(index);
            }
        }
        Ok(id)
    }

    /// The peer sends `bytes`: the driver reads them (in reads of at most
    /// the stream's `chunk` and `Config::max_read`) and processes each read
    /// as it processes a socket's. `bytes` is lent to the stream, not copied, and handed back
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{
        Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect, Role,
        Stamps, TlsConfig,
    };

    /// A handler that always asks for a reconnect.
    #[derive(Default)]
    struct Retry {
        closed: Vec<String>,
        reconnecting: usize,
    }

    impl Handler for Retry {
        fn on_message(&mut self, _: &mut Conn<'_>, _: Payload<'_>, _: Stamps) {}

        fn on_close(&mut self, _: ConnId, _: Role, reason: &Disconnect) -> Reconnect {
            self.closed.push(reason.to_string());
            Reconnect::Yes
        }

        fn on_reconnecting(&mut self, _: ConnId, _: u32, _: Duration) {
            self.reconnecting += 1;
        }
    }

    /// There is nothing to dial for an in-memory stream: a handler asking
    /// to reconnect one gets a free slot, not a TCP connect to its host.
    #[test]
    fn an_in_memory_connection_is_never_dialled_again() {
        let config = Config {
            max_connections: 1,
            ..Config::default()
        };
        let mut driver = Driver::new(config, &TlsConfig::empty(), Retry::default()).unwrap();
        let endpoint = Endpoint::parse("ws://localhost/").unwrap();
        let id = driver.memory_open(endpoint, 0, None).unwrap();
        let mut request = Vec::new();
        driver.memory_written(id, &mut request).unwrap();
        assert!(request.starts_with(b"GET / HTTP/1.1\r\n"), "{request:?}");
        let mut refusal = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n".to_vec();
        driver.memory_deliver(id, &mut refusal).unwrap();
        let handler = driver.handler();
        assert_eq!(handler.closed.len(), 1, "{:?}", handler.closed);
        assert!(handler.closed[0].contains("503"), "{:?}", handler.closed);
        assert_eq!(handler.reconnecting, 0);
        assert!(!driver.is_live(id));
    }
}
