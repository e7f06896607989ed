//! Deribit: connections, subscriptions, resubscription and how deep a book
//! is kept, and the request ids that let the adapter tell which request a
//! reply answers.
//!
//! # Request ids
//!
//! Deribit's JSON-RPC replies echo the request's `id` (numbers and
//! strings alike: cryptofeed `exchanges/deribit.py` sends
//! `"id":f"auth_{session_id}"` and matches the reply with
//! `id.startswith("auth")`). A `public/subscribe` reply lists only the
//! channels it accepted: "an unknown instrument or malformed channel is
//! silently left out" (go-deribit issue 16: `"result":[]` for a bad
//! channel; gocryptotrader `handleSubscription` diffs the result against
//! its request). A refusal is therefore an absence, and only a client
//! that knows what it asked can see it. The ids say what was asked:
//!
//! | id | request | what the reply tells |
//! |---|---|---|
//! | [`TEST_ID`] (0) | `public/test`, the answer to a `test_request` | nothing |
//! | [`HEARTBEAT_ID`] (1) | `public/set_heartbeat` | nothing |
//! | [`NO_BOOKS_ID`] (2) | a `public/subscribe` naming no book channel | nothing |
//! | [`UNSUBSCRIBE_ID`] (3) | a resubscription's `public/unsubscribe` | nothing |
//! | [`SUBSCRIBE_ID`] + k (100 + k) | the plan's k-th `public/subscribe`: the `book` channel of each instrument with a book among instruments `k * 100` to `k * 100 + 99` | a book channel absent from `result` was refused |
//! | `"book.{instrument}.100ms"` (a string) | a resubscription's `public/subscribe` of that channel alone | refused if absent from `result` |
//!
//! An `error` reply refuses the whole request (Deribit's error 13778
//! refuses every channel of a `public/subscribe` that names one `raw`
//! channel; a frame over 32 kB gets -32600 with no id: Deribit's RPC error
//! table, docs.deribit.com `/articles/errors`).

use std::time::Duration;

use crate::connection::{Channels, ConnectionPlan, PlanError, check_symbols, json_strings};
use crate::event::InstrumentSpec;
use crate::model::BookShape;
use crate::model::Window;

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

/// The id of `public/test` ([`TEST_ANSWER`](crate::deribit::TEST_ANSWER)).
pub const TEST_ID: u64 = 0;
/// The id of `public/set_heartbeat`.
pub const HEARTBEAT_ID: u64 = 1;
/// The id of a `public/subscribe` that names no book channel (books off).
pub const NO_BOOKS_ID: u64 = 2;
/// The id of a resubscription's `public/unsubscribe`.
pub const UNSUBSCRIBE_ID: u64 = 3;
/// The id of the plan's first `public/subscribe` naming book channels; the
/// k-th has `SUBSCRIBE_ID + k` and covers instruments
/// `k * INSTRUMENTS_PER_REQUEST ..` `(k + 1) * INSTRUMENTS_PER_REQUEST`.
pub const SUBSCRIBE_ID: u64 = 100;
/// Instruments named by one `public/subscribe`: two channels each stay far
/// below Deribit's 32 kB frame limit (-32600 "request entity too large",
/// Deribit's RPC error table), as tmatic's split at 250 channels
/// (crypto-platform issues 402, 439) does.
pub const INSTRUMENTS_PER_REQUEST: usize = 100;

/// The book channel of `symbol`: the 100 ms interval, as the `raw` one
/// needs an authorised connection ("raw interval is only available to
/// authorized users", docs.deribit.com subscriptions; error 13778
/// `raw_subscriptions_not_available_for_unauthorized` otherwise).
pub fn book_channel(symbol: &str) -> String {
    format!("book.{symbol}.100ms")
}

/// The instrument a `book.{instrument}.100ms` channel name names.
pub fn book_channel_symbol(channel: &str) -> Option<&str> {
    channel.strip_prefix("book.")?.strip_suffix(".100ms")
}

