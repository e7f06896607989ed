//! The live feed: venues' connections on one tickwire-net driver (one
//! thread), their messages through the venue adapters, the events out to
//! the sinks, every message's stamps into the stage histograms.
//!
//! One [`Feed`] runs on one thread (pin it: [`crate::threads`]). It owns
//! its driver, adapters, books and recorders; nothing it does per message
//! allocates or blocks: events go to the shared-memory ring (a few stores)
//! and to the sink queue (`try_send`, dropped and counted when full).
//! Binance books ask for their REST snapshot with a `Resync` event: the
//! feed fetches it on the same driver, so the other connections keep
//! flowing while it arrives.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tickwire_net::{
    CloseCode, Config as NetConfig, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload,
    Reconnect, Role, Stamps, TlsConfig,
};
use tickwire_tsc::{Calibration, Clock, Metrics, Recorder};
use tickwire_venues::plan::{self, Channels, ConnectionPlan, PlanError};
use tickwire_venues::{
    Event, InstrumentId, InstrumentSpec, Kind, VenueAdapter, binance, bybit, coinbase, deribit,
    kraken, okx,
};

use crate::recording::{self, Record};
use crate::replay::Venue;
use crate::shm;
use crate::sim::{SendStamps, StreamKind};
use crate::sink::{self, Publisher};

/// A venue adapter, with Binance apart: only it takes REST snapshots.
pub(crate) enum Adapter {
    Binance(Box<binance::Adapter>),
    Other(Box<dyn VenueAdapter>),
}

impl Adapter {
    pub(crate) fn new(venue: Venue, instruments: &[InstrumentSpec]) -> Adapter {
        use binance::Market;
        match venue {
            Venue::BinanceSpot => {
                Adapter::Binance(Box::new(binance::Adapter::new(Market::Spot, instruments)))
            }
            Venue::BinanceUsdM => {
                Adapter::Binance(Box::new(binance::Adapter::new(Market::UsdM, instruments)))
            }
            Venue::BinanceCoinM => {
                Adapter::Binance(Box::new(binance::Adapter::new(Market::CoinM, instruments)))
            }
            Venue::Okx => Adapter::Other(Box::new(okx::Adapter::new(instruments))),
            Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => {
                Adapter::Other(Box::new(bybit::Adapter::new(instruments)))
            }
            Venue::Kraken => Adapter::Other(Box::new(kraken::v2::Adapter::new(instruments))),
            Venue::Coinbase => Adapter::Other(Box::new(coinbase::Adapter::new(instruments))),
            Venue::Deribit => Adapter::Other(Box::new(deribit::Adapter::new(instruments))),
        }
    }

    pub(crate) fn adapter(&mut self) -> &mut dyn VenueAdapter {
        match self {
            Adapter::Binance(a) => a.as_mut(),
            Adapter::Other(a) => a.as_mut(),
        }
    }

    fn adapter_ref(&self) -> &dyn VenueAdapter {
        match self {
            Adapter::Binance(a) => a.as_ref(),
            Adapter::Other(a) => a.as_ref(),
        }
    }
}

/// The connections a venue's instruments need.
pub fn plans(
    venue: Venue,
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    venue.plans(instruments, channels)
}

/// One venue of a feed.
#[derive(Clone, Debug)]
pub struct VenueSetup {
    /// Its name in the sinks and metrics (`binance-spot`, or your own).
    pub name: String,
    /// The venue.
    pub venue: Venue,
    /// Instruments, with their scales and book depths.
    pub instruments: Vec<InstrumentSpec>,
    /// What to receive.
    pub channels: Channels,
    /// Connect here instead of the venue's own host (`wss://host:port`),
    /// e.g. a simulator. The plan's paths are kept.
    pub endpoint: Option<String>,
    /// Fetch REST snapshots here instead (`https://host:port`).
    pub rest: Option<String>,
}

