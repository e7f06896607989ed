//! `tickwire-feed run` and `record`: a configuration checked (and its
//! instruments against each venue's list), its plan printed, its outputs
//! placed in a run directory, and the run until a signal stops it.

use std::path::PathBuf;
use std::process::ExitCode;

use tickwire_feed::config::FeedConfig;
use tickwire_feed::runner::Plan;

use crate::error::{CliError, CliResult};
use crate::{runs, stop_on_signals};

pub(crate) fn run(
    path: &std::path::Path,
    record: Option<(Option<PathBuf>, u64)>,
    check: bool,
) -> CliResult {
    // A configuration that cannot be used: its key named, and where the
    // value came from (the file, or an environment variable), exit 2.
    let refuse = |e: &tickwire_feed::config::ConfigError| {
        CliError::Refused(format!("tickwire-feed: {}", e.clone().in_file(path)))
    };
    let mut config = FeedConfig::load(path).map_err(|e| refuse(&e))?;
    let command = if record.is_some() { "record" } else { "run" };
    // `--out` replaces the file's `record.path`: a problem with it is
    // `--out`'s, not the file's line.
    let out_flag = record.as_ref().and_then(|(given, _)| given.clone());
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
    config.preflight().map_err(|e| match &out_flag {
        Some(out) if e.key == "record.path" => CliError::Refused(format!(
            "tickwire-feed {command}: --out {}: {}",
            out.display(),
            e.problem
        )),
        _ => refuse(&e),
    })?;
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
            if config.sinks.aeron.is_some() {
                eprintln!(
                    "aeron: {} events published, {} dropped (no subscriber connected, or back pressure)",
                    s.aeron_published, s.aeron_dropped
                );
            }
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
