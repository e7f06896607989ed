//! OKX v5 public channels: `books` / `books-l2-tbt` / `books50-l2-tbt`
//! (snapshot and updates, `seqId`/`prevSeqId`, the CRC32 checksum where it
//! is not 0: OKX has sent 0 since June 2026), `bbo-tbt`,
//! `trades`, and the `event` replies (acknowledgements, and errors as
//! refusals).

pub mod listing;
pub mod plan;
mod wire;

use crate::adapter::{Instruments, Outcome, WireQuote, WireTrade, best, ms_to_ns, taker};
use crate::book::{Book, Level, Limit, Side};
use crate::crc_text;
use crate::error::DecodeError;
use crate::event::{Event, InstrumentSpec};
use crate::sync::{BookSync, Seq, SyncEvent};

pub use wire::*;

/// OKX's book checksum: CRC32 of the top 25 levels as
/// `bid1px:bid1sz:ask1px:ask1sz:bid2px:...` (a side that runs out is
/// skipped), with the wire strings as sent, as a signed 32-bit integer.
/// Rebuilt from the book's values and wire digit counts, without
/// allocating.
pub fn checksum(book: &Book, price_scale: u8, size_scale: u8) -> i64 {
    let (bids, asks) = (book.kept(Side::Bid), book.kept(Side::Ask));
    let both = bids.len().min(asks.len()).min(25);
    // The longer side's levels past the shorter one's.
    let rest = if bids.len() > both { bids } else { asks };
    // The whole string in one stack buffer, one CRC update.
    let crc = crc_text::crc32::<2048>(|text| {
        let mut level = |l: &Level| {
            text.wire(l.price, price_scale, l.price_digits, b':');
            text.wire(l.size, size_scale, l.size_digits, b':');
        };
        for (bid, ask) in bids.iter().zip(asks.iter()).take(both) {
            level(bid);
            level(ask);
        }
        rest.iter().skip(both).take(25 - both).for_each(level);
        // Every field was followed by a ':'; the last one is not part of it.
        text.unbyte();
    });
    i64::from(crc as i32)
}

/// How many levels a side the book channel's window holds, which OKX keeps
/// complete (OKX API v5, "Order book channel": `books` and `books-l2-tbt`
/// push "400 depth levels", `books50-l2-tbt` 50, `books5` a 5-level
/// snapshot each time, `bbo-tbt` 1). A book that keeps fewer levels than
/// its snapshot's window tracks a horizon ([`crate::book`]).
fn channel_window(channel: &str) -> Limit {
    match channel {
        "books" | "books-l2-tbt" => Limit::Levels(plan::BOOK_LEVELS),
        "books50-l2-tbt" => Limit::Levels(50),
        "books5" => Limit::Levels(5),
        "bbo-tbt" => Limit::Levels(1),
        _ => Limit::Unknown,
    }
}

/// Feeds a book message into `sync` (chain [`Chain::OkxSeq`](crate::sync::Chain::OkxSeq)),
/// then checks OKX's checksum when it sends a real one. Returns whether a
/// checksum was compared and matched.
///
/// A checksum of 0, or none, means "no checksum", and is never compared.
/// OKX, "OKX Order Book Channels Checksum Field Deprecation" (21 May
/// 2026; demo trading from 2 June 2026, production from 23 June 2026): on
/// `books`, `books-l2-tbt` and `books50-l2-tbt` "the checksum field will
/// remain present in push messages but will always return 0 and must no
/// longer be used for data integrity validation"; integrity is `prevSeqId`
/// equal to the previous message's `seqId`, which `sync` checks whatever
/// the checksum. Any other value is verified: recorded days from before
/// carry real checksums. The cost of reading 0 as none is that a real
/// CRC32 that happens to be 0 (one message in 2^32 on those days) goes
/// unchecked; its `seqId` chain is still checked.
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_, '_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<bool, DecodeError> {
    let levels = crate::book::scaled_sides(&book.bids, &book.asks, price_scale, size_scale);
    let seq_id = book.seq_id.unwrap_or(0).max(0) as u64;
    match book.action {
        Action::Snapshot => {
            sync.on_snapshot_at(seq_id, channel_window(book.channel), levels, emit)?
        }
        Action::Update => {
            let seq = Seq {
                first: seq_id,
                last: seq_id,
                prev: book.prev_seq_id.map(|p| p.max(0) as u64),
            };
            sync.on_diff(seq, levels, emit)?;
        }
    }
    // 0: no checksum (OKX's deprecation, above).
    Ok(match book.checksum {
        Some(expected) if expected != 0 => {
            sync.verify(expected, |b| checksum(b, price_scale, size_scale), emit)
        }
        _ => false,
    })
}

