//! `tickwire-feed`: the feed handler binary. So far it has two commands:
//! `report`, which reads the latency log (`.hlog`) that tickwire-tsc's
//! exporter writes, and `replay`, which runs a recording through the
//! venue adapters; `run`, `sim`, `demo` and `record` come with the feed
//! itself.

#![allow(clippy::print_stdout)] // A command-line tool reports on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tickwire_feed::replay::{self, Pace, Venue};
use tickwire_feed::sink::{self, Instrument};
use tickwire_tsc::Report;
use tickwire_venues::InstrumentSpec;

#[derive(Parser)]
#[command(name = "tickwire-feed", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the percentile table of a latency log and plot it to SVG.
    ///
    /// The log is an HdrHistogram interval log (`.hlog`) as tickwire's
    /// exporter writes it: one tag per stream and stage. Every tag's
    /// intervals are merged.
    Report {
        /// The `.hlog` file.
        log: PathBuf,
        /// Where to write the SVG percentile plot [default: the log's path
        /// with the extension `svg`].
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Do not write the plot.
        #[arg(long, conflicts_with = "svg")]
        no_svg: bool,
    },
    /// Run a recording through a venue's adapter (decoders, books, events)
    /// as fast as possible, or at its own pace, and print what it did.
    Replay {
        /// Recording files, or the base name a recording was written under
        /// (for all its rotated files, in order).
        #[arg(required = true)]
        recordings: Vec<PathBuf>,
        /// The venue the recording is from: binance-spot, binance-usdm,
        /// binance-coinm, okx, bybit, kraken, coinbase or deribit.
        #[arg(long)]
        venue: Venue,
        /// An instrument to keep: SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS, and
        /// optionally :BOOK_DEPTH (default 1000). Repeat for each.
        #[arg(long = "instrument", required = true, value_parser = parse_instrument)]
        instruments: Vec<InstrumentSpec>,
        /// Write every event as JSON Lines to this file (`-`: stdout).
        #[arg(long)]
        jsonl: Option<PathBuf>,
        /// Replay at the recording's own pace instead of as fast as
        /// possible.
        #[arg(long)]
        real_time: bool,
        /// Also publish every event to a shared-memory ring at this path
        /// (e.g. /dev/shm/tickwire), for readers in other processes.
        #[arg(long)]
        shm: Option<PathBuf>,
        /// The ring's capacity in events (a power of two; 128 bytes each).
        #[arg(long, default_value_t = 1 << 16, requires = "shm")]
        shm_capacity: usize,
    },
}

/// `SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS[:DEPTH]`.
fn parse_instrument(s: &str) -> Result<InstrumentSpec, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let (symbol, price, size, depth) = match parts[..] {
        [symbol, price, size] => (symbol, price, size, "1000"),
        [symbol, price, size, depth] => (symbol, price, size, depth),
        _ => {
            return Err(format!(
                "`{s}`: expected SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS[:BOOK_DEPTH]"
            ));
        }
    };
    let decimals = |what: &str, v: &str| -> Result<u8, String> {
        v.parse::<u8>()
            .ok()
            .filter(|d| *d <= 18)
            .ok_or_else(|| format!("`{s}`: {what} decimals must be 0 to 18, not `{v}`"))
    };
    let depth = depth
        .parse::<usize>()
        .ok()
        .filter(|d| (1..=100_000).contains(d))
        .ok_or_else(|| format!("`{s}`: book depth must be 1 to 100000, not `{depth}`"))?;
    if symbol.is_empty() {
        return Err(format!("`{s}`: the symbol is empty"));
    }
    Ok(InstrumentSpec::new(
        symbol,
        decimals("price", price)?,
        decimals("size", size)?,
        depth,
    ))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Report { log, svg, no_svg } => report(&log, svg, no_svg),
        Command::Replay {
            recordings,
            venue,
            instruments,
            jsonl,
            real_time,
            shm,
            shm_capacity,
        } => {
            let ring = match shm.map(|p| tickwire_feed::shm::Writer::create(&p, shm_capacity)) {
                None => None,
                Some(Ok(w)) => Some(w),
                Some(Err(e)) => {
                    eprintln!("tickwire-feed replay: --shm: {e}");
                    return ExitCode::from(2);
                }
            };
            run_replay(&recordings, venue, &instruments, jsonl, real_time, ring)
        }
    }
}

