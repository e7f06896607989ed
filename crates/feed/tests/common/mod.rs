//! The rig the feed's integration tests share: a venue's simulator, and
//! the feed with two of that venue's instruments as two venues of its own
//! ("a" and "b"), each on its own connection through its own
//! fault-injecting proxy. A fault on "a" must leave "b" untouched, on
//! every venue (a Coinbase connection's sequence covers every book on it:
//! one connection each keeps them apart).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tickwire_feed::FeedId;
use tickwire_feed::live::{Feed, FeedStats, LostBy, Sinks, VenueSetup};
use tickwire_feed::mirror::Mirrors;
use tickwire_feed::{recording, sink};
use tickwire_net::{Backoff, Config as NetConfig, TlsConfig};
use tickwire_sim::{Levels, SimConfig, SimInstrument, Simulator, Venue};
use tickwire_testkit::proxy::Proxy;
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::book::Side;
use tickwire_venues::{InstrumentSpec, Kind};

/// Every venue, for tests that run over all of them, or those named in
/// `TICKWIRE_TEST_VENUES` (comma-separated, to look at a few closely).
pub(crate) fn venues() -> Vec<Venue> {
    select("venue", Venue::ALL.len(), |_| true)
}

/// The venues whose books come from REST snapshots (Binance's three,
/// spot's twice: JSON and SBE).
pub(crate) fn rest_venues() -> Vec<Venue> {
    select("REST-snapshot venue", 4, Venue::rest_snapshots)
}

/// A throw-away API key for a venue whose streams need one (the
/// simulator takes any).
pub(crate) fn with_test_key(s: &mut VenueSetup) {
    if s.venue == Venue::BinanceSpotSbe {
        s.api_key = Some(tickwire_feed::ApiKey::Given("test-key-not-secret".into()));
    }
}

/// The Bybit venues (spot, linear, inverse).
pub(crate) fn bybit_venues() -> Vec<Venue> {
    select("Bybit venue", 3, |v| v.bybit_category().is_some())
}

/// The venues whose books come in band, Bybit's apart (OKX, Kraken,
/// Coinbase, Deribit).
pub(crate) fn other_in_band_venues() -> Vec<Venue> {
    select("in-band venue but Bybit", 4, |v| {
        !v.rest_snapshots() && v.bybit_category().is_none()
    })
}

/// Whether the venue checksums its book messages (OKX's `checksum`,
/// Kraken's CRC32; `VenueFault::BadChecksum` is ignored elsewhere).
pub(crate) fn checksums(venue: Venue) -> bool {
    matches!(venue, Venue::Okx | Venue::Kraken)
}

/// The venues that checksum their books (OKX, Kraken).
pub(crate) fn checksum_venues() -> Vec<Venue> {
    select("checksum venue", 2, checksums)
}

/// The venues `keep` takes: all `every` of them when `TICKWIRE_TEST_VENUES`
/// is unset (so a venue that stops being one of them fails loudly), else
/// those the variable names. A name that is no venue panics, and so does a
/// selection with no venue left: a test must never pass on an empty loop.
fn select(what: &str, every: usize, keep: impl Fn(Venue) -> bool) -> Vec<Venue> {
    let all: Vec<Venue> = Venue::ALL
        .iter()
        .map(|(_, v)| *v)
        .filter(|v| keep(*v))
        .collect();
    let Some(only) = std::env::var_os("TICKWIRE_TEST_VENUES") else {
        assert_eq!(all.len(), every, "every {what}: {all:?}");
        return all;
    };
    let only = only.to_str().expect("TICKWIRE_TEST_VENUES is not UTF-8");
    let named: Vec<Venue> = only
        .split(',')
        .map(|name| {
            name.trim()
                .parse()
                .unwrap_or_else(|e| panic!("TICKWIRE_TEST_VENUES={only}: {e}"))
        })
        .collect();
    let chosen: Vec<Venue> = all.into_iter().filter(|v| named.contains(v)).collect();
    assert!(
        !chosen.is_empty(),
        "TICKWIRE_TEST_VENUES={only} names no {what}: this test would check nothing \
         (name one, or leave this test out by name)"
    );
    chosen
}

