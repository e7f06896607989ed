//! Deribit: connections, subscriptions, resubscription and how deep a book
//! is kept.

use std::time::Duration;

use super::{BookShape, Channels, ConnectionPlan, PlanError, check_symbols, json_strings};
use crate::book::Window;
use crate::event::InstrumentSpec;

/// A Deribit `book.*` subscription starts with the whole book and sends
/// every change of it, so a book keeps four times its shown depth (at
/// least 1000 levels) and knows nothing below the last it keeps
/// ([`Window::Client`]).
pub fn book_shape(depth: usize) -> BookShape {
    BookShape {
        keep: depth.saturating_mul(4).max(1000),
        window: Window::Client,
    }
}

/// The whole book in one notification: room for a deep one.
pub const MAX_MESSAGE: usize = 4 << 20;

/// Deribit: `www.deribit.com/ws/api/v2`, `public/set_heartbeat` (30 s; its
/// `test_request`s are answered with [`deribit::TEST_ANSWER`](crate::deribit::TEST_ANSWER),
/// or Deribit closes the connection) then one `public/subscribe` with
/// `book.{instrument}.100ms` and `trades.{instrument}.100ms` (the `raw`
/// intervals need an authorised connection). An unknown channel is left
/// out of the reply's `result` rather than refused.
pub fn plan(
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
        pace: Duration::from_millis(350),
        ping: None,
        max_silence: Duration::from_secs(70),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
        max_message: MAX_MESSAGE,
    }])
}

/// The frames that get a fresh snapshot of one instrument's book:
/// `public/unsubscribe` its `book` channel, then `public/subscribe` it
/// again; the first notification after a subscription is the whole book
/// (`"type":"snapshot"`). nautilus_trader recovers Deribit books so.
pub fn resubscribe(instrument: &InstrumentSpec) -> Vec<String> {
    let c = format!("book.{}.100ms", instrument.symbol);
    vec![
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"public/unsubscribe","params":{{"channels":["{c}"]}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"public/subscribe","params":{{"channels":["{c}"]}}}}"#
        ),
    ]
}
