//! Deepening a valid book before its kept levels run out, without a gap.
//!
//! A book whose venue sends every change of its whole book but whose REST
//! snapshot held only its top levels ([`Window::Client`], Binance) knows
//! each side only down to a horizon (see [`crate::book`]). As the market
//! sweeps through the known levels, a side knows fewer and fewer, and at
//! fewer than the shown depth the book would have to gap
//! ([`Resync::DepthExhausted`]): on a busy symbol, again and again, each
//! time a gap and a snapshot fetch.
//!
//! So once a side with a horizon knows fewer than half its kept levels
//! beyond the shown ones ([`Refresh::threshold`]), the engine asks for a
//! fresh snapshot ([`SyncEvent::RefreshNeeded`]) while the book stays valid,
//! and records every diff it applies from then on. When the snapshot comes
//! (update id `L`), a second book is built from it and brought up to the
//! live one with the recorded diffs, bridged as the venue's rule says (the
//! same rule as a recovery's: [`Chain::BinanceSpot`] `U <= L + 1 <= u`,
//! [`Chain::BinanceFutures`] `U <= L <= u`), or, if the snapshot is newer
//! than the live book, with the diffs still to come. Once it is in step,
//! it must show exactly what the live book shows; it then takes the live
//! book's place, knowing as much of each side as the snapshot gave. A
//! snapshot no recorded diff bridges (older than the recording) is
//! dropped and asked for again; one that disagrees with the live book (two
//! exact derivations of the same state: never, by the tests) makes the
//! book gap as a stale snapshot does.

use super::{Buffer, Chain, Resync, Seq, SyncConfig, SyncEvent};
use crate::book::{Book, Level, Limit, Side, Window};

/// Where a refresh is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// None under way.
    Idle,
    /// Asked for; the diffs applied since are recorded.
    Asked,
    /// The snapshot at `snapshot` is newer than the live book: the live
    /// diffs to come bridge it.
    Bridging { snapshot: u64 },
}

/// What a diff about to be applied does to the refresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Feed {
    /// Nothing.
    No,
    /// Its levels are recorded (the refresh was asked for).
    Record,
    /// Its levels go to the refreshed book too, which is then in step.
    Shadow,
}

/// Diffs a book waits, after its first dropped refresh, before it asks
/// again.
const HOLD_FIRST: u32 = 8;
/// The longest such wait, in diffs (at Binance's 100 ms, under two
/// minutes).
const HOLD_MOST: u32 = 1024;

/// One book's refresh: the second book and the record of diffs, allocated
/// with the engine where the book may need one, tiny elsewhere.
pub(super) struct Refresh {
    phase: Phase,
    /// Refreshes apply to this book at all.
    enabled: bool,
    /// A side with a horizon knowing fewer levels than this asks for one.
    threshold: usize,
    shadow: Book,
    diffs: Buffer,
    /// The record ran out of room: the refresh is dropped.
    overflow: bool,
    /// Where the diff being applied starts in the record.
    start: usize,
    /// Diffs to apply before a refresh is asked for again after one was
    /// dropped, and drops in a row (each doubles the wait, from
    /// [`HOLD_FIRST`] up to [`HOLD_MOST`]): a venue whose snapshots keep
    /// coming too late for the record (Binance's REST "may be older" than
    /// the stream, "How to manage a local order book correctly") is asked
    /// now and then, not at every diff.
    hold: u32,
    drops: u32,
    /// Books replaced by a refreshed one.
    pub(super) done: u64,
    /// Refresh snapshots dropped (bridged by no recorded diff, a record
    /// that ran out of room).
    pub(super) dropped: u64,
}

impl Refresh {
    pub(super) fn new(chain: Chain, config: &SyncConfig) -> Refresh {
        let enabled = config.deepen
            && matches!(chain, Chain::BinanceSpot | Chain::BinanceFutures)
            && config.window == Window::Client
            && config.keep > config.depth;
        let (shadow, diffs) = if config.deepen {
            (
                Book::with_window(config.depth, config.keep, config.window),
                Buffer::new(config),
            )
        } else {
            (
                Book::with_window(0, 0, config.window),
                Buffer {
                    diffs: Vec::new(),
                    levels: Vec::new(),
                },
            )
        };
        Refresh {
            phase: Phase::Idle,
            enabled,
            threshold: config.depth + (config.keep - config.depth.min(config.keep)) / 2,
            shadow,
            diffs,
            overflow: false,
            start: 0,
            hold: 0,
            drops: 0,
            done: 0,
            dropped: 0,
        }
    }

