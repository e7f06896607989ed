//! Cheap, trustworthy timestamps for every stage of a message's way through
//! tickwire, a latency histogram per stage, and their export.
//!
//! The clock and the stamps need nothing, no feature and no dependency:
//!
//! - [`Clock`]: one `rdtsc` per reading (about 10 ns) on an x86-64 CPU with
//!   an invariant TSC, the OS monotonic clock elsewhere (or with
//!   `TICKWIRE_CLOCK=monotonic`). [`Calibration`] turns ticks into
//!   nanoseconds and into wall-clock time, measured against the monotonic
//!   clock at start and refined by [`recalibrate`] (which the exporter
//!   calls every interval).
//! - [`Stamps`]: the readings taken for one message (poll wake-up, read
//!   start and end, TLS decrypted, frame decoded, JSON decoded, handler
//!   done, plus the exchange's own event time). `Copy`, handed to handlers.
//! - [`Stage`]: the spans between two stamps that get a histogram each.
//!
//! # Features
//!
//! - `metrics` (default): the histograms and their export, on
//!   `hdrhistogram` (with its serialization), `base64` and `httparse`. A
//!   library that only stamps (tickwire-net does) depends on this crate
//!   with `default-features = false` and compiles none of them; the
//!   workspace's `tickwire-tsc` entry does so too, so a crate of the
//!   workspace that records or exports latencies asks for
//!   `features = ["metrics"]` itself.
//! - `report` (default; brings `metrics`): `Report`, an `.hlog` read back
//!   into a percentile table and an SVG plot, on `plotters`. A program
//!   that exports and never plots leaves it out.
#![cfg_attr(
    feature = "metrics",
    doc = r#"
With `metrics`:

- [`Recorder`]: per-stream, per-[`Stage`] HdrHistograms, allocated up
  front; recording never allocates and never waits for the exporter
  (two slots, `try_lock` only). `record_deferred` leaves the histogram
  work to the exporter's thread: the stamps go there through a ring.
- [`Metrics`] and [`Exporter`]: a thread that collects every interval
  and writes an HdrHistogram interval log (`.hlog`, one tag per stage),
  a Prometheus page on localhost, and a line per stage on stderr.
- `Report` (feature `report`): reads an `.hlog` back into a percentile
  table and an SVG percentile-distribution plot.

```no_run
use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics, Stamps, calibration};

let clock = calibration().clock();
let metrics = Metrics::new(HistogramConfig::default());
let mut recorder = metrics.recorder("binance/btcusdt");
let exporter = metrics.export(ExportConfig {
    hlog: Some("latency.hlog".into()),
    prometheus_port: Some(9464),
    ..ExportConfig::default()
})?;
// On the receiving thread, for each message:
let mut stamps = Stamps { read_end: clock.now(), ..Stamps::default() };
// ... decode ...
stamps.handled = clock.now();
recorder.record(&stamps);
# drop(recorder);
exporter.finish()?;
# Ok::<(), std::io::Error>(())
```
"#
)]
#![cfg_attr(
    not(feature = "metrics"),
    doc = r#"
This build has no `metrics`: the clock and the stamps alone.

```
use tickwire_tsc::{Stage, Stamps, calibration};

let cal = calibration();
let clock = cal.clock();
let mut stamps = Stamps { read_end: clock.now(), ..Stamps::default() };
stamps.handled = clock.now();
let (from, to) = Stage::Total.span(&stamps).unwrap();
let _ns = cal.ns_between(from, to);
```
"#
)]

mod arch;
mod clock;
#[cfg(feature = "metrics")]
mod export;
#[cfg(feature = "metrics")]
mod record;
#[cfg(feature = "report")]
mod report;
#[cfg(feature = "metrics")]
mod ring;
mod stage;

pub use clock::{
    CLOCK_ENV, Calibration, Clock, NoInvariantTsc, Source, Ticks, calibration, recalibrate,
};
#[cfg(feature = "metrics")]
pub use export::{
    ExportConfig, Exporter, Metrics, Page, QUANTILES, StreamTotals, escape_label, human_ns,
    summary_lines, tag_of,
};
#[cfg(feature = "metrics")]
pub use record::{Collector, Counter, HistogramConfig, Recorder, StageSet};
#[cfg(feature = "report")]
pub use report::Report;
#[cfg(feature = "metrics")]
pub use ring::{PUBLISH, RING};
pub use stage::{Stage, Stamps};
