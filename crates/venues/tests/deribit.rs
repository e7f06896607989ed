//! Deribit: the recording in `../shared/samples` (skipped, with a line
//! saying so, when absent: every message decodes, and the `book.*.raw`
//! chains, 46 notifications over several instruments, stay valid with
//! `prev_change_id == previous change_id` and never cross), the venue's
//! reply and error shapes, and the adapter's events for them (a refused
//! book channel is an absence from a `public/subscribe` reply), with no
//! allocation per message once warm.

use crate::common;

use std::collections::BTreeMap;

use tickwire_venues::book::Side;
use tickwire_venues::deribit::{self, Adapter, Answer, Message, RequestId, TEST_ANSWER};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};
use tickwire_venues::{
    Aggressor, Event, InstrumentId, InstrumentSpec, Kind, Outcome, VenueAdapter,
};

#[test]
fn the_book_chains_stay_valid() {
    let Some(dir) = common::samples("deribit") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("cryptofeed_DERIBIT.ws.1.0.jsonl")).unwrap();
    let mut books: BTreeMap<String, BookSync> = BTreeMap::new();
    let (mut valid, mut updates, mut others) = (0, 0, 0);
    for (i, line) in text.lines().filter(|l| !l.is_empty()).enumerate() {
        match deribit::decode(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)) {
            Message::Book(b) => {
                let sync = books
                    .entry(b.instrument.to_owned())
                    .or_insert_with(|| BookSync::new(Chain::Deribit, SyncConfig::default()));
                deribit::feed_book(sync, &b, 8, 4, &mut |e| match e {
                    SyncEvent::Valid { .. } => valid += 1,
                    SyncEvent::Updated { .. } => updates += 1,
                    other => panic!("line {}: {other:?}", i + 1),
                })
                .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            }
            _ => others += 1,
        }
    }
    eprintln!(
        "{} books, {valid} snapshots, {updates} changes, {others} other messages",
        books.len()
    );
    assert_eq!(valid + updates, 46);
    assert!(updates > 0 && others > 0);
    assert!(
        books
            .values()
            .all(|s| s.book().is_some_and(|b| !b.is_crossed()))
    );
}

#[test]
fn replies_and_their_errors() {
    // Deribit's own shapes: a subscribe reply with the timing fields
    // (the 2021 capture), the 13778 refusal (live observations), an
    // invalid parameter with `data` (ccxt), and -32600, which has no id
    // (tmatic-trading/crypto-platform issue 402).
    let Message::Reply { id, answer } = deribit::decode(
        r#"{"jsonrpc":"2.0","id":102,"result":["trades.BTC-PERPETUAL.100ms","book.BTC-PERPETUAL.100ms"],"usIn":1626993723846980,"usOut":1626993723847561,"usDiff":581,"testnet":false}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(id, Some(RequestId::Number(102)));
    let Answer::Channels(list) = answer else {
        panic!("{answer:?}")
    };
    assert!(list.contains("book.BTC-PERPETUAL.100ms") && !list.contains("book.X.100ms"));
    assert_eq!(list.iter().count(), 2);
    let err = |text| match deribit::decode(text).unwrap() {
        Message::Reply {
            id,
            answer: Answer::Error(e),
        } => (id, e.code, e.message, e.text),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        err(
            r#"{"jsonrpc":"2.0","id":"book.ETH-PERPETUAL.100ms","error":{"code":13778,"message":"raw_subscriptions_not_available_for_unauthorized"},"usIn":1,"usOut":2,"usDiff":1,"testnet":false}"#
        ),
        (
            Some(RequestId::Text("book.ETH-PERPETUAL.100ms")),
            13778,
            "raw_subscriptions_not_available_for_unauthorized",
            r#"{"code":13778,"message":"raw_subscriptions_not_available_for_unauthorized"}"#
        )
    );
    let (_, code, message, _) = err(
        r#"{"jsonrpc":"2.0","id":1,"error":{"message":"Invalid params","data":{"reason":"value must be a list","param":"channels"},"code":-32602},"testnet":false}"#,
    );
    assert_eq!((code, message), (-32602, "Invalid params"));
    let (id, code, ..) = err(
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"request entity too large"},"testnet":false}"#,
    );
    assert_eq!((id, code), (None, -32600));
    assert!(matches!(
        deribit::decode(r#"{"jsonrpc":"2.0","id":1,"result":"ok"}"#).unwrap(),
        Message::Reply {
            answer: Answer::Done,
            ..
        }
    ));
}

