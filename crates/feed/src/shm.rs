//! A shared-memory ring of events (a file in `/dev/shm`): one writer, the
//! feed, and any number of readers in other processes, none of which
//! makes a system call or waits for another per event. A reader that
//! falls more than a lap behind learns how many events it lost; it never
//! reads a torn one.
//!
//! Layout, in 64-bit words (native order: writer and readers share one
//! machine):
//!
//! ```text
//! header  magic | version | capacity (slots, a power of two)
//!         | published (events written so far) | 4 reserved
//! slot    sequence | 8 words of event | 7 words of padding (128 bytes)
//! ```
//!
//! Each slot is a sequence lock: the writer of event `n` sets its
//! sequence to `2n + 1`, writes the event, then sets it to `2n + 2`, and
//! only then counts the event as published. A reader of event `n` checks
//! the sequence is `2n + 2` before and after copying the event out. The
//! event's words are atomics (relaxed), so a reader racing the writer
//! reads stale or mixed words, which the sequence check then rejects,
//! rather than undefined behaviour.
//!
//! **This module holds the crate's only `unsafe`**: mapping the file, and
//! viewing the mapping as atomic words.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use memmap2::{Mmap, MmapMut};
use tickwire_venues::book::Side;
use tickwire_venues::event::{Aggressor, Event, InstrumentId, Kind};
use tickwire_venues::sync::Resync;

/// `"twring01"`, as a little-endian word.
const MAGIC: u64 = u64::from_le_bytes(*b"twring01");
const VERSION: u64 = 1;
const HEADER_WORDS: usize = 8;
const SLOT_WORDS: usize = 16;
const EVENT_WORDS: usize = 8;
const PUBLISHED: usize = 3;

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
                _ => return None,
            };
            (head(6, sub, 0), [a, b, 0, 0, 0])
        }
        Kind::Resync => (head(7, 0, 0), [0; 5]),
        Kind::Stale { silent_ms } => (head(8, 0, 0), [u64::from(silent_ms), 0, 0, 0, 0]),
        Kind::Disconnected => (head(9, 0, 0), [0; 5]),
        Kind::Rejected { code } => (head(10, 0, 0), [i(code), 0, 0, 0, 0]),
        _ => return None,
    };
    Some([h, e.exchange_ns, e.recv_tsc, f[0], f[1], f[2], f[3], f[4]])
}

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
                _ => return None,
            },
        },
        7 => Kind::Resync,
        8 => Kind::Stale {
            silent_ms: u32_of(w[3])?,
        },
        9 => Kind::Disconnected,
        10 => Kind::Rejected { code: i(w[3]) },
        _ => return None,
    };
    Some(Event {
        instrument: InstrumentId(w[0] as u32),
        exchange_ns: w[1],
        recv_tsc: w[2],
        kind,
    })
}

/// The mapped words.
fn words(bytes: &[u8]) -> &[AtomicU64] {
    assert_eq!(bytes.as_ptr().align_offset(align_of::<AtomicU64>()), 0);
    // SAFETY: the pointer is aligned for `AtomicU64` (checked above; a
    // mapping starts on a page), the length is rounded down to whole
    // words, and `AtomicU64` has the size and validity of `u64`, which any
    // bytes are. The slice borrows `bytes`, so it cannot outlive the
    // mapping. Other processes change these words only through atomics
    // (this module's writer), and the readers only load them, which is
    // sound on a read-only mapping for a lock-free type of pointer width.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<AtomicU64>(), bytes.len() / 8) }
}

/// Why a ring could not be opened.
#[derive(Debug)]
pub enum RingError {
    /// The file could not be created, sized, opened or mapped.
    Io(io::Error),
    /// The file is not an event ring of this version.
    NotARing,
    /// The capacity is not a power of two of at least 2.
    Capacity(usize),
}

impl std::fmt::Display for RingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RingError::Io(e) => write!(f, "{e}"),
            RingError::NotARing => write!(f, "not a tickwire event ring (or another version)"),
            RingError::Capacity(c) => {
                write!(
                    f,
                    "ring capacity {c}: it must be a power of two, at least 2"
                )
            }
        }
    }
}

