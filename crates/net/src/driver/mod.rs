//! The driver: one mio `Poll`, and a slab of connection slots allocated once.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use tickwire_codec::handshake::{
    ClientHandshake, HandshakeError, HandshakeStatus, RequestStatus, ServerHandshake,
    write_rejection, write_response,
};
use tickwire_codec::{CloseCode, MAX_CONTROL_FRAME_LEN, OpCode, ProtocolError, Role};

use tickwire_tsc::Clock;

use crate::actions::{Actions, Reserve, take_serial, take_slot};
use crate::config::{Config, Endpoint, PollMode, tls_out_size};
use crate::error::{DriverError, SendError};
use crate::event::{
    Disconnect, Excerpt, Handler, Reconnect, ResponseHead, Stamps, Timeout, TlsInfo,
};
use crate::id::ConnId;
use crate::outgoing::{CloseRequest, Conn, Outgoing};
use crate::payload::Frame;
use crate::receive::{Incoming, open_tls};
use crate::region::Region;
use crate::resolve::{Lookup, ResolveError, Resolved, Resolver};
use crate::socket::Socket;
use crate::tls::{Mode, TlsConfig, TlsConfigError, TlsContext, TlsSession};

mod connection;
mod frames;
#[cfg(any(fuzzing, feature = "internals"))]
mod memory;

use self::connection::{begin_close, fail_slot};

/// The waker's token; listener `i` is `LISTENER_BASE - i`; slot tokens are
/// `(generation << 16) | index` with a 15-bit generation, so they stay
/// below both on 32-bit targets too.
const WAKER: Token = Token(usize::MAX);
const LISTENER_BASE: usize = usize::MAX - 1;
const MAX_SLOTS: usize = 1 << 16;
/// Room for a TLS record plus a frame waiting in place, with margin.
const MIN_READ_BUFFER: usize = 32 * 1024;

fn slot_token(index: usize, generation: u16) -> Token {
    Token((usize::from(generation) << 16) | index)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Free,
    /// Waiting for `deadline` to reconnect.
    Backoff,
    Resolving,
    Connecting,
    /// TLS and WebSocket handshakes (client), or reading the request (server).
    Handshaking,
    Open,
    /// A Close frame has gone out; waiting for the peer's (if
    /// `await_close_frame`) and then for the end of the stream.
    Closing,
}

struct Slot {
    /// The receive buffer's and the message buffer's sizes.
    sizes: (usize, usize),
    serial: u32,
    generation: u16,
    /// The poll-loop turn that last read this slot.
    read_turn: u64,
    role: Role,
    phase: Phase,
    /// The current phase's deadline (connect, handshake, close, backoff end).
    deadline: Option<Instant>,
    endpoint: Option<Endpoint>,
    socket: Option<Socket>,
    tls: Option<TlsSession>,
    /// TLS records waiting for the socket (handshake flights and sealed
    /// application data).
    tls_out: Region,
    client_hs: Option<ClientHandshake>,
    server_hs: ServerHandshake,
    rx: Incoming,
    tx: Outgoing,
    attempt: u32,
    /// A one-shot HTTP GET ([`Driver::fetch`]), not a WebSocket.
    fetch: bool,
    local_close: bool,
    await_close_frame: bool,
    /// Why the connection is closing, reported when it ends.
    reason: Option<Disconnect>,
    last_rx: Instant,
    next_ping: Option<Instant>,
    pong_deadline: Option<Instant>,
    stale_check: Option<Instant>,
    next_release: Option<Instant>,
    read_start: u64,
    read_end: u64,
    decrypted: u64,
}

impl Slot {
    fn id(&self, index: usize) -> ConnId {
        ConnId {
            index: index as u32,
            serial: self.serial,
        }
    }

