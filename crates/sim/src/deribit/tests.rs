//! Deribit's replies and formats against the shapes its documentation and
//! the recorded frames show, its heartbeat and credit rules, and a round
//! trip through tickwire's Deribit adapter.

use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use tickwire_venues::book::Side;
use tickwire_venues::plan::Channels;
use tickwire_venues::sync::Resync;
use tickwire_venues::{
    Aggressor, Event, InstrumentId, InstrumentSpec, Kind as EventKind, Outcome, Venue,
    VenueAdapter, deribit,
};

use super::*;
use crate::VenueFault;
use crate::testutil::{self, Consumer};

fn market() -> Market {
    testutil::market(Venue::Deribit, 7)
}

fn client(d: &Deribit, m: &Market) -> Client {
    let Ok(c) = d.open("/ws/api/v2", m) else {
        panic!("/ws/api/v2 refused")
    };
    c
}

/// Sends `text`; what came back.
fn ask(d: &Deribit, c: &mut Client, m: &mut Market, text: &str) -> Vec<String> {
    let mut out = Out::default();
    d.on_text(c, text, m, &mut out);
    out.items.into_iter().map(|(t, _)| t.into_text()).collect()
}

/// A reply with its timing fields checked and taken off.
fn reply(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(text).unwrap();
    let o = v.as_object_mut().unwrap();
    let (us_in, us_out) = (o["usIn"].as_u64().unwrap(), o["usOut"].as_u64().unwrap());
    assert_eq!(o["usDiff"].as_u64(), Some(us_out - us_in), "{text}");
    assert_eq!(o["testnet"], json!(false));
    for k in ["usIn", "usOut", "usDiff", "testnet"] {
        o.remove(k);
    }
    v
}

