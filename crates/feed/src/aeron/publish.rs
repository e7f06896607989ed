//! The feed's Aeron sink: one exclusive publication per feed thread,
//! offered to from that thread, never waited on.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rusteron_client::{Aeron, AeronExclusivePublication, AeronOfferError};
use tickwire_tsc::Calibration;

use tickwire_venues::book::{Book, Side};
use tickwire_venues::event::Kind;

use crate::id::{Event, FeedId};
use crate::sink::Instrument;
use crate::stream::{self, NameTooLong};

/// What a [`Publisher`] did with the events it was handed (shared with
/// whoever reports them; relaxed counters, as the feed's own).
#[derive(Debug, Default)]
pub struct PublishStats {
    /// Events Aeron took.
    pub published: AtomicU64,
    /// Dropped: a subscriber was a publication window behind (back
    /// pressure; half a term by default).
    pub back_pressured: AtomicU64,
    /// Dropped: no subscriber was connected.
    pub not_connected: AtomicU64,
    /// Dropped: the publication was closed or at its end (said once).
    pub failed: AtomicU64,
    /// Instrument table parts sent.
    pub table_parts: AtomicU64,
    /// Books sent again from the feed's own state (for a subscriber that
    /// joined, or lost events), as snapshot, levels and `book valid`.
    pub books_sent: AtomicU64,
}

impl PublishStats {
    /// Every event dropped, whatever the cause.
    pub fn dropped(&self) -> u64 {
        self.back_pressured.load(Ordering::Relaxed)
            + self.not_connected.load(Ordering::Relaxed)
            + self.failed.load(Ordering::Relaxed)
    }
}

/// Table resends: the table goes before the first event a newly
/// connected subscriber can get, and again this often (in the events'
/// receive stamps) for subscribers that joined a stream already flowing.
const TABLE_EVERY_S: f64 = 1.0;

/// An event's frame in Aeron's log: the 32-byte data header and the
/// event's bytes, aligned to 32 (`aeron_logbuffer_descriptor.h`).
const FRAME: usize = (32 + stream::EVENT_LEN).next_multiple_of(32);

/// Said once each: the first event dropped for each cause.
const SAID_BACK_PRESSURE: u8 = 1;
const SAID_NOT_CONNECTED: u8 = 2;
const SAID_FAILED: u8 = 4;
const SAID_BOOK_TOO_LARGE: u8 = 8;

/// The feed's sink on one Aeron publication. [`Publisher::publish`]
/// encodes an event into a buffer on the stack and offers it once: no
/// allocation, no waiting (a test counts).
pub struct Publisher {
    publication: AeronExclusivePublication,
    /// The client, for its counters (the driver's view of the publication).
    aeron: Aeron,
    id: u32,
    sequence: u64,
    table: Vec<Vec<u8>>,
    table_due: bool,
    next_table: u64,
    table_every: u64,
    calibration: Calibration,
    stats: Arc<PublishStats>,
    said: u8,
    /// Events were dropped (no subscriber, back pressure): whoever reads
    /// on has lost its books, which go again once Aeron takes events.
    books_owed: bool,
    /// Every book goes again this often (in clock ticks), if set.
    books_every: Option<u64>,
    next_books: u64,
    /// Books already sent of the ones owed (by their order).
    books_next: usize,
    /// The most the publication can hold unread: half its term.
    window: i64,
    /// Drops counted when the round of books under way began.
    round_drops: u64,
    /// Since when (clock ticks) the next book has waited for room.
    stuck_since: Option<u64>,
    /// How long (clock ticks: a second) a book may wait for room before it
    /// is skipped.
    book_patience: u64,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("id", &self.id)
            .field("sequence", &self.sequence)
            .finish_non_exhaustive()
    }
}

impl Publisher {
    pub(super) fn new(
        aeron: Aeron,
        publication: AeronExclusivePublication,
        instruments: &[Instrument],
    ) -> Result<Publisher, NameTooLong> {
        // Per-process random keys (a new one for each `RandomState`), over
        // this process's count of publishers and its pid.
        static MADE: AtomicU64 = AtomicU64::new(0);
        let id = loop {
            let made = MADE.fetch_add(1, Ordering::Relaxed);
            let id = RandomState::new().hash_one((made, std::process::id())) as u32;
            if id != 0 {
                break id;
            }
        };
        let calibration = tickwire_tsc::calibration();
        Ok(Publisher {
            aeron,
            id,
            sequence: 0,
            table: stream::encode_table(id, instruments)?,
            table_due: true,
            next_table: 0,
            table_every: (calibration.ticks_per_second() * TABLE_EVERY_S) as u64,
            calibration,
            stats: Arc::default(),
            said: 0,
            books_owed: false,
            books_every: None,
            next_books: 0,
            books_next: 0,
            round_drops: 0,
            stuck_since: None,
            book_patience: calibration.ticks_per_second() as u64,
            window: publication
                .get_constants()
                .map_or(i64::MAX, |c| (c.term_buffer_length() / 2) as i64),
            publication,
        })
    }

