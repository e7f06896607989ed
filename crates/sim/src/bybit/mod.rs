//! Bybit v5 public market data, spot, linear and inverse, as the v5
//! documentation ("Connect", "Orderbook", "Trade") and third-party live
//! captures (where the documentation says nothing) describe them:
//!
//! - Paths: `/v5/public/spot`, `/v5/public/linear`, `/v5/public/inverse`;
//!   a simulator serves one category, and refuses the others' paths.
//!   Nothing is sent on open.
//! - `{"op":"subscribe"|"unsubscribe","args":[topics],"req_id":..}`: one
//!   reply per request, success or refusal, the whole request refused for
//!   one bad topic (see [`Bybit::subscribe`]); `{"op":"ping"}` answered
//!   with a pong ([`wire`]).
//! - Topics: `orderbook.{1,50,200,1000}.{symbol}` (a snapshot on
//!   subscribe, then deltas with `u` +1 per message per topic, the window
//!   kept complete; level 1 snapshots only, repeated after 3 s without a
//!   change: [`stream`]) and `publicTrade.{symbol}`. Level 1 is the best
//!   bid and offer.
//! - A client that neither pings nor receives data for 10 minutes is cut
//!   off ([`Bybit::on_tick`]).
//! - REST `GET /v5/market/instruments-info` lists what is served
//!   (`listing`); a topic of a symbol not listed is refused.

mod listing;
mod stream;
mod wire;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tickwire_net::CloseCode;
use tickwire_venues::Venue;

use crate::market::Step;
use crate::protocol::{Market, Out, Protocol, Response, Tick};
use crate::server::lock;
use crate::stamps::StreamKind;
use crate::time::now_ms;
use stream::{DEPTHS, Streams, Update};
use wire::{Framed, Wire};

/// Bybit, one of its three public categories.
pub(crate) struct Bybit {
    venue: Venue,
    path: &'static str,
    wire: Wire,
    streams: Mutex<Streams>,
    connections: AtomicU64,
}

/// A topic this simulator serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Topic {
    /// `orderbook.{depth}.{symbol}`.
    Book(usize, usize),
    /// `publicTrade.{symbol}`.
    Trades(usize),
}

/// A connection: its id, its topics, when it last got market data.
pub(crate) struct Client {
    conn_id: String,
    topics: Vec<Topic>,
    /// Level-1 topics: the last message sent, for the 3 s repeat.
    repeats: Vec<Repeat>,
    last_data: Instant,
}

/// A level-1 topic's last message.
struct Repeat {
    n: usize,
    u: u64,
    message: Framed,
    at: Instant,
}

/// "Linear, inverse, spot level 1 data: if 3 seconds have elapsed without
/// a change in the orderbook, a `snapshot` message will be pushed again,
/// and the field `u` will be the same as that in the previous message"
/// ("Orderbook").
const REPEAT: Duration = Duration::from_secs(3);

/// "In general, if there is no "ping-pong" and no stream data sent from
/// server end, the connection will be cut off after 10 minutes"
/// ("Connect", the tip on `max_active_time`); ccxt issue 16398 saw Bybit
/// close quiet sockets after "exactly 10 minutes", with 1006 (no close
/// frame), while a socket receiving a book kept going. No shorter rule is
/// documented for public streams.
const SILENCE: Duration = Duration::from_secs(600);

impl Bybit {
    pub(crate) fn new(venue: Venue) -> Bybit {
        let (path, spot) = match venue {
            Venue::BybitSpot => ("/v5/public/spot", true),
            Venue::BybitInverse => ("/v5/public/inverse", false),
            _ => ("/v5/public/linear", false),
        };
        Bybit {
            venue,
            path,
            wire: Wire { spot },
            streams: Mutex::new(Streams::default()),
            connections: AtomicU64::new(0),
        }
    }

    /// The topic `name` means here, if it is one this simulator serves:
    /// a depth Bybit offers ([`DEPTHS`]) and a symbol listed exactly as
    /// written (a lowercase `orderbook.50.btcusdt` is refused: a
    /// third-party capture of 2026).
    fn topic(market: &Market, name: &str) -> Option<Topic> {
        if let Some(symbol) = name.strip_prefix("publicTrade.") {
            return market.find(symbol).map(Topic::Trades);
        }
        let (depth, symbol) = name.strip_prefix("orderbook.")?.split_once('.')?;
        let depth: usize = depth.parse().ok().filter(|d| DEPTHS.contains(d))?;
        Some(Topic::Book(market.find(symbol)?, depth))
    }

