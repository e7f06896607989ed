//! `tickwire-feed demo --max N --compare ROUNDS`: the plain demo's market
//! in JSON and in Binance's SBE streams, the same steps, the two taking
//! turns round by round (JSON first in odd rounds, SBE first in even ones,
//! so that neither always runs on a machine the other just warmed), then
//! the ratio of their sustained rates and of the feed thread's CPU a
//! message, each the median over the rounds. Every run must end whole:
//! every message arrived and both books valid.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tickwire_feed::demo::{DemoConfig, DemoSummary};

use crate::demo_command::feed_cpu_line;
use crate::error::{CliError, CliResult};

/// One run's figures: the sustained rate, and the feed thread's CPU a
/// message where it could be read.
struct Measured {
    rate: f64,
    cpu_ns: Option<f64>,
}

pub(crate) fn compare(config: DemoConfig, rounds: u32, stop: &Arc<AtomicBool>) -> CliResult {
    let steps = config.pregenerate.unwrap_or_default();
    let dir = crate::runs::create("demo").map_err(|e| {
        CliError::Failed(format!(
            "tickwire-feed demo: cannot make its run directory under {}/: {e}",
            crate::runs::ROOT
        ))
    })?;
    eprintln!(
        "tickwire demo --compare: a Binance-like simulator (BTCUSDT, ETHUSDT) with {steps} market \
         steps made ahead of time, in JSON and in SBE, {rounds} rounds taking turns, each sent as \
         fast as the feed takes it ({} steps to a write), over TLS on loopback",
        config.burst
    );
    let (mut json, mut sbe) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let order = if round % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for in_sbe in order {
            let name = if in_sbe { "SBE" } else { "JSON" };
            let run = DemoConfig {
                sbe: in_sbe,
                hlog: dir.join(format!("{}-{round}.hlog", name.to_lowercase())),
                svg: false,
                ..config.clone()
            };
            let s = match tickwire_feed::demo::run(&run, stop, |_| {}) {
                Ok(s) => s,
                Err(e) => return failed(&dir, &format!("round {round}, {name}: {e}")),
            };
            let measured = match whole(&s) {
                Ok(m) => m,
                Err(why) => return failed(&dir, &format!("round {round}, {name}: {why}")),
            };
            println!(
                "round {round}, {name:>4}: {:.0} messages/s, {} bytes a message, books valid {}/{}",
                measured.rate, s.mean_payload, s.books_valid, s.books
            );
            if let Some(cpu) = s.feed_cpu {
                println!("             {}", feed_cpu_line(&cpu, false));
            }
            if in_sbe { &mut sbe } else { &mut json }.push(measured);
            if stop.load(Ordering::Relaxed) {
                return failed(&dir, "stopped");
            }
        }
    }
    let rate = |runs: &[Measured]| median(runs.iter().map(|m| m.rate).collect());
    let (json_rate, sbe_rate) = (rate(&json), rate(&sbe));
    println!();
    println!(
        "SBE / JSON, medians of {rounds} round{}: {:.2}x the sustained rate ({sbe_rate:.0} against \
         {json_rate:.0} messages/s)",
        if rounds == 1 { "" } else { "s" },
        sbe_rate / json_rate
    );
    let cpu = |runs: &[Measured]| {
        let all: Option<Vec<f64>> = runs.iter().map(|m| m.cpu_ns).collect();
        all.map(median)
    };
    if let (Some(j), Some(b)) = (cpu(&json), cpu(&sbe)) {
        println!(
            "JSON / SBE: {:.2}x the feed thread's CPU a message ({j:.0} against {b:.0} ns)",
            j / b
        );
    }
    println!("latency logs: {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// A run's figures if it ended whole: every message in, both books valid,
/// nothing lost or undecodable, and a span to measure the rate over.
fn whole(s: &DemoSummary) -> Result<Measured, String> {
    if s.books_valid != s.books || s.gaps != 0 || s.reconnects != 0 || s.decode_errors != 0 {
        return Err(format!(
            "not whole: books valid {}/{}, {} gaps, {} reconnects, {} undecodable",
            s.books_valid, s.books, s.gaps, s.reconnects, s.decode_errors
        ));
    }
    let rate = s.throughput.ok_or_else(|| {
        "every message came between two of the demo's looks (2 ms apart): no span to measure; \
         more steps (--max)"
            .to_string()
    })?;
    Ok(Measured {
        rate,
        cpu_ns: s.feed_cpu.map(|c| c.per_message_ns),
    })
}

/// A comparison that did not finish leaves no run behind.
fn failed(dir: &Path, why: &str) -> CliResult {
    let _ = crate::runs::discard("demo", dir);
    Err(CliError::Failed(format!(
        "tickwire-feed demo --compare: {why}"
    )))
}

/// The median (the mean of the middle two of an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(vec![7.0]), 7.0);
        assert!(median(Vec::new()).is_nan());
    }
}