/// How a rig is made.
pub(crate) struct RigConfig {
    pub(crate) venue: Venue,
    /// Market steps a second.
    pub(crate) rate: u32,
    /// Levels a side of the simulator's books.
    pub(crate) levels: usize,
    /// Levels each of the feed's books shows.
    pub(crate) depth: usize,
    /// A recording of every frame.
    pub(crate) recording: Option<recording::Writer>,
    /// "a"'s REST snapshots through a proxy of their own.
    pub(crate) rest_proxy: bool,
    /// The feed's network settings.
    pub(crate) net: NetConfig,
    /// The simulator ends each connection this long after it opened, and
    /// the feed is told so.
    pub(crate) lifetime: Option<Duration>,
    /// A standby line beside each connection, straight to the simulator
    /// (past the proxies).
    pub(crate) standby: bool,
}

impl RigConfig {
    pub(crate) fn new(venue: Venue) -> RigConfig {
        RigConfig {
            venue,
            rate: 2000,
            levels: 40,
            depth: 20,
            recording: None,
            rest_proxy: false,
            net: net(),
            lifetime: None,
            standby: false,
        }
    }
}

/// The rig's network settings: deadlines generous enough that a loaded
/// 2-core machine never trips one (the feed runs on the test's thread, and
/// a debug build under load may fall a second or two behind its
/// simulators), and quick reconnects. A test about a deadline sets its
/// own, tight, on top of these.
pub(crate) fn net() -> NetConfig {
    NetConfig {
        send_rate: None,
        ping_interval: Some(Duration::from_secs(1)),
        pong_timeout: Duration::from_secs(5),
        stale_timeout: Some(Duration::from_secs(10)),
        connect_timeout: Duration::from_secs(10),
        handshake_timeout: Duration::from_secs(10),
        close_timeout: Duration::from_millis(300),
        backoff: Backoff {
            initial: Duration::from_millis(50),
            max: Duration::from_millis(400),
            multiplier: 2.0,
            ..Backoff::default()
        },
        ..NetConfig::default()
    }
}

pub(crate) struct Rig {
    pub(crate) venue: Venue,
    pub(crate) simulator: Simulator,
    /// The proxy of "a" and of "b".
    pub(crate) proxies: [Proxy; 2],
    /// With `rest_proxy`: the proxy of "a"'s REST snapshots.
    pub(crate) rest: Option<Proxy>,
    pub(crate) feed: Feed,
    pub(crate) stats: Arc<FeedStats>,
    /// The feed's recorders (export them to see its page).
    pub(crate) metrics: Metrics,
    pub(crate) events: sink::Events,
    /// Every event since both books first became valid, by global
    /// instrument id (0: the first instrument on "a", 1: the second on "b").
    pub(crate) seen: [Vec<Kind>; 2],
    /// Keep `seen` (the soak does not: its pushes would be counted as the
    /// receive path's allocations).
    pub(crate) keep_seen: bool,
    /// The books the events describe.
    pub(crate) mirrors: Mirrors,
    /// What the simulator's price and size are multiplied by to be at the
    /// feed's scales, by instrument.
    scales: [(i64, i64); 2],
    pub(crate) depth: usize,
}

impl Rig {
    pub(crate) fn start(venue: Venue) -> Rig {
        Rig::with(RigConfig::new(venue))
    }