    /// `subscribe`: every topic checked first, and the whole request
    /// refused for the first that fails (Bybit "fails the *entire*
    /// subscribe batch if one topic is unknown", a third-party
    /// measurement of 2026-07-25; which topic a refusal names when several
    /// are bad is unconfirmed):
    ///
    /// - spot, more than 10 topics: `args size >10` ("Spot can input up
    ///   to 10 args for each subscription request", "Connect"; the words
    ///   from third-party captures);
    /// - an unknown topic: [`Wire::unknown`];
    /// - a topic subscribed already: `error:already subscribed,topic:<t>`
    ///   (captured live by third parties; the subscription stands);
    /// - a book whose refusal was armed ([`Market::take_reject`]): refused
    ///   as an unknown topic.
    ///
    /// Then the reply, and a snapshot of each book topic.
    fn subscribe(
        &self,
        client: &mut Client,
        topics: &[&str],
        req_id: Option<&str>,
        market: &mut Market,
        out: &mut Out,
    ) -> Result<(), String> {
        if self.wire.spot && topics.len() > 10 {
            return Err("args size >10".to_owned());
        }
        let mut wanted = Vec::with_capacity(topics.len());
        for name in topics {
            let topic = Self::topic(market, name).ok_or_else(|| self.wire.unknown(name))?;
            wanted.push((*name, topic));
        }
        for (k, (name, topic)) in wanted.iter().enumerate() {
            if client.topics.contains(topic) || wanted[..k].iter().any(|(_, t)| t == topic) {
                return Err(format!("error:already subscribed,topic:{name}"));
            }
        }
        for (name, topic) in &wanted {
            if let Topic::Book(n, _) = topic
                && market.take_reject(*n)
            {
                return Err(self.wire.unknown(name));
            }
        }
        let mut snapshots = Vec::new();
        {
            let mut streams = lock(&self.streams);
            for (_, topic) in &wanted {
                client.topics.push(*topic);
                match *topic {
                    Topic::Trades(n) => streams.open(n, &market.books[n]),
                    Topic::Book(n, depth) => {
                        let w = streams.subscribe(n, depth, &market.books[n]);
                        let spec = &market.instruments[n];
                        let message = self
                            .wire
                            .book(spec, depth, true, w.u, w.seq, w.time_ms, &w.bids, &w.asks);
                        snapshots.push(message.at(now_ms()));
                        if depth == 1 {
                            client.repeats.retain(|r| r.n != n);
                            client.repeats.push(Repeat {
                                n,
                                u: w.u,
                                message,
                                at: Instant::now(),
                            });
                        }
                    }
                }
            }
        }
        out.push(self.ok(client, "subscribe", req_id));
        for s in snapshots {
            out.push(s);
        }
        Ok(())
    }

    /// `unsubscribe`: an unknown topic is refused as in `subscribe`
    /// (unconfirmed: no capture of an unsubscribe refusal was found); a
    /// topic not subscribed is acknowledged.
    fn unsubscribe(
        &self,
        client: &mut Client,
        topics: &[&str],
        market: &Market,
    ) -> Result<(), String> {
        let mut gone = Vec::with_capacity(topics.len());
        for name in topics {
            gone.push(Self::topic(market, name).ok_or_else(|| self.wire.unknown(name))?);
        }
        client.topics.retain(|t| !gone.contains(t));
        client
            .repeats
            .retain(|r| !gone.contains(&Topic::Book(r.n, 1)));
        Ok(())
    }

    fn ok(&self, client: &Client, op: &str, req_id: Option<&str>) -> String {
        self.wire
            .reply(&client.conn_id, true, self.wire.done(op), req_id, op)
    }
}

/// A connection id in the newer form Bybit sends
/// (`d9avrj8i70nu0j2a80n0-9cfc4`, third-party spot captures of 2026): 20 base-32 digits
/// (`0-9a-v`), a dash and 5 more, here from the time and a count.
fn conn_id(count: u64) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    // splitmix64: well-spread bits from a count.
    let mix = |x: u64| {
        let x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    };
    let (a, b) = (mix(now_ms() ^ count), mix(count));
    let mut bits = (u128::from(a) << 64) | u128::from(b);
    let mut id = String::with_capacity(26);
    for k in 0..25 {
        if k == 20 {
            id.push('-');
        }
        id.push(char::from(DIGITS[(bits & 31) as usize]));
        bits >>= 5;
    }
    id
}

