//! Coinbase Advanced Trade public market data
//! (`wss://advanced-trade-ws.coinbase.com`), as its documentation and the
//! live frames public clients recorded describe it:
//!
//! - One path, `/` (the URL has none: WebSocket Overview). Anything else
//!   is refused with Go's plain `404 page not found` (the venue's
//!   `current_time` shows a Go server; the body is our inference).
//! - One channel per request: `{"type":"subscribe","product_ids":[..],
//!   "channel":"level2"}` ("You can only subscribe to one channel per
//!   subscription message", WebSocket Overview); `unsubscribe` alike, and
//!   with no product ids it drops the whole channel. Each accepted request
//!   is answered by a `subscriptions` frame restating the connection's
//!   whole subscription set, channels and products in order
//!   (`{"heartbeats":["heartbeats"],"level2":[..]}`, nautilus_trader
//!   `handler.rs`; live frames in a public Rust client). Data a request
//!   starts (a book snapshot) comes before its acknowledgement, as in the
//!   live captures (a snapshot numbered 0, its ack 1; the 2022 forum
//!   capture of the `user` channel).
//! - Refusals are `{"type":"error","message":..}`, with no `channel` and
//!   no `sequence_num` (whether they take a number is unconfirmed: here
//!   they do not). A request that is not JSON, not an object, or whose
//!   `type` is not `subscribe`/`unsubscribe` gets `subscribe or
//!   unsubscribe required`; an unknown channel name (or none, as in the
//!   Exchange feed's `channels:[..]` form) gets `authentication failure`,
//!   and so do the private `user` and `futures_balance_summary` (no
//!   accounts here). Both texts were recorded live by two public clients.
//!   An unknown product is left out of the acknowledged set, without an
//!   error (unconfirmed: no Advanced Trade error text for it is known; a
//!   public client checks the ack for missing products). A refused book
//!   subscription ([`Market::take_reject`]) gets `authentication
//!   failure`, the only refusal of a well-formed request ever recorded.
//!   `-USDC` products other than `USDT-USDC` and `EURC-USDC` are the
//!   `-USD` ones, keyed `-USD` in acks and data (WebSocket Channels;
//!   nautilus_trader), whichever of the two names the market gives the
//!   instrument (`wire::product_id`).
//! - Every frame but an error carries `sequence_num`: one counter per
//!   connection, from 0, over every channel, acknowledgements and
//!   heartbeats included (AsyncAPI: "Per-connection message sequence
//!   number"; tickvault `docs/venues.md`, measured). A lost book message
//!   (`drop_book`) is a number skipped.
//! - `heartbeats`: one frame a second, `current_time` in Go's
//!   `time.String()` format and `heartbeat_counter` a JSON number (live;
//!   the docs print a string) equal to the whole seconds of the
//!   monotonic reading, as in the live frame (`139651`, `m=+139651.27`).
//! - A connection that has not subscribed within 5 seconds is closed
//!   ("you are disconnected if no subscribe has been received within 5
//!   seconds", WebSocket Overview), after the error frame a 2022 forum
//!   capture shows (`subscribe or unsubscribe required`); close code 1008
//!   is ours. "Most channels close within 60-90 seconds if no updates are
//!   sent. Subscribe to heartbeats to keep all subscriptions open"
//!   (WebSocket Channels): a connection sent nothing for 60 s is closed
//!   (1000; how the live venue closes is unconfirmed). No application
//!   ping exists.
//! - `level2` (replies `l2_data`): on subscription, the product's whole
//!   book in one frame (a `snapshot` event; the live BTC-USD one is about
//!   44 000 levels and 5 MB: tickvault, ccxt issue 23597), bids best
//!   first, then offers best first (the live order is unconfirmed: the one
//!   capture was cut down), its `event_time`s the frame's time (as live
//!   in 2026), one frame per product of the request; then an `update`
//!   event per step with every level that changed anywhere in the book
//!   (no depth window), `new_quantity` the level's new size, `"0"` to
//!   remove (deletes of levels a client never saw occur, as live:
//!   tickvault). Resubscribing a product (unsubscribe, subscribe) sends a
//!   new snapshot: unconfirmed for the live venue, see
//!   `tickwire_venues::plan::coinbase::resubscribe`. No checksum.
//! - `market_trades`: on subscription a `snapshot` event of the recent
//!   trades of the new products (how many is unconfirmed: up to 20 each
//!   here, newest first), then an `update` per trade (the live venue
//!   batches 250 ms of trades; here each step's trade goes at once, so
//!   that its latency can be measured). `side` is the maker's ("refers to
//!   the makers side", WebSocket Channels): a buyer taking liquidity is a
//!   `SELL`.
//! - `ticker`: trade-triggered (one frame per trade, with the book's best
//!   bid and ask after it), its 24 h and 52 w figures taken since the
//!   simulator started. `candles`, `status` and `ticker_batch` are
//!   acknowledged and silent.
//! - REST `GET /api/v3/brokerage/market/products` and
//!   `.../products/{id}` list what is served (`listing`; an unlisted id
//!   is 404 `NOT_FOUND`).
//! - Faults: `bad_checksum` and `restart` mean nothing here (no checksum;
//!   no book counter to restart).
//! - 8 messages a second from an address ("WebSocket Rate Limits"), all
//!   clients' together (loopback): the one whose message is the ninth in
//!   a second is closed, unanswered (`budget`: the venue does not say).

