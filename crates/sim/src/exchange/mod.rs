//! The simulator's matching engine: accounts ([`SimKey`]), orders resting
//! in the simulated books, and what trades them. Venue modules reach it
//! through `Market`'s `place`, `cancel`, `amend`,
//! `cancel_all`, `open_orders` and `key`, with the market locked, so a
//! request sees books and orders at once.
//!
//! # Rules
//!
//! - **Price-time priority.** Orders rest by price, then time. A resting
//!   order's size is part of the public book level at its price, so every
//!   venue's market data shows it; each resting order remembers the crowd
//!   size queued ahead of it when it joined the level (its `ahead`).
//! - **Crossing orders take.** A buy at or above the best ask (a sell at
//!   or below the best bid) fills against the levels best first, up to its
//!   limit, as a taker: each level it takes from shrinks in the public
//!   book, and one public trade per level is printed, the taker's side the
//!   aggressor. Within a level the crowd queued ahead of resting orders
//!   fills first, then the resting orders in time order (as makers: a
//!   private `Trade` each), then the crowd behind them. What is left rests
//!   (`Gtc`), expires (`Ioc`: status `Expired`), or, for `Fok`, the whole
//!   order is refused ([`EngineReject::Fok`]) unless the book holds enough
//!   within its limit. A post-only order that would take is refused
//!   ([`EngineReject::WouldTake`]).
//! - **No self-trade prevention.** An order crossing a resting order of
//!   the same account fills against it as against any other liquidity
//!   (both sides get their fills). Venues that prevent self-trades do it
//!   in their own module, before placing.
//! - **Amend.** A size-down at the same price keeps the order's place in
//!   the queue; a new price, or a larger size, loses it: the order leaves
//!   its level and is entered again as a new order would be (it may
//!   take, if its new price crosses and it is not post-only; refused with
//!   `WouldTake` if it is, the order left as it was). The new size is the
//!   order's total and must exceed what has filled.
//! - **Public reflection.** Every change the engine makes to a book is a
//!   market [`Step`] (the levels changed, the trade if any, the update ids
//!   moved on exactly as the random walk's steps move them, jumping ids
//!   included), queued in the exchange and written to every client by the
//!   server right after the request that caused it, before any further
//!   random step: every venue's feed keeps a book equal to the
//!   simulator's.
//! - **Random trades fill resting orders.** A random step's trade at a
//!   level holding resting orders takes the crowd ahead of them first,
//!   then them in time order (private `Trade` events, maker). The random
//!   walk never shrinks a level below the size resting there, and its mid
//!   stays between the best resting bid and ask: the other side never
//!   crosses a resting order, which the walk goes past only once random
//!   trades have filled it. (A level that shrinks takes from the crowd
//!   ahead as much as needed to fit: crowd never outnumbers the level.)
//!   Instruments without resting orders step exactly as before.
//! - **Private events.** Every change to an order is one event, queued in
//!   the exchange: [`PrivateEvent::Order`] when it is placed (status `New`,
//!   nothing filled, before any fill), amended, cancelled or expired;
//!   [`PrivateEvent::Trade`] for each fill (the order's state after it).
//!   The server hands each batch to every client's `on_private` right
//!   after the request or step batch that made it (each picks its own
//!   account's), then drops it.

mod accounts;
mod book;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::market::{self, Book, SimInstrument, Step, Trade};
pub(crate) use accounts::Account;
use accounts::Accounts;
pub use accounts::{KeySecret, SimKey};
use book::{Queues, Working};

/// The highest price the engine takes, in ticks: far past any market, and
/// low enough that the random walk's arithmetic around a resting order
/// never overflows. (Venues refuse much nearer prices by their own
/// bands, in their modules.)
pub(crate) const MAX_PRICE: i64 = i64::MAX / 4;

/// The largest size the engine takes, in lots: low enough that the sizes
/// of a level add up without overflowing.
pub(crate) const MAX_SIZE: i64 = i64::MAX / (1 << 20);

/// How long an order works.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Tif {
    /// Rests until filled or cancelled.
    #[default]
    Gtc,
    /// Takes what it can at once; the rest expires.
    Ioc,
    /// Fills whole at once, or is refused.
    Fok,
}

