//! Kraken spot WebSocket v2 (`wss://ws.kraken.com/v2`), as its public
//! documentation and the live captures the research note quotes describe
//! it (`kraken.md`; doc pages under docs.kraken.com/api/docs/websocket-v2):
//!
//! - Path: `/v2` (the public v2 endpoint, "Spot WebSocket intro"); any
//!   other is refused with a 404.
//! - On open: `status` ("Status": "automatically generated on successful
//!   websocket connection"; live, it comes first), its `connection_id`
//!   above 2^53.
//! - `subscribe` / `unsubscribe` with `params.channel` and a `symbol` list,
//!   answered once per symbol ("Book": "a separate acknowledgement
//!   response for each symbol"), `req_id` echoed. Refusals, each in its
//!   live shape: an unknown symbol `"Currency pair not supported
//!   <symbol>"` with a top-level `symbol` (2026-09-25), a depth other than
//!   10, 25, 100, 500 or 1000 `"Subscription depth not supported"` with
//!   none (2026-08-16), a second subscription of a symbol `"Already
//!   subscribed"` with `symbol` (a peer's log, 2025-12-20; no new
//!   snapshot). Unconfirmed shapes, from peers: an unknown channel
//!   `"Unsupported event"` (kraken-async-rs test data), a request that is
//!   not one `"Malformed request"` with `"method":"error"` (rustrade-data),
//!   `ping` with `params` `"Unsupported field: 'params' for the given msg
//!   type: ping"` (kraken-async-rs), unsubscribing what is not subscribed
//!   `"Subscription Not Found"` (v1's words). After a refusal nothing more
//!   is sent for it; the connection stays.
//! - `{"method":"ping","req_id":N}` -> `{"method":"pong","req_id":N,
//!   "time_in":..,"time_out":..}` ("Ping").
//! - `{"channel":"heartbeat"}` once a second while anything is subscribed
//!   ("Heartbeat"; measured unconditional: 90 in 90 s at 49 book messages
//!   a second, so not only "in the absence of other updates" as the page
//!   says). A connection with no subscription is closed after 60 s of
//!   client silence (Kraken's v0.1.1 launch note: "A client connection
//!   lives only for 60 seconds if no subscription made"; the v2 docs say
//!   nothing, and the close code is not known: 1000 here).
//! - `instrument` ("Instrument"): no symbol filter; `data` is an object of
//!   `assets` and `pairs`, each pair with its `price_precision` and
//!   `qty_precision` (the simulated instrument's scales), increments in
//!   exponent notation; one frame of the live size (~0.8 MB): the pairs
//!   served `online`, filler pairs `delisted` (refused if subscribed).
//!   REST `GET /0/public/AssetPairs` lists the pairs served (`listing`).
//! - `book` at depth 10 (default), 25, 100, 500 or 1000 (see `book.rs`):
//!   a snapshot of `depth` levels a side on subscribe (`snapshot`, default
//!   true), then updates keeping that window complete, with `checksum` and
//!   `timestamp`. There is no sequence number: a lost message is found by
//!   a later checksum. Prices and quantities are JSON numbers with the
//!   pair's full precision, trailing zeros kept.
//! - `trade` ("Trade"): `side` is the taker's, `trade_id` a sequence per
//!   book; the snapshot (when asked for: the docs give the default both
//!   ways, the live ack says false) is the last 50 trades.
//! - `ticker` ("Ticker") with `event_trigger` `bbo` (on a change of the
//!   best bid or offer: here its price or quantity) or `trades` (the
//!   default, on every trade); a snapshot on subscribe (default true).
//!
//! Faults: `drop_book` loses one update that changes the top 10, chosen so
//! that the next update's checksum shows the loss (see `book.rs`: Kraken
//! has no sequence, the checksum is all a client has); `bad_checksum`
//! sends the next update with its checksum inverted; an armed refusal of
//! a book subscription gets Kraken's refusal of one symbol, `"Currency
//! pair not supported <symbol>"` with `symbol` (the shape that names the
//! instrument).
//!
//! Stamps: trades by `trade_id`; Kraken's books and tickers have no update
//! id (the adapter reports 0), so they are stamped 0.

mod book;
mod listing;
mod wire;

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tickwire_net::CloseCode;

use crate::market::{SimInstrument, Step, Trade};
use crate::protocol::{Market, Out, Protocol, Response, Tick};
use crate::server::lock;
use crate::stamps::StreamKind;
use crate::time::now_us;
use book::BookSub;
use wire::{HEARTBEAT, Request, number, rfc3339};

