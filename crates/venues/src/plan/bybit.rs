//! Bybit v5 public: connections, subscriptions, resubscription and how
//! deep a book is kept.

use std::time::Duration;

use super::{AppPing, BookShape, Channels, ConnectionPlan, PlanError, check_symbols, window_for};
use super::{DEFAULT_MAX_MESSAGE, json_strings};
use crate::book::Window;
use crate::event::InstrumentSpec;

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

/// Bybit v5: `stream.bybit.com/v5/public/{category}`, `subscribe` requests
/// of at most 10 topics (spot refuses more: "args size >10"),
/// `orderbook.{depth}.{symbol}` and `publicTrade.{symbol}`; the client
/// sends `{"op":"ping"}` every 20 s, as Bybit recommends ("How to maintain
/// heartbeat").
pub fn plan(
    category: BybitCategory,
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let mut topics = Vec::new();
    for i in instruments {
        if channels.books && i.depth > 0 {
            window_for(i, 1, DEPTHS)?;
            topics.push(topic(i));
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
    Ok(vec![ConnectionPlan {
        host: "stream.bybit.com".to_owned(),
        port: 443,
        path: category.path().to_owned(),
        subscribe,
        pace: Duration::from_millis(100),
        ping: Some(AppPing {
            text: r#"{"op":"ping"}"#.to_owned(),
            every: Duration::from_secs(20),
        }),
        max_silence: Duration::from_secs(30),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
        max_message: DEFAULT_MAX_MESSAGE,
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
