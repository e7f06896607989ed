//! The ring's logic on heap-backed rings: no file, no mapping, so these
//! run under Miri too (`cargo +nightly miri test -p tickwire-feed --lib
//! shm`). The file-backed ring is tested in `tests/shm.rs`.

use std::mem::ManuallyDrop;
use std::sync::Arc;

use super::heap::HeapPath;
use super::*;
use tickwire_venues::book::Side;
use tickwire_venues::event::{Aggressor, Kind};

use crate::id::FeedId;
use tickwire_venues::sync::Resync;

fn writer(place: &HeapPath, capacity: usize) -> Writer {
    Writer::start(place, capacity, &[]).unwrap()
}

/// A reader that looks for a replacement whenever it is allowed to.
fn reader(place: &HeapPath) -> Reader {
    let mut r = Reader::attach(Box::new(place.clone())).unwrap();
    r.set_recheck(Duration::ZERO);
    r
}

/// The ring at `place` now.
fn words_at(place: &HeapPath) -> Arc<[AtomicU64]> {
    place.words().unwrap()
}

/// The word where slot `n`'s sequence is, in a ring of `capacity` slots
/// and no instrument table (its event's words follow).
fn slot_word(capacity: u64, n: u64) -> usize {
    slot_at(HEADER_WORDS, capacity - 1, n)
}

/// One of every kind the ring carries, with extreme values (the stream's
/// tests use it too).
pub(crate) fn every_kind() -> Vec<Kind> {
    vec![
        Kind::Trade {
            price: -3,
            size: i64::MAX,
            aggressor: Aggressor::Unknown,
            trade_id: u64::MAX,
        },
        Kind::Quote {
            bid_price: 1,
            bid_size: 2,
            ask_price: 3,
            ask_size: 4,
            update_id: 5,
        },
        Kind::BookSnapshot {
            update_id: 9,
            bids: 1,
            asks: u32::MAX,
            depth: 5000,
        },
        Kind::BookDelta {
            side: Side::Ask,
            price: 7,
            size: 0,
            update_id: 10,
            last: true,
        },
        Kind::BookValid { update_id: 11 },
        Kind::Gap {
            why: Resync::Checksum {
                expected: -1,
                got: i64::MIN,
            },
        },
        Kind::Gap {
            why: Resync::SnapshotStale {
                snapshot: 1,
                first_diff: 2,
            },
        },
        Kind::Gap {
            why: Resync::Disconnected,
        },
        Kind::Gap {
            why: Resync::DepthExhausted,
        },
        Kind::Resync,
        Kind::Disconnected,
        Kind::Rejected { code: -60018 },
    ]
}

fn event(n: u64, kind: Kind) -> Event {
    Event {
        instrument: FeedId(n as u32 % 7),
        exchange_ns: n * 3,
        recv_tsc: n,
        kind,
    }
}

/// Event `n` of a test's writer.
fn nth(n: u64) -> Event {
    event(n, Kind::BookValid { update_id: n * 11 })
}

/// Reads until the ring has nothing more (at most `limit` reads).
fn drain(r: &mut Reader, limit: usize) -> Vec<Read> {
    let mut got = Vec::new();
    for _ in 0..limit {
        match r.read() {
            Read::Empty => return got,
            other => got.push(other),
        }
    }
    panic!("still reading after {limit}: {got:?}");
}

#[test]
fn every_kind_survives_the_ring_in_order() {
    let place = HeapPath::default();
    let mut w = writer(&place, 16);
    let mut r = reader(&place);
    assert_eq!(r.read(), Read::Empty);
    let kinds = every_kind();
    for (n, k) in kinds.iter().enumerate() {
        assert!(w.publish(&event(n as u64, *k)));
    }
    for (n, k) in kinds.iter().enumerate() {
        assert_eq!(r.read(), Read::Event(event(n as u64, *k)));
    }
    assert_eq!(r.read(), Read::Empty);
    // A reader opened now sees only what comes next; rewound, the
    // oldest still there.
    let mut late = reader(&place);
    assert_eq!(late.read(), Read::Empty);
    late.rewind();
    assert_eq!(late.read(), Read::Event(event(0, kinds[0])));
}

