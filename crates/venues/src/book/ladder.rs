//! One side of a book: its levels in one contiguous array, stored worst
//! first, so that the best levels, where most changes happen, are at the
//! end of the block and an insert or delete near the top moves only the
//! few levels above it. While a message is applied, the block may hold a
//! gap where its last change was, so that a message's changes deep in the
//! side move the levels between them once, not each the whole way to an
//! end of the block.

use core::cmp::Ordering;

use super::{Level, Side};

/// An insert fewer than this many levels from an end of the block, with
/// no gap open, moves those levels one slot: no gap is opened for it (a
/// delete opens one where the level was, free).
const NEAR_END: usize = 8;
/// The most slots a gap is opened with: room for that many inserts in a
/// row before a level moves again.
const GAP: usize = 32;

/// One side: levels sorted worst first in `slots[start..mid]` and then
/// `slots[hi..end]`, with free room on both sides of the block and, while
/// a message is applied, a gap `slots[mid..hi]` where its last change
/// was (empty between messages: [`settle`](Ladder::settle) closes it).
///
/// A change is made next to the gap (free), by moving the gap to it (the
/// levels between them move), or by moving the part of the block between
/// it and an end into the block's free room, whichever of the last two
/// moves fewer levels where that end has room (with none, the gap moves:
/// an unsorted message can move more than it would have to). A venue's levels come sorted within a message (Binance's
/// diffs list bids and asks best first), so the gap walks down a side
/// once a message and the levels between two changes move once, where
/// each change deep in a 1,000-level side used to move hundreds. When that
/// part has no room to move into, the block is first moved to the middle
/// of the array (amortised: the block drifts by one slot per net insert
/// at the top, and a move gives it room for a quarter of the array).
/// Cutting the worst levels at a message's end only moves `start`.
///
/// The gap is also where a search starts (`mid`, set to the top when the
/// gap closes): a message's next level is near its last one.
///
/// A side holds up to twice its `keep` while a message is applied, and is
/// cut back to `keep` when the message is done ([`Ladder::settle`]): OKX
/// and Bybit send the difference between two states of their window, a
/// message apart, so a level pushed below the window by an insert may be
/// pulled back up by a delete later in the same message, and is not sent
/// again. Kraken's guide reads "All price level updates in a book message
/// should be processed before the checksum is calculated ... after each
/// update, the book should be truncated to your subscribed depth as you
/// won't receive "qty": 0 for price levels that fall out of scope" ("Spot
/// WebSocket v2 book checksum"); its window is taken to be kept the same
/// way, at the message's end, as the simulator models it (not checked
/// against live Kraken traffic: none is recorded in the samples).
#[derive(Clone, Debug)]
pub(super) struct Ladder {
    /// `2 * keep` slots, allocated when the book is made.
    slots: Box<[Level]>,
    start: usize,
    /// The gap: `slots[mid..hi]` (empty: `mid == hi`).
    mid: usize,
    hi: usize,
    end: usize,
    /// Levels kept between messages.
    pub(super) keep: usize,
    side: Side,
    /// The worst price up to which every level is known; `None`: the
    /// whole side is known.
    pub(super) horizon: Option<i64>,
}

impl Ladder {
    pub(super) fn new(side: Side, keep: usize) -> Ladder {
        let cap = 2 * keep;
        Ladder {
            slots: vec![Level::default(); cap].into_boxed_slice(),
            start: cap,
            mid: cap,
            hi: cap,
            end: cap,
            keep,
            side,
            horizon: None,
        }
    }

    /// The levels, worst first, in two parts: the first part's, then the
    /// second's (a gap a message left open lies between them; between
    /// messages there is none and the second part holds the levels above
    /// the last search's place).
    #[inline]
    pub(super) fn parts(&self) -> (&[Level], &[Level]) {
        (
            &self.slots[self.start..self.mid],
            &self.slots[self.hi..self.end],
        )
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        (self.mid - self.start) + (self.end - self.hi)
    }

