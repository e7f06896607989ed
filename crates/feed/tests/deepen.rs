//! A Binance book that tracks a horizon (its REST snapshot held only the
//! top of a deeper book) on a market that sweeps through the levels it
//! knows: deepened from a fresh snapshot, bridged against the live diffs,
//! before they run out. The books stay valid with no gap at depth 5, 20
//! and 100, and equal the simulator's.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tickwire_feed::{Feed, FeedBuilder};
use tickwire_sim::{SimConfig, SimInstrument, Simulator};
use tickwire_venues::book::Side;

fn poll_until(feed: &mut Feed, what: &str, mut done: impl FnMut(&Feed) -> bool) {
    // A deadline only: generous for a debug build on a busy machine.
    let deadline = Instant::now() + Duration::from_secs(180);
    while !done(feed) {
        assert!(Instant::now() < deadline, "never: {what}");
        feed.poll().unwrap();
    }
}

#[test]
fn a_book_swept_through_its_kept_levels_is_deepened_with_no_gap() {
    // Three instruments 4000 levels deep a side: the REST snapshot the
    // feed asks for at depths 5, 20 and 100 holds their best 1000.
    let symbols = ["BTCUSDT", "ETHUSDT", "SOLUSDT"];
    let depths = [5, 20, 100];
    let instruments = symbols
        .iter()
        .enumerate()
        .map(|(n, symbol)| SimInstrument {
            symbol: (*symbol).into(),
            price_scale: 2,
            size_scale: 4,
            mid: 1_000_000 * (n as i64 + 1),
            levels: 4000,
        })
        .collect();
    let (tls, ca) = tickwire_sim::self_signed().unwrap();
    let dir = std::env::temp_dir().join(format!("tickwire-deepen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ca.pem"), ca).unwrap();
    // Up 1500 ticks, down 1500, ...: a leg takes more levels than a
    // snapshot gave.
    let sim = Simulator::start(SimConfig {
        tls: Some(tls),
        instruments,
        rate: 2000,
        sweep: Some(1500),
        ..SimConfig::new(tickwire_venues::Venue::BinanceSpot)
    })
    .unwrap();
    let port = sim.addr().port();
    let list = symbols
        .iter()
        .zip(depths)
        .map(|(s, d)| format!("\"{s}:2:4:{d}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let toml = format!(
        "[[venue]]\nvenue = \"binance-spot\"\ninstruments = [{list}]\n\
         endpoint = \"wss://localhost:{port}\"\nrest = \"https://localhost:{port}\"\n"
    );
    let mut feed = FeedBuilder::from_toml(&toml)
        .unwrap()
        .ca_file(dir.join("ca.pem"))
        .build()
        .unwrap();
    let all_valid = |f: &Feed| {
        symbols
            .iter()
            .all(|s| f.book_of(f.venue("binance-spot").unwrap(), s).is_some())
    };
    poll_until(&mut feed, "every book valid", all_valid);
    // Four legs: each book's sides swept through their kept levels twice.
    let start = sim.stats().steps;
    poll_until(&mut feed, "6000 market steps", |_| {
        sim.stats().steps >= start + 6000
    });
    let stats = feed.stats();
    let venue = &stats.venues[0];
    let refreshed = venue.refreshes.load(Ordering::Relaxed);
    assert_eq!(venue.gaps.load(Ordering::Relaxed), 0, "{}", venue.line());
    assert!(
        refreshed >= 6,
        "{refreshed} books deepened: {}",
        venue.line()
    );
    // Equal to the simulator's books once everything sent has arrived
    // (the market paused: a condition, waited for with a deadline).
    sim.pause(true);
    let equal = |f: &Feed| {
        symbols
            .iter()
            .zip(depths)
            .enumerate()
            .all(|(n, (symbol, depth))| {
                let Some(book) = f.book_of(f.venue("binance-spot").unwrap(), symbol) else {
                    return false;
                };
                let (_, bids, asks) = sim.book(n, depth).unwrap();
                let ours = |side| {
                    book.levels(side)
                        .iter()
                        .map(|l| (l.price, l.size))
                        .collect::<Vec<_>>()
                };
                ours(Side::Bid) == bids && ours(Side::Ask) == asks
            })
    };
    poll_until(&mut feed, "every book equal to the simulator's", equal);
    assert_eq!(venue.gaps.load(Ordering::Relaxed), 0, "{}", venue.line());
    std::fs::remove_dir_all(&dir).unwrap();
}
