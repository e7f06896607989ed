//! The normalised event stream over the real recordings in
//! `../shared/samples` (skipped, with a line saying so, when absent): a
//! consumer that knows nothing but the events rebuilds exactly the book the
//! adapter keeps; Binance books become valid once, from the REST snapshot,
//! and gap at most once (`DepthExhausted`, when the market leaves the
//! snapshot's levels); every trade and quote message yields its event;
//! and, once warm, nothing allocates.

use std::collections::BTreeMap;

use tickwire_venues::binance::{Adapter, Market};
use tickwire_venues::book::{Book, Limit, Side};
use tickwire_venues::sync::Resync;
use tickwire_venues::{Event, InstrumentId, InstrumentSpec, Kind, Outcome};
use tickwire_venues::{VenueAdapter, bybit, deribit, okx};

use crate::common;

fn messages(path: &std::path::Path) -> Vec<(Vec<u8>, usize)> {
    common::recorded_padded(path)
}

/// One book rebuilt from events alone.
#[derive(Default)]
struct Rebuilt {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
    valid: bool,
    /// Levels a snapshot announced that have not arrived yet.
    pending: u32,
    /// Levels kept a side.
    depth: usize,
}

/// Every instrument's book rebuilt from events alone.
#[derive(Default)]
struct Consumer {
    books: BTreeMap<InstrumentId, Rebuilt>,
    snapshots: usize,
    gaps: usize,
    deltas_while_invalid: usize,
}

impl Consumer {
    fn on(&mut self, e: &Event) {
        let book = self.books.entry(e.instrument).or_default();
        match e.kind {
            Kind::BookSnapshot {
                bids, asks, depth, ..
            } => {
                book.depth = depth as usize;
                book.bids.clear();
                book.asks.clear();
                book.pending = bids + asks;
                book.valid = false;
                self.snapshots += 1;
            }
            Kind::BookDelta {
                side, price, size, ..
            } => {
                if book.pending > 0 {
                    book.pending -= 1;
                } else if !book.valid {
                    self.deltas_while_invalid += 1;
                }
                let ladder = match side {
                    Side::Bid => &mut book.bids,
                    Side::Ask => &mut book.asks,
                };
                if size == 0 {
                    ladder.remove(&price);
                } else {
                    ladder.insert(price, size);
                }
                // Keep the best `depth`: the highest bids, the lowest asks.
                while ladder.len() > book.depth {
                    match side {
                        Side::Bid => ladder.pop_first(),
                        Side::Ask => ladder.pop_last(),
                    };
                }
            }
            Kind::BookValid { .. } => {
                assert_eq!(book.pending, 0, "BookValid before the snapshot's levels");
                book.valid = true;
            }
            Kind::Gap { .. } => {
                book.valid = false;
                self.gaps += 1;
            }
            _ => {}
        }
    }

    /// Every rebuilt book equals the adapter's, level for level.
    fn check<'a>(&self, book_of: impl Fn(InstrumentId) -> Option<&'a Book>, at: usize) {
        for (&id, rebuilt) in &self.books {
            let book = book_of(id);
            assert_eq!(book.is_some(), rebuilt.valid, "{id:?} after message {at}");
            let Some(book) = book else { continue };
            let theirs = |side| -> Vec<(i64, i64)> {
                book.levels(side)
                    .iter()
                    .map(|l| (l.price, l.size))
                    .collect()
            };
            let bids: Vec<_> = rebuilt.bids.iter().rev().map(|(&p, &s)| (p, s)).collect();
            let asks: Vec<_> = rebuilt.asks.iter().map(|(&p, &s)| (p, s)).collect();
            assert_eq!(bids, theirs(Side::Bid), "{id:?} bids after message {at}");
            assert_eq!(asks, theirs(Side::Ask), "{id:?} asks after message {at}");
        }
    }

    fn valid(&self) -> usize {
        self.books.values().filter(|b| b.valid).count()
    }
}

#[derive(Default, Debug)]
struct Counts {
    trades: usize,
    quotes: usize,
    resyncs: usize,
    /// Snapshots asked for while the book was valid, to deepen it.
    refreshes: usize,
    other: usize,
    /// Why the book gapped, each time.
    gaps: Vec<Resync>,
}