    pub(crate) fn with(config: RigConfig) -> Rig {
        let RigConfig {
            venue,
            rate,
            levels,
            depth,
            recording,
            rest_proxy,
            net,
            lifetime,
            standby,
        } = config;
        let (tls, ca) = tickwire_sim::self_signed().unwrap();
        let instruments: Vec<SimInstrument> = SimInstrument::pair(venue)
            .into_iter()
            .map(|i| SimInstrument { levels, ..i })
            .collect();
        let simulator = Simulator::start(SimConfig {
            tls: Some(tls),
            instruments: instruments.clone(),
            rate,
            max_lifetime: lifetime,
            ..SimConfig::new(venue)
        })
        .unwrap();
        let sim = simulator.addr();
        let proxies = [Proxy::start(sim).unwrap(), Proxy::start(sim).unwrap()];
        let rest = rest_proxy.then(|| Proxy::start(sim).unwrap());
        let rest_port = rest.as_ref().map_or(sim.port(), |p| p.addr().port());
        let mut trust = TlsConfig::empty();
        trust.add_ca_pem(ca.as_bytes()).unwrap();
        // The venue's default scales: they hold whatever it sends.
        let (ps, ss) = venue.default_scales();
        let spec = |n: usize| {
            let i = &instruments[n];
            InstrumentSpec::new(
                &i.symbol,
                ps.max(i.price_scale),
                ss.max(i.size_scale),
                depth,
            )
        };
        let up = |to: u8, from: u8| 10i64.pow(u32::from(to - from));
        let scales = [0, 1].map(|n| {
            let s = spec(n);
            (
                up(s.price_scale, instruments[n].price_scale),
                up(s.size_scale, instruments[n].size_scale),
            )
        });
        let setup = |name: &str, n: usize, proxy: &Proxy| {
            let mut s = VenueSetup::new(name, venue, vec![spec(n)]);
            s.endpoint = Some(format!("wss://localhost:{}", proxy.addr().port()));
            s.rest = Some(format!(
                "https://localhost:{}",
                if n == 0 { rest_port } else { sim.port() }
            ));
            s.lines.standby = standby;
            s.lines.standby_endpoint = Some(format!("wss://localhost:{}", sim.port()));
            s.lines.max_lifetime = lifetime;
            with_test_key(&mut s);
            s
        };
        let (queue, events) = sink::queue(1 << 20);
        let metrics = Metrics::new(HistogramConfig::default());
        let mut sinks = Sinks::default().with_queue(queue);
        sinks.recording = recording;
        let feed = Feed::builder()
            .check_instruments(false)
            .setup(setup("a", 0, &proxies[0]))
            .setup(setup("b", 1, &proxies[1]))
            .net(net)
            .tls(trust)
            .metrics(metrics.clone())
            .sinks(sinks)
            .build()
            .unwrap();
        let stats = feed.stats();
        let mut rig = Rig {
            venue,
            simulator,
            proxies,
            rest,
            feed,
            stats,
            metrics,
            events,
            seen: [Vec::new(), Vec::new()],
            keep_seen: true,
            mirrors: Mirrors::new(2),
            scales,
            depth,
        };
        rig.wait("both books valid", 30, |r| r.valid() == 2);
        rig.run_for(Duration::from_millis(300));
        // From here on, every event is the scenario's.
        rig.seen = [Vec::new(), Vec::new()];
        rig
    }

    pub(crate) fn valid(&self) -> u64 {
        FeedStats::get(&self.stats.books_valid)
    }

    pub(crate) fn reconnects(&self) -> u64 {
        FeedStats::get(&self.stats.reconnects)
    }

    pub(crate) fn lost(&self, by: impl Fn(&LostBy) -> &std::sync::atomic::AtomicU64) -> u64 {
        FeedStats::get(by(&self.stats.lost))
    }

    pub(crate) fn poll(&mut self) {
        self.feed.poll().unwrap();
        self.take_events();
    }

    /// Takes the events the feed has emitted into `seen` and the mirrors.
    fn take_events(&mut self) {
        for e in self.events.try_iter() {
            if self.keep_seen {
                self.seen[e.instrument.0 as usize].push(e.kind);
                self.mirrors.apply(&e);
            }
        }
    }

