//! Replaying a recording through the same adapters (decoders, books,
//! events) the live feed uses, as fast as possible (a benchmark) or at the
//! recording's own pace.
//!
//! Per record: a received message goes to the venue's adapter; a REST
//! response goes to the book whose symbol the fetch's URL names (the
//! `symbol=` of the `Opened` record on the same connection); a closed
//! connection tells the adapter it dropped (every valid book gaps and
//! resyncs, as live). Sent messages and openings are context only.
//!
//! A recording cut short (the recorder killed, its machine's power lost,
//! its disk full) replays every whole record before the cut, and the cut
//! is reported ([`Damage`] in [`Stats::damage`]), not an error: where a
//! file of the series cannot be read on, the replay goes on with the next
//! file as after a dropped connection (every book gaps and resyncs), so
//! nothing recorded after the damage is lost either. Only the last file's
//! torn tail ([`Damage::is_torn_tail`]) is what a crash leaves; any other
//! damage (a file cut in the middle of a series, a record that fails its
//! CRC) is corruption, and the `replay` command exits 1 after replaying
//! what it could.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tickwire_venues::book::Limit;
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{DecodeError, Event as VenueEvent, InstrumentSpec};

use crate::id::{Event, FeedId};

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

/// Where a replay could not read a file to its end: the records of that
/// file from `at` on were not replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The file.
    pub file: PathBuf,
    /// The byte offset of the first record not replayed.
    pub at: u64,
    /// A cut (a write that never finished, or a power loss's zeros), not
    /// corruption ([`RecordingError::cut_at`]).
    pub cut: bool,
    /// The file is the last of its series: nothing was recorded after it.
    pub last: bool,
    /// What the reader found there.
    pub error: String,
}

impl Damage {
    /// What a crash leaves: the last file of a series cut inside a record.
    /// Every record the recorder had handed to the OS was replayed but
    /// this one's beginning.
    pub fn is_torn_tail(&self) -> bool {
        self.cut && self.last
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.error)?;
        if self.is_torn_tail() {
            write!(f, "; every record before it was replayed")
        } else if self.last {
            write!(f, "; the file's records from there on were not replayed")
        } else {
            write!(
                f,
                "; the file's records from there on were not replayed (the replay went on \
                 with the next file, as after a dropped connection)"
            )
        }
    }
}

/// What a replay did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// Where files could not be read to their end, in order.
    pub damage: Vec<Damage>,
}

