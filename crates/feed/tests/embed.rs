//! The feed embedded in a bot, as `examples/book_top.rs` uses it: built by
//! venue name against in-process simulators, polled on the test's thread,
//! each message's events handed over with the books as that message left
//! them. Once warm, polling allocates nothing on the bot's thread.

use std::time::{Duration, Instant};

use tickwire_feed::{Feed, FeedBuilder, Update};
use tickwire_sim::SimInstrument;
use tickwire_venues::{Kind, Venue};

/// What the bot's handler saw.
#[derive(Default)]
struct Seen {
    updates: u64,
    /// Updates that changed a valid book.
    book_updates: u64,
    /// Each venue's and symbol's last best bid and ask, as printed.
    /// The first top of book of each venue: venue, symbol, bid, ask, and
    /// the instrument's price decimals.
    tops: Vec<(String, String, String, String, u8)>,
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
fn every_venue_by_name_holds_valid_books_read_by_name() {
    // Every venue the project lists, each as its simulator names its BTC
    // instrument, on one in-process simulator each.
    let venues: Vec<(&str, String)> = Venue::ALL
        .iter()
        .map(|&(_, v)| (v.name(), SimInstrument::pair(v)[0].symbol.clone()))
        .collect();
    let mut b = FeedBuilder::new().simulated(true);
    for (venue, symbol) in &venues {
        b = b.venue(venue, &[&format!("{symbol}:10")]);
    }
    // No handler: the bot looks at the books by name between polls.
    let mut feed = b.build().unwrap();
    poll_until(&mut feed, "every venue's book valid", |f| {
        venues
            .iter()
            .all(|(venue, symbol)| f.book_of(f.venue(venue).unwrap(), symbol).is_some())
    });
    for (venue, symbol) in &venues {
        let book = feed.book_of(feed.venue(venue).unwrap(), symbol).unwrap();
        let (bid, ask) = book.top().unwrap();
        assert!(bid.price < ask.price, "{venue} {symbol} crossed");
        assert_eq!(book.depth(), 10, "{venue} {symbol}");
    }
    assert!(
        feed.book_of(feed.venue("binance-spot").unwrap(), "ETHUSDT")
            .is_none()
    );
    assert!(feed.venue("nowhere").is_none());
}

#[test]
fn on_every_venue_the_handler_sees_each_message_with_its_book_and_polling_allocates_nothing_once_warm()
 {
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
                    && !seen.tops.iter().any(|t| t.0 == u.venue())
                {
                    seen.tops.push((
                        u.venue().to_owned(),
                        u.symbol(id).to_owned(),
                        u.price(id, bid.price).to_string(),
                        u.price(id, ask.price).to_string(),
                        u.spec(id).unwrap().price_scale,
                    ));
                }
            }
        }
    }
    // Every venue the project lists, both of its simulator's instruments.
    let books: Vec<(&str, String)> = Venue::ALL
        .iter()
        .flat_map(|&(_, v)| {
            SimInstrument::pair(v)
                .into_iter()
                .map(move |i| (v.name(), i.symbol))
        })
        .collect();
    let mut b = Feed::builder().simulated(true);
    for &(_, v) in &Venue::ALL {
        let pair: Vec<String> = SimInstrument::pair(v)
            .iter()
            .map(|i| format!("{}:20", i.symbol))
            .collect();
        let pair: Vec<&str> = pair.iter().map(String::as_str).collect();
        b = b.venue(v.name(), &pair);
    }
    let mut feed = b.build_with(Bot(Seen::default())).unwrap();
    // Warm: every book valid and a few thousand updates through.
    poll_until(&mut feed, "every book valid and 3000 updates", |f| {
        books
            .iter()
            .all(|(v, s)| f.book_of(f.venue(v).unwrap(), s).is_some())
            && f.handler().0.book_updates >= 3000
    });
    let books_before = feed.handler().0.book_updates;
    let stats = feed.stats();
    let counts = |s: &tickwire_feed::live::FeedStats| {
        let n = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        (n(&s.reconnects), n(&s.resyncs), n(&s.gaps))
    };
    // Windows of 5000 updates. A window with a recovery in it (a machine
    // starved long enough for a stall: a reconnect, a resync, a gap, a book
    // told invalid) measures the recovery, not the steady path: it is
    // counted as disturbed and another is measured, as the soak does. A
    // steady window must allocate nothing.
    let mut disturbed = 0;
    loop {
        let before = feed.handler().0.updates;
        let recoveries = counts(&stats);
        let invalidated = feed.handler().0.invalidated;
        let (_, allocations) = tickwire_testkit::allocations(|| {
            let target = before + 5000;
            poll_until(&mut feed, "5000 more updates", |f| {
                f.handler().0.updates >= target
            });
        });
        if counts(&stats) != recoveries || feed.handler().0.invalidated != invalidated {
            disturbed += 1;
            assert!(disturbed < 5, "5 windows in a row had a recovery in them");
            // Warm again: every book valid, and the recovery's own work
            // (a snapshot fetched, applied) done before the next window.
            let again = feed.handler().0.updates + 1000;
            poll_until(&mut feed, "every book valid again", |f| {
                books
                    .iter()
                    .all(|(v, s)| f.book_of(f.venue(v).unwrap(), s).is_some())
                    && f.handler().0.updates >= again
            });
            continue;
        }
        assert_eq!(allocations, 0, "the embedded feed allocated while warm");
        break;
    }
    let seen = &feed.handler().0;
    assert!(seen.book_updates > books_before);
    assert!(seen.trades > 0, "no trade reached the handler");
    assert_eq!(seen.crossed, 0);
    // Every venue's books reached the handler, named, each price with
    // exactly its instrument's decimals.
    assert_eq!(seen.tops.len(), Venue::ALL.len(), "{:?}", seen.tops);
    for (venue, symbol, bid, ask, scale) in &seen.tops {
        assert!(
            books.iter().any(|(v, s)| v == venue && s == symbol),
            "{venue} {symbol}"
        );
        let decimals = bid.split_once('.').map_or(0, |(_, d)| d.len());
        assert_eq!(decimals, usize::from(*scale), "{venue} {bid}");
        assert!(
            bid.parse::<f64>().unwrap() < ask.parse::<f64>().unwrap(),
            "{venue} {bid} {ask}"
        );
    }
}

