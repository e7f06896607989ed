//! Bybit v5 over the recordings in `../shared/samples` (skipped, with a
//! line saying so, when absent): the XRPUSDT `orderbook.500` chain (a
//! snapshot and 49 deltas) decodes, stays valid with `u` +1 every message,
//! and never crosses; the 2023 v5 frames go through the adapter. And the
//! adapter allocates nothing once warm, whatever Bybit sends.

use crate::common;

use tickwire_venues::book::Window;
use tickwire_venues::bybit::{self, Message};
use tickwire_venues::json::JsonParser;
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};

#[test]
fn the_v5_orderbook_chain_stays_valid() {
    let Some(dir) = common::samples("bybit") else {
        return;
    };
    let text = std::fs::read(dir.join("nautilus_2024-12-01_XRPUSDT_ob500.data.jsonl")).unwrap();
    let mut parser = JsonParser::default();
    // Bybit keeps the topic's 500-level window complete: the book keeps it
    // all and shows it all. (Kept as a client-tracked book instead, a
    // 500-level snapshot is no whole side, and thins below 500 at once.)
    let mut sync = BookSync::new(
        Chain::Bybit,
        SyncConfig {
            depth: 500,
            keep: 500,
            window: Window::Venue,
            ..SyncConfig::default()
        },
    );
    let mut events = Vec::new();
    for (line, mut buf, len) in common::padded_lines(&text) {
        parser
            .parse(&mut buf, len, |doc| {
                let Message::Book(b) =
                    bybit::decode(doc).unwrap_or_else(|e| panic!("line {line}: {e}"))
                else {
                    panic!("line {line}: not a book message")
                };
                bybit::feed_book(&mut sync, &b, 4, 0, &mut |e| events.push(e)).unwrap();
            })
            .unwrap();
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, SyncEvent::Valid { .. }))
            .count(),
        1
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, SyncEvent::Updated { .. }))
            .count(),
        49
    );
    assert!(
        !events.iter().any(|e| matches!(e, SyncEvent::Gap(_))),
        "{events:?}"
    );
    let book = sync.book().unwrap();
    assert!(!book.is_crossed());
    assert!(book.levels(tickwire_venues::book::Side::Bid).len() > 100);
}

/// The v5 frames of the 2023 recordings (tardis-node, re-serialised with
/// their values kept) through the adapter: linear, inverse and spot
/// trades (spot ids are digits), level-1 snapshots as quotes, the level-1
/// deltas of the time applied to a 1-level book (not quotes), and a
/// deeper topic left to its own book.
#[test]
fn the_2023_v5_frames_through_the_adapter() {
    use tickwire_venues::json::INPUT_PADDING;
    use tickwire_venues::{InstrumentSpec, Kind, Outcome};

    let Some(dir) = common::samples("bybit") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("tardis-node_bybit_legacy_and_v5.jsonl")).unwrap();
    let specs = [
        InstrumentSpec::new("BTCUSDT", 2, 6, 1),
        InstrumentSpec::new("BTCUSD", 2, 0, 0),
        InstrumentSpec::new("LTCUSDT", 2, 1, 0),
        InstrumentSpec::new("BTCPERP", 1, 3, 50),
    ];
    let mut adapter = bybit::Adapter::new(&specs);
    let (mut quotes, mut trades, mut numeric, mut valid, mut deltas, mut gaps) = (0, 0, 0, 0, 0, 0);
    let mut v5 = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let topic = v["topic"].as_str().unwrap_or("");
        if !(topic.starts_with("orderbook.") || topic.starts_with("publicTrade.")) {
            continue;
        }
        v5 += 1;
        let mut buf = line.as_bytes().to_vec();
        buf.resize(line.len() + INPUT_PADDING, 0);
        let mut events = Vec::new();
        let outcome = adapter
            .on_message(&mut buf, line.len(), 0, &mut |e| events.push(e.kind))
            .unwrap_or_else(|e| panic!("{e}: {line}"));
        let level_one = topic.starts_with("orderbook.1.");
        for k in &events {
            match k {
                Kind::Quote { update_id, .. } => {
                    assert!(level_one && v["type"] == "snapshot", "{line}");
                    assert_eq!(*update_id, v["data"]["u"].as_u64().unwrap());
                    quotes += 1;
                }
                Kind::Trade { trade_id, .. } => {
                    trades += 1;
                    numeric += usize::from(*trade_id > 0);
                }
                Kind::BookValid { .. } => valid += 1,
                Kind::BookDelta { last: true, .. } => deltas += 1,
                Kind::Gap { .. } => gaps += 1,
                _ => {}
            }
        }
        if topic.starts_with("orderbook.50.BTCUSDT") {
            assert_eq!(outcome, Outcome::Ignored, "{line}");
        }
    }
    let symbols_traded: usize = text
        .lines()
        .filter(|l| l.contains(r#""topic":"publicTrade."#))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let data = v["data"].as_array().unwrap();
            data.iter()
                .filter(|t| specs.iter().any(|s| t["s"] == s.symbol.as_str()))
                .count()
        })
        .sum();
    eprintln!("{v5} v5 frames: {quotes} quotes, {trades} trades, {valid} valid, {deltas} deltas");
    assert_eq!(trades, symbols_traded);
    assert!(
        numeric > 0 && numeric < trades,
        "spot ids are digits, the others UUIDs"
    );
    // Level-1 snapshots (linear, spot) are quotes; the books stay in step.
    assert!(quotes >= 2, "{quotes}");
    assert!(valid >= 3 && deltas >= 3, "{valid} {deltas}");
    assert_eq!(gaps, 0);
    assert!(
        adapter
            .book(adapter.instrument("BTCPERP").unwrap())
            .is_some()
    );
}

