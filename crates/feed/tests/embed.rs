//! The feed embedded in a bot, as `examples/book_top.rs` uses it: built by
//! venue name against in-process simulators, polled on the test's thread,
//! each message's events handed over with the books as that message left
//! them. Once warm, polling allocates nothing on the bot's thread.

use std::time::{Duration, Instant};

use tickwire_feed::{Feed, FeedBuilder, Update};
use tickwire_venues::Kind;

#[global_allocator]
static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

/// What the bot's handler saw.
#[derive(Default)]
struct Seen {
    updates: u64,
    /// Updates that changed a valid book.
    book_updates: u64,
    /// Each venue's and symbol's last best bid and ask, as printed.
    tops: Vec<(String, String, String)>,
    /// A book handed over crossed (never, while valid).
    crossed: u64,
    /// Trades seen.
    trades: u64,
    /// Books the handler was told are no longer valid.
    invalidated: u64,
}

fn poll_until<H: tickwire_feed::OnEvent>(
    feed: &mut Feed<H>,
    what: &str,
    mut done: impl FnMut(&Feed<H>) -> bool,
) {
    // A deadline only: generous for a debug build on a busy machine.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done(feed) {
        assert!(Instant::now() < deadline, "never: {what}");
        feed.poll().unwrap();
    }
}

#[test]
fn venues_named_hold_valid_books_read_by_name() {
    let venues: [(&str, &str); 4] = [
        ("binance-spot", "BTCUSDT:10"),
        ("okx", "BTC-USDT:10"),
        ("kraken", "BTC/USD:10"),
        ("bybit-linear", "BTCUSDT:10"),
    ];
    let mut b = FeedBuilder::new().simulated(true);
    for (venue, instrument) in venues {
        b = b.venue(venue, &[instrument]);
    }
    // No handler: the bot looks at the books by name between polls.
    let mut feed = b.build().unwrap();
    poll_until(&mut feed, "every venue's book valid", |f| {
        venues.iter().all(|(venue, instrument)| {
            let symbol = instrument.split(':').next().unwrap();
            f.book_of(venue, symbol).is_some()
        })
    });
    for (venue, instrument) in venues {
        let symbol = instrument.split(':').next().unwrap();
        let book = feed.book_of(venue, symbol).unwrap();
        let (bid, ask) = book.top().unwrap();
        assert!(bid.price < ask.price, "{venue} {symbol} crossed");
        assert_eq!(book.depth(), 10, "{venue} {symbol}");
    }
    assert!(feed.book_of("binance-spot", "ETHUSDT").is_none());
    assert!(feed.book_of("nowhere", "BTCUSDT").is_none());
}

#[test]
fn the_handler_sees_each_message_with_its_book_and_polling_allocates_nothing_once_warm() {
    struct Bot(Seen);
    impl tickwire_feed::OnEvent for Bot {
        fn on_update(&mut self, u: &Update<'_>) {
            let seen = &mut self.0;
            seen.updates += 1;
            seen.trades += u
                .events()
                .iter()
                .filter(|e| matches!(e.kind, Kind::Trade { .. }))
                .count() as u64;
            for (id, book) in u.books() {
                let Some(book) = book else {
                    seen.invalidated += 1;
                    continue;
                };
                seen.book_updates += 1;
                if book.is_crossed() {
                    seen.crossed += 1;
                }
                if let Some((bid, ask)) = book.top()
                    && seen.tops.len() < 4
                {
                    seen.tops.push((
                        u.symbol(id).to_owned(),
                        u.price(id, bid.price).to_string(),
                        u.price(id, ask.price).to_string(),
                    ));
                }
            }
        }
    }
    let mut feed = Feed::builder()
        .venue("binance-spot", &["BTCUSDT:20", "ETHUSDT:20"])
        .simulated(true)
        .build_with(Bot(Seen::default()))
        .unwrap();
    // Warm: both books valid and a few hundred updates through.
    poll_until(&mut feed, "both books valid and 300 updates", |f| {
        f.book_of("binance-spot", "BTCUSDT").is_some()
            && f.book_of("binance-spot", "ETHUSDT").is_some()
            && f.handler().0.book_updates >= 300
    });
    let before = feed.handler().0.updates;
    let books_before = feed.handler().0.book_updates;
    let stats = feed.stats();
    let counts = |s: &tickwire_feed::live::FeedStats| {
        let n = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        (n(&s.reconnects), n(&s.resyncs), n(&s.gaps))
    };
    let recoveries = counts(&stats);
    // Before: each book's first resync (a Binance book asks for its REST
    // snapshot), told as a book not valid.
    let invalidated = feed.handler().0.invalidated;
    let (_, allocations) = tickwire_testkit::allocations(|| {
        let target = before + 500;
        poll_until(&mut feed, "500 more updates", |f| {
            f.handler().0.updates >= target
        });
    });
    let seen = &feed.handler().0;
    // A recovery in the window (a machine starved long enough for a
    // stall) would be a different failure than an allocation: said apart.
    assert_eq!(
        counts(&stats),
        recoveries,
        "a reconnect, resync or gap in the window"
    );
    assert_eq!(allocations, 0, "the embedded feed allocated while warm");
    assert_eq!(
        seen.invalidated, invalidated,
        "a book went invalid in the window"
    );
    assert!(seen.book_updates > books_before);
    assert!(seen.trades > 0, "no trade reached the handler");
    assert_eq!(seen.crossed, 0);
    let (symbol, bid, ask) = &seen.tops[0];
    assert!(symbol == "BTCUSDT" || symbol == "ETHUSDT", "{symbol}");
    // Exact decimals: Binance's 8 places.
    assert_eq!(bid.split_once('.').unwrap().1.len(), 8, "{bid}");
    assert!(
        bid.parse::<f64>().unwrap() < ask.parse::<f64>().unwrap(),
        "{bid} {ask}"
    );
}