#[test]
fn the_header_is_as_documented() {
    let place = HeapPath::default();
    let mut w = writer(&place, 8);
    let h = words_at(&place);
    assert_eq!(h.len(), 16 + 8 * 16);
    let word = |i: usize| h[i].load(Ordering::Relaxed);
    assert_eq!(word(0).to_le_bytes(), *b"twring01");
    assert_eq!((word(1), word(2)), (3, 8));
    assert_eq!(word(3), w.generation());
    assert_ne!(word(3), 0);
    assert_eq!((word(4), word(5), word(8)), (1, 0, 0), "live, no successor");
    for n in 0..3 {
        w.publish(&nth(n));
    }
    assert_eq!(word(8), 3);
    // Slot 2 (event 2): sequence 2n + 2, then the event's words.
    assert_eq!(word(16 + 2 * 16), 6);
    assert_eq!(word(16 + 2 * 16 + 2), 2 * 3, "exchange time");
    assert!(
        (6..8).chain(9..16).all(|i| word(i) == 0),
        "no table, reserved"
    );
    drop(w);
    assert_eq!(word(4), 2, "ended");
}

#[test]
fn a_lapped_reader_is_told_how_many_it_lost_and_reads_on() {
    let place = HeapPath::default();
    let mut w = writer(&place, 8);
    let mut r = reader(&place);
    for n in 0..30 {
        w.publish(&nth(n));
    }
    let Read::Lost(lost) = r.read() else {
        panic!("lapped")
    };
    let mut got = Vec::new();
    while let Read::Event(e) = r.read() {
        got.push(e.recv_tsc);
    }
    assert_eq!(lost + got.len() as u64, 30, "{lost} lost, {got:?}");
    assert_eq!(got, (lost..30).collect::<Vec<_>>());
}

/// The writer of event 4 has begun on its slot (event 0's, in a ring of
/// 4) and left it half written: the reader of event 0 must not take the
/// mixed words for event 0, nor for event 4.
#[test]
fn a_slot_being_overwritten_is_not_read() {
    let place = HeapPath::default();
    let mut w = writer(&place, 4);
    let mut r = reader(&place);
    for n in 0..4 {
        w.publish(&nth(n));
    }
    let h = words_at(&place);
    let slot = &h[slot_word(4, 0)..];
    slot[0].store(2 * 4 + 1, Ordering::Relaxed);
    for word in &slot[1..4] {
        word.store(u64::MAX, Ordering::Relaxed);
    }
    assert_eq!(r.read(), Read::Lost(2));
    assert_eq!(r.read(), Read::Event(nth(2)));
    assert_eq!(r.read(), Read::Event(nth(3)));
    assert_eq!(r.read(), Read::Empty);
    w.publish(&nth(4));
    assert_eq!(r.read(), Read::Event(nth(4)));
    // Nor a slot whose sequence is another event's (here: none yet).
    let mut r = reader(&place);
    r.next = 1;
    h[slot_word(4, 1)].store(0, Ordering::Relaxed);
    assert!(matches!(r.read(), Read::Lost(_)));
}

/// (The counting allocator is the one `sink`'s tests install for this
/// test binary.)
#[test]
fn publishing_and_reading_allocate_nothing() {
    let place = HeapPath::default();
    let mut w = writer(&place, 64);
    let mut r = reader(&place);
    let kinds = every_kind();
    let ((), allocations) = tickwire_testkit::allocations(|| {
        for n in 0..200u64 {
            w.publish(&event(n, kinds[n as usize % kinds.len()]));
            assert!(matches!(r.read(), Read::Event(_)));
            assert_eq!(r.read(), Read::Empty);
        }
    });
    assert_eq!(allocations, 0);
    assert_eq!(w.published(), 200);
}

#[test]
fn bad_capacities_are_refused() {
    for capacity in [0, 1, 6, usize::MAX] {
        assert!(matches!(
            Writer::start(&HeapPath::default(), capacity, &[]),
            Err(RingError::Capacity(c)) if c == capacity
        ));
    }
}

#[test]
fn generations_are_nonzero_and_new() {
    let mut seen: Vec<u64> = (0..64).map(|_| fresh_generation(None)).collect();
    assert!(seen.iter().all(|&g| g != 0));
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 64);
    assert_ne!(fresh_generation(Some(seen[0])), seen[0]);
}

