//! OKX's adapter on the messages OKX documents (books, quotes, trades,
//! acknowledgements, errors: shapes as documented, values ours), a
//! checksum of 0 or none never compared (OKX's since June 2026), refused
//! requests without an allocation once warm, and over the recordings in
//! `../shared/samples` (skipped, with a line saying so, when absent):
//! every message decodes, every book message (3 snapshots, 287 updates)
//! matches OKX's own CRC32 checksum, and the fixed-layout reader reads
//! every book message exactly as simd-json does.

use crate::common;

use std::collections::BTreeMap;

use tickwire_venues::book::Side;
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::okx::{self, Adapter, Message};
use tickwire_venues::sync::{BookSync, Chain, Resync, SyncConfig, SyncEvent};
use tickwire_venues::{
    Aggressor, DecodeError, Event, InstrumentId, InstrumentSpec, Kind, Outcome, VenueAdapter,
};

#[test]
fn every_book_message_matches_okx_checksum() {
    let Some(dir) = common::samples("okx") else {
        return;
    };
    let text = std::fs::read(dir.join("cryptofeed_OKX.ws.1.0.jsonl")).unwrap();
    let mut decoder = okx::Decoder::new();
    let mut books: BTreeMap<String, BookSync> = BTreeMap::new();
    let (mut checked, mut trades, mut events_seen) = (0, 0, 0);
    let mut gaps = Vec::new();
    for (line, mut buf, len) in common::padded_lines(&text) {
        decoder.decode(&mut buf, len, |m| {
            match m.unwrap_or_else(|e| panic!("line {line}: {e}")) {
                Message::Book(b) => {
                    let sync = books.entry(b.inst_id.to_owned()).or_insert_with(|| {
                        // As the plan keeps an OKX book: the channel's
                        // 400 levels, which OKX keeps complete.
                        let shape = tickwire_venues::plan::okx::book_shape(400);
                        BookSync::new(
                            Chain::OkxSeq,
                            SyncConfig::for_book(Chain::OkxSeq, 400, shape),
                        )
                    });
                    let mut emit = |e: SyncEvent| {
                        if let SyncEvent::Gap(why) = e {
                            gaps.push((line, why));
                        }
                    };
                    if okx::feed_book(sync, &b, 8, 8, &mut emit).unwrap() {
                        checked += 1;
                    }
                }
                Message::Trades(t) => {
                    trades += t.iter().map(Result::unwrap).count();
                }
                Message::Event(_) | Message::Error { .. } | Message::Notice { .. } => {
                    events_seen += 1
                }
                Message::Other(_) => {}
            }
        });
    }
    eprintln!(
        "{checked} checksums, {trades} trades, {events_seen} events, books {:?}",
        books.keys()
    );
    assert_eq!(gaps, [], "no gap, no checksum mismatch");
    assert_eq!(checked, 290);
    assert!(trades > 0 && events_seen > 0);
    assert!(books.values().all(BookSync::is_valid));
}

#[test]
fn the_fixed_layout_reads_every_book_message_as_simd_json_does() {
    let Some(dir) = common::samples("okx") else {
        return;
    };
    let mut parser = JsonParser::default();
    let (mut books, mut fixed) = (0, 0);
    for file in [
        "cryptofeed_OKX.ws.1.0.jsonl",
        "crypto-msg-parser_okx.jsonl",
        "schema_examples_nautilus_okx.jsonl",
    ] {
        let text = std::fs::read(dir.join(file)).unwrap();
        for (line, mut buf, len) in common::padded_lines(&text) {
            let original = std::str::from_utf8(&buf[..len]).unwrap().to_owned();
            let slow = parser
                .parse(&mut buf, len, |doc| match okx::decode(doc) {
                    Ok(m @ Message::Book(_)) => Some(format!("{m:?}")),
                    _ => None,
                })
                .ok()
                .flatten();
            let fast = okx::scan_fixed(&original).map(|m| format!("{m:?}"));
            if fast.is_some() {
                fixed += 1;
                assert_eq!(fast, slow, "{file}:{line}");
            }
            books += usize::from(slow.is_some());
        }
    }
    eprintln!("{fixed} of {books} book messages in the fixed layout");
    // Every recorded book message is in the layout OKX documents.
    assert!(books >= 290);
    assert_eq!(fixed, books);
}

fn feed(a: &mut Adapter, text: &str) -> (Result<Outcome, DecodeError>, Vec<Kind>) {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, b' ');
    let mut events = Vec::new();
    let r = a.on_message(&mut buf, text.len(), 5, &mut |e| events.push(e.kind));
    (r, events)
}

