//! The driver: one mio `Poll`, and a slab of connection slots allocated once.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr};
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

use crate::actions::{Actions, Reserve, take_serial, take_slot};
use crate::config::{Config, Endpoint, PollMode};
use tickwire_tsc::Clock;

use crate::event::{
    ConnId, Disconnect, DriverError, Excerpt, Handler, Reconnect, ResponseHead, Stamps, Timeout,
    TlsInfo,
};
use crate::outgoing::{CloseRequest, Conn, Outgoing, SendError};
use crate::payload::{Frame, PAYLOAD_PADDING, next_frame};
use crate::receive::{Incoming, open_tls};
use crate::region::Region;
use crate::resolve::{Lookup, ResolveError, Resolved, Resolver};
use crate::tls::record::{MAX_PLAINTEXT, MAX_RECORD};
use crate::tls::{Mode, TlsConfig, TlsConfigError, TlsContext, TlsSession};

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

/// A slot's TLS output: a handshake flight, or the send buffer's worth of
/// records (each record's header, tag and padding on top of its text).
pub(crate) fn tls_out_size(write_buffer_size: usize) -> usize {
    write_buffer_size
        + (write_buffer_size / MAX_PLAINTEXT + 1) * (MAX_RECORD - MAX_PLAINTEXT)
        + 16 * 1024
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
    socket: Option<TcpStream>,
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
        let slot = &mut self.slots[index];
        slot.serial = serial;
        slot.role = Role::Client;
        slot.endpoint = Some(endpoint);
        slot.attempt = 0;
        slot.fetch = fetch;
        slot.local_close = false;
        slot.tx
            .set_pace(self.config.send_rate, self.config.send_burst);
        self.start_connect(index);
        self.slots[index].id(index)
    }

    /// Carries out what the last callbacks asked for: the connections and
    /// fetches whose slots they took, then their messages to other
    /// connections (one that is not open by now drops its message).
    fn run_actions(&mut self) {
        if !self.actions.pending() {
            return;
        }
        while let Some(open) = self.actions.opens.pop() {
            self.start_open(open.index, open.serial, open.endpoint, open.fetch);
        }
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

    // ----- connection set-up -------------------------------------------------

    fn start_connect(&mut self, index: usize) {
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

    fn on_resolved(&mut self, resolved: Resolved) {
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

    fn open_socket(&mut self, index: usize, addr: SocketAddr) {
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
        slot.socket = Some(stream);
        slot.phase = Phase::Connecting;
    }

    /// A connecting socket became ready: see whether the connect succeeded.
    fn finish_connect(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        let Some(stream) = slot.socket.as_mut() else {
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
        let now = self.now;
        slot.phase = Phase::Handshaking;
        slot.deadline = Some(now + self.config.handshake_timeout);
        slot.last_rx = now;
        slot.tx.reset(Role::Client, now);
        slot.tls_out.clear();
        slot.rx.clear();
        slot.rx.decoder.reset_for(Role::Client);
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

    fn accept(&mut self, listener: usize) {
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
            slot.socket = Some(stream);
            slot.tls = None;
            slot.server_hs = ServerHandshake::new();
            slot.phase = Phase::Handshaking;
            slot.clear_timers();
            slot.deadline = Some(now + self.config.handshake_timeout);
            slot.last_rx = now;
            slot.tx.reset(Role::Server, now);
            slot.tls_out.clear();
            slot.rx.clear();
            slot.rx.decoder.reset_for(Role::Server);
            self.timers_dirty = true;
        }
    }

    // ----- receiving ---------------------------------------------------------

    /// Reads until the socket is drained, processing what arrives as it
    /// arrives. mio is edge-triggered, so stopping early would strand bytes;
    /// but a read that returns less than it was offered has emptied the TCP
    /// receive queue, and anything arriving after it raises a new edge, so
    /// the read that would only say `WouldBlock` is skipped (one syscall
    /// per wake-up saved). Not when the peer has closed or errored: that
    /// edge is the last, and the loop reads on to the end of the stream.
    fn on_readable(&mut self, index: usize, closed: bool) {
        self.slots[index].read_turn = self.turn;
        let mut reads = 0;
        loop {
            let slot = &mut self.slots[index];
            slot.rx.compact();
            if slot.rx.cipher_end == slot.rx.cap {
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
            let offered = rx.cap - rx.cipher_end;
            let read_start = self.clock.now();
            let n = match socket.read(&mut rx.buf[rx.cipher_end..rx.cap]) {
                Ok(0) => return self.on_eof(index),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.end(index, Disconnect::Io(e.kind())),
            };
            rx.cipher_end += n;
            slot.read_start = read_start;
            slot.read_end = self.clock.now();
            slot.last_rx = self.now;
            let close_notify = match slot.tls.as_mut() {
                None => {
                    rx.end = rx.cipher_end;
                    rx.cipher_start = rx.cipher_end;
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
            let after = self.process(index);
            // What the callbacks asked of other connections, before this
            // one goes on (or ends).
            self.run_actions();
            if let After::End(reason) = after {
                return self.end(index, reason);
            }
            if matches!(self.slots[index].phase, Phase::Free | Phase::Backoff) {
                return;
            }
            if close_notify {
                // The peer will send nothing more: like the end of the stream.
                return self.on_eof(index);
            }
            if n < offered && !closed {
                break;
            }
            reads += 1;
            if reads >= self.config.max_reads_per_turn.max(1) {
                // Budget spent. Busy-read mode reads every open socket each
                // turn anyway; otherwise the backlog brings it back.
                let busy_read = self.config.poll_mode == PollMode::BusyRead;
                let slot = &self.slots[index];
                if !(busy_read && slot.phase == Phase::Open) {
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

    fn on_eof(&mut self, index: usize) {
        if self.slots[index].fetch && self.slots[index].phase == Phase::Handshaking {
            let reason = match self.process_fetch(index, true) {
                After::End(reason) => reason,
                After::Continue => Disconnect::Fetch(crate::FetchError::Truncated),
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

    /// Processes the bytes in the receive buffer according to the phase.
    fn process(&mut self, index: usize) -> After {
        if self.slots[index].fetch {
            return self.process_fetch(index, false);
        }
        if self.slots[index].phase == Phase::Handshaking {
            match self.process_handshake(index) {
                After::Continue => {}
                end @ After::End(_) => return end,
            }
        }
        match self.slots[index].phase {
            Phase::Open | Phase::Closing => self.process_frames(index),
            _ => After::Continue,
        }
    }

    /// A fetch's response: once complete, to the handler, then the end.
    fn process_fetch(&mut self, index: usize, eof: bool) -> After {
        let slot = &mut self.slots[index];
        if slot.phase != Phase::Handshaking {
            return After::Continue;
        }
        let id = slot.id(index);
        let rx = &mut slot.rx;
        let response = match crate::fetch::parse_response(&mut rx.buf[rx.start..rx.end], eof) {
            Ok(Some(r)) => r,
            Ok(None) if rx.end - rx.start + MAX_RECORD >= rx.cap => {
                // Not complete, and no room left for another TLS record.
                return After::End(Disconnect::Fetch(crate::FetchError::TooLarge));
            }
            Ok(None) => return After::Continue,
            Err(e) => return After::End(Disconnect::Fetch(e)),
        };
        let start = rx.start + response.body_start;
        // The body and the padding after it (the buffer always has
        // PAYLOAD_PADDING bytes past its capacity): what follows the body is
        // the rest of this response or ciphertext no longer needed.
        let body = &mut rx.buf[start..start + response.body_len + PAYLOAD_PADDING];
        let head = ResponseHead {
            status: response.status,
            retry_after: response
                .retry_after
                .map(|s| Duration::from_secs(u64::from(s))),
        };
        self.handler.on_response(id, head, body, response.body_len);
        After::End(Disconnect::Fetched)
    }

    fn process_handshake(&mut self, index: usize) -> After {
        let slot = &mut self.slots[index];
        let input = &slot.rx.buf[slot.rx.start..slot.rx.end];
        let consumed = match slot.role {
            Role::Client => {
                let (Some(hs), Some(endpoint)) = (slot.client_hs.as_mut(), slot.endpoint.as_ref())
                else {
                    return After::Continue;
                };
                let status = endpoint.with_protocols(|offered| {
                    hs.parse_response(input, offered).map(|s| match s {
                        HandshakeStatus::Partial => None,
                        HandshakeStatus::Complete { consumed, .. } => Some(consumed),
                    })
                });
                match status {
                    Ok(Some(consumed)) => consumed,
                    Ok(None) => return After::Continue,
                    Err(HandshakeError::Status(status)) => {
                        // The header block is complete (the status is read
                        // from it); what came after it is the body's start.
                        let body = input
                            .windows(4)
                            .position(|w| w == b"\r\n\r\n")
                            .map_or(&[][..], |end| &input[end + 4..]);
                        return After::End(Disconnect::Refused {
                            status,
                            body: Excerpt::new(body),
                        });
                    }
                    Err(e) => return After::End(Disconnect::Handshake(e)),
                }
            }
            Role::Server => match slot.server_hs.parse_request(input) {
                Ok(RequestStatus::Partial) => return After::Continue,
                Ok(RequestStatus::Complete { consumed, request }) => {
                    let accept = *request.accept();
                    if let Err(e) = slot
                        .tx
                        .push_handshake(|out| write_response(out, &accept, None))
                    {
                        return After::End(Disconnect::Handshake(e));
                    }
                    consumed
                }
                Err(e) => {
                    let _ = slot.tx.push_handshake(|out| write_rejection(out, e));
                    let _ = self.flush(index);
                    return After::End(Disconnect::Handshake(e));
                }
            },
        };
        let now = self.now;
        let ping = self.config.ping_interval;
        let stale = self.config.stale_timeout;
        let slot = &mut self.slots[index];
        slot.rx.start += consumed;
        slot.phase = Phase::Open;
        slot.deadline = None;
        slot.attempt = 0;
        slot.tx.open = true;
        slot.next_ping = ping.map(|p| now + p);
        slot.pong_deadline = None;
        slot.stale_check = stale.map(|s| now + s);
        self.timers_dirty = true;
        let id = slot.id(index);
        let mut conn = Conn {
            id,
            out: &mut slot.tx,
            rng: &mut self.rng,
            reserve: Reserve {
                free: &mut self.free,
                sizes: &self.sizes,
                next_serial: &mut self.next_serial,
                actions: &mut self.actions,
            },
        };
        self.handler.on_open(&mut conn);
        self.after_callback(index);
        self.run_actions();
        After::Continue
    }

    /// Decodes and dispatches every complete frame in the receive buffer.
    fn process_frames(&mut self, index: usize) -> After {
        let Driver {
            slots,
            sizes,
            free,
            actions,
            next_serial,
            handler,
            rng,
            clock,
            poll_stamp,
            now,
            config,
            timers_dirty,
            ..
        } = self;
        let slot = &mut slots[index];
        let id = slot.id(index);
        loop {
            let Incoming {
                buf,
                start,
                end,
                decoder,
                restore,
                ..
            } = &mut slot.rx;
            if decoder.error().is_some() {
                // Failed: the close frame is out; discard until the peer closes.
                *start = *end;
                return After::Continue;
            }
            let (consumed, frame) = match next_frame(decoder, buf, *start, *end, restore) {
                Ok(found) => found,
                Err(e) => {
                    // Discarded now, not at the next read: a frame that
                    // filled the buffer (one announced larger than the
                    // limit) would leave no room for that read, and the
                    // slot would end at once, before the peer could read
                    // the close frame.
                    *start = *end;
                    return fail_slot(
                        slot,
                        rng,
                        *now,
                        config,
                        Disconnect::Protocol(e),
                        timers_dirty,
                    );
                }
            };
            *start += consumed;
            let open = slot.phase == Phase::Open;
            let payload = match frame {
                None => return After::Continue,
                Some(Frame::Data(payload)) => payload,
                Some(Frame::Ping(payload)) => {
                    if open && slot.tx.push_frame(OpCode::Pong, payload, rng).is_err() {
                        return After::End(Disconnect::SendBufferFull);
                    }
                    continue;
                }
                Some(Frame::Pong) => {
                    slot.pong_deadline = None;
                    *timers_dirty = true;
                    continue;
                }
                Some(Frame::Close(code)) => {
                    if open {
                        // Echo the code (RFC 6455 5.5.1), then wait for the end.
                        let echo = code.map(|c| (c, ""));
                        if slot.tx.push_close(echo, rng).is_err() {
                            return After::End(Disconnect::SendBufferFull);
                        }
                        slot.reason = Some(Disconnect::Remote { code });
                        slot.tx.open = false;
                        slot.phase = Phase::Closing;
                        slot.clear_timers();
                        slot.deadline = Some(*now + config.close_timeout);
                        *timers_dirty = true;
                    }
                    slot.await_close_frame = false;
                    if slot.role == Role::Server {
                        // The server closes the TCP connection first (RFC 6455 7.1.1).
                        let reason = slot.reason.take().unwrap_or(Disconnect::Remote { code });
                        return After::End(reason);
                    }
                    return After::Continue;
                }
            };
            if open {
                let stamps = Stamps {
                    poll: *poll_stamp,
                    read_start: slot.read_start,
                    read_end: slot.read_end,
                    decrypted: slot.decrypted,
                    decoded: clock.now(),
                    ..Stamps::default()
                };
                let mut conn = Conn {
                    id,
                    out: &mut slot.tx,
                    rng,
                    reserve: Reserve {
                        free,
                        sizes,
                        next_serial,
                        actions,
                    },
                };
                handler.on_message(&mut conn, payload, stamps);
            }
            // The handler may have written into the padding after the payload.
            slot.rx.restore.apply(&mut slot.rx.buf);
            // A handler callback may have asked to close.
            if let Some(request) = slot.tx.close_request.take() {
                begin_close(slot, rng, *now, config, request, timers_dirty);
            }
        }
    }

    /// Applies what a callback asked for: a close, paced sends.
    fn after_callback(&mut self, index: usize) {
        let now = self.now;
        let slot = &mut self.slots[index];
        if let Some(request) = slot.tx.close_request.take() {
            begin_close(
                slot,
                &mut self.rng,
                now,
                &self.config,
                request,
                &mut self.timers_dirty,
            );
        }
        slot.next_release = slot.tx.release(now);
        self.timers_dirty = true;
        if let Err(reason) = self.flush(index) {
            self.end(index, reason);
        }
    }

    /// Fails the connection: sends a close frame (best effort) and waits
    /// briefly for the peer to close, or ends it at once when nothing more
    /// can be sent.
    fn fail(&mut self, index: usize, reason: Disconnect) {
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
            After::Continue => {
                if let Err(reason) = self.flush(index) {
                    self.end(index, reason);
                }
            }
        }
    }

    // ----- sending -----------------------------------------------------------

    /// Writes the send buffer to the socket (sealed into TLS records first
    /// when there is TLS) until it is empty or the socket would block.
    fn flush(&mut self, index: usize) -> Result<(), Disconnect> {
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

    fn run_timers(&mut self) {
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

    fn open_timers(&mut self, index: usize) {
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
    fn fail_now(&mut self, index: usize, reason: Disconnect) {
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
    fn end(&mut self, index: usize, reason: Disconnect) {
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
        if let Some(mut socket) = slot.socket.take() {
            let _ = self.poll.registry().deregister(&mut socket);
            let _ = socket.shutdown(Shutdown::Both);
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
            && was_connection;
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
fn begin_close(
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
fn fail_slot(
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