    /// The earliest instant at which this slot needs the timer pass.
    fn timer(&self) -> Option<Instant> {
        [
            self.deadline,
            self.next_ping,
            self.pong_deadline,
            self.stale_check,
            self.next_release,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn clear_timers(&mut self) {
        self.deadline = None;
        self.next_ping = None;
        self.pong_deadline = None;
        self.stale_check = None;
        self.next_release = None;
    }
}

/// What to do with a slot after its bytes have been processed.
enum After {
    Continue,
    End(Disconnect),
    /// A callback asked for actions ([`Actions`]): they are carried out
    /// before the frames after its message are handed over.
    Act,
}

/// A single-threaded WebSocket engine: many connections on one mio `Poll`.
///
/// Every buffer is allocated in [`Driver::new`], from [`Config`]; the receive
/// path allocates nothing afterwards (the TLS layer's own per-record
/// allocation aside, see the `tls` module). Drive it by calling
/// [`poll_once`](Driver::poll_once) in a loop on the thread that owns it;
/// the [`Handler`] is called from there.
pub struct Driver<H> {
    poll: Poll,
    events: Events,
    ready: Vec<Ready>,
    slots: Vec<Slot>,
    /// Each slot's (receive buffer, message buffer) sizes, fixed at start.
    sizes: Vec<(usize, usize)>,
    free: Vec<usize>,
    /// What callbacks asked for beyond their own connection.
    actions: Actions,
    listeners: Vec<TcpListener>,
    handler: H,
    config: Config,
    tls: TlsContext,
    resolver: Resolver,
    clock: Clock,
    rng: StdRng,
    now: Instant,
    poll_stamp: u64,
    /// Busy-read turns since the last `epoll_wait`.
    busy_turns: u32,
    next_serial: u32,
    next_timer: Option<Instant>,
    timers_dirty: bool,
    /// Slots (index, generation, peer closed) whose reads stopped at
    /// `max_reads_per_turn`: read again next turn, without waiting for an
    /// edge (mio is edge-triggered: none would come for bytes already
    /// there). Two lists, swapped each turn, both allocated at start-up.
    backlog: Vec<(usize, u16, bool)>,
    backlog_spare: Vec<(usize, u16, bool)>,
    /// Turns of the poll loop so far.
    turn: u64,
}

/// In [`PollMode::BusyRead`], how many turns read the open sockets between
/// two `epoll_wait` calls.
const BUSY_READ_EPOLL_EVERY: u32 = 16;

/// One readiness event, copied out of mio's list so that handling it may
/// borrow the driver.
#[derive(Clone, Copy)]
struct Ready {
    token: Token,
    readable: bool,
    writable: bool,
    error: bool,
    /// The peer closed its side or the socket errored: read to the end.
    closed: bool,
}

/// Why [`Driver::new`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum SetupError {
    /// The poll, its waker or the resolver thread could not be created.
    Io(io::Error),
    /// The TLS configuration is unusable.
    Tls(TlsConfigError),
    /// A configuration value is out of range; the text says which.
    Config(&'static str),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Io(e) => write!(f, "driver setup failed: {e}"),
            SetupError::Tls(e) => write!(f, "TLS setup failed: {e}"),
            SetupError::Config(what) => write!(f, "invalid configuration: {what}"),
        }
    }
}

impl std::error::Error for SetupError {}

impl From<io::Error> for SetupError {
    fn from(e: io::Error) -> Self {
        SetupError::Io(e)
    }
}

