use std::collections::BTreeMap;

use super::super::tests::{lv, run};
use super::super::{BookSync, Chain, LevelResult, Seq, SyncConfig, SyncEvent};
use crate::book::{Limit, Side, Window};

/// Shows 2 levels a side, keeps 8: a refresh is asked for once a side
/// with a horizon knows fewer than 5.
fn engine(chain: Chain) -> BookSync {
    BookSync::new(
        chain,
        SyncConfig {
            depth: 2,
            keep: 8,
            window: Window::Client,
            max_buffered_diffs: 64,
            max_buffered_levels: 256,
            deepen: true,
        },
    )
}

fn seq(first: u64, last: u64) -> Seq {
    Seq {
        first,
        last,
        prev: None,
    }
}

/// The venue's book: price -> size, bids below asks.
#[derive(Clone, Default)]
struct Truth {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
}

impl Truth {
    fn new(bids: std::ops::RangeInclusive<i64>, asks: std::ops::RangeInclusive<i64>) -> Truth {
        Truth {
            bids: bids.map(|p| (p, 1)).collect(),
            asks: asks.map(|p| (p, 1)).collect(),
        }
    }

    fn set(&mut self, side: Side, price: i64, size: i64) {
        let map = match side {
            Side::Bid => &mut self.bids,
            Side::Ask => &mut self.asks,
        };
        if size == 0 {
            map.remove(&price);
        } else {
            map.insert(price, size);
        }
    }

    /// The REST snapshot: the best `limit` levels a side.
    fn snapshot(&self, limit: usize) -> Vec<LevelResult> {
        let bids = self
            .bids
            .iter()
            .rev()
            .take(limit)
            .map(|(&p, &q)| lv(Side::Bid, p, q));
        let asks = self
            .asks
            .iter()
            .take(limit)
            .map(|(&p, &q)| lv(Side::Ask, p, q));
        bids.chain(asks).collect()
    }

    fn shown(&self, depth: usize) -> [Vec<(i64, i64)>; 2] {
        [
            self.bids
                .iter()
                .rev()
                .take(depth)
                .map(|(&p, &q)| (p, q))
                .collect(),
            self.asks
                .iter()
                .take(depth)
                .map(|(&p, &q)| (p, q))
                .collect(),
        ]
    }
}

fn shown(s: &BookSync) -> Option<[Vec<(i64, i64)>; 2]> {
    let book = s.book()?;
    Some([Side::Bid, Side::Ask].map(|side| {
        book.levels(side)
            .iter()
            .map(|l| (l.price, l.size))
            .collect()
    }))
}