/// Every kind of message Bybit sends, twice through the adapter: the
/// second pass allocates nothing (books, quotes, trades, refusals, pongs).
#[test]
fn the_adapter_allocates_nothing_once_warm() {
    use tickwire_venues::json::INPUT_PADDING;
    use tickwire_venues::{InstrumentSpec, Kind};

    let mut msgs: Vec<String> = vec![
        r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":1,"data":{"s":"BTCUSDT","b":[["16493.50","0.006"],["16493.00","0.100"]],"a":[["16611.00","0.029"]],"u":100,"seq":1},"cts":1}"#.to_owned(),
    ];
    for i in 0..300u64 {
        let size = if i % 2 == 0 { "0.250" } else { "0.100" };
        msgs.push(format!(
            r#"{{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":2,"data":{{"s":"BTCUSDT","b":[["16493.00","{size}"]],"a":[],"u":{},"seq":2}},"cts":2}}"#,
            101 + i
        ));
        msgs.push(format!(
            r#"{{"topic":"orderbook.1.BTCUSDT","ts":2,"type":"snapshot","data":{{"s":"BTCUSDT","b":[["16493.50","0.006"]],"a":[["16611.00","{size}"]],"u":{},"seq":2}},"cts":2}}"#,
            7 + i
        ));
        msgs.push(format!(
            r#"{{"topic":"publicTrade.BTCUSDT","type":"snapshot","ts":3,"data":[{{"T":3,"s":"BTCUSDT","S":"Buy","v":"0.001","p":"16578.50","L":"PlusTick","i":"{}","BT":false,"RPI":false,"seq":3}}]}}"#,
            5000 + i
        ));
    }
    msgs.push(r#"{"success":true,"ret_msg":"pong","conn_id":"d9avrj8i70nu0j2a80n0-9cfc4","req_id":"","op":"ping"}"#.to_owned());
    msgs.push(r#"{"success":false,"ret_msg":"error:handler not found,topic:orderbook.50.ETHUSDT","conn_id":"d9avrj8i70nu0j2a80n0-9cfc4","req_id":"","op":"subscribe"}"#.to_owned());
    msgs.push(r#"{"success":false,"ret_msg":"args size \u003e10","conn_id":"d9avrj8i70nu0j2a80n0-9cfc4","op":"subscribe"}"#.to_owned());
    let specs = [
        InstrumentSpec::new("BTCUSDT", 2, 3, 20),
        InstrumentSpec::new("ETHUSDT", 2, 3, 20),
    ];
    let mut adapter = bybit::Adapter::new(&specs);
    let mut bufs: Vec<(Vec<u8>, usize)> = msgs
        .iter()
        .map(|m| {
            let mut b = m.as_bytes().to_vec();
            b.resize(m.len() + INPUT_PADDING, 0);
            (b, m.len())
        })
        .collect();
    let mut events = Vec::with_capacity(16 * bufs.len());
    let mut run = |bufs: &mut Vec<(Vec<u8>, usize)>, events: &mut Vec<_>| {
        for (buf, len) in bufs.iter_mut() {
            adapter
                .on_message(buf, *len, 0, &mut |e| events.push(e))
                .unwrap();
        }
    };
    // The buffers are parsed in place: a second pass needs fresh copies.
    let mut again = bufs.clone();
    run(&mut bufs, &mut events);
    events.clear();
    let ((), allocations) = tickwire_testkit::allocations(|| run(&mut again, &mut events));
    assert_eq!(allocations, 0);
    let count = |f: fn(&Kind) -> bool| events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(count(|k| matches!(k, Kind::Trade { .. })), 300);
    assert_eq!(count(|k| matches!(k, Kind::Quote { .. })), 300);
    assert_eq!(count(|k| matches!(k, Kind::Rejected { .. })), 1);
    // The second pass starts with the snapshot again: it replaces the
    // book, and the deltas chain on it once more.
    assert_eq!(count(|k| matches!(k, Kind::Gap { .. })), 0);
}
