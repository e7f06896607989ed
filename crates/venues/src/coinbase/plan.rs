//! Coinbase Advanced Trade: connections, subscriptions, resubscription
//! and how deep a book is kept.

use std::time::Duration;

use crate::coinbase::answered_as;
use crate::connection::{Channels, ConnectionPlan, PlanError, check_symbols, json_strings};
use crate::event::InstrumentSpec;
use crate::model::BookShape;
use crate::model::Window;

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

/// Messages a second Coinbase takes from one IP address, over all its
/// connections: "Advanced Trade API WebSocket unauthenticated messages are
/// rate-limited at 8 per second per IP address" ("Advanced Trade WebSocket
/// Rate Limits"). What it does past it is not documented.
pub const MESSAGES_PER_SECOND: u32 = 8;

/// How far apart in time the venue may read two messages that left a
/// second apart (the way, its reader), and [`pace`] still keeps them
/// within [`MESSAGES_PER_SECOND`]: half a second.
pub const READ_SLACK: Duration = Duration::from_millis(500);

/// The least time between two messages on each of `lines` connections
/// to Coinbase that may be open at once, so that all of them together
/// never send more than [`MESSAGES_PER_SECOND`] in any second, as the
/// venue reads them up to [`READ_SLACK`] later than they left: a line
/// sends at most `8 / lines` (rounded down) messages in any second and a
/// half. A connection's paced outbox (one message at a time) keeps it
/// whatever the line sends (subscriptions, resubscriptions, a bot's own
/// requests), with no count shared between lines. Past 8 lines no line
/// can have a message of its own in every second: they share 8 in a
/// second and a half on average, and may meet.
pub fn pace(lines: usize) -> Duration {
    let lines = lines.max(1) as u32;
    let span = Duration::from_secs(1) + READ_SLACK;
    match MESSAGES_PER_SECOND / lines {
        0 => span * lines / MESSAGES_PER_SECOND,
        each => span / each,
    }
}

fn sub(kind: &str, channel: &str, products: &str) -> String {
    format!(r#"{{"type":"{kind}","product_ids":{products},"channel":"{channel}"}}"#)
}

/// Coinbase Advanced Trade: `advanced-trade-ws.coinbase.com` (public
/// channels need no JWT), one `subscribe` per channel ("You can only
/// subscribe to one channel per subscription message", WebSocket
/// Overview): `level2` and `market_trades` with every product, and
/// `heartbeats` first, with no products (the channel takes none:
/// WebSocket Channels; nautilus_trader leaves the key out): "most
/// channels close within 60-90 seconds if no updates are sent"; a
/// connection must subscribe within 5 seconds of opening ("WebSocket
/// Overview"). Unauthenticated clients may send 8 messages a second from
/// an address, over all its connections ([`MESSAGES_PER_SECOND`]): the
/// plan's `pace` is one connection's alone; a feed with more lines open
/// at once paces each by [`pace`].
///
/// One connection carries every product: the adapter checks one
/// `sequence_num` chain per venue. The venue advises a connection per
/// busy product ("do not subscribe to BTC-USD and ETH-USD on the same
/// channel if possible", Best Practices), so that a gap costs one book;
/// that needs an adapter (or at least a sequence check) per connection.
///
/// A `-USDC` product is subscribed by its own id, and its data comes
/// under its `-USD` id ([`answered_as`]); one listed with its `-USD`
/// product (`BTC-USDC` and `BTC-USD`) is refused
/// ([`PlanError::SameProduct`]): the frames could not tell them apart, and
/// the two books would be one book kept twice.
pub fn plan(
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    check_symbols(instruments)?;
    for (n, i) in instruments.iter().enumerate() {
        let wire = answered_as(&i.symbol);
        if let Some(other) = instruments[..n]
            .iter()
            .find(|o| o.symbol != i.symbol && answered_as(&o.symbol) == wire)
        {
            return Err(PlanError::SameProduct {
                symbol: i.symbol.clone(),
                other: other.symbol.clone(),
                wire: wire.to_owned(),
            });
        }
    }
    let products = json_strings(instruments.iter().map(|i| i.symbol.as_str()));
    let book_products = json_strings(
        instruments
            .iter()
            .filter(|i| i.depth > 0)
            .map(|i| i.symbol.as_str()),
    );
    let mut subscribe = vec![r#"{"type":"subscribe","channel":"heartbeats"}"#.to_owned()];
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
        api_key_header: None,
    }])
}

