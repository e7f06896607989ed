//! [`BinanceSession`]: order entry on Binance spot's WebSocket API
//! (`wss://ws-api.binance.com:443/ws-api/v3`), a [`Session`].
//!
//! Everything here follows the venue's public documentation,
//! <https://github.com/binance/binance-spot-api-docs>: `web-socket-api.md`
//! (requests, answers, signatures, session authentication, the user data
//! stream on the API's own connection, rate limits), `user-data-stream.md`
//! (`executionReport`), `errors.md` and `enums.md`. Each rule is cited
//! where it is used.
//!
//! The session's life on one connection:
//!
//! 1. Login. With an Ed25519 key: `session.logon` (`apiKey`, `timestamp`,
//!    Ed25519 signature), then `userDataStream.subscribe`, the account's
//!    order events on this same connection ("This method requires an
//!    authenticated WebSocket connection using Ed25519 keys"). With an
//!    HMAC key, which cannot log on ("Only Ed25519 keys are supported for
//!    this feature"): `userDataStream.subscribe.signature` ("can work with
//!    any API Key type", `CHANGELOG.md`), and every later request carries
//!    `apiKey`, `timestamp` and its HMAC-SHA256 signature ([`wire::Auth`]).
//!    A refusal of either for the credentials is [`State::Refused`] with
//!    the venue's code (-1022 a bad signature, -2014 / -2015 a bad key,
//!    -1002 unauthorized): sticky, nothing is sent again by this session,
//!    even after a reconnect. Any other refusal passes (-1021 the clock,
//!    -1003 / 429 / 418 the venue's load, -1007 a timeout, a 5xx): told as
//!    a `Rejected` event without a client id and the step written again
//!    from the timer after a backoff (1 s, doubling to 60 s, and never
//!    before the `retryAfter` of a 429 / 418, which also holds every
//!    request in the local limiter until then).
//! 2. Reconciliation: `openOrders.status`, per symbol while that weighs
//!    less than one call for all (6 per symbol, 80 without one: the
//!    method's "Weight" table), so at most 13 calls. Orders whose
//!    `clientOrderId` is this session's prefix, `-` and a number become
//!    [`OpenOrders`] entries and are announced as `Accepted` (for the size
//!    that still works), so an order whose answer was lost with the last
//!    connection is found, and a second `Place` of its client id is a
//!    `Duplicate`. The table of orders is kept across a reconnect: an
//!    order known before and still open is updated quietly (its fills
//!    while disconnected are not told one by one: the venue's list has
//!    no trades); one known before and not found is told `Canceled` (it
//!    ended while the connection was down, filled or cancelled: the list
//!    cannot say which). Then [`State::Ready`]; no
//!    order is taken before. A refusal of the reconciliation (the venue's
//!    rate limit, say) is told as a `Rejected` event without a client id,
//!    the session stays `Reconciling` and, once every answer is in, reads
//!    every symbol again from the timer after the backoff (the feed never
//!    reconnects a session by itself).
//! 3. Orders ([`Request`] to method): `Place` → `order.place` (`LIMIT` with
//!    `timeInForce` `GTC` / `IOC` / `FOK`, or `LIMIT_MAKER` for post-only,
//!    which takes no `timeInForce`; `newClientOrderId` = prefix-cid;
//!    `newOrderRespType` `FULL`, so the answer brings the fills the order
//!    made on arrival); `Amend` → `order.cancelReplace` (`cancelReplaceMode`
//!    `STOP_ON_FAILURE`: no new order if the old one could not be
//!    cancelled; the new order under `new_cid`, same side and terms, for
//!    the new total size less what the old one filled, as this session
//!    knows it: a fill the venue made whose news has not come yet is not
//!    taken off, so the two orders together may fill up to that much
//!    more than the new total); `Cancel` →
//!    `order.cancel` by `origClientOrderId`; `CancelAll` →
//!    `openOrders.cancelAll` per symbol.
//!
//! Answers and the user data stream's `executionReport`s both tell an
//! order's news. The rule that keeps one piece of news one event: the
//! first word makes the event, the echo is dropped. An order is accepted
//! once (by the answer or the `NEW` report, whichever comes first), filled
//! once per trade (news only while the venue's running filled total, the
//! report's `z` or the sum of the `FULL` answer's `fills`, passes the
//! session's count for the order), and ends once (cancelled, expired, rejected or filled:
//! its client id is then remembered among the last 64 finished, and later
//! news of it is dropped). An event that comes while a request about its
//! order is in flight carries that request's TSC stamp (`sent_tsc`),
//! whichever channel brought it: the round trip is to the first word.
//!
//! An answer that leaves the outcome unknown (a 5xx status, -1006
//! `UNEXPECTED_RESP`, -1007 `TIMEOUT`: "execution status unknown",
//! `errors.md`) is not a refusal: told as `Rejected` with
//! [`Reject::Unknown`], the client id not taken for finished, and the
//! truth left to the venue's reports (a `NEW` report of the order if it
//! was placed) and to the next reconciliation; `order.status` is not
//! asked.
//!
//! The venue has no cancel-on-disconnect for the WebSocket API
//! ([`SessionConfig::cancel_on_disconnect`] is not used: the feed's kill
//! switch covers it). The timer only writes again a step of the login or
//! the reconciliation that found no room in the caller's [`Out`] or that
//! the venue refused for a reason that passes: the server pings, and a
//! logged-on session has no token to refresh. A
//! message may bring several
//! events (the reconciliation one per order found, a cancel-all one per
//! order cancelled): the caller's `events` needs room for
//! `max_open_orders` of them to stay without allocation.
//!
//! Nothing here allocates once the session is made and its parser warm:
//! tables are sized at construction, messages are parsed in place and
//! written into the caller's [`Out`].