// Shapes as OKX documents them ("Order book channel", "Best bid/offer
// channel", "Trades channel"); values ours.
#[test]
fn trades_quotes_and_a_book_whose_checksum_breaks() {
    let mut a = Adapter::new(&[InstrumentSpec::new("BTC-USDT", 2, 8, 400)]);
    let (r, ev) = feed(
        &mut a,
        r#"{"arg":{"channel":"trades","instId":"BTC-USDT"},"data":[{"instId":"BTC-USDT","tradeId":"130639474","px":"42219.9","sz":"0.12060306","side":"buy","ts":"1630048897897","count":"3"},{"instId":"BTC-USDT","tradeId":"130639475","px":"42219.8","sz":"1","side":"sell","ts":"1630048897898","count":"1"}]}"#,
    );
    assert_eq!(r, Ok(Outcome::Data));
    assert_eq!(
        ev,
        [
            Kind::Trade {
                price: 4_221_990,
                size: 12_060_306,
                aggressor: Aggressor::Buy,
                trade_id: 130639474
            },
            Kind::Trade {
                price: 4_221_980,
                size: 100_000_000,
                aggressor: Aggressor::Sell,
                trade_id: 130639475
            }
        ]
    );
    let (_, ev) = feed(
        &mut a,
        r#"{"arg":{"channel":"bbo-tbt","instId":"BTC-USDT"},"data":[{"asks":[["8476.98","415","0","13"]],"bids":[["8476.97","256","0","12"]],"ts":"1597026383085","seqId":42}]}"#,
    );
    assert_eq!(
        ev,
        [Kind::Quote {
            bid_price: 847_697,
            bid_size: 25_600_000_000,
            ask_price: 847_698,
            ask_size: 41_500_000_000,
            update_id: 42
        }]
    );
    assert_eq!(feed(&mut a, "pong").0, Ok(Outcome::Control));
    assert_eq!(
        feed(
            &mut a,
            r#"{"event":"subscribe","arg":{"channel":"books","instId":"BTC-USDT"},"connId":"a4d3ae55"}"#
        )
        .0,
        Ok(Outcome::Control)
    );
    // A snapshot with a checksum of 0 (OKX stopped computing it): valid.
    let (_, ev) = feed(
        &mut a,
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"snapshot","data":[{"asks":[["8476.98","415","0","13"]],"bids":[["8476.97","256","0","12"]],"ts":"1597026383085","checksum":0,"prevSeqId":-1,"seqId":100}]}"#,
    );
    assert_eq!(ev.len(), 4, "{ev:?}");
    assert_eq!(ev[3], Kind::BookValid { update_id: 100 });
    // An update whose checksum is wrong: its levels are not emitted,
    // the book gaps and asks for a resubscription.
    let (r, ev) = feed(
        &mut a,
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[["8476.96","1","0","1"]],"ts":"1597026383086","checksum":12345,"prevSeqId":100,"seqId":101}]}"#,
    );
    assert_eq!(r, Ok(Outcome::Data));
    assert!(
        matches!(
            ev[..],
            [
                Kind::Gap {
                    why: Resync::Checksum {
                        expected: 12345,
                        ..
                    }
                },
                Kind::Resync
            ]
        ),
        "{ev:?}"
    );
    assert!(a.book(InstrumentId(0)).is_none());
    // Not JSON, or not OKX: a typed error, nothing emitted.
    let (r, ev) = feed(&mut a, r#"{"arg":{"channel":"books"}"#);
    assert!(r.is_err() && ev.is_empty());
}

