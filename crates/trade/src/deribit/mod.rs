//! [`DeribitSession`]: order entry on Deribit's API v2, JSON-RPC over one
//! WebSocket (<https://docs.deribit.com>), as a sans-IO [`Session`].
//!
//! On open it logs in (`public/auth`, by default with a signature so the
//! secret never leaves the host), turns on cancel-on-disconnect for the
//! connection (if configured), subscribes to `user.orders.{instrument}.raw`
//! and `user.trades.{instrument}.raw`, then reads each instrument's open
//! orders; it is `Ready` once every one of those answers came back, and
//! not before (a request that did not fit in the caller's `Out` is sent
//! from [`Session::on_timer`]; none is skipped). The token is refreshed (`grant_type: refresh_token`) at 80 %
//! of its lifetime (`expires_in`, seconds, in `public/auth`'s answer; the
//! same point nautilus_trader's Deribit adapter refreshes at,
//! nautechsystems/nautilus_trader#3304), from [`Session::on_timer`]; a
//! refused refresh token is followed by a login afresh. Credentials the
//! venue refuses (10000, 13004, 13009, 13021) put the session in
//! `Refused` for good: it sends nothing again, on this connection or the
//! next; any other refusal of a login (the venue busy or in maintenance:
//! 10028, 10040, 11051, 13028, ...) is tried again from `on_timer` after
//! a wait doubling from 1 s up to 64 s. Requests are `private/buy`,
//! `sell`, `edit`, `cancel`, `cancel_all` and `cancel_all_by_instrument`
//! (both with `detailed: true`: only the orders the answer lists end);
//! a client id is the order's `label`: prefix, `-`, decimal number.
//!
//! **One event per fact.** An order's news comes twice on Deribit: in the
//! answer to the request (`result.order`, `result.trades`) and on the
//! private channels (`user.orders`, `user.trades`), in either order. The
//! session reports each fact once: an order is `Accepted` the first time
//! it is seen working (and never again while it works, nor after it is
//! done: the last 64 finished orders are kept), `Amended` when its
//! price or size differs from what is known, `Canceled` only while it is
//! known, and a fill once per trade: each order keeps the number of its
//! last trade applied, and a trade numbered at or below it was told
//! already (no window of ids that a burst could overrun). A trade of an
//! order not yet known is left for the message that makes it known (the
//! answer carries its trades); a trade of an order that ended a moment ago
//! (a cancel that crossed a fill) is still told. An event's
//! `sent_tsc` is the request's stamp when a request about that order is
//! in flight, whichever message reports it first.
//!
//! Orders found working after a reconnect are kept (reported `Accepted`
//! when new to the session; those the table has no room for are not
//! reported, and one `Rejected { reason: Full }` without a client id says
//! so); orders the session knew that the venue no
//! longer lists are reported `Canceled` (they ended while the connection
//! was down: cancelled on disconnect, or filled, whose fills this session
//! does not read back).

pub mod credits;
mod news;
mod wire;

#[cfg(test)]
mod tests;

use core::fmt;

use tickwire_venues::json::JsonParser;
use tickwire_venues::{InstrumentId, InstrumentSpec};

use crate::credentials::Credentials;
use crate::order::{ClientOrderId, OrderEvent, OrderKind, Reject, Request, TimeInForce};
use crate::orders::{OpenOrder, OpenOrders};
use crate::out::{Message, Out};
use crate::pending::{Asked, Pending};
use crate::session::{Now, Session, SessionConfig, State, instrument};

use credits::Credits;
pub use credits::{Bucket, CreditLimits};

/// How the session logs in (`public/auth`'s `grant_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Grant {
    /// `client_signature`: an HMAC-SHA256 signature of a timestamp and a
    /// nonce; the secret never leaves the host.
    #[default]
    ClientSignature,
    /// `client_credentials`: the client secret itself, sent over TLS.
    ClientCredentials,
}

/// A [`DeribitSession`]'s settings beyond [`SessionConfig`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeribitOptions {
    /// How to log in.
    pub grant: Grant,
    /// The client-side rate limit (Deribit's defaults unless the account's
    /// tier is known).
    pub limits: CreditLimits,
}

