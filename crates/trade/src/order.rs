//! The venue-neutral vocabulary of order entry: what a bot asks
//! ([`Request`]), what comes back ([`OrderEvent`]), and why a request was
//! refused ([`Reject`]). Every type here is `Copy`, of fixed size and
//! borrows nothing, so requests and events move through fixed queues
//! without allocating.

use core::fmt;

use tickwire_venues::InstrumentId;
pub use tickwire_venues::book::Side;

/// The client's own id of an order, unique within a session's prefix
/// ([`crate::session::SessionConfig::prefix`]): written on the wire as the
/// prefix, `-`, then the number in decimal (Deribit's `label`, Binance's
/// `newClientOrderId`), so an order is known again after a reconnect and a
/// request sent twice places one order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientOrderId(pub u64);

impl fmt::Display for ClientOrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How long an order works.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeInForce {
    /// Rests until filled or cancelled.
    #[default]
    GoodTillCancel,
    /// Fills what it can at once; the rest is cancelled.
    ImmediateOrCancel,
    /// Fills whole at once, or not at all.
    FillOrKill,
}

/// A limit order. Prices and sizes are integers at the instrument's scales
/// (`InstrumentSpec::price_scale`, `size_scale`), as the books keep them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The venue-local instrument (the adapter's index).
    pub instrument: InstrumentId,
    /// `Bid` buys, `Ask` sells.
    pub side: Side,
    /// Limit price, in ticks of `10^-price_scale`.
    pub price: i64,
    /// Quantity, in lots of `10^-size_scale`.
    pub size: i64,
    /// How long it works.
    pub tif: TimeInForce,
    /// Refused rather than taking liquidity (maker only).
    pub post_only: bool,
}

/// What a bot asks a session to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// A new limit order under a new client id.
    Place {
        /// Its client id (new to the session).
        cid: ClientOrderId,
        /// The order.
        order: Limit,
    },
    /// A working order's new price and size (Deribit `private/edit`,
    /// Binance `order.cancelReplace`, which gives the order a new client
    /// id: `new_cid`; Deribit keeps `cid`).
    Amend {
        /// The working order.
        cid: ClientOrderId,
        /// Its client id once amended (`cid` again where the venue keeps it).
        new_cid: ClientOrderId,
        /// The new limit price, in ticks.
        price: i64,
        /// The new total size, in lots.
        size: i64,
    },
    /// Cancel one order.
    Cancel {
        /// The working order.
        cid: ClientOrderId,
    },
    /// Cancel every order of an instrument, or of the session.
    CancelAll {
        /// Of this instrument only, or every one.
        instrument: Option<InstrumentId>,
    },
}

impl Request {
    /// The order the request is about, if one.
    pub fn cid(&self) -> Option<ClientOrderId> {
        match *self {
            Request::Place { cid, .. } | Request::Cancel { cid } => Some(cid),
            Request::Amend { new_cid, .. } => Some(new_cid),
            Request::CancelAll { .. } => None,
        }
    }
}

/// The venue's own id of an order (Deribit `ETH-123456`, Binance's
/// number), kept as its text: at most 39 bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct VenueOrderId {
    bytes: [u8; 39],
    len: u8,
}

impl VenueOrderId {
    /// The id `text` (cut to 39 bytes at a character boundary: no venue's
    /// ids are longer).
    pub fn new(text: &str) -> VenueOrderId {
        let mut end = text.len().min(39);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; 39];
        bytes[..end].copy_from_slice(&text.as_bytes()[..end]);
        VenueOrderId {
            bytes,
            len: end as u8,
        }
    }

    /// The id as the venue wrote it (empty: not known yet).
    pub fn as_str(&self) -> &str {
        // Cut at a character boundary of a `&str` in `new`.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl Default for VenueOrderId {
    fn default() -> VenueOrderId {
        VenueOrderId {
            bytes: [0; 39],
            len: 0,
        }
    }
}