/// The ask side swept from below, one level a diff: the book asks for a
/// refresh before it knows too few, records what follows, and a snapshot
/// the record bridges deepens it with no gap (one too old for the record
/// is dropped; one ahead of the book waits for the stream).
#[test]
fn a_swept_side_is_deepened_before_it_runs_out_with_no_gap() {
    let mut truth = Truth::new(1..=20, 21..=60);
    let mut s = engine(Chain::BinanceSpot);
    let sweep = |s: &mut BookSync, truth: &mut Truth, id: u64| {
        let best = *truth.asks.keys().next().unwrap();
        truth.set(Side::Ask, best, 0);
        let ev = run(s, |s, e| {
            s.on_diff(seq(id, id), [lv(Side::Ask, best, 0)], &mut { e })
                .unwrap()
        });
        assert_eq!(shown(s).unwrap(), truth.shown(2), "at {id}");
        ev
    };
    run(&mut s, |s, e| {
        s.on_diff(seq(100, 100), [], &mut { e }).unwrap()
    });
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(99, Limit::Levels(8), truth.snapshot(8), &mut { e })
            .unwrap()
    });
    assert_eq!(ev, [SyncEvent::Valid { update_id: 100 }]);
    // Known asks: 7, 6, 5, then 4 at 104: asked for once, at 104.
    let mut said = Vec::new();
    let mut old = None;
    for id in 101..=104 {
        said.extend(sweep(&mut s, &mut truth, id));
        if id == 102 {
            old = Some(truth.snapshot(8));
        }
    }
    assert_eq!(
        said,
        [101, 102, 103]
            .map(|update_id| SyncEvent::Updated { update_id })
            .into_iter()
            .chain([
                SyncEvent::RefreshNeeded,
                SyncEvent::Updated { update_id: 104 }
            ])
            .collect::<Vec<_>>()
    );
    // A snapshot taken at 102, before the ask: the record starts after
    // 104, so nothing brings it up. Dropped; asked for again later, not
    // at once.
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(102, Limit::Levels(8), old.unwrap(), &mut { e })
            .unwrap()
    });
    assert!(ev.is_empty(), "{ev:?}");
    assert_eq!(s.refreshes(), (0, 1));
    // Held back for the next 8 diffs (the venue's snapshots may lag):
    // no ask, though the side still knows too few levels.
    for id in 105..=112 {
        truth.set(Side::Bid, 20, id as i64);
        let ev = run(&mut s, |s, e| {
            s.on_diff(seq(id, id), [lv(Side::Bid, 20, id as i64)], &mut { e })
                .unwrap()
        });
        assert_eq!(ev, [SyncEvent::Updated { update_id: id }], "at {id}");
    }
    let ev = sweep(&mut s, &mut truth, 113);
    assert_eq!(
        ev,
        [
            SyncEvent::RefreshNeeded,
            SyncEvent::Updated { update_id: 113 }
        ]
    );
    // Taken at 113, delivered after 114: the recorded 114 brings it up.
    let levels = truth.snapshot(8);
    truth.set(Side::Bid, 20, 7);
    run(&mut s, |s, e| {
        s.on_diff(seq(114, 114), [lv(Side::Bid, 20, 7)], &mut { e })
            .unwrap()
    });
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(113, Limit::Levels(8), levels, &mut { e })
            .unwrap()
    });
    assert!(ev.is_empty(), "{ev:?}");
    assert_eq!(s.refreshes(), (1, 1));
    assert_eq!(s.book().unwrap().kept(Side::Ask).len(), 8, "deepened");
    assert_eq!(shown(&s).unwrap(), truth.shown(2));
    // Swept again to 4 known asks at 118 (a refresh that went through
    // holds nothing back).
    for id in 115..=118 {
        sweep(&mut s, &mut truth, id);
    }
    // A snapshot ahead of the book, at 119: in step once 119 comes.
    let mut ahead = truth.clone();
    let best = *ahead.asks.keys().next().unwrap();
    ahead.set(Side::Ask, best, 0);
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(119, Limit::Levels(8), ahead.snapshot(8), &mut { e })
            .unwrap()
    });
    assert!(ev.is_empty(), "{ev:?}");
    assert_eq!(s.refreshes(), (1, 1), "waits for 119");
    let ev = sweep(&mut s, &mut truth, 119);
    assert_eq!(ev, [SyncEvent::Updated { update_id: 119 }]);
    assert_eq!(s.refreshes(), (2, 1));
    assert_eq!(s.book().unwrap().kept(Side::Ask).len(), 8);
}

/// A refresh snapshot whose strings carry other digit counts than the
/// stream's (a trailing zero more) holds the same book: swapped in.
#[test]
fn a_refresh_snapshot_written_with_other_digits_is_the_same_book() {
    let mut truth = Truth::new(1..=20, 21..=60);
    let mut s = engine(Chain::BinanceSpot);
    run(&mut s, |s, e| {
        s.on_diff(seq(100, 100), [], &mut { e }).unwrap()
    });
    run(&mut s, |s, e| {
        s.on_snapshot_at(99, Limit::Levels(8), truth.snapshot(8), &mut { e })
            .unwrap()
    });
    for id in 101..=104 {
        let best = *truth.asks.keys().next().unwrap();
        truth.set(Side::Ask, best, 0);
        run(&mut s, |s, e| {
            s.on_diff(seq(id, id), [lv(Side::Ask, best, 0)], &mut { e })
                .unwrap()
        });
    }
    let digits = truth.snapshot(8).into_iter().map(|l| {
        l.map(|(side, level)| {
            (
                side,
                crate::book::Level {
                    price_digits: 3,
                    size_digits: 8,
                    ..level
                },
            )
        })
    });
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(104, Limit::Levels(8), digits, &mut { e })
            .unwrap()
    });
    assert!(ev.is_empty(), "{ev:?}");
    assert_eq!(s.refreshes(), (1, 0));
    assert_eq!(s.book().unwrap().kept(Side::Ask).len(), 8);
}

/// A book not set to deepen, or that keeps no more than it shows, or
/// whose snapshots come in band, never asks.
#[test]
fn only_books_that_track_a_horizon_ask() {
    let truth = Truth::new(1..=3, 4..=6);
    for (chain, keep, deepen) in [
        (Chain::BinanceSpot, 8, false),
        (Chain::BinanceSpot, 2, true),
        (Chain::Deribit, 8, true),
    ] {
        let mut s = BookSync::new(
            chain,
            SyncConfig {
                depth: 2,
                keep,
                window: Window::Client,
                max_buffered_diffs: 64,
                max_buffered_levels: 256,
                deepen,
            },
        );
        run(&mut s, |s, e| {
            s.on_diff(seq(10, 10), [], &mut { e }).unwrap()
        });
        run(&mut s, |s, e| {
            s.on_snapshot_at(9, Limit::Levels(8), truth.snapshot(8), &mut { e })
                .unwrap()
        });
        let ev = run(&mut s, |s, e| {
            s.on_diff(seq(11, 11), [lv(Side::Ask, 4, 0)], &mut { e })
                .unwrap()
        });
        assert!(
            !ev.contains(&SyncEvent::RefreshNeeded),
            "{chain:?} {keep}: {ev:?}"
        );
    }
}