/// A request's `req_id`: a JSON string, or a JSON number, echoed back
/// as a string either way.
///
/// The v5 docs ("Connect") type `req_id` as a string and show only
/// strings (`"req_id": "100001"`), but the venue takes a number too:
/// ccxt (the `ccxt.pro` Bybit module, 4.5.x) sends
/// `{"op":"subscribe","req_id":1,...}` and `{"req_id":2,"op":"ping"}`, a
/// number from its request counter, and the venue's replies recorded in
/// its source comments carry that number back as a string: `"req_id":"3"`
/// in `{"success":true,"ret_msg":"","conn_id":"7188110e-...",
/// "req_id":"3","op":"unsubscribe"}` (`handle_un_subscribe`; a linear or
/// inverse reply, `ret_msg` empty) and `"req_id": "2"` on a pong
/// (`handle_pong`). ccxt matches replies with `safe_string`; its pull
/// request 28545 (2026) reads the `req_id` that public-stream refusals
/// echo. A number is echoed as written (`1` as `"1"`); how the venue
/// writes a fraction or an exponent is unconfirmed. Other JSON types
/// (`true`, an object) are refused as undecodable, unconfirmed; `null` is
/// taken as no `req_id`.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum RequestId {
    Text(String),
    Number(serde_json::Number),
}

impl RequestId {
    fn into_text(self) -> String {
        match self {
            RequestId::Text(s) => s,
            RequestId::Number(n) => n.to_string(),
        }
    }
}

/// Bybit's answer to a request it could not read, in the words its Go
/// JSON decoder (jsoniter) gives: `Failed to decode incoming data:` then,
/// for text that is not an object, `readObjectStart: expect { or n, but
/// found h, ...` (a third-party capture of 2026 for `hello`; the socket
/// stays open). The rest of the words, and the reply's `op` (empty
/// here), are unconfirmed.
fn undecodable(text: &str) -> String {
    let first = text.trim_start().chars().next().unwrap_or(' ');
    let near: String = text.chars().take(10).collect();
    let wide: String = text.chars().take(50).collect();
    if first == '{' {
        format!(
            "Failed to decode incoming data:ReadObject: error found in request, bigger context ...|{wide}|..."
        )
    } else {
        format!(
            "Failed to decode incoming data:readObjectStart: expect {{ or n, but found {first}, error found in #1 byte of ...|{near}|..., bigger context ...|{wide}|..."
        )
    }
}

fn stamp_kind(depth: usize) -> StreamKind {
    if depth == 1 {
        // Level 1 is the best bid and offer: the adapter reports it as a
        // quote, with `u` as its update id.
        StreamKind::BookTicker
    } else {
        StreamKind::Depth
    }
}

impl Protocol for Bybit {
    type Client = Client;

    fn subscribed(&self, client: &Client) -> bool {
        !client.topics.is_empty()
    }

    /// The category's path (a query, such as Bybit's private
    /// `max_active_time`, is ignored). Another path is refused with 404
    /// and Go's net/http words (unconfirmed: Bybit's refusal of an unknown
    /// stream path was not captured).
    /// `instruments-info` (see `listing.rs`).
    fn instruments(&self, path: &str, market: &Market) -> Option<Response> {
        (path.split('?').next() == Some(listing::PATH))
            .then(|| listing::instruments(self.venue, path, market))
    }

    fn open(&self, path: &str, _market: &Market) -> Result<Client, Response> {
        let route = path.split_once('?').map_or(path, |(r, _)| r);
        if route != self.path {
            return Err(Response::json(404, "404 page not found\n"));
        }
        let count = self.connections.fetch_add(1, Ordering::Relaxed);
        Ok(Client {
            conn_id: conn_id(count),
            topics: Vec::new(),
            repeats: Vec::new(),
            last_data: Instant::now(),
        })
    }