#[test]
fn grouped_books_quotes_null_prev_ids_and_trade_ids() {
    // The grouped channel sends whole top-N books with no `type`
    // (docs: "book.{instrument_name}.{group}.{depth}.{interval}").
    let grouped = r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.ETH-PERPETUAL.none.10.100ms","data":{"timestamp":1554375447971,"instrument_name":"ETH-PERPETUAL","change_id":109615,"bids":[[160,40]],"asks":[[161,20]]}}}"#;
    assert!(matches!(
        deribit::decode(grouped).unwrap(),
        Message::Other("book.ETH-PERPETUAL.none.10.100ms")
    ));
    let quote = r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"quote.BTC-PERPETUAL","data":{"timestamp":1550658624149,"instrument_name":"BTC-PERPETUAL","best_bid_price":3914.97,"best_bid_amount":40,"best_ask_price":null,"best_ask_amount":0.0}}}"#;
    let Message::Quote(q) = deribit::decode(quote).unwrap() else {
        panic!()
    };
    assert_eq!(
        (q.instrument, q.timestamp_ms, q.bid, q.ask),
        (
            "BTC-PERPETUAL",
            1550658624149,
            ("3914.97", "40"),
            ("0", "0.0")
        )
    );
    let snapshot = r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"snapshot","instrument_name":"BTC-PERPETUAL","timestamp":1,"change_id":5,"prev_change_id":null,"bids":[],"asks":[]}}}"#;
    let Message::Book(b) = deribit::decode(snapshot).unwrap() else {
        panic!()
    };
    assert_eq!((b.snapshot, b.prev_change_id), (true, None));
    assert_eq!(deribit::trade_number("48079254"), 48079254);
    assert_eq!(deribit::trade_number("ETH-311974188"), 311974188);
    assert_eq!(deribit::trade_number("USDC-2436803"), 2436803);
    assert_eq!(deribit::trade_number("BLOCK"), 0);
    assert_eq!(deribit::trade_number("99999999999999999999999"), 0);
}

/// Runs `text` through `adapter`: the outcome and the events.
fn feed(adapter: &mut Adapter, text: &str) -> (Outcome, Vec<Kind>, Vec<u32>) {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, 0);
    let mut ev: Vec<Event> = Vec::new();
    let outcome = adapter
        .on_message(&mut buf, text.len(), 3, &mut |e| ev.push(e))
        .unwrap();
    let who = ev.iter().map(|e| e.instrument.0).collect();
    (outcome, ev.into_iter().map(|e| e.kind).collect(), who)
}

fn adapter() -> Adapter {
    Adapter::new(&[
        InstrumentSpec::new("BTC-PERPETUAL", 2, 1, 10),
        InstrumentSpec::new("ETH-PERPETUAL", 2, 1, 10),
        InstrumentSpec::new("BTC-27DEC30", 1, 0, 0),
    ])
}

#[test]
fn trades_quotes_books_and_the_heartbeat_answer() {
    let mut a = adapter();
    // Shapes from Deribit's documentation ("trades.{instrument_name}.
    // {interval}", "quote.{instrument_name}", "heartbeat"); values ours.
    let (r, ev, _) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.100ms","data":[{"trade_seq":30289432,"trade_id":"48079254","timestamp":1590484156350,"tick_direction":0,"price":8950.5,"mark_price":8948.9,"instrument_name":"BTC-PERPETUAL","index_price":8955.88,"direction":"sell","amount":10.0},{"trade_seq":3,"trade_id":"ETH-311974188","timestamp":1590484156350,"tick_direction":1,"price":8950.5,"mark_price":8948.9,"instrument_name":"BTC-PERPETUAL","index_price":8955.88,"direction":"buy","amount":20}]}}"#,
    );
    assert_eq!(r, Outcome::Data);
    assert_eq!(
        ev,
        [
            Kind::Trade {
                price: 895_050,
                size: 100,
                aggressor: Aggressor::Sell,
                trade_id: 48079254
            },
            Kind::Trade {
                price: 895_050,
                size: 200,
                aggressor: Aggressor::Buy,
                trade_id: 311974188
            }
        ]
    );
    let (r, ev, who) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"quote.ETH-PERPETUAL","data":{"timestamp":1550658624149,"instrument_name":"ETH-PERPETUAL","best_bid_price":3914.97,"best_bid_amount":40.0,"best_ask_price":3996.61,"best_ask_amount":50.5}}}"#,
    );
    assert_eq!(r, Outcome::Data);
    assert_eq!(who, [1]);
    assert_eq!(
        ev,
        [Kind::Quote {
            bid_price: 391_497,
            bid_size: 400,
            ask_price: 399_661,
            ask_size: 505,
            update_id: 0
        }]
    );
    let (r, ..) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#,
    );
    assert_eq!(r, Outcome::Answer(TEST_ANSWER));
    let (r, ..) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"heartbeat"}}"#,
    );
    assert_eq!(r, Outcome::Control);
    let (_, ev, _) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"snapshot","timestamp":1554373962454,"instrument_name":"BTC-PERPETUAL","change_id":297217,"bids":[["new",5042.34,30.0]],"asks":[["new",5042.64,40.0]]}}}"#,
    );
    assert_eq!(ev.last(), Some(&Kind::BookValid { update_id: 297217 }));
    // The next change id jumps: only `prev_change_id` chains.
    let (_, ev, _) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"change","timestamp":1554373911330,"prev_change_id":297217,"instrument_name":"BTC-PERPETUAL","change_id":297250,"bids":[["delete",5042.34,0.0]],"asks":[]}}}"#,
    );
    assert_eq!(
        ev,
        [Kind::BookDelta {
            side: Side::Bid,
            price: 504_234,
            size: 0,
            update_id: 297250,
            last: true
        }]
    );
    assert!(a.book(InstrumentId(0)).is_some());
}

