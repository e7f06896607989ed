//! A shared-memory ring of events (a file in `/dev/shm`): one writer, the
//! feed, and any number of readers in other processes, none of which
//! makes a system call or waits for another per event. A reader that
//! falls more than a lap behind learns how many events it lost; it never
//! reads a torn one. A feed that restarts puts a new ring in place of the
//! old, and its readers follow it there ([`Read::Reattached`]).
//!
//! # Layout
//!
//! Version 3, in 64-bit words (native order: writer and readers share one
//! machine):
//!
//! ```text
//! header, 16 words (128 bytes)
//!   0      magic       "twring01" as a little-endian word
//!   1      version     3 (a reader refuses any other: RingError::Version)
//!   2      capacity    slots, a power of two, at least 2
//!   3      generation  the writer that made this ring: nonzero, new at
//!                      every start (random)
//!   4      state       1 live, 2 ended (its writer was closed),
//!                      3 superseded (a newer ring took its path)
//!   5      successor   when superseded, the generation that did it
//!   6      instruments entries in the instrument table, `n`
//!   7      reserved, 0
//!   8      published   events written so far
//!   9..15  reserved, 0
//! instrument table, `n` entries from word 16, 16 words each (see `table`):
//!          id, venue, symbol, price and size decimals; written before the
//!          magic, never changed after ([`Reader::instruments`])
//! slots, `capacity` of them from word 16 + 16n, 16 words (128 bytes) each
//!   0      sequence
//!   1..8   the event (see `encode`)
//!   9..15  padding
//! ```
//!
//! Version 2 had no instrument table (its slots began at word 16): a
//! version 3 reader refuses it with [`RingError::Version`], and a version
//! 2 reader refuses a version 3 ring (it checks the version word), so
//! neither misreads the other. A version 2 reader whose ring a version 3
//! writer replaces finds nothing more to read: rebuild it.
//!
//! Each slot is a sequence lock: the writer of event `n` sets its
//! sequence to `2n + 1`, writes the event, then sets it to `2n + 2`, and
//! only then counts the event as published. A reader of event `n` checks
//! the sequence is `2n + 2` before and after copying the event out. The
//! event's words are atomics (relaxed), so a reader racing the writer
//! reads stale or mixed words, which the sequence check then rejects,
//! rather than undefined behaviour.
//!
//! # Memory ordering
//!
//! The writer owns the ring's only read-write mapping. It stores the
//! header and the table, then the magic with `Release`; for each event
//! the odd sequence (`Relaxed`), a `Release` fence, the event's words
//! (`Relaxed`), the even sequence and the published count (`Release`).
//!
//! A reader maps the ring read-only, and on read-only memory std allows
//! only `Relaxed` atomic loads of at most 8 bytes (on 64-bit targets;
//! `core::sync::atomic`, "Atomic accesses to read-only memory"; the
//! crate does not build elsewhere). So a reader never makes an `Acquire`
//! load: where it needs one (the magic, the published count, the state,
//! a slot's sequence before its words) it loads `Relaxed` and then
//! issues `fence(Acquire)`, which std names as the substitute; a second
//! `fence(Acquire)` orders the event's words before the sequence's
//! second load. Each fence makes the writer's `Release` store that the
//! load read synchronize with the reader.
//!
//! # The ring file's lifecycle
//!
//! - **Created** by [`Writer::create`], never in place: the writer makes
//!   a new file beside the path (`.<name>.<generation>.tmp`, in the same
//!   directory), sizes it, writes its header (state live), marks the ring
//!   it is about to replace, if the path holds one of this version,
//!   superseded (naming itself as the successor), and then `rename`s the
//!   new file over the path: an atomic replacement, so whoever opens the
//!   path finds one whole ring or the other.
//! - **Never truncated or resized** once it has a name: a mapping of it
//!   stays whole for as long as it is mapped, so a reader never takes a
//!   SIGBUS (unless something other than tickwire truncates the file).
//! - **Ended**: a [`Writer`] dropped (the feed exiting cleanly) marks its
//!   ring ended. The file stays: its readers read what is left, then find
//!   nothing new; a reader opened later can [`rewind`](Reader::rewind).
//! - **Abandoned**: a writer that crashes leaves its ring live. Its
//!   readers find nothing new until a new writer supersedes the ring.
//! - **Replaced**: a new writer on the path (the feed restarting, with
//!   any capacity) supersedes the old ring as above, whether it ended or
//!   was abandoned. The old file lives on, nameless, while anyone maps it.
//!   Its readers read the events still in it, then move to the new file
//!   and read it from its first event: [`Reader::read`] returns
//!   [`Read::Reattached`] once, then the new writer's events (or
//!   [`Read::Lost`] first, if it has already lapped them).
//! - **Removed**: never by tickwire. Delete it (a reboot clears
//!   `/dev/shm`) when no feed will write it again; readers mapping it read
//!   on, then find nothing new. A writer that dies while creating a ring
//!   leaves its `.tmp` file behind, which can be deleted too.
//!
//! A reader notices a replacement only when it finds nothing new to
//! read: it then loads the state word (in the header line it loads
//! anyway), and if the ring was superseded it looks for the new one at
//! the path (a `stat`, at most every millisecond until it is there). Also
//! every 100 ms of such idleness ([`Reader::set_recheck`]), whatever the
//! state says, it compares the file at the path with its own, which
//! catches a ring replaced without the mark (by a writer that could not
//! open the old file for writing, or by hand).
//!
//! One writer per path: a second one started while the first still runs
//! takes the path from it, and the first goes on writing to a ring no new
//! reader opens (its readers move to the second once the first pauses).
//!
//! **This module holds the crate's only `unsafe`**, in `memory.rs`: the
//! view of a mapping as atomic words, read-write for the writer and
//! loads alone for a reader. The tests run the same views over heap
//! slices, under Miri.

