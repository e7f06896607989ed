//! Binance spot's WebSocket API (`/ws-api/v3`): sessions, signed
//! requests, orders on the simulator's exchange, the user data stream and
//! the rate limits, as the public documentation describes them (the
//! `binance/binance-spot-api-docs` repository: `web-socket-api.md`,
//! `errors.md`, `user-data-stream.md`, `filters.md`, `enums.md`; the same
//! text as developers.binance.com/docs/binance-spot-api-docs/websocket-api).
//! Each rule relied on is written next to the code that keeps it; what the
//! docs leave open and what is not simulated is said where it is decided.
//!
//! The protocol's shape ("Request format", "Response format"): one JSON
//! request a text frame, `{"id":..,"method":..,"params":{..}}`, the `id`
//! any JSON value echoed back as sent; one answer a frame,
//! `{"id":..,"status":200,"result":..,"rateLimits":[..]}` or
//! `{"id":..,"status":4xx,"error":{"code":..,"msg":..},"rateLimits":[..]}`,
//! `status` "the same as in HTTP". User data stream events come as
//! `{"subscriptionId":N,"event":{..}}` ("Event format").
//!
//! Served here: `session.logon` / `session.status` / `session.logout`,
//! `order.place` (LIMIT, LIMIT_MAKER, MARKET by `quantity`), `order.test`,
//! `order.cancel`, `order.cancelReplace`, `order.status`,
//! `openOrders.status`, `openOrders.cancelAll`,
//! `userDataStream.subscribe` / `.unsubscribe` /
//! `.subscribe.signature`, `session.subscriptions`, `ping` and `time`.
//! Anything else is refused as unsupported (see [`unknown_method`]).
//!
//! The request handling is sans-IO: [`WsApi::on_text`] takes the time as
//! an argument, so the tests drive rate-limit windows and `recvWindow`
//! checks with times of their own.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::exchange::{Account, KeySecret, SimOrder, Status, Tif};
use crate::protocol::{Market, Out};

#[cfg(test)]
mod order_tests;
mod orders;
mod reports;
mod sign;
#[cfg(test)]
mod tests;

use sign::{bad_key, check_time, key_well_formed, payload, verify};

/// The path the WebSocket API is served at ("General API Information":
/// `wss://ws-api.binance.com:443/ws-api/v3`).
pub(crate) const PATH: &str = "/ws-api/v3";

/// The rate limits the simulated WebSocket API enforces (see
/// [`WsApiLimits::default`] for Binance's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WsApiLimits {
    /// `REQUEST_WEIGHT` a minute, shared by every connection (Binance
    /// keeps it "per IP address"; every client of the simulator is on
    /// loopback).
    pub weight_per_minute: u32,
    /// `ORDERS` (the unfilled order count) per 10 seconds, per account.
    pub orders_per_10s: u32,
    /// `ORDERS` a day, per account.
    pub orders_per_day: u32,
}

impl Default for WsApiLimits {
    /// The figures of the docs' own examples ("Rate limits"):
    /// `REQUEST_WEIGHT` 6000 a minute, `ORDERS` 50 per 10 seconds and
    /// 160000 a day.
    fn default() -> WsApiLimits {
        WsApiLimits {
            weight_per_minute: 6000,
            orders_per_10s: 50,
            orders_per_day: 160_000,
        }
    }
}

/// A fixed-window counter. "Rate limits are accounted by intervals ... a
/// `1 MINUTE` interval starts every minute ... `1 DAY` rate limit resets
/// at 00:00 UTC every day, and `10 SECOND` interval resets at 00, 10,
/// 20... seconds of each minute" ("How to interpret rate limits").
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Window {
    /// The interval's index (`now_ms / len_ms`) the count is of.
    at: u64,
    count: u32,
}

impl Window {
    /// The count in the interval of `now_ms`.
    pub(super) fn count(&mut self, now_ms: u64, len_ms: u64) -> u32 {
        if now_ms / len_ms != self.at {
            self.at = now_ms / len_ms;
            self.count = 0;
        }
        self.count
    }

    pub(super) fn add(&mut self, now_ms: u64, len_ms: u64, n: u32) -> u32 {
        self.count(now_ms, len_ms);
        self.count = self.count.saturating_add(n);
        self.count
    }
}

