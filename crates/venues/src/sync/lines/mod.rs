//! Two connections carrying one book: a planned reconnect's replacement
//! while it takes over, or a warm standby line for good. Both lines carry
//! the same venue stream, so each diff may come twice; the first arrival
//! is applied and the second is a duplicate, recognised by the venue's own
//! sequence ids (a diff whose last id the book already holds).
//!
//! The rules, per book, while both lines are open:
//!
//! - A diff that chains onto the book is applied, whichever line brought
//!   it; one the book already holds is dropped as a duplicate.
//! - A diff that does not chain (it is ahead: the line skipped one, or
//!   was subscribed after the book's last update) is dropped while the
//!   other line is in step (its latest diff was applied or held already):
//!   the other line is expected to bring the missing diffs, after which
//!   this line's next diffs chain again. When the other line is ahead too,
//!   or not known to be in step, it is a gap.
//! - The book follows one line, its *leader*: its recovery (a snapshot
//!   asked for in band, a resubscription) is on that line, and while the
//!   book is not valid the other line's messages are ignored. An in-band
//!   snapshot from the other line is not needed while the book is valid.
//! - When the leader goes down the book follows the other line, with no
//!   gap if that line was in step: it is at most behind, and its copies of
//!   what the book holds are dropped while it catches up. A line that
//!   never showed it carries the book (still subscribing, refused) cannot
//!   take it over: the book is disconnected.
//!
//! Venues whose book messages carry no sequence (Kraken; Coinbase, whose
//! `sequence_num` counts a connection's own messages) cannot tell a
//! duplicate from a new update. There the other line keeps a *shadow*
//! book of its own (its own snapshot, its own updates and checksums),
//! and when the leader goes down the shadow, if in step, becomes the book:
//! said as a fresh snapshot of the book (`Valid`), never as a gap.

use super::{BookSync, Chain, Resync, State, SyncEvent};
use crate::DecodeError;
use crate::book::{Book, Limit};
use crate::sync::LevelResult;

pub use crate::model::Line;

/// What a line's latest diff did to the book (see [`BookSync::arrival`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrival {
    /// Nothing to compare (no diff, or a snapshot, or dropped unread).
    #[default]
    Other,
    /// The diff with this last id was applied: the first to arrive.
    Applied(u64),
    /// The diff with this last id was held already: the later arrival.
    Duplicate(u64),
}

/// The lines of one book.
#[derive(Debug, Default)]
pub(crate) struct LineState {
    /// Which lines are open.
    open: [bool; 2],
    /// The line the book follows.
    leader: Line,
    /// The line of the message being fed.
    from: Line,
    /// Each line's latest diff was applied or held already.
    heard: [bool; 2],
    /// Each line's latest diff did not chain (it is ahead of the book).
    ahead: [bool; 2],
    /// The other line's book, where the venue's book messages have no
    /// sequence (allocated when a second line first opens).
    shadow: Option<Shadow>,
    /// The message being fed went to the shadow.
    fed_shadow: bool,
    /// The message being fed left the book alone (a duplicate, a diff
    /// ahead, the other line's snapshot): its checksum describes another
    /// state of the book, and is not checked.
    skipped: bool,
    /// What the latest diff did.
    arrival: Arrival,
    /// The shadow was dropped for a fault of its line (a checksum that
    /// differs, a gap in that connection's sequence): the line should be
    /// opened again, for a snapshot of its own.
    shadow_lost: bool,
    /// The book's leader went down and the other line carries it now: a
    /// diff it holds already is that line catching up, until the line's
    /// first diff applied.
    catching_up: bool,
    /// Copies in a row while catching up.
    copies: u32,
    /// The last id of each line's latest diff that was applied or held
    /// already (0: none since the line opened): a copy while catching up
    /// must continue its own line's chain.
    own_last: [u64; 2],
}

/// A line that brings more copies in a row than this while it catches up
/// is not behind but on another chain (a venue that restarted its ids on
/// that connection alone): the book gaps rather than stand still.
const MOST_COPIES: u32 = 64;

/// A book kept from the other line's messages alone.
#[derive(Debug)]
struct Shadow {
    book: Book,
    valid: bool,
    last: u64,
}

impl LineState {
    /// Both lines are open.
    pub(crate) fn both(&self) -> bool {
        self.open[0] && self.open[1]
    }

