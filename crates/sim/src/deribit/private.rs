//! Deribit's private API over the simulator's engine: a connection's
//! login and its `private/*` requests, the `user.orders.*` and
//! `user.trades.*` channels, and cancel-on-disconnect. Logging in and the
//! credits are `auth.rs`'s, the order methods and their objects
//! `trading.rs`'s. Sources ("D" below): docs.deribit.com, cited again at
//! each rule (its pages mirrored in rosssaunders/coincise
//! `docs/deribit/`).
//!
//! - "This is a private method; it can only be used after
//!   authentication" (every `private/*` reference page): before
//!   `public/auth`, after the token expired, or with an `access_token`
//!   parameter that is not the connection's current token, 13009
//!   `unauthorized` ("Wrong or expired authorization token or bad
//!   signature", the RPC error table). On WebSocket the token need not be
//!   repeated: the connection is what was authorised (D "Access scope":
//!   "connection").
//! - `private/subscribe` takes the public channels as `public/subscribe`
//!   does (and their `raw` interval, which is "only available to
//!   authorized users", D subscriptions pages), and
//!   `user.orders.{instrument}.{raw|100ms}` and
//!   `user.trades.{instrument}.{raw|100ms}` of listed instruments, and
//!   their `user.orders.{kind}.{currency}.{interval}` forms (ccxt's
//!   `watch_orders` and `watch_my_trades` subscribe `user.*.any.any.raw`);
//!   it answers with the channels subscribed. `user.orders.*.raw` sends one
//!   order object a notification, `.100ms` an array; `user.trades.*`
//!   always an array (D `user.orders.(instrument_name).raw`,
//!   `user.orders.(instrument_name).(interval)`,
//!   `user.trades.(instrument_name).(interval)` examples). Here the
//!   `100ms` channels are not aggregated: each change goes out at once.
//! - `private/enable_cancel_on_disconnect` and `disable_...` (`scope`
//!   `connection`, the default, or `account`) answer `"ok"`;
//!   `private/get_cancel_on_disconnect` answers `{"scope":..,
//!   "enabled":..}`. "After enabling, all orders created via this
//!   connection will be automatically cancelled when the connection is
//!   closed ... Cancel-on-Disconnect does not affect orders created by
//!   other connections ... When change is applied on the `account` scope,
//!   then every newly opened connection will start with active Cancel on
//!   Disconnect" (D `private/enable_cancel_on_disconnect`): the account
//!   setting is taken by a connection when it logs in, unless it set its
//!   own. "If the connection is gracefully closed using
//!   `private/logout`, cancel-on-disconnect will not be triggered" (D);
//!   `private/logout` has "no response body": the connection is closed.
//! - Other `private/*` methods are not simulated: -32601 "Method not
//!   found".

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde_json::Value;
use tickwire_venues::Venue;

use super::auth::{self, Credits, DeribitPrivate, Login, Refused, Tokens};
use super::trading::{self, Extra, Fill, Refusal, invalid};
use super::{code, listing, wire};
use crate::catalogue::{Contract, Listing};
use crate::exchange::{Account, EngineReject, NewOrder, PrivateEvent, SimOrder};
use crate::protocol::{Market, Out};

/// What the private API shares across connections: the settings, the
/// accounts' credits and cancel-on-disconnect defaults, and what the
/// engine does not keep of each order.
pub(super) struct Shared {
    pub(super) config: DeribitPrivate,
    state: Mutex<State>,
}

struct State {
    tokens: Tokens,
    credits: HashMap<Account, Credits>,
    /// Accounts whose new connections start with cancel-on-disconnect.
    cod_account: HashSet<Account>,
    orders: HashMap<u64, Extra>,
    /// Each instrument's last fill price and tick direction, and the tick
    /// direction of recent fills by trade id.
    last_fill: HashMap<usize, (i64, u8)>,
    ticks: HashMap<(usize, u64), u8>,
}

/// A connection's private side.
#[derive(Default)]
pub(super) struct Session {
    login: Option<Login>,
    /// Cancel-on-disconnect for this connection, once set (by a request,
    /// or from the account's setting at login).
    cod: Option<bool>,
    /// Orders this connection placed (and may still be working).
    created: Vec<u64>,
    subs: Vec<UserSub>,
    /// Closed by `private/logout`: no cancel-on-disconnect.
    logged_out: bool,
}

struct UserSub {
    name: String,
    /// The instruments it covers.
    ns: Vec<usize>,
    trades: bool,
    raw: bool,
}

