//! Binance spot (its JSON streams and its SBE streams), USD-M and COIN-M,
//! as their public documentation and the recorded streams describe them:
//!
//! - Paths: raw streams `/ws/<stream>[/<stream>...]` and `/ws`, combined
//!   streams `/stream?streams=a/b` and `/stream` (payloads wrapped as
//!   `{"stream":..,"data":..}`); USD-M under `/public` (`depth`,
//!   `bookTicker`, `trade`) and `/market` (`aggTrade`), a path serving only
//!   its tier ("Important WebSocket Change Notice", USD-M docs; the
//!   sources for each stream's path are with the plan's routing, in
//!   `tickwire_venues::plan::binance`): a stream subscribed on the other
//!   path is acknowledged and never delivered (it "fails silently rather
//!   than erroring", Binance CaaS "Market Data Streams").
//! - `SUBSCRIBE` / `UNSUBSCRIBE` / `LIST_SUBSCRIPTIONS` answered
//!   `{"result":null,"id":N}`; a stream name of a symbol that does not
//!   exist is acknowledged and then silent (Binance validates only the
//!   syntax: Binance.Net issue 620, and measured on fstream); a malformed
//!   name gets `{"error":{"code":2,"msg":"Invalid request: invalid
//!   stream"},"id":N}` (the error nested under `error`, as on the wire,
//!   not flat as the docs print it); bad JSON code 3.
//! - Streams: `<symbol>@depth[@100ms]` (spot: `U`, `u`, contiguous per
//!   symbol: `U` is the previous event's `u` + 1; futures add `T` and
//!   `pu`, the previous event's `u`; COIN-M adds `ps`), `@trade`,
//!   `@aggTrade`, `@bookTicker` (its `u` is the book's update id). Spot
//!   writes every price and quantity with 8 decimals; futures with the
//!   symbol's own precision.
//! - Futures update ids jump: the USD-M docs' own example ("Diff. Book
//!   Depth Streams") is `"U": 157, "u": 160, "pu": 149`, ids skipped
//!   between two events and within one, and their "How to manage a local
//!   order book correctly" asks only that "each new event's pu should be
//!   equal to the previous event's u" (in the recorded USD-M and COIN-M
//!   streams `U > pu + 1` in 2,324 of 2,362 events). The books of both
//!   futures markets run on [`Ids::Jumping`](crate::market::Ids): a
//!   random gap (from the market's seed) before each event and between
//!   its ids, `pu` the previous event's `u`. Spot's stay contiguous, its
//!   rule being `U` = previous `u` + 1.
//! - REST: `GET /api/v3/depth` (spot: any `limit` 1 to 5000, default 100,
//!   more is cut to 5000), `/fapi/v1/depth` and `/dapi/v1/depth`
//!   (`limit` one of 5, 10, 20, 50, 100, 500, 1000, default 500; another
//!   is `400 {"code":-4021,"msg":"'7' is not valid depth limit."}`); an
//!   unknown symbol is `400 {"code":-1121,"msg":"Invalid symbol."}`, one
//!   not written in upper case -1100 (see `listing.rs`, which serves
//!   `exchangeInfo`). The
//!   snapshot is consistent with the diff stream: read under the market's
//!   lock, between two steps. Its `lastUpdateId` is spot's last `u`; on
//!   futures an id drawn from the range `U..=u` of the event whose state
//!   it shows, not always its `u`, as the venue's fall inside an event
//!   ("the first processed event should have U <= lastUpdateId AND u >=
//!   lastUpdateId"), never in a gap between two events, where no diff
//!   would bridge it.
//! - Spot also serves its WebSocket API at `/ws-api/v3` (sessions, signed
//!   requests, orders on the simulator's exchange, the user data stream,
//!   the rate limits): see `wsapi/`.
//! - Spot's SBE streams (`Venue::BinanceSpotSbe`, stream-sbe.binance.com;
//!   binance-spot-api-docs `sbe-market-data-streams.md` and the schema
//!   `sbe/schemas/stream_1_0.xml`; details and the rest of the sources in
//!   `sbe/`) are spot's streams but for: an upgrade without an API key in
//!   `X-MBX-APIKEY` is refused (400 `No X-MBX-APIKEY header`, as a third
//!   party saw it, nautilus_trader PR #4092: Binance does not document
//!   the refusal); the streams are `<symbol>@trade`, `@bestBidAsk`,
//!   `@depth` and `@depth20` (JSON spot's other names are acknowledged and
//!   silent there, and these on JSON spot); every event is one binary
//!   frame of the schema, bare on `/stream` too; `serverShutdown` is the
//!   bare JSON text event on every connection. Paths, `SUBSCRIBE`,
//!   `UNSUBSCRIBE` and `LIST_SUBSCRIPTIONS` and their JSON replies (the
//!   page: requests and replies are JSON text frames, and it points to the
//!   JSON streams' "Live Subscribing/Unsubscribing"), the 5 incoming
//!   messages a second (pings, pongs and requests: the page), REST
//!   `depth` and `exchangeInfo`, and the contiguous ids are spot's (the
//!   page sends its readers to the JSON streams' way of keeping a book
//!   from spot's REST snapshot). There is no WebSocket API on that host.

