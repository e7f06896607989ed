//! Where one adapter's events go on the feed's thread: feed-wide instrument
//! ids, book validity and the counters, recovery asked for, then the ring,
//! the queue and the embedding handler's batch.

use std::fmt::Write as _;
use std::time::Instant;

use tickwire_venues::{Event as VenueEvent, InstrumentId, Kind};

use crate::id::{Event, FeedId};

use super::Sinks;
use super::recovery::{Need, Recovery};
use super::stats::{FeedStats, VenueStats};

/// Hands one adapter's events on: feed-wide ids, book validity, counters,
/// recovery, the ring, the queue. Borrows the parts of [`Core`] the
/// adapter does not.
pub(super) struct Emitter<'a> {
    /// The venue's instruments whose refusal was logged.
    pub(super) logged_refusals: &'a mut [bool],
    /// The venue's books that have been valid at least once.
    pub(super) was_valid: &'a mut [bool],
    /// The venue's books whose snapshot is wanted or being fetched.
    pub(super) snapshot_wanted: &'a mut [bool],
    pub(super) sinks: &'a mut Sinks,
    /// Where the events go for the embedding program's handler, if it
    /// wants them.
    pub(super) batch: Option<&'a mut Vec<Event>>,
    pub(super) stats: &'a FeedStats,
    pub(super) venue_stats: &'a VenueStats,
    pub(super) valid: &'a mut [bool],
    pub(super) recovery: &'a mut Recovery,
    pub(super) refused: &'a mut Vec<InstrumentId>,
    /// The venue (index) the events come from.
    pub(super) venue: usize,
    /// Its books come from REST snapshots.
    pub(super) rest: bool,
    /// The venue's first instrument id.
    pub(super) base: u32,
    /// The feed's first instrument id.
    pub(super) first: u32,
    /// The feed is shutting down: its books end (`Disconnected`, `Gap`
    /// still go out), but that is not a gap to count.
    pub(super) stopping: bool,
}

impl Emitter<'_> {
    /// Hands on `e`, about the adapter's instrument, as the feed's event
    /// about the same instrument (its feed-wide id).
    pub(super) fn emit(&mut self, e: VenueEvent) {
        let (stats, venue) = (self.stats, self.venue_stats);
        let local: InstrumentId = e.instrument;
        let e: Event = e.with_instrument(FeedId(self.base + local.0));
        let slot = self.valid.get_mut((e.instrument.0 - self.first) as usize);
        match e.kind {
            Kind::BookValid { .. } => {
                if let Some(v) = slot
                    && !*v
                {
                    *v = true;
                    FeedStats::add(&stats.books_valid, 1);
                    FeedStats::add(&venue.books_valid, 1);
                }
                self.recovery.valid(self.venue, local.0 as usize);
                if let Some(r) = self.logged_refusals.get_mut(local.0 as usize) {
                    *r = false;
                }
                if let Some(w) = self.was_valid.get_mut(local.0 as usize) {
                    *w = true;
                }
            }
            Kind::Gap { .. } | Kind::Disconnected => {
                if let Some(v) = slot
                    && *v
                {
                    *v = false;
                    FeedStats::sub(&stats.books_valid, 1);
                    FeedStats::sub(&venue.books_valid, 1);
                }
                if let Kind::Gap { why } = e.kind
                    && !self.stopping
                {
                    FeedStats::add(&stats.gaps, 1);
                    FeedStats::add(&venue.gaps, 1);
                    // Rare (a gap, not a message): the cause is kept for
                    // the venue's status line, in a text reused.
                    let mut last = venue.last_gap.lock().unwrap_or_else(|e| e.into_inner());
                    last.clear();
                    let _ = write!(last, "{why:?}");
                }
            }
            Kind::Resync => {
                // Asked for while the book is valid: a refresh to deepen
                // it (its fetch goes at once: no backoff from a recovery).
                let refresh = slot.is_some_and(|v| *v);
                if refresh {
                    FeedStats::add(&venue.refreshes, 1);
                    // Unless a fetch is wanted already (on its way, or
                    // retried after a failure: that retry is kept).
                    let wanted = self.snapshot_wanted.get(local.0 as usize) == Some(&true);
                    if !wanted {
                        self.recovery.valid(self.venue, local.0 as usize);
                    }
                }
                // A book's first snapshot is no resync: only one after the
                // book was valid once.
                let recovering = self.was_valid.get(local.0 as usize).copied() == Some(true);
                if recovering && !refresh && !self.stopping {
                    FeedStats::add(&stats.resyncs, 1);
                    FeedStats::add(&venue.resyncs, 1);
                }
                if self.rest {
                    // One fetch per book: a book whose snapshot is due,
                    // queued or on its way takes that one. Fetched after
                    // the book's backoff: at once the first time since it
                    // was valid.
                    if let Some(w) = self.snapshot_wanted.get_mut(local.0 as usize)
                        && !*w
                    {
                        *w = true;
                        self.recovery
                            .fetch(self.venue, local.0 as usize, Instant::now());
                    }
                } else {
                    // Sent only if the connection is open: after a
                    // disconnect, the reconnect subscribes it again.
                    let now = Instant::now();
                    self.recovery
                        .ask(self.venue, local.0 as usize, Need::Resubscribe, now);
                }
            }
            Kind::Rejected { .. } => {
                if self.refused.len() < self.refused.capacity() {
                    self.refused.push(local);
                }
                self.recovery.ask(
                    self.venue,
                    local.0 as usize,
                    Need::Subscribe,
                    Instant::now(),
                );
            }
            _ => {}
        }
        FeedStats::add(&stats.events, 1);
        if let Some(ring) = self.sinks.ring.as_mut() {
            ring.publish(&e);
        }
        #[cfg(feature = "aeron")]
        if let Some(a) = self.sinks.aeron.as_mut() {
            a.publish(&e);
        }
        if let Some(q) = &self.sinks.queue {
            q.publish(e);
        }
        if let Some(batch) = self.batch.as_mut() {
            batch.push(e);
        }
    }
}
