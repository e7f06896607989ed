//! Bybit v5 public: connections, subscriptions, resubscription and how
//! deep a book is kept.

use std::time::Duration;

use crate::connection::{AppPing, Channels, ConnectionPlan, PlanError, check_symbols, window_for};
use crate::connection::{DEFAULT_MAX_MESSAGE, json_strings};
use crate::event::InstrumentSpec;
use crate::model::BookShape;
use crate::model::Window;

/// Which Bybit v5 market (it decides the path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BybitCategory {
    /// `/v5/public/spot`.
    Spot,
    /// USDT and USDC perpetuals and futures: `/v5/public/linear`.
    Linear,
    /// Inverse contracts: `/v5/public/inverse`.
    Inverse,
}

impl BybitCategory {
    /// The path of the category's public stream.
    pub fn path(self) -> &'static str {
        match self {
            BybitCategory::Spot => "/v5/public/spot",
            BybitCategory::Linear => "/v5/public/linear",
            BybitCategory::Inverse => "/v5/public/inverse",
        }
    }
}

/// The `orderbook.{depth}` topics of spot, linear and inverse (Bybit v5,
/// "Orderbook": depths 1, 50, 200, 1000; linear 500 was withdrawn).
pub const DEPTHS: &[usize] = &[1, 50, 200, 1000];

/// A Bybit book subscribes the smallest topic depth that holds the shown
/// depth, and keeps all of it: Bybit keeps the window complete on the wire
/// (a level pushed out gets an explicit `"0"`, the level that enters is
/// sent in the same delta; a recorded `orderbook.500` stream keeps exactly
/// 500 levels a side after every message).
pub fn book_shape(depth: usize) -> BookShape {
    BookShape {
        keep: DEPTHS.iter().copied().find(|&d| d >= depth).unwrap_or(1000),
        window: Window::Venue,
    }
}

fn topic(i: &InstrumentSpec) -> String {
    format!("orderbook.{}.{}", book_shape(i.depth).keep, i.symbol)
}

/// Bybit v5: `stream.bybit.com/v5/public/{category}`; per instrument a
/// `subscribe` request for its book, `orderbook.{depth}.{symbol}`, and one
/// for the rest of its topics, `orderbook.1.{symbol}` (the best bid and
/// offer) and `publicTrade.{symbol}`. The client sends `{"op":"ping"}`
/// every 20 s, as Bybit recommends ("Connect": "we recommend that you send
/// the `ping` heartbeat packet every 20 seconds").
///
/// - Requests of one instrument: Bybit refuses a whole request for one
///   unknown topic, naming that topic only ("Bybit fails the *entire*
///   subscribe batch if one topic is unknown", a third-party measurement
///   of 2026-07-25), so a request of several instruments would silence
///   the others with no word about them. Alone in its request, a refused
///   topic's instrument is the one the refusal names.
/// - The book in a request of its own: a refused book (an unknown depth,
///   an armed refusal of the simulator) leaves the instrument's quotes and
///   trades running, and the book's own `subscribe` (the last frame of
///   [`resubscribe`]) is all a retry needs to send.
/// - Spot takes at most 10 topics a request ("args size >10" otherwise;
///   "Connect", "Args limits"): two at most here.
/// - Pace: Bybit documents no request-rate limit on public streams; a
///   third-party probe of 2026 sent 18 subscribe frames at once, all
///   acknowledged. 50 ms apart keeps a margin.
/// - Quotes: `orderbook.1` ("Linear, inverse, spot level 1 data has
///   `snapshot` message only", every 10 ms on change, "Orderbook"). It is
///   spot's only best bid and offer (spot `tickers` carry none, "Ticker"),
///   and the faster one on linear and inverse (tickers: 100 ms); ccxt
///   `watchBidsAsks`, nautilus_trader and barter-data read it so too. A
///   book shown 1 level deep is that topic itself.
pub fn plan(
    category: BybitCategory,
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let request = |topics: &[String]| {
        format!(
            r#"{{"op":"subscribe","args":{}}}"#,
            json_strings(topics.iter().map(String::as_str))
        )
    };
    let mut subscribe = Vec::new();
    for i in instruments {
        let book = channels.books && i.depth > 0;
        if book {
            window_for(i, 1, DEPTHS)?;
            subscribe.push(request(&[topic(i)]));
        }
        let mut topics = Vec::with_capacity(2);
        if channels.quotes && !(book && book_shape(i.depth).keep == 1) {
            topics.push(format!("orderbook.1.{}", i.symbol));
        }
        if channels.trades {
            topics.push(format!("publicTrade.{}", i.symbol));
        }
        if !topics.is_empty() {
            subscribe.push(request(&topics));
        }
    }
    Ok(vec![ConnectionPlan {
        host: "stream.bybit.com".to_owned(),
        port: 443,
        path: category.path().to_owned(),
        subscribe,
        pace: Duration::from_millis(50),
        ping: Some(AppPing {
            text: r#"{"op":"ping"}"#.to_owned(),
            every: Duration::from_secs(20),
        }),
        max_silence: Duration::from_secs(30),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
        max_message: DEFAULT_MAX_MESSAGE,
        api_key_header: None,
    }])
}