const MINUTE_MS: u64 = 60_000;
pub(super) const TEN_S_MS: u64 = 10_000;
pub(super) const DAY_MS: u64 = 86_400_000;

/// What is known of an order beyond the engine's [`SimOrder`]: how it was
/// asked for, and what the venue reports of it that the engine does not
/// keep (its quote quantity traded, the client id of its cancel).
#[derive(Clone, Debug)]
pub(super) struct Meta {
    pub(super) kind: OrderType,
    pub(super) tif: Tif,
    /// Σ price × quantity of its trades, in units of 10^-(price scale +
    /// size scale).
    pub(super) quote: i128,
    /// The last trade id counted into `quote` (each client of the account
    /// sees the same trades: each is counted once).
    pub(super) last_trade: u64,
    /// The client order id its cancel carried (`newClientOrderId` of
    /// `order.cancel`, Binance's `c` of the `CANCELED` report, the order's
    /// own id going to `C`).
    pub(super) cancel_id: Option<String>,
    /// Its state as last seen (for `order.status` after it left the book).
    pub(super) last: SimOrder,
}

/// The state every connection shares: the limits' counters (weight by IP,
/// orders by account) and what is known of each order.
#[derive(Default)]
pub(super) struct Shared {
    pub(super) weight: Window,
    pub(super) orders_10s: HashMap<Account, Window>,
    pub(super) orders_day: HashMap<Account, Window>,
    pub(super) orders: HashMap<u64, Meta>,
    /// Client order ids generated for requests that sent none.
    pub(super) generated: u64,
    /// FOK orders expired unfilled (see `fok_expired`).
    pub(super) expired: u64,
}

/// Binance spot's WebSocket API over the simulator's exchange.
pub(crate) struct WsApi {
    pub(super) limits: WsApiLimits,
    pub(super) shared: Mutex<Shared>,
}

/// One WebSocket API connection.
pub(crate) struct Session {
    pub(super) connected_ms: u64,
    /// `returnRateLimits` of the connection URL (default true).
    pub(super) rate_limits: bool,
    /// The account logged on, its API key and since when.
    pub(super) logon: Option<(Account, String, u64)>,
    /// User data stream subscriptions: id, account, and whether it is the
    /// logged-on session's own (closed by `session.logout`).
    pub(super) subs: Vec<(u32, Account, bool)>,
    pub(super) next_sub: u32,
    /// Execution ids (`I`) given on this connection.
    pub(super) executions: u64,
}

impl Session {
    /// A connection opened at `now_ms` to `path` (its query read for
    /// `returnRateLimits`: "If you wish to omit `rateLimits` from all
    /// responses by default, use `returnRateLimits` parameter in the query
    /// string").
    pub(crate) fn new(path: &str, now_ms: u64) -> Session {
        Session {
            connected_ms: now_ms,
            rate_limits: crate::protocol::query(path, "returnRateLimits") != Some("false"),
            logon: None,
            subs: Vec::new(),
            next_sub: 0,
            executions: 0,
        }
    }
}

/// Order types served (`enums.md` "Order types"; the stop and take-profit
/// kinds are not simulated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OrderType {
    Limit,
    LimitMaker,
    Market,
}

impl OrderType {
    pub(super) fn name(self) -> &'static str {
        match self {
            OrderType::Limit => "LIMIT",
            OrderType::LimitMaker => "LIMIT_MAKER",
            OrderType::Market => "MARKET",
        }
    }
}

pub(super) fn tif_name(t: Tif) -> &'static str {
    match t {
        Tif::Gtc => "GTC",
        Tif::Ioc => "IOC",
        Tif::Fok => "FOK",
    }
}

/// Order status names (`enums.md` "Order status").
pub(super) fn status_name(s: Status) -> &'static str {
    match s {
        Status::New => "NEW",
        Status::PartiallyFilled => "PARTIALLY_FILLED",
        Status::Filled => "FILLED",
        Status::Canceled => "CANCELED",
        Status::Rejected => "REJECTED",
        Status::Expired => "EXPIRED",
    }
}

/// A refusal: the HTTP-like status, Binance's code and message, and
/// `data` (already JSON) where the docs give one.
#[derive(Debug)]
pub(super) struct Refusal {
    pub(super) status: u16,
    pub(super) code: i64,
    pub(super) msg: String,
    pub(super) data: Option<String>,
}