/// Feeds every message; REST snapshot lines go to `on_snapshot_at`, at the
/// `limit` hftbacktest's recorder fetched them with (1000).
fn replay(
    adapter: &mut Adapter,
    msgs: &mut [(Vec<u8>, usize)],
    mut each: impl FnMut(&Adapter, usize, &[Event]),
    events: &mut Vec<Event>,
) {
    for (i, (buf, len)) in msgs.iter_mut().enumerate() {
        events.clear();
        let mut emit = |e: Event| events.push(e);
        let snapshot = buf[..*len].windows(14).any(|w| w == b"\"lastUpdateId\"");
        let outcome = if snapshot {
            adapter.on_snapshot_at(
                InstrumentId(0),
                Limit::Levels(1000),
                buf,
                *len,
                i as u64,
                &mut emit,
            )
        } else {
            adapter.on_message(buf, *len, i as u64, &mut emit)
        };
        let outcome = outcome.unwrap_or_else(|e| panic!("message {}: {e}", i + 1));
        assert_ne!(outcome, Outcome::Ignored, "message {}", i + 1);
        each(adapter, i + 1, events);
    }
}

fn check(file: &str, market: Market, symbol: &str) {
    let Some(dir) = common::samples("binance") else {
        return;
    };
    let mut msgs = messages(&dir.join(file));
    // 20 levels shown of the 1000 the recording's snapshot holds.
    let spec = [InstrumentSpec::new(symbol, 8, 8, 20)];
    let mut events = Vec::with_capacity(1 << 16);

    // Pass 1: everything checked.
    let mut adapter = Adapter::new(market, &spec);
    let mut consumer = Consumer::default();
    let mut counts = Counts::default();
    replay(
        &mut adapter,
        &mut msgs,
        |adapter, at, events| {
            let valid_before = consumer.valid() > 0;
            let gapped = events.iter().any(|e| matches!(e.kind, Kind::Gap { .. }));
            for e in events {
                assert_eq!(e.instrument, InstrumentId(0));
                assert_eq!(e.recv_tsc, at as u64 - 1, "the stamp is carried");
                match e.kind {
                    Kind::Trade { price, size, .. } => {
                        assert!(price > 0 && size > 0);
                        counts.trades += 1;
                    }
                    Kind::Quote { .. } => counts.quotes += 1,
                    Kind::Resync => {
                        counts.resyncs += 1;
                        if valid_before && !gapped {
                            counts.refreshes += 1;
                        }
                    }
                    Kind::Gap { why } => counts.gaps.push(why),
                    Kind::BookSnapshot { .. } | Kind::BookDelta { .. } | Kind::BookValid { .. } => {
                    }
                    _ => counts.other += 1,
                }
                consumer.on(e);
            }
            // Between messages the book is whole: compare every 64th time,
            // and every time the book changes state.
            let state_change = events
                .iter()
                .any(|e| matches!(e.kind, Kind::BookValid { .. } | Kind::Gap { .. }));
            if at % 64 == 0 || state_change {
                consumer.check(|id| adapter.book(id), at);
            }
        },
        &mut events,
    );
    consumer.check(|id| adapter.book(id), msgs.len());
    eprintln!(
        "{file}: {counts:?}, {} snapshots, {} gaps",
        consumer.snapshots, consumer.gaps
    );
    assert_eq!(consumer.snapshots, 1, "valid once, from the REST snapshot");
    // The recording has one snapshot: a book whose market moves past the
    // 1000 levels it gave gaps (and asks for another), and only so.
    assert!(
        counts.gaps.iter().all(|g| *g == Resync::DepthExhausted) && counts.gaps.len() <= 1,
        "{:?}",
        counts.gaps
    );
    assert_eq!(consumer.gaps, counts.gaps.len());
    assert_eq!(consumer.deltas_while_invalid, 0);
    assert_eq!(
        counts.resyncs,
        1 + counts.gaps.len() + counts.refreshes,
        "one snapshot asked for at the start, one after a gap, and the refreshes"
    );
    // A book that ran out of levels had asked to be deepened first (the
    // recording answers no refresh).
    assert!(counts.gaps.is_empty() || counts.refreshes > 0, "{counts:?}");
    assert_eq!(counts.other, 0);
    assert_eq!(consumer.valid(), usize::from(counts.gaps.is_empty()));
    // Messages holding any of `marks`.
    let want = |marks: &[&[u8]]| {
        msgs.iter()
            .filter(|(b, len)| {
                marks
                    .iter()
                    .any(|m| b[..*len].windows(m.len()).any(|w| w == *m))
            })
            .count()
    };
    assert_eq!(
        counts.trades,
        want(&[b"\"e\":\"trade\"", b"\"e\":\"aggTrade\""])
    );
    // Spot book tickers have no `e`; their stream name says what they are.
    assert_eq!(
        counts.quotes,
        want(&[b"\"e\":\"bookTicker\"", b"@bookTicker\""])
    );
    assert!(counts.trades + counts.quotes > 0);

    // Pass 2: the same adapter, warm, told its connection dropped (every
    // book gaps, and asks for a snapshot at the new stream's first diff),
    // then the whole recording again: diffs buffered, the snapshot
    // bridged, the chain followed, and not one allocation.
    let mut gaps = Vec::new();
    let was_valid = adapter.book(InstrumentId(0)).is_some();
    adapter.on_disconnect(0, &mut |e| gaps.push(e.kind));
    let gap = Kind::Gap {
        why: Resync::Disconnected,
    };
    // A book that gapped already is not said to gap again.
    let want: &[Kind] = if was_valid {
        &[Kind::Disconnected, gap]
    } else {
        &[Kind::Disconnected]
    };
    assert_eq!(gaps, want);
    let mut resyncs = 0;
    let ((), allocations) = tickwire_testkit::allocations(|| {
        replay(
            &mut adapter,
            &mut msgs,
            |_, _, events| resyncs += events.iter().filter(|e| e.kind == Kind::Resync).count(),
            &mut events,
        );
    });
    // A snapshot asked for after the gap of pass 1 stays asked for: the
    // engine waits for its answer rather than asking twice.
    assert_eq!(
        resyncs,
        usize::from(was_valid) + counts.gaps.len(),
        "one snapshot asked for at the first diff (unless one was asked for already), one after a gap"
    );
    assert_eq!(
        adapter.book(InstrumentId(0)).is_some(),
        counts.gaps.is_empty()
    );
    assert_eq!(allocations, 0, "{file}: {allocations} allocations");
}

