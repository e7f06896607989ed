//! Network faults between the feed and the exchange simulator, injected by
//! `tickwire_testkit::proxy`: each scenario asserts the exact outcome.
//!
//! Two venues ("a": BTCUSDT, "b": ETHUSDT), each on its own connection
//! through its own proxy; REST snapshots go straight to the simulator
//! (through a third proxy for "a" in the fetch scenarios). A
//! fault on "a" must make "a" (and only "a") disconnect, gap, resync and
//! become valid again, ending equal to the simulator's book; "b" must never
//! notice. Faults that do not break the stream (1-byte segments, delays)
//! must change nothing at all.

#[global_allocator]
static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use tickwire_feed::live::{Feed, FeedStats, LostBy, Sinks, VenueSetup};
use tickwire_feed::recording;
use tickwire_feed::replay::Venue;
use tickwire_feed::sink;
use tickwire_net::{Backoff, Config as NetConfig, TlsConfig};
use tickwire_sim::{self as sim, SimConfig, SimInstrument, Simulator};
use tickwire_testkit::proxy::{Fault, Proxy};
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::book::Side;
use tickwire_venues::plan::Channels;
use tickwire_venues::sync::Resync;
use tickwire_venues::{Event, InstrumentId, InstrumentSpec, Kind};

struct Rig {
    simulator: Simulator,
    /// The proxy of venue "a" and of venue "b".
    proxies: [Proxy; 2],
    /// With [`Rig::with`]'s `rest_proxy`: the proxy of "a"'s REST
    /// snapshots (otherwise they go straight to the simulator).
    rest: Option<Proxy>,
    feed: Feed,
    stats: Arc<FeedStats>,
    events: Receiver<Event>,
    /// Every event since both books first became valid, by global
    /// instrument id (0: BTCUSDT on "a", 1: ETHUSDT on "b").
    seen: [Vec<Kind>; 2],
    /// Keep `seen` (the soak does not: its pushes would be counted as the
    /// receive path's allocations).
    keep_seen: bool,
}

fn instruments() -> Vec<SimInstrument> {
    vec![
        SimInstrument {
            levels: 40,
            ..SimInstrument::btcusdt()
        },
        SimInstrument {
            levels: 40,
            ..SimInstrument::ethusdt()
        },
    ]
}