use rand::SeedableRng;
use rand::rngs::StdRng;
use tickwire_venues::{Venue, plan};

use crate::exchange::PrivateEvent;
use crate::market::{self, Book, SimInstrument, Step};
use crate::protocol::{Frame, Market, Out, Protocol, Response, query};
use crate::stamps::StreamKind;
use crate::time::now_ms;
use crate::{Script, ScriptMessage};

/// The stream kinds Binance serves here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The diffs: JSON `@depth[@100ms]`, SBE `@depth`.
    Depth,
    Trade,
    AggTrade,
    BookTicker,
    /// SBE only: the best bid and ask (JSON's `bookTicker`).
    BestBidAsk,
    /// SBE only: the top 20 levels a side.
    Depth20,
}

/// Binance, one of its three markets.
pub(crate) struct Binance {
    venue: Venue,
    /// Spot's WebSocket API (`/ws-api/v3`).
    wsapi: WsApi,
}

/// A client: raw or combined, its path's tier (USD-M), its streams.
pub(crate) struct Client {
    combined: bool,
    /// USD-M: the path's tier (`/public` or `/market`); `None` elsewhere.
    tier: Option<Tier>,
    /// (instrument, kind) pairs subscribed.
    streams: Vec<(usize, Kind)>,
    /// A WebSocket API connection (`/ws-api/v3`): its session.
    api: Option<wsapi::Session>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tier {
    Public,
    Market,
}

impl Binance {
    pub(crate) fn new(venue: Venue) -> Binance {
        Binance::with_limits(venue, WsApiLimits::default())
    }

    /// With the WebSocket API's rate limits at `limits`.
    pub(crate) fn with_limits(venue: Venue, limits: WsApiLimits) -> Binance {
        Binance {
            venue,
            wsapi: WsApi::new(limits),
        }
    }

    /// The venue's market, as the plans name it.
    fn market(&self) -> tickwire_venues::binance::Market {
        self.venue
            .binance_market()
            .unwrap_or(tickwire_venues::binance::Market::Spot)
    }

    /// Spot, in JSON or SBE: spot's books, ids, limits and REST.
    fn spot(&self) -> bool {
        matches!(self.venue, Venue::BinanceSpot | Venue::BinanceSpotSbe)
    }

    /// Spot's SBE streams (`sbe/`).
    fn sbe(&self) -> bool {
        self.venue == Venue::BinanceSpotSbe
    }

