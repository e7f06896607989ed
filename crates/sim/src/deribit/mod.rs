//! Deribit API v2, JSON-RPC over WebSocket, as its public documentation
//! and the recorded frames describe it. Sources, cited again next to each
//! rule: docs.deribit.com ("D" below), its OpenAPI and AsyncAPI specs
//! ("D-spec"), and peers, as the research note gathered them.
//!
//! - Path: `/ws/api/v2` only (nautilus_trader `DERIBIT_WS_URL`, cryptofeed,
//!   ccxt); nothing is sent on open: the server only answers.
//! - `public/subscribe` answers with `result`, the channels it accepted, in
//!   its own order (grouped by kind), and leaves out, silently, an unknown
//!   instrument or channel; a `raw` interval on this unauthenticated
//!   connection refuses the whole request with 13778. `public/unsubscribe`
//!   answers with the channels it really removed, `unsubscribe_all` with
//!   `"ok"`. A refused book subscription (an armed fault) is left out of
//!   `result` as an unknown instrument's would be: that is how Deribit
//!   refuses.
//! - Channels: `book.{instrument}.{100ms|agg2}` (the whole book as a
//!   `snapshot`, then `change`s chained by `prev_change_id`, change ids
//!   jumping), `trades.{instrument}.{100ms|agg2}` (data an array),
//!   `quote.{instrument}`. A step of the market stands for one 100 ms
//!   window.
//! - `public/set_heartbeat` (at least 10 s) then `heartbeat` and
//!   `test_request` notifications; a `test_request` not answered with
//!   `public/test` by the next beat closes the connection.
//! - Credits: `public/subscribe` from a pool of 30 000 (3 000 a request,
//!   10 000 a second back), every other request from one of 50 000 (500 a
//!   request); a request with no credit left gets 10028
//!   `too_many_requests` and the session ends.
//! - `public/get_instruments` (WebSocket and REST `GET
//!   /api/v2/public/get_instruments`) lists what is served (`listing`);
//!   a channel of an instrument not listed is left out of `result`.
//! - Faults: a lost book message (`drop_book`) is not sent, but its change
//!   id is used up, so the next change's `prev_change_id` does not chain;
//!   Deribit has no checksum (`bad_checksum` is ignored) and no counter
//!   restart (`restart` is ignored).
//!
//! - The private API (`public/auth`, orders, `user.*` channels,
//!   cancel-on-disconnect): `private.rs`, `auth.rs`, `trading.rs`. A `raw`
//!   interval is refused only before `public/auth`.
//!
//! Not simulated: `ticker.*` and the grouped `book.*.{group}.{depth}.*`
//! channels (left out of `result`, as unknown channels are), the HTTP 429
//! for a 33rd connection from one address.

mod auth;
mod listing;
mod private;
mod trading;
mod wire;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::Value;
use tickwire_net::CloseCode;

use crate::exchange::PrivateEvent;
use crate::market::Step;
use crate::protocol::{Market, Out, Protocol, Response, Tick};
use crate::stamps::StreamKind;
use crate::time::now_ms;

pub use auth::{DeribitPrivate, OrderCredits};

/// Deribit.
pub(crate) struct Deribit {
    private: private::Shared,
}

impl Deribit {
    #[cfg(test)]
    pub(crate) fn new() -> Deribit {
        Deribit::with(DeribitPrivate::default())
    }

    /// With its private API set to `config`.
    pub(crate) fn with(config: DeribitPrivate) -> Deribit {
        Deribit {
            private: private::Shared::new(config),
        }
    }
}

/// The channels served, in the order a reply lists them: the recorded
/// reply to a request naming book, trades and ticker channels listed
/// trades, then ticker, then book (cryptofeed capture, 2021).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Trades,
    Quote,
    Book,
}