/// Deribit: `www.deribit.com/ws/api/v2`, `public/set_heartbeat` (30 s; its
/// `test_request`s are answered with [`deribit::TEST_ANSWER`](crate::deribit::TEST_ANSWER),
/// or Deribit closes the connection) then `public/subscribe` with
/// `book.{instrument}.100ms` and `trades.{instrument}.100ms`, up to
/// [`INSTRUMENTS_PER_REQUEST`] instruments a request, each request's id
/// saying which (see the module docs).
pub fn plan(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let mut subscribe = vec![format!(
        r#"{{"jsonrpc":"2.0","id":{HEARTBEAT_ID},"method":"public/set_heartbeat","params":{{"interval":30}}}}"#
    )];
    for (k, chunk) in instruments.chunks(INSTRUMENTS_PER_REQUEST).enumerate() {
        let mut names = Vec::new();
        for i in chunk {
            if channels.books && i.depth > 0 {
                names.push(book_channel(&i.symbol));
            }
            if channels.trades {
                names.push(format!("trades.{}.100ms", i.symbol));
            }
        }
        if names.is_empty() {
            continue;
        }
        let id = if channels.books {
            SUBSCRIBE_ID + k as u64
        } else {
            NO_BOOKS_ID
        };
        subscribe.push(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"public/subscribe","params":{{"channels":{}}}}}"#,
            json_strings(names.iter().map(String::as_str))
        ));
    }
    Ok(vec![ConnectionPlan {
        host: "www.deribit.com".to_owned(),
        port: 443,
        path: "/ws/api/v2".to_owned(),
        subscribe,
        // "public/subscribe ... Sustained rate: ~3.3 requests/second"
        // (docs.deribit.com public-subscribe).
        pace: Duration::from_millis(350),
        ping: None,
        max_silence: Duration::from_secs(70),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
        max_message: MAX_MESSAGE,
        api_key_header: None,
    }])
}

/// The frames that get a fresh snapshot of one instrument's book:
/// `public/unsubscribe` its `book` channel, then `public/subscribe` it
/// again, with the channel's name as the request id (so a refusal, an
/// absence from the reply's `result`, names the instrument); the first
/// notification after a subscription is the whole book
/// (`"type":"snapshot"`). nautilus_trader recovers Deribit books so
/// (`websocket/handler.rs`, unsubscribe then resubscribe on a gap). The
/// subscribe frame alone subscribes a refused book again.
pub fn resubscribe(instrument: &InstrumentSpec) -> Vec<String> {
    let c = book_channel(&instrument.symbol);
    vec![
        format!(
            r#"{{"jsonrpc":"2.0","id":{UNSUBSCRIBE_ID},"method":"public/unsubscribe","params":{{"channels":["{c}"]}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":"{c}","method":"public/subscribe","params":{{"channels":["{c}"]}}}}"#
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_split_and_their_ids_say_which_instruments() {
        let symbols: Vec<String> = (0..250)
            .map(|n| format!("BTC-27DEC30-{:06}-C-{}", n * 1000, "X".repeat(40)))
            .collect();
        let specs: Vec<InstrumentSpec> = symbols
            .iter()
            .map(|s| InstrumentSpec::new(s, 4, 1, 10))
            .collect();
        let p = plan(&specs, Channels::default()).unwrap();
        assert_eq!(p.len(), 1);
        let frames = &p[0].subscribe;
        assert_eq!(frames.len(), 4, "the heartbeat, then three requests");
        assert!(frames[0].contains(r#""id":1,"method":"public/set_heartbeat""#));
        for (k, frame) in frames[1..].iter().enumerate() {
            assert!(frame.contains(&format!(r#""id":{},"#, 100 + k)), "{frame}");
            // Deribit refuses a frame over 32 kB.
            assert!(frame.len() < 32 * 1024, "{}", frame.len());
            let first = &symbols[k * INSTRUMENTS_PER_REQUEST];
            assert!(frame.contains(&book_channel(first)));
            assert!(frame.contains(&format!("trades.{first}.100ms")));
        }
        assert_eq!(frames[3].matches("book.").count(), 50);
        // Books off: nothing for the adapter to check.
        let p = plan(
            &specs[..2],
            Channels {
                books: false,
                ..Channels::default()
            },
        )
        .unwrap();
        assert!(p[0].subscribe[1].contains(r#""id":2,"#));
        assert!(!p[0].subscribe[1].contains("book."));
    }

    #[test]
    fn a_resubscription_names_its_channel_in_its_id() {
        let again = resubscribe(&InstrumentSpec::new("BTC-PERPETUAL", 1, 0, 10));
        assert_eq!(
            again[1],
            r#"{"jsonrpc":"2.0","id":"book.BTC-PERPETUAL.100ms","method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}"#
        );
        assert!(again[0].contains(r#""id":3,"method":"public/unsubscribe""#));
        assert_eq!(
            book_channel_symbol("book.BTC-PERPETUAL.100ms"),
            Some("BTC-PERPETUAL")
        );
        assert_eq!(book_channel_symbol("book.BTC-PERPETUAL.raw"), None);
        assert_eq!(book_channel_symbol("trades.BTC-PERPETUAL.100ms"), None);
    }
}
