//! Where to connect and what to say: for each venue, the connections a set
//! of instruments needs (split by the venue's stream limits), the text
//! frames that subscribe them (paced under its message-rate limits), and
//! how the connection is kept alive (application pings, expected silence,
//! forced reconnects). Built once at start-up; nothing here runs on the
//! receive path.
//!
//! The endpoints, limits and keep-alive rules are the venues' public
//! documentation as of November 2026; each is a field a caller may
//! override.

use std::fmt;
use std::time::Duration;

use crate::binance::Market;
use crate::event::InstrumentSpec;

/// What to receive for each instrument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channels {
    /// Trades (Binance: `@trade`; with `aggregate`, `@aggTrade`).
    pub trades: bool,
    /// Binance: aggregate trades instead of trades.
    pub aggregate: bool,
    /// Best bid and offer (Binance `@bookTicker`, OKX `bbo-tbt`, Kraken
    /// `ticker`). Not offered for Bybit, Coinbase and Deribit here.
    pub quotes: bool,
    /// The order book (each instrument's `depth` in its spec is the depth
    /// subscribed where the venue asks for one).
    pub books: bool,
}

impl Default for Channels {
    fn default() -> Channels {
        Channels {
            trades: true,
            aggregate: false,
            quotes: true,
            books: true,
        }
    }
}

/// An application-level keep-alive the venue expects from the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppPing {
    /// The text frame to send.
    pub text: String,
    /// How often, at the latest.
    pub every: Duration,
}

/// One connection: where, what to send once connected, how to keep it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionPlan {
    /// Host name (TLS server name too).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Request path of the WebSocket upgrade.
    pub path: String,
    /// Text frames to send after the handshake, in order.
    pub subscribe: Vec<String>,
    /// The least time between two of those frames (the venue's incoming
    /// message-rate limit, with a margin).
    pub pace: Duration,
    /// Application ping, where the venue needs one (WebSocket pings from
    /// the server are answered by tickwire-net on their own).
    pub ping: Option<AppPing>,
    /// Longer than this without any message means the connection is dead
    /// (the venue's heartbeat or ping interval, with a margin): reconnect.
    pub max_silence: Duration,
    /// The venue closes connections after this long; reconnect before.
    pub max_lifetime: Option<Duration>,
    /// Indices (into the instruments given) carried by this connection.
    pub instruments: Vec<usize>,
}

/// An instrument the venue's plan cannot carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A symbol with characters no venue uses (it would have to be escaped
    /// in the subscription, and no venue sends such symbols back).
    Symbol(String),
    /// A book depth the venue does not offer.
    Depth {
        /// The symbol.
        symbol: String,
        /// The depth asked for.
        depth: usize,
        /// The depths the venue offers.
        offered: &'static [usize],
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Symbol(s) => write!(
                f,
                "symbol {s:?}: only letters, digits and . _ - / are allowed"
            ),
            PlanError::Depth {
                symbol,
                depth,
                offered,
            } => write!(
                f,
                "symbol {symbol:?}: book depth {depth} is not offered (choose one of {offered:?})"
            ),
        }
    }
}

impl std::error::Error for PlanError {}

fn check_symbols(instruments: &[InstrumentSpec]) -> Result<(), PlanError> {
    for i in instruments {
        let ok = !i.symbol.is_empty()
            && i.symbol
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'));
        if !ok {
            return Err(PlanError::Symbol(i.symbol.clone()));
        }
    }
    Ok(())
}

fn check_depth(i: &InstrumentSpec, offered: &'static [usize]) -> Result<(), PlanError> {
    if offered.contains(&i.depth) {
        Ok(())
    } else {
        Err(PlanError::Depth {
            symbol: i.symbol.clone(),
            depth: i.depth,
            offered,
        })
    }
}

/// A JSON array of strings (the symbols are checked to need no escaping).
fn json_strings<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::from("[");
    for (n, s) in items.into_iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
    out.push(']');
    out
}