/// An order a venue module asks the engine to place. Price and size are
/// in ticks and lots at the instrument's scales ([`SimInstrument`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NewOrder {
    pub(crate) account: Account,
    /// Index into the market's instruments.
    pub(crate) instrument: usize,
    pub(crate) buy: bool,
    pub(crate) price: i64,
    pub(crate) size: i64,
    pub(crate) tif: Tif,
    pub(crate) post_only: bool,
    /// The client's id (Deribit `label`, Binance `newClientOrderId`):
    /// unique among the account's working orders unless empty.
    pub(crate) client_id: String,
}

/// Where an order stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Working, nothing filled.
    New,
    /// Working, part filled.
    PartiallyFilled,
    /// Filled whole.
    Filled,
    /// Cancelled by its owner (or for it: cancel-on-disconnect).
    Canceled,
    /// Refused.
    Rejected,
    /// Ended by its type's rule: an IOC order's remainder.
    Expired,
}

/// An order in the engine: its state after its last change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimOrder {
    /// The engine's id (the venue's order id), from 1, in time order.
    pub id: u64,
    /// The account (the index of its key in [`SimConfig::keys`](crate::SimConfig::keys)).
    pub account: usize,
    /// Index into [`SimConfig::instruments`](crate::SimConfig::instruments).
    pub instrument: usize,
    /// The client's id for it (may be empty).
    pub client_id: String,
    /// A buy (or a sell).
    pub buy: bool,
    /// Limit price, in ticks.
    pub price: i64,
    /// Total size, in lots.
    pub size: i64,
    /// Filled so far, in lots.
    pub filled: i64,
    /// Where it stands.
    pub status: Status,
    /// Placed at (ms since the Unix epoch).
    pub created_ms: u64,
    /// Last changed at (ms since the Unix epoch).
    pub updated_ms: u64,
}

/// Why the engine refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EngineReject {
    /// Post-only, and it would take.
    WouldTake,
    /// No working order of the account has that id (or client id).
    UnknownOrder,
    /// The price is not a positive number of ticks (up to [`MAX_PRICE`]).
    BadPrice,
    /// The size is not positive (or, amending, not above what filled), or
    /// past [`MAX_SIZE`].
    BadSize,
    /// The account has a working order with that client id.
    DuplicateClientId,
    /// The order is not working any more.
    NotOpen,
    /// Fill-or-kill, and the book cannot fill it whole.
    Fok,
    /// No such instrument.
    UnknownInstrument,
}

/// A change to an account's order (see the module's rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PrivateEvent {
    /// Placed, amended, cancelled or expired: its state after.
    Order(SimOrder),
    /// A fill: the order's state after it, and the fill.
    Trade {
        order: SimOrder,
        /// The public trade's id (one per level taken).
        trade_id: u64,
        price: i64,
        size: i64,
        /// The order was resting (else it took).
        maker: bool,
        time_ms: u64,
    },
}

impl PrivateEvent {
    /// The order the event is about.
    pub(crate) fn order(&self) -> &SimOrder {
        match self {
            PrivateEvent::Order(o) | PrivateEvent::Trade { order: o, .. } => o,
        }
    }
}

/// The engine: keys, working orders, and what its changes owe the clients.
#[derive(Debug)]
pub(crate) struct Exchange {
    accounts: Accounts,
    /// Working orders by id (ids grow with time).
    orders: BTreeMap<u64, Working>,
    /// Each instrument's resting orders.
    queues: Vec<Queues>,
    next_id: u64,
    /// Draws the gaps of jumping update ids in the engine's own steps.
    rng: StdRng,
    /// Steps made by requests, to be written to every client.
    pub(crate) steps: Vec<Step>,
    /// Private events not yet handed to the clients.
    pub(crate) events: Vec<PrivateEvent>,
    /// Calls from venue modules so far (requests and key look-ups): the
    /// server tells by it which clients trade.
    touched: Cell<u64>,
}

impl Exchange {
    /// An engine for `instruments` books, with `keys`; `seed` draws its
    /// id gaps.
    pub(crate) fn new(keys: Vec<SimKey>, instruments: usize, seed: u64) -> Exchange {
        Exchange {
            accounts: Accounts::new(keys),
            orders: BTreeMap::new(),
            queues: vec![Queues::default(); instruments],
            next_id: 0,
            rng: StdRng::seed_from_u64(seed ^ 0x6578_6368_616e_6765),
            steps: Vec::new(),
            events: Vec::new(),
            touched: Cell::new(0),
        }
    }

