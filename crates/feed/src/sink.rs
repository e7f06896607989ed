//! Where normalised events go, without ever holding up the I/O thread.
//!
//! The I/O thread hands each event to a [`Publisher`]: a bounded queue
//! allocated once, whose `publish` never waits and never allocates. When
//! the queue is full (a sink that cannot keep up) the event is dropped and
//! counted; the feed goes on. A sink thread drains the queue and writes:
//! [`spawn_json_lines`] writes one JSON object per event per line.

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

use tickwire_venues::book::Side;
use tickwire_venues::decimal::format_wire;
use tickwire_venues::event::{Aggressor, Event, Kind};
use tickwire_venues::sync::Resync;

/// The I/O thread's end of a sink's queue.
#[derive(Clone)]
pub struct Publisher {
    tx: SyncSender<Event>,
    dropped: Arc<AtomicU64>,
}

impl Publisher {
    /// Queues `event` for the sink, or drops it (and counts it) if the
    /// queue is full or the sink has stopped. Never waits, never
    /// allocates. Whether it was queued.
    #[inline]
    pub fn publish(&self, event: Event) -> bool {
        match self.tx.try_send(event) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Events dropped so far because the sink was behind (or gone), by
    /// every clone of this publisher.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The drop counter every clone shares, to read after the publishers
    /// are gone.
    pub fn drop_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.dropped)
    }
}

/// A queue for `capacity` events: the publisher, and the receiver a sink
/// thread drains. Everything it needs is allocated here.
pub fn queue(capacity: usize) -> (Publisher, Receiver<Event>) {
    let (tx, rx) = sync_channel(capacity);
    (
        Publisher {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        },
        rx,
    )
}

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

/// Appends `v` at `scale` as a JSON string with exactly `scale` decimals.
fn decimal(out: &mut Vec<u8>, v: i64, scale: u8) {
    let mut buf = [0u8; 48];
    let (n, _) = format_wire(v, scale, scale, &mut buf);
    out.push(b'"');
    out.extend_from_slice(&buf[..n]);
    out.push(b'"');
}