mod events;
pub mod limits;
#[cfg(test)]
mod tests;
pub mod wire;

use core::fmt;

use tickwire_venues::json::JsonParser;
use tickwire_venues::{InstrumentId, InstrumentSpec};

use crate::credentials::Credentials;
use crate::order::{ClientOrderId, OrderEvent, Reject, Request, Side, TimeInForce};
use crate::orders::OpenOrders;
use crate::out::{Message, Out};
use crate::pending::{Asked, Pending};
use crate::session::{Now, Session, SessionConfig, State, instrument};

pub use limits::{LimitKind, RateLimit, RateLimits};
use wire::{Auth, Params};

/// The production endpoint (`web-socket-api.md`, "General API
/// Information").
pub const ENDPOINT: &str = "wss://ws-api.binance.com:443/ws-api/v3";

/// `openOrders.status` weighs 6 with a symbol and 80 without.
const OPEN_ORDERS_ONE: u64 = 6;
const OPEN_ORDERS_ALL: u64 = 80;
/// The instrument index that stands for "every symbol".
const ALL: u32 = u32::MAX;

/// How many finished client ids are remembered to drop the echoes of
/// news already told.
const FINISHED: usize = 64;

/// The first wait before a refused login step or reconciliation is tried
/// again, doubled on each refusal up to the last.
const BACKOFF_FIRST_MS: u64 = 1_000;
const BACKOFF_MAX_MS: u64 = 60_000;

/// A fixed ring of the last `N` values seen.
#[derive(Debug)]
struct Ring<T, const N: usize> {
    items: [Option<T>; N],
    next: usize,
}

impl<T: Copy + PartialEq, const N: usize> Ring<T, N> {
    fn new() -> Ring<T, N> {
        Ring {
            items: [None; N],
            next: 0,
        }
    }

    fn contains(&self, v: T) -> bool {
        self.items.contains(&Some(v))
    }

    fn push(&mut self, v: T) {
        self.items[self.next] = Some(v);
        self.next = (self.next + 1) % N;
    }
}

/// The terms of an order the session placed that its answers do not
/// repeat: the instrument (for a refusal's event) and the type and time in
/// force (a cancel-replace's new order repeats them).
#[derive(Clone, Copy, Debug)]
struct Terms {
    cid: ClientOrderId,
    instrument: InstrumentId,
    tif: TimeInForce,
    post_only: bool,
}

