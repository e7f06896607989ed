//! Kraken over the recordings in `../shared/samples` (skipped, with a
//! line saying so, when absent): every v1 message decodes, and every book
//! update of the `book-1000` recording (4269 of them, across the pairs)
//! matches Kraken's CRC32 checksum; the v2 lines there (documentation-style
//! examples and re-serialised peer fixtures: no live v2 capture) decode
//! as what they are. And the v2 adapter, once warm, allocates nothing.

use crate::common;

use std::collections::BTreeMap;

use tickwire_venues::decimal::scale_of;
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::kraken::{self, Message, v2};
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};
use tickwire_venues::{DecodeError, Event, InstrumentId, InstrumentSpec, Kind, Outcome, Venue};

#[test]
fn every_book_update_matches_kraken_checksum() {
    let Some(dir) = common::samples("kraken") else {
        return;
    };
    let mut parser = JsonParser::default();
    let mut checked = 0;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for file in [
        "cryptofeed_KRAKEN.ws.48.0.jsonl",
        "cryptofeed_KRAKEN.ws.49.0.jsonl",
        "cryptofeed_KRAKEN.ws.50.0.jsonl",
    ] {
        let text = std::fs::read(dir.join(file)).unwrap();
        let mut books: BTreeMap<String, (BookSync, (u8, u8))> = BTreeMap::new();
        let mut gaps = Vec::new();
        for (line, mut buf, len) in common::padded_lines(&text) {
            parser
                .parse(&mut buf, len, |doc| {
                    let m = kraken::decode(doc).unwrap_or_else(|e| panic!("{file}:{line}: {e}"));
                    let kind = match &m {
                        Message::Book(_) => "book".to_owned(),
                        Message::Trades { .. } => "trade".to_owned(),
                        Message::Event(e) => format!("event:{e}"),
                        Message::Other(c) => format!("other:{c}"),
                    };
                    *kinds.entry(kind).or_default() += 1;
                    if let Message::Book(b) = m {
                        let depth: usize = b.channel["book-".len()..].parse().unwrap();
                        // Kraken prints each pair at fixed precisions (its
                        // AssetPairs metadata); read them off the snapshot.
                        let (sync, scales) = books.entry(b.pair.to_owned()).or_insert_with(|| {
                            let (p, q) = b.asks.unwrap().iter().next().unwrap().unwrap();
                            (
                                BookSync::new(
                                    Chain::Kraken,
                                    SyncConfig {
                                        depth,
                                        ..SyncConfig::default()
                                    },
                                ),
                                (scale_of(p.as_bytes()), scale_of(q.as_bytes())),
                            )
                        });
                        let mut emit = |e: SyncEvent| {
                            if let SyncEvent::Gap(why) = e {
                                gaps.push((line, why));
                            }
                        };
                        if kraken::feed_book(sync, &b, scales.0, scales.1, &mut emit).unwrap() {
                            checked += 1;
                        }
                    }
                })
                .unwrap();
        }
        assert_eq!(gaps, [], "{file}: no checksum mismatch");
    }
    eprintln!("{checked} checksums; {kinds:?}");
    assert!(checked >= 4269, "{checked} checksums");
}

