//! Kraken spot v2: connections, subscriptions, resubscription and how deep
//! a book is kept.

use std::time::Duration;

use crate::connection::json_strings;
use crate::connection::{AppPing, Channels, ConnectionPlan, PlanError, check_symbols, window_for};
use crate::event::InstrumentSpec;
use crate::model::BookShape;
use crate::model::Window;

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

/// Kraken spot v2: `ws.kraken.com/v2`; first `instrument` when there are
/// books (the pairs' precisions, which the book checksum needs; the one
/// large message, ~0.8 MB), then one `subscribe` per channel with every
/// symbol: `book` at the subscribed depth (instruments grouped by it),
/// `ticker` with `event_trigger: bbo`, `trade` without its snapshot.
/// Kraken sends a heartbeat every second once subscribed ("Heartbeat";
/// measured unconditional at 1 Hz); the client pings every 30 s
/// (`{"method":"ping"}`, answered by `pong`), as peers do.
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
    let books = channels.books && instruments.iter().any(|i| i.depth > 0);
    let mut subscribe = Vec::new();
    if books {
        // The pairs' precisions, before any book: a book message of a pair
        // whose precision is not known cannot be checked.
        subscribe.push(r#"{"method":"subscribe","params":{"channel":"instrument"}}"#.to_owned());
    }
    if books {
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
        // Without the snapshot of the last 50 trades (whose default the
        // docs give both ways, "Trade"): history is not news.
        subscribe.push(format!(
            r#"{{"method":"subscribe","params":{{"channel":"trade","symbol":{},"snapshot":false}}}}"#,
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
        api_key_header: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instrument_channel_comes_first_and_only_for_books() {
        let specs = [
            InstrumentSpec::new("BTC/USD", 10, 8, 10),
            InstrumentSpec::new("ETH/USD", 10, 8, 0),
        ];
        let p = plan(&specs, Channels::default()).unwrap();
        let frames = &p[0].subscribe;
        assert_eq!(
            frames[0],
            r#"{"method":"subscribe","params":{"channel":"instrument"}}"#
        );
        assert_eq!(
            frames[1],
            r#"{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD"],"depth":10}}"#
        );
        assert_eq!(
            frames[3],
            r#"{"method":"subscribe","params":{"channel":"trade","symbol":["BTC/USD","ETH/USD"],"snapshot":false}}"#
        );
        assert!(p[0].max_message >= 1 << 20, "the instrument snapshot fits");
        // No book: no precision needed, no 0.8 MB snapshot.
        let books_off = Channels {
            books: false,
            ..Channels::default()
        };
        let p = plan(&specs, books_off).unwrap();
        assert!(p[0].subscribe.iter().all(|f| !f.contains("instrument")));
        let p = plan(&specs[1..], Channels::default()).unwrap();
        assert!(p[0].subscribe.iter().all(|f| !f.contains("instrument")));
    }

    #[test]
    fn a_resubscription_names_the_depth_subscribed() {
        for (shown, depth) in [(5, 10), (10, 10), (30, 100), (600, 1000)] {
            let again = resubscribe(&InstrumentSpec::new("BTC/USD", 1, 8, shown));
            let want = format!(r#""symbol":["BTC/USD"],"depth":{depth}}}}}"#);
            assert!(again.iter().all(|f| f.ends_with(&want)), "{again:?}");
            assert!(again[0].contains("unsubscribe") && !again[1].contains("unsubscribe"));
        }
    }
}