/// Counters a status line or a test reads while the feed runs.
#[derive(Debug, Default)]
pub struct FeedStats {
    /// Messages received.
    pub messages: AtomicU64,
    /// Events emitted.
    pub events: AtomicU64,
    /// Messages no adapter could decode (counted; the connection stays).
    pub decode_errors: AtomicU64,
    /// Books valid right now.
    pub books_valid: AtomicU64,
    /// Books that gapped (each then resyncs); not those ended by the
    /// feed's own shutdown.
    pub gaps: AtomicU64,
    /// Connections that dropped and were reconnected.
    pub reconnects: AtomicU64,
    /// REST snapshots received.
    pub snapshots: AtomicU64,
    /// REST snapshot fetches that failed (refused, reset, timed out, a bad
    /// response); each is retried with backoff.
    pub fetch_failures: AtomicU64,
    /// Messages whose send stamp (simulator side channel) was found.
    pub wire_stamped: AtomicU64,
    /// Valid messages of a channel or instrument the adapter does not
    /// normalise (counted, not logged).
    pub ignored: AtomicU64,
    /// Lines logged about undecodable messages (one per venue and kind of
    /// error; the rest are only counted in `decode_errors`).
    pub logged: AtomicU64,
    /// Stream connections lost, by why: the peer closed (with or without a
    /// close frame), TLS failed (a bad record, an alert), the WebSocket
    /// protocol was broken, a deadline passed (pong, stale data, connect,
    /// handshake), a socket error (reset, refused), anything else.
    pub lost: LostBy,
}

/// Stream connections lost, by why (see [`FeedStats::lost`]).
#[derive(Debug, Default)]
pub struct LostBy {
    /// The peer closed: a close frame, or the end of the stream without one.
    pub closed: AtomicU64,
    /// TLS failed.
    pub tls: AtomicU64,
    /// The WebSocket protocol or handshake was broken.
    pub protocol: AtomicU64,
    /// A deadline passed (pong, stale data, connect, handshake).
    pub timeout: AtomicU64,
    /// A socket error (reset, refused, name resolution).
    pub socket: AtomicU64,
    /// Anything else.
    pub other: AtomicU64,
}

