//! Replaying a recording through the same adapters (decoders, books,
//! events) the live feed uses, as fast as possible (a benchmark) or at the
//! recording's own pace.
//!
//! Per record: a received message goes to the venue's adapter; a REST
//! response goes to the book whose symbol the fetch's URL names (the
//! `symbol=` of the `Opened` record on the same connection); a closed
//! connection tells the adapter it dropped (every valid book gaps and
//! resyncs, as live). Sent messages and openings are context only.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tickwire_venues::book::Limit;
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{DecodeError, Event, InstrumentSpec};

use crate::live::Adapter;
use crate::recording::{self, Kind, Reader, Record, RecordingError};

pub use tickwire_venues::Venue;

/// Which of a recording's connections a replay takes. A feed thread
/// records all its venues into one recording; a replay is one venue's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Connections {
    /// Every connection except those to another venue's public host
    /// ([`Venue::hosts`]): a recording of Binance and OKX replayed as
    /// Binance skips the OKX connections; connections to other hosts (a
    /// simulator, a proxy) are kept.
    #[default]
    OfVenue,
    /// Only connections whose recorded endpoint contains this text.
    Matching(String),
}

impl Connections {
    /// Whether a connection opened to `endpoint` is replayed as `venue`.
    pub fn takes(&self, venue: Venue, endpoint: &str) -> bool {
        match self {
            Connections::Matching(text) => endpoint.contains(text.as_str()),
            Connections::OfVenue => {
                // An endpoint that does not parse names no venue: kept.
                let Ok(endpoint) = tickwire_net::Endpoint::parse(endpoint) else {
                    return true;
                };
                let host = endpoint.host();
                venue.hosts().contains(&host)
                    || !Venue::ALL
                        .iter()
                        .any(|(_, other)| other.hosts().contains(&host))
            }
        }
    }
}

/// How fast to replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// As fast as the adapter goes.
    Max,
    /// Each record when its wall-clock time, relative to the first, is due.
    Original,
}

/// What a replay did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Records read.
    pub records: u64,
    /// Received messages given to the adapter.
    pub messages: u64,
    /// REST responses given to a book.
    pub responses: u64,
    /// Messages the adapter could not decode (counted, not fatal, as live).
    pub decode_errors: u64,
    /// Connections left out (see [`Connections`]), counted at each
    /// `Opened` record.
    pub skipped_connections: u64,
    /// Events emitted.
    pub events: u64,
    /// Time spent, from the first record to the last.
    pub elapsed: Duration,
}

/// Why a replay stopped.
#[derive(Debug)]
pub enum ReplayError {
    /// A file could not be opened.
    Open(PathBuf, io::Error),
    /// A file's records could not be read.
    Recording(PathBuf, RecordingError),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Open(p, e) => write!(f, "{}: {e}", p.display()),
            ReplayError::Recording(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for ReplayError {}

/// The value of `key` in a URL's query.
fn query<'u>(url: &'u str, key: &str) -> Option<&'u str> {
    let query = url.split_once('?')?.1;
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
}

/// The `symbol=` of a URL's query.
fn symbol_of(url: &str) -> Option<&str> {
    query(url, "symbol")
}

