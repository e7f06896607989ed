//! `tickwire-feed report` as a user runs it: on a log the exporter wrote,
//! on a file that is not a log, and on a missing file.

use std::path::PathBuf;
use std::time::Duration;

use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics, Stage};

fn dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("report-{name}"))
}

#[test]
fn report_prints_the_table_and_writes_the_plot() {
    let d = dir("report");
    let log = d.join("latency.hlog");
    let metrics = Metrics::new(HistogramConfig::default());
    let mut rec = metrics.recorder("venue");
    let exporter = metrics
        .export(ExportConfig {
            interval: Duration::from_millis(10),
            hlog: Some(log.clone()),
            ..ExportConfig::default()
        })
        .unwrap();
    for v in 1..=10_000u64 {
        rec.record_ns(Stage::Tls, v);
        rec.record_ns(Stage::Json, 2 * v);
    }
    exporter.finish().unwrap();
    let out = crate::util::bin().arg("report").arg(&log).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tls = stdout
        .lines()
        .find(|l| l.starts_with("venue/tls"))
        .expect(&stdout);
    let cols: Vec<&str> = tls.split_whitespace().collect();
    assert_eq!(cols[1], "10000", "{tls}");
    assert_eq!(cols[2], "5.003us", "p50 of 1..=10000 ns: {tls}");
    assert!(stdout.contains("venue/json"), "{stdout}");
    let svg = std::fs::read_to_string(d.join("latency.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("venue/json"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn report_explains_bad_input_and_fails() {
    let d = dir("bad");
    let not_a_log = d.join("notes.txt");
    std::fs::write(&not_a_log, "hello\n").unwrap();
    for (path, says) in [
        (not_a_log.clone(), "not an interval log"),
        (d.join("missing.hlog"), "missing.hlog"),
    ] {
        let out = crate::util::bin()
            .arg("report")
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    // Usage errors are clap's: exit code 2 and a hint.
    let out = crate::util::bin().arg("report").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("<LOG>"));
    std::fs::remove_dir_all(&d).unwrap();
}