impl<H: Handler> Driver<H> {
    /// Allocates everything: `config.max_connections` default slots and
    /// those of `config.sized_slots`, each with its buffers, the poll, and
    /// the resolver thread.
    pub fn new(config: Config, tls: &TlsConfig, handler: H) -> Result<Driver<H>, SetupError> {
        if config.max_connections == 0 || config.max_connections >= MAX_SLOTS {
            return Err(SetupError::Config("max_connections must be 1 to 65535"));
        }
        let total: usize =
            config.max_connections + config.sized_slots.iter().map(|s| s.count).sum::<usize>();
        if total >= MAX_SLOTS {
            return Err(SetupError::Config("at most 65535 slots in all"));
        }
        let reads = std::iter::once(config.read_buffer_size)
            .chain(config.sized_slots.iter().map(|s| s.read_buffer_size));
        if reads.into_iter().any(|r| r < MIN_READ_BUFFER) {
            return Err(SetupError::Config(
                "read_buffer_size must be at least 32 KiB",
            ));
        }
        if config.max_read < 4 * 1024 {
            return Err(SetupError::Config("max_read must be at least 4 KiB"));
        }
        if config.write_buffer_size < 2 * MAX_CONTROL_FRAME_LEN {
            return Err(SetupError::Config(
                "write_buffer_size must be at least 262 bytes",
            ));
        }
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let resolver = Resolver::start(waker)?;
        let now = Instant::now();
        let sizes =
            std::iter::repeat_n(
                (config.read_buffer_size, config.max_message_size),
                config.max_connections,
            )
            .chain(config.sized_slots.iter().flat_map(|s| {
                std::iter::repeat_n((s.read_buffer_size, s.max_message_size), s.count)
            }));
        let slots: Vec<Slot> = sizes
            .map(|(read, message)| Slot {
                sizes: (read, message),
                serial: 0,
                generation: 0,
                read_turn: 0,
                role: Role::Client,
                phase: Phase::Free,
                deadline: None,
                endpoint: None,
                socket: None,
                tls: None,
                client_hs: None,
                server_hs: ServerHandshake::new(),
                rx: Incoming::new(read, message, config.max_fragments),
                tls_out: Region::new(tls_out_size(config.write_buffer_size)),
                tx: Outgoing::new(
                    config.write_buffer_size,
                    config.outbox_size,
                    config.send_rate,
                    config.send_burst,
                ),
                attempt: 0,
                fetch: false,
                local_close: false,
                await_close_frame: false,
                reason: None,
                last_rx: now,
                next_ping: None,
                pong_deadline: None,
                stale_check: None,
                next_release: None,
                read_start: 0,
                read_end: 0,
                decrypted: 0,
            })
            .collect();
        let max_connections = slots.len();
        let sizes = slots.iter().map(|s| s.sizes).collect();
        Ok(Driver {
            poll,
            events: Events::with_capacity(config.events_capacity.max(1)),
            ready: Vec::with_capacity(config.events_capacity.max(1)),
            slots,
            sizes,
            free: (0..max_connections).rev().collect(),
            actions: Actions::new(max_connections, config.outbox_size),
            listeners: Vec::new(),
            handler,
            tls: tls.context().map_err(SetupError::Tls)?,
            config,
            resolver,
            clock: tickwire_tsc::calibration().clock(),
            rng: StdRng::from_os_rng(),
            now,
            poll_stamp: 0,
            busy_turns: 0,
            next_serial: 1,
            next_timer: None,
            timers_dirty: false,
            backlog: Vec::with_capacity(max_connections),
            backlog_spare: Vec::with_capacity(max_connections),
            turn: 0,
        })
    }

    /// The driver ended, its handler handed back (its connections are
    /// dropped: close them first for a clean close).
    pub fn into_handler(self) -> H {
        self.handler
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.handler
    }

    /// The handler, mutably.
    pub fn handler_mut(&mut self) -> &mut H {
        &mut self.handler
    }

    /// The clock whose readings fill [`Stamps`]. Turn two readings into
    /// nanoseconds with [`tickwire_tsc::calibration`]`().ns_between(a, b)`.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Opens a client connection to `endpoint`. It is reconnected whenever
    /// it drops, until closed with [`close`](Self::close) or refused by
    /// [`Handler::on_close`].
    pub fn connect(&mut self, endpoint: Endpoint) -> Result<ConnId, DriverError> {
        self.open(endpoint, false, 0)
    }

    /// [`connect`](Self::connect) in a slot whose message buffer holds at
    /// least `max_message` bytes (the smallest free one that does; see
    /// [`Config::sized_slots`]).
    pub fn connect_sized(
        &mut self,
        endpoint: Endpoint,
        max_message: usize,
    ) -> Result<ConnId, DriverError> {
        self.open(endpoint, false, max_message)
    }

    /// A client slot for `endpoint`: a WebSocket, or (`fetch`) one GET, in
    /// the smallest free slot whose buffer holds `need` bytes (the message
    /// buffer for a WebSocket, the receive buffer for a fetch).
    fn open(
        &mut self,
        endpoint: Endpoint,
        fetch: bool,
        need: usize,
    ) -> Result<ConnId, DriverError> {
        let index =
            take_slot(&mut self.free, &self.sizes, fetch, need).ok_or(DriverError::NoFreeSlot)?;
        let serial = take_serial(&mut self.next_serial);
        Ok(self.start_open(index, serial, endpoint, fetch))
    }

