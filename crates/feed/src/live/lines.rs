//! A connection plan's lines: the one or two connections that carry its
//! subscriptions, and when to open and close them.
//!
//! - **Planned reconnects, make-before-break.** A venue that ends every
//!   connection at a fixed age (Binance: "A single connection to
//!   stream.binance.com is only valid for 24 hours; expect to be
//!   disconnected at the 24 hour mark", Spot WebSocket Streams, General
//!   WSS information; the same for USD-M and COIN-M futures) would cost a
//!   gap and a round of snapshots a day. Before that age the plan opens a
//!   second line with the same subscriptions; the adapter drops what both
//!   lines bring twice (`tickwire_venues::sync::lines`); once the new line
//!   carries every book of the plan in step (or at the deadline) the old
//!   line is closed, and its books follow the new one with no gap.
//! - **A warm standby line.** With `standby`, both lines stay open for
//!   good, to the same endpoint or another; the first copy of each message
//!   wins, and a fault on one line costs no gap and no snapshot. A planned
//!   reconnect then closes one line while the other is in step, and opens
//!   it again at once.

use std::time::{Duration, Instant};

/// One of a plan's two line slots.
pub(crate) use tickwire_venues::Line;

/// How long before a connection's end of life it is replaced: a tenth of
/// its life, at most 5 minutes (Binance's 24 h: at 23 h 55 min).
pub(crate) fn margin(lifetime: Duration) -> Duration {
    (lifetime / 10).min(Duration::from_secs(300))
}

/// How long the replacement may take to come in step before that: a
/// fifth of the life, at most a minute.
pub(crate) fn warm_up(lifetime: Duration) -> Duration {
    (lifetime / 5).min(Duration::from_secs(60))
}

/// After a replacement line failed, the next is opened no sooner than
/// this.
const RETRY: Duration = Duration::from_secs(1);

/// What a plan's lines want done now (see [`PlanLines::due`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// Open this line (a replacement, or a standby line).
    Open(Line),
    /// Close this line on purpose: another carries its books.
    Retire(Line),
}

/// A plan's lines, each with its connection's id (`tickwire_net::ConnId`).
#[derive(Debug)]
pub(crate) struct PlanLines<Id> {
    /// Each line's connection, while it has one.
    pub(crate) ids: [Option<Id>; 2],
    /// Which lines are open (upgraded, subscriptions sent).
    pub(crate) open: [bool; 2],
    /// The line whose connection carries recovery (resubscriptions).
    pub(crate) leader: Line,
    /// When each line last opened.
    opened: [Option<Instant>; 2],
    /// Lines being closed on purpose.
    pub(crate) retiring: [bool; 2],
    /// Both lines, for good.
    standby: bool,
    /// The venue's connection lifetime, if it has one.
    lifetime: Option<Duration>,
    /// No replacement is opened before this (one failed).
    retry_at: Option<Instant>,
    /// A replacement of the leader was asked for ([`replace`](Self::replace)):
    /// the old line closes once the new one is ready, or at this deadline.
    replace_by: Option<Instant>,
}

/// How long an asked-for replacement may take to come in step before the
/// old line is closed anyway.
pub(crate) const REPLACE_WARM_UP: Duration = Duration::from_secs(10);

impl<Id: Copy + PartialEq> PlanLines<Id> {
    /// A plan whose line 0 is `id` (and line 1 `standby`, if one).
    pub(crate) fn new(id: Id, standby: Option<Id>, lifetime: Option<Duration>) -> Self {
        PlanLines {
            ids: [Some(id), standby],
            open: [false; 2],
            leader: Line::Primary,
            opened: [None; 2],
            retiring: [false; 2],
            standby: standby.is_some(),
            lifetime,
            retry_at: None,
            replace_by: None,
        }
    }

    /// The line `id` is, if it is one of this plan's.
    pub(crate) fn line_of(&self, id: Id) -> Option<Line> {
        self.ids
            .iter()
            .position(|&i| i == Some(id))
            .map(|l| Line::BOTH[l])
    }

    /// The leader's connection (it carries the resubscriptions).
    pub(crate) fn leader_id(&self) -> Option<Id> {
        self.ids[self.leader.index()]
    }

    /// Both lines are open: messages come twice.
    pub(crate) fn both(&self) -> bool {
        self.open[0] && self.open[1]
    }

