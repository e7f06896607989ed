//! Where normalised events go, without ever holding up the I/O thread.
//!
//! The I/O thread hands each event to a [`Publisher`]: a bounded queue
//! allocated once ([`queue`]), whose `publish` never waits, never
//! allocates and makes no system call (the sink thread polls it, and
//! sleeps at most [`IDLE_MAX`] while it is empty). When the queue is full
//! (a sink that cannot keep up) the event is dropped and counted; the feed
//! goes on. A sink thread drains the queue ([`Events`]) and writes:
//! [`spawn_json_lines`] writes one JSON object per event per line, of the
//! schema in `docs/jsonl.md` ([`jsonl`]), into files rotated by size
//! ([`RotatingFile`]).

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use tickwire_venues::event::InstrumentSpec;

pub mod jsonl;
mod queue;
mod rotate;

pub use jsonl::Encoder;
pub use queue::{Events, IDLE_FIRST, IDLE_MAX, IntoIter, Publisher, queue};
pub use rotate::{RotatingFile, rotated_path};

/// What a sink needs to know of an instrument to write its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instrument {
    /// The venue's name (`binance`, `okx`, ...).
    pub venue: String,
    /// The venue's symbol.
    pub symbol: String,
    /// Decimal places of prices.
    pub price_scale: u8,
    /// Decimal places of sizes.
    pub size_scale: u8,
}

impl Instrument {
    /// `instruments` of the venue named `venue`, in order (instrument `i`
    /// is the events' `FeedId(i)`).
    pub fn of_venue(venue: &str, instruments: &[InstrumentSpec]) -> Vec<Instrument> {
        instruments
            .iter()
            .map(|i| Instrument {
                venue: venue.to_owned(),
                symbol: i.symbol.clone(),
                price_scale: i.price_scale,
                size_scale: i.size_scale,
            })
            .collect()
    }
}

/// Where a JSON Lines writer writes.
pub enum Output {
    /// Standard output (never rotated).
    Stdout,
    /// A file, rotated once it holds `max_bytes` (0: never): see
    /// [`RotatingFile`].
    File {
        /// The first file's path.
        path: PathBuf,
        /// The size past which the next line goes to a new file.
        max_bytes: u64,
    },
    /// Any writer (a test's), never rotated.
    Writer(Box<dyn Write + Send>),
}

/// Receive stamps to Unix ns: the process's TSC calibration
/// ([`tickwire_tsc::calibration`], which the metrics exporter refines),
/// looked up again every 4096 events.
fn live_clock() -> impl FnMut(u64) -> u64 + Send {
    let mut cal = tickwire_tsc::calibration();
    let mut n = 0u32;
    move |tsc| {
        n = n.wrapping_add(1);
        if n.is_multiple_of(4096) {
            cal = tickwire_tsc::calibration();
        }
        cal.to_unix_ns(tsc)
    }
}

/// Starts a thread that writes every event of `events` to `out` as JSON
/// Lines of the [schema](jsonl) (a `header` line first in every file;
/// receive stamps through the process's TSC calibration; a `dropped`
/// line before the next event whenever `dropped`, the publishers' drop
/// counter, has grown), until every [`Publisher`] is gone; it then
/// flushes and returns how many event lines it wrote (every event queued
/// before the last publisher went is written). Events of an instrument id
/// it does not know are skipped.
pub fn spawn_json_lines(
    events: Events,
    instruments: Vec<Instrument>,
    out: Output,
    dropped: Arc<AtomicU64>,
) -> io::Result<JoinHandle<io::Result<u64>>> {
    let mut out = match out {
        Output::Stdout => LineOut::plain(Box::new(io::stdout())),
        Output::Writer(w) => LineOut::plain(w),
        Output::File { path, max_bytes } => {
            LineOut::Rotating(RotatingFile::create(path, max_bytes)?)
        }
    };
    std::thread::Builder::new()
        .name("tickwire-jsonl".into())
        .spawn(move || {
            let mut encoder = Encoder::new(instruments);
            let mut clock = live_clock();
            let mut line = Vec::with_capacity(1 << 12);
            let mut written = 0;
            let mut said_dropped = 0;
            for event in events {
                line.clear();
                let now_dropped = dropped.load(Ordering::Relaxed);
                if now_dropped > said_dropped {
                    Encoder::dropped(now_dropped - said_dropped, &mut line);
                    said_dropped = now_dropped;
                }
                let before = line.len();
                encoder.encode(&event, clock(event.recv_tsc), &mut line);
                written += u64::from(line.len() > before);
                out.write_line(&line)?;
            }
            let now_dropped = dropped.load(Ordering::Relaxed);
            if now_dropped > said_dropped {
                line.clear();
                Encoder::dropped(now_dropped - said_dropped, &mut line);
                out.write_line(&line)?;
            }
            out.flush()?;
            Ok(written)
        })
}

/// A writer of whole lines: one stream, or rotated files.
enum LineOut {
    Plain(BufWriter<Box<dyn Write + Send>>),
    Rotating(RotatingFile),
}

