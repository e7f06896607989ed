//! [`Session`]: one venue's order-entry connection as a sans-IO state
//! machine. The caller (the feed) owns the socket: it tells the session
//! the connection opened or closed, hands it each text message, and sends
//! what the session writes into an [`Out`]. Time enters as an argument
//! ([`Now`]); nothing here reads a clock or allocates once made.
//!
//! The life of a session, the same for every venue:
//!
//! ```text
//! Disconnected ──open──▶ LoggingIn ──authenticated──▶ Reconciling ──open orders read──▶ Ready
//!      ▲                     │ credentials refused                                      │
//!      │                     ▼                                                          │
//!      │                 Refused (final: stays so across closes and opens,              │
//!      │                          nothing is sent again)                                │
//!      └─────────────────────────────── close ◀────────────────────────────────────────┘
//! ```
//!
//! Orders are taken only while `Ready`: after every (re)connect the venue's
//! open orders are read first, so an order whose answer was lost with the
//! connection is found (by its client id) rather than placed twice.

use tickwire_venues::{InstrumentId, InstrumentSpec};

use crate::order::{OrderEvent, Reject, Request};
use crate::out::Out;

/// The time, as the caller's clocks read it when the call was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Now {
    /// Wall clock, ms since the Unix epoch (signatures, token expiry).
    pub unix_ms: u64,
    /// The TSC stamp (ticks), kept with each request for its round trip.
    pub tsc: u64,
}

/// Where a session is in its life (see the module's docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum State {
    /// No connection.
    #[default]
    Disconnected,
    /// Connected; logging in (and, Deribit, turning on cancel-on-disconnect
    /// and subscribing to the private channels).
    LoggingIn,
    /// Logged in; reading the venue's open orders before any is sent.
    Reconciling,
    /// Orders are taken.
    Ready,
    /// The venue refused the credentials (its code): nothing is sent
    /// again until the credentials change. Not retried.
    Refused {
        /// The venue's error code.
        code: i64,
    },
}

/// What a session is set up with, besides its credentials.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The instruments it trades, in the venue's order (their
    /// [`InstrumentId`]s are indexes here, as in the market-data adapter).
    pub instruments: Vec<InstrumentSpec>,
    /// The client order ids' prefix on the wire: letters and digits, at
    /// most 12, unique to this bot (orders with another prefix are not
    /// this session's). A client id is written `prefix-number` (`bot-42`),
    /// and only that form is read back as this session's.
    pub prefix: String,
    /// Ask the venue to cancel every order of the session when its
    /// connection drops (Deribit `private/enable_cancel_on_disconnect`;
    /// Binance's WebSocket API has no such switch: the feed's kill switch
    /// covers it).
    pub cancel_on_disconnect: bool,
    /// The most orders working at once that the session keeps track of.
    pub max_open_orders: usize,
}

/// One venue's order-entry session. Object-safe: the feed keeps a
/// `Box<dyn Session>` per trading venue.
pub trait Session: Send {
    /// Where the session is.
    fn state(&self) -> State;

    /// The connection opened: the login (and set-up) messages into `out`.
    fn on_open(&mut self, now: Now, out: &mut Out);

    /// A text message from the venue, `buf[..len]`, with at least
    /// [`tickwire_venues::json::INPUT_PADDING`] writable bytes after it (the
    /// feed's payloads have them; the message may be parsed in place, its
    /// strings unescaped within it): answers to requests and private
    /// channel news decoded into `events` (pushed in order; the caller
    /// gives it room for a message's worth and it never grows past that),
    /// and what it makes the session send (a login's follow-up, the open
    /// orders' request) into `out`. A message that cannot be read is
    /// counted ([`Session::unreadable`]) and otherwise ignored.
    fn on_text(
        &mut self,
        buf: &mut [u8],
        len: usize,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    );

    /// A request from the bot: its message into `out`, or why not (then
    /// nothing is sent). Checks, before anything is written: `Ready`, the
    /// client-side rate limit, a new client id not already in use, an
    /// instrument this session trades, a price and size that are positive.
    fn submit(&mut self, request: &Request, now: Now, out: &mut Out) -> Result<(), Reject>;

    /// Timers: a token to refresh before it expires, a keep-alive due.
    /// Called between polls; cheap when nothing is due.
    fn on_timer(&mut self, now: Now, out: &mut Out);

    /// The connection is gone: back to `Disconnected` (orders are
    /// reconciled on the next open); requests in flight are forgotten
    /// (their orders, if placed, are found by the reconciliation).
    fn on_close(&mut self, now: Now);

    /// The orders the session knows to be working, by client id.
    fn open_orders(&self) -> &crate::orders::OpenOrders;

    /// Messages the session could not read, so far.
    fn unreadable(&self) -> u64;
}

/// Checks a request's instrument against the session's.
pub fn instrument(
    instruments: &[InstrumentSpec],
    id: InstrumentId,
) -> Result<&InstrumentSpec, Reject> {
    instruments
        .get(id.0 as usize)
        .ok_or(Reject::UnknownInstrument)
}
