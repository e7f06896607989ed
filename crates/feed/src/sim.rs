//! The exchange simulator: a TLS WebSocket server (tickwire-net's server
//! role) that speaks Binance spot's public market-data protocol on
//! loopback, so the whole feed can run, and be measured, without internet.
//!
//! - WebSocket: combined streams (`/stream?streams=a/b`, payloads wrapped
//!   as `{"stream":..,"data":..}`) and raw streams (`/ws/<stream>`), plus
//!   `SUBSCRIBE` / `UNSUBSCRIBE` requests answered `{"result":null,"id":N}`.
//!   Streams: `<symbol>@depth@100ms`, `<symbol>@trade`, `<symbol>@bookTicker`.
//! - REST: `GET /api/v3/depth?symbol=X&limit=N`, the book at its current
//!   `lastUpdateId`, consistent with the diff stream (unknown symbols get
//!   Binance's `-1121` error and status 400).
//! - Market: one random-walk book per symbol, moved by one generator
//!   thread at a configured rate and burst: each step is a depth diff
//!   (contiguous `U`/`u`), sometimes a trade first, and a `bookTicker`
//!   when the top of the book changed. Same seed, same market.
//! - Side channel: just before a message is written, its TSC is stamped in
//!   [`SendStamps`] under (symbol, stream kind, id), so a feed in the same
//!   process measures the wire latency of each message end to end.
//!
//! Every client gets every message it subscribed to, in order, or is
//! disconnected: a client that does not keep up blocks the generator for
//! at most the write timeout, then is dropped (as venues drop slow
//! consumers).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tickwire_net::CloseCode;
use tickwire_net::server::{Incoming, Request, Server, ServerError, ServerTls, Session};
use tickwire_tsc::Clock;

/// Prices and sizes on the wire have this many decimals, as Binance spot's.
const WIRE_DECIMALS: u32 = 8;

/// Price levels `(price, size)`, best first.
pub type Levels = Vec<(i64, i64)>;

/// A simulated instrument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimInstrument {
    /// Upper-case symbol (`BTCUSDT`).
    pub symbol: String,
    /// Price decimals (the tick is 10^-price_scale).
    pub price_scale: u8,
    /// Size decimals.
    pub size_scale: u8,
    /// The starting mid price, in ticks.
    pub mid: i64,
    /// Price levels a side keeps (the book spans this many ticks each way).
    pub levels: usize,
}

impl SimInstrument {
    /// A BTCUSDT-like instrument around 60 000.00 with 200 levels a side.
    pub fn btcusdt() -> SimInstrument {
        SimInstrument {
            symbol: "BTCUSDT".into(),
            price_scale: 2,
            size_scale: 5,
            mid: 6_000_000,
            levels: 200,
        }
    }

    /// An ETHUSDT-like instrument around 3 000.00 with 200 levels a side.
    pub fn ethusdt() -> SimInstrument {
        SimInstrument {
            symbol: "ETHUSDT".into(),
            price_scale: 2,
            size_scale: 4,
            mid: 300_000,
            levels: 200,
        }
    }
}

/// What the simulator serves.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Listen here (port 0: any free port).
    pub addr: SocketAddr,
    /// TLS certificate, or plain `ws://`/`http://` without.
    pub tls: Option<ServerTls>,
    /// The instruments.
    pub instruments: Vec<SimInstrument>,
    /// Market steps per second over all instruments (0: as fast as the
    /// clients take them).
    pub rate: u32,
    /// Steps generated back to back at each tick (rate stays the average).
    pub burst: u32,
    /// One step in this many also trades first.
    pub trade_every: u32,
    /// The random seed.
    pub seed: u64,
    /// Keep a copy of every trade and quote sent, for tests ([`Simulator::sent`]).
    pub keep_sent: bool,
    /// Drop a client whose socket takes longer than this to accept a write.
    pub write_timeout: Duration,
    /// Pin the market thread (which spins between steps at high rates) to
    /// this core, away from the feed's.
    pub core: Option<usize>,
    /// Instead of a random market, replay a recording: its received
    /// stream messages to every client, its REST responses as the
    /// snapshots. `instruments`, `rate` and `trade_every` are then unused.
    pub replay: Option<Replay>,
    /// Instead of stepping the market live, send these messages (made by
    /// [`pregenerate`]) as fast as the first client takes them, `burst` to
    /// a write: a source that is never the bottleneck, for measuring a
    /// feed's ceiling.
    pub pregenerated: Option<Arc<Pregenerated>>,
}

/// A market made ahead of time: the snapshot of each symbol at the start,
/// then every message of `steps` market steps, ready to write.
#[derive(Debug)]
pub struct Pregenerated {
    /// `(instrument, stream, id, combined-stream text)`, in order.
    pub messages: Vec<(usize, StreamKind, u64, String)>,
    /// Each symbol's REST depth answer at the start.
    pub snapshots: std::collections::HashMap<String, String>,
}

/// Steps the market of `instruments` (seeded) `steps` times, ahead of time.
pub fn pregenerate(
    instruments: &[SimInstrument],
    steps: usize,
    seed: u64,
    trade_every: u32,
) -> Pregenerated {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut books: Vec<Book> = instruments.iter().map(|i| Book::new(i, &mut rng)).collect();
    let snapshots = instruments
        .iter()
        .zip(&books)
        .map(|(i, b)| (i.symbol.clone(), snapshot_of(i, b, i.levels)))
        .collect();
    let mut messages = Vec::with_capacity(steps * 2);
    let mut out = Vec::new();
    for k in 0..steps {
        let n = k % instruments.len();
        out.clear();
        let trade = trade_every > 0 && (k as u64).is_multiple_of(u64::from(trade_every));
        step(
            n,
            &instruments[n],
            &mut books[n],
            &mut rng,
            trade,
            &mut out,
            None,
        );
        for m in out.drain(..) {
            let text = format!(
                r#"{{"stream":"{}","data":{}}}"#,
                stream_name(&instruments[n].symbol, m.kind),
                m.payload
            );
            messages.push((m.instrument, m.kind, m.id, text));
        }
    }
    Pregenerated {
        messages,
        snapshots,
    }
}

