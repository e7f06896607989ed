//! `tickwire-feed run`: a checked [`FeedConfig`] brought to life. Sinks and
//! the metrics exporter first, then one pinned thread per `[[thread]]`,
//! each with its own driver and venues; every thread must be up (pinned,
//! prioritised, its feed built) before the run counts as started. On
//! `stop` every feed closes its connections, the recordings are finished,
//! the JSON Lines flushed and the last histogram interval written.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tickwire_net::{Config as NetConfig, TlsConfig};
use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics};

use crate::config::FeedConfig;
use crate::live::{
    Budget, Feed, FeedStats, NeverConnected, Sinks, VenueSetup, VenueStats, VenueStatus, plans,
};
use crate::recording::{self, Header};
use crate::sink::Publisher;
use crate::{FeedBuilder, FeedId};
use crate::{shm, sink, threads};

/// Why a run could not start or ended badly.
#[derive(Debug)]
pub enum RunError {
    /// A file, socket or thread could not be set up.
    Setup(String),
    /// A feed thread failed while running.
    Feed(String),
    /// No venue ever connected: past the configuration's
    /// `connect_deadline_s`, or by the stop. Each venue, and why (the
    /// binary exits 3).
    NeverConnected(NeverConnected),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Setup(e) => write!(f, "cannot start: {e}"),
            RunError::Feed(e) => write!(f, "a feed thread failed: {e}"),
            RunError::NeverConnected(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// Messages received over all threads.
    pub messages: u64,
    /// Events emitted.
    pub events: u64,
    /// Events the JSON Lines sink dropped for being behind.
    pub dropped: u64,
    /// JSON lines written.
    pub lines: u64,
    /// Gaps, reconnects, undecodable messages.
    pub gaps: u64,
    /// Reconnects of connections that had opened.
    pub reconnects: u64,
    /// Connection attempts that failed before they opened.
    pub connect_failures: u64,
    /// The venues that never connected, each with its newest failure's
    /// cause (some others did, or the run would have ended with
    /// [`RunError::NeverConnected`]).
    pub never_connected: Vec<(String, String)>,
    /// Undecodable messages.
    pub decode_errors: u64,
    /// Events Aeron took (`[sinks.aeron]`), over all threads.
    pub aeron_published: u64,
    /// Events the Aeron sink dropped: no subscriber, or back pressure.
    pub aeron_dropped: u64,
    /// How long it ran.
    pub elapsed: Duration,
}

/// How long a venue's newest failure stays on the status line.
const LAST_FAILURE_SHOWN: Duration = Duration::from_secs(60);

fn setup(what: &str, e: impl fmt::Display) -> RunError {
    RunError::Setup(format!("{what}: {e}"))
}

/// A venue's part of a status line: its newest failure while it is recent,
/// and "NEVER CONNECTED" while none of its connections has opened (its
/// failed attempts are not reconnects).
fn venue_status(v: &VenueStats, line: &mut String) {
    let never = v.status() == VenueStatus::NeverConnected;
    let recent = v
        .last_failure()
        .filter(|(_, ago)| *ago < LAST_FAILURE_SHOWN);
    if never {
        line.push_str(&format!(
            "  | {}: NEVER CONNECTED, {} failed attempts",
            v.name,
            FeedStats::get(&v.connect_failures)
        ));
        if let Some((cause, ago)) = recent {
            line.push_str(&format!(": {cause} ({}s ago)", ago.as_secs()));
        }
    } else if let Some((cause, ago)) = recent {
        line.push_str(&format!("  | {}: {cause} ({}s ago)", v.name, ago.as_secs()));
    }
}

/// What [`run`] will start for a configuration, as data: each thread's
/// placement, venues and memory, and each venue's connections
/// (`tickwire-feed run` prints it, and `run --check` stops there).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Plan {
    /// One per `[[thread]]`, in the configuration's order.
    pub threads: Vec<ThreadPlan>,
    /// One per `[[venue]]`, in the configuration's order.
    pub venues: Vec<VenuePlan>,
}

/// One feed thread of a [`Plan`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ThreadPlan {
    /// The core it is pinned to (`None`: unpinned).
    pub core: Option<usize>,
    /// Its `SCHED_FIFO` priority (`None`: the normal one).
    pub priority: Option<u8>,
    /// The names of the venues it runs.
    pub venues: Vec<String>,
    /// What it sets aside at start-up, and no more after (`None`: its
    /// venues' plans could not be made; [`run`] says why).
    pub memory: Option<Budget>,
}

