//! Events as JSON Lines, schema `tickwire.jsonl` version 1: the contract
//! is `docs/jsonl.md` (one section per line type, every field with its
//! type and unit), checked against what this module writes by
//! `crates/cli/tests/jsonl_schema.rs`.
//!
//! - Every file starts with a `header` line naming the schema and its
//!   version.
//! - Every event line names its instrument (`venue`, `symbol`); its times
//!   are Unix ns: `recv_ns` the receive time (the feed's TSC stamp
//!   through its calibration), `exchange_ns` the venue's time, `null`
//!   where the venue's message carries none.
//! - Prices and sizes are exact decimal strings with the instrument's
//!   decimals, never floats.
//! - A `book_snapshot` line carries its levels: the snapshot's level
//!   events (`BookDelta`s right after the `BookSnapshot`) are folded into
//!   it, so every `book_delta` line is a change.

use std::io::Write;

use tickwire_venues::book::Side;
use tickwire_venues::decimal::format_wire;
use tickwire_venues::event::{Aggressor, Kind};

use crate::id::Event;
use tickwire_venues::sync::Resync;

use super::Instrument;

/// The schema's name, in every file's `header` line.
pub const SCHEMA: &str = "tickwire.jsonl";
/// The schema's version: raised when a field changes meaning or goes
/// away (a field added keeps it).
pub const VERSION: u32 = 1;

/// A snapshot being collected: its event, and its levels as they come.
struct Pending {
    event: Event,
    update_id: u64,
    depth: u32,
    bids_left: u32,
    asks_left: u32,
    bids: Vec<(i64, i64)>,
    asks: Vec<(i64, i64)>,
}

/// Writes events as lines of the schema, keeping what it needs between
/// them (the snapshots being collected).
pub struct Encoder {
    names: Vec<Instrument>,
    pending: Vec<Option<Pending>>,
}

impl Encoder {
    /// An encoder for the events of `names` (instrument `i` is
    /// `InstrumentId(i)`).
    pub fn new(names: Vec<Instrument>) -> Encoder {
        let pending = names.iter().map(|_| None).collect();
        Encoder { names, pending }
    }

    /// The instruments it names.
    pub fn instruments(&self) -> &[Instrument] {
        &self.names
    }

    /// Appends a file's first line: the schema and its version.
    pub fn header(out: &mut Vec<u8>) {
        let _ = writeln!(
            out,
            r#"{{"type":"header","schema":"{SCHEMA}","version":{VERSION}}}"#
        );
    }

