//! Books rebuilt from the feed's events alone, as any consumer of them
//! would keep them (the rules in `tickwire_venues::event`): the demo and
//! the tests compare these with the simulator's books, so what is checked
//! is the whole way from the wire to the events, not an adapter's insides.

use std::collections::BTreeMap;

use tickwire_venues::Kind;
use tickwire_venues::book::Side;

use crate::id::Event;

/// One instrument's book as its events tell it.
#[derive(Clone, Debug, Default)]
struct Mirror {
    /// Levels shown a side, from the last `BookSnapshot`.
    depth: usize,
    /// A snapshot began since the book was last reset or lost: only then
    /// can a `BookValid` make it valid.
    snapshot: bool,
    valid: bool,
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
}

/// Every instrument's mirrored book, by global instrument id.
#[derive(Clone, Debug)]
pub struct Mirrors {
    books: Vec<Mirror>,
}

impl Mirrors {
    /// Books for instruments `0..instruments`.
    pub fn new(instruments: usize) -> Mirrors {
        Mirrors {
            books: vec![Mirror::default(); instruments],
        }
    }

    /// Applies one event.
    pub fn apply(&mut self, e: &Event) {
        let Some(m) = self.books.get_mut(e.instrument.0 as usize) else {
            return;
        };
        match e.kind {
            Kind::BookSnapshot { depth, .. } => {
                m.bids.clear();
                m.asks.clear();
                m.depth = depth as usize;
                m.snapshot = true;
                m.valid = false;
            }
            Kind::BookDelta {
                side, price, size, ..
            } => {
                let levels = match side {
                    Side::Bid => &mut m.bids,
                    Side::Ask => &mut m.asks,
                };
                if size == 0 {
                    levels.remove(&price);
                } else {
                    levels.insert(price, size);
                }
                // Keep the best `depth`: the worst bid is the lowest, the
                // worst ask the highest.
                while levels.len() > m.depth {
                    let worst = match side {
                        Side::Bid => levels.keys().next().copied(),
                        Side::Ask => levels.keys().next_back().copied(),
                    };
                    if let Some(w) = worst {
                        levels.remove(&w);
                    }
                }
            }
            // Valid only over a snapshot: a reader that lost events (and
            // reset its books) may see a `BookValid` whose snapshot it
            // missed.
            Kind::BookValid { .. } => m.valid = m.snapshot,
            Kind::Gap { .. } => {
                m.snapshot = false;
                m.valid = false;
                m.bids.clear();
                m.asks.clear();
            }
            _ => {}
        }
    }

    /// Whether instrument `id`'s book is valid.
    pub fn valid(&self, id: usize) -> bool {
        self.books.get(id).is_some_and(|m| m.valid)
    }

    /// Instrument `id`'s levels on `side`, best first, while valid.
    pub fn levels(&self, id: usize, side: Side) -> Option<Vec<(i64, i64)>> {
        let m = self.books.get(id).filter(|m| m.valid)?;
        Some(match side {
            Side::Bid => m.bids.iter().rev().map(|(p, s)| (*p, *s)).collect(),
            Side::Ask => m.asks.iter().map(|(p, s)| (*p, *s)).collect(),
        })
    }

    /// Levels shown a side by instrument `id`'s last snapshot.
    pub fn depth(&self, id: usize) -> usize {
        self.books.get(id).map_or(0, |m| m.depth)
    }
}

#[cfg(test)]
mod tests {
    use crate::id::{Event, FeedId};
    use tickwire_venues::sync::Resync;

    use super::*;

    fn ev(kind: Kind) -> Event {
        Event {
            instrument: FeedId(1),
            exchange_ns: 0,
            recv_tsc: 0,
            kind,
        }
    }

    fn delta(side: Side, price: i64, size: i64) -> Event {
        ev(Kind::BookDelta {
            side,
            price,
            size,
            update_id: 1,
            last: false,
        })
    }

    #[test]
    fn a_book_follows_its_events_and_keeps_its_depth() {
        let mut m = Mirrors::new(2);
        m.apply(&ev(Kind::BookSnapshot {
            update_id: 1,
            bids: 2,
            asks: 1,
            depth: 2,
        }));
        for e in [
            delta(Side::Bid, 10, 1),
            delta(Side::Bid, 9, 1),
            delta(Side::Ask, 11, 1),
        ] {
            m.apply(&e);
        }
        assert!(!m.valid(1) && m.levels(1, Side::Bid).is_none());
        m.apply(&ev(Kind::BookValid { update_id: 1 }));
        assert_eq!(m.levels(1, Side::Bid), Some(vec![(10, 1), (9, 1)]));
        // A better bid pushes the worst out; a removal lets nothing back.
        m.apply(&delta(Side::Bid, 12, 3));
        assert_eq!(m.levels(1, Side::Bid), Some(vec![(12, 3), (10, 1)]));
        m.apply(&delta(Side::Ask, 13, 2));
        m.apply(&delta(Side::Ask, 14, 2));
        assert_eq!(m.levels(1, Side::Ask), Some(vec![(11, 1), (13, 2)]));
        m.apply(&ev(Kind::Gap {
            why: Resync::Crossed,
        }));
        assert!(!m.valid(1) && m.levels(1, Side::Ask).is_none());
        assert_eq!(m.depth(1), 2);
        assert!(!m.valid(0) && !m.valid(7));
    }

    /// A reader that lost events (a gap, or books reset) and then sees a
    /// `BookValid` whose snapshot it missed keeps the book invalid.
    #[test]
    fn book_valid_without_its_snapshot_does_not_make_a_book_valid() {
        let mut m = Mirrors::new(2);
        m.apply(&delta(Side::Bid, 100, 1));
        m.apply(&ev(Kind::BookValid { update_id: 1 }));
        assert!(!m.valid(1), "no snapshot seen since the start");
        m.apply(&ev(Kind::BookSnapshot {
            update_id: 2,
            bids: 1,
            asks: 0,
            depth: 5,
        }));
        m.apply(&delta(Side::Bid, 100, 1));
        m.apply(&ev(Kind::BookValid { update_id: 2 }));
        assert!(m.valid(1));
        m.apply(&ev(Kind::Gap {
            why: Resync::Disconnected,
        }));
        m.apply(&ev(Kind::BookValid { update_id: 3 }));
        assert!(!m.valid(1), "a gap since the snapshot");
    }
}