/// One venue of a [`Plan`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct VenuePlan {
    /// Its name in the configuration.
    pub name: String,
    /// The venue it speaks to.
    pub venue: tickwire_venues::Venue,
    /// How many instruments it subscribes to.
    pub instruments: usize,
    /// How many connections carry them.
    pub connections: usize,
    /// Its endpoint, when the configuration names one.
    pub endpoint: Option<String>,
}

impl Plan {
    /// The plan of `config`, as [`FeedConfig::load`] made it.
    pub fn of(config: &FeedConfig) -> Plan {
        let threads = config
            .threads
            .iter()
            .map(|t| {
                let venues: Vec<VenueSetup> =
                    t.venues.iter().map(|&v| config.venues[v].clone()).collect();
                let net = NetConfig {
                    poll_mode: config.poll,
                    ..NetConfig::default()
                };
                ThreadPlan {
                    core: t.core,
                    priority: t.priority,
                    venues: venues.iter().map(|v| v.name.clone()).collect(),
                    memory: Budget::of(&venues, &net).ok(),
                }
            })
            .collect();
        let venues = config
            .venues
            .iter()
            .map(|v| VenuePlan {
                name: v.name.clone(),
                venue: v.venue,
                instruments: v.instruments.len(),
                connections: plans(v.venue, &v.instruments, v.channels).map_or(0, |p| p.len()),
                endpoint: v.endpoint.clone(),
            })
            .collect();
        Plan { threads, venues }
    }
}

