use super::*;
use crate::book::Window;

fn seq(first: u64, last: u64) -> Seq {
    Seq {
        first,
        last,
        prev: None,
    }
}

pub(super) fn lv(side: Side, p: i64, q: i64) -> LevelResult {
    Ok((side, Level::new(p, q)))
}

pub(super) fn engine(chain: Chain) -> BookSync {
    BookSync::new(
        chain,
        SyncConfig {
            depth: 10,
            keep: 10,
            window: Window::Client,
            max_buffered_diffs: 4,
            max_buffered_levels: 16,
            deepen: false,
        },
    )
}

pub(super) fn run(
    s: &mut BookSync,
    f: impl FnOnce(&mut BookSync, &mut dyn FnMut(SyncEvent)),
) -> Vec<SyncEvent> {
    let mut ev = Vec::new();
    f(s, &mut |e| ev.push(e));
    ev
}

/// A whole two-level snapshot (a bid at `bid`, the ask at 101) with
/// update id `id`, and what it made the engine say.
pub(super) fn snapshot(s: &mut BookSync, id: u64, bid: i64) -> Vec<SyncEvent> {
    run(s, |s, e| {
        s.on_snapshot_at(
            id,
            Limit::Whole,
            [lv(Side::Bid, bid, 1), lv(Side::Ask, 101, 1)],
            &mut { e },
        )
        .unwrap()
    })
}

/// A valid book on `chain`, up to `last`.
fn valid(chain: Chain, last: u64) -> BookSync {
    let mut s = engine(chain);
    run(&mut s, |s, e| {
        s.on_diff(seq(last, last), [], &mut { e }).unwrap();
    });
    let ev = snapshot(&mut s, last - 1, 100);
    assert!(s.is_valid(), "{ev:?}");
    s
}

#[test]
fn a_disconnect_asks_for_a_rest_snapshot_only_once_the_stream_is_back() {
    let mut s = valid(Chain::BinanceSpot, 10);
    let ev = run(&mut s, |s, e| s.disconnected(&mut { e }));
    assert_eq!(ev, [SyncEvent::Gap(Resync::Disconnected)]);
    assert!(s.book().is_none());
    // Said once.
    assert!(run(&mut s, |s, e| s.disconnected(&mut { e })).is_empty());
    // The new connection's first diff (ids moved on meanwhile) asks.
    let ev = run(&mut s, |s, e| {
        s.on_diff(seq(50, 52), [lv(Side::Bid, 99, 3)], &mut { e })
            .unwrap()
    });
    assert_eq!(ev, [SyncEvent::SnapshotNeeded]);
    let ev = snapshot(&mut s, 51, 100);
    assert_eq!(ev, [SyncEvent::Valid { update_id: 52 }]);

    // In band: the venue resends the snapshot on resubscription, so the
    // book is marked as waiting for it at once.
    let mut s = valid(Chain::Bybit, 10);
    let ev = run(&mut s, |s, e| s.disconnected(&mut { e }));
    assert_eq!(
        ev,
        [
            SyncEvent::Gap(Resync::Disconnected),
            SyncEvent::SnapshotNeeded
        ]
    );
}

/// Kraken's adapter holds a book's messages back until its pair's
/// precision is known, then asks for the snapshot: once, and with nothing
/// buffered (it used to feed an empty update, which the snapshot then
/// counted as an old diff).
#[test]
fn a_snapshot_is_requested_once_and_only_for_a_book_waiting_for_one() {
    let mut s = engine(Chain::Kraken);
    let ev = run(&mut s, |s, e| s.request_snapshot(&mut { e }));
    assert_eq!(ev, [SyncEvent::SnapshotNeeded]);
    assert_eq!(s.buffered(), 0);
    assert!(run(&mut s, |s, e| s.request_snapshot(&mut { e })).is_empty());
    // A diff while the snapshot is awaited asks nothing more.
    let ev = run(&mut s, |s, e| {
        s.on_diff(seq(0, 0), [lv(Side::Bid, 99, 1)], &mut { e })
            .unwrap()
    });
    assert!(ev.is_empty(), "{ev:?}");
    let ev = snapshot(&mut s, 0, 100);
    assert_eq!(ev, [SyncEvent::Valid { update_id: 0 }]);
    assert_eq!(s.old_diffs, 1, "the one real diff");
    // A valid book needs no snapshot: left as it is.
    assert!(run(&mut s, |s, e| s.request_snapshot(&mut { e })).is_empty());
    assert!(s.is_valid());
    // A book that asked at its first diff does not ask again.
    let mut s = engine(Chain::BinanceSpot);
    let ev = run(&mut s, |s, e| {
        s.on_diff(seq(5, 8), [lv(Side::Bid, 99, 1)], &mut { e })
            .unwrap()
    });
    assert_eq!(ev, [SyncEvent::SnapshotNeeded]);
    assert!(run(&mut s, |s, e| s.request_snapshot(&mut { e })).is_empty());
    assert_eq!(s.buffered(), 1);
}

