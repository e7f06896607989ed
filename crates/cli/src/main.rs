//! `tickwire-feed`: the feed handler program. `demo` (also what it does
//! with no command) runs the exchange simulator and the feed together
//! offline; `run` and `record` a configuration; `sim` serves the simulator
//! alone; `replay` runs a recording through the venue adapters; `report`
//! reads a latency log (`.hlog`); `instruments` lists a venue's symbols.
//! Every command returns `Result<ExitCode, CliError>`: `main` alone says a
//! failure and maps it to its exit code.

#![allow(clippy::print_stdout)] // A command-line tool reports on stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use tickwire_feed::replay::Connections;
use tickwire_feed::sink::Instrument;
use tickwire_tsc::Report;
use tickwire_venues::InstrumentSpec;

mod cli;
mod demo_command;
mod demo_compare;
mod error;
mod feed_cpu;
mod logger;
mod replay_command;
mod run_command;
mod runs;
mod sim_command;
mod subscribe_command;

use cli::{Cli, Command, DemoArgs, InstrumentsArgs};
use demo_command::demo;
use error::{CliError, CliResult};
use replay_command::run_replay;
use run_command::run;
use sim_command::{SimArgs, replay_script, serve_sim};

/// A flag SIGINT and SIGTERM set: the run loops stop, flush and exit 0.
pub(crate) fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    Ok(stop)
}

/// `instruments`: a venue's list, from the venue (or `--rest`,
/// `--endpoint`), or from an in-process simulator.
fn instruments(args: &InstrumentsArgs) -> CliResult {
    let got = if args.simulated {
        tickwire_feed::instruments::simulated(args.venue)
    } else {
        tickwire_feed::instruments::fetch_for(
            args.venue,
            args.rest.as_deref(),
            args.endpoint.as_deref(),
            args.ca_file.as_deref(),
            None,
        )
        .map(|f| (f.listing, f.url))
    };
    let (listing, from) = got
        .map_err(|e| CliError::Failed(format!("tickwire-feed instruments: {}: {e}", args.venue)))?;
    let filter = args.filter.as_deref().map(str::to_ascii_uppercase);
    let shown: Vec<_> = listing
        .instruments
        .iter()
        .filter(|l| {
            filter
                .as_deref()
                .is_none_or(|f| l.symbol.to_ascii_uppercase().contains(f))
        })
        .collect();
    let dash = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
    let dec = |d: Option<u8>| d.map_or("-".into(), |d| d.to_string());
    println!(
        "{:<28} {:<12} {:>14} {:>14} {:>6} {:>6}",
        "symbol", "status", "tick", "lot", "price", "size"
    );
    for l in &shown {
        println!(
            "{:<28} {:<12} {:>14} {:>14} {:>6} {:>6}",
            l.symbol,
            l.status,
            dash(&l.tick_size),
            dash(&l.lot_size),
            dec(l.price_decimals),
            dec(l.size_decimals)
        );
    }
    eprintln!(
        "{} of {} instruments listed by {} ({from}); price and size: the decimals the feed uses",
        shown.len(),
        listing.instruments.len(),
        args.venue
    );
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logger::install();
    // The one place a failure is said and mapped to its exit code.
    match command(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            e.exit_code()
        }
    }
}

/// The command the line asked for (the demo when it named none), run.
fn command(command: Option<Command>) -> CliResult {
    let Some(command) = command else {
        return demo(&DemoArgs::default());
    };
    match command {
        Command::Demo(args) => demo(&args),
        Command::Run { config, check } => run(&config, None, check),
        Command::Instruments(args) => instruments(&args),
        Command::Record {
            config,
            out,
            max_file_mb,
        } => run(&config, Some((out, max_file_mb)), false),
        Command::Sim {
            listen,
            venues,
            rate,
            burst,
            ca_out,
            plain,
            seed,
            seconds,
            replay,
            real_time,
        } => {
            let replay = replay_script(replay, venues.0.len(), real_time)?;
            serve_sim(SimArgs {
                listen,
                venues: venues.0,
                rate,
                burst,
                ca_out,
                plain,
                seed,
                seconds,
                replay,
            })
        }
        Command::Report { log, svg, no_svg } => report(&log, svg, no_svg),
        Command::Subscribe(args) => subscribe_command::subscribe(&args),
        Command::Replay {
            recordings,
            venue,
            instruments,
            connections,
            jsonl,
            real_time,
            shm,
            shm_capacity,
        } => {
            let connections = connections.map_or(Connections::OfVenue, Connections::Matching);
            let instruments: Vec<InstrumentSpec> =
                instruments.iter().map(|i| i.spec(venue)).collect();
            let names = Instrument::of_venue(venue.name(), &instruments);
            let create = |p| tickwire_feed::shm::Writer::create(p, shm_capacity, &names);
            let ring = match shm.map(create) {
                None => None,
                Some(Ok(w)) => Some(w),
                Some(Err(e)) => {
                    return Err(CliError::Refused(format!(
                        "tickwire-feed replay: --shm: {e}"
                    )));
                }
            };
            run_replay(
                &recordings,
                venue,
                &instruments,
                &connections,
                jsonl,
                real_time,
                ring,
            )
        }
    }
}

fn report(log: &std::path::Path, svg: Option<PathBuf>, no_svg: bool) -> CliResult {
    use std::io::Write;
    let failed = |e: &dyn std::fmt::Display| CliError::Failed(format!("tickwire-feed report: {e}"));
    let report = Report::read(log).map_err(|e| failed(&e))?;
    // Written, not printed: a reader that stops early (`| head`) ends the
    // table, not the program with a panic.
    let mut out = std::io::stdout().lock();
    let table = write!(out, "{}", report.table()).and_then(|()| {
        writeln!(
            out,
            "{} interval histograms, {} series",
            report.intervals,
            report.series.len()
        )
    });
    if let Err(e) = table
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(failed(&e));
    }
    if !no_svg {
        let svg = svg.unwrap_or_else(|| log.with_extension("svg"));
        report.write_svg(&svg).map_err(|e| failed(&e))?;
        let _ = writeln!(out, "plot written to {}", svg.display());
    }
    Ok(ExitCode::SUCCESS)
}
