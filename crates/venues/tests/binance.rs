//! Binance over the real recordings in `../shared/samples` (skipped, with a
//! line saying so, when they are absent): every byte-exact message decodes,
//! the depth chains replayed through the sync engine become valid from the
//! REST snapshot and never gap, the book agrees with bookTicker whenever
//! both describe the same update, and none of it allocates. The one-pass
//! scanner takes every flat message and reads it exactly as simd-json does.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tickwire_venues::binance::{self, Message, Scales, feed_depth, feed_snapshot};
use tickwire_venues::book::{LevelResult, Side, scaled_levels, scaled_sides};
use tickwire_venues::decimal::parse_scaled;
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::sync::{BookSync, Chain, Resync, SyncConfig, SyncEvent};

use crate::common;

fn samples() -> Option<PathBuf> {
    common::samples("binance")
}

fn messages(path: &std::path::Path) -> Vec<(Vec<u8>, usize)> {
    common::recorded_padded(path)
}

/// Every byte-exact Binance file: every message decodes, as a market event
/// of a supported type, a snapshot, a control reply, or an event type this
/// adapter names but does not decode (kline, markPrice, ...).
#[test]
fn every_recorded_message_decodes() {
    let Some(dir) = samples() else { return };
    let files = [
        "spot/original/hftbacktest_spot_btcusdt_20240808.gz",
        "usdm/original/hftbacktest_usdm_btcusdt_20240808.gz",
        "coinm/hftbacktest_cm_btcusd_perp_20240808.first15000.jsonl",
        "spot/cryptofeed_BINANCE.ws.1.0.jsonl",
        "spot/cryptofeed_BINANCE.http.0.0.rest.jsonl",
        "usdm/cryptofeed_BINANCE_FUTURES.ws.1.0.jsonl",
        "usdm/cryptofeed_BINANCE_FUTURES.http.0.0.rest.jsonl",
        "coinm/cryptofeed_BINANCE_DELIVERY.ws.1.0.jsonl",
        "coinm/cryptofeed_BINANCE_DELIVERY.http.0.0.rest.jsonl",
        "crypto-msg-parser_binance.jsonl",
    ];
    let mut parser = JsonParser::default();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut scanned, mut total, mut fixed_layouts) = (0usize, 0usize, 0usize);
    for file in files {
        // crypto-msg-parser's file mixes in REST answers (open interest) that
        // are not stream messages; its tags file names each line's kind.
        let tags = std::fs::read_to_string(dir.join(file.replace(".jsonl", ".tags.txt")))
            .unwrap_or_default();
        let tags: Vec<&str> = tags.lines().collect();
        for (i, (mut buf, len)) in messages(&dir.join(file)).into_iter().enumerate() {
            if tags
                .get(i)
                .is_some_and(|t| t.starts_with("open_interest::"))
            {
                continue;
            }
            let original = buf.clone();
            let kind = parser
                .parse(&mut buf, len, |doc| {
                    binance::decode(doc).map(|m| match m {
                        Message::Trade(_) => "trade".to_owned(),
                        Message::AggTrade(_) => "aggTrade".to_owned(),
                        Message::BookTicker(_) => "bookTicker".to_owned(),
                        Message::Depth(_) => "depth".to_owned(),
                        Message::Snapshot(_) => "snapshot".to_owned(),
                        Message::Control => "control".to_owned(),
                        Message::Error { code, .. } => format!("error:{code}"),
                        Message::Other(e) => format!("other:{e}"),
                    })
                })
                .unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1))
                .unwrap_or_else(|e| {
                    panic!(
                        "{file}:{}: {e}: {}",
                        i + 1,
                        String::from_utf8_lossy(&buf[..len])
                    )
                });
            *kinds.entry(kind).or_default() += 1;
            // The one-pass scanner, where it answers, reads the same.
            total += 1;
            let text = std::str::from_utf8(&original[..len]).unwrap();
            if let Some(fixed) = binance::scan_fixed(text) {
                fixed_layouts += 1;
                let slow = parser
                    .parse(&mut original.clone(), len, |doc| {
                        format!("{:?}", binance::decode(doc).unwrap())
                    })
                    .unwrap();
                assert_eq!(format!("{fixed:?}"), slow, "{file}:{}", i + 1);
            }
            if let Some(fast) = binance::scan(text) {
                scanned += 1;
                let slow = parser
                    .parse(&mut original.clone(), len, |doc| {
                        format!("{:?}", binance::decode(doc).unwrap())
                    })
                    .unwrap();
                assert_eq!(format!("{fast:?}"), slow, "{file}:{}", i + 1);
            }
        }
    }
    eprintln!("the scanner read {scanned} of {total} messages, {fixed_layouts} in a fixed layout");
    // It takes every flat message (depth and snapshots go to simd-json).
    let flat: usize = ["trade", "aggTrade", "bookTicker"]
        .iter()
        .map(|k| kinds[*k])
        .sum();
    assert!(scanned >= flat, "{scanned} scanned, {flat} flat messages");
    // Nearly every flat message comes in one of the fixed layouts.
    assert!(
        fixed_layouts * 100 >= flat * 95,
        "{fixed_layouts} of {flat} flat messages in a fixed layout"
    );
    eprintln!("{kinds:?}");
    for supported in ["trade", "aggTrade", "bookTicker", "depth", "snapshot"] {
        assert!(
            kinds.get(supported).is_some_and(|&n| n > 0),
            "no {supported} seen: {kinds:?}"
        );
    }
}