#[test]
fn spot_buffers_bridges_and_chains() {
    let mut s = engine(Chain::BinanceSpot);
    let ev = run(&mut s, |s, e| {
        s.on_diff(seq(5, 8), [lv(Side::Bid, 99, 1)], &mut { e })
            .unwrap();
    });
    assert_eq!(ev, [SyncEvent::SnapshotNeeded]);
    run(&mut s, |s, e| {
        s.on_diff(seq(9, 12), [lv(Side::Bid, 98, 2)], &mut { e })
            .unwrap()
    });
    assert!(s.book().is_none(), "nothing before the snapshot");
    // Snapshot at 10: diff 5-8 is old, 9-12 bridges (9 <= 11 <= 12).
    let ev = snapshot(&mut s, 10, 100);
    assert_eq!(ev, [SyncEvent::Valid { update_id: 12 }]);
    assert_eq!(s.old_diffs, 1);
    let book = s.book().unwrap();
    assert_eq!(book.levels(Side::Bid).len(), 2);
    let ev = run(&mut s, |s, e| {
        s.on_diff(seq(13, 13), [lv(Side::Bid, 98, 0)], &mut { e })
            .unwrap()
    });
    assert_eq!(ev, [SyncEvent::Updated { update_id: 13 }]);
    // A gap: 15 instead of 14.
    let ev = run(&mut s, |s, e| {
        s.on_diff(seq(15, 16), [], &mut { e }).unwrap()
    });
    assert_eq!(
        ev,
        [
            SyncEvent::Gap(Resync::Sequence {
                expected: 14,
                got: 15
            }),
            SyncEvent::SnapshotNeeded
        ]
    );
    assert!(s.book().is_none());
    assert_eq!(
        s.buffered(),
        1,
        "the diff after the gap waits for the snapshot"
    );
}

/// Found by the `adapters` fuzz target: a second REST snapshot used to
/// drop a valid book silently (back to bridging, no `Gap`).
#[test]
fn a_rest_snapshot_for_a_valid_book_is_ignored() {
    let mut s = engine(Chain::BinanceFutures);
    run(&mut s, |s, e| {
        s.on_diff(seq(5, 8), [lv(Side::Bid, 99, 1)], &mut { e })
            .unwrap()
    });
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(6, Limit::Whole, [lv(Side::Ask, 101, 1)], &mut { e })
            .unwrap()
    });
    assert_eq!(ev, [SyncEvent::Valid { update_id: 8 }]);
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(7, Limit::Whole, [lv(Side::Ask, 105, 1)], &mut { e })
            .unwrap()
    });
    assert_eq!(ev, []);
    assert_eq!(s.unneeded_snapshots, 1);
    let book = s.book().expect("still valid");
    assert_eq!(book.top().map(|(b, a)| (b.price, a.price)), Some((99, 101)));
}

