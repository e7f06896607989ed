//! Every venue against its simulator, table-driven: books equal to the
//! venue's level for level, the venue's own faults (a lost book message, a
//! wrong checksum, a refused subscription, a book service restart)
//! recovered within seconds with the venue's other book untouched, a
//! Coinbase snapshot of several megabytes loaded, and books that show a
//! few levels of a deep market exact against the simulator's full book.

use crate::common;

use std::time::Instant;

use common::{Rig, RigConfig, bybit_venues, checksum_venues, venues};
use tickwire_feed::live::FeedStats;
use tickwire_sim::{Venue, VenueFault};
use tickwire_testkit::proxy::Fault;
use tickwire_venues::Kind;
use tickwire_venues::sync::Resync;

/// Waits for instrument 0's book ("a") to be valid again after a fault.
/// 30 s at most: a resync may take a REST fetch over TLS, in a debug build
/// on a loaded machine.
fn back(rig: &mut Rig) -> u64 {
    let started = Instant::now();
    let allocations = rig.wait_counting("a's book to be valid again", 30, |r| {
        r.book_valid_events(0) >= 1 && r.valid() == 2
    });
    eprintln!(
        "{}: valid again after {:?}, {allocations} allocations",
        rig.venue,
        started.elapsed()
    );
    allocations
}

#[test]
fn every_venue_keeps_its_books_equal_to_the_simulator_and_passes_its_trades_on() {
    for venue in venues() {
        let mut rig = Rig::start(venue);
        // Warm: both books valid, every buffer grown by a while of market.
        rig.wait("trades on both books", 30, |r| {
            (0..2).all(|n| r.seen[n].iter().any(|k| matches!(k, Kind::Trade { .. })))
        });
        rig.run_messages(1000, 30);
        // Steady: the receive path allocates nothing, message after message.
        let allocations = rig.allocations_over(2000, 60);
        assert_eq!(allocations, 0, "{venue}: allocations over 2000 messages");
        rig.books_match_the_simulator();
        rig.assert_untroubled(0);
    }
}

/// A lost book message (or, with `checksum`, a wrong checksum): "a" gaps
/// with the venue's own reason, asks for a fresh snapshot, and is valid
/// again within seconds, on the same connection; "b" sees nothing.
fn recovers_in_band(venue: Venue, fault: VenueFault) {
    let mut rig = Rig::start(venue);
    assert!(rig.simulator.fault(0, fault));
    let allocations = back(&mut rig);
    // A resubscription and the snapshot it brings allocate nothing; a
    // REST snapshot's fetch opens a TLS connection, which does.
    if !venue.rest_snapshots() {
        assert_eq!(allocations, 0, "{venue} {fault:?}: allocations recovering");
    }
    let said = rig.said(0);
    assert!(
        matches!(
            said[..],
            [
                Kind::Gap {
                    why: Resync::Sequence { .. } | Resync::Checksum { .. }
                },
                Kind::Resync,
                Kind::BookSnapshot { .. },
                Kind::BookValid { .. }
            ]
        ),
        "{venue} {fault:?}: {said:?}"
    );
    // The venue's status line says why its book gapped.
    let line = rig.stats.venues[0].line();
    assert!(
        line.contains("last gap: Sequence") || line.contains("last gap: Checksum"),
        "{venue} {fault:?}: {line}"
    );
    if fault == VenueFault::BadChecksum {
        assert!(
            matches!(
                said[0],
                Kind::Gap {
                    why: Resync::Checksum { .. }
                }
            ),
            "{venue}: {said:?}"
        );
    }
    assert_eq!(
        rig.trouble(1),
        0,
        "{venue}: b was disturbed: {:?}",
        rig.seen[1]
    );
    assert_eq!(
        rig.reconnects(),
        0,
        "{venue}: recovered without reconnecting"
    );
    let recovered_by = if venue.rest_snapshots() {
        FeedStats::get(&rig.stats.snapshots)
    } else {
        FeedStats::get(&rig.stats.resubscriptions)
    };
    let expected = if venue.rest_snapshots() { 3 } else { 1 };
    assert_eq!(
        recovered_by, expected,
        "{venue}: one snapshot brought it back"
    );
    assert_eq!(FeedStats::get(&rig.stats.gaps), 1, "{venue}");
    assert_eq!(FeedStats::get(&rig.stats.resyncs), 1, "{venue}");
    rig.run_messages(200, 30);
    rig.books_match_the_simulator();
}

