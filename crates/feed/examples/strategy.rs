//! A strategy callback and what it costs to reach it: for every message
//! that changes Binance's BTCUSDT book, the time from the feed's read of
//! the bytes to the callback (TSC stamps on one clock), kept in an
//! HdrHistogram and printed as percentiles at the end. The "strategy"
//! here only watches the spread; put yours where it is.
//!
//!     cargo run --release -p tickwire-feed --example strategy [-- --real] [--seconds N] [--updates N]
//!
//! By default against an exchange simulator started in this process, for
//! 10 s, or until `--updates` book updates have been timed.

#![allow(clippy::print_stdout)] // It prints: that is what it is for.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tickwire_feed::{Connectivity, Feed, OnEvent, Update};

/// The strategy's state: what it saw and how late it saw it.
struct Strategy {
    /// The clock the feed stamps reads with, and its ticks in ns.
    clock: tickwire_tsc::Clock,
    calibration: tickwire_tsc::Calibration,
    /// Read to callback, ns.
    latency: Histogram<u64>,
    /// The widest spread seen, in ticks.
    widest: i64,
}

impl OnEvent for Strategy {
    fn on_update(&mut self, u: &Update<'_>) {
        let now = self.clock.now();
        for (_, book) in u.books() {
            if let Some((bid, ask)) = book.and_then(|b| b.top()) {
                // The strategy: here, only the spread.
                self.widest = self.widest.max(ask.price - bid.price);
                let ns = self.calibration.ns_between(u.recv_tsc(), now);
                let _ = self.latency.record(ns.max(1));
            }
        }
    }

    /// A venue unreachable (with its typed cause) or connected: a real
    /// strategy would stand down, or start quoting.
    fn on_connectivity(&mut self, news: &Connectivity<'_>) {
        println!("{news}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let real = args.iter().any(|a| a == "--real");
    let arg = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1)?.parse::<u64>().ok()
    };
    let seconds = arg("--seconds").unwrap_or(10);
    let updates = arg("--updates").unwrap_or(u64::MAX);
    let calibration = tickwire_tsc::calibration();
    let strategy = Strategy {
        clock: calibration.clock(),
        calibration,
        latency: Histogram::new_with_bounds(1, 60_000_000_000, 3)?,
        widest: 0,
    };
    let mut feed = Feed::builder()
        .venue("binance-spot", &["BTCUSDT:20"])
        .simulated(!real)
        // Nothing connected in 30 s (a firewall, a wrong CA): `poll`
        // fails, naming the venue and why.
        .connect_deadline(Duration::from_secs(30))
        .build_with(strategy)?;
    let end = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < end && feed.handler().latency.len() < updates {
        feed.poll()?;
    }
    let s = feed.handler();
    let h = &s.latency;
    println!(
        "{} book updates; read -> callback: p50 {} ns, p99 {} ns, p99.9 {} ns, max {} ns; \
         widest spread {} ticks",
        h.len(),
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.99),
        h.value_at_quantile(0.999),
        h.max(),
        s.widest
    );
    Ok(())
}