/// A thin market: a REST snapshot asked for 10 levels a side brings 2.
/// Told the limit, the book knows it has the whole side and shows it;
/// not told, it cannot know what lies below and says so.
#[test]
fn a_snapshot_shorter_than_its_limit_is_the_whole_side_only_if_the_limit_is_known() {
    for (limit, valid) in [(Limit::Levels(10), true), (Limit::Unknown, false)] {
        let mut s = engine(Chain::BinanceSpot);
        run(&mut s, |s, e| s.on_diff(seq(5, 8), [], &mut { e }).unwrap());
        let ev = run(&mut s, |s, e| {
            s.on_snapshot_at(
                6,
                limit,
                [
                    lv(Side::Bid, 100, 1),
                    lv(Side::Bid, 99, 1),
                    lv(Side::Ask, 101, 1),
                    lv(Side::Ask, 102, 1),
                ],
                &mut { e },
            )
            .unwrap()
        });
        if valid {
            assert_eq!(ev, [SyncEvent::Valid { update_id: 8 }], "{limit:?}");
        } else {
            assert_eq!(
                ev,
                [
                    SyncEvent::Gap(Resync::DepthExhausted),
                    SyncEvent::SnapshotNeeded
                ],
                "{limit:?}"
            );
        }
    }
}

#[test]
fn a_stale_snapshot_is_refused() {
    let mut s = engine(Chain::BinanceSpot);
    run(&mut s, |s, e| {
        s.on_diff(seq(20, 25), [], &mut { e }).unwrap()
    });
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(10, Limit::Whole, [], &mut { e }).unwrap()
    });
    assert_eq!(
        ev,
        [
            SyncEvent::Gap(Resync::SnapshotStale {
                snapshot: 10,
                first_diff: 20
            }),
            SyncEvent::SnapshotNeeded
        ]
    );
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(22, Limit::Whole, [lv(Side::Ask, 5, 1)], &mut { e })
            .unwrap()
    });
    assert_eq!(ev, [SyncEvent::Valid { update_id: 25 }]);
}

/// Found by the refresh proptest: a futures snapshot that ends exactly
/// where the first buffered diff starts (`pu == L`, `U == L + 1`) is
/// bridged by it, not refused as stale; one whose `pu` is past `L` is
/// still refused.
#[test]
fn a_futures_diff_starting_just_after_the_snapshot_bridges_it() {
    let futures = |first, last, prev| Seq {
        first,
        last,
        prev: Some(prev),
    };
    let mut s = engine(Chain::BinanceFutures);
    run(&mut s, |s, e| {
        s.on_diff(futures(11, 12, 10), [lv(Side::Bid, 99, 1)], &mut { e })
            .unwrap()
    });
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(10, Limit::Whole, [lv(Side::Ask, 101, 1)], &mut { e })
            .unwrap()
    });
    assert_eq!(ev, [SyncEvent::Valid { update_id: 12 }]);

    let mut s = engine(Chain::BinanceFutures);
    run(&mut s, |s, e| {
        s.on_diff(futures(12, 13, 11), [lv(Side::Bid, 99, 1)], &mut { e })
            .unwrap()
    });
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(10, Limit::Whole, [lv(Side::Ask, 101, 1)], &mut { e })
            .unwrap()
    });
    assert_eq!(
        ev,
        [
            SyncEvent::Gap(Resync::SnapshotStale {
                snapshot: 10,
                first_diff: 12
            }),
            SyncEvent::SnapshotNeeded
        ]
    );
}

#[test]
fn futures_chain_on_pu() {
    let mut s = engine(Chain::BinanceFutures);
    let d = |first, last, prev| Seq {
        first,
        last,
        prev: Some(prev),
    };
    run(&mut s, |s, e| {
        s.on_diff(d(8, 10, 7), [], &mut { e }).unwrap()
    });
    // Futures: U <= L <= u bridges (10 itself).
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(10, Limit::Whole, [], &mut { e }).unwrap()
    });
    assert_eq!(ev, [SyncEvent::Valid { update_id: 10 }]);
    let ev = run(&mut s, |s, e| {
        s.on_diff(d(14, 20, 10), [], &mut { e }).unwrap()
    });
    assert_eq!(
        ev,
        [SyncEvent::Updated { update_id: 20 }],
        "ids may jump; pu must chain"
    );
    let ev = run(&mut s, |s, e| {
        s.on_diff(d(25, 30, 21), [], &mut { e }).unwrap()
    });
    assert_eq!(
        ev[0],
        SyncEvent::Gap(Resync::Sequence {
            expected: 20,
            got: 21
        })
    );
}

