//! Bybit v5's public messages read from simd-json's tape: order books
//! (snapshot and delta), trades, and the replies to requests.

use crate::error::DecodeError;
use crate::json::{Levels, field};
use simd_json::prelude::*;
use simd_json::tape::{Array, Value};

/// One decoded Bybit v5 message.
#[derive(Debug)]
pub enum Message<'t, 'i> {
    /// An order book snapshot or delta.
    Book(BookData<'t, 'i>),
    /// `publicTrade`: one or more trades.
    Trades(Trades<'t, 'i>),
    /// A reply to an operation (`subscribe`, `unsubscribe`, `ping`),
    /// successful or not.
    Reply {
        /// `success` (true for a reply without one, such as the
        /// `{"op":"pong","args":[..]}` of Bybit's option and private
        /// streams).
        success: bool,
        /// `op`: the operation answered (`subscribe`, `ping`, `pong`), or
        /// empty.
        op: &'i str,
        /// `ret_msg`: the venue's words (`"subscribe"`, `""`, `"pong"`, or
        /// why a request was refused), or empty.
        ret_msg: &'i str,
        /// `ret_code`, where a reply carries one, else 0 (Bybit's REST
        /// replies do; none of the WebSocket replies recorded in
        /// `shared/samples/bybit`, nor the refusals quoted here, has one).
        code: i64,
    },
    /// A topic this adapter does not decode (its name).
    Other(&'i str),
}

/// A book message.
#[derive(Clone, Copy, Debug)]
pub struct BookData<'t, 'i> {
    /// The symbol (`s`).
    pub symbol: &'i str,
    /// The topic's depth (`orderbook.50.X`: 50); 0 if the topic names none.
    pub depth: usize,
    /// Snapshot (replaces the book) or delta.
    pub snapshot: bool,
    /// Bids (`b`): `[price, size]`, size 0 removes.
    pub bids: Levels<'t, 'i>,
    /// Asks (`a`).
    pub asks: Levels<'t, 'i>,
    /// The update id (`u`), +1 per message per topic.
    pub update_id: u64,
    /// The cross sequence (`seq`), comparable across topics.
    pub seq: Option<u64>,
    /// The system's time (`ts`), ms since the Unix epoch.
    pub ts_ms: u64,
}

/// The trades of a `publicTrade` message (each `{T, s, S, v, p, L, i, BT}`).
#[derive(Clone, Copy)]
pub struct Trades<'t, 'i> {
    /// The topic's symbol.
    pub symbol: &'i str,
    data: Array<'t, 'i>,
}

impl std::fmt::Debug for Trades<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One public trade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade<'i> {
    /// The symbol (`s`).
    pub symbol: &'i str,
    /// The taker's side (`S`): `Buy` or `Sell`.
    pub side: &'i str,
    /// Price (`p`), as sent.
    pub price: &'i str,
    /// Size (`v`), as sent.
    pub size: &'i str,
    /// Trade time (`T`), ms since the Unix epoch.
    pub time_ms: u64,
    /// Trade id (`i`): digits on spot (`"2290000001202469355"`), a UUID
    /// on linear and inverse.
    pub id: &'i str,
}

impl<'t, 'i> Trades<'t, 'i> {
    /// How many.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.data.len() == 0
    }

    /// Each trade.
    pub fn iter(&self) -> impl Iterator<Item = Result<Trade<'i>, DecodeError>> + use<'t, 'i> {
        let data = self.data;
        data.iter().map(|t| {
            let s = |key: &'static str| field(&t, key)?.into_string().ok_or(DecodeError::Type(key));
            Ok(Trade {
                symbol: s("s")?,
                side: s("S")?,
                price: s("p")?,
                size: s("v")?,
                time_ms: field(&t, "T")?.as_u64().ok_or(DecodeError::Type("T"))?,
                id: s("i")?,
            })
        })
    }
}

/// Decodes a parsed Bybit v5 message. Keys are looked up by name: Bybit's
/// key order differs between spot and futures and has changed over time
/// (the "Orderbook" page: `ts` before `type` on spot and futures level 1,
/// after it on other futures depths).
pub fn decode<'t, 'i>(doc: Value<'t, 'i>) -> Result<Message<'t, 'i>, DecodeError> {
    if !doc.is_object() {
        return Err(DecodeError::Type("message"));
    }
    let text = |key: &'static str| doc.get(key).and_then(|v| v.into_string()).unwrap_or("");
    let code = || doc.get("ret_code").and_then(|c| c.as_i64()).unwrap_or(0);
    if let Some(success) = doc.get("success") {
        return Ok(Message::Reply {
            success: success.as_bool().ok_or(DecodeError::Type("success"))?,
            op: text("op"),
            ret_msg: text("ret_msg"),
            code: code(),
        });
    }
    let Some(topic) = doc.get("topic") else {
        // The option and private streams answer a ping with
        // `{"op":"pong","args":["<ms>"],..}`, no `success` ("Connect").
        if doc.get("op").is_some() {
            return Ok(Message::Reply {
                success: true,
                op: text("op"),
                ret_msg: "",
                code: code(),
            });
        }
        return Err(DecodeError::Missing("topic"));
    };
    let topic = topic.into_string().ok_or(DecodeError::Type("topic"))?;
    let (kind, rest) = topic.split_once('.').unwrap_or((topic, ""));
    let symbol = rest.rsplit('.').next().unwrap_or(rest);
    match kind {
        "orderbook" => {
            let data = field(&doc, "data")?;
            let levels = |key: &'static str| {
                field(&data, key)?
                    .as_array()
                    .map(Levels::tape)
                    .ok_or(DecodeError::Type(key))
            };
            let snapshot = match field(&doc, "type")?.into_string() {
                Some("snapshot") => true,
                Some("delta") => false,
                _ => return Err(DecodeError::Type("type")),
            };
            let depth = rest
                .split_once('.')
                .and_then(|(d, _)| d.parse().ok())
                .unwrap_or(0);
            Ok(Message::Book(BookData {
                symbol: field(&data, "s")?
                    .into_string()
                    .ok_or(DecodeError::Type("s"))?,
                depth,
                snapshot,
                bids: levels("b")?,
                asks: levels("a")?,
                update_id: field(&data, "u")?.as_u64().ok_or(DecodeError::Type("u"))?,
                seq: data.get("seq").and_then(|v| v.as_u64()),
                ts_ms: field(&doc, "ts")?.as_u64().ok_or(DecodeError::Type("ts"))?,
            }))
        }
        "publicTrade" => {
            let data: Array<'t, 'i> = field(&doc, "data")?
                .as_array()
                .ok_or(DecodeError::Type("data"))?;
            Ok(Message::Trades(Trades { symbol, data }))
        }
        other => Ok(Message::Other(other)),
    }
}
