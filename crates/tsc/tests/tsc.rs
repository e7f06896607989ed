//! tickwire-tsc's `metrics` end to end: recording without allocation while
//! an exporter collects, the `.hlog` round trip, the Prometheus page, and the
//! SVG report. (The clock on its own: tests/clock.rs.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tickwire_tsc::{
    Clock, Counter, ExportConfig, HistogramConfig, Metrics, Report, Stage, Stamps, calibration,
};

fn stamps(clock: Clock, step: u64) -> Stamps {
    let base = clock.now();
    Stamps {
        poll: base,
        read_start: base + step,
        read_end: base + 2 * step,
        decrypted: base + 3 * step,
        decoded: base + 4 * step,
        parsed: base + 5 * step,
        handled: base + 6 * step,
        exchange_unix_ns: 0,
    }
}

/// Recording allocates nothing and never loses a sample silently, while
/// an exporter collects every millisecond on another thread.
#[test]
fn recording_allocates_nothing_while_the_exporter_collects() {
    let metrics = Metrics::new(HistogramConfig::default());
    let mut recorder = metrics.recorder("hot");
    let exporter = metrics
        .export(ExportConfig {
            interval: Duration::from_millis(1),
            ..ExportConfig::default()
        })
        .unwrap();
    let clock = calibration().clock();
    const N: u64 = 300_000;
    let ((), allocated) = tickwire_testkit::allocations(|| {
        for i in 0..N {
            recorder.record(&stamps(clock, 100 + i % 1000));
            recorder.count_message(200);
            recorder.record_ns(Stage::Exchange, 1_000 + i);
        }
    });
    assert_eq!(
        allocated, 0,
        "{allocated} allocations recording {N} messages"
    );
    let totals = exporter.finish().unwrap();
    let hot = totals.iter().find(|t| t.name == "hot").unwrap();
    let dropped = hot
        .counters
        .iter()
        .find(|(c, _)| *c == Counter::Dropped)
        .unwrap()
        .1;
    assert!(dropped < N / 100, "{dropped} dropped");
    // Every record call lands in the histograms or in the dropped count.
    assert_eq!(
        hot.stages.get(Stage::Total).len() + hot.stages.get(Stage::Exchange).len(),
        2 * N - dropped
    );
    assert!(
        hot.counters.contains(&(Counter::Messages, N)),
        "{:?}",
        hot.counters
    );
}

