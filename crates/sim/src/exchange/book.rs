//! The orders resting in one instrument's book, in price-time order, and
//! how a quantity taken from a level is shared between the crowd queued
//! ahead of them and the orders themselves.

use std::collections::{BTreeMap, VecDeque};

use super::{SimOrder, Tif};

/// A working order and what the engine keeps beside it.
#[derive(Clone, Debug)]
pub(crate) struct Working {
    pub(crate) order: SimOrder,
    /// The crowd's size queued ahead of it at its level (not counting
    /// resting orders ahead of it): what a trade at the level takes before
    /// it reaches this order.
    pub(crate) ahead: i64,
    pub(crate) tif: Tif,
    pub(crate) post_only: bool,
}

impl Working {
    pub(crate) fn remaining(&self) -> i64 {
        self.order.size - self.order.filled
    }
}

/// One instrument's resting orders by side and price, each level's in time
/// order (ids into the exchange's working orders).
#[derive(Clone, Debug, Default)]
pub(crate) struct Queues {
    bids: BTreeMap<i64, VecDeque<u64>>,
    asks: BTreeMap<i64, VecDeque<u64>>,
}

impl Queues {
    pub(crate) fn is_empty(&self) -> bool {
        self.bids.is_empty() && self.asks.is_empty()
    }

    fn side(&self, bid: bool) -> &BTreeMap<i64, VecDeque<u64>> {
        if bid { &self.bids } else { &self.asks }
    }

    fn side_mut(&mut self, bid: bool) -> &mut BTreeMap<i64, VecDeque<u64>> {
        if bid { &mut self.bids } else { &mut self.asks }
    }

    /// The orders resting at `price`, first in time first.
    pub(crate) fn at(&self, bid: bool, price: i64) -> impl Iterator<Item = u64> + '_ {
        self.side(bid).get(&price).into_iter().flatten().copied()
    }

    /// The best resting bid and ask prices.
    pub(crate) fn inside(&self) -> (Option<i64>, Option<i64>) {
        (
            self.bids.keys().next_back().copied(),
            self.asks.keys().next().copied(),
        )
    }

    /// `id` joins the back of its level's queue.
    pub(crate) fn push(&mut self, bid: bool, price: i64, id: u64) {
        self.side_mut(bid).entry(price).or_default().push_back(id);
    }

    /// `id` leaves its level's queue.
    pub(crate) fn remove(&mut self, bid: bool, price: i64, id: u64) {
        let side = self.side_mut(bid);
        if let Some(q) = side.get_mut(&price) {
            q.retain(|&o| o != id);
            if q.is_empty() {
                side.remove(&price);
            }
        }
    }
}

/// The size resting at `price` (the orders of `queues` there).
pub(crate) fn resting_at(
    queues: &Queues,
    orders: &BTreeMap<u64, Working>,
    bid: bool,
    price: i64,
) -> i64 {
    queues
        .at(bid, price)
        .filter_map(|id| orders.get(&id))
        .map(Working::remaining)
        .fold(0, i64::saturating_add)
}

/// `qty` taken from the level at `price`, which holds the crowd and the
/// orders resting there: the crowd queued ahead of the first order goes
/// first, then that order, then the crowd between it and the next, and so
/// on (what is left after the last order is the crowd behind). Returns the
/// fills of the orders, in time order; every order's crowd ahead shrinks
/// by the crowd taken before it. The fills are not applied.
pub(crate) fn allocate(
    queues: &Queues,
    orders: &mut BTreeMap<u64, Working>,
    bid: bool,
    price: i64,
    qty: i64,
) -> Vec<(u64, i64)> {
    let mut left = qty;
    let mut crowd = 0;
    let mut fills = Vec::new();
    for id in queues.at(bid, price) {
        let Some(w) = orders.get_mut(&id) else {
            continue;
        };
        if left > 0 {
            let gap = (w.ahead - crowd).max(0);
            let taken = left.min(gap);
            left -= taken;
            crowd += taken;
            if left > 0 {
                let f = left.min(w.remaining());
                if f > 0 {
                    fills.push((id, f));
                    left -= f;
                }
            }
        }
        w.ahead = (w.ahead - crowd).max(0);
    }
    fills
}

/// The level at `price` now holds `size`: no order's crowd ahead is more
/// than the crowd there (`size` less the resting orders).
pub(crate) fn resized(
    queues: &Queues,
    orders: &mut BTreeMap<u64, Working>,
    bid: bool,
    price: i64,
    size: i64,
) {
    let crowd = (size - resting_at(queues, orders, bid, price)).max(0);
    for id in queues.at(bid, price) {
        if let Some(w) = orders.get_mut(&id) {
            w.ahead = w.ahead.min(crowd);
        }
    }
}