impl LostBy {
    fn count(&self, reason: &Disconnect) {
        let c = match reason {
            Disconnect::Remote { .. } | Disconnect::Eof => &self.closed,
            Disconnect::Tls(_) => &self.tls,
            Disconnect::Protocol(_) | Disconnect::Handshake(_) => &self.protocol,
            Disconnect::Timeout(_) => &self.timeout,
            Disconnect::Io(_) | Disconnect::Resolve(_) => &self.socket,
            _ => &self.other,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

impl FeedStats {
    fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// A counter's value.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// Where events go.
#[derive(Default)]
pub struct Sinks {
    /// The queue of the JSON Lines (or any other) sink thread.
    pub queue: Option<Publisher>,
    /// The shared-memory ring.
    pub ring: Option<shm::Writer>,
    /// A raw recording of every frame.
    pub recording: Option<recording::Writer>,
}

impl fmt::Debug for Sinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sinks")
            .field("queue", &self.queue.is_some())
            .field("ring", &self.ring.is_some())
            .field("recording", &self.recording.is_some())
            .finish()
    }
}

/// Undecodable messages are counted, and logged once per venue and kind of
/// error (a venue that changed a field would otherwise flood the log, and
/// the log's writes would slow the feed down further).
struct BadInput {
    /// (venue, kind) pairs logged: preallocated, and at most `KINDS` long.
    seen: Vec<(usize, &'static str, &'static str)>,
    stats: Arc<FeedStats>,
}

impl BadInput {
    const KINDS: usize = 64;

    fn note(
        &mut self,
        venue_name: &str,
        venue: usize,
        e: tickwire_venues::DecodeError,
        len: usize,
    ) {
        use tickwire_venues::DecodeError as E;
        let kind = match e {
            E::Json(_) => ("json", ""),
            E::Utf8 => ("utf8", ""),
            E::Missing(k) => ("missing", k),
            E::Type(k) => ("type", k),
            E::Decimal(d) => ("decimal", d.field),
            _ => ("other", ""),
        };
        let key = (venue, kind.0, kind.1);
        if self.seen.contains(&key) || self.seen.len() >= Self::KINDS {
            return;
        }
        self.seen.push(key);
        FeedStats::add(&self.stats.logged, 1);
        eprintln!(
            "tickwire-feed: venue {venue_name}: an undecodable message ({len} bytes): {e}; \
             more of this kind are counted, not logged"
        );
    }
}

/// A connection's role in the feed.
#[derive(Clone, Copy)]
enum Link {
    /// A market-data stream: venue, plan.
    Stream(usize, usize),
    /// A REST snapshot fetch: venue, instrument.
    Fetch(usize, InstrumentId),
}

struct VenueState {
    setup: VenueSetup,
    adapter: Adapter,
    plans: Vec<ConnectionPlan>,
    recorder: Recorder,
    /// The first global instrument id of this venue.
    base: u32,
    /// The simulator's instrument index of each instrument, by symbol.
    sim_index: Vec<Option<usize>>,
}

/// The handler: every venue's state, the sinks and the counters.
struct Core {
    venues: Vec<VenueState>,
    links: HashMap<ConnId, Link>,
    sinks: Sinks,
    stats: Arc<FeedStats>,
    calibration: Calibration,
    clock: Clock,
    send_stamps: Option<Arc<SendStamps>>,
    /// Snapshots to fetch: venue, instrument.
    want_snapshot: Vec<(usize, InstrumentId)>,
    /// Books valid now, by instrument id less `first`.
    valid: Vec<bool>,
    /// The first instrument id of this feed.
    first: u32,
    stopping: bool,
    /// A message's copy for the recording.
    scratch: Vec<u8>,
    /// The kinds of undecodable message already logged.
    bad_input: BadInput,
    /// Records the recording could not write.
    record_errors: u64,
    /// Each stream's URL, and whether it was closed since its last
    /// `Opened` record: a reconnect records `Opened` again, so a recording
    /// read on its own says what every connection was.
    stream_urls: HashMap<ConnId, (String, bool)>,
}

fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn conn_number(id: ConnId) -> u32 {
    id.index() as u32
}

impl Core {
    fn record(&mut self, kind: recording::Kind, id: ConnId, tsc: u64, payload: &[u8]) {
        if let Some(w) = self.sinks.recording.as_mut() {
            let r = Record {
                kind,
                conn: conn_number(id),
                tsc,
                wall_ns: wall_ns(),
                binary: false,
                payload,
            };
            if w.write(&r).is_err() {
                self.record_errors += 1;
            }
        }
    }
}

/// Hands one adapter's events on: global ids, book validity, counters,
/// the ring, the queue. Borrows the parts of [`Core`] the adapter does not.
struct Emitter<'a> {
    sinks: &'a mut Sinks,
    stats: &'a FeedStats,
    valid: &'a mut [bool],
    want_snapshot: &'a mut Vec<(usize, InstrumentId)>,
    /// The venue (index) the events come from.
    venue: usize,
    /// The venue's first instrument id.
    base: u32,
    /// The feed's first instrument id.
    first: u32,
    /// The feed is shutting down: its books end (`Disconnected`, `Gap`
    /// still go out), but that is not a gap to count.
    stopping: bool,
}

impl Emitter<'_> {
    fn emit(&mut self, mut e: Event) {
        let stats = self.stats;
        let local = e.instrument;
        e.instrument = InstrumentId(self.base + local.0);
        let slot = self.valid.get_mut((e.instrument.0 - self.first) as usize);
        match e.kind {
            Kind::BookValid { .. } => {
                if let Some(v) = slot
                    && !*v
                {
                    *v = true;
                    FeedStats::add(&stats.books_valid, 1);
                }
            }
            Kind::Gap { .. } | Kind::Disconnected => {
                if let Some(v) = slot
                    && *v
                {
                    *v = false;
                    stats.books_valid.fetch_sub(1, Ordering::Relaxed);
                }
                if matches!(e.kind, Kind::Gap { .. }) && !self.stopping {
                    FeedStats::add(&stats.gaps, 1);
                }
            }
            Kind::Resync => self.want_snapshot.push((self.venue, local)),
            _ => {}
        }
        FeedStats::add(&stats.events, 1);
        if let Some(ring) = self.sinks.ring.as_mut() {
            ring.publish(&e);
        }
        if let Some(q) = &self.sinks.queue {
            q.publish(e);
        }
    }
}

