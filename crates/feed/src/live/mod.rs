//! The live feed: venues' connections on one tickwire-net driver (one
//! thread), their messages through the venue adapters, the events out to
//! the sinks, every message's stamps into the stage histograms.
//!
//! One [`Feed`] runs on one thread (pin it: [`crate::threads`]). It owns
//! its driver, adapters, books and recorders; nothing it does per message
//! allocates or blocks: events go to the shared-memory ring (a few stores)
//! and to the sink queue (`publish`, dropped and counted when full).
//! Binance books ask for their REST snapshot with a `Resync` event: the
//! feed fetches it on the same driver, so the other connections keep
//! flowing while it arrives.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use tickwire_net::{Config as NetConfig, Driver, Endpoint, TlsConfig};
use tickwire_tsc::{Clock, Metrics};
use tickwire_venues::plan::{self, Channels};
use tickwire_venues::{InstrumentId, InstrumentSpec, Venue};

use crate::id::{FeedId, VenueId};
use crate::recording;
use crate::shm;
use crate::sink::{self, Publisher};

mod adapter;
#[cfg(feature = "aeron")]
mod aeron;
pub(crate) mod api_key;
mod budget;
mod connectivity;
mod core;
mod emitter;
mod ending;
mod error;
pub(crate) mod injected;
mod lines;
mod links;
mod log;
mod ops;
mod recovery;
mod requests;
mod setup;
mod stats;
mod streams;
mod update;
mod wire;

pub use self::api_key::ApiKey;
use self::budget::{Admit, RestBudget};
pub use self::connectivity::{Connectivity, NeverConnected, VenueStatus};
pub(crate) use self::core::Adapter;
use self::core::{Core, Link, VenueState};
pub use self::error::{BadUrl, FeedError, SetupError, UrlProblem};
use self::lines::PlanLines;
use self::links::Links;
pub use self::log::LOG_TARGET;
pub(crate) use self::log::tickwire_log;
use self::log::{BadInput, Failures};
use self::recovery::{Due, Recovery};
use self::setup::feed_net;
pub use self::setup::{Budget, plans, rest_limit_problem};
pub use self::stats::{FeedStats, LostBy, VenueStats};
use self::streams::{PingTimer, StreamTarget};
pub use self::update::{Fixed, NoHandler, OnEvent, OrderEvent, Update};
pub use self::wire::{WireStamps, WireStream};
/// The causes [`Connectivity::Unreachable`] carries, for a bot to match on
/// without depending on `tickwire-net` itself.
pub use tickwire_net::{Disconnect, TlsErrorKind};

/// One venue of a feed ([`VenueSetup::new`], then the fields to change).
#[derive(Clone, Debug)]
#[non_exhaustive]
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
    /// The REST request weight a minute the venue allows this address, if
    /// not its documented limit (a higher tier's, say); the feed spends at
    /// most half of it (see `budget`).
    pub rest_weight_limit: Option<u32>,
    /// How its connections are kept: a standby line, a lifetime.
    pub lines: LineSetup,
    /// Where its API key comes from, for a venue whose streams need one
    /// (`binance-spot-sbe`); `None`: [`ApiKey::DEFAULT_ENV`]. Refused on a
    /// venue whose streams take none.
    pub api_key: Option<ApiKey>,
}

/// How a venue's connections are kept: each connection plan has two line
/// slots. Before the venue's connection lifetime a replacement opens with
/// the same subscriptions, and the old line is closed once the new one
/// carries every book in step (make-before-break: no gap, no snapshot);
/// with `standby`, both lines stay open for good and the first copy of
/// each message wins. Duplicates are told by the venue's own sequence
/// ids (`tickwire_venues::sync::lines`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LineSetup {
    /// A warm standby line beside each connection, with the same
    /// subscriptions: the first copy of each message wins, and a fault on
    /// one line costs no gap and no snapshot.
    pub standby: bool,
    /// Connect the standby line here (`wss://host:port`) instead of where
    /// the main line goes.
    pub standby_endpoint: Option<String>,
    /// The venue ends each connection this long after it opened, if not
    /// what its plan says (Binance: 24 h); each is replaced before then,
    /// make-before-break.
    pub max_lifetime: Option<Duration>,
}

