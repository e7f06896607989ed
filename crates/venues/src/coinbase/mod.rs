//! Coinbase Advanced Trade market data (`wss://advanced-trade-ws.coinbase.com`):
//! `level2` books (replies on channel `l2_data`: a snapshot of the whole
//! book, then updates), `market_trades`, `heartbeats`, `subscriptions`,
//! and the venue's error frames.
//!
//! Every frame but an error carries the connection's `sequence_num`, one
//! counter for every frame of the socket, all channels, acknowledgements
//! and heartbeats included ("Per-connection message sequence number",
//! AsyncAPI level2 page; measured live by tickvault `docs/venues.md`); see
//! [`ConnectionSeq`]. Error frames are
//! `{"type":"error","message":"..."}` with no `channel` and no
//! `sequence_num` (frames recorded live by two public clients: an unknown
//! channel and a bad JWT read `authentication failure`, a malformed request
//! `subscribe or unsubscribe required`).
//!
//! A `-USDC` product's public data comes keyed by its `-USD` id (but
//! `USDT-USDC`'s and `EURC-USDC`'s): see [`answered_as`].

pub mod listing;
pub mod plan;
mod wire;

use crate::adapter::{Instruments, Outcome, WireTrade};
use crate::error::DecodeError;
use crate::event::{Event, InstrumentSpec};
use crate::json::JsonParser;
use crate::sync::{BookSync, ConnectionSeq, SyncEvent};
use crate::time::rfc3339_ns;

mod products;

use products::Aliases;
pub use products::answered_as;

pub use wire::*;