#![deny(unsafe_code)]

use std::hash::{BuildHasher, RandomState};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::time::{Duration, Instant};

use crate::id::{Event, FeedId};

mod codec;
#[cfg(test)]
mod heap;
mod memory;
mod named;
mod place;
mod table;
#[cfg(test)]
pub(crate) mod tests;

pub use codec::{decode, encode};
pub use named::{Described, Scaled};
pub use table::{MAX_SYMBOL, MAX_VENUE, RingInstrument};

use crate::sink::Instrument;
use memory::{Loads, ReadOnly, Writable};
use place::{AtPath, Find, Place, RingId};

/// `"twring01"`, as a little-endian word.
const MAGIC: u64 = u64::from_le_bytes(*b"twring01");
const VERSION: u64 = 3;
const HEADER_WORDS: usize = 16;
const SLOT_WORDS: usize = 16;
const EVENT_WORDS: usize = 8;

// The header's words.
const W_MAGIC: usize = 0;
const W_VERSION: usize = 1;
const W_CAPACITY: usize = 2;
const W_GENERATION: usize = 3;
const W_STATE: usize = 4;
const W_SUCCESSOR: usize = 5;
const W_INSTRUMENTS: usize = 6;
const W_PUBLISHED: usize = 8;

// The state word's values.
const LIVE: u64 = 1;
const ENDED: u64 = 2;
const SUPERSEDED: u64 = 3;

/// How often an idle reader of a superseded ring looks for its successor
/// at the path (at most; see [`Reader::set_recheck`]).
const FOLLOW: Duration = Duration::from_millis(1);
/// An idle reader of a ring not superseded reads the clock once in this
/// many empty polls, to see whether a recheck is due.
const CLOCK_EVERY: u32 = 64;

/// What a ring's writer has done, as the ring's state word says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Writing, or crashed without saying so.
    Live,
    /// Its writer was closed (dropped) and wrote nothing more.
    Ended,
    /// A newer ring took its path; its readers move there.
    Superseded,
}

impl State {
    fn of(word: u64) -> State {
        match word {
            ENDED => State::Ended,
            SUPERSEDED => State::Superseded,
            _ => State::Live,
        }
    }
}

