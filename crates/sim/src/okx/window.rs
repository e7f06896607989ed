//! What one client holds of an OKX `books` channel: the top 400 levels a
//! side, kept complete by the venue, and the messages that keep it so.
//!
//! - "400 depth levels will be pushed in the initial full snapshot.
//!   Incremental data will be pushed every 100 ms for the changes in the
//!   order book during that period of time" (OKX API v5, "Order book
//!   channel").
//! - OKX keeps that window complete on the wire: a level that leaves the
//!   top 400 is sent as a delete, the level that enters from below as an
//!   insert (not in the docs; every update of the recorded 2022 BTC-USDT
//!   `books` stream leaves both sides at exactly 400, with 238 inserts
//!   beyond the 400th price and explicit `"0"` deletes for levels pushed
//!   out: research note on OKX, section 4). A side with fewer levels is
//!   sent whole.
//! - A level that was added and removed between two pushes still shows up
//!   as a delete: OKX sends deletes for prices the client never had (the
//!   same recording: hundreds of them), so every level the market removed
//!   is sent as a delete here too, in the window or not.
//! - Levels are `[price, size, "0", orders]`, all strings, trailing zeros
//!   trimmed; the third field "is part of a deprecated feature and it is
//!   always "0""; a delete is `[price, "0", "0", "0"]` (D-BOOK; every one
//!   of the recording's 3236 deletes).
//! - Checksum: "Use the first 25 bids and asks in the full load to form a
//!   string (where a colon connects the price and size in an ask or a
//!   bid), and then calculate the CRC32 value (32-bit signed integer)",
//!   alternating `bid:ask:bid:ask`, a side that runs out skipped ("the
//!   missing depth data will be ignored") (D-BOOK, "Calculate Checksum").

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included, Unbounded};

use crate::market::{Book, Digits, Levels, SimInstrument, decimal};

/// Levels a side of `books` carries.
pub(super) const WINDOW: usize = 400;

/// Levels a side the checksum covers.
const CHECKSUM_LEVELS: usize = 25;

/// One side of the market as the client's window sees it, keyed by rank
/// (bids by minus their price, asks by their price) so that ascending
/// keys are best first on both sides.
#[derive(Clone, Debug)]
struct Ladder {
    bid: bool,
    by_rank: BTreeMap<i64, i64>,
}

impl Ladder {
    fn new(bid: bool, levels: &BTreeMap<i64, i64>) -> Ladder {
        let mut ladder = Ladder {
            bid,
            by_rank: BTreeMap::new(),
        };
        for (&price, &size) in levels {
            let rank = ladder.rank(price);
            ladder.by_rank.insert(rank, size);
        }
        ladder
    }

    /// A price's rank, or a rank's price (the map is its own inverse).
    fn rank(&self, price: i64) -> i64 {
        if self.bid { -price } else { price }
    }

    /// The rank of the window's last level; `None` while the side has
    /// fewer than [`WINDOW`] levels (all of it is in the window).
    fn edge(&self) -> Option<i64> {
        self.by_rank.keys().nth(WINDOW - 1).copied()
    }

    /// The best `n` levels, best first, as `(price, size)`.
    fn best(&self, n: usize) -> Levels {
        self.by_rank
            .iter()
            .take(n)
            .map(|(&r, &s)| (self.rank(r), s))
            .collect()
    }

    /// Applies the market's changes (final sizes, 0: gone) and returns
    /// what a client holding the old window must apply to hold the new
    /// one, best first: every change inside the new window, a delete for
    /// every level removed or pushed out of it, an insert for every level
    /// pulled up into it.
    fn apply(&mut self, changes: &[(i64, i64)]) -> Levels {
        let old = self.edge();
        for &(price, size) in changes {
            let rank = self.rank(price);
            if size == 0 {
                self.by_rank.remove(&rank);
            } else {
                self.by_rank.insert(rank, size);
            }
        }
        let new = self.edge();
        let within = |rank: i64, edge: Option<i64>| edge.is_none_or(|e| rank <= e);
        let mut send: BTreeMap<i64, i64> = BTreeMap::new();
        for &(price, size) in changes {
            let rank = self.rank(price);
            if size > 0 && within(rank, new) {
                send.insert(rank, size);
            } else if size == 0 || within(rank, old) {
                // Removed, or set below the new window after being in the
                // old one.
                send.insert(rank, 0);
            }
        }
        // Pushed out: in the old window, below the new one.
        if let Some(new) = new
            && old.is_none_or(|old| new < old)
        {
            let upper = old.map_or(Unbounded, Included);
            for (&rank, _) in self.by_rank.range((Excluded(new), upper)) {
                send.entry(rank).or_insert(0);
            }
        }
        // Pulled in: below the old window, in the new one.
        if let Some(old) = old
            && new.is_none_or(|new| old < new)
        {
            let upper = new.map_or(Unbounded, Included);
            for (&rank, &size) in self.by_rank.range((Excluded(old), upper)) {
                send.entry(rank).or_insert(size);
            }
        }
        send.into_iter().map(|(r, s)| (self.rank(r), s)).collect()
    }
}