/// Feeds one `level2` event into its product's `sync` (chain
/// [`Chain::Coinbase`](crate::sync::Chain::Coinbase)), with update id 0;
/// see [`feed_book_numbered`].
pub fn feed_book(
    sync: &mut BookSync,
    event: &BookEvent<'_, '_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<(), DecodeError> {
    feed_book_numbered(sync, event, 0, price_scale, size_scale, emit)
}

/// Feeds one `level2` event that came in the frame numbered
/// `sequence_num`: the book's update id is that number. The level2
/// messages carry no sequence of their own, so nothing is chained here:
/// the connection's number guards them ([`ConnectionSeq`]). A snapshot
/// replaces the book; an update before any snapshot is buffered and then
/// dropped by the snapshot.
pub fn feed_book_numbered(
    sync: &mut BookSync,
    event: &BookEvent<'_, '_>,
    sequence_num: u64,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<(), DecodeError> {
    let levels = event.updates().map(move |u| {
        let (side, p, q) = u?;
        Ok((side, crate::decimal::level(p, q, price_scale, size_scale)?))
    });
    sync.on_unsequenced(event.snapshot, sequence_num, levels, emit)
}

/// Coinbase Advanced Trade messages in, normalised [`Event`]s out, for one
/// connection's products (`BTC-USD`): `market_trades` as trades (with the
/// aggressor the documentation implies, see [`aggressor`]), `level2` books
/// kept in step, their update id the frame's `sequence_num`.
///
/// `sequence_num` counts every message of the connection: a gap in it
/// (any channel) may have lost a book message of any product, so every
/// book of the connection emits `Gap` and `Resync` (resubscribe `level2`:
/// a snapshot per product follows). A refused request
/// (`{"type":"error",...}`) is [`Outcome::Rejected`]; see
/// [`Adapter::on_message`] for which books it concerns.
///
/// A `-USDC` product is answered under its `-USD` id ([`answered_as`]):
/// its frames go to the `-USDC` instrument configured. One adapter should
/// not hold both ids of one product (the plan refuses it,
/// [`PlanError::SameProduct`](crate::connection::PlanError::SameProduct)); if
/// it does, the `-USD` instrument takes the data and the `-USDC` one none.
pub struct Adapter {
    parser: JsonParser,
    instruments: Instruments,
    seq: [ConnectionSeq; 2],
    aliases: Aliases,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            parser: JsonParser::new(64 * 1024),
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::Coinbase,
                plan::book_shape,
            ),
            seq: [ConnectionSeq::default(); 2],
            aliases: Aliases::new(instruments),
        }
    }

    /// Decodes one message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes, and
    /// emits its events.
    ///
    /// An error frame names neither the request nor its products (see the
    /// module docs), so it is put on the books it can concern: those of
    /// this adapter that its text names, or else every book still waiting
    /// for its snapshot (a refused `level2` subscription never brings
    /// one), each with `Rejected`. A refusal of another channel's request
    /// while a book waits is put on that book too; the cost is one more
    /// `subscribe` of it.
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
            aliases,
        } = self;
        parser.parse(buf, len, |doc| {
            let envelope = decode(doc)?;
            let Some(number) = envelope.sequence_num else {
                if let Message::Error(text) = envelope.message {
                    refused(instruments, text, recv_tsc, emit);
                }
                return Ok(Outcome::Rejected);
            };
            if let Err(why) = seq[instruments.line() as usize].check(number) {
                instruments.invalidate_all(why, recv_tsc, emit);
            }
            match envelope.message {
                Message::Control(_) => Ok(Outcome::Control),
                Message::Other(_) | Message::Error(_) => Ok(Outcome::Ignored),
                Message::Trades(events) => {
                    let trades = events.trades().map(|t| {
                        let t = t?;
                        Ok(WireTrade {
                            symbol: aliases.configured(t.product_id).into(),
                            price: t.price,
                            size: t.size,
                            aggressor: aggressor(t.side),
                            trade_id: t.trade_id.parse().unwrap_or(0),
                            exchange_ns: rfc3339_ns(t.time).unwrap_or(0),
                        })
                    });
                    instruments.trades(trades, recv_tsc, emit)
                }
                Message::Level2(events) => {
                    // The frame's send time: per-level `event_time`s are
                    // not monotonic across frames (nautilus_trader
                    // `parse.rs`), and a snapshot's are 1970 in the docs.
                    let ns = rfc3339_ns(envelope.timestamp).unwrap_or(0);
                    let mut outcome = Outcome::Ignored;
                    for event in events.books() {
                        let event = event?;
                        let done = instruments.book_message(
                            aliases.configured(event.product_id),
                            ns,
                            recv_tsc,
                            emit,
                            |spec, sync, emit| {
                                let (ps, ss) = (spec.price_scale, spec.size_scale);
                                feed_book_numbered(sync, &event, number, ps, ss, &mut { emit })?;
                                Ok(true)
                            },
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
        self.seq = [ConnectionSeq::default(); 2];
        self.instruments.disconnect(recv_tsc, emit);
    }
}

/// `Rejected` for the books an error frame concerns (see
/// [`Adapter::on_message`]); the text is kept either way.
fn refused(instruments: &mut Instruments, text: &str, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
    if !instruments.reject(None, 0, text, recv_tsc, emit) {
        instruments.reject_where(0, text, recv_tsc, emit, |_, i| {
            i.sync.as_ref().is_some_and(|s| !s.is_valid())
        });
    }
}

// A line that goes down starts a new chain when it is back: a new
// connection's `sequence_num` starts at 0 again.
crate::adapter::venue_adapter!(Adapter, |a: &mut Adapter, open: [bool; 2]| {
    for (seq, open) in a.seq.iter_mut().zip(open) {
        if !open {
            seq.reset();
        }
    }
});

#[cfg(test)]
mod adapter_tests {
    use super::tests::{SNAPSHOT, TRADES, UPDATE};
    use super::*;
    use crate::VenueAdapter;
    use crate::event::Aggressor;
    use crate::event::{InstrumentId, Kind};
    use crate::sync::Resync;

    fn feed_outcome(a: &mut Adapter, text: &str) -> (Outcome, Vec<Event>) {
        let (outcome, ev) = crate::adapter::testutil::feed(a, text, 1);
        (outcome.unwrap(), ev)
    }

    fn feed(a: &mut Adapter, text: &str) -> Vec<Kind> {
        feed_outcome(a, text).1.iter().map(|e| e.kind).collect()
    }

    fn pair() -> Adapter {
        Adapter::new(&[
            InstrumentSpec::new("BTC-USD", 2, 8, 100),
            InstrumentSpec::new("ETH-USD", 2, 8, 10),
        ])
    }

    #[test]
    fn books_trades_and_a_connection_gap_that_resyncs_every_book() {
        let mut a = Adapter::new(&[
            InstrumentSpec::new("BTC-USD", 2, 8, 100),
            InstrumentSpec::new("ETH-USD", 2, 8, 0),
        ]);
        let (outcome, ev) = feed_outcome(&mut a, SNAPSHOT);
        assert_eq!(outcome, Outcome::Data);
        assert_eq!(ev.len(), 4, "{ev:?}");
        assert_eq!(
            ev[0].exchange_ns, 1_675_974_770_714_964_855,
            "the frame's time"
        );
        let ev = feed(&mut a, UPDATE);
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert!(matches!(
            ev[1],
            Kind::BookDelta {
                last: true,
                size: 125_000_000,
                update_id: 1,
                ..
            }
        ));
        // The docs' sample is a snapshot of past trades: not emitted.
        assert!(feed(&mut a, TRADES).is_empty());
        // The maker bought: the seller took liquidity.
        let update = TRADES
            .replace("\"snapshot\"", "\"update\"")
            .replace("\"sequence_num\":2", "\"sequence_num\":3");
        let ev = feed(&mut a, &update);
        assert_eq!(
            ev,
            [Kind::Trade {
                price: 126_001,
                size: 30_000_000,
                aggressor: Aggressor::Sell,
                trade_id: 0
            }]
        );
        // sequence_num jumps from 3 to 7: every book of the connection is
        // dropped, explicitly.
        let gap = UPDATE.replace("\"sequence_num\":1", "\"sequence_num\":7");
        let ev = feed(&mut a, &gap);
        assert_eq!(
            ev,
            [
                Kind::Gap {
                    why: Resync::Sequence {
                        expected: 4,
                        got: 7
                    }
                },
                Kind::Resync
            ]
        );
        assert!(a.book(InstrumentId(0)).is_none());
    }

    #[test]
    fn a_usdc_product_takes_the_book_and_trades_sent_under_its_usd_id() {
        // Configured (and subscribed) as BTC-USDC; the venue answers as
        // BTC-USD. USDT-USDC is one of the two products answered under
        // their own id.
        let mut a = Adapter::new(&[
            InstrumentSpec::new("BTC-USDC", 2, 8, 100),
            InstrumentSpec::new("USDT-USDC", 2, 8, 10),
        ]);
        let (outcome, ev) = feed_outcome(&mut a, SNAPSHOT);
        assert_eq!(outcome, Outcome::Data);
        let on: Vec<(u32, Kind)> = ev.iter().map(|e| (e.instrument.0, e.kind)).collect();
        assert!(on.iter().all(|(i, _)| *i == 0), "{on:?}");
        assert!(
            on.contains(&(0, Kind::BookValid { update_id: 0 })),
            "{on:?}"
        );
        let ev = feed(&mut a, UPDATE);
        assert!(
            matches!(
                ev[..],
                [
                    Kind::BookDelta { .. },
                    Kind::BookDelta {
                        last: true,
                        size: 125_000_000,
                        update_id: 1,
                        ..
                    }
                ]
            ),
            "{ev:?}"
        );
        let (bid, ask) = a.book(InstrumentId(0)).unwrap().top().unwrap();
        assert_eq!((bid.price, ask.price), (2_192_170, 2_192_174));
        let trade = TRADES
            .replace("\"snapshot\"", "\"update\"")
            .replace("ETH-USD", "BTC-USD");
        let (outcome, ev) = feed_outcome(&mut a, &trade);
        assert_eq!(outcome, Outcome::Data);
        let on: Vec<(u32, Kind)> = ev.iter().map(|e| (e.instrument.0, e.kind)).collect();
        assert_eq!(
            on,
            [(
                0,
                Kind::Trade {
                    price: 126_001,
                    size: 30_000_000,
                    aggressor: Aggressor::Sell,
                    trade_id: 0
                }
            )]
        );
        // USDT-USDC is not aliased: its own id is its data, and USDT-USD's
        // is another product's.
        let usdt = |seq: u64, product: &str| {
            SNAPSHOT
                .replace("\"sequence_num\":0", &format!("\"sequence_num\":{seq}"))
                .replace("BTC-USD", product)
        };
        let (outcome, ev) = feed_outcome(&mut a, &usdt(3, "USDT-USD"));
        assert_eq!((outcome, ev.len()), (Outcome::Ignored, 0), "{ev:?}");
        let (outcome, ev) = feed_outcome(&mut a, &usdt(4, "USDT-USDC"));
        assert_eq!(outcome, Outcome::Data);
        assert!(ev.iter().all(|e| e.instrument == InstrumentId(1)), "{ev:?}");
        assert!(a.book(InstrumentId(1)).is_some());
        // The aliased product's own id never comes on these channels; were
        // it to, it is the same instrument's.
        let ev = feed(&mut a, &usdt(5, "BTC-USDC"));
        assert!(ev.contains(&Kind::BookValid { update_id: 5 }), "{ev:?}");
    }

    #[test]
    fn acknowledgements_and_heartbeats_are_control_and_count_in_the_sequence() {
        let mut a = pair();
        // Live shapes (no `client_id`, a numeric counter): tickvault and
        // a public Rust client's captures.
        let ack = r#"{"channel":"subscriptions","timestamp":"2026-09-07T23:37:22.278739877Z","sequence_num":0,"events":[{"subscriptions":{"heartbeats":["heartbeats"],"level2":["BTC-USD","ETH-USD"]}}]}"#;
        let beat = r#"{"channel":"heartbeats","timestamp":"2026-09-07T23:37:22.675755362Z","sequence_num":1,"events":[{"current_time":"2026-09-07 23:37:22.674409 +0000 UTC m=+139651.272674714","heartbeat_counter":139651}]}"#;
        assert_eq!(feed_outcome(&mut a, ack), (Outcome::Control, vec![]));
        assert_eq!(feed_outcome(&mut a, beat), (Outcome::Control, vec![]));
        let snapshot = SNAPSHOT.replace("\"sequence_num\":0", "\"sequence_num\":2");
        assert!(feed(&mut a, &snapshot).contains(&Kind::BookValid { update_id: 2 }));
        // The docs' heartbeat (a string counter) is as good.
        let beat = r#"{"channel":"heartbeats","client_id":"","timestamp":"2023-06-23T20:31:26.122969572Z","sequence_num":3,"events":[{"current_time":"2023-06-23 20:31:56.121961769 +0000 UTC m=+91717.525857105","heartbeat_counter":"3049"}]}"#;
        assert_eq!(feed_outcome(&mut a, beat), (Outcome::Control, vec![]));
        assert!(a.book(InstrumentId(0)).is_some());
    }

    #[test]
    fn a_refusal_is_rejected_for_the_books_still_waiting_for_a_snapshot() {
        let mut a = pair();
        feed(&mut a, SNAPSHOT);
        // The venue's words for an unknown channel or a bad JWT; they name
        // no product: ETH-USD has no snapshot yet, BTC-USD is valid.
        let (outcome, ev) = feed_outcome(
            &mut a,
            r#"{"type":"error","message":"authentication failure"}"#,
        );
        assert_eq!(outcome, Outcome::Rejected);
        let kinds: Vec<(u32, Kind)> = ev.iter().map(|e| (e.instrument.0, e.kind)).collect();
        assert_eq!(kinds, [(1, Kind::Rejected { code: 0 })]);
        assert_eq!(a.rejection(), "authentication failure");
        assert!(a.book(InstrumentId(0)).is_some(), "a refusal is no gap");
        // A malformed request.
        let (outcome, _) = feed_outcome(
            &mut a,
            r#"{"type":"error","message":"subscribe or unsubscribe required"}"#,
        );
        assert_eq!(outcome, Outcome::Rejected);
        assert_eq!(a.rejection(), "subscribe or unsubscribe required");
        // A text that names a product concerns that product only, even a
        // valid one.
        let (_, ev) = feed_outcome(
            &mut a,
            r#"{"type":"error","message":"Failed to subscribe: BTC-USD is not available"}"#,
        );
        let kinds: Vec<(u32, Kind)> = ev.iter().map(|e| (e.instrument.0, e.kind)).collect();
        assert_eq!(kinds, [(0, Kind::Rejected { code: 0 })]);
        // Error frames carry no sequence_num: the chain goes on.
        let ev = feed(&mut a, UPDATE);
        assert!(!ev.iter().any(|k| matches!(k, Kind::Gap { .. })), "{ev:?}");
    }
}

#[cfg(test)]
pub(crate) mod tests;