    /// The stream a name means, if the name is one this venue serves and
    /// its symbol is listed; `Err(())` for a malformed name.
    fn parse_stream(&self, market: &Market, name: &str) -> Result<Option<(usize, Kind)>, ()> {
        let (symbol, channel) = name.split_once('@').ok_or(())?;
        let well_formed = !symbol.is_empty()
            && symbol
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !channel.is_empty()
            && channel
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'@' || b == b'_' || b == b'!');
        if !well_formed {
            return Err(());
        }
        let Some(n) = market
            .instruments
            .iter()
            .position(|i| i.symbol.to_ascii_lowercase() == symbol)
        else {
            return Ok(None);
        };
        // A name of the other encoding's is acknowledged and silent, as a
        // name of no stream is.
        let kind = if self.sbe() {
            match channel {
                "trade" => Kind::Trade,
                "bestBidAsk" => Kind::BestBidAsk,
                "depth" => Kind::Depth,
                "depth20" => Kind::Depth20,
                _ => return Ok(None),
            }
        } else {
            match channel {
                "trade" => Kind::Trade,
                "aggTrade" => Kind::AggTrade,
                "bookTicker" => Kind::BookTicker,
                "depth" | "depth@100ms" | "depth@250ms" | "depth@500ms" => Kind::Depth,
                "depth@0ms" if !self.spot() => Kind::Depth,
                _ => return Ok(None),
            }
        };
        Ok(Some((n, kind)))
    }

    /// Whether a client on `tier` gets `kind` (USD-M routes by tier).
    fn served(tier: Option<Tier>, kind: Kind) -> bool {
        match tier {
            None => true,
            Some(Tier::Public) => kind != Kind::AggTrade,
            Some(Tier::Market) => kind == Kind::AggTrade,
        }
    }
}

/// A COIN-M symbol's pair (`BTCUSD_PERP` -> `BTCUSD`).
fn pair(symbol: &str) -> &str {
    symbol.split('_').next().unwrap_or(symbol)
}

/// Where a stream's messages are stamped: SBE's as the JSON stream's of
/// the same events (`depth20`, a snapshot, is not stamped).
fn stamp_kind(kind: Kind) -> StreamKind {
    match kind {
        Kind::Depth | Kind::Depth20 => StreamKind::Depth,
        Kind::Trade | Kind::AggTrade => StreamKind::Trade,
        Kind::BookTicker | Kind::BestBidAsk => StreamKind::BookTicker,
    }
}

impl Protocol for Binance {
    type Client = Client;

