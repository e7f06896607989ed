//! Bybit v5 public streams: `orderbook.{depth}.{symbol}` (snapshot and
//! delta, `u` continuity), `publicTrade.{symbol}`, and the operation
//! replies.

use simd_json::prelude::*;
use simd_json::tape::{Array, Value};

use crate::book::Side;
use crate::error::DecodeError;
use crate::json::Levels;
use crate::sync::{BookSync, Seq, SyncEvent};

/// One decoded Bybit v5 message.
#[derive(Debug)]
pub enum Message<'t, 'i> {
    /// An order book snapshot or delta.
    Book(BookData<'t, 'i>),
    /// `publicTrade`: how many trades (each `{T, s, S, v, p, L, i, BT}`).
    Trades {
        /// The topic's symbol.
        symbol: &'i str,
        /// How many.
        count: usize,
    },
    /// A reply to an operation (`subscribe`, `ping`, ...), successful or not.
    Reply {
        /// `success`.
        success: bool,
    },
    /// A topic this adapter does not decode (its name).
    Other(&'i str),
}

/// A book message.
#[derive(Clone, Copy, Debug)]
pub struct BookData<'t, 'i> {
    /// The symbol (`s`).
    pub symbol: &'i str,
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

use crate::json::field;

/// Decodes a parsed Bybit v5 message.
pub fn decode<'t, 'i>(doc: Value<'t, 'i>) -> Result<Message<'t, 'i>, DecodeError> {
    if !doc.is_object() {
        return Err(DecodeError::Type("message"));
    }
    if let Some(success) = doc.get("success") {
        return Ok(Message::Reply {
            success: success.as_bool().ok_or(DecodeError::Type("success"))?,
        });
    }
    let topic = field(&doc, "topic")?
        .into_string()
        .ok_or(DecodeError::Type("topic"))?;
    let (kind, symbol) = topic.split_once('.').unwrap_or((topic, ""));
    let symbol = symbol.rsplit('.').next().unwrap_or(symbol);
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
            Ok(Message::Book(BookData {
                symbol: field(&data, "s")?
                    .into_string()
                    .ok_or(DecodeError::Type("s"))?,
                snapshot,
                bids: levels("b")?,
                asks: levels("a")?,
                update_id: field(&data, "u")?.as_u64().ok_or(DecodeError::Type("u"))?,
                seq: data.get("seq").and_then(|v| v.as_u64()),
                ts_ms: field(&doc, "ts")?.as_u64().ok_or(DecodeError::Type("ts"))?,
            }))
        }
        "publicTrade" => {
            let trades: Array<'t, 'i> = field(&doc, "data")?
                .as_array()
                .ok_or(DecodeError::Type("data"))?;
            Ok(Message::Trades {
                symbol,
                count: trades.len(),
            })
        }
        other => Ok(Message::Other(other)),
    }
}

/// Feeds a book message into `sync` (chain [`Chain::Bybit`](crate::sync::Chain::Bybit)).
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_, '_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<(), DecodeError> {
    let levels = book
        .bids
        .scaled(Side::Bid, price_scale, size_scale)
        .chain(book.asks.scaled(Side::Ask, price_scale, size_scale));
    if book.snapshot {
        sync.on_snapshot(book.update_id, levels, emit)
    } else {
        let seq = Seq {
            first: book.update_id,
            last: book.update_id,
            prev: None,
        };
        sync.on_diff(seq, levels, emit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Chain, Resync, SyncConfig};

    fn feed(sync: &mut BookSync, text: &str, events: &mut Vec<SyncEvent>) {
        crate::json::with_doc(text, |doc| {
            let Message::Book(b) = decode(doc).unwrap() else {
                panic!("not a book message")
            };
            feed_book(sync, &b, 2, 3, &mut |e| events.push(e)).unwrap();
        });
    }

    // Shapes from Bybit's v5 documentation ("Orderbook", "Trade"); values ours.

    #[test]
    fn snapshot_deltas_gap_and_restart() {
        let mut sync = BookSync::new(Chain::Bybit, SyncConfig::default());
        let mut ev = Vec::new();
        feed(
            &mut sync,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":1672304484978,"data":{"s":"BTCUSDT","b":[["16493.50","0.006"],["16493.00","0.100"]],"a":[["16611.00","0.029"]],"u":18521288,"seq":7961638724},"cts":1672304484976}"#,
            &mut ev,
        );
        feed(
            &mut sync,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1672304484979,"data":{"s":"BTCUSDT","b":[["16493.50","0"]],"a":[],"u":18521289,"seq":7961638725},"cts":1672304484977}"#,
            &mut ev,
        );
        assert_eq!(
            ev,
            [
                SyncEvent::Valid {
                    update_id: 18521288
                },
                SyncEvent::Updated {
                    update_id: 18521289
                }
            ]
        );
        assert_eq!(sync.book().unwrap().top().unwrap().0.price, 1_649_300);
        feed(
            &mut sync,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1,"data":{"s":"BTCUSDT","b":[],"a":[],"u":18521291,"seq":1},"cts":1}"#,
            &mut ev,
        );
        assert_eq!(
            ev[2],
            SyncEvent::Gap(Resync::Sequence {
                expected: 18521290,
                got: 18521291
            })
        );
        // After a service restart Bybit sends a new snapshot with u = 1.
        feed(
            &mut sync,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":2,"data":{"s":"BTCUSDT","b":[["16000.00","1"]],"a":[["16001.00","1"]],"u":1,"seq":2},"cts":2}"#,
            &mut ev,
        );
        assert_eq!(ev.last(), Some(&SyncEvent::Valid { update_id: 1 }));
        assert_eq!(sync.book().unwrap().levels(Side::Bid).len(), 1);
    }

    #[test]
    fn trades_and_replies() {
        let trade = r#"{"topic":"publicTrade.BTCUSDT","type":"snapshot","ts":1672304486868,"data":[{"T":1672304486865,"s":"BTCUSDT","S":"Buy","v":"0.001","p":"16578.50","L":"PlusTick","i":"20f43950-d8dd-5b31-9112-a178eb6023af","BT":false}]}"#;
        crate::json::with_doc(trade, |doc| {
            let m = decode(doc).unwrap();
            assert!(
                matches!(
                    m,
                    Message::Trades {
                        symbol: "BTCUSDT",
                        count: 1
                    }
                ),
                "{m:?}"
            );
        });
        let reply =
            r#"{"success":true,"ret_msg":"subscribe","conn_id":"2324d924","op":"subscribe"}"#;
        crate::json::with_doc(reply, |doc| {
            assert!(matches!(
                decode(doc).unwrap(),
                Message::Reply { success: true }
            ));
        });
    }
}