/// Runs `config` until `stop` is set; `status` gets a line a second. Past
/// the configuration's connect deadline with no venue ever connected, it
/// stops and returns [`RunError::NeverConnected`]; with some connected and
/// others not, it says so once (a warning through `log`) and runs on.
pub fn run(
    config: &FeedConfig,
    stop: &Arc<AtomicBool>,
    mut status: impl FnMut(&str),
) -> Result<RunSummary, RunError> {
    let mut tls = TlsConfig::webpki_roots();
    if let Some(ca) = &config.ca_file {
        tls.add_ca_file(ca)
            .map_err(|e| setup(&format!("tls.ca_file {}", ca.display()), e))?;
    }
    let metrics = Metrics::new(HistogramConfig::default());
    let exporter = metrics
        .export(ExportConfig {
            interval: Duration::from_millis(config.metrics.interval_ms),
            hlog: config.metrics.hlog.clone(),
            prometheus_port: config.metrics.prometheus_port,
            stderr: config.metrics.stderr,
            ..ExportConfig::default()
        })
        .map_err(|e| setup("metrics", e))?;

    // Instrument ids: thread by thread, venue by venue.
    let mut names = Vec::new();
    let mut firsts = Vec::new();
    for t in &config.threads {
        firsts.push(names.len() as u32);
        for &v in &t.venues {
            let venue = &config.venues[v];
            names.extend(venue.instruments.iter().map(|i| sink::Instrument {
                venue: venue.name.clone(),
                symbol: i.symbol.clone(),
                price_scale: i.price_scale,
                size_scale: i.size_scale,
            }));
        }
    }
    let (queue, writer) = match &config.sinks.jsonl {
        None => (None, None),
        Some(path) => {
            let out = if path.as_os_str() == "-" {
                sink::Output::Stdout
            } else {
                sink::Output::File {
                    path: path.clone(),
                    max_bytes: config.sinks.jsonl_max_bytes,
                }
            };
            let (publisher, events) = sink::queue(config.sinks.queue);
            let dropped = publisher.drop_counter();
            let writer = sink::spawn_json_lines(events, names.clone(), out, dropped)
                .map_err(|e| setup(&format!("sinks.jsonl {}", path.display()), e))?;
            (Some(publisher), Some(writer))
        }
    };
    let mut ring = match &config.sinks.shm {
        None => None,
        Some(path) => Some(
            shm::Writer::create(path, config.sinks.shm_capacity, &names)
                .map_err(|e| setup(&format!("sinks.shm {}", path.display()), e))?,
        ),
    };
    #[cfg(feature = "aeron")]
    let (aeron_client, mut aeron_publishers, aeron_stats) = aeron_sink(config, &names)?;
    let cal = tickwire_tsc::calibration();
    let mut feeds = Vec::new();
    let (ready_tx, ready_rx) = mpsc::channel::<Result<Arc<FeedStats>, String>>();
    let feed_stop = Arc::new(AtomicBool::new(false));
    for (n, t) in config.threads.iter().enumerate() {
        let recording = match &config.record {
            None => None,
            Some(r) => {
                let base = if config.threads.len() > 1 {
                    let mut p = r.path.clone().into_os_string();
                    p.push(format!(".t{n}"));
                    p.into()
                } else {
                    r.path.clone()
                };
                if let Some(dir) = r.path.parent()
                    && !dir.as_os_str().is_empty()
                {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| setup(&format!("record.path {}", dir.display()), e))?;
                }
                let mut w = recording::Writer::create(
                    base,
                    r.max_file_bytes,
                    Header {
                        created_unix_ns: cal.to_unix_ns(cal.clock().now()),
                        ticks_per_second: cal.ticks_per_second(),
                    },
                )
                .map_err(|e| setup("record.path", e))?;
                w.sync_every(r.sync_interval)
                    .map_err(|e| setup("record.sync_ms", e))?;
                Some(w)
            }
        };
        #[allow(unused_mut)]
        let mut sinks = Sinks {
            queue: queue.clone(),
            ring: ring.take(),
            recording,
            ..Sinks::default()
        };
        #[cfg(feature = "aeron")]
        {
            sinks.aeron = aeron_publishers.pop();
        }
        let venues: Vec<_> = t.venues.iter().map(|&v| config.venues[v].clone()).collect();
        let net = NetConfig {
            poll_mode: config.poll,
            ..NetConfig::default()
        };
        let (core, priority, first) = (t.core, t.priority, firsts[n]);
        let tls = tls.clone();
        let metrics = metrics.clone();
        let ready = ready_tx.clone();
        let feed_stop = Arc::clone(&feed_stop);
        let handle = thread::Builder::new()
            .name(format!("tickwire-feed-{n}"))
            .spawn(move || -> Result<Sinks, String> {
                let started = (|| {
                    if let Some(core) = core {
                        threads::pin(core).map_err(|e| format!("thread[{n}]: {e}"))?;
                    }
                    if let Some(p) = priority {
                        threads::fifo(p).map_err(|e| format!("thread[{n}]: {e}"))?;
                    }
                    // The instruments were checked before the run started.
                    venues
                        .into_iter()
                        .fold(Feed::builder(), FeedBuilder::setup)
                        .check_instruments(false)
                        .net(net)
                        .tls(tls)
                        .metrics(metrics)
                        .sinks(sinks)
                        .first_id(FeedId(first))
                        .build()
                        .map_err(|e| format!("thread[{n}]: {e}"))
                })();
                let feed = match started {
                    Ok(f) => f,
                    Err(e) => {
                        let _ = ready.send(Err(e.clone()));
                        return Err(e);
                    }
                };
                let _ = ready.send(Ok(feed.stats()));
                feed.run(&feed_stop, Duration::from_secs(2))
                    .map_err(|e| format!("thread[{n}]: {e}"))
            })
            .map_err(|e| setup("a feed thread", e))?;
        feeds.push(handle);
    }
    drop(ready_tx);
    let sink_dropped = queue.as_ref().map(Publisher::drop_counter);
    drop(queue);
    let mut stats = Vec::new();
    let mut failure = None;
    let mut never_connected = None;
    for _ in 0..feeds.len() {
        match ready_rx.recv() {
            Ok(Ok(s)) => stats.push(s),
            Ok(Err(e)) => {
                failure = Some(e);
                break;
            }
            Err(_) => {
                failure = Some("a feed thread ended before starting".into());
                break;
            }
        }
    }
    // The feeds' counters on the Prometheus page (if served), from the
    // next export on.
    if failure.is_none() {
        let feeds = stats.clone();
        let sink_dropped = sink_dropped.clone();
        metrics.add_page(Arc::new(move |out: &mut String| {
            FeedStats::prometheus(&feeds, sink_dropped.as_deref(), out);
        }));
    }
    let started = Instant::now();
    if failure.is_none() {
        let mut last = (0u64, Instant::now());
        let mut deadline = config.connect_deadline;
        while !stop.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_millis(50));
            if feeds.iter().any(|f| f.is_finished()) {
                break;
            }
            if let Some(d) = deadline
                && started.elapsed() >= d
            {
                deadline = None;
                let never = NeverConnected::of(stats.iter().flat_map(|s| s.venues.iter()), d);
                let all = stats.iter().map(|s| s.venues.len()).sum::<usize>();
                if never.venues.len() == all {
                    never_connected = Some(never);
                    break;
                }
                for (venue, cause) in &never.venues {
                    crate::live::tickwire_log(format_args!(
                        "VENUE {venue} HAS NOT CONNECTED in {} s ({}); the other venues run \
                         on, and it keeps trying",
                        d.as_secs(),
                        if cause.is_empty() {
                            "no attempt ended yet"
                        } else {
                            cause
                        }
                    ));
                }
            }
            if last.1.elapsed() >= Duration::from_secs(1) {
                let sum = |f: fn(&FeedStats) -> &std::sync::atomic::AtomicU64| -> u64 {
                    stats.iter().map(|s| FeedStats::get(f(s))).sum()
                };
                let messages = sum(|s| &s.messages);
                let rate = (messages - last.0) as f64 / last.1.elapsed().as_secs_f64();
                last = (messages, Instant::now());
                let mut line = format!(
                    "{:>7.1}s  {:>9.0} msg/s  {:>11} messages  books valid {}/{}  gaps {}  reconnects {}  failed connects {}  undecodable {}",
                    started.elapsed().as_secs_f64(),
                    rate,
                    messages,
                    sum(|s| &s.books_valid),
                    names.len(),
                    sum(|s| &s.gaps),
                    sum(|s| &s.reconnects),
                    sum(|s| &s.connect_failures),
                    sum(|s| &s.decode_errors),
                );
                // Each venue's newest failure, while it is recent, and
                // each that never connected.
                for v in stats.iter().flat_map(|s| s.venues.iter()) {
                    venue_status(v, &mut line);
                }
                status(&line);
            }
        }
    }
    let elapsed = started.elapsed();
    feed_stop.store(true, Ordering::Relaxed);
    let mut summary = RunSummary {
        elapsed,
        ..RunSummary::default()
    };
    for f in feeds {
        match f.join() {
            #[allow(unused_mut)]
            Ok(Ok(mut sinks)) => {
                #[cfg(feature = "aeron")]
                if let Some(p) = sinks.aeron.take() {
                    let id = p.id();
                    if !p.finish(AERON_DRAIN) {
                        log::info!(
                            "aeron sink (publisher {id:08x}): the media driver was still lingering on the publication {} s after the feed stopped (no unicast receiver confirmed the end: multicast, or none connected); stopping anyway",
                            AERON_DRAIN.as_secs()
                        );
                    }
                }
                if let Some(rec) = sinks.recording
                    && let Err(e) = rec.finish()
                    && failure.is_none()
                {
                    failure = Some(format!("finishing the recording: {e}"));
                }
            }
            Ok(Err(e)) => {
                failure.get_or_insert(e);
            }
            Err(_) => {
                failure.get_or_insert("a feed thread panicked".into());
            }
        }
    }
    #[cfg(feature = "aeron")]
    {
        for s in &aeron_stats {
            summary.aeron_published += s.published.load(Ordering::Relaxed);
            summary.aeron_dropped += s.dropped();
        }
        // Its publications are closed (their threads' sinks dropped): the
        // client closes, then an embedded driver stops.
        drop(aeron_client);
    }
    // One counter, shared by every thread's publisher.
    summary.dropped = sink_dropped.map_or(0, |d| d.load(Ordering::Relaxed));
    // Once the feed threads have ended: what their last polls and the
    // shutdown's closes did counts too.
    for s in &stats {
        summary.messages += FeedStats::get(&s.messages);
        summary.events += FeedStats::get(&s.events);
        summary.gaps += FeedStats::get(&s.gaps);
        summary.reconnects += FeedStats::get(&s.reconnects);
        summary.connect_failures += FeedStats::get(&s.connect_failures);
        summary.decode_errors += FeedStats::get(&s.decode_errors);
    }
    if let Some(w) = writer {
        match w.join() {
            Ok(Ok(lines)) => summary.lines = lines,
            Ok(Err(e)) => {
                failure.get_or_insert(format!("writing JSON lines: {e}"));
            }
            Err(_) => {
                failure.get_or_insert("the JSON Lines thread panicked".into());
            }
        }
    }
    if let Err(e) = exporter.finish() {
        failure.get_or_insert(format!("writing the latency log: {e}"));
    }
    // Not given up at the deadline: stopped before it, or some venue
    // connected.
    if never_connected.is_none() {
        let never = NeverConnected::of(stats.iter().flat_map(|s| s.venues.iter()), elapsed);
        let all = stats.iter().map(|s| s.venues.len()).sum::<usize>();
        if failure.is_none() && all > 0 && never.venues.len() == all {
            // Nothing ever connected: not a success either.
            never_connected = Some(never);
        } else {
            summary.never_connected = never.venues;
        }
    }
    if let Some(never) = never_connected
        && failure.is_none()
    {
        return Err(RunError::NeverConnected(never));
    }
    match failure {
        None => Ok(summary),
        Some(e) if stats.len() < config.threads.len() => Err(RunError::Setup(e)),
        Some(e) => Err(RunError::Feed(e)),
    }
}