    /// `serverShutdown` ("WebSocket Streams": "sent when the server is
    /// about to shut down, resulting in disconnection"): raw on `/ws`,
    /// under `"stream":"!serverShutdown"` on a combined stream (spot,
    /// added 2026-05-06). The futures docs give no such event: none there.
    /// On the SBE streams a JSON text frame, the bare event on every
    /// connection, combined or not: the SBE page
    /// (`sbe-market-data-streams.md`) shows only that form.
    fn shutdown_notice(&self, client: &Client) -> Option<String> {
        if !self.spot() {
            return None;
        }
        let ms = now_ms();
        let event = format!(r#"{{"e":"serverShutdown","E":{ms}}}"#);
        Some(if self.sbe() {
            event
        } else if client.api.is_some() {
            // The WebSocket API's "Connection events": `{"event":{..}}`.
            format!(r#"{{"event":{event}}}"#)
        } else if client.combined {
            format!(r#"{{"stream":"!serverShutdown","data":{event}}}"#)
        } else {
            event
        })
    }

    /// Streams named in the URL (`/ws/<name>`, `/stream?streams=`) count
    /// from the upgrade.
    fn subscribed(&self, client: &Client) -> bool {
        !client.streams.is_empty()
    }

    /// The SBE streams take no upgrade without an API key (`sbe/`); the
    /// JSON streams need none.
    fn admit(&self, _path: &str, headers: &[(String, String)]) -> Result<(), Response> {
        if self.sbe() {
            sbe::admit(headers)
        } else {
            Ok(())
        }
    }

    fn open(&self, path: &str, market: &Market) -> Result<Client, Response> {
        let not_found = || Response::json(404, r#"{"code":-1,"msg":"Not found."}"#);
        let (route, _) = path.split_once('?').unwrap_or((path, ""));
        // The WebSocket API is JSON spot's (its own host, not the SBE
        // streams').
        if self.venue == Venue::BinanceSpot && route == wsapi::PATH {
            return Ok(Client {
                combined: false,
                tier: None,
                streams: Vec::new(),
                api: Some(self.wsapi.connect(path, now_ms())),
            });
        }
        let (tier, route) = if self.venue == Venue::BinanceUsdM {
            if let Some(r) = route.strip_prefix("/public") {
                (Some(Tier::Public), r)
            } else if let Some(r) = route.strip_prefix("/market") {
                (Some(Tier::Market), r)
            } else {
                // The old unrouted URL gets the public tier only.
                (Some(Tier::Public), route)
            }
        } else {
            (None, route)
        };
        let (combined, names): (bool, Vec<&str>) = if route == "/ws" {
            (false, Vec::new())
        } else if let Some(list) = route.strip_prefix("/ws/") {
            (false, list.split('/').collect())
        } else if route == "/stream" {
            let list = query(path, "streams").unwrap_or_default();
            (true, list.split('/').filter(|s| !s.is_empty()).collect())
        } else {
            return Err(not_found());
        };
        let mut streams = Vec::new();
        for name in names {
            if let Ok(Some(s)) = self.parse_stream(market, name)
                && !streams.contains(&s)
            {
                streams.push(s);
            }
        }
        Ok(Client {
            combined,
            tier,
            streams,
            api: None,
        })
    }

    fn on_text(&self, client: &mut Client, text: &str, market: &mut Market, out: &mut Out) {
        if let Some(session) = client.api.as_mut() {
            return self.wsapi.on_text(session, text, market, now_ms(), out);
        }
        #[derive(serde::Deserialize)]
        struct Req {
            method: String,
            #[serde(default)]
            params: Vec<serde_json::Value>,
            id: Option<serde_json::Value>,
        }
        let Ok(req) = serde_json::from_str::<Req>(text) else {
            out.push(r#"{"error":{"code":3,"msg":"Invalid JSON: expected value at line 1 column 1"},"id":null}"#.into());
            return;
        };
        let id = req.id.map_or_else(|| "null".to_string(), |v| v.to_string());
        let invalid = || {
            format!(r#"{{"error":{{"code":2,"msg":"Invalid request: invalid stream"}},"id":{id}}}"#)
        };
        match req.method.as_str() {
            "SUBSCRIBE" | "UNSUBSCRIBE" => {
                let mut parsed = Vec::new();
                for p in &req.params {
                    let Some(name) = p.as_str() else {
                        return out.push(invalid());
                    };
                    match self.parse_stream(market, name) {
                        Err(()) => return out.push(invalid()),
                        Ok(Some(s)) => parsed.push(s),
                        // Acknowledged, and silent.
                        Ok(None) => {}
                    }
                }
                if req.method == "SUBSCRIBE" {
                    let refused = parsed
                        .iter()
                        .filter(|(_, k)| *k == Kind::Depth)
                        .any(|(n, _)| market.take_reject(*n));
                    if refused {
                        return out.push(invalid());
                    }
                    for s in parsed {
                        if !client.streams.contains(&s) {
                            client.streams.push(s);
                        }
                    }
                } else {
                    client.streams.retain(|s| !parsed.contains(s));
                }
                out.push(format!(r#"{{"result":null,"id":{id}}}"#));
            }
            "LIST_SUBSCRIPTIONS" => {
                let names: Vec<String> = client
                    .streams
                    .iter()
                    .map(|(n, k)| format!("{:?}", self.stream_name(&market.instruments[*n].symbol, *k)))
                    .collect();
                out.push(format!(r#"{{"result":[{}],"id":{id}}}"#, names.join(",")));
            }
            _ => out.push(format!(
                r#"{{"error":{{"code":2,"msg":"Invalid request: unknown variant {:?}, expected one of `SUBSCRIBE`, `UNSUBSCRIBE`, `LIST_SUBSCRIPTIONS`, `SET_PROPERTY`, `GET_PROPERTY`"}},"id":{id}}}"#,
                req.method
            )),
        }
    }

    fn on_step(&self, client: &mut Client, step: &Step, market: &Market, out: &mut Out) {
        let n = step.instrument;
        if !client.streams.iter().any(|(i, _)| *i == n) {
            return;
        }
        let spec = &market.instruments[n];
        if self.sbe() {
            // Bare binary frames, on `/ws` and `/stream` alike: a binary
            // event has no room for the combined streams' wrapper.
            let mut frames = Vec::with_capacity(4);
            sbe::Frames::new(step, spec, &market.books[n])
                .write(|kind| client.streams.contains(&(n, kind)), &mut frames);
            for (kind, id, frame) in frames {
                if kind == Kind::Depth20 {
                    out.push_binary(frame);
                } else {
                    out.stamped_binary(frame, n, stamp_kind(kind), id);
                }
            }
            return;
        }
        let mut payloads = Vec::with_capacity(4);
        self.payloads(step, spec, &mut payloads);
        for (kind, id, payload) in payloads {
            if !client.streams.contains(&(n, kind)) || !Self::served(client.tier, kind) {
                continue;
            }
            let text = if client.combined {
                format!(
                    r#"{{"stream":"{}","data":{payload}}}"#,
                    self.stream_name(&spec.symbol, kind)
                )
            } else {
                payload
            };
            out.stamped(text, n, stamp_kind(kind), id);
        }
    }

    /// A WebSocket API client's user data stream (`wsapi/`).
    fn on_private(
        &self,
        client: &mut Client,
        events: &[PrivateEvent],
        market: &Market,
        out: &mut Out,
    ) {
        if let Some(session) = client.api.as_mut() {
            self.wsapi
                .on_private(session, events, market, now_ms(), out);
        }
    }

    /// The WebSocket API documents no limit on messages a second (its
    /// requests are limited by weight and order counts: `wsapi/`); the
    /// streams' limit is the next one.
    fn client_incoming_limit(&self, client: &Client) -> Option<usize> {
        if client.api.is_some() {
            None
        } else {
            self.incoming_limit()
        }
    }

    /// "WebSocket connections have a limit of 5 incoming messages per
    /// second" on spot, 10 on futures ("WebSocket Limits", Spot WebSocket
    /// Streams docs; "Websocket Market Streams", USD-M and COIN-M docs);
    /// "a connection that goes beyond the limit will be disconnected".
    /// Spot says what a message is: "a PING frame, a PONG frame, a JSON
    /// controlled message (e.g. subscribe, unsubscribe)"; the server
    /// counts the client's pings and pongs with its text messages. The
    /// futures docs give the number only, and do not say whether pings
    /// and pongs count: undocumented. They are counted there too, by the
    /// spot rule, the one definition Binance gives: a simulator that
    /// counted less than the venue might would pass a client the venue
    /// disconnects, while counting them costs a client that keeps to the
    /// spot rule nothing (tickwire's feed sends at most 7 paced requests
    /// and a ping in any second there, and a pong to the venue's ping
    /// every 3 minutes: 9 of 10).
    fn incoming_limit(&self) -> Option<usize> {
        Some(if self.spot() { 5 } else { 10 })
    }

    /// The market's documented request weight a minute (see
    /// [`plan::binance::rest_weight_per_minute`]).
    fn rest_weight_limit(&self) -> Option<u32> {
        Some(plan::binance::rest_weight_per_minute(self.market()))
    }

    /// A depth request weighs by its `limit` (its default when absent:
    /// spot 100, futures 500), as [`plan::binance::snapshot_weight`] says.
    fn rest_weight(&self, path: &str) -> u32 {
        if path.split('?').next() == Some(listing::path(self.venue)) {
            return listing::weight(self.venue);
        }
        let default = if self.spot() { 100 } else { 500 };
        let limit = query(path, "limit")
            .and_then(|l| l.parse().ok())
            .unwrap_or(default);
        plan::binance::snapshot_weight(self.market(), limit)
    }

    /// `exchangeInfo` (see `listing.rs`).
    fn instruments(&self, path: &str, market: &Market) -> Option<Response> {
        let route = path.split('?').next()?;
        (route == listing::path(self.venue)).then(|| {
            let limit = plan::binance::rest_weight_per_minute(self.market());
            listing::exchange_info(self.venue, path, market, limit)
        })
    }

    fn rest(&self, path: &str, market: &Market) -> Response {
        let (route, _) = path.split_once('?').unwrap_or((path, ""));
        let expected = match self.venue {
            Venue::BinanceSpot | Venue::BinanceSpotSbe => "/api/v3/depth",
            Venue::BinanceUsdM => "/fapi/v1/depth",
            _ => "/dapi/v1/depth",
        };
        if route != expected {
            return Response::json(404, r#"{"code":-1,"msg":"Not found."}"#);
        }
        // A symbol Binance cannot read (lower case among them) is -1100,
        // one it does not list -1121 (see `listing.rs`).
        if query(path, "symbol").is_some_and(|s| !listing::legal(s)) {
            return listing::illegal_symbol();
        }
        let Some(n) = query(path, "symbol").and_then(|s| market.find(s)) else {
            return Response::json(400, r#"{"code":-1121,"msg":"Invalid symbol."}"#);
        };
        let limit = match query(path, "limit") {
            None => {
                if self.spot() {
                    100
                } else {
                    500
                }
            }
            Some(l) => match l.parse::<usize>() {
                Ok(l) if self.spot() && l >= 1 => l.min(5000),
                Ok(l) if [5, 10, 20, 50, 100, 500, 1000].contains(&l) => l,
                _ => {
                    return Response::json(
                        400,
                        format!(r#"{{"code":-4021,"msg":"'{l}' is not valid depth limit."}}"#),
                    );
                }
            },
        };
        Response::json(
            200,
            self.snapshot(&market.instruments[n], &market.books[n], limit),
        )
    }
}

/// Steps the market of `instruments` (seeded) `steps` times ahead of time,
/// as `venue` writes it: Binance spot's combined streams (JSON text), or
/// its SBE streams (`Venue::BinanceSpotSbe`: binary frames, depth20 left
/// out); any other venue is spot's. The script a simulator sends as fast
/// as a feed takes it, to measure the feed's ceiling. Its REST answers are
/// each symbol's book at the start.
pub fn pregenerate(
    venue: Venue,
    instruments: &[SimInstrument],
    steps: usize,
    seed: u64,
    trade_every: u32,
) -> Script {
    let sbe = venue == Venue::BinanceSpotSbe;
    let venue = Binance::new(if sbe { venue } else { Venue::BinanceSpot });
    let mut rng = StdRng::seed_from_u64(seed);
    let mut books: Vec<Book> = instruments.iter().map(|i| Book::new(i, &mut rng)).collect();
    let snapshots = instruments
        .iter()
        .zip(&books)
        .map(|(i, b)| (i.symbol.clone(), venue.snapshot(i, b, i.levels)))
        .collect();
    let mut messages: Vec<ScriptMessage> = Vec::with_capacity(steps * 2);
    let mut step = Step::default();
    let mut payloads = Vec::new();
    let mut frames = Vec::new();
    for k in 0..steps {
        let n = k % instruments.len();
        let trade = trade_every > 0 && (k as u64).is_multiple_of(u64::from(trade_every));
        market::step(
            n,
            &instruments[n],
            &mut books[n],
            &mut rng,
            trade,
            &mut step,
        );
        if sbe {
            frames.clear();
            sbe::Frames::new(&step, &instruments[n], &books[n])
                .write(|kind| kind != Kind::Depth20, &mut frames);
            for (kind, id, frame) in frames.drain(..) {
                messages.push((Some((n, stamp_kind(kind), id)), 0, Frame::Binary(frame)));
            }
            continue;
        }
        payloads.clear();
        venue.payloads(&step, &instruments[n], &mut payloads);
        for (kind, id, payload) in payloads.drain(..) {
            if kind == Kind::AggTrade {
                continue;
            }
            let text = format!(
                r#"{{"stream":"{}","data":{payload}}}"#,
                venue.stream_name(&instruments[n].symbol, kind)
            );
            messages.push((Some((n, stamp_kind(kind), id)), 0, Frame::Text(text)));
        }
    }
    Script {
        messages,
        snapshots,
        snapshots_by: None,
        real_time: false,
    }
}

mod listing;
mod sbe;
mod wire;
mod wsapi;
#[cfg(test)]
pub(crate) use listing::path as listing_path;
use wsapi::WsApi;
pub use wsapi::WsApiLimits;
#[cfg(test)]
mod tests;
