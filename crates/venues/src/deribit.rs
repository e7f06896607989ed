//! Deribit JSON-RPC subscriptions: `book.{instrument}.{interval}` (snapshot
//! then changes, `change_id` / `prev_change_id`), `trades.*`, heartbeats and
//! replies.
//!
//! Deribit sends prices and amounts as JSON numbers. Their text is their
//! exact value, and a float is not, so this adapter reads the message with
//! the one-pass scanner in its any-number mode (never simd-json, whose tape
//! keeps only the float) and parses the number text with
//! [`crate::decimal`].

use crate::book::{Level, Side};
use crate::error::DecodeError;
use crate::scan::{self, Cursor, Numbers, Val};
use crate::sync::{BookSync, LevelResult, Seq, SyncEvent};

/// One decoded Deribit message.
#[derive(Debug)]
pub enum Message<'i> {
    /// A `book.*` notification.
    Book(BookData<'i>),
    /// A `trades.*` notification.
    Trades {
        /// The channel.
        channel: &'i str,
        /// How many.
        count: usize,
        /// The trades.
        trades: Trades<'i>,
    },
    /// A reply to a request (`result` or `error`).
    Reply,
    /// `heartbeat` / `test_request`: a `test_request` must be answered with
    /// `public/test`.
    Heartbeat {
        /// Whether Deribit asked for an answer.
        test_request: bool,
    },
    /// Another subscription channel (its name).
    Other(&'i str),
}

/// A book notification.
#[derive(Clone, Copy, Debug)]
pub struct BookData<'i> {
    /// The instrument (`BTC-24SEP21-8000-P`).
    pub instrument: &'i str,
    /// The first notification (the whole book) or a change.
    pub snapshot: bool,
    /// `change_id`.
    pub change_id: u64,
    /// `prev_change_id` (changes only).
    pub prev_change_id: Option<u64>,
    /// `timestamp`, ms since the Unix epoch.
    pub timestamp_ms: u64,
    bids: &'i str,
    asks: &'i str,
}

/// One level change: `["new"|"change"|"delete", price, amount]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelChange<'i> {
    /// `new`, `change` or `delete`.
    pub action: &'i str,
    /// The price's text, as sent.
    pub price: &'i str,
    /// The amount's text, as sent (`delete` sends 0).
    pub amount: &'i str,
}

impl<'i> BookData<'i> {
    /// The changes to one side.
    pub fn levels(
        &self,
        side: Side,
    ) -> impl Iterator<Item = Result<LevelChange<'i>, DecodeError>> + use<'i> {
        let mut outer = Cursor::new(
            match side {
                Side::Bid => self.bids,
                Side::Ask => self.asks,
            },
            Numbers::Any,
        );
        std::iter::from_fn(move || {
            let v = outer.next_val()?;
            let Val::Array(level) = v else {
                return Some(Err(DecodeError::Type("price level")));
            };
            let mut c = Cursor::new(level, Numbers::Any);
            Some(match (c.next_val(), c.next_val(), c.next_val()) {
                (Some(Val::Str(action)), Some(Val::Num(price)), Some(Val::Num(amount))) => {
                    Ok(LevelChange {
                        action,
                        price,
                        amount,
                    })
                }
                _ => Err(DecodeError::Type("price level")),
            })
        })
    }
}

/// The trades of a `trades.*` notification.
#[derive(Clone, Copy, Debug)]
pub struct Trades<'i> {
    data: &'i str,
}

/// One trade; numbers as their JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade<'i> {
    /// `instrument_name`.
    pub instrument: &'i str,
    /// `price`.
    pub price: &'i str,
    /// `amount` (contracts for futures, base currency for options).
    pub amount: &'i str,
    /// `direction`: the taker's side, `buy` or `sell`.
    pub direction: &'i str,
    /// `timestamp`, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// `trade_id`, as sent (a string).
    pub trade_id: &'i str,
}

impl<'i> Trades<'i> {
    /// Each trade.
    pub fn iter(&self) -> impl Iterator<Item = Result<Trade<'i>, DecodeError>> + use<'i> {
        let mut c = Cursor::new(self.data, Numbers::Any);
        std::iter::from_fn(move || {
            let Val::Object(t) = c.next_val()? else {
                return Some(Err(bad("trade")));
            };
            let (mut instrument, mut price, mut amount, mut direction, mut ts, mut id) =
                (None, None, None, None, None, None);
            let read = scan::object(t, Numbers::Any, |k, v| match (k, v) {
                ("instrument_name", Val::Str(x)) => instrument = Some(x),
                ("price", Val::Num(x)) => price = Some(x),
                ("amount", Val::Num(x)) => amount = Some(x),
                ("direction", Val::Str(x)) => direction = Some(x),
                ("timestamp", v) => ts = v.as_u64(),
                ("trade_id", Val::Str(x)) => id = Some(x),
                _ => {}
            });
            Some(match (read, instrument, price, amount, direction, ts, id) {
                (
                    Some(()),
                    Some(instrument),
                    Some(price),
                    Some(amount),
                    Some(direction),
                    Some(timestamp_ms),
                    Some(trade_id),
                ) => Ok(Trade {
                    instrument,
                    price,
                    amount,
                    direction,
                    timestamp_ms,
                    trade_id,
                }),
                _ => Err(bad("trade")),
            })
        })
    }
}

