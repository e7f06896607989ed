use super::*;
use crate::book::Side;
use crate::sync::Seq;
use crate::sync::tests::{engine, lv, run, snapshot};

/// A Binance spot diff with one bid level: ids `first..=last`.
fn diff(s: &mut BookSync, line: Line, first: u64, last: u64, price: i64) -> Vec<SyncEvent> {
    s.set_line(line);
    let seq = Seq {
        first,
        last,
        prev: None,
    };
    run(s, |s, e| {
        s.on_diff(seq, [lv(Side::Bid, price, 1)], &mut { e })
            .unwrap()
    })
}

/// A Binance futures diff with one bid level at `u`: ids `pu + 1..=u`, its
/// `pu` the previous diff's `u`.
fn futures(s: &mut BookSync, line: Line, pu: u64, u: u64) -> Vec<SyncEvent> {
    s.set_line(line);
    let seq = Seq {
        first: pu + 1,
        last: u,
        prev: Some(pu),
    };
    run(s, |s, e| {
        s.on_diff(seq, [lv(Side::Bid, u as i64, 1)], &mut { e })
            .unwrap()
    })
}

/// An OKX book update with one bid level: `seqId` `id`, `prevSeqId`
/// `prev`.
fn okx(s: &mut BookSync, line: Line, prev: u64, id: u64) -> Vec<SyncEvent> {
    s.set_line(line);
    let seq = Seq {
        first: id,
        last: id,
        prev: Some(prev),
    };
    run(s, |s, e| {
        s.on_diff(seq, [lv(Side::Bid, 90 + id as i64, 1)], &mut { e })
            .unwrap()
    })
}

/// A valid OKX book at `seqId` 50 (line 0's snapshot), both lines open.
fn okx_two_lines() -> BookSync {
    let mut s = engine(Chain::OkxSeq);
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    s.set_line(Line::Primary);
    run(&mut s, |s, e| {
        s.on_snapshot(50, [lv(Side::Bid, 80, 1), lv(Side::Ask, 200, 1)], &mut {
            e
        })
        .unwrap()
    });
    s
}

/// A valid Binance spot book on line 0, up to 10, with line 1 open too.
fn two_lines() -> BookSync {
    let mut s = engine(Chain::BinanceSpot);
    assert!(run(&mut s, |s, e| s.lines_changed([true, false], &mut { e })).is_empty());
    diff(&mut s, Line::Primary, 10, 10, 90);
    snapshot(&mut s, 9, 100);
    assert!(s.is_valid());
    assert!(run(&mut s, |s, e| s.lines_changed([true, true], &mut { e })).is_empty());
    s
}

fn bids(s: &BookSync) -> Vec<i64> {
    s.book()
        .unwrap()
        .levels(Side::Bid)
        .iter()
        .map(|l| l.price)
        .collect()
}

#[test]
fn the_first_arrival_is_applied_and_the_second_dropped() {
    let mut s = two_lines();
    let ev = diff(&mut s, Line::Standby, 11, 11, 91);
    assert_eq!(ev, [SyncEvent::Updated { update_id: 11 }]);
    assert_eq!(s.arrival(), Arrival::Applied(11));
    // Line 0's copy: dropped, the book unchanged.
    assert!(diff(&mut s, Line::Primary, 11, 11, 91).is_empty());
    assert_eq!(s.arrival(), Arrival::Duplicate(11));
    assert_eq!(s.duplicate_diffs, 1);
    // Line 0 first this time.
    assert_eq!(
        diff(&mut s, Line::Primary, 12, 12, 92),
        [SyncEvent::Updated { update_id: 12 }]
    );
    assert!(diff(&mut s, Line::Standby, 12, 12, 92).is_empty());
    assert_eq!(bids(&s), [100, 92, 91, 90]);
    assert!(s.line_ready(Line::Primary) && s.line_ready(Line::Standby));
}