/// One subscribed channel.
struct Sub {
    /// The channel's name (`book.BTC-PERPETUAL.100ms`).
    name: String,
    /// The instrument.
    n: usize,
    kind: Kind,
    /// Book: the prices on each side (bids, asks) of the book as the venue
    /// has sent it, to tell a `new` level from a `change`.
    known: [BTreeSet<i64>; 2],
    /// Trades: the last trade's price and tick direction.
    last_trade: Option<(i64, u8)>,
}

/// `public/set_heartbeat`'s state.
struct Heartbeat {
    interval: Duration,
    /// The next beat (set at the first tick after the request).
    next: Option<Instant>,
    /// A `test_request` went out and no `public/test` came back yet.
    asked: bool,
}

/// Request credits: a pool that refills at a rate up to its size
/// (docs.deribit.com `/articles/rate-limits`, "Credit-Based System").
struct Pool {
    credits: u64,
    max: u64,
    cost: u64,
}

impl Pool {
    /// `public/subscribe`: 3 000 a request, 30 000 at most (nautilus_trader
    /// `DERIBIT_WS_SUBSCRIPTION_QUOTA`, citing Deribit's "Rate Limits"
    /// article; D public-subscribe: "Sustained rate: ~3.3
    /// requests/second", which 10 000 credits a second back gives).
    fn subscriptions() -> Pool {
        Pool {
            credits: 30_000,
            max: 30_000,
            cost: 3_000,
        }
    }

    /// Every other request: 500 a request, 50 000 at most (support
    /// article 25944617523357 "Rate Limits"; nautilus_trader
    /// `DERIBIT_HTTP_REST_QUOTA`).
    fn requests() -> Pool {
        Pool {
            credits: 50_000,
            max: 50_000,
            cost: 500,
        }
    }

    fn take(&mut self) -> bool {
        let ok = self.credits >= self.cost;
        if ok {
            self.credits -= self.cost;
        }
        ok
    }

    /// 10 000 credits a second back, up to the pool's size.
    fn refill(&mut self, elapsed: Duration) {
        let back = (elapsed.as_micros() / 100).min(u128::from(self.max)) as u64;
        self.credits = (self.credits + back).min(self.max);
    }
}

impl Client {
    /// The request pools' credits back since the last refill.
    fn refill(&mut self, now: Instant) {
        if let Some(last) = self.refilled.replace(now) {
            let elapsed = now.saturating_duration_since(last);
            self.subscribe_credits.refill(elapsed);
            self.request_credits.refill(elapsed);
        }
    }
}

/// A connection.
pub(crate) struct Client {
    subs: Vec<Sub>,
    heartbeat: Option<Heartbeat>,
    subscribe_credits: Pool,
    request_credits: Pool,
    /// When the credits were last refilled (at a tick).
    refilled: Option<Instant>,
    /// The venue ends the session at the next tick, and why.
    kick: Option<&'static str>,
    /// Its login, orders and private channels.
    private: private::Session,
}

/// What a channel name means.
#[derive(Debug, PartialEq, Eq)]
enum Channel {
    /// A channel served here, of a listed instrument.
    Known(usize, Kind),
    /// A `raw` interval: for authorised connections only.
    Raw,
    /// Anything else: left out of replies, silently.
    Unknown,
}

/// Reads a channel name: `book.{instrument}.{interval}`,
/// `trades.{instrument}.{interval}` (intervals `raw`, `100ms`, `agg2`:
/// D-spec) and `quote.{instrument}` (no interval), on a connection
/// `authed` or not.
fn channel(market: &Market, name: &str, authed: bool) -> Channel {
    let parts: Vec<&str> = name.split('.').collect();
    // "The value `raw` means no aggregation will be applied (Please note
    // that raw interval is only available to authorized users)" (D
    // subscriptions pages), whatever the channel. A step is one change,
    // so `raw` reads as `100ms` does.
    if !authed && parts.len() > 1 && parts.last() == Some(&"raw") {
        return Channel::Raw;
    }
    let (kind, symbol) = match parts[..] {
        ["book", s, "100ms" | "agg2" | "raw"] => (Kind::Book, s),
        ["trades", s, "100ms" | "agg2" | "raw"] => (Kind::Trades, s),
        ["quote", s] => (Kind::Quote, s),
        _ => return Channel::Unknown,
    };
    market
        .find(symbol)
        .map_or(Channel::Unknown, |n| Channel::Known(n, kind))
}

