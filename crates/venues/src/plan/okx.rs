//! OKX v5 public: connections, subscriptions, resubscription and how deep
//! a book is kept.

use std::time::Duration;

use super::DEFAULT_MAX_MESSAGE;
use super::{AppPing, BookShape, Channels, ConnectionPlan, PlanError, check_depth, check_symbols};
use crate::book::Window;
use crate::event::InstrumentSpec;

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

/// OKX v5 public: `ws.okx.com:8443/ws/v5/public`, one `subscribe` request
/// per 50 arguments (OKX answers each argument with its own `subscribe`
/// event); books from the `books` channel (400 levels, snapshot then
/// updates chained by `seqId`/`prevSeqId`). OKX closes a connection that
/// has sent nothing for 30 s ("If there's a network problem, the system
/// will automatically disable the connection. The connection will break
/// automatically if the subscription is not established or data has not
/// been pushed for more than 30 seconds", "Overview"), so the client sends
/// the text `ping` every 20 s, answered by `pong`. Subscribe, unsubscribe
/// and login requests are limited to 480 an hour per connection; new
/// connections to 3 a second per IP.
pub fn plan(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let mut args = Vec::new();
    for i in instruments {
        if channels.books && i.depth > 0 {
            check_depth(i, BOOK_LEVELS)?;
            args.push(arg("books", &i.symbol));
        }
        if channels.quotes {
            args.push(arg("bbo-tbt", &i.symbol));
        }
        if channels.trades {
            args.push(arg("trades", &i.symbol));
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
        max_message: DEFAULT_MAX_MESSAGE,
    }])
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
