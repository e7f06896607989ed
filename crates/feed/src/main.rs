//! `tickwire-feed`: the feed handler binary. `demo` (also what it does with
//! no command) runs the exchange simulator and the feed together offline;
//! `sim` serves the simulator alone; `replay` runs a recording through the
//! venue adapters; `report` reads a latency log (`.hlog`).

#![allow(clippy::print_stdout)] // A command-line tool reports on stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tickwire_feed::demo::DemoConfig;
use tickwire_feed::replay::{self, Pace, Venue};
use tickwire_feed::sink::{self, Instrument};
use tickwire_tsc::Report;
use tickwire_venues::InstrumentSpec;

#[derive(Parser)]
#[command(name = "tickwire-feed", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the exchange simulator and the feed together, offline, over TLS
    /// on loopback: a status line each second, then the per-stage latency
    /// table, the `.hlog` and its SVG plot. What the binary does when given
    /// no command.
    Demo(DemoArgs),
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

#[derive(clap::Args, Clone, Debug)]
struct DemoArgs {
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Simulator market steps per second (about 1.6 messages each).
    #[arg(long, default_value_t = 20_000)]
    rate: u32,
    /// Pin the feed thread to this core [default: the last one].
    #[arg(long)]
    core: Option<usize>,
    /// Spin on the sockets instead of blocking in epoll (burns the core).
    #[arg(long)]
    busy_poll: bool,
    /// Where to write the latency log (the plot goes next to it, `.svg`).
    #[arg(long, default_value = "tickwire-demo.hlog")]
    hlog: PathBuf,
}

impl Default for DemoArgs {
    fn default() -> DemoArgs {
        DemoArgs {
            seconds: 10,
            rate: 20_000,
            core: None,
            busy_poll: false,
            hlog: PathBuf::from("tickwire-demo.hlog"),
        }
    }
}

/// A flag SIGINT and SIGTERM set: the run loops stop, flush and exit 0.
fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    Ok(stop)
}

fn demo(args: &DemoArgs) -> ExitCode {
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tickwire-feed demo: cannot install signal handlers: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = DemoConfig {
        duration: Duration::from_secs(args.seconds),
        rate: args.rate,
        core: args.core,
        busy_poll: args.busy_poll,
        hlog: args.hlog.clone(),
        svg: true,
    };
    eprintln!(
        "tickwire demo: a Binance-like simulator (BTCUSDT, ETHUSDT; {} steps/s) and the feed, \
         over TLS on loopback, for {} s",
        args.rate, args.seconds
    );
    match tickwire_feed::demo::run(&config, &stop, |line| eprintln!("{line}")) {
        Ok(s) => {
            println!();
            print!("{}", s.table);
            let secs = s.elapsed.as_secs_f64().max(1e-9);
            println!(
                "feed on core {}: {} messages ({:.0}/s), {} events, books valid {}/2, \
                 {} gaps, {} reconnects, {} undecodable",
                s.core,
                s.messages,
                s.messages as f64 / secs,
                s.events,
                s.books_valid,
                s.gaps,
                s.reconnects,
                s.decode_errors
            );
            println!(
                "latency log: {}  plot: {}",
                args.hlog.display(),
                args.hlog.with_extension("svg").display()
            );
            println!(
                "stages: exchange = simulator send -> feed read (the wire, TLS write included); \
                 total = read -> handled"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tickwire-feed demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        return demo(&DemoArgs::default());
    };
    match command {
        Command::Demo(args) => demo(&args),
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