#[test]
fn v2_lines_of_the_samples_decode_as_what_they_are() {
    let Some(dir) = common::samples("kraken") else {
        return;
    };
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for file in [
        "schema_examples_nautilus_kraken.jsonl",
        "tardis-node_kraken_v1_v2.jsonl",
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let v2_lines = text
            .lines()
            .filter(|l| l.starts_with(r#"{"channel""#) || l.starts_with(r#"{"method""#));
        for line in v2_lines {
            let kind = match v2::decode(line) {
                Ok(v2::Message::Book(b)) => {
                    // Every level reads at the default scales.
                    let (ps, ss) = Venue::Kraken.default_scales();
                    for side in [
                        tickwire_venues::book::Side::Bid,
                        tickwire_venues::book::Side::Ask,
                    ] {
                        for level in b.levels(side) {
                            let (p, q) = level.unwrap();
                            tickwire_venues::decimal::level(p, q, ps, ss).unwrap();
                        }
                    }
                    "book"
                }
                Ok(v2::Message::Trades(t)) => {
                    assert!(t.iter().all(|t| t.is_ok()), "{line}");
                    "trade"
                }
                Ok(v2::Message::Ticker(_)) => "ticker",
                Ok(v2::Message::Control(_)) => "control",
                Ok(v2::Message::Other(c)) => {
                    assert_eq!(c, "level3", "{line}");
                    "other"
                }
                // tardis-node's re-serialised update has lost its checksum.
                Err(DecodeError::Missing("checksum")) => "book without checksum",
                other => panic!("{file}: {other:?}: {line}"),
            };
            *seen.entry(kind).or_default() += 1;
        }
    }
    eprintln!("{seen:?}");
    for kind in ["book", "trade", "ticker", "control", "other"] {
        assert!(seen.contains_key(kind), "{kind}: {seen:?}");
    }
}

/// The documented rule: asks then bids, at the pair's precision, point and
/// leading zeros removed.
fn crc(asks: &[(&str, &str)], bids: &[(&str, &str)]) -> u32 {
    let f = |s: &str| s.replace('.', "").trim_start_matches('0').to_owned();
    let text: String = asks.iter().chain(bids).map(|(p, q)| f(p) + &f(q)).collect();
    crc32fast::hash(text.as_bytes())
}

fn padded(text: &str) -> (Vec<u8>, usize) {
    let mut b = text.as_bytes().to_vec();
    b.resize(text.len() + INPUT_PADDING, 0);
    (b, text.len())
}

/// Every kind of message a Kraken v2 connection carries, twice through the
/// adapter: the second pass (a reconnect, its `instrument` snapshot of a
/// thousand pairs included) allocates nothing, and the book stays valid.
#[test]
fn the_v2_adapter_allocates_nothing_once_warm() {
    let asks = [("45285.2", "0.00100000"), ("45286.4", "1.54571953")];
    let bid = |q: &'static str| [("45283.5", q), ("45283.4", "1.54582015")];
    let mut pairs = String::new();
    for k in 0..1000 {
        pairs.push_str(&format!(
            r#"{{"symbol":"SIM{k}/EUR","base":"SIM{k}","quote":"EUR","status":"online","qty_precision":8,"qty_increment":1e-08,"price_precision":5,"price_increment":1e-05,"qty_min":5e-05}},"#
        ));
    }
    let instrument = format!(
        r#"{{"channel":"instrument","type":"snapshot","data":{{"assets":[{{"id":"BTC","status":"enabled","precision":10,"precision_display":5}}],"pairs":[{pairs}{{"symbol":"BTC/USD","base":"BTC","quote":"USD","status":"online","qty_precision":8,"qty_increment":1e-08,"price_precision":1,"price_increment":0.1,"qty_min":0.0001}}]}}}}"#
    );
    let level = |(p, q): &(&str, &str)| format!(r#"{{"price":{p},"qty":{q}}}"#);
    let side = |l: &[(&str, &str)]| l.iter().map(level).collect::<Vec<_>>().join(",");
    let mut msgs = vec![
        padded(
            r#"{"channel":"status","data":[{"api_version":"v2","connection_id":13834774380200032777,"system":"online","version":"2.0.10"}],"type":"update"}"#,
        ),
        padded(&instrument),
        padded(&format!(
            r#"{{"channel":"book","type":"snapshot","data":[{{"symbol":"BTC/USD","bids":[{}],"asks":[{}],"checksum":{},"timestamp":"2023-10-06T17:35:55.440295Z"}}]}}"#,
            side(&bid("0.10000000")),
            side(&asks),
            crc(&asks, &bid("0.10000000"))
        )),
        padded(
            r#"{"error":"Currency pair not supported XBT/USD","method":"subscribe","success":false,"symbol":"XBT/USD","time_in":"2026-09-25T17:48:54.701041Z","time_out":"2026-09-25T17:48:54.701062Z"}"#,
        ),
    ];
    for i in 0..500 {
        let q = if i % 2 == 0 {
            "0.25000000"
        } else {
            "0.10000000"
        };
        msgs.push(padded(&format!(
            r#"{{"channel":"book","type":"update","data":[{{"symbol":"BTC/USD","bids":[{{"price":45283.5,"qty":{q}}}],"asks":[],"checksum":{},"timestamp":"2023-10-06T17:35:55.440295Z"}}]}}"#,
            crc(&asks, &bid(q))
        )));
        msgs.push(padded(r#"{"channel":"trade","type":"update","data":[{"symbol":"BTC/USD","side":"buy","price":45283.5,"qty":0.00027625,"ord_type":"limit","trade_id":10218208,"timestamp":"2023-10-06T17:35:55.440295Z"}]}"#));
        msgs.push(padded(r#"{"channel":"ticker","type":"update","data":[{"symbol":"BTC/USD","bid":45283.5,"bid_qty":0.10000000,"ask":45285.2,"ask_qty":0.00100000,"last":45283.5,"volume":3156.84782110,"vwap":45174.6,"low":45163.6,"high":45247.4,"change":-429.3,"change_pct":-0.51,"trades":135262,"timestamp":"2026-09-25T17:48:26.844359Z"}]}"#));
        msgs.push(padded(r#"{"channel":"heartbeat"}"#));
        msgs.push(padded(r#"{"method":"pong","req_id":101,"time_in":"2023-09-24T14:10:23.799685Z","time_out":"2023-09-24T14:10:23.799703Z"}"#));
    }
    let (ps, ss) = Venue::Kraken.default_scales();
    let mut adapter = kraken::Adapter::new(&[InstrumentSpec::new("BTC/USD", ps, ss, 10)]);
    let mut events: Vec<Event> = Vec::with_capacity(msgs.len() * 8);
    let mut run = |adapter: &mut kraken::Adapter, events: &mut Vec<Event>| {
        for (buf, len) in msgs.iter_mut() {
            let r = adapter.on_message(buf, *len, 0, &mut |e| events.push(e));
            assert!(r.is_ok(), "{r:?}");
        }
    };
    run(&mut adapter, &mut events);
    events.clear();
    let ((), allocations) = tickwire_testkit::allocations(|| {
        adapter.on_disconnect(0, &mut |e| events.push(e));
        run(&mut adapter, &mut events);
    });
    assert_eq!(allocations, 0);
    let count = |f: fn(&Kind) -> bool| events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(
        count(|k| matches!(k, Kind::Gap { .. })),
        1,
        "the disconnect's only"
    );
    assert_eq!(count(|k| matches!(k, Kind::Trade { .. })), 500);
    assert_eq!(count(|k| matches!(k, Kind::Quote { .. })), 500);
    assert_eq!(count(|k| matches!(k, Kind::BookValid { .. })), 1);
    assert_eq!(count(|k| matches!(k, Kind::BookDelta { .. })), 500 + 4);
    assert!(adapter.book(InstrumentId(0)).is_some());
    assert_eq!(adapter.checksums_verified, 2 * 501);
    let r = adapter.on_message(&mut padded("{}").0, 2, 0, &mut |_| ());
    assert!(matches!(r, Err(DecodeError::Missing("channel"))), "{r:?}");
    assert_eq!(
        adapter.on_message(
            &mut padded(r#"{"channel":"heartbeat"}"#).0,
            23,
            0,
            &mut |_| ()
        ),
        Ok(Outcome::Control)
    );
}