/// What the exporter writes to the `.hlog` is what was recorded, per tag.
#[test]
fn the_hlog_round_trips() {
    let dir = std::env::temp_dir().join(format!("tickwire-tsc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("round-trip.hlog");
    let metrics = Metrics::new(HistogramConfig::default());
    let mut a = metrics.recorder("a");
    let mut b = metrics.recorder("b");
    let exporter = metrics
        .export(ExportConfig {
            interval: Duration::from_millis(20),
            hlog: Some(path.clone()),
            ..ExportConfig::default()
        })
        .unwrap();
    let config = HistogramConfig::default();
    let mut want_json = config.histogram();
    let mut want_read = config.histogram();
    for round in 0..5u64 {
        for i in 0..1000u64 {
            let v = 100 + round * 10_000 + i * 7;
            a.record_ns(Stage::Json, v);
            want_json.record(v).unwrap();
            b.record_ns(Stage::Read, v * 3);
            want_read.record(v * 3).unwrap();
        }
        thread::sleep(Duration::from_millis(25)); // spread over intervals
    }
    exporter.finish().unwrap();
    let report = Report::read(&path).unwrap();
    assert!(report.intervals >= 2, "{} intervals", report.intervals);
    let tags: Vec<&str> = report.series.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tags, ["a/json", "b/read"]);
    for ((_, got), want) in report.series.iter().zip([&want_json, &want_read]) {
        assert_eq!(got.len(), want.len());
        assert_eq!(got.max(), want.max());
        assert_eq!(got.min(), want.min());
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(got.value_at_quantile(q), want.value_at_quantile(q), "q {q}");
        }
    }
    // The header carries the start and base time, as HdrHistogram's tools expect.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("#[StartTime: "), "{text}");
    assert!(text.contains("#[BaseTime: "), "{text}");
    assert!(text.lines().any(|l| l.starts_with("Tag=a/json,")), "{text}");
    // HdrHistogram's own Python implementation reads it to the same counts.
    match std::env::var_os("TICKWIRE_PYTHON") {
        None => eprintln!("skipped the HdrHistogram_py cross-check: TICKWIRE_PYTHON is not set"),
        Some(python) => {
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/hlog-check.py");
            let out = std::process::Command::new(python)
                .arg(script)
                .arg(&path)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let mut lines: Vec<&str> = stdout.lines().collect();
            lines.sort_unstable();
            assert_eq!(lines.len(), 2, "{stdout}");
            for (line, (tag, want)) in lines
                .iter()
                .zip([("a/json", &want_json), ("b/read", &want_read)])
            {
                let f: Vec<&str> = line.split(' ').collect();
                assert_eq!(f[0], tag, "{stdout}");
                assert_eq!(f[1].parse::<u64>().unwrap(), want.len(), "{stdout}");
                let max: u64 = f[2].parse().unwrap();
                assert!(want.equivalent(max, want.max()), "{stdout}");
            }
        }
    }
    // The table names both and counts them.
    let table = report.table();
    assert!(
        table.contains("a/json") && table.contains("5000"),
        "{table}"
    );
    // The SVG plot: a real picture with one line per tag and a legend.
    let svg = dir.join("round-trip.svg");
    report.write_svg(&svg).unwrap();
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
    assert!(svg.contains("a/json") && svg.contains("b/read"));
    assert!(svg.contains("99.9%"), "percentile axis labels");
    assert!(svg.matches("<polyline").count() >= 2, "one line per tag");
    assert!(svg.len() > 10_000, "{} bytes", svg.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_log_that_is_not_one_is_refused() {
    let err = Report::parse(b"hello\nworld\n").err().unwrap();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    let err = Report::parse(b"#only a comment\n").err().unwrap();
    assert!(err.to_string().contains("no interval"), "{err}");
    let err = Report::read(std::path::Path::new("/nonexistent/x.hlog"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("/nonexistent/x.hlog"), "{err}");
}

fn get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    let mut conn = TcpStream::connect(addr).unwrap();
    write!(conn, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

/// A minimal parser of the Prometheus text format: every line is a comment
/// (`# HELP`/`# TYPE`) or `name{labels} value`; returns the samples.
fn parse_prometheus(text: &str) -> Samples {
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# ") {
            let kind = rest.split(' ').next().unwrap();
            assert!(kind == "HELP" || kind == "TYPE", "bad comment: {line}");
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect(line);
        let value: f64 = value.parse().expect(line);
        let (name, labels) = match series.split_once('{') {
            Some((name, labels)) => (name, labels.strip_suffix('}').expect(line)),
            None => (series, ""),
        };
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "bad name: {line}"
        );
        let labels = labels
            .split(',')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once('=').expect(line);
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .expect(line);
                (k.to_owned(), v.to_owned())
            })
            .collect();
        samples.push((name.to_owned(), labels, value));
    }
    samples
}

type Samples = Vec<(String, Vec<(String, String)>, f64)>;

/// The value of the sample `name` of stream `venue/btc` with `extra` labels.
fn find(samples: &Samples, name: &str, extra: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|(n, labels, _)| {
            n == name
                && labels.contains(&("stream".into(), "venue/btc".into()))
                && extra
                    .iter()
                    .all(|(k, v)| labels.contains(&((*k).into(), (*v).into())))
        })
        .map(|s| s.2)
}