    /// Polls until `messages` more messages have come in (at most `secs`)
    /// and returns how many allocations the feed's polls made: the receive
    /// path's, on this thread (the simulator and the proxies allocate on
    /// theirs). The rig's own keeping of the events is not counted. The
    /// test binary must install `tickwire_testkit::CountingAllocator`.
    pub(crate) fn allocations_over(&mut self, messages: u64, secs: u64) -> u64 {
        let until = FeedStats::get(&self.stats.messages) + messages;
        self.wait_counting(&format!("{messages} messages"), secs, |r| {
            FeedStats::get(&r.stats.messages) >= until
        })
    }

    /// Polls until `messages` more messages have come in (at most `secs`).
    pub(crate) fn run_messages(&mut self, messages: u64, secs: u64) {
        let until = FeedStats::get(&self.stats.messages) + messages;
        self.wait(&format!("{messages} messages"), secs, |r| {
            FeedStats::get(&r.stats.messages) >= until
        });
    }

    pub(crate) fn wait(&mut self, what: &str, secs: u64, done: impl Fn(&Rig) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "{}: timed out waiting for {what}",
                self.venue
            );
            self.poll();
        }
    }

    /// [`wait`](Self::wait), returning how many allocations the feed's
    /// polls made meanwhile (as [`allocations_over`](Self::allocations_over)
    /// counts them).
    pub(crate) fn wait_counting(
        &mut self,
        what: &str,
        secs: u64,
        done: impl Fn(&Rig) -> bool,
    ) -> u64 {
        counting_allocations();
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut allocations = 0;
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "{}: timed out waiting for {what}",
                self.venue
            );
            let (polled, n) = tickwire_testkit::allocations(|| self.feed.poll());
            polled.unwrap();
            allocations += n;
            self.take_events();
        }
        allocations
    }

    pub(crate) fn run_for(&mut self, time: Duration) {
        let end = Instant::now() + time;
        while Instant::now() < end {
            self.poll();
        }
    }

    /// Nothing went wrong: no gap, resync, reconnect or refusal, exactly
    /// `decode_errors` undecodable messages, and neither book said any
    /// trouble since the rig started.
    pub(crate) fn assert_untroubled(&self, decode_errors: u64) {
        let s = &self.stats;
        let g = FeedStats::get;
        assert_eq!(
            (
                g(&s.gaps),
                g(&s.resyncs),
                g(&s.reconnects),
                g(&s.rejections),
                g(&s.decode_errors)
            ),
            (0, 0, 0, 0, decode_errors),
            "{}: gaps, resyncs, reconnects, rejections, decode errors",
            self.venue
        );
        assert_eq!(
            self.trouble(0) + self.trouble(1),
            0,
            "{}: {:?}",
            self.venue,
            self.said_both()
        );
    }

    /// What both books said (see [`said`](Self::said)).
    fn said_both(&self) -> [Vec<Kind>; 2] {
        [self.said(0), self.said(1)]
    }

    /// How many events of instrument `n` are book trouble: gaps, resyncs,
    /// disconnects, refusals.
    pub(crate) fn trouble(&self, n: usize) -> usize {
        self.seen[n]
            .iter()
            .filter(|k| {
                matches!(
                    k,
                    Kind::Gap { .. } | Kind::Resync | Kind::Disconnected | Kind::Rejected { .. }
                )
            })
            .count()
    }

    pub(crate) fn book_valid_events(&self, n: usize) -> usize {
        self.seen[n]
            .iter()
            .filter(|k| matches!(k, Kind::BookValid { .. }))
            .count()
    }

    /// What instrument `n`'s book says, apart from its trades, quotes and
    /// levels.
    pub(crate) fn said(&self, n: usize) -> Vec<Kind> {
        self.seen[n]
            .iter()
            .copied()
            .filter(|k| {
                !matches!(
                    k,
                    Kind::Trade { .. } | Kind::Quote { .. } | Kind::BookDelta { .. }
                )
            })
            .collect()
    }

    /// Book `n` as the feed keeps it, while valid: its bids and asks.
    fn feed_book(&self, n: usize) -> Option<(Levels, Levels)> {
        let book = self.feed.book(FeedId(n as u32))?;
        let side = |side| {
            book.levels(side)
                .iter()
                .map(|l| (l.price, l.size))
                .collect()
        };
        Some((side(Side::Bid), side(Side::Ask)))
    }

    /// Whether both books, as the feed keeps them and (when kept) as the
    /// events describe them, are the simulator's.
    fn books_equal(&self) -> bool {
        (0..2).all(|n| {
            let (bids, asks) = self.sim_book(n);
            self.feed_book(n)
                .is_some_and(|(ours_b, ours_a)| ours_b == bids && ours_a == asks)
                && (!self.keep_seen
                    || (self.mirrors.levels(n, Side::Bid) == Some(bids)
                        && self.mirrors.levels(n, Side::Ask) == Some(asks)))
        })
    }

    /// Pauses the market and lets what is on its way arrive: no event for
    /// 300 ms (pongs and heartbeats make none). The market stays paused.
    pub(crate) fn quiet(&mut self) {
        self.simulator.pause(true);
        let mut last = (FeedStats::get(&self.stats.events), Instant::now());
        let deadline = Instant::now() + Duration::from_secs(30);
        while last.1.elapsed() < Duration::from_millis(300) {
            assert!(
                Instant::now() < deadline,
                "{}: never went quiet",
                self.venue
            );
            self.poll();
            let now = FeedStats::get(&self.stats.events);
            if now != last.0 {
                last = (now, Instant::now());
            }
        }
    }

    /// The simulator's book of instrument `n`, at the feed's scales and
    /// shown depth.
    pub(crate) fn sim_book(&self, n: usize) -> (Levels, Levels) {
        let (_, bids, asks) = self.simulator.book(n, self.depth).unwrap();
        let (p, q) = self.scales[n];
        let at = |l: Vec<(i64, i64)>| l.into_iter().map(|(a, b)| (a * p, b * q)).collect();
        (at(bids), at(asks))
    }

    /// Pauses the market, lets everything arrive, compares both books
    /// with the simulator's, level for level (the adapters' books and the
    /// books the events describe), resumes.
    pub(crate) fn books_match_the_simulator(&mut self) {
        // Paused, the simulator's books stand still, and the feed's reach
        // them once everything sent has come through the proxies and the
        // feed. Quiet is the first sign; a proxy's thread starved for
        // longer than its 300 ms is waited for, up to 30 s, before the
        // comparison below fails.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            self.quiet();
            if Instant::now() >= deadline || self.books_equal() {
                break;
            }
        }
        for n in 0..2 {
            let (bids, asks) = self.sim_book(n);
            let (our_bids, our_asks) = self
                .feed_book(n)
                .unwrap_or_else(|| panic!("{}: book {n} not valid", self.venue));
            assert_eq!(our_bids, bids, "{} venue {n} bids", self.venue);
            assert_eq!(our_asks, asks, "{} venue {n} asks", self.venue);
            if self.keep_seen {
                assert_eq!(
                    self.mirrors.levels(n, Side::Bid),
                    Some(bids),
                    "{} venue {n}: the events' bids",
                    self.venue
                );
                assert_eq!(
                    self.mirrors.levels(n, Side::Ask),
                    Some(asks),
                    "{} venue {n}: the events' asks",
                    self.venue
                );
            }
        }
        self.simulator.pause(false);
    }
}

/// Panics unless the test binary counts allocations (without
/// `tickwire_testkit::CountingAllocator` installed every count is 0).
fn counting_allocations() {
    let ((), probe) = tickwire_testkit::allocations(|| {
        drop(std::hint::black_box(Vec::<u8>::with_capacity(1)));
    });
    assert_eq!(probe, 1, "the test binary does not count allocations");
}