/// Every recorded depth update (spot, USD-M, COIN-M: 8 fractional digits,
/// the futures markets' tick and lot decimals, and their whole-number
/// quantities), read by the decoder
/// (whose fixed layouts read a level's values with its strings, in one
/// pass) and by simd-json's tape (whose levels are parsed from their
/// strings): the same levels at every pair of scales, digits and errors
/// (the value's text in them) included.
#[test]
fn recorded_levels_read_in_one_pass_as_the_tape_reads_them() {
    let Some(dir) = samples() else { return };
    let files = [
        "spot/original/hftbacktest_spot_btcusdt_20240808.gz",
        "usdm/original/hftbacktest_usdm_btcusdt_20240808.gz",
        "coinm/hftbacktest_cm_btcusd_perp_20240808.first15000.jsonl",
        "spot/cryptofeed_BINANCE.ws.1.0.jsonl",
        "usdm/cryptofeed_BINANCE_FUTURES.ws.1.0.jsonl",
        "coinm/cryptofeed_BINANCE_DELIVERY.ws.1.0.jsonl",
    ];
    // The values' own 8 (handed over as read), a tick and a lot's, too
    // few (errors), more (multiplied), and past the largest scale.
    let scales = [(8, 8), (2, 5), (1, 3), (0, 0), (12, 12), (19, 8)];
    fn read(d: &binance::Depth<'_, '_>, (ps, ss): (u8, u8)) -> Vec<LevelResult> {
        let levels: Vec<LevelResult> = scaled_levels(&d.bids, Side::Bid, ps, ss)
            .chain(scaled_levels(&d.asks, Side::Ask, ps, ss))
            .collect();
        // As the adapter hands them to its engine: the same.
        assert_eq!(
            scaled_sides(&d.bids, &d.asks, ps, ss).collect::<Vec<_>>(),
            levels
        );
        levels
    }
    let mut decoder = binance::Decoder::new();
    let mut parser = JsonParser::default();
    let (mut depths, mut levels, mut refused) = (0usize, 0usize, 0usize);
    for file in files {
        for (buf, len) in messages(&dir.join(file)).into_iter().take(20_000) {
            let one_pass: Vec<Vec<LevelResult>> =
                decoder.decode(&mut buf.clone(), len, |m| match m {
                    Ok(Message::Depth(d)) => scales.iter().map(|&s| read(&d, s)).collect(),
                    _ => Vec::new(),
                });
            if one_pass.is_empty() {
                continue;
            }
            let tape: Vec<Vec<LevelResult>> = parser
                .parse(&mut buf.clone(), len, |doc| match binance::decode(doc) {
                    Ok(Message::Depth(d)) => scales.iter().map(|&s| read(&d, s)).collect(),
                    other => panic!("{file}: the tape read {other:?}"),
                })
                .unwrap();
            assert_eq!(one_pass, tape, "{file}");
            depths += 1;
            levels += one_pass[0].len();
            refused += one_pass.iter().flatten().filter(|l| l.is_err()).count();
        }
    }
    eprintln!("{depths} depth updates, {levels} levels, {refused} refused at some scale");
    assert!(depths > 1_000 && levels > 10_000, "{depths} {levels}");
    assert!(
        refused > 0,
        "the scales that refuse values were not reached"
    );
}

