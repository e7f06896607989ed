//! Binance spot market data in SBE: the binary frames of
//! `stream-sbe.binance.com` ([`tickwire_sbe::spot_stream`]) into the same
//! events and books as the JSON streams.
//!
//! The venue's rules relied on (binance-spot-api-docs,
//! `sbe-market-data-streams.md`, and `web-socket-streams.md` where it
//! points there):
//! - one binary frame is one message; subscription replies and
//!   `serverShutdown` come as JSON text frames, read by
//!   [`Adapter::on_message`] as on the JSON streams;
//! - every time is in microseconds since the epoch;
//! - a decimal is a mantissa times ten to the message's price (or
//!   quantity) exponent: scaled exactly into the instrument's scale, and a
//!   value the scale cannot hold is the same typed error as for text;
//! - the diff stream's `firstBookUpdateId` and `lastBookUpdateId` are the
//!   JSON stream's `U` and `u`, bridged to the REST snapshot's
//!   `lastUpdateId` the same way (`U <= lastUpdateId + 1 <= u`, then
//!   `U == previous u + 1`): the same engine, [`Chain::BinanceSpot`];
//! - `bestBidAsk` is culled under load (an older event not yet sent is
//!   dropped for a newer one), so its `bookUpdateId` skips: quotes are not
//!   sequenced, and a skip is no gap;
//! - `depth20` is the top of the book, whole, every 50 ms: not normalised
//!   into book events, as the JSON `@depth20` is not.
//!
//! [`Chain::BinanceSpot`]: crate::sync::Chain::BinanceSpot

use tickwire_sbe::spot_stream::{self, Levels, Message};

use super::Adapter;
use crate::adapter::{Instruments, Named, Outcome, WireQuote, WireTrade};
use crate::book::Side;
use crate::error::DecodeError;
use crate::event::{Aggressor, Event, InstrumentId};
use crate::mantissa::{self, LevelScaler, Mantissa};
use crate::sync::{LevelResult, Seq};

impl Adapter {
    /// Decodes one binary frame of the SBE streams and emits its events,
    /// as [`on_message`](Self::on_message) does for text. A frame that is
    /// not a message of the schema is [`DecodeError::Sbe`] and emits
    /// nothing; a depth diff whose levels the scales cannot hold
    /// invalidates its book (`Gap`, `Resync`).
    pub fn on_binary(
        &mut self,
        frame: &[u8],
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        on_sbe(
            &mut self.instruments,
            spot_stream::decode(frame)?,
            recv_tsc,
            emit,
        )
    }
}

/// Microseconds since the epoch as nanoseconds (0: none, or before 1970).
#[inline]
fn us_to_ns(us: i64) -> u64 {
    u64::try_from(us).unwrap_or(0).saturating_mul(1_000)
}

#[inline]
fn symbol(bytes: &[u8]) -> Result<&str, DecodeError> {
    core::str::from_utf8(bytes).map_err(|_| DecodeError::Utf8)
}

/// The instrument a message's symbol names, found by its bytes: one in
/// the table is the bytes of a spec's symbol, text already, so only a
/// symbol not found is checked as UTF-8 (not text: `Utf8`, as before;
/// text: not ours, `None`). The check was about 9 % of a best bid/ask's
/// samples through this adapter (`sbe` bench).
#[inline]
fn known(instruments: &Instruments, bytes: &[u8]) -> Result<Option<InstrumentId>, DecodeError> {
    match instruments.find_bytes(bytes) {
        Some(at) => Ok(Some(at)),
        None => symbol(bytes).map(|_| None),
    }
}

/// An id, which the venue counts up: a negative one is not the venue's.
#[inline]
fn id(v: i64, field: &'static str) -> Result<u64, DecodeError> {
    u64::try_from(v).map_err(|_| DecodeError::Range(field))
}