/// A writer thread publishes as fast as it can while a reader thread
/// reads: every event read is whole (its fields all derive from its
/// number, so a torn read would show), in order, and read + lost adds
/// up to what was published. Small under Miri, which runs the threads'
/// interleavings (and its weak memory) instead.
#[test]
fn a_reader_racing_the_writer_never_sees_a_torn_event() {
    let (n_events, capacity) = if cfg!(miri) {
        (1000, 2)
    } else {
        (2_000_000, 64)
    };
    let place = HeapPath::default();
    let mut w = writer(&place, capacity);
    let mut r = reader(&place);
    let quote = |n: u64| Kind::Quote {
        bid_price: n as i64,
        bid_size: (n * 2) as i64,
        ask_price: (n * 3) as i64,
        ask_size: (n * 5) as i64,
        update_id: n * 7,
    };
    let reader = std::thread::spawn(move || {
        let (mut read, mut lost, mut last) = (0u64, 0u64, None);
        while read + lost < n_events {
            match r.read() {
                Read::Event(e) => {
                    let n = e.recv_tsc;
                    assert_eq!(e, event(n, quote(n)), "torn");
                    assert!(last.is_none_or(|l| n > l), "out of order");
                    last = Some(n);
                    read += 1;
                }
                Read::Lost(k) => lost += k,
                Read::Empty => std::hint::spin_loop(),
                Read::Reattached { .. } => panic!("nothing replaced the ring"),
            }
        }
        (read, lost, last)
    });
    for n in 0..n_events {
        w.publish(&event(n, quote(n)));
    }
    let (read, lost, last) = reader.join().unwrap();
    assert_eq!(read + lost, n_events, "{read} read, {lost} lost");
    assert_eq!(last, Some(n_events - 1));
    assert!(read > 0);
}

/// A new writer (smaller) supersedes the ring: its reader reads what is
/// left of the old one, then the new one from its first event.
#[test]
fn a_superseded_ring_is_read_to_its_end_then_its_successor_from_its_start() {
    let place = HeapPath::default();
    let mut old = writer(&place, 16);
    let mut r = reader(&place);
    let first = r.generation();
    assert_eq!(first, old.generation());
    for n in 0..10 {
        old.publish(&nth(n));
    }
    for n in 0..5 {
        assert_eq!(r.read(), Read::Event(nth(n)));
    }
    let old_words = words_at(&place);
    let mut new = writer(&place, 4);
    assert_ne!(new.generation(), first);
    assert_eq!(r.state(), State::Superseded);
    assert_eq!(
        old_words[W_SUCCESSOR].load(Ordering::Relaxed),
        new.generation()
    );
    for n in 100..104 {
        new.publish(&nth(n));
    }
    let mut expected: Vec<Read> = (5..10).map(|n| Read::Event(nth(n))).collect();
    expected.push(Read::Reattached {
        generation: new.generation(),
    });
    expected.extend((100..104).map(|n| Read::Event(nth(n))));
    assert_eq!(drain(&mut r, 100), expected);
    assert_eq!((r.generation(), r.state()), (new.generation(), State::Live));
    // The old writer, closed late, leaves its ring superseded.
    drop(old);
    assert_eq!(old_words[W_STATE].load(Ordering::Relaxed), SUPERSEDED);
}

#[test]
fn an_ended_ring_waits_for_a_new_writer_and_follows_it() {
    let place = HeapPath::default();
    let mut old = writer(&place, 8);
    let mut r = reader(&place);
    for n in 0..3 {
        old.publish(&nth(n));
    }
    drop(old);
    assert_eq!(r.state(), State::Ended);
    assert_eq!(drain(&mut r, 10).len(), 3);
    // Ended, and nothing newer at the place: empty, however long polled.
    for _ in 0..4 * CLOCK_EVERY {
        assert_eq!(r.read(), Read::Empty);
    }
    let mut new = writer(&place, 8);
    new.publish(&nth(7));
    assert_eq!(
        drain(&mut r, 10),
        [
            Read::Reattached {
                generation: new.generation()
            },
            Read::Event(nth(7))
        ]
    );
}