fn bad(what: &'static str) -> DecodeError {
    DecodeError::Type(what)
}

/// Decodes one message (its text; nothing is written to it).
pub fn decode(text: &str) -> Result<Message<'_>, DecodeError> {
    let mut method = None;
    let mut params = None;
    let mut reply = false;
    scan::object(text, Numbers::Any, |k, v| match k {
        "method" => method = Some(v),
        "params" => params = Some(v),
        "result" | "error" => reply = true,
        _ => {}
    })
    .ok_or(bad("message"))?;
    let method = match method {
        None if reply => return Ok(Message::Reply),
        None => return Err(DecodeError::Missing("method")),
        Some(Val::Str(m)) => m,
        Some(_) => return Err(bad("method")),
    };
    let Some(Val::Object(params)) = params else {
        return Err(DecodeError::Missing("params"));
    };
    let (mut channel, mut data, mut kind) = (None, None, None);
    scan::object(params, Numbers::Any, |k, v| match k {
        "channel" => channel = Some(v),
        "data" => data = Some(v),
        "type" => kind = Some(v),
        _ => {}
    })
    .ok_or(bad("params"))?;
    if method == "heartbeat" {
        return Ok(Message::Heartbeat {
            test_request: kind == Some(Val::Str("test_request")),
        });
    }
    let Some(Val::Str(channel)) = channel else {
        return Err(DecodeError::Missing("channel"));
    };
    let data = data.ok_or(DecodeError::Missing("data"))?;
    if !scan::valid(data, Numbers::Any, 0) {
        return Err(bad("data"));
    }
    match channel.split('.').next() {
        Some("book") => {
            let Val::Object(data) = data else {
                return Err(bad("data"));
            };
            let mut f: [Option<Val<'_>>; 7] = [None; 7];
            const KEYS: [&str; 7] = [
                "type",
                "instrument_name",
                "change_id",
                "prev_change_id",
                "timestamp",
                "bids",
                "asks",
            ];
            scan::object(data, Numbers::Any, |k, v| {
                if let Some(i) = KEYS.iter().position(|&key| key == k) {
                    f[i].get_or_insert(v);
                }
            })
            .ok_or(bad("data"))?;
            let id = |v: Option<Val<'_>>, key: &'static str| {
                v.ok_or(DecodeError::Missing(key))?.as_u64().ok_or(bad(key))
            };
            fn array<'i>(v: Option<Val<'i>>, key: &'static str) -> Result<&'i str, DecodeError> {
                match v {
                    Some(Val::Array(a)) => Ok(a),
                    Some(_) => Err(bad(key)),
                    None => Err(DecodeError::Missing(key)),
                }
            }
            Ok(Message::Book(BookData {
                snapshot: match f[0] {
                    Some(Val::Str("snapshot")) => true,
                    Some(Val::Str("change")) => false,
                    _ => return Err(bad("type")),
                },
                instrument: match f[1] {
                    Some(Val::Str(s)) => s,
                    _ => return Err(bad("instrument_name")),
                },
                change_id: id(f[2], "change_id")?,
                prev_change_id: f[3].map(|v| id(Some(v), "prev_change_id")).transpose()?,
                timestamp_ms: id(f[4], "timestamp")?,
                bids: array(f[5], "bids")?,
                asks: array(f[6], "asks")?,
            }))
        }
        Some("trades") => {
            let Val::Array(trades) = data else {
                return Err(bad("data"));
            };
            let mut c = Cursor::new(trades, Numbers::Any);
            let mut count = 0;
            while c.next_val().is_some() {
                count += 1;
            }
            Ok(Message::Trades {
                channel,
                count,
                trades: Trades { data: trades },
            })
        }
        _ => Ok(Message::Other(channel)),
    }
}

