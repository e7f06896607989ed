//! The simulator's runtime, the same for every venue: an acceptor thread
//! (TLS and the request head, each on a thread of its own), and one market
//! thread that steps the market, hands each step to the venue's protocol
//! for every client, writes what it says, and polls the clients for their
//! requests and timers between steps. `trading.rs`: what it does for the
//! matching engine; `script.rs`: a script played instead of a market.

mod script;
mod trading;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;
use tickwire_net::CloseCode;
use tickwire_net::server::{Incoming, Request, Server, ServerError, Session};
use tickwire_tsc::Clock;

use crate::limits::{MessageRate, RestLimit, Verdict};
use crate::market::{Book, Ids, Levels, Step};
use crate::pacer::Pacer;
use crate::protocol::{Delivered, Frame, JSON, Market, Out, Protocol, Response, Tick, query};
use crate::stamps::SendStamps;
use crate::{Script, Sent, SimConfig, SimStats, VenueFault};

use trading::{flush_engine, remove_gone, request};

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Client<C> {
    session: Session,
    state: C,
    /// The last poll of its requests and timers.
    last_poll: Instant,
    /// The last message it sent.
    last_rx: Instant,
    /// `on_open` has run.
    opened: bool,
    /// Requests that came with the upgrade, before the client joined the
    /// market: handled (with `on_open`) before the next step.
    pending: Vec<String>,
    /// Its messages of the last second, for the venue's incoming-message
    /// limit.
    rate: MessageRate,
    /// When it was upgraded: it is closed at `SimConfig::max_lifetime`
    /// from then.
    upgraded: Instant,
    /// Shutdown notices it was given (or that came before it joined).
    shutdowns: u32,
    /// When a shutdown notice's close is due.
    close_at: Option<Instant>,
    /// It has made requests of the matching engine (a key looked up, an
    /// order placed, ...): polled at every turn of the market loop, not
    /// every 10 ms.
    trading: bool,
    /// Why it is gone, once it is: removed (and the venue told,
    /// `Protocol::on_gone`) by [`remove_gone`].
    gone: Option<Result<Polled, ()>>,
}

/// Everything the threads share.
pub(crate) struct Shared<P: Protocol> {
    pub(crate) config: SimConfig,
    pub(crate) protocol: P,
    pub(crate) market: Mutex<Market>,
    clients: Mutex<Vec<Client<P::Client>>>,
    pub(crate) stamps: Arc<SendStamps>,
    stop: AtomicBool,
    paused: AtomicBool,
    finished: AtomicBool,
    counters: Counters,
    /// The REST weight spent, if the venue limits it.
    rest_limit: Option<Mutex<RestLimit>>,
    /// Clients that trade ([`Client::trading`]): while there are any, the
    /// market loop polls between steps at least every millisecond.
    trading: AtomicU64,
}

#[derive(Default)]
struct Counters {
    steps: AtomicU64,
    messages: AtomicU64,
    bytes: AtomicU64,
    accepted: AtomicU64,
    dropped: AtomicU64,
    closed: AtomicU64,
    kicked: AtomicU64,
    rest: AtomicU64,
    /// A script's snapshots written to their clients (what a script's
    /// flood waits for: [`script::play`]).
    script_snapshots: AtomicU64,
    rest_requests: AtomicU64,
    too_fast: AtomicU64,
    expired: AtomicU64,
    rest_throttled: AtomicU64,
    rest_banned: AtomicU64,
}

/// A running venue, whatever its protocol: what [`crate::Simulator`] calls.
pub(crate) trait Running: Send + Sync {
    fn stats(&self) -> SimStats;
    fn book(&self, n: usize, depth: usize) -> Option<(u64, Levels, Levels)>;
    fn pause(&self, paused: bool);
    fn inject(&self, text: &str) -> usize;
    fn fault(&self, n: usize, fault: VenueFault) -> bool;
    fn finished(&self) -> bool;
    fn sent(&self) -> Vec<Sent>;
    fn stamps(&self) -> Arc<SendStamps>;
    fn stop(&self);
    fn close_clients(&self);
    fn open_orders(&self) -> Vec<crate::SimOrder>;
}