/// Why a session could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetupError {
    /// The client id prefix is not 1 to 12 letters and digits.
    Prefix,
    /// The credentials are an Ed25519 key: Deribit's login here takes a
    /// shared secret.
    NotSharedSecret,
    /// `client_credentials` needs a secret that is text.
    SecretNotText,
    /// No instruments.
    NoInstruments,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SetupError::Prefix => "the client id prefix must be 1 to 12 letters and digits",
            SetupError::NotSharedSecret => {
                "Deribit needs an API key's client secret, not an Ed25519 key"
            }
            SetupError::SecretNotText => "the client secret is not text",
            SetupError::NoInstruments => "no instruments to trade",
        })
    }
}

impl core::error::Error for SetupError {}

/// How many finished orders are remembered (their client ids are not
/// taken again, and their late trades are still told).
const WINDOW: usize = 64;

/// The longest wait before a login the venue put off is tried again (the
/// wait doubles from 1 s up to this).
const LOGIN_BACKOFF_MAX_MS: u64 = 64_000;

/// An order that ended: what a late trade of it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ended {
    cid: ClientOrderId,
    instrument: InstrumentId,
    last_trade: u64,
}

/// The set-up requests still to send after a login.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Setup {
    cancel_on_disconnect: bool,
    subscribe: bool,
    /// Instruments (by index) whose open orders are still to be asked for,
    /// from this index on.
    open_orders_from: Option<u32>,
}

/// The longest refresh token kept (Deribit's are a few hundred bytes); a
/// longer one is not kept, and the session logs in afresh instead.
const TOKEN_ROOM: usize = 1024;

/// A Deribit order-entry session (see the module's docs).
pub struct DeribitSession {
    parser: JsonParser,
    core: Core,
}

struct Core {
    config: SessionConfig,
    credentials: Credentials,
    options: DeribitOptions,
    state: State,
    orders: OpenOrders,
    pending: Pending,
    matching: Credits,
    other: Credits,
    /// The refresh token of the last login (empty: none kept).
    refresh_token: String,
    /// When to refresh the token, ms since the epoch.
    refresh_at_ms: Option<u64>,
    /// A refresh (or a login standing in for one) is in flight.
    refreshing: bool,
    /// The login in flight is a `refresh_token` grant.
    login_is_refresh: bool,
    /// When to try a login the venue put off (its load) again.
    retry_login_at_ms: Option<u64>,
    /// Set-up and open-orders answers still awaited before `Ready`.
    setup_left: u32,
    /// A set-up request the venue refused (its code): the session stays
    /// `Reconciling`.
    setup_error: Option<i64>,
    /// Each working order's last trade applied (its number, see
    /// [`Core::fill`]), at most one entry per working order.
    last_trades: Vec<(ClientOrderId, u64)>,
    /// Orders that ended, the last [`WINDOW`]: their client id, instrument
    /// and last trade applied (a late trade of one is still told, once).
    done: [Option<Ended>; WINDOW],
    done_next: usize,
    /// The set-up requests not yet sent (no room in `Out` or in flight):
    /// sent from [`Session::on_timer`]; `Ready` waits for them.
    setup_owed: Setup,
    /// Logins the venue put off in a row (its load): the next is tried
    /// after a wait doubling from 1 s, up to [`LOGIN_BACKOFF_MAX_MS`].
    login_retries: u32,
    /// Orders the last reconciliation found working that the table had no
    /// room for (told once, as one `Rejected { Full }` without a client id).
    untracked: u32,
    unreadable: u64,
    nonces: u64,
}