    /// How many calls venue modules have made (see `touched`).
    pub(crate) fn touched(&self) -> u64 {
        self.touched.get()
    }

    fn touch(&self) {
        self.touched.set(self.touched.get() + 1);
    }

    /// The account of `key` and its secret.
    pub(crate) fn key(&self, key: &str) -> Option<(Account, &KeySecret)> {
        self.touch();
        self.accounts.key(key)
    }

    /// The account's working orders (of `instrument`, or all), oldest
    /// first.
    pub(crate) fn open_orders(
        &self,
        account: Account,
        instrument: Option<usize>,
    ) -> impl Iterator<Item = &SimOrder> {
        self.touch();
        self.orders
            .values()
            .map(|w| &w.order)
            .filter(move |o| o.account == account && instrument.is_none_or(|i| o.instrument == i))
    }

    /// Every account's working orders, oldest first.
    pub(crate) fn all_open(&self) -> Vec<SimOrder> {
        self.orders.values().map(|w| w.order.clone()).collect()
    }

    /// Places `o` (see the module's rules).
    pub(crate) fn place(
        &mut self,
        books: &mut [Book],
        o: NewOrder,
        now_ms: u64,
    ) -> Result<SimOrder, EngineReject> {
        self.touch();
        let book = books
            .get_mut(o.instrument)
            .filter(|_| o.instrument < self.queues.len())
            .ok_or(EngineReject::UnknownInstrument)?;
        if !(1..=MAX_PRICE).contains(&o.price) {
            return Err(EngineReject::BadPrice);
        }
        if !(1..=MAX_SIZE).contains(&o.size) {
            return Err(EngineReject::BadSize);
        }
        if !o.client_id.is_empty()
            && self
                .orders
                .values()
                .any(|w| w.order.account == o.account && w.order.client_id == o.client_id)
        {
            return Err(EngineReject::DuplicateClientId);
        }
        if o.post_only && crosses(book, o.buy, o.price) {
            return Err(EngineReject::WouldTake);
        }
        if o.tif == Tif::Fok && available(book, o.buy, o.price) < o.size {
            return Err(EngineReject::Fok);
        }
        self.next_id += 1;
        let order = SimOrder {
            id: self.next_id,
            account: o.account,
            instrument: o.instrument,
            client_id: o.client_id,
            buy: o.buy,
            price: o.price,
            size: o.size,
            filled: 0,
            status: Status::New,
            created_ms: now_ms,
            updated_ms: now_ms,
        };
        self.events.push(PrivateEvent::Order(order.clone()));
        let w = Working {
            order,
            ahead: 0,
            tif: o.tif,
            post_only: o.post_only,
        };
        Ok(self.execute(book, w, now_ms))
    }

    /// Cancels the account's order `id`.
    pub(crate) fn cancel(
        &mut self,
        books: &mut [Book],
        account: Account,
        id: u64,
        now_ms: u64,
    ) -> Result<SimOrder, EngineReject> {
        self.touch();
        match self.orders.get(&id) {
            Some(w) if w.order.account == account => {}
            _ => return Err(EngineReject::UnknownOrder),
        }
        let mut w = self
            .unrest(books, id, now_ms)
            .ok_or(EngineReject::NotOpen)?;
        w.order.status = Status::Canceled;
        w.order.updated_ms = now_ms;
        self.events.push(PrivateEvent::Order(w.order.clone()));
        Ok(w.order)
    }

    /// Cancels the account's working orders (of `instrument`, or all):
    /// how many.
    pub(crate) fn cancel_all(
        &mut self,
        books: &mut [Book],
        account: Account,
        instrument: Option<usize>,
        now_ms: u64,
    ) -> usize {
        self.touch();
        let ids: Vec<u64> = self
            .orders
            .values()
            .filter(|w| {
                w.order.account == account && instrument.is_none_or(|i| w.order.instrument == i)
            })
            .map(|w| w.order.id)
            .collect();
        ids.iter()
            .filter(|&&id| self.cancel(books, account, id, now_ms).is_ok())
            .count()
    }