#[test]
fn spot_events_rebuild_the_book() {
    check(
        "spot/original/hftbacktest_spot_btcusdt_20240808.gz",
        Market::Spot,
        "BTCUSDT",
    );
}

#[test]
fn usdm_events_rebuild_the_book() {
    check(
        "usdm/original/hftbacktest_usdm_btcusdt_20240808.gz",
        Market::UsdM,
        "BTCUSDT",
    );
}

#[test]
fn coinm_events_rebuild_the_book() {
    check(
        "coinm/hftbacktest_cm_btcusd_perp_20240808.first15000.jsonl",
        Market::CoinM,
        "BTCUSD_PERP",
    );
}

/// A venue whose snapshots come in band, over one recording: the consumer
/// rebuilds every book after every message; then, warm, after a
/// disconnect, the recording again without one allocation.
fn in_band(
    venue: &str,
    file: &str,
    adapter: &mut dyn VenueAdapter,
    ignored: &[&[u8]],
) -> Option<(Consumer, Counts)> {
    let dir = common::samples(venue)?;
    let text = std::fs::read(dir.join(file)).unwrap();
    let mut msgs: Vec<(Vec<u8>, usize)> = common::padded_lines(&text)
        .map(|(_, buf, len)| (buf, len))
        .collect();
    let mut consumer = Consumer::default();
    let mut counts = Counts::default();
    let mut events = Vec::with_capacity(1 << 16);
    for (i, (buf, len)) in msgs.iter_mut().enumerate() {
        let original = buf[..*len].to_vec();
        events.clear();
        let outcome = adapter
            .on_message(buf, *len, i as u64, &mut |e| events.push(e))
            .unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1));
        if outcome == Outcome::Ignored {
            assert!(
                ignored
                    .iter()
                    .any(|m| original.windows(m.len()).any(|w| w == *m)),
                "{file}:{}: ignored: {}",
                i + 1,
                String::from_utf8_lossy(&original)
            );
        }
        for e in &events {
            match e.kind {
                Kind::Trade { .. } => counts.trades += 1,
                Kind::Quote { .. } => counts.quotes += 1,
                Kind::Resync => counts.resyncs += 1,
                _ => {}
            }
            consumer.on(e);
        }
        consumer.check(|id| adapter.book(id), i + 1);
    }
    let mut gaps = Vec::new();
    adapter.on_disconnect(0, &mut |e| gaps.push(e.kind));
    assert_eq!(
        gaps.iter().filter(|k| **k == Kind::Resync).count(),
        consumer.valid()
    );
    // The same messages again, as received (parsing in place changed the
    // buffers): each read as it was the first time, and not one allocation.
    let mut fresh: Vec<(Vec<u8>, usize)> = common::padded_lines(&text)
        .map(|(_, buf, len)| (buf, len))
        .collect();
    let ((), allocations) = tickwire_testkit::allocations(|| {
        for (i, (buf, len)) in fresh.iter_mut().enumerate() {
            events.clear();
            if let Err(e) = adapter.on_message(buf, *len, 0, &mut |e| events.push(e)) {
                panic!("{file}:{}: again: {e}", i + 1);
            }
        }
    });
    assert_eq!(allocations, 0, "{file}: {allocations} allocations");
    Some((consumer, counts))
}