mod listing;
mod tape;
mod wire;

mod budget;
#[cfg(test)]
mod roundtrip;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tickwire_net::CloseCode;

use crate::market::Step;
use crate::okx::budget::{RequestBudget, Window};
use crate::protocol::{Market, Out, Protocol, Response, Tick};
use crate::stamps::StreamKind;
use tape::Tape;

/// The venue's refusal of a request it cannot serve.
const AUTH_FAILURE: &str = r#"{"type":"error","message":"authentication failure"}"#;
/// The venue's answer to a request that is not a subscription.
const SUBSCRIBE_REQUIRED: &str =
    r#"{"type":"error","message":"subscribe or unsubscribe required"}"#;

/// A connection must subscribe within this long of opening.
const SUBSCRIBE_WITHIN: Duration = Duration::from_secs(5);
/// Heartbeats go out this often.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
/// A connection sent nothing for this long is closed.
const QUIET_CLOSE: Duration = Duration::from_secs(60);

/// The public channels, in the order an acknowledgement lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Channel {
    Candles,
    Heartbeats,
    Level2,
    MarketTrades,
    Status,
    Ticker,
    TickerBatch,
}

impl Channel {
    fn parse(name: &str) -> Option<Channel> {
        Some(match name {
            "candles" => Channel::Candles,
            "heartbeats" => Channel::Heartbeats,
            "level2" => Channel::Level2,
            "market_trades" => Channel::MarketTrades,
            "status" => Channel::Status,
            "ticker" => Channel::Ticker,
            "ticker_batch" => Channel::TickerBatch,
            _ => return None,
        })
    }

    /// The name a request and an acknowledgement use.
    fn name(self) -> &'static str {
        match self {
            Channel::Candles => "candles",
            Channel::Heartbeats => "heartbeats",
            Channel::Level2 => "level2",
            Channel::MarketTrades => "market_trades",
            Channel::Status => "status",
            Channel::Ticker => "ticker",
            Channel::TickerBatch => "ticker_batch",
        }
    }
}

/// Coinbase Advanced Trade.
pub(crate) struct Coinbase {
    /// The server's start: its monotonic clock (`m=+`) and heartbeat
    /// counter count from here.
    started: Instant,
    /// What every client's `market_trades` and `ticker` need of the past.
    tape: Tape,
    /// Messages an address may send (8 a second unless set).
    budget: RequestBudget,
    /// The messages of the last second from every client (one address).
    messages: Mutex<Window>,
}

