use super::*;
use crate::adapter::Outcome;
use crate::event::{Aggressor, Event, InstrumentId, InstrumentSpec, Kind};
use crate::sync::{Chain, Resync, SyncConfig};

// Shapes from Kraken's v2 documentation ("Book", "Instrument", "Trade",
// "Ticker", "Ping", the v2 book checksum guide) and the live replies the
// research note quotes; values ours unless said, checksums computed by the
// documented rule.

/// The documented rule, on values written at the pair's precision: asks
/// then bids, each price then quantity, point and leading zeros removed.
fn crc(levels: &[(&str, &str)]) -> u32 {
    let f = |s: &str| s.replace('.', "").trim_start_matches('0').to_owned();
    let text: String = levels.iter().map(|(p, q)| f(p) + &f(q)).collect();
    crc32fast::hash(text.as_bytes())
}

fn feed(a: &mut Adapter, text: &str) -> (Result<Outcome, DecodeError>, Vec<Event>) {
    crate::adapter::testutil::feed(a, text, 7)
}

fn kinds(ev: &[Event]) -> Vec<Kind> {
    ev.iter().map(|e| e.kind).collect()
}

/// An `instrument` snapshot in the documented shape (increments in
/// exponent notation), listing `pairs` (symbol, price and qty precision)
/// after a pair that is not ours.
fn instrument_snapshot(pairs: &[(&str, u8, u8)]) -> String {
    let mut s = String::from(
        r#"{"channel":"instrument","type":"snapshot","data":{"assets":[{"id":"BTC","status":"enabled","precision":10,"precision_display":5,"borrowable":true,"collateral_value":1.0,"margin_rate":0.01},{"id":"USD","status":"enabled","precision":4,"precision_display":2,"borrowable":true,"collateral_value":1.0,"margin_rate":0.025}],"pairs":[{"symbol":"MINA/GBP","base":"MINA","quote":"GBP","status":"online","qty_precision":8,"qty_increment":1e-08,"price_precision":4,"cost_precision":5,"marginable":false,"has_index":true,"cost_min":0.5,"tick_size":0.0001,"price_increment":0.0001,"qty_min":5e-05}"#,
    );
    for (symbol, price, qty) in pairs {
        s.push_str(&format!(
            r#",{{"symbol":"{symbol}","base":"BTC","quote":"USD","status":"online","qty_precision":{qty},"qty_increment":1e-{qty:02},"price_precision":{price},"cost_precision":5,"marginable":true,"has_index":true,"cost_min":0.5,"margin_initial":0.2,"position_limit_long":250,"position_limit_short":200,"tick_size":0.1,"price_increment":0.1,"qty_min":0.0001}}"#
        ));
    }
    s.push_str("]}}");
    s
}