impl Core {
    /// Venue `v`'s adapter, and an emitter for its events.
    fn split(&mut self, v: usize) -> (&mut Adapter, Emitter<'_>) {
        let Core {
            venues,
            sinks,
            stats,
            valid,
            want_snapshot,
            first,
            stopping,
            ..
        } = self;
        let state = &mut venues[v];
        let emitter = Emitter {
            sinks,
            stats,
            valid,
            want_snapshot,
            venue: v,
            base: state.base,
            first: *first,
            stopping: *stopping,
        };
        (&mut state.adapter, emitter)
    }
}

/// The simulator's key of a message's first event.
fn stamp_key(e: &Event) -> Option<(StreamKind, u64)> {
    match e.kind {
        Kind::Trade { trade_id, .. } => Some((StreamKind::Trade, trade_id)),
        Kind::Quote { update_id, .. } => Some((StreamKind::BookTicker, update_id)),
        Kind::BookDelta { update_id, .. } => Some((StreamKind::Depth, update_id)),
        _ => None,
    }
}

impl Handler for Core {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        let Some(&Link::Stream(v, p)) = self.links.get(&conn.id()) else {
            return;
        };
        let tsc = self.clock.now();
        // A reconnect (not on the receive path): `Opened` again.
        if let Some((url, closed)) = self.stream_urls.get_mut(&conn.id())
            && std::mem::take(closed)
        {
            let url = url.clone();
            self.record(recording::Kind::Opened, conn.id(), tsc, url.as_bytes());
        }
        for n in 0..self.venues[v].plans[p].subscribe.len() {
            let text = self.venues[v].plans[p].subscribe[n].clone();
            // The outbox holds 64 KiB of subscriptions: a plan never
            // comes near it.
            let _ = conn.send_text(&text);
            self.record(recording::Kind::Sent, conn.id(), tsc, text.as_bytes());
        }
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, mut stamps: Stamps) {
        let Some(&Link::Stream(v, _)) = self.links.get(&conn.id()) else {
            return;
        };
        FeedStats::add(&self.stats.messages, 1);
        if self.sinks.recording.is_some() {
            // Copied into a buffer kept across messages: no allocation
            // once it has grown to the largest message.
            let mut bytes = std::mem::take(&mut self.scratch);
            bytes.clear();
            bytes.extend_from_slice(payload.as_bytes());
            self.record(
                recording::Kind::Received,
                conn.id(),
                stamps.read_end,
                &bytes,
            );
            self.scratch = bytes;
        }
        let mut first: Option<Event> = None;
        let (buf, len) = payload.into_padded();
        let (adapter, mut out) = self.split(v);
        let result = adapter
            .adapter()
            .on_message(buf, len, stamps.read_end, &mut |e| {
                if first.is_none() {
                    first = Some(e);
                }
                out.emit(e);
            });
        let Core {
            venues,
            stats,
            send_stamps,
            calibration,
            clock,
            bad_input,
            ..
        } = self;
        let state = &mut venues[v];
        let sim_index = &state.sim_index;
        stamps.parsed = clock.now();
        match result {
            Ok(tickwire_venues::Outcome::Answer(text)) => {
                let _ = conn.send_text(text);
            }
            Ok(tickwire_venues::Outcome::Ignored) => FeedStats::add(&stats.ignored, 1),
            Ok(_) => {}
            Err(e) => {
                FeedStats::add(&stats.decode_errors, 1);
                bad_input.note(&state.setup.name, v, e, len);
            }
        }
        if let (Some(board), Some(e)) = (send_stamps.as_ref(), first)
            && let Some((kind, id)) = stamp_key(&e)
            // `first` still has the adapter's own (local) instrument id.
            && let Some(Some(n)) = sim_index.get(e.instrument.0 as usize)
            && let Some(sent) = board.get(*n, kind, id)
        {
            stamps.exchange_unix_ns = calibration.to_unix_ns(sent);
            FeedStats::add(&stats.wire_stamped, 1);
        } else if let Some(e) = first
            && e.exchange_ns != 0
        {
            stamps.exchange_unix_ns = e.exchange_ns;
        }
        stamps.handled = clock.now();
        state.recorder.record(&stamps);
    }

    fn on_response(&mut self, id: ConnId, status: u16, body: &mut [u8], len: usize) {
        let Some(&Link::Fetch(v, instrument)) = self.links.get(&id) else {
            return;
        };
        let tsc = self.clock.now();
        if self.sinks.recording.is_some() {
            let bytes = body[..len].to_vec();
            self.record(recording::Kind::Response, id, tsc, &bytes);
        }
        if status != 200 {
            // Asked again after the backoff the fetch's close brings.
            FeedStats::add(&self.stats.decode_errors, 1);
            self.want_snapshot.push((v, instrument));
            return;
        }
        FeedStats::add(&self.stats.snapshots, 1);
        let (adapter, mut out) = self.split(v);
        if let Adapter::Binance(a) = adapter {
            let r = a.on_snapshot(instrument, body, len, tsc, &mut |e| out.emit(e));
            if r.is_err() {
                FeedStats::add(&self.stats.decode_errors, 1);
            }
        }
    }

    fn on_close(&mut self, id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        let tsc = self.clock.now();
        let link = self.links.get(&id).copied();
        if self.sinks.recording.is_some() {
            let text = reason.to_string();
            self.record(recording::Kind::Closed, id, tsc, text.as_bytes());
            if let Some((_, closed)) = self.stream_urls.get_mut(&id) {
                *closed = true;
            }
        }
        match link {
            Some(Link::Stream(v, _)) => {
                self.stats.lost.count(reason);
                let (adapter, mut out) = self.split(v);
                adapter.adapter().on_disconnect(tsc, &mut |e| out.emit(e));
                if self.stopping {
                    Reconnect::No
                } else {
                    FeedStats::add(&self.stats.reconnects, 1);
                    Reconnect::Yes
                }
            }
            Some(Link::Fetch(v, instrument)) => {
                if matches!(reason, Disconnect::Fetched) || self.stopping {
                    self.links.remove(&id);
                    Reconnect::No
                } else {
                    // Retried by the driver, with backoff; the book keeps
                    // buffering diffs meanwhile.
                    let _ = (v, instrument);
                    FeedStats::add(&self.stats.fetch_failures, 1);
                    Reconnect::Yes
                }
            }
            None => Reconnect::No,
        }
    }
}

