//! A price-level order book with a fixed number of levels per side,
//! allocated when the instrument is subscribed.

use core::cmp::Ordering;
use std::collections::VecDeque;

/// A side of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Buy orders: best is the highest price.
    Bid,
    /// Sell orders: best is the lowest price.
    Ask,
}

/// One price level: price and size, as integers at the instrument's scales,
/// and how many fractional digits each had on the wire (so that checksums
/// over the venue's own strings can be computed from the book).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Level {
    /// Price, in `10^-price_scale` units.
    pub price: i64,
    /// Size, in `10^-size_scale` units.
    pub size: i64,
    /// Fractional digits of the price as sent (0: no decimal point).
    pub price_digits: u8,
    /// Fractional digits of the size as sent.
    pub size_digits: u8,
}

impl Level {
    /// A level with no wire digits recorded.
    pub fn new(price: i64, size: i64) -> Level {
        Level {
            price,
            size,
            ..Level::default()
        }
    }
}

/// One side: levels sorted best first, at most `capacity` of them, in a
/// ring buffer so that a change near the top moves only the levels above
/// it (`VecDeque` shifts the shorter side), not the whole book below.
#[derive(Clone, Debug)]
struct Ladder {
    levels: VecDeque<Level>,
    capacity: usize,
    side: Side,
}

impl Ladder {
    fn new(side: Side, capacity: usize) -> Ladder {
        Ladder {
            levels: VecDeque::with_capacity(capacity),
            capacity,
            side,
        }
    }

    /// Where `price` is, or would go, in best-first order.
    #[inline]
    fn find(&self, price: i64) -> Result<usize, usize> {
        match self.side {
            Side::Bid => self.levels.binary_search_by(|l| price.cmp(&l.price)),
            Side::Ask => self.levels.binary_search_by(|l| l.price.cmp(&price)),
        }
    }

    /// Sets the level at `price` to `size` (0 removes it). Returns false if
    /// the level fell outside the kept depth (below the worst kept level of
    /// a full ladder), so the book no longer knows everything below it.
    #[inline]
    fn set(&mut self, level: Level) -> bool {
        match self.find(level.price) {
            Ok(i) if level.size == 0 => {
                self.levels.remove(i);
                true
            }
            Ok(i) => {
                self.levels[i] = level;
                true
            }
            Err(_) if level.size == 0 => true, // deleting an unknown level is normal
            Err(i) if self.levels.len() < self.capacity => {
                self.levels.insert(i, level);
                true
            }
            Err(i) if i < self.capacity => {
                self.levels.pop_back();
                self.levels.insert(i, level);
                false
            }
            Err(_) => false,
        }
    }
}

/// An order book with at most `depth` levels a side. Never allocates after
/// [`Book::new`].
#[derive(Clone, Debug)]
pub struct Book {
    bids: Ladder,
    asks: Ladder,
    /// Whether levels were ever pushed out or ignored for lack of depth.
    truncated: bool,
}

impl Book {
    /// An empty book keeping up to `depth` levels a side.
    pub fn new(depth: usize) -> Book {
        Book {
            bids: Ladder::new(Side::Bid, depth),
            asks: Ladder::new(Side::Ask, depth),
            truncated: false,
        }
    }

    /// Empties the book (keeps its memory).
    pub fn clear(&mut self) {
        self.bids.levels.clear();
        self.asks.levels.clear();
        self.truncated = false;
    }

    /// Sets one level (size 0 removes it).
    #[inline]
    pub fn set(&mut self, side: Side, price: i64, size: i64) {
        self.set_level(side, Level::new(price, size));
    }

    /// Sets one level, wire digits included (size 0 removes it).
    #[inline]
    pub fn set_level(&mut self, side: Side, level: Level) {
        let kept = match side {
            Side::Bid => self.bids.set(level),
            Side::Ask => self.asks.set(level),
        };
        self.truncated |= !kept;
    }

    /// The levels of `side`, best first.
    pub fn levels(&self, side: Side) -> &VecDeque<Level> {
        match side {
            Side::Bid => &self.bids.levels,
            Side::Ask => &self.asks.levels,
        }
    }

    /// The best bid and ask, if both sides have a level.
    pub fn top(&self) -> Option<(Level, Level)> {
        Some((*self.bids.levels.front()?, *self.asks.levels.front()?))
    }

    /// Whether the best bid is at or above the best ask.
    pub fn is_crossed(&self) -> bool {
        self.top()
            .is_some_and(|(b, a)| b.price.cmp(&a.price) != Ordering::Less)
    }

    /// Whether a level ever fell outside the kept depth: the deepest kept
    /// levels may then be missing some below them.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The kept depth per side.
    pub fn depth(&self) -> usize {
        self.bids.capacity
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn levels_stay_sorted_best_first() {
        let mut b = Book::new(3);
        b.set(Side::Bid, 100, 1);
        b.set(Side::Bid, 102, 1);
        b.set(Side::Bid, 101, 1);
        b.set(Side::Ask, 105, 2);
        b.set(Side::Ask, 103, 2);
        fn prices(b: &Book, s: Side) -> Vec<i64> {
            b.levels(s).iter().map(|l| l.price).collect()
        }
        assert_eq!(prices(&b, Side::Bid), [102, 101, 100]);
        assert_eq!(prices(&b, Side::Ask), [103, 105]);
        assert!(!b.is_crossed());
        b.set(Side::Bid, 99, 1); // below a full ladder: ignored
        assert!(b.truncated());
        b.set(Side::Bid, 101, 0);
        assert_eq!(prices(&b, Side::Bid), [102, 100]);
        b.set(Side::Bid, 104, 5);
        assert!(b.is_crossed());
    }

    proptest! {
        /// Against a `BTreeMap` reference: the kept ladder is the reference's
        /// best `depth` levels as long as nothing was truncated, and always a
        /// sorted, duplicate-free set of levels with non-zero sizes.
        #[test]
        fn matches_a_btreemap(ops in proptest::collection::vec((any::<bool>(), 0i64..60, 0i64..4), 0..400), depth in 1usize..40) {
            let mut book = Book::new(depth);
            let mut reference = [BTreeMap::new(), BTreeMap::new()];
            for (bid, price, size) in ops {
                let side = if bid { Side::Bid } else { Side::Ask };
                book.set(side, price, size);
                let r = &mut reference[usize::from(bid)];
                if size == 0 { r.remove(&price); } else { r.insert(price, size); }
            }
            for (side, r) in [(Side::Ask, &reference[0]), (Side::Bid, &reference[1])] {
                let want: Vec<Level> = match side {
                    Side::Bid => r.iter().rev().map(|(&price, &size)| Level::new(price, size)).take(depth).collect(),
                    Side::Ask => r.iter().map(|(&price, &size)| Level::new(price, size)).take(depth).collect(),
                };
                let got: Vec<Level> = book.levels(side).iter().copied().collect();
                prop_assert!(got.len() <= depth);
                prop_assert!(got.iter().all(|l| l.size != 0));
                let sorted = got.windows(2).all(|w| match side {
                    Side::Bid => w[0].price > w[1].price,
                    Side::Ask => w[0].price < w[1].price,
                });
                prop_assert!(sorted, "unsorted {:?}", got);
                if !book.truncated() {
                    prop_assert_eq!(&got, &want);
                }
                // Truncated or not, every kept level is a true level.
                prop_assert!(got.iter().all(|l| r.get(&l.price) == Some(&l.size)));
            }
        }
    }
}
