//! `tickwire-feed demo` (and the bare command): its arguments checked
//! before anything is made, the announcement of what it will do, the
//! status lines, and the summary: the latency table, each venue's line,
//! and what each stage and count means.

use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tickwire_feed::demo::DemoConfig;

use crate::cli::{DemoArgs, VenueList};
use crate::error::{CliError, CliResult};
use crate::stop_on_signals;

pub(crate) fn demo(args: &DemoArgs) -> CliResult {
    let stop = stop_on_signals().map_err(|e| {
        CliError::Failed(format!(
            "tickwire-feed demo: cannot install signal handlers: {e}"
        ))
    })?;
    if args.trade {
        return trade(args, &stop);
    }
    let mut config = config_of(args);
    // The values the demo would refuse once started are refused before
    // anything is made (a run directory, a latency log), exit 2.
    config
        .check()
        .map_err(|e| CliError::Refused(format!("tickwire-feed demo: {e}")))?;
    if let Some(rounds) = args.compare {
        return crate::demo_compare::compare(config, rounds, &stop);
    }
    let run_dir = match &args.hlog {
        Some(_) => None,
        None => {
            let dir = crate::runs::create_for("demo")?;
            config.hlog = dir.join("demo.hlog");
            Some(dir)
        }
    };
    let hlog = config.hlog.clone();
    let hlog_existed = hlog.exists();
    match &args.venues {
        None if args.max.is_some() => eprintln!(
            "tickwire demo: a Binance-like simulator (BTCUSDT, ETHUSDT) with {} market steps made \
             ahead of time, sent as fast as the feed takes them, and the feed, over TLS on \
             loopback, until all have arrived (at most {} s)",
            args.max.unwrap_or_default(),
            args.seconds
        ),
        None => eprintln!(
            "tickwire demo: a Binance-like simulator (BTCUSDT, ETHUSDT; {} steps/s) and the feed, \
             over TLS on loopback, for {} s",
            args.rate, args.seconds
        ),
        Some(VenueList(venues)) => eprintln!(
            "tickwire demo: {} simulated venues ({}; {} steps/s in all), books {} levels deep, \
             and the feed on one thread, over TLS on loopback, for {} s{}",
            venues.len(),
            venues
                .iter()
                .map(|v| v.name())
                .collect::<Vec<_>>()
                .join(", "),
            args.rate,
            args.depth,
            args.seconds,
            if args.faults {
                ", every fault in turn on every venue"
            } else {
                ""
            }
        ),
    }
    match tickwire_feed::demo::run(&config, &stop, |line| eprintln!("{line}")) {
        Ok(s) => {
            println!();
            print!("{}", s.table);
            let secs = s.elapsed.as_secs_f64().max(1e-9);
            println!(
                "feed on core {}: {} messages ({:.0}/s), {} events, books valid {}/{}, \
                 {} gaps, {} reconnects, {} undecodable, {} wire-stamped",
                s.core,
                s.messages,
                s.messages as f64 / secs,
                s.events,
                s.books_valid,
                s.books,
                s.gaps,
                s.reconnects,
                s.decode_errors,
                s.wire_stamped
            );
            for v in &s.venues {
                println!("{}", v.line());
            }
            if let Some(t) = s.throughput {
                println!(
                    "sustained: {t:.0} messages/s from the first to the last ({:.0} MB/s of \
                     payload, {} bytes a message), books valid {}/{}",
                    t * s.mean_payload as f64 / 1e6,
                    s.mean_payload,
                    s.books_valid,
                    s.books
                );
                if let Some(cpu) = s.feed_cpu {
                    println!("{}", crate::feed_cpu::line(&cpu, args.busy_poll));
                }
            }
            println!(
                "latency log: {}  plot: {}",
                hlog.display(),
                hlog.with_extension("svg").display()
            );
            println!(
                "stages: wake = poll returned -> read starts; read = the read system call; \
                 tls = in-place decryption; frame = WebSocket frames up to this message; \
                 json = decoded (JSON text, or SBE on binance-spot-sbe) into events and books, handed to the sinks; \
                 handler = an embedding program's handler (the demo has none: 0); \
                 total = read -> handled; exchange = simulator send -> feed read (the wire), \
                 for the wire-stamped messages only"
            );
            println!(
                "wire-stamped: messages whose simulator send stamp the feed matched, so their \
                 exchange stage could be measured (the others have none: a stamp is kept for \
                 the last 4096 ids of each stream, and a venue's message without an id, as \
                 Kraken's books, has none)"
            );
            if args.max.is_some() {
                println!(
                    "with --max the simulator sends ahead of the feed: the exchange stage \
                     includes the time each message waited in the socket buffers for the feed \
                     to read it"
                );
            }
            // With --venues: a venue whose books are not valid and equal to
            // its simulator's at the end, or a fault not recovered from, is
            // a failed demo.
            let failed: Vec<&str> = s
                .venues
                .iter()
                .filter(|v| {
                    !v.books_equal
                        || v.books_valid.0 != v.books_valid.1
                        || v.faults.is_some_and(|(i, r)| i != r)
                })
                .map(|v| v.name.as_str())
                .collect();
            if !failed.is_empty() {
                return Err(CliError::Failed(format!(
                    "tickwire-feed demo: not whole at the end: {}",
                    failed.join(", ")
                )));
            }
            // With --max: a market cut short by the deadline measured only
            // part of itself (a user's stop is no failure).
            if args.max.is_some() && !s.all_arrived && !stop.load(Ordering::Relaxed) {
                return Err(CliError::Failed(format!(
                    "tickwire-feed demo: not every message of the market arrived within --seconds \
                     ({} read): the figures above are of part of it; give it longer",
                    s.messages
                )));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            // What a demo that failed left is no run: no directory, and no
            // latency log that `report` would refuse.
            match &run_dir {
                Some(dir) => {
                    let _ = crate::runs::discard("demo", dir);
                }
                None if !hlog_existed => {
                    let _ = std::fs::remove_file(&hlog);
                }
                None => {}
            }
            Err(CliError::Failed(format!("tickwire-feed demo: {e}")))
        }
    }
}

/// The demo's configuration from its arguments (`--trade` aside).
fn config_of(args: &DemoArgs) -> DemoConfig {
    DemoConfig {
        duration: Duration::from_secs(args.seconds),
        rate: args.rate,
        burst: args.burst,
        pregenerate: args.max,
        hold_after: args.hold_after,
        core: args.core,
        busy_poll: args.busy_poll,
        hlog: args.hlog.clone().unwrap_or_default(),
        svg: true,
        venues: args.venues.clone().map(|v| v.0).unwrap_or_default(),
        faults: args.faults,
        depth: args.depth,
        rest_weight_limit: args.rest_weight_limit,
        lifetime: args.lifetime,
        standby: args.standby,
        sbe: args.sbe,
    }
}

/// `demo --trade`: the quoting strategy against a simulator that trades;
/// exit 0 only if it filled and the simulator held no order once the kill
/// switch's cancel-all was answered, before the connections closed.
fn trade(args: &DemoArgs, stop: &std::sync::atomic::AtomicBool) -> CliResult {
    eprintln!(
        "tickwire demo --trade: a simulated Deribit that trades (BTC-PERPETUAL; an API key made \
         for the run), the feed quoting both sides of its book and taking the ask once a \
         second, over TLS on loopback, for {} s",
        args.seconds
    );
    let duration = Duration::from_secs(args.seconds);
    let s = tickwire_feed::demo::trade::run(duration, stop, |line| eprintln!("{line}"))
        .map_err(|e| CliError::Failed(format!("tickwire-feed demo --trade: {e}")))?;
    let us = |ns: u64| ns as f64 / 1e3;
    println!();
    println!(
        "orders sent {}, acknowledged {}, refused {}",
        s.sent, s.acknowledged, s.refused
    );
    println!(
        "fills {} ({} of resting quotes, {} taking)",
        s.fills,
        s.maker_fills,
        s.fills - s.maker_fills
    );
    for (name, p) in [
        ("tick-to-trade", s.tick_to_trade),
        ("round trip", s.round_trip),
    ] {
        println!(
            "{name}: p50 {:.1} us  p99 {:.1} us  p99.9 {:.1} us  (n={})",
            us(p.p50),
            us(p.p99),
            us(p.p999),
            p.count
        );
    }
    println!(
        "cancel-all at exit: {} orders cancelled; the simulator held {} open {}",
        s.cancelled_at_exit,
        s.left_open,
        if s.cancel_all_answered {
            "once it was answered, before the close"
        } else {
            "after the close (the cancel-all was never answered)"
        }
    );
    println!(
        "tick-to-trade = a market message read -> the order it made handed to the driver; \
         round trip = an order request handed to the driver -> its answer read"
    );
    if s.left_open > 0 || !s.cancel_all_answered || s.fills == 0 {
        return Err(CliError::Failed(format!(
            "tickwire-feed demo --trade: {}",
            if s.left_open > 0 {
                "orders were left open in the simulator"
            } else if !s.cancel_all_answered {
                "the kill switch's cancel-all was not answered before the close"
            } else {
                "no fill"
            }
        )));
    }
    Ok(ExitCode::SUCCESS)
}
