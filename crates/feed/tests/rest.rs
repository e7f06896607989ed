//! REST snapshots that a venue will not ban for: a book whose fetch is
//! answered with an error asks again after a backoff that grows (at once,
//! then 500 ms, 1 s, 2 s...), never once a round trip. The venue's stream
//! is the simulator's (Binance spot); its REST "venue" is a server in this
//! test that answers every request 429, as Binance does past its request
//! weight limit, and notes when each came.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tickwire_feed::live::{Feed, FeedStats, Sinks, VenueSetup};
use tickwire_feed::replay::Venue;
use tickwire_net::{Config as NetConfig, TlsConfig};
use tickwire_sim::{SimConfig, Simulator};
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::InstrumentSpec;
use tickwire_venues::plan::Channels;

/// A server answering every HTTP request 429; the instants the requests
/// came, in order.
fn refusing_server() -> (u16, Arc<Mutex<Vec<Instant>>>) {
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
                "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

#[test]
fn a_refused_snapshot_is_asked_again_ever_more_slowly() {
    let simulator = Simulator::start(SimConfig {
        tls: None,
        rate: 500,
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let (rest_port, requests) = refusing_server();
    let instruments: Vec<InstrumentSpec> = SimConfig::new(Venue::BinanceSpot)
        .instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 20))
        .collect();
    let books = instruments.len();
    let mut feed = Feed::new(
        vec![VenueSetup {
            name: "binance-spot".into(),
            venue: Venue::BinanceSpot,
            instruments,
            channels: Channels::default(),
            endpoint: Some(format!("ws://{}", simulator.addr())),
            rest: Some(format!("http://127.0.0.1:{rest_port}")),
        }],
        NetConfig {
            send_rate: None,
            ..NetConfig::default()
        },
        &TlsConfig::empty(),
        &Metrics::new(HistogramConfig::default()),
        Sinks::default(),
        None,
        0,
    )
    .unwrap();
    let stats = feed.stats();
    // Four fetches of each book: at once, then after 500 ms, 1 s and 2 s
    // (each counted from the error before it).
    const FETCHES: usize = 4;
    let deadline = Instant::now() + Duration::from_secs(60);
    while requests.lock().unwrap().len() < FETCHES * books {
        assert!(Instant::now() < deadline, "the fetches did not come");
        feed.poll().unwrap();
    }
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