/// The market's book of one instrument as one client follows it: the
/// whole book (to know what enters the window from below), and what was
/// last sent of it.
#[derive(Clone, Debug)]
pub(super) struct Window {
    bids: Ladder,
    asks: Ladder,
}

impl Window {
    /// The market's book now.
    pub(super) fn new(book: &Book) -> Window {
        Window {
            bids: Ladder::new(true, &book.bids),
            asks: Ladder::new(false, &book.asks),
        }
    }

    /// Applies one step's changes (bids and asks, final sizes): what to
    /// send, bids then asks, best first.
    pub(super) fn apply(&mut self, bids: &[(i64, i64)], asks: &[(i64, i64)]) -> (Levels, Levels) {
        (self.bids.apply(bids), self.asks.apply(asks))
    }

    /// The best `n` levels a side: bids, then asks.
    pub(super) fn top(&self, n: usize) -> (Levels, Levels) {
        (self.bids.best(n), self.asks.best(n))
    }

    /// OKX's checksum of the window as `spec` writes its numbers.
    pub(super) fn checksum(&self, spec: &SimInstrument) -> i32 {
        let (bids, asks) = self.top(CHECKSUM_LEVELS);
        checksum(&bids, &asks, spec)
    }
}

/// OKX's checksum over the levels as written on the wire (at most the
/// first 25 a side are used): `bid1px:bid1sz:ask1px:ask1sz:bid2px:...`,
/// CRC32, as a signed 32-bit integer.
///
/// Written apart from the adapter's (`tickwire_venues::okx::checksum`) on
/// purpose: the simulator is the independent oracle the adapter's checksum
/// is tested against, so a mistake in one is not repeated in the other.
/// Both are checked against the documented examples (tests below).
pub(super) fn checksum(bids: &[(i64, i64)], asks: &[(i64, i64)], spec: &SimInstrument) -> i32 {
    let mut text = String::with_capacity(2 * CHECKSUM_LEVELS * 24);
    for i in 0..CHECKSUM_LEVELS {
        for &(price, size) in [bids.get(i), asks.get(i)].into_iter().flatten() {
            if !text.is_empty() {
                text.push(':');
            }
            decimal(&mut text, price, spec.price_scale, Digits::Trimmed);
            text.push(':');
            decimal(&mut text, size, spec.size_scale, Digits::Trimmed);
        }
    }
    crc32fast::hash(text.as_bytes()) as i32
}

