//! The handler's unit tests: a Binance venue's snapshot bookkeeping.

use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::plan::Channels;
use tickwire_venues::{InstrumentSpec, Venue};

use super::super::recovery::Due;
use super::super::stats::VenueStats;
use super::*;

/// A handler with one Binance venue of two books, as `Feed::with_handler`
/// makes it, without a driver.
fn binance_core() -> Core {
    let setup = VenueSetup {
        name: "b".into(),
        venue: Venue::BinanceSpot,
        instruments: ["BTCUSDT", "ETHUSDT"]
            .map(|s| InstrumentSpec::new(s, 2, 8, 20))
            .to_vec(),
        channels: Channels::default(),
        endpoint: None,
        rest: None,
        rest_weight_limit: None,
        lines: Default::default(),
        api_key: None,
    };
    let plans = setup
        .venue
        .plans(&setup.instruments, setup.channels)
        .unwrap();
    let recorder = Metrics::new(HistogramConfig::default()).recorder("b");
    let state = VenueState::planned(setup, plans, recorder);
    let stats = Arc::new(FeedStats {
        venues: vec![VenueStats::default()].into(),
        ..FeedStats::default()
    });
    Core {
        feed_tag: crate::id::next_feed_tag(),
        recovery: Recovery::new([(2, state.plans.len())]),
        venues: vec![state],
        links: Links::new(16),
        sinks: Sinks::default(),
        stats: Arc::clone(&stats),
        calibration: tickwire_tsc::calibration(),
        clock: Clock::new(),
        send_stamps: None,
        want_snapshot: Vec::with_capacity(2),
        refused_now: Vec::with_capacity(2),
        valid: vec![false; 2],
        first: 0,
        stopping: false,
        lines_soon: false,
        scratch: Vec::new(),
        bad_input: BadInput::new(stats),
        failures: Failures::new(String::new()),
        rest: vec![RestBudget::unlimited(Instant::now())],
        rest_of: vec![0],
        record_errors: 0,
        stream_urls: HashMap::default(),
        user: Some(NoHandler),
        batch: Vec::new(),
        in_handler: false,
        trading: crate::trading::Trading::new(1),
    }
}

fn resync(core: &mut Core, instrument: u32) {
    let (_, mut out) = core.split(0);
    out.emit(Event {
        instrument: InstrumentId(instrument),
        exchange_ns: 0,
        recv_tsc: 0,
        kind: Kind::Resync,
    });
}

/// The snapshot fetches due, however long their backoff.
fn fetches(core: &mut Core) -> Vec<(usize, Due)> {
    let mut due = Vec::new();
    let later = Instant::now() + std::time::Duration::from_secs(3600);
    core.recovery.take_due(later, &mut due);
    due
}

#[test]
fn a_book_has_at_most_one_snapshot_due_queued_or_in_flight() {
    let mut core = binance_core();
    let book = (0, Due::Fetch(1));
    // Asked twice: due once.
    resync(&mut core, 1);
    resync(&mut core, 1);
    assert_eq!(fetches(&mut core), [book]);
    // Taken (queued, then fetching): asked again meanwhile, the fetch
    // on its way is the answer.
    resync(&mut core, 1);
    assert!(fetches(&mut core).is_empty());
    // It answered an error: due again (after the backoff), once,
    // however often asked.
    core.fetch_answered(0, InstrumentId(1), false);
    resync(&mut core, 1);
    // The other book's own.
    resync(&mut core, 0);
    assert_eq!(fetches(&mut core), [(0, Due::Fetch(0)), book]);
    // Book 1's fetch answered with a snapshot: asked again (it was too
    // old), it gets a new fetch; book 0's is still on its way.
    core.fetch_answered(0, InstrumentId(1), true);
    resync(&mut core, 1);
    resync(&mut core, 0);
    assert_eq!(fetches(&mut core), [book]);
    assert!(core.want_snapshot.is_empty(), "queued by the chores only");
}

#[test]
fn each_binance_venue_gets_the_binance_adapter_of_its_market() {
    for (name, venue) in Venue::ALL {
        match (Adapter::new(venue, &[]), venue.binance_market()) {
            (Adapter::Binance(a), Some(market)) => assert_eq!(a.market(), market, "{name}"),
            (Adapter::Other(_), None) => {}
            _ => panic!("{name}: another venue family's adapter"),
        }
    }
}
