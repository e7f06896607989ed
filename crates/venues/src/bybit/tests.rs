use super::*;
use crate::VenueAdapter;
use crate::book::Side;
use crate::event::{Aggressor, InstrumentId, Kind};
use crate::sync::{Chain, Resync, SyncConfig};

fn feed_sync(sync: &mut BookSync, text: &str, events: &mut Vec<SyncEvent>) {
    crate::json::with_doc(text, |doc| {
        let Message::Book(b) = decode(doc).unwrap() else {
            panic!("not a book message")
        };
        feed_book(sync, &b, 2, 3, &mut |e| events.push(e)).unwrap();
    });
}

fn feed(a: &mut Adapter, text: &str) -> (Outcome, Vec<Event>) {
    let (outcome, events) = crate::adapter::testutil::feed(a, text, 5);
    (outcome.unwrap(), events)
}

fn kinds(a: &mut Adapter, text: &str) -> Vec<Kind> {
    feed(a, text).1.into_iter().map(|e| e.kind).collect()
}

// Shapes from Bybit's v5 documentation ("Orderbook", "Trade"); values ours.

#[test]
fn snapshot_deltas_gap_and_restart() {
    let mut sync = BookSync::new(Chain::Bybit, SyncConfig::default());
    let mut ev = Vec::new();
    feed_sync(
        &mut sync,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":1672304484978,"data":{"s":"BTCUSDT","b":[["16493.50","0.006"],["16493.00","0.100"]],"a":[["16611.00","0.029"]],"u":18521288,"seq":7961638724},"cts":1672304484976}"#,
        &mut ev,
    );
    feed_sync(
        &mut sync,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1672304484979,"data":{"s":"BTCUSDT","b":[["16493.50","0"]],"a":[],"u":18521289,"seq":7961638725},"cts":1672304484977}"#,
        &mut ev,
    );
    assert_eq!(
        ev,
        [
            SyncEvent::Valid {
                update_id: 18521288
            },
            SyncEvent::Updated {
                update_id: 18521289
            }
        ]
    );
    assert_eq!(sync.book().unwrap().top().unwrap().0.price, 1_649_300);
    feed_sync(
        &mut sync,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1,"data":{"s":"BTCUSDT","b":[],"a":[],"u":18521291,"seq":1},"cts":1}"#,
        &mut ev,
    );
    assert_eq!(
        ev[2],
        SyncEvent::Gap(Resync::Sequence {
            expected: 18521290,
            got: 18521291
        })
    );
    // After a service restart Bybit sends a new snapshot with u = 1.
    feed_sync(
        &mut sync,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":2,"data":{"s":"BTCUSDT","b":[["16000.00","1"]],"a":[["16001.00","1"]],"u":1,"seq":2},"cts":2}"#,
        &mut ev,
    );
    assert_eq!(ev.last(), Some(&SyncEvent::Valid { update_id: 1 }));
    assert_eq!(sync.book().unwrap().levels(Side::Bid).len(), 1);
}

#[test]
fn trades_and_replies_decode() {
    let trade = r#"{"topic":"publicTrade.BTCUSDT","type":"snapshot","ts":1672304486868,"data":[{"T":1672304486865,"s":"BTCUSDT","S":"Buy","v":"0.001","p":"16578.50","L":"PlusTick","i":"20f43950-d8dd-5b31-9112-a178eb6023af","BT":false}]}"#;
    crate::json::with_doc(trade, |doc| {
        let Message::Trades(t) = decode(doc).unwrap() else {
            panic!()
        };
        assert_eq!((t.symbol, t.len()), ("BTCUSDT", 1));
        let all: Vec<_> = t.iter().map(Result::unwrap).collect();
        assert_eq!(
            all,
            [Trade {
                symbol: "BTCUSDT",
                side: "Buy",
                price: "16578.50",
                size: "0.001",
                time_ms: 1672304486865,
                id: "20f43950-d8dd-5b31-9112-a178eb6023af",
            }]
        );
    });
    let reply = r#"{"success":true,"ret_msg":"subscribe","conn_id":"2324d924","op":"subscribe"}"#;
    crate::json::with_doc(reply, |doc| {
        assert!(matches!(
            decode(doc).unwrap(),
            Message::Reply {
                success: true,
                op: "subscribe",
                ret_msg: "subscribe",
                code: 0
            }
        ));
    });
    // Key order does not matter (spot puts `ts` before `type`).
    let spot = r#"{"topic":"orderbook.200.BTCUSDT","ts":1,"type":"delta","data":{"s":"BTCUSDT","b":[],"a":[["77606.8","0.5"]],"u":9,"seq":3},"cts":1}"#;
    crate::json::with_doc(spot, |doc| {
        let Message::Book(b) = decode(doc).unwrap() else {
            panic!()
        };
        assert_eq!((b.depth, b.snapshot, b.update_id), (200, false, 9));
    });
}