/// Writes levels as OKX does: `["8476.98","415","0","13"]`, a delete as
/// `["8477","0","0","0"]`. The order count (fourth field) is made up from
/// the size: the market model has no orders.
pub(super) fn write_levels(out: &mut String, spec: &SimInstrument, levels: &[(i64, i64)]) {
    out.push('[');
    for (k, &(price, size)) in levels.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("[\"");
        decimal(out, price, spec.price_scale, Digits::Trimmed);
        out.push_str("\",\"");
        decimal(out, size, spec.size_scale, Digits::Trimmed);
        out.push_str("\",\"0\",\"");
        let orders = if size == 0 { 0 } else { 1 + size % 7 };
        out.push_str(&orders.to_string());
        out.push_str("\"]");
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::market::{self, Step};

    fn spec(price_scale: u8, size_scale: u8, levels: usize) -> SimInstrument {
        SimInstrument {
            symbol: "BTC-USDT".into(),
            price_scale,
            size_scale,
            mid: 6_000_000,
            levels,
        }
    }

    /// The documented examples ("Calculate Checksum"): the strings OKX
    /// gives, and their CRC32 as signed integers (computed with zlib's
    /// crc32 in the research note: 2413953002 is -1881014294 signed).
    #[test]
    fn the_checksum_follows_the_documented_examples() {
        let s = spec(1, 0, 1);
        // More than 25 levels on neither side, both sides two deep:
        // "3366.1:7:3366.8:9:3366:6:3368:8".
        let bids = [(33661, 7), (33660, 6)];
        let asks = [(33668, 9), (33680, 8)];
        assert_eq!(
            checksum(&bids, &asks, &s),
            crc32fast::hash(b"3366.1:7:3366.8:9:3366:6:3368:8") as i32
        );
        assert_eq!(checksum(&bids, &asks, &s), -1_881_014_294);
        // One side shorter: "3366.1:7:3366.8:9:3368:8:3372:8".
        let asks = [(33668, 9), (33680, 8), (33720, 8)];
        assert_eq!(checksum(&bids[..1], &asks, &s), 831_078_360);
        // The adapter's own implementation agrees.
        let mut book = tickwire_venues::book::Book::new(25);
        for (side, p, q) in [
            (tickwire_venues::book::Side::Bid, "3366.1", "7"),
            (tickwire_venues::book::Side::Ask, "3366.8", "9"),
            (tickwire_venues::book::Side::Ask, "3368", "8"),
            (tickwire_venues::book::Side::Ask, "3372", "8"),
        ] {
            book.set_level(side, tickwire_venues::decimal::level(p, q, 1, 0).unwrap());
        }
        assert_eq!(
            tickwire_venues::okx::checksum(&book, 1, 0),
            i64::from(checksum(&bids[..1], &asks, &s))
        );
        // Only the first 25 levels count.
        let deep: Vec<(i64, i64)> = (0..30).map(|k| (40_000 - k, 1 + k)).collect();
        assert_eq!(checksum(&deep, &asks, &s), checksum(&deep[..25], &asks, &s));
        assert_ne!(checksum(&deep, &asks, &s), checksum(&deep[..24], &asks, &s));
    }

    #[test]
    fn levels_are_written_as_okx_writes_them() {
        let mut out = String::new();
        write_levels(
            &mut out,
            &spec(2, 8, 1),
            &[(847_698, 41_500_000_000), (847_700, 0)],
        );
        assert_eq!(out, r#"[["8476.98","415","0","5"],["8477","0","0","0"]]"#);
    }

    /// A client that starts from the top 400 and applies every message
    /// holds the market's top 400 after each, on a book deeper than the
    /// window (levels leave and enter it) and on a shallower one.
    #[test]
    fn the_window_stays_the_markets_top_400() {
        for levels in [450, 200] {
            let spec = spec(2, 4, levels);
            let mut rng = StdRng::seed_from_u64(7);
            let mut book = Book::new(&spec, &mut rng);
            let mut window = Window::new(&book);
            let (bids, asks) = window.top(WINDOW);
            let mut client: [BTreeMap<i64, i64>; 2] =
                [bids.into_iter().collect(), asks.into_iter().collect()];
            let mut step = Step::default();
            let (mut entered, mut phantom) = (0, 0);
            for k in 0..3000 {
                market::step(0, &spec, &mut book, &mut rng, k % 3 == 0, &mut step);
                let (bids, asks) = window.apply(&step.bids, &step.asks);
                for (side, sent) in [(0, bids), (1, asks)] {
                    let before = client[side].clone();
                    for (price, size) in sent {
                        if size == 0 {
                            phantom += usize::from(client[side].remove(&price).is_none());
                        } else {
                            entered += usize::from(
                                !before.contains_key(&price)
                                    && !step.bids.iter().chain(&step.asks).any(|l| l.0 == price),
                            );
                            client[side].insert(price, size);
                        }
                    }
                }
                let (want_bids, want_asks) = book.levels(WINDOW);
                let got_bids: Levels = client[0].iter().rev().map(|(p, s)| (*p, *s)).collect();
                let got_asks: Levels = client[1].iter().map(|(p, s)| (*p, *s)).collect();
                assert_eq!(got_bids, want_bids, "bids after step {k} ({levels} levels)");
                assert_eq!(got_asks, want_asks, "asks after step {k} ({levels} levels)");
            }
            if levels > WINDOW {
                assert!(entered > 0, "levels entered the window from below");
            } else {
                assert_eq!(entered, 0);
            }
            assert!(phantom > 0, "deletes of levels the client never had");
        }
    }
}