    /// The message being fed came on the line the book does not follow.
    pub(crate) fn on_follower(&self) -> bool {
        self.both() && self.from != self.leader
    }

    /// The message being fed went to the shadow book (asked once, by the
    /// checksum that follows it).
    pub(crate) fn took_shadow(&mut self) -> bool {
        std::mem::take(&mut self.fed_shadow)
    }

    /// What is fed next is the leader's (a REST snapshot, and the diffs
    /// buffered for it).
    pub(crate) fn on_leader(&mut self) {
        self.from = self.leader;
    }

    /// A message is being fed: nothing skipped yet.
    pub(crate) fn start(&mut self) {
        self.skipped = false;
        self.arrival = Arrival::Other;
    }

    /// The message just fed left the book alone (asked once, by the
    /// checksum that follows it).
    pub(crate) fn took_skip(&mut self) -> bool {
        std::mem::take(&mut self.skipped)
    }

    /// The line other than `line`.
    fn other(line: Line) -> Line {
        line.other()
    }

    /// One line went down and the other, open, may be behind the book:
    /// its copies of what the book holds are dropped until it catches up
    /// ([`BookSync::duplicate`]).
    fn start_catch_up(&mut self) {
        self.catching_up = true;
        self.copies = 0;
    }

    /// No catch-up under way (the book it was for is gone, or caught up).
    pub(crate) fn end_catch_up(&mut self) {
        self.catching_up = false;
        self.copies = 0;
    }
}

/// Whether `chain`'s book messages carry a sequence of the venue's own
/// (the same on every connection).
fn sequenced(chain: Chain) -> bool {
    !matches!(chain, Chain::Kraken | Chain::Coinbase)
}

impl BookSync {
    /// The next messages came on `line`.
    #[inline]
    pub fn set_line(&mut self, line: Line) {
        self.lines.from = line;
    }

    /// The line the book follows.
    pub fn leader(&self) -> Line {
        self.lines.leader
    }

    /// What the latest diff fed did: applied first, or held already (the
    /// later arrival of a diff both lines carry).
    pub fn arrival(&self) -> Arrival {
        self.lines.arrival
    }

    /// Which of the book's two lines are open now (a line opened, or went
    /// down). With both down the book is disconnected
    /// ([`disconnected`](Self::disconnected)). When the line the book
    /// followed went down and the other is open, the book follows the
    /// other: it stays valid where the venue sequences its messages; where
    /// it does not, the other line's shadow book takes its place (`Valid`,
    /// a fresh snapshot of the book), or, if the shadow is not in step,
    /// the book gaps. A book not valid then asks for its snapshot again
    /// (`SnapshotNeeded`) where snapshots come in band, since the request
    /// went on the line that is gone.
    pub fn lines_changed(&mut self, open: [bool; 2], emit: &mut impl FnMut(SyncEvent)) {
        let was = self.lines.open;
        let old_leader = self.lines.leader;
        self.lines.open = open;
        for l in 0..2 {
            if open[l] != was[l] {
                self.lines.heard[l] = false;
                self.lines.ahead[l] = false;
                self.lines.own_last[l] = 0;
                self.lines.shadow_lost = false;
            }
        }
        if open[0] && open[1] && !sequenced(self.chain) && self.lines.shadow.is_none() {
            // Not on the receive path: when a second line first opens.
            self.lines.shadow = Some(Shadow {
                book: Book::with_window(self.config.depth, self.config.keep, self.config.window),
                valid: false,
                last: 0,
            });
        }
        if !open[0] && !open[1] {
            self.forget_shadow();
            return self.disconnected(emit);
        }
        let leader = if open[old_leader.index()] {
            old_leader
        } else {
            LineState::other(old_leader)
        };
        self.lines.leader = leader;
        self.lines.from = leader;
        if leader == old_leader || !was[old_leader.index()] {
            let follower = leader.other().index();
            if open[follower] != was[follower] {
                // The shadow's line is gone, or has just opened: it starts
                // from its own snapshot.
                self.forget_shadow();
            }
            if was[follower] && !open[follower] && sequenced(self.chain) && self.is_valid() {
                // The line gone may have brought the latest diffs first:
                // the leader is then behind the book, and its copies of
                // them are dropped while it catches up (a proxy's line or
                // a far endpoint's is often the later one).
                self.lines.start_catch_up();
            }
            return;
        }
        // The line the book followed went down; the other carries it now.
        if !sequenced(self.chain) {
            if let Some(shadow) = self.lines.shadow.as_mut().filter(|s| s.valid) {
                std::mem::swap(&mut self.book, &mut shadow.book);
                shadow.valid = false;
                let last = shadow.last;
                self.buffer.clear();
                self.state = State::Valid { last };
                emit(SyncEvent::Valid { update_id: last });
            } else if self.is_valid() {
                self.invalidate(Resync::Disconnected, emit);
            } else {
                self.ask_again(emit);
            }
        } else if self.is_valid() {
            if self.lines.heard[leader.index()] {
                // At most behind: its copies of what the book holds are
                // dropped until it catches up.
                self.lines.start_catch_up();
            } else {
                // It never showed it carries this book (still subscribing,
                // refused, ahead): the book cannot be said in step.
                self.disconnected(emit);
            }
        } else if self.chain.in_band_snapshot() {
            self.ask_again(emit);
        }
        // A REST book not valid yet keeps its buffered diffs and its fetch:
        // update ids are the venue's, so they bridge on either line.
    }

