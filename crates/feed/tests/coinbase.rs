//! Coinbase Advanced Trade's `-USDC` products end to end. The venue
//! answers a `-USDC` product (but `USDT-USDC` and `EURC-USDC`) with the
//! matching `-USD` product's data, keyed `-USD` (WebSocket Channels docs):
//! a feed configured with `BTC-USDC` must keep that book from frames that
//! say `BTC-USD`, against the simulator's Coinbase, which serves its
//! BTC-USD market for a `BTC-USDC` subscription as the venue does. A
//! simulated feed configured by name does the same, and a configuration
//! listing `BTC-USDC` beside `BTC-USD` (one product's data, one id) is
//! refused before anything connects.

use crate::common;

use std::time::{Duration, Instant};

use tickwire_feed::FeedBuilder;
use tickwire_feed::live::{Feed, FeedStats, Sinks, VenueSetup};
use tickwire_feed::mirror::Mirrors;
use tickwire_feed::sink;
use tickwire_feed::{Event, FeedId};
use tickwire_net::TlsConfig;
use tickwire_sim::{Levels, SimConfig, SimInstrument, Simulator, Venue};
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::book::Side;
use tickwire_venues::{InstrumentSpec, Kind};

/// Levels each book shows.
const DEPTH: usize = 20;

/// Polls `feed` (its events into `seen` and `mirrors`) until `done`, at
/// most 60 s: a debug build on a loaded 2-core machine.
fn poll_until(
    feed: &mut Feed,
    events: &sink::Events,
    seen: &mut Vec<Event>,
    mirrors: &mut Mirrors,
    what: &str,
    mut done: impl FnMut(&Feed, &[Event]) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(feed, seen) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        feed.poll().unwrap();
        for e in events.try_iter() {
            mirrors.apply(&e);
            seen.push(e);
        }
    }
}

#[test]
fn a_usdc_book_is_kept_from_the_usd_products_frames_equal_to_the_simulators() {
    // The simulator lists Coinbase's own products, BTC-USD and ETH-USD;
    // the feed asks for BTC-USDC (and ETH-USD beside it, on the same
    // connection).
    let (tls, ca) = tickwire_sim::self_signed().unwrap();
    let instruments: Vec<SimInstrument> = SimInstrument::pair(Venue::Coinbase)
        .into_iter()
        .map(|i| SimInstrument { levels: 40, ..i })
        .collect();
    assert_eq!(instruments[0].symbol, "BTC-USD");
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        instruments: instruments.clone(),
        rate: 2000,
        ..SimConfig::new(Venue::Coinbase)
    })
    .unwrap();
    let port = simulator.addr().port();
    let mut trust = TlsConfig::empty();
    trust.add_ca_pem(ca.as_bytes()).unwrap();
    let (ps, ss) = Venue::Coinbase.default_scales();
    let spec = |symbol: &str, i: &SimInstrument| {
        InstrumentSpec::new(symbol, ps.max(i.price_scale), ss.max(i.size_scale), DEPTH)
    };
    let specs = vec![
        spec("BTC-USDC", &instruments[0]),
        spec("ETH-USD", &instruments[1]),
    ];
    // What the simulator's numbers are multiplied by at the feed's scales.
    let up = |to: u8, from: u8| 10i64.pow(u32::from(to - from));
    let scales: Vec<(i64, i64)> = (0..2)
        .map(|n| {
            (
                up(specs[n].price_scale, instruments[n].price_scale),
                up(specs[n].size_scale, instruments[n].size_scale),
            )
        })
        .collect();
    let (queue, events) = sink::queue(1 << 20);
    let metrics = Metrics::new(HistogramConfig::default());
    let mut feed = Feed::builder()
        .check_instruments(false)
        .setup({
            let mut s = VenueSetup::new("coinbase", Venue::Coinbase, specs);
            s.endpoint = Some(format!("wss://localhost:{port}"));
            s.rest = Some(format!("https://localhost:{port}"));
            s
        })
        .net(common::net())
        .tls(trust.clone())
        .metrics(metrics.clone())
        .sinks(Sinks::default().with_queue(queue))
        .build()
        .unwrap();
    let stats = feed.stats();
    let (mut seen, mut mirrors) = (Vec::new(), Mirrors::new(2));
    // Both books valid, and BTC-USDC's trades (sent as BTC-USD's) on it.
    poll_until(
        &mut feed,
        &events,
        &mut seen,
        &mut mirrors,
        "BTC-USDC's book and trades",
        |f, seen| {
            (0..2).all(|n| f.book(FeedId(n)).is_some())
                && seen
                    .iter()
                    .filter(|e| e.instrument == FeedId(0))
                    .any(|e| matches!(e.kind, Kind::Trade { .. }))
        },
    );
    let until = FeedStats::get(&stats.messages) + 1000;
    poll_until(
        &mut feed,
        &events,
        &mut seen,
        &mut mirrors,
        "1000 messages",
        |_, _| FeedStats::get(&stats.messages) >= until,
    );
    // Paused, the simulator's books stand still; what was sent arrives.
    simulator.pause(true);
    let mut last = (FeedStats::get(&stats.events), Instant::now());
    poll_until(
        &mut feed,
        &events,
        &mut seen,
        &mut mirrors,
        "quiet",
        |_, _| {
            let now = FeedStats::get(&stats.events);
            if now != last.0 {
                last = (now, Instant::now());
            }
            last.1.elapsed() >= Duration::from_millis(300)
        },
    );
    for (n, &(p, q)) in scales.iter().enumerate() {
        let (_, bids, asks) = simulator.book(n, DEPTH).unwrap();
        let at = |l: Levels| -> Levels { l.into_iter().map(|(a, b)| (a * p, b * q)).collect() };
        let (bids, asks) = (at(bids), at(asks));
        let book = feed
            .book(FeedId(n as u32))
            .unwrap_or_else(|| panic!("book {n} not valid"));
        let side = |s| -> Levels { book.levels(s).iter().map(|l| (l.price, l.size)).collect() };
        assert_eq!(side(Side::Bid), bids, "book {n} bids");
        assert_eq!(side(Side::Ask), asks, "book {n} asks");
        assert_eq!(mirrors.levels(n, Side::Bid), Some(bids), "events {n} bids");
        assert_eq!(mirrors.levels(n, Side::Ask), Some(asks), "events {n} asks");
    }
    assert!(
        feed.book_of(feed.venue("coinbase").unwrap(), "BTC-USDC")
            .is_some(),
        "read by the name configured"
    );
    let g = FeedStats::get;
    assert_eq!(
        (
            g(&stats.gaps),
            g(&stats.rejections),
            g(&stats.decode_errors)
        ),
        (0, 0, 0)
    );
}

