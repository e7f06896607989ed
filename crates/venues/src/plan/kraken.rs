//! Kraken spot v2: connections, subscriptions, resubscription and how deep
//! a book is kept.

use std::time::Duration;

use super::json_strings;
use super::{AppPing, BookShape, Channels, ConnectionPlan, PlanError, check_symbols, window_for};
use crate::book::Window;
use crate::event::InstrumentSpec;

/// The depths of the `book` channel (Kraken WebSocket v2, "Book": 10, 25,
/// 100, 500, 1000; another is refused, "Subscription depth not
/// supported").
pub const DEPTHS: &[usize] = &[10, 25, 100, 500, 1000];

/// The checksum covers the top 10 levels a side, so a book keeps at least
/// 10.
const CHECKSUM_LEVELS: usize = 10;

/// A Kraken book subscribes the smallest depth that holds the shown depth
/// (and the checksum's 10 levels), and keeps all of it: Kraken keeps the
/// window complete, leaving the client to truncate ("the client should
/// truncate the book to the subscribed depth", "Spot WebSocket v2 book
/// guide"), and sends a level that enters the window as an insert.
pub fn book_shape(depth: usize) -> BookShape {
    let want = depth.max(CHECKSUM_LEVELS);
    BookShape {
        keep: DEPTHS.iter().copied().find(|&d| d >= want).unwrap_or(1000),
        window: Window::Venue,
    }
}

/// Kraken's `instrument` snapshot (every pair and asset, ~0.8 MB) is the
/// largest message of a connection.
const MAX_MESSAGE: usize = 4 << 20;

/// Kraken spot v2: `ws.kraken.com/v2`; first `instrument` (the pairs'
/// precisions, which the book checksum needs), then one `subscribe` per
/// channel with every symbol: `book` at the subscribed depth (instruments
/// grouped by it), `ticker` with `event_trigger: bbo`, `trade`. Kraken
/// sends a heartbeat every second once subscribed; the client pings every
/// 30 s (`{"method":"ping"}`, answered by `pong`).
pub fn plan(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let all = |f: &dyn Fn(&InstrumentSpec) -> bool| -> String {
        json_strings(
            instruments
                .iter()
                .filter(|i| f(i))
                .map(|i| i.symbol.as_str()),
        )
    };
    let mut subscribe =
        vec![r#"{"method":"subscribe","params":{"channel":"instrument"}}"#.to_owned()];
    if channels.books {
        let mut depths: Vec<usize> = Vec::new();
        for i in instruments.iter().filter(|i| i.depth > 0) {
            let d = window_for(i, CHECKSUM_LEVELS, DEPTHS)?;
            if !depths.contains(&d) {
                depths.push(d);
            }
        }
        for d in depths {
            subscribe.push(format!(
                r#"{{"method":"subscribe","params":{{"channel":"book","symbol":{},"depth":{d}}}}}"#,
                all(&|i| i.depth > 0 && book_shape(i.depth).keep == d)
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
        max_message: MAX_MESSAGE,
    }])
}

/// The frames that get a fresh snapshot of one pair's book: unsubscribe
/// it, then subscribe it again (a second subscribe alone is refused,
/// "Already subscribed"); the new snapshot replaces the book.
pub fn resubscribe(instrument: &InstrumentSpec) -> Vec<String> {
    let (s, d) = (&instrument.symbol, book_shape(instrument.depth).keep);
    vec![
        format!(
            r#"{{"method":"unsubscribe","params":{{"channel":"book","symbol":["{s}"],"depth":{d}}}}}"#
        ),
        format!(
            r#"{{"method":"subscribe","params":{{"channel":"book","symbol":["{s}"],"depth":{d}}}}}"#
        ),
    ]
}