#[test]
fn refusals_name_their_topics() {
    fn names(text: &str) -> Vec<&str> {
        refused_topics(text).collect()
    }
    assert_eq!(
        names("error:handler not found,topic:orderbook.500.BTCUSDT"),
        ["orderbook.500.BTCUSDT"]
    );
    assert_eq!(
        names("Invalid symbol :[publicTrade.NOPEUSDT]"),
        ["publicTrade.NOPEUSDT"]
    );
    assert_eq!(
        names("Invalid symbol :[orderbook.1.A, publicTrade.B]"),
        ["orderbook.1.A", "publicTrade.B"]
    );
    assert!(names("args size >10").is_empty());
    assert!(names("error:invalid op").is_empty());
}

#[test]
fn snapshot_deltas_a_gap_and_a_new_snapshot() {
    let mut a = Adapter::new(&[InstrumentSpec::new("BTCUSDT", 2, 3, 50)]);
    let ev = kinds(
        &mut a,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":1672304484978,"data":{"s":"BTCUSDT","b":[["16493.50","0.006"]],"a":[["16611.00","0.029"]],"u":18521288,"seq":7961638724},"cts":1672304484976}"#,
    );
    assert_eq!(ev.len(), 4, "{ev:?}");
    let ev = kinds(
        &mut a,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1672304484979,"data":{"s":"BTCUSDT","b":[["16493.50","0"],["16493.00","1.5"]],"a":[],"u":18521289,"seq":7961638725},"cts":1672304484977}"#,
    );
    assert_eq!(
        ev,
        [
            Kind::BookDelta {
                side: Side::Bid,
                price: 1_649_350,
                size: 0,
                update_id: 18521289,
                last: false
            },
            Kind::BookDelta {
                side: Side::Bid,
                price: 1_649_300,
                size: 1_500,
                update_id: 18521289,
                last: true
            }
        ]
    );
    let ev = kinds(
        &mut a,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1672304484990,"data":{"s":"BTCUSDT","b":[],"a":[],"u":18521291,"seq":7961638730},"cts":1672304484988}"#,
    );
    assert_eq!(
        ev,
        [
            Kind::Gap {
                why: Resync::Sequence {
                    expected: 18521290,
                    got: 18521291
                }
            },
            Kind::Resync
        ]
    );
    // A service restart's snapshot (`u` back at 1) makes it valid again.
    let ev = kinds(
        &mut a,
        r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":1672304485000,"data":{"s":"BTCUSDT","b":[["16490.00","1"]],"a":[["16600.00","1"]],"u":1,"seq":7961638800},"cts":1672304484999}"#,
    );
    assert_eq!(ev.last(), Some(&Kind::BookValid { update_id: 1 }));
    let ev = kinds(
        &mut a,
        r#"{"topic":"publicTrade.BTCUSDT","type":"snapshot","ts":1672304486868,"data":[{"T":1672304486865,"s":"BTCUSDT","S":"Sell","v":"0.001","p":"16578.50","L":"PlusTick","i":"20f43950-d8dd-5b31-9112-a178eb6023af","BT":false}]}"#,
    );
    assert_eq!(
        ev,
        [Kind::Trade {
            price: 1_657_850,
            size: 1,
            aggressor: Aggressor::Sell,
            trade_id: 0
        }]
    );
    // Spot's trade ids are digits.
    let ev = kinds(
        &mut a,
        r#"{"topic":"publicTrade.BTCUSDT","ts":1672304486868,"type":"snapshot","data":[{"i":"2290000001202469355","T":1672304486865,"p":"16578.5","v":"0.001","S":"Buy","seq":1,"s":"BTCUSDT","BT":false,"RPI":false}]}"#,
    );
    assert_eq!(
        ev,
        [Kind::Trade {
            price: 1_657_850,
            size: 1,
            aggressor: Aggressor::Buy,
            trade_id: 2290000001202469355
        }]
    );
}