impl LineOut {
    /// A stream, its header written.
    fn plain(w: Box<dyn Write + Send>) -> LineOut {
        let mut header = Vec::new();
        Encoder::header(&mut header);
        let mut w = BufWriter::with_capacity(1 << 16, w);
        // Into the buffer: an error would show at the first flush.
        let _ = w.write_all(&header);
        LineOut::Plain(w)
    }

    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        match self {
            LineOut::Plain(w) => w.write_all(line),
            LineOut::Rotating(r) => r.write_lines(line),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            LineOut::Plain(w) => w.flush(),
            LineOut::Rotating(r) => r.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::{Event, FeedId};
    use tickwire_venues::book::Side;
    use tickwire_venues::event::{Aggressor, Kind};
    use tickwire_venues::sync::Resync;

    #[global_allocator]
    static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

    fn btc() -> Instrument {
        Instrument {
            venue: "binance".into(),
            symbol: "BTCUSDT".into(),
            price_scale: 2,
            size_scale: 8,
        }
    }

    fn event(kind: Kind) -> Event {
        Event {
            instrument: FeedId(0),
            exchange_ns: 1_723_161_255_208_000_000,
            recv_tsc: 42,
            kind,
        }
    }

    fn kinds() -> Vec<Kind> {
        vec![
            Kind::Trade {
                price: 6_173_763,
                size: 123_000,
                aggressor: Aggressor::Sell,
                trade_id: 3_712_345_678,
            },
            Kind::Quote {
                bid_price: 6_173_763,
                bid_size: 378_826_000,
                ask_price: -5,
                ask_size: 0,
                update_id: 50_093_324_134,
            },
            Kind::BookSnapshot {
                update_id: 7,
                bids: 2,
                asks: 3,
                depth: 100,
            },
            Kind::BookDelta {
                side: Side::Ask,
                price: 6_173_764,
                size: 1,
                update_id: 8,
                last: true,
            },
            Kind::BookValid { update_id: 8 },
            Kind::Gap {
                why: Resync::Checksum {
                    expected: -914_047_754,
                    got: 3,
                },
            },
            Kind::Gap {
                why: Resync::Sequence {
                    expected: 9,
                    got: 11,
                },
            },
            Kind::Gap {
                why: Resync::DepthExhausted,
            },
            Kind::Resync,
            Kind::Disconnected,
            Kind::Rejected { code: 60018 },
        ]
    }

    /// `event`'s line, received at 7 (Unix ns), as a new encoder writes it.
    fn json_line(event: &Event, name: &Instrument, out: &mut Vec<u8>) {
        Encoder::new(vec![name.clone()]).encode(event, 7, out);
    }

    #[test]
    fn every_kind_is_one_json_object_with_exact_decimals() {
        let mut out = Vec::new();
        for kind in kinds() {
            out.clear();
            json_line(&event(kind), &btc(), &mut out);
            if let Kind::BookSnapshot { .. } = kind {
                // Written with its levels, once they came.
                assert!(out.is_empty());
                continue;
            }
            assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
            assert!(out.ends_with(b"}\n"));
            let v: serde_json::Value = serde_json::from_slice(&out)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)));
            assert_eq!(v["venue"], "binance");
            assert_eq!(v["symbol"], "BTCUSDT");
            assert_eq!(v["exchange_ns"], 1_723_161_255_208_000_000u64);
            assert_eq!(v["recv_ns"], 7);
            assert!(v.get("recv_tsc").is_none(), "ticks are converted");
            match kind {
                Kind::Trade { .. } => {
                    assert_eq!(v["type"], "trade");
                    assert_eq!(v["price"], "61737.63");
                    assert_eq!(v["size"], "0.00123000");
                    assert_eq!(v["aggressor"], "sell");
                    assert_eq!(v["trade_id"], 3_712_345_678u64);
                }
                Kind::Quote { .. } => {
                    assert_eq!(v["type"], "quote");
                    assert_eq!(v["bid_size"], "3.78826000");
                    assert_eq!(v["ask_price"], "-0.05");
                    assert_eq!(v["ask_size"], "0.00000000");
                    assert_eq!(v["update_id"], 50_093_324_134u64);
                }
                Kind::BookDelta { .. } => {
                    assert_eq!(v["type"], "book_delta");
                    assert_eq!(v["side"], "ask");
                    assert_eq!(v["price"], "61737.64");
                    assert_eq!(v["size"], "0.00000001");
                    assert_eq!(v["last"], true);
                }
                Kind::Gap {
                    why: Resync::Checksum { .. },
                } => {
                    assert_eq!(v["why"], "checksum");
                    assert_eq!(v["expected"], -914_047_754);
                }
                Kind::Gap {
                    why: Resync::DepthExhausted,
                } => assert_eq!(v["why"], "depth_exhausted"),
                Kind::Gap { .. } => {
                    assert_eq!(
                        (v["why"].as_str(), v["got"].as_u64()),
                        (Some("sequence"), Some(11))
                    );
                }
                Kind::Rejected { .. } => {
                    assert_eq!(
                        (v["type"].as_str(), v["code"].as_i64()),
                        (Some("rejected"), Some(60018))
                    );
                }
                _ => assert!(v["type"].is_string()),
            }
        }
    }

    #[test]
    fn a_snapshot_line_carries_its_levels_and_its_deltas_are_not_repeated() {
        let mut enc = Encoder::new(vec![btc()]);
        let mut out = Vec::new();
        let snap = |bids, asks| Kind::BookSnapshot {
            update_id: 7,
            bids,
            asks,
            depth: 20,
        };
        let level = |side, price, size, last| Kind::BookDelta {
            side,
            price,
            size,
            update_id: 7,
            last,
        };
        let mut first = event(snap(2, 1));
        first.exchange_ns = 0;
        for kind in [
            first.kind,
            level(Side::Bid, 6_173_763, 378_826_000, false),
            level(Side::Bid, 6_173_700, 1, false),
            level(Side::Ask, 6_173_764, 123_000, true),
            Kind::BookValid { update_id: 7 },
            level(Side::Ask, 6_173_764, 0, true),
        ] {
            let e = Event { kind, ..first };
            enc.encode(&e, 99, &mut out);
        }
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{text}");
        let s = &lines[0];
        assert_eq!(s["type"], "book_snapshot");
        assert_eq!(s["exchange_ns"], serde_json::Value::Null, "0 is no time");
        assert_eq!(s["recv_ns"], 99);
        assert_eq!(
            s["bids"],
            serde_json::json!([["61737.63", "3.78826000"], ["61737.00", "0.00000001"]])
        );
        assert_eq!(s["asks"], serde_json::json!([["61737.64", "0.00123000"]]));
        assert_eq!(
            (s["update_id"].as_u64(), s["depth"].as_u64()),
            (Some(7), Some(20))
        );
        assert_eq!(lines[1]["type"], "book_valid");
        assert_eq!(
            (lines[2]["type"].as_str(), lines[2]["size"].as_str()),
            (Some("book_delta"), Some("0.00000000"))
        );
        // A snapshot cut short (its levels lost) is not written; what
        // follows is.
        let mut out = Vec::new();
        for kind in [snap(2, 0), level(Side::Bid, 1, 1, false), Kind::Resync] {
            enc.encode(&Event { kind, ..first }, 1, &mut out);
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains(r#""type":"resync""#), "{text}");
        // An empty book's snapshot is written at once.
        let mut out = Vec::new();
        enc.encode(
            &Event {
                kind: snap(0, 0),
                ..first
            },
            1,
            &mut out,
        );
        assert!(
            String::from_utf8(out)
                .unwrap()
                .contains(r#""bids":[],"asks":[]"#)
        );
    }

    #[test]
    fn publishing_never_waits_or_allocates_and_counts_what_it_drops() {
        let (publisher, rx) = queue(64);
        let e = event(kinds()[0]);
        let (queued, allocations) = tickwire_testkit::allocations(|| {
            let mut queued = 0;
            for _ in 0..100 {
                queued += usize::from(publisher.publish(e));
            }
            queued
        });
        assert_eq!(allocations, 0);
        assert_eq!(queued, 64, "a full queue drops, never blocks");
        assert_eq!(publisher.dropped(), 36);
        assert_eq!(rx.try_iter().count(), 64);
        drop(rx);
        assert!(!publisher.publish(e), "a gone sink drops too");
        assert_eq!(publisher.dropped(), 37);
    }

    #[test]
    fn the_sink_thread_writes_every_queued_event_then_stops() {
        #[derive(Clone, Default)]
        struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let shared = Shared::default();
        let (publisher, rx) = queue(1024);
        let dropped = publisher.drop_counter();
        // Drops before the first event are said before it, with how many.
        dropped.fetch_add(3, Ordering::Relaxed);
        let sink = spawn_json_lines(
            rx,
            vec![btc()],
            Output::Writer(Box::new(shared.clone())),
            dropped.clone(),
        )
        .unwrap();
        let mut expected = Vec::new();
        Encoder::header(&mut expected);
        Encoder::dropped(3, &mut expected);
        let mut enc = Encoder::new(vec![btc()]);
        let cal = tickwire_tsc::calibration();
        let mut lines = 0;
        for (i, kind) in kinds().into_iter().enumerate() {
            let mut e = event(kind);
            e.recv_tsc = i as u64;
            // An unknown instrument is skipped.
            let mut stray = e;
            stray.instrument = FeedId(9);
            assert!(publisher.publish(stray));
            assert!(publisher.publish(e));
            let before = expected.len();
            enc.encode(&e, cal.to_unix_ns(e.recv_tsc), &mut expected);
            lines += u64::from(expected.len() > before);
        }
        drop(publisher);
        assert_eq!(sink.join().unwrap().unwrap(), lines);
        assert_eq!(
            String::from_utf8_lossy(&shared.0.lock().unwrap()),
            String::from_utf8_lossy(&expected)
        );
    }
}