/// A book asked to show more levels than the venue's window holds cannot
/// know the ones below the window: it is never valid while its sides fill
/// the window (a side with fewer levels is the venue's whole side, and
/// exact).
fn deeper_than_the_window(venue: &str, file: &str, adapter: &mut dyn VenueAdapter) -> usize {
    let Some(dir) = common::samples(venue) else {
        return 0;
    };
    let text = std::fs::read(dir.join(file)).unwrap();
    let mut valid = 0;
    for (line, mut buf, len) in common::padded_lines(&text) {
        adapter
            .on_message(&mut buf, len, 0, &mut |e| {
                valid += usize::from(matches!(e.kind, Kind::BookValid { .. }))
            })
            .unwrap_or_else(|e| panic!("{file}:{line}: {e}"));
    }
    valid
}

#[test]
fn okx_events_rebuild_the_books() {
    let specs =
        ["BTC-USD-220527", "BTC-USDT", "UNI-USD-SWAP"].map(|s| InstrumentSpec::new(s, 8, 8, 400));
    let mut adapter = okx::Adapter::new(&specs);
    let Some((consumer, counts)) = in_band(
        "okx",
        "cryptofeed_OKX.ws.1.0.jsonl",
        &mut adapter,
        &[b"\"channel\":\"tickers\""],
    ) else {
        return;
    };
    eprintln!(
        "OKX: {counts:?}, {} snapshots, {} checksums",
        consumer.snapshots, adapter.checksums_verified
    );
    // Three book snapshots (one per instrument), 287 updates, every
    // checksum compared and matched; then the second replay, after the
    // disconnect, three snapshots and 287 updates again.
    assert_eq!(consumer.snapshots, 3);
    assert_eq!(consumer.gaps, 0);
    assert_eq!(consumer.valid(), 3);
    assert_eq!(adapter.checksums_verified, 2 * 290);
    // One trade event per trade in the file, counted from its text.
    let dir = common::samples("okx").unwrap();
    let text = std::fs::read_to_string(dir.join("cryptofeed_OKX.ws.1.0.jsonl")).unwrap();
    assert_eq!(counts.trades, text.matches("\"tradeId\"").count());
    assert_eq!(counts.resyncs, 0);

    // Shown 800 deep, of the `books` channel's 400: BTC-USDT, whose sides
    // fill the window, is never valid; the two thin books (under 400
    // levels a side: the whole of each) are.
    let deep = specs.map(|s| InstrumentSpec { depth: 800, ..s });
    let mut adapter = okx::Adapter::new(&deep);
    let valid = deeper_than_the_window("okx", "cryptofeed_OKX.ws.1.0.jsonl", &mut adapter);
    assert_eq!(valid, 2);
    assert!(
        adapter
            .book(adapter.instrument("BTC-USDT").unwrap())
            .is_none()
    );
}

#[test]
fn bybit_events_rebuild_the_book() {
    // The recording's `orderbook.500`, shown whole.
    let mut adapter = bybit::Adapter::new(&[InstrumentSpec::new("XRPUSDT", 4, 0, 500)]);
    let Some((consumer, _)) = in_band(
        "bybit",
        "nautilus_2024-12-01_XRPUSDT_ob500.data.jsonl",
        &mut adapter,
        &[],
    ) else {
        return;
    };
    assert_eq!(
        (consumer.snapshots, consumer.gaps, consumer.valid()),
        (1, 0, 1)
    );
    // Shown 1000 deep, of a 500-level window: never valid.
    let mut adapter = bybit::Adapter::new(&[InstrumentSpec::new("XRPUSDT", 4, 0, 1000)]);
    let file = "nautilus_2024-12-01_XRPUSDT_ob500.data.jsonl";
    assert_eq!(deeper_than_the_window("bybit", file, &mut adapter), 0);
}

#[test]
fn deribit_events_rebuild_the_books() {
    let names = [
        "BTC-24JUN22-15000-C",
        "BTC-24SEP21-34000-P",
        "BTC-24SEP21-8000-P",
        "BTC-25MAR22-30000-C",
        "BTC-30JUL21-24000-P",
        "BTC-31DEC21-300000-C",
        "BTC-31DEC21-34000-P",
        "ETH-23JUL21-2300-C",
        "ETH-27AUG21-4000-P",
        "ETH-30JUL21-2800-C",
    ];
    let specs = names.map(|n| InstrumentSpec::new(n, 8, 4, 1000));
    let mut adapter = deribit::Adapter::new(&specs);
    let Some((consumer, _)) = in_band(
        "deribit",
        "cryptofeed_DERIBIT.ws.1.0.jsonl",
        &mut adapter,
        &[b"\"channel\":\"ticker."],
    ) else {
        return;
    };
    assert_eq!(
        (consumer.snapshots, consumer.gaps, consumer.valid()),
        (10, 0, 10)
    );
}