/// A request's `id` as the reply echoes it (numbers and strings alike:
/// cryptofeed sends `"auth_<session>"` and matches the reply by it).
fn id_text(req: &Value) -> Option<String> {
    req.get("id").map(Value::to_string)
}

/// Deribit's RPC error table (docs.deribit.com `/articles/errors`,
/// "Complete RPC Error Codes Reference"): the codes used here.
mod code {
    pub(super) const INVALID_PARAMS: i64 = -32602;
    pub(super) const TOO_LARGE: i64 = -32600;
    pub(super) const NO_METHOD: i64 = -32601;
    pub(super) const PARSE: i64 = -32700;
    pub(super) const TOO_MANY_REQUESTS: i64 = 10028;
    pub(super) const INVALID_CREDENTIALS: i64 = 13004;
    pub(super) const UNAUTHORIZED: i64 = 13009;
    pub(super) const RAW_UNAUTHORIZED: i64 = 13778;
}

/// "Error thrown when body size in POST request or single frame in
/// websocket connection frame exceeds the limit (32 kB)" (the RPC error
/// table, -32600).
const MAX_FRAME: usize = 32 * 1024;

/// `public/test`'s answer (D `public-test` example).
const VERSION: &str = r#"{"version":"1.2.26"}"#;

/// How Deribit closes a connection whose `test_request` went unanswered,
/// or whose credits ran out. The docs say only that the server "will
/// immediately close the connection"; the code and reason are ours.
const CLOSE: CloseCode = CloseCode::NORMAL;

impl Deribit {
    /// `public/subscribe`, or `private/subscribe`'s public channels
    /// (`user`: the private ones it accepted, listed first).
    #[allow(clippy::too_many_arguments)] // two callers, all named
    fn subscribe(
        &self,
        client: &mut Client,
        id: Option<&str>,
        us_in: u64,
        names: &[&str],
        market: &mut Market,
        out: &mut Out,
        user: &[String],
    ) {
        let authed = client.private.authorized(&Value::Null, Instant::now());
        // "raw_subscriptions_not_available_for_unauthorized" refuses the
        // whole request, every other channel with it (a live probe,
        // 2026-09-21: "rejected WHOLE when any one channel is refused";
        // the code is in Deribit's RPC error table).
        if names
            .iter()
            .any(|n| channel(market, n, authed) == Channel::Raw)
        {
            return out.push(wire::error(
                id,
                us_in,
                code::RAW_UNAUTHORIZED,
                "raw_subscriptions_not_available_for_unauthorized",
                None,
            ));
        }
        let mut accepted: Vec<(Kind, usize, &str)> = Vec::new();
        for &name in names {
            let Channel::Known(n, kind) = channel(market, name, authed) else {
                // Unknown instruments and channels are silently left out
                // of `result` (go-deribit issue 16: `"result":[]`;
                // gocryptotrader `handleSubscription` diffs the result).
                continue;
            };
            let subscribed = client.subs.iter().any(|s| s.name == name);
            if kind == Kind::Book && !subscribed && market.take_reject(n) {
                // An armed refusal: left out, as an unknown one is.
                continue;
            }
            if !accepted.iter().any(|a| a.2 == name) {
                accepted.push((kind, n, name));
            }
        }
        // The server's order, not the request's ("the order of `result`
        // is not the request order": the 2021 capture).
        accepted.sort();
        out.push(wire::result(
            id,
            us_in,
            &wire::names(
                user.iter()
                    .map(String::as_str)
                    .chain(accepted.iter().map(|a| a.2)),
            ),
        ));
        for &(kind, n, name) in &accepted {
            if client.subs.iter().any(|s| s.name == name) {
                // Subscribing again: still subscribed; whether Deribit
                // sends a snapshot again is undocumented, so none is.
                continue;
            }
            let mut sub = Sub {
                name: name.to_owned(),
                n,
                kind,
                known: [BTreeSet::new(), BTreeSet::new()],
                last_trade: None,
            };
            if kind == Kind::Book {
                // "The first notification contains a full snapshot of the
                // book (bids and asks for all price levels)" (D book
                // channel): taken under the market's lock, between steps.
                let book = &market.books[n];
                sub.known = [
                    book.bids.keys().copied().collect(),
                    book.asks.keys().copied().collect(),
                ];
                let bids: Vec<(&str, i64, i64)> = book
                    .bids
                    .iter()
                    .rev()
                    .map(|(p, s)| ("new", *p, *s))
                    .collect();
                let asks: Vec<(&str, i64, i64)> =
                    book.asks.iter().map(|(p, s)| ("new", *p, *s)).collect();
                let count = market.instruments.len();
                out.push(wire::book(
                    name,
                    &market.instruments[n],
                    now_ms(),
                    None,
                    wire::change_id(book.update_id, n, count),
                    &bids,
                    &asks,
                ));
            }
            client.subs.push(sub);
        }
    }