    /// Starts a client connection or fetch in slot `index`, already taken.
    fn start_open(&mut self, index: usize, serial: u32, endpoint: Endpoint, fetch: bool) -> ConnId {
        self.claim_client(index, serial, endpoint, fetch);
        self.start_connect(index);
        self.slots[index].id(index)
    }

    /// Slot `index`, already taken, becomes a client connection (or fetch)
    /// to `endpoint`, not yet started.
    fn claim_client(&mut self, index: usize, serial: u32, endpoint: Endpoint, fetch: bool) {
        let slot = &mut self.slots[index];
        slot.serial = serial;
        slot.role = Role::Client;
        slot.endpoint = Some(endpoint);
        slot.attempt = 0;
        slot.fetch = fetch;
        slot.local_close = false;
        slot.tx
            .set_pace(self.config.send_rate, self.config.send_burst);
    }

    /// Carries out what the last callbacks asked for: the connections and
    /// fetches whose slots they took, then their messages to other
    /// connections (one that is not open by now drops its message).
    fn run_actions(&mut self) {
        if !self.actions.pending() {
            return;
        }
        // In the order they were asked for.
        let mut opens = std::mem::take(&mut self.actions.opens);
        for open in opens.drain(..) {
            self.start_open(open.index, open.serial, open.endpoint, open.fetch);
        }
        self.actions.opens = opens;
        // Taken out while sending (the send borrows the driver), then put
        // back: the buffers keep their capacity.
        let mut sends = std::mem::take(&mut self.actions.sends);
        let bytes = std::mem::take(&mut self.actions.bytes);
        for q in sends.drain(..) {
            let _ = self.send(q.id, q.op, &bytes[q.start..q.start + q.len]);
        }
        self.actions.sends = sends;
        self.actions.bytes = bytes;
        self.actions.bytes.clear();
    }

    /// Fetches `endpoint` (`https://host/path?query`, or `http://`) with
    /// one HTTP/1.1 GET, on this driver's poll like any connection: the
    /// other connections keep flowing meanwhile. The response goes to
    /// [`Handler::on_response`], in place in the slot's receive buffer (a
    /// response larger than [`Config::read_buffer_size`] fails with
    /// [`FetchError::TooLarge`](crate::FetchError::TooLarge)); then the
    /// slot ends with [`Disconnect::Fetched`] and is free again. A fetch that
    /// fails (refused, TLS, timeout) is retried with backoff unless
    /// [`Handler::on_close`] says not to. The whole fetch (connect aside)
    /// must finish within [`Config::handshake_timeout`]. Extra request
    /// headers come from [`Endpoint::header`].
    pub fn fetch(&mut self, endpoint: Endpoint) -> Result<ConnId, DriverError> {
        self.open(endpoint, true, 0)
    }

    /// [`fetch`](Self::fetch) in a slot whose receive buffer holds at least
    /// `max_response` bytes (the smallest free one that does).
    pub fn fetch_sized(
        &mut self,
        endpoint: Endpoint,
        max_response: usize,
    ) -> Result<ConnId, DriverError> {
        self.open(endpoint, true, max_response)
    }

    /// Accepts WebSocket clients on `addr` (plain `ws://` only), each into
    /// the smallest free slot (a default one while one is free), in the
    /// server role. Returns the bound address.
    pub fn listen(&mut self, addr: SocketAddr) -> io::Result<SocketAddr> {
        let mut listener = TcpListener::bind(addr)?;
        let token = Token(LISTENER_BASE - self.listeners.len());
        self.poll
            .registry()
            .register(&mut listener, token, Interest::READABLE)?;
        let local = listener.local_addr()?;
        self.listeners.push(listener);
        Ok(local)
    }

    /// Sends a text message on connection `id` (paced like handler sends).
    pub fn send_text(&mut self, id: ConnId, text: &str) -> Result<(), DriverError> {
        self.send(id, OpCode::Text, text.as_bytes())
    }

    /// Sends a binary message on connection `id` (paced like handler sends).
    pub fn send_binary(&mut self, id: ConnId, data: &[u8]) -> Result<(), DriverError> {
        self.send(id, OpCode::Binary, data)
    }