    /// Bytes its buffers take (see [`SyncConfig::bytes`]).
    pub(super) fn bytes(config: &SyncConfig) -> usize {
        use core::mem::size_of;
        if !config.deepen {
            return 0;
        }
        2 * 2 * config.keep * size_of::<Level>()
            + config.max_buffered_diffs * size_of::<(Seq, usize, usize)>()
            + config.max_buffered_levels * size_of::<(Side, Level)>()
    }

    /// A refresh that cannot be finished: counted, forgotten, and the
    /// next one held back.
    fn drop_one(&mut self) {
        self.dropped += 1;
        self.drops = self.drops.saturating_add(1);
        self.hold = HOLD_FIRST
            .saturating_mul(1 << (self.drops - 1).min(7))
            .min(HOLD_MOST);
        self.reset();
    }

    /// Forgets any refresh under way (the book is no longer valid).
    pub(super) fn reset(&mut self) {
        self.phase = Phase::Idle;
        self.diffs.clear();
        self.overflow = false;
    }

    /// Whether `book` (valid) needs deepening: a side with a horizon knows
    /// fewer than [`threshold`](Self::threshold) levels.
    fn needed(&self, book: &Book) -> bool {
        self.enabled
            && [Side::Bid, Side::Ask]
                .into_iter()
                .any(|s| book.horizon(s).is_some() && book.kept(s).len() < self.threshold)
    }

    /// A diff `seq` is about to be applied to the valid book (`chain`'s
    /// rule bridges a snapshot with it).
    pub(super) fn begin(&mut self, chain: Chain, seq: Seq) -> Feed {
        match self.phase {
            Phase::Idle => Feed::No,
            Phase::Asked => {
                self.start = self.diffs.levels.len();
                Feed::Record
            }
            Phase::Bridging { snapshot } => match bridge(chain, snapshot, seq) {
                Bridge::Old => Feed::No,
                Bridge::Bridges => Feed::Shadow,
                Bridge::Gap => {
                    // Newer than the snapshot and not bridging it: a
                    // fresher one is asked for later.
                    self.drop_one();
                    Feed::No
                }
            },
        }
    }

    /// One level of the diff being applied.
    #[inline]
    pub(super) fn level(&mut self, feed: Feed, side: Side, level: Level) {
        match feed {
            Feed::No => {}
            Feed::Record => {
                if self.diffs.levels.len() < self.diffs.levels.capacity() {
                    self.diffs.levels.push((side, level));
                } else {
                    self.overflow = true;
                }
            }
            Feed::Shadow => self.shadow.set_open(side, level),
        }
    }

    /// The diff `seq` was applied to the live `book`, which is still valid:
    /// the record closed, a refresh in step swapped in, or one asked for.
    /// Returns whether `book` was replaced by the refreshed one, and what
    /// the engine must say (`RefreshNeeded`, or a stale snapshot).
    pub(super) fn end(&mut self, feed: Feed, seq: Seq, book: &mut Book) -> Option<SyncEvent> {
        match feed {
            Feed::Record => {
                if self.overflow || self.diffs.diffs.len() == self.diffs.diffs.capacity() {
                    self.drop_one();
                } else {
                    let end = self.diffs.levels.len();
                    self.diffs.diffs.push((seq, self.start, end));
                }
            }
            Feed::Shadow => {
                self.shadow.settle();
                let snapshot = match self.phase {
                    Phase::Bridging { snapshot } => snapshot,
                    _ => 0,
                };
                return self.swap_in(book, snapshot);
            }
            Feed::No => {
                // A snapshot of exactly the state this diff brought the
                // live book to (one the diff is old for): in step now.
                if self.phase == (Phase::Bridging { snapshot: seq.last }) {
                    return self.swap_in(book, seq.last);
                }
            }
        }
        if self.phase == Phase::Idle && self.hold > 0 {
            self.hold -= 1;
            return None;
        }
        if self.phase == Phase::Idle && self.needed(book) {
            self.phase = Phase::Asked;
            self.diffs.clear();
            self.overflow = false;
            return Some(SyncEvent::RefreshNeeded);
        }
        None
    }