struct Replay {
    /// Diffs applied while the book was valid.
    updates: usize,
    valid_during_snapshot: bool,
    ticker_matches: usize,
    allocations: u64,
    /// The gap that ended the book, if one did.
    gap: Option<Resync>,
}

/// Replays one hftbacktest recording (diffs, the REST snapshot in the
/// middle, bookTickers) through decode and the sync engine, the book
/// showing `depth` levels of the 1000 its snapshot gave. Whenever the
/// book is valid and a bookTicker names the update the book is at, the
/// book's best bid and ask are the ticker's. Runs twice: the first pass
/// warms the parser's buffers up, the second counts allocations.
fn replay(file: &str, chain: Chain, depth: usize) -> Option<Replay> {
    let dir = samples()?;
    let mut msgs = messages(&dir.join(file));
    let scales = Scales { price: 8, qty: 8 };
    let mut decoder = binance::Decoder::new();
    let mut result = None;
    for pass in 0..2 {
        // The recordings' snapshots hold 1000 levels a side: the book keeps
        // them all and shows `depth`.
        let config = SyncConfig {
            depth,
            keep: 1000,
            ..SyncConfig::default()
        };
        let mut sync = BookSync::new(chain, config);
        let mut events: Vec<SyncEvent> = Vec::with_capacity(msgs.len() * 3);
        let mut r = Replay {
            updates: 0,
            valid_during_snapshot: false,
            ticker_matches: 0,
            allocations: 0,
            gap: None,
        };
        let mut last_valid: Option<u64> = None;
        let ((), allocations) = tickwire_testkit::allocations(|| {
            for (buf, len) in msgs.iter_mut() {
                let len = *len;
                decoder.decode(buf, len, |m| {
                    let before = events.len();
                    let mut emit = |e: SyncEvent| events.push(e);
                    match m.unwrap() {
                        Message::Depth(d) => feed_depth(&mut sync, &d, scales, &mut emit).unwrap(),
                        Message::Snapshot(s) => {
                            feed_snapshot(&mut sync, &s, scales, &mut emit).unwrap();
                            r.valid_during_snapshot |= events[before..]
                                .iter()
                                .any(|e| matches!(e, SyncEvent::Valid { .. }));
                        }
                        Message::BookTicker(t) => {
                            if let (Some(book), Some(last)) = (sync.book(), last_valid)
                                && t.update_id == last
                            {
                                let (bid, ask) = book.top().unwrap();
                                let px = |s: &str| parse_scaled(s.as_bytes(), 8).unwrap();
                                assert_eq!(
                                    (bid.price, bid.size),
                                    (px(t.bid.0), px(t.bid.1)),
                                    "bid at {last}"
                                );
                                assert_eq!(
                                    (ask.price, ask.size),
                                    (px(t.ask.0), px(t.ask.1)),
                                    "ask at {last}"
                                );
                                r.ticker_matches += 1;
                            }
                        }
                        _ => {}
                    }
                    if let Some(SyncEvent::Valid { update_id } | SyncEvent::Updated { update_id }) =
                        events.last()
                    {
                        last_valid = Some(*update_id);
                    }
                });
            }
        });
        r.allocations = allocations;
        for e in &events {
            match e {
                SyncEvent::Gap(why) => {
                    r.gap = Some(*why);
                    break;
                }
                SyncEvent::Updated { .. } => r.updates += 1,
                _ => {}
            }
        }
        let first_valid = events
            .iter()
            .position(|e| matches!(e, SyncEvent::Valid { .. }));
        let first_update = events
            .iter()
            .position(|e| matches!(e, SyncEvent::Updated { .. }));
        assert!(first_valid.is_some(), "{file}: never valid");
        assert!(
            first_update > first_valid,
            "{file}: an update before the book was valid"
        );
        if let Some(book) = sync.book() {
            assert!(!book.is_crossed());
            assert!(book.levels(Side::Bid).len() == depth && book.levels(Side::Ask).len() == depth);
        }
        if pass == 1 {
            result = Some(r);
        }
    }
    result
}