    /// "The response contains only the channels that were successfully
    /// unsubscribed in this request. ... If a channel in the request is
    /// invalid, not subscribed, or fails validation, it will not appear in
    /// the result." (D-spec `/public/unsubscribe`)
    fn unsubscribe(client: &mut Client, names: &[&str]) -> Vec<String> {
        let mut removed: Vec<(Kind, usize, String)> = Vec::new();
        for &name in names {
            if let Some(at) = client.subs.iter().position(|s| s.name == name) {
                let s = client.subs.remove(at);
                removed.push((s.kind, s.n, s.name));
            }
        }
        removed.sort();
        removed.into_iter().map(|r| r.2).collect()
    }

    /// `params.channels` as a list of strings, or the -32602 reply's
    /// reason (`{"reason":"value must be a list","param":"channels"}`:
    /// ccxt issue 6931; a missing value: "value required", as a live
    /// observation of `set_heartbeat` without `interval` shows).
    fn channels(req: &Value) -> Result<Vec<&str>, &'static str> {
        match req.get("params").and_then(|p| p.get("channels")) {
            None | Some(Value::Null) => Err("value required"),
            Some(Value::Array(list)) => list
                .iter()
                .map(|v| v.as_str().ok_or("invalid format"))
                .collect(),
            Some(_) => Err("value must be a list"),
        }
    }
}

impl Protocol for Deribit {
    type Client = Client;

    fn subscribed(&self, client: &Client) -> bool {
        !client.subs.is_empty()
    }

    /// `GET /api/v2/public/get_instruments` (see `listing.rs`).
    fn instruments(&self, path: &str, market: &Market) -> Option<Response> {
        if path.split('?').next() != Some(listing::PATH) {
            return None;
        }
        let us_in = crate::time::now_us();
        let params = listing::params_of(path);
        Some(match listing::instruments(Some(&params), market) {
            Ok(list) => Response::json(200, wire::result(None, us_in, &list)),
            Err((reason, param)) => Response::json(
                400,
                wire::error(
                    None,
                    us_in,
                    code::INVALID_PARAMS,
                    "Invalid params",
                    Some((reason, param)),
                ),
            ),
        })
    }