/// `orderbook.1` snapshots are quotes, and feed the book only of an
/// instrument shown 1 level deep: their `u` is not the level-50 one.
#[test]
fn level_one_is_a_quote_and_not_the_deeper_book() {
    let mut a = Adapter::new(&[
        InstrumentSpec::new("BTCUSDT", 2, 3, 20),
        InstrumentSpec::new("ETHUSDT", 2, 3, 1),
    ]);
    let (outcome, ev) = feed(
        &mut a,
        r#"{"topic":"orderbook.1.BTCUSDT","ts":1672304484978,"type":"snapshot","data":{"s":"BTCUSDT","b":[["16493.50","0.006"]],"a":[],"u":77,"seq":7961638724},"cts":1672304484976}"#,
    );
    assert_eq!(outcome, Outcome::Data);
    assert_eq!(
        ev.iter().map(|e| e.kind).collect::<Vec<_>>(),
        [Kind::Quote {
            bid_price: 1_649_350,
            bid_size: 6,
            ask_price: 0,
            ask_size: 0,
            update_id: 77
        }]
    );
    assert_eq!(ev[0].exchange_ns, 1_672_304_484_978_000_000);
    assert!(a.book(InstrumentId(0)).is_none());
    let ev = kinds(
        &mut a,
        r#"{"topic":"orderbook.1.ETHUSDT","ts":1,"type":"snapshot","data":{"s":"ETHUSDT","b":[["3000.00","1.000"]],"a":[["3000.50","2.000"]],"u":5,"seq":9},"cts":1}"#,
    );
    assert!(matches!(ev[0], Kind::Quote { update_id: 5, .. }), "{ev:?}");
    assert_eq!(ev.last(), Some(&Kind::BookValid { update_id: 5 }));
    // The same snapshot again after 3 s without a change: same `u`.
    let ev = kinds(
        &mut a,
        r#"{"topic":"orderbook.1.ETHUSDT","ts":3001,"type":"snapshot","data":{"s":"ETHUSDT","b":[["3000.00","1.000"]],"a":[["3000.50","2.000"]],"u":5,"seq":9},"cts":1}"#,
    );
    assert_eq!(ev.last(), Some(&Kind::BookValid { update_id: 5 }));
    // A deeper topic is not the 1-level book's.
    let (outcome, ev) = feed(
        &mut a,
        r#"{"topic":"orderbook.50.ETHUSDT","type":"snapshot","ts":1,"data":{"s":"ETHUSDT","b":[["2999.00","1.000"]],"a":[],"u":900,"seq":9},"cts":1}"#,
    );
    assert_eq!((outcome, ev.len()), (Outcome::Ignored, 0));
    assert_eq!(a.book(InstrumentId(1)).unwrap().levels(Side::Bid).len(), 1);
}