/// The `book` depths ("Book": one of 10, 25, 100, 500, 1000).
const DEPTHS: [u64; 5] = [10, 25, 100, 500, 1000];

/// How often a subscribed connection gets a heartbeat.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);

/// A connection with no subscription lives this long after the client's
/// last message.
const UNSUBSCRIBED_LIFETIME: Duration = Duration::from_secs(60);

/// Trades a `trade` snapshot holds ("Trade": "the most recent 50").
const TRADE_SNAPSHOT: usize = 50;

/// Kraken spot v2.
pub(crate) struct Kraken {
    /// The next connection's `connection_id`.
    connections: AtomicU64,
    /// The `instrument` snapshot, made once.
    instruments: OnceLock<String>,
    /// Each instrument's recent trades and day statistics (for the
    /// `trade` and `ticker` snapshots), recorded once per step.
    tapes: Mutex<Vec<Tape>>,
}

/// What `ticker` reports besides the best bid and offer.
#[derive(Default)]
struct Tape {
    last_id: u64,
    /// The last trades, with their times (µs).
    recent: VecDeque<(Trade, u64)>,
    volume: i64,
    notional: i128,
    open: i64,
    low: i64,
    high: i64,
    count: u64,
}

/// What fires a client's `ticker`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    Bbo,
    Trades,
}

/// A connection: what it subscribed, and when its next heartbeat is due.
pub(crate) struct Client {
    connection_id: u64,
    books: Vec<BookSub>,
    tickers: Vec<(usize, Trigger)>,
    trades: Vec<usize>,
    instrument: bool,
    next_heartbeat: Option<Instant>,
}

impl Client {
    fn subscribed(&self) -> bool {
        self.instrument
            || !self.books.is_empty()
            || !self.tickers.is_empty()
            || !self.trades.is_empty()
    }
}

/// The channels subscribed per symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Channel {
    Book,
    Ticker,
    Trade,
}

/// What a `subscribe` request asks of each of its symbols.
#[derive(Clone, Copy, Debug)]
struct Subscription {
    channel: Channel,
    /// `book`: the depth.
    depth: usize,
    /// `ticker`: what fires it.
    trigger: Trigger,
    /// Send the snapshot.
    snapshot: bool,
}