/// Splits `streams` (each tagged with its instrument index) into
/// connections of at most `per_connection` streams, never splitting one
/// instrument's streams across two connections.
fn split(streams: Vec<(usize, String)>, per_connection: usize) -> Vec<(Vec<usize>, Vec<String>)> {
    let mut out: Vec<(Vec<usize>, Vec<String>)> = Vec::new();
    let mut i = 0;
    while i < streams.len() {
        let instrument = streams[i].0;
        let j = streams[i..]
            .iter()
            .position(|(k, _)| *k != instrument)
            .map_or(streams.len(), |n| i + n);
        let group = &streams[i..j];
        let fits = out
            .last()
            .is_some_and(|(_, s)| s.len() + group.len() <= per_connection);
        if !fits {
            out.push((Vec::new(), Vec::new()));
        }
        let (instruments, names) = out.last_mut().expect("pushed");
        instruments.push(instrument);
        names.extend(group.iter().map(|(_, s)| s.clone()));
        i = j;
    }
    out
}

/// Binance: combined streams (`/stream`), subscribed with `SUBSCRIBE`
/// requests of up to 100 streams. Spot: `stream.binance.com:9443`, 1024
/// streams and 5 messages/s per connection. USD-M: book streams (`depth`,
/// `bookTicker`) on `fstream.binance.com/public`, trades on `/market`, 200
/// streams and 10 messages/s. COIN-M: `dstream.binance.com`, 200 streams,
/// 10 messages/s. The server pings (every 20 s on spot, 3 min on futures;
/// tickwire-net answers) and closes every connection after 24 h. Books use
/// the 100 ms diff stream with REST snapshots ([`snapshot_path`]).
pub fn binance(
    market: Market,
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let (host, port, per_connection, pace, silence) = match market {
        Market::Spot => (
            "stream.binance.com",
            9443,
            1024,
            Duration::from_millis(250),
            Duration::from_secs(60),
        ),
        Market::UsdM => (
            "fstream.binance.com",
            443,
            200,
            Duration::from_millis(150),
            Duration::from_secs(600),
        ),
        Market::CoinM => (
            "dstream.binance.com",
            443,
            200,
            Duration::from_millis(150),
            Duration::from_secs(600),
        ),
    };
    // USD-M routes book streams and the rest to different paths: one set
    // of connections for each.
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
            let route = if market == Market::UsdM { 1 } else { 0 };
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
            let subscribe = names
                .chunks(100)
                .map(|chunk| {
                    let text = format!(
                        r#"{{"method":"SUBSCRIBE","params":{},"id":{id}}}"#,
                        json_strings(chunk.iter().map(String::as_str))
                    );
                    id += 1;
                    text
                })
                .collect();
            plans.push(ConnectionPlan {
                host: host.to_owned(),
                port,
                path: path.to_owned(),
                subscribe,
                pace,
                ping: None,
                max_silence: silence,
                max_lifetime: Some(Duration::from_secs(23 * 3600 + 55 * 60)),
                instruments,
            });
        }
    }
    Ok(plans)
}

/// The REST depth snapshot of a Binance symbol: `(host, path)` for an
/// HTTPS GET. Spot allows 5000 levels (weight 250), futures 1000.
pub fn snapshot_path(market: Market, symbol: &str, limit: usize) -> (&'static str, String) {
    match market {
        Market::Spot => (
            "api.binance.com",
            format!("/api/v3/depth?symbol={symbol}&limit={}", limit.min(5000)),
        ),
        Market::UsdM => (
            "fapi.binance.com",
            format!("/fapi/v1/depth?symbol={symbol}&limit={}", limit.min(1000)),
        ),
        Market::CoinM => (
            "dapi.binance.com",
            format!("/dapi/v1/depth?symbol={symbol}&limit={}", limit.min(1000)),
        ),
    }
}

