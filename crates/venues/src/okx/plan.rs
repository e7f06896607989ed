//! OKX v5 public: connections, subscriptions, resubscription and how deep
//! a book is kept.

use std::time::Duration;

use crate::connection::DEFAULT_MAX_MESSAGE;
use crate::connection::{AppPing, Channels, ConnectionPlan, PlanError, check_depth, check_symbols};
use crate::event::InstrumentSpec;
use crate::model::BookShape;
use crate::model::Window;

/// Levels a side of the `books` channel carries: "400 depth levels will be
/// pushed in the initial full snapshot. Incremental data will be pushed
/// every 100 ms" (OKX API v5, "Order book channel"). OKX keeps that window
/// complete on the wire: when a level leaves the top 400 it sends its
/// delete, and the level that enters is sent as an insert (every update of
/// the recorded BTC-USDT `books` stream leaves both sides at exactly 400).
pub const BOOK_LEVELS: usize = 400;

/// An OKX book keeps the channel's 400 levels, which OKX keeps complete.
pub fn book_shape(_depth: usize) -> BookShape {
    BookShape {
        keep: BOOK_LEVELS,
        window: Window::Venue,
    }
}

fn arg(channel: &str, inst_id: &str) -> String {
    format!(r#"{{"channel":"{channel}","instId":"{inst_id}"}}"#)
}

/// `books` channels a connection carries at most: "If you need to
/// subscribe to many 50 or 400 depth level channels, it is recommended to
/// subscribe through multiple websocket connections, with each of less
/// than 30 channels" (OKX API v5, "Order book channel").
pub const BOOKS_PER_CONNECTION: usize = 29;

/// `subscribe`, `unsubscribe` and `login` requests OKX takes on one
/// connection in any [`REQUEST_WINDOW`]: "The total number of
/// 'subscribe'/'unsubscribe'/'login' requests per connection is limited to
/// 480 times per hour"; "WebSocket login and subscription rate limits are
/// based on connection" (OKX API v5, "WebSocket > Connect"). A request is
/// one frame, whatever the number of its `args` (a request subscribes "one
/// or more channels", "Subscribe"). What OKX does past it is not
/// documented; the one error recorded for a WebSocket rate limit is 60014
/// "Requests too frequent" (ccxt issue 25373).
pub const REQUESTS_PER_CONNECTION: u32 = 480;

/// The window [`REQUESTS_PER_CONNECTION`] is counted over: an hour.
pub const REQUEST_WINDOW: Duration = Duration::from_secs(3600);

/// Arguments a `subscribe` request carries here (OKX's own limit is on
/// their length: "the total length of multiple channels cannot exceed 64
/// KB", "Subscribe").
const ARGS_PER_REQUEST: usize = 50;

/// OKX v5 public: `ws.okx.com:8443/ws/v5/public`, one `subscribe` request
/// per 50 arguments (OKX answers each argument with its own `subscribe`
/// event, or an `error` event naming it in its words); books from the
/// `books` channel (400 levels, snapshot then updates chained by
/// `seqId`/`prevSeqId`), at most 29 of them a connection
/// ([`BOOKS_PER_CONNECTION`]), an instrument's channels all on one
/// connection. OKX closes a connection that has sent nothing for 30 s ("If
/// there's a network problem, the system will automatically disable the
/// connection. The connection will break automatically if the
/// subscription is not established or data has not been pushed for more
/// than 30 seconds", "Overview"; close code 4004 "No data received in
/// 30s", "Error Code"), so the client sends the text `ping` every 20 s,
/// answered by `pong`. Subscribe, unsubscribe and login requests are
/// limited to 480 an hour per connection; new connections to 3 a second
/// per IP ("Connect").
pub fn plan(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    // (args, books channels, instruments) of each connection.
    let mut connections: Vec<(Vec<String>, usize, Vec<usize>)> = Vec::new();
    for (n, i) in instruments.iter().enumerate() {
        let books = channels.books && i.depth > 0;
        if books {
            check_depth(i, BOOK_LEVELS)?;
        }
        let full = connections
            .last()
            .is_none_or(|c| books && c.1 == BOOKS_PER_CONNECTION);
        if full {
            connections.push((Vec::new(), 0, Vec::new()));
        }
        // Not empty: a connection was pushed above if there was none.
        let last = connections.len() - 1;
        let (args, book_count, carried) = &mut connections[last];
        if books {
            args.push(arg("books", &i.symbol));
            *book_count += 1;
        }
        if channels.quotes {
            args.push(arg("bbo-tbt", &i.symbol));
        }
        if channels.trades {
            args.push(arg("trades", &i.symbol));
        }
        carried.push(n);
    }
    Ok(connections
        .into_iter()
        .map(|(args, _, carried)| ConnectionPlan {
            host: "ws.okx.com".to_owned(),
            port: 8443,
            path: "/ws/v5/public".to_owned(),
            subscribe: args
                .chunks(ARGS_PER_REQUEST)
                .map(|chunk| format!(r#"{{"op":"subscribe","args":[{}]}}"#, chunk.join(",")))
                .collect(),
            pace: Duration::from_millis(350),
            ping: Some(AppPing {
                text: "ping".to_owned(),
                every: Duration::from_secs(20),
            }),
            max_silence: Duration::from_secs(30),
            max_lifetime: None,
            instruments: carried,
            max_message: DEFAULT_MAX_MESSAGE,
            api_key_header: None,
        })
        .collect())
}

/// The frames that get a fresh snapshot of one instrument's book:
/// unsubscribe its `books` channel, then subscribe it again. OKX pushes the
/// whole book (`"action":"snapshot"`, `prevSeqId` -1) after a
/// subscription; peers recover a broken book the same way (nautilus_trader
/// `crates/adapters/okx`: unsubscribe, subscribe, drop updates until the
/// snapshot).
pub fn resubscribe(instrument: &InstrumentSpec) -> Vec<String> {
    let a = arg("books", &instrument.symbol);
    vec![
        format!(r#"{{"op":"unsubscribe","args":[{a}]}}"#),
        format!(r#"{{"op":"subscribe","args":[{a}]}}"#),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 65 instruments with books: connections of 29, 29 and 7 books, each
    /// instrument's three channels on its own connection, requests of at
    /// most 50 arguments.
    #[test]
    fn books_are_spread_under_thirty_a_connection() {
        let specs: Vec<InstrumentSpec> = (0..65)
            .map(|k| InstrumentSpec::new(&format!("C{k}-USDT"), 2, 8, 400))
            .collect();
        let p = plan(&specs, Channels::default()).unwrap();
        let sizes: Vec<usize> = p.iter().map(|c| c.instruments.len()).collect();
        assert_eq!(sizes, [29, 29, 7]);
        assert_eq!(
            p.iter()
                .flat_map(|c| c.instruments.clone())
                .collect::<Vec<_>>(),
            (0..65).collect::<Vec<_>>()
        );
        for c in &p {
            let books: usize = c
                .subscribe
                .iter()
                .map(|f| f.matches(r#""books""#).count())
                .sum();
            assert_eq!(books, c.instruments.len());
            assert!(
                c.subscribe
                    .iter()
                    .all(|f| f.matches("channel").count() <= 50)
            );
            for &n in &c.instruments {
                let symbol = format!(r#""instId":"C{n}-USDT""#);
                let args: usize = c.subscribe.iter().map(|f| f.matches(&symbol).count()).sum();
                assert_eq!(args, 3, "{symbol}");
            }
        }
        assert_eq!(p[0].subscribe.len(), 2, "87 arguments: two requests");
        // Without books, one connection carries them all.
        let p = plan(
            &specs,
            Channels {
                books: false,
                ..Channels::default()
            },
        )
        .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].instruments.len(), 65);
    }
}