    /// Appends a `dropped` line: `events` were lost before reaching the
    /// writer (its queue was full).
    pub fn dropped(events: u64, out: &mut Vec<u8>) {
        let _ = writeln!(out, r#"{{"type":"dropped","events":{events}}}"#);
    }

    /// Forgets the snapshots being collected: events were lost, so their
    /// levels may never come whole (a reader of a lossy stream calls it at
    /// each gap; the next deltas are written as deltas).
    pub fn forget_snapshots(&mut self) {
        self.pending.iter_mut().for_each(|p| *p = None);
    }

    /// Appends `event`'s line (received at `recv_ns`, Unix ns), or
    /// nothing: an instrument it does not know, or a level of a snapshot
    /// still being collected (its line comes with its last level). A
    /// snapshot cut short (its levels lost on the way) is not written.
    pub fn encode(&mut self, event: &Event, recv_ns: u64, out: &mut Vec<u8>) {
        let i = event.instrument.0 as usize;
        let Some(name) = self.names.get(i) else {
            return;
        };
        let slot = &mut self.pending[i];
        if let Some(p) = slot.as_mut() {
            if let Kind::BookDelta {
                side, price, size, ..
            } = event.kind
            {
                let (left, levels) = match side {
                    Side::Bid if p.bids_left > 0 => (&mut p.bids_left, &mut p.bids),
                    Side::Ask if p.bids_left == 0 && p.asks_left > 0 => {
                        (&mut p.asks_left, &mut p.asks)
                    }
                    // Out of order: levels were lost.
                    _ => {
                        *slot = None;
                        return;
                    }
                };
                *left -= 1;
                levels.push((price, size));
                if p.bids_left == 0 && p.asks_left == 0 {
                    snapshot(p, name, out);
                    *slot = None;
                }
                return;
            }
            // Another event before the last level: levels were lost.
            *slot = None;
        }
        if let Kind::BookSnapshot {
            update_id,
            bids,
            asks,
            depth,
        } = event.kind
        {
            let mut p = Pending {
                event: Event {
                    recv_tsc: recv_ns,
                    ..*event
                },
                update_id,
                depth,
                bids_left: bids,
                asks_left: asks,
                bids: Vec::with_capacity(bids.min(1 << 12) as usize),
                asks: Vec::with_capacity(asks.min(1 << 12) as usize),
            };
            if bids == 0 && asks == 0 {
                snapshot(&mut p, name, out);
            } else {
                *slot = Some(p);
            }
            return;
        }
        line(event, name, recv_ns, out);
    }
}

/// Appends `v` at `scale` as a JSON string with exactly `scale` decimals.
fn decimal(out: &mut Vec<u8>, v: i64, scale: u8) {
    let mut buf = [0u8; 48];
    let (n, _) = format_wire(v, scale, scale, &mut buf);
    out.push(b'"');
    out.extend_from_slice(&buf[..n]);
    out.push(b'"');
}

/// The fields every event line starts with.
fn common(out: &mut Vec<u8>, kind: &str, name: &Instrument, exchange_ns: u64, recv_ns: u64) {
    let _ = write!(
        out,
        r#"{{"type":"{kind}","venue":"{}","symbol":"{}","exchange_ns":"#,
        Escaped(&name.venue),
        Escaped(&name.symbol),
    );
    // 0 is the events' "the venue sent no time".
    let _ = match exchange_ns {
        0 => write!(out, "null"),
        ns => write!(out, "{ns}"),
    };
    let _ = write!(out, r#","recv_ns":{recv_ns}"#);
}

/// A collected snapshot's line; its `recv_tsc` holds its receive time in
/// Unix ns.
fn snapshot(p: &mut Pending, name: &Instrument, out: &mut Vec<u8>) {
    let (ps, ss) = (name.price_scale, name.size_scale);
    common(
        out,
        "book_snapshot",
        name,
        p.event.exchange_ns,
        p.event.recv_tsc,
    );
    let _ = write!(
        out,
        r#","update_id":{},"depth":{},"bids":"#,
        p.update_id, p.depth
    );
    let levels = |out: &mut Vec<u8>, levels: &[(i64, i64)]| {
        out.push(b'[');
        for (n, &(price, size)) in levels.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.push(b'[');
            decimal(out, price, ps);
            out.push(b',');
            decimal(out, size, ss);
            out.push(b']');
        }
        out.push(b']');
    };
    levels(out, &p.bids);
    out.extend_from_slice(br#","asks":"#);
    levels(out, &p.asks);
    out.extend_from_slice(b"}\n");
}

/// Appends the line of one event that is not a snapshot's.
fn line(event: &Event, name: &Instrument, recv_ns: u64, out: &mut Vec<u8>) {
    let (ps, ss) = (name.price_scale, name.size_scale);
    let kind = match event.kind {
        Kind::Trade { .. } => "trade",
        Kind::Quote { .. } => "quote",
        Kind::BookSnapshot { .. } => "book_snapshot",
        Kind::BookDelta { .. } => "book_delta",
        Kind::BookValid { .. } => "book_valid",
        Kind::Gap { .. } => "gap",
        Kind::Resync => "resync",
        Kind::Disconnected => "disconnected",
        Kind::Rejected { .. } => "rejected",
        // A kind added later: named, its fields not yet written.
        _ => "other",
    };
    common(out, kind, name, event.exchange_ns, recv_ns);
    match event.kind {
        Kind::Trade {
            price,
            size,
            aggressor,
            trade_id,
        } => {
            out.extend_from_slice(br#","price":"#);
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
            out.extend_from_slice(br#","bid_price":"#);
            decimal(out, bid_price, ps);
            out.extend_from_slice(br#","bid_size":"#);
            decimal(out, bid_size, ss);
            out.extend_from_slice(br#","ask_price":"#);
            decimal(out, ask_price, ps);
            out.extend_from_slice(br#","ask_size":"#);
            decimal(out, ask_size, ss);
            let _ = write!(out, r#","update_id":{update_id}"#);
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
            let _ = write!(out, r#","side":"{side}","price":"#);
            decimal(out, price, ps);
            out.extend_from_slice(br#","size":"#);
            decimal(out, size, ss);
            let _ = write!(out, r#","update_id":{update_id},"last":{last}"#);
        }
        Kind::BookValid { update_id } => {
            let _ = write!(out, r#","update_id":{update_id}"#);
        }
        Kind::Gap { why } => {
            out.extend_from_slice(br#","why":"#);
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
        Kind::Rejected { code } => {
            let _ = write!(out, r#","code":{code}"#);
        }
        // The snapshot is written by `snapshot`; the rest carry no more.
        _ => {}
    }
    out.extend_from_slice(b"}\n");
}

/// A name as a JSON string's contents: `"` and `\` escaped, control
/// characters as `\u00XX` (a symbol is the venue's text; a venue's name
/// the configuration's).
struct Escaped<'a>(&'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write as _;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}