/// Why a feed could not start.
#[derive(Debug)]
pub enum FeedError {
    /// A venue's instruments cannot be planned.
    Plan(String, PlanError),
    /// An endpoint override is not a usable URL.
    Url(String, String),
    /// The driver could not be set up.
    Setup(String),
    /// A socket or poll call failed.
    Io(std::io::Error),
}

impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeedError::Plan(v, e) => write!(f, "venue {v}: {e}"),
            FeedError::Url(u, e) => write!(f, "{u}: {e}"),
            FeedError::Setup(e) => write!(f, "cannot start: {e}"),
            FeedError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FeedError {}

/// An application ping a connection owes its venue.
struct PingTimer {
    id: ConnId,
    text: String,
    every: Duration,
    next: Instant,
}

/// A feed: venues on one driver. Build it with [`Feed::new`], run it with
/// [`Feed::run`] on the thread it should live on.
pub struct Feed {
    driver: Driver<Core>,
    pings: Vec<PingTimer>,
    /// Fetch endpoint (and its URL, as recorded) per venue and
    /// instrument, prepared at start-up.
    fetches: Vec<Vec<Option<(Endpoint, String)>>>,
    /// Instrument names by global id, for sinks.
    names: Vec<sink::Instrument>,
}

impl fmt::Debug for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed")
            .field("instruments", &self.names.len())
            .finish_non_exhaustive()
    }
}

/// A URL override's `(scheme, host:port)`.
fn split_base(url: &str) -> Result<(&str, &str), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| "expected scheme://host:port".to_string())?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err("no host".into());
    }
    Ok((scheme, authority))
}