/// Unsubscribes one symbol (`n`, subscribed): the acknowledgement's
/// `result` ("unsubscribe" acknowledgement, live: the book's with its
/// depth).
fn unsubscribe(client: &mut Client, channel: Channel, n: usize, symbol: &str) -> String {
    match channel {
        Channel::Book => {
            let depth = client
                .books
                .iter()
                .find(|b| b.n == n)
                .map_or(10, |b| b.depth);
            client.books.retain(|b| b.n != n);
            format!(r#"{{"channel":"book","depth":{depth},"symbol":"{symbol}"}}"#)
        }
        Channel::Ticker => {
            client.tickers.retain(|t| t.0 != n);
            format!(r#"{{"channel":"ticker","symbol":"{symbol}"}}"#)
        }
        Channel::Trade => {
            client.trades.retain(|t| *t != n);
            format!(r#"{{"channel":"trade","symbol":"{symbol}"}}"#)
        }
    }
}

impl Kraken {
    pub(crate) fn new() -> Kraken {
        Kraken {
            // Above 2^53, as live ids are.
            connections: AtomicU64::new(13_834_774_380_200_032_777),
            instruments: OnceLock::new(),
            tapes: Mutex::new(Vec::new()),
        }
    }

    /// Keeps the step's trade on its instrument's tape (once, whichever
    /// client's step it comes with).
    fn record(&self, step: &Step, instruments: usize) {
        let Some(t) = step.trade else { return };
        let mut tapes = lock(&self.tapes);
        if tapes.len() < instruments {
            tapes.resize_with(instruments, Tape::default);
        }
        let tape = &mut tapes[step.instrument];
        if t.id <= tape.last_id {
            return;
        }
        if tape.count == 0 {
            (tape.open, tape.low, tape.high) = (t.price, t.price, t.price);
        }
        tape.last_id = t.id;
        tape.count += 1;
        tape.volume += t.size;
        tape.notional += i128::from(t.price) * i128::from(t.size);
        tape.low = tape.low.min(t.price);
        tape.high = tape.high.max(t.price);
        if tape.recent.len() == TRADE_SNAPSHOT {
            tape.recent.pop_front();
        }
        tape.recent.push_back((t, step.time_ms * 1000));
    }

    /// A `trade` message of `trades` (each with its time, µs; "Trade").
    fn trades(&self, spec: &SimInstrument, trades: &[(Trade, u64)], snapshot: bool) -> String {
        let kind = if snapshot { "snapshot" } else { "update" };
        let mut s = format!(r#"{{"channel":"trade","type":"{kind}","data":["#);
        for (k, (t, time_us)) in trades.iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            let side = if t.buyer_aggressor { "buy" } else { "sell" };
            let _ = write!(
                s,
                r#"{{"symbol":"{}","side":"{side}","price":"#,
                spec.symbol
            );
            number(&mut s, t.price, spec.price_scale);
            s.push_str(r#","qty":"#);
            number(&mut s, t.size, spec.size_scale);
            let ord_type = if t.id % 2 == 0 { "limit" } else { "market" };
            let _ = write!(
                s,
                r#","ord_type":"{ord_type}","trade_id":{},"timestamp":"{}"}}"#,
                t.id,
                rfc3339(*time_us)
            );
        }
        s.push_str("]}");
        s
    }

    /// A `ticker` message for instrument `n` ("Ticker": best bid and offer,
    /// last trade, the day's volume, VWAP, low, high and change).
    fn ticker(&self, market: &Market, n: usize, snapshot: bool, time_us: u64) -> String {
        let spec = &market.instruments[n];
        let ((bid, bid_qty), (ask, ask_qty)) = market.books[n].top();
        let tapes = lock(&self.tapes);
        let tape = tapes.get(n).filter(|t| t.count > 0);
        let (last, volume, vwap, low, high, open, count) = match tape {
            Some(t) => (
                t.recent.back().map_or(bid, |(t, _)| t.price),
                t.volume,
                (t.notional / i128::from(t.volume.max(1))) as i64,
                t.low,
                t.high,
                t.open,
                t.count,
            ),
            None => (bid, 0, bid, bid, bid, bid, 0),
        };
        let kind = if snapshot { "snapshot" } else { "update" };
        let (ps, ss) = (spec.price_scale, spec.size_scale);
        let mut s = format!(
            r#"{{"channel":"ticker","type":"{kind}","data":[{{"symbol":"{}""#,
            spec.symbol
        );
        for (key, v, scale) in [
            ("bid", bid, ps),
            ("bid_qty", bid_qty, ss),
            ("ask", ask, ps),
            ("ask_qty", ask_qty, ss),
            ("last", last, ps),
            ("volume", volume, ss),
            ("vwap", vwap, ps),
            ("low", low, ps),
            ("high", high, ps),
            ("change", last - open, ps),
        ] {
            let _ = write!(s, r#","{key}":"#);
            number(&mut s, v, scale);
        }
        let pct = (last - open) * 10_000 / open.max(1);
        s.push_str(r#","change_pct":"#);
        crate::market::decimal(&mut s, pct, 2, crate::market::Digits::AtLeastOne);
        let _ = write!(
            s,
            r#","trades":{count},"timestamp":"{}"}}]}}"#,
            rfc3339(time_us)
        );
        s
    }

    /// A `subscribe` or `unsubscribe` request.
    fn subscription(
        &self,
        client: &mut Client,
        req: Request<'_>,
        params: Option<&Map<String, Value>>,
        market: &mut Market,
        out: &mut Out,
    ) {
        let malformed = || {
            Request {
                method: "error",
                ..req
            }
            .error("Malformed request", None)
        };
        let subscribe = req.method == "subscribe";
        let Some(params) = params else {
            return out.push(malformed());
        };
        let Some(channel) = params.get("channel").and_then(Value::as_str) else {
            return out.push(malformed());
        };
        let snapshot = match params.get("snapshot") {
            None => channel != "trade",
            Some(v) => match v.as_bool() {
                Some(b) => b,
                None => return out.push(malformed()),
            },
        };
        let channel = match channel {
            "instrument" => return self.instrument(client, req, snapshot, market, out),
            "book" => Channel::Book,
            "ticker" => Channel::Ticker,
            "trade" => Channel::Trade,
            _ => return out.push(req.error("Unsupported event", None)),
        };
        let Some(symbols) = params.get("symbol").and_then(Value::as_array) else {
            return out.push(malformed());
        };
        let Some(symbols) = symbols
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<&str>>>()
        else {
            return out.push(malformed());
        };
        let depth = match params.get("depth") {
            None => 10,
            Some(d) => match d.as_u64().filter(|d| DEPTHS.contains(d)) {
                Some(d) => d as usize,
                None => return out.push(req.error("Subscription depth not supported", None)),
            },
        };
        let trigger = match params.get("event_trigger").map(Value::as_str) {
            None | Some(Some("trades")) => Trigger::Trades,
            Some(Some("bbo")) => Trigger::Bbo,
            Some(_) => return out.push(malformed()),
        };
        let what = Subscription {
            channel,
            depth,
            trigger,
            snapshot,
        };
        for symbol in symbols {
            let Some(n) = market.find(symbol) else {
                out.push(req.error(
                    &format!("Currency pair not supported {symbol}"),
                    Some(symbol),
                ));
                continue;
            };
            let has = match channel {
                Channel::Book => client.books.iter().any(|b| b.n == n),
                Channel::Ticker => client.tickers.iter().any(|t| t.0 == n),
                Channel::Trade => client.trades.contains(&n),
            };
            match (subscribe, has) {
                (true, true) => out.push(req.error("Already subscribed", Some(symbol))),
                (true, false) => self.subscribe(client, req, what, n, market, out),
                (false, true) => out.push(req.ack(&unsubscribe(client, channel, n, symbol))),
                (false, false) => out.push(req.error("Subscription Not Found", Some(symbol))),
            }
        }
        self.schedule_heartbeat(client);
    }

    /// Subscribes one symbol (`n`, not subscribed yet): the acknowledgement,
    /// then the snapshot if asked for; or the armed refusal of its book.
    fn subscribe(
        &self,
        client: &mut Client,
        req: Request<'_>,
        what: Subscription,
        n: usize,
        market: &mut Market,
        out: &mut Out,
    ) {
        let Subscription {
            channel,
            depth,
            trigger,
            snapshot,
        } = what;
        let symbol = market.instruments[n].symbol.clone();
        // An armed refusal of this book: Kraken's refusal of a symbol.
        if channel == Channel::Book && market.take_reject(n) {
            let words = format!("Currency pair not supported {symbol}");
            return out.push(req.error(&words, Some(&symbol)));
        }
        let now = now_us();
        let spec = &market.instruments[n];
        match channel {
            Channel::Book => {
                let sub = BookSub::new(n, depth, &market.books[n]);
                out.push(req.ack(&format!(
                    r#"{{"channel":"book","depth":{depth},"snapshot":{snapshot},"symbol":"{symbol}"}}"#
                )));
                if snapshot {
                    out.push(sub.snapshot(spec, now));
                }
                client.books.push(sub);
            }
            Channel::Ticker => {
                out.push(req.ack(&format!(
                    r#"{{"channel":"ticker","snapshot":{snapshot},"symbol":"{symbol}"}}"#
                )));
                if snapshot {
                    out.push(self.ticker(market, n, true, now));
                }
                client.tickers.push((n, trigger));
            }
            Channel::Trade => {
                out.push(req.ack(&format!(
                    r#"{{"channel":"trade","snapshot":{snapshot},"symbol":"{symbol}"}}"#
                )));
                if snapshot {
                    let recent: Vec<(Trade, u64)> = lock(&self.tapes)
                        .get(n)
                        .map(|t| t.recent.iter().copied().collect())
                        .unwrap_or_default();
                    out.push(self.trades(spec, &recent, true));
                }
                client.trades.push(n);
            }
        }
    }

    /// The `instrument` channel: the whole universe, no symbol.
    fn instrument(
        &self,
        client: &mut Client,
        req: Request<'_>,
        snapshot: bool,
        market: &Market,
        out: &mut Out,
    ) {
        if req.method == "unsubscribe" {
            if !client.instrument {
                return out.push(req.error("Subscription Not Found", None));
            }
            client.instrument = false;
            out.push(req.ack(r#"{"channel":"instrument"}"#));
            return self.schedule_heartbeat(client);
        }
        if client.instrument {
            return out.push(req.error("Already subscribed", None));
        }
        client.instrument = true;
        // The warning of the documented acknowledgement.
        out.push(req.ack(&format!(
            r#"{{"channel":"instrument","snapshot":{snapshot},"warnings":["tick_size is deprecated, use price_increment"]}}"#
        )));
        if snapshot {
            let text = self
                .instruments
                .get_or_init(|| wire::instrument_snapshot(&market.instruments));
            out.push(text.clone());
        }
        self.schedule_heartbeat(client);
    }

    /// Heartbeats start a second after the first subscription and stop
    /// with the last.
    fn schedule_heartbeat(&self, client: &mut Client) {
        if !client.subscribed() {
            client.next_heartbeat = None;
        } else if client.next_heartbeat.is_none() {
            client.next_heartbeat = Some(Instant::now() + HEARTBEAT_EVERY);
        }
    }
}

impl Protocol for Kraken {
    type Client = Client;

    /// Books, tickers, trades; not `instrument` (reference data).
    fn subscribed(&self, client: &Client) -> bool {
        !client.books.is_empty() || !client.tickers.is_empty() || !client.trades.is_empty()
    }

    /// REST `AssetPairs` (see `listing.rs`).
    fn instruments(&self, path: &str, market: &Market) -> Option<Response> {
        (path.split('?').next() == Some(listing::PATH)).then(|| listing::asset_pairs(path, market))
    }

    fn open(&self, path: &str, _market: &Market) -> Result<Client, Response> {
        let (route, _) = path.split_once('?').unwrap_or((path, ""));
        if route != "/v2" {
            return Err(Response::json(404, r#"{"error":"Not Found"}"#));
        }
        Ok(Client {
            connection_id: self.connections.fetch_add(1, Ordering::Relaxed),
            books: Vec::new(),
            tickers: Vec::new(),
            trades: Vec::new(),
            instrument: false,
            next_heartbeat: None,
        })
    }

    fn on_open(&self, client: &mut Client, _market: &mut Market, out: &mut Out) {
        out.push(wire::status(client.connection_id));
    }

    fn on_text(&self, client: &mut Client, text: &str, market: &mut Market, out: &mut Out) {
        let time_in = now_us();
        let error = Request {
            method: "error",
            req_id: None,
            time_in,
        };
        let Ok(Value::Object(req)) = serde_json::from_str::<Value>(text) else {
            return out.push(error.error("Malformed request", None));
        };
        let req_id = match req.get("req_id") {
            None => None,
            Some(v) => match v.as_u64() {
                Some(id) => Some(id),
                None => return out.push(error.error("Malformed request", None)),
            },
        };
        let Some(method) = req.get("method").and_then(Value::as_str) else {
            return out.push(Request { req_id, ..error }.error("Malformed request", None));
        };
        let request = Request {
            method,
            req_id,
            time_in,
        };
        match method {
            "ping" if req.contains_key("params") => out.push(request.error(
                "Unsupported field: 'params' for the given msg type: ping",
                None,
            )),
            "ping" => out.push(request.pong()),
            "subscribe" | "unsubscribe" => {
                let params = req.get("params").and_then(Value::as_object);
                self.subscription(client, request, params, market, out);
            }
            _ => out.push(Request { req_id, ..error }.error("Malformed request", None)),
        }
    }

    fn on_step(&self, client: &mut Client, step: &Step, market: &Market, out: &mut Out) {
        let n = step.instrument;
        self.record(step, market.instruments.len());
        let spec = &market.instruments[n];
        let time_us = step.time_ms * 1000;
        if let Some(t) = step.trade
            && client.trades.contains(&n)
        {
            out.stamped(
                self.trades(spec, &[(t, time_us)], false),
                n,
                StreamKind::Trade,
                t.id,
            );
        }
        let mut updates = Vec::new();
        for sub in client.books.iter_mut().filter(|b| b.n == n) {
            sub.on_step(spec, &market.books[n], step.faults, time_us, &mut updates);
        }
        for text in updates {
            out.stamped(text, n, StreamKind::Depth, 0);
        }
        for &(_, trigger) in client.tickers.iter().filter(|t| t.0 == n) {
            let fire = match trigger {
                Trigger::Bbo => step.top.is_some(),
                Trigger::Trades => step.trade.is_some(),
            };
            if fire {
                let text = self.ticker(market, n, false, time_us);
                out.stamped(text, n, StreamKind::BookTicker, 0);
            }
        }
    }

    fn on_tick(&self, client: &mut Client, now: Instant, idle: Duration, out: &mut Out) -> Tick {
        for sub in &mut client.books {
            if let Some(text) = sub.overdue(now) {
                out.stamped(text, sub.n, StreamKind::Depth, 0);
            }
        }
        if let Some(due) = client.next_heartbeat {
            if now >= due {
                out.push(HEARTBEAT.to_owned());
                let next = due + HEARTBEAT_EVERY;
                client.next_heartbeat = Some(if next > now {
                    next
                } else {
                    now + HEARTBEAT_EVERY
                });
            }
            return Tick::Keep;
        }
        if idle >= UNSUBSCRIBED_LIFETIME {
            return Tick::Close(CloseCode::NORMAL, "");
        }
        Tick::Keep
    }
}

#[cfg(test)]
mod tests;