fn net() -> NetConfig {
    NetConfig {
        send_rate: None,
        ping_interval: Some(Duration::from_millis(200)),
        pong_timeout: Duration::from_millis(400),
        stale_timeout: Some(Duration::from_secs(2)),
        connect_timeout: Duration::from_secs(2),
        handshake_timeout: Duration::from_secs(2),
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

impl Rig {
    fn start() -> Rig {
        Rig::with_rate(2000)
    }

    fn with_rate(rate: u32) -> Rig {
        Rig::with(rate, None, false)
    }

    /// At `rate` steps/s, recording every frame with `recording`, "a"'s
    /// REST snapshots through a proxy of their own if `rest_proxy`.
    fn with(rate: u32, recording: Option<recording::Writer>, rest_proxy: bool) -> Rig {
        let (tls, ca) = sim::self_signed().unwrap();
        let simulator = Simulator::start(SimConfig {
            tls: Some(tls),
            instruments: instruments(),
            rate,
            ..SimConfig::default()
        })
        .unwrap();
        let sim = simulator.addr();
        let proxies = [Proxy::start(sim).unwrap(), Proxy::start(sim).unwrap()];
        let rest = rest_proxy.then(|| Proxy::start(sim).unwrap());
        let rest_port = rest.as_ref().map_or(sim.port(), |p| p.addr().port());
        let mut trust = TlsConfig::empty();
        trust.add_ca_pem(ca.as_bytes()).unwrap();
        let venue = |name: &str, n: usize, proxy: &Proxy| {
            let i = &instruments()[n];
            VenueSetup {
                name: name.into(),
                venue: Venue::BinanceSpot,
                instruments: vec![InstrumentSpec::new(
                    &i.symbol,
                    i.price_scale,
                    i.size_scale,
                    1000,
                )],
                channels: Channels::default(),
                endpoint: Some(format!("wss://localhost:{}", proxy.addr().port())),
                rest: Some(format!(
                    "https://localhost:{}",
                    if n == 0 { rest_port } else { sim.port() }
                )),
            }
        };
        let (queue, events) = sink::queue(1 << 20);
        let feed = Feed::new(
            vec![venue("a", 0, &proxies[0]), venue("b", 1, &proxies[1])],
            net(),
            &trust,
            &Metrics::new(HistogramConfig::default()),
            Sinks {
                queue: Some(queue),
                recording,
                ..Sinks::default()
            },
            None,
            0,
        )
        .unwrap();
        let stats = feed.stats();
        let mut rig = Rig {
            simulator,
            proxies,
            rest,
            feed,
            stats,
            events,
            seen: [Vec::new(), Vec::new()],
            keep_seen: true,
        };
        rig.wait("both books valid", 20, |r| r.valid() == 2);
        rig.run_for(Duration::from_millis(300));
        // From here on, every event is the scenario's.
        rig.seen = [Vec::new(), Vec::new()];
        rig
    }

    fn valid(&self) -> u64 {
        FeedStats::get(&self.stats.books_valid)
    }

    fn reconnects(&self) -> u64 {
        FeedStats::get(&self.stats.reconnects)
    }

    fn lost(&self, by: impl Fn(&LostBy) -> &std::sync::atomic::AtomicU64) -> u64 {
        FeedStats::get(by(&self.stats.lost))
    }

    fn poll(&mut self) {
        self.feed.poll().unwrap();
        for e in self.events.try_iter() {
            if self.keep_seen {
                self.seen[e.instrument.0 as usize].push(e.kind);
            }
        }
    }

    fn wait(&mut self, what: &str, secs: u64, done: impl Fn(&Rig) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while !done(self) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            self.poll();
        }
    }

    fn run_for(&mut self, time: Duration) {
        let end = Instant::now() + time;
        while Instant::now() < end {
            self.poll();
        }
    }

    /// How many events of instrument `n` are book trouble: gaps, resyncs,
    /// disconnects.
    fn trouble(&self, n: usize) -> usize {
        self.seen[n]
            .iter()
            .filter(|k| matches!(k, Kind::Gap { .. } | Kind::Resync | Kind::Disconnected))
            .count()
    }

    fn book_valid_events(&self, n: usize) -> usize {
        self.seen[n]
            .iter()
            .filter(|k| matches!(k, Kind::BookValid { .. }))
            .count()
    }

    /// Pauses the market, lets everything arrive, compares both books with
    /// the simulator's, resumes.
    fn books_match_the_simulator(&mut self) {
        self.simulator.pause(true);
        // Longer than the 200 ms ping interval: quiet means nothing but pongs.
        let mut last = (FeedStats::get(&self.stats.messages), Instant::now());
        let deadline = Instant::now() + Duration::from_secs(10);
        while last.1.elapsed() < Duration::from_millis(300) {
            assert!(Instant::now() < deadline, "never went quiet");
            self.poll();
            let now = FeedStats::get(&self.stats.messages);
            if now != last.0 {
                last = (now, Instant::now());
            }
        }
        for (v, n) in [(0, 0), (1, 1)] {
            let (_, bids, asks) = self.simulator.book(n, 1000).unwrap();
            let book = self.feed.book(v, InstrumentId(0)).expect("valid");
            let ours = |side| -> Vec<(i64, i64)> {
                book.levels(side)
                    .iter()
                    .map(|l| (l.price, l.size))
                    .collect()
            };
            assert_eq!(ours(Side::Bid), bids, "venue {v} bids");
            assert_eq!(ours(Side::Ask), asks, "venue {v} asks");
        }
        self.simulator.pause(false);
    }

    /// After a fault on "a": it reconnected, its book gapped and came back,
    /// "b" saw nothing, and both books equal the simulator's.
    fn recovered_from_a_fault_on_a(&mut self) {
        self.wait("a to reconnect and be valid again", 20, |r| {
            r.reconnects() >= 1 && r.valid() == 2 && r.book_valid_events(0) >= 1
        });
        // What "a" said about its book: it went down (and maybe failed to
        // come back a few times), then one snapshot, asked for once the
        // stream was back, and valid again.
        let said: Vec<Kind> = self.seen[0]
            .iter()
            .copied()
            .filter(|k| {
                !matches!(
                    k,
                    Kind::Trade { .. } | Kind::Quote { .. } | Kind::BookDelta { .. }
                )
            })
            .collect();
        let retries = said
            .iter()
            .skip(2)
            .take_while(|k| **k == Kind::Disconnected)
            .count();
        assert!(
            matches!(
                said[..],
                [
                    Kind::Disconnected,
                    Kind::Gap {
                        why: Resync::Disconnected
                    },
                    ..
                ]
            ) && matches!(
                said[2 + retries..],
                [
                    Kind::Resync,
                    Kind::BookSnapshot { .. },
                    Kind::BookValid { .. }
                ]
            ),
            "{said:?}"
        );
        assert_eq!(
            FeedStats::get(&self.stats.snapshots),
            3,
            "one REST snapshot per book at the start, one for a's after the fault"
        );
        assert_eq!(self.trouble(1), 0, "b was disturbed: {:?}", self.seen[1]);
        assert_eq!(self.book_valid_events(1), 0);
        assert_eq!(FeedStats::get(&self.stats.decode_errors), 0);
        self.run_for(Duration::from_millis(300));
        self.books_match_the_simulator();
    }
}

#[test]
fn a_connection_closed_without_a_close_frame_is_reconnected_and_only_its_book_resyncs() {
    let mut rig = Rig::start();
    rig.proxies[0].set(Fault::CloseAfter(0));
    rig.recovered_from_a_fault_on_a();
    assert_eq!(rig.reconnects(), 1);
    assert_eq!(rig.lost(|l| &l.closed), 1);
    assert_eq!(rig.proxies[0].accepted(), 2);
    assert_eq!(rig.proxies[1].accepted(), 1);
}

#[test]
fn a_reconnect_is_recorded_as_a_new_opening_of_the_same_endpoint() {
    let dir = std::env::temp_dir().join(format!("tickwire-faults-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("rec");
    let header = recording::Header {
        created_unix_ns: 1,
        ticks_per_second: 1e9,
    };
    let writer = recording::Writer::create(&base, 1 << 30, header).unwrap();
    let mut rig = Rig::with(2000, Some(writer), false);
    let ports = rig
        .proxies
        .each_ref()
        .map(|p| format!(":{}/", p.addr().port()));
    rig.proxies[0].set(Fault::CloseAfter(0));
    rig.recovered_from_a_fault_on_a();
    let sinks = rig.feed.shutdown(Duration::from_millis(500)).unwrap();
    sinks.recording.unwrap().finish().unwrap();
    // Each stream's records, by kind: a letter each (o: opened, s: sent,
    // r: received, c: closed).
    let mut streams: [String; 2] = Default::default();
    let mut conns = [None, None];
    for file in recording::files(&base) {
        let mut reader = recording::Reader::new(std::fs::File::open(file).unwrap()).unwrap();
        while let Some(r) = reader.next_record().unwrap() {
            let payload = String::from_utf8_lossy(r.payload);
            for v in 0..2 {
                if r.kind == recording::Kind::Opened && payload.contains(&ports[v]) {
                    conns[v] = Some(r.conn);
                }
                if conns[v] == Some(r.conn) {
                    let letter = match r.kind {
                        recording::Kind::Opened => 'o',
                        recording::Kind::Sent => 's',
                        recording::Kind::Received => 'r',
                        recording::Kind::Closed => 'c',
                        recording::Kind::Response => 'R',
                    };
                    if !streams[v].ends_with(letter) || letter == 'o' || letter == 'c' {
                        streams[v].push(letter);
                    }
                }
            }
        }
    }
    // "a": opened, subscribed, received, dropped, opened again (the same
    // endpoint), subscribed, received, closed at the end; "b" once.
    assert_eq!(streams[0], "osrcosrc");
    assert_eq!(streams[1], "osrc");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_snapshot_fetch_reset_mid_response_is_retried_and_the_book_recovers() {
    let mut rig = Rig::with(2000, None, true);
    let rest = rig.rest.take().unwrap();
    // One fetch so far, "a"'s first snapshot: its TLS handshake and
    // tickets (about 1.1 KB; a resumed one is shorter) and its response
    // (about 1.3 KB, give or take 200 bytes as the book changes): 2.3 to
    // 2.8 KB in all. The next one is reset at 60 % of that, past any
    // handshake and well before the response's end.
    assert_eq!(rest.accepted(), 1);
    let one_fetch = rest.downstream_bytes();
    rest.set(Fault::ResetAfter(one_fetch * 6 / 10));
    rig.proxies[0].set(Fault::CloseAfter(0));
    rig.recovered_from_a_fault_on_a();
    assert_eq!(FeedStats::get(&rig.stats.fetch_failures), 1);
    assert_eq!(rest.accepted(), 3, "the first, the reset one, its retry");
    assert_eq!(rig.reconnects(), 1);
}

#[test]
fn a_stalled_snapshot_fetch_times_out_and_is_retried() {
    let mut rig = Rig::with(2000, None, true);
    let rest = rig.rest.take().unwrap();
    rest.set(Fault::Stall);
    rig.proxies[0].set(Fault::CloseAfter(0));
    // The fetch must finish within the handshake timeout (2 s here).
    rig.wait("the stalled fetch to time out", 10, |r| {
        FeedStats::get(&r.stats.fetch_failures) >= 1
    });
    rest.set(Fault::None);
    rig.recovered_from_a_fault_on_a();
    assert_eq!(
        rig.lost(|l| &l.timeout),
        0,
        "the stream was never timed out"
    );
    assert_eq!(rig.reconnects(), 1);
}

#[test]
fn a_reset_in_the_middle_of_a_record_is_recovered() {
    let mut rig = Rig::start();
    rig.proxies[0].set(Fault::ResetAfter(777));
    rig.recovered_from_a_fault_on_a();
    assert_eq!(rig.reconnects(), 1);
    assert_eq!(rig.lost(|l| &l.socket), 1);
}

#[test]
fn a_corrupted_byte_is_caught_by_tls_and_recovered() {
    let mut rig = Rig::start();
    rig.proxies[0].set(Fault::CorruptAt(1500));
    rig.recovered_from_a_fault_on_a();
    assert_eq!(rig.reconnects(), 1);
    assert_eq!(rig.lost(|l| &l.tls), 1);
}

#[test]
fn a_duplicated_range_is_caught_by_tls_and_recovered() {
    let mut rig = Rig::start();
    rig.proxies[0].set(Fault::Duplicate {
        start: 2000,
        len: 100,
    });
    rig.recovered_from_a_fault_on_a();
    rig.proxies[0].set(Fault::None);
    assert_eq!(rig.reconnects(), 1);
    assert_eq!(rig.lost(|l| &l.tls), 1);
}

#[test]
fn a_dropped_range_is_caught_by_tls_and_recovered() {
    let mut rig = Rig::start();
    rig.proxies[0].set(Fault::Drop {
        start: 2000,
        len: 100,
    });
    rig.recovered_from_a_fault_on_a();
    assert_eq!(rig.reconnects(), 1);
    assert_eq!(rig.lost(|l| &l.tls), 1);
}

#[test]
fn one_byte_segments_and_delays_change_nothing() {
    // A quarter of the usual rate: a write per byte must keep up in a
    // debug build on a loaded 2-core machine, or the pong deadline (rightly)
    // reconnects, and that is not what this test is about.
    let mut rig = Rig::with_rate(500);
    rig.proxies[0].set(Fault::Split);
    rig.proxies[1].set(Fault::Delay(Duration::from_millis(30)));
    rig.run_for(Duration::from_secs(2));
    rig.proxies[0].set(Fault::None);
    rig.proxies[1].set(Fault::None);
    rig.run_for(Duration::from_millis(300));
    assert_eq!(rig.reconnects(), 0);
    assert_eq!(rig.trouble(0) + rig.trouble(1), 0);
    assert_eq!(FeedStats::get(&rig.stats.decode_errors), 0);
    rig.books_match_the_simulator();
}

#[test]
fn a_half_open_connection_is_detected_by_the_pong_deadline() {
    let mut rig = Rig::start();
    // Bytes are accepted and nothing comes back: no data, no pongs.
    rig.proxies[0].set(Fault::Stall);
    let stalled = Instant::now();
    rig.wait("the stall to be noticed", 10, |r| r.reconnects() >= 1);
    // A ping within 200 ms, its pong due 400 ms later.
    assert!(
        stalled.elapsed() < Duration::from_millis(1500),
        "{:?}",
        stalled.elapsed()
    );
    rig.proxies[0].set(Fault::None);
    rig.recovered_from_a_fault_on_a();
    assert_eq!(rig.lost(|l| &l.timeout), rig.reconnects());
}

#[test]
fn a_quiet_but_alive_stream_is_kept() {
    let mut rig = Rig::start();
    // No market data for longer than the pong deadline and the ping
    // interval many times over: the pongs keep it alive.
    rig.simulator.pause(true);
    rig.run_for(Duration::from_millis(1500));
    rig.simulator.pause(false);
    rig.run_for(Duration::from_millis(300));
    assert_eq!(rig.reconnects(), 0);
    assert_eq!(rig.trouble(0) + rig.trouble(1), 0);
    rig.books_match_the_simulator();
}

#[test]
fn refused_reconnects_back_off_and_then_succeed() {
    let mut rig = Rig::start();
    rig.proxies[0].refuse_for(Duration::from_millis(1200));
    rig.proxies[0].reset_all();
    rig.recovered_from_a_fault_on_a();
    // 50, 100, 200, 400, 400 ms (jittered): a handful of tries, not a storm.
    let refused = rig.proxies[0].refused();
    assert!((2..=8).contains(&refused), "{refused} refused attempts");
}

#[test]
fn undecodable_and_unexpected_messages_are_counted_logged_once_and_the_connection_kept() {
    let mut rig = Rig::start();
    let truncated = r#"{"stream":"btcusdt@trade","data":{"e":"trade","E":1,"s":"BTCUSDT","t":"#;
    let unexpected = r#"{"stream":"btcusdt@kline_1m","data":{"e":"kline","E":1,"s":"BTCUSDT"}}"#;
    for text in [truncated, truncated, unexpected] {
        // Both connections ("a" and "b") are the simulator's clients.
        assert_eq!(rig.simulator.inject(text), 2);
    }
    rig.run_for(Duration::from_millis(500));
    assert_eq!(FeedStats::get(&rig.stats.decode_errors), 4);
    // One line per venue: the second truncated message is only counted.
    assert_eq!(FeedStats::get(&rig.stats.logged), 2);
    assert!(FeedStats::get(&rig.stats.ignored) >= 2);
    assert_eq!(rig.reconnects(), 0);
    assert_eq!(rig.trouble(0) + rig.trouble(1), 0);
    rig.books_match_the_simulator();
}

/// The resident set size of this process, in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// The long run: the feed against the simulator at a high rate for
/// `TICKWIRE_SOAK_SECS` (default 180) seconds, a fault every few seconds
/// on one venue or the other. Every fault must be recovered from (both
/// books valid again, equal to the simulator's), the receive path must not
/// allocate between faults, and the resident set must stay flat after the
/// warm-up. `.ci/run` runs it by name, in release mode.
#[test]
#[ignore = "a long run: cargo test --release -p tickwire-feed --test faults -- --ignored soak"]
fn soak() {
    let secs: u64 = std::env::var("TICKWIRE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(180);
    let mut rig = Rig::with_rate(20_000);
    rig.keep_seen = false;
    let started = Instant::now();
    let faults = [
        ("close without a close frame", Fault::CloseAfter(5000)),
        ("reset mid-record", Fault::ResetAfter(3333)),
        ("corrupted byte", Fault::CorruptAt(4000)),
        ("1-byte segments", Fault::Split),
        (
            "dropped range",
            Fault::Drop {
                start: 6000,
                len: 50,
            },
        ),
        ("half-open", Fault::Stall),
        (
            "duplicated range",
            Fault::Duplicate {
                start: 7000,
                len: 70,
            },
        ),
        ("delay", Fault::Delay(Duration::from_millis(20))),
    ];
    let mut injected = 0;
    let mut steady_allocations = 0;
    let mut steady_messages = 0;
    let mut rss_after_warmup = None;
    let mut rss_max = 0;
    while started.elapsed() < Duration::from_secs(secs) {
        // A steady stretch: nothing on the receive path allocates.
        let before = FeedStats::get(&rig.stats.messages);
        let ((), allocations) =
            tickwire_testkit::allocations(|| rig.run_for(Duration::from_secs(2)));
        steady_allocations += allocations;
        if std::env::var_os("TICKWIRE_SOAK_DEBUG").is_some() {
            eprintln!(
                "window: {allocations} allocations, {} messages, snapshots {}, reconnects {}",
                FeedStats::get(&rig.stats.messages) - before,
                FeedStats::get(&rig.stats.snapshots),
                rig.reconnects()
            );
        }
        steady_messages += FeedStats::get(&rig.stats.messages) - before;
        if rss_after_warmup.is_none() && started.elapsed() > Duration::from_secs(20) {
            rss_after_warmup = Some(rss());
        }
        rss_max = rss_max.max(rss());
        // A fault on "a" or "b", in turn.
        let (what, fault) = faults[injected % faults.len()];
        let v = injected % 2;
        let reconnects = rig.reconnects();
        rig.proxies[v].set(fault);
        injected += 1;
        match fault {
            Fault::Split | Fault::Delay(_) => {
                rig.run_for(Duration::from_secs(1));
                rig.proxies[v].set(Fault::None);
            }
            _ => {
                rig.wait(what, 15, |r| r.reconnects() > reconnects);
                rig.proxies[v].set(Fault::None);
            }
        }
        rig.wait(&format!("recovery from: {what}"), 20, |r| r.valid() == 2);
        rig.run_for(Duration::from_millis(200));
        rig.books_match_the_simulator();
        assert_eq!(FeedStats::get(&rig.stats.decode_errors), 0);
    }
    let rss_end = rss();
    let s = &rig.stats;
    eprintln!(
        "soak: {:.0} s, {} faults injected and recovered from, {} reconnects \
         (lost: {} closed, {} tls, {} protocol, {} timeout, {} socket), {} messages, {} events, \
         {} gaps; {} allocations over {} steady messages; RSS after warm-up {} KiB, max {} KiB, end {} KiB",
        started.elapsed().as_secs_f64(),
        injected,
        rig.reconnects(),
        FeedStats::get(&s.lost.closed),
        FeedStats::get(&s.lost.tls),
        FeedStats::get(&s.lost.protocol),
        FeedStats::get(&s.lost.timeout),
        FeedStats::get(&s.lost.socket),
        FeedStats::get(&s.messages),
        FeedStats::get(&s.events),
        FeedStats::get(&s.gaps),
        steady_allocations,
        steady_messages,
        rss_after_warmup.unwrap_or(0) / 1024,
        rss_max / 1024,
        rss_end / 1024,
    );
    assert!(injected >= 2, "too short to inject faults");
    assert!(steady_messages > 0);
    assert_eq!(steady_allocations, 0, "the receive path allocated");
    // One REST snapshot per book at the start and at most one per
    // reconnect: none fetched before its stream was back (it would be
    // stale, and fetched again).
    assert!(
        FeedStats::get(&s.snapshots) <= 2 + rig.reconnects(),
        "{} snapshots for {} reconnects",
        FeedStats::get(&s.snapshots),
        rig.reconnects()
    );
    if let Some(warm) = rss_after_warmup {
        // Flat: within 16 MiB of the size after warm-up.
        assert!(
            rss_end < warm + (16 << 20),
            "RSS grew from {} KiB to {} KiB",
            warm / 1024,
            rss_end / 1024
        );
    }
}
