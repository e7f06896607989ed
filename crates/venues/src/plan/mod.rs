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

//! Each venue's rules are its own module ([`binance`], [`okx`], [`bybit`],
//! [`kraken`], [`coinbase`], [`deribit`]; the files are `src/<venue>/plan.rs`),
//! on the vocabulary every plan shares ([`ConnectionPlan`], [`Channels`],
//! [`AppPing`], [`PlanError`], [`BookShape`]).

pub use crate::connection::{AppPing, Channels, ConnectionPlan, DEFAULT_MAX_MESSAGE, PlanError};
pub use crate::model::BookShape;

pub use crate::binance::plan as binance;
pub use crate::bybit::plan as bybit;
pub use crate::coinbase::plan as coinbase;
pub use crate::deribit::plan as deribit;
pub use crate::kraken::plan as kraken;
pub use crate::okx::plan as okx;

pub use binance::snapshot_path;
pub use bybit::BybitCategory;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Venue;
    use crate::binance::Market;
    use crate::event::InstrumentSpec;
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