#[test]
fn a_simulated_feed_by_name_keeps_a_usdc_book() {
    // A simulated feed names the simulator's instrument after the
    // configuration (BTC-USDC); the simulated venue still answers it as
    // BTC-USD, as Coinbase does.
    let mut feed = FeedBuilder::new()
        .simulated(true)
        .venue("coinbase", &["BTC-USDC:10"])
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while feed
        .book_of(feed.venue("coinbase").unwrap(), "BTC-USDC")
        .is_none()
    {
        assert!(Instant::now() < deadline, "BTC-USDC's book never valid");
        feed.poll().unwrap();
    }
    let book = feed
        .book_of(feed.venue("coinbase").unwrap(), "BTC-USDC")
        .unwrap();
    let (bid, ask) = book.top().unwrap();
    assert!(bid.price < ask.price);
    assert_eq!(book.depth(), 10);
}

#[test]
fn a_usdc_product_beside_its_usd_product_is_refused_before_connecting() {
    // One product's data, under one id: the configuration names the venue
    // and the pair.
    let toml = "[[venue]]\nvenue = \"coinbase\"\ninstruments = [\"BTC-USD\", \"BTC-USDC\"]\n";
    let Err(e) = FeedBuilder::from_toml(toml) else {
        panic!("BTC-USD and BTC-USDC accepted together")
    };
    assert_eq!(
        e.to_string(),
        r#"line 3, column 15: `venue[0].instruments`: symbols "BTC-USD" and "BTC-USDC": the venue sends both as "BTC-USD", one product's data (keep one of them)"#
    );
    // USDT-USDC is a product of its own.
    let toml = "[[venue]]\nvenue = \"coinbase\"\ninstruments = [\"USDT-USD\", \"USDT-USDC\"]\n";
    assert!(FeedBuilder::from_toml(toml).is_ok());
}