#[test]
fn a_line_ahead_waits_for_the_other_and_both_ahead_is_a_gap() {
    let mut s = two_lines();
    // Line 1 was subscribed later: its first diff is ahead of the book.
    assert!(diff(&mut s, Line::Standby, 13, 13, 93).is_empty());
    assert!(s.is_valid());
    assert_eq!(s.ahead_diffs, 1);
    assert!(!s.line_ready(Line::Standby), "a line ahead is not in step");
    // Line 0 brings the missing ones; line 1's next chains.
    diff(&mut s, Line::Primary, 11, 11, 91);
    diff(&mut s, Line::Primary, 12, 12, 92);
    diff(&mut s, Line::Primary, 13, 13, 93);
    assert!(diff(&mut s, Line::Standby, 14, 14, 94) == [SyncEvent::Updated { update_id: 14 }]);
    assert!(s.line_ready(Line::Standby));
    // Both lines skip 15: the venue lost it; a gap.
    assert!(diff(&mut s, Line::Primary, 16, 16, 96).is_empty());
    let ev = diff(&mut s, Line::Standby, 16, 16, 96);
    assert_eq!(
        ev,
        [
            SyncEvent::Gap(Resync::Sequence {
                expected: 15,
                got: 16
            }),
            SyncEvent::SnapshotNeeded
        ]
    );
}

#[test]
fn the_leader_going_down_leaves_the_book_to_the_other_line_without_a_gap() {
    let mut s = two_lines();
    // Line 1 brings a copy of 10: it is in step, one behind.
    assert!(diff(&mut s, Line::Standby, 10, 10, 90).is_empty());
    diff(&mut s, Line::Primary, 11, 11, 91);
    assert!(run(&mut s, |s, e| s.lines_changed([false, true], &mut { e })).is_empty());
    assert_eq!(s.leader(), Line::Standby);
    assert!(s.is_valid());
    // Line 1 was behind: its copy of 11 is old, 12 chains.
    assert!(diff(&mut s, Line::Standby, 11, 11, 91).is_empty());
    assert_eq!(
        diff(&mut s, Line::Standby, 12, 12, 92),
        [SyncEvent::Updated { update_id: 12 }]
    );
    // Alone now, a diff that does not chain is a gap at once.
    let ev = diff(&mut s, Line::Standby, 14, 14, 94);
    assert!(matches!(ev[0], SyncEvent::Gap(_)), "{ev:?}");
    // And with both lines down, as a disconnect.
    let mut s = two_lines();
    let ev = run(&mut s, |s, e| s.lines_changed([false, false], &mut { e }));
    assert_eq!(ev, [SyncEvent::Gap(Resync::Disconnected)]);
}

#[test]
fn the_other_line_is_ignored_while_the_book_recovers() {
    let mut s = two_lines();
    // Line 1 has brought nothing yet: line 0 skipping 11 is a gap at once.
    let ev = diff(&mut s, Line::Primary, 12, 12, 92);
    assert!(matches!(ev[0], SyncEvent::Gap(_)), "{ev:?}");
    // The diff that showed the gap waits for the snapshot; line 1 is not
    // the leader, so its next diffs are not even buffered.
    assert_eq!(s.buffered(), 1);
    diff(&mut s, Line::Standby, 13, 13, 93);
    assert_eq!(s.buffered(), 1);
    diff(&mut s, Line::Primary, 13, 13, 93);
    assert_eq!(s.buffered(), 2);
}

#[test]
fn an_in_band_snapshot_from_the_other_line_is_not_needed() {
    let mut s = engine(Chain::Bybit);
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    let snapshot = |s: &mut BookSync, line: Line, u: u64, bid: i64| {
        s.set_line(line);
        run(s, |s, e| {
            s.on_snapshot(u, [lv(Side::Bid, bid, 1), lv(Side::Ask, 200, 1)], &mut {
                e
            })
            .unwrap()
        })
    };
    // Before the book is valid, only the leader's counts.
    assert!(snapshot(&mut s, Line::Standby, 5, 100).is_empty());
    assert!(!s.is_valid());
    assert_eq!(
        snapshot(&mut s, Line::Primary, 5, 100),
        [SyncEvent::Valid { update_id: 5 }]
    );
    // Line 1's, later: the book stays as it is.
    assert!(snapshot(&mut s, Line::Standby, 7, 150).is_empty());
    assert_eq!(bids(&s), [100]);
    assert_eq!(s.unneeded_snapshots, 1);
}