    /// Line `line` opened at `now`; the leader, if the other is not open.
    pub(crate) fn opened(&mut self, line: Line, now: Instant) {
        let l = line.index();
        self.open[l] = true;
        self.opened[l] = Some(now);
        if !self.open[1 - l] {
            self.leader = line;
        }
    }

    /// Line `line` closed. Returns whether the driver should reconnect it:
    /// not one closed on purpose (a standby line is opened again by
    /// [`due`](Self::due)), nor, without standby, one whose books the
    /// other line carries now.
    pub(crate) fn closed(&mut self, line: Line, now: Instant) -> bool {
        let l = line.index();
        self.open[l] = false;
        self.opened[l] = None;
        if self.open[1 - l] {
            if self.leader == line {
                // A replacement asked for is done: the other line leads.
                self.replace_by = None;
            }
            self.leader = line.other();
        }
        if std::mem::take(&mut self.retiring[l]) {
            self.ids[l] = None;
            return false;
        }
        if self.standby || !self.open[1 - l] {
            return true;
        }
        // Without standby, the other line carries the plan now: this one
        // was the old line, or a replacement that failed (the next one
        // after a pause).
        self.retry_at = Some(now + RETRY);
        self.ids[l] = None;
        false
    }

    /// The connection opened for line `line`.
    pub(crate) fn set_id(&mut self, line: Line, id: Id) {
        self.ids[line.index()] = Some(id);
    }

    /// What is due at `now`, given whether each line could carry the
    /// plan's books alone (`ready`), and whether the line the books do not
    /// follow has lost one to a fault of its own (`broken`: it is closed,
    /// and opened again for a snapshot of its own).
    pub(crate) fn due(
        &self,
        now: Instant,
        ready: impl Fn(Line) -> bool,
        broken: impl Fn(Line) -> bool,
    ) -> Option<Due> {
        let follower = self.leader.other();
        if self.both() && !self.retiring.iter().any(|&r| r) && broken(follower) {
            return Some(Due::Retire(follower));
        }
        if self.standby {
            // A standby line closed on purpose is opened again at once.
            if let Some(l) = (0..2).find(|&l| self.ids[l].is_none()) {
                return Some(Due::Open(Line::BOTH[l]));
            }
        }
        if self.retiring.iter().any(|&r| r) {
            return None;
        }
        if let Some(by) = self.replace_by {
            let (l, other) = (self.leader.index(), self.leader.other().index());
            if self.ids[other].is_none() {
                if self.retry_at.is_none_or(|t| now >= t) {
                    return Some(Due::Open(Line::BOTH[other]));
                }
            } else if self.open[other] && (ready(Line::BOTH[other]) || now >= by) {
                return Some(Due::Retire(Line::BOTH[l]));
            }
        }
        let lifetime = self.lifetime?;
        let (margin, warm) = (margin(lifetime), warm_up(lifetime));
        for l in 0..2 {
            let Some(at) = self.opened[l] else { continue };
            let deadline = at + lifetime.saturating_sub(margin);
            let start = deadline.checked_sub(warm).unwrap_or(at);
            if now < start {
                continue;
            }
            let other = 1 - l;
            if self.standby {
                // The other line carries the books while this one is
                // replaced: only once it is in step.
                if self.open[other] && ready(Line::BOTH[other]) {
                    return Some(Due::Retire(Line::BOTH[l]));
                }
                continue;
            }
            if self.ids[other].is_none() {
                if self.retry_at.is_some_and(|t| now < t) {
                    continue;
                }
                return Some(Due::Open(Line::BOTH[other]));
            }
            if self.open[other] && (ready(Line::BOTH[other]) || now >= deadline) {
                return Some(Due::Retire(Line::BOTH[l]));
            }
        }
        None
    }

    /// Line `line` is being closed on purpose.
    pub(crate) fn retire(&mut self, line: Line) {
        self.retiring[line.index()] = true;
    }