/// A connection.
pub(crate) struct Client {
    opened: Instant,
    /// A subscription has been accepted (the 5-second rule is met).
    subscribed: bool,
    /// The next `sequence_num`.
    next_seq: u64,
    /// Products by channel (none for `heartbeats`).
    subs: BTreeMap<Channel, BTreeSet<usize>>,
    next_heartbeat: Option<Instant>,
    /// When it was last sent anything.
    last_sent: Instant,
    /// Its message was over the address's budget: closed at its next
    /// tick; nothing more it sends is read.
    over: bool,
}

impl Client {
    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    fn has(&self, channel: Channel, n: usize) -> bool {
        self.subs.get(&channel).is_some_and(|s| s.contains(&n))
    }
}

impl Coinbase {
    pub(crate) fn new() -> Coinbase {
        Coinbase {
            started: Instant::now(),
            tape: Tape::default(),
            budget: RequestBudget::venue(),
            messages: Mutex::default(),
        }
    }

    /// A product's whole book as one `snapshot` event.
    fn snapshot(&self, client: &mut Client, market: &Market, n: usize) -> String {
        let (spec, book) = (&market.instruments[n], &market.books[n]);
        let now = wire::rfc3339(crate::time::now_ns());
        let levels = book.bids.len() + book.asks.len();
        let mut out = wire::envelope("l2_data", &now, client.seq(), levels * 110);
        let _ = write!(
            out,
            r#"{{"type":"snapshot","product_id":"{}","updates":["#,
            wire::product_id(&spec.symbol)
        );
        let bids = book.bids.iter().rev().map(|(p, s)| (true, *p, *s));
        let asks = book.asks.iter().map(|(p, s)| (false, *p, *s));
        for (k, (bid, p, s)) in bids.chain(asks).enumerate() {
            if k > 0 {
                out.push(',');
            }
            wire::level(&mut out, spec, bid, &now, (p, s));
        }
        out.push_str("]}]}");
        out
    }