/// A book message of `BTC/USD` with levels as written.
fn book(kind: &str, bids: &[(&str, &str)], asks: &[(&str, &str)], checksum: u32) -> String {
    let side = |levels: &[(&str, &str)]| -> String {
        levels
            .iter()
            .map(|(p, q)| format!(r#"{{"price":{p},"qty":{q}}}"#))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        r#"{{"channel":"book","type":"{kind}","data":[{{"symbol":"BTC/USD","bids":[{}],"asks":[{}],"checksum":{checksum},"timestamp":"2023-10-06T17:35:55.440295Z"}}]}}"#,
        side(bids),
        side(asks)
    )
}

/// The documented example (BTC/USD, price precision 1, qty precision 8).
const ASKS: [(&str, &str); 10] = [
    ("45285.2", "0.00100000"),
    ("45286.4", "1.54571953"),
    ("45286.6", "1.54571109"),
    ("45289.6", "1.54560911"),
    ("45290.2", "0.15890660"),
    ("45291.8", "1.54553491"),
    ("45294.7", "0.04454749"),
    ("45296.1", "0.35380000"),
    ("45297.5", "0.09945542"),
    ("45299.5", "0.18772827"),
];
const BIDS: [(&str, &str); 10] = [
    ("45283.5", "0.10000000"),
    ("45283.4", "1.54582015"),
    ("45282.1", "0.10000000"),
    ("45281.0", "0.10000000"),
    ("45280.3", "1.54592586"),
    ("45279.0", "0.07990000"),
    ("45277.6", "0.03310103"),
    ("45277.5", "0.30000000"),
    ("45277.3", "1.54602737"),
    ("45276.6", "0.15445238"),
];
const DOCUMENTED: u32 = 3_310_070_434;

#[test]
fn the_documented_checksum_example() {
    let all: Vec<(&str, &str)> = ASKS.iter().chain(&BIDS).copied().collect();
    assert_eq!(crc(&all), DOCUMENTED);
    // Through the adapter: values kept at the default scales (10, 8), the
    // checksum written at the pair's precision from the instrument channel.
    let mut a = Adapter::new(&[InstrumentSpec::new("BTC/USD", 10, 8, 10)]);
    let (r, _) = feed(&mut a, &instrument_snapshot(&[("BTC/USD", 1, 8)]));
    assert_eq!(r, Ok(Outcome::Control));
    assert_eq!(a.precision("BTC/USD"), Some(Precision { price: 1, qty: 8 }));
    let (r, ev) = feed(&mut a, &book("snapshot", &BIDS, &ASKS, DOCUMENTED));
    assert_eq!(r, Ok(Outcome::Data));
    assert!(matches!(
        ev.last().map(|e| e.kind),
        Some(Kind::BookValid { .. })
    ));
    assert_eq!(a.checksums_verified, 1);
    let b = a.book(InstrumentId(0)).expect("valid");
    assert_eq!(
        b.levels(Side::Ask).get(0).map(|l| l.price),
        Some(452_852 * 10i64.pow(9))
    );
    // The same book with the trailing zeros stripped, as the docs' own
    // examples print numbers: padded back to the precision, it matches.
    let stripped = |l: &[(&'static str, &'static str)]| -> Vec<(String, String)> {
        let trim = |s: &str| {
            let t = s.trim_end_matches('0');
            t.strip_suffix('.').unwrap_or(t).to_owned()
        };
        l.iter().map(|(p, q)| (trim(p), trim(q))).collect()
    };
    let (bids, asks) = (stripped(&BIDS), stripped(&ASKS));
    fn as_ref(v: &[(String, String)]) -> Vec<(&str, &str)> {
        v.iter().map(|(p, q)| (p.as_str(), q.as_str())).collect()
    }
    assert!(as_ref(&bids).contains(&("45281", "0.1")));
    let (_, ev) = feed(
        &mut a,
        &book("snapshot", &as_ref(&bids), &as_ref(&asks), DOCUMENTED),
    );
    assert!(matches!(
        ev.last().map(|e| e.kind),
        Some(Kind::BookValid { .. })
    ));
    assert_eq!(a.checksums_verified, 2);
}

#[test]
fn snapshot_and_update_at_the_pair_precision() {
    let precision = Precision { price: 1, qty: 8 };
    let mut sync = BookSync::new(
        Chain::Kraken,
        SyncConfig {
            depth: 10,
            ..SyncConfig::default()
        },
    );
    let mut ev = Vec::new();
    // JSON numbers without trailing zeros; the checksum puts them back.
    let want = crc(&[("45285.2", "0.00100000"), ("45283.5", "0.10000000")]);
    let snapshot = book(
        "snapshot",
        &[("45283.5", "0.1")],
        &[("45285.2", "0.001")],
        want,
    );
    let Message::Book(b) = decode(&snapshot).unwrap() else {
        panic!()
    };
    assert!(feed_book(&mut sync, &b, precision, &mut |e| ev.push(e)).unwrap());
    let want = crc(&[("45285.2", "0.00100000"), ("45283.5", "0.25000000")]);
    let update = book("update", &[("45283.5", "0.25")], &[], want);
    let Message::Book(b) = decode(&update).unwrap() else {
        panic!()
    };
    assert!(feed_book(&mut sync, &b, precision, &mut |e| ev.push(e)).unwrap());
    assert_eq!(
        ev,
        [
            SyncEvent::Valid { update_id: 0 },
            SyncEvent::Updated { update_id: 0 }
        ]
    );
    // A wrong checksum: the book is dropped, explicitly.
    let bad = book("update", &[], &[], 1);
    let Message::Book(b) = decode(&bad).unwrap() else {
        panic!()
    };
    assert!(!feed_book(&mut sync, &b, precision, &mut |e| ev.push(e)).unwrap());
    assert!(
        matches!(ev[3], SyncEvent::Gap(Resync::Checksum { expected: 1, .. })),
        "{ev:?}"
    );
    assert!(sync.book().is_none());
}

#[test]
fn control_messages_and_errors() {
    for (text, want) in [
        (r#"{"channel":"heartbeat"}"#, "heartbeat"),
        (
            r#"{"channel":"status","data":[{"api_version":"v2","connection_id":13834774380200032777,"system":"online","version":"2.0.10"}],"type":"update"}"#,
            "status",
        ),
        (
            r#"{"method":"subscribe","result":{"channel":"book","depth":10,"snapshot":true,"symbol":"ALGO/USD"},"success":true,"time_in":"2023-10-06T17:35:55.219022Z","time_out":"2023-10-06T17:35:55.219067Z"}"#,
            "subscribe",
        ),
        (
            r#"{"method":"unsubscribe","result":{"channel":"book","depth":25,"symbol":"BTC/USD"},"success":true,"time_in":"x","time_out":"y"}"#,
            "unsubscribe",
        ),
        (
            r#"{"method":"pong","req_id":101,"time_in":"2023-09-24T14:10:23.799685Z","time_out":"2023-09-24T14:10:23.799703Z"}"#,
            "pong",
        ),
    ] {
        match decode(text) {
            Ok(Message::Control(m)) => assert_eq!(m, want),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(matches!(
        decode(r#"{"channel":"ohlc","type":"update","data":[]}"#).unwrap(),
        Message::Other("ohlc")
    ));
    for bad in [
        "",
        r#"{"channel":"book","type":"update","data":[]}"#,
        r#"{"channel":"book","type":"x","data":[{}]}"#,
        r#"{"channel":"instrument","type":"snapshot","data":[]}"#,
        r#"{"channel":"instrument","type":"snapshot","data":{"pairs":{}}}"#,
        r#"{"error":7,"method":"subscribe","success":false}"#,
        // An update without its checksum (a re-serialised peer fixture).
        r#"{"channel":"book","type":"update","data":[{"symbol":"BTC/USD","bids":[{"price":99.9,"qty":0.5}],"asks":[]}]}"#,
    ] {
        assert!(decode(bad).is_err(), "{bad}");
    }
    // More digits than the scale keeps: refused, not rounded.
    let text = book("snapshot", &[("45283.55", "1")], &[], 0);
    let Message::Book(b) = decode(&text).unwrap() else {
        panic!()
    };
    let mut sync = BookSync::new(Chain::Kraken, SyncConfig::default());
    let r = feed_book(&mut sync, &b, Precision { price: 1, qty: 8 }, &mut |_| {});
    assert!(matches!(
        r,
        Err(DecodeError::Decimal(crate::BadDecimal {
            field: "price",
            ..
        }))
    ));
}

#[test]
fn refusals_in_their_shapes_reach_the_instruments_they_name() {
    let mut a = Adapter::new(&[
        InstrumentSpec::new("BTC/USD", 1, 8, 10),
        InstrumentSpec::new("ETH/USD", 2, 8, 10),
    ]);
    // One symbol of a subscription, named in `symbol` (live shape, Kraken
    // 2026-09-25): that instrument is refused.
    let (r, ev) = feed(
        &mut a,
        r#"{"error":"Currency pair not supported ETH/USD","method":"subscribe","req_id":3,"success":false,"symbol":"ETH/USD","time_in":"2026-09-25T17:48:54.701041Z","time_out":"2026-09-25T17:48:54.701062Z"}"#,
    );
    assert_eq!(r, Ok(Outcome::Rejected));
    assert_eq!(kinds(&ev), [Kind::Rejected { code: 0 }]);
    assert_eq!(ev[0].instrument, InstrumentId(1));
    assert_eq!(
        crate::VenueAdapter::rejection(&a),
        "Currency pair not supported ETH/USD"
    );
    // A symbol that is not ours (a v1 name): refused, no instrument.
    let (r, ev) = feed(
        &mut a,
        r#"{"error":"Currency pair not supported XBT/USD","method":"subscribe","success":false,"symbol":"XBT/USD","time_in":"2026-09-25T17:48:54.701041Z","time_out":"2026-09-25T17:48:54.701062Z"}"#,
    );
    assert_eq!((r, ev.len()), (Ok(Outcome::Rejected), 0));
    assert_eq!(
        crate::VenueAdapter::rejection(&a),
        "Currency pair not supported XBT/USD"
    );
    // A bad depth names no symbol (live, 2026-08-16): the request only.
    let (r, ev) = feed(
        &mut a,
        r#"{"error":"Subscription depth not supported","method":"subscribe","success":false,"time_in":"2026-08-16T23:54:19.629313Z","time_out":"2026-08-16T23:54:19.629343Z"}"#,
    );
    assert_eq!((r, ev.len()), (Ok(Outcome::Rejected), 0));
    assert_eq!(
        crate::VenueAdapter::rejection(&a),
        "Subscription depth not supported"
    );
    // Subscribed twice: the request is refused, the first subscription
    // stays, so the instrument is not.
    let (r, ev) = feed(
        &mut a,
        r#"{"error":"Already subscribed","method":"subscribe","req_id":2,"success":false,"symbol":"BTC/USD","time_in":"2025-12-20T07:39:28.809188Z","time_out":"2025-12-20T07:39:28.809200Z"}"#,
    );
    assert_eq!((r, ev.len()), (Ok(Outcome::Rejected), 0));
    // An unsubscription of what is not subscribed (a resubscription's
    // first half, after the venue dropped it): what it asked for holds.
    let (r, ev) = feed(
        &mut a,
        r#"{"error":"Subscription Not Found","method":"unsubscribe","req_id":3,"success":false,"symbol":"BTC/USD","time_in":"a","time_out":"b"}"#,
    );
    assert_eq!((r, ev.len()), (Ok(Outcome::Control), 0));
    assert_eq!(
        crate::VenueAdapter::rejection(&a),
        "Already subscribed",
        "not a refusal"
    );
    // A request Kraken could not read, a ping with a field it does not
    // take, and the rate limit's capital `Error`.
    for (text, words) in [
        (
            r#"{"error":"Malformed request","method":"error","success":false,"time_in":"2026-08-16T23:54:19.629313Z","time_out":"2026-08-16T23:54:19.629343Z"}"#,
            "Malformed request",
        ),
        (
            r#"{"error":"Unsupported field: 'params' for the given msg type: ping","method":"ping","req_id":0,"success":false,"time_in":"2024-05-19T19:58:40.170724Z","time_out":"2024-05-19T19:58:40.170758Z"}"#,
            "Unsupported field: 'params' for the given msg type: ping",
        ),
        (r#"{"Error":"Exceeded msg rate"}"#, "Exceeded msg rate"),
    ] {
        let (r, ev) = feed(&mut a, text);
        assert_eq!((r, ev.len()), (Ok(Outcome::Rejected), 0), "{text}");
        assert_eq!(crate::VenueAdapter::rejection(&a), words);
    }
    let Ok(Message::Refused(r)) = decode(
        r#"{"error":"Already subscribed","method":"subscribe","req_id":2,"success":false,"symbol":"BTC/USD","time_in":"a","time_out":"b"}"#,
    ) else {
        panic!()
    };
    assert_eq!(
        r,
        Refusal {
            method: "subscribe",
            error: ALREADY_SUBSCRIBED,
            symbol: Some("BTC/USD"),
            req_id: Some(2),
        }
    );
}

#[test]
fn a_book_waits_for_its_precision_then_asks_for_a_snapshot() {
    // Default scales: values held, precision unknown.
    let mut a = Adapter::new(&[
        InstrumentSpec::new("BTC/USD", 10, 8, 10),
        InstrumentSpec::new("ETH/USD", 10, 8, 10),
    ]);
    assert_eq!(a.precision("BTC/USD"), None);
    let (r, ev) = feed(&mut a, &book("snapshot", &BIDS, &ASKS, DOCUMENTED));
    assert_eq!((r, ev.len()), (Ok(Outcome::Data), 0), "{ev:?}");
    let (_, ev) = feed(&mut a, &book("update", &BIDS[..1], &[], DOCUMENTED));
    assert!(ev.is_empty());
    assert_eq!(a.unchecked_books, 2);
    assert!(a.book(InstrumentId(0)).is_none());
    // The precision arrives: the waiting book asks for a fresh snapshot,
    // once; the other book, which had nothing, says nothing.
    let (r, ev) = feed(
        &mut a,
        &instrument_snapshot(&[("ETH/USD", 2, 8), ("BTC/USD", 1, 8)]),
    );
    assert_eq!(r, Ok(Outcome::Control));
    assert_eq!(kinds(&ev), [Kind::Resync]);
    assert_eq!(ev[0].instrument, InstrumentId(0));
    let (_, ev) = feed(&mut a, &instrument_snapshot(&[("BTC/USD", 1, 8)]));
    assert!(ev.is_empty());
    // An update before the new snapshot asks for nothing more.
    let (_, ev) = feed(&mut a, &book("update", &BIDS[..1], &[], DOCUMENTED));
    assert!(ev.is_empty(), "{ev:?}");
    let (_, ev) = feed(&mut a, &book("snapshot", &BIDS, &ASKS, DOCUMENTED));
    assert!(matches!(
        ev.last().map(|e| e.kind),
        Some(Kind::BookValid { .. })
    ));
    assert_eq!(a.checksums_verified, 1);
    // A pair of ours without its precisions is an error, not a guess,
    // naming the field.
    let bad = r#"{"channel":"instrument","type":"update","data":{"pairs":[{"symbol":"ETH/USD","qty_precision":8}]}}"#;
    assert_eq!(
        feed(&mut a, bad).0,
        Err(DecodeError::Missing("price_precision"))
    );
    let bad = r#"{"channel":"instrument","type":"update","data":{"pairs":[{"symbol":"ETH/USD","price_precision":2}]}}"#;
    assert_eq!(
        feed(&mut a, bad).0,
        Err(DecodeError::Missing("qty_precision"))
    );
    let bad = r#"{"channel":"instrument","type":"update","data":{"pairs":[{"symbol":"ETH/USD","price_precision":2,"qty_precision":19}]}}"#;
    assert_eq!(feed(&mut a, bad).0, Err(DecodeError::Type("qty_precision")));
    assert_eq!(a.precision("ETH/USD"), Some(Precision { price: 2, qty: 8 }));
    // The pairs after one that cannot be read are still applied, and a
    // pair not ours is not read.
    let mixed = r#"{"channel":"instrument","type":"update","data":{"pairs":[{"symbol":"ETH/USD","price_precision":"2","qty_precision":8},{"symbol":"XBT/EUR"},{"symbol":"BTC/USD","price_precision":2,"qty_precision":6}]}}"#;
    assert_eq!(
        feed(&mut a, mixed).0,
        Err(DecodeError::Type("price_precision"))
    );
    assert_eq!(a.precision("BTC/USD"), Some(Precision { price: 2, qty: 6 }));
    assert_eq!(a.precision("ETH/USD"), Some(Precision { price: 2, qty: 8 }));
    // Given ahead of the channel, a precision checks the first snapshot.
    let mut a = Adapter::new(&[InstrumentSpec::new("BTC/USD", 10, 8, 10)]);
    assert!(a.set_precision("BTC/USD", Precision { price: 1, qty: 8 }));
    assert!(!a.set_precision("XBT/USD", Precision { price: 1, qty: 8 }));
    let (_, ev) = feed(&mut a, &book("snapshot", &BIDS, &ASKS, DOCUMENTED));
    assert!(matches!(
        ev.last().map(|e| e.kind),
        Some(Kind::BookValid { .. })
    ));
}

/// The worked example of XChange PR #4571, at depth 10: asks 1..10; 2.5 is
/// inserted and 10 falls out of the window (no delete is sent); then 2.5 is
/// deleted and 11 enters the window, sent before the delete (levels in an
/// update are not ordered). The book is 1..9 and 11.
#[test]
fn a_window_kept_complete_is_truncated_and_refilled() {
    let mut a = Adapter::new(&[InstrumentSpec::new("BTC/USD", 10, 8, 10)]);
    a.set_precision("BTC/USD", Precision { price: 1, qty: 8 });
    let q = "1.00000000";
    let asks = |prices: &[&'static str]| -> Vec<(&'static str, &'static str)> {
        prices.iter().map(|p| (*p, q)).collect()
    };
    let bids = [("0.5", q)];
    let with_bids = |asks: &[(&'static str, &'static str)]| -> u32 {
        let all: Vec<(&str, &str)> = asks.iter().chain(&bids).copied().collect();
        crc(&all)
    };
    let start = asks(&[
        "1.0", "2.0", "3.0", "4.0", "5.0", "6.0", "7.0", "8.0", "9.0", "10.0",
    ]);
    let (_, ev) = feed(&mut a, &book("snapshot", &bids, &start, with_bids(&start)));
    assert!(matches!(
        ev.last().map(|e| e.kind),
        Some(Kind::BookValid { .. })
    ));
    let after = asks(&[
        "1.0", "2.0", "2.5", "3.0", "4.0", "5.0", "6.0", "7.0", "8.0", "9.0",
    ]);
    let (_, ev) = feed(
        &mut a,
        &book("update", &[], &[("2.5", q)], with_bids(&after)),
    );
    assert!(
        !ev.iter().any(|e| matches!(e.kind, Kind::Gap { .. })),
        "{ev:?}"
    );
    let end = asks(&[
        "1.0", "2.0", "3.0", "4.0", "5.0", "6.0", "7.0", "8.0", "9.0", "11.0",
    ]);
    let (_, ev) = feed(
        &mut a,
        &book(
            "update",
            &[],
            &[("11.0", q), ("2.5", "0.00000000")],
            with_bids(&end),
        ),
    );
    assert!(
        !ev.iter().any(|e| matches!(e.kind, Kind::Gap { .. })),
        "{ev:?}"
    );
    let b = a.book(InstrumentId(0)).expect("valid");
    let prices: Vec<i64> = b
        .levels(Side::Ask)
        .iter()
        .map(|l| l.price / 10i64.pow(9))
        .collect();
    assert_eq!(prices, [10, 20, 30, 40, 50, 60, 70, 80, 90, 110]);
    assert_eq!(a.checksums_verified, 3);
}

#[test]
fn the_adapter_emits_trades_quotes_and_a_checked_book() {
    let mut a = Adapter::new(&[InstrumentSpec::new("BTC/USD", 1, 8, 10)]);
    assert_eq!(
        feed(&mut a, &instrument_snapshot(&[("BTC/USD", 1, 8)])).0,
        Ok(Outcome::Control)
    );
    let trades = r#"{"channel":"trade","type":"update","data":[{"symbol":"BTC/USD","side":"buy","price":105944.2,"qty":0.00027625,"ord_type":"limit","trade_id":10218208,"timestamp":"2023-10-06T17:35:55.440295Z"},{"symbol":"BTC/USD","side":"sell","price":105910.5,"qty":0.00012460,"ord_type":"market","trade_id":10218209,"timestamp":"2023-10-06T17:35:56.123456Z"}]}"#;
    let (r, ev) = feed(&mut a, trades);
    assert_eq!(r, Ok(Outcome::Data));
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].exchange_ns, 1_696_613_755_440_295_000);
    assert_eq!(
        ev[1].kind,
        Kind::Trade {
            price: 1_059_105,
            size: 12_460,
            aggressor: Aggressor::Sell,
            trade_id: 10218209
        }
    );
    // The snapshot of recent trades is history: not emitted.
    let (r, ev) = feed(
        &mut a,
        &trades.replace(r#""type":"update""#, r#""type":"snapshot""#),
    );
    assert_eq!((r, ev.len()), (Ok(Outcome::Ignored), 0));
    let (_, ev) = feed(
        &mut a,
        r#"{"channel":"ticker","type":"update","data":[{"symbol":"BTC/USD","bid":83744.2,"bid_qty":0.56251979,"ask":83744.3,"ask_qty":0.00044780,"last":83744.3,"volume":3156.84782110,"vwap":84174.6,"low":83163.6,"high":85247.4,"change":-429.3,"change_pct":-0.51,"trades":135262,"timestamp":"2026-09-25T17:48:26.844359Z"}]}"#,
    );
    assert_eq!(
        ev[0].kind,
        Kind::Quote {
            bid_price: 837_442,
            bid_size: 56_251_979,
            ask_price: 837_443,
            ask_size: 44_780,
            update_id: 0
        }
    );
    let want = crc(&[("45285.2", "0.00100000"), ("45283.5", "0.10000000")]);
    let (_, ev) = feed(
        &mut a,
        &book(
            "snapshot",
            &[("45283.5", "0.1")],
            &[("45285.2", "0.001")],
            want,
        ),
    );
    assert_eq!(ev.len(), 4, "{ev:?}");
    assert_eq!(a.checksums_verified, 1);
    // A wrong checksum: no deltas, a gap and a resync.
    let (_, ev) = feed(&mut a, &book("update", &[("45283.4", "1")], &[], 1));
    assert!(
        matches!(kinds(&ev)[..], [Kind::Gap { .. }, Kind::Resync]),
        "{ev:?}"
    );
    let (r, _) = feed(&mut a, r#"{"channel":"heartbeat"}"#);
    assert_eq!(r, Ok(Outcome::Control));
    let mut bad = b"{\"channel\":\"\xff\"}".to_vec();
    let len = bad.len();
    assert_eq!(
        a.on_message(&mut bad, len, 0, &mut |_| ()),
        Err(DecodeError::Utf8)
    );
}
