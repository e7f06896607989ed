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

use crate::event::InstrumentSpec;
pub use crate::model::BookShape;

pub mod binance;
pub mod bybit;
pub mod coinbase;
pub mod deribit;
pub mod kraken;
pub mod okx;

pub use binance::snapshot_path;
pub use bybit::BybitCategory;

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
    /// The venue closes connections after this long (the feed opens a
    /// replacement before then, make-before-break).
    pub max_lifetime: Option<Duration>,
    /// Indices (into the instruments given) carried by this connection.
    pub instruments: Vec<usize>,
    /// The largest message the venue may send on this connection (its
    /// book snapshots, mostly): the receive buffer to set aside for it.
    pub max_message: usize,
}

/// A message size no venue's ordinary messages reach: the default receive
/// buffer's message limit.
pub const DEFAULT_MAX_MESSAGE: usize = 1 << 20;

/// An instrument the venue's plan cannot carry.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
    /// A book depth deeper than the venue's snapshots or windows let a book
    /// keep exact.
    TooDeep {
        /// The symbol.
        symbol: String,
        /// The depth asked for.
        depth: usize,
        /// The most the venue allows.
        max: usize,
    },
    /// Two instruments whose data the venue sends as one product's, under
    /// one id (Coinbase answers `BTC-USDC` as `BTC-USD`): configure one.
    SameProduct {
        /// The symbol configured second.
        symbol: String,
        /// The symbol configured first.
        other: String,
        /// The id both are answered under.
        wire: String,
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
            PlanError::TooDeep { symbol, depth, max } => write!(
                f,
                "symbol {symbol:?}: book depth {depth} cannot be kept exact here (at most {max})"
            ),
            PlanError::SameProduct {
                symbol,
                other,
                wire,
            } => write!(
                f,
                "symbols {other:?} and {symbol:?}: the venue sends both as {wire:?}, \
                 one product's data (keep one of them)"
            ),
        }
    }
}

impl std::error::Error for PlanError {}