/// Refusals as Bybit words them (third-party live captures; the docs
/// document none).
#[test]
fn refusals_reject_the_instrument_they_name() {
    let mut a = Adapter::new(&[
        InstrumentSpec::new("BTCUSDT", 2, 3, 50),
        InstrumentSpec::new("ETHUSDT", 2, 3, 50),
    ]);
    let (outcome, ev) = feed(
        &mut a,
        r#"{"success":false,"ret_msg":"error:handler not found,topic:orderbook.50.ETHUSDT","conn_id":"d9avrj8i70nu0j2a80n0-9cfc4","req_id":"","op":"subscribe"}"#,
    );
    assert_eq!(outcome, Outcome::Rejected);
    assert_eq!(ev.len(), 1);
    assert_eq!(
        (ev[0].instrument, ev[0].kind),
        (InstrumentId(1), Kind::Rejected { code: 0 })
    );
    assert_eq!(
        a.rejection(),
        "error:handler not found,topic:orderbook.50.ETHUSDT"
    );
    // Spot.
    let (outcome, ev) = feed(
        &mut a,
        r#"{"success":false,"ret_msg":"Invalid symbol :[publicTrade.BTCUSDT]","conn_id":"d9avrj8i70nu0j2a80n0-9cfc4","op":"subscribe"}"#,
    );
    assert_eq!(outcome, Outcome::Rejected);
    assert_eq!(
        ev.iter().map(|e| e.instrument).collect::<Vec<_>>(),
        [InstrumentId(0)]
    );
    // No instrument named: the words are kept, no instrument rejected.
    let (outcome, ev) = feed(
        &mut a,
        r#"{"success":false,"ret_msg":"args size \u003e10","conn_id":"x","req_id":"7","op":"subscribe"}"#,
    );
    assert_eq!((outcome, ev.len()), (Outcome::Rejected, 0));
    assert_eq!(a.rejection(), "args size >10");
    // Already subscribed: the subscription stands.
    let (outcome, ev) = feed(
        &mut a,
        r#"{"success":false,"ret_msg":"error:already subscribed,topic:orderbook.50.BTCUSDT","conn_id":"x","req_id":"","op":"subscribe"}"#,
    );
    assert_eq!((outcome, ev.len()), (Outcome::Rejected, 0));
    // A symbol this adapter does not carry.
    let (outcome, ev) = feed(
        &mut a,
        r#"{"success":false,"ret_msg":"error:handler not found,topic:publicTrade.NOPEUSDT","conn_id":"x","req_id":"","op":"subscribe"}"#,
    );
    assert_eq!((outcome, ev.len()), (Outcome::Rejected, 0));
    assert!(a.rejection().contains("NOPEUSDT"));
    // A `ret_code`, where a reply carries one, is the rejection's code.
    let (outcome, ev) = feed(
        &mut a,
        r#"{"success":false,"ret_code":10001,"ret_msg":"error:handler not found,topic:orderbook.50.ETHUSDT","op":"subscribe"}"#,
    );
    assert_eq!(outcome, Outcome::Rejected);
    assert_eq!(
        ev.iter()
            .map(|e| (e.instrument, e.kind))
            .collect::<Vec<_>>(),
        [(InstrumentId(1), Kind::Rejected { code: 10001 })]
    );
}

/// Acknowledgements and pongs of every category ("Connect").
#[test]
fn acknowledgements_and_pongs_are_control() {
    let mut a = Adapter::new(&[InstrumentSpec::new("BTCUSDT", 2, 3, 50)]);
    for text in [
        r#"{"success":true,"ret_msg":"subscribe","conn_id":"2324d924-aa4d-45b0-a858-7b8be29ab52b","req_id":"10001","op":"subscribe"}"#,
        r#"{"success":true,"ret_msg":"","conn_id":"3cd84cb1-4d06-4a05-930a-2efe5fc70f0f","req_id":"","op":"subscribe"}"#,
        r#"{"success":true,"ret_msg":"unsubscribe","op":"unsubscribe"}"#,
        r#"{"success":true,"ret_msg":"pong","conn_id":"0970e817-426e-429a-a679-ff7f55e0b16a","op":"ping"}"#,
        r#"{"success":true,"ret_msg":"pong","conn_id":"465772b1-7630-4fdc-a492-e003e6f0f260","req_id":"","op":"ping"}"#,
        r#"{"args":["1672916271846"],"op":"pong"}"#,
    ] {
        assert_eq!(feed(&mut a, text), (Outcome::Control, Vec::new()), "{text}");
    }
    assert_eq!(a.rejection(), "");
}