/// The capacity and the instrument table's length of the ring whose
/// header `h` begins, if it is a whole ring of this version `file_words`
/// long; a ring of another version is told apart from a file that is no
/// ring. The magic is loaded relaxed and then fenced (an acquire load,
/// as std allows it on read-only memory), so the header and table its
/// writer stored before it are seen whole.
fn check(h: Loads<'_>, file_words: u64) -> Result<(u64, u64), RingError> {
    if h.len() < HEADER_WORDS || h.load(W_MAGIC) != MAGIC {
        return Err(RingError::NotARing);
    }
    fence(Ordering::Acquire);
    let version = h.load(W_VERSION);
    if version != VERSION {
        return Err(RingError::Version(version));
    }
    let capacity = h.load(W_CAPACITY);
    let instruments = h.load(W_INSTRUMENTS);
    let whole = capacity
        .checked_mul(SLOT_WORDS as u64)
        .and_then(|w| w.checked_add(HEADER_WORDS as u64))
        .and_then(|w| w.checked_add(instruments.checked_mul(table::ENTRY_WORDS as u64)?));
    (h.load(W_GENERATION) != 0
        && capacity >= 2
        && capacity.is_power_of_two()
        && whole == Some(file_words))
    .then_some((capacity, instruments))
    .ok_or(RingError::NotARing)
}

/// The word where slot `n`'s sequence is, in a ring whose slots begin at
/// `slots`.
#[inline]
fn slot_at(slots: usize, mask: u64, n: u64) -> usize {
    slots + (n & mask) as usize * SLOT_WORDS
}

/// The writer's ring: its own read-write mapping. Only it stores events.
struct WriteRing {
    memory: Writable,
    mask: u64,
    /// The first slot's word (after the instrument table).
    slots: usize,
}

impl WriteRing {
    fn generation(&self) -> u64 {
        self.memory.words()[W_GENERATION].load(Ordering::Relaxed)
    }

    /// Writes event `n` and counts it published.
    #[inline]
    fn put(&self, n: u64, payload: [u64; EVENT_WORDS]) {
        let all = self.memory.words();
        let at = slot_at(self.slots, self.mask, n);
        let slot = &all[at..at + 1 + EVENT_WORDS];
        slot[0].store(2 * n + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (word, v) in slot[1..].iter().zip(payload) {
            word.store(v, Ordering::Relaxed);
        }
        slot[0].store(2 * n + 2, Ordering::Release);
        all[W_PUBLISHED].store(n + 1, Ordering::Release);
    }
}

/// A reader's ring: a read-only mapping, whose header has been checked.
/// It only loads (relaxed, then fenced where it needs acquire).
struct ReadRing {
    memory: ReadOnly,
    mask: u64,
    capacity: u64,
    /// The first slot's word (after the instrument table).
    slots: usize,
    /// The instrument table, read once at attach.
    instruments: Vec<RingInstrument>,
    /// Its file's identity (device, inode), or the heap slice's address.
    id: Option<RingId>,
}

impl ReadRing {
    fn open(place: &dyn Find) -> Result<ReadRing, RingError> {
        let (memory, id) = place.open()?;
        let words = memory.loads();
        let (capacity, n) = check(words, words.len() as u64)?;
        // `check` proved the file holds the table and the slots.
        let slots = HEADER_WORDS + n as usize * table::ENTRY_WORDS;
        let instruments = table::decode_table(words.range(HEADER_WORDS, slots))?;
        Ok(ReadRing {
            memory,
            mask: capacity - 1,
            capacity,
            slots,
            instruments,
            id,
        })
    }

    fn generation(&self) -> u64 {
        self.memory.loads().load(W_GENERATION)
    }

    /// The state word, with acquire semantics (a relaxed load and a fence).
    fn state(&self) -> u64 {
        let state = self.memory.loads().load(W_STATE);
        fence(Ordering::Acquire);
        state
    }

    /// Events published, with acquire semantics (a relaxed load and a
    /// fence): the writer's release store of it made the events before it
    /// visible.
    #[inline]
    fn published(&self) -> u64 {
        let published = self.memory.loads().load(W_PUBLISHED);
        fence(Ordering::Acquire);
        published
    }

