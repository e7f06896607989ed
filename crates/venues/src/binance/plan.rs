//! Binance spot, USD-M and COIN-M: connections, subscriptions, REST
//! snapshots and how deep a book is kept.

use std::time::Duration;

use crate::binance::Market;
use crate::connection::{Channels, ConnectionPlan, PlanError, check_depth, check_symbols};
use crate::connection::{DEFAULT_MAX_MESSAGE, json_strings, split};
use crate::event::InstrumentSpec;
use crate::model::BookShape;
use crate::model::Window;

/// The `limit`s the futures REST depth endpoints take (`/fapi/v1/depth`,
/// `/dapi/v1/depth`: "Default 500; Valid limits:[5, 10, 20, 50, 100, 500,
/// 1000]", USD-M and COIN-M "Order Book" pages). Spot takes any limit up to
/// 5000 (`/api/v3/depth`: "Default 100; max 5000").
const FUTURES_LIMITS: [usize; 7] = [5, 10, 20, 50, 100, 500, 1000];

/// The deepest REST snapshot each market gives (spot: "If limit > 5000,
/// then the response will truncate to 5000", `/api/v3/depth`).
pub(crate) fn max_limit(market: Market) -> usize {
    match market {
        Market::Spot => 5000,
        Market::UsdM | Market::CoinM => 1000,
    }
}

/// The deepest a book may show: half the deepest snapshot. A book showing
/// all its snapshot gave would thin out below its shown depth at the first
/// level removed, and resync at once.
pub fn max_shown(market: Market) -> usize {
    max_limit(market) / 2
}

/// How deep a Binance book is kept for a shown `depth`: as deep as its REST
/// snapshot, which is fetched at the limit that keeps at least four times
/// the shown depth and never fewer than 1000 levels (snapped up to a limit
/// the market takes). The diff stream covers the whole book, so below the
/// snapshot's last level the book knows nothing ([`Window::Client`]):
/// "since depth snapshots retrieved from the API have a limit on the
/// number of price levels, a price level outside of the initial snapshot
/// that doesn't have a quantity change won't have an update in the Diff.
/// Depth Stream" (Spot API docs, "How to manage a local order book
/// correctly"). The deeper the snapshot, the longer the shown levels stay
/// exact as the market moves; the cost is the request's weight (spot:
/// 1000 levels weigh 50 of the 6000 a minute; futures: 20 of 2400).
pub fn book_shape(market: Market, depth: usize) -> BookShape {
    let want = depth.saturating_mul(4).max(1000).min(max_limit(market));
    BookShape {
        keep: snap_limit(market, want).max(depth),
        window: Window::Client,
    }
}

/// The smallest `limit` the market takes that is at least `levels` (the
/// market's deepest if none is).
pub fn snap_limit(market: Market, levels: usize) -> usize {
    match market {
        Market::Spot => levels.clamp(1, 5000),
        Market::UsdM | Market::CoinM => FUTURES_LIMITS
            .iter()
            .copied()
            .find(|&l| l >= levels)
            .unwrap_or(1000),
    }
}

/// The `limit` a book showing `depth` levels asks its REST snapshot for:
/// the levels [`book_shape`] keeps.
pub fn snapshot_limit(market: Market, depth: usize) -> usize {
    book_shape(market, depth).keep.min(max_limit(market))
}

/// The REST depth snapshot of a Binance symbol for a book showing `depth`
/// levels: `(host, path)` for an HTTPS GET, at [`snapshot_limit`].
pub fn snapshot_path(market: Market, symbol: &str, depth: usize) -> (&'static str, String) {
    let limit = snapshot_limit(market, depth);
    match market {
        Market::Spot => (
            "api.binance.com",
            format!("/api/v3/depth?symbol={symbol}&limit={limit}"),
        ),
        Market::UsdM => (
            "fapi.binance.com",
            format!("/fapi/v1/depth?symbol={symbol}&limit={limit}"),
        ),
        Market::CoinM => (
            "dapi.binance.com",
            format!("/dapi/v1/depth?symbol={symbol}&limit={limit}"),
        ),
    }
}