impl<P: Protocol> Running for Shared<P> {
    fn stats(&self) -> SimStats {
        let c = &self.counters;
        SimStats {
            steps: c.steps.load(Ordering::Relaxed),
            messages: c.messages.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            clients: c.accepted.load(Ordering::Relaxed),
            dropped_clients: c.dropped.load(Ordering::Relaxed),
            closed_clients: c.closed.load(Ordering::Relaxed),
            kicked_clients: c.kicked.load(Ordering::Relaxed),
            snapshots: c.rest.load(Ordering::Relaxed),
            rest_requests: c.rest_requests.load(Ordering::Relaxed),
            too_fast: c.too_fast.load(Ordering::Relaxed),
            expired_clients: c.expired.load(Ordering::Relaxed),
            rest_throttled: c.rest_throttled.load(Ordering::Relaxed),
            rest_banned: c.rest_banned.load(Ordering::Relaxed),
        }
    }

    fn book(&self, n: usize, depth: usize) -> Option<(u64, Levels, Levels)> {
        let market = lock(&self.market);
        let b = market.books.get(n)?;
        let (bids, asks) = b.levels(depth);
        Some((b.update_id, bids, asks))
    }

    fn pause(&self, paused: bool) {
        self.paused.store(paused, Ordering::Release);
        if paused {
            // The market thread reads `paused` with the clients locked and
            // keeps them locked while it steps and writes: once the lock is
            // free, the step under way (if any) is written, and the next
            // reads `paused`.
            drop(lock(&self.clients));
        }
    }

    fn inject(&self, text: &str) -> usize {
        let mut clients = lock(&self.clients);
        clients
            .iter_mut()
            .map(|c| c.session.send_text(text).is_ok())
            .filter(|sent| *sent)
            .count()
    }

    fn fault(&self, n: usize, fault: VenueFault) -> bool {
        let mut market = lock(&self.market);
        if n >= market.instruments.len() {
            return false;
        }
        market.arm(n, fault);
        true
    }

    fn finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    fn sent(&self) -> Vec<Sent> {
        lock(&self.market).sent.clone().unwrap_or_default()
    }

    fn stamps(&self) -> Arc<SendStamps> {
        Arc::clone(&self.stamps)
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    fn open_orders(&self) -> Vec<crate::SimOrder> {
        lock(&self.market).exchange.all_open()
    }

    fn close_clients(&self) {
        for mut c in lock(&self.clients).drain(..) {
            let _ = c
                .session
                .send_close(CloseCode::GOING_AWAY, "simulator stopping");
            let _ = c.session.recv(Duration::from_millis(200));
        }
    }
}

/// A started simulator: what its threads share, its address, its threads.
pub(crate) type Started<S> = (Arc<S>, SocketAddr, Vec<JoinHandle<()>>);

/// Binds, builds the market and starts the threads.
pub(crate) fn start<P: Protocol>(config: SimConfig, protocol: P) -> io::Result<Started<Shared<P>>> {
    if config.instruments.is_empty() && config.script.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the simulator needs at least one instrument",
        ));
    }
    let server = Server::bind(config.addr, config.tls.clone())?;
    let addr = server.local_addr()?;
    let mut rng = StdRng::seed_from_u64(config.seed);
    let books: Vec<Book> = config
        .instruments
        .iter()
        .map(|i| {
            let mut book = Book::new(i, &mut rng).with_ids(Ids::of(config.venue));
            if let Some(leg) = config.sweep {
                book.sweep(leg);
            }
            book
        })
        .collect();
    let rest_limit = config
        .rest_weight_limit
        .or(protocol.rest_weight_limit())
        .map(|n| Mutex::new(RestLimit::new(n, Instant::now())));
    let shared = Arc::new(Shared {
        stamps: Arc::new(SendStamps::new(config.instruments.len())),
        market: Mutex::new(
            Market::new(config.instruments.clone(), books, config.keep_sent)
                .with_keys(config.keys.clone(), config.seed),
        ),
        config,
        protocol,
        clients: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        paused: AtomicBool::new(false),
        finished: AtomicBool::new(false),
        counters: Counters::default(),
        rest_limit,
        trading: AtomicU64::new(0),
    });
    let acceptor = {
        let shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("sim-accept".into())
            .spawn(move || accept_loop(&server, &shared))?
    };
    let generator = {
        let shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("sim-market".into())
            .spawn(move || generate(&shared, rng))?
    };
    Ok((shared, addr, vec![acceptor, generator]))
}