    /// A request: `subscribe`, `unsubscribe` or `ping` (with an optional
    /// `req_id`, a string or a number, echoed as a string: [`RequestId`]);
    /// any other `op` is `error:invalid op` (a third-party capture of 2026
    /// for `{"op":"nope"}`), text that is not a request [`undecodable`].
    fn on_text(&self, client: &mut Client, text: &str, market: &mut Market, out: &mut Out) {
        #[derive(serde::Deserialize)]
        struct Request {
            #[serde(default)]
            op: String,
            #[serde(default)]
            args: Vec<String>,
            req_id: Option<RequestId>,
        }
        let request = match serde_json::from_str::<Request>(text) {
            Ok(r) => r,
            Err(_) => {
                let words = undecodable(text);
                out.push(self.wire.reply(&client.conn_id, false, &words, None, ""));
                return;
            }
        };
        let req_id = request.req_id.map(RequestId::into_text);
        let req_id = req_id.as_deref();
        let args: Vec<&str> = request.args.iter().map(String::as_str).collect();
        let op = request.op.as_str();
        let refused = match op {
            "ping" => {
                out.push(self.ok(client, op, req_id));
                return;
            }
            "subscribe" => match self.subscribe(client, &args, req_id, market, out) {
                Ok(()) => return,
                Err(words) => words,
            },
            "unsubscribe" => match self.unsubscribe(client, &args, market) {
                Ok(()) => {
                    out.push(self.ok(client, op, req_id));
                    return;
                }
                Err(words) => words,
            },
            _ => "error:invalid op".to_owned(),
        };
        out.push(
            self.wire
                .reply(&client.conn_id, false, &refused, req_id, op),
        );
    }

    /// One step: its trade (on `publicTrade`), then what each subscribed
    /// book topic sent ([`stream`]). Every client hands every step to the
    /// venue's streams, subscribed or not: the first to see a step works
    /// it out for all.
    fn on_step(&self, client: &mut Client, step: &Step, market: &Market, out: &mut Out) {
        let n = step.instrument;
        let mut streams = lock(&self.streams);
        let Some(sent) = streams.step(step) else {
            return;
        };
        let spec = &market.instruments[n];
        let mut sent_any = false;
        if let Some(trade) = step.trade
            && client.topics.contains(&Topic::Trades(n))
        {
            let tick = sent.tick.unwrap_or("ZeroPlusTick");
            let text = self
                .wire
                .trade(spec, &trade, tick, step.last_id, step.time_ms);
            out.stamped(text, n, StreamKind::Trade, trade.id);
            sent_any = true;
        }
        for (depth, update) in &sent.books {
            if !client.topics.contains(&Topic::Book(n, *depth)) {
                continue;
            }
            let (update, lost) = match update {
                Update::Lost(message) => (&**message, true),
                sent => (sent, false),
            };
            let (snapshot, u, bids, asks) = match update {
                Update::Snapshot { u, bids, asks } => (true, *u, bids, asks),
                Update::Delta { u, bids, asks } => (false, *u, bids, asks),
                Update::Lost(_) => continue,
            };
            let message = self.wire.book(
                spec,
                *depth,
                snapshot,
                u,
                step.last_id,
                step.time_ms,
                bids,
                asks,
            );
            if !lost {
                out.stamped(message.at(step.time_ms), n, stamp_kind(*depth), u);
                sent_any = true;
            }
            // A lost level-1 message is the one repeated 3 s later all the
            // same: the venue sent it.
            if *depth == 1 {
                client.repeats.retain(|r| r.n != n);
                client.repeats.push(Repeat {
                    n,
                    u,
                    message,
                    at: Instant::now(),
                });
            }
        }
        if sent_any {
            client.last_data = Instant::now();
        }
    }

    /// Level-1 snapshots repeated after 3 s without a change ([`REPEAT`]),
    /// and the 10-minute cut-off of a client that neither pinged nor
    /// received data ([`SILENCE`]): the socket is dropped without a close
    /// frame (the client sees 1006, as ccxt issue 16398 reports); the
    /// reserved code 1006 cannot be sent, so the server's close frame is
    /// refused and the connection just ends.
    fn on_tick(&self, client: &mut Client, now: Instant, idle: Duration, out: &mut Out) -> Tick {
        for r in &mut client.repeats {
            if now.saturating_duration_since(r.at) >= REPEAT {
                r.at = now;
                out.stamped(r.message.at(now_ms()), r.n, StreamKind::BookTicker, r.u);
                client.last_data = now;
            }
        }
        if idle >= SILENCE && now.saturating_duration_since(client.last_data) >= SILENCE {
            return Tick::Close(CloseCode::ABNORMAL, "");
        }
        Tick::Keep
    }
}

#[cfg(test)]
mod tests;