/// Where events go: none by default; `with_*` adds one.
#[derive(Default)]
#[non_exhaustive]
pub struct Sinks {
    /// The queue of the JSON Lines (or any other) sink thread.
    pub queue: Option<Publisher>,
    /// The shared-memory ring.
    pub ring: Option<shm::Writer>,
    /// A raw recording of every frame.
    pub recording: Option<recording::Writer>,
    /// Every event on an Aeron publication (feature `aeron`).
    #[cfg(feature = "aeron")]
    pub aeron: Option<crate::aeron::Publisher>,
}

impl VenueSetup {
    /// `venue` named `name` in the sinks and metrics, with `instruments`:
    /// trades, quotes and books, from the venue's own hosts, its lines
    /// kept as its plan says ([`LineSetup::default`]).
    pub fn new(name: &str, venue: Venue, instruments: Vec<InstrumentSpec>) -> VenueSetup {
        VenueSetup {
            name: name.to_owned(),
            venue,
            instruments,
            channels: Channels::default(),
            endpoint: None,
            rest: None,
            rest_weight_limit: None,
            lines: LineSetup::default(),
            api_key: None,
        }
    }
}

impl Sinks {
    /// These sinks and the queue of a sink thread (the JSON Lines one).
    pub fn with_queue(mut self, queue: Publisher) -> Sinks {
        self.queue = Some(queue);
        self
    }

    /// These sinks and the shared-memory ring.
    pub fn with_ring(mut self, ring: shm::Writer) -> Sinks {
        self.ring = Some(ring);
        self
    }

    /// These sinks and an Aeron publication of every event.
    #[cfg(feature = "aeron")]
    pub fn with_aeron(mut self, publisher: crate::aeron::Publisher) -> Sinks {
        self.aeron = Some(publisher);
        self
    }

    /// These sinks and a raw recording of every frame.
    pub fn with_recording(mut self, recording: recording::Writer) -> Sinks {
        self.recording = Some(recording);
        self
    }
}

impl fmt::Debug for Sinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sinks")
            .field("queue", &self.queue.is_some())
            .field("ring", &self.ring.is_some())
            .field("recording", &self.recording.is_some())
            .finish_non_exhaustive()
    }
}

/// A feed: venues on one driver. Build it with [`Feed::builder`], then call [`Feed::poll`] in a loop, or [`Feed::run`],
/// on the thread it should live on. `H` gets each message's events with
/// the books as the message left them ([`Update`]).
pub struct Feed<H: OnEvent = NoHandler> {
    driver: Driver<Core<H>>,
    /// Wound down (`close_all`: the kill switch, the closes): not again
    /// when dropped.
    ended: bool,
    pings: Vec<PingTimer>,
    /// Where each venue's plans connect, and how (by `VenueId::index`).
    targets: Vec<Vec<StreamTarget>>,
    /// When the plans' lines are looked at next (a replacement or standby
    /// line to open, one to retire); never if no plan has a lifetime or a
    /// standby line.
    next_lines: Option<Instant>,
    /// Fetch endpoint (its URL, as recorded, the largest response it may
    /// bring, and its request weight) per venue and instrument, prepared
    /// at start-up.
    fetches: Vec<Vec<Option<Fetch>>>,
    /// No snapshot can be fetched before this (every venue's REST budget
    /// said so): the queue is not looked at until then.
    fetch_wait: Option<Instant>,
    /// Instrument names by global id, for sinks.
    names: Vec<sink::Instrument>,
    /// Recoveries due, taken from the handler each poll (allocated once,
    /// one entry for each book and connection).
    due: Vec<(usize, Due)>,
    /// What lives as long as the feed: the simulators it was built
    /// against (`FeedBuilder::simulated`).
    pub(crate) keep: Vec<Box<dyn std::any::Any + Send>>,
    /// Past this with no venue ever connected, `poll` fails
    /// (`FeedBuilder::connect_deadline`): when it was set, and how long;
    /// cleared once a venue connects.
    pub(crate) connect_deadline: Option<(Instant, Duration)>,
}