    /// What a subscription to `channel` of the new products `added` sends
    /// before its acknowledgement.
    fn on_subscribed(
        &self,
        client: &mut Client,
        market: &Market,
        channel: Channel,
        added: &[usize],
        out: &mut Out,
    ) {
        let now = wire::rfc3339(crate::time::now_ns());
        match channel {
            Channel::Level2 => {
                for &n in added {
                    let text = self.snapshot(client, market, n);
                    out.push(text);
                }
            }
            Channel::MarketTrades if !added.is_empty() => {
                let mut text = wire::envelope("market_trades", &now, client.seq(), 0);
                text.push_str(r#"{"type":"snapshot","trades":["#);
                let mut first = true;
                for &n in added {
                    self.tape.recent(&mut text, &mut first, market, n);
                }
                text.push_str("]}]}");
                out.push(text);
            }
            Channel::Ticker => {
                let mut tickers = String::new();
                for &n in added {
                    let at = tickers.len();
                    if at > 0 {
                        tickers.push(',');
                    }
                    if !self.tape.ticker(&mut tickers, market, n) {
                        tickers.truncate(at);
                    }
                }
                if !tickers.is_empty() {
                    let mut text = wire::envelope("ticker", &now, client.seq(), tickers.len());
                    let _ = write!(text, r#"{{"type":"snapshot","tickers":[{tickers}]}}]}}"#);
                    out.push(text);
                }
            }
            _ => {}
        }
    }

    /// The `subscriptions` frame: the whole set, channels and products in
    /// order.
    fn ack(client: &mut Client, market: &Market) -> String {
        let now = wire::rfc3339(crate::time::now_ns());
        let mut out = wire::envelope("subscriptions", &now, client.seq(), 64);
        out.push_str(r#"{"subscriptions":{"#);
        for (k, (channel, products)) in client.subs.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let names: BTreeSet<&str> = if *channel == Channel::Heartbeats {
                BTreeSet::from(["heartbeats"])
            } else {
                products
                    .iter()
                    .map(|&n| wire::product_id(&market.instruments[n].symbol))
                    .collect()
            };
            let list: Vec<String> = names.iter().map(|s| format!("\"{s}\"")).collect();
            let _ = write!(out, r#""{}":[{}]"#, channel.name(), list.join(","));
        }
        out.push_str("}}]}");
        out
    }
}

impl Protocol for Coinbase {
    type Client = Client;

    /// A channel with products; not `heartbeats`, which has none.
    fn subscribed(&self, client: &Client) -> bool {
        client.subs.values().any(|products| !products.is_empty())
    }

    /// The public products (see `listing.rs`).
    fn instruments(&self, path: &str, market: &Market) -> Option<Response> {
        listing::products(path, market)
    }

    fn open(&self, path: &str, _market: &Market) -> Result<Client, Response> {
        let (route, _) = path.split_once('?').unwrap_or((path, ""));
        if !matches!(route, "" | "/") {
            return Err(Response::json(404, "404 page not found\n"));
        }
        let now = Instant::now();
        Ok(Client {
            opened: now,
            subscribed: false,
            next_seq: 0,
            subs: BTreeMap::new(),
            next_heartbeat: None,
            last_sent: now,
            over: false,
        })
    }

    fn on_text(&self, client: &mut Client, text: &str, market: &mut Market, out: &mut Out) {
        if !self.admit(client, Instant::now()) {
            return;
        }
        let before = out.items.len();
        let request = serde_json::from_str::<serde_json::Value>(text).ok();
        let Some(request) = request.as_ref().and_then(|r| r.as_object()) else {
            return out.push(SUBSCRIBE_REQUIRED.into());
        };
        let subscribe = match request.get("type").and_then(|t| t.as_str()) {
            Some("subscribe") => true,
            Some("unsubscribe") => false,
            _ => return out.push(SUBSCRIBE_REQUIRED.into()),
        };
        let Some(channel) = request
            .get("channel")
            .and_then(|c| c.as_str())
            .and_then(Channel::parse)
        else {
            return out.push(AUTH_FAILURE.into());
        };
        let (given, products) = match request.get("product_ids") {
            None | Some(serde_json::Value::Null) => (false, Vec::new()),
            Some(serde_json::Value::Array(list)) => {
                let mut products = Vec::with_capacity(list.len());
                for p in list {
                    let Some(p) = p.as_str() else {
                        return out.push(SUBSCRIBE_REQUIRED.into());
                    };
                    products.extend(wire::product(market, p));
                }
                (true, products)
            }
            Some(_) => return out.push(SUBSCRIBE_REQUIRED.into()),
        };
        if subscribe {
            if channel == Channel::Level2 && products.iter().any(|&n| market.take_reject(n)) {
                return out.push(AUTH_FAILURE.into());
            }
            client.subscribed = true;
            let set = client.subs.entry(channel).or_default();
            let mut added = Vec::new();
            if channel != Channel::Heartbeats {
                for n in products {
                    if set.insert(n) {
                        added.push(n);
                    }
                }
            }
            if channel == Channel::Heartbeats && client.next_heartbeat.is_none() {
                client.next_heartbeat = Some(Instant::now() + HEARTBEAT_EVERY);
            }
            self.on_subscribed(client, market, channel, &added, out);
        } else {
            if let Some(set) = client.subs.get_mut(&channel) {
                if given && channel != Channel::Heartbeats {
                    for n in &products {
                        set.remove(n);
                    }
                }
                if !given || channel == Channel::Heartbeats || set.is_empty() {
                    client.subs.remove(&channel);
                }
            }
            if channel == Channel::Heartbeats {
                client.next_heartbeat = None;
            }
        }
        let ack = Self::ack(client, market);
        out.push(ack);
        if out.items.len() > before {
            client.last_sent = Instant::now();
        }
    }

    fn on_step(&self, client: &mut Client, step: &Step, market: &Market, out: &mut Out) {
        self.tape.record(step);
        let n = step.instrument;
        let spec = &market.instruments[n];
        let before = out.items.len();
        let now = || wire::rfc3339(crate::time::now_ns());
        if let Some(t) = step.trade
            && client.has(Channel::MarketTrades, n)
        {
            let mut text = wire::envelope("market_trades", &now(), client.seq(), 200);
            text.push_str(r#"{"type":"update","trades":["#);
            tape::write_trade(&mut text, market, n, (t, step.time_ms));
            text.push_str("]}]}");
            out.stamped(text, n, StreamKind::Trade, t.id);
        }
        if client.has(Channel::Level2, n) {
            let seq = client.seq();
            // A lost message: its number is skipped.
            if !step.faults.drop_book {
                let levels = step.bids.len() + step.asks.len();
                let mut text = wire::envelope("l2_data", &now(), seq, levels * 110);
                let _ = write!(
                    text,
                    r#"{{"type":"update","product_id":"{}","updates":["#,
                    wire::product_id(&spec.symbol)
                );
                let event_time = wire::rfc3339(step.time_ms * 1_000_000);
                let bids = step.bids.iter().map(|&l| (true, l));
                let asks = step.asks.iter().map(|&l| (false, l));
                for (k, (bid, l)) in bids.chain(asks).enumerate() {
                    if k > 0 {
                        text.push(',');
                    }
                    wire::level(&mut text, spec, bid, &event_time, l);
                }
                text.push_str("]}]}");
                // The adapter's update id is the frame's number.
                out.stamped(text, n, StreamKind::Depth, seq);
            }
        }
        if step.trade.is_some() && client.has(Channel::Ticker, n) {
            let mut ticker = String::new();
            if self.tape.ticker(&mut ticker, market, n) {
                let mut text = wire::envelope("ticker", &now(), client.seq(), ticker.len());
                let _ = write!(text, r#"{{"type":"update","tickers":[{ticker}]}}]}}"#);
                out.push(text);
            }
        }
        if out.items.len() > before {
            client.last_sent = Instant::now();
        }
    }

    fn on_tick(&self, client: &mut Client, now: Instant, _idle: Duration, out: &mut Out) -> Tick {
        if client.over {
            // Over the address's message budget.
            return Tick::Close(CloseCode::POLICY_VIOLATION, "too many messages");
        }
        if !client.subscribed {
            if now.saturating_duration_since(client.opened) >= SUBSCRIBE_WITHIN {
                out.push(SUBSCRIBE_REQUIRED.into());
                return Tick::Close(CloseCode::POLICY_VIOLATION, "");
            }
            return Tick::Keep;
        }
        if let Some(due) = client.next_heartbeat
            && now >= due
        {
            let mono = now.saturating_duration_since(self.started);
            let wall = crate::time::now_ns();
            let mut text = wire::envelope("heartbeats", &wire::rfc3339(wall), client.seq(), 120);
            let _ = write!(
                text,
                r#"{{"current_time":"{}","heartbeat_counter":{}}}]}}"#,
                wire::go_time(wall, mono),
                mono.as_secs()
            );
            out.push(text);
            client.last_sent = now;
            // One a second; after a stall, the next a second from now.
            let next = due + HEARTBEAT_EVERY;
            client.next_heartbeat = Some(if next > now {
                next
            } else {
                now + HEARTBEAT_EVERY
            });
        }
        if now.saturating_duration_since(client.last_sent) >= QUIET_CLOSE {
            return Tick::Close(CloseCode::NORMAL, "");
        }
        Tick::Keep
    }
}

#[cfg(test)]
mod tests;