/// Kraken: no sequence, so the other line keeps a shadow book, checked by
/// its own checksums, which takes over when the leader goes down.
#[test]
fn without_a_sequence_the_other_line_keeps_a_shadow_that_takes_over() {
    let mut s = engine(Chain::Kraken);
    run(&mut s, |s, e| s.lines_changed([true, false], &mut { e }));
    let feed = |s: &mut BookSync, line: Line, snapshot: bool, levels: Vec<LevelResult>| {
        s.set_line(line);
        run(s, |s, e| {
            s.on_unsequenced(snapshot, 0, levels, &mut { e }).unwrap();
        })
    };
    feed(
        &mut s,
        Line::Primary,
        true,
        vec![lv(Side::Bid, 100, 1), lv(Side::Ask, 101, 1)],
    );
    assert!(s.is_valid());
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    assert!(!s.line_ready(Line::Standby), "no snapshot on line 1 yet");
    // Line 1's snapshot and update go to its shadow; the book is line 0's.
    assert!(
        feed(
            &mut s,
            Line::Standby,
            true,
            vec![lv(Side::Bid, 100, 1), lv(Side::Ask, 101, 1)]
        )
        .is_empty()
    );
    assert!(feed(&mut s, Line::Standby, false, vec![lv(Side::Bid, 99, 2)]).is_empty());
    assert!(s.line_ready(Line::Standby));
    assert_eq!(bids(&s), [100]);
    // A checksum that differs drops the shadow, silently; the book stays.
    s.set_line(Line::Standby);
    assert!(
        !run(&mut s, |s, e| assert!(!s.verify(7, |_| 8, &mut { e })))
            .iter()
            .any(|_| true)
    );
    assert!(!s.line_ready(Line::Standby) && s.is_valid());
    // Nothing brings it back but a snapshot of its own: the line is to be
    // opened again.
    assert!(s.line_broken(Line::Standby) && !s.line_broken(Line::Primary));
    // Its next snapshot brings it back; the leader goes down; the shadow
    // becomes the book, said as `Valid`, with no gap.
    feed(
        &mut s,
        Line::Standby,
        true,
        vec![lv(Side::Bid, 98, 1), lv(Side::Ask, 101, 1)],
    );
    assert!(!s.line_broken(Line::Standby), "its own snapshot mends it");
    let ev = run(&mut s, |s, e| s.lines_changed([false, true], &mut { e }));
    assert_eq!(ev, [SyncEvent::Valid { update_id: 0 }]);
    assert_eq!(bids(&s), [98]);
    // Had the shadow not been in step, a gap.
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    let ev = run(&mut s, |s, e| s.lines_changed([true, false], &mut { e }));
    assert!(
        matches!(ev[0], SyncEvent::Gap(Resync::Disconnected)),
        "{ev:?}"
    );
}

/// OKX sends its checksum with every book message: the other line's copy
/// of a diff the book holds, a diff ahead, or the other line's snapshot
/// describe another state of the book, and must not be checked against it.
#[test]
fn a_message_the_book_did_not_take_is_not_checked() {
    let mut s = two_lines();
    diff(&mut s, Line::Primary, 11, 11, 91);
    diff(&mut s, Line::Primary, 12, 12, 92);
    // Line 1's copy of 11: a checksum of the book as it was at 11.
    diff(&mut s, Line::Standby, 11, 11, 91);
    let ev = run(&mut s, |s, e| assert!(s.verify(1, |_| 2, &mut { e })));
    assert!(ev.is_empty() && s.is_valid(), "{ev:?}");
    // A diff the book took is checked.
    diff(&mut s, Line::Standby, 13, 13, 93);
    let ev = run(&mut s, |s, e| assert!(!s.verify(1, |_| 2, &mut { e })));
    assert!(
        matches!(ev[0], SyncEvent::Gap(Resync::Checksum { .. })),
        "{ev:?}"
    );
}

/// A REST snapshot is the leader's, whichever line brought the last
/// message: the diffs buffered for it (the leader's) bridge it.
#[test]
fn a_rest_snapshot_bridges_the_leaders_buffered_diffs_whatever_came_last() {
    let mut s = engine(Chain::BinanceSpot);
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    diff(&mut s, Line::Primary, 10, 10, 90);
    diff(&mut s, Line::Primary, 11, 11, 91);
    // The last message came on line 1 (ignored: the book is not valid).
    diff(&mut s, Line::Standby, 11, 11, 91);
    let ev = snapshot(&mut s, 10, 100);
    assert_eq!(ev, [SyncEvent::Valid { update_id: 11 }]);
}