/// A set-up step whose request did not fit the caller's [`Out`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stalled {
    /// `session.logon` (or the signature subscription).
    Login,
    /// `userDataStream.subscribe`.
    Subscribe,
    /// `openOrders.status`, from this instrument on.
    Reconcile(u32),
}

/// Binance spot's order entry over its WebSocket API; see the module's
/// docs for the protocol.
pub struct BinanceSession {
    parser: JsonParser,
    core: Core,
}

/// Everything but the parser, so a message parsed in place can be handled
/// while the parser's tape borrows it.
struct Core {
    instruments: Vec<InstrumentSpec>,
    prefix: String,
    credentials: Credentials,
    state: State,
    pending: Pending,
    /// `pending`'s capacity.
    max_in_flight: usize,
    orders: OpenOrders,
    terms: Vec<Terms>,
    limits: RateLimits,
    finished: Ring<ClientOrderId, FINISHED>,
    /// The user data stream's `subscriptionId`, once subscribed.
    subscription: Option<u64>,
    /// The venue said `serverShutdown` on this connection.
    shutting_down: bool,
    /// A step of the login or the reconciliation that found no room in
    /// the caller's `Out`, or that the venue refused for a reason that
    /// passes: written again from a timer at `retry_at_ms` or later.
    stalled: Option<Stalled>,
    /// When a refused step is tried again (unix ms; 0: at once).
    retry_at_ms: u64,
    /// The wait after the next refusal (doubles up to
    /// [`BACKOFF_MAX_MS`]; back to [`BACKOFF_FIRST_MS`] once `Ready`).
    backoff_ms: u64,
    /// A request of this reconciliation was refused: it is done again
    /// rather than ending in `Ready`.
    redo: bool,
    /// The orders known before this reconciliation not yet found open by
    /// it: told `Canceled` when it ends (they ended while disconnected).
    unseen: Vec<ClientOrderId>,
    unreadable: u64,
}

/// Why a session could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetupError {
    /// The client id prefix is not 1 to 12 letters and digits (the prefix
    /// and a `u64` must fit Binance's 36 characters of `newClientOrderId`,
    /// `^[a-zA-Z0-9-_]{1,36}$` in `fix-api.md`).
    Prefix,
    /// No instruments, or one without a symbol.
    NoInstruments,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SetupError::Prefix => "the client id prefix must be 1 to 12 letters and digits",
            SetupError::NoInstruments => "no instruments to trade (or one without a symbol)",
        })
    }
}

impl core::error::Error for SetupError {}

impl BinanceSession {
    /// A session trading `config.instruments` (symbols as Binance spells
    /// them, `BTCUSDT`, with their price and size scales) under
    /// `credentials`: an Ed25519 key logs the session on, an HMAC key signs
    /// every request. Allocates its tables here, once.
    pub fn new(
        config: SessionConfig,
        credentials: Credentials,
    ) -> Result<BinanceSession, SetupError> {
        let p = &config.prefix;
        if p.is_empty() || p.len() > 12 || !p.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(SetupError::Prefix);
        }
        if config.instruments.is_empty() || config.instruments.iter().any(|i| i.symbol.is_empty()) {
            return Err(SetupError::NoInstruments);
        }
        let capacity = config.max_open_orders.max(1);
        Ok(BinanceSession {
            // Answers of `openOrders.status` for a busy account are the
            // largest messages; the parser grows to the largest it sees.
            parser: JsonParser::new(64 * 1024),
            core: Core {
                instruments: config.instruments,
                prefix: config.prefix,
                credentials,
                state: State::Disconnected,
                pending: Pending::new(capacity + 32),
                max_in_flight: capacity + 32,
                orders: OpenOrders::new(capacity),
                terms: Vec::with_capacity(2 * capacity),
                limits: RateLimits::new(),
                finished: Ring::new(),
                subscription: None,
                shutting_down: false,
                stalled: None,
                retry_at_ms: 0,
                backoff_ms: BACKOFF_FIRST_MS,
                redo: false,
                unseen: Vec::with_capacity(capacity),
                unreadable: 0,
            },
        })
    }

    /// The venue's rate limits as last reported (and counted since).
    pub fn rate_limits(&self) -> &RateLimits {
        &self.core.limits
    }

    /// The user data stream's subscription id, once subscribed on this
    /// connection.
    pub fn subscription(&self) -> Option<u64> {
        self.core.subscription
    }

    /// Whether the venue announced, on this connection, that its server is
    /// about to shut down (the `serverShutdown` event: "Please establish a
    /// new connection as soon as possible", `web-socket-api.md`,
    /// "Connection events"). The session cannot reconnect by itself: the
    /// feed may open a new connection before this one drops.
    pub fn server_shutting_down(&self) -> bool {
        self.core.shutting_down
    }
}