/// The request weight a market's REST API allows an IP address each
/// minute (`REQUEST_WEIGHT`, `MINUTE`, in `exchangeInfo`'s `rateLimits`):
/// spot 6000, USD-M and COIN-M futures 2400 ("LIMITS", Spot API docs;
/// "General Info", USD-M and COIN-M docs). Past it the API answers 429
/// with `Retry-After`; "repeatedly violating rate limits and/or failing to
/// back off after receiving 429s will result in an automated IP ban
/// (HTTP status 418)", from 2 minutes to 3 days.
pub fn rest_weight_per_minute(market: Market) -> u32 {
    match market {
        Market::Spot => 6000,
        Market::UsdM | Market::CoinM => 2400,
    }
}

/// The request weight of a depth snapshot of `limit` levels. Spot
/// (`GET /api/v3/depth`, "Order book"): 1-100 weigh 5, 101-500 25,
/// 501-1000 50, 1001-5000 250. Futures (`/fapi/v1/depth`,
/// `/dapi/v1/depth`, "Order Book"): 5 to 50 weigh 2, 100 5, 500 10, 1000
/// 20.
pub fn snapshot_weight(market: Market, limit: usize) -> u32 {
    match market {
        Market::Spot => match limit {
            0..=100 => 5,
            101..=500 => 25,
            501..=1000 => 50,
            _ => 250,
        },
        Market::UsdM | Market::CoinM => match limit {
            0..=50 => 2,
            51..=100 => 5,
            101..=500 => 10,
            _ => 20,
        },
    }
}

/// The largest REST snapshot body for a book showing `depth`: two sides of
/// `limit` levels, each `["price","size"],` of at most 40 bytes with
/// Binance's 8 decimals, and the head.
pub fn snapshot_bytes(market: Market, depth: usize) -> usize {
    let limit = snapshot_limit(market, depth);
    2 * limit * 40 + 4096
}