/// A book notification's levels, bids then asks, at the scales.
fn scaled<'i>(
    book: &BookData<'i>,
    price_scale: u8,
    size_scale: u8,
) -> impl Iterator<Item = LevelResult> + use<'i> {
    let scale = move |side: Side| {
        move |change: Result<LevelChange<'_>, DecodeError>| -> LevelResult {
            let c = change?;
            let mut level: Level =
                crate::decimal::level(c.price, c.amount, price_scale, size_scale)?;
            match c.action {
                "delete" => level.size = 0,
                "new" | "change" => {}
                _ => return Err(bad("action")),
            }
            Ok((side, level))
        }
    };
    book.levels(Side::Bid)
        .map(scale(Side::Bid))
        .chain(book.levels(Side::Ask).map(scale(Side::Ask)))
}

/// Feeds a book notification into `sync` (chain
/// [`Chain::Deribit`](crate::sync::Chain::Deribit)).
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<(), DecodeError> {
    let levels = scaled(book, price_scale, size_scale);
    if book.snapshot {
        sync.on_snapshot(book.change_id, levels, emit)
    } else {
        let seq = Seq {
            first: book.change_id,
            last: book.change_id,
            prev: book.prev_change_id,
        };
        sync.on_diff(seq, levels, emit)
    }
}

use crate::adapter::{Instruments, Outcome, ms_to_ns, taker};
use crate::event::{Event, InstrumentSpec};

/// What to send when Deribit's heartbeat asks (`test_request`).
pub const TEST_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"method":"public/test","params":{}}"#;

/// Deribit messages in, normalised [`Event`]s out, for one connection's
/// instruments (`BTC-PERPETUAL`): `trades.*` as trades, `book.*` kept in
/// step (`change_id` chain). A `test_request` heartbeat comes back as
/// [`Outcome::Answer`] with [`TEST_ANSWER`], which must be sent at once.
///
/// A book that breaks emits `Gap` then `Resync`: resubscribe it.
pub struct Adapter {
    instruments: Instruments,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::Deribit,
                crate::plan::deribit::book_shape,
            ),
        }
    }

    /// Decodes one message, `buf[..len]` (read in place with the scanner:
    /// no padding needed), and emits its events.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let text = crate::adapter::text(buf, len)?;
        let instruments = &mut self.instruments;
        match decode(text)? {
            Message::Reply
            | Message::Heartbeat {
                test_request: false,
            } => Ok(Outcome::Control),
            Message::Heartbeat { test_request: true } => Ok(Outcome::Answer(TEST_ANSWER)),
            Message::Other(_) => Ok(Outcome::Ignored),
            Message::Trades { trades, .. } => {
                let mut outcome = Outcome::Ignored;
                for trade in trades.iter() {
                    let t = trade?;
                    let (ns, side) = (ms_to_ns(t.timestamp_ms), taker(t.direction));
                    let id = t.trade_id.parse().unwrap_or(0);
                    if instruments.trade(
                        t.instrument,
                        t.price,
                        t.amount,
                        side,
                        id,
                        ns,
                        recv_tsc,
                        emit,
                    )? {
                        outcome = Outcome::Data;
                    }
                }
                Ok(outcome)
            }
            Message::Book(book) => instruments.book_message(
                book.instrument,
                ms_to_ns(book.timestamp_ms),
                recv_tsc,
                emit,
                |sync, ps, ss, emit| feed_book(sync, &book, ps, ss, &mut { emit }),
            ),
        }
    }

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.instruments.disconnect(recv_tsc, emit);
    }
}

