//! The event stream's binary layout: what the Aeron sink publishes and its
//! subscriber reads, one message per event and, now and then, the
//! instrument table. Fixed offsets, little-endian whatever the machine,
//! versioned; `docs/stream.md` describes it for a reader in another
//! language, and this module is the one place it is written and read.
//!
//! Nothing here depends on Aeron: the layout is plain bytes, so it can be
//! tested (and fuzzed) without a media driver, and carried by any
//! message transport that keeps message boundaries.
//!
//! # Messages
//!
//! Every message begins with the same 8 bytes:
//!
//! ```text
//! 0   u16  magic 0x5754 (the bytes "TW")
//! 2   u8   layout version, 1 (a reader refuses any other)
//! 3   u8   type: 1 an event, 2 a part of the instrument table
//! 4   u32  the publisher: random and nonzero, new each time a feed (or
//!          one of its threads) starts publishing; its events' sequence
//!          numbers and its table belong to it alone
//! ```
//!
//! An **event** (type 1) is 88 bytes; after the common 8:
//!
//! ```text
//! 8   u64  sequence: 1 for the publisher's first event, one more for each
//!          event after it, whether or not it could be sent, so a jump is
//!          events lost (by the publisher, which counts them, or the way)
//! 16  u32  instrument id (an entry of the table)
//! 20  u8   kind, 21 u8 sub, 22 u8 flag, 23 u8 zero: see below
//! 24  u64  exchange time, ns since the Unix epoch (0: the venue sent none)
//! 32  u64  the feed's read stamp, in its TSC ticks (same host only)
//! 40  u64  the same stamp on the feed's wall clock, ns since the Unix epoch
//! 48  5 x u64  the kind's fields f0..f4, unused ones 0
//! ```
//!
//! A **table part** (type 2) names up to [`TABLE_PART`] instruments; a
//! table of any size goes as several parts, each small enough for one
//! network datagram:
//!
//! ```text
//! 8   u32  instruments in the whole table
//! 12  u32  index of this part's first entry
//! 16  u16  entries in this part
//! 18  6 bytes zero
//! 24  entries, 128 bytes each:
//!     0   u32  instrument id (its index in the table)
//!     4   u8   price decimals, 5 u8 size decimals
//!     6   u8   venue name length (at most 32), 7 u8 symbol length (at most 88)
//!     8   32 bytes venue name, UTF-8, zero-padded
//!     40  88 bytes symbol, UTF-8, zero-padded
//! ```
//!
//! The kinds (prices and sizes are integers in the instrument's decimals;
//! ids and counts unsigned, prices and sizes signed):
//!
//! ```text
//! 1  trade      sub: aggressor 0 buy, 1 sell, 2 unknown; f0 price, f1 size, f2 trade id
//! 2  quote      f0 bid price, f1 bid size, f2 ask price, f3 ask size, f4 update id
//! 3  snapshot   f0 update id, f1 bid levels, f2 ask levels, f3 depth kept
//! 4  delta      sub: side 0 bid, 1 ask; flag: 1 the message's last; f0 price, f1 size (0 removes), f2 update id
//! 5  book valid f0 update id
//! 6  gap        sub: why, 0 sequence (f0 expected, f1 got), 1 snapshot stale (f0 snapshot, f1 first diff),
//!               2 crossed, 3 bad level, 4 checksum (f0 expected, f1 got), 5 disconnected,
//!               6 depth exhausted, 255 a reason this version does not name
//! 7  resync     (nothing)
//! 9  disconnected (nothing)
//! 10 rejected   f0 the venue's code
//! ```
//!
//! A reader skips a kind it does not know (a newer publisher's) rather
//! than failing, but reads a gap (kind 6) of any reason, and a snapshot,
//! delta or `book valid` (kinds 3 to 5) that does not read, as a gap, so a
//! book is never trusted past one; it refuses a message of another
//! version or magic, or of a type it does not know.

use tickwire_venues::event::Kind;
use tickwire_venues::sync::Resync;

use crate::id::{Event, FeedId};
use crate::shm::{self, MAX_SYMBOL, MAX_VENUE, RingInstrument};
use crate::sink::Instrument;

mod sequence;

pub use sequence::{Sequence, Step};

/// The bytes "TW", as a little-endian `u16`.
pub const MAGIC: u16 = u16::from_le_bytes(*b"TW");
/// This layout's version.
pub const VERSION: u8 = 1;
/// An event message's length.
pub const EVENT_LEN: usize = 88;
/// Instrument table entries in one table part at most.
pub const TABLE_PART: usize = 8;
/// A table entry's length.
pub const ENTRY_LEN: usize = 128;
/// A table part's header length.
pub const TABLE_HEADER: usize = 24;
/// The longest table part: [`TABLE_HEADER`] and [`TABLE_PART`] entries.
pub const TABLE_PART_LEN: usize = TABLE_HEADER + TABLE_PART * ENTRY_LEN;