/// Binance: combined streams (`/stream`), subscribed with `SUBSCRIBE`
/// requests of up to 100 streams. Spot: `stream.binance.com:9443`, 1024
/// streams and 5 messages/s per connection (pings and pongs count).
/// USD-M: `depth`, `bookTicker` and `trade` on `fstream.binance.com/public`,
/// `aggTrade` on `/market`, 200 streams (the docs now say 1024) and 10
/// messages/s. COIN-M: `dstream.binance.com`, 200 streams, 10 messages/s. The server pings (every 20 s on spot, 3 min on futures;
/// tickwire-net answers) and closes every connection after 24 h. Books use
/// the 100 ms diff stream with REST snapshots ([`snapshot_path`]), which
/// hold at most 5000 levels on spot and 1000 on futures: a book shows at
/// most half that ([`max_shown`]).
pub fn plan(
    market: Market,
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    for i in instruments.iter().filter(|i| channels.books && i.depth > 0) {
        check_depth(i, max_shown(market))?;
    }
    let (host, port, per_connection, pace, silence) = match market {
        // Spot takes 5 incoming messages a second, pings and pongs
        // counted ("WebSocket Limits", Spot WebSocket Streams docs): 2
        // requests in any second (510 ms apart) leave room for a ping, a
        // pong, and one more for requests that bunch in transit (at 340 ms,
        // 3 requests, a ping and a pong made exactly 5: a 20 ms bunching
        // made 6). Futures take 10 (the docs do not say whether pings and
        // pongs count; counted here as on spot): 5 requests, a ping, a pong
        // and room to spare.
        Market::Spot => (
            "stream.binance.com",
            9443,
            1024,
            Duration::from_millis(510),
            Duration::from_secs(60),
        ),
        Market::UsdM => (
            "fstream.binance.com",
            443,
            200,
            Duration::from_millis(200),
            Duration::from_secs(600),
        ),
        Market::CoinM => (
            "dstream.binance.com",
            443,
            200,
            Duration::from_millis(200),
            Duration::from_secs(600),
        ),
    };
    // USD-M routes streams by tier, and a connection receives only its
    // path's; one set of connections for each path. Sources:
    // - Binance's "Important WebSocket Change Notice" (USD-M docs, the
    //   base URL split; the legacy unrouted URLs retired 2026-04-23):
    //   `/public` for "high-frequency public market data", `/market` for
    //   "regular market data". It lists `@depth*` and `@bookTicker` under
    //   public, and its examples put `@aggTrade` on `/market`
    //   (`/market/ws/btcusdt@aggTrade/...`).
    // - `@trade` is not in the notice's list. ccxt's current code puts it
    //   on public (`getFutureWsCategory`: depth, rpiDepth, bookTicker and
    //   trade are public, everything else market; ccxt issue 28083), and
    //   so does a field report (BYTEX-TRADE/bytex issue 7: `/public`
    //   "carries book tickers, trades and depth", `/market` "klines, mark
    //   prices and aggregated trades").
    // - A stream subscribed on the wrong path is acknowledged and never
    //   delivered: it "fails silently rather than erroring" (Binance CaaS
    //   "Market Data Streams"). A misrouted stream would look like a quiet
    //   market, not an error, so the routing below is the only guard.
    // The simulator serves each stream on its path only, and acknowledges
    // a misrouted subscription without delivering it (tickwire-sim,
    // `binance/mod.rs`).
    let mut routes: Vec<(&str, Vec<(usize, String)>)> = match market {
        Market::UsdM => vec![
            ("/public/stream", Vec::new()),
            ("/market/stream", Vec::new()),
        ],
        _ => vec![("/stream", Vec::new()), ("/stream", Vec::new())],
    };
    for (index, i) in instruments.iter().enumerate() {
        let s = i.symbol.to_ascii_lowercase();
        if channels.books && i.depth > 0 {
            routes[0].1.push((index, format!("{s}@depth@100ms")));
        }
        if channels.quotes {
            routes[0].1.push((index, format!("{s}@bookTicker")));
        }
        if channels.trades {
            let kind = if channels.aggregate {
                "aggTrade"
            } else {
                "trade"
            };
            // USD-M: `@trade` is a public stream, `@aggTrade` a market one.
            let route = usize::from(market == Market::UsdM && channels.aggregate);
            routes[route].1.push((index, format!("{s}@{kind}")));
        }
    }
    if market != Market::UsdM {
        let rest = std::mem::take(&mut routes[1].1);
        routes[0].1.extend(rest);
        routes[0].1.sort_by_key(|(i, _)| *i);
    }
    let mut plans = Vec::new();
    let mut id = 1;
    for (path, streams) in routes {
        for (instruments, names) in split(streams, per_connection) {
            let subscribe = subscriptions(&names, &mut id);
            plans.push(ConnectionPlan {
                host: host.to_owned(),
                port,
                path: path.to_owned(),
                subscribe,
                pace,
                ping: None,
                max_silence: silence,
                // "A single connection to stream.binance.com is only valid
                // for 24 hours; expect to be disconnected at the 24 hour
                // mark" (Spot WebSocket Streams, General WSS information;
                // the futures docs say the same of theirs). The feed
                // replaces it before then.
                max_lifetime: Some(Duration::from_secs(24 * 3600)),
                instruments,
                max_message: DEFAULT_MAX_MESSAGE,
                api_key_header: None,
            });
        }
    }
    Ok(plans)
}

