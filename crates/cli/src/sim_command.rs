//! `tickwire-feed sim`: the exchange simulator served on its own, one
//! listener per venue, until a signal (or `--seconds`) stops it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tickwire_feed::replay::Venue;

use crate::error::{CliError, CliResult};
use crate::{runs, stop_on_signals};

/// The `sim` command's arguments, checked.
pub(crate) struct SimArgs {
    pub(crate) listen: std::net::SocketAddr,
    pub(crate) venues: Vec<Venue>,
    pub(crate) rate: u32,
    pub(crate) burst: u32,
    pub(crate) ca_out: Option<PathBuf>,
    pub(crate) plain: bool,
    pub(crate) seed: u64,
    pub(crate) seconds: Option<u64>,
    pub(crate) replay: Option<tickwire_sim::Script>,
}

/// `sim --replay PATH`'s script: a recording is one venue's messages,
/// played as recorded, so it is served as that one venue (`venues` of
/// them named).
pub(crate) fn replay_script(
    path: Option<PathBuf>,
    venues: usize,
    real_time: bool,
) -> Result<Option<tickwire_sim::Script>, CliError> {
    let Some(path) = path else {
        return Ok(None);
    };
    if venues != 1 {
        return Err(CliError::Refused(format!(
            "tickwire-feed sim: --replay {} plays one venue's recording: name that venue alone in --venues",
            path.display()
        )));
    }
    let files = tickwire_feed::replay::files_for(&path);
    if files.is_empty() {
        return Err(CliError::Refused(format!(
            "tickwire-feed sim: --replay {}: no such recording",
            path.display()
        )));
    }
    tickwire_feed::replay::script(&files, real_time)
        .map(Some)
        .map_err(|e| {
            CliError::Refused(format!(
                "tickwire-feed sim: --replay {}: {e}",
                path.display()
            ))
        })
}

/// Serves the simulators of `args` until a signal or `--seconds`.
pub(crate) fn serve_sim(args: SimArgs) -> CliResult {
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
