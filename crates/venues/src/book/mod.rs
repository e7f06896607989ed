//! A price-level order book that shows `depth` levels a side and keeps up
//! to `keep`, allocated when the instrument is subscribed.
//!
//! # When the shown depth is exact
//!
//! A book can only show levels it has been told about. How a venue tells
//! decides what a book may claim ([`Window`]):
//!
//! - [`Window::Venue`]: the venue keeps a window of its top levels
//!   complete on the wire (Kraken's `book` at the subscribed depth, Bybit's
//!   `orderbook.N`, OKX's 400-level `books`): a level that enters the
//!   window is sent, and one that leaves it is deleted (OKX and Bybit send
//!   the delete; Kraken leaves the client to cut its book back to the
//!   depth). How many levels the window holds is said by each snapshot
//!   ([`Limit::Levels`]; otherwise the book's `keep`, the depth its plan
//!   subscribes). While the book keeps the whole window, every kept level
//!   is exact. A book that keeps fewer levels than the window (a recorded
//!   `orderbook.500` replayed into a book keeping 50) cannot know the
//!   levels that enter its kept range from below, as the venue sends them
//!   only when they enter the window: its sides then track a horizon as
//!   in [`Window::Client`]. A book showing more levels than the window
//!   holds is never exact, unless a side has fewer levels than the
//!   window (the venue's whole side).
//! - [`Window::Client`]: the venue sends every change of its whole book
//!   (Binance's diff stream, Coinbase `level2`, Deribit `book.*`), but the
//!   snapshot the book started from may have held only its top levels
//!   (Binance's REST `limit`), or more than the book keeps. Below the last
//!   level the book has seen, a level that never changes is never sent, so
//!   the book cannot know it. Each side therefore has a *horizon*: the
//!   worst price up to which it knows every level (none: it knows the
//!   whole side). Changes beyond the horizon are ignored; a level pushed
//!   out of a full side moves the horizon in. Binance documents exactly
//!   this: "a price level outside of the initial snapshot that doesn't
//!   have a quantity change won't have an update in the Diff. Depth
//!   Stream" (Spot API docs, "How to manage a local order book
//!   correctly").
//!
//! The shown depth is exact while every side either knows its whole side
//! or knows at least `depth` levels ([`Book::is_exact`]). A book kept
//! deeper than it shows (`keep > depth`) stays exact while the market moves
//! within the levels it knows; when it cannot, the sync engine declares a
//! [`Resync::DepthExhausted`](crate::sync::Resync::DepthExhausted) gap.

use core::cmp::Ordering;

pub use crate::model::{Level, Side, Window};

mod build;
mod ladder;

pub use build::{LevelResult, ScaledLevels, ScaledSides, Sides, scaled_levels, scaled_sides};

use ladder::Ladder;

/// How many levels a side a snapshot was asked for (see
/// [`Book::snapshot_done`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The venue's whole book (Coinbase's and Deribit's in-band snapshots).
    Whole,
    /// At most this many levels a side (a REST `limit`).
    Levels(usize),
    /// A limit the book was not told: a side may always have had more.
    Unknown,
}

/// Levels of one side of a book, best first: the shown ones ([`Book::levels`])
/// or every kept one ([`Book::kept`]).
#[derive(Clone, Copy, Debug)]
pub struct Levels<'a> {
    /// Every level of the side, worst first: `low`, then `high` (the
    /// side's two parts, either side of its gap: a book read in the middle
    /// of a message is read right too).
    low: &'a [Level],
    high: &'a [Level],
    len: usize,
}

impl<'a> Levels<'a> {
    /// How many.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the side shows no level.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `i`-th best level.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&'a Level> {
        if i >= self.len {
            return None;
        }
        match self.high.len().checked_sub(i + 1) {
            Some(at) => Some(&self.high[at]),
            None => Some(&self.low[self.low.len() + self.high.len() - 1 - i]),
        }
    }

    /// Every level shown, best first.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a Level> + DoubleEndedIterator + use<'a> {
        self.into_iter()
    }
}