    /// The account's order `id` at a new price and total size (see the
    /// module's rules).
    pub(crate) fn amend(
        &mut self,
        books: &mut [Book],
        account: Account,
        id: u64,
        price: i64,
        size: i64,
        now_ms: u64,
    ) -> Result<SimOrder, EngineReject> {
        self.touch();
        let w = match self.orders.get(&id) {
            Some(w) if w.order.account == account => w.clone(),
            _ => return Err(EngineReject::UnknownOrder),
        };
        if !(1..=MAX_PRICE).contains(&price) {
            return Err(EngineReject::BadPrice);
        }
        if size <= w.order.filled || size > MAX_SIZE {
            return Err(EngineReject::BadSize);
        }
        let n = w.order.instrument;
        let Some(book) = books.get_mut(n) else {
            return Err(EngineReject::UnknownInstrument);
        };
        if price == w.order.price && size <= w.order.size {
            // Smaller, same price: it keeps its place.
            let less = w.order.size - size;
            let level = level_size(book, w.order.buy, price);
            let order = {
                let Some(kept) = self.orders.get_mut(&id) else {
                    return Err(EngineReject::NotOpen);
                };
                kept.order.size = size;
                kept.order.updated_ms = now_ms;
                kept.order.clone()
            };
            if less > 0 {
                self.publish(book, n, now_ms, None, w.order.buy, price, level - less);
            }
            self.events.push(PrivateEvent::Order(order.clone()));
            return Ok(order);
        }
        if w.post_only && crosses(book, w.order.buy, price) {
            return Err(EngineReject::WouldTake);
        }
        let mut w = self
            .unrest(books, id, now_ms)
            .ok_or(EngineReject::NotOpen)?;
        w.order.price = price;
        w.order.size = size;
        w.order.updated_ms = now_ms;
        self.events.push(PrivateEvent::Order(w.order.clone()));
        Ok(self.execute(&mut books[n], w, now_ms))
    }

    /// One random step of instrument `n` (see [`market::step_around`]):
    /// its resting orders respected and filled by its trade.
    pub(crate) fn step(
        &mut self,
        n: usize,
        spec: &SimInstrument,
        book: &mut Book,
        rng: &mut StdRng,
        trade: bool,
        out: &mut Step,
    ) {
        if self.queues.get(n).is_none_or(Queues::is_empty) {
            market::step(n, spec, book, rng, trade, out);
            return;
        }
        let mut around = Around { ex: self, n };
        market::step_around(n, spec, book, rng, trade, out, Some(&mut around));
    }

    /// Takes from the book what `w` crosses, then rests or expires the
    /// rest; its state after.
    fn execute(&mut self, book: &mut Book, mut w: Working, now_ms: u64) -> SimOrder {
        let n = w.order.instrument;
        let buy = w.order.buy;
        while w.remaining() > 0 {
            let best = if buy {
                book.asks.first_key_value()
            } else {
                book.bids.last_key_value()
            };
            let Some((price, level)) = best.map(|(p, s)| (*p, *s)).filter(|&(p, _)| {
                if buy {
                    p <= w.order.price
                } else {
                    p >= w.order.price
                }
            }) else {
                break;
            };
            let qty = w.remaining().min(level);
            book.trade_id += 1;
            let trade = Trade {
                id: book.trade_id,
                price,
                size: qty,
                buyer_aggressor: buy,
            };
            self.fill_makers(n, !buy, price, qty, &trade, now_ms);
            fill(&mut w.order, qty, now_ms);
            self.events.push(PrivateEvent::Trade {
                order: w.order.clone(),
                trade_id: trade.id,
                price,
                size: qty,
                maker: false,
                time_ms: now_ms,
            });
            self.publish(book, n, now_ms, Some(trade), !buy, price, level - qty);
        }
        let left = w.remaining();
        if left == 0 {
            return w.order;
        }
        if w.tif != Tif::Gtc {
            w.order.status = Status::Expired;
            w.order.updated_ms = now_ms;
            self.events.push(PrivateEvent::Order(w.order.clone()));
            return w.order;
        }
        let price = w.order.price;
        let level = level_size(book, buy, price);
        w.ahead = level - book::resting_at(&self.queues[n], &self.orders, buy, price);
        self.queues[n].push(buy, price, w.order.id);
        let order = w.order.clone();
        self.orders.insert(order.id, w);
        self.publish(
            book,
            n,
            now_ms,
            None,
            buy,
            price,
            level.saturating_add(left),
        );
        order
    }

