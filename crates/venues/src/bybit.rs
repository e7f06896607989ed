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
    /// `publicTrade`: one or more trades.
    Trades(Trades<'t, 'i>),
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
    /// Trade id (`i`): a UUID on linear and spot, digits on some markets.
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
            let data: Array<'t, 'i> = field(&doc, "data")?
                .as_array()
                .ok_or(DecodeError::Type("data"))?;
            Ok(Message::Trades(Trades { symbol, data }))
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
            let Message::Trades(t) = decode(doc).unwrap() else {
                panic!()
            };
            assert_eq!((t.symbol, t.len()), ("BTCUSDT", 1));
            let all: Vec<_> = t.iter().map(Result::unwrap).collect();
            assert_eq!(
                all,
                [Trade {
                    symbol: "BTCUSDT",
                    side: "Buy",
                    price: "16578.50",
                    size: "0.001",
                    time_ms: 1672304486865,
                    id: "20f43950-d8dd-5b31-9112-a178eb6023af",
                }]
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

use crate::adapter::{Instruments, Outcome, ms_to_ns, taker};
use crate::event::{Event, InstrumentSpec};
use crate::json::JsonParser;

/// Bybit v5 messages in, normalised [`Event`]s out, for one connection's
/// instruments (`s`, `BTCUSDT`): `publicTrade` as trades, `orderbook.N`
/// kept in step (`u` +1 per message; a snapshot replaces the book).
///
/// A book that breaks emits `Gap` then `Resync`: its owner resubscribes
/// the topic, and the snapshot that follows makes it valid again.
pub struct Adapter {
    parser: JsonParser,
    instruments: Instruments,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            parser: JsonParser::new(64 * 1024),
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::Bybit,
                crate::plan::bybit::book_shape,
            ),
        }
    }

    /// Decodes one message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes, and
    /// emits its events. Replies (`subscribe`, `pong`) are control
    /// messages.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let instruments = &mut self.instruments;
        self.parser.parse(buf, len, |doc| match decode(doc)? {
            Message::Reply { .. } => Ok(Outcome::Control),
            Message::Other(_) => Ok(Outcome::Ignored),
            Message::Trades(trades) => {
                let mut outcome = Outcome::Ignored;
                for trade in trades.iter() {
                    let t = trade?;
                    let id = t.id.parse().unwrap_or(0);
                    let (ns, side) = (ms_to_ns(t.time_ms), taker(t.side));
                    if instruments.trade(t.symbol, t.price, t.size, side, id, ns, recv_tsc, emit)? {
                        outcome = Outcome::Data;
                    }
                }
                Ok(outcome)
            }
            Message::Book(book) => instruments.book_message(
                book.symbol,
                ms_to_ns(book.ts_ms),
                recv_tsc,
                emit,
                |sync, ps, ss, emit| feed_book(sync, &book, ps, ss, &mut { emit }),
            ),
        })?
    }

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.instruments.disconnect(recv_tsc, emit);
    }
}
crate::adapter::venue_adapter!(Adapter);

#[cfg(test)]
mod adapter_tests {
    use super::*;
    use crate::event::{Aggressor, Kind};
    use crate::json::INPUT_PADDING;
    use crate::sync::Resync;

    fn feed(a: &mut Adapter, text: &str) -> Vec<Kind> {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        let mut events = Vec::new();
        a.on_message(&mut buf, text.len(), 5, &mut |e| events.push(e.kind))
            .unwrap();
        events
    }

    // Shapes as Bybit v5 documents them ("Orderbook", "Trade"); values ours.
    #[test]
    fn snapshot_deltas_a_gap_and_a_new_snapshot() {
        let mut a = Adapter::new(&[InstrumentSpec::new("BTCUSDT", 2, 3, 50)]);
        let ev = feed(
            &mut a,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":1672304484978,"data":{"s":"BTCUSDT","b":[["16493.50","0.006"]],"a":[["16611.00","0.029"]],"u":18521288,"seq":7961638724},"cts":1672304484976}"#,
        );
        assert_eq!(ev.len(), 4, "{ev:?}");
        let ev = feed(
            &mut a,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1672304484979,"data":{"s":"BTCUSDT","b":[["16493.50","0"],["16493.00","1.5"]],"a":[],"u":18521289,"seq":7961638725},"cts":1672304484977}"#,
        );
        assert_eq!(
            ev,
            [
                Kind::BookDelta {
                    side: Side::Bid,
                    price: 1_649_350,
                    size: 0,
                    update_id: 18521289,
                    last: false
                },
                Kind::BookDelta {
                    side: Side::Bid,
                    price: 1_649_300,
                    size: 1_500,
                    update_id: 18521289,
                    last: true
                }
            ]
        );
        let ev = feed(
            &mut a,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1672304484990,"data":{"s":"BTCUSDT","b":[],"a":[],"u":18521291,"seq":7961638730},"cts":1672304484988}"#,
        );
        assert_eq!(
            ev,
            [
                Kind::Gap {
                    why: Resync::Sequence {
                        expected: 18521290,
                        got: 18521291
                    }
                },
                Kind::Resync
            ]
        );
        // A service restart's snapshot (`u` back at 1) makes it valid again.
        let ev = feed(
            &mut a,
            r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":1672304485000,"data":{"s":"BTCUSDT","b":[["16490.00","1"]],"a":[["16600.00","1"]],"u":1,"seq":7961638800},"cts":1672304484999}"#,
        );
        assert_eq!(ev.last(), Some(&Kind::BookValid { update_id: 1 }));
        let ev = feed(
            &mut a,
            r#"{"topic":"publicTrade.BTCUSDT","type":"snapshot","ts":1672304486868,"data":[{"T":1672304486865,"s":"BTCUSDT","S":"Sell","v":"0.001","p":"16578.50","L":"PlusTick","i":"20f43950-d8dd-5b31-9112-a178eb6023af","BT":false}]}"#,
        );
        assert_eq!(
            ev,
            [Kind::Trade {
                price: 1_657_850,
                size: 1,
                aggressor: Aggressor::Sell,
                trade_id: 0
            }]
        );
    }
}
