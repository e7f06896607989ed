//! Getting the histograms out: an exporter thread that, every interval,
//! collects every recorder, appends the interval to an HdrHistogram log
//! (`.hlog`), refreshes a Prometheus text page served on localhost, and
//! prints a line per stage on stderr.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

use crate::clock::recalibrate;
use crate::record::{Collector, Counter, HistogramConfig, Recorder, StageSet};
use crate::stage::Stage;

/// Writes more Prometheus text: the application's own counters and
/// gauges, appended to the page at each export interval.
pub type Page = Arc<dyn Fn(&mut String) + Send + Sync>;

/// The set of recorders an exporter reads. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Metrics {
    config: HistogramConfig,
    collectors: Arc<Mutex<Vec<Arc<Collector>>>>,
    pages: Arc<Mutex<Vec<Page>>>,
}

impl Metrics {
    /// A registry whose histograms all have the shape `config`.
    pub fn new(config: HistogramConfig) -> Metrics {
        Metrics {
            config,
            collectors: Arc::default(),
            pages: Arc::default(),
        }
    }

    /// Adds `page` to the Prometheus page: from the next export interval
    /// on, each refresh calls it (on the exporter's thread) to append its
    /// metrics, in the text format, after the recorders' own.
    pub fn add_page(&self, page: Page) {
        self.pages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(page);
    }

    fn pages(&self) -> Vec<Page> {
        self.pages.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A recorder for the stream `name` (allocates its histograms now).
    /// Names appear in `.hlog` tags and Prometheus labels; characters other
    /// than ASCII letters, digits and `_ - . : /` are replaced by `_`.
    pub fn recorder(&self, name: &str) -> Recorder {
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_-.:/".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let (recorder, collector) = Recorder::new(&name, self.config);
        self.collectors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(collector));
        recorder
    }

