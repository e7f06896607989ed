//! Kraken's instruments: the spot WebSocket v2 `instrument` channel on
//! `wss://ws.kraken.com/v2` (Kraken API docs, "Spot WebSocket v2" →
//! "Instrument", <https://docs.kraken.com/api/docs/websocket-v2/instrument>).
//!
//! Why the channel and not REST `GET /0/public/AssetPairs`: the feed
//! subscribes with v2 symbols (`BTC/USD`), which the channel lists as
//! they are; AssetPairs keys pairs by REST names (`XXBTZUSD`) and gives
//! `wsname` in v1's spelling (`XBT/USD`), which would need a translation
//! the docs do not define.
//!
//! Subscribe with `{"method":"subscribe","params":{"channel":"instrument"}}`;
//! the answer is an acknowledgement (`"method":"subscribe"`), then a
//! message `{"channel":"instrument","type":"snapshot","data":{"assets":[…],"pairs":[…]}}`.
//! Each of `pairs[]` has `symbol`, `status` (`online` is the trading one;
//! `cancel_only`, `delisted`, `limit_only`, `maintenance`,
//! `post_only`, `reduce_only`, `work_in_progress` are not),
//! `price_increment` and `qty_increment` (JSON numbers, read as their
//! text), and `price_precision` and `qty_precision` (integers), which
//! give the decimals: the increments of some pairs are not powers of ten
//! (`0.5`) while the wire carries up to the precision's decimals.
//!
//! Case: v2 symbols are upper case with a slash (`BTC/USD`); they are
//! matched exactly.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::listed::{Listed, ListingError};

/// Kraken's WebSocket host.
pub const HOST: &str = "ws.kraken.com";

/// The v2 API's path.
pub const PATH: &str = "/v2";

/// The subscription that makes Kraken send the list.
pub const SUBSCRIBE: &str =
    r#"{"method":"subscribe","params":{"channel":"instrument","snapshot":true}}"#;

#[derive(Deserialize)]
struct Message<'a> {
    channel: Option<&'a str>,
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    method: Option<&'a str>,
    success: Option<bool>,
    error: Option<String>,
    /// Read once the message is known to be the snapshot: other
    /// channels' `data` have other shapes.
    #[serde(borrow)]
    data: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(borrow, default)]
    pairs: Vec<Pair<'a>>,
}

#[derive(Deserialize)]
struct Pair<'a> {
    symbol: String,
    #[serde(default)]
    status: String,
    #[serde(borrow)]
    price_increment: Option<&'a RawValue>,
    #[serde(borrow)]
    qty_increment: Option<&'a RawValue>,
    price_precision: Option<u8>,
    qty_precision: Option<u8>,
}

/// One message of the connection: `Some` list for the `instrument`
/// snapshot, `None` for any other message (the acknowledgement, a
/// heartbeat, the `status` channel), an error for a refused subscription.
pub fn parse_message(text: &str) -> Result<Option<Vec<Listed>>, ListingError> {
    let m: Message<'_> = serde_json::from_str(text)?;
    if m.method == Some("subscribe") && m.success == Some(false) {
        return Err(ListingError::Refused(m.error.unwrap_or_default()));
    }
    if m.channel != Some("instrument") || m.kind != Some("snapshot") {
        return Ok(None);
    }
    let data = m
        .data
        .ok_or_else(|| ListingError::Shape("an `instrument` snapshot without `data`".into()))?;
    let data: Data<'_> = serde_json::from_str(data.get())?;
    Ok(Some(
        data.pairs
            .iter()
            .map(|p| {
                let mut l = Listed::new(
                    &p.symbol,
                    &p.status,
                    p.status == "online",
                    p.price_increment.map(|r| r.get()),
                    p.qty_increment.map(|r| r.get()),
                );
                // The venue's own precisions, where given, are the
                // decimals its messages carry.
                l.price_decimals = p.price_precision.or(l.price_decimals);
                l.size_decimals = p.qty_precision.or(l.size_decimals);
                l
            })
            .collect(),
    ))
}