#[test]
fn a_bot_sends_its_own_request_and_hears_the_venue_refuse_it() {
    let mut feed = Feed::builder()
        .venue("binance-spot", &["BTCUSDT:10"])
        .simulated(true)
        .build()
        .unwrap();
    poll_until(&mut feed, "the book valid", |f| {
        f.book_of(f.venue("binance-spot").unwrap(), "BTCUSDT")
            .is_some()
    });
    // A malformed stream name: refused, in the venue's own words.
    let request = r#"{"method":"SUBSCRIBE","params":["btc usdt"],"id":77}"#;
    assert_eq!(
        feed.send(feed.venue("binance-spot").unwrap(), request)
            .unwrap(),
        1
    );
    let stats = feed.stats();
    poll_until(&mut feed, "the refusal", |_| {
        stats.rejections.load(std::sync::atomic::Ordering::Relaxed) > 0
    });
    assert!(
        feed.rejection(feed.venue("binance-spot").unwrap())
            .contains("invalid stream"),
        "{}",
        feed.rejection(feed.venue("binance-spot").unwrap())
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
fn on_every_venue_a_gap_reaches_the_handler_as_a_book_no_longer_valid_then_valid_again() {
    use std::sync::{Arc, Mutex};
    use tickwire_sim::{SimConfig, Simulator, VenueFault};
    // Simulators of our own, to arm a fault on each.
    let (tls, ca) = tickwire_sim::self_signed().unwrap();
    let dir = std::env::temp_dir().join(format!("tickwire-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let mut sims = Vec::new();
    // The feed from a configuration's text, as a bot reading its own file
    // would: every venue, each at its simulator.
    let mut toml = String::new();
    for &(_, venue) in &Venue::ALL {
        let sim = Simulator::start(SimConfig {
            tls: Some(tls.clone()),
            rate: 500,
            ..SimConfig::new(venue)
        })
        .unwrap();
        let port = sim.addr().port();
        let symbol = &SimInstrument::pair(venue)[0].symbol;
        toml.push_str(&format!(
            "[[venue]]\nvenue = \"{}\"\ninstruments = [\"{symbol}:5\"]\n\
             endpoint = \"wss://localhost:{port}\"\nrest = \"https://localhost:{port}\"\n",
            venue.name()
        ));
        if venue == Venue::BinanceSpotSbe {
            // Its streams need a key: from an owner-only file, as a bot
            // keeps it (the simulator takes any).
            use std::os::unix::fs::PermissionsExt;
            let key_file = dir.join("sbe-key");
            std::fs::write(&key_file, "key = throw-away-test-key\n").unwrap();
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
            toml.push_str(&format!(
                "api_key_file = {:?}\n",
                key_file.display().to_string()
            ));
        }
        sims.push((venue, symbol.clone(), sim));
    }
    // Per venue (by position): told its book was no longer valid.
    let told = Arc::new(Mutex::new(vec![false; sims.len()]));
    let seen = Arc::clone(&told);
    let mut feed = FeedBuilder::from_toml(&toml)
        .unwrap()
        .ca_file(&ca_file)
        .build_with(move |u: &Update<'_>| {
            if u.books().any(|(_, book)| book.is_none()) {
                seen.lock().unwrap()[u.venue_id().index()] = true;
            }
        })
        .unwrap();
    let all_valid = |f: &Feed<_>| {
        sims.iter()
            .all(|(v, symbol, _)| f.book_of(f.venue(v.name()).unwrap(), symbol).is_some())
    };
    poll_until(&mut feed, "every book valid", all_valid);
    // What happened before (a Binance book's first resync) is not this.
    told.lock().unwrap().fill(false);
    for (venue, _, sim) in &sims {
        // Its BTC instrument is the simulator's first.
        assert!(sim.fault(0, VenueFault::SequenceGap), "{venue:?}");
    }
    poll_until(&mut feed, "every venue's handler told of its gap", |_| {
        told.lock().unwrap().iter().all(|t| *t)
    });
    poll_until(&mut feed, "every book valid again", all_valid);
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

/// Simulators of `venues` (their own configuration from `config`), and
/// a feed of each one's BTC book built from a configuration's text.
struct Rig {
    sims: Vec<(Venue, String, tickwire_sim::Simulator)>,
    feed: Feed,
    dir: std::path::PathBuf,
}

impl Rig {
    fn start(
        tag: &str,
        venues: impl IntoIterator<Item = Venue>,
        config: impl Fn(tickwire_sim::SimConfig) -> tickwire_sim::SimConfig,
    ) -> Rig {
        use tickwire_sim::{SimConfig, Simulator};
        let (tls, ca) = tickwire_sim::self_signed().unwrap();
        let dir = std::env::temp_dir().join(format!("tickwire-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ca.pem"), ca).unwrap();
        let mut sims = Vec::new();
        let mut toml = String::new();
        for venue in venues {
            let sim = Simulator::start(config(SimConfig {
                tls: Some(tls.clone()),
                rate: 500,
                ..SimConfig::new(venue)
            }))
            .unwrap();
            let port = sim.addr().port();
            let symbol = &SimInstrument::pair(venue)[0].symbol;
            toml.push_str(&format!(
                "[[venue]]\nvenue = \"{}\"\ninstruments = [\"{symbol}:5\"]\n\
                 endpoint = \"wss://localhost:{port}\"\nrest = \"https://localhost:{port}\"\n",
                venue.name()
            ));
            sims.push((venue, symbol.clone(), sim));
        }
        let mut feed = FeedBuilder::from_toml(&toml)
            .unwrap()
            .ca_file(dir.join("ca.pem"))
            .build()
            .unwrap();
        let rig_sims = &sims;
        poll_until(&mut feed, "every book valid", |f| all_valid(rig_sims, f));
        Rig { sims, feed, dir }
    }

    /// The venues whose snapshots come in band.
    fn in_band(tag: &str) -> Rig {
        let venues = Venue::ALL.iter().map(|&(_, v)| v);
        Rig::start(tag, venues.filter(|v| !v.rest_snapshots()), |c| c)
    }

    /// Polls until `done`, with the simulators' books to hand.
    fn poll_until(&mut self, what: &str, mut done: impl FnMut(&Self, &Feed) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done(self, &self.feed) {
            if Instant::now() >= deadline {
                let stats = self.feed.stats();
                let lines: Vec<String> = stats
                    .venues
                    .iter()
                    .map(|v| format!("{}: {}", v.name, v.line()))
                    .collect();
                panic!("never: {what}\n{}", lines.join("\n"));
            }
            self.feed.poll().unwrap();
        }
    }

    fn all_valid(&self, feed: &Feed) -> bool {
        all_valid(&self.sims, feed)
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn all_valid(sims: &[(Venue, String, tickwire_sim::Simulator)], feed: &Feed) -> bool {
    sims.iter().all(|(v, symbol, _)| {
        feed.book_of(feed.venue(v.name()).unwrap(), symbol)
            .is_some()
    })
}

/// A venue that answers a resubscription with nothing (no reply, no
/// snapshot) is asked again: the book is valid again, on every venue whose
/// snapshots come in band. (Before, the book waited for the connection to
/// drop.)
#[test]
fn on_every_in_band_venue_a_resubscription_answered_with_nothing_is_asked_again() {
    use std::sync::atomic::Ordering;
    use tickwire_sim::VenueFault;
    let mut rig = Rig::in_band("silent");
    let stats = rig.feed.stats();
    let before = stats.resubscriptions.load(Ordering::Relaxed);
    let gaps = stats.gaps.load(Ordering::Relaxed);
    for (venue, _, sim) in &rig.sims {
        assert!(sim.fault(0, VenueFault::IgnoreSubscription), "{venue:?}");
        assert!(sim.fault(0, VenueFault::SequenceGap), "{venue:?}");
    }
    let venues = rig.sims.len() as u64;
    rig.poll_until("every venue's gap", |_, f| {
        f.stats().gaps.load(Ordering::Relaxed) >= gaps + venues
    });
    rig.poll_until("every book valid again", Rig::all_valid);
    // Each venue's book was resubscribed twice at least: the request
    // ignored, then the one that followed it up.
    let resubscribed = stats.resubscriptions.load(Ordering::Relaxed) - before;
    assert!(resubscribed >= 2 * venues, "{resubscribed}");
    assert_eq!(stats.reconnects.load(Ordering::Relaxed), 0);
}

/// A venue that answers every resubscription of a book with nothing: after
/// the last follow-up the book's connection is replaced, make-before-break
/// (a planned reconnect, no unplanned one), and the new connection's
/// snapshot makes the book valid again.
#[test]
fn on_every_in_band_venue_a_book_never_answered_gets_a_new_connection() {
    use std::sync::atomic::Ordering;
    use tickwire_sim::VenueFault;
    let mut rig = Rig::in_band("replace");
    let stats = rig.feed.stats();
    let gaps = stats.gaps.load(Ordering::Relaxed);
    for (venue, _, sim) in &rig.sims {
        // Every resubscription the feed makes before it gives up on the
        // connection (tickwire_feed's REPLACE_AFTER is 3).
        for _ in 0..3 {
            assert!(sim.fault(0, VenueFault::IgnoreSubscription), "{venue:?}");
        }
        assert!(sim.fault(0, VenueFault::SequenceGap), "{venue:?}");
    }
    let venues = rig.sims.len() as u64;
    rig.poll_until("every venue's gap", |_, f| {
        f.stats().gaps.load(Ordering::Relaxed) >= gaps + venues
    });
    // Valid again, on a new connection (the old one closes once the new
    // one carries the book).
    rig.poll_until(
        "every book valid again, its connection replaced",
        |rig, f| rig.all_valid(f) && every_venue_replaced(&stats),
    );
    assert_eq!(stats.reconnects.load(Ordering::Relaxed), 0);
}

fn every_venue_replaced(stats: &tickwire_feed::live::FeedStats) -> bool {
    use std::sync::atomic::Ordering;
    stats
        .venues
        .iter()
        .all(|v| v.planned_reconnects.load(Ordering::Relaxed) >= 1)
}

/// A venue that announces a restart (Binance spot's `serverShutdown`,
/// OKX's notice 64008) has its connection replaced before it closes: a
/// planned reconnect, no gap, no unplanned reconnect. (Before, the notice
/// was ignored and the close cost a gap and a resync.)
#[test]
fn a_restart_announced_by_the_venue_is_a_planned_reconnect_with_no_gap() {
    use std::sync::atomic::Ordering;
    use tickwire_sim::{SimConfig, VenueFault};
    // The close comes later than any replacement takes: the feed must not
    // wait for it.
    let mut rig = Rig::start("notice", [Venue::BinanceSpot, Venue::Okx], |c| SimConfig {
        shutdown_lead: Duration::from_secs(600),
        ..c
    });
    let stats = rig.feed.stats();
    let gaps = stats.gaps.load(Ordering::Relaxed);
    assert!(
        stats
            .venues
            .iter()
            .all(|v| v.planned_reconnects.load(Ordering::Relaxed) == 0),
        "nothing replaced before the notice"
    );
    for (venue, _, sim) in &rig.sims {
        assert!(sim.fault(0, VenueFault::ShutdownNotice), "{venue:?}");
    }
    rig.poll_until("every connection replaced, every book valid", |rig, f| {
        rig.all_valid(f) && every_venue_replaced(&stats)
    });
    assert_eq!(stats.gaps.load(Ordering::Relaxed), gaps);
    assert_eq!(stats.reconnects.load(Ordering::Relaxed), 0);
    // The notice's connection was closed by the feed, not by the venue
    // (its close is 600 s away: this holds that no other rule, a rate
    // limit or a budget, closed one either).
    for (venue, _, sim) in &rig.sims {
        assert_eq!(
            sim.stats().kicked_clients,
            0,
            "{venue:?}: closed by the venue"
        );
    }
}