    /// Event `n`'s words; `None` if its slot holds another event (a later
    /// lap's, whole or half written). A sequence lock: the sequence is
    /// loaded before (then fenced: an acquire load) and after (fenced
    /// before it) the event's words.
    #[inline]
    fn get(&self, n: u64) -> Option<[u64; EVENT_WORDS]> {
        let at = slot_at(self.slots, self.mask, n);
        let slot = self.memory.loads().range(at, at + 1 + EVENT_WORDS);
        let before = slot.load(0);
        fence(Ordering::Acquire);
        let mut payload = [0u64; EVENT_WORDS];
        for (i, v) in payload.iter_mut().enumerate() {
            *v = slot.load(1 + i);
        }
        fence(Ordering::Acquire);
        let after = slot.load(0);
        (before == 2 * n + 2 && after == before).then_some(payload)
    }
}

/// Fills in a new ring's header and instrument table (its slots are
/// zeros, which no event's sequence is); the magic last, so that a reader
/// that sees it sees the rest.
fn init(h: &[AtomicU64], capacity: u64, generation: u64, instruments: &[u64]) {
    table::store(instruments, &h[HEADER_WORDS..]);
    h[W_INSTRUMENTS].store(
        (instruments.len() / table::ENTRY_WORDS) as u64,
        Ordering::Relaxed,
    );
    h[W_VERSION].store(VERSION, Ordering::Relaxed);
    h[W_CAPACITY].store(capacity, Ordering::Relaxed);
    h[W_GENERATION].store(generation, Ordering::Relaxed);
    h[W_STATE].store(LIVE, Ordering::Relaxed);
    h[W_SUCCESSOR].store(0, Ordering::Relaxed);
    h[W_PUBLISHED].store(0, Ordering::Relaxed);
    h[W_MAGIC].store(MAGIC, Ordering::Release);
}

/// A new writer's generation: random, nonzero, and not `old`'s.
fn fresh_generation(old: Option<u64>) -> u64 {
    static STARTS: AtomicU64 = AtomicU64::new(0);
    loop {
        // Per-process random keys (and a new key for each `RandomState`),
        // hashing this process's count of starts.
        let g = RandomState::new()
            .hash_one((STARTS.fetch_add(1, Ordering::Relaxed), std::process::id()));
        if g != 0 && Some(g) != old {
            return g;
        }
    }
}

/// Why a ring could not be opened.
#[derive(Debug)]
pub enum RingError {
    /// The file could not be created, sized, opened, mapped or renamed.
    Io(io::Error),
    /// The file is not an event ring.
    NotARing,
    /// The file is an event ring of another layout version (this one
    /// reads version 3 only).
    Version(u64),
    /// An instrument whose venue or symbol is longer than the instrument
    /// table holds ([`MAX_VENUE`], [`MAX_SYMBOL`] bytes).
    Name(String),
    /// The capacity is not a power of two of at least 2.
    Capacity(usize),
}

impl std::fmt::Display for RingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RingError::Io(e) => write!(f, "{e}"),
            RingError::NotARing => write!(f, "not a tickwire event ring (or another version)"),
            RingError::Version(v) => write!(
                f,
                "a tickwire event ring of layout version {v}, which this reader does not read \
                 (it reads version {VERSION}): use a reader built with the feed that writes it"
            ),
            RingError::Name(n) => write!(
                f,
                "instrument {n}: a ring's table holds venue names of at most {MAX_VENUE} bytes \
                 and symbols of at most {MAX_SYMBOL}"
            ),
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

/// The feed's end: publishes events. One per ring; dropped, it marks its
/// ring ended.
pub struct Writer {
    ring: WriteRing,
    next: u64,
}

impl Writer {
    /// Creates a ring of `capacity` slots (a power of two; 128 bytes
    /// each) whose instrument table lists `instruments` (instrument `i`
    /// is the events' `InstrumentId(i)`), and puts it at `path`, in place
    /// of the ring there, which it marks superseded (see the
    /// [lifecycle](self#the-ring-files-lifecycle)).
    pub fn create(
        path: impl AsRef<Path>,
        capacity: usize,
        instruments: &[Instrument],
    ) -> Result<Writer, RingError> {
        Writer::start(&AtPath(path.as_ref().to_owned()), capacity, instruments)
    }