/// Appends one event as a JSON object and a newline. Prices and sizes are
/// strings with the instrument's decimals (exact: no float on the way);
/// `recv_tsc` is the receive stamp as the feed took it. Writes into `out`
/// without allocating once `out` has room for a line (~300 bytes).
pub fn json_line(event: &Event, instrument: &Instrument, out: &mut Vec<u8>) {
    let (ps, ss) = (instrument.price_scale, instrument.size_scale);
    // `write!` into a `Vec` only fails if it cannot grow.
    let _ = write!(
        out,
        r#"{{"venue":"{}","symbol":"{}","exchange_ns":{},"recv_tsc":{},"type":"#,
        instrument.venue, instrument.symbol, event.exchange_ns, event.recv_tsc
    );
    match event.kind {
        Kind::Trade {
            price,
            size,
            aggressor,
            trade_id,
        } => {
            out.extend_from_slice(br#""trade","price":"#);
            decimal(out, price, ps);
            out.extend_from_slice(br#","size":"#);
            decimal(out, size, ss);
            let aggressor = match aggressor {
                Aggressor::Buy => "buy",
                Aggressor::Sell => "sell",
                Aggressor::Unknown => "unknown",
            };
            let _ = write!(out, r#","aggressor":"{aggressor}","trade_id":{trade_id}"#);
        }
        Kind::Quote {
            bid_price,
            bid_size,
            ask_price,
            ask_size,
            update_id,
        } => {
            out.extend_from_slice(br#""quote","bid_price":"#);
            decimal(out, bid_price, ps);
            out.extend_from_slice(br#","bid_size":"#);
            decimal(out, bid_size, ss);
            out.extend_from_slice(br#","ask_price":"#);
            decimal(out, ask_price, ps);
            out.extend_from_slice(br#","ask_size":"#);
            decimal(out, ask_size, ss);
            let _ = write!(out, r#","update_id":{update_id}"#);
        }
        Kind::BookSnapshot {
            update_id,
            bids,
            asks,
            depth,
        } => {
            let _ = write!(
                out,
                r#""book_snapshot","update_id":{update_id},"bids":{bids},"asks":{asks},"depth":{depth}"#
            );
        }
        Kind::BookDelta {
            side,
            price,
            size,
            update_id,
            last,
        } => {
            let side = match side {
                Side::Bid => "bid",
                Side::Ask => "ask",
            };
            let _ = write!(out, r#""book_delta","side":"{side}","price":"#);
            decimal(out, price, ps);
            out.extend_from_slice(br#","size":"#);
            decimal(out, size, ss);
            let _ = write!(out, r#","update_id":{update_id},"last":{last}"#);
        }
        Kind::BookValid { update_id } => {
            let _ = write!(out, r#""book_valid","update_id":{update_id}"#);
        }
        Kind::Gap { why } => {
            out.extend_from_slice(br#""gap","why":"#);
            let _ = match why {
                Resync::Sequence { expected, got } => {
                    write!(out, r#""sequence","expected":{expected},"got":{got}"#)
                }
                Resync::SnapshotStale {
                    snapshot,
                    first_diff,
                } => write!(
                    out,
                    r#""snapshot_stale","snapshot":{snapshot},"first_diff":{first_diff}"#
                ),
                Resync::Crossed => write!(out, r#""crossed""#),
                Resync::BadLevel => write!(out, r#""bad_level""#),
                Resync::Checksum { expected, got } => {
                    write!(out, r#""checksum","expected":{expected},"got":{got}"#)
                }
                Resync::Disconnected => write!(out, r#""disconnected""#),
                Resync::DepthExhausted => write!(out, r#""depth_exhausted""#),
                // A reason added later.
                _ => write!(out, r#""other""#),
            };
        }
        Kind::Resync => out.extend_from_slice(br#""resync""#),
        Kind::Stale { silent_ms } => {
            let _ = write!(out, r#""stale","silent_ms":{silent_ms}"#);
        }
        Kind::Disconnected => out.extend_from_slice(br#""disconnected""#),
        Kind::Rejected { code } => {
            let _ = write!(out, r#""rejected","code":{code}"#);
        }
        // A kind added later: named, its fields not yet written.
        _ => out.extend_from_slice(br#""other""#),
    }
    out.extend_from_slice(b"}\n");
}

/// Starts a thread that writes every event of `events` to `out` as JSON
/// Lines, until every [`Publisher`] is gone; it then flushes and returns
/// how many lines it wrote. Events of an instrument id it does not know
/// are skipped.
pub fn spawn_json_lines(
    events: Receiver<Event>,
    instruments: Vec<Instrument>,
    out: Box<dyn Write + Send>,
) -> io::Result<JoinHandle<io::Result<u64>>> {
    std::thread::Builder::new()
        .name("tickwire-jsonl".into())
        .spawn(move || {
            let mut out = BufWriter::with_capacity(1 << 16, out);
            let mut line = Vec::with_capacity(512);
            let mut written = 0;
            for event in events {
                let Some(instrument) = instruments.get(event.instrument.0 as usize) else {
                    continue;
                };
                line.clear();
                json_line(&event, instrument, &mut line);
                out.write_all(&line)?;
                written += 1;
            }
            out.flush()?;
            Ok(written)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickwire_venues::event::InstrumentId;

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
            instrument: InstrumentId(0),
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
            Kind::Stale { silent_ms: 1500 },
            Kind::Disconnected,
            Kind::Rejected { code: 60018 },
        ]
    }

    #[test]
    fn every_kind_is_one_json_object_with_exact_decimals() {
        let mut out = Vec::new();
        for kind in kinds() {
            out.clear();
            json_line(&event(kind), &btc(), &mut out);
            assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
            assert!(out.ends_with(b"}\n"));
            let v: serde_json::Value = serde_json::from_slice(&out)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)));
            assert_eq!(v["venue"], "binance");
            assert_eq!(v["symbol"], "BTCUSDT");
            assert_eq!(v["exchange_ns"], 1_723_161_255_208_000_000u64);
            assert_eq!(v["recv_tsc"], 42);
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
                Kind::BookSnapshot { .. } => {
                    assert_eq!(
                        (v["bids"].as_u64(), v["depth"].as_u64()),
                        (Some(2), Some(100))
                    );
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
                Kind::Stale { .. } => assert_eq!(v["silent_ms"], 1500),
                _ => assert!(v["type"].is_string()),
            }
        }
    }

    #[test]
    fn publishing_never_waits_or_allocates_and_counts_what_it_drops() {
        let (publisher, rx) = queue(64);
        let e = event(kinds()[0]);
        let mut line = Vec::with_capacity(512);
        let btc = btc();
        let (queued, allocations) = tickwire_testkit::allocations(|| {
            let mut queued = 0;
            for _ in 0..100 {
                queued += usize::from(publisher.publish(e));
                line.clear();
                json_line(&e, &btc, &mut line);
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
        let sink = spawn_json_lines(rx, vec![btc()], Box::new(shared.clone())).unwrap();
        let mut expected = Vec::new();
        for (i, kind) in kinds().into_iter().enumerate() {
            let mut e = event(kind);
            e.recv_tsc = i as u64;
            // An unknown instrument is skipped.
            let mut stray = e;
            stray.instrument = InstrumentId(9);
            assert!(publisher.publish(stray));
            assert!(publisher.publish(e));
            json_line(&e, &btc(), &mut expected);
        }
        drop(publisher);
        assert_eq!(sink.join().unwrap().unwrap(), kinds().len() as u64);
        assert_eq!(*shared.0.lock().unwrap(), expected);
    }
}
