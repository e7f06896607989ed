//! Normalised market-data events: what every venue adapter emits, whatever
//! the venue's wire format.
//!
//! Prices and sizes are integers at the instrument's scales
//! ([`InstrumentSpec`]), parsed exactly from the wire. An [`Event`] is
//! `Copy`, has no borrows and a fixed size, so it can be queued, written to
//! a shared-memory ring or compared in a test without allocating.
//!
//! # Order book events
//!
//! A consumer rebuilds a book from the events of its instrument alone:
//!
//! - [`Kind::BookSnapshot`]: forget the book; the next `bids + asks`
//!   [`Kind::BookDelta`] events (bids best first, then asks best first) are
//!   its levels; then [`Kind::BookValid`]. It also says how many levels a
//!   side the book keeps (`depth`): after each delta, keep only the best
//!   `depth` levels of its side.
//! - [`Kind::BookDelta`]: set the level at `price` to `size` (0 removes it).
//!   `last` marks the final level of one venue message: between two `last`
//!   deltas the book may be half-updated (even crossed).
//! - [`Kind::Gap`]: the book is wrong from here; forget it. Nothing is said
//!   about the book until the next snapshot and `BookValid`.
//! - [`Kind::Rejected`]: the venue refused the instrument's subscription;
//!   the book stays silent until a later subscription is accepted.
//! - [`Kind::Resync`]: a new snapshot has been asked for (Binance: the
//!   adapter's owner must fetch the REST snapshot and hand it to the
//!   adapter's `on_snapshot_at`; venues with in-band snapshots:
//!   resubscribe). After a disconnect, a REST snapshot is asked for at the
//!   new connection's first diff, not at the `Gap`: fetched before the
//!   stream is back it could not bridge. A `Resync` with no `Gap` before
//!   it, while the book is valid, is a refresh (Binance): the book stays
//!   valid, and the snapshot deepens it when it comes
//!   ([`SyncEvent::RefreshNeeded`](crate::sync::SyncEvent::RefreshNeeded)).
//!
//! No delta, snapshot or `BookValid` is ever emitted for a book that is not
//! in step with the venue, and a message's deltas are emitted only after
//! the whole message was applied and checked (sequence, crossing, checksum).
//!
//! # The shown depth is exact while the book is valid
//!
//! A book shows `depth` levels a side ([`InstrumentSpec::depth`], repeated
//! in each `BookSnapshot`), and while it is valid those are exactly the
//! venue's best `depth` levels (or all of a side that has fewer). To keep
//! that true as levels come and go, the book keeps more levels below the
//! shown ones than it shows: as many as the venue keeps complete on the
//! wire (Kraken, Bybit, OKX send the levels that enter their window), or,
//! where the venue sends every change of its whole book (Binance, Coinbase,
//! Deribit), as many as its snapshot gave, tracking the worst price below
//! which it knows nothing. When fewer than `depth` known levels are left
//! on a side that has more, the shown depth cannot be guaranteed and the
//! book gaps with [`Resync::DepthExhausted`], then resyncs. Deltas describe
//! the shown levels only: a change below them says nothing, and a level
//! that enters the shown depth is sent as a delta of its own.

use crate::model::{Resync, Side};

/// An instrument's index in its adapter's table, assigned in the order the
/// instruments were given: local to one venue adapter. (A feed that runs
/// several venues numbers its instruments with an id type of its own, and
/// hands on `Event<ThatId>`.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrumentId(pub u32);

/// One normalised event, about the instrument `I` names: an adapter's
/// events carry its own [`InstrumentId`]; a feed that gathers several
/// adapters renumbers them into its own id type ([`Event::with_instrument`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<I = InstrumentId> {
    /// Which instrument (a connection's [`Kind::Disconnected`] comes once
    /// for each instrument it carried).
    pub instrument: I,
    /// The venue's timestamp of the event, ns since the Unix epoch (at the
    /// venue's own resolution, usually ms or µs); 0 when it sends none.
    pub exchange_ns: u64,
    /// The local receive stamp the adapter was handed with the message
    /// (TSC ticks in tickwire-net), carried through untouched.
    pub recv_tsc: u64,
    /// What happened.
    pub kind: Kind,
}