/// Each recording at shown depths 1 to 500: the book stays valid for
/// well over a thousand diffs, and when it ends it is because the market
/// moved past the levels the snapshot gave (`DepthExhausted`: a live feed
/// fetches a new snapshot then), never a broken chain. The deeper the
/// book shows, the sooner that comes.
fn check(file: &str, chain: Chain) {
    for depth in [1, 20, 100, 500] {
        check_at(file, chain, depth);
    }
}

fn check_at(file: &str, chain: Chain, depth: usize) {
    let Some(r) = replay(file, chain, depth) else {
        return;
    };
    eprintln!(
        "{file} at depth {depth}: {} updates while valid, then {:?}; {} bookTicker cross-checks, {} allocations",
        r.updates, r.gap, r.ticker_matches, r.allocations
    );
    assert!(
        matches!(r.gap, None | Some(Resync::DepthExhausted)),
        "{file}: {:?}",
        r.gap
    );
    assert!(r.updates > 1000, "{} updates", r.updates);
    // The diff that bridges the snapshot arrived before the snapshot: only
    // a handler that buffered it becomes valid at the snapshot.
    assert!(
        r.valid_during_snapshot,
        "{file}: the bridge was not in the buffer"
    );
    assert_eq!(
        r.allocations, 0,
        "{file}: {} allocations after warm-up",
        r.allocations
    );
}

#[test]
fn spot_depth_chain_stays_valid() {
    check(
        "spot/original/hftbacktest_spot_btcusdt_20240808.gz",
        Chain::BinanceSpot,
    );
}

#[test]
fn usdm_depth_chain_stays_valid() {
    check(
        "usdm/original/hftbacktest_usdm_btcusdt_20240808.gz",
        Chain::BinanceFutures,
    );
}

#[test]
fn coinm_depth_chain_stays_valid() {
    check(
        "coinm/hftbacktest_cm_btcusd_perp_20240808.first15000.jsonl",
        Chain::BinanceFutures,
    );
}

/// Bad input costs no allocation either: malformed JSON and well-formed
/// messages with wrong fields come back as `Copy` errors.
#[test]
fn malformed_messages_allocate_nothing() {
    let bad: [&str; 4] = [
        r#"{"e":"trade","E":1723161255208,"s":"BTCUSDT","t":3712345678,"p":"61737.63"#,
        r#"{"e":"trade","E":1,"s":"X","t":"1","p":"1","q":"1","T":1,"m":true}"#,
        r#"{"e":"depthUpdate","E":1,"s":"X","U":1,"u":2,"b":{},"a":[]}"#,
        "[1,2,",
    ];
    let mut bufs: Vec<(Vec<u8>, usize)> = bad
        .iter()
        .map(|t| {
            let mut b = t.as_bytes().to_vec();
            b.resize(t.len() + INPUT_PADDING, 0);
            (b, t.len())
        })
        .collect();
    let mut decoder = binance::Decoder::new();
    let mut run = |bufs: &mut Vec<(Vec<u8>, usize)>| {
        let mut errors = Vec::with_capacity(bufs.len());
        for (buf, len) in bufs.iter_mut() {
            errors.push(decoder.decode(buf, *len, |m| m.err()));
        }
        errors
    };
    let warm = run(&mut bufs);
    assert!(
        matches!(warm[0], Some(tickwire_venues::DecodeError::Json(_))),
        "{warm:?}"
    );
    assert_eq!(warm[1], Some(tickwire_venues::DecodeError::Type("t")));
    assert_eq!(warm[2], Some(tickwire_venues::DecodeError::Type("b")));
    assert!(matches!(
        warm[3],
        Some(tickwire_venues::DecodeError::Json(_))
    ));
    let (again, allocations) = tickwire_testkit::allocations(|| {
        let mut n = 0;
        for _ in 0..1000 {
            for (buf, len) in bufs.iter_mut() {
                n += usize::from(decoder.decode(buf, *len, |m| m.is_err()));
            }
        }
        n
    });
    assert_eq!(again, 4000, "every one is an error");
    assert_eq!(
        allocations, 0,
        "{allocations} allocations for 4000 bad messages"
    );
}

