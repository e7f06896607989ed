//! [`Desk`]: what a handler trades with, from the update that shows it
//! the book. Nothing here blocks or allocates: a request goes into the
//! feed's queue (allocated once) and is answered at once with its client
//! id, or refused at once ([`Reject::NotReady`] before the session is
//! reconciled, [`Reject::Full`] when the queue is, an instrument not the
//! venue's). The feed hands the queue to the session right after the
//! handler returns and sends the messages on the feed's thread; what the
//! session itself refuses then (its rate limit, a duplicate, a bad value)
//! comes back as an [`OrderKind::Rejected`](tickwire_trade::OrderKind)
//! event in the next `Update::orders`.

use std::fmt;

use tickwire_trade::{
    ClientOrderId, Limit, OpenOrder, OpenOrders, Reject, Request, Side, State, TimeInForce,
};
use tickwire_venues::InstrumentId;

use super::host::Trading;
use crate::id::FeedId;

/// A trading venue's order handle, for the length of one handler call
/// (`Update::desk`).
#[derive(Clone, Copy)]
pub struct Desk<'a> {
    trading: &'a Trading,
    trader: usize,
    /// The read stamp of the message being handled (tick-to-trade).
    recv_tsc: u64,
}

impl fmt::Debug for Desk<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.trading.traders[self.trader];
        f.debug_struct("Desk")
            .field("venue", &t.name)
            .field("state", &t.session.state())
            .finish()
    }
}

impl<'a> Desk<'a> {
    pub(crate) fn new(trading: &'a Trading, trader: usize, recv_tsc: u64) -> Desk<'a> {
        Desk {
            trading,
            trader,
            recv_tsc,
        }
    }

    fn t(&self) -> &'a super::host::Trader {
        &self.trading.traders[self.trader]
    }

    /// Where the session is: orders are taken while `Ready`.
    pub fn state(&self) -> State {
        self.t().session.state()
    }

    /// The venue's name.
    pub fn venue(&self) -> &'a str {
        &self.t().name
    }

    /// The orders working, as the session knows them (their instruments
    /// the venue's own indexes: [`feed_id`](Self::feed_id) names them).
    pub fn open_orders(&self) -> &'a OpenOrders {
        self.t().session.open_orders()
    }

    /// A working order by its client id.
    pub fn order(&self, cid: ClientOrderId) -> Option<&'a OpenOrder> {
        self.open_orders().get(cid)
    }

    /// The feed-wide id of a working order's instrument.
    pub fn feed_id(&self, order: &OpenOrder) -> FeedId {
        FeedId(self.t().base + order.instrument.0)
    }

    /// A good-till-cancelled limit order: `side` (`Bid` buys), `price` in
    /// the instrument's ticks, `size` in its lots.
    pub fn place(
        &self,
        instrument: FeedId,
        side: Side,
        price: i64,
        size: i64,
    ) -> Result<ClientOrderId, Reject> {
        self.place_limit(
            instrument,
            side,
            price,
            size,
            TimeInForce::GoodTillCancel,
            false,
        )
    }

    /// A limit order with its time in force, maker-only (`post_only`:
    /// refused rather than take liquidity) or not.
    pub fn place_limit(
        &self,
        instrument: FeedId,
        side: Side,
        price: i64,
        size: i64,
        tif: TimeInForce,
        post_only: bool,
    ) -> Result<ClientOrderId, Reject> {
        let local = self.local(instrument)?;
        self.ready()?;
        let cid = self.t().take_cid();
        let order = Limit {
            instrument: local,
            side,
            price,
            size,
            tif,
            post_only,
        };
        self.queue(Request::Place { cid, order })?;
        Ok(cid)
    }

    /// A working order's new price and size (its total size, in lots).
    /// Returns its client id once amended: the same one, or a new one
    /// where the venue renames amended orders (Binance).
    pub fn amend(
        &self,
        cid: ClientOrderId,
        price: i64,
        size: i64,
    ) -> Result<ClientOrderId, Reject> {
        self.ready()?;
        if self.order(cid).is_none() {
            return Err(Reject::UnknownOrder);
        }
        let new_cid = if self.t().renames {
            self.t().take_cid()
        } else {
            cid
        };
        self.queue(Request::Amend {
            cid,
            new_cid,
            price,
            size,
        })?;
        Ok(new_cid)
    }

    /// Cancels one order.
    pub fn cancel(&self, cid: ClientOrderId) -> Result<(), Reject> {
        self.ready()?;
        self.queue(Request::Cancel { cid })
    }

    /// Cancels every order of the session.
    pub fn cancel_all(&self) -> Result<(), Reject> {
        self.ready()?;
        self.queue(Request::CancelAll { instrument: None })
    }

    /// Cancels every order of one instrument.
    pub fn cancel_instrument(&self, instrument: FeedId) -> Result<(), Reject> {
        let local = self.local(instrument)?;
        self.ready()?;
        self.queue(Request::CancelAll {
            instrument: Some(local),
        })
    }

    /// Ready, and the feed not shutting down (its kill switch cancels).
    fn ready(&self) -> Result<(), Reject> {
        match self.state() {
            State::Ready if !self.trading.closing => Ok(()),
            _ => Err(Reject::NotReady),
        }
    }

    fn local(&self, id: FeedId) -> Result<InstrumentId, Reject> {
        let t = self.t();
        match id.0.checked_sub(t.base) {
            Some(i) if i < t.instruments => Ok(InstrumentId(i)),
            _ => Err(Reject::UnknownInstrument),
        }
    }

    fn queue(&self, request: Request) -> Result<(), Reject> {
        self.trading.enqueue(self.trader, request, self.recv_tsc)
    }
}