    /// Whether a snapshot arriving for the valid book is this refresh's.
    pub(super) fn asked(&self) -> bool {
        self.phase == Phase::Asked
    }

    /// The refresh's snapshot, at update id `snapshot` (its levels set
    /// with [`shadow_level`](Self::shadow_level) first): brought up to the
    /// live `book` with the recorded diffs, and swapped in if in step.
    pub(super) fn on_snapshot(
        &mut self,
        chain: Chain,
        snapshot: u64,
        limit: Limit,
        book: &mut Book,
        live: u64,
    ) -> Option<SyncEvent> {
        self.shadow.snapshot_done(limit);
        let mut bridged = false;
        let diffs = std::mem::take(&mut self.diffs.diffs);
        for &(seq, start, end) in &diffs {
            if !bridged {
                match bridge(chain, snapshot, seq) {
                    Bridge::Old => continue,
                    Bridge::Bridges => bridged = true,
                    Bridge::Gap => {
                        // Older than the record: it cannot be brought up.
                        self.diffs.diffs = diffs;
                        self.drop_one();
                        return None;
                    }
                }
            }
            for &(side, level) in &self.diffs.levels[start..end] {
                self.shadow.set_open(side, level);
            }
            self.shadow.settle();
        }
        self.diffs.diffs = diffs;
        if bridged || snapshot == live {
            return self.swap_in(book, snapshot);
        }
        if snapshot < live {
            // Older than the live book, and the record does not reach
            // back to it.
            self.drop_one();
            return None;
        }
        // Ahead of the live book: the diffs to come bridge it.
        self.phase = Phase::Bridging { snapshot };
        self.diffs.clear();
        None
    }

    /// Starts the refreshed book from a snapshot: cleared, then its levels
    /// one by one ([`shadow_level`](Self::shadow_level)).
    pub(super) fn shadow_clear(&mut self) {
        self.shadow.clear();
    }

    /// One level of the refresh's snapshot.
    pub(super) fn shadow_level(&mut self, side: Side, level: Level) {
        self.shadow.set_level(side, level);
    }

    /// The refreshed book is in step with the live `book`: it takes its
    /// place if it shows exactly the same levels (and is exact itself);
    /// otherwise the book gaps as for a stale snapshot.
    fn swap_in(&mut self, book: &mut Book, snapshot: u64) -> Option<SyncEvent> {
        // Prices and sizes: how many digits each string had on the wire
        // may differ between the REST snapshot and the stream (a trailing
        // zero), and says nothing of the book.
        let value = |l: &Level| (l.price, l.size);
        let same = [Side::Bid, Side::Ask].into_iter().all(|s| {
            book.levels(s)
                .iter()
                .map(value)
                .eq(self.shadow.levels(s).iter().map(value))
        });
        let usable = self.shadow.is_exact() && !self.shadow.is_crossed();
        self.reset();
        if !same {
            return Some(SyncEvent::Gap(Resync::SnapshotStale {
                snapshot,
                first_diff: snapshot,
            }));
        }
        if usable {
            std::mem::swap(book, &mut self.shadow);
            self.done += 1;
            self.drops = 0;
        } else {
            self.drop_one();
        }
        None
    }
}

/// How a diff stands to a snapshot at `snapshot` under `chain`'s rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bridge {
    /// The snapshot holds it already.
    Old,
    /// It is the first the snapshot needs.
    Bridges,
    /// It comes after a diff the snapshot needs: the snapshot is too old.
    Gap,
}

fn bridge(chain: Chain, snapshot: u64, seq: Seq) -> Bridge {
    let (old, bridges) = match chain {
        Chain::BinanceFutures => (
            seq.last < snapshot,
            seq.first <= snapshot && snapshot <= seq.last,
        ),
        // Spot's rule (the only other chain refreshed); `u64::MAX` is
        // bridged by nothing.
        _ if snapshot == u64::MAX => (false, false),
        _ => (
            seq.last <= snapshot,
            snapshot < seq.last && seq.first <= snapshot + 1,
        ),
    };
    if old {
        Bridge::Old
    } else if bridges {
        Bridge::Bridges
    } else {
        Bridge::Gap
    }
}

#[cfg(test)]
mod tests;
