//! What the venue modules' tests share: a market to start from, a message
//! handed to an adapter as a feed hands it, and a book kept from the
//! adapter's events as a consumer keeps it. (A market step is the
//! server's own, [`Market::step`].)

use std::collections::BTreeMap;

use tickwire_venues::book::Side;
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{Event, Kind, Outcome, VenueAdapter};

use crate::market::Levels;
pub(crate) use crate::protocol::{market, market_of};

/// Hands `text` to `adapter` as a feed does: its bytes followed by
/// [`INPUT_PADDING`] writable ones. Its events are added to `events`; a
/// message the adapter cannot decode fails the test, naming it (the first
/// 2000 bytes of it: a Coinbase snapshot has megabytes).
pub(crate) fn deliver(
    adapter: &mut impl VenueAdapter,
    text: &str,
    events: &mut Vec<Event>,
) -> Outcome {
    let mut buf = Vec::with_capacity(text.len() + INPUT_PADDING);
    buf.extend_from_slice(text.as_bytes());
    buf.resize(text.len() + INPUT_PADDING, 0);
    adapter
        .on_message(&mut buf, text.len(), 0, &mut |e| events.push(e))
        .unwrap_or_else(|e| {
            let shown = text.get(..2000).unwrap_or(text);
            panic!("{e}: {shown} ({} bytes)", text.len())
        })
}

/// The books a consumer of the adapter's events keeps, as
/// `tickwire_venues::event` tells it to: a `BookSnapshot` starts a book
/// afresh, keeping the `depth` it says (which must be the depth the test
/// shows the instrument at), each `BookDelta` sets a level and cuts its
/// side back to that depth, a `Gap` forgets the book.
pub(crate) struct Consumer {
    /// The shown depth of each instrument.
    depths: Vec<usize>,
    books: BTreeMap<u32, [BTreeMap<i64, i64>; 2]>,
}

impl Consumer {
    /// A consumer of instruments shown at `depths`, holding no book yet.
    pub(crate) fn new(depths: impl IntoIterator<Item = usize>) -> Consumer {
        Consumer {
            depths: depths.into_iter().collect(),
            books: BTreeMap::new(),
        }
    }

    pub(crate) fn on(&mut self, e: &Event) {
        let n = e.instrument.0;
        match e.kind {
            Kind::BookSnapshot { depth, .. } => {
                assert_eq!(depth as usize, self.depths[n as usize], "{e:?}");
                self.books.insert(n, Default::default());
            }
            Kind::BookDelta {
                side, price, size, ..
            } => {
                let Some(book) = self.books.get_mut(&n) else {
                    panic!("a delta before any snapshot: {e:?}")
                };
                let levels = &mut book[side as usize];
                if size == 0 {
                    levels.remove(&price);
                } else {
                    levels.insert(price, size);
                }
                while levels.len() > self.depths[n as usize] {
                    let worst = match side {
                        Side::Bid => *levels.keys().next().expect("not empty"),
                        Side::Ask => *levels.keys().next_back().expect("not empty"),
                    };
                    levels.remove(&worst);
                }
            }
            Kind::Gap { .. } => {
                self.books.remove(&n);
            }
            _ => {}
        }
    }

    /// Instrument `n`'s book, bids and asks best first; `None` before its
    /// first snapshot and after a gap.
    pub(crate) fn levels(&self, n: usize) -> Option<(Levels, Levels)> {
        let [bids, asks] = self.books.get(&(n as u32))?;
        Some((
            bids.iter().rev().map(|(p, s)| (*p, *s)).collect(),
            asks.iter().map(|(p, s)| (*p, *s)).collect(),
        ))
    }
}