/// OKX v5 public: `ws.okx.com:8443/ws/v5/public`, one `subscribe` request
/// per 50 arguments; books from the `books` channel (400 levels, snapshot
/// then updates, checksum). OKX closes a connection silent for 30 s, so
/// the client sends the text `ping` every 20 s (answered by `pong`).
pub fn okx(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let mut args = Vec::new();
    for i in instruments {
        let mut push = |channel: &str| {
            args.push(format!(
                r#"{{"channel":"{channel}","instId":"{}"}}"#,
                i.symbol
            ))
        };
        if channels.books && i.depth > 0 {
            push("books");
        }
        if channels.quotes {
            push("bbo-tbt");
        }
        if channels.trades {
            push("trades");
        }
    }
    let subscribe = args
        .chunks(50)
        .map(|chunk| format!(r#"{{"op":"subscribe","args":[{}]}}"#, chunk.join(",")))
        .collect();
    Ok(vec![ConnectionPlan {
        host: "ws.okx.com".to_owned(),
        port: 8443,
        path: "/ws/v5/public".to_owned(),
        subscribe,
        pace: Duration::from_millis(350),
        ping: Some(AppPing {
            text: "ping".to_owned(),
            every: Duration::from_secs(20),
        }),
        max_silence: Duration::from_secs(30),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
    }])
}

/// Which Bybit v5 market (it decides the path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BybitCategory {
    /// `/v5/public/spot`.
    Spot,
    /// USDT and USDC perpetuals and futures: `/v5/public/linear`.
    Linear,
    /// Inverse contracts: `/v5/public/inverse`.
    Inverse,
}

/// Bybit v5: `stream.bybit.com/v5/public/{category}`, `subscribe` requests
/// of at most 10 topics (the spot limit), `orderbook.{depth}.{symbol}`
/// (depths 1, 50, 200, 1000) and `publicTrade.{symbol}`; the client sends
/// `{"op":"ping"}` every 20 s.
pub fn bybit(
    category: BybitCategory,
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    const DEPTHS: &[usize] = &[1, 50, 200, 1000];
    check_symbols(instruments)?;
    let mut topics = Vec::new();
    for i in instruments {
        if channels.books && i.depth > 0 {
            check_depth(i, DEPTHS)?;
            topics.push(format!("orderbook.{}.{}", i.depth, i.symbol));
        }
        if channels.trades {
            topics.push(format!("publicTrade.{}", i.symbol));
        }
    }
    let subscribe = topics
        .chunks(10)
        .map(|chunk| {
            format!(
                r#"{{"op":"subscribe","args":{}}}"#,
                json_strings(chunk.iter().map(String::as_str))
            )
        })
        .collect();
    let path = match category {
        BybitCategory::Spot => "/v5/public/spot",
        BybitCategory::Linear => "/v5/public/linear",
        BybitCategory::Inverse => "/v5/public/inverse",
    };
    Ok(vec![ConnectionPlan {
        host: "stream.bybit.com".to_owned(),
        port: 443,
        path: path.to_owned(),
        subscribe,
        pace: Duration::from_millis(100),
        ping: Some(AppPing {
            text: r#"{"op":"ping"}"#.to_owned(),
            every: Duration::from_secs(20),
        }),
        max_silence: Duration::from_secs(30),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
    }])
}

/// Kraken spot v2: `ws.kraken.com/v2`, one `subscribe` per channel with
/// every symbol; `book` at the instrument's depth (10, 25, 100, 500, 1000;
/// all book instruments of one connection share a depth, so instruments
/// are grouped by it), `ticker` with `event_trigger: bbo`, `trade`. Kraken
/// sends a heartbeat every second once subscribed.
pub fn kraken(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    const DEPTHS: &[usize] = &[10, 25, 100, 500, 1000];
    check_symbols(instruments)?;
    let all = |f: &dyn Fn(&InstrumentSpec) -> bool| -> String {
        json_strings(
            instruments
                .iter()
                .filter(|i| f(i))
                .map(|i| i.symbol.as_str()),
        )
    };
    let mut subscribe = Vec::new();
    if channels.books {
        let mut depths: Vec<usize> = Vec::new();
        for i in instruments.iter().filter(|i| i.depth > 0) {
            check_depth(i, DEPTHS)?;
            if !depths.contains(&i.depth) {
                depths.push(i.depth);
            }
        }
        for d in depths {
            subscribe.push(format!(
                r#"{{"method":"subscribe","params":{{"channel":"book","symbol":{},"depth":{d}}}}}"#,
                all(&|i| i.depth == d)
            ));
        }
    }
    if channels.quotes {
        subscribe.push(format!(
            r#"{{"method":"subscribe","params":{{"channel":"ticker","symbol":{},"event_trigger":"bbo"}}}}"#,
            all(&|_| true)
        ));
    }
    if channels.trades {
        subscribe.push(format!(
            r#"{{"method":"subscribe","params":{{"channel":"trade","symbol":{}}}}}"#,
            all(&|_| true)
        ));
    }
    Ok(vec![ConnectionPlan {
        host: "ws.kraken.com".to_owned(),
        port: 443,
        path: "/v2".to_owned(),
        subscribe,
        pace: Duration::from_millis(100),
        ping: Some(AppPing {
            text: r#"{"method":"ping"}"#.to_owned(),
            every: Duration::from_secs(30),
        }),
        max_silence: Duration::from_secs(10),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
    }])
}

/// Coinbase Advanced Trade: `advanced-trade-ws.coinbase.com`, one
/// `subscribe` per channel (`level2`, `market_trades`) with every product,
/// and `heartbeats` (without it Coinbase closes a connection whose
/// channels are quiet, and it keeps `sequence_num` moving).
pub fn coinbase(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let products = json_strings(instruments.iter().map(|i| i.symbol.as_str()));
    let book_products = json_strings(
        instruments
            .iter()
            .filter(|i| i.depth > 0)
            .map(|i| i.symbol.as_str()),
    );
    let sub = |channel: &str, products: &str| {
        format!(r#"{{"type":"subscribe","product_ids":{products},"channel":"{channel}"}}"#)
    };
    let mut subscribe = vec![sub("heartbeats", &products)];
    if channels.books && book_products != "[]" {
        subscribe.push(sub("level2", &book_products));
    }
    if channels.trades {
        subscribe.push(sub("market_trades", &products));
    }
    Ok(vec![ConnectionPlan {
        host: "advanced-trade-ws.coinbase.com".to_owned(),
        port: 443,
        path: "/".to_owned(),
        subscribe,
        pace: Duration::from_millis(100),
        ping: None,
        max_silence: Duration::from_secs(10),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
    }])
}

/// Deribit: `www.deribit.com/ws/api/v2`, `public/set_heartbeat` (30 s; its
/// `test_request`s are answered with [`deribit::TEST_ANSWER`](crate::deribit::TEST_ANSWER))
/// then one `public/subscribe` with `book.{instrument}.100ms` and
/// `trades.{instrument}.100ms` (the `raw` intervals need an authorised
/// connection).
pub fn deribit(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let mut names = Vec::new();
    for i in instruments {
        if channels.books && i.depth > 0 {
            names.push(format!("book.{}.100ms", i.symbol));
        }
        if channels.trades {
            names.push(format!("trades.{}.100ms", i.symbol));
        }
    }
    let subscribe = vec![
        r#"{"jsonrpc":"2.0","id":1,"method":"public/set_heartbeat","params":{"interval":30}}"#
            .to_owned(),
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{{"channels":{}}}}}"#,
            json_strings(names.iter().map(String::as_str))
        ),
    ];
    Ok(vec![ConnectionPlan {
        host: "www.deribit.com".to_owned(),
        port: 443,
        path: "/ws/api/v2".to_owned(),
        subscribe,
        pace: Duration::from_millis(100),
        ping: None,
        max_silence: Duration::from_secs(70),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::with_doc;
    use simd_json::prelude::*;

    fn specs(symbols: &[&str], depth: usize) -> Vec<InstrumentSpec> {
        symbols
            .iter()
            .map(|s| InstrumentSpec::new(s, 2, 8, depth))
            .collect()
    }

    /// Every subscription frame of every venue is JSON (the OKX `ping`
    /// aside), and names every instrument.
    #[test]
    fn every_frame_is_json_and_names_every_instrument() {
        let i = specs(&["BTC-USDT", "ETH-USDT"], 50);
        let plans = [
            binance(
                Market::Spot,
                &specs(&["BTCUSDT", "ETHUSDT"], 1000),
                Channels::default(),
            ),
            binance(
                Market::UsdM,
                &specs(&["BTCUSDT", "ETHUSDT"], 1000),
                Channels::default(),
            ),
            okx(&i, Channels::default()),
            bybit(
                BybitCategory::Linear,
                &specs(&["BTCUSDT", "ETHUSDT"], 50),
                Channels::default(),
            ),
            kraken(&specs(&["BTC/USD", "ETH/USD"], 10), Channels::default()),
            coinbase(&specs(&["BTC-USD", "ETH-USD"], 100), Channels::default()),
            deribit(
                &specs(&["BTC-PERPETUAL", "ETH-PERPETUAL"], 100),
                Channels::default(),
            ),
        ];
        for plan in plans {
            let plan = plan.unwrap();
            let all: String = plan
                .iter()
                .flat_map(|c| c.subscribe.iter().cloned())
                .collect();
            assert!(all.to_ascii_uppercase().contains("BTC"), "{all}");
            assert!(all.to_ascii_uppercase().contains("ETH"), "{all}");
            for c in &plan {
                assert!(!c.subscribe.is_empty());
                for frame in &c.subscribe {
                    with_doc(frame, |doc| assert!(doc.is_object(), "{frame}"));
                }
            }
        }
    }

    #[test]
    fn binance_frames_and_routes() {
        let p = binance(
            Market::Spot,
            &specs(&["BTCUSDT"], 5000),
            Channels::default(),
        )
        .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].host.as_str(), p[0].port, p[0].path.as_str()),
            ("stream.binance.com", 9443, "/stream")
        );
        assert_eq!(
            p[0].subscribe,
            [
                r#"{"method":"SUBSCRIBE","params":["btcusdt@depth@100ms","btcusdt@bookTicker","btcusdt@trade"],"id":1}"#
            ]
        );
        // USD-M: book streams on /public, trades on /market.
        let p = binance(
            Market::UsdM,
            &specs(&["BTCUSDT"], 1000),
            Channels {
                aggregate: true,
                ..Channels::default()
            },
        )
        .unwrap();
        let paths: Vec<&str> = p.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["/public/stream", "/market/stream"]);
        assert!(
            p[0].subscribe[0].contains("btcusdt@depth@100ms")
                && p[0].subscribe[0].contains("@bookTicker")
        );
        assert!(p[1].subscribe[0].contains("btcusdt@aggTrade"));
        assert_eq!(
            snapshot_path(Market::UsdM, "BTCUSDT", 5000),
            (
                "fapi.binance.com",
                "/fapi/v1/depth?symbol=BTCUSDT&limit=1000".to_owned()
            )
        );
    }

    #[test]
    fn stream_limits_split_connections_without_splitting_an_instrument() {
        // 250 instruments x 3 streams on COIN-M (200 a connection): 66
        // instruments (198 streams) a connection, 4 connections.
        let symbols: Vec<String> = (0..250).map(|n| format!("S{n}USD_PERP")).collect();
        let refs: Vec<&str> = symbols.iter().map(String::as_str).collect();
        let p = binance(Market::CoinM, &specs(&refs, 100), Channels::default()).unwrap();
        assert_eq!(p.len(), 4);
        let mut seen = Vec::new();
        for c in &p {
            let streams: usize = c
                .subscribe
                .iter()
                .map(|f| f.matches('@').count() - f.matches("@100ms").count())
                .sum();
            assert!(streams <= 200, "{streams}");
            assert!(
                c.subscribe
                    .iter()
                    .all(|f| f.matches('@').count() - f.matches("@100ms").count() <= 100)
            );
            seen.extend(c.instruments.iter().copied());
        }
        assert_eq!(seen, (0..250).collect::<Vec<_>>());
    }

    #[test]
    fn bad_symbols_and_depths_are_refused_with_a_reason() {
        let e = okx(&specs(&["BTC\"USDT"], 0), Channels::default()).unwrap_err();
        assert_eq!(e, PlanError::Symbol("BTC\"USDT".to_owned()));
        let e = bybit(
            BybitCategory::Spot,
            &specs(&["BTCUSDT"], 25),
            Channels::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("depth 25 is not offered"), "{e}");
        let e = kraken(&specs(&["BTC/USD"], 20), Channels::default()).unwrap_err();
        assert!(matches!(e, PlanError::Depth { depth: 20, .. }));
    }

    #[test]
    fn kraken_groups_books_by_depth_and_okx_pings() {
        let mut i = specs(&["BTC/USD", "ETH/USD"], 10);
        i[1].depth = 100;
        let p = kraken(&i, Channels::default()).unwrap();
        assert_eq!(p[0].subscribe.len(), 4, "{:?}", p[0].subscribe);
        assert!(p[0].subscribe[0].contains(r#""symbol":["BTC/USD"],"depth":10"#));
        assert!(p[0].subscribe[1].contains(r#""symbol":["ETH/USD"],"depth":100"#));
        let p = okx(&specs(&["BTC-USDT"], 400), Channels::default()).unwrap();
        assert_eq!(p[0].ping.as_ref().map(|p| p.text.as_str()), Some("ping"));
        assert!(p[0].ping.as_ref().unwrap().every < p[0].max_silence);
    }
}
