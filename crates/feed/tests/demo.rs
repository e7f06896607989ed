//! The demo's ceiling mode (`demo --max`): a market made ahead of time, sent
//! as fast as the feed takes it, must bring both books valid and arrive
//! whole whatever the burst. `demo --venues all`: every venue simulated at
//! once, on the feed's one thread, every book valid and equal to its
//! simulator's at the end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tickwire_feed::demo::{self, DemoConfig};
use tickwire_sim::{self as sim, SimInstrument, Venue};

const STEPS: usize = 3_000;

/// Every message of the market (the demo's: seed 1, a trade every third
/// step) and the subscription's answer.
fn market_messages(venue: Venue) -> u64 {
    let market = sim::pregenerate(
        venue,
        &[SimInstrument::btcusdt(), SimInstrument::ethusdt()],
        STEPS,
        1,
        3,
    );
    market.messages.len() as u64 + 1
}

/// The whole feed's status line (`demo::run` says one a second, then one
/// a venue): its messages so far, and its books valid and in all.
fn feed_status(line: &str) -> Option<(u64, u64, u64)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = |word: &str| words.iter().position(|w| *w == word);
    if at("msg/s")? != 2 {
        return None;
    }
    let messages = words.get(at("messages")?.checked_sub(1)?)?.parse().ok()?;
    let (valid, books) = words.get(at("valid")? + 1)?.split_once('/')?;
    Some((messages, valid.parse().ok()?, books.parse().ok()?))
}

fn ceiling(burst: u32) -> demo::DemoSummary {
    ceiling_of(Venue::BinanceSpot, burst)
}

fn ceiling_of(venue: Venue, burst: u32) -> demo::DemoSummary {
    let dir = std::env::temp_dir().join(format!("tickwire-demo-{burst}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = DemoConfig {
        // A deadline only, long enough for 3 000 steps in a debug build on
        // a loaded machine many times over: a pregenerated run ends itself
        // once every message has arrived.
        duration: Duration::from_secs(120),
        burst,
        pregenerate: Some(STEPS),
        sbe: venue == Venue::BinanceSpotSbe,
        hlog: dir.join("demo.hlog"),
        svg: false,
        ..DemoConfig::default()
    };
    let summary = demo::run(&config, &Arc::new(AtomicBool::new(false)), |_| {}).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // It ended because every message had arrived, not at its deadline.
    assert!(
        summary.elapsed < config.duration,
        "never saw every message arrive: {summary:?}"
    );
    summary
}

fn assert_whole(summary: &demo::DemoSummary) {
    assert_whole_of(Venue::BinanceSpot, summary);
}

fn assert_whole_of(venue: Venue, summary: &demo::DemoSummary) {
    assert_eq!(summary.books_valid, 2, "{summary:?}");
    assert_eq!(
        (summary.gaps, summary.reconnects, summary.decode_errors),
        (0, 0, 0)
    );
    assert_eq!(summary.messages, market_messages(venue));
    assert!(summary.all_arrived, "{summary:?}");
    // The rate and the feed thread's CPU over the same span: some a
    // message, and never more than the span itself (one thread, one core
    // at a time; a little over for the clocks read a moment apart). The
    // demo looks every 2 ms: a release build may take the whole small
    // market between two looks, leaving no span; a debug build takes tens.
    match summary.throughput {
        Some(rate) => {
            assert!(rate > 0.0, "{summary:?}");
            if cfg!(target_os = "linux") {
                let cpu = summary.feed_cpu.expect("the feed thread's CPU time");
                assert!(cpu.per_message_ns > 0.0, "{cpu:?}");
                assert!(cpu.busy > 0.0 && cpu.busy <= 1.05, "{cpu:?}");
            }
        }
        None if cfg!(debug_assertions) => panic!("no span measured: {summary:?}"),
        None => {}
    }
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

/// The same market in Binance's SBE streams: binary frames, made ahead of
/// time as the JSON ones are, every one arriving and both books valid.
#[test]
fn the_market_in_sbe_reaches_both_books() {
    // Every frame read as SBE (none undecodable), every message counted.
    assert_whole_of(
        Venue::BinanceSpotSbe,
        &ceiling_of(Venue::BinanceSpotSbe, 16),
    );
}

#[test]
fn every_venue_at_once_keeps_every_book_valid_and_equal_to_its_simulator() {
    let dir = std::env::temp_dir().join(format!("tickwire-demo-all-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let books = 2 * Venue::ALL.len();
    let config = DemoConfig {
        // A deadline only: the run is stopped (below) once every book has
        // been valid for 3 status lines in a row, however long the
        // simulators and the feed's one thread take to get there.
        duration: Duration::from_secs(120),
        rate: 2_000,
        venues: Venue::ALL.iter().map(|(_, v)| *v).collect(),
        hlog: dir.join("demo.hlog"),
        svg: false,
        ..DemoConfig::default()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (mut all_valid, mut lines) = (0, Vec::new());
    let summary = demo::run(&config, &stop, |line| {
        if let Some((_, valid, all)) = feed_status(line) {
            assert_eq!(all, books as u64, "{line}");
            all_valid = if valid == all { all_valid + 1 } else { 0 };
            if all_valid == 3 {
                stop.store(true, Ordering::Relaxed);
            }
        }
        lines.push(line.to_owned());
    })
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        stop.load(Ordering::Relaxed),
        "every book never valid for 3 s running: {lines:#?}"
    );
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
    assert_eq!(
        (summary.books_valid, summary.books),
        (books as u64, books as u64)
    );
    assert_eq!(summary.decode_errors, 0);
}