impl Feed {
    /// Plans every venue's connections, allocates every adapter, book,
    /// recorder and connection slot, and starts connecting.
    pub fn new(
        venues: Vec<VenueSetup>,
        mut net: NetConfig,
        tls: &TlsConfig,
        metrics: &Metrics,
        sinks: Sinks,
        send_stamps: Option<(Arc<SendStamps>, Vec<String>)>,
        first_instrument: u32,
    ) -> Result<Feed, FeedError> {
        let mut states = Vec::new();
        let mut names = Vec::new();
        let mut fetches = Vec::new();
        let mut streams = 0;
        for setup in venues {
            let plans = plans(setup.venue, &setup.instruments, setup.channels)
                .map_err(|e| FeedError::Plan(setup.name.clone(), e))?;
            streams += plans.len();
            let sim_index = setup
                .instruments
                .iter()
                .map(|i| {
                    send_stamps
                        .as_ref()
                        .and_then(|(_, syms)| syms.iter().position(|s| *s == i.symbol))
                })
                .collect();
            let mut fetch = Vec::new();
            for i in &setup.instruments {
                let market = match setup.venue {
                    Venue::BinanceSpot => Some(binance::Market::Spot),
                    Venue::BinanceUsdM => Some(binance::Market::UsdM),
                    Venue::BinanceCoinM => Some(binance::Market::CoinM),
                    _ => None,
                };
                fetch.push(match market {
                    Some(m) if setup.channels.books && i.depth > 0 => {
                        let (host, path) = plan::snapshot_path(m, &i.symbol, i.depth);
                        let url = match &setup.rest {
                            Some(base) => {
                                let (scheme, authority) = split_base(base)
                                    .map_err(|e| FeedError::Url(base.clone(), e))?;
                                format!("{scheme}://{authority}{path}")
                            }
                            None => format!("https://{host}{path}"),
                        };
                        Some((
                            Endpoint::parse(&url)
                                .map_err(|e| FeedError::Url(url.clone(), e.to_string()))?,
                            url,
                        ))
                    }
                    _ => None,
                });
            }
            fetches.push(fetch);
            for i in &setup.instruments {
                names.push(sink::Instrument {
                    venue: setup.name.clone(),
                    symbol: i.symbol.clone(),
                    price_scale: i.price_scale,
                    size_scale: i.size_scale,
                });
            }
            states.push(VenueState {
                recorder: metrics.recorder(&setup.name),
                adapter: Adapter::new(setup.venue, &setup.instruments),
                base: first_instrument + (names.len() - setup.instruments.len()) as u32,
                sim_index,
                plans,
                setup,
            });
        }
        // Room for every stream and, at once, every book's snapshot.
        net.max_connections = net.max_connections.max(streams + names.len() + 1);
        let stats = Arc::new(FeedStats::default());
        let core = Core {
            valid: vec![false; names.len()],
            first: first_instrument,
            venues: states,
            links: HashMap::new(),
            sinks,
            stats: Arc::clone(&stats),
            calibration: tickwire_tsc::calibration(),
            clock: Clock::new(),
            send_stamps: send_stamps.map(|(s, _)| s),
            want_snapshot: Vec::with_capacity(names.len() * 2),
            stopping: false,
            scratch: Vec::with_capacity(64 * 1024),
            bad_input: BadInput {
                seen: Vec::with_capacity(BadInput::KINDS),
                stats: Arc::clone(&stats),
            },
            record_errors: 0,
            stream_urls: HashMap::new(),
        };
        let mut driver =
            Driver::new(net, tls, core).map_err(|e| FeedError::Setup(e.to_string()))?;
        let mut pings = Vec::new();
        let now = Instant::now();
        for v in 0..driver.handler().venues.len() {
            for p in 0..driver.handler().venues[v].plans.len() {
                let (url, ping) = {
                    let state = &driver.handler().venues[v];
                    let plan = &state.plans[p];
                    let url = match &state.setup.endpoint {
                        Some(base) => {
                            let (scheme, authority) =
                                split_base(base).map_err(|e| FeedError::Url(base.clone(), e))?;
                            format!("{scheme}://{authority}{}", plan.path)
                        }
                        None => format!("wss://{}:{}{}", plan.host, plan.port, plan.path),
                    };
                    (url, plan.ping.clone())
                };
                let endpoint = Endpoint::parse(&url)
                    .map_err(|e| FeedError::Url(url.clone(), e.to_string()))?;
                let id = driver
                    .connect(endpoint)
                    .map_err(|e| FeedError::Setup(e.to_string()))?;
                let core = driver.handler_mut();
                core.links.insert(id, Link::Stream(v, p));
                let tsc = core.clock.now();
                core.record(recording::Kind::Opened, id, tsc, url.as_bytes());
                core.stream_urls.insert(id, (url, false));
                if let Some(ping) = ping {
                    pings.push(PingTimer {
                        id,
                        text: ping.text,
                        every: ping.every,
                        next: now + ping.every,
                    });
                }
            }
        }
        Ok(Feed {
            driver,
            pings,
            fetches,
            names,
        })
    }