pub(crate) fn check_symbols(instruments: &[InstrumentSpec]) -> Result<(), PlanError> {
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

/// The smallest of the venue's `offered` window depths (ascending) that
/// holds `depth` levels (and at least `least`), or why there is none.
pub(crate) fn window_for(
    i: &InstrumentSpec,
    least: usize,
    offered: &'static [usize],
) -> Result<usize, PlanError> {
    let want = i.depth.max(least);
    offered
        .iter()
        .copied()
        .find(|&d| d >= want)
        .ok_or_else(|| PlanError::TooDeep {
            symbol: i.symbol.clone(),
            depth: i.depth,
            max: offered.last().copied().unwrap_or(0),
        })
}

/// No deeper than `max`.
pub(crate) fn check_depth(i: &InstrumentSpec, max: usize) -> Result<(), PlanError> {
    if i.depth <= max {
        Ok(())
    } else {
        Err(PlanError::TooDeep {
            symbol: i.symbol.clone(),
            depth: i.depth,
            max,
        })
    }
}

/// A JSON array of strings (the symbols are checked to need no escaping).
pub(crate) fn json_strings<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
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
pub(crate) fn split(
    streams: Vec<(usize, String)>,
    per_connection: usize,
) -> Vec<(Vec<usize>, Vec<String>)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Venue;
    use crate::binance::Market;
    use crate::json::with_doc;
    use simd_json::prelude::*;

    fn specs(symbols: &[&str], depth: usize) -> Vec<InstrumentSpec> {
        symbols
            .iter()
            .map(|s| InstrumentSpec::new(s, 2, 8, depth))
            .collect()
    }

    /// A pair of symbols each venue lists.
    fn symbols(venue: Venue) -> [&'static str; 2] {
        match venue {
            Venue::Okx => ["BTC-USDT", "ETH-USDT"],
            Venue::Coinbase => ["BTC-USD", "ETH-USD"],
            Venue::Kraken => ["BTC/USD", "ETH/USD"],
            Venue::Deribit => ["BTC-PERPETUAL", "ETH-PERPETUAL"],
            Venue::BinanceCoinM | Venue::BybitInverse => ["BTCUSD_PERP", "ETHUSD_PERP"],
            _ => ["BTCUSDT", "ETHUSDT"],
        }
    }

    /// Every subscription frame of every venue is JSON (the OKX `ping`
    /// aside) and names every instrument; every resubscription is two JSON
    /// frames (unsubscribe, subscribe) naming the instrument, or none where
    /// books come from REST snapshots.
    #[test]
    fn every_frame_is_json_and_names_every_instrument() {
        for (name, venue) in Venue::ALL {
            let i = specs(&symbols(venue), 20);
            let plan = venue.plans(&i, Channels::default()).unwrap();
            let all: String = plan
                .iter()
                .flat_map(|c| c.subscribe.iter().cloned())
                .collect();
            assert!(all.to_ascii_uppercase().contains("BTC"), "{name}: {all}");
            assert!(all.to_ascii_uppercase().contains("ETH"), "{name}: {all}");
            for c in &plan {
                assert!(!c.subscribe.is_empty());
                for frame in &c.subscribe {
                    with_doc(frame, |doc| assert!(doc.is_object(), "{frame}"));
                }
            }
            let again = venue.resubscribe(&i[0]);
            assert_eq!(again.is_empty(), venue.rest_snapshots(), "{name}");
            for frame in &again {
                with_doc(frame, |doc| assert!(doc.is_object(), "{frame}"));
                assert!(frame.contains(&i[0].symbol), "{name}: {frame}");
            }
            if !again.is_empty() {
                assert!(again[0].contains("unsubscribe") && !again[1].contains("unsubscribe"));
            }
        }
    }

    #[test]
    fn binance_frames_and_routes() {
        let p = Venue::BinanceSpot
            .plans(&specs(&["BTCUSDT"], 2500), Channels::default())
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
        // USD-M: book streams and trades on /public, aggregate trades on
        // /market.
        let p = Venue::BinanceUsdM
            .plans(&specs(&["BTCUSDT"], 500), Channels::default())
            .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].path, "/public/stream");
        assert!(p[0].subscribe[0].contains("btcusdt@trade"));
        let p = Venue::BinanceUsdM
            .plans(
                &specs(&["BTCUSDT"], 500),
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
            snapshot_path(Market::UsdM, "BTCUSDT", 20),
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
        let p = Venue::BinanceCoinM
            .plans(&specs(&refs, 100), Channels::default())
            .unwrap();
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
        let e = Venue::Okx
            .plans(&specs(&["BTC\"USDT"], 0), Channels::default())
            .unwrap_err();
        assert_eq!(e, PlanError::Symbol("BTC\"USDT".to_owned()));
        let e = Venue::BybitSpot
            .plans(&specs(&["BTCUSDT"], 2500), Channels::default())
            .unwrap_err();
        assert!(e.to_string().contains("at most 1000"), "{e}");
        let e = Venue::Kraken
            .plans(&specs(&["BTC/USD"], 2000), Channels::default())
            .unwrap_err();
        assert!(matches!(e, PlanError::TooDeep { depth: 2000, .. }), "{e}");
        let e = Venue::Okx
            .plans(&specs(&["BTC-USDT"], 401), Channels::default())
            .unwrap_err();
        assert!(matches!(e, PlanError::TooDeep { max: 400, .. }), "{e}");
    }

    #[test]
    fn windowed_venues_subscribe_the_smallest_depth_that_holds_the_shown_one() {
        let mut i = specs(&["BTC/USD", "ETH/USD"], 5);
        i[1].depth = 30;
        let p = Venue::Kraken.plans(&i, Channels::default()).unwrap();
        // The instrument channel first (precisions), then a book frame per
        // subscribed depth: 5 shown needs the checksum's 10, 30 needs 100.
        assert!(p[0].subscribe[0].contains(r#""channel":"instrument""#));
        assert!(p[0].subscribe[1].contains(r#""symbol":["BTC/USD"],"depth":10"#));
        assert!(p[0].subscribe[2].contains(r#""symbol":["ETH/USD"],"depth":100"#));
        let p = Venue::BybitLinear
            .plans(&specs(&["BTCUSDT"], 20), Channels::default())
            .unwrap();
        assert!(p[0].subscribe[0].contains("orderbook.50.BTCUSDT"));
        assert_eq!(p[0].path, "/v5/public/linear");
        let p = Venue::BybitSpot
            .plans(&specs(&["BTCUSDT"], 20), Channels::default())
            .unwrap();
        assert_eq!(p[0].path, "/v5/public/spot");
        let p = Venue::Okx
            .plans(&specs(&["BTC-USDT"], 20), Channels::default())
            .unwrap();
        assert_eq!(p[0].ping.as_ref().map(|p| p.text.as_str()), Some("ping"));
        assert!(p[0].ping.as_ref().unwrap().every < p[0].max_silence);
    }
}