const TYPE_EVENT: u8 = 1;
/// The kinds that change a book: snapshot, delta, valid, gap (the table
/// above).
const BOOK_KINDS: [u8; 4] = [3, 4, 5, 6];
const TYPE_TABLE: u8 = 2;

/// An event as its stream message: `sequence` as the publisher numbers
/// it, `unix_ns` its read stamp on the wall clock. `None` for a kind this
/// version does not carry.
pub fn encode_event(
    publisher: u32,
    sequence: u64,
    event: &Event,
    unix_ns: u64,
) -> Option<[u8; EVENT_LEN]> {
    let w = shm::encode(event)?;
    let mut m = [0u8; EVENT_LEN];
    put_head(&mut m, TYPE_EVENT, publisher);
    m[8..16].copy_from_slice(&sequence.to_le_bytes());
    m[16..24].copy_from_slice(&w[0].to_le_bytes());
    m[24..32].copy_from_slice(&w[1].to_le_bytes());
    m[32..40].copy_from_slice(&w[2].to_le_bytes());
    m[40..48].copy_from_slice(&unix_ns.to_le_bytes());
    for (k, word) in w[3..].iter().enumerate() {
        m[48 + 8 * k..56 + 8 * k].copy_from_slice(&word.to_le_bytes());
    }
    Some(m)
}

fn put_head(m: &mut [u8], kind: u8, publisher: u32) {
    m[0..2].copy_from_slice(&MAGIC.to_le_bytes());
    m[2] = VERSION;
    m[3] = kind;
    m[4..8].copy_from_slice(&publisher.to_le_bytes());
}

/// A name too long for the table's field: the instrument cannot be
/// published (the same limits as the shared-memory ring's table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameTooLong(pub String);

impl std::fmt::Display for NameTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: a venue name holds at most {MAX_VENUE} bytes and a symbol {MAX_SYMBOL}",
            self.0
        )
    }
}

impl std::error::Error for NameTooLong {}

/// The instrument table as its parts, instrument `i` with id `i`, each
/// part a whole message (written once, when a publisher starts, and sent
/// again as they are).
pub fn encode_table(
    publisher: u32,
    instruments: &[Instrument],
) -> Result<Vec<Vec<u8>>, NameTooLong> {
    let total = u32::try_from(instruments.len())
        .map_err(|_| NameTooLong(format!("{} instruments", instruments.len())))?;
    let mut parts = Vec::new();
    for (p, chunk) in instruments.chunks(TABLE_PART).enumerate() {
        let first = p * TABLE_PART;
        let mut m = vec![0u8; TABLE_HEADER + chunk.len() * ENTRY_LEN];
        put_head(&mut m, TYPE_TABLE, publisher);
        m[8..12].copy_from_slice(&total.to_le_bytes());
        m[12..16].copy_from_slice(&(first as u32).to_le_bytes());
        m[16..18].copy_from_slice(&(chunk.len() as u16).to_le_bytes());
        for (k, i) in chunk.iter().enumerate() {
            let (venue, symbol) = (i.venue.as_bytes(), i.symbol.as_bytes());
            if venue.len() > MAX_VENUE || symbol.len() > MAX_SYMBOL {
                return Err(NameTooLong(format!("{} {}", i.venue, i.symbol)));
            }
            let e = &mut m[TABLE_HEADER + k * ENTRY_LEN..][..ENTRY_LEN];
            e[0..4].copy_from_slice(&((first + k) as u32).to_le_bytes());
            e[4] = i.price_scale;
            e[5] = i.size_scale;
            e[6] = venue.len() as u8;
            e[7] = symbol.len() as u8;
            e[8..8 + venue.len()].copy_from_slice(venue);
            e[40..40 + symbol.len()].copy_from_slice(symbol);
        }
        parts.push(m);
    }
    Ok(parts)
}

/// One message of the stream, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// An event.
    Event {
        /// Who published it.
        publisher: u32,
        /// Its place in the publisher's numbering.
        sequence: u64,
        /// The event (its receive stamp the feed's TSC ticks).
        event: Event,
        /// Its read stamp on the feed's wall clock.
        unix_ns: u64,
    },
    /// An event of a kind this version does not know: skipped, but its
    /// sequence number counts (it is no gap).
    Unknown {
        /// Who published it.
        publisher: u32,
        /// Its place in the publisher's numbering.
        sequence: u64,
    },
    /// A part of a publisher's instrument table.
    Table {
        /// Who published it.
        publisher: u32,
        /// Instruments in the whole table.
        total: u32,
        /// This part's entries.
        entries: Vec<RingInstrument>,
    },
}

/// Why a message could not be read: none of them is a panic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadMessage {
    /// Not its type's length.
    Length,
    /// A message type this version does not know.
    Type(u8),
    /// Not this layout's magic.
    Magic,
    /// Another version of the layout.
    Version(u8),
    /// A table entry out of place, too long a name, or one not UTF-8.
    Table,
}

