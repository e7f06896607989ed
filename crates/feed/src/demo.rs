//! The offline demo: the exchange simulator and the feed in one process,
//! over real TLS on loopback, for a fixed time; a status line each second,
//! then the per-stage latency table, the `.hlog` and its SVG plot.
//!
//! The simulator's threads run unpinned; the feed runs on its own pinned
//! core (the last one, unless told), as it would in production. The
//! `exchange` stage is the wire latency: from the simulator's send stamp,
//! taken just before the TLS write, to the feed's read, on the same TSC.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tickwire_net::{Config as NetConfig, PollMode, TlsConfig};
use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics, Report};
use tickwire_venues::InstrumentSpec;
use tickwire_venues::plan::Channels;

use crate::live::{Feed, FeedStats, Sinks, VenueSetup};
use crate::replay::Venue;
use crate::sim::{self, SimConfig, SimInstrument, Simulator};
use crate::threads;

/// What the demo does.
#[derive(Clone, Debug)]
pub struct DemoConfig {
    /// How long the feed runs.
    pub duration: Duration,
    /// Simulator market steps per second (each ~1.6 messages).
    pub rate: u32,
    /// Steps the simulator sends back to back, in one write.
    pub burst: u32,
    /// Make this many market steps ahead of time and send them as fast as
    /// the feed takes them (`burst` to a write): the feed's ceiling. The
    /// run ends when they have all arrived (or at `duration`).
    pub pregenerate: Option<usize>,
    /// Pin the feed to this core (default: the last one).
    pub core: Option<usize>,
    /// Spin on the sockets instead of blocking in epoll.
    pub busy_poll: bool,
    /// Where the latency log goes.
    pub hlog: PathBuf,
    /// Also write the SVG plot (next to the log).
    pub svg: bool,
}

impl Default for DemoConfig {
    fn default() -> DemoConfig {
        DemoConfig {
            duration: Duration::from_secs(10),
            rate: 20_000,
            burst: 1,
            pregenerate: None,
            core: None,
            busy_poll: false,
            hlog: PathBuf::from("tickwire-demo.hlog"),
            svg: true,
        }
    }
}

/// What the demo measured.
#[derive(Clone, Debug)]
pub struct DemoSummary {
    /// Messages the feed received.
    pub messages: u64,
    /// Events it emitted.
    pub events: u64,
    /// Books valid at the end (of 2).
    pub books_valid: u64,
    /// Gaps, reconnects and undecodable messages (all should be 0).
    pub gaps: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Undecodable messages.
    pub decode_errors: u64,
    /// How long the feed ran.
    pub elapsed: Duration,
    /// The percentile table of every stage.
    pub table: String,
    /// The core the feed ran on.
    pub core: usize,
    /// With `pregenerate`: messages per second from the first message to
    /// the last (both books valid throughout, or `books_valid` says not).
    pub throughput: Option<f64>,
}

/// Runs the demo; `status` gets one line a second. Stops early when `stop`
/// is set (SIGINT, SIGTERM), still flushing everything.
pub fn run(
    config: &DemoConfig,
    stop: &Arc<AtomicBool>,
    mut status: impl FnMut(&str),
) -> io::Result<DemoSummary> {
    let core = match config.core {
        Some(c) => c,
        None => threads::last_core().ok_or_else(|| io::Error::other("no CPU cores found"))?,
    };
    let (tls, ca) = sim::self_signed().map_err(io::Error::other)?;
    let instruments = vec![SimInstrument::btcusdt(), SimInstrument::ethusdt()];
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        instruments: instruments.clone(),
        rate: config.rate,
        burst: config.burst,
        pregenerated: config
            .pregenerate
            .map(|steps| Arc::new(sim::pregenerate(&instruments, steps, 1, 3))),
        // The market thread on another core than the feed's, if there is one.
        core: threads::cores().into_iter().find(|&c| c != core),
        ..SimConfig::default()
    })?;
    let port = simulator.addr().port();
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
    let specs: Vec<InstrumentSpec> = instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 1000))
        .collect();
    let symbols: Vec<String> = instruments.iter().map(|i| i.symbol.clone()).collect();
    let stamps = simulator.stamps();
    let net = NetConfig {
        send_rate: None,
        poll_mode: if config.busy_poll {
            PollMode::BusyRead
        } else {
            PollMode::Blocking
        },
        ..NetConfig::default()
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
                let feed = Feed::new(
                    vec![VenueSetup {
                        name: "sim".into(),
                        venue: Venue::BinanceSpot,
                        instruments: specs,
                        channels: Channels::default(),
                        endpoint: Some(format!("wss://localhost:{port}")),
                        rest: Some(format!("https://localhost:{port}")),
                    }],
                    net,
                    &trust,
                    &metrics,
                    Sinks::default(),
                    Some((stamps, symbols)),
                    0,
                )
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
    let started = Instant::now();
    let mut last = (0u64, Instant::now());
    // With a pregenerated market: when the first and the last message came.
    let mut first_seen: Option<Instant> = None;
    let mut last_seen = (0u64, Instant::now());
    while started.elapsed() < config.duration && !stop.load(Ordering::Relaxed) {
        thread::sleep(Duration::from_millis(if config.pregenerate.is_some() {
            2
        } else {
            100
        }));
        if config.pregenerate.is_some() {
            let now = FeedStats::get(&stats.messages);
            if now > 0 && first_seen.is_none() {
                first_seen = Some(Instant::now());
            }
            if now != last_seen.0 {
                last_seen = (now, Instant::now());
            }
            // Everything sent has arrived (the subscription's answer aside).
            if simulator.finished() && now > simulator.stats().messages {
                break;
            }
        }
        if last.1.elapsed() >= Duration::from_secs(1) {
            let messages = FeedStats::get(&stats.messages);
            let rate = (messages - last.0) as f64 / last.1.elapsed().as_secs_f64();
            last = (messages, Instant::now());
            status(&format!(
                "{:>4.1}s  {:>9.0} msg/s  {:>10} messages  books valid {}/2  gaps {}  reconnects {}  wire-stamped {}",
                started.elapsed().as_secs_f64(),
                rate,
                messages,
                FeedStats::get(&stats.books_valid),
                FeedStats::get(&stats.gaps),
                FeedStats::get(&stats.reconnects),
                FeedStats::get(&stats.wire_stamped),
            ));
        }
    }
    let elapsed = started.elapsed();
    let throughput = first_seen
        .map(|t| last_seen.0 as f64 / last_seen.1.duration_since(t).as_secs_f64().max(1e-9));
    let books_valid = FeedStats::get(&stats.books_valid);
    feed_stop.store(true, Ordering::Relaxed);
    feed.join()
        .map_err(|_| io::Error::other("the feed thread panicked"))??;
    simulator.stop();
    exporter.finish()?;
    let report = Report::read(&config.hlog)?;
    if config.svg {
        report.write_svg(&config.hlog.with_extension("svg"))?;
    }
    Ok(DemoSummary {
        messages: FeedStats::get(&stats.messages),
        events: FeedStats::get(&stats.events),
        books_valid,
        gaps: FeedStats::get(&stats.gaps),
        reconnects: FeedStats::get(&stats.reconnects),
        decode_errors: FeedStats::get(&stats.decode_errors),
        elapsed,
        table: report.table(),
        core,
        throughput,
    })
}