fn run_replay(
    recordings: &[PathBuf],
    venue: Venue,
    instruments: &[InstrumentSpec],
    jsonl: Option<PathBuf>,
    real_time: bool,
    mut ring: Option<tickwire_feed::shm::Writer>,
) -> ExitCode {
    use std::io::Write;
    let mut files = Vec::new();
    for r in recordings {
        let found = replay::files_for(r);
        if found.is_empty() {
            eprintln!(
                "tickwire-feed replay: {}: no such recording (a file, or a base name with {}.0.twrec)",
                r.display(),
                r.display()
            );
            return ExitCode::from(2);
        }
        files.extend(found);
    }
    let mut out: Option<Box<dyn Write>> = match jsonl.as_deref() {
        None => None,
        Some(p) if p.as_os_str() == "-" => {
            Some(Box::new(std::io::stdout().lock()) as Box<dyn Write>)
        }
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Some(Box::new(f) as Box<dyn Write>),
            Err(e) => {
                eprintln!("tickwire-feed replay: {}: {e}", p.display());
                return ExitCode::FAILURE;
            }
        },
    }
    .map(|w| Box::new(std::io::BufWriter::with_capacity(1 << 16, w)) as Box<dyn Write>);
    let names: Vec<Instrument> = instruments
        .iter()
        .map(|i| Instrument {
            venue: venue.name().to_owned(),
            symbol: i.symbol.clone(),
            price_scale: i.price_scale,
            size_scale: i.size_scale,
        })
        .collect();
    let mut line = Vec::with_capacity(512);
    let mut write_error = None;
    let pace = if real_time { Pace::Original } else { Pace::Max };
    let result = replay::replay(&files, venue, instruments, pace, |event| {
        if let Some(ring) = ring.as_mut() {
            ring.publish(&event);
        }
        if let (Some(out), None) = (out.as_mut(), &write_error)
            && let Some(name) = names.get(event.instrument.0 as usize)
        {
            line.clear();
            sink::json_line(&event, name, &mut line);
            if let Err(e) = out.write_all(&line) {
                write_error = Some(e);
            }
        }
    });
    if let Some(e) = write_error.or_else(|| out.as_mut().and_then(|o| o.flush().err())) {
        eprintln!("tickwire-feed replay: writing events: {e}");
        return ExitCode::FAILURE;
    }
    match result {
        Ok(stats) => {
            let secs = stats.elapsed.as_secs_f64().max(1e-9);
            eprintln!(
                "{} records, {} messages, {} REST responses, {} events, {} undecodable; \
                 {:.3} s, {:.0} messages/s",
                stats.records,
                stats.messages,
                stats.responses,
                stats.events,
                stats.decode_errors,
                secs,
                stats.messages as f64 / secs
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tickwire-feed replay: {e}");
            ExitCode::FAILURE
        }
    }
}

fn report(log: &std::path::Path, svg: Option<PathBuf>, no_svg: bool) -> ExitCode {
    let report = match Report::read(log) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tickwire-feed report: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.table());
    println!(
        "{} interval histograms, {} series",
        report.intervals,
        report.series.len()
    );
    if !no_svg {
        let svg = svg.unwrap_or_else(|| log.with_extension("svg"));
        if let Err(e) = report.write_svg(&svg) {
            eprintln!("tickwire-feed report: {e}");
            return ExitCode::FAILURE;
        }
        println!("plot written to {}", svg.display());
    }
    ExitCode::SUCCESS
}
