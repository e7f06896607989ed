//! Writes an `.hlog` of synthetic stage latencies through the real
//! exporter, for trying the `report` example without a feed.
//!
//! `cargo run --release -p tickwire-tsc --example synthetic -- out.hlog`

use std::time::Duration;

use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics, Stage};

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "synthetic.hlog".into());
    let metrics = Metrics::new(HistogramConfig::default());
    let mut rec = metrics.recorder("");
    let exporter = metrics.export(ExportConfig {
        interval: Duration::from_millis(100),
        hlog: Some(path.into()),
        stderr: true,
        ..ExportConfig::default()
    })?;
    // A long-tailed shape per stage: a base cost, and a rare slow path.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..2_000_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let tail = if x.is_multiple_of(1000) { 50 } else { 1 };
        rec.record_ns(Stage::Read, (800 + x % 400) * tail);
        rec.record_ns(Stage::Tls, (140 + x % 60) * tail);
        rec.record_ns(Stage::Frame, (20 + x % 10) * tail);
        rec.record_ns(Stage::Json, (250 + x % 150) * tail);
        if i.is_multiple_of(500_000) {
            std::thread::sleep(Duration::from_millis(120));
        }
    }
    exporter.finish()?;
    Ok(())
}
