//! Bybit v5 public streams: `orderbook.{depth}.{symbol}` (snapshot and
//! delta, `u` continuity), `orderbook.1` as the best bid and offer,
//! `publicTrade.{symbol}`, and the replies to operations (acknowledgements,
//! pongs, refusals).
//!
//! Sources: Bybit's v5 documentation ("Connect", "Orderbook", "Trade"),
//! and the refusals as they were captured live by third parties (the docs
//! document none); see each item.

pub mod listing;
pub mod plan;
mod wire;

use crate::adapter::{Instruments, Outcome, WireQuote, WireTrade, best, ms_to_ns, taker};
use crate::book::Limit;
use crate::error::DecodeError;
use crate::event::{Event, InstrumentSpec};
use crate::json::JsonParser;
use crate::sync::{BookSync, Seq, SyncEvent};

pub use wire::*;

/// Feeds a book message into `sync` (chain [`Chain::Bybit`](crate::sync::Chain::Bybit)).
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_, '_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<(), DecodeError> {
    let levels = crate::book::scaled_sides(&book.bids, &book.asks, price_scale, size_scale);
    if book.snapshot {
        // The topic's depth is the window Bybit keeps complete (0: a topic
        // naming none, taken as the book's own).
        let window = match book.depth {
            0 => Limit::Whole,
            n => Limit::Levels(n),
        };
        sync.on_snapshot_at(book.update_id, window, levels, emit)
    } else {
        let seq = Seq {
            first: book.update_id,
            last: book.update_id,
            prev: None,
        };
        sync.on_diff(seq, levels, emit)
    }
}

/// The topics a refusal names, each as sent. Bybit does not document its
/// refusals; these are its words as captured live:
///
/// - linear and inverse: `error:handler not found,topic:orderbook.50.X`
///   (an unknown symbol or depth) and `error:already
///   subscribed,topic:orderbook.1.X`, one topic after `topic:`
///   (third-party captures of 2026);
/// - spot: `Invalid symbol :[publicTrade.X]`, the topic in brackets (read
///   here as a comma-separated list, in case several are named);
/// - `args size >10`, `error:invalid op`: no topic.
pub fn refused_topics(ret_msg: &str) -> impl Iterator<Item = &str> {
    let list = if let Some((_, after)) = ret_msg.split_once("topic:") {
        after.split(',').next().unwrap_or("")
    } else if let Some((_, after)) = ret_msg.split_once('[') {
        after.split(']').next().unwrap_or("")
    } else {
        ""
    };
    list.split(',').map(str::trim).filter(|t| !t.is_empty())
}

/// Bybit v5 messages in, normalised [`Event`]s out, for one connection's
/// instruments (`s`, `BTCUSDT`): `publicTrade` as trades, `orderbook.N`
/// kept in step (`u` +1 per message; a snapshot replaces the book), and
/// `orderbook.1` snapshots as quotes.
///
/// A book that breaks emits `Gap` then `Resync`: its owner resubscribes
/// the topic, and the snapshot that follows makes it valid again. A
/// refused subscription is [`Outcome::Rejected`], with `Rejected` for the
/// instrument its topic names.
pub struct Adapter {
    parser: JsonParser,
    instruments: Instruments,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            parser: JsonParser::new(64 * 1024),
            instruments: Instruments::new(instruments, crate::sync::Chain::Bybit, plan::book_shape),
        }
    }

    /// Decodes one message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes, and
    /// emits its events. Acknowledgements and pongs are control messages;
    /// a reply with `"success":false` is a refusal.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let instruments = &mut self.instruments;
        self.parser.parse(buf, len, |doc| {
            match decode(doc)? {
                Message::Reply { success: true, .. } => Ok(Outcome::Control),
                Message::Reply { ret_msg, code, .. } => {
                    refused(instruments, code, ret_msg, recv_tsc, emit);
                    Ok(Outcome::Rejected)
                }
                Message::Other(_) => Ok(Outcome::Ignored),
                Message::Trades(trades) => {
                    let trades = trades.iter().map(|t| {
                        let t = t?;
                        Ok(WireTrade {
                            symbol: t.symbol.into(),
                            price: t.price,
                            size: t.size,
                            aggressor: taker(t.side),
                            // Spot's ids are digits; linear and inverse
                            // send UUIDs, reported as 0.
                            trade_id: t.id.parse().unwrap_or(0),
                            exchange_ns: ms_to_ns(t.time_ms),
                        })
                    });
                    instruments.trades(trades, recv_tsc, emit)
                }
                Message::Book(book) => on_book(instruments, &book, recv_tsc, emit),
            }
        })?
    }

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.instruments.disconnect(recv_tsc, emit);
    }
}
crate::adapter::venue_adapter!(Adapter);