/// Reads every record of `files`, in order, into `each`.
fn for_each_record(files: &[PathBuf], mut each: impl FnMut(Record<'_>)) -> Result<(), ReplayError> {
    for path in files {
        let file = File::open(path).map_err(|e| ReplayError::Open(path.clone(), e))?;
        let mut reader = Reader::new(BufReader::with_capacity(1 << 20, file))
            .map_err(|e| ReplayError::Recording(path.clone(), e))?;
        while let Some(record) = reader
            .next_record()
            .map_err(|e| ReplayError::Recording(path.clone(), e))?
        {
            each(record);
        }
    }
    Ok(())
}

/// Replays `files` (one recording's series, in order) as `venue` with
/// `instruments`, the `connections` chosen, handing every event to `emit`.
pub fn replay(
    files: &[PathBuf],
    venue: Venue,
    instruments: &[InstrumentSpec],
    connections: &Connections,
    pace: Pace,
    mut emit: impl FnMut(Event),
) -> Result<Stats, ReplayError> {
    replay_timed(files, venue, instruments, connections, pace, |e, _| emit(e))
}

/// [`replay`], handing each event with the wall-clock time its message
/// was received at (Unix ns, as recorded): the recording's own receive
/// time, which its TSC stamps cannot give on another machine or boot.
pub fn replay_timed(
    files: &[PathBuf],
    venue: Venue,
    instruments: &[InstrumentSpec],
    connections: &Connections,
    pace: Pace,
    mut emit: impl FnMut(Event, u64),
) -> Result<Stats, ReplayError> {
    let mut adapter = Adapter::new(venue, instruments);
    let mut stats = Stats::default();
    let mut endpoints: HashMap<u32, String> = HashMap::new();
    // Connections left out, until their number is opened again (a
    // recording may not say `Opened` again when a stream reconnects).
    let mut skipped: HashSet<u32> = HashSet::new();
    let mut buf = Vec::new();
    let started = Instant::now();
    let mut first_wall = None;
    for_each_record(files, |record| {
        stats.records += 1;
        if record.kind == Kind::Opened {
            if connections.takes(venue, &String::from_utf8_lossy(record.payload)) {
                skipped.remove(&record.conn);
            } else {
                skipped.insert(record.conn);
                endpoints.remove(&record.conn);
                stats.skipped_connections += 1;
            }
        }
        if !skipped.is_empty() && skipped.contains(&record.conn) {
            return;
        }
        if pace == Pace::Original {
            let first = *first_wall.get_or_insert(record.wall_ns);
            let due = Duration::from_nanos(record.wall_ns.saturating_sub(first));
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        let wall_ns = record.wall_ns;
        let mut count = |e: Event| {
            stats.events += 1;
            emit(e, wall_ns);
        };
        // The adapters decode in place, with padding after the text.
        let padded = |buf: &mut Vec<u8>, payload: &[u8]| {
            buf.clear();
            buf.extend_from_slice(payload);
            buf.resize(payload.len() + INPUT_PADDING, 0);
        };
        let result: Result<(), DecodeError> = match record.kind {
            Kind::Received if !record.binary => {
                stats.messages += 1;
                padded(&mut buf, record.payload);
                adapter
                    .adapter()
                    .on_message(&mut buf, record.payload.len(), record.tsc, &mut count)
                    .map(drop)
            }
            Kind::Response => {
                stats.responses += 1;
                let url = endpoints.get(&record.conn);
                let symbol = url.and_then(|u| symbol_of(u));
                // The limit the recorded fetch asked for: a side with
                // fewer levels was the market's whole side. Without
                // one, each side may have gone on below.
                let limit = url
                    .and_then(|u| query(u, "limit"))
                    .and_then(|l| l.parse().ok())
                    .map_or(Limit::Unknown, Limit::Levels);
                match (&mut adapter, symbol) {
                    (Adapter::Binance(a), Some(symbol)) => match a.instrument(symbol) {
                        Some(id) => {
                            padded(&mut buf, record.payload);
                            a.on_snapshot_at(
                                id,
                                limit,
                                &mut buf,
                                record.payload.len(),
                                record.tsc,
                                &mut count,
                            )
                            .map(drop)
                        }
                        None => Ok(()),
                    },
                    _ => Ok(()),
                }
            }
            Kind::Opened => {
                endpoints.insert(
                    record.conn,
                    String::from_utf8_lossy(record.payload).into_owned(),
                );
                Ok(())
            }
            Kind::Closed => {
                // A fetch's connection ending is not a stream dropping.
                let fetch = endpoints
                    .remove(&record.conn)
                    .is_some_and(|u| u.starts_with("https://") || u.starts_with("http://"));
                if !fetch {
                    adapter.adapter().on_disconnect(record.tsc, &mut count);
                }
                Ok(())
            }
            Kind::Received | Kind::Sent => Ok(()),
        };
        if result.is_err() {
            stats.decode_errors += 1;
        }
    })?;
    stats.elapsed = started.elapsed();
    Ok(stats)
}

/// A recording as a simulator's script ([`tickwire_sim::Script`]): every
/// text message its stream connections received, with its wall time, to
/// send to every client; and the first REST response of each symbol (named
/// by the fetch URL's `symbol=`) as that symbol's snapshot, served before
/// the messages the recording had after it (`snapshots_by`: a feed sent
/// the script as fast as it takes it buffers no more diffs than the
/// recorded one did, however long its fetches take).
#[cfg(feature = "sim")]
pub fn script(files: &[PathBuf], real_time: bool) -> Result<tickwire_sim::Script, ReplayError> {
    let mut urls: HashMap<u32, String> = HashMap::new();
    let mut fetches: HashSet<u32> = HashSet::new();
    let mut script = tickwire_sim::Script {
        real_time,
        ..tickwire_sim::Script::default()
    };
    for_each_record(files, |r| match r.kind {
        Kind::Opened => {
            let url = String::from_utf8_lossy(r.payload).into_owned();
            if url.starts_with("http://") || url.starts_with("https://") {
                fetches.insert(r.conn);
            } else {
                fetches.remove(&r.conn);
            }
            urls.insert(r.conn, url);
        }
        Kind::Response => {
            if let Some(symbol) = urls.get(&r.conn).and_then(|u| symbol_of(u))
                && !script.snapshots.contains_key(symbol)
            {
                let text = String::from_utf8_lossy(r.payload).into_owned();
                script.snapshots.insert(symbol.to_owned(), text);
                script.snapshots_by = Some(script.messages.len());
            }
        }
        Kind::Received if !r.binary && !fetches.contains(&r.conn) => {
            if let Ok(text) = std::str::from_utf8(r.payload) {
                script.messages.push((None, r.wall_ns, text.to_owned()));
            }
        }
        _ => {}
    })?;
    Ok(script)
}

/// The files to replay for `path`: the file itself, or, for the base name
/// a [`Writer`](recording::Writer) was given, its whole series.
pub fn files_for(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        recording::files(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn venue_names_round_trip_and_unknown_ones_are_listed() {
        for (name, venue) in Venue::ALL {
            assert_eq!(name.parse::<Venue>(), Ok(venue));
            assert_eq!(venue.name(), name);
        }
        let e = "binance".parse::<Venue>().unwrap_err();
        assert!(e.contains("binance-spot") && e.contains("deribit"), "{e}");
    }

    #[test]
    fn the_snapshot_symbol_comes_from_the_fetched_url() {
        assert_eq!(
            symbol_of("https://api.binance.com/api/v3/depth?symbol=BTCUSDT&limit=5000"),
            Some("BTCUSDT")
        );
        assert_eq!(
            symbol_of("https://x/depth?limit=5&symbol=ETHUSDT"),
            Some("ETHUSDT")
        );
        assert_eq!(symbol_of("wss://stream.binance.com:9443/stream"), None);
    }

    #[test]
    fn a_replay_takes_its_venues_connections_and_unknown_hosts() {
        let of_venue = Connections::OfVenue;
        let spot = Venue::BinanceSpot;
        for kept in [
            "wss://stream.binance.com:9443/stream",
            "https://api.binance.com/api/v3/depth?symbol=BTCUSDT&limit=1000",
            "wss://localhost:9443/stream",
            "wss://127.0.0.1:1/stream",
            "wss://stream.binance.com.example.org/stream",
        ] {
            assert!(of_venue.takes(spot, kept), "{kept}");
        }
        for skipped in [
            "wss://ws.okx.com:8443/ws/v5/public",
            "wss://fstream.binance.com/public/stream",
            "https://fapi.binance.com/fapi/v1/depth?symbol=BTCUSDT&limit=1000",
            "wss://ws.kraken.com/v2",
        ] {
            assert!(!of_venue.takes(spot, skipped), "{skipped}");
        }
        assert!(of_venue.takes(Venue::Okx, "wss://ws.okx.com:8443/ws/v5/public"));
        assert!(of_venue.takes(spot, "not a url"));
        let matching = Connections::Matching(":9443".into());
        assert!(matching.takes(Venue::Okx, "wss://localhost:9443/stream"));
        assert!(!matching.takes(spot, "https://localhost:9444/api"));
    }
}
