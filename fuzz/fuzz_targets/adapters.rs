//! Every venue adapter on arbitrary bytes, with an oracle: a consumer that
//! rebuilds each book from the emitted events alone must hold exactly the
//! adapter's book after every message, and the events must keep their
//! promises (a snapshot's levels, then `BookValid`; no delta for a book
//! that is not valid). Errors are fine; panics and disagreements are not.
//!
//! The first byte picks the adapter (mod 7: Binance spot, Binance USD-M,
//! OKX, Bybit, Kraken v2, Coinbase, Deribit) and the scales; the rest is
//! messages separated by newlines. An empty line is a disconnect. For
//! Binance a line holding `lastUpdateId` is the REST snapshot of the first
//! instrument.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use tickwire_venues::book::{Book, Side};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{
    Event, InstrumentId, InstrumentSpec, Kind, VenueAdapter, binance, bybit, coinbase, deribit,
    kraken, okx,
};

#[derive(Default)]
struct Rebuilt {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
    depth: usize,
    pending: u32,
    valid: bool,
}

#[derive(Default)]
struct Consumer {
    books: BTreeMap<InstrumentId, Rebuilt>,
}

impl Consumer {
    fn on(&mut self, e: &Event) {
        let b = self.books.entry(e.instrument).or_default();
        match e.kind {
            Kind::BookSnapshot {
                bids, asks, depth, ..
            } => {
                *b = Rebuilt {
                    depth: depth as usize,
                    pending: bids + asks,
                    ..Rebuilt::default()
                };
            }
            Kind::BookDelta {
                side, price, size, ..
            } => {
                assert!(b.valid || b.pending > 0, "a delta for a book not valid");
                b.pending = b.pending.saturating_sub(1);
                let ladder = match side {
                    Side::Bid => &mut b.bids,
                    Side::Ask => &mut b.asks,
                };
                if size == 0 {
                    ladder.remove(&price);
                } else {
                    ladder.insert(price, size);
                }
                while ladder.len() > b.depth {
                    match side {
                        Side::Bid => ladder.pop_first(),
                        Side::Ask => ladder.pop_last(),
                    };
                }
            }
            Kind::BookValid { .. } => {
                assert_eq!(b.pending, 0, "BookValid before the snapshot's levels");
                b.valid = true;
            }
            Kind::Gap { .. } => b.valid = false,
            _ => {}
        }
    }

    fn check<'a>(&self, book_of: impl Fn(InstrumentId) -> Option<&'a Book>) {
        for (&id, b) in &self.books {
            let book = book_of(id);
            assert_eq!(
                book.is_some(),
                b.valid,
                "{id:?}: valid in events and adapter"
            );
            let Some(book) = book else { continue };
            assert!(!book.is_crossed(), "a valid book is never crossed");
            let theirs = |side| -> Vec<(i64, i64)> {
                book.levels(side)
                    .iter()
                    .map(|l| (l.price, l.size))
                    .collect()
            };
            let bids: Vec<_> = b.bids.iter().rev().map(|(&p, &s)| (p, s)).collect();
            let asks: Vec<_> = b.asks.iter().map(|(&p, &s)| (p, s)).collect();
            assert_eq!(bids, theirs(Side::Bid));
            assert_eq!(asks, theirs(Side::Ask));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, data)) = data.split_first() else {
        return;
    };
    let (ps, ss) = ((pick >> 3) % 10, (pick >> 5) % 9);
    let spec = |symbols: &[&str]| -> Vec<InstrumentSpec> {
        symbols
            .iter()
            .map(|s| InstrumentSpec::new(s, ps, ss, 8))
            .collect()
    };
    let venue = pick % 7;
    let mut binance = match venue {
        0 => Some(binance::Adapter::new(
            binance::Market::Spot,
            &spec(&["BTCUSDT", "BNBBTC"]),
        )),
        1 => Some(binance::Adapter::new(
            binance::Market::UsdM,
            &spec(&["BTCUSDT", "BNBBTC"]),
        )),
        _ => None,
    };
    let mut other: Option<Box<dyn VenueAdapter>> = match venue {
        2 => Some(Box::new(okx::Adapter::new(&spec(&[
            "BTC-USDT", "ETH-USDT",
        ])))),
        3 => Some(Box::new(bybit::Adapter::new(&spec(&[
            "BTCUSDT", "ETHUSDT",
        ])))),
        4 => Some(Box::new(kraken::v2::Adapter::new(&spec(&[
            "BTC/USD", "ETH/USD",
        ])))),
        5 => Some(Box::new(coinbase::Adapter::new(&spec(&[
            "BTC-USD", "ETH-USD",
        ])))),
        6 => Some(Box::new(deribit::Adapter::new(&spec(&[
            "BTC-PERPETUAL",
            "ETH-PERPETUAL",
        ])))),
        _ => None,
    };
    let mut consumer = Consumer::default();
    for msg in data.split(|&b| b == b'\n') {
        let mut buf = msg.to_vec();
        buf.resize(msg.len() + INPUT_PADDING, 0);
        let mut events = Vec::new();
        let mut emit = |e: Event| events.push(e);
        if let Some(a) = binance.as_mut() {
            if msg.is_empty() {
                a.on_disconnect(0, &mut emit);
            } else if msg.windows(14).any(|w| w == b"\"lastUpdateId\"") {
                let _ = a.on_snapshot(InstrumentId(0), &mut buf, msg.len(), 0, &mut emit);
            } else {
                let _ = a.on_message(&mut buf, msg.len(), 0, &mut emit);
            }
        } else if let Some(a) = other.as_mut() {
            if msg.is_empty() {
                a.on_disconnect(0, &mut emit);
            } else {
                let _ = a.on_message(&mut buf, msg.len(), 0, &mut emit);
            }
        }
        for e in &events {
            consumer.on(e);
        }
        match (&binance, &other) {
            (Some(a), _) => consumer.check(|id| a.book(id)),
            (_, Some(a)) => consumer.check(|id| a.book(id)),
            _ => {}
        }
    }
});