    /// Where the `j`-th worst level is in `slots`.
    #[inline]
    fn at(&self, j: usize) -> usize {
        let below = self.mid - self.start;
        if j < below {
            self.start + j
        } else {
            self.hi + (j - below)
        }
    }

    /// The `i`-th best level.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&Level> {
        let n = self.len();
        (i < n).then(|| &self.slots[self.at(n - 1 - i)])
    }

    /// The worst level kept.
    #[inline]
    pub(super) fn worst(&self) -> Option<&Level> {
        (self.len() > 0).then(|| &self.slots[self.at(0)])
    }

    /// Empties the side (a snapshot refills it best first: room below).
    pub(super) fn clear(&mut self) {
        let cap = self.slots.len();
        (self.start, self.mid, self.hi, self.end) = (cap, cap, cap, cap);
        self.horizon = None;
    }

    /// Where `price` is, or would go, worst first: searched outward from
    /// the gap (where the last change was, or the top), doubling the step
    /// until a level is passed, then by halves.
    #[inline]
    fn position(&self, price: i64) -> Result<usize, usize> {
        match self.side {
            Side::Bid => self.position_on::<true>(price),
            Side::Ask => self.position_on::<false>(price),
        }
    }

    /// [`position`](Self::position) on the bid side (`BID`) or the ask
    /// side: the comparison fixed when compiled, not chosen at each level.
    #[inline]
    fn position_on<const BID: bool>(&self, price: i64) -> Result<usize, usize> {
        let below = &self.slots[self.start..self.mid];
        let above = &self.slots[self.hi..self.end];
        let n = below.len();
        let order = |l: &Level| {
            if BID {
                l.price.cmp(&price)
            } else {
                price.cmp(&l.price)
            }
        };
        match above.first() {
            Some(l) if order(l) != Ordering::Greater => {
                // At or above the gap's upper side: step up from it.
                let (mut a, mut step) = (0, 1);
                while a + step < above.len() && order(&above[a + step]) == Ordering::Less {
                    a += step;
                    step *= 2;
                }
                let b = (a + step + 1).min(above.len());
                match above[a..b].binary_search_by(order) {
                    Ok(i) => Ok(n + a + i),
                    Err(i) => Err(n + a + i),
                }
            }
            _ => {
                // Below the gap's upper side: step down from its lower one.
                let (mut b, mut step) = (n, 1);
                while step <= b && order(&below[b - step]) == Ordering::Greater {
                    b -= step;
                    step *= 2;
                }
                let a = b.saturating_sub(step);
                match below[a..b].binary_search_by(order) {
                    Ok(i) => Ok(a + i),
                    Err(i) => Err(a + i),
                }
            }
        }
    }

    /// Where `price` is, or would go, best first.
    #[inline]
    pub(super) fn find(&self, price: i64) -> Result<usize, usize> {
        let n = self.len();
        match self.position(price) {
            Ok(j) => Ok(n - 1 - j),
            Err(j) => Err(n - j),
        }
    }

    /// [`find`](Self::find), first trying `hint`: a rank `price` had (or
    /// would have had) best first, when it was set or before a message.
    /// Two comparisons with its neighbours prove the hint still right (as
    /// many levels better than it as then); otherwise this is `find`. Any
    /// hint gives `find`'s answer: a wrong one costs the check.
    #[inline]
    pub(super) fn find_near(&self, price: i64, hint: usize) -> Result<usize, usize> {
        let n = self.len();
        if hint <= n {
            // `hint` best first is `n - 1 - hint` worst first: the level
            // there must not be better than `price`, the one above it
            // (`n - hint`) must be.
            let above = hint == 0 || self.side.better(self.slots[self.at(n - hint)].price, price);
            if above {
                match (n - hint).checked_sub(1).map(|j| &self.slots[self.at(j)]) {
                    None => return Err(hint),
                    Some(l) if l.price == price => return Ok(hint),
                    Some(l) if self.side.better(price, l.price) => return Err(hint),
                    Some(_) => {}
                }
            }
        }
        self.find(price)
    }

    /// Whether `price` is within what the side knows.
    #[inline]
    fn known(&self, price: i64) -> bool {
        self.horizon.is_none_or(|h| !self.side.better(h, price))
    }

    /// Sets the level at `price` to `size` (0 removes it). An insert or
    /// delete may leave a gap where it changed the block, until
    /// [`close`](Self::close) or [`settle`](Self::settle); a size changed
    /// in place leaves none. A change beyond the horizon is ignored:
    /// nothing is known there. Returns the rank, best first, the price has
    /// (or would have) now, a hint for [`find_near`](Self::find_near) (for
    /// an ignored change, a guess).
    #[inline]
    pub(super) fn set(&mut self, level: Level) -> usize {
        let n = self.len();
        if !self.known(level.price) {
            return n;
        }
        match self.position(level.price) {
            Ok(j) if level.size == 0 => {
                self.remove(j);
                n - 1 - j
            }
            Ok(j) => {
                let at = self.at(j);
                self.slots[at] = level;
                n - 1 - j
            }
            Err(j) if level.size == 0 => n - j, // deleting an unknown level is normal
            Err(j) if n < self.slots.len() => {
                self.insert(j, level);
                n - j
            }
            Err(j) => {
                // More inserts in one message than the side has room for:
                // the worst level goes, and what lay below it is unknown.
                // (A full side fills the whole array, with no gap.)
                if j > 0 {
                    self.slots.copy_within(1..j, 0);
                    self.slots[j - 1] = level;
                }
                self.horizon = self.worst().map(|l| l.price);
                n - j
            }
        }
    }

    /// Removes the `j`-th worst level.
    #[inline]
    fn remove(&mut self, j: usize) {
        let below = self.mid - self.start;
        let gap = self.hi - self.mid;
        if j + 1 == below {
            self.mid -= 1; // the gap grows down over it
        } else if j == below {
            self.hi += 1; // or up
        } else if gap == 0 {
            // No gap: one opens where the level was.
            self.mid = self.at(j);
            self.hi = self.mid + 1;
        } else if j < below {
            let (outer, to_gap) = (j, below - 1 - j);
            if outer <= to_gap {
                shift(&mut self.slots, self.start..self.start + j, true);
                self.start += 1;
            } else {
                // The levels between it and the gap move up across it.
                let from = self.start + j + 1;
                self.slots.copy_within(from..self.mid, from + gap);
                self.hi -= to_gap;
                self.mid = self.start + j;
            }
        } else {
            let k = j - below; // in the upper part
            let (outer, to_gap) = (self.len() - 1 - j, k);
            if outer <= to_gap {
                let at = self.hi + k;
                shift(&mut self.slots, at + 1..self.end, false);
                self.end -= 1;
            } else {
                self.slots.copy_within(self.hi..self.hi + k, self.mid);
                self.mid += k;
                self.hi += k + 1;
            }
        }
    }

    /// Inserts `level` as the `j`-th worst (there is room).
    #[inline]
    fn insert(&mut self, j: usize, level: Level) {
        let n = self.len();
        let below = self.mid - self.start;
        let gap = self.hi - self.mid;
        if gap > 0 {
            let to_gap = j.abs_diff(below);
            let down = j <= below && self.start > 0 && j < to_gap;
            let up = j >= below && self.end < self.slots.len() && n - j < to_gap;
            if down {
                shift(&mut self.slots, self.start..self.start + j, false);
                self.start -= 1;
                self.slots[self.start + j] = level;
                return;
            }
            if up {
                let at = self.hi + (j - below);
                shift(&mut self.slots, at..self.end, true);
                self.end += 1;
                self.slots[at] = level;
                return;
            }
            // The gap moves to it (free when it is there).
            if j < below {
                let from = self.start + j;
                let count = below - j;
                self.slots.copy_within(from..self.mid, self.hi - count);
                self.hi -= count;
                self.mid = from;
            } else if j > below {
                let count = j - below;
                self.slots.copy_within(self.hi..self.hi + count, self.mid);
                self.mid += count;
                self.hi += count;
            }
            self.slots[self.mid] = level;
            self.mid += 1;
            return;
        }
        // No gap: the part between it and the nearer end moves, by one
        // slot near an end, by up to `GAP` slots (a gap for the inserts
        // after it) further in. Of two as long, one with room.
        let above = n - j;
        let up = if above == j {
            self.end < self.slots.len()
        } else {
            above < j
        };
        if (up && self.end == self.slots.len()) || (!up && self.start == 0) {
            self.recentre(up);
        }
        let at = self.start + j;
        if up {
            let room = self.slots.len() - self.end;
            let by = if above < NEAR_END { 1 } else { room.min(GAP) };
            if by == 1 {
                shift(&mut self.slots, at..self.end, true);
            } else {
                self.slots.copy_within(at..self.end, at + by);
            }
            self.end += by;
            self.slots[at] = level;
            (self.mid, self.hi) = (at + 1, at + by);
        } else {
            let room = self.start;
            let by = if j < NEAR_END { 1 } else { room.min(GAP) };
            if by == 1 {
                shift(&mut self.slots, self.start..at, false);
            } else {
                self.slots.copy_within(self.start..at, self.start - by);
            }
            self.start -= by;
            self.slots[at - by] = level;
            (self.mid, self.hi) = (at - by + 1, at);
        }
    }

    /// Moves the block to the middle of the array: room on both sides
    /// (at least one slot on the side that moves `up` or not). The gap
    /// must be closed.
    #[cold]
    fn recentre(&mut self, up: bool) {
        debug_assert_eq!(self.mid, self.hi);
        let len = self.len();
        let start = (self.slots.len() - len + usize::from(!up)) / 2;
        self.slots.copy_within(self.start..self.end, start);
        (self.start, self.end) = (start, start + len);
        (self.mid, self.hi) = (self.end, self.end);
    }

    /// Closes the gap, moving the shorter part of the block across it, and
    /// starts the next search from the top.
    #[inline]
    pub(super) fn close(&mut self) {
        let gap = self.hi - self.mid;
        if gap > 0 {
            if self.mid - self.start <= self.end - self.hi {
                self.slots
                    .copy_within(self.start..self.mid, self.start + gap);
                self.start += gap;
            } else {
                self.slots.copy_within(self.hi..self.end, self.mid);
                self.end -= gap;
            }
        }
        (self.mid, self.hi) = (self.end, self.end);
    }

    /// The end of a message: the gap closed and the side back to `keep`
    /// levels. Unless the venue keeps exactly what the side keeps complete
    /// (`tracks` false), the side then knows only down to its new worst
    /// level.
    pub(super) fn settle(&mut self, tracks: bool) {
        self.close();
        if self.len() > self.keep {
            self.start = self.end - self.keep;
            if tracks || self.horizon.is_some() {
                self.horizon = self.worst().map(|l| l.price);
            }
        }
    }
}