/// A writer that died (here: never dropped) leaves its ring live; the
/// next one supersedes it all the same.
#[test]
fn an_abandoned_ring_is_superseded_too() {
    let place = HeapPath::default();
    let mut crashed = ManuallyDrop::new(writer(&place, 8));
    let mut r = reader(&place);
    let old_words = words_at(&place);
    crashed.publish(&nth(1));
    assert_eq!(drain(&mut r, 10), [Read::Event(nth(1))]);
    assert_eq!(r.state(), State::Live);
    let mut new = writer(&place, 2);
    assert_eq!(r.state(), State::Superseded);
    new.publish(&nth(2));
    assert_eq!(
        drain(&mut r, 10),
        [
            Read::Reattached {
                generation: new.generation()
            },
            Read::Event(nth(2))
        ]
    );
    // (Dropped at last, so the test leaks nothing; it marks nothing.)
    drop(ManuallyDrop::into_inner(crashed));
    assert_eq!(old_words[W_STATE].load(Ordering::Relaxed), SUPERSEDED);
}

/// A ring put in place without marking the old one (by hand) is found by
/// the periodic recheck, and not before it is due.
#[test]
fn a_ring_replaced_without_the_mark_is_found_when_the_recheck_is_due() {
    let place = HeapPath::default();
    let _old = writer(&place, 8);
    let mut r = reader(&place);
    let elsewhere = HeapPath::default();
    let mut new = writer(&elsewhere, 8);
    new.publish(&nth(3));
    *place.0.lock().unwrap() = Some(words_at(&elsewhere));
    assert_eq!(r.state(), State::Live);
    r.set_recheck(Duration::from_secs(3600));
    for _ in 0..4 * CLOCK_EVERY {
        assert_eq!(r.read(), Read::Empty);
    }
    r.set_recheck(Duration::ZERO);
    let mut polls = 1;
    while r.read() == Read::Empty {
        polls += 1;
        assert!(polls <= CLOCK_EVERY, "not found in {polls} polls");
    }
    assert_eq!(r.generation(), new.generation());
    assert_eq!(r.read(), Read::Event(nth(3)));
}

/// The new writer lapped the reader before it moved over: it is told.
#[test]
fn a_reattached_reader_already_lapped_is_told_what_it_lost() {
    let place = HeapPath::default();
    let _old = writer(&place, 8);
    let mut r = reader(&place);
    let mut new = writer(&place, 4);
    for n in 0..10 {
        new.publish(&nth(n));
    }
    let got = drain(&mut r, 100);
    assert_eq!(
        got[0],
        Read::Reattached {
            generation: new.generation()
        }
    );
    let Read::Lost(lost) = got[1] else {
        panic!("{got:?}")
    };
    let read: Vec<Read> = (lost..10).map(|n| Read::Event(nth(n))).collect();
    assert_eq!(got[2..], read);
}

/// The old writer still going (two writers on one path): its events come
/// first, the successor waits until it pauses.
#[test]
fn a_successor_found_while_the_old_ring_still_grows_waits() {
    let place = HeapPath::default();
    let mut old = writer(&place, 8);
    let mut r = reader(&place);
    old.publish(&nth(0));
    assert_eq!(r.read(), Read::Event(nth(0)));
    let mut new = writer(&place, 8);
    new.publish(&nth(50));
    // Event 1 lands after `read` found nothing (the successor is found
    // in the same call).
    old.publish(&nth(1));
    assert_eq!(r.idle(), Read::Event(nth(1)));
    assert!(r.successor.is_some());
    old.publish(&nth(2));
    assert_eq!(
        drain(&mut r, 10),
        [
            Read::Event(nth(2)),
            Read::Reattached {
                generation: new.generation()
            },
            Read::Event(nth(50))
        ]
    );
}

fn instrument(venue: &str, symbol: &str, price_scale: u8, size_scale: u8) -> Instrument {
    Instrument {
        venue: venue.into(),
        symbol: symbol.into(),
        price_scale,
        size_scale,
    }
}