    /// This publisher's id in the stream (each message's bytes 4..8).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Its counters.
    pub fn stats(&self) -> Arc<PublishStats> {
        self.stats.clone()
    }

    /// Closes the publication and waits, at most `deadline` long, until
    /// the media driver has finished with it; whether it had. For a feed
    /// that stops: its driver (embedded, it stops with the process) may
    /// still owe a subscriber frames lost at the very end, which the
    /// subscriber could not see as a gap (nothing comes after them).
    ///
    /// The driver's rules relied on (`aeron_network_publication.c`,
    /// `aeron_ipc_publication.c`): a closed publication drains (sends what
    /// it has, repairs what is asked for), then lingers until a unicast
    /// receiver confirms the end of the stream, or its linger timeout
    /// (5 s by default) passes; only then is it deleted and its counters
    /// (the publication limit among them) freed.
    pub fn finish(self, deadline: std::time::Duration) -> bool {
        let counter = self
            .publication
            .get_constants()
            .map(|c| c.publication_limit_counter_id());
        let reader = self.aeron.counters_reader();
        let _ = self.publication.close();
        let Ok(counter) = counter else {
            return false;
        };
        let until = std::time::Instant::now() + deadline;
        loop {
            // 1: AERON_COUNTER_RECORD_ALLOCATED.
            if reader.counter_state(counter).is_ok_and(|state| state != 1) {
                return true;
            }
            if std::time::Instant::now() >= until {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Bytes the publication can take now before Aeron pushes back.
    pub fn room(&self) -> i64 {
        self.publication.position_limit() - self.publication.position()
    }

    /// Whether a subscriber is connected now.
    pub fn is_connected(&self) -> bool {
        self.publication.is_connected()
    }

    /// Sends every valid book again this often, besides after drops (for
    /// subscribers that join a stream already flowing, many at once:
    /// multicast); `None` (the default): only after drops.
    pub fn set_books_every(&mut self, every: Option<std::time::Duration>) {
        self.books_every =
            every.map(|d| (self.calibration.ticks_per_second() * d.as_secs_f64()) as u64);
        self.next_books = 0;
    }

    /// Whether the books should go again now (`now`: the clock's ticks):
    /// events were dropped and a subscriber is connected, or the interval
    /// of [`Publisher::set_books_every`] has passed.
    #[inline]
    pub fn books_due(&self, now: u64) -> bool {
        (self.books_owed && self.publication.is_connected())
            || self.books_every.is_some() && now >= self.next_books
    }

    /// Sends each of `books` (valid ones, by their feed-wide ids) as the
    /// adapters send a snapshot: `BookSnapshot` (update id 0: the book as
    /// the feed holds it, not a venue's message), a `BookDelta` per level
    /// shown (bids best first, then asks; the last flagged) and
    /// `BookValid`, stamped `now`. A subscriber that joined, or lost
    /// events, has its books again; one that did not rebuilds the same.
    ///
    /// A book goes only when Aeron has room for all of it, so it is never
    /// cut by back pressure; the ones that do not fit yet go at a later
    /// call, from where this one stopped. A book that has not fitted for a
    /// second (larger than the publication's window: half a term, or
    /// less with `pub-wnd`) is skipped and said once (a larger
    /// `term-length` carries it), so one book never holds the others up.
    /// Events dropped at any time during a round of books start the round
    /// again once it ends.
    pub fn publish_books<'b>(&mut self, now: u64, books: impl Iterator<Item = (FeedId, &'b Book)>) {
        if let Some(every) = self.books_every
            && self.books_next == 0
        {
            self.next_books = now.saturating_add(every);
            self.books_owed = true;
        }
        if !self.publication.is_connected() {
            return;
        }
        if self.books_next == 0 && self.stuck_since.is_none() {
            self.round_drops = self.stats.dropped();
        }
        for (id, book) in books.skip(self.books_next) {
            let (bids, asks) = (book.levels(Side::Bid), book.levels(Side::Ask));
            let total = bids.len() + asks.len();
            let bytes = ((2 + total) * FRAME) as i64;
            let room = self.publication.position_limit() - self.publication.position();
            if bytes > room {
                let since = *self.stuck_since.get_or_insert(now);
                if bytes <= self.window && now.saturating_sub(since) < self.book_patience {
                    // Room later, as the subscribers read on.
                    return;
                }
                self.stuck_since = None;
                if self.said & SAID_BOOK_TOO_LARGE == 0 {
                    self.said |= SAID_BOOK_TOO_LARGE;
                    log::warn!(
                        "aeron sink (publisher {:08x}): a book of {total} levels ({bytes} bytes) found no room for a second (the publication's window is at most {} bytes): it is skipped; a larger term-length would carry it",
                        self.id,
                        self.window
                    );
                }
                self.books_next += 1;
                continue;
            }
            let event = |kind| Event {
                instrument: id,
                exchange_ns: 0,
                recv_tsc: now,
                kind,
            };
            self.publish(&event(Kind::BookSnapshot {
                update_id: 0,
                bids: bids.len() as u32,
                asks: asks.len() as u32,
                depth: book.depth() as u32,
            }));
            let all = bids
                .iter()
                .map(|l| (Side::Bid, l))
                .chain(asks.iter().map(|l| (Side::Ask, l)));
            for (n, (side, level)) in all.enumerate() {
                self.publish(&event(Kind::BookDelta {
                    side,
                    price: level.price,
                    size: level.size,
                    update_id: 0,
                    last: n + 1 == total,
                }));
            }
            self.publish(&event(Kind::BookValid { update_id: 0 }));
            self.stats.books_sent.fetch_add(1, Ordering::Relaxed);
            self.books_next += 1;
            self.stuck_since = None;
        }
        self.books_next = 0;
        // Drops since the round began (between its calls too, or room gone
        // between a check and its offers): a subscriber lost books already
        // sent, so all again.
        self.books_owed = self.stats.dropped() > self.round_drops;
    }

    /// Offers `event` (after the instrument table, when it is due); true
    /// if Aeron took it. A kind the stream does not carry is skipped and
    /// takes no sequence number.
    #[inline]
    pub fn publish(&mut self, event: &Event) -> bool {
        let unix_ns = self.calibration.to_unix_ns(event.recv_tsc);
        let Some(message) = stream::encode_event(self.id, self.sequence + 1, event, unix_ns) else {
            return false;
        };
        self.sequence += 1;
        if event.recv_tsc >= self.next_table {
            self.next_table = event.recv_tsc.saturating_add(self.table_every);
            self.table_due = true;
            // Once a second: the exporter refines the process's calibration.
            self.calibration = tickwire_tsc::calibration();
        }
        if self.table_due && self.publication.is_connected() {
            self.send_table();
        }
        match self.offer(&message) {
            Ok(()) => {
                self.stats.published.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(e) => {
                self.dropped(e);
                false
            }
        }
    }

    /// One offer, and one more at once on an admin action (a term
    /// rotating), as Aeron's samples do.
    fn offer(&self, message: &[u8]) -> Result<(), AeronOfferError> {
        match self.publication.offer(message) {
            Ok(_) => Ok(()),
            Err(AeronOfferError::AdminAction) => self.publication.offer(message).map(|_| ()),
            Err(e) => Err(e),
        }
    }

    fn send_table(&mut self) {
        for part in &self.table {
            if self.offer(part).is_err() {
                // Due still: tried again with the next event.
                return;
            }
            self.stats.table_parts.fetch_add(1, Ordering::Relaxed);
        }
        self.table_due = false;
    }

    #[cold]
    fn dropped(&mut self, e: AeronOfferError) {
        match e {
            AeronOfferError::NotConnected => {
                self.stats.not_connected.fetch_add(1, Ordering::Relaxed);
                self.books_owed = true;
                // A subscriber that connects next starts where the stream
                // is then: the table goes first.
                self.table_due = true;
                if self.said & SAID_NOT_CONNECTED == 0 {
                    self.said |= SAID_NOT_CONNECTED;
                    log::info!(
                        "aeron sink (publisher {:08x}): no subscriber connected; events are dropped and counted until one is",
                        self.id
                    );
                }
            }
            AeronOfferError::BackPressured | AeronOfferError::AdminAction => {
                self.stats.back_pressured.fetch_add(1, Ordering::Relaxed);
                self.books_owed = true;
                if self.said & SAID_BACK_PRESSURE == 0 {
                    self.said |= SAID_BACK_PRESSURE;
                    log::warn!(
                        "aeron sink (publisher {:08x}): back pressure (a subscriber is a publication window behind); events are dropped and counted, the feed goes on",
                        self.id
                    );
                }
            }
            other => {
                self.stats.failed.fetch_add(1, Ordering::Relaxed);
                self.books_owed = true;
                if self.said & SAID_FAILED == 0 {
                    self.said |= SAID_FAILED;
                    log::error!(
                        "aeron sink (publisher {:08x}): the publication refuses events ({other:?}); they are dropped and counted",
                        self.id
                    );
                }
            }
        }
    }
}
