//! An event as the ring's eight words, and back.

use tickwire_venues::book::Side;
use tickwire_venues::event::{Aggressor, Kind};
use tickwire_venues::sync::Resync;

use crate::id::{Event, FeedId};

use super::EVENT_WORDS;

/// An event as eight words: instrument, kind and small fields in the
/// first; exchange time; receive stamp; then the kind's fields. `None`
/// for a kind this version does not know.
pub fn encode(e: &Event) -> Option<[u64; EVENT_WORDS]> {
    let head = |tag: u8, sub: u8, flag: u8| {
        u64::from(e.instrument.0)
            | u64::from(tag) << 32
            | u64::from(sub) << 40
            | u64::from(flag) << 48
    };
    let i = |v: i64| v as u64;
    let (h, f) = match e.kind {
        Kind::Trade {
            price,
            size,
            aggressor,
            trade_id,
        } => {
            let sub = match aggressor {
                Aggressor::Buy => 0,
                Aggressor::Sell => 1,
                Aggressor::Unknown => 2,
            };
            (head(1, sub, 0), [i(price), i(size), trade_id, 0, 0])
        }
        Kind::Quote {
            bid_price,
            bid_size,
            ask_price,
            ask_size,
            update_id,
        } => (
            head(2, 0, 0),
            [
                i(bid_price),
                i(bid_size),
                i(ask_price),
                i(ask_size),
                update_id,
            ],
        ),
        Kind::BookSnapshot {
            update_id,
            bids,
            asks,
            depth,
        } => (
            head(3, 0, 0),
            [
                update_id,
                u64::from(bids),
                u64::from(asks),
                u64::from(depth),
                0,
            ],
        ),
        Kind::BookDelta {
            side,
            price,
            size,
            update_id,
            last,
        } => (
            head(4, u8::from(side == Side::Ask), u8::from(last)),
            [i(price), i(size), update_id, 0, 0],
        ),
        Kind::BookValid { update_id } => (head(5, 0, 0), [update_id, 0, 0, 0, 0]),
        Kind::Gap { why } => {
            let (sub, a, b) = match why {
                Resync::Sequence { expected, got } => (0, expected, got),
                Resync::SnapshotStale {
                    snapshot,
                    first_diff,
                } => (1, snapshot, first_diff),
                Resync::Crossed => (2, 0, 0),
                Resync::BadLevel => (3, 0, 0),
                Resync::Checksum { expected, got } => (4, i(expected), i(got)),
                Resync::Disconnected => (5, 0, 0),
                Resync::DepthExhausted => (6, 0, 0),
                // A reason this version of the ring does not name: still a
                // gap (the book is not valid), read back as `Disconnected`.
                _ => (UNKNOWN_REASON, 0, 0),
            };
            (head(6, sub, 0), [a, b, 0, 0, 0])
        }
        Kind::Resync => (head(7, 0, 0), [0; 5]),
        // 8 was a `Stale` kind, never emitted and now gone: not reused.
        Kind::Disconnected => (head(9, 0, 0), [0; 5]),
        Kind::Rejected { code } => (head(10, 0, 0), [i(code), 0, 0, 0, 0]),
        _ => return None,
    };
    Some([h, e.exchange_ns, e.recv_tsc, f[0], f[1], f[2], f[3], f[4]])
}

/// A gap's reason this version does not know (see `encode`).
const UNKNOWN_REASON: u8 = 255;

/// The inverse of [`encode`]; `None` for words no version wrote.
pub fn decode(w: &[u64; EVENT_WORDS]) -> Option<Event> {
    let (tag, sub, flag) = ((w[0] >> 32) as u8, (w[0] >> 40) as u8, (w[0] >> 48) as u8);
    let i = |v: u64| v as i64;
    let u32_of = |v: u64| u32::try_from(v).ok();
    let kind = match tag {
        1 => Kind::Trade {
            price: i(w[3]),
            size: i(w[4]),
            aggressor: match sub {
                0 => Aggressor::Buy,
                1 => Aggressor::Sell,
                2 => Aggressor::Unknown,
                _ => return None,
            },
            trade_id: w[5],
        },
        2 => Kind::Quote {
            bid_price: i(w[3]),
            bid_size: i(w[4]),
            ask_price: i(w[5]),
            ask_size: i(w[6]),
            update_id: w[7],
        },
        3 => Kind::BookSnapshot {
            update_id: w[3],
            bids: u32_of(w[4])?,
            asks: u32_of(w[5])?,
            depth: u32_of(w[6])?,
        },
        4 => Kind::BookDelta {
            side: match sub {
                0 => Side::Bid,
                1 => Side::Ask,
                _ => return None,
            },
            price: i(w[3]),
            size: i(w[4]),
            update_id: w[5],
            last: match flag {
                0 => false,
                1 => true,
                _ => return None,
            },
        },
        5 => Kind::BookValid { update_id: w[3] },
        6 => Kind::Gap {
            why: match sub {
                0 => Resync::Sequence {
                    expected: w[3],
                    got: w[4],
                },
                1 => Resync::SnapshotStale {
                    snapshot: w[3],
                    first_diff: w[4],
                },
                2 => Resync::Crossed,
                3 => Resync::BadLevel,
                4 => Resync::Checksum {
                    expected: i(w[3]),
                    got: i(w[4]),
                },
                5 => Resync::Disconnected,
                6 => Resync::DepthExhausted,
                UNKNOWN_REASON => Resync::Disconnected,
                _ => return None,
            },
        },
        7 => Kind::Resync,
        9 => Kind::Disconnected,
        10 => Kind::Rejected { code: i(w[3]) },
        _ => return None,
    };
    Some(Event {
        instrument: FeedId(w[0] as u32),
        exchange_ns: w[1],
        recv_tsc: w[2],
        kind,
    })
}
