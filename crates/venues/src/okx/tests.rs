use super::*;
use crate::crc_text::tests::{book_as_sent, sent_side};
use crate::event::Kind;
use crate::sync::{Chain, Resync, SyncConfig};

fn parse(text: &str, f: impl FnOnce(Message<'_, '_>)) {
    crate::json::with_doc(text, |doc| f(decode(doc).unwrap()));
}

// Fixtures written from the OKX v5 documentation ("Order book channel",
// "Trades channel", "Checksum"): shapes as documented, values ours.

/// `scan_fixed` reads a book message exactly as `decode` does, or
/// declines it.
fn fixed_or_none(text: &str) -> Option<String> {
    let fast = scan_fixed(text).map(|m| format!("{m:?}"));
    if let Some(fast) = &fast {
        let slow = crate::json::with_doc(text, |doc| format!("{:?}", decode(doc).unwrap()));
        assert_eq!(fast, &slow, "{text}");
    }
    fast
}

#[test]
fn the_fixed_layout_reads_documented_books_and_declines_the_rest() {
    let docs = r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"snapshot","data":[{"asks":[["8476.98","415","0","13"],["8477","7","0","2"]],"bids":[["8476.97","256","0","12"]],"ts":"1597026383085","checksum":-855196043,"prevSeqId":-1,"seqId":123456}]}"#;
    let read = fixed_or_none(docs).expect("the documented layout");
    assert!(read.contains("prev_seq_id: Some(-1)"), "{read}");
    assert!(read.contains("checksum: Some(-855196043)"), "{read}");
    // The tail fields in another order; bbo-tbt without an action and
    // without a checksum; books5 with the instrument repeated.
    for text in [
        r#"{"arg":{"channel":"books-l2-tbt","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[["1","2","0","1"]],"seqId":7,"ts":"1","prevSeqId":6,"checksum":0}]}"#,
        r#"{"arg":{"channel":"bbo-tbt","instId":"BTC-USDT"},"data":[{"asks":[["8476.98","415","0","13"]],"bids":[["8476.97","256","0","12"]],"ts":"1597026383085","seqId":123480}]}"#,
        r#"{"arg":{"channel":"books5","instId":"BTC-USDT"},"data":[{"asks":[],"bids":[],"instId":"BTC-USDT","ts":"1597026383085"}]}"#,
    ] {
        assert!(fixed_or_none(text).is_some(), "{text}");
    }
    // Valid, but not the exact layout: simd-json reads these.
    for text in [
        // whitespace
        r#"{"arg": {"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"ts":"1"}]}"#,
        // a field OKX might add
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"ts":"1","x":1}]}"#,
        // a repeated field
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"ts":"1","ts":"2"}]}"#,
        // an escape in a price
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[["\u0031","2","0","1"]],"bids":[],"ts":"1"}]}"#,
        // a level of three strings
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[["1","2","0"]],"bids":[],"ts":"1"}]}"#,
        // trades, events
        r#"{"arg":{"channel":"trades","instId":"BTC-USDT"},"data":[{"instId":"BTC-USDT","tradeId":"1","px":"1","sz":"1","side":"buy","ts":"1"}]}"#,
        r#"{"event":"subscribe","arg":{"channel":"books","instId":"BTC-USDT"}}"#,
        // an unknown action, a missing ts, bytes after the end
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"partial","data":[{"asks":[],"bids":[],"ts":"1"}]}"#,
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"seqId":1}]}"#,
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"ts":"1"}]} "#,
    ] {
        assert_eq!(scan_fixed(text).map(|m| format!("{m:?}")), None, "{text}");
    }
}

#[test]
fn book_snapshot_update_and_sequence() {
    let mut sync = BookSync::new(Chain::OkxSeq, SyncConfig::default());
    let mut events = Vec::new();
    let snapshot = r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"snapshot","data":[{"asks":[["8476.98","415","0","13"],["8477","7","0","2"]],"bids":[["8476.97","256","0","12"],["8475.55","101","0","1"]],"ts":"1597026383085","checksum":0,"prevSeqId":-1,"seqId":123456}]}"#;
    parse(snapshot, |m| {
        let Message::Book(b) = m else { panic!("{m:?}") };
        assert_eq!(
            (b.inst_id, b.action, b.seq_id, b.prev_seq_id),
            ("BTC-USDT", Action::Snapshot, Some(123456), Some(-1))
        );
        feed_book(&mut sync, &b, 2, 0, &mut |e| events.push(e)).unwrap();
    });
    assert_eq!(events, [SyncEvent::Valid { update_id: 123456 }]);
    let update = r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[["8477","0","0","0"]],"bids":[["8476.97","3","0","1"]],"ts":"1597026383086","checksum":0,"prevSeqId":123456,"seqId":123470}]}"#;
    parse(update, |m| {
        let Message::Book(b) = m else { panic!() };
        feed_book(&mut sync, &b, 2, 0, &mut |e| events.push(e)).unwrap();
    });
    assert_eq!(events[1], SyncEvent::Updated { update_id: 123470 });
    let top = sync.book().unwrap().top().unwrap();
    assert_eq!((top.0.price, top.0.size, top.1.price), (847697, 3, 847698));
    assert!(
        sync.book()
            .unwrap()
            .levels(Side::Ask)
            .iter()
            .all(|l| l.price != 847700)
    );
    // A missed update: prevSeqId does not match.
    let gap = r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"ts":"1","checksum":0,"prevSeqId":123480,"seqId":123490}]}"#;
    parse(gap, |m| {
        let Message::Book(b) = m else { panic!() };
        feed_book(&mut sync, &b, 2, 0, &mut |e| events.push(e)).unwrap();
    });
    assert_eq!(
        events[2],
        SyncEvent::Gap(Resync::Sequence {
            expected: 123470,
            got: 123480
        })
    );
}