proptest::proptest! {
    /// A venue whose book is swept level by level, snapshots fetched
    /// whenever the engine asks (a refresh, or a recovery), each taken
    /// `take` diffs after the ask and delivered `deliver` diffs after it
    /// (so before the book reaches it, or after): whenever the book says
    /// it is valid it shows the venue's best levels, on both chains.
    #[test]
    fn a_refreshed_book_is_the_venues_whenever_it_is_valid(
        steps in proptest::collection::vec((0u8..6, 0i64..60, 0i64..4), 1..160),
        take in 0u64..4,
        deliver in 0u64..6,
        futures: bool,
    ) {
        let chain = if futures { Chain::BinanceFutures } else { Chain::BinanceSpot };
        // The venue first: every diff, and its book after each.
        let mut truth = Truth::new(1..=40, 61..=100);
        let start = 1000u64;
        let mut history = vec![truth.clone()];
        let mut diffs = Vec::new();
        for (kind, at, q) in steps {
            let best_bid = truth.bids.keys().next_back().copied().unwrap_or(0);
            let best_ask = truth.asks.keys().next().copied().unwrap_or(200);
            let (side, price, size) = match kind {
                // Sweeps: the best level taken.
                0 | 1 if truth.asks.len() > 1 => (Side::Ask, best_ask, 0),
                2 if truth.bids.len() > 1 => (Side::Bid, best_bid, 0),
                // New levels behind the best (deep ones too).
                3 => (Side::Bid, (best_ask - 1 - at).max(1), q + 1),
                4 => (Side::Ask, (best_bid + 1 + at).min(199), q + 1),
                _ => (Side::Bid, best_bid, q),
            };
            if (side == Side::Bid && price >= best_ask) || (side == Side::Ask && price <= best_bid) {
                continue;
            }
            truth.set(side, price, size);
            history.push(truth.clone());
            diffs.push((side, price, size));
        }
        let last = start + diffs.len() as u64;
        let state = |id: u64| &history[(id - start) as usize];
        // The engine: a diff, then the snapshot just before it.
        let mut s = engine(chain);
        let seq_of = |id: u64| Seq { first: id, last: id, prev: Some(id - 1) };
        let mut pending: Option<(u64, u64)> = None;
        let ask = |at: u64, pending: &mut Option<(u64, u64)>| {
            if pending.is_none() {
                *pending = Some(((at + take).min(last), at + deliver));
            }
        };
        ask(start, &mut pending);
        let (mut asked, mut gaps) = (false, 0);
        for (n, &(side, price, size)) in diffs.iter().enumerate() {
            let id = start + 1 + n as u64;
            let ev = run(&mut s, |s, e| s.on_diff(seq_of(id), [lv(side, price, size)], &mut { e }).unwrap());
            asked |= ev.contains(&SyncEvent::RefreshNeeded);
            gaps += ev.iter().filter(|e| matches!(e, SyncEvent::Gap(_))).count();
            if ev.contains(&SyncEvent::RefreshNeeded) || ev.contains(&SyncEvent::SnapshotNeeded) {
                ask(id, &mut pending);
            }
            if let Some((snap, when)) = pending
                && id >= when
            {
                pending = None;
                let ev = run(&mut s, |s, e| {
                    s.on_snapshot_at(snap, Limit::Levels(8), state(snap).snapshot(8), &mut { e }).unwrap()
                });
                if ev.contains(&SyncEvent::SnapshotNeeded) {
                    ask(id, &mut pending);
                }
            }
            if let Some(book) = shown(&s) {
                proptest::prop_assert_eq!(&book, &state(id).shown(2), "valid at {} but not the venue's", id);
            }
        }
        // And live: a snapshot taken and handed over at once deepens the
        // book before it runs out, every time (one level a diff at most is
        // swept; a refresh is asked for with three to spare).
        if take == 0 && deliver == 0 {
            proptest::prop_assert_eq!(gaps, 0);
            proptest::prop_assert!(!asked || s.refreshes().0 > 0);
            proptest::prop_assert!(s.is_valid());
        }
    }
}