/// How long a stopping feed waits for its media driver to finish with
/// each publication (see `aeron::Publisher::finish`): repairs at the very
/// end take milliseconds; a multicast publication lingers the whole time.
#[cfg(feature = "aeron")]
const AERON_DRAIN: Duration = Duration::from_secs(2);

/// The Aeron client and one publisher for each feed thread (popped from
/// the back, so in reverse), with their counters; none without
/// `[sinks.aeron]`.
#[cfg(feature = "aeron")]
#[allow(clippy::type_complexity)]
fn aeron_sink(
    config: &FeedConfig,
    names: &[sink::Instrument],
) -> Result<
    (
        Option<crate::aeron::Client>,
        Vec<crate::aeron::Publisher>,
        Vec<Arc<crate::aeron::PublishStats>>,
    ),
    RunError,
> {
    use crate::aeron::{Client, DriverSetup};
    let Some(a) = &config.sinks.aeron else {
        return Ok((None, Vec::new(), Vec::new()));
    };
    let driver = if a.embedded {
        DriverSetup::Embedded { dir: a.dir.clone() }
    } else {
        DriverSetup::External { dir: a.dir.clone() }
    };
    let client = Client::start(&driver).map_err(|e| setup("sinks.aeron", e))?;
    let mut publishers = Vec::new();
    for _ in &config.threads {
        let mut p = client
            .publisher(&a.channel, a.stream, names)
            .map_err(|e| setup("sinks.aeron", e))?;
        p.set_books_every(a.books_every);
        publishers.push(p);
    }
    let stats = publishers.iter().map(|p| p.stats()).collect();
    publishers.reverse();
    Ok((Some(client), publishers, stats))
}

