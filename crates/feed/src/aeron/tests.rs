//! The sink and the subscriber on one embedded media driver, in this
//! process (the tests across processes and hosts are the cli's).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::*;
use crate::id::{Event, FeedId};
use crate::shm::tests::every_kind;
use crate::sink::Instrument;
use crate::stream::Step;
use tickwire_venues::event::Kind;

/// A driver directory of this test's own.
fn fresh_dir() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    PathBuf::from(format!(
        "/dev/shm/tickwire-aeron-unit-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

fn names() -> Vec<Instrument> {
    (0..11)
        .map(|i| Instrument {
            venue: "binance".into(),
            symbol: format!("S{i}USDT"),
            price_scale: 2,
            size_scale: 6,
        })
        .collect()
}

fn event(n: u64) -> Event {
    let kinds = every_kind();
    Event {
        instrument: FeedId((n % 11) as u32),
        exchange_ns: n * 1000,
        recv_tsc: tickwire_tsc::calibration().clock().now(),
        kind: kinds[n as usize % kinds.len()],
    }
}

/// A small term: the slow-subscriber test fills it quickly.
const CHANNEL: &str = "aeron:ipc?term-length=64k";

/// Publishes `e` again until Aeron takes it: just after a subscriber
/// connects the publication's limit is still being set (Aeron pushes back
/// for a moment), which the sink, by design, counts as a drop.
fn publish_surely(publisher: &mut Publisher, e: &Event) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !publisher.publish(e) {
        assert!(Instant::now() < deadline, "never taken");
        std::thread::yield_now();
    }
}

/// Polls until `done` or the deadline (a failure past it).
fn poll_until(sub: &mut Subscriber, mut on: impl FnMut(Received<'_>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut done = false;
    while !done {
        assert!(Instant::now() < deadline, "the subscriber waited too long");
        sub.poll(64, |r| done |= on(r)).unwrap();
    }
}

#[test]
fn events_arrive_whole_in_order_after_the_table() {
    let client = Client::start(&DriverSetup::Embedded {
        dir: Some(fresh_dir()),
    })
    .unwrap();
    let channel = "aeron:ipc?term-length=1m";
    let mut sub = client.subscriber(channel, 7).unwrap();
    let mut publisher = client.publisher(channel, 7, &names()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !publisher.is_connected() {
        assert!(Instant::now() < deadline, "never connected");
        std::thread::yield_now();
    }
    // Taken once the publication's limit is set (its first offers may be
    // pushed back: spent numbers, a gap before the subscriber joins).
    publish_surely(&mut publisher, &event(0));
    let mut table_first = false;
    poll_until(&mut sub, |r| match r {
        Received::Table { source } => {
            table_first |= source.has_table();
            false
        }
        Received::Event { step, .. } => {
            assert!(table_first, "an event before the whole table");
            assert_eq!(step, Step::Joined);
            true
        }
        Received::Bad(why) => panic!("{why}"),
    });
    let sent: Vec<Event> = (1..500).map(event).collect();
    // All at once: a 1 MiB term's window (half of it) holds them.
    for e in &sent {
        assert!(publisher.publish(e));
    }
    let mut got = Vec::new();
    poll_until(&mut sub, |r| {
        match r {
            Received::Table { .. } => {}
            Received::Event {
                source,
                event,
                step,
                ..
            } => {
                assert_eq!(source.publisher, publisher.id());
                assert_eq!(step, Step::Next);
                let name = source.instrument(event.instrument).unwrap();
                assert_eq!(name.symbol, format!("S{}USDT", event.instrument.0));
                got.push(event);
            }
            Received::Bad(why) => panic!("{why}"),
        }
        got.len() == sent.len()
    });
    assert_eq!(got, sent);
    let stats = publisher.stats();
    assert_eq!(
        stats.published.load(Ordering::Relaxed),
        500,
        "no event but the first was pushed back"
    );
}

fn connected(client: &Client, channel: &str) -> (Subscriber, Publisher) {
    let sub = client.subscriber(channel, 9).unwrap();
    let publisher = client.publisher(channel, 9, &names()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !publisher.is_connected() {
        assert!(Instant::now() < deadline, "never connected");
        std::thread::yield_now();
    }
    (sub, publisher)
}

/// A subscriber that never reads: the term fills, Aeron pushes back, and
/// the sink drops and counts rather than wait; publishing allocates
/// nothing either way; when the subscriber reads again it sees exactly
/// the dropped events as one gap.
#[test]
fn a_slow_subscriber_costs_counted_drops_never_a_wait_nor_an_allocation() {
    let client = Client::start(&DriverSetup::Embedded {
        dir: Some(fresh_dir()),
    })
    .unwrap();
    let (mut sub, mut publisher) = connected(&client, CHANNEL);
    let events: Vec<Event> = (0..5_000).map(event).collect();
    // Warm: the table and the first events.
    publish_surely(&mut publisher, &events[0]);
    let before = publisher.stats().dropped();
    let (taken, allocations) = tickwire_testkit::allocations(|| {
        events[1..].iter().filter(|e| publisher.publish(e)).count()
    });
    assert_eq!(allocations, 0, "the publish path allocated");
    let stats = publisher.stats();
    let dropped = stats.dropped() - before;
    assert!(dropped > 0, "a 64 KiB term took 5,000 events unread");
    assert_eq!(taken as u64 + 1 + dropped, 5_000);
    assert_eq!(stats.published.load(Ordering::Relaxed), taken as u64 + 1);
    assert_eq!(stats.not_connected.load(Ordering::Relaxed), 0);

    // Read what was taken, then one more event after the drops.
    let mut seen = 0u64;
    poll_until(&mut sub, |r| {
        if let Received::Event { .. } = r {
            seen += 1;
        }
        seen == taken as u64 + 1
    });
    publish_surely(&mut publisher, &events[0]);
    let dropped = stats.dropped() - before;
    let mut gap = None;
    poll_until(&mut sub, |r| match r {
        Received::Event { step, .. } => {
            gap = Some(step);
            true
        }
        _ => false,
    });
    assert_eq!(gap, Some(Step::Gap { lost: dropped }));
    let source = &sub.sources()[0];
    assert_eq!((source.sequence.gaps, source.sequence.lost), (1, dropped));
}

/// No subscriber at all: every event is a counted drop, none waits or
/// allocates; a subscriber that comes later gets the table first.
#[test]
fn without_a_subscriber_events_are_counted_drops_and_a_late_one_gets_the_table_first() {
    let client = Client::start(&DriverSetup::Embedded {
        dir: Some(fresh_dir()),
    })
    .unwrap();
    let mut publisher = client.publisher(CHANNEL, 11, &names()).unwrap();
    let events: Vec<Event> = (0..1_000).map(event).collect();
    assert!(!publisher.publish(&events[0]));
    let (taken, allocations) =
        tickwire_testkit::allocations(|| events.iter().filter(|e| publisher.publish(e)).count());
    assert_eq!((taken, allocations), (0, 0));
    assert_eq!(
        publisher.stats().not_connected.load(Ordering::Relaxed),
        1_001
    );

    let mut sub = client.subscriber(CHANNEL, 11).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !publisher.is_connected() {
        assert!(Instant::now() < deadline, "never connected");
        std::thread::yield_now();
    }
    publish_surely(&mut publisher, &events[1]);
    let mut order = Vec::new();
    poll_until(&mut sub, |r| {
        match r {
            Received::Table { source } => order.push(("table", source.has_table())),
            Received::Event { step, .. } => {
                assert_eq!(step, Step::Joined);
                order.push(("event", true));
            }
            Received::Bad(why) => panic!("{why}"),
        }
        order.last() == Some(&("event", true))
    });
    assert_eq!(
        order,
        [("table", false), ("table", true), ("event", true)],
        "11 instruments: two parts, then the event"
    );
}

/// A subscriber that joins a flowing stream misses the table sent at the
/// start, and gets it again within a second of the events' stamps.
#[test]
fn the_table_goes_again_every_second_for_a_subscriber_that_joins_late() {
    let client = Client::start(&DriverSetup::Embedded {
        dir: Some(fresh_dir()),
    })
    .unwrap();
    let (mut first, mut publisher) = connected(&client, CHANNEL);
    publish_surely(&mut publisher, &event(0));
    // The first reads all, table included: an IPC subscriber joins where
    // the others have read to.
    poll_until(&mut first, |r| matches!(r, Received::Event { .. }));
    let mut late = client.subscriber(CHANNEL, 9).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    // Both connected: the first subscriber reads on, the late one waits.
    while late.sources().is_empty() {
        assert!(Instant::now() < deadline, "the late subscriber saw nothing");
        publish_surely(&mut publisher, &event(1));
        late.poll(64, |r| assert!(!matches!(r, Received::Bad(_))))
            .unwrap();
        first.poll(64, |_| ()).unwrap();
    }
    assert!(!late.sources()[0].has_table(), "it joined after the table");
    // An event stamped past the next second: the table goes before it.
    let ticks = tickwire_tsc::calibration().ticks_per_second() as u64;
    let mut later = event(2);
    later.recv_tsc += 2 * ticks;
    publish_surely(&mut publisher, &later);
    poll_until(
        &mut late,
        |r| matches!(r, Received::Event { source, .. } if source.has_table()),
    );
}

fn book(levels: i64) -> tickwire_venues::book::Book {
    use tickwire_venues::book::{Book, Side};
    let mut b = Book::new(levels as usize);
    for i in 0..levels {
        b.set(Side::Bid, 10_000 - i, 1 + i);
        b.set(Side::Ask, 10_001 + i, 2 + i);
    }
    b.settle();
    b
}

/// Events dropped for want of a subscriber: once one connects the books
/// are due, and go as snapshot, levels and `book valid`, which rebuild the
/// same book from the events alone; a book larger than the publication's
/// window is skipped rather than sent cut.
#[test]
fn books_go_again_after_drops_whole_and_rebuild_the_same_book() {
    use crate::mirror::Mirrors;
    use tickwire_venues::book::Side;

    let client = Client::start(&DriverSetup::Embedded {
        dir: Some(fresh_dir()),
    })
    .unwrap();
    let mut publisher = client.publisher(CHANNEL, 13, &names()).unwrap();
    let now = tickwire_tsc::calibration().clock().now();
    assert!(!publisher.books_due(now), "nothing owed yet");
    assert!(!publisher.publish(&event(0)), "no subscriber");
    assert!(
        !publisher.books_due(now),
        "owed, but nobody to send them to"
    );

    let mut sub = client.subscriber(CHANNEL, 13).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !publisher.books_due(now) {
        assert!(Instant::now() < deadline, "never connected");
        std::thread::yield_now();
    }
    // Until the publication's limit is set, a book waits for room.
    let (small, large) = (book(20), book(200));
    let mut mirrors = Mirrors::new(11);
    let mut valid = 0;
    while publisher.books_due(now) {
        assert!(Instant::now() < deadline, "the books never went");
        let books = [(FeedId(2), &small), (FeedId(5), &large)];
        publisher.publish_books(now, books.into_iter());
        sub.poll(64, |r| {
            if let Received::Event { event, .. } = r {
                valid += usize::from(matches!(event.kind, Kind::BookValid { .. }));
                mirrors.apply(&event);
            }
        })
        .unwrap();
    }
    while valid < 1 {
        assert!(Instant::now() < deadline, "the book never arrived");
        sub.poll(64, |r| {
            if let Received::Event { event, .. } = r {
                valid += usize::from(matches!(event.kind, Kind::BookValid { .. }));
                mirrors.apply(&event);
            }
        })
        .unwrap();
    }
    // 20 levels a side (42 frames, 5 KiB) fit the 32 KiB window; 200 (402
    // frames, 50 KiB) never do.
    assert!(mirrors.valid(2));
    assert!(!mirrors.valid(5));
    for side in [Side::Bid, Side::Ask] {
        let want: Vec<(i64, i64)> = small
            .levels(side)
            .iter()
            .map(|l| (l.price, l.size))
            .collect();
        assert_eq!(mirrors.levels(2, side).unwrap(), want);
    }
    assert_eq!(publisher.stats().books_sent.load(Ordering::Relaxed), 1);
    assert!(!publisher.books_due(now), "nothing owed after");
}

/// Events dropped between two calls of one round of books (the second
/// book waited for room, and meanwhile a subscriber fell behind): the
/// round ends owing all the books again, since the subscriber lost the
/// first one's after it was sent.
#[test]
fn drops_during_a_round_of_books_owe_the_whole_round_again() {
    let client = Client::start(&DriverSetup::Embedded {
        dir: Some(fresh_dir()),
    })
    .unwrap();
    let (mut sub, mut publisher) = connected(&client, CHANNEL);
    publish_surely(&mut publisher, &event(0));
    let drain = |sub: &mut Subscriber, publisher: &Publisher| {
        let deadline = Instant::now() + Duration::from_secs(20);
        // Read all, then wait until the limit has moved past it again.
        while publisher.room() < 30_000 {
            assert!(Instant::now() < deadline, "the window never opened");
            sub.poll(256, |_| ()).unwrap();
            std::thread::yield_now();
        }
    };
    drain(&mut sub, &publisher);
    let (a, b) = (book(20), book(100));
    let now = tickwire_tsc::calibration().clock().now();
    // 60 events unread (7.7 KiB), then book A (5.4 KiB): book B (25.9 KiB)
    // no longer fits the 32 KiB window, and waits.
    for n in 0..60 {
        assert!(publisher.publish(&event(n)));
    }
    publisher.set_books_every(Some(Duration::from_secs(3600)));
    assert!(publisher.books_due(now));
    publisher.publish_books(now, [(FeedId(1), &a), (FeedId(2), &b)].into_iter());
    assert_eq!(publisher.stats().books_sent.load(Ordering::Relaxed), 1);
    assert!(publisher.books_due(now), "book B still owed");
    // The subscriber falls behind: events dropped.
    let before = publisher.stats().dropped();
    for n in 0..400 {
        publisher.publish(&event(n));
    }
    assert!(publisher.stats().dropped() > before);
    drain(&mut sub, &publisher);
    publisher.publish_books(now, [(FeedId(1), &a), (FeedId(2), &b)].into_iter());
    assert_eq!(publisher.stats().books_sent.load(Ordering::Relaxed), 2);
    assert!(
        publisher.books_due(now),
        "book A was lost with the drops: the round is owed again"
    );
    drain(&mut sub, &publisher);
    publisher.publish_books(now, [(FeedId(1), &a), (FeedId(2), &b)].into_iter());
    assert_eq!(publisher.stats().books_sent.load(Ordering::Relaxed), 4);
    assert!(!publisher.books_due(now));
}