/// Deribit leaves a channel it does not accept out of the reply's
/// `result`, with no error (go-deribit issue 16, gocryptotrader
/// `handleSubscription`); the request's id says what was asked.
#[test]
fn a_book_channel_left_out_of_a_subscribe_reply_is_a_rejection() {
    let mut a = adapter();
    // The plan's first request (id 100) named both books: ETH's is absent.
    let reply = r#"{"jsonrpc":"2.0","id":100,"result":["trades.BTC-PERPETUAL.100ms","trades.ETH-PERPETUAL.100ms","trades.BTC-27DEC30.100ms","book.BTC-PERPETUAL.100ms"],"usIn":1,"usOut":2,"usDiff":1,"testnet":false}"#;
    let (r, ev, who) = feed(&mut a, reply);
    assert_eq!(r, Outcome::Rejected);
    assert_eq!((ev, who), (vec![Kind::Rejected { code: 0 }], vec![1]));
    assert_eq!(a.rejection(), reply, "the venue's own words: its reply");
    // All there (the order is the venue's, not the request's).
    let (r, ev, _) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","id":100,"result":["book.ETH-PERPETUAL.100ms","trades.BTC-PERPETUAL.100ms","book.BTC-PERPETUAL.100ms"]}"#,
    );
    assert_eq!((r, ev.len()), (Outcome::Control, 0));
    // A resubscription names its channel as its id.
    let (r, ev, who) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","id":"book.ETH-PERPETUAL.100ms","result":[],"usIn":1,"usOut":2,"usDiff":1,"testnet":false}"#,
    );
    assert_eq!(
        (r, ev, who),
        (Outcome::Rejected, vec![Kind::Rejected { code: 0 }], vec![1])
    );
    let (r, ..) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","id":"book.ETH-PERPETUAL.100ms","result":["book.ETH-PERPETUAL.100ms"]}"#,
    );
    assert_eq!(r, Outcome::Control);
    // Replies that check nothing: books off (2), the unsubscribe (3), the
    // heartbeat (1), public/test (0), the plan's second request when
    // there is no second hundred of instruments.
    for reply in [
        r#"{"jsonrpc":"2.0","id":2,"result":["trades.BTC-PERPETUAL.100ms"]}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":[]}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":"ok"}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":{"version":"1.2.26"}}"#,
        r#"{"jsonrpc":"2.0","id":101,"result":[]}"#,
    ] {
        let (r, ev, _) = feed(&mut a, reply);
        assert_eq!((r, ev.len()), (Outcome::Control, 0), "{reply}");
    }
}