/// Why a replay stopped.
#[derive(Debug)]
pub enum ReplayError {
    /// A file could not be opened.
    Open(PathBuf, io::Error),
    /// A file's records could not be read.
    Recording(PathBuf, RecordingError),
    /// A recording damaged other than by a crash's torn tail, where that
    /// cannot be replayed around (a simulator's script).
    Damaged(Damage),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Open(p, e) => write!(f, "{}: {e}", p.display()),
            ReplayError::Recording(p, e) => write!(f, "{}: {e}", p.display()),
            ReplayError::Damaged(d) => write!(f, "{d}"),
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

/// Reads every record of `files`, in order, into `each`. A file that
/// cannot be read to its end is [`Damage`]: its records up to there are
/// read, `hole` is called if a file follows, and reading goes on with it.
/// A file that is not a recording, or a read that fails, is an error.
fn for_each_record(
    files: &[PathBuf],
    mut each: impl FnMut(Record<'_>),
    mut hole: impl FnMut(),
) -> Result<Vec<Damage>, ReplayError> {
    let mut damage = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let file = File::open(path).map_err(|e| ReplayError::Open(path.clone(), e))?;
        let read = Reader::new(BufReader::with_capacity(1 << 20, file)).and_then(|mut reader| {
            while let Some(record) = reader.next_record()? {
                each(record);
            }
            Ok(())
        });
        let e = match read {
            Ok(()) => continue,
            Err(e) => e,
        };
        let at = match &e {
            RecordingError::Truncated { at }
            | RecordingError::ZeroFilled { at }
            | RecordingError::Corrupt { at }
            | RecordingError::TooLarge { at, .. } => *at,
            _ => return Err(ReplayError::Recording(path.clone(), e)),
        };
        let next = files.get(i + 1);
        damage.push(Damage {
            file: path.clone(),
            at,
            cut: e.cut_at().is_some(),
            last: !next.is_some_and(|n| recording::follows(path, n)),
            error: e.to_string(),
        });
        if next.is_some() {
            hole();
        }
    }
    Ok(damage)
}

/// Replays `files` (one recording's series, in order) as `venue` with
/// `instruments`, the `connections` chosen, handing every event to `emit`
/// (the venue is a feed's only one: an instrument's feed-wide id is its
/// place in `instruments`).
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
    // Set at a hole in the series: the next record is the first after it.
    let dropped = std::cell::Cell::new(false);
    let damage = for_each_record(
        files,
        |record| {
            if dropped.take() {
                // A hole in the series: every stream dropped there.
                adapter
                    .adapter()
                    .on_disconnect(record.tsc, &mut |e: VenueEvent| {
                        let e = e.with_instrument(FeedId(e.instrument.0));
                        stats.events += 1;
                        emit(e, record.wall_ns);
                    });
            }
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
            let mut count = |e: VenueEvent| {
                let e = e.with_instrument(FeedId(e.instrument.0));
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
                // Binance's SBE streams: binary frames, read in place.
                Kind::Received if record.binary => {
                    stats.messages += 1;
                    match &mut adapter {
                        Adapter::Binance(a) => a
                            .on_binary(record.payload, record.tsc, &mut count)
                            .map(drop),
                        _ => Err(DecodeError::Type("binary frame")),
                    }
                }
                Kind::Received => {
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
                Kind::Sent => Ok(()),
            };
            if result.is_err() {
                stats.decode_errors += 1;
            }
        },
        || dropped.set(true),
    )?;
    stats.elapsed = started.elapsed();
    stats.damage = damage;
    Ok(stats)
}

/// A recording as a simulator's script ([`tickwire_sim::Script`]): every
/// message its stream connections received (text, or binary: SBE), with its wall time, to
/// send to every client; and the first REST response of each symbol (named
/// by the fetch URL's `symbol=`) as that symbol's snapshot, served before
/// the messages the recording had after it (`snapshots_by`: a feed sent
/// the script as fast as it takes it buffers no more diffs than the
/// recorded one did, however long its fetches take).
/// A recording cut by a crash (the last file's torn tail) is served up to
/// the cut; any other damage is an error ([`ReplayError::Damaged`]), as a
/// script has no way to say that messages are missing.
#[cfg(feature = "sim")]
pub fn script(files: &[PathBuf], real_time: bool) -> Result<tickwire_sim::Script, ReplayError> {
    let mut urls: HashMap<u32, String> = HashMap::new();
    let mut fetches: HashSet<u32> = HashSet::new();
    let mut script = tickwire_sim::Script {
        real_time,
        ..tickwire_sim::Script::default()
    };
    let damage = for_each_record(
        files,
        |r| match r.kind {
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
            Kind::Received if r.binary && !fetches.contains(&r.conn) => {
                let frame = tickwire_sim::Frame::Binary(r.payload.to_vec());
                script.messages.push((None, r.wall_ns, frame));
            }
            Kind::Received if !fetches.contains(&r.conn) => {
                if let Ok(text) = std::str::from_utf8(r.payload) {
                    let frame = tickwire_sim::Frame::Text(text.to_owned());
                    script.messages.push((None, r.wall_ns, frame));
                }
            }
            _ => {}
        },
        || {},
    )?;
    // A crash's torn tail ends the script where the recording ends; a
    // hole inside would be served as if nothing were missing.
    match damage.into_iter().find(|d| !d.is_torn_tail()) {
        Some(d) => Err(ReplayError::Damaged(d)),
        None => Ok(script),
    }
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

    /// A Binance spot stream of `trades` trades, written to files of at
    /// most `limit` bytes under `base`.
    fn trades_session(base: &Path, trades: u64, limit: u64) -> Vec<PathBuf> {
        let header = recording::Header {
            created_unix_ns: 1,
            ticks_per_second: 1e9,
        };
        let mut w = recording::Writer::create(base, limit, header).unwrap();
        let mut put = |kind, t: u64, payload: &str| {
            w.write(&Record {
                kind,
                conn: 1,
                tsc: t,
                wall_ns: t,
                binary: false,
                payload: payload.as_bytes(),
            })
            .unwrap();
        };
        put(Kind::Opened, 0, "wss://stream.binance.com:9443/ws");
        for t in 1..=trades {
            let trade = format!(
                r#"{{"e":"trade","E":{t},"s":"BTCUSDT","t":{t},"p":"100.50","q":"0.10","T":{t},"m":true,"M":true}}"#
            );
            put(Kind::Received, t, &trade);
        }
        w.finish().unwrap();
        recording::files(base)
    }

    fn replay_trades(files: &[PathBuf]) -> (Stats, Vec<u64>, usize) {
        replay_trades_of(Venue::BinanceSpot, files)
    }

    fn replay_trades_of(venue: Venue, files: &[PathBuf]) -> (Stats, Vec<u64>, usize) {
        let mut trades = Vec::new();
        let mut drops = 0;
        let stats = replay(
            files,
            venue,
            &[InstrumentSpec::new("BTCUSDT", 2, 8, 10)],
            &Connections::OfVenue,
            Pace::Max,
            |e| match e.kind {
                tickwire_venues::Kind::Trade { trade_id, .. } => trades.push(trade_id),
                tickwire_venues::Kind::Disconnected => drops += 1,
                _ => {}
            },
        )
        .unwrap();
        (stats, trades, drops)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "tickwire-replay-unit-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Cuts `file` `bytes` short.
    fn cut(file: &Path, bytes: u64) {
        let len = std::fs::metadata(file).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
        f.set_len(len - bytes).unwrap();
    }

    #[test]
    fn a_crashs_torn_tail_replays_every_whole_record_and_is_reported() {
        let dir = temp_dir("tail");
        let files = trades_session(&dir.join("s"), 30, 1000);
        assert!(files.len() >= 3, "{files:?}");
        let last = files.last().unwrap();
        cut(last, 5);
        let (stats, trades, drops) = replay_trades(&files);
        assert_eq!(trades, (1..30).collect::<Vec<_>>());
        assert_eq!(drops, 0);
        let [d] = &stats.damage[..] else {
            panic!("{:?}", stats.damage)
        };
        assert!(d.is_torn_tail(), "{d:?}");
        assert_eq!(&d.file, last);
        let text = d.to_string();
        assert!(
            text.contains(&last.display().to_string())
                && text.contains("cut inside the record at byte")
                && text.contains("every record before it was replayed"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_cut_inside_a_series_is_replayed_around_as_a_dropped_connection() {
        let dir = temp_dir("middle");
        let files = trades_session(&dir.join("s"), 30, 1000);
        assert!(files.len() >= 3, "{files:?}");
        // The second file loses its last record's end (a power loss
        // without a sync can leave that behind a later file).
        cut(&files[1], 5);
        let (stats, trades, drops) = replay_trades(&files);
        let [d] = &stats.damage[..] else {
            panic!("{:?}", stats.damage)
        };
        assert!(d.cut && !d.last && !d.is_torn_tail(), "{d:?}");
        assert!(d.to_string().contains("went on with the next file"), "{d}");
        // One trade lost, those after it replayed; the books were told
        // the stream dropped where the hole is.
        assert_eq!(trades.len(), 29);
        assert_eq!(drops, 1);
        assert_eq!(trades.last(), Some(&30));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A recording of Binance's SBE streams: its binary frames replay
    /// through the adapter as binary (before, they were skipped), its text
    /// frames (the subscription's reply) as text.
    #[test]
    fn binary_frames_replay_as_sbe() {
        use tickwire_sbe::spot_stream::{Trade, TradesHead, encode};
        let dir = temp_dir("sbe");
        let base = dir.join("s");
        let header = recording::Header {
            created_unix_ns: 1,
            ticks_per_second: 1e9,
        };
        let mut w = recording::Writer::create(&base, 1 << 20, header).unwrap();
        let mut put = |kind, t: u64, payload: &[u8], binary| {
            w.write(&Record {
                kind,
                conn: 1,
                tsc: t,
                wall_ns: t,
                binary,
                payload,
            })
            .unwrap();
        };
        put(
            Kind::Opened,
            0,
            b"wss://stream-sbe.binance.com:9443/stream",
            false,
        );
        put(Kind::Received, 1, br#"{"result":null,"id":1}"#, false);
        for t in 2..=4u64 {
            let mut frame = [0u8; 128];
            let head = TradesHead {
                event_time_us: 1_000,
                transact_time_us: 1_000,
                price_exponent: -2,
                qty_exponent: -2,
            };
            let trade = Trade {
                id: t as i64,
                price: 10_050,
                qty: 10,
                is_buyer_maker: true,
            };
            let n = encode::trades(&mut frame, &head, &[trade], b"BTCUSDT").unwrap();
            put(Kind::Received, t, &frame[..n], true);
        }
        w.finish().unwrap();
        let files = recording::files(&base);
        let (stats, trades, drops) = replay_trades_of(Venue::BinanceSpotSbe, &files);
        assert_eq!(trades, [2, 3, 4]);
        assert_eq!((stats.messages, stats.decode_errors, drops), (4, 0, 0));
        // The SBE host is its own venue's: replayed as JSON spot, nothing.
        let (stats, trades, _) = replay_trades(&files);
        assert_eq!((stats.messages, trades.len()), (0, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