/// OKX has sent `"checksum":0` on every book channel since June 2026
/// ("OKX Order Book Channels Checksum Field Deprecation", 21 May 2026):
/// a 0, or no checksum at all, is never compared with the book, even
/// where the book changed and its CRC32 is not 0; the `seqId` chain
/// still guards it (a lost update is a gap); and a checksum that is not
/// 0, as every book message of a recorded day before then carries, is
/// still verified.
#[test]
fn a_checksum_of_0_or_none_is_not_compared_and_the_seq_chain_still_guards_the_book() {
    let mut a = Adapter::new(&[InstrumentSpec::new("BTC-USDT", 2, 8, 400)]);
    let book = |a: &Adapter| {
        let b = a.book(InstrumentId(0)).expect("the book is valid");
        let side = |s| {
            b.levels(s)
                .iter()
                .map(|l| (l.price, l.size))
                .collect::<Vec<_>>()
        };
        (side(Side::Bid), side(Side::Ask))
    };
    let (_, ev) = feed(
        &mut a,
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"snapshot","data":[{"asks":[["8476.98","415","0","13"],["8477","7","0","2"]],"bids":[["8476.97","256","0","12"]],"ts":"1597026383085","checksum":0,"prevSeqId":-1,"seqId":100}]}"#,
    );
    assert_eq!(ev.last(), Some(&Kind::BookValid { update_id: 100 }));
    // Updates that change the book: with a checksum of 0 (the layout OKX
    // sends), without one (the fixed layout, and another that simd-json
    // reads), and the 60 s keep-alive (no level, seqId == prevSeqId).
    for (text, update_id) in [
        (
            r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[["8477","0","0","0"]],"bids":[["8476.96","1","0","1"]],"ts":"1597026383086","checksum":0,"prevSeqId":100,"seqId":103}]}"#,
            103,
        ),
        (
            r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[["8477.5","2","0","1"]],"bids":[],"ts":"1597026383087","prevSeqId":103,"seqId":104}]}"#,
            104,
        ),
        (
            r#"{"arg": {"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[["8476.97","300","0","12"]],"ts":"1597026383088","prevSeqId":104,"seqId":107}]}"#,
            107,
        ),
    ] {
        assert!(
            okx::scan_fixed(text).is_some() == (update_id != 107),
            "{text}"
        );
        let (r, ev) = feed(&mut a, text);
        assert_eq!(r, Ok(Outcome::Data), "{text}");
        assert!(
            ev.iter().all(|k| matches!(k, Kind::BookDelta { .. })) && !ev.is_empty(),
            "{text}: {ev:?}"
        );
    }
    let (r, ev) = feed(
        &mut a,
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"ts":"1597026443088","checksum":0,"prevSeqId":107,"seqId":107}]}"#,
    );
    assert_eq!((r, ev), (Ok(Outcome::Data), vec![]));
    assert_eq!(
        book(&a),
        (
            vec![(847_697, 30_000_000_000), (847_696, 100_000_000)],
            vec![(847_698, 41_500_000_000), (847_750, 200_000_000)]
        )
    );
    assert_eq!(a.checksums_verified, 0, "no checksum was compared");
    // The book's CRC32 is not 0: had a 0 been compared, it would have
    // been a mismatch.
    let crc = okx::checksum(a.book(InstrumentId(0)).unwrap(), 2, 8);
    assert_ne!(crc, 0);
    // A checksum that is not 0 is compared: the right one matches.
    let (_, ev) = feed(
        &mut a,
        &format!(
            r#"{{"arg":{{"channel":"books","instId":"BTC-USDT"}},"action":"update","data":[{{"asks":[],"bids":[],"ts":"1597026443089","checksum":{crc},"prevSeqId":107,"seqId":108}}]}}"#
        ),
    );
    assert_eq!((ev, a.checksums_verified), (vec![], 1));
    // A lost update (prevSeqId 109, not 108), checksum 0: a gap all the
    // same.
    let (r, ev) = feed(
        &mut a,
        r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[["8476.95","1","0","1"]],"ts":"1597026443090","checksum":0,"prevSeqId":109,"seqId":110}]}"#,
    );
    assert_eq!(r, Ok(Outcome::Data));
    assert_eq!(
        ev,
        [
            Kind::Gap {
                why: Resync::Sequence {
                    expected: 108,
                    got: 109
                }
            },
            Kind::Resync
        ]
    );
    assert!(a.book(InstrumentId(0)).is_none());
}

/// OKX's error replies as it sends them: `{"event":"error","msg":..,
/// "code":"60018","connId":..}` with no `arg` (live captures in peer
/// fixtures), and the documented 60012 example for a malformed request.
const REFUSED_ETH: &str = r#"{"event":"error","msg":"Wrong URL or channel:books,instId:ETH-USDT doesn't exist. Please use the correct URL, channel and parameters referring to API document.","code":"60018","connId":"e1f69f02"}"#;
const REFUSED_SWAP: &str = r#"{"id":"77","event":"error","msg":"Wrong URL or channel:trades,instId:BTC-USDT-SWAP doesn't exist. Please use the correct URL, channel and parameters referring to API document.","code":"60018","connId":"e1f69f02"}"#;
const MALFORMED: &str = r#"{"id":"1512","event":"error","code":"60012","msg":"Invalid request: {\"op\": \"subscribe\", \"argss\":[{ \"channel\" : \"books\", \"instId\" : \"BTC-USD-191227\"}]}","connId":"a4d3ae55"}"#;

fn feed_events(a: &mut Adapter, text: &str) -> (Outcome, Vec<Event>) {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, b' ');
    let mut events = Vec::new();
    let r = a.on_message(&mut buf, text.len(), 9, &mut |e| events.push(e));
    (r.unwrap_or_else(|e| panic!("{e}: {text}")), events)
}

