//! The feed against the exchange simulator, over TLS on loopback: Binance
//! spot streams and REST snapshots for two instruments, both books bridged
//! and valid, every trade and quote the simulator sent arriving as the
//! same event on the JSON Lines sink, the shared-memory ring holding the
//! same events, the books equal to the simulator's once it pauses, and
//! most messages' wire latency measured through the side channel; and the
//! feed thread allocating nothing once warm.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tickwire_feed::FeedId;
use tickwire_feed::live::{Feed, FeedStats, Sinks, VenueSetup, WireStamps};
use tickwire_feed::replay::Venue;
use tickwire_feed::shm;
use tickwire_feed::sink;
use tickwire_net::{Config as NetConfig, TlsConfig};
use tickwire_sim::{self as sim, Sent, SimConfig, SimInstrument, Simulator};
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::InstrumentSpec;
use tickwire_venues::book::Side;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickwire-live-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn wait(feed: &mut Feed, what: &str, secs: u64, mut done: impl FnMut(&Feed) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done(feed) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        feed.poll().unwrap();
    }
}

#[test]
fn the_feed_keeps_the_simulators_books_and_every_event_reaches_the_sinks() {
    let dir = temp_dir("sim");
    let (tls, ca) = sim::self_signed().unwrap();
    let instruments = vec![
        SimInstrument {
            levels: 40,
            ..SimInstrument::btcusdt()
        },
        SimInstrument {
            levels: 40,
            ..SimInstrument::ethusdt()
        },
    ];
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        instruments: instruments.clone(),
        rate: 3000,
        keep_sent: true,
        ..SimConfig::default()
    })
    .unwrap();
    let port = simulator.addr().port();

    let mut trust = TlsConfig::empty();
    trust.add_ca_pem(ca.as_bytes()).unwrap();
    let specs: Vec<InstrumentSpec> = instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 1000))
        .collect();
    let (queue, events) = sink::queue(1 << 20);
    let jsonl = dir.join("events.jsonl");
    let ring_path = dir.join("ring");
    let ring = shm::Writer::create(&ring_path, 1 << 18, &feed_names(&specs)).unwrap();
    let dropped = queue.drop_counter();
    let metrics = Metrics::new(HistogramConfig::default());
    let net = NetConfig {
        send_rate: None,
        ..NetConfig::default()
    };
    let symbols = instruments.iter().map(|i| i.symbol.clone()).collect();
    let mut feed = Feed::builder()
        .check_instruments(false)
        .setup({
            let mut s = VenueSetup::new("sim", Venue::BinanceSpot, specs.clone());
            s.endpoint = Some(format!("wss://localhost:{port}"));
            s.rest = Some(format!("https://localhost:{port}"));
            s
        })
        .net(net)
        .tls(trust)
        .metrics(metrics.clone())
        .sinks(Sinks::default().with_queue(queue).with_ring(ring))
        .send_stamps(simulator.stamps() as Arc<dyn WireStamps>, symbols)
        .build()
        .unwrap();
    let writer = sink::spawn_json_lines(
        events,
        feed.instruments().to_vec(),
        sink::Output::File {
            path: jsonl.clone(),
            max_bytes: 0,
        },
        dropped,
    )
    .unwrap();
    let stats: Arc<FeedStats> = feed.stats();

    wait(&mut feed, "both books valid", 20, |_| {
        FeedStats::get(&stats.books_valid) == 2
    });
    // Warm: the next 2000 messages (decoded, books kept, events to the
    // ring and the queue, stages recorded) allocate nothing on this thread.
    let at = FeedStats::get(&stats.messages);
    let stamped_at = FeedStats::get(&stats.wire_stamped);
    let ((), allocations) = tickwire_testkit::allocations(|| {
        wait(&mut feed, "2000 more messages", 30, |_| {
            FeedStats::get(&stats.messages) >= at + 2000
        })
    });
    assert_eq!(allocations, 0, "allocations on the receive path");
    simulator.pause(true);
    // Quiet for 300 ms: everything sent has arrived.
    let mut last = (FeedStats::get(&stats.messages), Instant::now());
    wait(&mut feed, "the stream to go quiet", 10, |_| {
        let now = FeedStats::get(&stats.messages);
        if now != last.0 {
            last = (now, Instant::now());
        }
        last.1.elapsed() > Duration::from_millis(300)
    });

    assert_eq!(FeedStats::get(&stats.books_valid), 2);
    assert_eq!(FeedStats::get(&stats.gaps), 0);
    assert_eq!(FeedStats::get(&stats.decode_errors), 0);
    assert_eq!(FeedStats::get(&stats.reconnects), 0);
    assert_eq!(FeedStats::get(&stats.snapshots), 2);
    for (n, spec) in specs.iter().enumerate() {
        let (_, bids, asks) = simulator.book(n, spec.depth).unwrap();
        let book = feed.book(FeedId(n as u32)).expect("valid");
        let ours = |side| -> Vec<(i64, i64)> {
            book.levels(side)
                .iter()
                .map(|l| (l.price, l.size))
                .collect()
        };
        assert_eq!(ours(Side::Bid), bids, "{} bids", spec.symbol);
        assert_eq!(ours(Side::Ask), asks, "{} asks", spec.symbol);
    }
    // Once the books are valid, every message is matched to its send stamp
    // (those buffered before a snapshot are not: their stamps may have
    // been overwritten by then).
    let stamped = FeedStats::get(&stats.wire_stamped) - stamped_at;
    let messages = FeedStats::get(&stats.messages) - at;
    assert!(stamped >= 2000, "{stamped} of {messages} stamped");
    assert!(
        stamped * 100 >= messages * 99,
        "{stamped} of {messages} stamped"
    );

    let sinks = feed.shutdown(Duration::from_secs(2)).unwrap();
    let sent = simulator.sent();
    let sim_stats = simulator.stop();
    // The feed's shutdown closes with a close frame and waits for the
    // answer: a goodbye, not a dropped client.
    assert_eq!(
        (sim_stats.dropped_clients, sim_stats.closed_clients),
        (0, 1)
    );
    let (queue, ring) = (sinks.queue, sinks.ring);
    assert_eq!(queue.as_ref().unwrap().dropped(), 0);
    drop(queue);
    let lines = writer.join().unwrap().unwrap();

    // The JSON lines: every trade and quote the simulator sent, in order.
    let text = std::fs::read_to_string(&jsonl).unwrap();
    // The header, then a line an event (a snapshot's levels in its line).
    assert_eq!(text.lines().count() as u64, lines + 1);
    let mut got = Vec::new();
    for line in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let n = specs
            .iter()
            .position(|s| s.symbol == v["symbol"].as_str().unwrap())
            .unwrap();
        let int = |k: &str, scale: u8| -> i64 {
            let s = v[k].as_str().unwrap().replace('.', "");
            assert_eq!(
                v[k].as_str().unwrap().split('.').nth(1).map_or(0, str::len),
                usize::from(scale)
            );
            s.parse().unwrap()
        };
        let spec = &specs[n];
        match v["type"].as_str().unwrap() {
            "trade" => got.push(Sent::Trade {
                instrument: n,
                id: v["trade_id"].as_u64().unwrap(),
                price: int("price", spec.price_scale),
                size: int("size", spec.size_scale),
                buyer_aggressor: v["aggressor"] == "buy",
            }),
            "quote" => got.push(Sent::Quote {
                instrument: n,
                update_id: v["update_id"].as_u64().unwrap(),
                bid: (
                    int("bid_price", spec.price_scale),
                    int("bid_size", spec.size_scale),
                ),
                ask: (
                    int("ask_price", spec.price_scale),
                    int("ask_size", spec.size_scale),
                ),
            }),
            _ => {}
        }
    }
    assert!(sent.len() > 500, "{}", sent.len());
    assert_eq!(got.len(), sent.len());
    assert!(
        got == sent,
        "the events differ from what the simulator sent"
    );

    // The ring: the same events, named by its own instrument table, as
    // the same lines (but for the receive times, converted through a
    // calibration the writer may have refreshed since).
    drop(ring);
    let mut reader = shm::Reader::open(&ring_path).unwrap();
    reader.rewind();
    let names = reader
        .instruments()
        .iter()
        .map(|i| sink::Instrument {
            venue: i.venue.clone(),
            symbol: i.symbol.clone(),
            price_scale: i.price_scale,
            size_scale: i.size_scale,
        })
        .collect();
    let mut encoder = sink::Encoder::new(names);
    let mut from_ring = Vec::new();
    sink::Encoder::header(&mut from_ring);
    loop {
        match reader.read() {
            shm::Read::Event(e) => encoder.encode(&e, 0, &mut from_ring),
            shm::Read::Empty => break,
            shm::Read::Lost(n) => panic!("lost {n}"),
            shm::Read::Reattached { generation } => panic!("reattached to {generation:x}"),
        }
    }
    let without_recv = |text: &str| -> Vec<serde_json::Value> {
        text.lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("recv_ns");
                v
            })
            .collect()
    };
    let from_ring = without_recv(std::str::from_utf8(&from_ring).unwrap());
    assert_eq!(from_ring.len(), text.lines().count());
    assert!(
        from_ring == without_recv(&text),
        "the ring's events differ from the JSON lines"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn feed_names(specs: &[InstrumentSpec]) -> Vec<sink::Instrument> {
    specs
        .iter()
        .map(|s| sink::Instrument {
            venue: "sim".into(),
            symbol: s.symbol.clone(),
            price_scale: s.price_scale,
            size_scale: s.size_scale,
        })
        .collect()
}