    fn start<P: Place>(
        place: &P,
        capacity: usize,
        instruments: &[Instrument],
    ) -> Result<Writer, RingError> {
        if capacity < 2 || !capacity.is_power_of_two() {
            return Err(RingError::Capacity(capacity));
        }
        let table = table::encode_table(instruments)?;
        let words = capacity
            .checked_mul(SLOT_WORDS)
            .and_then(|w| w.checked_add(HEADER_WORDS + table.len()))
            .filter(|w| w.checked_mul(8).is_some())
            .ok_or(RingError::Capacity(capacity))?;
        let old = place.current();
        let generation = fresh_generation(
            old.as_ref()
                .map(|h| h.words()[W_GENERATION].load(Ordering::Relaxed)),
        );
        let (memory, _, staged) = place.stage(words, generation)?;
        init(memory.words(), capacity as u64, generation, &table);
        let ring = WriteRing {
            memory,
            mask: capacity as u64 - 1,
            slots: HEADER_WORDS + table.len(),
        };
        // The old ring's readers learn that it will have no more events
        // (whatever its writer's state: ended, crashed, or still going).
        let prior = old.as_ref().map(|h| {
            h.words()[W_SUCCESSOR].store(generation, Ordering::Relaxed);
            h.words()[W_STATE].swap(SUPERSEDED, Ordering::Release)
        });
        if let Err(e) = place.install(staged) {
            // Not replaced after all: undo the mark, unless another new
            // writer has made it since.
            if let (Some(h), Some(prior)) = (&old, prior)
                && h.words()[W_SUCCESSOR].load(Ordering::Relaxed) == generation
            {
                let _ = h.words()[W_STATE].compare_exchange(
                    SUPERSEDED,
                    prior,
                    Ordering::Release,
                    Ordering::Relaxed,
                );
            }
            return Err(e);
        }
        Ok(Writer { ring, next: 0 })
    }

    /// Publishes `event` (never waits, never allocates). `false` for a kind
    /// this version cannot encode, which is skipped.
    #[inline]
    pub fn publish(&mut self, event: &Event) -> bool {
        let Some(payload) = encode(event) else {
            return false;
        };
        self.ring.put(self.next, payload);
        self.next += 1;
        true
    }

    /// Events published so far.
    pub fn published(&self) -> u64 {
        self.next
    }

    /// This writer's generation, which its readers see in
    /// [`Read::Reattached`].
    pub fn generation(&self) -> u64 {
        self.ring.generation()
    }
}

impl Drop for Writer {
    /// Marks the ring ended, unless a newer writer superseded it.
    fn drop(&mut self) {
        let _ = self.ring.memory.words()[W_STATE].compare_exchange(
            LIVE,
            ENDED,
            Ordering::Release,
            Ordering::Relaxed,
        );
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
    /// A new writer (the feed restarted) replaced the ring at the path
    /// with its own, of this generation: every event of the old ring has
    /// been read (or counted lost), and reading goes on from the new
    /// one's first. What a reader built from the old writer's events
    /// (books, sequences) starts over.
    Reattached {
        /// The new ring's generation ([`Writer::generation`]).
        generation: u64,
    },
}

/// A consumer's end, in any process: reads events in order, following
/// the ring's replacements at its path.
pub struct Reader {
    ring: ReadRing,
    place: Box<dyn Find>,
    next: u64,
    /// A newer ring, found while this one still had events to read.
    successor: Option<ReadRing>,
    /// Empty polls, counted to space out the clock's reads.
    idle: u32,
    checked: Instant,
    recheck: Duration,
}

impl Reader {
    /// Opens the ring at `path`, positioned after the last event published
    /// (only new events are read; see [`rewind`](Self::rewind)).
    pub fn open(path: impl AsRef<Path>) -> Result<Reader, RingError> {
        Reader::attach(Box::new(AtPath(path.as_ref().to_owned())))
    }

    fn attach(place: Box<dyn Find>) -> Result<Reader, RingError> {
        let ring = ReadRing::open(&*place)?;
        Ok(Reader {
            next: ring.published(),
            ring,
            place,
            successor: None,
            idle: 0,
            checked: Instant::now(),
            recheck: Duration::from_millis(100),
        })
    }

