//! What an embedding program sees of the feed, on the feed's thread: each
//! message's events, with the books as that message left them.
//!
//! A [`Feed`](super::Feed) built with a handler ([`OnEvent`], or any
//! `FnMut(&Update)`) calls it once per message that brought events (and
//! once per REST snapshot applied, and once when a line going down ends
//! books), after the message is applied: [`Update::book`] is the book as
//! of that message, never a later one. Nothing here allocates or copies
//! a book: an update borrows the venue's state for the call.

use std::fmt;

use tickwire_venues::book::Book;
use tickwire_venues::decimal::format_wire;
use tickwire_venues::{InstrumentId, InstrumentSpec, Kind, VenueAdapter};

use super::VenueSetup;
use super::connectivity::Connectivity;
use crate::id::{Event, FeedId, VenueId};
use crate::trading::{Desk, Trading};

/// An order event as the feed hands it on: about the instrument its
/// [`FeedId`] names.
pub type OrderEvent = tickwire_trade::OrderEvent<FeedId>;

/// The embedding program's handler of the feed's updates.
pub trait OnEvent {
    /// Whether it wants updates at all (a feed that only publishes to its
    /// sinks keeps no event for it).
    const EVENTS: bool = true;

    /// One message's events (or a snapshot's, or a line's end), after the
    /// books took them.
    fn on_update(&mut self, update: &Update<'_>);

    /// A venue's connection news: its first connection failed (it is
    /// unreachable, and why: a certificate not trusted, a refused port, a
    /// name that does not resolve), or its first connection opened. Told
    /// on connection events only, never per message; by default ignored
    /// ([`VenueStats::status`](super::VenueStats::status) says the same
    /// between polls).
    fn on_connectivity(&mut self, news: &Connectivity<'_>) {
        let _ = news;
    }
}

impl<F: FnMut(&Update<'_>)> OnEvent for F {
    fn on_update(&mut self, update: &Update<'_>) {
        self(update)
    }
}

/// The handler of a feed that only publishes to its sinks.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHandler;

impl OnEvent for NoHandler {
    const EVENTS: bool = false;

    fn on_update(&mut self, _update: &Update<'_>) {}
}

/// One message's events from one venue, with that venue's books as the
/// message left them. Instrument ids are the feed's (the ones in
/// [`Feed::instruments`](super::Feed::instruments)).
pub struct Update<'a> {
    events: &'a [Event],
    setup: &'a VenueSetup,
    /// The venue's adapter: its books.
    books: &'a dyn VenueAdapter,
    /// The feed-wide id of the venue's first instrument.
    base: u32,
    venue: VenueId,
    recv_tsc: u64,
    /// The feed's trading sessions, and this venue's, if it trades.
    trading: Option<(&'a Trading, usize)>,
    /// The order events of this update (its trading session's message).
    orders: &'a [OrderEvent],
}

impl<'a> Update<'a> {
    pub(crate) fn new(
        events: &'a [Event],
        setup: &'a VenueSetup,
        books: &'a dyn VenueAdapter,
        base: u32,
        (venue, recv_tsc): (VenueId, u64),
    ) -> Update<'a> {
        Update {
            events,
            setup,
            books,
            base,
            venue,
            recv_tsc,
            trading: None,
            orders: &[],
        }
    }

    /// The same update with venue `v`'s trading session (its desk) and
    /// the order events `trading` holds now.
    pub(crate) fn with_trading(mut self, trading: &'a Trading, v: usize) -> Update<'a> {
        self.orders = &trading.orders;
        self.trading = trading
            .by_venue
            .get(v)
            .copied()
            .flatten()
            .map(|t| (trading, t));
        self
    }

    /// The order events this update brings: acceptances, amends, fills,
    /// cancels and refusals of the venue's trading session
    /// ([`FeedBuilder::trade`](crate::FeedBuilder::trade)), from one of its
    /// messages (then [`events`](Self::events) is empty) or refusals of
    /// requests the handler made, handed back as it returned. Empty for a
    /// market-data message.
    pub fn orders(&self) -> &'a [OrderEvent] {
        self.orders
    }

    /// The venue's order handle, if the venue trades
    /// ([`FeedBuilder::trade`](crate::FeedBuilder::trade)): place, amend
    /// and cancel from here, without blocking; the requests leave on the
    /// feed's thread as this handler returns. An order placed from a
    /// market-data update is measured from that message's read
    /// ([`recv_tsc`](Self::recv_tsc)) to its bytes handed to the driver
    /// (the `tick_to_trade` stage).
    pub fn desk(&self) -> Option<Desk<'a>> {
        let (trading, t) = self.trading?;
        // Tick to trade is from a market message: not from an order
        // event's, nor a line's going down.
        let from = if self.events.is_empty() {
            0
        } else {
            self.recv_tsc
        };
        Some(Desk::new(trading, t, from))
    }