/// The frames that get a fresh snapshot of one product's book: unsubscribe
/// its `level2`, then subscribe it again; a subscription starts with the
/// product's snapshot ("Level2 Channel", WebSocket Channels docs).
///
/// Unconfirmed for the live venue: no document says that a product
/// unsubscribed and subscribed again on the same socket gets a new
/// snapshot, and the peers that recover a broken book reconnect instead
/// (tickvault, nautilus_trader). The connection's `sequence_num` goes on
/// either way, and the adapter takes the snapshot's number as the book's
/// new start. tickwire's simulator answers so.
pub fn resubscribe(instrument: &InstrumentSpec) -> Vec<String> {
    let p = json_strings([instrument.symbol.as_str()]);
    vec![
        sub("unsubscribe", "level2", &p),
        sub("subscribe", "level2", &p),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_channel_a_frame_heartbeats_without_products() {
        let specs = [
            InstrumentSpec::new("BTC-USD", 2, 8, 10),
            InstrumentSpec::new("ETH-USD", 2, 8, 0),
        ];
        let plans = plan(&specs, Channels::default()).unwrap();
        assert_eq!(plans.len(), 1);
        assert_eq!(
            plans[0].subscribe,
            [
                r#"{"type":"subscribe","channel":"heartbeats"}"#,
                r#"{"type":"subscribe","product_ids":["BTC-USD"],"channel":"level2"}"#,
                r#"{"type":"subscribe","product_ids":["BTC-USD","ETH-USD"],"channel":"market_trades"}"#,
            ]
        );
        assert!(plans[0].max_message >= 16 << 20);
        assert_eq!(
            resubscribe(&specs[0]),
            [
                r#"{"type":"unsubscribe","product_ids":["BTC-USD"],"channel":"level2"}"#,
                r#"{"type":"subscribe","product_ids":["BTC-USD"],"channel":"level2"}"#,
            ]
        );
        let shape = book_shape(10);
        assert_eq!((shape.keep, shape.window), (2000, Window::Client));
    }

    /// Each line's share of the 8 messages a second: 2 lines (a plan's
    /// main and standby, or main and replacement) send at most 4 each in
    /// any 1.5 s, 4 lines 2 each; past 8 lines, 8 in 1.5 s on average.
    #[test]
    fn lines_share_the_addresss_eight_messages_a_second() {
        let ms = Duration::from_millis;
        assert_eq!(pace(2), ms(375));
        assert_eq!(pace(4), ms(750));
        assert_eq!(pace(6), ms(1500));
        assert_eq!(pace(8), ms(1500));
        assert_eq!(pace(16), ms(3000));
        for lines in 1..=8 {
            // In any 1.5 s a line sends at most 1.5 s / pace messages,
            // rounded up: never more than 8 over all lines.
            let each = (1.5e9 / pace(lines).as_nanos() as f64).ceil() as usize;
            assert!(each * lines <= 8, "{lines} lines, {each} each");
        }
    }

    #[test]
    fn a_usdc_product_is_subscribed_by_its_own_id_and_not_beside_its_usd_one() {
        let specs = |symbols: &[&str]| -> Vec<InstrumentSpec> {
            symbols
                .iter()
                .map(|s| InstrumentSpec::new(s, 2, 8, 10))
                .collect()
        };
        let plans = plan(
            &specs(&["BTC-USDC", "USDT-USDC", "USDT-USD"]),
            Channels::default(),
        )
        .unwrap();
        assert_eq!(
            plans[0].subscribe[1],
            r#"{"type":"subscribe","product_ids":["BTC-USDC","USDT-USDC","USDT-USD"],"channel":"level2"}"#
        );
        for (symbols, error) in [
            (
                &["ETH-USD", "BTC-USD", "BTC-USDC"][..],
                r#"symbols "BTC-USD" and "BTC-USDC": the venue sends both as "BTC-USD", one product's data (keep one of them)"#,
            ),
            (
                &["BTC-USDC", "BTC-USD"][..],
                r#"symbols "BTC-USDC" and "BTC-USD": the venue sends both as "BTC-USD", one product's data (keep one of them)"#,
            ),
        ] {
            let e = plan(&specs(symbols), Channels::default()).unwrap_err();
            assert!(matches!(e, PlanError::SameProduct { .. }), "{e:?}");
            assert_eq!(e.to_string(), error);
        }
    }
}
