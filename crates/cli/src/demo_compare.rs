//! `tickwire-feed demo --max N --compare ROUNDS`: the plain demo's market
//! in JSON and in Binance's SBE streams, the same steps, the two taking
//! turns round by round (JSON first in odd rounds, SBE first in even ones,
//! so that neither always runs on a machine the other just warmed), each
//! round's ratio of their sustained rates and of the feed thread's CPU a
//! message, then the medians of those over the rounds. Every run must end
//! whole: the whole market arrived before the deadline, both books
//! valid.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tickwire_feed::demo::{DemoConfig, DemoSummary};

use crate::error::{CliError, CliResult};

/// The kind of run directory a comparison makes (`runs/<time>-demo-compare`,
/// `runs/latest-demo-compare`).
const KIND: &str = "demo-compare";

/// One run's figures: the sustained rate, and the feed thread's CPU a
/// message where it could be read.
#[derive(Clone, Copy)]
struct Measured {
    rate: f64,
    cpu_ns: Option<f64>,
}

pub(crate) fn compare(config: DemoConfig, rounds: u32, stop: &Arc<AtomicBool>) -> CliResult {
    let steps = config.pregenerate.unwrap_or_default();
    // A run directory of its own kind: `runs/latest-demo` stays a plain
    // demo's, with its `demo.hlog`.
    let dir = crate::runs::create_for(KIND)?;
    eprintln!(
        "tickwire demo --compare: a Binance-like simulator (BTCUSDT, ETHUSDT) with {steps} market \
         steps made ahead of time, in JSON and in SBE, {rounds} round{} taking turns, each sent as \
         fast as the feed takes it ({} steps to a write), over TLS on loopback, each run until \
         all have arrived (at most {} s)",
        if rounds == 1 { "" } else { "s" },
        config.burst,
        config.duration.as_secs()
    );
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let order = if round % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        let mut pair = [None, None];
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
            if stop.load(Ordering::Relaxed) {
                return failed(&dir, "stopped");
            }
            let measured = match whole(&s) {
                Ok(m) => m,
                Err(why) => return failed(&dir, &format!("round {round}, {name}: {why}")),
            };
            println!(
                "round {round}, {name:>4}: {:.0} messages/s, all {} arrived, {} bytes a message, \
                 books valid {}/{}",
                measured.rate, s.messages, s.mean_payload, s.books_valid, s.books
            );
            if let Some(cpu) = s.feed_cpu {
                println!("             {}", crate::feed_cpu::line(&cpu, false));
            }
            pair[usize::from(in_sbe)] = Some(measured);
        }
        let [Some(json), Some(sbe)] = pair else {
            unreachable!("both encodings ran in round {round}");
        };
        let ratio = Ratio {
            rate: sbe.rate / json.rate,
            cpu: json.cpu_ns.zip(sbe.cpu_ns).map(|(j, b)| j / b),
        };
        println!("round {round}: {}", ratio.line());
        ratios.push(ratio);
    }
    println!();
    let rates = median(ratios.iter().map(|r| r.rate).collect());
    let cpus: Option<Vec<f64>> = ratios.iter().map(|r| r.cpu).collect();
    let median_ratio = Ratio {
        rate: rates,
        cpu: cpus.map(median),
    };
    println!(
        "medians of {rounds} round{}: {}",
        if rounds == 1 { "" } else { "s" },
        median_ratio.line()
    );
    println!("latency logs: {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// One round's SBE against JSON: the ratio of their sustained rates, and
/// of the feed thread's CPU a message (JSON's over SBE's).
struct Ratio {
    rate: f64,
    cpu: Option<f64>,
}

impl Ratio {
    fn line(&self) -> String {
        let mut line = format!("SBE / JSON {:.2}x the sustained rate", self.rate);
        if let Some(cpu) = self.cpu {
            line.push_str(&format!(
                ", JSON / SBE {cpu:.2}x the feed thread's CPU a message"
            ));
        }
        line
    }
}

/// A run's figures if it ended whole: the whole market in before the
/// deadline, both books valid, nothing lost or undecodable, and a span
/// to measure the rate over.
fn whole(s: &DemoSummary) -> Result<Measured, String> {
    if !s.all_arrived {
        return Err(format!(
            "not every message arrived before the deadline ({} read; --seconds gives each run \
             longer)",
            s.messages
        ));
    }
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
    let _ = crate::runs::discard(KIND, dir);
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
