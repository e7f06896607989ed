//! The bot the trading tests run: it places (one order kept working, a
//! burst at once, or a place / cancel cycle) through the desk of the
//! update that shows it the book, and keeps what it was told.

use tickwire_feed::{FeedId, OnEvent, Update};
use tickwire_trade::{ClientOrderId, OrderKind, Reject, Side, State};

/// What the bot's handler does and saw.
pub(super) struct Bot {
    /// Its orders' size, in lots.
    pub(super) size: i64,
    /// How far under the best bid it bids, in spreads.
    pub(super) away: i64,
    /// Place one bid on each update while none works and none is asked
    /// for (a quoting bot's simplest rule).
    pub(super) keep_one: bool,
    /// Place this many bids at the next book update, once.
    pub(super) burst: usize,
    /// Cancel each order as it is acknowledged (the warm loop).
    pub(super) cycle: bool,
    /// What the desk answered at once.
    pub(super) placed: Vec<ClientOrderId>,
    pub(super) refused_at_once: Vec<Reject>,
    /// The order events, in order.
    pub(super) orders: Vec<tickwire_feed::live::OrderEvent>,
    /// An order asked for and not yet acknowledged.
    pub(super) asked: Option<ClientOrderId>,
    /// A cancel asked for and not yet answered.
    pub(super) cancelling: Option<ClientOrderId>,
    pub(super) acks: u64,
    pub(super) cancels: u64,
    /// Whether the last update was a market one with a desk.
    pub(super) book: Option<FeedId>,
    /// The session's state at the last update with a desk.
    pub(super) state: Option<State>,
    /// The desk's working orders at the last update with a desk.
    pub(super) open: usize,
    /// panic once this many acks were seen (0: never).
    pub(super) panic_at_acks: u64,
}

impl Default for Bot {
    fn default() -> Bot {
        Bot {
            size: 1,
            away: 100,
            keep_one: false,
            burst: 0,
            cycle: false,
            placed: Vec::new(),
            refused_at_once: Vec::new(),
            orders: Vec::new(),
            asked: None,
            cancelling: None,
            acks: 0,
            cancels: 0,
            book: None,
            state: None,
            open: 0,
            panic_at_acks: 0,
        }
    }
}

impl OnEvent for Bot {
    fn on_update(&mut self, u: &Update<'_>) {
        for e in u.orders() {
            if self.orders.len() < self.orders.capacity() || !self.cycle {
                self.orders.push(*e);
            }
            match e.kind {
                OrderKind::Accepted { .. } => {
                    self.acks += 1;
                    if self.asked == e.cid {
                        self.asked = None;
                    }
                }
                OrderKind::Canceled => self.cancels += 1,
                OrderKind::Rejected { .. } if self.asked == e.cid => self.asked = None,
                _ => {}
            }
            if matches!(e.kind, OrderKind::Canceled | OrderKind::Rejected { .. })
                && self.cancelling == e.cid
            {
                // Done, or refused (its rate limit): asked again below.
                self.cancelling = None;
            }
            if self.cycle
                && self.cancelling.is_none()
                && matches!(e.kind, OrderKind::Accepted { .. })
                && let (Some(desk), Some(cid)) = (u.desk(), e.cid)
                && desk.cancel(cid).is_ok()
            {
                self.cancelling = Some(cid);
            }
        }
        if self.panic_at_acks > 0 && self.acks >= self.panic_at_acks {
            panic!("the bot's handler panics");
        }
        let Some(desk) = u.desk() else {
            return;
        };
        let Some((id, Some(book))) = u.books().last() else {
            return;
        };
        self.book = Some(id);
        let Some((bid, ask)) = book.top() else {
            return;
        };
        self.state = Some(desk.state());
        self.open = desk.open_orders().len();
        let ready = desk.state() == State::Ready;
        if !ready {
            // Requests in flight are forgotten with the connection: the
            // session's reconciliation says what works.
            self.asked = None;
            self.cancelling = None;
        }
        if self.cycle
            && ready
            && self.cancelling.is_none()
            && let Some(o) = desk.open_orders().iter().next()
            && desk.cancel(o.cid).is_ok()
        {
            self.cancelling = Some(o.cid);
        }
        let n = if self.burst > 0 && ready {
            std::mem::take(&mut self.burst)
        } else if (self.keep_one || self.cycle)
            && self.asked.is_none()
            && desk.open_orders().is_empty()
        {
            1
        } else {
            0
        };
        for _ in 0..n {
            let price = bid.price - self.away * (ask.price - bid.price);
            match desk.place(id, Side::Bid, price, self.size) {
                Ok(cid) => {
                    if self.placed.len() < self.placed.capacity() || !self.cycle {
                        self.placed.push(cid);
                    }
                    self.asked = Some(cid);
                }
                Err(r) => {
                    if self.refused_at_once.len() < self.refused_at_once.capacity() || !self.cycle {
                        self.refused_at_once.push(r);
                    }
                }
            }
        }
    }
}