    /// Asks, at `now`, for the leader's connection to be replaced
    /// (make-before-break): the other line opens (or, standing by, is open
    /// already), and the leader closes once the other carries the plan's
    /// books, or [`REPLACE_WARM_UP`] after `now`. A replacement already
    /// asked for keeps its deadline.
    pub(crate) fn replace(&mut self, now: Instant) {
        if self.replace_by.is_none() {
            self.replace_by = Some(now + REPLACE_WARM_UP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> u32 {
        n
    }

    #[test]
    fn a_replacement_opens_before_the_deadline_and_the_old_line_retires_once_it_is_ready() {
        let life = Duration::from_secs(20);
        let t0 = Instant::now();
        let mut p = PlanLines::new(id(0), None, Some(life));
        p.opened(Line::Primary, t0);
        // Deadline 18 s, replacement from 14 s.
        assert_eq!(
            p.due(t0 + Duration::from_secs(13), |_| true, |_| false),
            None
        );
        assert_eq!(
            p.due(t0 + Duration::from_secs(14), |_| true, |_| false),
            Some(Due::Open(Line::Standby))
        );
        p.set_id(Line::Standby, id(1));
        // Opened, not yet upgraded: nothing.
        assert_eq!(
            p.due(t0 + Duration::from_secs(15), |_| true, |_| false),
            None
        );
        p.opened(Line::Standby, t0 + Duration::from_secs(15));
        assert!(p.both());
        assert_eq!(p.leader, Line::Primary);
        assert_eq!(
            p.due(t0 + Duration::from_secs(15), |_| false, |_| false),
            None
        );
        assert_eq!(
            p.due(
                t0 + Duration::from_secs(15),
                |l| l == Line::Standby,
                |_| false
            ),
            Some(Due::Retire(Line::Primary))
        );
        // Not ready by the deadline: retired anyway.
        assert_eq!(
            p.due(t0 + Duration::from_secs(18), |_| false, |_| false),
            Some(Due::Retire(Line::Primary))
        );
        p.retire(Line::Primary);
        assert_eq!(
            p.due(t0 + Duration::from_secs(18), |_| true, |_| false),
            None
        );
        assert!(
            !p.closed(Line::Primary, t0 + Duration::from_secs(18)),
            "not reconnected"
        );
        assert_eq!(p.leader, Line::Standby);
        assert_eq!(p.leader_id(), Some(id(1)));
        assert_eq!(p.ids[0], None);
    }

    #[test]
    fn without_standby_a_lost_line_is_reconnected_only_when_alone() {
        let t0 = Instant::now();
        let mut p = PlanLines::new(id(0), None, Some(Duration::from_secs(20)));
        p.opened(Line::Primary, t0);
        assert!(
            p.closed(Line::Primary, t0),
            "alone: the driver reconnects it"
        );
        p.opened(Line::Primary, t0);
        p.set_id(Line::Standby, id(1));
        p.opened(Line::Standby, t0);
        // The replacement fails: not reconnected; another after a pause.
        assert!(!p.closed(Line::Standby, t0 + Duration::from_secs(14)));
        assert_eq!(
            p.due(t0 + Duration::from_millis(14_500), |_| true, |_| false),
            None
        );
        assert_eq!(
            p.due(t0 + Duration::from_secs(15), |_| true, |_| false),
            Some(Due::Open(Line::Standby))
        );
    }

    #[test]
    fn standby_lines_stay_and_take_turns_to_be_replaced() {
        let life = Duration::from_secs(20);
        let t0 = Instant::now();
        let mut p = PlanLines::new(id(0), Some(id(1)), Some(life));
        p.opened(Line::Primary, t0);
        p.opened(Line::Standby, t0);
        assert!(p.closed(Line::Standby, t0), "a standby line is reconnected");
        p.opened(Line::Standby, t0);
        let at = t0 + Duration::from_secs(14);
        assert_eq!(
            p.due(at, |_| true, |_| false),
            Some(Due::Retire(Line::Primary))
        );
        // Line 1 not in step: line 0 waits.
        assert_eq!(
            p.due(at, |l| l == Line::Primary, |_| false),
            Some(Due::Retire(Line::Standby))
        );
        p.retire(Line::Primary);
        assert!(!p.closed(Line::Primary, at));
        assert_eq!(
            p.due(at, |_| true, |_| false),
            Some(Due::Open(Line::Primary))
        );
        p.set_id(Line::Primary, id(2));
        // Line 0 back but not in step: line 1 waits for it.
        p.opened(Line::Primary, at);
        assert_eq!(p.due(at, |l| l == Line::Standby, |_| false), None);
        assert_eq!(
            p.due(at, |_| true, |_| false),
            Some(Due::Retire(Line::Standby))
        );
    }

    #[test]
    fn a_replacement_asked_for_is_made_before_the_old_line_breaks() {
        let t0 = Instant::now();
        // Without standby or lifetime: a second line opens, and the leader
        // closes once it is ready (or at the deadline).
        let mut p = PlanLines::new(id(0), None, None);
        p.opened(Line::Primary, t0);
        assert_eq!(p.due(t0, |_| true, |_| false), None);
        p.replace(t0);
        assert_eq!(
            p.due(t0, |_| true, |_| false),
            Some(Due::Open(Line::Standby))
        );
        p.set_id(Line::Standby, id(1));
        assert_eq!(p.due(t0, |_| true, |_| false), None, "not open yet");
        p.opened(Line::Standby, t0);
        assert_eq!(
            p.due(t0, |l| l == Line::Primary, |_| false),
            None,
            "not ready"
        );
        assert_eq!(
            p.due(t0, |_| true, |_| false),
            Some(Due::Retire(Line::Primary))
        );
        let late = t0 + REPLACE_WARM_UP;
        assert_eq!(
            p.due(late, |l| l == Line::Primary, |_| false),
            Some(Due::Retire(Line::Primary))
        );
        p.retire(Line::Primary);
        assert!(!p.closed(Line::Primary, late), "not reconnected");
        assert_eq!(p.leader, Line::Standby);
        assert_eq!(p.due(late, |_| true, |_| false), None, "done");
        // The replacement fails before it is ready: another after a pause.
        p.replace(late);
        assert_eq!(
            p.due(late, |_| true, |_| false),
            Some(Due::Open(Line::Primary))
        );
        p.set_id(Line::Primary, id(2));
        p.opened(Line::Primary, late);
        assert!(!p.closed(Line::Primary, late));
        assert_eq!(p.due(late, |_| true, |_| false), None);
        let again = late + RETRY;
        assert_eq!(
            p.due(again, |_| true, |_| false),
            Some(Due::Open(Line::Primary))
        );
        // The old line breaks first: the new one leads, and that is the
        // replacement.
        p.set_id(Line::Primary, id(3));
        p.opened(Line::Primary, again);
        assert!(!p.closed(Line::Standby, again));
        assert_eq!(p.leader, Line::Primary);
        assert_eq!(p.due(again, |_| true, |_| false), None);
        // Retiring the other line (a broken follower, a second notice)
        // keeps the replacement asked for: it is opened again.
        p.replace(again);
        p.set_id(Line::Standby, id(4));
        p.opened(Line::Standby, again);
        p.retire(Line::Standby);
        assert!(!p.closed(Line::Standby, again));
        let later = again + RETRY;
        assert_eq!(
            p.due(later, |_| true, |_| false),
            Some(Due::Open(Line::Standby))
        );
        // With standby: the leader closes, and the standby logic opens it
        // again at once.
        let mut p = PlanLines::new(id(0), Some(id(1)), None);
        p.opened(Line::Primary, t0);
        p.opened(Line::Standby, t0);
        p.replace(t0);
        assert_eq!(
            p.due(t0, |_| true, |_| false),
            Some(Due::Retire(Line::Primary))
        );
        p.retire(Line::Primary);
        assert!(!p.closed(Line::Primary, t0));
        assert_eq!(
            p.due(t0, |_| true, |_| false),
            Some(Due::Open(Line::Primary))
        );
    }

    #[test]
    fn a_line_that_lost_a_shadow_book_is_opened_again() {
        let t0 = Instant::now();
        let mut p = PlanLines::new(id(0), Some(id(1)), None);
        p.opened(Line::Primary, t0);
        p.opened(Line::Standby, t0);
        assert_eq!(p.due(t0, |_| true, |_| false), None);
        assert_eq!(
            p.due(t0, |_| true, |l| l == Line::Standby),
            Some(Due::Retire(Line::Standby))
        );
        p.retire(Line::Standby);
        assert!(!p.closed(Line::Standby, t0));
        assert_eq!(
            p.due(t0, |_| true, |_| false),
            Some(Due::Open(Line::Standby))
        );
    }
}
