//! An adapter's instruments on two lines (a planned reconnect's
//! replacement, a standby): the trades and quotes both lines bring are
//! emitted once, by the venue's ids; the books' lines are the sync
//! engine's ([`crate::sync::lines`]); the lead of each first copy.

use super::{Instruments, book_verdict};
use crate::event::{Event, InstrumentId, Kind};
use crate::sync::{BookSync, Line};

/// The two lines an instrument's trades and quotes may come on, and what
/// tells a second arrival from a first: the venue's trade and quote ids,
/// which grow on each instrument. What has no id (0) is taken from the
/// leading line alone while both are open.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Carried {
    pub(super) open: [bool; 2],
    /// Both lines have carried the instrument's trades (0) and quotes (1)
    /// at once, and the copies may not be over: an id not above the
    /// highest emitted is then a copy even with one line open (a line that
    /// went down after bringing a trade leaves the other line's copy of it
    /// still to come). With one line open, its first new id ends it: the
    /// copies came before (each line brings its ids in order), and a
    /// venue's ids that start again lower (a restarted book service) are
    /// new, as with one line.
    pub(super) paired: [bool; 2],
    pub(super) leader: Line,
    /// The highest trade id and quote id emitted.
    pub(super) trade: u64,
    pub(super) quote: u64,
    /// The highest trade id before the message being handled, and which
    /// message that is ([`Instruments::message`]).
    pub(super) floor: u64,
    pub(super) floor_of: u64,
    /// The last first arrival of a trade and of a book diff (its id, its
    /// receive stamp, its line), to measure the other line's copy against:
    /// apart, so that a diff between a trade's two copies does not hide
    /// them.
    pub(super) first: [(u64, u64, Line); 2],
}

/// What arrived on a line, for its lead ([`Instruments::arrived`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum What {
    Trade = 0,
    Diff = 1,
}

impl Carried {
    pub(super) fn both(&self) -> bool {
        self.open[0] && self.open[1]
    }
}

/// By how much one line's copy of a message came before the other's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lead {
    /// The line whose copy came first.
    pub winner: Line,
    /// Between the two copies' receive stamps (TSC ticks in tickwire-net).
    pub ticks: u64,
}

impl Instruments {
    /// The next messages came on `line`.
    #[inline]
    pub(crate) fn set_line(&mut self, line: Line) {
        self.from = line;
    }

    /// The line the message being handled came on.
    pub(crate) fn line(&self) -> Line {
        self.from
    }

    /// The latest second arrival's lead, taken.
    pub(crate) fn take_lead(&mut self) -> Option<Lead> {
        self.lead.take()
    }

    /// A first arrival of `key` on instrument `i`, or the other line's
    /// copy of the last one (its lead noted).
    pub(super) fn arrived(&mut self, i: usize, what: What, key: u64, recv_tsc: u64, first: bool) {
        // Without an id (Kraken's books), nothing to pair.
        if key == 0 {
            return;
        }
        let last = &mut self.list[i].lines.first[what as usize];
        if first {
            *last = (key, recv_tsc, self.from);
        } else if last.0 == key && last.2 != self.from {
            self.lead = Some(Lead {
                winner: last.2,
                ticks: recv_tsc.saturating_sub(last.1),
            });
        }
    }

    /// Which of the two lines carrying `instruments` are open now: see
    /// [`BookSync::lines_changed`]. With neither open, `Disconnected`
    /// first (for each of them), as at a disconnect.
    pub(crate) fn lines_changed(
        &mut self,
        instruments: &[usize],
        open: [bool; 2],
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) {
        if !open[0] && !open[1] {
            // Each instrument the connection carried: the event names it.
            for &i in instruments {
                emit(Event {
                    instrument: InstrumentId(i as u32),
                    exchange_ns: 0,
                    recv_tsc,
                    kind: Kind::Disconnected,
                });
            }
        }
        for &i in instruments {
            let Some(instrument) = self.list.get_mut(i) else {
                continue;
            };
            let c = &mut instrument.lines;
            if !open[c.leader as usize] {
                c.leader = c.leader.other();
            }
            c.open = open;
            if open[0] && open[1] {
                c.paired = [true; 2];
            }
            if !open[0] && !open[1] {
                // Nothing left to copy from: a new connection starts over.
                c.paired = [false; 2];
            }
            if let Some(sync) = instrument.sync.as_mut() {
                book_verdict(i, sync, recv_tsc, emit, |sync, on| {
                    sync.lines_changed(open, &mut { on })
                });
            }
        }
    }

    /// Whether `line` could carry every book of `instruments` alone
    /// ([`BookSync::line_ready`]).
    pub(crate) fn line_ready(&self, instruments: &[usize], line: Line) -> bool {
        self.syncs(instruments).all(|sync| sync.line_ready(line))
    }

    /// Whether `line` has lost a book of `instruments` to a fault of its
    /// own ([`BookSync::line_broken`]).
    pub(crate) fn line_broken(&self, instruments: &[usize], line: Line) -> bool {
        self.syncs(instruments).any(|sync| sync.line_broken(line))
    }

    /// The book engines of `instruments` that keep a book.
    fn syncs<'a>(&'a self, instruments: &'a [usize]) -> impl Iterator<Item = &'a BookSync> + 'a {
        instruments
            .iter()
            .filter_map(|&i| self.list.get(i)?.sync.as_ref())
    }

    /// Whether a trade or quote with venue id `id` (0: none) that came on
    /// the current line is new, given the highest id emitted, `seen`:
    /// once both lines have carried the instrument, an id not above the
    /// highest is the other line's copy (whether or not that line is still
    /// open: the line that brought it first may have gone down since);
    /// while both are open, what has no id is taken from the leader alone;
    /// an instrument only ever on one line has everything emitted.
    pub(super) fn fresh(c: &Carried, paired: bool, from: Line, id: u64, seen: u64) -> bool {
        if paired && id != 0 && id <= seen {
            return false;
        }
        if !c.both() {
            return true;
        }
        if id == 0 {
            return from == c.leader;
        }
        id > seen
    }
}