#[test]
fn refusals_reach_the_instruments_they_name() {
    let specs = ["BTC-USDT", "ETH-USDT"].map(|s| InstrumentSpec::new(s, 2, 8, 400));
    let mut a = Adapter::new(&specs);
    assert_eq!(VenueAdapter::rejection(&a), "");
    let (outcome, events) = feed_events(&mut a, REFUSED_ETH);
    assert_eq!(outcome, Outcome::Rejected);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0].instrument, events[0].kind, events[0].recv_tsc),
        (InstrumentId(1), Kind::Rejected { code: 60018 }, 9)
    );
    assert!(
        VenueAdapter::rejection(&a)
            .starts_with("Wrong URL or channel:books,instId:ETH-USDT doesn't exist."),
        "{}",
        VenueAdapter::rejection(&a)
    );
    // BTC-USDT-SWAP is not BTC-USDT: refused, and no instrument of ours.
    let (outcome, events) = feed_events(&mut a, REFUSED_SWAP);
    assert_eq!((outcome, events.len()), (Outcome::Rejected, 0));
    // The documented malformed request: its words kept, unescaped.
    let (outcome, events) = feed_events(&mut a, MALFORMED);
    assert_eq!((outcome, events.len()), (Outcome::Rejected, 0));
    assert_eq!(
        VenueAdapter::rejection(&a),
        r#"Invalid request: {"op": "subscribe", "argss":[{ "channel" : "books", "instId" : "BTC-USD-191227"}]}"#
    );
    // Acknowledgements (with and without `id` and `connId`), a notice
    // other than the service upgrade's, a connection count: control
    // messages, nothing emitted.
    for text in [
        r#"{"id":"1512","event":"subscribe","arg":{"channel":"books","instId":"BTC-USDT"},"connId":"a4d3ae55"}"#,
        r#"{"event":"subscribe","arg":{"channel":"books","instId":"BTC-USDT"}}"#,
        r#"{"event":"unsubscribe","arg":{"channel":"books","instId":"ETH-USDT"},"connId":"d0b44253"}"#,
        r#"{"event":"notice","code":"1","msg":"?","connId":"a4d3ae55"}"#,
        r#"{"event":"channel-conn-count","channel":"orders","connCount":"2","connId":"abcd1234"}"#,
    ] {
        assert_eq!(
            feed_events(&mut a, text),
            (Outcome::Control, vec![]),
            "{text}"
        );
    }
    // The last refusal's words stay until the next one.
    assert!(VenueAdapter::rejection(&a).starts_with("Invalid request"));
}

#[test]
fn a_refusal_allocates_nothing_once_warm() {
    let specs = ["BTC-USDT", "ETH-USDT"].map(|s| InstrumentSpec::new(s, 2, 8, 400));
    let mut a = Adapter::new(&specs);
    let texts = [REFUSED_ETH, REFUSED_SWAP, MALFORMED, "pong"];
    // The rejection's words after each: the malformed request's unescaped
    // (which a buffer parsed before would no longer give), and kept
    // through the pong.
    const SAID: [&str; 4] = [
        "Wrong URL or channel:books,instId:ETH-USDT",
        "Wrong URL or channel:trades,instId:BTC-USDT-SWAP",
        r#"Invalid request: {"op": "subscribe", "argss""#,
        r#"Invalid request: {"op": "subscribe", "argss""#,
    ];
    // Each pass parses buffers of its own: the adapter parses in place
    // (unescaping the malformed request's words), so a buffer parsed once
    // is not the message any more.
    let fresh = || -> Vec<(Vec<u8>, usize)> {
        texts
            .iter()
            .map(|t| {
                let mut b = t.as_bytes().to_vec();
                b.resize(t.len() + INPUT_PADDING, 0);
                (b, t.len())
            })
            .collect()
    };
    let mut events = Vec::with_capacity(64);
    for pass in 0..2 {
        events.clear();
        let mut msgs = fresh();
        let mut outcomes = [Outcome::Data; 4];
        // Whether the adapter held the venue's words after each message.
        let mut words = [false; 4];
        let ((), allocations) = tickwire_testkit::allocations(|| {
            for (k, (buf, len)) in msgs.iter_mut().enumerate() {
                outcomes[k] = a
                    .on_message(buf, *len, 0, &mut |e| events.push(e.kind))
                    .unwrap();
                words[k] = VenueAdapter::rejection(&a).starts_with(SAID[k]);
            }
        });
        assert_eq!(
            outcomes,
            [
                Outcome::Rejected,
                Outcome::Rejected,
                Outcome::Rejected,
                Outcome::Control
            ],
            "pass {pass}"
        );
        assert_eq!(words, [true; 4], "pass {pass}");
        assert_eq!(events, [Kind::Rejected { code: 60018 }], "pass {pass}");
        if pass == 1 {
            assert_eq!(allocations, 0);
        }
    }
}