impl<H: OnEvent> fmt::Debug for Feed<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed")
            .field("instruments", &self.names.len())
            .finish_non_exhaustive()
    }
}

/// A book's REST snapshot request, prepared at start-up.
struct Fetch {
    endpoint: Endpoint,
    /// Its URL, as recorded.
    url: String,
    /// The largest response it may bring.
    bytes: usize,
    /// What it weighs against the venue's REST limit.
    weight: u32,
}

/// A URL override's `(scheme, host:port)`.
fn split_base(url: &str) -> Result<(&str, &str), FeedError> {
    let bad = |problem| {
        FeedError::Url(BadUrl {
            url: url.to_owned(),
            problem,
        })
    };
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad(UrlProblem::NoScheme))?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(bad(UrlProblem::NoHost));
    }
    Ok((scheme, authority))
}

/// The engine's refusal of `url`.
fn bad_url(url: &str, e: tickwire_net::UrlError) -> FeedError {
    FeedError::Url(BadUrl {
        url: url.to_owned(),
        problem: UrlProblem::Endpoint(e),
    })
}

impl<H: OnEvent> Feed<H> {
    /// Plans every venue's connections, allocates every adapter, book,
    /// recorder and connection slot, and starts connecting. Its events go
    /// to `sinks`, and `user` gets each message's, on the feed's thread,
    /// after the books took them. The builder's way in
    /// ([`FeedBuilder::build_with`](crate::FeedBuilder::build_with), the
    /// only public one).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn with_handler(
        venues: Vec<VenueSetup>,
        net: NetConfig,
        tls: &TlsConfig,
        metrics: &Metrics,
        sinks: Sinks,
        send_stamps: Option<(Arc<dyn WireStamps>, Vec<String>)>,
        first_instrument: u32,
        trades: Vec<(String, crate::trading::TradeSetup)>,
        user: H,
    ) -> Result<Feed<H>, FeedError> {
        let mut states = Vec::new();
        let mut names = Vec::new();
        let mut fetches = Vec::new();
        let mut streams = 0;
        let all = venues.clone();
        for setup in venues {
            let plans = plans(setup.venue, &setup.instruments, setup.channels)
                .map_err(|e| FeedError::Plan(setup.name.clone(), e))?;
            if let Some(problem) = rest_limit_problem(
                setup.venue,
                &setup.instruments,
                setup.channels,
                setup.rest_weight_limit,
            ) {
                return Err(FeedError::Setup(SetupError::RestWeightLimit {
                    venue: setup.name.clone(),
                    problem,
                }));
            }
            streams += plans.len();
            let mut fetch = Vec::new();
            for i in &setup.instruments {
                fetch.push(match setup.venue.binance_market() {
                    Some(m) if setup.channels.books && i.depth > 0 => {
                        let (host, path) = plan::snapshot_path(m, &i.symbol, i.depth);
                        let url = match &setup.rest {
                            Some(base) => {
                                let (scheme, authority) = split_base(base)?;
                                format!("{scheme}://{authority}{path}")
                            }
                            None => format!("https://{host}{path}"),
                        };
                        Some(Fetch {
                            endpoint: Endpoint::parse(&url).map_err(|e| bad_url(&url, e))?,
                            url,
                            bytes: plan::binance::snapshot_bytes(m, i.depth),
                            weight: plan::binance::snapshot_weight(
                                m,
                                plan::binance::snapshot_limit(m, i.depth),
                            ),
                        })
                    }
                    _ => None,
                });
            }
            // Where the venue's snapshots come from, for messages.
            let rest_url = fetch
                .iter()
                .flatten()
                .next()
                .map(|f| f.url.split('?').next().unwrap_or(&f.url).to_owned());
            fetches.push(fetch);
            for i in &setup.instruments {
                names.push(sink::Instrument {
                    venue: setup.name.clone(),
                    symbol: i.symbol.clone(),
                    price_scale: i.price_scale,
                    size_scale: i.size_scale,
                });
            }
            let recorder = metrics.recorder(&setup.name);
            let mut state = VenueState::planned(setup, plans, recorder);
            state.rest_url = rest_url.unwrap_or_default();
            // Every id from `first_instrument` on must be a `u32`.
            if u64::from(first_instrument) + names.len() as u64 > u64::from(u32::MAX) + 1 {
                return Err(FeedError::Setup(SetupError::IdsExhausted {
                    first: first_instrument,
                    count: names.len(),
                }));
            }
            state.base = first_instrument + (names.len() - state.setup.instruments.len()) as u32;
            state.sim_index = state
                .setup
                .instruments
                .iter()
                .map(|i| {
                    // By symbol, or by `venue/symbol` (several venues'
                    // senders on one board, whose symbols repeat).
                    let name = &state.setup.name;
                    send_stamps.as_ref().and_then(|(_, syms)| {
                        syms.iter().position(|s| {
                            *s == i.symbol
                                || s.strip_prefix(name.as_str())
                                    .and_then(|s| s.strip_prefix('/'))
                                    == Some(i.symbol.as_str())
                        })
                    })
                })
                .collect();
            states.push(state);
        }
        let mut net = feed_net(net, &all, streams);
        // One connection more for each trading venue.
        net.max_connections += trades.len();
        let trading = traders(&states, trades)?;
        // Every slot the driver will have (`Driver::new`'s count).
        let slots = net.max_connections + net.sized_slots.iter().map(|s| s.count).sum::<usize>();
        let venue_stats: Box<[VenueStats]> = states
            .iter()
            .map(|s| VenueStats {
                name: s.setup.name.clone(),
                books: s
                    .setup
                    .instruments
                    .iter()
                    .filter(|i| s.setup.channels.books && i.depth > 0)
                    .count() as u64,
                // Room for the longest cause (a `SnapshotStale` of two
                // 20-digit ids): a gap's text never allocates.
                last_gap: std::sync::Mutex::new(String::with_capacity(128)),
                ..VenueStats::default()
            })
            .collect();
        let stats = Arc::new(FeedStats {
            venues: venue_stats,
            ..FeedStats::default()
        });
        let most = states
            .iter()
            .map(|s| s.setup.instruments.len())
            .max()
            .unwrap_or(0);
        // Every book and every connection can have one recovery due.
        let recoveries = names.len() + streams;
        let now = Instant::now();
        // The REST budgets, one a REST host (scheme, host and port of the
        // venue's snapshots), from the least limit its venues' plans say:
        // the venue counts weight by address, so binance-spot and
        // binance-spot-sbe, both fetching from api.binance.com, spend one
        // budget, never twice the half the feed allows itself.
        let mut rest_hosts: Vec<&str> = Vec::new();
        let mut limits: Vec<Option<u32>> = Vec::new();
        let mut rest_of = Vec::with_capacity(states.len());
        for s in &states {
            let limit = s.setup.venue.binance_market().map(|m| {
                s.setup
                    .rest_weight_limit
                    .unwrap_or(plan::binance::rest_weight_per_minute(m))
            });
            let host = s.rest_url.split_once("://").map_or("", |(scheme, rest)| {
                let authority = rest.split('/').next().unwrap_or_default();
                &s.rest_url[..scheme.len() + 3 + authority.len()]
            });
            let shared = (!host.is_empty())
                .then(|| rest_hosts.iter().position(|h| *h == host))
                .flatten();
            match shared {
                Some(k) => {
                    limits[k] = match (limits[k], limit) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    rest_of.push(k);
                }
                None => {
                    rest_of.push(limits.len());
                    rest_hosts.push(host);
                    limits.push(limit);
                }
            }
        }
        let rest = limits
            .iter()
            .map(|l| match l {
                Some(per_minute) => RestBudget::new(*per_minute, now),
                None => RestBudget::unlimited(now),
            })
            .collect();
        let core = Core {
            feed_tag: crate::id::next_feed_tag(),
            rest,
            rest_of,
            valid: vec![false; names.len()],
            first: first_instrument,
            recovery: Recovery::new(
                states
                    .iter()
                    .map(|s| (s.setup.instruments.len(), s.plans.len())),
            ),
            refused_now: Vec::with_capacity(most),
            venues: states,
            links: Links::new(slots),
            sinks,
            stats: Arc::clone(&stats),
            calibration: tickwire_tsc::calibration(),
            clock: Clock::new(),
            send_stamps: send_stamps.map(|(s, _)| s),
            // One entry per book at most (`VenueState::snapshot_wanted`).
            want_snapshot: Vec::with_capacity(names.len()),
            stopping: false,
            lines_soon: false,
            scratch: Vec::with_capacity(64 * 1024),
            bad_input: BadInput::new(Arc::clone(&stats)),
            failures: Failures::new(tls.describe()),
            record_errors: 0,
            stream_urls: HashMap::default(),
            user: Some(user),
            // The most events one message brings, in the venues' usual
            // messages; a larger one grows it once.
            batch: Vec::with_capacity(if H::EVENTS { 4096 } else { 0 }),
            in_handler: false,
            trading,
        };
        let driver = Driver::new(net, tls, core).map_err(SetupError::Driver)?;
        let mut targets = Vec::new();
        for state in &driver.handler().venues {
            let mut of_venue = Vec::new();
            for plan in &state.plans {
                of_venue.push(StreamTarget::new(&state.setup, plan)?);
            }
            targets.push(of_venue);
        }
        let lines_due = targets
            .iter()
            .flatten()
            .any(|t| t.standby.is_some() || t.lifetime.is_some());
        let mut feed = Feed {
            ended: false,
            driver,
            pings: Vec::new(),
            targets,
            next_lines: lines_due.then(Instant::now),
            fetches,
            fetch_wait: None,
            names,
            due: Vec::with_capacity(recoveries),
            keep: Vec::new(),
            connect_deadline: None,
        };
        feed.share_address_budgets();
        for v in 0..feed.targets.len() {
            for p in 0..feed.targets[v].len() {
                let main = feed.open_line(v, p, tickwire_venues::Line::Primary)?;
                let standby = match feed.targets[v][p].standby {
                    Some(_) => Some(feed.open_line(v, p, tickwire_venues::Line::Standby)?),
                    None => None,
                };
                let lifetime = feed.targets[v][p].lifetime;
                let lines = PlanLines::new(main, standby, lifetime);
                feed.driver.handler_mut().venues[v].lines.push(lines);
            }
        }
        feed.connect_traders()?;
        Ok(feed)
    }

    /// The counters, shared.
    pub fn stats(&self) -> Arc<FeedStats> {
        Arc::clone(&self.driver.handler().stats)
    }

    /// Every instrument of this feed, in the order of their feed-wide ids
    /// ([`FeedId`]: from 0, or from where the feed threads before this
    /// one's instruments end, for one of the binary's threads).
    pub fn instruments(&self) -> &[sink::Instrument] {
        &self.names
    }

    /// The handler given to the builder.
    pub fn handler(&self) -> &H {
        self.driver
            .handler()
            .user
            .as_ref()
            .expect("the handler is taken out only by `into_handler`, which ends the feed")
    }

    /// The handler given to the builder, to change between polls.
    pub fn handler_mut(&mut self) -> &mut H {
        self.driver
            .handler_mut()
            .user
            .as_mut()
            .expect("the handler is taken out only by `into_handler`, which ends the feed")
    }

    /// A book by its venue and its symbol, while valid.
    pub fn book_of(&self, venue: VenueId, symbol: &str) -> Option<&tickwire_venues::book::Book> {
        let state = self.venue_state(venue)?;
        let i = state
            .setup
            .instruments
            .iter()
            .position(|i| i.symbol == symbol)?;
        state.adapter.adapter_ref().book(InstrumentId(i as u32))
    }

    /// The feed-wide id of a venue's instrument (by its symbol), the one
    /// its events carry.
    pub fn instrument(&self, venue: VenueId, symbol: &str) -> Option<FeedId> {
        let state = self.venue_state(venue)?;
        let i = state
            .setup
            .instruments
            .iter()
            .position(|i| i.symbol == symbol)?;
        Some(FeedId(state.base + i as u32))
    }

    /// A book by its feed-wide instrument id (the one events carry, and
    /// [`instruments`](Self::instruments) lists), while valid.
    pub fn book(&self, id: FeedId) -> Option<&tickwire_venues::book::Book> {
        let state = self.driver.handler().venues.iter().find(|s| {
            id.0.checked_sub(s.base)
                .is_some_and(|i| (i as usize) < s.setup.instruments.len())
        })?;
        // The adapter's own index of the instrument.
        let local = InstrumentId(id.0 - state.base);
        state.adapter.adapter_ref().book(local)
    }

    /// A venue's own words on the last request it refused; empty before
    /// any (and for another feed's venue).
    pub fn rejection(&self, venue: VenueId) -> &str {
        self.venue_state(venue)
            .map_or("", |v| v.adapter.adapter_ref().rejection())
    }

    /// The venue `venue` names, if it is this feed's.
    fn venue_state(&self, venue: VenueId) -> Option<&VenueState> {
        let core = self.driver.handler();
        core.venues.get(venue.index_in(core.feed_tag)?)
    }

    /// One poll of the driver (waiting at most 10 ms, or not at all when
    /// the network configuration busy-polls), the handler called for each
    /// message, then the chores: snapshot fetches asked for,
    /// resubscriptions due and application pings due. A handler that
    /// panicked (and was caught) left a message half handled: every poll
    /// after it is an error; build a new feed. Past the
    /// [`connect_deadline`](crate::FeedBuilder::connect_deadline), if one
    /// was set, with no venue ever connected, every poll is an error of
    /// kind `NotConnected` whose inner error is a [`NeverConnected`]
    /// (which venues, and why).
    pub fn poll(&mut self) -> std::io::Result<()> {
        if self.driver.handler().in_handler {
            return Err(std::io::Error::other(
                "the feed's handler panicked in an earlier poll: its state is not whole; \
                 build a new feed",
            ));
        }
        let polled = if self.driver.config().poll_mode.spins() {
            self.driver.poll_once()
        } else {
            self.driver.poll_timeout(Duration::from_millis(10))
        };
        // Even after a failed poll: its messages were handled.
        self.driver.handler_mut().flush_recorders();
        if self.driver.handler().sinks.recording.is_some() {
            self.driver.handler_mut().flush_recording(Instant::now());
        }
        polled?;
        self.chores();
        if self.connect_deadline.is_some() {
            self.check_connected()?;
        }
        Ok(())
    }

    fn chores(&mut self) {
        // First what is due (a snapshot due now is fetched below, in this
        // same turn).
        if self.driver.handler().recovery.waiting() {
            self.recover(Instant::now());
        }
        let now = Instant::now();
        if std::mem::take(&mut self.driver.handler_mut().lines_soon) {
            self.next_lines = Some(now);
        }
        if !self.driver.handler().want_snapshot.is_empty()
            && self.fetch_wait.is_none_or(|at| now >= at)
        {
            self.fetch_snapshots(now);
        }
        if self.next_lines.is_some_and(|at| now >= at) {
            self.lines_due(now);
        }
        if self.driver.handler().trading.any() {
            self.trade_chores();
        }
        #[cfg(feature = "aeron")]
        self.aeron_books();
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

    /// Fetches the snapshots wanted, in the order asked, each as its
    /// venue's REST budget admits it; the others wait in the queue, and
    /// the queue is not looked at again before the first of them may go.
    fn fetch_snapshots(&mut self, now: Instant) {
        self.fetch_wait = None;
        let mut queue = std::mem::take(&mut self.driver.handler_mut().want_snapshot);
        let mut first_later: Option<Instant> = None;
        let mut slots_left = true;
        queue.retain(|&(v, instrument)| {
            let Some(Some(fetch)) = self
                .fetches
                .get(v)
                .and_then(|f| f.get(instrument.0 as usize))
            else {
                // No snapshot to fetch for it: not wanted any more.
                if let Some(w) = self.driver.handler_mut().venues[v]
                    .snapshot_wanted
                    .get_mut(instrument.0 as usize)
                {
                    *w = false;
                }
                return false;
            };
            if !slots_left {
                return true;
            }
            let core = self.driver.handler_mut();
            match core.rest[core.rest_of[v]].take(fetch.weight, now) {
                Admit::Later(at) => {
                    first_later = Some(first_later.map_or(at, |f| f.min(at)));
                    return true;
                }
                Admit::Now => {}
            }
            match self.driver.fetch_sized(fetch.endpoint.clone(), fetch.bytes) {
                Ok(id) => {
                    let core = self.driver.handler_mut();
                    let tsc = core.clock.now();
                    core.links.insert(id, Link::Fetch(v, instrument));
                    core.record(recording::Kind::Opened, id, tsc, fetch.url.as_bytes());
                    let venue = &core.stats.venues[v];
                    FeedStats::add(&venue.rest_requests, 1);
                    FeedStats::add(&venue.rest_weight, u64::from(fetch.weight));
                    false
                }
                Err(_) => {
                    // No free slot: try again after the next poll (still
                    // wanted: it stays in the queue), its weight unspent.
                    let core = self.driver.handler_mut();
                    core.rest[core.rest_of[v]].refund(fetch.weight);
                    slots_left = false;
                    true
                }
            }
        });
        if slots_left {
            self.fetch_wait = first_later;
        }
        self.driver.handler_mut().want_snapshot = queue;
    }

    /// Runs until `stop` is set, then closes every connection (1000) and
    /// waits up to `linger` for the closes to complete. Returns the sinks
    /// (flush or finish them). Ended by a poll's error or a handler's
    /// panic, it winds down the same way first (the kill switch's
    /// cancel-all answered, the closes), then returns the error or goes
    /// on unwinding.
    pub fn run(mut self, stop: &AtomicBool, linger: Duration) -> std::io::Result<Sinks> {
        self.poll_until(stop, linger)?;
        self.shutdown(linger)
    }

    /// Closes every connection (waiting up to `linger` for the closes) and
    /// hands back the handler.
    pub fn into_handler(mut self, linger: Duration) -> H {
        // A close that cannot be polled to its end is dropped with the
        // driver: the handler comes back either way.
        let _ = self.close_all(linger);
        self.driver
            .handler_mut()
            .user
            .take()
            .expect("the handler is taken out only here, once")
    }

    /// Closes every connection and hands back the sinks.
    pub fn shutdown(mut self, linger: Duration) -> std::io::Result<Sinks> {
        self.close_all(linger)?;
        let core = self.driver.handler_mut();
        Ok(std::mem::take(&mut core.sinks))
    }
}