impl Session {
    /// Whether the connection may make private requests at `now`: logged
    /// in, not expired, and `req`'s `access_token` (if any) its own.
    pub(super) fn authorized(&self, req: &Value, now: Instant) -> bool {
        let token = req
            .get("params")
            .and_then(|p| p.get("access_token"))
            .and_then(Value::as_str);
        self.login.as_ref().is_some_and(|l| l.valid(token, now))
    }
}

/// What the instrument's listing says an order's amounts are: its step
/// (`min_trade_amount`), one contract, in size units, and the currency it
/// settles in (the order ids' prefix).
fn terms(market: &Market, n: usize) -> (i64, i64, String) {
    let l = Listing::of(Venue::Deribit, &market.instruments[n]);
    let unit = 10i64.pow(u32::from(l.instrument.size_scale));
    let contract = match l.contract {
        Contract::Inverse { usd } => i64::from(usd) * unit,
        _ => unit,
    };
    (l.min_size, contract, listing::settlement(&l).to_owned())
}

/// The book's mid at one more decimal than prices (as the public
/// `trades.*` channel writes `mark_price`).
fn mark(market: &Market, n: usize, fallback: i64) -> i64 {
    let ((bid, _), (ask, _)) = market.books[n].top();
    if bid > 0 && ask > 0 {
        (bid + ask) * 5
    } else {
        fallback * 10
    }
}