#[test]
fn a_reader_gets_the_writers_instrument_table_and_the_slots_follow_it() {
    let place = HeapPath::default();
    let names = [
        instrument("binance-spot", "BTCUSDT", 2, 8),
        instrument("deribit", "BTC-27DEC24-100000-C", 4, 1),
        // The longest names a table holds, and non-ASCII.
        instrument(&"v".repeat(MAX_VENUE), &"é".repeat(MAX_SYMBOL / 2), 18, 0),
    ];
    let mut w = Writer::start(&place, 32, &names).unwrap();
    let h = words_at(&place);
    let word = |i: usize| h[i].load(Ordering::Relaxed);
    assert_eq!(h.len(), 16 + 3 * 16 + 32 * 16);
    assert_eq!(word(6), 3, "the table's length");
    // Entry 1: id 1, 4 price and 1 size decimals, a 7-byte venue.
    assert_eq!(word(16 + 16), 1 | 4 << 32 | 1 << 40 | 7 << 48 | 20 << 56);
    assert_eq!(word(16 + 16 + 1).to_le_bytes(), *b"deribit\0");
    let mut r = reader(&place);
    let got = r.instruments().to_vec();
    assert_eq!(got.len(), 3);
    for (i, (got, want)) in got.iter().zip(&names).enumerate() {
        assert_eq!(got.id, FeedId(i as u32));
        assert_eq!(
            (&got.venue, &got.symbol, got.price_scale, got.size_scale),
            (&want.venue, &want.symbol, want.price_scale, want.size_scale)
        );
    }
    assert_eq!(
        r.instrument(FeedId(1)).unwrap().symbol,
        "BTC-27DEC24-100000-C"
    );
    assert_eq!(r.instrument(FeedId(3)), None);
    // Events go after the table, and every kind comes back.
    for (n, k) in every_kind().into_iter().enumerate() {
        w.publish(&event(n as u64, k));
        assert_eq!(r.read(), Read::Event(event(n as u64, k)));
    }
    assert_eq!(word(16 + 48), 2, "slot 0's sequence after the table");
}

#[test]
fn a_name_too_long_for_the_table_is_refused_not_cut() {
    for (venue, symbol) in [
        ("v".repeat(MAX_VENUE + 1), "BTCUSDT".to_owned()),
        ("okx".to_owned(), "S".repeat(MAX_SYMBOL + 1)),
    ] {
        let named = [instrument(&venue, &symbol, 2, 8)];
        match Writer::start(&HeapPath::default(), 8, &named) {
            Err(RingError::Name(n)) => assert_eq!(n, format!("{venue} {symbol}")),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn a_ring_of_another_layout_version_is_refused_with_its_version() {
    let place = HeapPath::default();
    let _w = Writer::start(&place, 8, &[]).unwrap();
    // A version 2 ring: the same header, no table.
    words_at(&place)[1].store(2, Ordering::Relaxed);
    match Reader::attach(Box::new(place.clone())) {
        Err(RingError::Version(2)) => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
    let said = RingError::Version(2).to_string();
    assert!(
        said.contains("version 2") && said.contains("version 3"),
        "{said}"
    );
}

#[test]
fn a_reattached_reader_reads_the_new_rings_table() {
    let place = HeapPath::default();
    let old = Writer::start(&place, 8, &[instrument("okx", "BTC-USDT", 1, 8)]);
    let mut r = reader(&place);
    assert_eq!(r.instruments()[0].symbol, "BTC-USDT");
    drop(old);
    let _new = Writer::start(&place, 8, &[instrument("okx", "ETH-USDT", 2, 6)]).unwrap();
    assert!(matches!(drain(&mut r, 10)[..], [Read::Reattached { .. }]));
    assert_eq!(r.instruments()[0].symbol, "ETH-USDT");
    assert_eq!(r.instruments()[0].price_scale, 2);
}

#[test]
fn a_named_event_reads_with_its_symbol_and_decimal_prices() {
    let btc = RingInstrument {
        id: FeedId(0),
        venue: "binance-spot".into(),
        symbol: "BTCUSDT".into(),
        price_scale: 2,
        size_scale: 8,
    };
    let line = |kind| btc.describe(&event(0, kind)).to_string();
    assert_eq!(
        line(Kind::Trade {
            price: 6_173_763,
            size: 123_000,
            aggressor: Aggressor::Buy,
            trade_id: 9,
        }),
        "binance-spot BTCUSDT trade 61737.63 x 0.00123000 buy #9"
    );
    assert_eq!(
        line(Kind::Quote {
            bid_price: -5,
            bid_size: 0,
            ask_price: 6_173_764,
            ask_size: 1,
            update_id: 1,
        }),
        "binance-spot BTCUSDT quote -0.05 x 0.00000000 / 61737.64 x 0.00000001"
    );
    assert_eq!(
        line(Kind::BookDelta {
            side: Side::Bid,
            price: 100,
            size: 2_500_000_000,
            update_id: 3,
            last: true,
        }),
        "binance-spot BTCUSDT book_delta bid 1.00 x 25.00000000 (last)"
    );
    assert_eq!(
        line(Kind::Disconnected),
        "binance-spot BTCUSDT disconnected"
    );
}