/// Every trading venue's session on its venue's instruments
/// ([`crate::FeedBuilder::trade`]).
fn traders(
    states: &[VenueState],
    trades: Vec<(String, crate::trading::TradeSetup)>,
) -> Result<crate::trading::Trading, FeedError> {
    use crate::trading::{Trader, Trading, first_cid, trade_url, venue_session};
    let mut trading = Trading::new(states.len());
    for (name, mut setup) in trades {
        let problem = |problem: String| {
            FeedError::Setup(SetupError::Trade {
                venue: name.clone(),
                problem,
            })
        };
        let Some(v) = states.iter().position(|s| s.setup.name == name) else {
            let names: Vec<&str> = states.iter().map(|s| s.setup.name.as_str()).collect();
            return Err(problem(format!(
                "not one of the feed's venues ({})",
                names.join(", ")
            )));
        };
        if trading.by_venue[v].is_some() {
            return Err(problem("traded twice".into()));
        }
        let venue = &states[v].setup;
        // The session first: a venue with no order entry built in is said
        // so, not asked for an endpoint.
        let own_session = setup.session.is_some();
        let session =
            venue_session(venue.venue, &mut setup, &venue.instruments).map_err(problem)?;
        // One's own session's endpoint is its whole URL.
        let url = match (own_session, &setup.endpoint) {
            (true, Some(own)) => Some(own.clone()),
            _ => trade_url(
                venue.venue,
                setup.endpoint.as_deref(),
                venue.endpoint.as_deref(),
            ),
        }
        .ok_or_else(|| problem("no order-entry endpoint known: give one".into()))?;
        Endpoint::parse(&url).map_err(|e| bad_url(&url, e))?;
        trading.add(Trader::new(
            v,
            &name,
            (states[v].base, venue.instruments.len() as u32),
            session,
            url,
            setup.kill,
            venue.venue.binance_market().is_some(),
            first_cid(),
        ));
    }
    Ok(trading)
}