    /// Goes back to the oldest event still in the ring.
    pub fn rewind(&mut self) {
        self.next = self.ring.published().saturating_sub(self.ring.capacity);
    }

    /// The generation of the ring being read.
    pub fn generation(&self) -> u64 {
        self.ring.generation()
    }

    /// The instrument table of the ring being read: entry `i` names the
    /// events of `InstrumentId(i)`, with the decimals of their prices and
    /// sizes. A new ring after [`Read::Reattached`] has its own.
    pub fn instruments(&self) -> &[RingInstrument] {
        &self.ring.instruments
    }

    /// The entry of `id` in the [instrument table](Self::instruments).
    #[inline]
    pub fn instrument(&self, id: FeedId) -> Option<&RingInstrument> {
        self.ring.instruments.get(id.0 as usize)
    }

    /// The state of the ring being read.
    pub fn state(&self) -> State {
        State::of(self.ring.state())
    }

    /// How often, at most, a reader with nothing to read compares the
    /// file at its path with its own (100 ms unless set): that finds a
    /// ring replaced without being marked superseded. A superseded ring's
    /// successor is looked for every millisecond, or this often if less.
    pub fn set_recheck(&mut self, every: Duration) {
        self.recheck = every;
    }

    /// The next event, if the writer has published one; never waits.
    #[inline]
    pub fn read(&mut self) -> Read {
        let published = self.ring.published();
        if self.next < published {
            return self.take(published);
        }
        self.idle()
    }

    fn take(&mut self, published: u64) -> Read {
        if published - self.next > self.ring.capacity {
            return self.lapped(published);
        }
        let n = self.next;
        let Some(payload) = self.ring.get(n) else {
            // Overwritten (or being overwritten) by a later lap.
            return self.lapped(self.ring.published());
        };
        self.next = n + 1;
        match decode(&payload) {
            Some(e) => Read::Event(e),
            // Words no version writes: skip them, as lost.
            None => Read::Lost(1),
        }
    }

    /// Nothing to read: has the ring been replaced?
    fn idle(&mut self) -> Read {
        let successor = match self.successor.take() {
            Some(ring) => ring,
            None => {
                self.idle = self.idle.wrapping_add(1);
                let due = if self.ring.state() == SUPERSEDED {
                    self.due(self.recheck.min(FOLLOW))
                } else {
                    self.idle.is_multiple_of(CLOCK_EVERY) && self.due(self.recheck)
                };
                match due.then(|| self.newer()).flatten() {
                    Some(ring) => ring,
                    None => return Read::Empty,
                }
            }
        };
        // The old writer's last events (stored before it was marked, or
        // by a writer still going) come first.
        let published = self.ring.published();
        if self.next < published {
            self.successor = Some(successor);
            return self.take(published);
        }
        self.ring = successor;
        self.next = 0;
        self.idle = 0;
        Read::Reattached {
            generation: self.ring.generation(),
        }
    }

    /// The ring at the path, if it is another than the one being read (a
    /// newer writer's).
    fn newer(&self) -> Option<ReadRing> {
        let now = self.place.now();
        if now.is_some() && now == self.ring.id {
            return None;
        }
        let ring = ReadRing::open(&*self.place).ok()?;
        (ring.generation() != self.ring.generation()).then_some(ring)
    }

    fn due(&mut self, every: Duration) -> bool {
        let now = Instant::now();
        if now.saturating_duration_since(self.checked) < every {
            return false;
        }
        self.checked = now;
        true
    }

    /// Jumps to the oldest event that a writer at `published` cannot
    /// overwrite before it is read, and says how many were skipped.
    fn lapped(&mut self, published: u64) -> Read {
        // Half a lap of slack, so the next read is not lapped again at
        // once by a writer that keeps going.
        let oldest = published.saturating_sub(self.ring.capacity / 2);
        let lost = oldest.saturating_sub(self.next).max(1);
        self.next = oldest.max(self.next + 1);
        Read::Lost(lost)
    }
}