#[cfg(test)]
mod tests {
    use super::Plan;
    use crate::config::FeedConfig;

    #[test]
    fn a_plan_has_each_thread_with_its_venues_and_memory_and_each_venue_its_connections() {
        let text = "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A:1:1:400\", \"B:1:1:400\"]\n\
                    endpoint = \"wss://127.0.0.1:1\"\n\
                    [[venue]]\nname = \"b\"\nvenue = \"binance-spot\"\ninstruments = [\"C:2:8\"]\n\
                    [[thread]]\nvenues = [\"okx\"]\n\
                    [[thread]]\npriority = 10\nvenues = [\"b\"]\n";
        let config = FeedConfig::parse(text, std::iter::empty()).unwrap();
        let plan = Plan::of(&config);
        let threads: Vec<_> = plan
            .threads
            .iter()
            .map(|t| (t.priority, t.venues.clone()))
            .collect();
        assert_eq!(
            threads,
            [
                (None, vec!["okx".to_string()]),
                (Some(10), vec!["b".to_string()])
            ]
        );
        let books: Vec<_> = plan
            .threads
            .iter()
            .map(|t| t.memory.as_ref().map(|m| m.books))
            .collect();
        assert_eq!(books, [Some(2), Some(1)]);
        let venues: Vec<_> = plan
            .venues
            .iter()
            .map(|v| {
                (
                    v.name.as_str(),
                    v.venue.name(),
                    v.instruments,
                    v.connections,
                    v.endpoint.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            venues,
            [
                ("okx", "okx", 2, 1, Some("wss://127.0.0.1:1")),
                ("b", "binance-spot", 1, 1, None),
            ]
        );
    }
}