fn accept_loop<P: Protocol>(server: &Server, shared: &Arc<Shared<P>>) {
    while !shared.stop.load(Ordering::Acquire) {
        let session = match server.accept(Duration::from_millis(50)) {
            Ok(Some(s)) => s,
            Ok(None) => continue,
            Err(_) => {
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        // The handshake and request on their own thread: a slow client
        // never holds up the next.
        let shared = Arc::clone(shared);
        let _ = thread::Builder::new()
            .name("sim-session".into())
            .spawn(move || {
                let _ = serve(session, &shared);
            });
    }
}

fn serve<P: Protocol>(mut session: Session, shared: &Shared<P>) -> Result<(), ServerError> {
    match session.read_request(Duration::from_secs(5))? {
        Request::Get { path } => {
            let c = &shared.counters;
            c.rest_requests.fetch_add(1, Ordering::Relaxed);
            let verdict = shared.rest_limit.as_ref().map(|limit| {
                let weight = shared.protocol.rest_weight(&path);
                lock(limit).check(weight, Instant::now())
            });
            let refused = match verdict {
                Some(Verdict::Throttle { retry_after }) => Some((
                    429,
                    &c.rest_throttled,
                    retry_after,
                    r#"{"code":-1003,"msg":"Too much request weight used; please use WebSocket Streams for live updates to avoid polling the API."}"#,
                )),
                Some(Verdict::Ban { retry_after }) => Some((
                    418,
                    &c.rest_banned,
                    retry_after,
                    r#"{"code":-1003,"msg":"Way too much request weight used; IP banned. Please use WebSocket Streams for live updates to avoid bans."}"#,
                )),
                Some(Verdict::Serve { .. }) | None => None,
            };
            if let Some((status, counter, retry_after, body)) = refused {
                counter.fetch_add(1, Ordering::Relaxed);
                let wait = retry_after.to_string();
                let headers = [("Retry-After", wait.as_str())];
                return session.respond_with(status, JSON, &headers, body.as_bytes());
            }
            let listed = shared.protocol.instruments(&path, &lock(&shared.market));
            let scripted = listed.is_none() && shared.config.script.is_some();
            let response = match (listed, &shared.config.script) {
                (Some(list), _) => list,
                (None, Some(script)) => scripted_rest(script, &path),
                (None, None) => shared.protocol.rest(&path, &lock(&shared.market)),
            };
            if response.status == 200 {
                c.rest.fetch_add(1, Ordering::Relaxed);
            }
            let snapshot = scripted && response.status == 200;
            let used = match verdict {
                Some(Verdict::Serve { used }) => Some(used.to_string()),
                _ => None,
            };
            let headers: &[(&str, &str)] = match &used {
                Some(u) => &[("X-MBX-USED-WEIGHT-1M", u)],
                None => &[],
            };
            let sent = session.respond_with(
                response.status,
                response.content_type,
                headers,
                response.body.as_bytes(),
            );
            // Counted once written: the flood after it finds the snapshot
            // already on its way to the client.
            if snapshot && sent.is_ok() {
                c.script_snapshots.fetch_add(1, Ordering::Release);
            }
            sent
        }
        Request::WebSocket { path, headers } => {
            let opened = shared
                .protocol
                .admit(&path, &headers)
                .and_then(|()| shared.protocol.open(&path, &lock(&shared.market)));
            let state = match opened {
                Ok(state) => state,
                Err(r) => return session.respond(r.status, r.content_type, r.body.as_bytes()),
            };
            session.accept_websocket()?;
            // Requests already here with the upgrade are handled (with
            // `on_open`) before the client's first market step; later ones
            // at its polls, between two steps. Nothing waits for them: the
            // market moves only while some client is subscribed
            // (`Protocol::subscribed`, which counts a URL's streams from
            // the upgrade), and the record of what was sent
            // (`SimConfig::keep_sent`) holds only what was written to a
            // client, so a subscription arriving late, before or after the
            // market started, misses nothing the record claims it got.
            let mut pending = Vec::new();
            let mut rate = MessageRate::default();
            loop {
                let incoming = session.recv(Duration::ZERO)?;
                // These count against the venue's limit too.
                if too_fast(shared, &state, &session, &mut rate, incoming.as_ref()) {
                    shared.counters.accepted.fetch_add(1, Ordering::Relaxed);
                    shared.counters.too_fast.fetch_add(1, Ordering::Relaxed);
                    shared.counters.kicked.fetch_add(1, Ordering::Relaxed);
                    close_too_fast(&mut session);
                    return Ok(());
                }
                match incoming {
                    Some(Incoming::Text(t)) => pending.push(t),
                    Some(Incoming::Closed(_)) => return Ok(()),
                    Some(Incoming::Binary(_)) => {}
                    None => break,
                }
            }
            shared.counters.accepted.fetch_add(1, Ordering::Relaxed);
            let now = Instant::now();
            lock(&shared.clients).push(Client {
                session,
                state,
                last_poll: now,
                last_rx: now,
                opened: false,
                pending,
                rate,
                upgraded: now,
                shutdowns: 0,
                close_at: None,
                trading: false,
                gone: None,
            });
            Ok(())
        }
    }
}

/// Whether what the client sent up to `incoming`, which `recv` just
/// returned, takes it past the venue's limit on incoming messages: the
/// pings and pongs `recv` read on the way (each counts: see
/// [`MessageRate`]), then a text message.
fn too_fast<P: Protocol>(
    shared: &Shared<P>,
    state: &P::Client,
    session: &Session,
    rate: &mut MessageRate,
    incoming: Option<&Incoming>,
) -> bool {
    let Some(limit) = shared.protocol.client_incoming_limit(state) else {
        return false;
    };
    let at = Instant::now();
    let control = session.pings_received() + session.pongs_received();
    match incoming {
        Some(Incoming::Closed(_)) => false,
        Some(Incoming::Text(_)) => {
            rate.control_frames(at, control, limit) || rate.too_fast(at, limit)
        }
        _ => rate.control_frames(at, control, limit),
    }
}

/// Closes a client that sent more messages a second than the venue takes,
/// as the venue does.
fn close_too_fast(session: &mut Session) {
    let _ = session.send_close(CloseCode::POLICY_VIOLATION, "too many messages");
    let _ = session.recv(Duration::from_millis(50));
}

/// A recorded or pregenerated REST answer, by the request's `symbol=`.
fn scripted_rest(script: &Script, path: &str) -> Response {
    match query(path, "symbol").and_then(|s| script.snapshots.get(s)) {
        Some(body) => Response::json(200, body.clone()),
        None => Response::json(400, r#"{"code":-1121,"msg":"Invalid symbol."}"#),
    }
}

/// A client after its poll.
#[derive(Clone, Copy, Debug)]
enum Polled {
    Open,
    /// It closed with a close frame (answered): a goodbye, not a failure.
    Closed,
    /// The venue closed it (a missed heartbeat, silence).
    Kicked,
}

/// Writes `out` to the client (one write), stamping market data.
fn write<C>(
    client: &mut Client<C>,
    out: &mut Out,
    stamps: &SendStamps,
    counters: &Counters,
    clock: Clock,
) -> Result<(), ServerError> {
    if out.items.is_empty() {
        return Ok(());
    }
    let mut result = Ok(());
    for (frame, key) in &out.items {
        result = match frame {
            Frame::Text(text) => client.session.queue_text(text),
            Frame::Binary(data) => client.session.queue_binary(data),
        };
        if result.is_err() {
            break;
        }
        // Stamped as queued: the whole batch goes out in the write below,
        // a few microseconds later.
        if let Some((n, kind, id)) = key {
            stamps.put(*n, *kind, *id, clock.now());
        }
        counters.messages.fetch_add(1, Ordering::Relaxed);
        counters
            .bytes
            .fetch_add(frame.len() as u64, Ordering::Relaxed);
    }
    out.items.clear();
    result.and_then(|()| client.session.flush())
}

/// Now and then (every 10 ms at most, at every call for a client that
/// trades): client `c`'s requests, pings, closes and timers. What a
/// request changes in the books and orders goes out to every client at
/// once ([`flush_engine`]). An error: drop the client.
fn poll_client<P: Protocol>(
    shared: &Shared<P>,
    clients: &mut [Client<P::Client>],
    c: usize,
    market: &mut Market,
    out: &mut Out,
    clock: Clock,
) -> Result<Polled, ServerError> {
    open_client(shared, clients, c, market, out, clock)?;
    let now = Instant::now();
    let client = &mut clients[c];
    if !client.trading && now.duration_since(client.last_poll) < Duration::from_millis(10) {
        return Ok(Polled::Open);
    }
    client.last_poll = now;
    // Every request that has arrived, then the timers.
    loop {
        let client = &mut clients[c];
        let incoming = client.session.recv(Duration::ZERO)?;
        if too_fast(
            shared,
            &client.state,
            &client.session,
            &mut client.rate,
            incoming.as_ref(),
        ) {
            shared.counters.too_fast.fetch_add(1, Ordering::Relaxed);
            close_too_fast(&mut client.session);
            return Ok(Polled::Kicked);
        }
        match incoming {
            Some(Incoming::Text(t)) => {
                client.last_rx = Instant::now();
                if market.take_ignored(&t) {
                    continue;
                }
                request(shared, clients, c, &t, market, out, clock)?;
            }
            Some(Incoming::Binary(_)) => client.last_rx = Instant::now(),
            Some(Incoming::Closed(_)) => return Ok(Polled::Closed),
            None => break,
        }
    }
    let client = &mut clients[c];
    if client.shutdowns != market.shutdowns {
        // A service restart announced: the notice now, the close later.
        client.shutdowns = market.shutdowns;
        if let Some(notice) = shared.protocol.shutdown_notice(&client.state) {
            out.push(notice);
            write(client, out, &shared.stamps, &shared.counters, clock)?;
        }
        client.close_at = Some(now + shared.config.shutdown_lead);
    }
    if client.close_at.is_some_and(|at| now >= at) {
        let _ = client
            .session
            .send_close(CloseCode::GOING_AWAY, "service restart");
        let _ = client.session.recv(Duration::from_millis(50));
        return Ok(Polled::Kicked);
    }
    if shared
        .config
        .max_lifetime
        .is_some_and(|life| now.saturating_duration_since(client.upgraded) >= life)
    {
        shared.counters.expired.fetch_add(1, Ordering::Relaxed);
        let _ = client
            .session
            .send_close(CloseCode::GOING_AWAY, "connection lifetime reached");
        let _ = client.session.recv(Duration::from_millis(50));
        return Ok(Polled::Kicked);
    }
    let idle = now.saturating_duration_since(client.last_rx);
    let tick = shared.protocol.on_tick(&mut client.state, now, idle, out);
    write(client, out, &shared.stamps, &shared.counters, clock)?;
    match tick {
        Tick::Keep => Ok(Polled::Open),
        Tick::Close(code, reason) => {
            let _ = client.session.send_close(code, reason);
            let _ = client.session.recv(Duration::from_millis(50));
            Ok(Polled::Kicked)
        }
    }
}

/// A client new to the market: what the venue sends first, and the
/// requests that came with the upgrade.
fn open_client<P: Protocol>(
    shared: &Shared<P>,
    clients: &mut [Client<P::Client>],
    c: usize,
    market: &mut Market,
    out: &mut Out,
    clock: Clock,
) -> Result<(), ServerError> {
    let client = &mut clients[c];
    if client.opened {
        return Ok(());
    }
    client.opened = true;
    // Notices given before it joined are not for it.
    client.shutdowns = market.shutdowns;
    shared.protocol.on_open(&mut client.state, market, out);
    write(client, out, &shared.stamps, &shared.counters, clock)?;
    for text in std::mem::take(&mut clients[c].pending) {
        request(shared, clients, c, &text, market, out, clock)?;
    }
    Ok(())
}

/// Counts a client that is gone, and why.
fn count_gone(counters: &Counters, how: Result<Polled, ()>) {
    let c = match how {
        Ok(Polled::Closed) => &counters.closed,
        Ok(Polled::Kicked) => &counters.kicked,
        _ => &counters.dropped,
    };
    c.fetch_add(1, Ordering::Relaxed);
}

/// Polls every client while no market data goes out, keeping those still
/// open.
fn poll_clients<P: Protocol>(shared: &Shared<P>, out: &mut Out, clock: Clock) {
    let mut clients = lock(&shared.clients);
    let mut market = lock(&shared.market);
    poll_all(shared, &mut clients, &mut market, out, clock);
}

/// [`poll_clients`] with the clients and the market locked already.
fn poll_all<P: Protocol>(
    shared: &Shared<P>,
    clients: &mut Vec<Client<P::Client>>,
    market: &mut Market,
    out: &mut Out,
    clock: Clock,
) {
    for c in 0..clients.len() {
        if clients[c].gone.is_some() {
            continue;
        }
        match poll_client(shared, clients, c, market, out, clock) {
            Ok(Polled::Open) => {}
            gone => {
                out.items.clear();
                clients[c].gone = Some(gone.map_err(|_| ()));
            }
        }
    }
    remove_gone(shared, clients, market, out, clock);
}

/// Clients new to the market join it ([`open_client`]); those that fail
/// to are dropped.
fn open_clients<P: Protocol>(
    shared: &Shared<P>,
    clients: &mut Vec<Client<P::Client>>,
    market: &mut Market,
    out: &mut Out,
    clock: Clock,
) {
    for c in 0..clients.len() {
        if clients[c].gone.is_some() {
            continue;
        }
        if open_client(shared, clients, c, market, out, clock).is_err() {
            out.items.clear();
            clients[c].gone = Some(Err(()));
        }
    }
    remove_gone(shared, clients, market, out, clock);
}

/// How long the market thread sleeps at most between two polls of the
/// clients while some client trades ([`Client::trading`]): a request is
/// answered within about this (plus the request's own work), where other
/// clients are read every 10 ms; a sleep, not a spin, so an idle
/// simulator with a trading client wakes 4 000 times a second and does
/// little else.
const TRADING_POLL: Duration = Duration::from_micros(250);

fn generate<P: Protocol>(shared: &Shared<P>, mut rng: StdRng) {
    let config = &shared.config;
    if let Some(core) = config.core {
        // Best effort: an unpinned simulator still works, only noisier.
        let _ = core_affinity::set_for_current(core_affinity::CoreId { id: core });
    }
    let clock = Clock::new();
    let mut out = Out::default();
    if let Some(script) = &config.script {
        // A script held short (`script_hold`) is never finished: the rest
        // stays unsent, the clients polled, until stopped.
        if script::play(shared, script, clock) {
            shared.finished.store(true, Ordering::Release);
        }
        while !shared.stop.load(Ordering::Acquire) {
            poll_clients(shared, &mut out, clock);
            thread::sleep(Duration::from_millis(1));
        }
        return;
    }
    let burst = config.burst.max(1);
    let mut pacer = Pacer::new(config.rate, burst, Instant::now());
    let mut steps: Vec<Step> = (0..burst).map(|_| Step::default()).collect();
    // What of each step of the burst went out: to any client, to this one.
    let mut delivered = vec![Delivered::default(); steps.len()];
    let mut got = delivered.clone();
    let mut n = 0usize;
    while !shared.stop.load(Ordering::Acquire) {
        if let Some(wait) = pacer.wait(Instant::now()) {
            if wait > Duration::from_micros(200) {
                let mut nap = wait - Duration::from_micros(100);
                if shared.trading.load(Ordering::Relaxed) > 0 {
                    // Clients that trade are answered between steps,
                    // however slow the market.
                    poll_clients(shared, &mut out, clock);
                    nap = nap.min(TRADING_POLL);
                }
                thread::sleep(nap);
            }
            continue;
        }
        let mut clients = lock(&shared.clients);
        let mut market = lock(&shared.market);
        // New clients join before the step: what the venue sends first,
        // and the requests that came with the upgrade; their subscriptions
        // miss nothing of it.
        open_clients(shared, &mut clients, &mut market, &mut out, clock);
        // What orders changed is out before the next random step (a
        // request's changes went out with it; this is for any other).
        flush_engine(shared, &mut clients, &mut market, &mut out, clock);
        remove_gone(shared, &mut clients, &mut market, &mut out, clock);
        // Decided with the clients locked, as the steps are made and
        // written: once `pause(true)` has taken the lock, no step is under
        // way and none starts.
        // (A simulator serving no instrument, every symbol asked for
        // being one it does not list, has no market to move.)
        let moving = !shared.paused.load(Ordering::Acquire)
            && !market.instruments.is_empty()
            && clients.iter().any(|c| shared.protocol.subscribed(&c.state));
        if !moving {
            // Paused, or no client subscribed to anything (or no client):
            // the market is quiet but alive, pings are answered, requests
            // handled, heartbeats sent. No steps are owed for the time it
            // stood still: the schedule starts again when it moves.
            poll_all(shared, &mut clients, &mut market, &mut out, clock);
            drop(market);
            drop(clients);
            thread::sleep(if shared.trading.load(Ordering::Relaxed) > 0 {
                TRADING_POLL
            } else {
                Duration::from_millis(1)
            });
            pacer.restart(Instant::now());
            continue;
        }
        pacer.sent();
        for s in steps.iter_mut() {
            let count = shared.counters.steps.fetch_add(1, Ordering::Relaxed);
            let trade =
                config.trade_every > 0 && count.is_multiple_of(u64::from(config.trade_every));
            market.step(n, &mut rng, trade, s);
            n = (n + 1) % market.instruments.len();
        }
        // Fills of resting orders by the steps' trades (the random walk
        // makes no steps of the engine's).
        let (engine, events) = market.take_engine();
        debug_assert!(engine.is_empty(), "a random step is not the engine's");
        delivered.fill(Delivered::default());
        for client in clients.iter_mut() {
            for (s, got) in steps.iter().zip(got.iter_mut()) {
                let from = out.items.len();
                shared
                    .protocol
                    .on_step(&mut client.state, s, &market, &mut out);
                *got = Delivered::of(s, &out.items[from..]);
            }
            if !events.is_empty() {
                shared
                    .protocol
                    .on_private(&mut client.state, &events, &market, &mut out);
            }
            match write(client, &mut out, &shared.stamps, &shared.counters, clock) {
                // Written: what it carried counts as sent.
                Ok(()) => {
                    for (d, g) in delivered.iter_mut().zip(&got) {
                        *d = d.or(*g);
                    }
                }
                Err(_) => {
                    out.items.clear();
                    client.gone = Some(Err(()));
                }
            }
        }
        for (s, d) in steps.iter().zip(&delivered) {
            market.record(s, *d);
        }
        // Then the clients' requests and timers (those written to first,
        // so a request's changes follow the steps everyone has).
        poll_all(shared, &mut clients, &mut market, &mut out, clock);
    }
}