#[test]
fn checksum_follows_the_documented_string() {
    // The documented construction, by hand: bid1, ask1, bid2, then the
    // asks that remain.
    let mut book = Book::new(25);
    for (side, p, s) in [
        (Side::Bid, "3366.1", "7"),
        (Side::Bid, "3366", "6"),
        (Side::Ask, "3366.8", "9"),
        (Side::Ask, "3368", "8"),
        (Side::Ask, "3372", "8"),
    ] {
        book.set_level(side, crate::decimal::level(p, s, 1, 0).unwrap());
    }
    let want = crc32fast::hash(b"3366.1:7:3366.8:9:3366:6:3368:8:3372:8") as i32;
    assert_eq!(checksum(&book, 1, 0), i64::from(want));
    // A wrong size changes it; feed_book would then report a gap.
    book.set(Side::Ask, 33680, 9);
    assert_ne!(checksum(&book, 1, 0), i64::from(want));
}

#[test]
fn trades_and_events() {
    parse(
        r#"{"arg":{"channel":"trades","instId":"BTC-USDT"},"data":[{"instId":"BTC-USDT","tradeId":"130639474","px":"42219.9","sz":"0.12060306","side":"buy","ts":"1630048897897","count":"3"}]}"#,
        |m| {
            let Message::Trades(t) = m else {
                panic!("{m:?}")
            };
            let all: Vec<_> = t.iter().map(Result::unwrap).collect();
            assert_eq!(all[0].trade_id, "130639474");
            assert_eq!(
                (all[0].px, all[0].sz, all[0].side, all[0].ts_ms),
                ("42219.9", "0.12060306", "buy", 1630048897897)
            );
        },
    );
    parse(
        r#"{"event":"subscribe","arg":{"channel":"books","instId":"BTC-USDT"},"connId":"a4d3ae55"}"#,
        |m| {
            assert!(matches!(m, Message::Event("subscribe")));
        },
    );
    parse(
        r#"{"arg":{"channel":"tickers","instId":"BTC-USDT"},"data":[{}]}"#,
        |m| {
            assert!(matches!(m, Message::Other("tickers")));
        },
    );
}

/// `bbo-tbt` (the documented shape: one level a side, no action) is a
/// quote, its update id the `seqId`, an empty side 0; a price finer
/// than the instrument's scale is an error naming the instrument.
#[test]
fn bbo_is_a_quote_and_a_bad_price_names_its_instrument() {
    let mut a = Adapter::new(&[
        InstrumentSpec::new("BTC-USDT", 2, 0, 0),
        InstrumentSpec::new("ETH-USDT", 2, 0, 0),
    ]);
    let mut feed = |text: &str| crate::adapter::testutil::feed(&mut a, text, 5);
    let (r, ev) = feed(
        r#"{"arg":{"channel":"bbo-tbt","instId":"ETH-USDT"},"data":[{"asks":[["8476.98","415","0","13"]],"bids":[],"ts":"1597026383085","seqId":123480}]}"#,
    );
    assert_eq!(r, Ok(Outcome::Data));
    assert_eq!(
        ev,
        [Event {
            instrument: crate::InstrumentId(1),
            exchange_ns: 1_597_026_383_085_000_000,
            recv_tsc: 5,
            kind: Kind::Quote {
                bid_price: 0,
                bid_size: 0,
                ask_price: 847_698,
                ask_size: 415,
                update_id: 123480,
            },
        }]
    );
    let (r, ev) = feed(
        r#"{"arg":{"channel":"bbo-tbt","instId":"ETH-USDT"},"data":[{"asks":[["8476.981","415","0","13"]],"bids":[["8476.97","256","0","12"]],"ts":"1597026383085","seqId":123481}]}"#,
    );
    let Err(DecodeError::Decimal(bad)) = r else {
        panic!("{r:?}")
    };
    assert_eq!(
        (bad.field, bad.instrument),
        ("price", Some(crate::InstrumentId(1)))
    );
    assert!(ev.is_empty());
    let (r, ev) = feed(
        r#"{"arg":{"channel":"bbo-tbt","instId":"SOL-USDT"},"data":[{"asks":[],"bids":[],"ts":"1","seqId":1}]}"#,
    );
    assert_eq!((r, ev.len()), (Ok(Outcome::Ignored), 0));
}