impl<'a> IntoIterator for Levels<'a> {
    type Item = &'a Level;
    type IntoIter = LevelsIter<'a>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        // The best `len`: the high part's first, then the low part's.
        let from_high = self.len.min(self.high.len());
        let from_low = self.len - from_high;
        LevelsIter {
            high: &self.high[self.high.len() - from_high..],
            low: &self.low[self.low.len() - from_low..],
        }
    }
}

/// The levels of a [`Levels`], best first.
#[derive(Clone, Debug)]
pub struct LevelsIter<'a> {
    /// Worst first, as in the book: taken from the end.
    high: &'a [Level],
    low: &'a [Level],
}

impl<'a> Iterator for LevelsIter<'a> {
    type Item = &'a Level;

    #[inline]
    fn next(&mut self) -> Option<&'a Level> {
        if let Some((best, rest)) = self.high.split_last() {
            self.high = rest;
            Some(best)
        } else {
            let (best, rest) = self.low.split_last()?;
            self.low = rest;
            Some(best)
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.high.len() + self.low.len();
        (n, Some(n))
    }

    /// In one step, as a slice's iterator does (`skip` over the shown
    /// levels would otherwise walk them).
    #[inline]
    fn nth(&mut self, n: usize) -> Option<&'a Level> {
        let from_high = n.min(self.high.len());
        self.high = &self.high[..self.high.len() - from_high];
        let from_low = (n - from_high).min(self.low.len());
        self.low = &self.low[..self.low.len() - from_low];
        self.next()
    }
}

impl<'a> DoubleEndedIterator for LevelsIter<'a> {
    #[inline]
    fn next_back(&mut self) -> Option<&'a Level> {
        if let Some((worst, rest)) = self.low.split_first() {
            self.low = rest;
            Some(worst)
        } else {
            let (worst, rest) = self.high.split_first()?;
            self.high = rest;
            Some(worst)
        }
    }
}

impl ExactSizeIterator for LevelsIter<'_> {}

impl core::iter::FusedIterator for LevelsIter<'_> {}

/// An order book showing at most `depth` levels a side and keeping at most
/// `keep`. Never allocates after [`Book::new`].
#[derive(Clone, Debug)]
pub struct Book {
    bids: Ladder,
    asks: Ladder,
    depth: usize,
    window: Window,
    /// With [`Window::Venue`]: the levels a side the venue's window holds,
    /// as the last snapshot said (`keep` until one says otherwise).
    venue_window: usize,
}

impl Book {
    /// An empty book showing and keeping `depth` levels a side, whose
    /// venue keeps that window complete ([`Window::Venue`]).
    pub fn new(depth: usize) -> Book {
        Book::with_window(depth, depth, Window::Venue)
    }

    /// An empty book showing `depth` levels a side and keeping up to
    /// `keep` (at least `depth`).
    pub fn with_window(depth: usize, keep: usize, window: Window) -> Book {
        let keep = keep.max(depth);
        Book {
            bids: Ladder::new(Side::Bid, keep),
            asks: Ladder::new(Side::Ask, keep),
            depth,
            window,
            venue_window: keep,
        }
    }

    fn ladder(&self, side: Side) -> &Ladder {
        match side {
            Side::Bid => &self.bids,
            Side::Ask => &self.asks,
        }
    }

    /// Empties the book (keeps its memory); every side known again.
    pub fn clear(&mut self) {
        self.bids.clear();
        self.asks.clear();
    }

    /// Sets one level (size 0 removes it).
    #[inline]
    pub fn set(&mut self, side: Side, price: i64, size: i64) {
        self.set_level(side, Level::new(price, size));
    }

    /// Sets one level, wire digits included (size 0 removes it). A side
    /// may hold up to twice its kept levels until [`settle`](Self::settle).
    /// One level at a time: the side's gap is closed after it (a message's
    /// levels cost fewer moved levels through the sync engine, which
    /// settles once a message).
    #[inline]
    pub fn set_level(&mut self, side: Side, level: Level) {
        self.set_open(side, level);
        match side {
            Side::Bid => self.bids.close(),
            Side::Ask => self.asks.close(),
        }
    }

