//! Coinbase Advanced Trade's messages read from simd-json's tape: the
//! envelope with its sequence_num, level2 and market_trades events,
//! subscriptions.

use crate::book::Side;
use crate::error::DecodeError;
use crate::event::Aggressor;
use crate::json::{field, str_field, u64_field};
use simd_json::prelude::*;
use simd_json::tape::{Array, Value};

/// One decoded message: its connection sequence number (none on an error
/// frame) and what it carries.
#[derive(Debug)]
pub struct Envelope<'t, 'i> {
    /// `sequence_num`; `None` for an error frame, which has none.
    pub sequence_num: Option<u64>,
    /// The frame's `timestamp` (the venue's send time), as sent; empty
    /// when absent.
    pub timestamp: &'i str,
    /// What it carries.
    pub message: Message<'t, 'i>,
}

/// What a message carries.
#[derive(Debug)]
pub enum Message<'t, 'i> {
    /// `l2_data`: book events (each a snapshot or an update of one product).
    Level2(Events<'t, 'i>),
    /// `market_trades`: trade events.
    Trades(Events<'t, 'i>),
    /// `heartbeats`, `subscriptions`: keep-alive and confirmations.
    Control(&'i str),
    /// `{"type":"error","message":...}`: a request was refused; the
    /// venue's words.
    Error(&'i str),
    /// Another channel (its name).
    Other(&'i str),
}

/// The `events` array of a message.
#[derive(Clone, Copy)]
pub struct Events<'t, 'i>(Array<'t, 'i>);

impl std::fmt::Debug for Events<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Events({})", self.0.len())
    }
}

/// One `level2` event.
#[derive(Clone, Copy)]
pub struct BookEvent<'t, 'i> {
    /// `snapshot` (replaces the book) or `update`.
    pub snapshot: bool,
    /// The product (`BTC-USD`).
    pub product_id: &'i str,
    updates: Array<'t, 'i>,
}

impl<'t, 'i> BookEvent<'t, 'i> {
    /// Each update: side, price level and new quantity strings. The
    /// quantity is the level's new size, not a change; `"0"` removes it
    /// ("Level2 Channel", WebSocket Channels docs). Sides are `bid` and
    /// `offer` (`ask` is read too).
    pub fn updates(
        &self,
    ) -> impl Iterator<Item = Result<(Side, &'i str, &'i str), DecodeError>> + use<'t, 'i> {
        let all = self.updates;
        all.iter().map(|u| {
            let side = match str_field(&u, "side")? {
                "bid" => Side::Bid,
                "offer" | "ask" => Side::Ask,
                _ => return Err(DecodeError::Type("side")),
            };
            Ok((
                side,
                str_field(&u, "price_level")?,
                str_field(&u, "new_quantity")?,
            ))
        })
    }
}

/// One trade of a `market_trades` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade<'i> {
    /// Coinbase's trade id.
    pub trade_id: &'i str,
    /// The product.
    pub product_id: &'i str,
    /// Price, as sent.
    pub price: &'i str,
    /// Size, as sent.
    pub size: &'i str,
    /// The maker's side, as sent (`BUY`/`SELL`); see [`aggressor`].
    pub side: &'i str,
    /// Time, RFC 3339 as sent.
    pub time: &'i str,
}

/// Who took liquidity in a `market_trades` trade of `side`.
///
/// The documentation says `side` is the maker's: "Each market trade
/// belongs to a `side`, which refers to the makers side" ("Market Trades
/// Channel", WebSocket Channels docs; the AsyncAPI page: "The maker's side
/// of the trade"), as the Exchange feed's `match` side always was. So
/// `BUY` (a resting bid was hit) is a seller taking liquidity. Peers read
/// it both ways (nautilus_trader `coinbase_side_to_aggressor` takes it as
/// the taker's side), and no public capture pairs trades with the book
/// moves that would settle it: this is the one place to change if the
/// live venue proves the documentation wrong.
pub fn aggressor(side: &str) -> Aggressor {
    match side {
        "BUY" => Aggressor::Sell,
        "SELL" => Aggressor::Buy,
        _ => Aggressor::Unknown,
    }
}

impl<'t, 'i> Events<'t, 'i> {
    /// The book events of a `level2` message.
    pub fn books(
        &self,
    ) -> impl Iterator<Item = Result<BookEvent<'t, 'i>, DecodeError>> + use<'t, 'i> {
        let all = self.0;
        all.iter().map(|e| {
            Ok(BookEvent {
                snapshot: match str_field(&e, "type")? {
                    "snapshot" => true,
                    "update" => false,
                    _ => return Err(DecodeError::Type("type")),
                },
                product_id: str_field(&e, "product_id")?,
                updates: field(&e, "updates")?
                    .as_array()
                    .ok_or(DecodeError::Type("updates"))?,
            })
        })
    }

    /// Every trade of a `market_trades` message's `update` events: the
    /// trades as they happen. A `snapshot` event's trades, the recent ones
    /// sent on subscription (newest first), are history that a feed
    /// connected before has already seen, and that a second connection
    /// (a standby, a replacement) would bring again: not read, as the
    /// Kraken adapter reads no trade snapshot (tardis-node maps only
    /// `update` trades of both).
    pub fn trades(&self) -> impl Iterator<Item = Result<Trade<'i>, DecodeError>> + use<'t, 'i> {
        let all = self.0;
        all.iter()
            .filter(|e| str_field(e, "type").ok() != Some("snapshot"))
            .flat_map(|e| {
                let trades = field(&e, "trades").ok().and_then(|t| t.as_array());
                let missing = trades
                    .is_none()
                    .then_some(Err(DecodeError::Missing("trades")));
                trades
                    .into_iter()
                    .flat_map(|t| t.iter())
                    .map(|t| {
                        Ok(Trade {
                            trade_id: str_field(&t, "trade_id")?,
                            product_id: str_field(&t, "product_id")?,
                            price: str_field(&t, "price")?,
                            size: str_field(&t, "size")?,
                            side: str_field(&t, "side")?,
                            time: str_field(&t, "time")?,
                        })
                    })
                    .chain(missing)
            })
    }
}

/// Decodes a parsed Advanced Trade message. A frame without `channel` is
/// an error frame if its `type` is `error`; `client_id` is not read (live
/// frames sometimes leave it out: tickvault and WP-090 captures).
pub fn decode<'t, 'i>(doc: Value<'t, 'i>) -> Result<Envelope<'t, 'i>, DecodeError> {
    if !doc.is_object() {
        return Err(DecodeError::Type("message"));
    }
    let Some(channel) = doc.get("channel") else {
        if str_field(&doc, "type").ok() == Some("error") {
            let text = doc.get("message").and_then(|m| m.into_string());
            return Ok(Envelope {
                sequence_num: None,
                timestamp: "",
                message: Message::Error(text.unwrap_or("")),
            });
        }
        return Err(DecodeError::Missing("channel"));
    };
    let channel = channel.into_string().ok_or(DecodeError::Type("channel"))?;
    let sequence_num = u64_field(&doc, "sequence_num")?;
    let timestamp = doc
        .get("timestamp")
        .and_then(|t| t.into_string())
        .unwrap_or("");
    let events = || {
        field(&doc, "events")?
            .as_array()
            .map(Events)
            .ok_or(DecodeError::Type("events"))
    };
    let message = match channel {
        "l2_data" => Message::Level2(events()?),
        "market_trades" => Message::Trades(events()?),
        "heartbeats" | "subscriptions" => Message::Control(channel),
        other => Message::Other(other),
    };
    Ok(Envelope {
        sequence_num: Some(sequence_num),
        timestamp,
        message,
    })
}