/// Sends the pregenerated messages to every client, `burst` to a write.
fn send_pregenerated(shared: &Shared, pre: &Pregenerated) {
    while lock(&shared.clients).is_empty() {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        thread::sleep(Duration::from_millis(1));
    }
    let clock = Clock::new();
    let burst = shared.config.burst.max(1) as usize;
    // The snapshots are the market's start: the bursts up to the first diff
    // of every symbol go out (a Binance client asks for the REST snapshot at
    // a symbol's first diff), then the rest waits (up to 10 s) until every
    // book's snapshot was fetched, so a client's diff buffer need not hold
    // the whole run.
    let symbols = pre.snapshots.len() as u64;
    let first_diffs = first_diff_of_each(&pre.messages, pre.snapshots.len());
    let mut waited = false;
    for (k, chunk) in pre.messages.chunks(burst).enumerate() {
        if !waited && k * burst > first_diffs {
            waited = true;
            let deadline = Instant::now() + Duration::from_secs(10);
            while shared.snapshots.load(Ordering::Acquire) < symbols && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
            }
        }
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let mut clients = lock(&shared.clients);
        let mut failed = Vec::new();
        for (c, client) in clients.iter_mut().enumerate() {
            let mut result = Ok(());
            for (instrument, kind, id, text) in chunk {
                result = client.session.queue_text(text);
                if result.is_err() {
                    break;
                }
                shared.stamps.put(*instrument, *kind, *id, clock.now());
                shared.messages.fetch_add(1, Ordering::Relaxed);
                shared.bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
            }
            if result.is_ok() {
                result = client.session.flush();
            }
            if result.is_err() {
                failed.push(c);
            }
        }
        for c in failed.into_iter().rev() {
            clients.swap_remove(c);
            shared.dropped.fetch_add(1, Ordering::Relaxed);
        }
        shared.steps.fetch_add(1, Ordering::Relaxed);
    }
}

/// The index of the message by which each of the `symbols` instruments has
/// had a depth diff (the last index if some never has).
fn first_diff_of_each(messages: &[(usize, StreamKind, u64, String)], symbols: usize) -> usize {
    let mut seen = vec![false; symbols];
    let mut left = symbols;
    for (i, (instrument, kind, _, _)) in messages.iter().enumerate() {
        let Some(seen) = seen.get_mut(*instrument) else {
            continue;
        };
        if *kind == StreamKind::Depth && !std::mem::replace(seen, true) {
            left -= 1;
            if left == 0 {
                return i;
            }
        }
    }
    messages.len().saturating_sub(1)
}

/// A recording to serve (see [`SimConfig::replay`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The recording's files, in order.
    pub files: Vec<std::path::PathBuf>,
    /// At the recording's own pace, or as fast as the clients take it.
    pub pace: crate::replay::Pace,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: None,
            instruments: vec![SimInstrument::btcusdt(), SimInstrument::ethusdt()],
            rate: 10_000,
            burst: 1,
            trade_every: 3,
            seed: 1,
            keep_sent: false,
            write_timeout: Duration::from_secs(2),
            core: None,
            replay: None,
            pregenerated: None,
        }
    }
}

/// The kinds of stream a client can subscribe to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// `<symbol>@trade`.
    Trade = 0,
    /// `<symbol>@bookTicker`.
    BookTicker = 1,
    /// `<symbol>@depth@100ms` (also `@depth`).
    Depth = 2,
}

const KINDS: usize = 3;
const STAMP_SLOTS: usize = 4096;

/// Send TSCs by (instrument, stream kind, id): the trade id for trades,
/// the update id `u` for diffs and book tickers. A slot holds the newest
/// message whose id maps to it; a lookup of an older id finds nothing.
pub struct SendStamps {
    /// `[instrument][kind][slot] = (id, tsc)`.
    slots: Vec<[(AtomicU64, AtomicU64); STAMP_SLOTS]>,
}

impl std::fmt::Debug for SendStamps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendStamps")
            .field("instruments", &(self.slots.len() / KINDS))
            .finish()
    }
}

impl SendStamps {
    fn new(instruments: usize) -> SendStamps {
        SendStamps {
            slots: (0..instruments * KINDS)
                .map(|_| std::array::from_fn(|_| (AtomicU64::new(u64::MAX), AtomicU64::new(0))))
                .collect(),
        }
    }

    fn put(&self, instrument: usize, kind: StreamKind, id: u64, tsc: u64) {
        let Some(ring) = self.slots.get(instrument * KINDS + kind as usize) else {
            return;
        };
        let (sid, stsc) = &ring[id as usize % STAMP_SLOTS];
        // Mark the slot busy, write the stamp, then publish the id.
        sid.store(u64::MAX, Ordering::Relaxed);
        stsc.store(tsc, Ordering::Release);
        sid.store(id, Ordering::Release);
    }

    /// The TSC at which the message (`instrument` in the simulator's
    /// order, `kind`, `id`) was handed to the socket, if still known.
    #[inline]
    pub fn get(&self, instrument: usize, kind: StreamKind, id: u64) -> Option<u64> {
        let ring = self.slots.get(instrument * KINDS + kind as usize)?;
        let (sid, stsc) = &ring[id as usize % STAMP_SLOTS];
        if sid.load(Ordering::Acquire) != id {
            return None;
        }
        let tsc = stsc.load(Ordering::Acquire);
        // Overwritten meanwhile: not this message's stamp.
        (sid.load(Ordering::Acquire) == id).then_some(tsc)
    }
}