    /// [`set_level`](Self::set_level) within a message: the side may keep a
    /// gap where the level changed it, so that the message's next changes
    /// deeper in the side move the levels between them once, until
    /// [`settle`](Self::settle) (or [`snapshot_done`](Self::snapshot_done))
    /// closes it. Every read goes through the gap ([`Levels`] in two
    /// parts), so a book read before then is still read right. Call
    /// `settle` after each message: it closes the gap and cuts each side
    /// back to its kept levels. Cheapest when a side's levels come sorted
    /// (Binance's do): the sync engine's way.
    #[inline]
    pub fn set_open(&mut self, side: Side, level: Level) {
        self.set_ranked(side, level);
    }

    /// [`set_open`](Self::set_open), returning the rank best first the
    /// price has (or would have) now: a hint for
    /// [`shown_changes_ranked`](Self::shown_changes_ranked).
    #[inline]
    pub(crate) fn set_ranked(&mut self, side: Side, level: Level) -> usize {
        match side {
            Side::Bid => self.bids.set(level),
            Side::Ask => self.asks.set(level),
        }
    }

    /// Whether the sides track a horizon: the venue does not keep complete
    /// exactly what they keep (it sends its whole book, or a window deeper
    /// than the book keeps).
    fn tracks(&self) -> bool {
        self.window == Window::Client || self.venue_window > self.bids.keep
    }

    /// The fewest levels a side holds when it is cut short of the venue's
    /// side: a side with fewer is the venue's whole side.
    fn full_side(&self) -> usize {
        match self.window {
            Window::Client => usize::MAX,
            Window::Venue => self.venue_window,
        }
    }

    /// A message has been applied: each side's gap closed (the place a
    /// message's changes left open, so that its next ones moved fewer
    /// levels) and each side back to its kept levels.
    pub fn settle(&mut self) {
        let tracks = self.tracks();
        self.bids.settle(tracks);
        self.asks.settle(tracks);
    }

    /// A snapshot has been set level by level: settled, and each side's
    /// horizon set where the snapshot may have stopped short of what the
    /// venue will keep the book told of.
    ///
    /// - [`Window::Client`]: a side that filled its kept levels, or the
    ///   snapshot's `limit` (the most levels a side it was asked for,
    ///   Binance's REST `limit`), may have had more below them.
    ///   [`Limit::Unknown`] (a snapshot asked for with a limit the book was
    ///   not told): every side may, so every side ends at its worst level.
    ///   A snapshot of the whole book that fits is the whole side.
    /// - [`Window::Venue`]: `Limit::Levels(n)` says the venue's window holds
    ///   `n` levels (otherwise it holds `keep`). A window deeper than the
    ///   book keeps has levels below the kept ones that the venue will not
    ///   send again: a side that filled its kept levels ends there.
    pub fn snapshot_done(&mut self, limit: Limit) {
        if self.window == Window::Venue {
            self.venue_window = match limit {
                Limit::Levels(n) => n,
                Limit::Whole | Limit::Unknown => self.bids.keep,
            };
        }
        self.settle();
        let (client, tracks) = (self.window == Window::Client, self.tracks());
        for l in [&mut self.bids, &mut self.asks] {
            let cut = match limit {
                _ if !client => false,
                Limit::Whole => false,
                Limit::Levels(n) => l.len() >= n,
                Limit::Unknown => true,
            };
            if cut || (tracks && l.len() >= l.keep) {
                l.horizon = l.worst().map(|l| l.price);
            }
        }
    }