/// Binance futures chain by `pu`: a line one diff behind when the leader
/// goes down brings a copy that does not chain; it is dropped while the
/// line catches up, not taken for a gap. A line never heard takes no book
/// over: the book is disconnected rather than left frozen.
#[test]
fn a_line_behind_catches_up_and_a_line_never_heard_takes_nothing_over() {
    let mut s = engine(Chain::BinanceFutures);
    run(&mut s, |s, e| s.lines_changed([true, false], &mut { e }));
    futures(&mut s, Line::Primary, 9, 10);
    snapshot(&mut s, 10, 1);
    assert!(s.is_valid());
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    futures(&mut s, Line::Standby, 9, 10);
    futures(&mut s, Line::Primary, 10, 11);
    futures(&mut s, Line::Primary, 11, 12);
    futures(&mut s, Line::Standby, 10, 11);
    // Line 1 is one behind (it has brought 11, not 12) when line 0 goes.
    assert!(run(&mut s, |s, e| s.lines_changed([false, true], &mut { e })).is_empty());
    assert!(
        futures(&mut s, Line::Standby, 11, 12).is_empty(),
        "a copy, not a gap"
    );
    assert_eq!(
        futures(&mut s, Line::Standby, 12, 13),
        [SyncEvent::Updated { update_id: 13 }]
    );
    // Line 0 comes back and is never heard before line 1 goes: the book
    // is disconnected, not left valid on a line that may never carry it.
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    let ev = run(&mut s, |s, e| s.lines_changed([true, false], &mut { e }));
    assert_eq!(ev, [SyncEvent::Gap(Resync::Disconnected)]);
}

/// The line the book does not follow can be the faster one: when it goes
/// down having brought the latest diffs first, the leader's copies of
/// them are dropped while it catches up, not taken for a gap (seen in
/// `demo --standby --faults`, where the leader was the direct line and the
/// proxied one closed while ahead of it).
#[test]
fn the_follower_going_down_ahead_of_the_leader_costs_no_gap() {
    let mut s = engine(Chain::BinanceFutures);
    run(&mut s, |s, e| s.lines_changed([true, false], &mut { e }));
    futures(&mut s, Line::Primary, 9, 10);
    snapshot(&mut s, 10, 1);
    run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
    assert_eq!(s.leader(), Line::Primary);
    // Line 1, the follower, brings 11 and 12 first; then it goes down.
    futures(&mut s, Line::Standby, 10, 11);
    futures(&mut s, Line::Standby, 11, 12);
    assert!(run(&mut s, |s, e| s.lines_changed([true, false], &mut { e })).is_empty());
    assert_eq!(s.leader(), Line::Primary);
    // The leader's copies of 11 and 12: dropped, the book valid.
    assert!(futures(&mut s, Line::Primary, 10, 11).is_empty(), "a copy");
    assert!(futures(&mut s, Line::Primary, 11, 12).is_empty(), "a copy");
    assert!(s.is_valid());
    assert_eq!(
        futures(&mut s, Line::Primary, 12, 13),
        [SyncEvent::Updated { update_id: 13 }]
    );
    // Caught up: alone, a diff behind the book is a gap again.
    let ev = futures(&mut s, Line::Primary, 11, 12);
    assert!(matches!(ev[0], SyncEvent::Gap(_)), "{ev:?}");
}

/// OKX resets its ids in maintenance (`seqId` below `prevSeqId`): with
/// both lines open, the reset chains and is applied, not dropped as a
/// copy of an older diff.
#[test]
fn a_reset_of_the_venues_ids_chains_with_both_lines_open() {
    let mut s = okx_two_lines();
    assert_eq!(
        okx(&mut s, Line::Primary, 50, 3),
        [SyncEvent::Updated { update_id: 3 }]
    );
    assert!(
        okx(&mut s, Line::Standby, 50, 3).is_empty(),
        "line 1's copy"
    );
    assert_eq!(
        okx(&mut s, Line::Standby, 3, 4),
        [SyncEvent::Updated { update_id: 4 }]
    );
}