impl fmt::Debug for BinanceSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BinanceSession")
            .field("state", &self.core.state)
            .field("credentials", &self.core.credentials)
            .field("open_orders", &self.core.orders.len())
            .finish_non_exhaustive()
    }
}

impl Session for BinanceSession {
    fn state(&self) -> State {
        self.core.state
    }

    fn on_open(&mut self, now: Now, out: &mut Out) {
        self.core.open(now, out);
    }

    fn on_text(
        &mut self,
        buf: &mut [u8],
        len: usize,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) {
        let core = &mut self.core;
        let read = self
            .parser
            .parse(buf, len, |doc| core.on_message(&doc, now, out, events));
        if read != Ok(true) {
            core.unreadable += 1;
        }
    }

    fn submit(&mut self, request: &Request, now: Now, out: &mut Out) -> Result<(), Reject> {
        self.core.submit(request, now, out)
    }

    fn on_timer(&mut self, now: Now, out: &mut Out) {
        // Nothing else is due on a timer: the server pings and the driver
        // answers (`web-socket-api.md`: "The WebSocket server will send a
        // ping frame every 20 seconds"), and a logged-on session has no
        // token to refresh.
        let core = &mut self.core;
        if !matches!(core.state, State::LoggingIn | State::Reconciling)
            || now.unix_ms < core.retry_at_ms
        {
            return;
        }
        match core.stalled.take() {
            Some(Stalled::Login) => core.login(now, out),
            Some(Stalled::Subscribe) => core.subscribe(now, out),
            Some(Stalled::Reconcile(from)) => core.reconcile_from(from, now, out),
            None => {}
        }
    }

    fn on_close(&mut self, _now: Now) {
        let core = &mut self.core;
        // The ids of places and amends in flight are free again: if the
        // venue took one, the next reconciliation finds it.
        for f in core.pending.iter() {
            if let Asked::Place(cid) | Asked::Amend(_, cid) = f.asked {
                core.orders.unreserve(cid);
            }
        }
        let orders = &core.orders;
        core.terms.retain(|t| orders.get(t.cid).is_some());
        self.core.pending.clear();
        self.core.stalled = None;
        self.core.subscription = None;
        if !matches!(self.core.state, State::Refused { .. }) {
            self.core.state = State::Disconnected;
        }
    }

    fn open_orders(&self) -> &OpenOrders {
        &self.core.orders
    }

    fn unreadable(&self) -> u64 {
        self.core.unreadable
    }
}

/// What a request costs: (`REQUEST_WEIGHT`, `ORDERS`), from each method's
/// "Weight" and "Unfilled Order Count" in `web-socket-api.md`.
fn cost(asked: Asked) -> (u64, u64) {
    match asked {
        Asked::Login | Asked::Setup => (2, 0),
        Asked::OpenOrders(ALL) => (OPEN_ORDERS_ALL, 0),
        Asked::OpenOrders(_) => (OPEN_ORDERS_ONE, 0),
        Asked::Place(_) | Asked::Amend(..) => (1, 1),
        Asked::Cancel(_) | Asked::CancelAll(_) | Asked::Other => (1, 0),
    }
}

/// The side as the venue writes it.
fn side_text(side: Side) -> &'static str {
    match side {
        Side::Bid => "BUY",
        Side::Ask => "SELL",
    }
}

/// The time in force as the venue writes it (`timeInForce` in
/// `web-socket-api.md`, "Place new order").
fn tif_text(tif: TimeInForce) -> &'static str {
    match tif {
        TimeInForce::GoodTillCancel => "GTC",
        TimeInForce::ImmediateOrCancel => "IOC",
        TimeInForce::FillOrKill => "FOK",
    }
}

