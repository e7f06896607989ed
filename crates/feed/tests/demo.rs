//! The demo's ceiling mode (`demo --max`): a market made ahead of time, sent
//! as fast as the feed takes it, must bring both books valid and arrive
//! whole whatever the burst. `demo --venues all`: every venue simulated at
//! once, on the feed's one thread, every book valid and equal to its
//! simulator's at the end.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tickwire_feed::demo::{self, DemoConfig};
use tickwire_sim::{self as sim, SimInstrument, Venue};

const STEPS: usize = 3_000;

fn ceiling(burst: u32) -> demo::DemoSummary {
    let dir = std::env::temp_dir().join(format!("tickwire-demo-{burst}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = DemoConfig {
        // Long enough for 3 000 steps many times over; shorter than the
        // simulator's 10 s wait for the snapshots, so a market that never
        // lets a book ask for its snapshot fails here.
        duration: Duration::from_secs(6),
        burst,
        pregenerate: Some(STEPS),
        hlog: dir.join("demo.hlog"),
        svg: false,
        ..DemoConfig::default()
    };
    let summary = demo::run(&config, &Arc::new(AtomicBool::new(false)), |_| {}).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    summary
}

fn assert_whole(summary: &demo::DemoSummary) {
    assert_eq!(summary.books_valid, 2, "{summary:?}");
    assert_eq!(
        (summary.gaps, summary.reconnects, summary.decode_errors),
        (0, 0, 0)
    );
    // Every message of the market (the demo's: seed 1, a trade every third
    // step) and the subscription's answer.
    let market = sim::pregenerate(
        &[SimInstrument::btcusdt(), SimInstrument::ethusdt()],
        STEPS,
        1,
        3,
    );
    assert_eq!(summary.messages, market.messages.len() as u64 + 1);
    assert!(summary.throughput.is_some_and(|t| t > 0.0));
}

#[test]
fn one_message_to_a_write_reaches_both_books() {
    // The first write holds one symbol's diff only: the other symbol asks
    // for its snapshot at its own first diff, which must still come.
    assert_whole(&ceiling(1));
}

#[test]
fn many_messages_to_a_write_reach_both_books() {
    assert_whole(&ceiling(64));
}

#[test]
fn every_venue_at_once_keeps_every_book_valid_and_equal_to_its_simulator() {
    let dir = std::env::temp_dir().join(format!("tickwire-demo-all-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = DemoConfig {
        duration: Duration::from_secs(5),
        rate: 2_000,
        venues: Venue::ALL.iter().map(|(_, v)| *v).collect(),
        hlog: dir.join("demo.hlog"),
        svg: false,
        ..DemoConfig::default()
    };
    let summary = demo::run(&config, &Arc::new(AtomicBool::new(false)), |_| {}).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(summary.venues.len(), Venue::ALL.len());
    for v in &summary.venues {
        let line = v.line();
        // One line a venue, starting with its name and a colon.
        assert!(
            line.starts_with(&format!("{}: books valid ", v.name)),
            "{line}"
        );
        assert_eq!(v.books_valid, (2, 2), "{line}");
        assert_eq!(v.gaps, 0, "{line}");
        assert!(v.messages > 0, "{line}");
        assert!(v.books_equal, "{line}");
        assert!(
            line.ends_with("books equal to the simulator: yes"),
            "{line}"
        );
    }
    assert_eq!((summary.books_valid, summary.books), (20, 20));
    assert_eq!(summary.decode_errors, 0);
}
