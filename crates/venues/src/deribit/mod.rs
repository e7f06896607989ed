//! Deribit JSON-RPC subscriptions: `book.{instrument}.{interval}` (snapshot
//! then changes, `change_id` / `prev_change_id`), `trades.*`, `quote.*`,
//! heartbeats and replies (a refused subscription is an absence from a
//! reply's `result`: see [`plan::deribit`](crate::deribit::plan) for how
//! the request ids tell which channels were asked for).
//!
//! Deribit sends prices and amounts as JSON numbers. Their text is their
//! exact value, and a float is not, so this adapter reads the message with
//! the one-pass scanner in its any-number mode (never simd-json, whose tape
//! keeps only the float) and parses the number text with
//! [`crate::decimal`].

pub mod listing;
pub mod plan;
mod wire;

use crate::adapter::{Instrument, Instruments, Outcome, WireQuote, WireTrade, ms_to_ns, taker};
use crate::book::{Level, Side};
use crate::error::DecodeError;
use crate::event::{Event, InstrumentId, InstrumentSpec};
use crate::sync::{BookSync, LevelResult, Seq, SyncEvent};
use plan::{INSTRUMENTS_PER_REQUEST, SUBSCRIBE_ID, book_channel_symbol};

pub use wire::*;

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
    crate::book::Sides::new(
        book.levels(Side::Bid).map(scale(Side::Bid)),
        book.levels(Side::Ask).map(scale(Side::Ask)),
    )
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

/// What to send when Deribit's heartbeat asks (`test_request`).
pub const TEST_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"method":"public/test","params":{}}"#;

/// Deribit messages in, normalised [`Event`]s out, for one connection's
/// instruments (`BTC-PERPETUAL`, in the order its plan was made with):
/// `trades.*` as trades, `quote.*` as quotes, `book.*` kept in step
/// (`change_id` chain). A `test_request` heartbeat comes back as
/// [`Outcome::Answer`] with [`TEST_ANSWER`], which must be sent at once.
///
/// A book that breaks emits `Gap` then `Resync`: resubscribe it. A book
/// channel the venue did not accept emits `Rejected`: the reply to a
/// `public/subscribe` lists what it accepted, and the request's id (see
/// [`plan::deribit`](crate::deribit::plan)) says which book channels it
/// asked for; an `error` reply refuses every instrument its request named.
pub struct Adapter {
    instruments: Instruments,
    /// Per instrument: its book channel is in the reply being read
    /// (allocated here, so that reading a reply allocates nothing).
    accepted: Vec<bool>,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::Deribit,
                plan::book_shape,
            ),
            accepted: vec![false; instruments.len()],
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
            Message::Reply { id, answer } => Ok(self.on_reply(id, answer, text, recv_tsc, emit)),
            Message::Heartbeat {
                test_request: false,
            } => Ok(Outcome::Control),
            Message::Heartbeat { test_request: true } => Ok(Outcome::Answer(TEST_ANSWER)),
            Message::Other(_) => Ok(Outcome::Ignored),
            Message::Trades { trades, .. } => {
                let trades = trades.iter().map(|t| {
                    let t = t?;
                    Ok(WireTrade {
                        symbol: t.instrument.into(),
                        price: t.price,
                        size: t.amount,
                        aggressor: taker(t.direction),
                        trade_id: trade_number(t.trade_id),
                        exchange_ns: ms_to_ns(t.timestamp_ms),
                    })
                });
                instruments.trades(trades, recv_tsc, emit)
            }
            Message::Quote(q) => {
                let quote = WireQuote {
                    bid: q.bid,
                    ask: q.ask,
                    // A quote carries no update id.
                    update_id: 0,
                    exchange_ns: ms_to_ns(q.timestamp_ms),
                };
                instruments.quote(q.instrument, quote, recv_tsc, emit)
            }
            Message::Book(book) => instruments.book_message(
                book.instrument,
                ms_to_ns(book.timestamp_ms),
                recv_tsc,
                emit,
                |spec, sync, emit| {
                    let (ps, ss) = (spec.price_scale, spec.size_scale);
                    feed_book(sync, &book, ps, ss, &mut { emit })?;
                    Ok(true)
                },
            ),
        }
    }

    /// A reply. Which instruments' book channels its request named comes
    /// from its id ([`plan::deribit`](crate::deribit::plan)): the plan's
    /// k-th subscription (`100 + k`) named those of instruments `100 k` to
    /// `100 k + 99` that have a book; a resubscription names its channel
    /// as its id. Each of them absent from `result` was refused (Deribit
    /// leaves out what it does not accept, with no error); an `error`
    /// refuses every instrument the request named, or, when the id names
    /// none we know, is kept as the venue's words with no instrument.
    fn on_reply(
        &mut self,
        id: Option<RequestId<'_>>,
        answer: Answer<'_>,
        text: &str,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Outcome {
        let n = self.instruments.len();
        let asked = match id {
            Some(RequestId::Number(id)) if id >= SUBSCRIBE_ID => {
                let k = usize::try_from(id - SUBSCRIBE_ID).unwrap_or(usize::MAX);
                let first = k.saturating_mul(INSTRUMENTS_PER_REQUEST).min(n);
                Some(first..first.saturating_add(INSTRUMENTS_PER_REQUEST).min(n))
            }
            Some(RequestId::Text(channel)) => book_channel_symbol(channel)
                .and_then(|s| self.instruments.find(s))
                .map(|i| i.0 as usize..i.0 as usize + 1),
            _ => None,
        };
        match (answer, asked) {
            (Answer::Error(e), Some(asked)) => {
                self.instruments
                    .reject_where(e.code, e.text, recv_tsc, emit, |id, _| {
                        asked.contains(&(id.0 as usize))
                    });
                Outcome::Rejected
            }
            (Answer::Error(e), None) => {
                self.instruments
                    .reject(None, e.code, e.text, recv_tsc, emit);
                Outcome::Rejected
            }
            (Answer::Channels(list), Some(asked)) => {
                let accepted = &mut self.accepted;
                accepted[asked.clone()].fill(false);
                for name in list.iter() {
                    if let Some(i) =
                        book_channel_symbol(name).and_then(|s| self.instruments.find(s))
                        && asked.contains(&(i.0 as usize))
                    {
                        accepted[i.0 as usize] = true;
                    }
                }
                // A book asked for and left out of the list was refused.
                let refused = |id: InstrumentId, i: &Instrument| {
                    let k = id.0 as usize;
                    asked.contains(&k) && i.sync.is_some() && !accepted[k]
                };
                let any = asked.clone().any(|k| {
                    let id = InstrumentId(k as u32);
                    self.instruments.get(id).is_some_and(|i| refused(id, i))
                });
                if !any {
                    // Not a refusal: the words of the last one stay.
                    return Outcome::Control;
                }
                self.instruments
                    .reject_where(0, text, recv_tsc, emit, refused);
                Outcome::Rejected
            }
            _ => Outcome::Control,
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
mod tests;