impl Shared {
    pub(super) fn new(config: DeribitPrivate) -> Shared {
        Shared {
            config,
            state: Mutex::new(State {
                tokens: Tokens::new(),
                credits: HashMap::new(),
                cod_account: HashSet::new(),
                orders: HashMap::new(),
                last_fill: HashMap::new(),
                ticks: HashMap::new(),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `public/auth` (see `auth.rs`).
    pub(super) fn auth(
        &self,
        s: &mut Session,
        req: &Value,
        market: &Market,
        now: Instant,
        now_ms: u64,
    ) -> Result<String, Refusal> {
        let params = req.get("params").cloned().unwrap_or(Value::Null);
        let mut state = self.state();
        let granted = auth::auth(
            &params,
            s.login.as_ref(),
            market,
            &self.config,
            &mut state.tokens,
            now,
            now_ms,
        );
        match granted {
            Ok(g) => {
                let account = g.login.account;
                if s.cod.is_none() {
                    s.cod = Some(state.cod_account.contains(&account));
                }
                s.login = Some(g.login);
                Ok(g.result)
            }
            Err(Refused::Credentials) => {
                Err((code::INVALID_CREDENTIALS, "invalid_credentials", None))
            }
            Err(Refused::Params(reason, param)) => Err(invalid(reason, param)),
        }
    }

    /// A `private/*` request from an authorised connection (but
    /// `subscribe` and `unsubscribe`, which the protocol handles with the
    /// public channels): the reply's `result`, or its refusal. `Ok(None)`:
    /// no reply, and the connection closes (`private/logout`).
    pub(super) fn request(
        &self,
        s: &mut Session,
        method: &str,
        req: &Value,
        market: &mut Market,
        now: Instant,
        now_ms: u64,
    ) -> Result<Option<String>, Refusal> {
        let Some(account) = s.login.as_ref().map(|l| l.account) else {
            return Err((code::UNAUTHORIZED, "unauthorized", None));
        };
        let null = Value::Null;
        let params = req.get("params").unwrap_or(&null);
        // "This is a matching engine method" (their reference pages): from
        // the account's order credits.
        let matching = is_matching(method);
        let mut state = self.state();
        if matching {
            let spec = self.config.order_credits;
            let credits = state
                .credits
                .entry(account)
                .or_insert_with(|| Credits::new(spec, now));
            if !credits.take(now) {
                return Err((code::TOO_MANY_REQUESTS, "too_many_requests", None));
            }
        }
        let instrument = |market: &Market| -> Result<usize, Refusal> {
            match params.get("instrument_name") {
                None | Some(Value::Null) => Err(invalid("value required", "instrument_name")),
                Some(v) => v
                    .as_str()
                    .and_then(|name| market.find(name))
                    .ok_or(invalid("wrong format", "instrument_name")),
            }
        };
        let order_id = || -> Result<u64, Refusal> {
            match params.get("order_id") {
                None | Some(Value::Null) => Err(invalid("value required", "order_id")),
                Some(v) => v.as_str().and_then(trading::parse_order_id).ok_or((
                    trading::code::ORDER_NOT_FOUND,
                    "order_not_found",
                    None,
                )),
            }
        };
        let result = match method {
            "private/buy" | "private/sell" => {
                let n = instrument(market)?;
                let (step, contract, _) = terms(market, n);
                let spec = market.instruments[n].clone();
                let p = trading::placing(params, method == "private/buy", &spec, step, contract)?;
                let book = &market.books[n];
                let price = match p.price {
                    // A market order reaches the far end of the book.
                    None if p.buy => book.asks.keys().next_back().copied(),
                    None => book.bids.keys().next().copied(),
                    Some(price) if p.extra.post_only && !p.extra.reject_post_only => {
                        // "The price will be changed to be just below the
                        // spread" (D `private/buy`, `post_only`).
                        let ((bid, _), (ask, _)) = book.top();
                        Some(match p.buy {
                            true if ask > 0 && price >= ask => ask - 1,
                            false if bid > 0 && price <= bid => bid + 1,
                            _ => price,
                        })
                    }
                    Some(price) => Some(price),
                };
                let Some(price) = price.filter(|&p| p > 0) else {
                    return Err((trading::code::INVALID_PRICE, "invalid_price", None));
                };
                let label = &p.extra.label;
                let unique = !market
                    .open_orders(account, None)
                    .any(|o| o.client_id == *label);
                let new = NewOrder {
                    account,
                    instrument: n,
                    buy: p.buy,
                    price,
                    size: p.size,
                    tif: p.tif,
                    post_only: p.extra.post_only,
                    client_id: if unique { label.clone() } else { String::new() },
                };
                let placed = market.place(new, now_ms);
                let o = match placed {
                    Ok(o) => o,
                    Err(r) => return Err(trading::refusal(r, false)),
                };
                state.orders.insert(o.id, p.extra);
                s.created.push(o.id);
                if s.created.len() > 1024 {
                    let open: HashSet<u64> =
                        market.open_orders(account, None).map(|o| o.id).collect();
                    s.created.retain(|id| open.contains(id));
                }
                state.placed(market, &o)
            }
            "private/edit" => {
                let id = order_id()?;
                let known = state.orders.contains_key(&id);
                let Some(current) = market
                    .open_orders(account, None)
                    .find(|o| o.id == id)
                    .cloned()
                else {
                    return Err(trading::refusal(EngineReject::UnknownOrder, known));
                };
                let spec = market.instruments[current.instrument].clone();
                let (step, contract, _) = terms(market, current.instrument);
                let size = trading::amount(params, &spec, step, contract)?;
                let price = match params.get("price") {
                    None | Some(Value::Null) => current.price,
                    Some(v) => trading::price(v, &spec)?,
                };
                let o = market
                    .amend(account, id, price, size, now_ms)
                    .map_err(|r| trading::refusal(r, known))?;
                if let Some(e) = state.orders.get_mut(&id) {
                    e.replaced = true;
                }
                state.placed(market, &o)
            }
            "private/cancel" => {
                let id = order_id()?;
                let known = state.orders.contains_key(&id);
                let o = market
                    .cancel(account, id, now_ms)
                    .map_err(|r| trading::refusal(r, known))?;
                state.render_order(market, &o)
            }
            "private/cancel_all" => market.cancel_all(account, None, now_ms).to_string(),
            "private/cancel_all_by_instrument" => {
                let n = instrument(market)?;
                market.cancel_all(account, Some(n), now_ms).to_string()
            }
            "private/get_open_orders_by_instrument" => {
                let n = instrument(market)?;
                let open: Vec<SimOrder> = market.open_orders(account, Some(n)).cloned().collect();
                state.render_orders(market, &open)
            }
            "private/get_open_orders" => {
                let open: Vec<SimOrder> = market.open_orders(account, None).cloned().collect();
                state.render_orders(market, &open)
            }
            "private/enable_cancel_on_disconnect" | "private/disable_cancel_on_disconnect" => {
                let on = method == "private/enable_cancel_on_disconnect";
                match params.get("scope").and_then(Value::as_str) {
                    None | Some("connection") => s.cod = Some(on),
                    Some("account") if on => {
                        state.cod_account.insert(account);
                    }
                    Some("account") => {
                        state.cod_account.remove(&account);
                    }
                    Some(_) => return Err(invalid("wrong format", "scope")),
                }
                r#""ok""#.to_owned()
            }
            "private/get_cancel_on_disconnect" => match params.get("scope").and_then(Value::as_str)
            {
                None | Some("connection") => format!(
                    r#"{{"scope":"connection","enabled":{}}}"#,
                    s.cod.unwrap_or(false)
                ),
                Some("account") => format!(
                    r#"{{"scope":"account","enabled":{}}}"#,
                    state.cod_account.contains(&account)
                ),
                Some(_) => return Err(invalid("wrong format", "scope")),
            },
            "private/logout" => {
                s.logged_out = true;
                return Ok(None);
            }
            _ => return Err((code::NO_METHOD, "Method not found", None)),
        };
        Ok(Some(result))
    }

    /// `private/subscribe`'s private channels among `names`: those
    /// subscribed (now or before); the others are left to the public
    /// channels.
    pub(super) fn subscribe(
        &self,
        s: &mut Session,
        names: &[&str],
        market: &Market,
    ) -> Vec<String> {
        let mut accepted = Vec::new();
        for &name in names {
            let parts: Vec<&str> = name.split('.').collect();
            let (what, interval) = match parts[..] {
                [
                    "user",
                    what @ ("orders" | "trades"),
                    ..,
                    interval @ ("raw" | "100ms"),
                ] => (what, interval),
                _ => continue,
            };
            let ns: Vec<usize> = match parts[2..parts.len() - 1] {
                [symbol] => market.find(symbol).into_iter().collect(),
                // `user.orders.{kind}.{currency}.{interval}`: "kind ...
                // `future`, `option`, `spot`, `future_combo`,
                // `option_combo`" or `any`; "currency ... `BTC`, `ETH`,
                // `USDC`, `USDT`, `EURR`, `any`" (D
                // `user.trades.(kind).(currency).(interval)`). The
                // simulated perpetuals are futures.
                [kind, currency]
                    if [
                        "future",
                        "option",
                        "spot",
                        "future_combo",
                        "option_combo",
                        "any",
                    ]
                    .contains(&kind)
                        && ["BTC", "ETH", "USDC", "USDT", "EURR", "any"].contains(&currency) =>
                {
                    (0..market.instruments.len())
                        .filter(|&n| {
                            (kind == "any" || kind == "future")
                                && (currency == "any" || terms(market, n).2 == currency)
                        })
                        .collect()
                }
                _ => continue,
            };
            if parts.len() == 4 && ns.is_empty() {
                continue; // an instrument not listed
            }
            if !s.subs.iter().any(|u| u.name == name) {
                s.subs.push(UserSub {
                    name: name.to_owned(),
                    ns,
                    trades: what == "trades",
                    raw: interval == "raw",
                });
            }
            if !accepted.iter().any(|a| a == name) {
                accepted.push(name.to_owned());
            }
        }
        accepted
    }

    /// Unsubscribes the private channels among `names`: those removed.
    pub(super) fn unsubscribe(s: &mut Session, names: &[&str]) -> Vec<String> {
        let mut removed = Vec::new();
        for &name in names {
            if let Some(at) = s.subs.iter().position(|u| u.name == name) {
                removed.push(s.subs.remove(at).name);
            }
        }
        removed
    }

    /// The engine's changes: the notifications of this connection's
    /// private channels for its account's orders.
    pub(super) fn on_private(
        &self,
        s: &Session,
        events: &[PrivateEvent],
        market: &Market,
        out: &mut Out,
    ) {
        let mut state = self.state();
        state.fold(events);
        let Some(account) = s.login.as_ref().map(|l| l.account) else {
            return;
        };
        if s.subs.is_empty() {
            return;
        }
        for e in events.iter().filter(|e| e.order().account == account) {
            let o = e.order();
            let fill = matches!(e, PrivateEvent::Trade { .. });
            // A fill is a trade on `user.trades` and a change of the
            // order on `user.orders`; the engine's other events are
            // changes of the order only.
            for sub in s
                .subs
                .iter()
                .filter(|u| u.ns.contains(&o.instrument) && (fill || !u.trades))
            {
                let mut data = String::new();
                if sub.trades {
                    data.push('[');
                    state.write_fill(&mut data, market, e);
                    data.push(']');
                } else {
                    if !sub.raw {
                        data.push('[');
                    }
                    state.write_order(&mut data, market, o);
                    if !sub.raw {
                        data.push(']');
                    }
                }
                out.push(wire::notification(&sub.name, &data));
            }
        }
    }

    /// The connection is gone: with cancel-on-disconnect on (and no
    /// `private/logout`), the orders it placed are cancelled.
    pub(super) fn on_gone(&self, s: &mut Session, market: &mut Market, now_ms: u64) {
        let Some(account) = s.login.as_ref().map(|l| l.account) else {
            return;
        };
        if s.logged_out || s.cod != Some(true) {
            return;
        }
        let mut state = self.state();
        for id in std::mem::take(&mut s.created) {
            if let Some(e) = state.orders.get_mut(&id) {
                e.cancel_reason = Some("cancel_on_disconnect");
            }
            if market.cancel(account, id, now_ms).is_err() {
                // Closed already: its reason stays the one it had.
                if let Some(e) = state.orders.get_mut(&id) {
                    e.cancel_reason.take_if(|r| *r == "cancel_on_disconnect");
                }
            }
        }
    }
}

impl State {
    /// Folds the fills among `events` into their orders' averages and the
    /// tick directions (each fill once, however often it is seen).
    fn fold(&mut self, events: &[PrivateEvent]) {
        for e in events {
            let PrivateEvent::Trade {
                order,
                trade_id,
                price,
                size,
                ..
            } = e
            else {
                continue;
            };
            let Some(extra) = self.orders.get_mut(&order.id) else {
                continue;
            };
            if *trade_id <= extra.counted {
                continue;
            }
            extra.counted = *trade_id;
            extra.notional += i128::from(*price) * i128::from(*size);
            let n = order.instrument;
            let dir = match self.last_fill.get(&n) {
                Some((p, _)) if price > p => 0,
                Some((p, _)) if price < p => 2,
                Some((_, d)) if *d <= 1 => 1,
                Some(_) => 3,
                None => 0,
            };
            self.last_fill.insert(n, (*price, dir));
            // Trade ids count per instrument.
            self.ticks.insert((n, *trade_id), dir);
            if self.ticks.len() > 4096 {
                let floor = trade_id.saturating_sub(2048);
                self.ticks.retain(|&(m, t), _| m != n || t > floor);
            }
        }
    }

    fn extra(&self, o: &SimOrder) -> Extra {
        self.orders.get(&o.id).cloned().unwrap_or(Extra {
            label: o.client_id.clone(),
            market: false,
            tif: "good_til_cancelled",
            post_only: false,
            reject_post_only: false,
            replaced: false,
            notional: i128::from(o.price) * i128::from(o.filled),
            counted: 0,
            cancel_reason: None,
        })
    }

    fn write_order(&self, out: &mut String, market: &Market, o: &SimOrder) {
        let (_, contract, currency) = terms(market, o.instrument);
        let spec = &market.instruments[o.instrument];
        trading::order(out, spec, &currency, contract, o, &self.extra(o));
    }

    fn write_fill(&self, out: &mut String, market: &Market, e: &PrivateEvent) {
        let PrivateEvent::Trade {
            order,
            trade_id,
            price,
            size,
            maker,
            time_ms,
        } = e
        else {
            return;
        };
        let (_, _, currency) = terms(market, order.instrument);
        let spec = &market.instruments[order.instrument];
        let extra = self.extra(order);
        let fill = Fill {
            order,
            extra: &extra,
            trade_id: *trade_id,
            price: *price,
            size: *size,
            maker: *maker,
            time_ms: *time_ms,
            mark: mark(market, order.instrument, *price),
            tick_direction: self
                .ticks
                .get(&(order.instrument, *trade_id))
                .copied()
                .unwrap_or(0),
        };
        trading::trade(out, spec, &currency, &fill);
    }

    fn render_order(&self, market: &Market, o: &SimOrder) -> String {
        let mut s = String::with_capacity(512);
        self.write_order(&mut s, market, o);
        s
    }

    fn render_orders(&self, market: &Market, orders: &[SimOrder]) -> String {
        let mut s = String::from("[");
        for (k, o) in orders.iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            self.write_order(&mut s, market, o);
        }
        s.push(']');
        s
    }

    /// `{"order":..,"trades":[..]}` for an order just placed or edited:
    /// its fills are the engine's events of this request.
    fn placed(&mut self, market: &Market, o: &SimOrder) -> String {
        let events: Vec<PrivateEvent> = market
            .exchange
            .events
            .iter()
            .filter(|e| matches!(e, PrivateEvent::Trade { order, .. } if order.id == o.id))
            .cloned()
            .collect();
        self.fold(&events);
        let mut s = String::from(r#"{"order":"#);
        self.write_order(&mut s, market, o);
        s.push_str(r#","trades":["#);
        for (k, e) in events.iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            self.write_fill(&mut s, market, e);
        }
        s.push_str("]}");
        s
    }
}

/// Whether `method` is a matching-engine request: it draws on the
/// account's order credits, and only on them. "Deribit has two different
/// Rate Limits, one for Matching Engine Requests and another for all other
/// requests (Non-Matching Engine) ... All requests not in the list below
/// are treated as Non-Matching Engine Requests" (deribit.com
/// `/pages/information/rate-limits`; the support article "Rate Limits"
/// keeps the two apart the same way). Of the list, the methods simulated.
pub(super) fn is_matching(method: &str) -> bool {
    matches!(
        method,
        "private/buy"
            | "private/sell"
            | "private/edit"
            | "private/cancel"
            | "private/cancel_all"
            | "private/cancel_all_by_instrument"
    )
}