    /// Shares `qty` taken from the level at `price` between the crowd and
    /// the orders resting there, filling those (maker trades).
    fn fill_makers(&mut self, n: usize, bid: bool, price: i64, qty: i64, t: &Trade, now_ms: u64) {
        let fills = book::allocate(&self.queues[n], &mut self.orders, bid, price, qty);
        for (id, size) in fills {
            let Some(w) = self.orders.get_mut(&id) else {
                continue;
            };
            fill(&mut w.order, size, now_ms);
            let order = w.order.clone();
            if w.remaining() == 0 {
                self.orders.remove(&id);
                self.queues[n].remove(bid, price, id);
            }
            self.events.push(PrivateEvent::Trade {
                order,
                trade_id: t.id,
                price,
                size,
                maker: true,
                time_ms: now_ms,
            });
        }
    }

    /// Takes working order `id` out of its book (the level shrinks, and
    /// the change is published).
    fn unrest(&mut self, books: &mut [Book], id: u64, now_ms: u64) -> Option<Working> {
        let w = self.orders.remove(&id)?;
        let (n, buy, price) = (w.order.instrument, w.order.buy, w.order.price);
        self.queues[n].remove(buy, price, id);
        let book = &mut books[n];
        let level = level_size(book, buy, price);
        self.publish(book, n, now_ms, None, buy, price, level - w.remaining());
        Some(w)
    }

    /// Sets the level at `price` to `size`, as a step every client gets.
    #[allow(clippy::too_many_arguments)]
    fn publish(
        &mut self,
        book: &mut Book,
        n: usize,
        now_ms: u64,
        trade: Option<Trade>,
        bid: bool,
        price: i64,
        size: i64,
    ) {
        let level = [(price, size.max(0))];
        let (bids, asks): (&[_], &[_]) = if bid { (&level, &[]) } else { (&[], &level) };
        let step = market::change(n, book, &mut self.rng, now_ms, trade, bids, asks);
        self.steps.push(step);
    }
}

/// `qty` more of `order` filled.
fn fill(order: &mut SimOrder, qty: i64, now_ms: u64) {
    order.filled += qty;
    order.updated_ms = now_ms;
    order.status = if order.filled >= order.size {
        Status::Filled
    } else {
        Status::PartiallyFilled
    };
}

/// The size of the level at `price` of the bids (`bid`) or asks.
fn level_size(book: &Book, bid: bool, price: i64) -> i64 {
    let side = if bid { &book.bids } else { &book.asks };
    side.get(&price).copied().unwrap_or(0)
}

/// Whether a buy (`buy`) or sell at `price` would take.
fn crosses(book: &Book, buy: bool, price: i64) -> bool {
    if buy {
        book.asks.keys().next().is_some_and(|&a| price >= a)
    } else {
        book.bids.keys().next_back().is_some_and(|&b| price <= b)
    }
}

/// What the book holds for a buy (`buy`) or sell up to `price`.
fn available(book: &Book, buy: bool, price: i64) -> i64 {
    let sizes: Box<dyn Iterator<Item = &i64>> = if buy {
        Box::new(book.asks.range(..=price).map(|(_, s)| s))
    } else {
        Box::new(book.bids.range(price..).map(|(_, s)| s))
    };
    sizes.fold(0, |sum, s| sum.saturating_add(*s))
}

/// The exchange's orders of one instrument, as a random step sees them.
struct Around<'a> {
    ex: &'a mut Exchange,
    n: usize,
}

impl market::Resting for Around<'_> {
    fn traded(&mut self, bid: bool, price: i64, _level: i64, size: i64, t: &Trade, time_ms: u64) {
        self.ex.fill_makers(self.n, bid, price, size, t, time_ms);
    }

    fn floor(&self, bid: bool, price: i64) -> i64 {
        book::resting_at(&self.ex.queues[self.n], &self.ex.orders, bid, price)
    }

    fn inside(&self) -> (Option<i64>, Option<i64>) {
        self.ex.queues[self.n].inside()
    }

    fn resized(&mut self, bid: bool, price: i64, size: i64) {
        book::resized(
            &self.ex.queues[self.n],
            &mut self.ex.orders,
            bid,
            price,
            size,
        );
    }
}
