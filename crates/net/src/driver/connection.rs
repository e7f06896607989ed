//! A slot's life on the driver: connecting (resolution, TCP, TLS and the
//! upgrade's start), accepting, reading, failing, flushing, the timers,
//! and the end (a reconnect with backoff, or a free slot).

use super::*;

/// Whether a read that returns less than it was offered ends the draining
/// of a socket, saving the read that would only say `WouldBlock`.
///
/// mio's portable contract is stricter: "Once a readiness event is
/// received, the corresponding operation must be performed repeatedly until
/// it returns `WouldBlock`. Unless this is done, there is no guarantee that
/// another readiness event will be delivered" (`mio::Poll`, "Draining
/// readiness", <https://docs.rs/mio/1/mio/struct.Poll.html#draining-readiness>).
/// On Linux mio registers sockets with epoll, edge-triggered (`EPOLLET`),
/// and epoll(7) gives more: "For stream-oriented files (e.g., pipe, FIFO,
/// stream socket), the condition that the read/write I/O space is exhausted
/// can also be detected by checking the amount of data read from / written
/// to the target file descriptor" (its questions and answers, Q9): the
/// read came back short because the receive queue was empty, and a byte
/// that arrives after it is a change, which raises a new edge. mio's
/// Windows backend re-arms its poll only when an operation returns
/// `WouldBlock` (`IoSourceState::do_io`), and mio keeps `WouldBlock` as the
/// rule on every platform (tokio-rs/mio#1611, which declined to promise
/// the short read): so everywhere but Linux the loop reads on until
/// `WouldBlock`. A constant, so the Linux build has no branch for it.
const SHORT_READ_DRAINS: bool = cfg!(target_os = "linux");

impl<H: Handler> Driver<H> {
    // ----- connection set-up -------------------------------------------------

    pub(super) fn start_connect(&mut self, index: usize) {
        let now = self.now;
        let timeout = self.config.connect_timeout;
        let slot = &mut self.slots[index];
        slot.generation = slot.generation.wrapping_add(1) & 0x7fff;
        slot.phase = Phase::Resolving;
        slot.clear_timers();
        slot.deadline = Some(now + timeout);
        slot.reason = None;
        self.timers_dirty = true;
        let Some(endpoint) = slot.endpoint.as_ref() else {
            return;
        };
        let (port, generation) = (endpoint.port(), slot.generation);
        if let Ok(ip) = endpoint.host().parse::<IpAddr>() {
            self.open_socket(index, SocketAddr::new(ip, port));
            return;
        }
        let lookup = Lookup {
            index,
            generation,
            host: endpoint.host().to_owned(),
            port,
        };
        if let Err(kind) = self.resolver.lookup(lookup) {
            let e = ResolveError::new(kind, "the resolver thread is gone");
            self.end(index, Disconnect::Resolve(e));
        }
    }

    pub(super) fn on_resolved(&mut self, resolved: Resolved) {
        let Resolved {
            index,
            generation,
            result,
        } = resolved;
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        if slot.generation != generation || slot.phase != Phase::Resolving {
            return;
        }
        match result {
            Ok(addr) => self.open_socket(index, addr),
            Err(e) => self.end(index, Disconnect::Resolve(e)),
        }
    }

