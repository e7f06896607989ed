//! REST snapshots that a venue will not ban for. A book whose fetch is
//! answered with an error asks again after a backoff that grows (at once,
//! then 500 ms, 1 s, 2 s...), never once a round trip; a 429 holds every
//! fetch of the venue for its `Retry-After`; a ban (418) stops them; and
//! 200 books come up against the simulator's weight limit without a ban.
//! The venue's stream is the simulator's (Binance spot); its REST "venue"
//! is either the simulator or a server in this test that answers every
//! request alike and notes when each came.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tickwire_feed::live::{Feed, FeedStats, VenueSetup};
use tickwire_feed::replay::Venue;
use tickwire_net::{Config as NetConfig, TlsConfig};
use tickwire_sim::{SimConfig, SimInstrument, Simulator};
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::InstrumentSpec;

/// A server answering every HTTP request with `head` (status line and
/// headers) and a Binance error body; the instants the requests came, in
/// order.
fn answering(head: &'static str) -> (u16, Arc<Mutex<Vec<Instant>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            log.lock().unwrap().push(Instant::now());
            let body = r#"{"code":-1003,"msg":"Too many requests."}"#;
            let _ = write!(
                conn,
                "{head}\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

/// A feed of Binance spot `instruments` streaming from `simulator` and
/// fetching its snapshots from `rest` (`http://host:port`), believing the
/// venue allows `rest_weight_limit` a minute if given.
fn feed(
    simulator: &Simulator,
    instruments: Vec<InstrumentSpec>,
    rest: String,
    rest_weight_limit: Option<u32>,
) -> Feed {
    Feed::builder()
        .check_instruments(false)
        .setup({
            let mut s = VenueSetup::new("binance-spot", Venue::BinanceSpot, instruments);
            s.endpoint = Some(format!("ws://{}", simulator.addr()));
            s.rest = Some(rest);
            s.rest_weight_limit = rest_weight_limit;
            s
        })
        .net(NetConfig {
            send_rate: None,
            ..NetConfig::default()
        })
        .tls(TlsConfig::empty())
        .metrics(Metrics::new(HistogramConfig::default()))
        .build()
        .unwrap()
}

/// The simulator's default pair, streaming; a feed of both books fetching
/// from the test's server answering `head`.
fn pair_against(head: &'static str) -> (Simulator, Feed, Arc<Mutex<Vec<Instant>>>) {
    let simulator = Simulator::start(SimConfig {
        tls: None,
        rate: 500,
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let (rest_port, requests) = answering(head);
    let instruments: Vec<InstrumentSpec> = SimConfig::new(Venue::BinanceSpot)
        .instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 20))
        .collect();
    let feed = feed(
        &simulator,
        instruments,
        format!("http://127.0.0.1:{rest_port}"),
        None,
    );
    (simulator, feed, requests)
}

/// Polls `feed` until `done` (at most 60 s: a broken feed fails the test
/// rather than hang it).
fn poll_until(feed: &mut Feed, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what} did not come");
        feed.poll().unwrap();
    }
}

#[test]
fn a_failed_snapshot_is_asked_again_ever_more_slowly() {
    let (simulator, mut feed, requests) = pair_against("HTTP/1.1 503 Service Unavailable");
    let stats = feed.stats();
    let books = 2;
    // Four fetches of each book: at once, then after 500 ms, 1 s and 2 s
    // (each counted from the error before it).
    const FETCHES: usize = 4;
    poll_until(&mut feed, "the fetches", || {
        requests.lock().unwrap().len() >= FETCHES * books
    });
    let seen = requests.lock().unwrap().clone();
    let floor: Duration = [500, 1000, 2000].map(Duration::from_millis).iter().sum();
    let took = seen[FETCHES * books - 1] - seen[0];
    // A floor a loaded machine can only add to; asking again at once
    // (as before) takes a few milliseconds.
    assert!(
        took >= floor,
        "{} fetches in {took:?}, sooner than their backoff ({floor:?})",
        FETCHES * books
    );
    assert_eq!(FeedStats::get(&stats.books_valid), 0);
    drop(feed);
    simulator.stop();
}