#[test]
fn an_error_reply_refuses_every_instrument_its_request_named() {
    let mut a = adapter();
    let (r, ev, who) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","id":100,"error":{"code":13778,"message":"raw_subscriptions_not_available_for_unauthorized"},"usIn":1770318012061386,"usOut":1770318012061400,"usDiff":14,"testnet":false}"#,
    );
    assert_eq!(r, Outcome::Rejected);
    assert_eq!(ev, [Kind::Rejected { code: 13778 }; 3]);
    assert_eq!(who, [0, 1, 2]);
    assert_eq!(
        a.rejection(),
        r#"{"code":13778,"message":"raw_subscriptions_not_available_for_unauthorized"}"#
    );
    let (r, ev, who) = feed(
        &mut a,
        r#"{"jsonrpc":"2.0","id":"book.BTC-PERPETUAL.100ms","error":{"code":10028,"message":"too_many_requests"}}"#,
    );
    assert_eq!(
        (r, ev, who),
        (
            Outcome::Rejected,
            vec![Kind::Rejected { code: 10028 }],
            vec![0]
        )
    );
    // A refused heartbeat and a frame too large name no instrument: the
    // words are kept, nobody is refused.
    for (reply, words) in [
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"message":"Invalid params","data":{"reason":"value required","param":"interval"},"code":-32602},"testnet":false}"#,
            "value required",
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"request entity too large"},"testnet":false}"#,
            "request entity too large",
        ),
    ] {
        let (r, ev, _) = feed(&mut a, reply);
        assert_eq!((r, ev.len()), (Outcome::Rejected, 0), "{reply}");
        assert!(a.rejection().contains(words), "{}", a.rejection());
    }
}

#[test]
fn replies_rejections_and_book_messages_allocate_nothing_once_warm() {
    let mut a = adapter();
    let mut msgs: Vec<String> = vec![
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"snapshot","timestamp":1,"instrument_name":"BTC-PERPETUAL","change_id":10,"bids":[["new",5042.5,30.0],["new",5042.0,20.0]],"asks":[["new",5043.0,40.0]]}}}"#.to_owned(),
    ];
    for i in 0..200u64 {
        let size = if i % 2 == 0 { "0.0" } else { "7.0" };
        let action = if i % 2 == 0 { "delete" } else { "new" };
        msgs.push(format!(
            r#"{{"jsonrpc":"2.0","method":"subscription","params":{{"channel":"book.BTC-PERPETUAL.100ms","data":{{"type":"change","timestamp":2,"prev_change_id":{},"instrument_name":"BTC-PERPETUAL","change_id":{},"bids":[["{action}",5041.5,{size}]],"asks":[]}}}}}}"#,
            10 + 3 * i,
            13 + 3 * i
        ));
        msgs.push(format!(
            r#"{{"jsonrpc":"2.0","method":"subscription","params":{{"channel":"trades.BTC-PERPETUAL.100ms","data":[{{"trade_seq":{i},"trade_id":"{i}","timestamp":1,"tick_direction":0,"price":5043.0,"mark_price":5042.71,"instrument_name":"BTC-PERPETUAL","index_price":5042.1,"direction":"buy","amount":10.0}}]}}}}"#
        ));
        msgs.push(r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"quote.BTC-PERPETUAL","data":{"timestamp":1,"instrument_name":"BTC-PERPETUAL","best_bid_price":5042.5,"best_bid_amount":30.0,"best_ask_price":5043.0,"best_ask_amount":40.0}}}"#.to_owned());
        msgs.push(r#"{"jsonrpc":"2.0","id":"book.ETH-PERPETUAL.100ms","result":[],"usIn":1,"usOut":2,"usDiff":1,"testnet":false}"#.to_owned());
        msgs.push(r#"{"jsonrpc":"2.0","id":100,"error":{"code":13778,"message":"raw_subscriptions_not_available_for_unauthorized"}}"#.to_owned());
        msgs.push(
            r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#.to_owned(),
        );
    }
    let mut bufs: Vec<(Vec<u8>, usize)> = msgs
        .iter()
        .map(|m| {
            let mut b = m.as_bytes().to_vec();
            b.resize(m.len() + INPUT_PADDING, 0);
            (b, m.len())
        })
        .collect();
    let mut events: Vec<Event> = Vec::with_capacity(bufs.len() * 8);
    let mut run = |a: &mut Adapter, events: &mut Vec<Event>| {
        for (buf, len) in bufs.iter_mut() {
            a.on_message(buf, *len, 0, &mut |e| events.push(e)).unwrap();
        }
    };
    run(&mut a, &mut events);
    events.clear();
    let ((), allocations) = tickwire_testkit::allocations(|| run(&mut a, &mut events));
    assert_eq!(allocations, 0);
    let count = |f: fn(&Kind) -> bool| events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(count(|k| matches!(k, Kind::Trade { .. })), 200);
    assert_eq!(count(|k| matches!(k, Kind::Quote { .. })), 200);
    assert_eq!(count(|k| matches!(k, Kind::Rejected { .. })), 200 * 4);
    assert_eq!(count(|k| matches!(k, Kind::Gap { .. })), 0);
    assert!(a.book(InstrumentId(0)).is_some());
}