#[test]
fn a_bot_sends_its_own_request_and_hears_the_venue_refuse_it() {
    let mut feed = Feed::builder()
        .venue("binance-spot", &["BTCUSDT:10"])
        .simulated(true)
        .build()
        .unwrap();
    poll_until(&mut feed, "the book valid", |f| {
        f.book_of("binance-spot", "BTCUSDT").is_some()
    });
    assert!(feed.send("nowhere", "{}").is_err());
    // A malformed stream name: refused, in the venue's own words.
    let request = r#"{"method":"SUBSCRIBE","params":["btc usdt"],"id":77}"#;
    assert_eq!(feed.send("binance-spot", request).unwrap(), 1);
    let stats = feed.stats();
    poll_until(&mut feed, "the refusal", |_| {
        stats.rejections.load(std::sync::atomic::Ordering::Relaxed) > 0
    });
    assert!(
        feed.rejection(0).contains("invalid stream"),
        "{}",
        feed.rejection(0)
    );
}

#[test]
fn a_feed_on_its_own_thread_hands_its_handler_back_when_stopped() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let books = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&books);
    let running = Feed::builder()
        .venue("okx", &["BTC-USDT:5"])
        .simulated(true)
        .spawn(None, move |u: &Update<'_>| {
            let valid = u.books().filter(|(_, b)| b.is_some()).count();
            seen.fetch_add(valid as u64, Ordering::Relaxed);
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while books.load(Ordering::Relaxed) < 50 {
        assert!(Instant::now() < deadline, "never 50 book updates");
        std::thread::yield_now();
    }
    // Its counters are live from the caller's thread.
    while running.stats().books_valid.load(Ordering::Relaxed) != 1 {
        assert!(Instant::now() < deadline, "the book never counted valid");
        std::thread::yield_now();
    }
    let handler = running.stop().unwrap();
    drop(handler);
    assert!(books.load(Ordering::Relaxed) >= 50);
    // A feed that cannot be built says why, from the caller's thread.
    let e = Feed::builder()
        .venue("okx", &["BTC-USDT:x"])
        .spawn(None, |_: &Update<'_>| {})
        .unwrap_err();
    assert!(e.to_string().contains("BTC-USDT:x"), "{e}");
}

#[test]
fn a_gap_reaches_the_handler_as_a_book_no_longer_valid_then_valid_again() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use tickwire_sim::{SimConfig, Simulator, VenueFault};
    use tickwire_venues::Venue;
    // A simulator of our own, to arm a fault on it.
    let (tls, ca) = tickwire_sim::self_signed().unwrap();
    let dir = std::env::temp_dir().join(format!("tickwire-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let sim = Simulator::start(SimConfig {
        tls: Some(tls),
        rate: 500,
        ..SimConfig::new(Venue::Okx)
    })
    .unwrap();
    // From the configuration's text, as a bot reading its own file would.
    let url = format!("wss://localhost:{}", sim.addr().port());
    let toml = format!(
        "[[venue]]\nvenue = \"okx\"\ninstruments = [\"BTC-USDT:5\"]\nendpoint = \"{url}\"\n"
    );
    let invalid = std::sync::Arc::new(AtomicBool::new(false));
    let told = std::sync::Arc::clone(&invalid);
    let mut feed = FeedBuilder::from_toml(&toml)
        .unwrap()
        .ca_file(&ca_file)
        .build_with(move |u: &Update<'_>| {
            for (_, book) in u.books() {
                if book.is_none() {
                    told.store(true, Ordering::Relaxed);
                }
            }
        })
        .unwrap();
    poll_until(&mut feed, "the book valid", |f| {
        f.book_of("okx", "BTC-USDT").is_some()
    });
    // BTC-USDT is the simulator's first instrument.
    assert!(sim.fault(0, VenueFault::SequenceGap));
    poll_until(&mut feed, "the handler told of the gap", |_| {
        invalid.load(Ordering::Relaxed)
    });
    poll_until(&mut feed, "the book valid again", |f| {
        f.book_of("okx", "BTC-USDT").is_some()
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_feed_whose_handler_panicked_refuses_to_poll_again() {
    let mut feed = Feed::builder()
        .venue("okx", &["BTC-USDT:5"])
        .simulated(true)
        .build_with(|u: &Update<'_>| {
            if u.books().any(|(_, b)| b.is_some()) {
                panic!("the bot's own bug");
            }
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let caught = loop {
        assert!(Instant::now() < deadline, "the handler never ran");
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| feed.poll()));
        if polled.is_err() {
            break true;
        }
    };
    assert!(caught);
    let e = feed.poll().unwrap_err();
    assert!(e.to_string().contains("panicked"), "{e}");
}