impl DeribitSession {
    /// A session trading `config.instruments` under `credentials` (an API
    /// key's client id and client secret).
    pub fn new(
        config: SessionConfig,
        credentials: Credentials,
        options: DeribitOptions,
    ) -> Result<DeribitSession, SetupError> {
        let p = &config.prefix;
        if p.is_empty() || p.len() > 12 || !p.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(SetupError::Prefix);
        }
        if config.instruments.is_empty() {
            return Err(SetupError::NoInstruments);
        }
        let secret = credentials
            .shared_secret()
            .ok_or(SetupError::NotSharedSecret)?;
        if options.grant == Grant::ClientCredentials && core::str::from_utf8(secret).is_err() {
            return Err(SetupError::SecretNotText);
        }
        let capacity = config.max_open_orders.max(1);
        let in_flight = 2 * capacity + config.instruments.len() + 8;
        Ok(DeribitSession {
            parser: JsonParser::new(16 * 1024),
            core: Core {
                orders: OpenOrders::new(capacity),
                pending: Pending::new(in_flight),
                matching: Credits::new(options.limits.matching),
                other: Credits::new(options.limits.other),
                config,
                credentials,
                options,
                state: State::Disconnected,
                refresh_token: String::with_capacity(TOKEN_ROOM),
                refresh_at_ms: None,
                refreshing: false,
                login_is_refresh: false,
                retry_login_at_ms: None,
                setup_left: 0,
                setup_error: None,
                last_trades: Vec::with_capacity(capacity),
                done: [None; WINDOW],
                done_next: 0,
                setup_owed: Setup::default(),
                login_retries: 0,
                untracked: 0,
                unreadable: 0,
                nonces: 0,
            },
        })
    }

    /// The code of a set-up request the venue refused (cancel-on-disconnect,
    /// the subscription, the open orders; 0: the subscription's answer
    /// lists fewer channels than asked): the session then stays
    /// `Reconciling` and takes no order, for safety; `None` otherwise.
    pub fn setup_error(&self) -> Option<i64> {
        self.core.setup_error
    }

    /// When the token will be refreshed, ms since the epoch (`None`: not
    /// logged in).
    pub fn refresh_at_ms(&self) -> Option<u64> {
        self.core.refresh_at_ms
    }
}

impl fmt::Debug for DeribitSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeribitSession")
            .field("key", &self.core.credentials.key())
            .field("state", &self.core.state)
            .field("open_orders", &self.core.orders.len())
            .finish_non_exhaustive()
    }
}