impl std::error::Error for RingError {}

impl From<io::Error> for RingError {
    fn from(e: io::Error) -> RingError {
        RingError::Io(e)
    }
}

/// The feed's end: publishes events. One per ring.
pub struct Writer {
    map: MmapMut,
    mask: u64,
    next: u64,
}

impl Writer {
    /// Creates (or replaces) the ring at `path` with `capacity` slots (a
    /// power of two; 128 bytes each).
    pub fn create(path: impl AsRef<Path>, capacity: usize) -> Result<Writer, RingError> {
        if capacity < 2 || !capacity.is_power_of_two() {
            return Err(RingError::Capacity(capacity));
        }
        let file: File = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let bytes = (HEADER_WORDS + capacity * SLOT_WORDS) * 8;
        file.set_len(bytes as u64)?;
        // SAFETY: the file was just created and sized by this writer;
        // other processes are expected to touch it only through this
        // module (readers load, never store), so the mapping is not
        // changed behind the writer's back in ways the atomics don't
        // cover.
        let map = unsafe { MmapMut::map_mut(&file)? };
        let w = Writer {
            map,
            mask: capacity as u64 - 1,
            next: 0,
        };
        let h = words(&w.map);
        h[1].store(VERSION, Ordering::Relaxed);
        h[2].store(capacity as u64, Ordering::Relaxed);
        h[PUBLISHED].store(0, Ordering::Relaxed);
        // The magic last: a reader that sees it sees the rest.
        h[0].store(MAGIC, Ordering::Release);
        Ok(w)
    }

    /// Publishes `event` (never waits, never allocates). `false` for a kind
    /// this version cannot encode, which is skipped.
    #[inline]
    pub fn publish(&mut self, event: &Event) -> bool {
        let Some(payload) = encode(event) else {
            return false;
        };
        let n = self.next;
        let all = words(&self.map);
        let at = HEADER_WORDS + (n & self.mask) as usize * SLOT_WORDS;
        let slot = &all[at..at + 1 + EVENT_WORDS];
        slot[0].store(2 * n + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (word, v) in slot[1..].iter().zip(payload) {
            word.store(v, Ordering::Relaxed);
        }
        slot[0].store(2 * n + 2, Ordering::Release);
        all[PUBLISHED].store(n + 1, Ordering::Release);
        self.next = n + 1;
        true
    }

    /// Events published so far.
    pub fn published(&self) -> u64 {
        self.next
    }
}

/// What [`Reader::read`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The next event.
    Event(Event),
    /// Nothing new yet.
    Empty,
    /// The writer lapped this reader: this many events were overwritten
    /// before they could be read. Reading goes on from the oldest still
    /// there.
    Lost(u64),
}

/// A consumer's end, in any process: reads events in order.
pub struct Reader {
    map: Mmap,
    mask: u64,
    capacity: u64,
    next: u64,
}

impl Reader {
    /// Opens the ring at `path`, positioned after the last event published
    /// (only new events are read; see [`rewind`](Self::rewind)).
    pub fn open(path: impl AsRef<Path>) -> Result<Reader, RingError> {
        let file = File::open(path)?;
        // SAFETY: as for the writer's mapping: the words are only ever
        // stored by this module's writer, through atomics, and this
        // mapping only loads them.
        let map = unsafe { Mmap::map(&file)? };
        if map.len() < HEADER_WORDS * 8 {
            return Err(RingError::NotARing);
        }
        let h = words(&map);
        let capacity = h[2].load(Ordering::Relaxed);
        if h[0].load(Ordering::Acquire) != MAGIC
            || h[1].load(Ordering::Relaxed) != VERSION
            || capacity < 2
            || !capacity.is_power_of_two()
            || (map.len() / 8) as u64 != HEADER_WORDS as u64 + capacity * SLOT_WORDS as u64
        {
            return Err(RingError::NotARing);
        }
        let next = h[PUBLISHED].load(Ordering::Acquire);
        Ok(Reader {
            map,
            mask: capacity - 1,
            capacity,
            next,
        })
    }

