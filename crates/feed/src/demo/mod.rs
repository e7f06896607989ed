//! The offline demo: exchange simulators and the feed in one process, over
//! real TLS on loopback, for a fixed time; a status line each second, then
//! the per-stage latency table, the `.hlog` and its SVG plot.
//!
//! The plain demo simulates Binance spot (BTCUSDT and ETHUSDT). With
//! `venues`, every venue listed gets a simulator of its own, and the feed
//! runs them all on one thread: the status and the summary then have a
//! line per venue. With `faults`, each venue's connection goes through a
//! fault-injecting proxy, and each venue gets every fault in turn
//! (its `faults` module); at the end the books the feed's events describe are
//! compared, level for level, with the simulators'.
//!
//! [`trade`] is `demo --trade`: the quoting strategy against a simulator
//! that trades.
//!
//! The simulators' threads run unpinned (their market threads on another
//! core than the feed's, if there is one); the feed runs on its own pinned
//! core (the last one, unless told), as it would in production. The
//! `exchange` stage is the wire latency: from the simulator's send stamp,
//! taken just before the TLS write, to the feed's read, on the same TSC.

mod faults;
pub mod trade;

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tickwire_net::{Config as NetConfig, PollMode, TlsConfig};
use tickwire_sim::{SimConfig, SimInstrument, Simulator, Venue};
use tickwire_testkit::proxy::Proxy;
use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics, Report};
use tickwire_venues::InstrumentSpec;
use tickwire_venues::book::Side;
use tickwire_venues::plan::Channels;

use crate::live::{
    Feed, FeedStats, LineSetup, Sinks, VenueSetup, VenueStats, WireStamps, WireStream,
};
use crate::mirror::Mirrors;
use crate::{sink, threads};

/// What the demo does.
#[derive(Clone, Debug)]
pub struct DemoConfig {
    /// How long the feed runs.
    pub duration: Duration,
    /// Market steps per second, over all venues (each ~1.6 messages).
    pub rate: u32,
    /// Steps the simulator sends back to back, in one write.
    pub burst: u32,
    /// Make this many market steps ahead of time and send them as fast as
    /// the feed takes them (`burst` to a write): the feed's ceiling. The
    /// run ends when they have all arrived (or at `duration`). The plain
    /// demo only.
    pub pregenerate: Option<usize>,
    /// With `pregenerate`: the simulator sends only this many of its
    /// messages and holds the rest until the run ends
    /// ([`SimConfig::script_hold`]), so the run misses its deadline on any
    /// machine: a test's way to see a run cut short said and failed.
    pub hold_after: Option<usize>,
    /// Pin the feed to this core (default: the last one).
    pub core: Option<usize>,
    /// Spin on the sockets instead of blocking in epoll.
    pub busy_poll: bool,
    /// Where the latency log goes.
    pub hlog: PathBuf,
    /// Also write the SVG plot (next to the log).
    pub svg: bool,
    /// The venues to simulate; empty: the plain demo (Binance spot).
    pub venues: Vec<Venue>,
    /// Inject faults in turn on every venue.
    pub faults: bool,
    /// Levels each book shows (the plain demo: 1000).
    pub depth: usize,
    /// The REST request weight a minute the simulated venues allow
    /// (`None`: each venue's documented limit).
    pub rest_weight_limit: Option<u32>,
    /// The simulated venues end every connection this long after it
    /// opened, and the feed replaces each before then (make-before-break).
    pub lifetime: Option<Duration>,
    /// A standby line beside every connection (straight to the
    /// simulator: with `faults`, the faults hit the main line only).
    pub standby: bool,
    /// The plain demo's market in Binance spot's SBE streams
    /// (`binance-spot-sbe`: binary frames, the same steps) instead of its
    /// JSON ones.
    pub sbe: bool,
}