/// Moves `slots[range]` one slot `up` (or down): the few levels near
/// the top one by one, more with `copy_within` (a `memmove` call).
#[inline]
fn shift(slots: &mut [Level], range: core::ops::Range<usize>, up: bool) {
    if range.len() > 4 {
        let to = if up { range.start + 1 } else { range.start - 1 };
        slots.copy_within(range, to);
    } else if up {
        for k in range.rev() {
            slots[k + 1] = slots[k];
        }
    } else {
        for k in range {
            slots[k - 1] = slots[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::*;

    /// The ladder as it was first written: a `VecDeque`, best first.
    struct Reference {
        levels: VecDeque<Level>,
        keep: usize,
        side: Side,
        horizon: Option<i64>,
    }

    impl Reference {
        fn find(&self, price: i64) -> Result<usize, usize> {
            match self.side {
                Side::Bid => self.levels.binary_search_by(|l| price.cmp(&l.price)),
                Side::Ask => self.levels.binary_search_by(|l| l.price.cmp(&price)),
            }
        }

        fn set(&mut self, level: Level) {
            if self
                .horizon
                .is_some_and(|h| self.side.better(h, level.price))
            {
                return;
            }
            match self.find(level.price) {
                Ok(i) if level.size == 0 => {
                    self.levels.remove(i);
                }
                Ok(i) => self.levels[i] = level,
                Err(_) if level.size == 0 => {}
                Err(i) if self.levels.len() < 2 * self.keep => self.levels.insert(i, level),
                Err(i) => {
                    if i < self.levels.len() {
                        self.levels.pop_back();
                        self.levels.insert(i, level);
                    }
                    self.horizon = self.levels.back().map(|l| l.price);
                }
            }
        }

        fn settle(&mut self, tracks: bool) {
            if self.levels.len() > self.keep {
                self.levels.truncate(self.keep);
                if tracks || self.horizon.is_some() {
                    self.horizon = self.levels.back().map(|l| l.price);
                }
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Set(i64, i64),
        Settle(bool),
        Close,
        Clear,
        Horizon(Option<i64>),
    }

    /// Operations on prices `0..prices`.
    fn op(prices: i64) -> impl Strategy<Value = Op> {
        prop_oneof![
            12 => (0..prices, 0i64..4).prop_map(|(p, s)| Op::Set(p, s)),
            // Runs of inserts at the top and bottom: the block drifts.
            2 => (0..prices).prop_map(|p| Op::Set(p, 1)),
            2 => any::<bool>().prop_map(Op::Settle),
            1 => Just(Op::Close),
            1 => Just(Op::Clear),
            1 => proptest::option::of(0..prices).prop_map(Op::Horizon),
        ]
    }

    /// A message's levels as a venue sends them: sorted best first, the
    /// gap walking down the side (Binance's diffs), then settled.
    fn sorted_message(prices: i64) -> impl Strategy<Value = Vec<Op>> {
        (
            proptest::collection::btree_map(0..prices, 0i64..3, 0..40),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(levels, rev, tracks)| {
                let mut ops: Vec<Op> = levels.into_iter().map(|(p, s)| Op::Set(p, s)).collect();
                if rev {
                    ops.reverse();
                }
                ops.push(Op::Settle(tracks));
                ops
            })
    }

    /// Runs `ops` on a ladder and on the `VecDeque` it replaces, checking
    /// after every operation, through any gap left open: the same levels
    /// best first, the same horizon, the same answers for every price.
    fn against_the_vecdeque(
        keep: usize,
        bid: bool,
        prices: i64,
        ops: Vec<Op>,
    ) -> Result<(), TestCaseError> {
        let side = if bid { Side::Bid } else { Side::Ask };
        let mut ladder = Ladder::new(side, keep);
        let mut reference = Reference {
            levels: VecDeque::new(),
            keep,
            side,
            horizon: None,
        };
        for op in ops {
            match op {
                Op::Set(p, s) => {
                    let known = ladder.known(p);
                    let rank = ladder.set(Level::new(p, s));
                    reference.set(Level::new(p, s));
                    // The rank it returns is where the price is, or
                    // would go, now (a change beyond the horizon is
                    // ignored, its rank only a guess).
                    let (Ok(want) | Err(want)) = reference.find(p);
                    if known {
                        prop_assert_eq!(rank, want);
                    }
                }
                Op::Settle(tracks) => {
                    ladder.settle(tracks);
                    reference.settle(tracks);
                    // Closed: the two parts, read as one, are the levels.
                    prop_assert_eq!(ladder.mid, ladder.hi);
                    let (low, high) = ladder.parts();
                    let flat: Vec<Level> =
                        high.iter().rev().chain(low.iter().rev()).copied().collect();
                    prop_assert_eq!(&flat, &reference.levels.iter().copied().collect::<Vec<_>>());
                }
                Op::Close => {
                    ladder.close();
                    prop_assert_eq!(ladder.mid, ladder.hi);
                }
                Op::Clear => {
                    ladder.clear();
                    reference.levels.clear();
                    reference.horizon = None;
                }
                Op::Horizon(h) => {
                    ladder.horizon = h;
                    reference.horizon = h;
                }
            }
            let got: Vec<Level> = (0..ladder.len())
                .filter_map(|i| ladder.get(i))
                .copied()
                .collect();
            let want: Vec<Level> = reference.levels.iter().copied().collect();
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(ladder.horizon, reference.horizon);
            prop_assert_eq!(ladder.len(), want.len());
            prop_assert!(ladder.len() <= 2 * keep);
            prop_assert_eq!(ladder.get(want.len()), None);
            prop_assert_eq!(ladder.worst(), want.last());
            for p in 0..prices {
                prop_assert_eq!(ladder.find(p), reference.find(p));
                // Any hint, right or stale, gives the same answer.
                for hint in [
                    0,
                    1,
                    2,
                    want.len() / 2,
                    want.len(),
                    want.len() + 1,
                    usize::MAX,
                ] {
                    prop_assert_eq!(
                        ladder.find_near(p, hint),
                        reference.find(p),
                        "{} {}",
                        p,
                        hint
                    );
                }
            }
        }
        Ok(())
    }

    proptest! {
        /// Deep sides (past the best levels searched first): every price,
        /// on the levels, between and around them, is found where a plain
        /// binary search finds it.
        #[test]
        fn deep_sides_find_every_price(
            bid in any::<bool>(),
            gaps in proptest::collection::vec(prop_oneof![8 => 1i64..3, 1 => 3i64..400], 16..300),
        ) {
            let side = if bid { Side::Bid } else { Side::Ask };
            let mut ladder = Ladder::new(side, gaps.len());
            let mut prices = Vec::new();
            let mut p = 1_000;
            for g in &gaps {
                p += g;
                prices.push(p);
                ladder.set(Level::new(p, 1));
            }
            // Best first.
            if side == Side::Bid {
                prices.reverse();
            }
            let last = prices.iter().copied().max().unwrap_or(0) + 3;
            for q in 995..last {
                let want = match side {
                    Side::Bid => prices.binary_search_by(|&x| q.cmp(&x)),
                    Side::Ask => prices.binary_search_by(|&x| x.cmp(&q)),
                };
                prop_assert_eq!(ladder.find(q), want, "{}", q);
            }
        }

        /// Against the `VecDeque` it replaces, after every operation.
        #[test]
        fn matches_the_vecdeque_ladder(
            keep in 0usize..12,
            bid in any::<bool>(),
            ops in proptest::collection::vec(op(80), 0..300),
        ) {
            against_the_vecdeque(keep, bid, 80, ops)?;
        }

        /// Sides deep enough for gaps to open (a change `NEAR_END` or more
        /// levels from both ends), with whole sorted messages among the
        /// single changes.
        #[test]
        fn matches_the_vecdeque_ladder_with_gaps(
            keep in 16usize..64,
            bid in any::<bool>(),
            ops in proptest::collection::vec(
                prop_oneof![
                    3 => op(200).prop_map(|o| vec![o]),
                    1 => sorted_message(200),
                ],
                0..60,
            ),
        ) {
            against_the_vecdeque(keep, bid, 200, ops.into_iter().flatten().collect())?;
        }
    }
}