#[test]
fn a_lost_book_message_is_recovered_within_seconds_and_the_other_book_sees_nothing() {
    for venue in venues() {
        recovers_in_band(venue, VenueFault::SequenceGap);
    }
}

#[test]
fn a_wrong_checksum_is_recovered_within_seconds_and_the_other_book_sees_nothing() {
    for venue in checksum_venues() {
        recovers_in_band(venue, VenueFault::BadChecksum);
    }
}

#[test]
fn a_refused_subscription_is_said_with_the_venues_words_and_tried_again() {
    for venue in venues() {
        let mut rig = Rig::start(venue);
        assert!(rig.simulator.fault(0, VenueFault::RejectSubscription));
        if venue.rest_snapshots() {
            // Binance subscribes when it connects: the reconnect's
            // subscription is refused.
            rig.proxies[0].set(Fault::CloseAfter(0));
        } else {
            // A lost message: the book's resubscription is refused.
            rig.simulator.fault(0, VenueFault::SequenceGap);
        }
        rig.wait("the refusal", 30, |r| {
            FeedStats::get(&r.stats.rejections) >= 1
        });
        let words = rig.feed.rejection(rig.feed.venue("a").unwrap()).to_owned();
        assert!(!words.is_empty(), "{venue}: the venue's words are kept");
        let allocations = back(&mut rig);
        if !venue.rest_snapshots() {
            assert_eq!(allocations, 0, "{venue}: allocations trying again");
        }
        let said = rig.said(0);
        if venue.rest_snapshots() {
            // Binance's refusal names its request, not the stream.
            assert!(
                !said.iter().any(|k| matches!(k, Kind::Rejected { .. })),
                "{venue}: {said:?}"
            );
        } else {
            assert!(
                said.iter().any(|k| matches!(k, Kind::Rejected { .. })),
                "{venue}: the book says it was refused: {said:?}"
            );
        }
        assert_eq!(
            rig.trouble(1),
            0,
            "{venue}: b was disturbed: {:?}",
            rig.seen[1]
        );
        eprintln!("{venue}: refused with {words:?}");
        rig.run_messages(200, 30);
        rig.books_match_the_simulator();
    }
}

#[test]
fn a_bybit_restart_snapshot_with_u_back_at_1_replaces_the_book_without_a_gap() {
    for venue in bybit_venues() {
        let mut rig = Rig::start(venue);
        assert!(rig.simulator.fault(0, VenueFault::Restart));
        rig.wait("the restart's snapshot", 30, |r| {
            r.seen[0]
                .iter()
                .any(|k| matches!(k, Kind::BookSnapshot { .. }))
        });
        rig.run_messages(200, 30);
        rig.assert_untroubled(0);
        rig.books_match_the_simulator();
    }
}

#[test]
fn a_coinbase_snapshot_of_several_megabytes_is_loaded() {
    // The simulated BTC-USD book has 25 000 levels a side, as the real one
    // has tens of thousands: its level2 snapshot is one message of several
    // megabytes, which the default 1 MiB limit would refuse (1009, and a
    // reconnect every 250 ms, forever).
    let mut rig = Rig::with(RigConfig {
        levels: 25_000,
        ..RigConfig::new(Venue::Coinbase)
    });
    let bytes = rig.simulator.stats().bytes;
    assert!(bytes > 4 << 20, "{bytes} bytes sent");
    rig.run_messages(200, 30);
    rig.assert_untroubled(0);
    rig.books_match_the_simulator();
}

#[test]
fn books_showing_a_few_levels_of_a_deep_market_are_exact() {
    for venue in venues() {
        // 5 levels shown of books 2000 levels deep: deeper than a Binance
        // snapshot or a Coinbase or Deribit book keeps, so those books
        // know only part of their side and track where that part ends.
        let mut rig = Rig::with(RigConfig {
            levels: 2000,
            depth: 5,
            rate: 4000,
            ..RigConfig::new(venue)
        });
        for _ in 0..5 {
            rig.run_messages(1000, 60);
            rig.books_match_the_simulator();
        }
        assert_eq!(FeedStats::get(&rig.stats.gaps), 0, "{venue}");
    }
}