#[test]
fn crossed_and_bad_levels_invalidate() {
    let mut s = engine(Chain::BinanceSpot);
    run(&mut s, |s, e| {
        s.on_snapshot_at(
            1,
            Limit::Whole,
            [lv(Side::Bid, 10, 1), lv(Side::Ask, 11, 1)],
            &mut { e },
        )
        .unwrap()
    });
    run(&mut s, |s, e| s.on_diff(seq(2, 2), [], &mut { e }).unwrap());
    assert!(s.is_valid());
    let ev = run(&mut s, |s, e| {
        s.on_diff(seq(3, 3), [lv(Side::Bid, 12, 1)], &mut { e })
            .unwrap()
    });
    assert_eq!(
        ev,
        [SyncEvent::Gap(Resync::Crossed), SyncEvent::SnapshotNeeded]
    );
    run(&mut s, |s, e| {
        s.on_snapshot_at(
            3,
            Limit::Whole,
            [lv(Side::Bid, 10, 1), lv(Side::Ask, 11, 1)],
            &mut { e },
        )
        .unwrap()
    });
    run(&mut s, |s, e| s.on_diff(seq(4, 4), [], &mut { e }).unwrap());
    let bad = Err(DecodeError::Missing("x"));
    let mut ev = Vec::new();
    let r = s.on_diff(seq(5, 5), [lv(Side::Bid, 9, 1), bad], &mut |e| ev.push(e));
    assert_eq!(r, Err(DecodeError::Missing("x")));
    assert_eq!(
        ev,
        [SyncEvent::Gap(Resync::BadLevel), SyncEvent::SnapshotNeeded]
    );
    assert!(s.book().is_none());
}

#[test]
fn a_crossed_in_band_snapshot_is_not_valid() {
    // Found by the fuzzer: a snapshot whose best ask is below its best bid.
    let mut s = engine(Chain::OkxSeq);
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(
            1,
            Limit::Whole,
            [lv(Side::Bid, 100, 1), lv(Side::Ask, 50, 1)],
            &mut { e },
        )
        .unwrap()
    });
    assert_eq!(
        ev,
        [SyncEvent::Gap(Resync::Crossed), SyncEvent::SnapshotNeeded]
    );
    assert!(s.book().is_none());
}

#[test]
fn a_full_buffer_drops_the_oldest_and_the_bridge_check_notices() {
    let mut s = engine(Chain::BinanceSpot);
    for i in 0..6 {
        run(&mut s, |s, e| {
            s.on_diff(seq(10 * i + 1, 10 * i + 10), [lv(Side::Bid, 1, 1)], &mut {
                e
            })
            .unwrap()
        });
    }
    assert_eq!(s.buffered(), 2, "4 fit; the fifth cleared them");
    assert_eq!(s.dropped_diffs, 4);
    // A snapshot from before the dropped diffs cannot be bridged.
    let ev = run(&mut s, |s, e| {
        s.on_snapshot_at(15, Limit::Whole, [], &mut { e }).unwrap()
    });
    assert_eq!(
        ev[0],
        SyncEvent::Gap(Resync::SnapshotStale {
            snapshot: 15,
            first_diff: 41
        })
    );
    // Too many levels for the arena: the diff is dropped, counted.
    let many: Vec<LevelResult> = (0..20).map(|p| lv(Side::Ask, p, 1)).collect();
    let before = s.dropped_diffs;
    run(&mut s, |s, e| {
        s.on_diff(seq(61, 70), many, &mut { e }).unwrap()
    });
    assert!(s.dropped_diffs > before);
    assert_eq!(s.buffered(), 0);
}