    pub(super) fn open_socket(&mut self, index: usize, addr: SocketAddr) {
        let mut stream = match TcpStream::connect(addr) {
            Ok(s) => s,
            Err(e) => return self.end(index, Disconnect::Io(e.kind())),
        };
        let slot = &mut self.slots[index];
        let token = slot_token(index, slot.generation);
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            token,
            Interest::READABLE | Interest::WRITABLE,
        ) {
            return self.end(index, Disconnect::Io(e.kind()));
        }
        slot.socket = Some(Socket::Tcp(stream));
        slot.phase = Phase::Connecting;
    }

    /// A connecting socket became ready: see whether the connect succeeded.
    pub(super) fn finish_connect(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        let Some(stream) = slot.socket.as_mut().and_then(Socket::tcp) else {
            return;
        };
        match stream.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => return self.end(index, Disconnect::Io(e.kind())),
        }
        match stream.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return, // not yet
            Err(e) => return self.end(index, Disconnect::Io(e.kind())),
        }
        if let Err(e) = stream.set_nodelay(true) {
            return self.end(index, Disconnect::Io(e.kind()));
        }
        self.start_session(index);
    }

    /// The stream is connected: TLS (if any) and the upgrade request, or
    /// the fetch's request, start.
    pub(super) fn start_session(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        let now = self.now;
        slot.phase = Phase::Handshaking;
        slot.deadline = Some(now + self.config.handshake_timeout);
        slot.last_rx = now;
        slot.tx.reset(Role::Client, now);
        slot.tls_out.clear();
        slot.rx.reset(Role::Client);
        self.timers_dirty = true;
        let Some(endpoint) = slot.endpoint.as_ref() else {
            return;
        };
        if endpoint.is_tls() {
            // Start the handshake: this encodes the ClientHello into tls_out.
            let started = TlsSession::new(&self.tls, endpoint.host()).and_then(|mut session| {
                session.handshake(&mut [], &mut slot.tls_out)?;
                Ok(session)
            });
            match started {
                Ok(session) => slot.tls = Some(session),
                Err(e) => return self.end(index, Disconnect::Tls(e)),
            }
        }
        if slot.fetch {
            let tx = &mut slot.tx;
            let written = endpoint.with_request(|request| {
                tx.push_handshake(|out| {
                    crate::fetch::write_request(out, request.host, request.path, request.headers)
                        .ok_or(HandshakeError::InsufficientSize {
                            required: out.len() + 1,
                        })
                })
            });
            if let Err(e) = written {
                return self.end(index, Disconnect::Handshake(e));
            }
            if let Err(reason) = self.flush(index) {
                self.end(index, reason);
            }
            return;
        }
        let mut nonce = [0u8; 16];
        self.rng.fill_bytes(&mut nonce);
        let hs = ClientHandshake::new(nonce);
        let tx = &mut slot.tx;
        let written = endpoint
            .with_request(|request| tx.push_handshake(|out| hs.write_request(out, request)));
        if let Err(e) = written {
            return self.end(index, Disconnect::Handshake(e));
        }
        slot.client_hs = Some(hs);
        if let Err(reason) = self.flush(index) {
            self.end(index, reason);
        }
    }

    pub(super) fn accept(&mut self, listener: usize) {
        loop {
            let Some(l) = self.listeners.get(listener) else {
                return;
            };
            let (mut stream, _) = match l.accept() {
                Ok(pair) => pair,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Resource exhaustion (EMFILE) and aborted handshakes: try again later.
                Err(_) => return,
            };
            let Some(index) = take_slot(&mut self.free, &self.sizes, false, 0) else {
                drop(stream); // no free slot: refuse
                continue;
            };
            let now = self.now;
            let serial = self.next_serial;
            self.next_serial = self.next_serial.wrapping_add(1).max(1);
            let slot = &mut self.slots[index];
            slot.generation = slot.generation.wrapping_add(1) & 0x7fff;
            let token = slot_token(index, slot.generation);
            if self
                .poll
                .registry()
                .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
                .is_err()
                || stream.set_nodelay(true).is_err()
            {
                self.free.push(index);
                continue;
            }
            slot.serial = serial;
            slot.role = Role::Server;
            slot.endpoint = None;
            slot.local_close = false;
            slot.reason = None;
            slot.socket = Some(Socket::Tcp(stream));
            slot.tls = None;
            slot.server_hs = ServerHandshake::new();
            slot.phase = Phase::Handshaking;
            slot.clear_timers();
            slot.deadline = Some(now + self.config.handshake_timeout);
            slot.last_rx = now;
            slot.tx.reset(Role::Server, now);
            slot.tls_out.clear();
            slot.rx.reset(Role::Server);
            self.timers_dirty = true;
        }
    }

    // ----- receiving ---------------------------------------------------------

    /// Reads until the socket is drained, processing what arrives as it
    /// arrives. mio is edge-triggered, so stopping early would strand bytes;
    /// but on Linux a read that returns less than it was offered has emptied
    /// the TCP receive queue, and anything arriving after it raises a new
    /// edge, so the read that would only say `WouldBlock` is skipped (one
    /// syscall per wake-up saved; [`SHORT_READ_DRAINS`] says why this holds
    /// on Linux only). Not when the peer has closed or errored: that edge
    /// is the last, and the loop reads on to the end of the stream.
    pub(super) fn on_readable(&mut self, index: usize, closed: bool) {
        self.slots[index].read_turn = self.turn;
        let max_read = self.config.max_read;
        let mut reads = 0;
        loop {
            let slot = &mut self.slots[index];
            slot.rx.compact(max_read);
            if slot.rx.is_full() {
                if slot.fetch {
                    return self.end(index, Disconnect::Fetch(crate::FetchError::TooLarge));
                }
                // Cannot happen: the decoder never keeps more than
                // input_capacity waiting, which leaves room for a record.
                return self.fail(index, Disconnect::Protocol(ProtocolError::MessageTooLarge));
            }
            let Some(socket) = slot.socket.as_mut() else {
                return;
            };
            let rx = &mut slot.rx;
            let spare = rx.spare(max_read);
            let offered = spare.len();
            let read_start = self.clock.now();
            let n = match socket.read(spare) {
                Ok(0) => return self.on_eof(index),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.end(index, Disconnect::Io(e.kind())),
            };
            rx.received(n);
            slot.read_start = read_start;
            slot.read_end = self.clock.now();
            slot.last_rx = self.now;
            let close_notify = match slot.tls.as_mut() {
                None => {
                    rx.received_in_clear();
                    slot.decrypted = 0;
                    false
                }
                Some(tls) => match open_tls(tls, rx, &mut slot.tls_out) {
                    Ok(close_notify) => {
                        slot.decrypted = self.clock.now();
                        close_notify
                    }
                    Err(e) => return self.end(index, Disconnect::Tls(e)),
                },
            };
            // What a callback asked of other connections is carried out
            // as soon as it returns: the frames after its message wait.
            let mut after = self.process(index);
            loop {
                self.run_actions();
                if !matches!(after, After::Act)
                    || matches!(self.slots[index].phase, Phase::Free | Phase::Backoff)
                {
                    break;
                }
                after = self.process(index);
            }
            // An action may have ended this connection already (a send to
            // itself that could not be flushed): not a second time.
            if matches!(self.slots[index].phase, Phase::Free | Phase::Backoff) {
                return;
            }
            if let After::End(reason) = after {
                return self.end(index, reason);
            }
            if close_notify {
                // The peer will send nothing more: like the end of the stream.
                return self.on_eof(index);
            }
            if SHORT_READ_DRAINS && n < offered && !closed {
                break;
            }
            reads += 1;
            if reads >= self.config.max_reads_per_turn.max(1) {
                // Budget spent. Busy-read mode reads every open socket each
                // turn anyway; otherwise the backlog brings it back (an
                // in-memory stream's caller reads it again itself).
                let busy_read = self.config.poll_mode == PollMode::BusyRead;
                let slot = &self.slots[index];
                let polled = slot.socket.as_ref().is_some_and(Socket::is_tcp);
                if polled && !(busy_read && slot.phase == Phase::Open) {
                    self.backlog.push((index, slot.generation, closed));
                }
                break;
            }
        }
        // The socket is drained; release paced sends the handler queued, and
        // flush what processing produced (pongs, handshake bytes, TLS
        // records, handler sends).
        let slot = &mut self.slots[index];
        if slot.tx.has_queued() {
            slot.next_release = slot.tx.release(self.now);
            self.timers_dirty = true;
        }
        if let Err(reason) = self.flush(index) {
            self.end(index, reason);
        }
    }

    pub(super) fn on_eof(&mut self, index: usize) {
        if self.slots[index].fetch && self.slots[index].phase == Phase::Handshaking {
            let reason = match self.process_fetch(index, true) {
                After::End(reason) => reason,
                After::Continue | After::Act => Disconnect::Fetch(crate::FetchError::Truncated),
            };
            return self.end(index, reason);
        }
        let slot = &mut self.slots[index];
        let reason = match slot.phase {
            Phase::Closing => slot.reason.take().unwrap_or(Disconnect::Eof),
            _ => Disconnect::Eof,
        };
        self.end(index, reason);
    }

    /// Fails the connection: sends a close frame (best effort) and waits
    /// briefly for the peer to close, or ends it at once when nothing more
    /// can be sent.
    pub(super) fn fail(&mut self, index: usize, reason: Disconnect) {
        let slot = &mut self.slots[index];
        let after = fail_slot(
            slot,
            &mut self.rng,
            self.now,
            &self.config,
            reason,
            &mut self.timers_dirty,
        );
        match after {
            After::End(reason) => self.end(index, reason),
            After::Continue | After::Act => {
                if let Err(reason) = self.flush(index) {
                    self.end(index, reason);
                }
            }
        }
    }

    // ----- sending -----------------------------------------------------------

    /// Writes the send buffer to the socket (sealed into TLS records first
    /// when there is TLS) until it is empty or the socket would block.
    pub(super) fn flush(&mut self, index: usize) -> Result<(), Disconnect> {
        let slot = &mut self.slots[index];
        let Some(socket) = slot.socket.as_mut() else {
            return Ok(());
        };
        let out = match slot.tls.as_mut() {
            Some(tls) => {
                let pending = slot.tx.pending();
                if !pending.is_empty() {
                    let n = tls
                        .seal(pending, &mut slot.tls_out)
                        .map_err(Disconnect::Tls)?;
                    slot.tx.consume(n);
                }
                &mut slot.tls_out
            }
            None => slot.tx.wire_mut(),
        };
        loop {
            let pending = out.pending();
            if pending.is_empty() {
                return Ok(());
            }
            match socket.write(pending) {
                Ok(0) => return Err(Disconnect::Io(io::ErrorKind::WriteZero)),
                Ok(n) => out.consume(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Disconnect::Io(e.kind())),
            }
        }
    }

    // ----- timers ------------------------------------------------------------

    pub(super) fn run_timers(&mut self) {
        let now = self.now;
        for index in 0..self.slots.len() {
            let due = self.slots[index].timer().is_some_and(|t| t <= now);
            if !due {
                continue;
            }
            let slot = &mut self.slots[index];
            match slot.phase {
                Phase::Free => {}
                Phase::Backoff => {
                    if slot.deadline.is_some_and(|d| d <= now) {
                        self.start_connect(index);
                    }
                }
                Phase::Resolving | Phase::Connecting => {
                    self.end(index, Disconnect::Timeout(Timeout::Connect));
                }
                Phase::Handshaking => self.end(index, Disconnect::Timeout(Timeout::Handshake)),
                Phase::Closing => {
                    let reason = slot
                        .reason
                        .take()
                        .unwrap_or(Disconnect::Timeout(Timeout::Close));
                    self.end(index, reason);
                }
                Phase::Open => self.open_timers(index),
            }
        }
        self.timers_dirty = false;
        self.next_timer = self
            .slots
            .iter()
            .filter(|s| s.phase != Phase::Free)
            .filter_map(Slot::timer)
            .min();
    }

    pub(super) fn open_timers(&mut self, index: usize) {
        let now = self.now;
        let slot = &mut self.slots[index];
        if slot.pong_deadline.is_some_and(|d| d <= now) {
            return self.fail_now(index, Disconnect::Timeout(Timeout::Pong));
        }
        if let (Some(check), Some(stale)) = (slot.stale_check, self.config.stale_timeout)
            && check <= now
        {
            if now.saturating_duration_since(slot.last_rx) >= stale {
                return self.fail_now(index, Disconnect::Timeout(Timeout::Stale));
            }
            slot.stale_check = Some(slot.last_rx + stale);
        }
        if let (Some(at), Some(interval)) = (slot.next_ping, self.config.ping_interval)
            && at <= now
        {
            // The payload is a clock reading, which the pong echoes.
            let stamp = self.clock.now().to_be_bytes();
            if slot
                .tx
                .push_frame(OpCode::Ping, &stamp, &mut self.rng)
                .is_err()
            {
                return self.end(index, Disconnect::SendBufferFull);
            }
            if slot.pong_deadline.is_none() {
                slot.pong_deadline = Some(now + self.config.pong_timeout);
            }
            slot.next_ping = Some(now + interval);
        }
        if slot.next_release.is_some_and(|t| t <= now) {
            slot.next_release = slot.tx.release(now);
        }
        if let Err(reason) = self.flush(index) {
            self.end(index, reason);
        }
    }

    /// Sends a close frame and ends the connection without waiting: the
    /// peer is not responding.
    pub(super) fn fail_now(&mut self, index: usize, reason: Disconnect) {
        let slot = &mut self.slots[index];
        let _ = slot
            .tx
            .push_close(Some((CloseCode::GOING_AWAY, "")), &mut self.rng);
        let _ = self.flush(index);
        self.end(index, reason);
    }

    // ----- tear-down ---------------------------------------------------------

    /// Ends the current connection of slot `index`: closes the socket,
    /// reports `reason`, and schedules a reconnect or frees the slot.
    pub(super) fn end(&mut self, index: usize, reason: Disconnect) {
        if self.slots[index].phase == Phase::Free {
            return;
        }
        // Best effort: a close frame (or rejection) may still be queued.
        let _ = self.flush(index);
        let slot = &mut self.slots[index];
        if let Some(tls) = slot.tls.as_mut() {
            tls.close_notify(&mut slot.tls_out);
            if let Some(socket) = slot.socket.as_mut() {
                let _ = socket.write(slot.tls_out.pending());
            }
        }
        let mut dialable = true;
        if let Some(socket) = slot.socket.take() {
            dialable = socket.is_tcp();
            socket.close(self.poll.registry());
        }
        slot.tls = None;
        slot.client_hs = None;
        slot.tx.open = false;
        slot.clear_timers();
        slot.reason = None;
        self.timers_dirty = true;
        let id = slot.id(index);
        let role = slot.role;
        let was_connection = slot.phase != Phase::Backoff;
        let decision = self.handler.on_close(id, role, &reason);
        let slot = &mut self.slots[index];
        let reconnect = role == Role::Client
            && !slot.local_close
            && decision == Reconnect::Yes
            && !matches!(reason, Disconnect::Local { .. } | Disconnect::Fetched)
            && was_connection
            && dialable;
        if reconnect {
            slot.attempt = slot.attempt.saturating_add(1);
            let delay = self
                .config
                .backoff
                .delay(slot.attempt, self.rng.random::<f64>());
            slot.phase = Phase::Backoff;
            slot.deadline = Some(self.now + delay);
            let attempt = slot.attempt;
            self.handler.on_reconnecting(id, attempt, delay);
        } else {
            slot.phase = Phase::Free;
            slot.endpoint = None;
            slot.serial = 0;
            self.free.push(index);
        }
    }
}