/// The frames that get a fresh snapshot of one instrument's book:
/// unsubscribe its `orderbook` topic, then subscribe it again (a second
/// `subscribe` alone is refused: "error:already subscribed"); the snapshot
/// follows the subscription (nautilus_trader recovers Bybit books so).
pub fn resubscribe(instrument: &InstrumentSpec) -> Vec<String> {
    let t = topic(instrument);
    vec![
        format!(r#"{{"op":"unsubscribe","args":["{t}"]}}"#),
        format!(r#"{{"op":"subscribe","args":["{t}"]}}"#),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(depths: &[usize]) -> Vec<InstrumentSpec> {
        ["BTCUSDT", "ETHUSDT", "SOLUSDT"]
            .iter()
            .zip(depths)
            .map(|(s, d)| InstrumentSpec::new(s, 2, 3, *d))
            .collect()
    }

    #[test]
    fn requests_of_one_instrument_the_book_apart() {
        let p = plan(
            BybitCategory::Spot,
            &specs(&[20, 1, 0]),
            Channels::default(),
        )
        .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].path, "/v5/public/spot");
        assert_eq!(
            p[0].subscribe,
            [
                r#"{"op":"subscribe","args":["orderbook.50.BTCUSDT"]}"#,
                r#"{"op":"subscribe","args":["orderbook.1.BTCUSDT","publicTrade.BTCUSDT"]}"#,
                // Shown 1 level deep: the book is the quote topic.
                r#"{"op":"subscribe","args":["orderbook.1.ETHUSDT"]}"#,
                r#"{"op":"subscribe","args":["publicTrade.ETHUSDT"]}"#,
                // No book.
                r#"{"op":"subscribe","args":["orderbook.1.SOLUSDT","publicTrade.SOLUSDT"]}"#,
            ]
        );
        let books_only = Channels {
            trades: false,
            quotes: false,
            ..Channels::default()
        };
        let p = plan(BybitCategory::Inverse, &specs(&[200, 201, 0]), books_only).unwrap();
        assert_eq!(p[0].path, "/v5/public/inverse");
        assert_eq!(
            p[0].subscribe,
            [
                r#"{"op":"subscribe","args":["orderbook.200.BTCUSDT"]}"#,
                r#"{"op":"subscribe","args":["orderbook.1000.ETHUSDT"]}"#,
            ]
        );
        assert_eq!(
            resubscribe(&specs(&[201])[0]),
            [
                r#"{"op":"unsubscribe","args":["orderbook.1000.BTCUSDT"]}"#,
                r#"{"op":"subscribe","args":["orderbook.1000.BTCUSDT"]}"#,
            ]
        );
    }

    #[test]
    fn books_keep_the_whole_topic_the_venue_keeps_complete() {
        for (depth, keep) in [(1, 1), (2, 50), (50, 50), (51, 200), (1000, 1000)] {
            assert_eq!(
                book_shape(depth),
                BookShape {
                    keep,
                    window: Window::Venue
                }
            );
        }
        let e = plan(BybitCategory::Linear, &specs(&[1001]), Channels::default()).unwrap_err();
        assert!(matches!(e, PlanError::TooDeep { max: 1000, .. }), "{e}");
    }
}