/// A line that brings nothing but copies after taking the book over is on
/// another chain (its ids restarted): the book gaps, never stands still.
#[test]
fn a_line_of_copies_alone_is_a_gap_not_a_frozen_book() {
    let mut s = two_lines();
    // Line 1 in step (a copy of 10), then the leader goes down.
    diff(&mut s, Line::Standby, 10, 10, 90);
    run(&mut s, |s, e| s.lines_changed([false, true], &mut { e }));
    // Line 1 restarted its ids: 1, 2, 3... all at or below 10, for ever.
    let mut said = Vec::new();
    for n in 1..=MOST_COPIES as u64 + 1 {
        said.extend(diff(&mut s, Line::Standby, n % 10 + 1, n % 10 + 1, 80));
    }
    assert!(
        matches!(said[..], [SyncEvent::Gap(_), SyncEvent::SnapshotNeeded]),
        "{said:?}"
    );
}

/// Catching up alone, a copy must continue the line's own chain: OKX's
/// ids reset in maintenance, and a leader that lost the reset brings
/// diffs below the book's ids that it never brought before. Those are a
/// gap, not copies, or the book would stand still saying it is valid.
#[test]
fn catching_up_alone_takes_no_diff_off_its_lines_chain_for_a_copy() {
    let mut s = okx_two_lines();
    okx(&mut s, Line::Primary, 50, 51);
    // Line 1 brings 52 and 53 first; line 0 has 51 when line 1 goes down.
    okx(&mut s, Line::Standby, 51, 52);
    okx(&mut s, Line::Standby, 52, 53);
    assert!(run(&mut s, |s, e| s.lines_changed([true, false], &mut { e })).is_empty());
    // Its copy of 52 continues its chain: dropped.
    assert!(okx(&mut s, Line::Primary, 51, 52).is_empty(), "a copy");
    // Then the ids reset and line 0 lost the reset (53 -> 3): its next
    // diff, 3 -> 7, is below the book's ids but follows nothing it sent.
    let ev = okx(&mut s, Line::Primary, 3, 7);
    assert!(
        matches!(ev[..], [SyncEvent::Gap(_), SyncEvent::SnapshotNeeded]),
        "{ev:?}"
    );
    assert!(!s.is_valid());
}

/// Every venue whose book messages carry its own sequence, one table: the
/// line the book does not follow brings the latest diffs first and goes
/// down; the leader's copies of them cost no gap, and its next diff
/// chains. (Kraken and Coinbase, whose messages carry no such sequence,
/// keep a shadow book instead: `without_a_sequence_...` above.)
#[test]
fn the_follower_going_down_ahead_costs_no_gap_on_every_sequenced_venue() {
    for chain in [
        Chain::BinanceSpot,
        Chain::BinanceFutures,
        Chain::OkxSeq,
        Chain::Deribit,
        Chain::Bybit,
    ] {
        // The diff after `prev`, as the venue sends it: ids `prev + 1..=id`,
        // and `prev` itself where the venue says it.
        let with_prev = matches!(
            chain,
            Chain::BinanceFutures | Chain::OkxSeq | Chain::Deribit
        );
        let step = |s: &mut BookSync, line: Line, prev: u64, id: u64| {
            s.set_line(line);
            let seq = Seq {
                first: prev + 1,
                last: id,
                prev: with_prev.then_some(prev),
            };
            run(s, |s, e| {
                s.on_diff(seq, [lv(Side::Bid, id as i64, 1)], &mut { e })
                    .unwrap()
            })
        };
        let mut s = engine(chain);
        run(&mut s, |s, e| s.lines_changed([true, false], &mut { e }));
        s.set_line(Line::Primary);
        snapshot(&mut s, 10, 1);
        step(&mut s, Line::Primary, 10, 11);
        assert!(s.is_valid(), "{chain:?}");
        run(&mut s, |s, e| s.lines_changed([true, true], &mut { e }));
        step(&mut s, Line::Standby, 11, 12);
        step(&mut s, Line::Standby, 12, 13);
        let ev = run(&mut s, |s, e| s.lines_changed([true, false], &mut { e }));
        assert!(ev.is_empty(), "{chain:?}: {ev:?}");
        for (prev, id) in [(11, 12), (12, 13)] {
            let ev = step(&mut s, Line::Primary, prev, id);
            assert!(ev.is_empty(), "{chain:?}: the copy of {id}: {ev:?}");
        }
        assert!(s.is_valid(), "{chain:?}");
        assert_eq!(
            step(&mut s, Line::Primary, 13, 14),
            [SyncEvent::Updated { update_id: 14 }],
            "{chain:?}"
        );
    }
}