    fn collectors(&self) -> Vec<Arc<Collector>> {
        self.collectors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Drains every recorder's ring into its histograms
    /// ([`Recorder::record_deferred`](crate::Recorder::record_deferred)):
    /// what a running exporter does every
    /// [`ExportConfig::drain`]; for a program that collects without one.
    pub fn drain(&self) {
        let collectors = self.collectors.lock().unwrap_or_else(|e| e.into_inner());
        for c in collectors.iter() {
            c.drain();
        }
    }

    /// Starts an exporter thread.
    pub fn export(&self, config: ExportConfig) -> io::Result<Exporter> {
        Exporter::start(self.clone(), config)
    }
}

/// The shortest [`ExportConfig::drain`] the exporter keeps to.
const MIN_DRAIN: Duration = Duration::from_micros(100);

/// What the exporter does each interval.
#[derive(Clone, Debug)]
pub struct ExportConfig {
    /// How often to collect. Default: 1 s.
    pub interval: Duration,
    /// Append each interval to this HdrHistogram interval log (created or
    /// truncated). Default: none.
    pub hlog: Option<PathBuf>,
    /// Serve Prometheus text at `http://127.0.0.1:<port>/metrics` (0 picks
    /// a free port: see [`Exporter::metrics_addr`]). Default: none.
    pub prometheus_port: Option<u16>,
    /// Print one line per stage and stream to stderr. Default: false.
    pub stderr: bool,
    /// How often, between collections, to drain the recorders' rings
    /// ([`Recorder::record_deferred`](crate::Recorder::record_deferred)):
    /// often enough that a ring of [`RING`](crate::RING) stamps never
    /// fills at the stream's rate. Default: 1 ms (the exporter then wakes
    /// a thousand times a second, busy or not); at least 100 µs.
    pub drain: Duration,
}

impl Default for ExportConfig {
    fn default() -> ExportConfig {
        ExportConfig {
            interval: Duration::from_secs(1),
            hlog: None,
            prometheus_port: None,
            stderr: false,
            drain: Duration::from_millis(1),
        }
    }
}

/// One stream's histograms over the whole run, as the exporter hands them
/// back when it finishes.
pub struct StreamTotals {
    /// The stream's name.
    pub name: String,
    /// Every stage's histogram since the exporter started.
    pub stages: StageSet,
    /// The counters' final values.
    pub counters: Vec<(Counter, u64)>,
}

/// A running exporter thread. [`finish`](Exporter::finish) stops it after
/// a last collection and flushes the log; dropping it does the same.
pub struct Exporter {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<Vec<StreamTotals>>>>,
    server: Option<(SocketAddr, JoinHandle<()>)>,
    server_stop: Arc<AtomicBool>,
}

impl Exporter {
    fn start(metrics: Metrics, config: ExportConfig) -> io::Result<Exporter> {
        let page = Arc::new(Mutex::new(String::new()));
        let server_stop = Arc::new(AtomicBool::new(false));
        let server = match config.prometheus_port {
            Some(port) => Some(serve(port, Arc::clone(&page), Arc::clone(&server_stop))?),
            None => None,
        };
        // Open the log here, so that a bad path fails the caller, not the thread.
        let hlog = match &config.hlog {
            Some(path) => Some(BufWriter::new(File::create(path).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
            })?)),
            None => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            thread::Builder::new()
                .name("tickwire-export".into())
                .spawn(move || run(metrics, config, hlog, page, stop))?
        };
        Ok(Exporter {
            stop,
            thread: Some(thread),
            server,
            server_stop,
        })
    }

    /// Where the Prometheus page is served, if it is.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.server.as_ref().map(|(addr, _)| *addr)
    }

    /// Stops after one last collection, flushes the log, stops the server,
    /// and returns every stream's totals.
    pub fn finish(mut self) -> io::Result<Vec<StreamTotals>> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> io::Result<Vec<StreamTotals>> {
        self.stop.store(true, Ordering::Release);
        let totals = match self.thread.take() {
            Some(t) => {
                t.thread().unpark();
                t.join()
                    .map_err(|_| io::Error::other("the exporter thread panicked"))?
            }
            None => Ok(Vec::new()),
        };
        if let Some((addr, server)) = self.server.take() {
            self.server_stop.store(true, Ordering::Release);
            let _ = TcpStream::connect(addr); // wakes the accept
            let _ = server.join();
        }
        totals
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}

struct Stream {
    collector: Arc<Collector>,
    interval: StageSet,
    total: StageSet,
    /// Sum of every recorded value per stage, for Prometheus `_sum`.
    sums: [f64; Stage::ALL.len()],
}