/// Writes one request and files it; nothing is kept when it does not fit.
fn send(
    pending: &mut Pending,
    out: &mut Out,
    asked: Asked,
    now: Now,
    write: impl FnOnce(&mut Message<'_>, u64) -> fmt::Result,
) -> Result<u64, Reject> {
    send_about(pending, out, asked, None, now, write)
}

/// [`send`] of a request about one instrument (kept with it in flight).
fn send_about(
    pending: &mut Pending,
    out: &mut Out,
    asked: Asked,
    instrument: Option<InstrumentId>,
    now: Now,
    write: impl FnOnce(&mut Message<'_>, u64) -> fmt::Result,
) -> Result<u64, Reject> {
    if !pending.has_room() {
        return Err(Reject::Full);
    }
    let id = pending.peek_id();
    out.message(|m| write(m, id)).map_err(|_| Reject::Full)?;
    pending.file_about(asked, instrument, now.tsc, now.unix_ms);
    Ok(id)
}

/// `v`'s decimal text into `buf`.
fn u64_text(mut v: u64, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    core::str::from_utf8(&buf[at..]).unwrap_or("0")
}

impl Core {
    fn instrument_of(&self, symbol: &str) -> Option<(InstrumentId, &InstrumentSpec)> {
        let at = self
            .config
            .instruments
            .iter()
            .position(|s| s.symbol == symbol)?;
        Some((InstrumentId(at as u32), &self.config.instruments[at]))
    }

    fn scales(&self) -> impl Fn(&str) -> Option<(u8, u8)> + '_ {
        |symbol| {
            self.instrument_of(symbol)
                .map(|(_, s)| (s.price_scale, s.size_scale))
        }
    }

    fn nth_order(&self, k: usize) -> Option<OpenOrder> {
        self.orders.iter().nth(k).copied()
    }

    fn is_done(&self, cid: ClientOrderId) -> bool {
        self.ended(cid).is_some()
    }

    fn ended(&self, cid: ClientOrderId) -> Option<Ended> {
        self.done.iter().flatten().find(|e| e.cid == cid).copied()
    }

    /// The last trade applied of `cid` (0: none).
    fn last_trade(&self, cid: ClientOrderId) -> u64 {
        self.last_trades
            .iter()
            .find(|(c, _)| *c == cid)
            .map(|&(_, t)| t)
            .or_else(|| self.ended(cid).map(|e| e.last_trade))
            .unwrap_or(0)
    }

    fn set_last_trade(&mut self, cid: ClientOrderId, trade: u64) {
        if let Some(e) = self.done.iter_mut().flatten().find(|e| e.cid == cid) {
            e.last_trade = trade;
            return;
        }
        if let Some(t) = self.last_trades.iter_mut().find(|(c, _)| *c == cid) {
            t.1 = trade;
            return;
        }
        if self.last_trades.len() == self.last_trades.capacity() {
            // Entries of orders no longer working (ended without a word
            // here) make room; the table never grows.
            let orders = &self.orders;
            self.last_trades.retain(|(c, _)| orders.get(*c).is_some());
        }
        if self.last_trades.len() < self.last_trades.capacity() {
            self.last_trades.push((cid, trade));
        }
    }

    fn mark_done(&mut self, cid: ClientOrderId, instrument: InstrumentId) {
        if self.is_done(cid) {
            return;
        }
        let last_trade = self.last_trade(cid);
        if let Some(at) = self.last_trades.iter().position(|(c, _)| *c == cid) {
            self.last_trades.swap_remove(at);
        }
        self.done[self.done_next] = Some(Ended {
            cid,
            instrument,
            last_trade,
        });
        self.done_next = (self.done_next + 1) % WINDOW;
    }

    /// The stamp of the request in flight that news of kind `kind` about
    /// `cid` answers (0: none): an acceptance or a fill answers the
    /// placing, an amend the amend, a cancel the cancel (a fill of a
    /// resting order answers no request, even with a cancel in flight).
    fn in_flight_tsc(&self, cid: ClientOrderId, kind: &OrderKind) -> u64 {
        self.pending
            .iter()
            .find(|f| match (f.asked, kind) {
                (Asked::Place(c), OrderKind::Accepted { .. } | OrderKind::Filled { .. }) => {
                    c == cid
                }
                (Asked::Amend(c, _), OrderKind::Amended { .. }) => c == cid,
                (Asked::Cancel(c), OrderKind::Canceled) => c == cid,
                _ => false,
            })
            .map_or(0, |f| f.sent_tsc)
    }

    /// Applies an event to the working orders and reports it.
    fn emit(&mut self, e: OrderEvent, events: &mut Vec<OrderEvent>) {
        self.orders.apply(&e);
        if let Some(cid) = e.cid {
            let ended = match e.kind {
                OrderKind::Canceled => true,
                OrderKind::Filled { leaves, .. } => leaves <= 0,
                _ => false,
            };
            if ended {
                self.mark_done(cid, e.instrument);
            }
        }
        events.push(e);
    }

    fn login(&mut self, now: Now, out: &mut Out) {
        self.other.take(now.unix_ms);
        self.login_is_refresh = false;
        let key = self.credentials.key();
        let sent = match self.options.grant {
            Grant::ClientCredentials => {
                let secret = self
                    .credentials
                    .shared_secret()
                    .and_then(|s| core::str::from_utf8(s).ok())
                    .unwrap_or_default();
                send(&mut self.pending, out, Asked::Login, now, |m, id| {
                    wire::auth_credentials(m, id, key, secret)
                })
            }
            Grant::ClientSignature => {
                // A nonce of the session's count and the TSC: never the same
                // twice on one host (the docs ask only that it be the
                // client's "initialization vector").
                self.nonces += 1;
                let nonce_value = now.tsc ^ self.nonces.rotate_left(48);
                let mut nonce = [0u8; 16];
                const HEX: &[u8; 16] = b"0123456789abcdef";
                for (i, n) in nonce.iter_mut().enumerate() {
                    *n = HEX[((nonce_value >> (60 - 4 * i)) & 15) as usize];
                }
                let nonce = core::str::from_utf8(&nonce).unwrap_or_default();
                let mut ts = [0u8; 20];
                let ts = u64_text(now.unix_ms, &mut ts);
                let mut sig = [0u8; 64];
                let Some(sig) = self.credentials.hmac_hex(
                    &[ts.as_bytes(), b"\n", nonce.as_bytes(), b"\n", b""],
                    &mut sig,
                ) else {
                    // Not a shared secret: refused at creation.
                    return;
                };
                send(&mut self.pending, out, Asked::Login, now, |m, id| {
                    wire::auth_signature(m, id, key, now.unix_ms, nonce, sig)
                })
            }
        };
        if sent.is_err() {
            // No room to write it: tried again from the next timer.
            self.refreshing = false;
            self.retry_login_at_ms = Some(now.unix_ms);
        }
    }

    fn refresh(&mut self, now: Now, out: &mut Out) {
        self.refreshing = true;
        if self.refresh_token.is_empty() {
            self.login(now, out);
            return;
        }
        self.other.take(now.unix_ms);
        let token = self.refresh_token.as_str();
        if send(&mut self.pending, out, Asked::Login, now, |m, id| {
            wire::auth_refresh(m, id, token)
        })
        .is_ok()
        {
            self.login_is_refresh = true;
        } else {
            self.refreshing = false;
        }
    }

    /// Logged in: cancel-on-disconnect, the subscriptions, the open orders.
    fn set_up(&mut self, now: Now, out: &mut Out) {
        self.state = State::Reconciling;
        self.setup_left = 0;
        self.setup_error = None;
        self.untracked = 0;
        self.setup_owed = Setup {
            cancel_on_disconnect: self.config.cancel_on_disconnect,
            subscribe: true,
            open_orders_from: Some(0),
        };
        self.send_setup(now, out);
    }

    /// Sends what is owed of the set-up, in order, until a request does
    /// not fit (then the rest waits for the next [`Session::on_timer`]):
    /// `Ready` needs every answer, so nothing is skipped.
    fn send_setup(&mut self, now: Now, out: &mut Out) {
        if self.setup_owed.cancel_on_disconnect {
            self.other.take(now.unix_ms);
            if send(
                &mut self.pending,
                out,
                Asked::Setup,
                now,
                wire::enable_cancel_on_disconnect,
            )
            .is_err()
            {
                return;
            }
            self.setup_owed.cancel_on_disconnect = false;
            self.setup_left += 1;
        }
        if self.setup_owed.subscribe {
            self.other.take(now.unix_ms);
            let instruments = &self.config.instruments;
            if send(&mut self.pending, out, Asked::Setup, now, |m, id| {
                wire::subscribe(m, id, instruments.iter().map(|s| s.symbol.as_str()))
            })
            .is_err()
            {
                return;
            }
            self.setup_owed.subscribe = false;
            self.setup_left += 1;
        }
        while let Some(i) = self.setup_owed.open_orders_from {
            let Some(spec) = self.config.instruments.get(i as usize) else {
                self.setup_owed.open_orders_from = None;
                break;
            };
            self.other.take(now.unix_ms);
            if send(
                &mut self.pending,
                out,
                Asked::OpenOrders(i),
                now,
                |m, id| wire::open_orders(m, id, &spec.symbol),
            )
            .is_err()
            {
                return;
            }
            self.setup_left += 1;
            self.setup_owed.open_orders_from = Some(i + 1);
        }
    }

    fn setup_answered(&mut self) {
        self.setup_left = self.setup_left.saturating_sub(1);
        if self.setup_left == 0
            && self.setup_owed == Setup::default()
            && self.setup_error.is_none()
            && self.state == State::Reconciling
        {
            self.state = State::Ready;
        }
    }

    fn submit(&mut self, request: &Request, now: Now, out: &mut Out) -> Result<(), Reject> {
        if self.state != State::Ready {
            return Err(Reject::NotReady);
        }
        let prefix = self.config.prefix.as_str();
        match *request {
            Request::Place { cid, order } => {
                let spec = instrument(&self.config.instruments, order.instrument)?;
                if order.price <= 0 || order.size <= 0 {
                    return Err(Reject::BadValue);
                }
                // Deribit takes post-only with good_til_cancelled alone.
                if order.post_only && order.tif != TimeInForce::GoodTillCancel {
                    return Err(Reject::BadValue);
                }
                if self.orders.known(cid) || self.is_done(cid) {
                    return Err(Reject::Duplicate);
                }
                self.matching
                    .check(now.unix_ms)
                    .map_err(|retry_after_ms| Reject::RateLimited { retry_after_ms })?;
                if !self.orders.reserve(cid) {
                    return Err(Reject::Full);
                }
                let (ps, ss) = (spec.price_scale, spec.size_scale);
                let symbol = spec.symbol.as_str();
                if let Err(e) = send_about(
                    &mut self.pending,
                    out,
                    Asked::Place(cid),
                    Some(order.instrument),
                    now,
                    |m, id| wire::place(m, id, symbol, ps, ss, prefix, cid.0, &order),
                ) {
                    self.orders.unreserve(cid);
                    return Err(e);
                }
            }
            Request::Amend {
                cid,
                new_cid,
                price,
                size,
            } => {
                // `private/edit` keeps the order's label: its client id.
                if new_cid != cid || price <= 0 || size <= 0 {
                    return Err(Reject::BadValue);
                }
                let o = *self.orders.get(cid).ok_or(Reject::UnknownOrder)?;
                let spec = instrument(&self.config.instruments, o.instrument)?;
                self.matching
                    .check(now.unix_ms)
                    .map_err(|retry_after_ms| Reject::RateLimited { retry_after_ms })?;
                let (ps, ss) = (spec.price_scale, spec.size_scale);
                send(
                    &mut self.pending,
                    out,
                    Asked::Amend(cid, cid),
                    now,
                    |m, id| wire::edit(m, id, o.venue_order.as_str(), (size, ss), (price, ps)),
                )?;
            }
            Request::Cancel { cid } => {
                let o = *self.orders.get(cid).ok_or(Reject::UnknownOrder)?;
                self.matching
                    .check(now.unix_ms)
                    .map_err(|retry_after_ms| Reject::RateLimited { retry_after_ms })?;
                send(&mut self.pending, out, Asked::Cancel(cid), now, |m, id| {
                    wire::cancel(m, id, o.venue_order.as_str())
                })?;
            }
            Request::CancelAll { instrument: of } => {
                let symbol = match of {
                    Some(i) => Some(instrument(&self.config.instruments, i)?.symbol.as_str()),
                    None => None,
                };
                self.matching
                    .check(now.unix_ms)
                    .map_err(|retry_after_ms| Reject::RateLimited { retry_after_ms })?;
                send(
                    &mut self.pending,
                    out,
                    Asked::CancelAll(of.map(|i| i.0)),
                    now,
                    |m, id| wire::cancel_all(m, id, symbol),
                )?;
            }
        }
        self.matching.take(now.unix_ms);
        Ok(())
    }
}

impl Session for DeribitSession {
    fn state(&self) -> State {
        self.core.state
    }

    fn on_open(&mut self, now: Now, out: &mut Out) {
        let core = &mut self.core;
        // Refused credentials are not tried again (`State::Refused`).
        if matches!(core.state, State::Refused { .. }) {
            return;
        }
        core.state = State::LoggingIn;
        core.retry_login_at_ms = None;
        core.login_retries = 0;
        core.login(now, out);
    }

    fn on_text(
        &mut self,
        buf: &mut [u8],
        len: usize,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) {
        let DeribitSession { parser, core } = self;
        let read = parser.parse(buf, len, |doc| core.handle(doc, now, out, events));
        if !matches!(read, Ok(Some(()))) {
            core.unreadable += 1;
        }
    }

    fn submit(&mut self, request: &Request, now: Now, out: &mut Out) -> Result<(), Reject> {
        self.core.submit(request, now, out)
    }

    fn on_timer(&mut self, now: Now, out: &mut Out) {
        let core = &mut self.core;
        match core.state {
            State::LoggingIn => {
                if core.retry_login_at_ms.is_some_and(|at| now.unix_ms >= at) {
                    core.retry_login_at_ms = None;
                    core.login(now, out);
                }
            }
            State::Reconciling | State::Ready => {
                if core.retry_login_at_ms.is_some_and(|at| now.unix_ms >= at) {
                    // A fresh login standing in for a refresh, put off.
                    core.retry_login_at_ms = None;
                    core.login(now, out);
                }
                if core.state == State::Reconciling && core.setup_owed != Setup::default() {
                    core.send_setup(now, out);
                }
                if !core.refreshing && core.refresh_at_ms.is_some_and(|at| now.unix_ms >= at) {
                    core.refresh(now, out);
                }
            }
            State::Disconnected | State::Refused { .. } => {}
        }
    }

    fn on_close(&mut self, _now: Now) {
        let core = &mut self.core;
        // Orders placed and not answered are found again by the
        // reconciliation, or never were.
        let mut k = 0;
        while let Some(f) = core.pending.iter().nth(k).copied() {
            if let Asked::Place(cid) = f.asked {
                core.orders.unreserve(cid);
            }
            k += 1;
        }
        core.pending.clear();
        if !matches!(core.state, State::Refused { .. }) {
            core.state = State::Disconnected;
        }
        core.refresh_at_ms = None;
        core.refreshing = false;
        core.login_is_refresh = false;
        core.retry_login_at_ms = None;
        core.setup_left = 0;
        core.setup_error = None;
        core.setup_owed = Setup::default();
        core.refresh_token.clear();
    }

    fn open_orders(&self) -> &OpenOrders {
        &self.core.orders
    }

    fn unreadable(&self) -> u64 {
        self.core.unreadable
    }
}