fn levels<'a>(
    bids: Levels<'a>,
    asks: Levels<'a>,
    price_exponent: i8,
    qty_exponent: i8,
    price_scale: u8,
    size_scale: u8,
) -> impl Iterator<Item = LevelResult> + 'a {
    // The message's exponents and the instrument's scales: decided once.
    let scaler = LevelScaler::new(price_exponent, qty_exponent, price_scale, size_scale);
    let side = move |side: Side, levels: Levels<'a>| {
        levels.map(move |l| Ok((side, scaler.level(l.price, l.qty)?)))
    };
    crate::book::Sides::new(side(Side::Bid, bids), side(Side::Ask, asks))
}

fn on_sbe(
    instruments: &mut Instruments,
    message: Message<'_>,
    recv_tsc: u64,
    emit: &mut impl FnMut(Event),
) -> Result<Outcome, DecodeError> {
    match message {
        Message::Trades(t) => {
            let Some(at) = known(instruments, t.symbol())? else {
                // Not ours; a trade id the venue never sends is still said.
                for x in t.trades() {
                    id(x.id, "id")?;
                }
                return Ok(Outcome::Ignored);
            };
            let (pe, qe) = (t.price_exponent(), t.qty_exponent());
            let exchange_ns = us_to_ns(t.transact_time_us());
            // One message may carry many trades: each is read before any is
            // emitted, so that a message in error emits nothing.
            if let Some(instrument) = instruments.get(at)
                && t.trades().len() > 1
            {
                let (ps, ss) = (instrument.spec.price_scale, instrument.spec.size_scale);
                for x in t.trades() {
                    id(x.id, "id")?;
                    let m = |value, exponent| Mantissa { value, exponent };
                    mantissa::level(m(x.price, pe), m(x.qty, qe), ps, ss)
                        .map_err(|e| DecodeError::from(e).at(at))?;
                }
            }
            let trades = t.trades().map(|x| {
                Ok(WireTrade {
                    symbol: Named::Found(at),
                    price: Mantissa {
                        value: x.price,
                        exponent: pe,
                    },
                    size: Mantissa {
                        value: x.qty,
                        exponent: qe,
                    },
                    // The buyer made the market: the seller took it.
                    aggressor: if x.is_buyer_maker {
                        Aggressor::Sell
                    } else {
                        Aggressor::Buy
                    },
                    trade_id: id(x.id, "id")?,
                    exchange_ns,
                })
            });
            instruments.trades(trades, recv_tsc, emit)
        }
        Message::BestBidAsk(q) => {
            let h = q.head();
            let m = |value, exponent| Mantissa { value, exponent };
            let (pe, qe) = (h.price_exponent, h.qty_exponent);
            let quote = WireQuote {
                bid: (m(h.bid.price, pe), m(h.bid.qty, qe)),
                ask: (m(h.ask.price, pe), m(h.ask.qty, qe)),
                update_id: id(h.book_update_id, "bookUpdateId")?,
                exchange_ns: us_to_ns(h.event_time_us),
            };
            let Some(at) = known(instruments, q.symbol())? else {
                return Ok(Outcome::Ignored);
            };
            instruments.quote_at(at, quote, recv_tsc, emit)
        }
        Message::DepthDiff(d) => {
            let seq = Seq {
                first: id(d.first_update_id(), "firstBookUpdateId")?,
                last: id(d.last_update_id(), "lastBookUpdateId")?,
                prev: None,
            };
            let Some(at) = known(instruments, d.symbol())? else {
                return Ok(Outcome::Ignored);
            };
            instruments.feed_book(
                at,
                us_to_ns(d.event_time_us()),
                recv_tsc,
                emit,
                |spec, sync, emit| {
                    let levels = levels(
                        d.bids(),
                        d.asks(),
                        d.price_exponent(),
                        d.qty_exponent(),
                        spec.price_scale,
                        spec.size_scale,
                    );
                    sync.on_diff(seq, levels, &mut { emit })?;
                    Ok(true)
                },
            )
        }
        // The top 20, whole (see the module's notes), and templates a
        // newer schema may add: not normalised.
        Message::DepthSnapshot(_) | Message::Unknown { .. } => Ok(Outcome::Ignored),
    }
}

#[cfg(test)]
mod tests;