/// `SUBSCRIBE` requests of up to 100 streams each ("Live Subscribing/
/// Unsubscribing to streams", WebSocket Streams docs), numbered from `id`
/// on.
fn subscriptions(names: &[String], id: &mut u64) -> Vec<String> {
    names
        .chunks(100)
        .map(|chunk| {
            let text = format!(
                r#"{{"method":"SUBSCRIBE","params":{},"id":{id}}}"#,
                json_strings(chunk.iter().map(String::as_str))
            );
            *id += 1;
            text
        })
        .collect()
}

/// Binance spot's market data in SBE (`stream-sbe.binance.com:9443`):
/// spot's books, REST snapshots and limits, its own stream names. Rules
/// relied on, from the venue's "SBE Market Data Streams" page
/// (`sbe-market-data-streams.md`, binance-spot-api-docs):
/// - "An API Key is necessary for access", sent in the `X-MBX-APIKEY`
///   header of the upgrade; "Only Ed25519 keys are allowed", and no
///   signature is needed
///   ([`ConnectionPlan::api_key_header`]: the feed adds it).
/// - Streams: `<symbol>@trade` (real time), `<symbol>@bestBidAsk` (real
///   time, with auto-culling: an outdated event may be dropped, so its
///   `bookUpdateId`s skip, which is no gap), `<symbol>@depth` (diffs,
///   "managed the same way" as the JSON diff stream: the same `U`/`u`
///   bridge with the REST snapshot) and `<symbol>@depth20`. No
///   `@aggTrade`, no `@bookTicker`: aggregate trades are refused.
/// - "Live subscribing/unsubscribing" as on the JSON streams: `/ws` and
///   `SUBSCRIBE` requests of up to 100 streams here (the page names raw
///   `/ws/<stream>` and combined `/stream?streams=` URLs; a binary event
///   carries no stream name either way, its template and symbol say what
///   it is). Requests and their replies are JSON text frames, events
///   binary frames.
/// - The same limits as the JSON streams: 5 incoming messages a second
///   (pings, pongs and requests), 1024 streams a connection, a ping every
///   20 s, 24 h lifetime.
pub fn plan_sbe(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    if channels.trades && channels.aggregate {
        return Err(PlanError::Channel(
            "binance-spot-sbe has no aggregate trades (its streams: trade, bestBidAsk, depth): \
             set aggregate = false",
        ));
    }
    check_symbols(instruments)?;
    for i in instruments.iter().filter(|i| channels.books && i.depth > 0) {
        check_depth(i, max_shown(Market::Spot))?;
    }
    let mut streams = Vec::new();
    for (index, i) in instruments.iter().enumerate() {
        let s = i.symbol.to_ascii_lowercase();
        if channels.books && i.depth > 0 {
            streams.push((index, format!("{s}@depth")));
        }
        if channels.quotes {
            streams.push((index, format!("{s}@bestBidAsk")));
        }
        if channels.trades {
            streams.push((index, format!("{s}@trade")));
        }
    }
    let mut plans = Vec::new();
    let mut id = 1;
    for (instruments, names) in split(streams, 1024) {
        let subscribe = subscriptions(&names, &mut id);
        plans.push(ConnectionPlan {
            host: "stream-sbe.binance.com".to_owned(),
            port: 9443,
            path: "/ws".to_owned(),
            subscribe,
            // As spot's JSON streams (see `plan`): 2 requests a second.
            pace: Duration::from_millis(510),
            ping: None,
            max_silence: Duration::from_secs(60),
            // "A single connection to stream-sbe.binance.com is only valid
            // for 24 hours" (the SBE page).
            max_lifetime: Some(Duration::from_secs(24 * 3600)),
            instruments,
            max_message: DEFAULT_MAX_MESSAGE,
            api_key_header: Some("X-MBX-APIKEY"),
        });
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In any second a connection sends at most the requests its pace
    /// lets through, a ping (tickwire-net's own, at most one a second)
    /// and a pong (to the venue's ping, every 20 s on spot, 3 minutes on
    /// futures): within the venue's incoming-message limit, pings and
    /// pongs counted ("a PING frame, a PONG frame, a JSON controlled
    /// message", Spot "WebSocket Limits": 5 a second; futures 10), with
    /// one message to spare for requests that bunch on the way.
    #[test]
    fn requests_pings_and_pongs_stay_within_the_incoming_limit() {
        let specs = [InstrumentSpec::new("BTCUSDT", 2, 5, 20)];
        for (market, limit) in [(Market::Spot, 5), (Market::UsdM, 10), (Market::CoinM, 10)] {
            for p in plan(market, &specs, Channels::default()).unwrap() {
                // Requests at 0, pace, 2 pace, ... within one second.
                let requests = (Duration::from_millis(999).as_nanos() / p.pace.as_nanos()) + 1;
                assert!(
                    requests + 2 < limit,
                    "{market:?}: {requests} requests every {:?}",
                    p.pace
                );
            }
        }
    }

    #[test]
    fn snapshot_limits_are_ones_the_market_takes() {
        // Futures take only the listed limits; a book showing 20 keeps
        // 1000 (the deepest), one showing 5 the same.
        for depth in [1, 5, 20, 250, 500] {
            let keep = book_shape(Market::UsdM, depth).keep;
            assert!(FUTURES_LIMITS.contains(&keep), "{depth}: {keep}");
            assert!(keep >= depth);
            let (_, path) = snapshot_path(Market::CoinM, "BTCUSD_PERP", depth);
            assert!(path.ends_with(&format!("limit={keep}")), "{path}");
        }
        assert_eq!(snap_limit(Market::UsdM, 7), 10);
        assert_eq!(snap_limit(Market::UsdM, 501), 1000);
        // Spot: four times the shown depth, at least 1000, at most 5000.
        assert_eq!(book_shape(Market::Spot, 20).keep, 1000);
        assert_eq!(book_shape(Market::Spot, 1000).keep, 4000);
        assert_eq!(book_shape(Market::Spot, 5000).keep, 5000);
        // Deeper than a snapshot can give: refused with a reason.
        let e = plan(
            Market::UsdM,
            &[InstrumentSpec::new("BTCUSDT", 8, 8, 501)],
            Channels::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("at most 500"), "{e}");
    }

    #[test]
    fn sbe_plans_name_the_sbe_streams_and_need_the_key_header() {
        let specs = [
            InstrumentSpec::new("BTCUSDT", 2, 5, 20),
            InstrumentSpec::new("ETHUSDT", 2, 4, 0),
        ];
        let plans = plan_sbe(&specs, Channels::default()).unwrap();
        assert_eq!(plans.len(), 1);
        let p = &plans[0];
        assert_eq!(
            (p.host.as_str(), p.port, p.path.as_str()),
            ("stream-sbe.binance.com", 9443, "/ws")
        );
        assert_eq!(p.api_key_header, Some("X-MBX-APIKEY"));
        assert_eq!(p.instruments, vec![0, 1]);
        let text = p.subscribe.join("");
        for stream in [
            "btcusdt@depth\"",
            "btcusdt@bestBidAsk",
            "btcusdt@trade",
            "ethusdt@trade",
        ] {
            assert!(text.contains(stream), "{stream}: {text}");
        }
        // No book asked of ETHUSDT (depth 0), and no JSON stream names.
        assert!(!text.contains("ethusdt@depth"), "{text}");
        assert!(
            !text.contains("bookTicker") && !text.contains("@100ms"),
            "{text}"
        );
        // The JSON plans carry no key.
        assert!(
            plan(Market::Spot, &specs, Channels::default())
                .unwrap()
                .iter()
                .all(|p| p.api_key_header.is_none())
        );
        let aggregate = Channels {
            aggregate: true,
            ..Channels::default()
        };
        let e = plan_sbe(&specs, aggregate).unwrap_err();
        assert!(e.to_string().contains("no aggregate trades"), "{e}");
    }
}
