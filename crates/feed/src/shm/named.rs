//! An event as a reader shows it: its instrument's venue and symbol, and
//! its prices and sizes as decimals with the instrument's decimals
//! (`binance-spot BTCUSDT trade 61737.63 x 0.00123000 buy`). Formatting
//! writes straight into the formatter, allocating nothing.

use std::fmt;

use tickwire_venues::book::Side;
use tickwire_venues::decimal::format_wire;
use tickwire_venues::event::{Aggressor, Kind};

use crate::id::Event;

use super::RingInstrument;

/// A value at a scale, shown as an exact decimal with `scale` decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaled {
    /// The value, in units of 10^-scale.
    pub value: i64,
    /// Its decimals.
    pub scale: u8,
}

impl fmt::Display for Scaled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 48];
        let (n, _) = format_wire(self.value, self.scale, self.scale, &mut buf);
        // Digits, a point and a sign: ASCII.
        f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)
    }
}

impl RingInstrument {
    /// A price of this instrument, as a decimal.
    pub fn price(&self, value: i64) -> Scaled {
        Scaled {
            value,
            scale: self.price_scale,
        }
    }

    /// A size of this instrument, as a decimal.
    pub fn size(&self, value: i64) -> Scaled {
        Scaled {
            value,
            scale: self.size_scale,
        }
    }

    /// `event` (one of this instrument's) as one line of text.
    pub fn describe<'a>(&'a self, event: &'a Event) -> Described<'a> {
        Described {
            instrument: self,
            event,
        }
    }
}

/// An event with its instrument's names and decimals: see
/// [`RingInstrument::describe`].
pub struct Described<'a> {
    instrument: &'a RingInstrument,
    event: &'a Event,
}

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.instrument;
        let side = |s| match s {
            Side::Bid => "bid",
            Side::Ask => "ask",
        };
        write!(f, "{} {} ", i.venue, i.symbol)?;
        match self.event.kind {
            Kind::Trade {
                price,
                size,
                aggressor,
                trade_id,
            } => {
                let aggressor = match aggressor {
                    Aggressor::Buy => "buy",
                    Aggressor::Sell => "sell",
                    Aggressor::Unknown => "unknown",
                };
                write!(
                    f,
                    "trade {} x {} {aggressor} #{trade_id}",
                    i.price(price),
                    i.size(size)
                )
            }
            Kind::Quote {
                bid_price,
                bid_size,
                ask_price,
                ask_size,
                ..
            } => write!(
                f,
                "quote {} x {} / {} x {}",
                i.price(bid_price),
                i.size(bid_size),
                i.price(ask_price),
                i.size(ask_size)
            ),
            Kind::BookSnapshot {
                update_id,
                bids,
                asks,
                depth,
            } => write!(
                f,
                "book_snapshot #{update_id}: {bids} bids, {asks} asks follow (depth {depth})"
            ),
            Kind::BookDelta {
                side: s,
                price,
                size,
                last,
                ..
            } => write!(
                f,
                "book_delta {} {} x {}{}",
                side(s),
                i.price(price),
                i.size(size),
                if last { " (last)" } else { "" }
            ),
            Kind::BookValid { update_id } => write!(f, "book_valid #{update_id}"),
            Kind::Gap { why } => write!(f, "gap {why:?}"),
            Kind::Rejected { code } => write!(f, "rejected {code}"),
            Kind::Resync => f.write_str("resync"),
            Kind::Disconnected => f.write_str("disconnected"),
            other => write!(f, "{other:?}"),
        }
    }
}