fn run(
    metrics: Metrics,
    config: ExportConfig,
    hlog: Option<BufWriter<File>>,
    page: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
) -> io::Result<Vec<StreamTotals>> {
    let started = SystemTime::now();
    let start = Instant::now();
    let mut serializer = V2DeflateSerializer::new();
    let mut hlog = hlog;
    let mut log = match hlog.as_mut() {
        Some(file) => Some(
            IntervalLogWriterBuilder::new()
                .add_comment("tickwire per-stage latency, values in nanoseconds")
                .with_start_time(started)
                .with_base_time(started)
                .with_max_value_divisor(1e6) // the max column in milliseconds
                .begin_log_with(file, &mut serializer)?,
        ),
        None => None,
    };
    let mut streams: Vec<Stream> = Vec::new();
    let mut interval_start = start;
    loop {
        let deadline = interval_start + config.interval;
        while !stop.load(Ordering::Acquire) {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            thread::park_timeout((deadline - now).min(config.drain.max(MIN_DRAIN)));
            metrics.drain();
        }
        let last = stop.load(Ordering::Acquire);
        let now = Instant::now();
        let cal = recalibrate();
        for collector in metrics.collectors().into_iter().skip(streams.len()) {
            let shape = collector.config();
            streams.push(Stream {
                collector,
                interval: StageSet::new(shape),
                total: StageSet::new(shape),
                sums: [0.0; Stage::ALL.len()],
            });
        }
        for s in &mut streams {
            s.collector.collect(&mut s.interval, cal);
            for stage in Stage::ALL {
                let h = s.interval.get(stage);
                s.sums[stage.index()] += h.mean() * h.len() as f64;
            }
            s.total.add(&s.interval);
        }
        if let Some(log) = log.as_mut() {
            let from = interval_start.duration_since(start);
            let length = now.duration_since(interval_start);
            for s in &streams {
                for stage in Stage::ALL {
                    let h = s.interval.get(stage);
                    if h.is_empty() {
                        continue;
                    }
                    let tag = tag_of(s.collector.name(), stage);
                    log.write_histogram(h, from, length, Tag::new(&tag))
                        .map_err(|e| io::Error::other(format!("writing the .hlog: {e:?}")))?;
                }
            }
        }
        let mut text = prometheus(&streams);
        for more in metrics.pages() {
            more(&mut text);
        }
        *page.lock().unwrap_or_else(|e| e.into_inner()) = text;
        if config.stderr {
            let mut out = io::stderr().lock();
            for s in &streams {
                for line in summary_lines(s.collector.name(), &s.interval) {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
        for s in &mut streams {
            s.interval.reset();
        }
        interval_start = now;
        if last {
            break;
        }
    }
    drop(log);
    if let Some(mut file) = hlog {
        file.flush()?;
    }
    Ok(streams
        .into_iter()
        .map(|s| StreamTotals {
            name: s.collector.name().to_owned(),
            counters: Counter::ALL
                .iter()
                .map(|&c| (c, s.collector.counter(c)))
                .collect(),
            stages: s.total,
        })
        .collect())
}

/// The `.hlog` tag of a stream's stage: `stream/stage`, or `stage` for the
/// unnamed stream.
pub fn tag_of(stream: &str, stage: Stage) -> String {
    if stream.is_empty() {
        stage.name().to_owned()
    } else {
        format!("{stream}/{}", stage.name())
    }
}

/// A duration in ns, in the unit that keeps it short: `812ns`, `3.41us`,
/// `12.5ms`, `2.00s`.
pub fn human_ns(ns: u64) -> String {
    let ns = ns as f64;
    if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e6 {
        format!("{:.3}us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.3}ms", ns / 1e6)
    } else {
        format!("{:.3}s", ns / 1e9)
    }
}

/// One line per non-empty stage: count and p50/p99/p99.9/max.
pub fn summary_lines(stream: &str, set: &StageSet) -> Vec<String> {
    Stage::ALL
        .iter()
        .filter(|&&s| !set.get(s).is_empty())
        .map(|&stage| {
            let h: &Histogram<u64> = set.get(stage);
            format!(
                "tickwire {:<24} n={:<9} p50={:<10} p99={:<10} p99.9={:<10} max={}",
                tag_of(stream, stage),
                h.len(),
                human_ns(h.value_at_quantile(0.5)),
                human_ns(h.value_at_quantile(0.99)),
                human_ns(h.value_at_quantile(0.999)),
                human_ns(h.max()),
            )
        })
        .collect()
}

/// The quantiles in the Prometheus summaries.
pub const QUANTILES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 1.0];

/// A Prometheus label value, escaped (backslash, double quote, newline),
/// for pages added with [`Metrics::add_page`].
pub fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn prometheus(streams: &[Stream]) -> String {
    let mut out = String::new();
    out.push_str(
        "# HELP tickwire_stage_latency_ns Receive-path stage latency in nanoseconds; \
         quantiles over the last export interval, sum and count since start.\n\
         # TYPE tickwire_stage_latency_ns summary\n",
    );
    for s in streams {
        let stream = escape_label(s.collector.name());
        for stage in Stage::ALL {
            let (interval, total) = (s.interval.get(stage), s.total.get(stage));
            if total.is_empty() {
                continue;
            }
            for q in QUANTILES {
                let v = if interval.is_empty() {
                    f64::NAN
                } else {
                    interval.value_at_quantile(q) as f64
                };
                let _ = writeln!(
                    out,
                    "tickwire_stage_latency_ns{{stream=\"{stream}\",stage=\"{stage}\",quantile=\"{q}\"}} {v}"
                );
            }
            let _ = writeln!(
                out,
                "tickwire_stage_latency_ns_sum{{stream=\"{stream}\",stage=\"{stage}\"}} {}",
                s.sums[stage.index()].round()
            );
            let _ = writeln!(
                out,
                "tickwire_stage_latency_ns_count{{stream=\"{stream}\",stage=\"{stage}\"}} {}",
                total.len()
            );
        }
    }
    for counter in Counter::ALL {
        let name = counter.name();
        let _ = write!(
            out,
            "# HELP tickwire_{name}_total {}\n# TYPE tickwire_{name}_total counter\n",
            match counter {
                Counter::Messages => "Messages received.",
                Counter::Bytes => "Payload bytes received.",
                Counter::Errors => "Errors seen (bad messages, protocol errors).",
                Counter::Reconnects => "Reconnects.",
                Counter::Dropped => "Latency samples dropped (recorder found no free slot).",
            }
        );
        for s in streams {
            let _ = writeln!(
                out,
                "tickwire_{name}_total{{stream=\"{}\"}} {}",
                escape_label(s.collector.name()),
                s.collector.counter(counter)
            );
        }
    }
    out
}

/// Serves `page` at `/metrics` on 127.0.0.1:`port` from a thread of its own.
fn serve(
    port: u16,
    page: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
) -> io::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot serve metrics on 127.0.0.1:{port}: {e}"),
        )
    })?;
    let addr = listener.local_addr()?;
    let thread = thread::Builder::new()
        .name("tickwire-metrics".into())
        .spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                if let Ok(conn) = conn {
                    let _ = answer(conn, &page);
                }
            }
        })?;
    Ok((addr, thread))
}