pub(super) fn refuse(status: u16, code: i64, msg: impl Into<String>) -> Refusal {
    Refusal {
        status,
        code,
        msg: msg.into(),
        data: None,
    }
}

/// -1102: "Mandatory parameter '%s' was not sent, was empty/null, or
/// malformed." (`errors.md`).
pub(super) fn mandatory(name: &str) -> Refusal {
    refuse(
        400,
        -1102,
        format!("Mandatory parameter '{name}' was not sent, was empty/null, or malformed."),
    )
}

/// -1013 with a filter's name ("Filter failures": `"Filter failure:
/// PRICE_FILTER"`, `"Filter failure: LOT_SIZE"`; -1013 INVALID_MESSAGE
/// "Potential error messages can be found in Filter Failures").
pub(super) fn filter_failure(filter: &str) -> Refusal {
    refuse(400, -1013, format!("Filter failure: {filter}"))
}

/// -2010 NEW_ORDER_REJECTED with the matching engine's message
/// (`errors.md` "Messages for -1010 ERROR_MSG_RECEIVED, -2010
/// NEW_ORDER_REJECTED, -2011 CANCEL_REJECTED").
pub(super) fn rejected(msg: &str) -> Refusal {
    refuse(400, -2010, msg)
}

/// -2011 CANCEL_REJECTED "Unknown order sent." ("The order (by either
/// `orderId`, `clOrdId`, `origClOrdId`) could not be found").
pub(super) fn unknown_order() -> Refusal {
    refuse(400, -2011, "Unknown order sent.")
}

/// An unknown method. The docs give no answer for one: the documented
/// -1020 UNSUPPORTED_OPERATION "This operation is not supported." is the
/// code whose meaning fits, status 400.
fn unknown_method() -> Refusal {
    refuse(400, -1020, "This operation is not supported.")
}

/// A request's parameters.
pub(super) struct Params<'a>(pub(super) &'a Map<String, Value>);

impl Params<'_> {
    /// A parameter as text: a string as it is, a number or boolean as
    /// JSON writes it; absent, null and empty are `None`.
    pub(super) fn text(&self, name: &str) -> Option<String> {
        match self.0.get(name)? {
            Value::String(s) if s.is_empty() => None,
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            v @ (Value::Number(_) | Value::Bool(_)) => Some(v.to_string()),
            _ => None,
        }
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.text(name).is_some()
    }

    pub(super) fn required(&self, name: &str) -> Result<String, Refusal> {
        self.text(name).ok_or_else(|| mandatory(name))
    }

    /// A LONG parameter (a JSON number or a string of digits).
    pub(super) fn long(&self, name: &str) -> Result<Option<u64>, Refusal> {
        match self.text(name) {
            None => Ok(None),
            Some(t) => t.parse().map(Some).map_err(|_| mandatory(name)),
        }
    }
}

/// What a request weighs ("Weight" of each method in
/// `web-socket-api.md`): the session methods and the user data stream
/// requests 2, `order.place` / `order.test` / `order.cancel` /
/// `order.cancelReplace` / `openOrders.cancelAll` 1, `order.status` 4, `openOrders.status` 6 for
/// a symbol and 80 for all, `ping` and `time` 1.
fn weight(method: &str, params: &Map<String, Value>) -> u32 {
    match method {
        "order.place" | "order.cancel" | "order.cancelReplace" | "openOrders.cancelAll" => 1,
        // 20 with `computeCommissionRates`, which is not simulated.
        "order.test" => 1,
        "order.status" => 4,
        "openOrders.status" => {
            if params.get("symbol").is_some_and(|s| !s.is_null()) {
                6
            } else {
                80
            }
        }
        "ping" | "time" => 1,
        _ => 2,
    }
}

/// What an answer reports of the limits ("The `rateLimits` array
/// describes all currently active rate limits affected by the request"):
/// the order counts for the methods that place orders, then the weight.
pub(super) struct Usage {
    pub(super) weight: u32,
    pub(super) orders: Option<(u32, u32)>,
}

impl WsApi {
    pub(crate) fn new(limits: WsApiLimits) -> WsApi {
        WsApi {
            limits,
            shared: Mutex::new(Shared::default()),
        }
    }