    /// The levels of `side` shown, best first (at most [`depth`](Self::depth)).
    pub fn levels(&self, side: Side) -> Levels<'_> {
        let (low, high) = self.ladder(side).parts();
        Levels {
            low,
            high,
            len: (low.len() + high.len()).min(self.depth),
        }
    }

    /// Every level kept on `side`, best first: the shown ones and those
    /// below them (a venue's checksum may cover more levels than shown).
    pub fn kept(&self, side: Side) -> Levels<'_> {
        let (low, high) = self.ladder(side).parts();
        Levels {
            low,
            high,
            len: low.len() + high.len(),
        }
    }

    /// The best bid and ask, if both sides have a level.
    pub fn top(&self) -> Option<(Level, Level)> {
        Some((*self.bids.get(0)?, *self.asks.get(0)?))
    }

    /// Whether the best bid is at or above the best ask.
    pub fn is_crossed(&self) -> bool {
        self.top()
            .is_some_and(|(b, a)| b.price.cmp(&a.price) != Ordering::Less)
    }

    /// Whether every shown level is exact: each side knows at least
    /// `depth` levels, or its whole side (no horizon, and, with
    /// [`Window::Venue`], fewer levels than the venue's window holds).
    pub fn is_exact(&self) -> bool {
        let full = self.full_side();
        [&self.bids, &self.asks].iter().all(|l| {
            let n = l.len();
            n >= self.depth || (l.horizon.is_none() && n < full)
        })
    }

    /// The worst price `side` knows every level up to (`None`: all of it).
    pub fn horizon(&self, side: Side) -> Option<i64> {
        self.ladder(side).horizon
    }

    /// The shown depth per side.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The kept depth per side.
    pub fn keep(&self) -> usize {
        self.bids.keep
    }

    /// The price of the last shown level of `side` when the side shows a
    /// full `depth` levels: a change beyond it is not shown.
    pub fn edge(&self, side: Side) -> Option<i64> {
        let ladder = self.ladder(side);
        (self.depth > 0)
            .then(|| ladder.get(self.depth - 1).map(|l| l.price))
            .flatten()
    }

    /// What a message changed in the shown levels, as the deltas a
    /// consumer that keeps only the best `depth` levels after each delta
    /// must apply to go from what it showed before (`edges`: the
    /// [`edge`](Self::edge)s before the message) to what it shows now.
    /// `applied` is every level the message set, in order; levels worse
    /// than the old edge of their side may be left out (what they change
    /// in the shown levels is read from the ladder).
    ///
    /// Removals come first, then new and changed levels: the consumer's
    /// side then never holds more than `depth` levels but for ones pushed
    /// below the shown depth, which it drops itself, the worst first.
    pub fn shown_changes(
        &self,
        applied: &[(Side, Level)],
        edges: [Option<i64>; 2],
        emit: impl FnMut(Side, Level),
    ) {
        self.shown_changes_ranked(
            applied.len(),
            |k| (applied[k].0, applied[k].1, usize::MAX),
            edges,
            emit,
        )
    }

    /// [`shown_changes`](Self::shown_changes) over `count` levels, the
    /// `k`-th given by `applied(k)` with the rank [`set_ranked`](Self::set_ranked)
    /// returned for it: where nothing better was set after it, the rank
    /// is still right and saves a search (checked, so a stale one costs
    /// only the check).
    pub(crate) fn shown_changes_ranked(
        &self,
        count: usize,
        applied: impl Fn(usize) -> (Side, Level, usize),
        edges: [Option<i64>; 2],
        mut emit: impl FnMut(Side, Level),
    ) {
        let within =
            |side: Side, edge: Option<i64>, price: i64| edge.is_none_or(|e| !side.better(e, price));
        // Removed from what was shown.
        for k in 0..count {
            let (side, level, rank) = applied(k);
            let edge = edges[side as usize];
            if within(side, edge, level.price)
                && self.ladder(side).find_near(level.price, rank).is_err()
            {
                emit(side, Level::new(level.price, 0));
            }
        }
        for side in [Side::Bid, Side::Ask] {
            // A side the message set no level on, as good as its old edge
            // or better, shows what it showed: its best `depth` levels
            // are all still there, as they were (a set worse than the
            // edge, a side too full for an insert and the settle all drop
            // only the worst, and kept levels are at least `depth`).
            if !(0..count).any(|k| applied(k).0 == side) {
                continue;
            }
            let (old, new) = (edges[side as usize], self.edge(side));
            let ladder = self.ladder(side);
            let shown = ladder.len().min(self.depth);
            // Set by the message, shown now, and shown before too (or the
            // side showed fewer than `depth` levels).
            for k in 0..count {
                let (s, level, rank) = applied(k);
                if s != side || !within(side, new, level.price) || !within(side, old, level.price) {
                    continue;
                }
                if let Ok(i) = ladder.find_near(level.price, rank)
                    && i < shown
                    && let Some(level) = ladder.get(i)
                {
                    emit(side, *level);
                }
            }
            // Shown now but below what was shown: pulled up by removals
            // above, or set by the message there. The old edge was the
            // side's `depth`-th level: at that rank still (or where it
            // would be) unless the message changed how many levels are
            // better than it, and then found in two comparisons, not a
            // search.
            if let Some(old) = old {
                let first = match ladder.find_near(old, self.depth.saturating_sub(1)) {
                    Ok(i) => i + 1,
                    Err(i) => i,
                };
                for level in self.levels(side).iter().take(shown).skip(first) {
                    emit(side, *level);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn prices(b: &Book, s: Side) -> Vec<i64> {
        b.levels(s).iter().map(|l| l.price).collect()
    }

    #[test]
    fn levels_stay_sorted_best_first() {
        let mut b = Book::new(3);
        b.set(Side::Bid, 100, 1);
        b.set(Side::Bid, 102, 1);
        b.set(Side::Bid, 101, 1);
        b.set(Side::Ask, 105, 2);
        b.set(Side::Ask, 103, 2);
        b.settle();
        assert_eq!(prices(&b, Side::Bid), [102, 101, 100]);
        assert_eq!(prices(&b, Side::Ask), [103, 105]);
        assert!(!b.is_crossed());
        b.set(Side::Bid, 99, 1);
        b.settle(); // below a full window: dropped at the message's end
        b.set(Side::Bid, 101, 0);
        b.settle();
        assert_eq!(prices(&b, Side::Bid), [102, 100]);
        b.set(Side::Bid, 104, 5);
        assert!(b.is_crossed());
        assert!(b.is_exact(), "the venue keeps its window complete");
        // Within one message, a level pushed below the window by an insert
        // comes back when a delete makes room: the venue sends nothing for
        // it, as it never left its window.
        let mut b = Book::new(2);
        b.set(Side::Bid, 10, 1);
        b.set(Side::Bid, 9, 1);
        b.settle();
        b.set(Side::Bid, 11, 1);
        b.set(Side::Bid, 10, 0);
        b.settle();
        assert_eq!(prices(&b, Side::Bid), [11, 9]);
    }

    /// The smallest case: shown depth 2, a snapshot of three bids,
    /// an update removes the two best. A book that kept only two would be
    /// valid with no bids; this one knows the third.
    #[test]
    fn a_book_kept_deeper_than_shown_stays_exact_until_it_cannot() {
        let mut b = Book::with_window(2, 3, Window::Client);
        for p in [100, 99, 98] {
            b.set(Side::Bid, p, 1);
        }
        b.set(Side::Ask, 101, 1);
        b.snapshot_done(Limit::Levels(3));
        assert_eq!(
            b.horizon(Side::Bid),
            Some(98),
            "three asked, three came: maybe more"
        );
        assert_eq!(
            b.horizon(Side::Ask),
            None,
            "fewer than asked: the whole side"
        );
        b.set(Side::Bid, 100, 0);
        b.settle();
        assert!(b.is_exact());
        assert_eq!(prices(&b, Side::Bid), [99, 98]);
        b.set(Side::Bid, 99, 0);
        b.settle();
        assert_eq!(prices(&b, Side::Bid), [98]);
        assert!(
            !b.is_exact(),
            "one bid known, two shown, and more may lie below 98"
        );
        // A change below the horizon is unknown ground: ignored.
        b.set(Side::Bid, 97, 5);
        b.settle();
        assert_eq!(prices(&b, Side::Bid), [98]);
        // Inserts above the horizon are known.
        b.set(Side::Bid, 99, 2);
        b.settle();
        assert!(b.is_exact());
    }

    #[test]
    fn a_level_pushed_out_of_a_full_client_side_moves_its_horizon() {
        let mut b = Book::with_window(1, 2, Window::Client);
        b.set(Side::Ask, 10, 1);
        b.set(Side::Ask, 11, 1);
        b.snapshot_done(Limit::Whole);
        assert_eq!(b.horizon(Side::Ask), Some(11), "two kept, two came");
        // A snapshot asked for 2 levels a side: one that gave 2 may have
        // had more, one that gave 1 did not. A limit not told: each side
        // ends at its worst level. An empty side knows nothing to bound.
        for (limit, bids, asks) in [
            (Limit::Levels(2), Some(6), None),
            (Limit::Unknown, Some(6), Some(8)),
            (Limit::Whole, None, None),
        ] {
            let mut cut = Book::with_window(1, 5, Window::Client);
            cut.set(Side::Bid, 7, 1);
            cut.set(Side::Bid, 6, 1);
            cut.set(Side::Ask, 8, 1);
            cut.snapshot_done(limit);
            assert_eq!(
                (cut.horizon(Side::Bid), cut.horizon(Side::Ask)),
                (bids, asks),
                "{limit:?}"
            );
        }
        let mut empty = Book::with_window(1, 5, Window::Client);
        empty.snapshot_done(Limit::Unknown);
        assert_eq!(empty.horizon(Side::Ask), None);
        b.set(Side::Ask, 9, 1);
        b.settle();
        assert_eq!(
            b.kept(Side::Ask)
                .iter()
                .map(|l| l.price)
                .collect::<Vec<_>>(),
            [9, 10]
        );
        assert_eq!(b.horizon(Side::Ask), Some(10));
        b.set(Side::Ask, 11, 3);
        b.settle();
        assert_eq!(b.kept(Side::Ask).len(), 2, "11 is past the horizon now");
    }

    /// What `shown_changes` emits, applied by a consumer that keeps the
    /// best `depth` levels after each delta. With `leave_out_deep`, the
    /// levels worse than the old edge of their side are not handed over
    /// (as the sync engine does).
    fn consumer_follows(
        book: &mut Book,
        ops: &[(Side, i64, i64)],
        consumer: &mut [BTreeMap<i64, i64>; 2],
        leave_out_deep: bool,
    ) {
        let edges = [book.edge(Side::Bid), book.edge(Side::Ask)];
        let mut applied = Vec::new();
        let mut ranks = Vec::new();
        for &(side, price, size) in ops {
            let rank = book.set_ranked(side, Level::new(price, size));
            let deep = edges[side as usize].is_some_and(|e| side.better(e, price));
            if !(leave_out_deep && deep) {
                applied.push((side, Level::new(price, size)));
                ranks.push(rank);
            }
        }
        book.settle();
        let depth = book.depth();
        // The ranks `set_ranked` returned only save searches: the deltas
        // are the same without them.
        let mut plain = Vec::new();
        book.shown_changes(&applied, edges, |side, level| plain.push((side, level)));
        let mut ranked = Vec::new();
        let at = |k: usize| (applied[k].0, applied[k].1, ranks[k]);
        book.shown_changes_ranked(applied.len(), at, edges, |side, level| {
            ranked.push((side, level));
        });
        assert_eq!(plain, ranked);
        for (side, level) in ranked {
            let c = &mut consumer[side as usize];
            if level.size == 0 {
                c.remove(&level.price);
            } else {
                c.insert(level.price, level.size);
            }
            while c.len() > depth {
                let worst = match side {
                    Side::Bid => *c.keys().next().unwrap(),
                    Side::Ask => *c.keys().next_back().unwrap(),
                };
                c.remove(&worst);
            }
        }
    }

    /// A book read in the middle of a message, with a side's gap open, is
    /// read right by every read: `levels`, `kept` (by rank, from both ends),
    /// `top` and `edge`.
    #[test]
    fn a_book_read_with_a_gap_open_reads_every_level() {
        let mut book = Book::with_window(5, 100, Window::Client);
        let mut reference = BTreeMap::new();
        for p in 0..100 {
            book.set(Side::Bid, 1_000 + 2 * p, 1);
            reference.insert(1_000 + 2 * p, 1);
        }
        book.settle();
        // A message's changes deep in the side, best first: gaps open.
        for (p, size) in [(1_150, 0), (1_141, 3), (1_120, 0), (1_101, 4), (1_060, 0)] {
            book.set_open(Side::Bid, Level::new(p, size));
            if size == 0 {
                reference.remove(&p);
            } else {
                reference.insert(p, size);
            }
        }
        let (low, high) = book.bids.parts();
        assert!(!low.is_empty() && !high.is_empty());
        assert_ne!(low.as_ptr_range().end, high.as_ptr(), "a gap is open");
        let want: Vec<(i64, i64)> = reference.iter().rev().map(|(p, s)| (*p, *s)).collect();
        let kept = book.kept(Side::Bid);
        let got: Vec<(i64, i64)> = kept.iter().map(|l| (l.price, l.size)).collect();
        assert_eq!(got, want);
        let by_rank: Vec<(i64, i64)> = (0..kept.len())
            .filter_map(|i| kept.get(i))
            .map(|l| (l.price, l.size))
            .collect();
        assert_eq!(by_rank, want);
        for k in 0..=want.len() + 1 {
            let nth = kept.iter().nth(k).map(|l| (l.price, l.size));
            assert_eq!(nth, want.get(k).copied(), "{k}");
            let mut it = kept.iter();
            let _ = it.nth(k);
            let rest: Vec<(i64, i64)> = it.map(|l| (l.price, l.size)).collect();
            assert_eq!(rest, want.get(k + 1..).unwrap_or_default(), "{k}");
        }
        let mut back: Vec<(i64, i64)> = kept.iter().rev().map(|l| (l.price, l.size)).collect();
        back.reverse();
        assert_eq!(back, want);
        let shown: Vec<i64> = book.levels(Side::Bid).iter().map(|l| l.price).collect();
        assert_eq!(shown, want.iter().take(5).map(|w| w.0).collect::<Vec<_>>());
        assert_eq!(book.edge(Side::Bid), Some(want[4].0));
        book.settle();
        let got: Vec<(i64, i64)> = book
            .kept(Side::Bid)
            .iter()
            .map(|l| (l.price, l.size))
            .collect();
        assert_eq!(got, want);
    }

    fn shown(book: &Book, side: Side) -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = book
            .levels(side)
            .iter()
            .map(|l| (l.price, l.size))
            .collect();
        v.sort();
        v
    }

    proptest! {
        /// Against a `BTreeMap` of the whole book: every kept level is a
        /// true level; while the book is exact, the shown levels are the
        /// reference's best `depth`; and a consumer fed `shown_changes`
        /// holds exactly the shown levels after every message.
        #[test]
        fn matches_a_btreemap(
            snapshot in proptest::collection::vec((any::<bool>(), 0i64..60, 1i64..4), 0..80),
            messages in proptest::collection::vec(
                proptest::collection::vec((any::<bool>(), 0i64..60, 0i64..4), 1..6), 0..80),
            depth in 1usize..8,
            extra in 0usize..8,
            client in any::<bool>(),
            leave_out_deep in any::<bool>(),
        ) {
            let window = if client { Window::Client } else { Window::Venue };
            let mut book = Book::with_window(depth, depth + extra, window);
            let mut reference = [BTreeMap::new(), BTreeMap::new()];
            let side_of = |bid: bool| if bid { Side::Bid } else { Side::Ask };
            for &(bid, price, size) in &snapshot {
                book.set(side_of(bid), price, size);
                reference[side_of(bid) as usize].insert(price, size);
            }
            book.snapshot_done(Limit::Whole);
            let mut consumer = [BTreeMap::new(), BTreeMap::new()];
            for side in [Side::Bid, Side::Ask] {
                for l in book.levels(side).iter() {
                    consumer[side as usize].insert(l.price, l.size);
                }
            }
            for ops in messages {
                let ops: Vec<(Side, i64, i64)> =
                    ops.into_iter().map(|(b, p, s)| (side_of(b), p, s)).collect();
                for &(side, price, size) in &ops {
                    let r = &mut reference[side as usize];
                    if size == 0 { r.remove(&price); } else { r.insert(price, size); }
                }
                consumer_follows(&mut book, &ops, &mut consumer, leave_out_deep);
                for side in [Side::Bid, Side::Ask] {
                    let r = &reference[side as usize];
                    let kept: Vec<Level> = book.kept(side).iter().copied().collect();
                    prop_assert!(kept.iter().all(|l| l.size != 0));
                    let sorted = kept.windows(2).all(|w| side.better(w[0].price, w[1].price));
                    prop_assert!(sorted, "unsorted {:?}", kept);
                    let have: Vec<(i64, i64)> = consumer[side as usize].iter().map(|(p, s)| (*p, *s)).collect();
                    prop_assert_eq!(have, shown(&book, side), "the consumer drifted");
                    if client {
                        // Every kept level is a true one.
                        prop_assert!(kept.iter().all(|l| r.get(&l.price) == Some(&l.size)));
                        if book.is_exact() {
                            let want: Vec<(i64, i64)> = match side {
                                Side::Bid => r.iter().rev().take(depth).map(|(p, s)| (*p, *s)).collect(),
                                Side::Ask => r.iter().take(depth).map(|(p, s)| (*p, *s)).collect(),
                            };
                            let got: Vec<(i64, i64)> =
                                book.levels(side).iter().map(|l| (l.price, l.size)).collect();
                            prop_assert_eq!(got, want, "exact but wrong");
                        }
                    }
                }
            }
        }
    }

    /// The best `n` levels of a side of a reference book, best first.
    fn top(r: &BTreeMap<i64, i64>, side: Side, n: usize) -> Vec<(i64, i64)> {
        match side {
            Side::Bid => r.iter().rev().take(n).map(|(p, s)| (*p, *s)).collect(),
            Side::Ask => r.iter().take(n).map(|(p, s)| (*p, *s)).collect(),
        }
    }

    proptest! {
        /// A venue that keeps a window of its top `window` levels complete
        /// (sends the levels that enter it and deletes those that leave,
        /// as OKX and Bybit do), told to a book by its snapshot, whatever
        /// the book keeps and shows: while the book says it is exact, it
        /// shows the venue's true best levels.
        #[test]
        fn a_venue_window_is_exact_whenever_the_book_says_so(
            snapshot in proptest::collection::vec((any::<bool>(), 0i64..60, 1i64..4), 0..80),
            messages in proptest::collection::vec(
                proptest::collection::vec((any::<bool>(), 0i64..60, 0i64..4), 1..6), 0..80),
            window in 1usize..10,
            depth in 1usize..8,
            keep in 1usize..12,
        ) {
            let side_of = |bid: bool| if bid { Side::Bid } else { Side::Ask };
            let mut venue = [BTreeMap::new(), BTreeMap::new()];
            for &(bid, price, size) in &snapshot {
                venue[side_of(bid) as usize].insert(price, size);
            }
            let mut book = Book::with_window(depth, keep, Window::Venue);
            for side in [Side::Bid, Side::Ask] {
                for (p, s) in top(&venue[side as usize], side, window) {
                    book.set(side, p, s);
                }
            }
            book.snapshot_done(Limit::Levels(window));
            for ops in messages {
                // What the venue's window was and is: the wire carries the
                // levels that left it (deleted) and those new or changed.
                let before = [top(&venue[0], Side::Bid, window), top(&venue[1], Side::Ask, window)];
                for &(bid, price, size) in &ops {
                    let r = &mut venue[side_of(bid) as usize];
                    if size == 0 { r.remove(&price); } else { r.insert(price, size); }
                }
                for side in [Side::Bid, Side::Ask] {
                    let now = top(&venue[side as usize], side, window);
                    let old = &before[side as usize];
                    for &(p, _) in old {
                        if !now.iter().any(|&(q, _)| q == p) {
                            book.set(side, p, 0);
                        }
                    }
                    for &(p, s) in &now {
                        if !old.contains(&(p, s)) {
                            book.set(side, p, s);
                        }
                    }
                }
                book.settle();
                if book.is_exact() {
                    for side in [Side::Bid, Side::Ask] {
                        let got: Vec<(i64, i64)> =
                            book.levels(side).iter().map(|l| (l.price, l.size)).collect();
                        prop_assert_eq!(got, top(&venue[side as usize], side, depth), "exact but wrong");
                    }
                }
            }
        }
    }
}