#[test]
fn prometheus_serves_summaries_and_counters() {
    let metrics = Metrics::new(HistogramConfig::default());
    let mut rec = metrics.recorder("venue/btc");
    // The application's own metrics, appended to each page.
    let books = Arc::new(AtomicU64::new(3));
    let shown = Arc::clone(&books);
    metrics.add_page(Arc::new(move |out: &mut String| {
        let n = shown.load(Ordering::Relaxed);
        out.push_str(&format!("app_books{{stream=\"venue/btc\"}} {n}\n"));
    }));
    let exporter = metrics
        .export(ExportConfig {
            interval: Duration::from_millis(20),
            prometheus_port: Some(0),
            ..ExportConfig::default()
        })
        .unwrap();
    let addr = exporter.metrics_addr().unwrap();
    assert!(addr.ip().is_loopback());
    // Quantiles cover the last interval, so record until a page shows
    // some. 100 ns to 100 us, each once a batch, in a stride order (381 is
    // prime to 1000): an interval that cuts a batch (a busy machine
    // preempts the recording anywhere) still holds an even spread of it,
    // not only its low or high end. A page is taken once its interval
    // held the batch's top value.
    let mut recorded = 0u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    let page = loop {
        assert!(Instant::now() < deadline, "no quantiles within 10 s");
        for i in 0..1000u64 {
            rec.record_ns(Stage::Tls, (i * 381 % 1000 + 1) * 100);
            rec.count_message(10);
        }
        recorded += 1000;
        thread::sleep(Duration::from_millis(5));
        let (status, body) = get(addr, "/metrics");
        assert_eq!(status, "HTTP/1.1 200 OK");
        let samples = parse_prometheus(&body);
        let quantile = |q: &str| {
            find(
                &samples,
                "tickwire_stage_latency_ns",
                &[("stage", "tls"), ("quantile", q)],
            )
            .filter(|v| !v.is_nan())
        };
        if quantile("0.5").is_some() && quantile("1").is_some_and(|max| max >= 99_900.0) {
            break samples;
        }
    };
    let value = |samples: &Samples, name: &str, extra: &[(&str, &str)]| {
        find(samples, name, extra).unwrap_or_else(|| panic!("no {name} {extra:?}"))
    };
    let p50 = value(
        &page,
        "tickwire_stage_latency_ns",
        &[("stage", "tls"), ("quantile", "0.5")],
    );
    assert!((49_500.0..=50_500.0).contains(&p50), "p50 {p50}");
    let max = value(
        &page,
        "tickwire_stage_latency_ns",
        &[("stage", "tls"), ("quantile", "1")],
    );
    assert!((99_900.0..=100_100.0).contains(&max), "max {max}");
    let count = value(
        &page,
        "tickwire_stage_latency_ns_count",
        &[("stage", "tls")],
    );
    let sum = value(&page, "tickwire_stage_latency_ns_sum", &[("stage", "tls")]);
    assert!(count > 0.0 && count <= recorded as f64, "count {count}");
    let mean = sum / count;
    assert!((mean - 50_050.0).abs() < 1_000.0, "mean {mean}");
    assert!(value(&page, "tickwire_messages_total", &[]) >= count);
    rec.add(Counter::Reconnects, 2);
    books.store(5, Ordering::Relaxed);
    // Idle: the next page has no quantiles (NaN), and the totals are exact.
    let deadline = Instant::now() + Duration::from_secs(10);
    let idle = loop {
        assert!(Instant::now() < deadline, "never idle");
        thread::sleep(Duration::from_millis(25));
        let samples = parse_prometheus(&get(addr, "/metrics").1);
        if value(
            &samples,
            "tickwire_stage_latency_ns",
            &[("stage", "tls"), ("quantile", "0.5")],
        )
        .is_nan()
        {
            break samples;
        }
    };
    let count = value(
        &idle,
        "tickwire_stage_latency_ns_count",
        &[("stage", "tls")],
    );
    assert_eq!(count, recorded as f64);
    assert_eq!(
        value(&idle, "tickwire_messages_total", &[]),
        recorded as f64
    );
    assert_eq!(
        value(&idle, "tickwire_bytes_total", &[]),
        10.0 * recorded as f64
    );
    assert_eq!(value(&idle, "tickwire_reconnects_total", &[]), 2.0);
    assert_eq!(value(&idle, "app_books", &[]), 5.0);
    assert_eq!(value(&idle, "tickwire_errors_total", &[]), 0.0);
    assert_eq!(value(&idle, "tickwire_dropped_samples_total", &[]), 0.0);
    assert_eq!(get(addr, "/").0, "HTTP/1.1 404 Not Found");
    exporter.finish().unwrap();
    assert!(TcpStream::connect(addr).is_err(), "the server stopped");
}