/// A trade or quote as the simulator sent it (see [`SimConfig::keep_sent`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sent {
    /// A trade: instrument index, id, price and size in the instrument's
    /// units, and whether the buyer was the aggressor.
    Trade {
        /// Index into [`SimConfig::instruments`].
        instrument: usize,
        /// Trade id.
        id: u64,
        /// Price in ticks.
        price: i64,
        /// Size in size units.
        size: i64,
        /// The buyer took liquidity (`"m":false`).
        buyer_aggressor: bool,
    },
    /// A best bid/offer.
    Quote {
        /// Index into [`SimConfig::instruments`].
        instrument: usize,
        /// The book's update id.
        update_id: u64,
        /// Best bid price and size.
        bid: (i64, i64),
        /// Best ask price and size.
        ask: (i64, i64),
    },
}

/// What the simulator did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Market steps generated.
    pub steps: u64,
    /// WebSocket messages written (over all clients).
    pub messages: u64,
    /// Payload bytes written.
    pub bytes: u64,
    /// WebSocket clients accepted.
    pub clients: u64,
    /// Clients dropped for being too slow or failing.
    pub dropped_clients: u64,
    /// Clients that closed their connection with a close frame.
    pub closed_clients: u64,
    /// REST snapshots served.
    pub snapshots: u64,
}

/// One symbol's book and ids.
struct Book {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
    update_id: u64,
    trade_id: u64,
    mid: i64,
}

/// A message ready to write: which stream it belongs to and the payload.
struct Out {
    instrument: usize,
    kind: StreamKind,
    id: u64,
    payload: String,
}

struct Client {
    session: Session,
    raw: bool,
    /// Subscribed (instrument, kind) pairs.
    streams: Vec<(usize, StreamKind)>,
    last_poll: Instant,
}