/// A book message: `orderbook.1` is the best bid and offer (a quote), and
/// the book of an instrument shown 1 level deep; a deeper topic is the
/// book of the instrument whose plan subscribes it.
///
/// "Linear, inverse, spot level 1 data has `snapshot` message only"
/// (Bybit v5 "Orderbook", since March 2025): each is the whole top of the
/// book, so each is a quote (`u` as its update id). A level-1 snapshot
/// repeated after 3 s without change carries the same `u` (same page); it
/// is a quote again, and a snapshot replaces the book whatever its `u`.
/// The level-1 deltas of older recordings are not quotes (they hold the
/// changed levels, deletions included).
fn on_book(
    instruments: &mut Instruments,
    book: &BookData<'_, '_>,
    recv_tsc: u64,
    emit: &mut impl FnMut(Event),
) -> Result<Outcome, DecodeError> {
    let Some(id) = instruments.find(book.symbol) else {
        return Ok(Outcome::Ignored);
    };
    let ns = ms_to_ns(book.ts_ms);
    let mut outcome = Outcome::Ignored;
    if book.depth == 1 && book.snapshot {
        let quote = WireQuote {
            bid: best(&book.bids)?,
            ask: best(&book.asks)?,
            update_id: book.update_id,
            exchange_ns: ns,
        };
        outcome = instruments.quote_at(id, quote, recv_tsc, emit)?;
    }
    // `u` is per topic (a level-1 `u` has nothing to do with a level-50
    // one), so of the depths the plan subscribes, only the book's own
    // (the depth it keeps) feeds it; another depth (the withdrawn 500 of
    // recordings) is taken as the book's, its snapshot saying how deep its
    // window is.
    let fed = instruments.feed_book(id, ns, recv_tsc, emit, |spec, sync, emit| {
        let keep = sync.config().keep;
        if book.depth != keep && plan::DEPTHS.contains(&book.depth) {
            return Ok(false);
        }
        feed_book(sync, book, spec.price_scale, spec.size_scale, &mut { emit })?;
        Ok(true)
    })?;
    if fed == Outcome::Data {
        outcome = fed;
    }
    Ok(outcome)
}

/// A refused request: `Rejected` for each instrument whose topic the
/// venue's words name, the words kept. `error:already subscribed` names a
/// topic whose subscription stands (the first one "keeps delivering", a
/// third-party live capture of 2026), so it rejects no instrument; Bybit's
/// topics put a `.` before the symbol, which keeps the text-wide search of
/// [`Instruments::reject`] from naming one either.
fn refused(
    instruments: &mut Instruments,
    code: i64,
    ret_msg: &str,
    recv_tsc: u64,
    emit: &mut impl FnMut(Event),
) {
    let named = !ret_msg.contains("already subscribed")
        && instruments.reject_where(code, ret_msg, recv_tsc, emit, |_, i| {
            refused_topics(ret_msg).any(|topic| topic.rsplit('.').next() == Some(&i.spec.symbol))
        });
    if !named {
        instruments.reject(None, code, ret_msg, recv_tsc, emit);
    }
}

#[cfg(test)]
mod tests;