    pub(super) fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        // A panic elsewhere while it was held leaves counters that are
        // still counters.
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A connection opened at `now_ms` to `path`: "Connecting to
    /// WebSocket API costs 2 weight" ("IP limits").
    pub(crate) fn connect(&self, path: &str, now_ms: u64) -> Session {
        self.charge(2, now_ms);
        Session::new(path, now_ms)
    }

    /// A text frame from a WebSocket API client, at `now_ms`: its answer
    /// into `out`.
    pub(crate) fn on_text(
        &self,
        session: &mut Session,
        text: &str,
        market: &mut Market,
        now_ms: u64,
        out: &mut Out,
    ) {
        let Ok(Value::Object(request)) = serde_json::from_str::<Value>(text) else {
            // Not a JSON object: no id to answer to. -1135 INVALID_JSON
            // "Invalid JSON Request" is the documented code for it.
            let r = refuse(400, -1135, "Invalid JSON Request");
            let usage = self.charge(2, now_ms);
            return out.push(answer("null", Err(r), &usage, &self.limits, true));
        };
        let id = request
            .get("id")
            .map_or_else(|| "null".into(), Value::to_string);
        let empty = Map::new();
        let params = match request.get("params") {
            Some(Value::Object(p)) => p,
            _ => &empty,
        };
        // "Request method names may be prefixed with explicit version:
        // e.g., `"v3/order.place"`."
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let method = method.strip_prefix("v3/").unwrap_or(method);
        let show = match params.get("returnRateLimits") {
            Some(Value::Bool(b)) => *b,
            _ => session.rate_limits,
        };
        // Weight is counted for every request, refused or not; over the
        // limit, 429 -1003 ("IP limits": "If you go over the weight
        // limit, requests fail with status `429`"; "Rate-limited
        // responses include a `retryAfter` field").
        let mut usage = self.charge(weight(method, params), now_ms);
        if usage.weight > self.limits.weight_per_minute {
            let retry = (now_ms / MINUTE_MS + 1) * MINUTE_MS;
            let r = Refusal {
                status: 429,
                code: -1003,
                msg: format!(
                    "Too much request weight used; current limit is {} request weight per 1 MINUTE. Please use WebSocket Streams for live updates to avoid polling the API.",
                    self.limits.weight_per_minute
                ),
                data: Some(format!(r#"{{"serverTime":{now_ms},"retryAfter":{retry}}}"#)),
            };
            return out.push(answer(&id, Err(r), &usage, &self.limits, show));
        }
        let p = Params(params);
        // Subscriptions the request ended.
        let mut ended = Vec::new();
        let result = match method {
            "ping" => Ok("{}".to_string()),
            "time" => Ok(format!(r#"{{"serverTime":{now_ms}}}"#)),
            "session.logon" => self.logon(session, &p, params, market, now_ms),
            "session.status" => Ok(status(session, now_ms)),
            "session.logout" => {
                session.logon = None;
                ended.extend(session.subs.iter().filter(|s| s.2).map(|s| s.0));
                session.subs.retain(|s| !s.2);
                Ok(status(session, now_ms))
            }
            "userDataStream.subscribe" => subscribe(session),
            // "This also doesn't require an Ed25519 API Key, and can work
            // with any API Key type" (changelog, `subscribe.signature`).
            "userDataStream.subscribe.signature" => {
                match self.signed(&p, params, market, now_ms, false) {
                    Ok(account) => subscribe_account(session, account, false),
                    Err(r) => Err(r),
                }
            }
            "userDataStream.unsubscribe" => unsubscribe(session, &p, &mut ended),
            "session.subscriptions" => {
                let ids: Vec<String> = session
                    .subs
                    .iter()
                    .map(|s| format!(r#"{{"subscriptionId":{}}}"#, s.0))
                    .collect();
                Ok(format!("[{}]", ids.join(",")))
            }
            "order.place"
            | "order.test"
            | "order.cancel"
            | "order.cancelReplace"
            | "order.status"
            | "openOrders.status"
            | "openOrders.cancelAll" => {
                match self.account(session, &p, params, market, now_ms, false) {
                    Ok(account) => {
                        let mut call = Call {
                            api: self,
                            market,
                            account,
                            now_ms,
                            usage: &mut usage,
                        };
                        call.trade(method, &p)
                    }
                    Err(r) => Err(r),
                }
            }
            _ => Err(unknown_method()),
        };
        out.push(answer(&id, result, &usage, &self.limits, show));
        // "`eventStreamTerminated` is sent when ... A logon subscription
        // ends after sending `session.logout` ... The subscription is
        // stopped via the `userDataStream.unsubscribe` method"
        // (`user-data-stream.md` "Event Stream Terminated").
        for sub in ended {
            out.push(format!(
                r#"{{"subscriptionId":{sub},"event":{{"e":"eventStreamTerminated","E":{now_ms}}}}}"#
            ));
        }
    }

    /// Adds `weight` to the minute's count: the usage after it.
    fn charge(&self, weight: u32, now_ms: u64) -> Usage {
        let mut s = self.shared();
        Usage {
            weight: s.weight.add(now_ms, MINUTE_MS, weight),
            orders: None,
        }
    }

    /// `session.logon`: "Only _Ed25519_ keys are supported for this
    /// feature" ("Session Authentication"); `apiKey`, `signature`,
    /// `timestamp` mandatory, `recvWindow` optional, signed as any SIGNED
    /// request. "Calling `session.logon` multiple times changes the
    /// current authenticated API key." The docs give no code for an HMAC
    /// key here: its signature is not an Ed25519 one, so it is refused as
    /// one that does not verify (-1022), as clients that tried report
    /// (sieblyio/binance pull request 626: "my HMAC key was consistently
    /// getting an invalid signature error").
    fn logon(
        &self,
        session: &mut Session,
        p: &Params<'_>,
        params: &Map<String, Value>,
        market: &Market,
        now_ms: u64,
    ) -> Result<String, Refusal> {
        let key = p.required("apiKey")?;
        let account = self.signed(p, params, market, now_ms, true)?;
        session.logon = Some((account, key, now_ms));
        Ok(status(session, now_ms))
    }

    /// The account a SIGNED request acts for: the one its own `apiKey` and
    /// `signature` name ("you can always specify the `apiKey` and
    /// `signature` explicitly for individual requests, overriding the
    /// authenticated API key"), else the session's ("After calling
    /// `session.logon`, you can omit `apiKey` and `signature`"), whose
    /// requests still carry a `timestamp` ("You still have to specify the
    /// `timestamp` parameter for `SIGNED` requests"). Neither: `apiKey` is
    /// a missing mandatory parameter.
    fn account(
        &self,
        session: &Session,
        p: &Params<'_>,
        params: &Map<String, Value>,
        market: &Market,
        now_ms: u64,
        ed25519_only: bool,
    ) -> Result<Account, Refusal> {
        if p.has("apiKey") || p.has("signature") {
            return self.signed(p, params, market, now_ms, ed25519_only);
        }
        match &session.logon {
            Some((account, ..)) => {
                check_time(p, now_ms)?;
                Ok(*account)
            }
            None => Err(mandatory("apiKey")),
        }
    }

    /// A request signed with its own key: the key's format (-2014), the
    /// key known (-2015), the time (-1021), the signature (-1022
    /// "Signature for this request is not valid.").
    fn signed(
        &self,
        p: &Params<'_>,
        params: &Map<String, Value>,
        market: &Market,
        now_ms: u64,
        ed25519_only: bool,
    ) -> Result<Account, Refusal> {
        let key = p.required("apiKey")?;
        if !key_well_formed(&key) {
            return Err(refuse(401, -2014, "API-key format invalid."));
        }
        let signature = p.required("signature")?;
        let (account, secret) = market.key(&key).ok_or_else(bad_key)?;
        check_time(p, now_ms)?;
        let ed25519 = matches!(secret, KeySecret::Ed25519Public(_));
        if (ed25519_only && !ed25519) || !verify(secret, &payload(params), &signature) {
            return Err(refuse(
                400,
                -1022,
                "Signature for this request is not valid.",
            ));
        }
        Ok(account)
    }
}

/// `session.status` (and what `session.logon` and `session.logout`
/// answer): the key logged on or null, since when, the connection's
/// start, `returnRateLimits`, the time, and whether a user data stream
/// subscription is active ("Query session status").
fn status(session: &Session, now_ms: u64) -> String {
    let (key, since) = match &session.logon {
        Some((_, key, since)) => (format!("{key:?}"), since.to_string()),
        None => ("null".into(), "null".into()),
    };
    format!(
        r#"{{"apiKey":{key},"authorizedSince":{since},"connectedSince":{},"returnRateLimits":{},"serverTime":{now_ms},"userDataStream":{}}}"#,
        session.connected_ms,
        session.rate_limits,
        !session.subs.is_empty()
    )
}

/// `userDataStream.subscribe`: "This method requires an authenticated
/// WebSocket connection"; answered `{"subscriptionId":N}`.
fn subscribe(session: &mut Session) -> Result<String, Refusal> {
    let Some((account, ..)) = session.logon else {
        // Not logged on: -2015, as for a request the key may not make.
        return Err(bad_key());
    };
    subscribe_account(session, account, true)
}

/// A subscription to `account`'s events: "You can have only one active
/// subscription for a given account on a given connection" (-2035
/// SUBSCRIPTION_ACTIVE "User Data Stream subscription already active.").
fn subscribe_account(
    session: &mut Session,
    account: Account,
    own: bool,
) -> Result<String, Refusal> {
    if session.subs.iter().any(|s| s.1 == account) {
        return Err(refuse(
            400,
            -2035,
            "User Data Stream subscription already active.",
        ));
    }
    let id = session.next_sub;
    session.next_sub += 1;
    session.subs.push((id, account, own));
    Ok(format!(r#"{{"subscriptionId":{id}}}"#))
}

/// `userDataStream.unsubscribe`: "When called with no parameter, this will
/// close all subscriptions", else the one named; answered `{}`. None
/// active: -2036 SUBSCRIPTION_INACTIVE "User Data Stream subscription not
/// active."
fn unsubscribe(
    session: &mut Session,
    p: &Params<'_>,
    ended: &mut Vec<u32>,
) -> Result<String, Refusal> {
    if session.subs.is_empty() {
        return Err(refuse(
            400,
            -2036,
            "User Data Stream subscription not active.",
        ));
    }
    let id = p.long("subscriptionId")?;
    let ends = |s: &(u32, Account, bool)| id.is_none_or(|id| u64::from(s.0) == id);
    ended.extend(session.subs.iter().filter(|s| ends(s)).map(|s| s.0));
    session.subs.retain(|s| !ends(s));
    Ok("{}".into())
}

/// The answer frame: `id`, `status`, `result` or `error`, and (unless
/// hidden) `rateLimits`.
fn answer(
    id: &str,
    result: Result<String, Refusal>,
    usage: &Usage,
    limits: &WsApiLimits,
    show: bool,
) -> String {
    let mut s = String::with_capacity(512);
    match result {
        Ok(r) => {
            let _ = write!(s, r#"{{"id":{id},"status":200,"result":{r}"#);
        }
        Err(e) => {
            let _ = write!(
                s,
                r#"{{"id":{id},"status":{},"error":{{"code":{},"msg":{}"#,
                e.status,
                e.code,
                Value::String(e.msg)
            );
            if let Some(data) = e.data {
                let _ = write!(s, r#","data":{data}"#);
            }
            s.push('}');
        }
    }
    if show {
        s.push_str(r#","rateLimits":["#);
        let limit = |s: &mut String,
                     kind: &str,
                     interval: &str,
                     num: u32,
                     limit: u32,
                     count: u32| {
            let _ = write!(
                s,
                r#"{{"rateLimitType":"{kind}","interval":"{interval}","intervalNum":{num},"limit":{limit},"count":{count}}},"#
            );
        };
        if let Some((ten, day)) = usage.orders {
            limit(&mut s, "ORDERS", "SECOND", 10, limits.orders_per_10s, ten);
            limit(&mut s, "ORDERS", "DAY", 1, limits.orders_per_day, day);
        }
        limit(
            &mut s,
            "REQUEST_WEIGHT",
            "MINUTE",
            1,
            limits.weight_per_minute,
            usage.weight,
        );
        s.pop();
        s.push(']');
    }
    s.push('}');
    s
}

/// A trading request of one account.
pub(super) struct Call<'a> {
    pub(super) api: &'a WsApi,
    pub(super) market: &'a mut Market,
    pub(super) account: Account,
    pub(super) now_ms: u64,
    pub(super) usage: &'a mut Usage,
}
