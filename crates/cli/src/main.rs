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

use clap::Parser;
use tickwire_feed::config::FeedConfig;
use tickwire_feed::replay::{self, Connections, Pace, Venue};
use tickwire_feed::runner::Plan;
use tickwire_feed::sink::{self, Instrument};
use tickwire_tsc::Report;
use tickwire_venues::InstrumentSpec;

mod cli;
mod demo_command;
mod error;
mod logger;
mod runs;

use cli::{Cli, Command, DemoArgs, InstrumentsArgs};
use demo_command::demo;
use error::{CliError, CliResult};

/// A flag SIGINT and SIGTERM set: the run loops stop, flush and exit 0.
fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    Ok(stop)
}

fn run(path: &std::path::Path, record: Option<(Option<PathBuf>, u64)>, check: bool) -> CliResult {
    // A configuration that cannot be used: its key named, and where the
    // value came from (the file, or an environment variable), exit 2.
    let refuse = |e: &tickwire_feed::config::ConfigError| {
        CliError::Refused(match e.env {
            Some(_) => format!("tickwire-feed: {e}"),
            None => format!("tickwire-feed: {}: {e}", path.display()),
        })
    };
    let mut config = FeedConfig::load(path).map_err(|e| refuse(&e))?;
    let command = if record.is_some() { "record" } else { "run" };
    if let Some((given, mb)) = record {
        if !(1..=1 << 20).contains(&mb) {
            return Err(CliError::Refused(format!(
                "tickwire-feed record: --max-file-mb {mb}: must be between 1 and 1048576"
            )));
        }
        let configured = config.record.take();
        config.record = Some(tickwire_feed::config::RecordConfig {
            // `--out` is in place before the outputs are placed: relative,
            // it goes into the run directory like the configuration's.
            path: given
                .or_else(|| configured.as_ref().map(|r| r.path.clone()))
                .unwrap_or_else(|| PathBuf::from("rec")),
            max_file_bytes: mb << 20,
            sync_interval: configured.and_then(|r| r.sync_interval),
        });
    }
    // Everything `run` checks before it starts, `--check` checks too, and
    // before any run directory is made.
    config.preflight().map_err(|e| refuse(&e))?;
    // Every instrument against its venue's own list, before anything is
    // made or connected: an unknown symbol is a configuration error.
    let lists = match tickwire_feed::instruments::check(
        &mut config,
        Some(std::path::Path::new(runs::ROOT)),
        |_, line| eprintln!("{line}"),
    ) {
        Ok(lists) => lists,
        Err(e) => {
            let message = format!("tickwire-feed: {}: {e}", path.display());
            return Err(match e.exit_code() {
                2 => CliError::Refused(message),
                _ => CliError::Failed(message),
            });
        }
    };
    print_plan(&config);
    if check {
        println!("configuration ok");
        return Ok(ExitCode::SUCCESS);
    }
    // The configuration's relative output paths go into a new run
    // directory, made once the configuration has passed every check.
    let mut run_dir = None;
    if config.relative_outputs() {
        match runs::create(command) {
            Ok(dir) => {
                config.place_outputs(&dir);
                eprintln!("outputs in {}", dir.display());
                if let Err(e) = tickwire_feed::instruments::save(&dir, &lists) {
                    eprintln!(
                        "tickwire-feed {command}: cannot keep the instrument lists in {}: {e}",
                        dir.display()
                    );
                }
                run_dir = Some(dir);
            }
            Err(e) => {
                return Err(CliError::Failed(format!(
                    "tickwire-feed {command}: cannot make its run directory under {}/: {e}",
                    runs::ROOT
                )));
            }
        }
    }
    // A start that fails leaves no run directory behind, and
    // `runs/latest-<command>` where it was.
    let discard = |run_dir: &Option<PathBuf>| {
        if let Some(dir) = run_dir
            && let Err(e) = runs::discard(command, dir)
        {
            eprintln!(
                "tickwire-feed {command}: cannot remove {}: {e}",
                dir.display()
            );
        }
    };
    if let Err(e) = config.make_output_dirs() {
        discard(&run_dir);
        return Err(refuse(&e));
    }
    let stop = stop_on_signals().map_err(|e| {
        discard(&run_dir);
        CliError::Failed(format!(
            "tickwire-feed: cannot install signal handlers: {e}"
        ))
    })?;
    match tickwire_feed::runner::run(&config, &stop, |line| eprintln!("{line}")) {
        Ok(s) => {
            eprintln!(
                "stopped after {:.1} s: {} messages, {} events, {} JSON lines ({} dropped), \
                 {} gaps, {} reconnects, {} undecodable, {} failed connection attempts",
                s.elapsed.as_secs_f64(),
                s.messages,
                s.events,
                s.lines,
                s.dropped,
                s.gaps,
                s.reconnects,
                s.decode_errors,
                s.connect_failures
            );
            for (venue, cause) in &s.never_connected {
                eprintln!("tickwire-feed: venue {venue} NEVER CONNECTED: {cause}");
            }
            Ok(ExitCode::SUCCESS)
        }
        // Nothing connected: its own code, so a supervisor tells it from
        // a bad configuration (2) and a failure while running (1).
        Err(e @ tickwire_feed::runner::RunError::NeverConnected(_)) => {
            Err(CliError::NeverConnected(format!("tickwire-feed: {e}")))
        }
        // Nothing started: what the machine refused of the configuration
        // (a core, a priority), exit 2 as for an invalid value.
        Err(e @ tickwire_feed::runner::RunError::Setup(_)) => {
            discard(&run_dir);
            Err(CliError::Refused(format!("tickwire-feed: {e}")))
        }
        Err(e) => Err(CliError::Failed(format!("tickwire-feed: {e}"))),
    }
}