impl<I> Event<I> {
    /// The same event about the instrument `id` names (a feed's own id
    /// for the adapter's instrument).
    pub fn with_instrument<J>(self, id: J) -> Event<J> {
        Event {
            instrument: id,
            exchange_ns: self.exchange_ns,
            recv_tsc: self.recv_tsc,
            kind: self.kind,
        }
    }
}

/// Who took liquidity in a trade.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aggressor {
    /// The buyer was the taker.
    Buy,
    /// The seller was the taker.
    Sell,
    /// The venue does not say.
    Unknown,
}

/// What an [`Event`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A trade (for Binance `aggTrade`: an aggregate trade).
    Trade {
        /// Price at the instrument's price scale.
        price: i64,
        /// Size at the instrument's size scale.
        size: i64,
        /// Who took liquidity.
        aggressor: Aggressor,
        /// The venue's trade id (0 when it has no numeric one).
        trade_id: u64,
    },
    /// Best bid and ask. A side with size 0 is empty.
    Quote {
        /// Best bid price.
        bid_price: i64,
        /// Size at the best bid.
        bid_size: i64,
        /// Best ask price.
        ask_price: i64,
        /// Size at the best ask.
        ask_size: i64,
        /// The venue's update id for the quote (0 when it sends none).
        update_id: u64,
    },
    /// The book is replaced by the `bids + asks` levels that follow, as
    /// [`Kind::BookDelta`] events.
    BookSnapshot {
        /// The update id the snapshot is current to.
        update_id: u64,
        /// Bid levels that follow.
        bids: u32,
        /// Ask levels that follow.
        asks: u32,
        /// Levels the book keeps a side: a consumer that keeps only the
        /// best `depth` after each delta holds exactly the adapter's book
        /// (venues such as Kraken rely on the client truncating).
        depth: u32,
    },
    /// One level's new size (0: the level is gone).
    BookDelta {
        /// The side.
        side: Side,
        /// Price at the instrument's price scale.
        price: i64,
        /// Size at the instrument's size scale.
        size: i64,
        /// The venue's update id of the message the level came in.
        update_id: u64,
        /// The message's (or snapshot's) final level.
        last: bool,
    },
    /// The book is in step with the venue, up to `update_id`.
    BookValid {
        /// The last update id applied.
        update_id: u64,
    },
    /// The book is wrong from here on, and why.
    Gap {
        /// What broke.
        why: Resync,
    },
    /// A fresh snapshot has been requested for the book.
    Resync,
    /// The connection carrying the instrument went down (emitted by the
    /// feed, once for each instrument of the connection, then a `Gap`
    /// for each book).
    Disconnected,
    /// The venue refused a subscription of the instrument (an unknown
    /// symbol or channel, a bad depth): nothing will come for it until a
    /// later subscription is accepted. The venue's own words are in the
    /// adapter's [`VenueAdapter::rejection`](crate::VenueAdapter::rejection).
    Rejected {
        /// The venue's error code, where it sends a number (0 if not).
        code: i64,
    },
}

/// An instrument as its adapter is told about it at subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstrumentSpec {
    /// The symbol exactly as the venue sends it in messages (`BTCUSDT`,
    /// `BTC-USDT`, `BTC/USD`, `BTC-PERPETUAL`).
    pub symbol: String,
    /// Decimal places of prices (from the venue's tick size).
    pub price_scale: u8,
    /// Decimal places of sizes (from the venue's lot size).
    pub size_scale: u8,
    /// Book levels shown per side (exact while the book is valid); 0: no
    /// book for this instrument.
    pub depth: usize,
}

impl InstrumentSpec {
    /// An instrument with a book of `depth` levels per side.
    pub fn new(symbol: &str, price_scale: u8, size_scale: u8, depth: usize) -> InstrumentSpec {
        InstrumentSpec {
            symbol: symbol.to_owned(),
            price_scale,
            size_scale,
            depth,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_small_and_has_no_drop() {
        // The shared-memory ring stores events as fixed-size records; a
        // growing event would silently shrink its capacity.
        assert!(size_of::<Event>() <= 72, "{}", size_of::<Event>());
        assert!(!std::mem::needs_drop::<Event>());
    }
}