/// OKX v5 messages in, normalised [`Event`]s out, for one connection's
/// instruments (`instId`, `BTC-USDT`): `trades` as trades, `bbo-tbt` as
/// quotes, and `books` / `books-l2-tbt` / `books50-l2-tbt` kept in step
/// (`seqId` chain, and OKX's checksum whenever it sends one that is not 0:
/// OKX has sent 0 since June 2026, [`feed_book`]).
///
/// A book that breaks emits `Gap` then `Resync`: its owner resubscribes
/// the book channel, and the next snapshot makes it valid again.
///
/// An `error` event is a refused request ([`Outcome::Rejected`]): OKX
/// answers each argument of a subscription on its own, and an error names
/// its argument only in its words (`"Wrong URL or
/// channel:books,instId:BTC-USDT doesn't exist. ..."`, code 60018: OKX API
/// v5, "Error Code", with `{0}` filled as live captures show), so
/// `Rejected` goes to the instruments those words name. Acknowledgements, `notice` (64008,
/// an upcoming service upgrade) and any other event are control
/// messages.
pub struct Adapter {
    decoder: Decoder,
    instruments: Instruments,
    /// Book messages whose checksum was compared (and matched).
    pub checksums_verified: u64,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            decoder: Decoder::new(),
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::OkxSeq,
                plan::book_shape,
            ),
            checksums_verified: 0,
        }
    }

    /// Decodes one message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes, and
    /// emits its events. OKX's `pong` (the answer to a text `ping`) is a
    /// control message.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        if buf.get(..len) == Some(b"pong") {
            return Ok(Outcome::Control);
        }
        let Adapter {
            decoder,
            instruments,
            checksums_verified,
        } = self;
        decoder.decode(buf, len, |message| match message? {
            Message::Notice {
                code: SERVICE_UPGRADE,
            } => Ok(Outcome::Closing),
            Message::Event(_) | Message::Notice { .. } => Ok(Outcome::Control),
            // A refused request: `Rejected` for the instruments its words
            // name (OKX sends no `arg` with an error).
            Message::Error { code, msg } => {
                instruments.reject(None, code, msg, recv_tsc, emit);
                Ok(Outcome::Rejected)
            }
            Message::Other(_) => Ok(Outcome::Ignored),
            Message::Trades(trades) => {
                let trades = trades.iter().map(|t| {
                    let t = t?;
                    Ok(WireTrade {
                        symbol: t.inst_id.into(),
                        price: t.px,
                        size: t.sz,
                        aggressor: taker(t.side),
                        trade_id: t.trade_id.parse().unwrap_or(0),
                        exchange_ns: ms_to_ns(t.ts_ms),
                    })
                });
                instruments.trades(trades, recv_tsc, emit)
            }
            Message::Book(book) => match book.channel {
                "books" | "books-l2-tbt" | "books50-l2-tbt" => instruments.book_message(
                    book.inst_id,
                    ms_to_ns(book.ts_ms),
                    recv_tsc,
                    emit,
                    |spec, sync, emit| {
                        let (ps, ss) = (spec.price_scale, spec.size_scale);
                        let verified = feed_book(sync, &book, ps, ss, &mut { emit })?;
                        *checksums_verified += u64::from(verified);
                        Ok(true)
                    },
                ),
                "bbo-tbt" => {
                    // Not read at all when not ours.
                    let Some(id) = instruments.find(book.inst_id) else {
                        return Ok(Outcome::Ignored);
                    };
                    let quote = WireQuote {
                        bid: best(&book.bids)?,
                        ask: best(&book.asks)?,
                        update_id: book.seq_id.unwrap_or(0).max(0) as u64,
                        exchange_ns: ms_to_ns(book.ts_ms),
                    };
                    instruments.quote_at(id, quote, recv_tsc, emit)
                }
                // `books5`: the top five, whole, every time.
                _ => Ok(Outcome::Ignored),
            },
        })
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