/// A book whose ids counted up to `u64::MAX` cannot chain further: the
/// next diff is a gap. (It used to be read as old, in release builds: the
/// book stayed valid while dropping every update; in debug builds the
/// `+ 1` panicked.)
#[test]
fn ids_that_run_out_are_a_gap_not_old_news() {
    for chain in [Chain::Bybit, Chain::BinanceSpot] {
        // Valid up to `u64::MAX - 1` (Bybit's snapshot comes in band).
        let mut s = if chain == Chain::Bybit {
            let mut s = engine(chain);
            snapshot(&mut s, u64::MAX - 1, 100);
            s
        } else {
            valid(chain, u64::MAX - 1)
        };
        let ev = run(&mut s, |s, e| {
            s.on_diff(seq(u64::MAX, u64::MAX), [], &mut { e }).unwrap()
        });
        assert_eq!(
            ev,
            [SyncEvent::Updated {
                update_id: u64::MAX
            }]
        );
        let ev = run(&mut s, |s, e| {
            s.on_diff(seq(0, 0), [lv(Side::Bid, 99, 1)], &mut { e })
                .unwrap()
        });
        assert_eq!(
            ev,
            [
                SyncEvent::Gap(Resync::Sequence {
                    expected: u64::MAX,
                    got: 0
                }),
                SyncEvent::SnapshotNeeded
            ],
            "{chain:?}"
        );
        assert!(!s.is_valid());
    }
    // A REST snapshot at `u64::MAX`: no diff can be newer, so none
    // bridges it; it is stale at the first diff, not waited on forever.
    let mut s = engine(Chain::BinanceSpot);
    run(&mut s, |s, e| s.on_diff(seq(7, 9), [], &mut { e }).unwrap());
    assert!(snapshot(&mut s, u64::MAX, 100).iter().any(|e| matches!(
        e,
        SyncEvent::Gap(Resync::SnapshotStale {
            snapshot: u64::MAX,
            ..
        })
    )));
    let ev = snapshot(&mut s, u64::MAX, 100);
    assert!(
        matches!(ev[0], SyncEvent::Gap(Resync::SnapshotStale { .. })),
        "{ev:?}"
    );
    // The connection-wide sequence: nothing follows `u64::MAX`.
    let mut c = ConnectionSeq::default();
    assert_eq!(c.check(u64::MAX), Ok(()));
    assert_eq!(
        c.check(0),
        Err(Resync::Sequence {
            expected: u64::MAX,
            got: 0
        })
    );
    assert_eq!(c.check(1), Ok(()));
}

proptest::proptest! {
    /// Whatever the ids (near `u64::MAX` too, where a venue's counter
    /// would wrap), a book that says it is valid is the venue's book: the
    /// venue here sends a snapshot and then one diff per id, counting up
    /// as a `u64` in the venue's own (wrapping) arithmetic.
    #[test]
    fn a_valid_book_is_the_venues_even_where_ids_run_out(
        start in proptest::prop_oneof![
            proptest::strategy::Just(u64::MAX),
            (u64::MAX - 24)..=u64::MAX,
            0u64..4,
        ],
        changes in proptest::collection::vec((proptest::bool::ANY, 1i64..6, 0i64..3), 1..32),
        bybit: bool,
    ) {
        use std::collections::BTreeMap;
        let chain = if bybit { Chain::Bybit } else { Chain::BinanceSpot };
        let mut s = engine(chain);
        let mut truth: BTreeMap<(bool, i64), i64> = BTreeMap::new();
        truth.insert((true, 1), 1);
        truth.insert((false, 101), 1);
        if chain == Chain::BinanceSpot {
            // A diff first asks for the REST snapshot; it is old by then.
            run(&mut s, |s, e| s.on_diff(seq(start, start), [], &mut { e }).unwrap());
        }
        snapshot(&mut s, start, 1);
        let mut id = start;
        for (bid, p, q) in changes {
            id = id.wrapping_add(1);
            let (side, price) = if bid { (Side::Bid, p) } else { (Side::Ask, 100 + p) };
            if q == 0 {
                truth.remove(&(bid, price));
            } else {
                truth.insert((bid, price), q);
            }
            run(&mut s, |s, e| s.on_diff(seq(id, id), [lv(side, price, q)], &mut { e }).unwrap());
            if let Some(book) = s.book().filter(|_| s.is_valid()) {
                let ours: BTreeMap<(bool, i64), i64> = [Side::Bid, Side::Ask]
                    .into_iter()
                    .flat_map(|side| book.levels(side).iter().map(move |l| ((side == Side::Bid, l.price), l.size)).collect::<Vec<_>>())
                    .collect();
                proptest::prop_assert_eq!(&ours, &truth, "valid at id {} ({:?}) but not the venue's book", id, chain);
            }
        }
    }
}