    /// Goes back to the oldest event still in the ring.
    pub fn rewind(&mut self) {
        let published = words(&self.map)[PUBLISHED].load(Ordering::Acquire);
        self.next = published.saturating_sub(self.capacity);
    }

    /// The next event, if the writer has published one; never waits.
    #[inline]
    pub fn read(&mut self) -> Read {
        let all = words(&self.map);
        let published = all[PUBLISHED].load(Ordering::Acquire);
        if self.next >= published {
            return Read::Empty;
        }
        if published - self.next > self.capacity {
            return self.lapped(published);
        }
        let n = self.next;
        let at = HEADER_WORDS + (n & self.mask) as usize * SLOT_WORDS;
        let slot = &all[at..at + 1 + EVENT_WORDS];
        let before = slot[0].load(Ordering::Acquire);
        let mut payload = [0u64; EVENT_WORDS];
        for (v, word) in payload.iter_mut().zip(&slot[1..]) {
            *v = word.load(Ordering::Relaxed);
        }
        fence(Ordering::Acquire);
        let after = slot[0].load(Ordering::Relaxed);
        if before != 2 * n + 2 || after != before {
            // Overwritten (or being overwritten) by a later lap.
            return self.lapped(all[PUBLISHED].load(Ordering::Acquire));
        }
        self.next = n + 1;
        match decode(&payload) {
            Some(e) => Read::Event(e),
            // Words no version writes: skip them, as lost.
            None => Read::Lost(1),
        }
    }

    /// Jumps to the oldest event that a writer at `published` cannot
    /// overwrite before it is read, and says how many were skipped.
    fn lapped(&mut self, published: u64) -> Read {
        // Half a lap of slack, so the next read is not lapped again at
        // once by a writer that keeps going.
        let oldest = published.saturating_sub(self.capacity / 2);
        let lost = oldest.saturating_sub(self.next).max(1);
        self.next = oldest.max(self.next + 1);
        Read::Lost(lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("tickwire-ring-{name}-{}", std::process::id()))
    }

    fn every_kind() -> Vec<Kind> {
        vec![
            Kind::Trade {
                price: -3,
                size: i64::MAX,
                aggressor: Aggressor::Unknown,
                trade_id: u64::MAX,
            },
            Kind::Quote {
                bid_price: 1,
                bid_size: 2,
                ask_price: 3,
                ask_size: 4,
                update_id: 5,
            },
            Kind::BookSnapshot {
                update_id: 9,
                bids: 1,
                asks: u32::MAX,
                depth: 5000,
            },
            Kind::BookDelta {
                side: Side::Ask,
                price: 7,
                size: 0,
                update_id: 10,
                last: true,
            },
            Kind::BookValid { update_id: 11 },
            Kind::Gap {
                why: Resync::Checksum {
                    expected: -1,
                    got: i64::MIN,
                },
            },
            Kind::Gap {
                why: Resync::SnapshotStale {
                    snapshot: 1,
                    first_diff: 2,
                },
            },
            Kind::Gap {
                why: Resync::Disconnected,
            },
            Kind::Gap {
                why: Resync::DepthExhausted,
            },
            Kind::Resync,
            Kind::Stale { silent_ms: 30_000 },
            Kind::Disconnected,
            Kind::Rejected { code: -60018 },
        ]
    }

    fn event(n: u64, kind: Kind) -> Event {
        Event {
            instrument: InstrumentId(n as u32 % 7),
            exchange_ns: n * 3,
            recv_tsc: n,
            kind,
        }
    }