/// The service-upgrade notice (`64008`) asks for the connection to be
/// replaced; another notice is only control.
#[test]
fn a_service_upgrade_notice_asks_for_a_new_connection() {
    let mut a = Adapter::new(&[InstrumentSpec::new("BTC-USDT", 2, 0, 5)]);
    let mut feed = |text: &str| crate::adapter::testutil::feed(&mut a, text, 5);
    let (r, ev) = feed(
        r#"{"event":"notice","code":"64008","msg":"The connection will soon be closed for a service upgrade. Please reconnect.","connId":"a4d3ae55"}"#,
    );
    assert_eq!((r, ev.len()), (Ok(Outcome::Closing), 0));
    let (r, ev) = feed(r#"{"event":"notice","code":"1","msg":"?","connId":"a4d3ae55"}"#);
    assert_eq!((r, ev.len()), (Ok(Outcome::Control), 0));
}

/// Error events as documented (D-WS "Subscribe": the 60012 example
/// with its escaped request) and as OKX sends them live (60018, `msg`
/// first, no `arg`); a notice carries its code.
#[test]
fn errors_carry_their_code_and_words() {
    parse(
        r#"{"id":"1512","event":"error","code":"60012","msg":"Invalid request: {\"op\": \"subscribe\", \"argss\":[{ \"channel\" : \"books\", \"instId\" : \"BTC-USD-191227\"}]}","connId":"a4d3ae55"}"#,
        |m| {
            let Message::Error { code, msg } = m else {
                panic!("{m:?}")
            };
            assert_eq!(code, 60012);
            assert_eq!(
                msg,
                r#"Invalid request: {"op": "subscribe", "argss":[{ "channel" : "books", "instId" : "BTC-USD-191227"}]}"#
            );
        },
    );
    parse(
        r#"{"event":"error","msg":"Wrong URL or channel:tickers,instId:NMR-USDT doesn't exist. Please use the correct URL, channel and parameters referring to API document.","code":"60018","connId":"e1f69f02"}"#,
        |m| {
            assert!(
                matches!(m, Message::Error { code: 60018, msg } if msg.contains("instId:NMR-USDT ")),
                "{m:?}"
            );
        },
    );
    // A code as a number, or none: still an error.
    parse(
        r#"{"event":"error","code":60013,"msg":"Invalid args"}"#,
        |m| {
            assert!(matches!(m, Message::Error { code: 60013, .. }), "{m:?}");
        },
    );
    parse(r#"{"event":"error"}"#, |m| {
        assert!(matches!(m, Message::Error { code: 0, msg: "" }), "{m:?}");
    });
    parse(
        r#"{"event":"notice","code":"64008","msg":"The connection will soon be closed for a service upgrade. Please reconnect.","connId":"a4d3ae55"}"#,
        |m| assert!(matches!(m, Message::Notice { code: 64008 }), "{m:?}"),
    );
    crate::json::with_doc(r#"{"event":"error","msg":7}"#, |doc| {
        assert_eq!(decode(doc).unwrap_err(), DecodeError::Type("msg"));
    });
}

proptest::proptest! {
    /// The checksum is the CRC32 of the documented string built from the
    /// strings as sent (trailing zeros included), `format!`-joined, for
    /// books of any shape: sides shorter and longer than 25, empty ones,
    /// values of any length at scales 0 to 9.
    #[test]
    fn checksum_is_the_crc_of_the_strings_as_sent(
        bids in sent_side(40),
        asks in sent_side(40),
        price_scale in 0u8..=9,
        size_scale in 0u8..=9,
    ) {
        let (book, bids, asks) = book_as_sent(&bids, &asks, price_scale, size_scale);
        let mut parts = Vec::new();
        for i in 0..25 {
            for side in [&bids, &asks] {
                if let Some((p, s)) = side.get(i) {
                    parts.push(format!("{p}:{s}"));
                }
            }
        }
        let want = crc32fast::hash(parts.join(":").as_bytes()) as i32;
        proptest::prop_assert_eq!(checksum(&book, price_scale, size_scale), i64::from(want));
    }
}