impl std::fmt::Display for BadMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadMessage::Length => f.write_str("a message of the wrong length"),
            BadMessage::Type(t) => {
                write!(f, "a message of type {t}, which this reader does not know")
            }
            BadMessage::Magic => f.write_str("not a tickwire stream message (magic)"),
            BadMessage::Version(v) => write!(f, "layout version {v}, this reader reads {VERSION}"),
            BadMessage::Table => f.write_str("an instrument table entry that does not read"),
        }
    }
}

impl std::error::Error for BadMessage {}

fn u64_at(m: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(m[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(m: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(m[at..at + 4].try_into().expect("4 bytes"))
}

/// The publisher and sequence number of an event message, read without
/// decoding the rest (a subscriber's gap check on the hot path); `None`
/// for any other message.
pub fn event_sequence(m: &[u8]) -> Option<(u32, u64)> {
    if m.len() != EVENT_LEN || m[0..2] != MAGIC.to_le_bytes() || m[2] != VERSION {
        return None;
    }
    (m[3] == TYPE_EVENT).then(|| (u32_at(m, 4), u64_at(m, 8)))
}

/// Reads an event message without allocating: its publisher, sequence,
/// event and wall-clock stamp, or `Ok(None)` for another type of message
/// or an event of a kind this version does not know.
pub fn decode_event(m: &[u8]) -> Result<Option<(u32, u64, Event, u64)>, BadMessage> {
    head(m)?;
    if m[3] != TYPE_EVENT {
        return Ok(None);
    }
    if m.len() != EVENT_LEN {
        return Err(BadMessage::Length);
    }
    let mut w = [0u64; 8];
    w[0] = u64_at(m, 16);
    w[1] = u64_at(m, 24);
    w[2] = u64_at(m, 32);
    for (k, word) in w[3..].iter_mut().enumerate() {
        *word = u64_at(m, 48 + 8 * k);
    }
    let event = shm::decode(&w).or_else(|| {
        // A gap whose reason this version does not name is still a gap,
        // and a book event that does not read (a side, flag or count out
        // of its table) leaves the book unknown: a gap too, so a reader
        // never trusts a book past one (read as the ring reads its
        // unnamed gaps).
        BOOK_KINDS.contains(&m[20]).then(|| Event {
            instrument: FeedId(u32_at(m, 16)),
            exchange_ns: w[1],
            recv_tsc: w[2],
            kind: Kind::Gap {
                why: Resync::Disconnected,
            },
        })
    });
    Ok(event.map(|event| (u32_at(m, 4), u64_at(m, 8), event, u64_at(m, 40))))
}

fn head(m: &[u8]) -> Result<(), BadMessage> {
    if m.len() < 8 {
        return Err(BadMessage::Length);
    }
    if m[0..2] != MAGIC.to_le_bytes() {
        return Err(BadMessage::Magic);
    }
    if m[2] != VERSION {
        return Err(BadMessage::Version(m[2]));
    }
    Ok(())
}

/// Reads any message (a table part allocates its entries).
pub fn decode(m: &[u8]) -> Result<Message, BadMessage> {
    head(m)?;
    let publisher = u32_at(m, 4);
    match m[3] {
        TYPE_EVENT => match decode_event(m)? {
            Some((publisher, sequence, event, unix_ns)) => Ok(Message::Event {
                publisher,
                sequence,
                event,
                unix_ns,
            }),
            None => Ok(Message::Unknown {
                publisher,
                sequence: u64_at(m, 8),
            }),
        },
        TYPE_TABLE => {
            if m.len() < TABLE_HEADER {
                return Err(BadMessage::Length);
            }
            let (total, first) = (u32_at(m, 8), u32_at(m, 12));
            let count = usize::from(u16::from_le_bytes([m[16], m[17]]));
            if count == 0 || count > TABLE_PART || m.len() != TABLE_HEADER + count * ENTRY_LEN {
                return Err(BadMessage::Length);
            }
            let mut entries = Vec::with_capacity(count);
            for k in 0..count {
                let e = &m[TABLE_HEADER + k * ENTRY_LEN..][..ENTRY_LEN];
                let id = u32_at(e, 0);
                let (venue_len, symbol_len) = (usize::from(e[6]), usize::from(e[7]));
                if u64::from(id) != u64::from(first) + k as u64
                    || id >= total
                    || venue_len > MAX_VENUE
                    || symbol_len > MAX_SYMBOL
                {
                    return Err(BadMessage::Table);
                }
                let text = |b: &[u8]| {
                    std::str::from_utf8(b)
                        .map(str::to_owned)
                        .map_err(|_| BadMessage::Table)
                };
                entries.push(RingInstrument {
                    id: FeedId(id),
                    venue: text(&e[8..8 + venue_len])?,
                    symbol: text(&e[40..40 + symbol_len])?,
                    price_scale: e[4],
                    size_scale: e[5],
                });
            }
            Ok(Message::Table {
                publisher,
                total,
                entries,
            })
        }
        t => Err(BadMessage::Type(t)),
    }
}

#[cfg(test)]
mod tests;