/// Starts the close handshake the application asked for.
pub(super) fn begin_close(
    slot: &mut Slot,
    rng: &mut StdRng,
    now: Instant,
    config: &Config,
    request: CloseRequest,
    timers_dirty: &mut bool,
) {
    if slot.phase != Phase::Open {
        return;
    }
    slot.local_close = true;
    // A full send buffer only loses the close frame; the deadline still ends it.
    let _ = slot
        .tx
        .push_close(Some((request.code, request.reason())), rng);
    slot.tx.open = false;
    slot.phase = Phase::Closing;
    slot.await_close_frame = true;
    slot.reason = Some(Disconnect::Local { code: request.code });
    slot.clear_timers();
    slot.deadline = Some(now + config.close_timeout);
    *timers_dirty = true;
}

/// Fails a connection: a close frame with the error's code, then Closing.
pub(super) fn fail_slot(
    slot: &mut Slot,
    rng: &mut StdRng,
    now: Instant,
    config: &Config,
    reason: Disconnect,
    timers_dirty: &mut bool,
) -> After {
    if !matches!(slot.phase, Phase::Open | Phase::Handshaking) {
        return After::End(reason);
    }
    let code = match &reason {
        Disconnect::Protocol(e) => e.close_code(),
        _ => CloseCode::GOING_AWAY,
    };
    if slot.phase == Phase::Open {
        let _ = slot.tx.push_close(Some((code, "")), rng);
    }
    slot.tx.open = false;
    slot.phase = Phase::Closing;
    slot.await_close_frame = false;
    slot.reason = Some(reason);
    slot.clear_timers();
    slot.deadline = Some(now + config.close_timeout);
    *timers_dirty = true;
    After::Continue
}