    #[test]
    fn every_kind_survives_the_ring_in_order() {
        let path = temp("kinds");
        let mut w = Writer::create(&path, 16).unwrap();
        let mut r = Reader::open(&path).unwrap();
        assert_eq!(r.read(), Read::Empty);
        let kinds = every_kind();
        for (n, k) in kinds.iter().enumerate() {
            assert!(w.publish(&event(n as u64, *k)));
        }
        for (n, k) in kinds.iter().enumerate() {
            assert_eq!(r.read(), Read::Event(event(n as u64, *k)));
        }
        assert_eq!(r.read(), Read::Empty);
        // A reader opened now sees only what comes next; rewound, the
        // oldest still there.
        let mut late = Reader::open(&path).unwrap();
        assert_eq!(late.read(), Read::Empty);
        late.rewind();
        assert_eq!(late.read(), Read::Event(event(0, kinds[0])));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_lapped_reader_is_told_how_many_it_lost_and_reads_on() {
        let path = temp("lapped");
        let mut w = Writer::create(&path, 8).unwrap();
        let mut r = Reader::open(&path).unwrap();
        let k = Kind::BookValid { update_id: 0 };
        for n in 0..30 {
            w.publish(&event(n, k));
        }
        let Read::Lost(lost) = r.read() else {
            panic!("lapped")
        };
        let mut got = Vec::new();
        while let Read::Event(e) = r.read() {
            got.push(e.recv_tsc);
        }
        assert_eq!(lost + got.len() as u64, 30, "{lost} lost, {got:?}");
        assert_eq!(got, (lost..30).collect::<Vec<_>>());
        std::fs::remove_file(&path).unwrap();
    }

    /// (The counting allocator is the one `sink`'s tests install for this
    /// test binary.)
    #[test]
    fn publishing_and_reading_allocate_nothing() {
        let path = temp("alloc");
        let mut w = Writer::create(&path, 1024).unwrap();
        let mut r = Reader::open(&path).unwrap();
        let kinds = every_kind();
        let ((), allocations) = tickwire_testkit::allocations(|| {
            for n in 0..1000u64 {
                w.publish(&event(n, kinds[n as usize % kinds.len()]));
                assert!(matches!(r.read(), Read::Event(_)));
            }
        });
        assert_eq!(allocations, 0);
        assert_eq!(w.published(), 1000);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn foreign_files_and_bad_capacities_are_refused() {
        assert!(matches!(
            Writer::create(temp("cap"), 6),
            Err(RingError::Capacity(6))
        ));
        let path = temp("foreign");
        std::fs::write(&path, [7u8; 4096]).unwrap();
        assert!(matches!(Reader::open(&path), Err(RingError::NotARing)));
        std::fs::remove_file(&path).unwrap();
    }

    /// A writer thread publishes as fast as it can while a reader thread
    /// reads: every event read is whole (its fields all derive from its
    /// number, so a torn read would show), in order, and read + lost adds
    /// up to what was published.
    #[test]
    fn a_reader_racing_the_writer_never_sees_a_torn_event() {
        const N: u64 = 2_000_000;
        let path = temp("race");
        let mut w = Writer::create(&path, 64).unwrap();
        let mut r = Reader::open(&path).unwrap();
        let quote = |n: u64| Kind::Quote {
            bid_price: n as i64,
            bid_size: (n * 2) as i64,
            ask_price: (n * 3) as i64,
            ask_size: (n * 5) as i64,
            update_id: n * 7,
        };
        let reader = std::thread::spawn(move || {
            let (mut read, mut lost, mut last) = (0u64, 0u64, None);
            while read + lost < N {
                match r.read() {
                    Read::Event(e) => {
                        let n = e.recv_tsc;
                        assert_eq!(e, event(n, quote(n)), "torn");
                        assert!(last.is_none_or(|l| n > l), "out of order");
                        last = Some(n);
                        read += 1;
                    }
                    Read::Lost(k) => lost += k,
                    Read::Empty => std::hint::spin_loop(),
                }
            }
            (read, lost, last)
        });
        for n in 0..N {
            w.publish(&event(n, quote(n)));
        }
        let (read, lost, last) = reader.join().unwrap();
        assert_eq!(read + lost, N, "{read} read, {lost} lost");
        assert_eq!(last, Some(N - 1));
        assert!(read > 0);
        std::fs::remove_file(&path).unwrap();
    }
}