    fn send(&mut self, id: ConnId, opcode: OpCode, data: &[u8]) -> Result<(), DriverError> {
        let index = self.lookup(id)?;
        let slot = &mut self.slots[index];
        slot.tx.send(opcode, data, &mut self.rng)?;
        self.after_callback(index);
        Ok(())
    }

    /// Closes connection `id` with a close handshake; it is not reconnected.
    /// A connection that is not open (connecting, or waiting to reconnect)
    /// is dropped at once.
    pub fn close(&mut self, id: ConnId, code: CloseCode, reason: &str) -> Result<(), DriverError> {
        let index = self.lookup(id)?;
        let request = CloseRequest::new(code, reason)?;
        let slot = &mut self.slots[index];
        slot.local_close = true;
        if slot.phase == Phase::Open {
            slot.tx.close_request = Some(request);
            self.after_callback(index);
        } else if slot.phase != Phase::Closing {
            self.end(index, Disconnect::Local { code });
        }
        Ok(())
    }

    /// Paces connection `id`'s application messages (subscriptions and
    /// any other sends; not pongs or closes) one per `every`, none back to
    /// back, instead of [`Config::send_rate`] and [`Config::send_burst`]:
    /// a venue's own incoming-message limit, for this connection and its
    /// reconnects.
    pub fn pace(&mut self, id: ConnId, every: Duration) -> Result<(), DriverError> {
        let index = self.lookup(id)?;
        let rate = (!every.is_zero()).then(|| 1.0 / every.as_secs_f64());
        self.slots[index].tx.set_pace(rate, 1);
        Ok(())
    }

    /// Whether connection `id` is open (handshakes done, not closing).
    pub fn is_open(&self, id: ConnId) -> bool {
        self.lookup(id)
            .is_ok_and(|i| self.slots[i].phase == Phase::Open)
    }

    /// Whether connection `id` still exists: connecting, open, closing
    /// (its close handshake under way) or waiting to reconnect. False once
    /// it has ended for good ([`Handler::on_close`] said not to reconnect).
    pub fn is_live(&self, id: ConnId) -> bool {
        self.lookup(id).is_ok()
    }

    /// TLS details of connection `id`, once its TLS handshake is done;
    /// `None` for `ws://` connections and unknown ids.
    pub fn tls_info(&self, id: ConnId) -> Option<TlsInfo> {
        let tls = self.slots[self.lookup(id).ok()?].tls.as_ref()?;
        let stats = tls.stats();
        match tls.mode() {
            Mode::Handshaking => None,
            mode => Some(TlsInfo {
                in_place: mode == Mode::InPlace,
                records_in: stats.records_in,
                records_out: stats.records_out,
                tickets: stats.tickets,
                key_updates_in: stats.key_updates_in,
                key_updates_out: stats.key_updates_out,
            }),
        }
    }

    fn lookup(&self, id: ConnId) -> Result<usize, DriverError> {
        let index = id.index as usize;
        match self.slots.get(index) {
            Some(s) if s.serial == id.serial && s.phase != Phase::Free => Ok(index),
            _ => Err(DriverError::UnknownConnection),
        }
    }

    /// Waits for readiness (or returns at once in busy-poll mode), then
    /// reads, decodes and dispatches everything ready, and runs due timers.
    pub fn poll_once(&mut self) -> io::Result<()> {
        let timeout = match self.config.poll_mode {
            PollMode::BusyPoll | PollMode::BusyRead => Some(Duration::ZERO),
            PollMode::Blocking => self
                .next_timer
                .map(|t| t.saturating_duration_since(Instant::now())),
        };
        self.poll_for(timeout)
    }

    /// Like [`poll_once`](Self::poll_once) but waits at most `limit`.
    pub fn poll_timeout(&mut self, limit: Duration) -> io::Result<()> {
        let timeout = match self.config.poll_mode {
            PollMode::BusyPoll | PollMode::BusyRead => Duration::ZERO,
            PollMode::Blocking => self.next_timer.map_or(limit, |t| {
                t.saturating_duration_since(Instant::now()).min(limit)
            }),
        };
        self.poll_for(Some(timeout))
    }

    /// Runs [`poll_once`](Self::poll_once) until `done` returns true.
    pub fn run_until(&mut self, mut done: impl FnMut(&mut H) -> bool) -> io::Result<()> {
        while !done(&mut self.handler) {
            self.poll_once()?;
        }
        Ok(())
    }

