//! One side of a book: its levels in one contiguous array, stored worst
//! first, so that the best levels, where most changes happen, are at the
//! end of the block and an insert or delete near the top moves only the
//! few levels above it.

use super::{Level, Side};

/// How many of the best levels a search looks at first.
const NEAR: usize = 8;
/// One side: levels sorted worst first in `slots[start..end]`, with free
/// room on both sides of the block. An insert or delete moves whichever
/// part of the block is shorter (the part above it, near the top); when
/// that part has no room to move into, the block is first moved to the
/// middle of the array (amortised: the block drifts by one slot per net
/// insert at the top, and a move gives it room for a quarter of the
/// array). Cutting the worst levels at a message's end only moves `start`.
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
            end: cap,
            keep,
            side,
            horizon: None,
        }
    }

    /// The levels, worst first.
    #[inline]
    pub(super) fn worst_first(&self) -> &[Level] {
        &self.slots[self.start..self.end]
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }

    /// The `i`-th best level.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&Level> {
        self.worst_first().iter().nth_back(i)
    }

    /// The worst level kept.
    #[inline]
    pub(super) fn worst(&self) -> Option<&Level> {
        self.worst_first().first()
    }

    /// Empties the side (a snapshot refills it best first: room below).
    pub(super) fn clear(&mut self) {
        (self.start, self.end) = (self.slots.len(), self.slots.len());
        self.horizon = None;
    }

    /// Where `price` is, or would go, worst first: among the best
    /// [`NEAR`] levels first, where most changes are (one comparison more
    /// for the others).
    #[inline]
    fn position(&self, price: i64) -> Result<usize, usize> {
        let levels = self.worst_first();
        let search = |levels: &[Level]| match self.side {
            Side::Bid => levels.binary_search_by(|l| l.price.cmp(&price)),
            Side::Ask => levels.binary_search_by(|l| price.cmp(&l.price)),
        };
        let near = levels.len().saturating_sub(NEAR);
        match levels.get(near) {
            Some(l) if !self.side.better(l.price, price) => match search(&levels[near..]) {
                Ok(j) => Ok(near + j),
                Err(j) => Err(near + j),
            },
            _ => search(&levels[..near]),
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

    /// [`find`](Self::find), first trying `hint`: the rank `price` had
    /// (or would have had) best first when it was set. Two comparisons
    /// with its neighbours prove the hint still right (nothing better was
    /// inserted or removed since); otherwise this is `find`.
    #[inline]
    pub(super) fn find_near(&self, price: i64, hint: usize) -> Result<usize, usize> {
        let levels = self.worst_first();
        let n = levels.len();
        if hint <= n {
            // `hint` best first is `n - 1 - hint` worst first: the level
            // there must not be better than `price`, the one above it
            // (`n - hint`) must be.
            let above = hint == 0 || self.side.better(levels[n - hint].price, price);
            if above {
                match (n - hint).checked_sub(1).map(|i| &levels[i]) {
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

    /// Sets the level at `price` to `size` (0 removes it). A change beyond
    /// the horizon is ignored: nothing is known there. Returns the rank,
    /// best first, the price has (or would have) now, a hint for
    /// [`find_near`](Self::find_near) (for an ignored change, a guess).
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
                self.slots[self.start + j] = level;
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
                // (A full side fills the whole array.)
                if j > 0 {
                    self.slots.copy_within(1..j, 0);
                    self.slots[j - 1] = level;
                }
                self.horizon = self.worst().map(|l| l.price);
                n - j
            }
        }
    }

    /// Removes the `j`-th worst level, moving the shorter part.
    #[inline]
    fn remove(&mut self, j: usize) {
        let at = self.start + j;
        if self.end - at - 1 <= j {
            shift(&mut self.slots, at + 1..self.end, false);
            self.end -= 1;
        } else {
            shift(&mut self.slots, self.start..at, true);
            self.start += 1;
        }
    }

    /// Inserts `level` before the `j`-th worst level (there is room).
    #[inline]
    fn insert(&mut self, j: usize, level: Level) {
        let above = self.len() - j;
        // The shorter part moves; of two as long, one with room.
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
            shift(&mut self.slots, at..self.end, true);
            self.end += 1;
            self.slots[at] = level;
        } else {
            shift(&mut self.slots, self.start..at, false);
            self.start -= 1;
            self.slots[at - 1] = level;
        }
    }

    /// Moves the block to the middle of the array: room on both sides
    /// (at least one slot on the side that moves `up` or not).
    #[cold]
    fn recentre(&mut self, up: bool) {
        let len = self.len();
        let start = (self.slots.len() - len + usize::from(!up)) / 2;
        self.slots.copy_within(self.start..self.end, start);
        (self.start, self.end) = (start, start + len);
    }

    /// The end of a message: back to `keep` levels. Unless the venue keeps
    /// exactly what the side keeps complete (`tracks` false), the side then
    /// knows only down to its new worst level.
    pub(super) fn settle(&mut self, tracks: bool) {
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
        Clear,
        Horizon(Option<i64>),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            12 => (0i64..80, 0i64..4).prop_map(|(p, s)| Op::Set(p, s)),
            // Runs of inserts at the top and bottom: the block drifts.
            2 => (0i64..80).prop_map(|p| Op::Set(p, 1)),
            2 => any::<bool>().prop_map(Op::Settle),
            1 => Just(Op::Clear),
            1 => proptest::option::of(0i64..80).prop_map(Op::Horizon),
        ]
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

        /// Against the `VecDeque` it replaces, after every operation: the
        /// same levels best first, the same horizon, the same answers.
        #[test]
        fn matches_the_vecdeque_ladder(
            keep in 0usize..12,
            bid in any::<bool>(),
            ops in proptest::collection::vec(op(), 0..300),
        ) {
            let side = if bid { Side::Bid } else { Side::Ask };
            let mut ladder = Ladder::new(side, keep);
            let mut reference = Reference { levels: VecDeque::new(), keep, side, horizon: None };
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
                let got: Vec<Level> = ladder.worst_first().iter().rev().copied().collect();
                let want: Vec<Level> = reference.levels.iter().copied().collect();
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(ladder.horizon, reference.horizon);
                prop_assert_eq!(ladder.len(), want.len());
                prop_assert!(ladder.len() <= 2 * keep);
                for (i, l) in want.iter().enumerate() {
                    prop_assert_eq!(ladder.get(i), Some(l));
                }
                prop_assert_eq!(ladder.get(want.len()), None);
                prop_assert_eq!(ladder.worst(), want.last());
                for p in 0..80 {
                    prop_assert_eq!(ladder.find(p), reference.find(p));
                    // Any hint, right or stale, gives the same answer.
                    for hint in [0, 1, 2, want.len() / 2, want.len(), want.len() + 1, usize::MAX] {
                        prop_assert_eq!(ladder.find_near(p, hint), reference.find(p), "{} {}", p, hint);
                    }
                }
            }
        }
    }
}