/// Answers one HTTP request: the page for `GET /metrics`, 404 or 405 else.
fn answer(mut conn: TcpStream, page: &Mutex<String>) -> io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut buf = [0u8; 8192];
    let mut len = 0;
    let (method, path) = loop {
        let n = conn.read(&mut buf[len..])?;
        if n == 0 {
            return Ok(());
        }
        len += n;
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => {
                break (
                    req.method.unwrap_or("").to_owned(),
                    req.path.unwrap_or("").to_owned(),
                );
            }
            Ok(httparse::Status::Partial) if len < buf.len() => continue,
            _ => return respond(&mut conn, "400 Bad Request", "bad request\n"),
        }
    };
    match (method.as_str(), path.split('?').next().unwrap_or("")) {
        ("GET", "/metrics") => {
            let body = page.lock().unwrap_or_else(|e| e.into_inner()).clone();
            respond(&mut conn, "200 OK", &body)
        }
        ("GET", _) => respond(&mut conn, "404 Not Found", "see /metrics\n"),
        _ => respond(&mut conn, "405 Method Not Allowed", "GET /metrics\n"),
    }
}

fn respond(conn: &mut TcpStream, status: &str, body: &str) -> io::Result<()> {
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    conn.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_ns(812), "812ns");
        assert_eq!(human_ns(3_410), "3.410us");
        assert_eq!(human_ns(12_500_000), "12.500ms");
        assert_eq!(human_ns(2_000_000_000), "2.000s");
    }

    #[test]
    fn names_are_made_safe_for_tags_and_labels() {
        let metrics = Metrics::default();
        let r = metrics.recorder("binance spot,btc\"usdt");
        assert_eq!(r.name(), "binance_spot_btc_usdt");
        assert_eq!(tag_of("", Stage::Tls), "tls");
        assert_eq!(tag_of("okx/BTC-USDT", Stage::Json), "okx/BTC-USDT/json");
    }
}