struct Shared {
    config: SimConfig,
    books: Mutex<Vec<Book>>,
    clients: Mutex<Vec<Client>>,
    stamps: Arc<SendStamps>,
    stop: AtomicBool,
    paused: AtomicBool,
    sent: Mutex<Vec<Sent>>,
    /// Replay mode: the recorded snapshot body of each symbol.
    snapshots_by_symbol: std::collections::HashMap<String, String>,
    /// Replay mode: the recording has been sent to the end.
    finished: AtomicBool,
    steps: AtomicU64,
    messages: AtomicU64,
    bytes: AtomicU64,
    accepted: AtomicU64,
    dropped: AtomicU64,
    closed: AtomicU64,
    snapshots: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running simulator; [`stop`](Simulator::stop) (or dropping it) closes
/// every client with 1001 and joins its threads.
pub struct Simulator {
    shared: Arc<Shared>,
    addr: SocketAddr,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// Ticks (or size units) at `scale` decimals as a wire string with
/// [`WIRE_DECIMALS`] decimals.
fn wire(out: &mut String, value: i64, scale: u8) {
    let unit = 10i64.pow(u32::from(scale));
    let _ = write!(out, "{}", value / unit);
    if WIRE_DECIMALS > 0 {
        out.push('.');
        if scale > 0 {
            let _ = write!(out, "{:0width$}", value % unit, width = usize::from(scale));
        }
        for _ in u32::from(scale)..WIRE_DECIMALS {
            out.push('0');
        }
    }
}

/// `["price","size"],...` for `levels`, best first.
fn levels_json<'l>(
    out: &mut String,
    spec: &SimInstrument,
    levels: impl Iterator<Item = (&'l i64, &'l i64)>,
) {
    for (k, (p, q)) in levels.enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("[\"");
        wire(out, *p, spec.price_scale);
        out.push_str("\",\"");
        wire(out, *q, spec.size_scale);
        out.push_str("\"]");
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Book {
    fn new(i: &SimInstrument, rng: &mut StdRng) -> Book {
        let mut book = Book {
            bids: BTreeMap::new(),
            asks: BTreeMap::new(),
            update_id: 1_000_000,
            trade_id: 5_000_000,
            mid: i.mid,
        };
        let unit = 10i64.pow(u32::from(i.size_scale));
        for off in 1..=i.levels as i64 {
            book.bids
                .insert(i.mid - off, rng.random_range(1..=50 * unit));
            book.asks
                .insert(i.mid + off, rng.random_range(1..=50 * unit));
        }
        book
    }

    fn top(&self) -> ((i64, i64), (i64, i64)) {
        let bid = self
            .bids
            .iter()
            .next_back()
            .map_or((0, 0), |(p, s)| (*p, *s));
        let ask = self.asks.iter().next().map_or((0, 0), |(p, s)| (*p, *s));
        (bid, ask)
    }
}

/// One market step for instrument `n`: maybe a trade, a depth diff, and a
/// book ticker if the top changed.
fn step(
    n: usize,
    spec: &SimInstrument,
    book: &mut Book,
    rng: &mut StdRng,
    trade: bool,
    out: &mut Vec<Out>,
    sent: Option<&mut Vec<Sent>>,
) {
    let unit = 10i64.pow(u32::from(spec.size_scale));
    let before = book.top();
    let mut sent = sent;
    let mut changes: Vec<(bool, i64, i64)> = Vec::with_capacity(8);
    let e = now_ms();
    if trade {
        // Take some of the best level on one side.
        let buyer = rng.random_bool(0.5);
        let level = if buyer {
            book.asks.iter().next().map(|(p, s)| (*p, *s))
        } else {
            book.bids.iter().next_back().map(|(p, s)| (*p, *s))
        };
        if let Some((price, size)) = level {
            let qty = rng.random_range(1..=size);
            book.trade_id += 1;
            let mut p = String::with_capacity(200);
            let _ = write!(
                p,
                r#"{{"e":"trade","E":{e},"s":"{}","t":{},"p":""#,
                spec.symbol, book.trade_id
            );
            wire(&mut p, price, spec.price_scale);
            p.push_str(r#"","q":""#);
            wire(&mut p, qty, spec.size_scale);
            let _ = write!(p, r#"","T":{e},"m":{},"M":true}}"#, !buyer);
            out.push(Out {
                instrument: n,
                kind: StreamKind::Trade,
                id: book.trade_id,
                payload: p,
            });
            if let Some(s) = sent.as_deref_mut() {
                s.push(Sent::Trade {
                    instrument: n,
                    id: book.trade_id,
                    price,
                    size: qty,
                    buyer_aggressor: buyer,
                });
            }
            changes.push((!buyer, price, size - qty));
        }
    }
    // The mid wanders a tick at a time.
    let moved = match rng.random_range(0..10) {
        0 => -1,
        1 => 1,
        _ => 0,
    };
    book.mid += moved;
    let mid = book.mid;
    let levels = spec.levels as i64;
    // Levels now on the wrong side of the mid, or out of range, go.
    for (&p, _) in book.bids.range(mid..) {
        changes.push((true, p, 0));
    }
    for (&p, _) in book.asks.range(..=mid) {
        changes.push((false, p, 0));
    }
    for (&p, _) in book.bids.range(..mid - levels) {
        changes.push((true, p, 0));
    }
    for (&p, _) in book.asks.range(mid + levels + 1..) {
        changes.push((false, p, 0));
    }
    // And a few levels change size.
    for _ in 0..rng.random_range(1..=3) {
        let bid = rng.random_bool(0.5);
        let off = rng.random_range(1..=levels);
        let size = if rng.random_range(0..5) == 0 {
            0
        } else {
            rng.random_range(1..=50 * unit)
        };
        changes.push((bid, if bid { mid - off } else { mid + off }, size));
    }
    // Keep the last change of each level, bids and asks apart, best first.
    let mut bids: BTreeMap<i64, i64> = BTreeMap::new();
    let mut asks: BTreeMap<i64, i64> = BTreeMap::new();
    for (bid, price, size) in changes {
        if bid {
            bids.insert(price, size);
        } else {
            asks.insert(price, size);
        }
    }
    for (p, s) in &bids {
        if *s == 0 {
            book.bids.remove(p);
        } else {
            book.bids.insert(*p, *s);
        }
    }
    for (p, s) in &asks {
        if *s == 0 {
            book.asks.remove(p);
        } else {
            book.asks.insert(*p, *s);
        }
    }
    let first = book.update_id + 1;
    book.update_id += (bids.len() + asks.len()).max(1) as u64;
    let mut d = String::with_capacity(64 + 40 * (bids.len() + asks.len()));
    let _ = write!(
        d,
        r#"{{"e":"depthUpdate","E":{e},"s":"{}","U":{first},"u":{},"b":["#,
        spec.symbol, book.update_id
    );
    levels_json(&mut d, spec, bids.iter().rev());
    d.push_str(r#"],"a":["#);
    levels_json(&mut d, spec, asks.iter());
    d.push_str("]}");
    out.push(Out {
        instrument: n,
        kind: StreamKind::Depth,
        id: book.update_id,
        payload: d,
    });
    let after = book.top();
    if after != before {
        let (bid, ask) = after;
        let mut t = String::with_capacity(160);
        let _ = write!(t, r#"{{"u":{},"s":"{}","b":""#, book.update_id, spec.symbol);
        wire(&mut t, bid.0, spec.price_scale);
        t.push_str(r#"","B":""#);
        wire(&mut t, bid.1, spec.size_scale);
        t.push_str(r#"","a":""#);
        wire(&mut t, ask.0, spec.price_scale);
        t.push_str(r#"","A":""#);
        wire(&mut t, ask.1, spec.size_scale);
        t.push_str("\"}");
        out.push(Out {
            instrument: n,
            kind: StreamKind::BookTicker,
            id: book.update_id,
            payload: t,
        });
        if let Some(s) = sent {
            s.push(Sent::Quote {
                instrument: n,
                update_id: book.update_id,
                bid,
                ask,
            });
        }
    }
}

/// A throw-away certificate authority and a server certificate it issued
/// for `localhost` and `127.0.0.1`: the simulator's TLS, and the CA (PEM)
/// a client must trust to reach it. Made fresh each time; nothing secret
/// is ever written to the repository.
pub fn self_signed() -> Result<(ServerTls, String), String> {
    let e = |e: rcgen::Error| e.to_string();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "tickwire simulator CA");
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = rcgen::KeyPair::generate().map_err(e)?;
    let ca_cert = ca.self_signed(&ca_key).map_err(e)?;
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let mut leaf =
        rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(e)?;
    leaf.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = rcgen::KeyPair::generate().map_err(e)?;
    let cert = leaf.signed_by(&key, &issuer).map_err(e)?;
    let tls = ServerTls::from_pem(cert.pem().as_bytes(), key.serialize_pem().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok((tls, ca_cert.pem()))
}

/// The stream name of (instrument, kind).
fn stream_name(symbol: &str, kind: StreamKind) -> String {
    let s = symbol.to_ascii_lowercase();
    match kind {
        StreamKind::Trade => format!("{s}@trade"),
        StreamKind::BookTicker => format!("{s}@bookTicker"),
        StreamKind::Depth => format!("{s}@depth@100ms"),
    }
}

/// The (instrument, kind) a stream name means, if served.
fn parse_stream(instruments: &[SimInstrument], name: &str) -> Option<(usize, StreamKind)> {
    let (symbol, channel) = name.split_once('@')?;
    let n = instruments
        .iter()
        .position(|i| i.symbol.eq_ignore_ascii_case(symbol))?;
    let kind = match channel {
        "trade" => StreamKind::Trade,
        "bookTicker" => StreamKind::BookTicker,
        "depth" | "depth@100ms" => StreamKind::Depth,
        _ => return None,
    };
    Some((n, kind))
}

/// The value of `key` in a URL query.
fn query<'a>(path: &'a str, key: &str) -> Option<&'a str> {
    path.split_once('?')?
        .1
        .split('&')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

impl Simulator {
    /// Binds and starts the acceptor and generator threads.
    pub fn start(config: SimConfig) -> io::Result<Simulator> {
        let snapshots_by_symbol = match (&config.replay, &config.pregenerated) {
            (Some(r), _) => recorded_snapshots(&r.files)?,
            (None, Some(p)) => p.snapshots.clone(),
            (None, None) => std::collections::HashMap::new(),
        };
        if config.instruments.is_empty() && config.replay.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the simulator needs at least one instrument",
            ));
        }
        let server = Server::bind(config.addr, config.tls.clone())?;
        let addr = server.local_addr()?;
        let mut rng = StdRng::seed_from_u64(config.seed);
        let books = config
            .instruments
            .iter()
            .map(|i| Book::new(i, &mut rng))
            .collect();
        let shared = Arc::new(Shared {
            stamps: Arc::new(SendStamps::new(config.instruments.len())),
            config,
            books: Mutex::new(books),
            clients: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            paused: AtomicBool::new(false),
            sent: Mutex::new(Vec::new()),
            snapshots_by_symbol,
            finished: AtomicBool::new(false),
            steps: AtomicU64::new(0),
            messages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            snapshots: AtomicU64::new(0),
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
        Ok(Simulator {
            shared,
            addr,
            threads: vec![acceptor, generator],
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The send-stamp side channel.
    pub fn stamps(&self) -> Arc<SendStamps> {
        Arc::clone(&self.shared.stamps)
    }

    /// Sends `text` as is to every client, between two market steps (for
    /// tests of bad input). Returns how many clients it went to.
    pub fn inject(&self, text: &str) -> usize {
        let mut clients = lock(&self.shared.clients);
        clients
            .iter_mut()
            .map(|c| c.session.send_text(text).is_ok())
            .filter(|sent| *sent)
            .count()
    }

    /// In replay mode: whether the whole recording has been sent.
    pub fn finished(&self) -> bool {
        self.shared.finished.load(Ordering::Acquire)
    }

    /// Counts so far.
    pub fn stats(&self) -> SimStats {
        let s = &self.shared;
        SimStats {
            steps: s.steps.load(Ordering::Relaxed),
            messages: s.messages.load(Ordering::Relaxed),
            bytes: s.bytes.load(Ordering::Relaxed),
            clients: s.accepted.load(Ordering::Relaxed),
            dropped_clients: s.dropped.load(Ordering::Relaxed),
            closed_clients: s.closed.load(Ordering::Relaxed),
            snapshots: s.snapshots.load(Ordering::Relaxed),
        }
    }

    /// Stops (or resumes) moving the market; clients stay connected.
    pub fn pause(&self, paused: bool) {
        self.shared.paused.store(paused, Ordering::Release);
    }

    /// Every trade and quote sent so far, if [`SimConfig::keep_sent`].
    pub fn sent(&self) -> Vec<Sent> {
        lock(&self.shared.sent).clone()
    }

    /// Instrument `n`'s book now: its update id, bids best first, asks
    /// best first (at most `depth` levels a side).
    pub fn book(&self, n: usize, depth: usize) -> Option<(u64, Levels, Levels)> {
        let books = lock(&self.shared.books);
        let b = books.get(n)?;
        Some((
            b.update_id,
            b.bids
                .iter()
                .rev()
                .take(depth)
                .map(|(p, s)| (*p, *s))
                .collect(),
            b.asks.iter().take(depth).map(|(p, s)| (*p, *s)).collect(),
        ))
    }

    /// Stops generating, closes every client with 1001, joins the threads.
    pub fn stop(mut self) -> SimStats {
        self.shutdown();
        self.stats()
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        for mut c in lock(&self.shared.clients).drain(..) {
            let _ = c
                .session
                .send_close(CloseCode::GOING_AWAY, "simulator stopping");
            let _ = c.session.recv(Duration::from_millis(200));
        }
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown();
        }
    }
}

fn accept_loop(server: &Server, shared: &Arc<Shared>) {
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

fn serve(mut session: Session, shared: &Shared) -> Result<(), ServerError> {
    let instruments = &shared.config.instruments;
    match session.read_request(Duration::from_secs(5))? {
        Request::Get { path } => {
            let route = path.split('?').next().unwrap_or_default();
            if route != "/api/v3/depth" {
                return session.respond(
                    404,
                    "application/json",
                    br#"{"code":-1,"msg":"Not found."}"#,
                );
            }
            if shared.config.replay.is_some() || shared.config.pregenerated.is_some() {
                let body = query(&path, "symbol").and_then(|s| shared.snapshots_by_symbol.get(s));
                return match body {
                    Some(body) => {
                        shared.snapshots.fetch_add(1, Ordering::Relaxed);
                        session.respond(200, "application/json;charset=UTF-8", body.as_bytes())
                    }
                    None => session.respond(
                        400,
                        "application/json",
                        br#"{"code":-1121,"msg":"Invalid symbol."}"#,
                    ),
                };
            }
            let n =
                query(&path, "symbol").and_then(|s| instruments.iter().position(|i| i.symbol == s));
            let Some(n) = n else {
                return session.respond(
                    400,
                    "application/json",
                    br#"{"code":-1121,"msg":"Invalid symbol."}"#,
                );
            };
            let limit = query(&path, "limit")
                .and_then(|l| l.parse::<usize>().ok())
                .unwrap_or(100)
                .clamp(1, 5000);
            let body = snapshot(shared, n, limit);
            shared.snapshots.fetch_add(1, Ordering::Relaxed);
            session.respond(200, "application/json;charset=UTF-8", body.as_bytes())
        }
        Request::WebSocket { path } => {
            let route = path.split('?').next().unwrap_or_default();
            let (raw, mut streams) = if let Some(name) = route.strip_prefix("/ws/") {
                (
                    true,
                    name.split('/')
                        .filter_map(|s| parse_stream(instruments, s))
                        .collect(),
                )
            } else if route == "/ws" {
                (true, Vec::new())
            } else if route == "/stream" {
                let names = query(&path, "streams").unwrap_or_default();
                (
                    false,
                    names
                        .split('/')
                        .filter_map(|s| parse_stream(instruments, s))
                        .collect(),
                )
            } else {
                return session.respond(
                    404,
                    "application/json",
                    br#"{"code":-1,"msg":"Not found."}"#,
                );
            };
            session.accept_websocket()?;
            // Subscriptions sent right after the upgrade are applied before
            // the client joins the market, so it misses nothing of them.
            let deadline = Instant::now() + Duration::from_millis(50);
            while Instant::now() < deadline {
                match session.recv(Duration::from_millis(5))? {
                    Some(Incoming::Text(t)) => {
                        let answer = control(instruments, &t, &mut streams);
                        session.send_text(&answer)?;
                    }
                    Some(Incoming::Closed(_)) => return Ok(()),
                    _ => {}
                }
            }
            shared.accepted.fetch_add(1, Ordering::Relaxed);
            lock(&shared.clients).push(Client {
                session,
                raw,
                streams,
                last_poll: Instant::now(),
            });
            Ok(())
        }
    }
}

fn snapshot(shared: &Shared, n: usize, limit: usize) -> String {
    let books = lock(&shared.books);
    snapshot_of(&shared.config.instruments[n], &books[n], limit)
}

/// A book as Binance's REST depth answer, `limit` levels a side.
fn snapshot_of(spec: &SimInstrument, book: &Book, limit: usize) -> String {
    let mut s = String::with_capacity(64 + limit * 80);
    let _ = write!(s, r#"{{"lastUpdateId":{},"bids":["#, book.update_id);
    levels_json(&mut s, spec, book.bids.iter().rev().take(limit));
    s.push_str(r#"],"asks":["#);
    levels_json(&mut s, spec, book.asks.iter().take(limit));
    s.push_str("]}");
    s
}

/// Answers a `SUBSCRIBE` / `UNSUBSCRIBE` / `LIST_SUBSCRIPTIONS` request,
/// updating `streams`.
fn control(
    instruments: &[SimInstrument],
    text: &str,
    streams: &mut Vec<(usize, StreamKind)>,
) -> String {
    #[derive(serde::Deserialize)]
    struct Req {
        method: String,
        #[serde(default)]
        params: Vec<String>,
        id: Option<serde_json::Value>,
    }
    let Ok(req) = serde_json::from_str::<Req>(text) else {
        return r#"{"error":{"code":3,"msg":"Invalid JSON"},"id":null}"#.into();
    };
    let id = req.id.map_or_else(|| "null".to_string(), |v| v.to_string());
    let mut parsed = Vec::new();
    for p in &req.params {
        match parse_stream(instruments, p) {
            Some(s) => parsed.push(s),
            None => {
                return format!(
                    r#"{{"error":{{"code":2,"msg":"Invalid request: unknown stream {p:?}"}},"id":{id}}}"#
                );
            }
        }
    }
    match req.method.as_str() {
        "SUBSCRIBE" => {
            for s in parsed {
                if !streams.contains(&s) {
                    streams.push(s);
                }
            }
            format!(r#"{{"result":null,"id":{id}}}"#)
        }
        "UNSUBSCRIBE" => {
            streams.retain(|s| !parsed.contains(s));
            format!(r#"{{"result":null,"id":{id}}}"#)
        }
        "LIST_SUBSCRIPTIONS" => {
            let names: Vec<String> = streams
                .iter()
                .map(|(n, k)| format!("{:?}", stream_name(&instruments[*n].symbol, *k)))
                .collect();
            format!(r#"{{"result":[{}],"id":{id}}}"#, names.join(","))
        }
        _ => {
            format!(r#"{{"error":{{"code":2,"msg":"Invalid request: unknown method"}},"id":{id}}}"#)
        }
    }
}

/// A client after a poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Polled {
    Open,
    /// It closed with a close frame (answered): a goodbye, not a failure.
    Closed,
}

/// Now and then (every 10 ms at most): a client's requests, pings and
/// closes. An error: drop the client.
fn poll_client(client: &mut Client, instruments: &[SimInstrument]) -> Result<Polled, ServerError> {
    if client.last_poll.elapsed() < Duration::from_millis(10) {
        return Ok(Polled::Open);
    }
    client.last_poll = Instant::now();
    match client.session.recv(Duration::ZERO)? {
        Some(Incoming::Text(t)) => {
            let answer = control(instruments, &t, &mut client.streams);
            client.session.send_text(&answer).map(|()| Polled::Open)
        }
        Some(Incoming::Closed(_)) => Ok(Polled::Closed),
        _ => Ok(Polled::Open),
    }
}

/// After a replay or a pregenerated market: quiet but alive until stopped,
/// answering the clients' pings and closes.
fn stay_quiet(shared: &Shared) {
    while !shared.stop.load(Ordering::Acquire) {
        poll_clients(shared, &mut lock(&shared.clients));
        thread::sleep(Duration::from_millis(1));
    }
}

/// Polls every client while no market data goes out, keeping those still
/// open and counting the others.
fn poll_clients(shared: &Shared, clients: &mut Vec<Client>) {
    clients.retain_mut(|c| match poll_client(c, &shared.config.instruments) {
        Ok(Polled::Open) => true,
        gone => {
            count_gone(shared, gone.is_ok());
            false
        }
    });
}

/// Counts a client that is gone: closed with a close frame, or dropped.
fn count_gone(shared: &Shared, closed: bool) {
    let counter = if closed {
        &shared.closed
    } else {
        &shared.dropped
    };
    counter.fetch_add(1, Ordering::Relaxed);
}

fn generate(shared: &Shared, mut rng: StdRng) {
    let config = &shared.config;
    if let Some(core) = config.core {
        // Best effort: an unpinned simulator still works, only noisier.
        let _ = crate::threads::pin(core);
    }
    if let Some(replay) = &config.replay {
        replay_recording(shared, replay);
        shared.finished.store(true, Ordering::Release);
        return stay_quiet(shared);
    }
    if let Some(pre) = &config.pregenerated {
        send_pregenerated(shared, pre);
        shared.finished.store(true, Ordering::Release);
        return stay_quiet(shared);
    }
    let clock = Clock::new();
    let burst = config.burst.max(1);
    let interval = (config.rate > 0)
        .then(|| Duration::from_secs_f64(f64::from(burst) / f64::from(config.rate)));
    let started = Instant::now();
    let mut ticks: u64 = 0;
    let mut out: Vec<Out> = Vec::with_capacity(64);
    let mut framed = String::with_capacity(4096);
    let mut n = 0usize;
    while !shared.stop.load(Ordering::Acquire) {
        if let Some(interval) = interval {
            let due = started + interval.mul_f64(ticks as f64);
            let now = Instant::now();
            if due > now {
                let wait = due - now;
                if wait > Duration::from_micros(200) {
                    thread::sleep(wait - Duration::from_micros(100));
                }
                continue;
            }
        }
        ticks += 1;
        let mut clients = lock(&shared.clients);
        if clients.is_empty() || shared.paused.load(Ordering::Acquire) {
            // Paused, the market is quiet but alive: pings are answered.
            poll_clients(shared, &mut clients);
            drop(clients);
            thread::sleep(Duration::from_millis(1));
            continue;
        }
        out.clear();
        {
            let mut books = lock(&shared.books);
            let mut sent = config.keep_sent.then(|| lock(&shared.sent));
            for _ in 0..burst {
                let steps = shared.steps.fetch_add(1, Ordering::Relaxed);
                let trade =
                    config.trade_every > 0 && steps.is_multiple_of(u64::from(config.trade_every));
                step(
                    n,
                    &config.instruments[n],
                    &mut books[n],
                    &mut rng,
                    trade,
                    &mut out,
                    sent.as_deref_mut(),
                );
                n = (n + 1) % config.instruments.len();
            }
        }
        let mut failed = Vec::new();
        for (c, client) in clients.iter_mut().enumerate() {
            let mut result = Ok(());
            for m in &out {
                if !client.streams.contains(&(m.instrument, m.kind)) {
                    continue;
                }
                let text = if client.raw {
                    m.payload.as_str()
                } else {
                    framed.clear();
                    framed.push_str(r#"{"stream":""#);
                    framed.push_str(&stream_name(
                        &config.instruments[m.instrument].symbol,
                        m.kind,
                    ));
                    framed.push_str(r#"","data":"#);
                    framed.push_str(&m.payload);
                    framed.push('}');
                    framed.as_str()
                };
                result = client.session.queue_text(text);
                if result.is_err() {
                    break;
                }
                // Stamped as queued: with a burst, the whole burst goes out
                // in the one write below, a few microseconds later.
                shared.stamps.put(m.instrument, m.kind, m.id, clock.now());
                shared.messages.fetch_add(1, Ordering::Relaxed);
                shared.bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
            }
            if result.is_ok() {
                result = client.session.flush();
            }
            // Gone: closed (true) or failed (false).
            let gone = match result.and_then(|()| poll_client(client, &config.instruments)) {
                Ok(Polled::Open) => None,
                Ok(Polled::Closed) => Some(true),
                Err(_) => Some(false),
            };
            if let Some(closed) = gone {
                failed.push((c, closed));
            }
        }
        for (c, closed) in failed.into_iter().rev() {
            clients.swap_remove(c);
            count_gone(shared, closed);
        }
    }
}

/// The first recorded REST response of each symbol (named by the fetch's
/// `symbol=`), read from `files` before serving.
fn recorded_snapshots(
    files: &[std::path::PathBuf],
) -> io::Result<std::collections::HashMap<String, String>> {
    use crate::recording::{Kind, Reader};
    let mut urls: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    let mut bodies = std::collections::HashMap::new();
    for path in files {
        let file = std::fs::File::open(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut reader = Reader::new(io::BufReader::new(file))
            .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
        while let Some(r) = reader
            .next_record()
            .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?
        {
            match r.kind {
                Kind::Opened => {
                    urls.insert(r.conn, String::from_utf8_lossy(r.payload).into_owned());
                }
                Kind::Response => {
                    if let Some(symbol) = urls.get(&r.conn).and_then(|u| query(u, "symbol")) {
                        bodies
                            .entry(symbol.to_owned())
                            .or_insert_with(|| String::from_utf8_lossy(r.payload).into_owned());
                    }
                }
                _ => {}
            }
        }
    }
    Ok(bodies)
}

/// Sends every received text message of the recording's stream
/// connections to every client, paced as asked. Waits for a first client.
fn replay_recording(shared: &Shared, replay: &Replay) {
    use crate::recording::{Kind, Reader};
    while lock(&shared.clients).is_empty() {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        thread::sleep(Duration::from_millis(1));
    }
    let started = Instant::now();
    let mut first_wall = None;
    let mut fetches = std::collections::HashSet::new();
    for path in &replay.files {
        let Ok(file) = std::fs::File::open(path) else {
            return;
        };
        let Ok(mut reader) = Reader::new(io::BufReader::with_capacity(1 << 20, file)) else {
            return;
        };
        while let Ok(Some(r)) = reader.next_record() {
            if shared.stop.load(Ordering::Acquire) {
                return;
            }
            match r.kind {
                Kind::Opened => {
                    let url = String::from_utf8_lossy(r.payload);
                    if url.starts_with("http://") || url.starts_with("https://") {
                        fetches.insert(r.conn);
                    } else {
                        fetches.remove(&r.conn);
                    }
                    continue;
                }
                Kind::Received if !r.binary && !fetches.contains(&r.conn) => {}
                _ => continue,
            }
            let Ok(text) = std::str::from_utf8(r.payload) else {
                continue;
            };
            if replay.pace == crate::replay::Pace::Original {
                let first = *first_wall.get_or_insert(r.wall_ns);
                let due = Duration::from_nanos(r.wall_ns.saturating_sub(first));
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    thread::sleep(wait);
                }
            }
            while shared.paused.load(Ordering::Acquire) && !shared.stop.load(Ordering::Acquire) {
                thread::sleep(Duration::from_millis(1));
            }
            shared.steps.fetch_add(1, Ordering::Relaxed);
            let mut clients = lock(&shared.clients);
            let mut failed = Vec::new();
            for (c, client) in clients.iter_mut().enumerate() {
                if client.session.send_text(text).is_err() {
                    failed.push(c);
                    continue;
                }
                shared.messages.fetch_add(1, Ordering::Relaxed);
                shared.bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
            }
            for c in failed.into_iter().rev() {
                clients.swap_remove(c);
                shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_have_binance_decimals() {
        let mut s = String::new();
        wire(&mut s, 6_000_012, 2);
        assert_eq!(s, "60000.12000000");
        s.clear();
        wire(&mut s, 5, 5);
        assert_eq!(s, "0.00005000");
        s.clear();
        wire(&mut s, 7, 0);
        assert_eq!(s, "7.00000000");
    }

    #[test]
    fn stream_names_round_trip() {
        let instruments = [SimInstrument::btcusdt(), SimInstrument::ethusdt()];
        for n in 0..2 {
            for kind in [StreamKind::Trade, StreamKind::BookTicker, StreamKind::Depth] {
                let name = stream_name(&instruments[n].symbol, kind);
                assert_eq!(parse_stream(&instruments, &name), Some((n, kind)), "{name}");
            }
        }
        assert_eq!(parse_stream(&instruments, "btcusdt@kline_1m"), None);
        assert_eq!(parse_stream(&instruments, "xrpusdt@trade"), None);
    }

    #[test]
    fn subscribe_requests_are_answered_like_binance() {
        let instruments = [SimInstrument::btcusdt()];
        let mut streams = Vec::new();
        let a = control(
            &instruments,
            r#"{"method":"SUBSCRIBE","params":["btcusdt@trade","btcusdt@depth@100ms"],"id":7}"#,
            &mut streams,
        );
        assert_eq!(a, r#"{"result":null,"id":7}"#);
        assert_eq!(streams, [(0, StreamKind::Trade), (0, StreamKind::Depth)]);
        let a = control(
            &instruments,
            r#"{"method":"LIST_SUBSCRIPTIONS","id":8}"#,
            &mut streams,
        );
        assert_eq!(
            a,
            r#"{"result":["btcusdt@trade","btcusdt@depth@100ms"],"id":8}"#
        );
        let a = control(
            &instruments,
            r#"{"method":"UNSUBSCRIBE","params":["btcusdt@trade"],"id":9}"#,
            &mut streams,
        );
        assert_eq!(a, r#"{"result":null,"id":9}"#);
        assert_eq!(streams, [(0, StreamKind::Depth)]);
        let a = control(
            &instruments,
            r#"{"method":"SUBSCRIBE","params":["x@y"],"id":1}"#,
            &mut streams,
        );
        assert!(a.contains(r#""code":2"#), "{a}");
        let a = control(&instruments, "not json", &mut streams);
        assert!(a.contains(r#""code":3"#), "{a}");
    }

    #[test]
    fn the_market_is_never_crossed_and_diffs_chain() {
        let spec = SimInstrument {
            levels: 20,
            ..SimInstrument::btcusdt()
        };
        let mut rng = StdRng::seed_from_u64(9);
        let mut book = Book::new(&spec, &mut rng);
        let mut out = Vec::new();
        let mut last_u = book.update_id;
        for i in 0..20_000 {
            out.clear();
            step(0, &spec, &mut book, &mut rng, i % 3 == 0, &mut out, None);
            let ((bid, _), (ask, _)) = book.top();
            assert!(bid < ask, "crossed at step {i}: {bid} >= {ask}");
            assert!(book.bids.len() <= spec.levels + 1 && book.asks.len() <= spec.levels + 1);
            let depth = out.iter().find(|o| o.kind == StreamKind::Depth).unwrap();
            let u0 = depth.payload.find(r#""U":"#).unwrap() + 4;
            let first: u64 = depth.payload[u0..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(first, last_u + 1, "{}", depth.payload);
            last_u = depth.id;
        }
    }

    #[test]
    fn stamps_are_found_by_id_until_overwritten() {
        let stamps = SendStamps::new(2);
        stamps.put(1, StreamKind::Depth, 77, 123);
        assert_eq!(stamps.get(1, StreamKind::Depth, 77), Some(123));
        assert_eq!(stamps.get(1, StreamKind::Trade, 77), None);
        assert_eq!(stamps.get(0, StreamKind::Depth, 77), None);
        stamps.put(1, StreamKind::Depth, 77 + STAMP_SLOTS as u64, 456);
        assert_eq!(stamps.get(1, StreamKind::Depth, 77), None);
        assert_eq!(stamps.get(5, StreamKind::Depth, 77), None);
    }
}