impl fmt::Debug for VenueOrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Why a request was refused, by the session before it left or by the
/// venue. Never retried by the session: the bot decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reject {
    /// The session is not ready to send orders: logging in, or open
    /// orders not yet reconciled after a (re)connect.
    NotReady,
    /// The client-side rate limit would be exceeded (the venue's own limit,
    /// kept here): try again after `retry_after_ms`.
    RateLimited {
        /// When the limit admits it again, ms from now.
        retry_after_ms: u64,
    },
    /// The venue refused the request for its rate limit (its own code).
    VenueRateLimited {
        /// The venue's error code.
        code: i64,
    },
    /// The venue refused the credentials or the signature (its own code).
    Auth {
        /// The venue's error code.
        code: i64,
    },
    /// A client order id already in use in this session.
    Duplicate,
    /// No such working order.
    UnknownOrder,
    /// A post-only order that would have taken liquidity.
    WouldTake,
    /// The account cannot afford it.
    InsufficientFunds,
    /// The instrument is not one the session trades.
    UnknownInstrument,
    /// A price or size the venue's text cannot carry, or zero or negative.
    BadValue,
    /// The session's queue of requests or table of orders is full.
    Full,
    /// Any other refusal, with the venue's own code.
    Venue {
        /// The venue's error code.
        code: i64,
    },
    /// Not a refusal: the venue's answer leaves the outcome unknown (it
    /// failed or timed out on its side, and the request may have gone
    /// through). Do not take the order for refused: the venue's own news
    /// of it (an acceptance, a fill) follows if it was placed, and a
    /// reconnect's reconciliation finds it.
    Unknown {
        /// The venue's error code (or HTTP-like status when none).
        code: i64,
    },
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reject::NotReady => f.write_str("session not ready (logging in or reconciling)"),
            Reject::RateLimited { retry_after_ms } => {
                write!(f, "rate limit: retry in {retry_after_ms} ms")
            }
            Reject::VenueRateLimited { code } => write!(f, "venue rate limit (code {code})"),
            Reject::Auth { code } => write!(f, "authentication refused (code {code})"),
            Reject::Duplicate => f.write_str("client order id already in use"),
            Reject::UnknownOrder => f.write_str("no such working order"),
            Reject::WouldTake => f.write_str("post-only order would take liquidity"),
            Reject::InsufficientFunds => f.write_str("insufficient funds"),
            Reject::UnknownInstrument => f.write_str("instrument not traded by this session"),
            Reject::BadValue => f.write_str("price or size not valid"),
            Reject::Full => f.write_str("request queue or order table full"),
            Reject::Venue { code } => write!(f, "refused by the venue (code {code})"),
            Reject::Unknown { code } => write!(f, "outcome unknown (venue code {code})"),
        }
    }
}

impl core::error::Error for Reject {}

/// What happened to an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OrderKind {
    /// The venue took the order: it works for `size` at `price`.
    Accepted {
        /// Buy (`Bid`) or sell.
        side: Side,
        /// Limit price, in ticks.
        price: i64,
        /// Total size, in lots.
        size: i64,
    },
    /// Its price and size are now these.
    Amended {
        /// Limit price, in ticks.
        price: i64,
        /// Total size, in lots.
        size: i64,
    },
    /// Part or all of it traded: `size` at `price`, `leaves` still working
    /// (0: done). `maker`: it rested and was hit.
    Filled {
        /// The trade's price, in ticks.
        price: i64,
        /// The trade's size, in lots.
        size: i64,
        /// Still working after it, in lots.
        leaves: i64,
        /// The venue's trade id (0: none given).
        trade_id: u64,
        /// The order rested and was hit.
        maker: bool,
    },
    /// It no longer works (cancelled by the bot, the kill switch, the
    /// venue's cancel-on-disconnect, or an immediate order's remainder).
    Canceled,
    /// A request about it (or a request to place it) was refused.
    Rejected {
        /// Why.
        reason: Reject,
    },
}

/// One order's news, decoded in place from the venue's answer or its
/// private channel. `I` is the instrument's id: the session's own
/// [`InstrumentId`], or the feed's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderEvent<I = InstrumentId> {
    /// The client id, if the order is this session's (`None`: an order
    /// placed elsewhere, or a refusal of a request about no one order).
    pub cid: Option<ClientOrderId>,
    /// The instrument.
    pub instrument: I,
    /// The venue's id of the order (empty when the venue never took it).
    pub venue_order: VenueOrderId,
    /// What happened.
    pub kind: OrderKind,
    /// The venue's time of the event, ns since the Unix epoch (0: none).
    pub venue_time_ns: u64,
    /// For an answer to one of this session's requests: the TSC stamp the
    /// request was handed on with (for the round trip); 0 otherwise.
    pub sent_tsc: u64,
}

impl<I> OrderEvent<I> {
    /// The same event under another instrument id.
    pub fn with_instrument<J>(self, instrument: J) -> OrderEvent<J> {
        OrderEvent {
            cid: self.cid,
            instrument,
            venue_order: self.venue_order,
            kind: self.kind,
            venue_time_ns: self.venue_time_ns,
            sent_tsc: self.sent_tsc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn venue_ids_keep_their_text_and_cut_long_ones_at_a_character() {
        assert_eq!(VenueOrderId::new("ETH-584849853").as_str(), "ETH-584849853");
        assert_eq!(VenueOrderId::default().as_str(), "");
        let long = "é".repeat(30);
        let id = VenueOrderId::new(&long);
        assert_eq!(id.as_str().len(), 38);
        assert!(long.starts_with(id.as_str()));
    }

    #[test]
    fn events_are_small_and_copy() {
        fn copy<T: Copy>() {}
        copy::<OrderEvent>();
        copy::<Request>();
        assert!(size_of::<OrderEvent>() <= 128);
    }
}