    /// The in-band snapshot this book waits for was asked for on a line
    /// that is gone: ask on the leader.
    fn ask_again(&mut self, emit: &mut impl FnMut(SyncEvent)) {
        self.book.clear();
        self.buffer.clear();
        self.state = State::Buffering { asked: true };
        emit(SyncEvent::SnapshotNeeded);
    }

    fn forget_shadow(&mut self) {
        if let Some(s) = self.lines.shadow.as_mut() {
            s.valid = false;
            s.book.clear();
        }
    }

    /// Whether `line` could carry the book alone from here: it is the
    /// leader and the book is valid, or its latest diff was in step with
    /// the valid book (applied or held already), or, for a venue without
    /// sequence, its shadow book is in step.
    pub fn line_ready(&self, line: Line) -> bool {
        let l = line.index();
        if !self.lines.open[l] {
            return false;
        }
        if line == self.lines.leader {
            return self.is_valid();
        }
        if !sequenced(self.chain) {
            return self.lines.shadow.as_ref().is_some_and(|s| s.valid);
        }
        self.is_valid() && self.lines.heard[l] && !self.lines.ahead[l]
    }

    /// Whether `line`, not the leader, has lost this book's shadow to a
    /// fault of its own and should be opened again.
    pub fn line_broken(&self, line: Line) -> bool {
        line != self.lines.leader && self.lines.both() && self.lines.shadow_lost
    }

    /// Something that concerns every book of `line` (a gap in that
    /// connection's own sequence): the book's [`invalidate_all`](Self::invalidate_all)
    /// if it follows that line, else the shadow kept from it is dropped.
    pub fn invalidate_line(&mut self, line: Line, why: Resync, emit: &mut impl FnMut(SyncEvent)) {
        if self.lines.both() && line != self.lines.leader {
            self.lines.heard[line.index()] = false;
            self.lines.shadow_lost |= self.lines.shadow.is_some();
            self.forget_shadow();
        } else {
            self.invalidate_all(why, emit);
        }
    }

    /// A diff from the line the book does not follow, on a book that is
    /// not valid: ignored (the book recovers on its leader).
    pub(super) fn follower_ignored(&mut self) -> bool {
        if self.lines.on_follower() && !self.is_valid() {
            self.lines.arrival = Arrival::Other;
            self.lines.skipped = true;
            return true;
        }
        false
    }

    /// A diff on a valid book, up to `seq.last`, that the book holds
    /// already while both lines are open: dropped as a duplicate. With one
    /// line open, catching up, only a diff that continues that line's own
    /// chain (its `prev` the line's latest id, where the venue sends one) is
    /// a copy: one that does not is no diff the book has seen in that
    /// order (OKX's ids reset in maintenance, and a reset lost on the way
    /// leaves the next diffs below the book's ids), and is a gap.
    pub(super) fn duplicate(&mut self, last_applied: u64, seq: super::Seq) -> bool {
        let alone = self.lines.catching_up && !self.lines.both();
        if alone
            && seq
                .prev
                .is_some_and(|prev| prev != self.lines.own_last[self.lines.from.index()])
        {
            return false;
        }
        if (self.lines.both() || self.lines.catching_up)
            && sequenced(self.chain)
            && seq.last <= last_applied
        {
            let last = seq.last;
            if self.lines.catching_up && !self.lines.both() {
                self.lines.copies += 1;
                if self.lines.copies > MOST_COPIES {
                    return false;
                }
            }
            self.duplicate_diffs += 1;
            self.lines.skipped = true;
            self.in_step(Arrival::Duplicate(last));
            return true;
        }
        false
    }