/// The plan `run` and `run --check` print: each thread's core and venues,
/// each venue's connections, each thread's memory.
fn print_plan(config: &FeedConfig) {
    let plan = Plan::of(config);
    for (n, t) in plan.threads.iter().enumerate() {
        eprintln!(
            "thread {n}: core {}, {}, venues {}",
            t.core.map_or("unpinned".to_string(), |c| c.to_string()),
            t.priority
                .map_or("normal priority".to_string(), |p| format!("SCHED_FIFO {p}")),
            t.venues.join(", ")
        );
    }
    for v in &plan.venues {
        eprintln!(
            "venue {} ({}): {} instruments on {} connection(s){}",
            v.name,
            v.venue.name(),
            v.instruments,
            v.connections,
            v.endpoint
                .as_ref()
                .map_or(String::new(), |e| format!(" to {e}"))
        );
    }
    // What each feed thread sets aside at start-up, and no more after.
    let mib = |b: usize| b as f64 / f64::from(1u32 << 20);
    for (n, t) in plan.threads.iter().enumerate() {
        if let Some(b) = &t.memory {
            eprintln!(
                "thread {n} memory: {} connection slots {:.1} MiB (the largest message each venue \
                 sends, REST snapshots included), {} books {:.1} MiB (their levels and diff buffers), \
                 {:.1} MiB in all",
                b.slots,
                mib(b.slot_bytes),
                b.books,
                mib(b.book_bytes),
                mib(b.slot_bytes + b.book_bytes)
            );
        }
    }
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

/// The `sim` command's arguments, checked.
struct SimArgs {
    listen: std::net::SocketAddr,
    venues: Vec<Venue>,
    rate: u32,
    burst: u32,
    ca_out: Option<PathBuf>,
    plain: bool,
    seed: u64,
    seconds: Option<u64>,
    replay: Option<tickwire_sim::Script>,
}

fn serve_sim(args: SimArgs) -> CliResult {
    use tickwire_sim::{SimConfig, Simulator};
    let SimArgs {
        listen,
        venues,
        rate,
        burst,
        ca_out,
        plain,
        seed,
        seconds,
        replay,
    } = args;
    // The run directory made for the CA, if one was: taken back (with
    // `runs/latest-sim`) if the simulators do not start.
    let mut run_dir = None;
    let ca_out = match ca_out {
        Some(path) => path,
        None if plain => PathBuf::new(),
        None => match runs::create("sim") {
            Ok(dir) => {
                run_dir = Some(dir.clone());
                dir.join("sim-ca.pem")
            }
            Err(e) => {
                return Err(CliError::Failed(format!(
                    "tickwire-feed sim: cannot make its run directory under {}/: {e}",
                    runs::ROOT
                )));
            }
        },
    };
    let ca_out = ca_out.as_path();
    let stop = stop_on_signals().map_err(|e| {
        CliError::Failed(format!(
            "tickwire-feed sim: cannot install signal handlers: {e}"
        ))
    })?;
    let tls = if plain {
        None
    } else {
        let (tls, ca) = tickwire_sim::self_signed().map_err(|e| {
            CliError::Failed(format!("tickwire-feed sim: cannot make a certificate: {e}"))
        })?;
        std::fs::write(ca_out, ca).map_err(|e| {
            CliError::Refused(format!(
                "tickwire-feed sim: --ca-out {}: {e}",
                ca_out.display()
            ))
        })?;
        Some(tls)
    };
    let (ws, http) = if plain {
        ("ws", "http")
    } else {
        ("wss", "https")
    };
    let replay = replay.map(Arc::new);
    let per_venue = (rate / venues.len().max(1) as u32).max(1);
    let mut simulators = Vec::new();
    for (n, &venue) in venues.iter().enumerate() {
        let mut addr = listen;
        if addr.port() != 0 {
            addr.set_port(addr.port() + n as u16);
        }
        let simulator = match Simulator::start(SimConfig {
            addr,
            tls: tls.clone(),
            rate: per_venue,
            burst,
            seed,
            script: replay.clone(),
            ..SimConfig::new(venue)
        }) {
            Ok(s) => s,
            Err(e) => {
                if let Some(dir) = &run_dir {
                    drop(simulators);
                    let _ = runs::discard("sim", dir);
                }
                return Err(CliError::Refused(format!(
                    "tickwire-feed sim: --listen {addr}: {e}"
                )));
            }
        };
        let port = simulator.addr().port();
        let symbols: Vec<String> = SimConfig::new(venue)
            .instruments
            .iter()
            .map(|i| i.symbol.clone())
            .collect();
        let what = match &replay {
            Some(r) => format!("replaying {} messages", r.messages.len()),
            None => format!("{} at {per_venue} steps/s", symbols.join(", ")),
        };
        eprintln!(
            "{}: {what}: {ws}://localhost:{port} (REST {http}://localhost:{port})",
            venue.name()
        );
        simulators.push(simulator);
    }
    if !plain {
        eprintln!(
            "trust {} (endpoint and rest of each [[venue]], tls.ca_file)",
            ca_out.display()
        );
    }
    let started = std::time::Instant::now();
    while !stop.load(std::sync::atomic::Ordering::Relaxed)
        && seconds.is_none_or(|s| started.elapsed() < Duration::from_secs(s))
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    for (venue, simulator) in venues.iter().zip(simulators) {
        let stats = simulator.stop();
        eprintln!(
            "{} simulator stopped: {} steps, {} messages to {} clients ({} closed, {} dropped, {} closed by the venue), {} REST answers",
            venue.name(),
            stats.steps,
            stats.messages,
            stats.clients,
            stats.closed_clients,
            stats.dropped_clients,
            stats.kicked_clients,
            stats.snapshots
        );
    }
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
            let replay = match replay {
                None => None,
                // A recording is one venue's messages, played as recorded:
                // serve it as that one venue.
                Some(path) if venues.0.len() != 1 => {
                    return Err(CliError::Refused(format!(
                        "tickwire-feed sim: --replay {} plays one venue's recording: name that venue alone in --venues",
                        path.display()
                    )));
                }
                Some(path) => {
                    let files = replay::files_for(&path);
                    if files.is_empty() {
                        return Err(CliError::Refused(format!(
                            "tickwire-feed sim: --replay {}: no such recording",
                            path.display()
                        )));
                    }
                    let script = replay::script(&files, real_time).map_err(|e| {
                        CliError::Refused(format!(
                            "tickwire-feed sim: --replay {}: {e}",
                            path.display()
                        ))
                    })?;
                    Some(script)
                }
            };
            let venues = venues.0;
            serve_sim(SimArgs {
                listen,
                venues,
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

fn run_replay(
    recordings: &[PathBuf],
    venue: Venue,
    instruments: &[InstrumentSpec],
    connections: &Connections,
    jsonl: Option<PathBuf>,
    real_time: bool,
    mut ring: Option<tickwire_feed::shm::Writer>,
) -> CliResult {
    use std::io::Write;
    let mut files = Vec::new();
    for r in recordings {
        let found = replay::files_for(r);
        if found.is_empty() {
            return Err(CliError::Refused(format!(
                "tickwire-feed replay: {}: no such recording (a file, or a base name with {}.0.twrec)",
                r.display(),
                r.display()
            )));
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
                return Err(CliError::Failed(format!(
                    "tickwire-feed replay: {}: {e}",
                    p.display()
                )));
            }
        },
    }
    .map(|w| Box::new(std::io::BufWriter::with_capacity(1 << 16, w)) as Box<dyn Write>);
    let mut encoder = sink::Encoder::new(Instrument::of_venue(venue.name(), instruments));
    let mut line = Vec::with_capacity(1 << 12);
    let mut write_error = None;
    if let Some(out) = out.as_mut() {
        sink::Encoder::header(&mut line);
        write_error = out.write_all(&line).err();
    }
    let pace = if real_time { Pace::Original } else { Pace::Max };
    let result = replay::replay_timed(
        &files,
        venue,
        instruments,
        connections,
        pace,
        |event, wall_ns| {
            if let Some(ring) = ring.as_mut() {
                ring.publish(&event);
            }
            if let (Some(out), None) = (out.as_mut(), &write_error) {
                line.clear();
                // The recording's receive time: its TSC is another boot's.
                encoder.encode(&event, wall_ns, &mut line);
                if let Err(e) = out.write_all(&line) {
                    write_error = Some(e);
                }
            }
        },
    );
    if let Some(e) = write_error.or_else(|| out.as_mut().and_then(|o| o.flush().err())) {
        return Err(CliError::Failed(format!(
            "tickwire-feed replay: writing events: {e}"
        )));
    }
    match result {
        Ok(stats) => {
            let secs = stats.elapsed.as_secs_f64().max(1e-9);
            eprintln!(
                "{} records, {} messages, {} REST responses, {} events, {} undecodable, \
                 {} connections of other venues left out; {:.3} s, {:.0} messages/s",
                stats.records,
                stats.messages,
                stats.responses,
                stats.events,
                stats.decode_errors,
                stats.skipped_connections,
                secs,
                stats.messages as f64 / secs
            );
            // A crash's torn tail is said and the replay is a success;
            // any other damage was replayed around, and fails it.
            for d in &stats.damage {
                eprintln!("tickwire-feed replay: warning: {d}");
            }
            if stats.damage.iter().any(|d| !d.is_torn_tail()) {
                return Err(CliError::Failed(
                    "tickwire-feed replay: the recording is damaged other than by a crash's \
                     torn tail (above): records were lost"
                        .to_string(),
                ));
            }
            // Mostly undecodable: the wrong venue, or decimals too few for
            // the values it carries. Said, and a failed replay.
            if stats.messages > 0 && stats.decode_errors * 2 > stats.messages {
                return Err(CliError::Failed(format!(
                    "tickwire-feed replay: {} of {} messages could not be decoded: is --venue \
                     the venue the recording is from, and do the instruments' decimals \
                     (SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS) hold the prices and sizes it sends?",
                    stats.decode_errors, stats.messages
                )));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(CliError::Failed(format!("tickwire-feed replay: {e}"))),
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