    fn open(&self, path: &str, _market: &Market) -> Result<Client, Response> {
        let route = path.split_once('?').map_or(path, |(r, _)| r);
        if route != "/ws/api/v2" && route != "/ws/api/v2/" {
            // What Deribit answers on another path is not documented.
            return Err(Response::json(
                404,
                r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"testnet":false}"#,
            ));
        }
        Ok(Client {
            subs: Vec::new(),
            heartbeat: None,
            subscribe_credits: Pool::subscriptions(),
            request_credits: Pool::requests(),
            refilled: None,
            kick: None,
            private: private::Session::default(),
        })
    }

    fn on_text(&self, client: &mut Client, text: &str, market: &mut Market, out: &mut Out) {
        if client.kick.is_some() {
            return; // the session is over
        }
        let us_in = crate::time::now_us();
        if text.len() > MAX_FRAME {
            // The one reply with no id (tmatic-trading/crypto-platform
            // issues 402, 439).
            return out.push(wire::error(
                None,
                us_in,
                code::TOO_LARGE,
                "request entity too large",
                None,
            ));
        }
        let Ok(req) = serde_json::from_str::<Value>(text) else {
            // JSON-RPC 2.0: "Parse error", with a null id.
            return out.push(wire::error(
                Some("null"),
                us_in,
                code::PARSE,
                "Parse error",
                None,
            ));
        };
        let id = id_text(&req);
        let id = id.as_deref();
        let method = req.get("method").and_then(Value::as_str).unwrap_or("");
        let pool = if method == "public/subscribe" {
            Some(&mut client.subscribe_credits)
        } else if private::is_matching(method) {
            // Its own limit only: the account's order credits (`private`).
            None
        } else {
            Some(&mut client.request_credits)
        };
        if pool.is_some_and(|p| !p.take()) {
            // "If a request arrives when no credits remain, we immediately
            // send a `too_many_requests` (`code 10028`) ... and terminate
            // the session" (D rate limits).
            client.kick = Some("too_many_requests");
            return out.push(wire::error(
                id,
                us_in,
                code::TOO_MANY_REQUESTS,
                "too_many_requests",
                None,
            ));
        }
        let invalid = |reason, param| {
            wire::error(
                id,
                us_in,
                code::INVALID_PARAMS,
                "Invalid params",
                Some((reason, param)),
            )
        };
        match method {
            "public/subscribe" => match Self::channels(&req) {
                Ok(names) => self.subscribe(client, id, us_in, &names, market, out, &[]),
                Err(reason) => out.push(invalid(reason, "channels")),
            },
            "public/unsubscribe" | "private/unsubscribe"
                if method == "public/unsubscribe"
                    || client.private.authorized(&req, Instant::now()) =>
            {
                match Self::channels(&req) {
                    Ok(names) => {
                        let mut removed = private::Shared::unsubscribe(&mut client.private, &names);
                        removed.extend(Self::unsubscribe(client, &names));
                        let removed = wire::names(removed.iter().map(String::as_str));
                        out.push(wire::result(id, us_in, &removed));
                    }
                    Err(reason) => out.push(invalid(reason, "channels")),
                }
            }
            "private/subscribe" if client.private.authorized(&req, Instant::now()) => {
                match Self::channels(&req) {
                    Ok(names) => {
                        let user = self.private.subscribe(&mut client.private, &names, market);
                        let public: Vec<&str> = names
                            .into_iter()
                            .filter(|n| !user.iter().any(|u| u == n))
                            .collect();
                        self.subscribe(client, id, us_in, &public, market, out, &user);
                    }
                    Err(reason) => out.push(invalid(reason, "channels")),
                }
            }
            "public/auth" => {
                match self
                    .private
                    .auth(&mut client.private, &req, market, Instant::now(), now_ms())
                {
                    Ok(result) => out.push(wire::result(id, us_in, &result)),
                    Err((code, message, data)) => {
                        out.push(wire::error(id, us_in, code, message, data));
                    }
                }
            }
            // `public/unsubscribe_all` "returns `"result":"ok"`" (D-spec).
            "public/unsubscribe_all" => {
                client.subs.clear();
                out.push(wire::result(id, us_in, r#""ok""#));
            }
            "public/set_heartbeat" => {
                // "The heartbeat interval in seconds, but not less than
                // 10" (D public-set_heartbeat); the refusal's reason for
                // a smaller one is undocumented (ours below).
                match req.get("params").and_then(|p| p.get("interval")) {
                    None | Some(Value::Null) => out.push(invalid("value required", "interval")),
                    Some(v) => match v.as_f64() {
                        Some(s) if s >= 10.0 && s.is_finite() => {
                            client.heartbeat = Some(Heartbeat {
                                interval: Duration::from_secs_f64(s),
                                next: None,
                                asked: false,
                            });
                            out.push(wire::result(id, us_in, r#""ok""#));
                        }
                        Some(_) => out.push(invalid("must be at least 10", "interval")),
                        None => out.push(invalid("invalid format", "interval")),
                    },
                }
            }
            // `public/disable_heartbeat` "returns `"ok"`".
            "public/disable_heartbeat" => {
                client.heartbeat = None;
                out.push(wire::result(id, us_in, r#""ok""#));
            }
            "public/get_instruments" => match listing::instruments(req.get("params"), market) {
                Ok(list) => out.push(wire::result(id, us_in, &list)),
                Err((reason, param)) => out.push(invalid(reason, param)),
            },
            "public/test" => {
                if let Some(hb) = client.heartbeat.as_mut() {
                    hb.asked = false;
                }
                out.push(wire::result(id, us_in, VERSION));
            }
            m if m.starts_with("private/") => {
                if !client.private.authorized(&req, Instant::now()) {
                    return out.push(wire::error(
                        id,
                        us_in,
                        code::UNAUTHORIZED,
                        "unauthorized",
                        None,
                    ));
                }
                match self.private.request(
                    &mut client.private,
                    m,
                    &req,
                    market,
                    Instant::now(),
                    now_ms(),
                ) {
                    Ok(Some(result)) => out.push(wire::result(id, us_in, &result)),
                    // `private/logout`: no answer, the connection closes.
                    Ok(None) => client.kick = Some("logout"),
                    Err((code, message, data)) => {
                        if code == code::TOO_MANY_REQUESTS {
                            // "... and terminate the session" (D rate
                            // limits), as for the other credits.
                            client.kick = Some("too_many_requests");
                        }
                        out.push(wire::error(id, us_in, code, message, data));
                    }
                }
            }
            _ => out.push(wire::error(
                id,
                us_in,
                code::NO_METHOD,
                "Method not found",
                None,
            )),
        }
    }

    fn on_step(&self, client: &mut Client, step: &Step, market: &Market, out: &mut Out) {
        let n = step.instrument;
        if !client.subs.iter().any(|s| s.n == n) {
            return;
        }
        let spec = &market.instruments[n];
        let count = market.instruments.len();
        // The trade first (it took the level the book change shows), then
        // the book, then the best bid and ask.
        for kind in [Kind::Trades, Kind::Book, Kind::Quote] {
            for sub in client
                .subs
                .iter_mut()
                .filter(|s| s.n == n && s.kind == kind)
            {
                match kind {
                    Kind::Trades => {
                        let Some(t) = step.trade else { continue };
                        // "Direction of the tick (0 = Plus Tick, 1 =
                        // Zero-Plus Tick, 2 = Minus Tick, 3 = Zero-Minus
                        // Tick)" (D-spec trades).
                        let direction = match sub.last_trade {
                            Some((p, _)) if t.price > p => 0,
                            Some((p, _)) if t.price < p => 2,
                            Some((_, d)) if d == 0 || d == 1 => 1,
                            Some(_) => 3,
                            None => 0,
                        };
                        sub.last_trade = Some((t.price, direction));
                        let ((bid, _), (ask, _)) = market.books[n].top();
                        let mark = if bid > 0 && ask > 0 {
                            (bid + ask) * 5
                        } else {
                            t.price * 10
                        };
                        let text = wire::trades(
                            &sub.name,
                            spec,
                            &wire::TradeText {
                                seq: t.id,
                                id: t.id,
                                time_ms: step.time_ms,
                                tick_direction: direction,
                                price: t.price,
                                mark,
                                buy: t.buyer_aggressor,
                                amount: t.size,
                            },
                        );
                        out.stamped(text, n, StreamKind::Trade, t.id);
                    }
                    Kind::Book => {
                        // The venue's book moves whether or not its
                        // message arrives: the levels it knows change
                        // either way.
                        let [known_bids, known_asks] = &mut sub.known;
                        let bids = actions(known_bids, step.bids.iter().rev());
                        let asks = actions(known_asks, step.asks.iter());
                        if step.faults.drop_book {
                            // Lost: its change id is used up, so the next
                            // `prev_change_id` names a message the client
                            // never saw.
                            continue;
                        }
                        let change = wire::change_id(step.last_id, n, count);
                        let text = wire::book(
                            &sub.name,
                            spec,
                            step.time_ms,
                            Some(wire::change_id(step.first_id - 1, n, count)),
                            change,
                            &bids,
                            &asks,
                        );
                        out.stamped(text, n, StreamKind::Depth, change);
                    }
                    Kind::Quote => {
                        let Some((bid, ask)) = step.top else { continue };
                        // A quote carries no update id: the adapter
                        // reports 0, so its stamp could not be told from
                        // another's; sent unstamped.
                        out.push(wire::quote(&sub.name, spec, step.time_ms, bid, ask));
                    }
                }
            }
        }
    }

    fn on_private(
        &self,
        client: &mut Client,
        events: &[PrivateEvent],
        market: &Market,
        out: &mut Out,
    ) {
        self.private
            .on_private(&client.private, events, market, out);
    }

    fn on_gone(&self, client: &mut Client, market: &mut Market) {
        self.private.on_gone(&mut client.private, market, now_ms());
    }

    fn on_tick(&self, client: &mut Client, now: Instant, idle: Duration, out: &mut Out) -> Tick {
        client.refill(now);
        if let Some(reason) = client.kick {
            return Tick::Close(CLOSE, reason);
        }
        let Some(hb) = client.heartbeat.as_mut() else {
            // Whether Deribit closes a silent connection that never set
            // up heartbeats is undocumented: it is kept.
            return Tick::Keep;
        };
        let next = *hb.next.get_or_insert(now + hb.interval);
        if now < next {
            return Tick::Keep;
        }
        // "Your software should respond to `test_request` messages by
        // sending a `/api/v2/public/test` request. If your software fails
        // to do so, the API server will immediately close the connection"
        // (D public-set_heartbeat). How long it waits is undocumented:
        // until the next beat, an interval later, as Deribit's FIX
        // sessions treat a TestRequest still unanswered after HeartBtInt
        // as lost (D FIX API, Heartbeat).
        if hb.asked {
            return Tick::Close(CLOSE, "test_request not answered");
        }
        hb.next = Some(now + hb.interval);
        // FIX's rule too: a TestRequest when nothing was received for an
        // interval, a Heartbeat otherwise.
        if idle >= hb.interval {
            hb.asked = true;
            out.push(wire::heartbeat("test_request"));
        } else {
            out.push(wire::heartbeat("heartbeat"));
        }
        Tick::Keep
    }
}

/// One side of a step as `[action, price, amount]` levels, updating the
/// prices `known` on it: `delete` (amount 0) for a level gone, `new` for
/// one the side did not have, `change` for a new amount ("`new` and
/// `change` carry the new absolute amount", the recorded frames).
fn actions<'a>(
    known: &mut BTreeSet<i64>,
    levels: impl Iterator<Item = &'a (i64, i64)>,
) -> Vec<(&'static str, i64, i64)> {
    levels
        .map(|&(price, size)| {
            let action = if size == 0 {
                known.remove(&price);
                "delete"
            } else if known.insert(price) {
                "new"
            } else {
                "change"
            };
            (action, price, size)
        })
        .collect()
}

#[cfg(test)]
mod private_tests;
#[cfg(test)]
mod tests;