crate::adapter::venue_adapter!(Adapter);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Chain, Resync, SyncConfig};

    // Shapes from Deribit's API documentation ("book.{instrument_name}.
    // {interval}", "heartbeat"); values ours.

    #[test]
    fn snapshot_changes_and_a_gap() {
        let mut sync = BookSync::new(Chain::Deribit, SyncConfig::default());
        let mut ev = Vec::new();
        fn feed(sync: &mut BookSync, text: &str, ev: &mut Vec<SyncEvent>) {
            let Message::Book(b) = decode(text).unwrap() else {
                panic!()
            };
            feed_book(sync, &b, 4, 1, &mut |e| ev.push(e)).unwrap();
        }
        feed(
            &mut sync,
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"snapshot","timestamp":1554373962454,"instrument_name":"BTC-PERPETUAL","change_id":297217,"bids":[["new",5042.34,30.0],["new",5041.94,20.0]],"asks":[["new",5042.64,40.0]]}}}"#,
            &mut ev,
        );
        feed(
            &mut sync,
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"change","timestamp":1554373911330,"prev_change_id":297217,"instrument_name":"BTC-PERPETUAL","change_id":297218,"bids":[["delete",5042.34,0.0]],"asks":[["change",5042.64,10.5]]}}}"#,
            &mut ev,
        );
        assert_eq!(
            ev,
            [
                SyncEvent::Valid { update_id: 297217 },
                SyncEvent::Updated { update_id: 297218 }
            ]
        );
        let book = sync.book().unwrap();
        let (bid, ask) = book.top().unwrap();
        assert_eq!(
            (bid.price, ask.price, ask.size),
            (50_419_400, 50_426_400, 105)
        );
        feed(
            &mut sync,
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"change","timestamp":1,"prev_change_id":297220,"instrument_name":"BTC-PERPETUAL","change_id":297221,"bids":[],"asks":[]}}}"#,
            &mut ev,
        );
        assert_eq!(
            ev[2],
            SyncEvent::Gap(Resync::Sequence {
                expected: 297218,
                got: 297220
            })
        );
    }

    #[test]
    fn prices_are_exact_from_the_number_text() {
        // 0.1 + 0.2 style values a float would not keep.
        let text = r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.X.raw","data":{"type":"snapshot","timestamp":1,"instrument_name":"X","change_id":1,"bids":[["new",0.30000000000000004,1e2]],"asks":[]}}}"#;
        let Message::Book(b) = decode(text).unwrap() else {
            panic!()
        };
        let level = b.levels(Side::Bid).next().unwrap().unwrap();
        assert_eq!((level.price, level.amount), ("0.30000000000000004", "1e2"));
        // An exponent is not a plain decimal: a typed error, not a guess.
        let mut sync = BookSync::new(Chain::Deribit, SyncConfig::default());
        assert!(feed_book(&mut sync, &b, 17, 0, &mut |_| {}).is_err());
    }

    #[test]
    fn heartbeats_replies_trades_and_garbage() {
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#)
                .unwrap(),
            Message::Heartbeat { test_request: true }
        ));
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","id":1,"result":["book.X.raw"]}"#).unwrap(),
            Message::Reply
        ));
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.raw","data":[{"price":5040.5,"amount":10.0},{"price":5041.0,"amount":1.0}]}}"#).unwrap(),
            Message::Trades { count: 2, .. }
        ));
        for bad in [
            "",
            "[]",
            r#"{"method":1}"#,
            r#"{"method":"subscription","params":{"channel":"book.X","data":{"type":"snapshot"}}}"#,
        ] {
            assert!(decode(bad).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod adapter_tests {
    use super::*;
    use crate::event::{Aggressor, Kind};

    #[test]
    fn trades_books_and_the_heartbeat_answer() {
        let mut a = Adapter::new(&[InstrumentSpec::new("BTC-PERPETUAL", 2, 1, 100)]);
        let mut feed = |text: &str| {
            let mut buf = text.as_bytes().to_vec();
            let mut ev = Vec::new();
            let r = a.on_message(&mut buf, text.len(), 3, &mut |e| ev.push(e));
            (r, ev)
        };
        // Shapes from Deribit's documentation ("trades.{instrument_name}.
        // {interval}", "heartbeat"); values ours.
        let (r, ev) = feed(
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.raw","data":[{"trade_seq":30289432,"trade_id":"48079254","timestamp":1590484156350,"tick_direction":0,"price":8950.5,"mark_price":8948.9,"instrument_name":"BTC-PERPETUAL","index_price":8955.88,"direction":"sell","amount":10.0}]}}"#,
        );
        assert_eq!(r, Ok(Outcome::Data));
        assert_eq!(ev[0].exchange_ns, 1_590_484_156_350_000_000);
        assert_eq!(
            ev[0].kind,
            Kind::Trade {
                price: 895_050,
                size: 100,
                aggressor: Aggressor::Sell,
                trade_id: 48079254
            }
        );
        let (r, _) =
            feed(r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#);
        assert_eq!(r, Ok(Outcome::Answer(TEST_ANSWER)));
        let (r, _) =
            feed(r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"heartbeat"}}"#);
        assert_eq!(r, Ok(Outcome::Control));
        let (_, ev) = feed(
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"snapshot","timestamp":1554373962454,"instrument_name":"BTC-PERPETUAL","change_id":297217,"bids":[["new",5042.34,30.0]],"asks":[["new",5042.64,40.0]]}}}"#,
        );
        assert_eq!(
            ev.last().map(|e| e.kind),
            Some(Kind::BookValid { update_id: 297217 })
        );
        let (_, ev) = feed(
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"change","timestamp":1554373911330,"prev_change_id":297217,"instrument_name":"BTC-PERPETUAL","change_id":297218,"bids":[["delete",5042.34,0.0]],"asks":[]}}}"#,
        );
        assert_eq!(
            ev[0].kind,
            Kind::BookDelta {
                side: Side::Bid,
                price: 504_234,
                size: 0,
                update_id: 297218,
                last: true
            }
        );
    }
}