#[test]
fn subscriptions_are_answered_like_deribit() {
    let d = Deribit::new();
    let mut m = market();
    assert_eq!(d.open("/ws/api/v1", &m).err().map(|r| r.status), Some(404));
    let mut c = client(&d, &m);
    let sub = |id: &str, channels: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"public/subscribe","params":{{"channels":{channels}}}}}"#
        )
    };
    // Unknown instruments and channels are left out; the rest come back in
    // the server's order; the book's snapshot follows the reply.
    let got = ask(
        &d,
        &mut c,
        &mut m,
        &sub(
            "7",
            r#"["book.BTC-PERPETUAL.100ms","trades.ETH-PERPETUAL.100ms","book.NOPE-PERPETUAL.100ms","ticker.BTC-PERPETUAL.100ms","book.BTC-PERPETUAL.none.10.100ms","quote.ETH-PERPETUAL","trades.BTC-PERPETUAL.agg2"]"#,
        ),
    );
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        reply(&got[0]),
        json!({"jsonrpc":"2.0","id":7,"result":["trades.BTC-PERPETUAL.agg2","trades.ETH-PERPETUAL.100ms","quote.ETH-PERPETUAL","book.BTC-PERPETUAL.100ms"]})
    );
    let snapshot = &got[1];
    assert!(
        snapshot.starts_with(r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"snapshot","timestamp":"#),
        "{snapshot}"
    );
    assert!(!snapshot.contains("prev_change_id"));
    let v: Value = serde_json::from_str(snapshot).unwrap();
    let data = &v["params"]["data"];
    let book = &m.books[0];
    assert_eq!(
        data["change_id"],
        json!(wire::change_id(book.update_id, 0, 2))
    );
    let bids = data["bids"].as_array().unwrap();
    assert_eq!(bids.len(), book.bids.len());
    // Bids best first, as JSON numbers with a decimal: `["new",59999.9,37.0]`.
    let (best, size) = book.bids.iter().next_back().unwrap();
    assert!(
        snapshot.contains(&format!(
            r#""bids":[["new",{}.{},{size}.0]"#,
            best / 10,
            best % 10
        )),
        "{snapshot}"
    );
    let asks: Vec<f64> = data["asks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l[1].as_f64().unwrap())
        .collect();
    assert!(asks.windows(2).all(|w| w[0] < w[1]), "asks ascending");

    // A `raw` interval refuses the whole request (13778), string id echoed.
    let got = ask(
        &d,
        &mut c,
        &mut m,
        &sub(
            r#""x-1""#,
            r#"["book.ETH-PERPETUAL.100ms","trades.ETH-PERPETUAL.raw"]"#,
        ),
    );
    assert!(
        got[0].starts_with(r#"{"jsonrpc":"2.0","id":"x-1","error":{"code":13778,"message":"raw_subscriptions_not_available_for_unauthorized"},"usIn":"#),
        "{}",
        got[0]
    );
    assert_eq!(got.len(), 1);
    let got = ask(
        &d,
        &mut c,
        &mut m,
        &sub("9", r#""book.ETH-PERPETUAL.100ms""#),
    );
    assert_eq!(
        reply(&got[0]),
        json!({"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"value must be a list","param":"channels"}}})
    );
    // Unsubscribe: only what was subscribed.
    let got = ask(
        &d,
        &mut c,
        &mut m,
        r#"{"jsonrpc":"2.0","id":8691,"method":"public/unsubscribe","params":{"channels":["book.BTC-PERPETUAL.100ms","book.ETH-PERPETUAL.100ms"]}}"#,
    );
    assert_eq!(
        reply(&got[0]),
        json!({"jsonrpc":"2.0","id":8691,"result":["book.BTC-PERPETUAL.100ms"]})
    );
    let got = ask(
        &d,
        &mut c,
        &mut m,
        r#"{"jsonrpc":"2.0","id":3,"method":"public/unsubscribe_all","params":{}}"#,
    );
    assert_eq!(
        reply(&got[0]),
        json!({"jsonrpc":"2.0","id":3,"result":"ok"})
    );
    assert!(c.subs.is_empty());

    // An armed refusal: the book is left out, as an unknown one is; the
    // next subscription is accepted, with its snapshot.
    m.arm(1, VenueFault::RejectSubscription);
    let got = ask(
        &d,
        &mut c,
        &mut m,
        &sub("4", r#"["book.ETH-PERPETUAL.100ms"]"#),
    );
    assert_eq!(
        (reply(&got[0]), got.len()),
        (json!({"jsonrpc":"2.0","id":4,"result":[]}), 1)
    );
    let got = ask(
        &d,
        &mut c,
        &mut m,
        &sub("5", r#"["book.ETH-PERPETUAL.100ms"]"#),
    );
    assert_eq!(got.len(), 2);
    assert!(got[1].contains(r#""type":"snapshot""#));
}

#[test]
fn steps_read_as_deribit_writes_them() {
    let d = Deribit::new();
    let mut m = market();
    let mut c = client(&d, &m);
    ask(
        &d,
        &mut c,
        &mut m,
        r#"{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms","trades.BTC-PERPETUAL.100ms","quote.BTC-PERPETUAL"]}}"#,
    );
    let mut last = wire::change_id(m.books[0].update_id, 0, 2);
    let mut rng = StdRng::seed_from_u64(3);
    let mut step = Step::default();
    let (mut jumps, mut news, mut changes, mut deletes, mut unordered, mut trades, mut quotes) =
        (0, 0, 0, 0, 0, 0, 0);
    for k in 0..300 {
        if k == 150 {
            m.arm(0, VenueFault::SequenceGap);
        }
        m.step(0, &mut rng, k % 2 == 0, &mut step);
        let mut out = Out::default();
        d.on_step(&mut c, &step, &m, &mut out);
        let mut book_messages = 0;
        for (frame, key) in &out.items {
            let text = frame.text();
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(v["method"], json!("subscription"));
            assert!(v.get("id").is_none());
            let data = &v["params"]["data"];
            match v["params"]["channel"].as_str().unwrap() {
                "book.BTC-PERPETUAL.100ms" => {
                    book_messages += 1;
                    assert_eq!(data["type"], json!("change"));
                    let (prev, id) = (
                        data["prev_change_id"].as_u64().unwrap(),
                        data["change_id"].as_u64().unwrap(),
                    );
                    assert_eq!(*key, Some((0, StreamKind::Depth, id)));
                    if k == 151 {
                        assert_ne!(prev, last, "the lost message's id is used up");
                    } else {
                        assert_eq!(prev, last, "step {k}");
                    }
                    jumps += usize::from(id - prev > 1);
                    last = id;
                    for side in ["bids", "asks"] {
                        let levels = data[side].as_array().unwrap();
                        let prices: Vec<f64> =
                            levels.iter().map(|l| l[1].as_f64().unwrap()).collect();
                        unordered +=
                            usize::from(side == "bids" && prices.windows(2).any(|w| w[0] < w[1]));
                        for l in levels {
                            match l[0].as_str().unwrap() {
                                "new" => news += 1,
                                "change" => changes += 1,
                                "delete" => {
                                    deletes += 1;
                                    assert_eq!(l[2].as_f64(), Some(0.0));
                                }
                                other => panic!("{other}"),
                            }
                        }
                    }
                    // JSON numbers with a decimal: `["delete",59990.0,0.0]`.
                    for level in text.split("[\"").skip(1) {
                        let (_, numbers) = level.split_once("\",").unwrap();
                        let numbers = numbers.split(']').next().unwrap();
                        let (price, amount) = numbers.split_once(',').unwrap();
                        assert!(price.contains('.') && amount.contains('.'), "{level}");
                    }
                }
                "trades.BTC-PERPETUAL.100ms" => {
                    trades += 1;
                    let t = step.trade.unwrap();
                    let trade = &data.as_array().unwrap()[0];
                    assert_eq!(trade["trade_id"], json!(t.id.to_string()));
                    assert_eq!(trade["trade_seq"], json!(t.id));
                    assert_eq!(
                        trade["direction"],
                        json!(if t.buyer_aggressor { "buy" } else { "sell" })
                    );
                    assert!((0..=3).contains(&trade["tick_direction"].as_u64().unwrap()));
                    assert_eq!(*key, Some((0, StreamKind::Trade, t.id)));
                    assert!(text.contains(r#","amount":"#) && text.ends_with(".0}]}}"));
                }
                "quote.BTC-PERPETUAL" => {
                    quotes += 1;
                    let ((bp, _), (ap, _)) = step.top.unwrap();
                    assert_eq!(data["best_bid_price"].as_f64(), Some(bp as f64 / 10.0));
                    assert_eq!(data["best_ask_price"].as_f64(), Some(ap as f64 / 10.0));
                    assert_eq!(*key, None);
                }
                other => panic!("{other}"),
            }
        }
        assert_eq!(book_messages, usize::from(k != 150), "step {k}");
    }
    assert!(jumps > 100, "change ids jump: {jumps}");
    assert!(news > 0 && changes > 0 && deletes > 0 && unordered > 0);
    assert!(trades == 150 && quotes > 10, "{trades} {quotes}");
}

#[test]
fn other_requests_and_their_errors() {
    let d = Deribit::new();
    let mut m = market();
    let mut c = client(&d, &m);
    let mut one = |text: &str| {
        let got = ask(&d, &mut c, &mut m, text);
        assert_eq!(got.len(), 1, "{got:?}");
        got.into_iter().next().unwrap()
    };
    let hb = |interval: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":9098,"method":"public/set_heartbeat","params":{{{interval}}}}}"#
        )
    };
    assert_eq!(
        reply(&one(&hb(r#""interval":30"#))),
        json!({"jsonrpc":"2.0","id":9098,"result":"ok"})
    );
    assert_eq!(
        reply(&one(&hb(r#""interval":5"#)))["error"]["code"],
        json!(-32602)
    );
    assert_eq!(
        reply(&one(&hb(""))),
        json!({"jsonrpc":"2.0","id":9098,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"value required","param":"interval"}}})
    );
    assert_eq!(
        reply(&one(
            r#"{"jsonrpc":"2.0","id":8212,"method":"public/test","params":{}}"#
        )),
        json!({"jsonrpc":"2.0","id":8212,"result":{"version":"1.2.26"}})
    );
    assert_eq!(
        reply(&one(
            r#"{"jsonrpc":"2.0","id":1,"method":"public/disable_heartbeat","params":{}}"#
        )),
        json!({"jsonrpc":"2.0","id":1,"result":"ok"})
    );
    assert_eq!(
        reply(&one(r#"{"jsonrpc":"2.0","id":2,"method":"public/nope"}"#)),
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}})
    );
    assert_eq!(
        reply(&one(
            r#"{"jsonrpc":"2.0","id":2,"method":"private/subscribe","params":{"channels":["user.orders.any.any.raw"]}}"#
        ))["error"]["code"],
        json!(13009)
    );
    assert_eq!(
        reply(&one("{not json")),
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"public/subscribe","params":{{"channels":["{}"]}}}}"#,
        "x".repeat(40_000)
    );
    assert_eq!(
        reply(&one(&huge)),
        json!({"jsonrpc":"2.0","error":{"code":-32600,"message":"request entity too large"}})
    );
}

#[test]
fn a_client_that_stops_answering_test_requests_is_closed() {
    let d = Deribit::new();
    let mut m = market();
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let tick = |c: &mut Client, at: u64, idle: u64| {
        let mut out = Out::default();
        let t = d.on_tick(c, t0 + s(at), s(idle), &mut out);
        (
            t,
            out.items
                .into_iter()
                .map(|(t, _)| t.into_text())
                .collect::<Vec<_>>(),
        )
    };
    let beat = wire::heartbeat("heartbeat");
    let test_request = wire::heartbeat("test_request");
    assert_eq!(
        test_request,
        r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#
    );
    // Without heartbeats, a silent client is kept.
    let mut quiet = client(&d, &m);
    assert_eq!(tick(&mut quiet, 3600, 3600), (Tick::Keep, vec![]));

    let set =
        r#"{"jsonrpc":"2.0","id":1,"method":"public/set_heartbeat","params":{"interval":10}}"#;
    let mut silent = client(&d, &m);
    ask(&d, &mut silent, &mut m, set);
    assert_eq!(tick(&mut silent, 0, 0), (Tick::Keep, vec![]));
    assert_eq!(tick(&mut silent, 5, 5), (Tick::Keep, vec![]));
    assert_eq!(
        tick(&mut silent, 10, 10),
        (Tick::Keep, vec![test_request.clone()])
    );
    assert_eq!(tick(&mut silent, 15, 15), (Tick::Keep, vec![]));
    assert_eq!(
        tick(&mut silent, 20, 20),
        (Tick::Close(CLOSE, "test_request not answered"), vec![])
    );

    // One that answers each test_request with public/test (100 ms later)
    // is kept: asked every other beat, a heartbeat in between.
    let mut alive = client(&d, &m);
    ask(&d, &mut alive, &mut m, set);
    tick(&mut alive, 0, 0);
    let mut answered = Duration::ZERO;
    let mut asked = 0;
    for beat_at in (10..=200).step_by(10) {
        let now = s(beat_at);
        let mut out = Out::default();
        let t = d.on_tick(&mut alive, t0 + now, now - answered, &mut out);
        assert_eq!(t, Tick::Keep, "at {beat_at}");
        let sent: Vec<String> = out.items.into_iter().map(|(t, _)| t.into_text()).collect();
        if sent == std::slice::from_ref(&test_request) {
            asked += 1;
            ask(
                &d,
                &mut alive,
                &mut m,
                r#"{"jsonrpc":"2.0","id":0,"method":"public/test","params":{}}"#,
            );
            answered = now + Duration::from_millis(100);
        } else {
            assert_eq!(sent, std::slice::from_ref(&beat), "at {beat_at}");
        }
    }
    assert_eq!(asked, 10);
}

#[test]
fn a_client_out_of_credits_is_told_and_closed() {
    let d = Deribit::new();
    let mut m = market();
    let mut c = client(&d, &m);
    let t0 = Instant::now();
    let mut out = Out::default();
    assert_eq!(d.on_tick(&mut c, t0, Duration::ZERO, &mut out), Tick::Keep);
    let sub = r#"{"jsonrpc":"2.0","id":6,"method":"public/subscribe","params":{"channels":["trades.BTC-PERPETUAL.100ms"]}}"#;
    // A burst of ten, then 3 000 credits back in 300 ms: one more.
    for _ in 0..10 {
        assert!(ask(&d, &mut c, &mut m, sub)[0].contains("result"));
    }
    d.on_tick(
        &mut c,
        t0 + Duration::from_millis(300),
        Duration::ZERO,
        &mut out,
    );
    assert!(ask(&d, &mut c, &mut m, sub)[0].contains("result"));
    let got = ask(&d, &mut c, &mut m, sub);
    assert_eq!(
        reply(&got[0]),
        json!({"jsonrpc":"2.0","id":6,"error":{"code":10028,"message":"too_many_requests"}})
    );
    assert!(
        ask(&d, &mut c, &mut m, sub).is_empty(),
        "the session is over"
    );
    assert_eq!(
        d.on_tick(
            &mut c,
            t0 + Duration::from_secs(1),
            Duration::ZERO,
            &mut out
        ),
        Tick::Close(CLOSE, "too_many_requests")
    );
}

/// The shown depth of the adapter's books.
const DEPTH: usize = 10;

/// Everything a test's adapter made of the messages in `out`: for each,
/// its send-stamp key, outcome and events.
type Delivered = Vec<(Option<(usize, StreamKind, u64)>, Outcome, Vec<Event>)>;

fn deliver(adapter: &mut deribit::Adapter, out: &mut Out) -> Delivered {
    out.items
        .drain(..)
        .map(|(frame, key)| {
            let mut events = Vec::new();
            let outcome = testutil::deliver(adapter, frame.text(), &mut events);
            (key, outcome, events)
        })
        .collect()
}

/// Every event of `got` to the consumer.
fn consume(consumer: &mut Consumer, got: &Delivered) {
    for e in got.iter().flat_map(|(_, _, events)| events) {
        consumer.on(e);
    }
}

fn kinds(d: &Delivered, n: u32) -> Vec<EventKind> {
    d.iter()
        .flat_map(|(_, _, ev)| ev.iter())
        .filter(|e| e.instrument.0 == n)
        .map(|e| e.kind)
        .collect()
}

/// The adapter's book `n` equals the market's at the shown depth.
fn same_book(adapter: &deribit::Adapter, m: &Market, n: usize) -> bool {
    let Some(book) = adapter.book(InstrumentId(n as u32)) else {
        return false;
    };
    let ours = |side| -> Vec<(i64, i64)> {
        book.levels(side)
            .iter()
            .map(|l| (l.price, l.size))
            .collect()
    };
    let (bids, asks) = m.books[n].levels(DEPTH);
    ours(Side::Bid) == bids && ours(Side::Ask) == asks
}

#[test]
fn a_round_trip_through_the_adapter() {
    let d = Deribit::new();
    let mut m = market();
    let specs: Vec<InstrumentSpec> = m
        .instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, DEPTH))
        .collect();
    let mut adapter = deribit::Adapter::new(&specs);
    let mut c = client(&d, &m);
    let mut out = Out::default();
    let mut consumer = Consumer::new([DEPTH; 2]);
    // The consumer's book `n` is the market's at the shown depth.
    let mirrored = |consumer: &Consumer, m: &Market, n: usize| {
        consumer.levels(n) == Some(m.books[n].levels(DEPTH))
    };

    // The plan's frames, ETH's book refused: the reply to request 100
    // lacks its channel.
    m.arm(1, VenueFault::RejectSubscription);
    let plan = Venue::Deribit.plans(&specs, Channels::default()).unwrap();
    for frame in &plan[0].subscribe {
        d.on_text(&mut c, frame, &mut m, &mut out);
    }
    let got = deliver(&mut adapter, &mut out);
    consume(&mut consumer, &got);
    assert_eq!(kinds(&got, 1), [EventKind::Rejected { code: 0 }]);
    assert!(got.iter().any(|(_, o, _)| *o == Outcome::Rejected));
    assert!(adapter.rejection().contains(r#""id":100,"result":["#));
    assert!(same_book(&adapter, &m, 0));
    assert!(adapter.book(InstrumentId(1)).is_none());
    // Subscribed again (the resubscription's subscribe frame): accepted,
    // with its snapshot.
    let again = Venue::Deribit.resubscribe(&specs[1]);
    d.on_text(&mut c, &again[1], &mut m, &mut out);
    let got = deliver(&mut adapter, &mut out);
    consume(&mut consumer, &got);
    assert_eq!(got[0].1, Outcome::Control);
    assert!(same_book(&adapter, &m, 1));
    assert!(mirrored(&consumer, &m, 0) && mirrored(&consumer, &m, 1));
    d.on_text(
        &mut c,
        r#"{"jsonrpc":"2.0","id":9,"method":"public/subscribe","params":{"channels":["quote.BTC-PERPETUAL","quote.ETH-PERPETUAL"]}}"#,
        &mut m,
        &mut out,
    );
    assert_eq!(deliver(&mut adapter, &mut out)[0].1, Outcome::Control);

    let mut rng = StdRng::seed_from_u64(11);
    let mut step = Step::default();
    let (mut trades, mut quotes, mut gaps) = (0, 0, 0);
    // A book whose message was lost, until its gap is seen and it is
    // resubscribed: the adapter cannot know yet.
    let mut lost = [false; 2];
    for k in 0..1200usize {
        let n = k % 2;
        if k == 301 || k == 800 {
            m.arm(n, VenueFault::SequenceGap);
        }
        if k == 802 {
            // BTC's recovery is refused first.
            m.arm(0, VenueFault::RejectSubscription);
        }
        m.step(n, &mut rng, k % 3 == 0, &mut step);
        d.on_step(&mut c, &step, &m, &mut out);
        let got = deliver(&mut adapter, &mut out);
        let events = kinds(&got, n as u32);
        assert!(kinds(&got, 1 - n as u32).is_empty());
        consume(&mut consumer, &got);
        // Each message's stamp is the id the adapter reports for it.
        for (key, _, ev) in &got {
            for e in ev {
                match (key, e.kind) {
                    (Some((_, StreamKind::Depth, id)), EventKind::BookDelta { update_id, .. })
                    | (
                        Some((_, StreamKind::Trade, id)),
                        EventKind::Trade {
                            trade_id: update_id,
                            ..
                        },
                    ) => {
                        assert_eq!(*id, update_id)
                    }
                    _ => {}
                }
            }
        }
        if let Some(t) = step.trade {
            trades += 1;
            assert!(events.contains(&EventKind::Trade {
                price: t.price,
                size: t.size,
                aggressor: if t.buyer_aggressor {
                    Aggressor::Buy
                } else {
                    Aggressor::Sell
                },
                trade_id: t.id,
            }));
        }
        if let Some(((bid_price, bid_size), (ask_price, ask_size))) = step.top {
            quotes += 1;
            assert!(events.contains(&EventKind::Quote {
                bid_price,
                bid_size,
                ask_price,
                ask_size,
                update_id: 0
            }));
        }
        if step.faults.drop_book {
            // Lost: nothing said yet.
            assert!(adapter.book(InstrumentId(n as u32)).is_some());
            assert!(!events.iter().any(|e| matches!(e, EventKind::Gap { .. })));
            lost[n] = true;
            continue;
        }
        if let Some(at) = events
            .iter()
            .position(|e| matches!(e, EventKind::Gap { .. }))
        {
            gaps += 1;
            assert!(lost[n], "a gap only where a message was lost");
            lost[n] = false;
            assert!(
                matches!(
                    events[at],
                    EventKind::Gap {
                        why: Resync::Sequence { .. }
                    }
                ),
                "{events:?}"
            );
            assert_eq!(events.get(at + 1), Some(&EventKind::Resync));
            assert!(adapter.book(InstrumentId(n as u32)).is_none());
            // The feed resubscribes: unsubscribe, subscribe.
            for frame in Venue::Deribit.resubscribe(&specs[n]) {
                d.on_text(&mut c, &frame, &mut m, &mut out);
            }
            let got = deliver(&mut adapter, &mut out);
            consume(&mut consumer, &got);
            if k < 802 {
                assert_eq!(got.len(), 3, "two replies and the snapshot");
                assert!(got.iter().all(|(_, o, _)| *o != Outcome::Rejected));
            } else {
                // Refused: the subscribe reply's `result` is empty.
                assert_eq!(got.len(), 2);
                assert_eq!(got[1].1, Outcome::Rejected);
                assert_eq!(kinds(&got, 0), [EventKind::Rejected { code: 0 }]);
                assert!(
                    adapter
                        .rejection()
                        .contains(r#""id":"book.BTC-PERPETUAL.100ms","result":[]"#),
                    "{}",
                    adapter.rejection()
                );
                assert!(adapter.book(InstrumentId(0)).is_none());
                // Tried again: accepted.
                d.on_text(
                    &mut c,
                    &Venue::Deribit.resubscribe(&specs[0])[1],
                    &mut m,
                    &mut out,
                );
                let got = deliver(&mut adapter, &mut out);
                consume(&mut consumer, &got);
            }
        }
        for i in (0..2).filter(|&i| !lost[i]) {
            assert!(same_book(&adapter, &m, i), "step {k}, instrument {i}");
            assert!(
                mirrored(&consumer, &m, i),
                "step {k}, instrument {i}: the events"
            );
        }
    }
    assert_eq!(gaps, 2);
    assert!(trades >= 300 && quotes >= 100, "{trades} {quotes}");
}
