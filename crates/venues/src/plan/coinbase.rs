//! Coinbase Advanced Trade: connections, subscriptions, resubscription
//! and how deep a book is kept.

use std::time::Duration;

use super::{BookShape, Channels, ConnectionPlan, PlanError, check_symbols, json_strings};
use crate::book::Window;
use crate::event::InstrumentSpec;

/// A Coinbase `level2` snapshot is the product's whole book and every
/// change of it follows, so a book keeps four times its shown depth (at
/// least 2000 levels) and knows nothing below the last it keeps
/// ([`Window::Client`]).
pub fn book_shape(depth: usize) -> BookShape {
    BookShape {
        keep: depth.saturating_mul(4).max(2000),
        window: Window::Client,
    }
}

/// A `level2` snapshot is the whole book in one message: about 44 000
/// levels and 5 MB for BTC-USD, which breaks a 1 MiB limit (ccxt issue
/// 23597). Room for three times that.
pub const MAX_MESSAGE: usize = 16 << 20;

fn sub(kind: &str, channel: &str, products: &str) -> String {
    format!(r#"{{"type":"{kind}","product_ids":{products},"channel":"{channel}"}}"#)
}

/// Coinbase Advanced Trade: `advanced-trade-ws.coinbase.com` (public
/// channels need no JWT), one `subscribe` per channel (`level2`,
/// `market_trades`) with every product, and `heartbeats` first: "most
/// channels close within 60-90 seconds if no updates are sent"; a
/// connection must subscribe within 5 seconds of opening ("WebSocket
/// Overview"). Unauthenticated clients may send 8 messages a second.
pub fn plan(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    let products = json_strings(instruments.iter().map(|i| i.symbol.as_str()));
    let book_products = json_strings(
        instruments
            .iter()
            .filter(|i| i.depth > 0)
            .map(|i| i.symbol.as_str()),
    );
    let mut subscribe = vec![sub("subscribe", "heartbeats", &products)];
    if channels.books && book_products != "[]" {
        subscribe.push(sub("subscribe", "level2", &book_products));
    }
    if channels.trades {
        subscribe.push(sub("subscribe", "market_trades", &products));
    }
    Ok(vec![ConnectionPlan {
        host: "advanced-trade-ws.coinbase.com".to_owned(),
        port: 443,
        path: "/".to_owned(),
        subscribe,
        pace: Duration::from_millis(150),
        ping: None,
        max_silence: Duration::from_secs(10),
        max_lifetime: None,
        instruments: (0..instruments.len()).collect(),
        max_message: MAX_MESSAGE,
    }])
}

/// The frames that get a fresh snapshot of one product's book: unsubscribe
/// its `level2`, then subscribe it again; a subscription starts with the
/// product's snapshot.
pub fn resubscribe(instrument: &InstrumentSpec) -> Vec<String> {
    let p = json_strings([instrument.symbol.as_str()]);
    vec![
        sub("unsubscribe", "level2", &p),
        sub("subscribe", "level2", &p),
    ]
}