#[test]
fn a_429_holds_every_fetch_of_the_venue_for_its_retry_after() {
    let (simulator, mut feed, requests) =
        pair_against("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3");
    let stats = feed.stats();
    // The first 429 holds every fetch for the 3 s the venue said: before
    // then only the requests already on their way (each book's first, at
    // most) arrive. A book's own backoff alone would ask again after
    // 500 ms and 1.5 s.
    poll_until(&mut feed, "three requests", || {
        requests.lock().unwrap().len() >= 3
    });
    let seen = requests.lock().unwrap().clone();
    let early = seen
        .iter()
        .filter(|&&t| t - seen[0] < Duration::from_secs(3))
        .count();
    assert!(
        early <= 2,
        "{early} requests within 3 s: {:?}",
        seen.iter().map(|&t| t - seen[0]).collect::<Vec<_>>()
    );
    let venue = &stats.venues[0];
    assert!(FeedStats::get(&venue.rest_throttled) >= 1);
    assert_eq!(FeedStats::get(&venue.rest_bans), 0);
    drop(feed);
    simulator.stop();
}

#[test]
fn a_ban_stops_every_fetch_of_the_venue_and_says_so() {
    let (simulator, mut feed, requests) =
        pair_against("HTTP/1.1 418 I'm a teapot\r\nRetry-After: 3600");
    let stats = feed.stats();
    let venue = &stats.venues[0];
    // Every request sent answered (one on its way when the first ban
    // came is banned too).
    poll_until(&mut feed, "the ban", || {
        let bans = FeedStats::get(&venue.rest_bans);
        bans >= 1 && bans == FeedStats::get(&venue.rest_requests)
    });
    let (cause, _) = venue.last_failure().expect("the ban is the last failure");
    assert!(cause.starts_with("answered HTTP 418"), "{cause}");
    // Long past the books' backoff (500 ms, then 1 s): nothing more asked.
    let asked = requests.lock().unwrap().len();
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        feed.poll().unwrap();
    }
    assert_eq!(requests.lock().unwrap().len(), asked);
    assert_eq!(FeedStats::get(&venue.rest_requests), asked as u64);
    drop(feed);
    simulator.stop();
}

/// 200 books, the feed told the venue allows twice what the simulator
/// does (as if another program spent from the same address): the feed's
/// first burst meets the simulator's 429, waits as told, and every book
/// comes up, without a ban.
#[test]
fn two_hundred_books_come_up_without_a_ban() {
    const BOOKS: usize = 200;
    let instruments: Vec<SimInstrument> = (0..BOOKS)
        .map(|n| SimInstrument {
            symbol: format!("C{n:03}USDT"),
            levels: 50,
            ..SimInstrument::btcusdt()
        })
        .collect();
    let specs = instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 10))
        .collect();
    let simulator = Simulator::start(SimConfig {
        tls: None,
        rate: 2000,
        instruments,
        // Binance spot's own limit, said here so the test reads alone.
        rest_weight_limit: Some(6000),
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let rest = format!("http://{}", simulator.addr());
    let mut feed = feed(&simulator, specs, rest, Some(12_000));
    let stats = feed.stats();
    let deadline = Instant::now() + Duration::from_secs(240);
    while FeedStats::get(&stats.books_valid) < BOOKS as u64 {
        assert!(
            Instant::now() < deadline,
            "{} of {BOOKS} books valid; the simulator: {:?}",
            FeedStats::get(&stats.books_valid),
            simulator.stats()
        );
        feed.poll().unwrap();
    }
    let sim = simulator.stats();
    let venue = &stats.venues[0];
    assert_eq!(sim.rest_banned, 0, "{sim:?}");
    assert_eq!(FeedStats::get(&venue.rest_bans), 0);
    // The scenario happened: the simulator's limit was met.
    assert!(sim.rest_throttled >= 1, "{sim:?}");
    assert_eq!(FeedStats::get(&venue.rest_throttled), sim.rest_throttled);
    assert_eq!(FeedStats::get(&venue.rest_requests), sim.rest_requests);
    drop(feed);
    simulator.stop();
}
