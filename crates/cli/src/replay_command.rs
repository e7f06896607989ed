//! `tickwire-feed replay`: recordings through a venue's adapter, every
//! event to JSON Lines and the shared-memory ring, and what it found said.

use std::path::PathBuf;
use std::process::ExitCode;

use tickwire_feed::replay::{self, Connections, Pace, Venue};
use tickwire_feed::sink::{self, Instrument};
use tickwire_venues::InstrumentSpec;

use crate::error::{CliError, CliResult};

pub(crate) fn run_replay(
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
