//! Coinbase Advanced Trade market data: `level2` (snapshot and updates per
//! product), `market_trades`, `heartbeats`, `subscriptions`. Every message
//! carries the connection's `sequence_num`; see
//! [`ConnectionSeq`].

use simd_json::tape::{Array, Value};

use crate::book::Side;
use crate::error::DecodeError;
use crate::json::{field, str_field, u64_field};
use crate::sync::{BookSync, SyncEvent};

/// One decoded message: its channel's content and the connection sequence.
#[derive(Debug)]
pub struct Envelope<'t, 'i> {
    /// `sequence_num`.
    pub sequence_num: u64,
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
    /// Each update: side, price level and new quantity strings (quantity 0
    /// removes the level).
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
    /// The maker's side, as sent (`BUY`/`SELL`).
    pub side: &'i str,
    /// Time, RFC 3339 as sent.
    pub time: &'i str,
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

    /// Every trade of a `market_trades` message.
    pub fn trades(&self) -> impl Iterator<Item = Result<Trade<'i>, DecodeError>> + use<'t, 'i> {
        let all = self.0;
        all.iter().flat_map(|e| {
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

/// Decodes a parsed Advanced Trade message.
pub fn decode<'t, 'i>(doc: Value<'t, 'i>) -> Result<Envelope<'t, 'i>, DecodeError> {
    if !doc.is_object() {
        return Err(DecodeError::Type("message"));
    }
    let channel = str_field(&doc, "channel")?;
    let sequence_num = u64_field(&doc, "sequence_num")?;
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
        sequence_num,
        message,
    })
}

/// Feeds one `level2` event into its product's `sync` (chain
/// [`Chain::Coinbase`](crate::sync::Chain::Coinbase)).
pub fn feed_book(
    sync: &mut BookSync,
    event: &BookEvent<'_, '_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<(), DecodeError> {
    let levels = event.updates().map(move |u| {
        let (side, p, q) = u?;
        Ok((side, crate::decimal::level(p, q, price_scale, size_scale)?))
    });
    sync.on_unsequenced(event.snapshot, levels, emit)
}

use crate::adapter::{Instruments, Outcome};
use crate::event::{Aggressor, Event, InstrumentSpec};
use crate::json::JsonParser;
use crate::sync::ConnectionSeq;
use crate::time::rfc3339_ns;

/// Coinbase Advanced Trade messages in, normalised [`Event`]s out, for one
/// connection's products (`BTC-USD`): `market_trades` as trades, `level2`
/// books kept in step.
///
/// `sequence_num` counts every message of the connection: a gap in it
/// (any channel) may have lost a book message of any product, so every
/// book of the connection emits `Gap` and `Resync` (resubscribe `level2`:
/// a snapshot per product follows). Trades carry
/// [`Aggressor::Unknown`]: the documentation does not say whose side
/// `side` is.
pub struct Adapter {
    parser: JsonParser,
    instruments: Instruments,
    seq: ConnectionSeq,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            parser: JsonParser::new(64 * 1024),
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::Coinbase,
                crate::plan::coinbase::book_shape,
            ),
            seq: ConnectionSeq::default(),
        }
    }

    /// Decodes one message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes, and
    /// emits its events.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let Adapter {
            parser,
            instruments,
            seq,
        } = self;
        parser.parse(buf, len, |doc| {
            let envelope = decode(doc)?;
            if let Err(why) = seq.check(envelope.sequence_num) {
                instruments.invalidate_all(why, recv_tsc, emit);
            }
            match envelope.message {
                Message::Control(_) => Ok(Outcome::Control),
                Message::Other(_) => Ok(Outcome::Ignored),
                Message::Trades(events) => {
                    let mut outcome = Outcome::Ignored;
                    for trade in events.trades() {
                        let t = trade?;
                        let ns = rfc3339_ns(t.time).unwrap_or(0);
                        let (id, side) = (t.trade_id.parse().unwrap_or(0), Aggressor::Unknown);
                        if instruments.trade(
                            t.product_id,
                            t.price,
                            t.size,
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
                Message::Level2(events) => {
                    let mut outcome = Outcome::Ignored;
                    for event in events.books() {
                        let event = event?;
                        let done = instruments.book_message(
                            event.product_id,
                            0,
                            recv_tsc,
                            emit,
                            |sync, ps, ss, emit| feed_book(sync, &event, ps, ss, &mut { emit }),
                        )?;
                        if done == Outcome::Data {
                            outcome = done;
                        }
                    }
                    Ok(outcome)
                }
            }
        })?
    }

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid; the next connection's
    /// `sequence_num` starts a new chain.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.seq.reset();
        self.instruments.disconnect(recv_tsc, emit);
    }
}

crate::adapter::venue_adapter!(Adapter);

#[cfg(test)]
mod adapter_tests {
    use super::tests::{SNAPSHOT, TRADES, UPDATE};
    use super::*;
    use crate::event::{InstrumentId, Kind};
    use crate::json::INPUT_PADDING;
    use crate::sync::Resync;

    fn feed(a: &mut Adapter, text: &str) -> Vec<Kind> {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        let mut ev = Vec::new();
        a.on_message(&mut buf, text.len(), 1, &mut |e| ev.push(e.kind))
            .unwrap();
        ev
    }