/// A text message whose UTF-8 a transport vouches for, as tickwire-feed
/// hands a WebSocket text frame over.
struct Checked<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> tickwire_venues::Input<'a> for Checked<'a> {
    fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.buf[..self.len]).ok()
    }

    fn into_padded(self) -> (&'a mut [u8], usize) {
        (self.buf, self.len)
    }
}

/// `on_input` with checked text (the scanners read it as it is) and
/// `on_message` with bytes (the adapter checks them) answer alike and emit
/// the same events, message for message: over the recordings, and over
/// hand-written messages in and out of the scanners' layouts.
#[test]
fn checked_text_and_bytes_decode_alike() {
    use tickwire_venues::{Event, InstrumentSpec};
    let written: Vec<String> = [
        r#"{"e":"trade","E":1,"s":"BTCUSDT","t":2,"p":"60000.10","q":"0.5","T":1,"m":true,"M":true}"#,
        r#"{"u":7,"s":"BTCUSDT","b":"60000.00","B":"1.5","a":"60000.10","A":"2"}"#,
        // Whitespace and a reordered key: no fixed layout, the parser reads it.
        r#"{ "E":1, "e":"trade", "s":"BTCUSDT","t":3,"p":"60000.2","q":"1","T":1,"m":false,"M":true}"#,
        r#"{"e":"depthUpdate","E":1,"s":"BTCUSDT","U":5,"u":9,"b":[["60000.00","1"]],"a":[]}"#,
        r#"{"result":null,"id":1}"#,
        r#"{"error":{"code":2,"msg":"Invalid request"},"id":2}"#,
        r#"{"stream":"btcusdt@depth5","data":{"e":"depthUpdate","E":1,"s":"BTCUSDT","U":5,"u":9,"b":[],"a":[]}}"#,
        "not json",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut all: Vec<(Vec<u8>, usize)> = written
        .iter()
        .map(|t| t.as_bytes().to_vec())
        // Not UTF-8: no text to vouch for, so both check the bytes.
        .chain([b"{\"u\":7,\"s\":\"BTC\xffUSDT\"}".to_vec()])
        .map(|mut b| {
            let len = b.len();
            b.resize(len + INPUT_PADDING, 0);
            (b, len)
        })
        .collect();
    let recorded = [
        (
            "spot/original/hftbacktest_spot_btcusdt_20240808.gz",
            binance::Market::Spot,
        ),
        (
            "usdm/original/hftbacktest_usdm_btcusdt_20240808.gz",
            binance::Market::UsdM,
        ),
    ];
    let mut runs = vec![(binance::Market::Spot, std::mem::take(&mut all))];
    if let Some(dir) = samples() {
        for (file, market) in recorded {
            runs.push((
                market,
                messages(&dir.join(file)).into_iter().take(20_000).collect(),
            ));
        }
    }
    let spec = [InstrumentSpec::new("BTCUSDT", 8, 8, 20)];
    for (market, messages) in runs {
        let mut by_text = binance::Adapter::new(market, &spec);
        let mut by_bytes = binance::Adapter::new(market, &spec);
        for (i, (buf, len)) in messages.iter().enumerate() {
            let (mut a, mut b) = (buf.clone(), buf.clone());
            let (mut ea, mut eb): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
            let ra = by_text.on_input(
                Checked {
                    buf: &mut a,
                    len: *len,
                },
                0,
                &mut |e| ea.push(e),
            );
            let rb = by_bytes.on_message(&mut b, *len, 0, &mut |e| eb.push(e));
            assert_eq!(
                format!("{ra:?}"),
                format!("{rb:?}"),
                "{market:?} message {i}"
            );
            assert_eq!(ea, eb, "{market:?} message {i}");
        }
    }
}