    fn poll_for(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let busy_read = self.config.poll_mode == PollMode::BusyRead;
        // Bytes left by the read budget: look at the other sockets, do not wait.
        let timeout = if self.backlog.is_empty() {
            timeout
        } else {
            Some(Duration::ZERO)
        };
        if busy_read {
            self.poll_stamp = self.clock.now();
            for index in 0..self.slots.len() {
                if self.slots[index].phase == Phase::Open {
                    self.on_readable(index, false);
                }
            }
            // `epoll_wait` (and the clock read for timers) only every
            // BUSY_READ_EPOLL_EVERY turns: a shorter turn is seen sooner by
            // the reads above, and connects, writes and timers tolerate a
            // few microseconds more.
            self.busy_turns += 1;
            if self.busy_turns < BUSY_READ_EPOLL_EVERY && !self.timers_dirty {
                return Ok(());
            }
            self.busy_turns = 0;
        }
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        self.poll_stamp = self.clock.now();
        self.now = Instant::now();
        self.turn += 1;
        // Last turn's backlog; this turn's reads may start a new one.
        let spare = std::mem::take(&mut self.backlog_spare);
        let mut pending = std::mem::replace(&mut self.backlog, spare);
        self.ready.clear();
        for ev in self.events.iter() {
            let closed = ev.is_error() || ev.is_read_closed() || ev.is_write_closed();
            self.ready.push(Ready {
                token: ev.token(),
                readable: ev.is_readable() || closed,
                writable: ev.is_writable(),
                error: ev.is_error(),
                closed,
            });
        }
        for i in 0..self.ready.len() {
            let ready = self.ready[i];
            let token = ready.token;
            if token == WAKER {
                while let Some(resolved) = self.resolver.next() {
                    self.on_resolved(resolved);
                }
            } else if token.0 > LISTENER_BASE - self.listeners.len() {
                self.accept(LISTENER_BASE - token.0);
            } else {
                self.on_socket(ready, busy_read);
            }
        }
        for &(index, generation, closed) in &pending {
            let slot = &self.slots[index];
            let readable = matches!(
                slot.phase,
                Phase::Handshaking | Phase::Open | Phase::Closing
            );
            // Already read this turn (an event came for it), or replaced.
            if slot.read_turn != self.turn && slot.generation == generation && readable {
                self.on_readable(index, closed);
            }
        }
        pending.clear();
        self.backlog_spare = pending;
        if self.timers_dirty || self.next_timer.is_some_and(|t| t <= self.now) {
            self.run_timers();
        }
        Ok(())
    }

    /// `read_done`: open connections were read this turn already (busy-read
    /// mode), so a plain readable edge needs no second read.
    fn on_socket(&mut self, ready: Ready, read_done: bool) {
        let Ready {
            token,
            readable,
            writable,
            error,
            closed,
        } = ready;
        let index = token.0 & 0xffff;
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        if slot_token(index, slot.generation) != token {
            return; // an event for a socket this slot has since replaced
        }
        let slot_open = slot.phase == Phase::Open;
        match slot.phase {
            Phase::Connecting => self.finish_connect(index),
            Phase::Handshaking | Phase::Open | Phase::Closing => {
                if (writable || error)
                    && let Err(reason) = self.flush(index)
                {
                    self.end(index, reason);
                    return;
                }
                if readable && !(read_done && slot_open && !closed) {
                    self.on_readable(index, closed);
                }
            }
            Phase::Free | Phase::Backoff | Phase::Resolving => {}
        }
    }
}

impl From<SendError> for Disconnect {
    fn from(_: SendError) -> Self {
        Disconnect::SendBufferFull
    }
}

#[cfg(test)]
mod tests {
    use super::{LISTENER_BASE, WAKER, slot_token};

    #[test]
    fn slot_tokens_never_collide_with_the_reserved_ones() {
        let top = slot_token(0xffff, 0x7fff).0;
        assert!(top < LISTENER_BASE - 1024);
        const { assert!(LISTENER_BASE < WAKER.0) };
        assert_ne!(slot_token(1, 2), slot_token(2, 1));
        assert_ne!(slot_token(5, 1), slot_token(5, 2));
    }
}