impl Core {
    /// The signing for SIGNED requests after the login ([`wire::Auth`]).
    fn auth(&self) -> Auth<'_> {
        if self.credentials.is_ed25519() {
            Auth::Session
        } else {
            Auth::Hmac(&self.credentials)
        }
    }

    /// Files `asked` and writes its message with `write` (given the
    /// request id and the signing); both undone if the message does not
    /// fit.
    fn request(
        &mut self,
        asked: Asked,
        now: Now,
        out: &mut Out,
        write: impl FnOnce(&mut Message<'_>, u64, &Core) -> fmt::Result,
    ) -> Result<(), Reject> {
        let id = self
            .pending
            .file(asked, now.tsc, now.unix_ms)
            .ok_or(Reject::Full)?;
        let this = &*self;
        if out.message(|m| write(m, id, this)).is_err() {
            self.pending.answer(id);
            return Err(Reject::Full);
        }
        let (weight, orders) = cost(asked);
        self.limits.spend(weight, orders, now.unix_ms);
        Ok(())
    }

    /// The connection opened: the login.
    fn open(&mut self, now: Now, out: &mut Out) {
        if matches!(self.state, State::Refused { .. }) {
            return;
        }
        self.state = State::LoggingIn;
        self.subscription = None;
        self.shutting_down = false;
        self.stalled = None;
        self.retry_at_ms = 0;
        // The orders known stay, to be compared with what the
        // reconciliation finds.
        self.login(now, out);
    }

    /// The login's request (a step that may stall).
    fn login(&mut self, now: Now, out: &mut Out) {
        let logon = self.credentials.is_ed25519();
        let sent = self.request(Asked::Login, now, out, |m, id, core| {
            let auth = if logon {
                Auth::Ed25519Logon(&core.credentials)
            } else {
                Auth::Hmac(&core.credentials)
            };
            let method = if logon {
                "session.logon"
            } else {
                "userDataStream.subscribe.signature"
            };
            let mut p = Params::open(m, id, method, auth)?;
            p.number("timestamp", now.unix_ms)?;
            p.close(auth)
        });
        if sent.is_err() {
            self.stalled = Some(Stalled::Login);
        }
    }

    /// Logged on with an Ed25519 key: the user data stream next.
    fn subscribe(&mut self, now: Now, out: &mut Out) {
        let sent = self.request(Asked::Setup, now, out, |m, id, _| {
            wire::bare(m, id, "userDataStream.subscribe")
        });
        if sent.is_err() {
            self.stalled = Some(Stalled::Subscribe);
        }
    }

    /// Subscribed: the open orders, per symbol or all at once (whichever
    /// weighs less), before anything else.
    fn reconcile(&mut self, now: Now, out: &mut Out) {
        self.state = State::Reconciling;
        self.redo = false;
        self.unseen.clear();
        self.unseen.extend(self.orders.iter().map(|o| o.cid));
        self.reconcile_from(0, now, out);
    }

    /// The open orders' requests from instrument `from` on (a step that
    /// may stall where one does not fit).
    fn reconcile_from(&mut self, from: u32, now: Now, out: &mut Out) {
        let n = self.instruments.len() as u64;
        if n * OPEN_ORDERS_ONE >= OPEN_ORDERS_ALL {
            let sent = self.request(Asked::OpenOrders(ALL), now, out, |m, id, core| {
                let auth = core.auth();
                let mut p = Params::open(m, id, "openOrders.status", auth)?;
                p.number("timestamp", now.unix_ms)?;
                p.close(auth)
            });
            if sent.is_err() {
                self.stalled = Some(Stalled::Reconcile(0));
            }
            return;
        }
        for i in from..n as u32 {
            let sent = self.request(Asked::OpenOrders(i), now, out, |m, id, core| {
                let auth = core.auth();
                let mut p = Params::open(m, id, "openOrders.status", auth)?;
                p.text("symbol", &core.instruments[i as usize].symbol)?;
                p.number("timestamp", now.unix_ms)?;
                p.close(auth)
            });
            if sent.is_err() {
                self.stalled = Some(Stalled::Reconcile(i));
                return;
            }
        }
    }

    /// A refused step (`step`) tried again from a timer after the
    /// backoff, and not before `not_before_ms` (the venue's
    /// `retryAfter`).
    fn retry(&mut self, step: Stalled, not_before_ms: u64, now: Now) {
        self.stalled = Some(step);
        self.retry_at_ms = now
            .unix_ms
            .saturating_add(self.backoff_ms)
            .max(not_before_ms);
        self.backoff_ms = self.backoff_ms.saturating_mul(2).min(BACKOFF_MAX_MS);
    }

    /// The checks every order request passes first: ready, and the rate
    /// limits room for `weight` and `orders`.
    fn admit(&self, weight: u64, orders: u64, now: Now) -> Result<(), Reject> {
        if self.state != State::Ready {
            return Err(Reject::NotReady);
        }
        self.limits
            .check(weight, orders, now.unix_ms)
            .map_err(|retry_after_ms| Reject::RateLimited { retry_after_ms })?;
        if !self.pending.has_room() {
            return Err(Reject::Full);
        }
        Ok(())
    }

    fn submit(&mut self, request: &Request, now: Now, out: &mut Out) -> Result<(), Reject> {
        match *request {
            Request::Place { cid, order } => {
                if self.state != State::Ready {
                    return Err(Reject::NotReady);
                }
                let spec = instrument(&self.instruments, order.instrument)?;
                let (price_scale, size_scale) = (spec.price_scale, spec.size_scale);
                if order.price <= 0 || order.size <= 0 {
                    return Err(Reject::BadValue);
                }
                if self.in_use(cid) {
                    return Err(Reject::Duplicate);
                }
                self.admit(1, 1, now)?;
                if self.terms.len() == self.terms.capacity() || !self.orders.reserve(cid) {
                    return Err(Reject::Full);
                }
                let sent = self.request(Asked::Place(cid), now, out, |m, id, core| {
                    let auth = core.auth();
                    let mut p = Params::open(m, id, "order.place", auth)?;
                    p.cid("newClientOrderId", &core.prefix, cid.0)?;
                    p.text("newOrderRespType", "FULL")?;
                    p.decimal("price", order.price, price_scale)?;
                    p.decimal("quantity", order.size, size_scale)?;
                    p.text("side", side_text(order.side))?;
                    p.text(
                        "symbol",
                        &core.instruments[order.instrument.0 as usize].symbol,
                    )?;
                    if !order.post_only {
                        p.text("timeInForce", tif_text(order.tif))?;
                    }
                    p.number("timestamp", now.unix_ms)?;
                    p.text(
                        "type",
                        if order.post_only {
                            "LIMIT_MAKER"
                        } else {
                            "LIMIT"
                        },
                    )?;
                    p.close(auth)
                });
                match sent {
                    Ok(()) => self.terms.push(Terms {
                        cid,
                        instrument: order.instrument,
                        tif: order.tif,
                        post_only: order.post_only,
                    }),
                    Err(_) => self.orders.unreserve(cid),
                }
                sent
            }
            Request::Amend {
                cid,
                new_cid,
                price,
                size,
            } => {
                if self.state != State::Ready {
                    return Err(Reject::NotReady);
                }
                let old = *self.orders.get(cid).ok_or(Reject::UnknownOrder)?;
                let spec = instrument(&self.instruments, old.instrument)?;
                let (price_scale, size_scale) = (spec.price_scale, spec.size_scale);
                // The new order is for the new total less what is filled.
                let quantity = size.saturating_sub(old.filled);
                if price <= 0 || quantity <= 0 {
                    return Err(Reject::BadValue);
                }
                if new_cid == cid || self.in_use(new_cid) {
                    return Err(Reject::Duplicate);
                }
                self.admit(1, 1, now)?;
                let terms = self.terms.iter().find(|t| t.cid == cid).copied();
                let (tif, post_only) = terms.map_or((TimeInForce::GoodTillCancel, false), |t| {
                    (t.tif, t.post_only)
                });
                if self.terms.len() == self.terms.capacity() || !self.orders.reserve(new_cid) {
                    return Err(Reject::Full);
                }
                let sent = self.request(Asked::Amend(cid, new_cid), now, out, |m, id, core| {
                    let auth = core.auth();
                    let mut p = Params::open(m, id, "order.cancelReplace", auth)?;
                    p.cid("cancelOrigClientOrderId", &core.prefix, cid.0)?;
                    p.text("cancelReplaceMode", "STOP_ON_FAILURE")?;
                    p.cid("newClientOrderId", &core.prefix, new_cid.0)?;
                    p.text("newOrderRespType", "FULL")?;
                    p.decimal("price", price, price_scale)?;
                    p.decimal("quantity", quantity, size_scale)?;
                    p.text("side", side_text(old.side))?;
                    p.text(
                        "symbol",
                        &core.instruments[old.instrument.0 as usize].symbol,
                    )?;
                    if !post_only {
                        p.text("timeInForce", tif_text(tif))?;
                    }
                    p.number("timestamp", now.unix_ms)?;
                    p.text("type", if post_only { "LIMIT_MAKER" } else { "LIMIT" })?;
                    p.close(auth)
                });
                match sent {
                    Ok(()) => self.terms.push(Terms {
                        cid: new_cid,
                        instrument: old.instrument,
                        tif,
                        post_only,
                    }),
                    Err(_) => self.orders.unreserve(new_cid),
                }
                sent
            }
            Request::Cancel { cid } => {
                if self.state != State::Ready {
                    return Err(Reject::NotReady);
                }
                let order = *self.orders.get(cid).ok_or(Reject::UnknownOrder)?;
                self.admit(1, 0, now)?;
                self.request(Asked::Cancel(cid), now, out, |m, id, core| {
                    let auth = core.auth();
                    let mut p = Params::open(m, id, "order.cancel", auth)?;
                    p.cid("origClientOrderId", &core.prefix, cid.0)?;
                    p.text(
                        "symbol",
                        &core.instruments[order.instrument.0 as usize].symbol,
                    )?;
                    p.number("timestamp", now.unix_ms)?;
                    p.close(auth)
                })
            }
            Request::CancelAll { instrument: one } => {
                if self.state != State::Ready {
                    return Err(Reject::NotReady);
                }
                let (from, to) = match one {
                    Some(i) => {
                        instrument(&self.instruments, i)?;
                        (i.0, i.0 + 1)
                    }
                    None => (0, self.instruments.len() as u32),
                };
                let n = u64::from(to - from);
                self.admit(n, 0, now)?;
                if self.pending.len() + n as usize > self.max_in_flight {
                    return Err(Reject::Full);
                }
                for i in from..to {
                    self.request(Asked::CancelAll(Some(i)), now, out, |m, id, core| {
                        let auth = core.auth();
                        let mut p = Params::open(m, id, "openOrders.cancelAll", auth)?;
                        p.text("symbol", &core.instruments[i as usize].symbol)?;
                        p.number("timestamp", now.unix_ms)?;
                        p.close(auth)
                    })?;
                }
                Ok(())
            }
        }
    }

    /// Whether `cid` may not name a new order: working, asked for, or
    /// among the recently finished (whose late news is dropped as echoes,
    /// so a new order under the id would go untold).
    fn in_use(&self, cid: ClientOrderId) -> bool {
        self.orders.known(cid) || self.finished.contains(cid)
    }

    /// What requests still in flight will count against the limits.
    fn in_flight(&self) -> (u64, u64) {
        self.pending.iter().fold((0, 0), |(w, o), f| {
            let (dw, dor) = cost(f.asked);
            (w + dw, o + dor)
        })
    }

    /// An order of this session by the client id the venue shows: the
    /// prefix, `-`, then a number ([`wire::Params::cid`]); nothing else
    /// (another bot's `bot1-5` is not prefix `bot`'s).
    fn cid(&self, text: &str) -> Option<ClientOrderId> {
        let digits = text.strip_prefix(self.prefix.as_str())?.strip_prefix('-')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().map(ClientOrderId)
    }
}