    #[test]
    fn books_trades_and_a_connection_gap_that_resyncs_every_book() {
        let mut a = Adapter::new(&[
            InstrumentSpec::new("BTC-USD", 2, 8, 100),
            InstrumentSpec::new("ETH-USD", 2, 8, 0),
        ]);
        let ev = feed(&mut a, SNAPSHOT);
        assert_eq!(ev.len(), 4, "{ev:?}");
        let ev = feed(&mut a, UPDATE);
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert!(matches!(
            ev[1],
            Kind::BookDelta {
                last: true,
                size: 125_000_000,
                ..
            }
        ));
        let ev = feed(&mut a, TRADES);
        assert_eq!(
            ev,
            [Kind::Trade {
                price: 126_001,
                size: 30_000_000,
                aggressor: Aggressor::Unknown,
                trade_id: 0
            }]
        );
        // sequence_num jumps from 2 to 7: every book of the connection is
        // dropped, explicitly.
        let gap = UPDATE.replace("\"sequence_num\":1", "\"sequence_num\":7");
        let ev = feed(&mut a, &gap);
        assert_eq!(
            ev,
            [
                Kind::Gap {
                    why: Resync::Sequence {
                        expected: 3,
                        got: 7
                    }
                },
                Kind::Resync
            ]
        );
        assert!(a.book(InstrumentId(0)).is_none());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Chain, ConnectionSeq, Resync, SyncConfig};

    // Shapes from the Advanced Trade WebSocket documentation ("Level2
    // Channel", "Market Trades Channel"); values ours.

    pub(super) const SNAPSHOT: &str = r#"{"channel":"l2_data","client_id":"","timestamp":"2023-02-09T20:32:50.714964855Z","sequence_num":0,"events":[{"type":"snapshot","product_id":"BTC-USD","updates":[{"side":"bid","event_time":"1970-01-01T00:00:00Z","price_level":"21921.73","new_quantity":"0.06317902"},{"side":"offer","event_time":"1970-01-01T00:00:00Z","price_level":"21921.74","new_quantity":"0.5"}]}]}"#;
    pub(super) const UPDATE: &str = r#"{"channel":"l2_data","client_id":"","timestamp":"2023-02-09T20:32:50.714964855Z","sequence_num":1,"events":[{"type":"update","product_id":"BTC-USD","updates":[{"side":"bid","event_time":"2023-02-09T20:32:50.714964855Z","price_level":"21921.73","new_quantity":"0"},{"side":"bid","event_time":"2023-02-09T20:32:50.714964855Z","price_level":"21921.70","new_quantity":"1.25"}]}]}"#;
    pub(super) const TRADES: &str = r#"{"channel":"market_trades","client_id":"","timestamp":"2023-02-09T20:19:35.39625135Z","sequence_num":2,"events":[{"type":"snapshot","trades":[{"trade_id":"000000000","product_id":"ETH-USD","price":"1260.01","size":"0.3","side":"BUY","time":"2019-08-14T20:42:27.265Z"}]}]}"#;

    #[test]
    fn level2_snapshot_update_and_the_connection_sequence() {
        let mut sync = BookSync::new(Chain::Coinbase, SyncConfig::default());
        let mut seq = ConnectionSeq::default();
        let mut ev = Vec::new();
        for text in [SNAPSHOT, UPDATE] {
            crate::json::with_doc(text, |doc| {
                let env = decode(doc).unwrap();
                seq.check(env.sequence_num).unwrap();
                let Message::Level2(events) = env.message else {
                    panic!()
                };
                for e in events.books() {
                    feed_book(&mut sync, &e.unwrap(), 2, 8, &mut |x| ev.push(x)).unwrap();
                }
            });
        }
        assert_eq!(
            ev,
            [
                SyncEvent::Valid { update_id: 0 },
                SyncEvent::Updated { update_id: 0 }
            ]
        );
        let (bid, ask) = sync.book().unwrap().top().unwrap();
        assert_eq!(
            (bid.price, bid.size, ask.price),
            (2_192_170, 125_000_000, 2_192_174)
        );
        crate::json::with_doc(TRADES, |doc| {
            let env = decode(doc).unwrap();
            seq.check(env.sequence_num).unwrap();
            let Message::Trades(events) = env.message else {
                panic!()
            };
            let trades: Vec<_> = events.trades().map(Result::unwrap).collect();
            assert_eq!(
                (trades[0].price, trades[0].size, trades[0].side),
                ("1260.01", "0.3", "BUY")
            );
        });
        // A lost message anywhere on the connection: every book resyncs.
        assert_eq!(
            seq.check(4),
            Err(Resync::Sequence {
                expected: 3,
                got: 4
            })
        );
        sync.invalidate_all(
            Resync::Sequence {
                expected: 3,
                got: 4,
            },
            &mut |x| ev.push(x),
        );
        assert_eq!(
            ev[2],
            SyncEvent::Gap(Resync::Sequence {
                expected: 3,
                got: 4
            })
        );
        assert!(sync.book().is_none());
        assert_eq!(
            seq.check(5),
            Ok(()),
            "the chain goes on from the new number"
        );
    }

    #[test]
    fn control_and_bad_messages() {
        crate::json::with_doc(
            r#"{"channel":"heartbeats","client_id":"","timestamp":"t","sequence_num":7,"events":[]}"#,
            |doc| {
                let env = decode(doc).unwrap();
                assert_eq!(env.sequence_num, 7);
                assert!(matches!(env.message, Message::Control("heartbeats")));
            },
        );
        crate::json::with_doc(r#"{"channel":"l2_data","events":[]}"#, |doc| {
            assert_eq!(
                decode(doc).err(),
                Some(DecodeError::Missing("sequence_num"))
            );
        });
        crate::json::with_doc(
            r#"{"channel":"l2_data","sequence_num":1,"events":[{"type":"update","product_id":"X","updates":[{"side":"middle","price_level":"1","new_quantity":"1"}]}]}"#,
            |doc| {
                let Message::Level2(events) = decode(doc).unwrap().message else {
                    panic!()
                };
                let e = events.books().next().unwrap().unwrap();
                assert_eq!(
                    e.updates().next().unwrap().err(),
                    Some(DecodeError::Type("side"))
                );
            },
        );
    }
}