    /// The events, in the order the venue's message gave them.
    pub fn events(&self) -> &'a [Event] {
        self.events
    }

    /// The venue's name (`binance-spot`, or the one it was given).
    pub fn venue(&self) -> &'a str {
        &self.setup.name
    }

    /// The venue's handle in the feed (the one
    /// [`Feed::venue`](super::Feed::venue) gives for its name).
    pub fn venue_id(&self) -> VenueId {
        self.venue
    }

    /// When the message was read: the TSC stamp of the read's end (ticks;
    /// [`tickwire_tsc::calibration`] turns ticks into nanoseconds). For a
    /// REST snapshot's update, when the response was handled; for a line
    /// going down, when that was noticed.
    pub fn recv_tsc(&self) -> u64 {
        self.recv_tsc
    }

    /// The venue's own index of a feed instrument id, if it is this venue's.
    fn local(&self, id: FeedId) -> Option<usize> {
        let i = id.0.checked_sub(self.base)? as usize;
        (i < self.setup.instruments.len()).then_some(i)
    }

    /// An instrument's spec: symbol, scales, depth.
    pub fn spec(&self, id: FeedId) -> Option<&'a InstrumentSpec> {
        self.setup.instruments.get(self.local(id)?)
    }

    /// An instrument's symbol as the venue writes it (empty if it is not
    /// this venue's).
    pub fn symbol(&self, id: FeedId) -> &'a str {
        self.spec(id).map_or("", |s| s.symbol.as_str())
    }

    /// An instrument's book as this message left it, while valid.
    pub fn book(&self, id: FeedId) -> Option<&'a Book> {
        let local = InstrumentId(self.local(id)? as u32);
        self.books.book(local)
    }

    /// Every instrument whose book this update touched, with its book as
    /// the message left it: `Some` while valid, `None` when the update
    /// made it invalid (a gap, a resync, its line gone). Each instrument
    /// once per run of its book events (a venue's message brings one
    /// instrument's together), so a bot that keeps a top of book clears
    /// it on `None` rather than keep a stale one.
    pub fn books(&self) -> impl Iterator<Item = (FeedId, Option<&'a Book>)> + 'a {
        let events = self.events;
        let this = *self;
        events
            .iter()
            .enumerate()
            .filter(move |(n, e)| {
                is_book(&e.kind)
                    && events[*n + 1..]
                        .iter()
                        .find(|next| is_book(&next.kind))
                        .is_none_or(|next| next.instrument != e.instrument)
            })
            .map(move |(_, e)| (e.instrument, this.book(e.instrument)))
    }

    /// A price of an instrument, in its ticks, as an exact decimal.
    pub fn price(&self, id: FeedId, ticks: i64) -> Fixed {
        Fixed::new(ticks, self.spec(id).map_or(0, |s| s.price_scale))
    }

    /// A size of an instrument, in its lots, as an exact decimal.
    pub fn size(&self, id: FeedId, lots: i64) -> Fixed {
        Fixed::new(lots, self.spec(id).map_or(0, |s| s.size_scale))
    }
}

impl Clone for Update<'_> {
    fn clone(&self) -> Self {
        *self
    }
}

impl Copy for Update<'_> {}

impl fmt::Debug for Update<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Update")
            .field("venue", &self.venue())
            .field("events", &self.events)
            .field("orders", &self.orders)
            .finish()
    }
}

/// Whether an event is about an instrument's book.
fn is_book(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::BookSnapshot { .. }
            | Kind::BookDelta { .. }
            | Kind::BookValid { .. }
            | Kind::Gap { .. }
            | Kind::Resync
    )
}

/// An integer and its number of decimals: prints as the exact decimal
/// (`Fixed::new(6000012, 2)` is `60000.12`), without floating point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed {
    /// The value in units of 10^-scale.
    pub value: i64,
    /// Decimal places.
    pub scale: u8,
}

impl Fixed {
    /// `value` × 10^-`scale`.
    pub fn new(value: i64, scale: u8) -> Fixed {
        Fixed { value, scale }
    }

    /// The nearest `f64` (for arithmetic where exactness does not matter).
    pub fn to_f64(self) -> f64 {
        self.value as f64 / 10f64.powi(i32::from(self.scale))
    }
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The venues' own exact formatter, every decimal kept.
        let mut buf = [0u8; 48];
        let (n, _) = format_wire(self.value, self.scale, self.scale, &mut buf);
        f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::Fixed;

    #[test]
    fn fixed_prints_exact_decimals() {
        assert_eq!(Fixed::new(6_000_012, 2).to_string(), "60000.12");
        assert_eq!(Fixed::new(5, 3).to_string(), "0.005");
        assert_eq!(Fixed::new(-5, 3).to_string(), "-0.005");
        assert_eq!(Fixed::new(42, 0).to_string(), "42");
        assert_eq!(Fixed::new(i64::MIN, 2).to_string(), "-92233720368547758.08");
    }
}