    /// The line catching up has brought nothing but copies for too long
    /// ([`MOST_COPIES`]): it is on another chain.
    pub(super) fn stuck(&mut self) -> bool {
        if self.lines.catching_up && self.lines.copies > MOST_COPIES {
            self.lines.catching_up = false;
            self.lines.copies = 0;
            return true;
        }
        false
    }

    /// The line's latest diff was applied or held already.
    pub(super) fn in_step(&mut self, arrival: Arrival) {
        if matches!(arrival, Arrival::Applied(_)) {
            self.lines.end_catch_up();
        }
        let l = self.lines.from.index();
        if let Arrival::Applied(id) | Arrival::Duplicate(id) = arrival {
            self.lines.own_last[l] = id;
        }
        self.lines.heard[l] = true;
        self.lines.ahead[l] = false;
        self.lines.arrival = arrival;
    }

    /// A diff that does not chain onto the valid book: dropped (`true`)
    /// while the other line is open and not ahead too, since it will
    /// bring what is missing; otherwise the book has a gap.
    pub(super) fn ahead(&mut self) -> bool {
        let l = self.lines.from.index();
        self.lines.arrival = Arrival::Other;
        if !self.lines.both() {
            return false;
        }
        self.lines.ahead[l] = true;
        self.lines.heard[l] = false;
        if self.lines.ahead[1 - l] || !self.lines.heard[1 - l] {
            // The other line is ahead too, or not known to be in step:
            // nothing will bring what is missing.
            return false;
        }
        self.ahead_diffs += 1;
        self.lines.skipped = true;
        true
    }

    /// An in-band snapshot from the line the book does not follow: not
    /// needed (`true`) while the book is valid, and ignored while it is
    /// not (its recovery is on the leader).
    pub(super) fn follower_snapshot(&mut self) -> bool {
        if !self.lines.on_follower() {
            return false;
        }
        if self.is_valid() {
            self.unneeded_snapshots += 1;
        }
        let l = self.lines.from.index();
        self.lines.heard[l] = false;
        self.lines.skipped = true;
        true
    }

    /// A message without sequence from the line the book does not follow:
    /// it goes to the shadow book (`true`). Nothing is emitted for it.
    pub(super) fn fed_shadow(
        &mut self,
        snapshot: bool,
        update_id: u64,
        levels: impl IntoIterator<Item = LevelResult>,
    ) -> Result<bool, DecodeError> {
        self.lines.fed_shadow = false;
        self.lines.arrival = Arrival::Other;
        if !self.lines.on_follower() {
            return Ok(false);
        }
        let Some(shadow) = self.lines.shadow.as_mut() else {
            return Ok(true);
        };
        self.lines.fed_shadow = true;
        if !snapshot && !shadow.valid {
            return Ok(true);
        }
        if snapshot {
            shadow.book.clear();
        }
        for level in levels {
            match level {
                Ok((side, level)) => shadow.book.set_open(side, level),
                Err(e) => {
                    shadow.valid = false;
                    shadow.book.clear();
                    self.lines.shadow_lost = true;
                    return Err(e);
                }
            }
        }
        if snapshot {
            shadow.book.snapshot_done(Limit::Whole);
        } else {
            shadow.book.settle();
        }
        shadow.valid = !shadow.book.is_crossed() && shadow.book.is_exact();
        shadow.last = update_id;
        if snapshot && shadow.valid {
            self.lines.shadow_lost = false;
        }
        Ok(true)
    }

    /// The venue's checksum of the shadow book, which the message just
    /// went to: one that differs is dropped until its line's next
    /// snapshot.
    pub(super) fn verify_shadow(
        &mut self,
        expected: i64,
        compute: impl FnOnce(&Book) -> i64,
    ) -> bool {
        let Some(shadow) = self.lines.shadow.as_mut().filter(|s| s.valid) else {
            return false;
        };
        let matched = compute(&shadow.book) == expected;
        if !matched {
            shadow.valid = false;
            shadow.book.clear();
            self.lines.shadow_lost = true;
        }
        matched
    }
}

#[cfg(test)]
mod tests;