    /// The counters, shared.
    pub fn stats(&self) -> Arc<FeedStats> {
        Arc::clone(&self.driver.handler().stats)
    }

    /// Every instrument of this feed; events carry ids from the
    /// `first_instrument` given to [`Feed::new`] on, in this order.
    pub fn instruments(&self) -> &[sink::Instrument] {
        &self.names
    }

    /// A venue's (by position) instrument's book, while valid.
    pub fn book(
        &self,
        venue: usize,
        instrument: InstrumentId,
    ) -> Option<&tickwire_venues::book::Book> {
        self.driver
            .handler()
            .venues
            .get(venue)?
            .adapter
            .adapter_ref()
            .book(instrument)
    }

    /// One poll of the driver, then the chores: snapshot fetches asked for
    /// and application pings due.
    pub fn poll(&mut self) -> std::io::Result<()> {
        self.driver.poll_timeout(Duration::from_millis(10))?;
        self.chores();
        Ok(())
    }

    fn chores(&mut self) {
        while let Some((v, instrument)) = self.driver.handler_mut().want_snapshot.pop() {
            let Some(Some((endpoint, url))) = self
                .fetches
                .get(v)
                .and_then(|f| f.get(instrument.0 as usize))
            else {
                continue;
            };
            match self.driver.fetch(endpoint.clone()) {
                Ok(id) => {
                    let tsc = self.driver.handler().clock.now();
                    let core = self.driver.handler_mut();
                    core.links.insert(id, Link::Fetch(v, instrument));
                    core.record(recording::Kind::Opened, id, tsc, url.as_bytes());
                }
                Err(_) => {
                    // No free slot: try again after the next poll.
                    self.driver
                        .handler_mut()
                        .want_snapshot
                        .push((v, instrument));
                    break;
                }
            }
        }
        if !self.pings.is_empty() {
            let now = Instant::now();
            for p in &mut self.pings {
                if now >= p.next {
                    p.next = now + p.every;
                    let _ = self.driver.send_text(p.id, &p.text);
                }
            }
        }
    }

    /// Runs until `stop` is set, then closes every connection (1000) and
    /// waits up to `linger` for the closes to complete. Returns the sinks
    /// (flush or finish them).
    pub fn run(mut self, stop: &AtomicBool, linger: Duration) -> std::io::Result<Sinks> {
        let spin = self.driver.config().poll_mode.spins();
        while !stop.load(Ordering::Relaxed) {
            if spin {
                self.driver.poll_once()?;
            } else {
                self.driver.poll_timeout(Duration::from_millis(10))?;
            }
            self.chores();
        }
        self.shutdown(linger)
    }

    /// Closes every connection and hands back the sinks.
    pub fn shutdown(mut self, linger: Duration) -> std::io::Result<Sinks> {
        self.driver.handler_mut().stopping = true;
        let ids: Vec<ConnId> = self.driver.handler().links.keys().copied().collect();
        for id in &ids {
            let _ = self.driver.close(*id, CloseCode::NORMAL, "");
        }
        // Until every close handshake has ended (and been recorded), or
        // `linger` is up.
        let deadline = Instant::now() + linger;
        while Instant::now() < deadline && ids.iter().any(|id| self.driver.is_live(*id)) {
            self.driver.poll_timeout(Duration::from_millis(5))?;
        }
        let core = self.driver.handler_mut();
        Ok(std::mem::take(&mut core.sinks))
    }
}