impl Default for DemoConfig {
    fn default() -> DemoConfig {
        DemoConfig {
            duration: Duration::from_secs(10),
            rate: 20_000,
            burst: 1,
            pregenerate: None,
            hold_after: None,
            core: None,
            busy_poll: false,
            hlog: PathBuf::from("tickwire-demo.hlog"),
            svg: true,
            venues: Vec::new(),
            faults: false,
            depth: 20,
            rest_weight_limit: None,
            lifetime: None,
            sbe: false,
            standby: false,
        }
    }
}

impl DemoConfig {
    /// Refuses what the demo could not run as asked, before anything is
    /// made: a core this process may not use, a venue's REST weight limit
    /// the feed's own configuration would refuse (too small for its
    /// snapshots: the books would never be valid).
    pub fn check(&self) -> Result<(), String> {
        if let Some(core) = self.core {
            let cores = threads::cores();
            if !cores.contains(&core) {
                return Err(format!(
                    "--core {core}: not available (this process may use {cores:?})"
                ));
            }
        }
        if let Some(limit) = self.rest_weight_limit {
            for venue in self.simulated() {
                let specs: Vec<InstrumentSpec> = self
                    .instruments(venue)
                    .iter()
                    .map(|i| self.spec(venue, i))
                    .collect();
                if let Some(problem) =
                    crate::live::rest_limit_problem(venue, &specs, Channels::default(), Some(limit))
                {
                    return Err(format!(
                        "--rest-weight-limit, {}'s: {problem} (the same value is refused as \
                         `rest_weight_limit` in a configuration file)",
                        venue.name()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The venues simulated: those given, or the plain demo's one.
    fn simulated(&self) -> Vec<Venue> {
        if self.venues.is_empty() {
            vec![if self.sbe {
                Venue::BinanceSpotSbe
            } else {
                Venue::BinanceSpot
            }]
        } else {
            self.venues.clone()
        }
    }

    /// A simulated venue's instruments.
    fn instruments(&self, venue: Venue) -> Vec<SimInstrument> {
        if self.venues.is_empty() {
            vec![SimInstrument::btcusdt(), SimInstrument::ethusdt()]
        } else {
            SimInstrument::pair(venue)
        }
    }

    /// The feed's instrument for a simulated one: the venue's default
    /// scales, which hold whatever it sends (the plain demo: the
    /// instrument's own), and the book depth shown.
    fn spec(&self, venue: Venue, i: &SimInstrument) -> InstrumentSpec {
        let plain = self.venues.is_empty();
        let (ps, ss) = if plain {
            (i.price_scale, i.size_scale)
        } else {
            venue.default_scales()
        };
        let depth = if plain { 1000 } else { self.depth };
        InstrumentSpec::new(
            &i.symbol,
            ps.max(i.price_scale),
            ss.max(i.size_scale),
            depth,
        )
    }
}

/// One venue's part of the demo.
#[derive(Clone, Debug)]
pub struct VenueSummary {
    /// The venue's name.
    pub name: String,
    /// `books valid X/Y, N gaps, N resyncs, reconnects N, rejections N`.
    pub counts: String,
    /// Books valid at the end, of how many.
    pub books_valid: (u64, u64),
    /// Gaps.
    pub gaps: u64,
    /// Messages received.
    pub messages: u64,
    /// With faults: how many were injected, and recovered from.
    pub faults: Option<(u64, u64)>,
    /// The faults not recovered from.
    pub failed: Vec<&'static str>,
    /// Whether every book, as the feed's events describe it, equals the
    /// simulator's at the end, level for level.
    pub books_equal: bool,
    /// Connections the simulator ended at their lifetime (`--lifetime`):
    /// each one the feed did not replace in time.
    pub ended_by_venue: u64,
}

impl VenueSummary {
    /// The venue's summary line: its name, a colon, its counts.
    pub fn line(&self) -> String {
        let mut line = format!("{}: {}, {} messages", self.name, self.counts, self.messages);
        if let Some((injected, recovered)) = self.faults {
            line.push_str(&format!(
                ", faults injected {injected}, recovered {recovered}"
            ));
            if !self.failed.is_empty() {
                line.push_str(&format!(" (not: {})", self.failed.join(", ")));
            }
        }
        if self.ended_by_venue > 0 {
            line.push_str(&format!(
                ", connections ended by the venue {}",
                self.ended_by_venue
            ));
        }
        line.push_str(&format!(
            ", books equal to the simulator: {}",
            if self.books_equal { "yes" } else { "no" }
        ));
        line
    }
}

/// What the demo measured.
#[derive(Clone, Debug)]
pub struct DemoSummary {
    /// Messages the feed received.
    pub messages: u64,
    /// Events it emitted.
    pub events: u64,
    /// Books valid at the end.
    pub books_valid: u64,
    /// Books in all.
    pub books: u64,
    /// Gaps, reconnects and undecodable messages (all should be 0).
    pub gaps: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Undecodable messages.
    pub decode_errors: u64,
    /// Messages whose simulator send stamp the feed found: those the
    /// `exchange` stage measured (the wire, send to read), and only those.
    pub wire_stamped: u64,
    /// How long the feed ran.
    pub elapsed: Duration,
    /// The percentile table of every stage.
    pub table: String,
    /// The core the feed ran on.
    pub core: usize,
    /// With `pregenerate`: messages per second from the first message to
    /// the last (both books valid throughout, or `books_valid` says not);
    /// `None` if the demo, looking every 2 ms, saw them all at once.
    pub throughput: Option<f64>,
    /// With `pregenerate`: the feed thread's CPU time over the same span.
    pub feed_cpu: Option<FeedCpu>,
    /// With `pregenerate`: the simulator sent its whole market and the
    /// feed read every message of it (the run ended by itself, not at
    /// its deadline nor stopped). Always false without.
    pub all_arrived: bool,
    /// The simulators' mean message payload, in bytes (what a message
    /// rate is worth on the wire).
    pub mean_payload: u64,
    /// Each simulated venue's line (`venues` given).
    pub venues: Vec<VenueSummary>,
}

/// The feed thread's CPU time from the first message of a pregenerated
/// market to the last. The rate measured is the feed's ceiling only when
/// the feed thread was on its core all along: below that it waited for
/// the simulator or was pushed off its core by the machine's other
/// threads, and `per_message_ns` is the better measure of the feed (its
/// own ceiling is a second over it).
#[derive(Clone, Copy, Debug)]
pub struct FeedCpu {
    /// The feed thread's CPU time a message, in nanoseconds (reads, TLS,
    /// frames, decoding, books, stamps and the sinks' queue).
    pub per_message_ns: f64,
    /// The share of the span the feed thread was on a core (1.0: all of
    /// it). With `busy_poll` it spins, always on its core, and neither
    /// this nor `per_message_ns` says anything the rate does not.
    pub busy: f64,
}

/// A venue's simulator, the proxy in front of it (with faults), and where
/// its instruments are among the feed's.
struct Simulated {
    name: String,
    sim: Simulator,
    proxy: Option<Proxy>,
    schedule: Option<faults::Schedule>,
    /// The feed's global id of its first instrument, and how many.
    first: usize,
    count: usize,
    /// What a simulator's price and size are multiplied by to be at the
    /// feed's scales, by instrument.
    scales: Vec<(i64, i64)>,
}

/// Runs the demo; `status` gets one line a second (a line per venue with
/// `venues`). Stops early when `stop` is set (SIGINT, SIGTERM), still
/// flushing everything.
pub fn run(
    config: &DemoConfig,
    stop: &Arc<AtomicBool>,
    mut status: impl FnMut(&str),
) -> io::Result<DemoSummary> {
    let core = match config.core {
        Some(c) => c,
        None => threads::last_core().ok_or_else(|| io::Error::other("no CPU cores found"))?,
    };
    config.check().map_err(io::Error::other)?;
    let plain = config.venues.is_empty();
    let venues = config.simulated();
    let (tls, ca) = tickwire_sim::self_signed().map_err(io::Error::other)?;
    // The market threads on another core than the feed's, if there is one.
    let sim_core = threads::cores().into_iter().find(|&c| c != core);
    let rate = (config.rate / venues.len() as u32).max(1);
    let mut sims = Vec::new();
    let mut setups = Vec::new();
    let mut first = 0;
    for &venue in &venues {
        let instruments = config.instruments(venue);
        let sim = Simulator::start(SimConfig {
            venue,
            tls: Some(tls.clone()),
            instruments: instruments.clone(),
            rate,
            burst: config.burst,
            script: config
                .pregenerate
                .filter(|_| plain)
                .map(|steps| Arc::new(tickwire_sim::pregenerate(venue, &instruments, steps, 1, 3))),
            core: sim_core,
            rest_weight_limit: config.rest_weight_limit,
            max_lifetime: config.lifetime,
            script_hold: config.hold_after,
            ..SimConfig::default()
        })?;
        let proxy = if config.faults {
            Some(Proxy::start(sim.addr())?)
        } else {
            None
        };
        let ws_port = proxy
            .as_ref()
            .map_or(sim.addr().port(), |p| p.addr().port());
        let name = if plain {
            "sim".to_owned()
        } else {
            venue.name().to_owned()
        };
        let specs: Vec<InstrumentSpec> =
            instruments.iter().map(|i| config.spec(venue, i)).collect();
        let scales = specs
            .iter()
            .zip(&instruments)
            .map(|(spec, i)| {
                let up = |to: u8, from: u8| 10i64.pow(u32::from(to - from));
                (
                    up(spec.price_scale, i.price_scale),
                    up(spec.size_scale, i.size_scale),
                )
            })
            .collect();
        // The simulator takes any key where its venue needs one.
        let api_key = crate::live::api_key::needed(venue, &specs, Channels::default())
            .then(|| crate::live::ApiKey::Given("demo".to_owned()));
        setups.push(VenueSetup {
            name: name.clone(),
            venue,
            instruments: specs,
            channels: Channels::default(),
            endpoint: Some(format!("wss://localhost:{ws_port}")),
            rest: Some(format!("https://localhost:{}", sim.addr().port())),
            rest_weight_limit: None,
            lines: LineSetup {
                standby: config.standby,
                standby_endpoint: Some(format!("wss://localhost:{}", sim.addr().port())),
                max_lifetime: config.lifetime,
            },
            api_key,
        });
        sims.push(Simulated {
            name,
            schedule: config
                .faults
                .then(|| faults::Schedule::new(venue, Instant::now(), config.standby)),
            sim,
            proxy,
            first,
            count: instruments.len(),
            scales,
        });
        first += instruments.len();
    }
    let mut trust = TlsConfig::empty();
    trust
        .add_ca_pem(ca.as_bytes())
        .map_err(|e| io::Error::other(e.to_string()))?;
    let metrics = Metrics::new(HistogramConfig::default());
    let exporter = metrics.export(ExportConfig {
        interval: Duration::from_secs(1),
        hlog: Some(config.hlog.clone()),
        ..ExportConfig::default()
    })?;
    // The wire stamps: every simulator's, on one board. The plain demo's
    // one simulator by symbol; with several venues (whose symbols repeat)
    // by `venue/symbol`.
    let stamps = {
        let mut symbols = Vec::new();
        let mut boards = Vec::new();
        for (k, setup) in setups.iter().enumerate() {
            for (n, i) in setup.instruments.iter().enumerate() {
                symbols.push(match plain {
                    true => i.symbol.clone(),
                    false => format!("{}/{}", setup.name, i.symbol),
                });
                boards.push((k, n));
            }
        }
        let board = Boards {
            boards: sims.iter().map(|s| s.sim.stamps()).collect(),
            instruments: boards,
        };
        (Arc::new(board) as Arc<dyn WireStamps>, symbols)
    };
    let net = NetConfig {
        send_rate: if plain { None } else { Some(10.0) },
        poll_mode: if config.busy_poll {
            PollMode::BusyRead
        } else {
            PollMode::Blocking
        },
        // Faults: a stalled connection is noticed within seconds.
        ping_interval: Some(Duration::from_secs(if config.faults { 1 } else { 15 })),
        pong_timeout: Duration::from_secs(if config.faults { 3 } else { 10 }),
        handshake_timeout: Duration::from_secs(5),
        ..NetConfig::default()
    };
    let (queue, events) = sink::queue(1 << 20);
    let sinks = Sinks {
        queue: (!plain).then_some(queue),
        ..Sinks::default()
    };
    let feed_stop = Arc::new(AtomicBool::new(false));
    let (stats_tx, stats_rx) = std::sync::mpsc::channel::<Arc<FeedStats>>();
    let feed = {
        let feed_stop = Arc::clone(&feed_stop);
        let metrics = metrics.clone();
        thread::Builder::new()
            .name("tickwire-feed".into())
            .spawn(move || -> io::Result<()> {
                threads::pin(core)?;
                let (board, symbols) = stamps;
                let feed = setups
                    .into_iter()
                    .fold(Feed::builder(), crate::FeedBuilder::setup)
                    .check_instruments(false)
                    .net(net)
                    .tls(trust)
                    .metrics(metrics.clone())
                    .sinks(sinks)
                    .send_stamps(board, symbols)
                    .build()
                    .map_err(|e| io::Error::other(e.to_string()))?;
                let _ = stats_tx.send(feed.stats());
                feed.run(&feed_stop, Duration::from_secs(1))?;
                Ok(())
            })?
    };
    let stats = match stats_rx.recv() {
        Ok(s) => s,
        Err(_) => {
            return Err(feed
                .join()
                .map_err(|_| io::Error::other("the feed thread panicked"))?
                .err()
                .unwrap_or_else(|| io::Error::other("the feed did not start")));
        }
    };
    let mut mirrors = Mirrors::new(first);
    // With a pregenerated market: the feed thread's CPU time when the
    // first message was seen and when the last was, to say how much of
    // that span it was on its core.
    let feed_clock = config
        .pregenerate
        .and_then(|_| threads::CpuClock::of(&feed));
    let mut cpu_first: Option<Duration> = None;
    let mut cpu_last: Option<Duration> = None;
    let started = Instant::now();
    let mut last = (0u64, Instant::now());
    let mut last_by_venue = vec![0u64; sims.len()];
    // With a pregenerated market: when the first and the last message
    // were seen (looking every 2 ms), and how many had come by then.
    let mut first_seen: Option<(Instant, u64)> = None;
    let mut last_seen = (0u64, Instant::now());
    let mut all_arrived = false;
    while started.elapsed() < config.duration && !stop.load(Ordering::Relaxed) {
        thread::sleep(Duration::from_millis(if config.pregenerate.is_some() {
            2
        } else {
            100
        }));
        for e in events.try_iter() {
            mirrors.apply(&e);
        }
        let now = Instant::now();
        for s in &mut sims {
            if let (Some(schedule), Some(proxy)) = (s.schedule.as_mut(), s.proxy.as_ref()) {
                let v = sims_index(&stats, &s.name);
                if let Some(line) = schedule.step(now, &s.sim, proxy, &stats.venues[v], s.count) {
                    status(&line);
                }
            }
        }
        if config.pregenerate.is_some() {
            let now = FeedStats::get(&stats.messages);
            if now > 0 && first_seen.is_none() {
                first_seen = Some((Instant::now(), now));
                cpu_first = feed_clock.and_then(|c| c.used());
            }
            if now != last_seen.0 {
                last_seen = (now, Instant::now());
                cpu_last = feed_clock.and_then(|c| c.used());
            }
            // Everything sent has arrived: the simulator counts every
            // message it wrote, the subscription's answer too, as the feed
            // counts every message it read.
            if sims[0].sim.finished() && now >= sims[0].sim.stats().messages {
                all_arrived = true;
                break;
            }
        }
        if last.1.elapsed() >= Duration::from_secs(1) {
            let secs = last.1.elapsed().as_secs_f64();
            let messages = FeedStats::get(&stats.messages);
            let rate = (messages - last.0) as f64 / secs;
            last = (messages, Instant::now());
            status(&format!(
                "{:>4.1}s  {:>9.0} msg/s  {:>10} messages  books valid {}/{}  gaps {}  reconnects {}  wire-stamped {}",
                started.elapsed().as_secs_f64(),
                rate,
                messages,
                FeedStats::get(&stats.books_valid),
                first,
                FeedStats::get(&stats.gaps),
                FeedStats::get(&stats.reconnects),
                FeedStats::get(&stats.wire_stamped),
            ));
            if !plain {
                for (k, s) in sims.iter().enumerate() {
                    let v = &stats.venues[sims_index(&stats, &s.name)];
                    let m = FeedStats::get(&v.messages);
                    let mut line = format!(
                        "  {}: {}, {:.0} msg/s",
                        s.name,
                        v.line(),
                        (m - last_by_venue[k]) as f64 / secs
                    );
                    last_by_venue[k] = m;
                    if let Some(f) = &s.schedule {
                        line.push_str(&format!(
                            ", faults injected {}, recovered {}",
                            f.injected, f.recovered
                        ));
                    }
                    status(&line);
                }
            }
        }
    }
    let elapsed = started.elapsed();
    // The messages that came between the first look that saw one and the
    // last look that saw more, over that span (none if one look saw them
    // all). The span ends at a look, up to 2 ms after the last message:
    // the rate and the share on a core are low by at most that much of
    // it (under 1 % at a million steps).
    let span = first_seen
        .filter(|&(_, before)| last_seen.0 > before)
        .map(|(t, before)| (last_seen.1.duration_since(t), last_seen.0 - before));
    let throughput = span.map(|(wall, n)| n as f64 / wall.as_secs_f64().max(1e-9));
    let feed_cpu = match (span, cpu_first, cpu_last) {
        (Some((wall, n)), Some(from), Some(to)) => {
            let cpu = to.saturating_sub(from);
            Some(FeedCpu {
                per_message_ns: cpu.as_nanos() as f64 / n as f64,
                busy: cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9),
            })
        }
        _ => None,
    };
    let venues = if plain {
        Vec::new()
    } else {
        settle_and_compare(
            &mut sims,
            &stats,
            &events,
            &mut mirrors,
            config.depth,
            &mut status,
        )
    };
    // No fault is under way any more, whatever the schedules were doing.
    for s in &sims {
        crate::live::injected::set(&s.name, None);
    }
    let books_valid = FeedStats::get(&stats.books_valid);
    feed_stop.store(true, Ordering::Relaxed);
    feed.join()
        .map_err(|_| io::Error::other("the feed thread panicked"))??;
    let (mut sent, mut bytes) = (0, 0);
    for s in sims {
        let st = s.sim.stop();
        (sent, bytes) = (sent + st.messages, bytes + st.bytes);
    }
    exporter.finish()?;
    let report = Report::read(&config.hlog)?;
    if config.svg {
        report.write_svg(&config.hlog.with_extension("svg"))?;
    }
    Ok(DemoSummary {
        messages: FeedStats::get(&stats.messages),
        events: FeedStats::get(&stats.events),
        books_valid,
        books: first as u64,
        gaps: FeedStats::get(&stats.gaps),
        reconnects: FeedStats::get(&stats.reconnects),
        decode_errors: FeedStats::get(&stats.decode_errors),
        wire_stamped: FeedStats::get(&stats.wire_stamped),
        elapsed,
        table: report.table(),
        core,
        throughput,
        feed_cpu,
        all_arrived,
        mean_payload: bytes.checked_div(sent).unwrap_or(0),
        venues,
    })
}

/// Several simulators' send stamps as one board: the board's instrument
/// `k` is simulator `instruments[k].0`'s instrument `instruments[k].1`.
struct Boards {
    boards: Vec<Arc<tickwire_sim::SendStamps>>,
    instruments: Vec<(usize, usize)>,
}

impl WireStamps for Boards {
    fn sent(&self, instrument: usize, stream: WireStream, id: u64) -> Option<u64> {
        // Id 0 is a message without an id (Kraken's books): its slot holds
        // whichever such message went last, not this one's stamp.
        if id == 0 {
            return None;
        }
        let &(k, n) = self.instruments.get(instrument)?;
        self.boards.get(k)?.sent(n, stream, id)
    }
}

/// The feed's index of the venue named `name`.
fn sims_index(stats: &FeedStats, name: &str) -> usize {
    // The demo sets up a feed venue for each simulator it starts.
    stats
        .venues
        .iter()
        .position(|v| v.name == name)
        .expect("every simulated venue is one of the feed's")
}

/// The end of a run with several venues: faults under way are waited out
/// (up to their deadline), the markets paused, every message let in, and
/// each venue's books, as the events describe them, compared with its
/// simulator's.
fn settle_and_compare(
    sims: &mut [Simulated],
    stats: &FeedStats,
    events: &sink::Events,
    mirrors: &mut Mirrors,
    depth: usize,
    status: &mut impl FnMut(&str),
) -> Vec<VenueSummary> {
    let deadline = Instant::now() + Duration::from_secs(40);
    while Instant::now() < deadline
        && sims
            .iter()
            .any(|s| s.schedule.as_ref().is_some_and(|f| f.busy()))
    {
        thread::sleep(Duration::from_millis(100));
        for e in events.try_iter() {
            mirrors.apply(&e);
        }
        let now = Instant::now();
        for s in sims.iter_mut() {
            if let (Some(schedule), Some(proxy)) = (s.schedule.as_mut(), s.proxy.as_ref())
                && schedule.busy()
            {
                let v = sims_index(stats, &s.name);
                if let Some(line) = schedule.step(now, &s.sim, proxy, &stats.venues[v], s.count) {
                    status(&line);
                }
            }
        }
    }
    for s in sims.iter() {
        s.sim.pause(true);
    }
    // Paused, the simulators' books stand still, and the events rebuild
    // them once everything sent has come through (the proxies, the feed's
    // thread, the queue). Quiet (no event for 500 ms, heartbeats aside)
    // is the first sign; a thread starved for longer than that is waited
    // for, up to 30 s, before a venue is said to differ.
    let equal = |s: &Simulated, mirrors: &Mirrors| {
        (0..s.count).all(|n| {
            let id = s.first + n;
            let Some((_, bids, asks)) = s.sim.book(n, depth) else {
                return false;
            };
            // The simulator's levels at the feed's scales.
            let (p, q) = s.scales[n];
            let at = |levels: Vec<(i64, i64)>| -> Vec<(i64, i64)> {
                levels
                    .into_iter()
                    .map(|(price, size)| (price * p, size * q))
                    .collect()
            };
            mirrors.levels(id, Side::Bid) == Some(at(bids))
                && mirrors.levels(id, Side::Ask) == Some(at(asks))
        })
    };
    let settled_by = Instant::now() + Duration::from_secs(30);
    loop {
        let mut last = (FeedStats::get(&stats.events), Instant::now());
        while last.1.elapsed() < Duration::from_millis(500) && Instant::now() < settled_by {
            thread::sleep(Duration::from_millis(20));
            for e in events.try_iter() {
                mirrors.apply(&e);
            }
            let now = FeedStats::get(&stats.events);
            if now != last.0 {
                last = (now, Instant::now());
            }
        }
        for e in events.try_iter() {
            mirrors.apply(&e);
        }
        if Instant::now() >= settled_by || sims.iter().all(|s| equal(s, mirrors)) {
            break;
        }
    }
    sims.iter()
        .map(|s| {
            let v: &VenueStats = &stats.venues[sims_index(stats, &s.name)];
            let books_equal = equal(s, mirrors);
            VenueSummary {
                name: s.name.clone(),
                counts: v.line(),
                books_valid: (FeedStats::get(&v.books_valid), v.books),
                gaps: FeedStats::get(&v.gaps),
                messages: FeedStats::get(&v.messages),
                faults: s.schedule.as_ref().map(|f| (f.injected, f.recovered)),
                failed: s
                    .schedule
                    .as_ref()
                    .map(|f| f.failed.clone())
                    .unwrap_or_default(),
                books_equal,
                ended_by_venue: s.sim.stats().expired_clients,
            }
        })
        .collect()
}
