//! The Bybit simulator against the documented shapes, and against
//! tickwire's own Bybit adapter with no network between them.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tickwire_venues::book::Side;
use tickwire_venues::plan::Channels;
use tickwire_venues::{Event, InstrumentId, InstrumentSpec, Kind, Outcome, VenueAdapter, bybit};

use super::*;
use crate::VenueFault;
use crate::market::SimInstrument;
use crate::testutil;

fn market(venue: Venue) -> Market {
    testutil::market(venue, 1)
}

fn open(b: &Bybit, path: &str, m: &Market) -> Client {
    let Ok(client) = b.open(path, m) else {
        panic!("{path} refused")
    };
    client
}

/// Everything `text` makes the venue send.
fn ask(b: &Bybit, c: &mut Client, m: &mut Market, text: &str) -> Vec<String> {
    let mut out = Out::default();
    b.on_text(c, text, m, &mut out);
    out.items.into_iter().map(|(t, _)| t.into_text()).collect()
}

/// One market step of instrument `n`, as the server makes it.
fn step(m: &mut Market, rng: &mut StdRng, n: usize, trade: bool) -> Step {
    let mut s = Step::default();
    m.step(n, rng, trade, &mut s);
    s
}

#[test]
fn paths_serve_their_category_only() {
    let m = market(Venue::BybitSpot);
    let spot = Bybit::new(Venue::BybitSpot);
    assert!(spot.open("/v5/public/spot", &m).is_ok());
    assert!(spot.open("/v5/public/spot?max_active_time=1m", &m).is_ok());
    for other in [
        "/v5/public/linear",
        "/v5/public/inverse",
        "/v5/public/option",
        "/",
    ] {
        let Err(r) = spot.open(other, &m) else {
            panic!("{other} accepted")
        };
        assert_eq!((r.status, r.body.as_str()), (404, "404 page not found\n"));
    }
    let inverse = Bybit::new(Venue::BybitInverse);
    assert!(inverse.open("/v5/public/inverse", &m).is_ok());
    assert!(inverse.open("/v5/public/linear", &m).is_err());
    // Connection ids in Bybit's newer form, one per connection.
    let (a, b) = (
        open(&spot, "/v5/public/spot", &m),
        open(&spot, "/v5/public/spot", &m),
    );
    assert_ne!(a.conn_id, b.conn_id);
    assert_eq!(a.conn_id.len(), 26);
    assert_eq!(a.conn_id.as_bytes()[20], b'-');
    assert!(
        a.conn_id
            .bytes()
            .all(|c| c == b'-' || c.is_ascii_digit() || (b'a'..=b'v').contains(&c))
    );
}

/// The replies of linear (and inverse): `ret_msg` empty on success,
/// `req_id` always there; the refusals as captured live.
#[test]
fn linear_replies_and_refusals() {
    let b = Bybit::new(Venue::BybitLinear);
    let mut m = market(Venue::BybitLinear);
    let mut c = open(&b, "/v5/public/linear", &m);
    let id = c.conn_id.clone();
    let reply = |ok: bool, msg: &str, req: &str, op: &str| {
        format!(
            r#"{{"success":{ok},"ret_msg":"{msg}","conn_id":"{id}","req_id":"{req}","op":"{op}"}}"#
        )
    };
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"req_id":"s1","op":"subscribe","args":["orderbook.50.BTCUSDT","publicTrade.BTCUSDT"]}"#,
    );
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0], reply(true, "", "s1", "subscribe"));
    assert!(
        got[1].starts_with(r#"{"topic":"orderbook.50.BTCUSDT","type":"snapshot","ts":"#),
        "{}",
        got[1]
    );
    assert_eq!(c.topics, [Topic::Book(0, 50), Topic::Trades(0)]);
    // Without a req_id: "" (the docs' linear example).
    let got = ask(&b, &mut c, &mut m, r#"{"op":"ping"}"#);
    assert_eq!(got, [reply(true, "pong", "", "ping")]);
    let got = ask(&b, &mut c, &mut m, r#"{"req_id":"100001","op":"ping"}"#);
    assert_eq!(got, [reply(true, "pong", "100001", "ping")]);
    // Refusals: the whole request, naming the first bad topic.
    for (request, words) in [
        (
            r#"{"op":"subscribe","args":["publicTrade.ETHUSDT","orderbook.500.ETHUSDT"]}"#,
            "error:handler not found,topic:orderbook.500.ETHUSDT",
        ),
        (
            r#"{"op":"subscribe","args":["orderbook.50.ethusdt"]}"#,
            "error:handler not found,topic:orderbook.50.ethusdt",
        ),
        (
            r#"{"op":"subscribe","args":["tickers.NOPEUSDT"]}"#,
            "error:handler not found,topic:tickers.NOPEUSDT",
        ),
        (
            r#"{"op":"subscribe","args":["publicTrade.ETHUSDT","orderbook.50.BTCUSDT"]}"#,
            "error:already subscribed,topic:orderbook.50.BTCUSDT",
        ),
    ] {
        assert_eq!(
            ask(&b, &mut c, &mut m, request),
            [reply(false, words, "", "subscribe")]
        );
    }
    assert_eq!(c.topics.len(), 2, "nothing of a refused request is taken");
    // Linear has no 10-topic limit.
    let many: Vec<String> = DEPTHS
        .iter()
        .flat_map(|d| [format!("\"orderbook.{d}.ETHUSDT\"")])
        .chain(["\"publicTrade.ETHUSDT\"".to_owned()])
        .collect();
    let got = ask(
        &b,
        &mut c,
        &mut m,
        &format!(r#"{{"op":"subscribe","args":[{}]}}"#, many.join(",")),
    );
    assert_eq!(got.len(), 1 + DEPTHS.len());
    let got = ask(&b, &mut c, &mut m, r#"{"op":"nope","req_id":"x"}"#);
    assert_eq!(got, [reply(false, "error:invalid op", "x", "nope")]);
    let got = ask(&b, &mut c, &mut m, "hello");
    assert!(
        got[0].starts_with(r#"{"success":false,"ret_msg":"Failed to decode incoming data:readObjectStart: expect { or n, but found h, "#),
        "{}",
        got[0]
    );
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"unsubscribe","args":["publicTrade.BTCUSDT"],"req_id":"3"}"#,
    );
    assert_eq!(got, [reply(true, "", "3", "unsubscribe")]);
    assert!(!c.topics.contains(&Topic::Trades(0)));
}

/// Spot: `ret_msg` repeats the operation, no `req_id` key without one,
/// `Invalid symbol :[topic]`, at most 10 topics a request.
#[test]
fn spot_replies_and_refusals() {
    let b = Bybit::new(Venue::BybitSpot);
    let mut m = market(Venue::BybitSpot);
    let mut c = open(&b, "/v5/public/spot", &m);
    let id = c.conn_id.clone();
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["orderbook.1.BTCUSDT"]}"#,
    );
    assert_eq!(
        got[0],
        format!(r#"{{"success":true,"ret_msg":"subscribe","conn_id":"{id}","op":"subscribe"}}"#)
    );
    assert!(
        got[1].starts_with(r#"{"topic":"orderbook.1.BTCUSDT","ts":"#),
        "{}",
        got[1]
    );
    let got = ask(&b, &mut c, &mut m, r#"{"req_id":"10001","op":"ping"}"#);
    assert_eq!(
        got,
        [format!(
            r#"{{"success":true,"ret_msg":"pong","conn_id":"{id}","req_id":"10001","op":"ping"}}"#
        )]
    );
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["publicTrade.NOPEUSDT"]}"#,
    );
    assert_eq!(
        got,
        [format!(
            r#"{{"success":false,"ret_msg":"Invalid symbol :[publicTrade.NOPEUSDT]","conn_id":"{id}","op":"subscribe"}}"#
        )]
    );
    let eleven: Vec<String> = (0..11)
        .map(|_| "\"publicTrade.ETHUSDT\"".to_owned())
        .collect();
    let got = ask(
        &b,
        &mut c,
        &mut m,
        &format!(
            r#"{{"op":"subscribe","args":[{}],"req_id":"7"}}"#,
            eleven.join(",")
        ),
    );
    assert_eq!(
        got,
        [format!(
            r#"{{"success":false,"ret_msg":"args size \u003e10","conn_id":"{id}","req_id":"7","op":"subscribe"}}"#
        )]
    );
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"unsubscribe","args":["orderbook.1.BTCUSDT"]}"#,
    );
    assert_eq!(
        got,
        [format!(
            r#"{{"success":true,"ret_msg":"unsubscribe","conn_id":"{id}","op":"unsubscribe"}}"#
        )]
    );
    assert!(c.topics.is_empty() && c.repeats.is_empty());
}

/// A `req_id` that is a JSON number, as ccxt sends it
/// (`{"op":"subscribe","req_id":1,...}`, `{"req_id":2,"op":"ping"}`), is
/// accepted on every category and echoed back as a string, `"1"`, the way
/// ccxt's captures of the venue show it (see `RequestId`).
#[test]
fn a_numeric_req_id_is_accepted_and_echoed_as_a_string() {
    for (venue, path, subscribed) in [
        (Venue::BybitSpot, "/v5/public/spot", "subscribe"),
        (Venue::BybitLinear, "/v5/public/linear", ""),
        (Venue::BybitInverse, "/v5/public/inverse", ""),
    ] {
        let b = Bybit::new(venue);
        let mut m = market(venue);
        let mut c = open(&b, path, &m);
        let id = c.conn_id.clone();
        let symbol = m.instruments[0].symbol.clone();
        let got = ask(
            &b,
            &mut c,
            &mut m,
            &format!(r#"{{"op":"subscribe","req_id":1,"args":["orderbook.50.{symbol}"]}}"#),
        );
        assert_eq!(got.len(), 2, "{venue:?}: {got:?}");
        assert_eq!(
            got[0],
            format!(
                r#"{{"success":true,"ret_msg":"{subscribed}","conn_id":"{id}","req_id":"1","op":"subscribe"}}"#
            ),
            "{venue:?}"
        );
        assert!(got[1].contains(r#""type":"snapshot""#), "{}", got[1]);
        assert_eq!(c.topics, [Topic::Book(0, 50)], "{venue:?}");
        let got = ask(&b, &mut c, &mut m, r#"{"req_id":2,"op":"ping"}"#);
        assert_eq!(
            got,
            [format!(
                r#"{{"success":true,"ret_msg":"pong","conn_id":"{id}","req_id":"2","op":"ping"}}"#
            )],
            "{venue:?}"
        );
        // A refusal echoes it too.
        let got = ask(&b, &mut c, &mut m, r#"{"op":"nope","req_id":30}"#);
        assert_eq!(
            got,
            [format!(
                r#"{{"success":false,"ret_msg":"error:invalid op","conn_id":"{id}","req_id":"30","op":"nope"}}"#
            )],
            "{venue:?}"
        );
    }
}

/// An armed refusal answers the next subscription of the book with the
/// venue's words for an unknown topic, once.
#[test]
fn an_armed_refusal_is_used_once() {
    let b = Bybit::new(Venue::BybitLinear);
    let mut m = market(Venue::BybitLinear);
    let mut c = open(&b, "/v5/public/linear", &m);
    m.arm(1, VenueFault::RejectSubscription);
    // A trade subscription does not use it up.
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["publicTrade.ETHUSDT"]}"#,
    );
    assert!(got[0].contains(r#""success":true"#), "{got:?}");
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["orderbook.200.ETHUSDT"]}"#,
    );
    assert!(
        got[0].contains(r#""ret_msg":"error:handler not found,topic:orderbook.200.ETHUSDT""#),
        "{got:?}"
    );
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["orderbook.200.ETHUSDT"]}"#,
    );
    assert!(got[0].contains(r#""success":true"#), "{got:?}");
    assert_eq!(got.len(), 2);
}

/// The snapshot on subscribe is the market's book at the topic's depth, in
/// the category's decimals, with the topic's `u`.
#[test]
fn a_subscription_snapshot_is_the_market_at_its_depth() {
    let b = Bybit::new(Venue::BybitLinear);
    let mut m = market(Venue::BybitLinear);
    let mut c = open(&b, "/v5/public/linear", &m);
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["orderbook.50.BTCUSDT"]}"#,
    );
    let v: serde_json::Value = serde_json::from_str(&got[1]).unwrap();
    let (bids, _) = m.books[0].levels(50);
    let b0 = &v["data"]["b"];
    assert_eq!(b0.as_array().unwrap().len(), 50);
    // BTCUSDT linear: 1 price decimal, 3 size decimals, padded.
    let mut price = String::new();
    b.wire.number(&mut price, bids[0].0, 1);
    assert_eq!(b0[0][0], price.as_str());
    assert!(price.contains('.') && price.len() - price.find('.').unwrap() == 2);
    assert_eq!(v["data"]["u"], m.books[0].u());
    assert_eq!(v["data"]["seq"], m.books[0].update_id);
}

#[test]
fn a_silent_client_is_cut_off_after_ten_minutes() {
    let b = Bybit::new(Venue::BybitLinear);
    let mut m = market(Venue::BybitLinear);
    let mut c = open(&b, "/v5/public/linear", &m);
    let mut out = Out::default();
    // Counted from when the connection last had data (its opening).
    let t0 = c.last_data;
    let after = |s| t0 + Duration::from_secs(s);
    // A client that pings is kept, however long ago data came.
    assert_eq!(
        b.on_tick(&mut c, after(3600), Duration::from_secs(20), &mut out),
        Tick::Keep
    );
    assert_eq!(
        b.on_tick(&mut c, after(599), Duration::from_secs(599), &mut out),
        Tick::Keep
    );
    assert_eq!(
        b.on_tick(&mut c, after(601), Duration::from_secs(601), &mut out),
        Tick::Close(CloseCode::ABNORMAL, "")
    );
    // A client that never pings but receives a book is kept.
    ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["orderbook.200.BTCUSDT"]}"#,
    );
    let mut rng = StdRng::seed_from_u64(2);
    let s = step(&mut m, &mut rng, 0, true);
    b.on_step(&mut c, &s, &m, &mut out);
    assert!(!out.items.is_empty());
    let since = c.last_data;
    assert_eq!(
        b.on_tick(
            &mut c,
            since + Duration::from_secs(590),
            Duration::from_secs(900),
            &mut out
        ),
        Tick::Keep
    );
}

/// Level 1 repeats its last snapshot, same `u`, after 3 s without a
/// change.
#[test]
fn level_one_repeats_after_three_quiet_seconds() {
    let b = Bybit::new(Venue::BybitSpot);
    let mut m = market(Venue::BybitSpot);
    let mut c = open(&b, "/v5/public/spot", &m);
    let got = ask(
        &b,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":["orderbook.1.ETHUSDT"]}"#,
    );
    let at = c.repeats[0].at;
    let mut out = Out::default();
    b.on_tick(
        &mut c,
        at + Duration::from_millis(2900),
        Duration::ZERO,
        &mut out,
    );
    assert!(out.items.is_empty());
    b.on_tick(
        &mut c,
        at + Duration::from_millis(3100),
        Duration::ZERO,
        &mut out,
    );
    assert_eq!(out.items.len(), 1);
    let (text, key) = &out.items[0];
    let without_ts = |s: &str| {
        let v: serde_json::Value = serde_json::from_str(s).unwrap();
        (v["data"].clone(), v["type"].clone())
    };
    assert_eq!(without_ts(text.text()), without_ts(&got[1]));
    assert_eq!(*key, Some((1, StreamKind::BookTicker, m.books[1].u())));
}

/// A client that keeps a topic's levels from its messages alone, never
/// trimming, holds exactly the market's best `depth` levels after every
/// message: a level pushed out is deleted on the wire, one that enters is
/// sent, no level unknown to the client is deleted.
#[test]
fn the_window_on_the_wire_is_the_market_top() {
    for venue in [Venue::BybitSpot, Venue::BybitInverse] {
        let b = Bybit::new(venue);
        let mut instruments = SimInstrument::pair(venue);
        for i in &mut instruments {
            i.levels = 60;
        }
        let mut rng = StdRng::seed_from_u64(8);
        let mut m = testutil::market_of(instruments, &mut rng);
        let mut c = open(&b, b.path, &m);
        let spec = m.instruments[0].clone();
        let sub = format!(
            r#"{{"op":"subscribe","args":["orderbook.50.{s}","orderbook.1000.{s}","orderbook.1.{s}"]}}"#,
            s = spec.symbol
        );
        let mut held = Held::new();
        let answer = ask(&b, &mut c, &mut m, &sub);
        assert_eq!(answer.len(), 4, "{answer:?}");
        for t in answer {
            apply(&mut held, &spec, &t);
        }
        for k in 0..3000 {
            let s = step(&mut m, &mut rng, 0, k % 3 == 0);
            let mut out = Out::default();
            b.on_step(&mut c, &s, &m, &mut out);
            for (t, _) in out.items {
                apply(&mut held, &spec, t.text());
            }
            assert_eq!(held.len(), 3);
            for (depth, (bids, asks)) in &held {
                let (want_b, want_a) = m.books[0].levels(*depth);
                let got_b: Vec<(i64, i64)> = bids.iter().rev().map(|(p, q)| (*p, *q)).collect();
                let got_a: Vec<(i64, i64)> = asks.iter().map(|(p, q)| (*p, *q)).collect();
                assert_eq!(
                    (got_b, got_a),
                    (want_b, want_a),
                    "{venue} depth {depth} step {k}"
                );
            }
        }
    }
}

/// Each topic's levels as a client holds them: by depth, bids and asks.
type Held = BTreeMap<usize, (BTreeMap<i64, i64>, BTreeMap<i64, i64>)>;

/// Applies a book message to `held` as it is, never trimming: a deletion
/// must be of a level held.
fn apply(held: &mut Held, spec: &SimInstrument, text: &str) {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let Some(topic) = v["topic"].as_str() else {
        return;
    };
    let depth: usize = topic.split('.').nth(1).unwrap().parse().unwrap();
    let sides = held.entry(depth).or_default();
    if v["type"] == "snapshot" {
        *sides = Default::default();
    }
    for (key, book) in [("b", &mut sides.0), ("a", &mut sides.1)] {
        for l in v["data"][key].as_array().unwrap() {
            let units = |s: &serde_json::Value, scale: u8| {
                tickwire_venues::decimal::scaled("level", s.as_str().unwrap(), scale).unwrap()
            };
            let (p, q) = (
                units(&l[0], spec.price_scale),
                units(&l[1], spec.size_scale),
            );
            if q == 0 {
                assert!(book.remove(&p).is_some(), "{topic}: deletes unknown {p}");
            } else {
                book.insert(p, q);
            }
        }
    }
}

/// What the adapter made of the messages so far.
struct Feed {
    adapter: bybit::Adapter,
    events: Vec<Event>,
    outcomes: Vec<Outcome>,
}

impl Feed {
    /// Hands every message of `out` to the adapter; each stamped message's
    /// id is the one the adapter reports for it.
    fn take(&mut self, out: &mut Out) {
        for (frame, key) in out.items.drain(..) {
            let text = frame.into_text();
            let from = self.events.len();
            let outcome = testutil::deliver(&mut self.adapter, &text, &mut self.events);
            self.outcomes.push(outcome);
            let Some((n, kind, id)) = key else { continue };
            for e in &self.events[from..] {
                assert_eq!(e.instrument, InstrumentId(n as u32));
                let reported = match (kind, e.kind) {
                    (StreamKind::Trade, Kind::Trade { trade_id, .. }) => trade_id,
                    (StreamKind::BookTicker, Kind::Quote { update_id, .. }) => update_id,
                    (StreamKind::Depth, Kind::BookDelta { update_id, .. }) => update_id,
                    (StreamKind::Depth, Kind::BookValid { update_id }) => update_id,
                    _ => continue,
                };
                assert_eq!(reported, id, "{text}");
            }
        }
    }

    fn since(&self, from: usize) -> impl Iterator<Item = &Event> {
        self.events[from..].iter()
    }
}

/// The adapter's books are valid and show the market's best levels; its
/// last quote is the market's top (`quotes`: none was lost).
fn check(feed: &Feed, m: &Market, specs: &[InstrumentSpec], quotes: bool, at: &str) {
    check_some(feed, m, specs, quotes, &[0, 1], at);
}

/// [`check`] for the instruments `only`.
fn check_some(
    feed: &Feed,
    m: &Market,
    specs: &[InstrumentSpec],
    quotes: bool,
    only: &[usize],
    at: &str,
) {
    for (n, spec) in specs.iter().enumerate() {
        if !only.contains(&n) {
            continue;
        }
        let id = InstrumentId(n as u32);
        let book = feed
            .adapter
            .book(id)
            .unwrap_or_else(|| panic!("{at}: book {n} not valid"));
        let (bids, asks) = m.books[n].levels(spec.depth);
        let shown = |side| -> Vec<(i64, i64)> {
            book.levels(side)
                .iter()
                .map(|l| (l.price, l.size))
                .collect()
        };
        assert_eq!(shown(Side::Bid), bids, "{at}: bids of {n}");
        assert_eq!(shown(Side::Ask), asks, "{at}: asks of {n}");
        let quote = feed.events.iter().rev().find_map(|e| match e.kind {
            Kind::Quote {
                bid_price,
                bid_size,
                ask_price,
                ask_size,
                ..
            } if e.instrument == id => Some(((bid_price, bid_size), (ask_price, ask_size))),
            _ => None,
        });
        if quotes {
            assert_eq!(quote, Some(m.books[n].top()), "{at}: quote of {n}");
        }
    }
}

/// Steps the market until instrument `n`'s book has a `Gap`, checking the
/// books all the while; the events from the gap on.
fn until_gap(
    b: &Bybit,
    c: &mut Client,
    m: &mut Market,
    rng: &mut StdRng,
    feed: &mut Feed,
    specs: &[InstrumentSpec],
    n: usize,
) -> usize {
    for k in 0..200 {
        let from = feed.events.len();
        let s = step(m, rng, k % 2, k % 3 == 0);
        let mut out = Out::default();
        b.on_step(c, &s, m, &mut out);
        feed.take(&mut out);
        if let Some(at) = feed
            .since(from)
            .position(|e| matches!(e.kind, Kind::Gap { .. }))
        {
            return from + at;
        }
        // Its book missed a message: only the other one is known right.
        check_some(feed, m, specs, false, &[1 - n], "before the gap");
    }
    panic!("no gap for instrument {n}");
}

/// Frames to the simulator, its answers to the adapter.
fn send(b: &Bybit, c: &mut Client, m: &mut Market, feed: &mut Feed, frames: &[String]) {
    for f in frames {
        let mut out = Out::default();
        b.on_text(c, f, m, &mut out);
        feed.take(&mut out);
    }
}

#[test]
fn round_trip_through_the_adapter() {
    for venue in [Venue::BybitSpot, Venue::BybitLinear, Venue::BybitInverse] {
        round_trip(venue);
    }
}

fn round_trip(venue: Venue) {
    let b = Bybit::new(venue);
    let mut m = market(venue);
    let depths = [20, 200];
    let specs: Vec<InstrumentSpec> = m
        .instruments
        .iter()
        .zip(depths)
        .map(|(i, d)| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, d))
        .collect();
    let plan = venue.plans(&specs, Channels::default()).unwrap();
    let mut c = open(&b, &plan[0].path, &m);
    let mut feed = Feed {
        adapter: bybit::Adapter::new(&specs),
        events: Vec::new(),
        outcomes: Vec::new(),
    };
    // The first subscription of instrument 1's book is refused: its
    // quotes and trades, asked for apart, still come; the book's own
    // subscribe (what a feed retries) brings it.
    m.arm(1, VenueFault::RejectSubscription);
    send(&b, &mut c, &mut m, &mut feed, &plan[0].subscribe);
    assert!(feed.outcomes.contains(&Outcome::Control));
    assert!(feed.outcomes.contains(&Outcome::Rejected));
    let valid = |f: &Feed| {
        (0..2)
            .map(|n| f.adapter.book(InstrumentId(n)).is_some())
            .collect::<Vec<_>>()
    };
    assert_eq!(valid(&feed), [true, false], "{venue}");
    assert!(
        feed.events
            .iter()
            .any(|e| e.instrument == InstrumentId(1) && matches!(e.kind, Kind::Quote { .. }))
    );
    let retry = venue.resubscribe(&specs[1]);
    send(&b, &mut c, &mut m, &mut feed, &retry[retry.len() - 1..]);
    assert_eq!(valid(&feed), [true, true], "{venue}");
    let mut rng = StdRng::seed_from_u64(5);
    for k in 0..2000 {
        let from = feed.events.len();
        let s = step(&mut m, &mut rng, k % 2, k % 3 == 0);
        let mut out = Out::default();
        b.on_step(&mut c, &s, &m, &mut out);
        feed.take(&mut out);
        let trades: Vec<_> = feed
            .since(from)
            .filter_map(|e| match e.kind {
                Kind::Trade {
                    price,
                    size,
                    aggressor,
                    trade_id,
                } => Some((e.instrument.0 as usize, price, size, aggressor, trade_id)),
                _ => None,
            })
            .collect();
        let want: Vec<_> = s
            .trade
            .iter()
            .map(|t| {
                let side = if t.buyer_aggressor {
                    tickwire_venues::Aggressor::Buy
                } else {
                    tickwire_venues::Aggressor::Sell
                };
                (s.instrument, t.price, t.size, side, t.id)
            })
            .collect();
        assert_eq!(trades, want, "{venue} step {k}");
        assert!(!feed.since(from).any(|e| matches!(e.kind, Kind::Gap { .. })));
        check(&feed, &m, &specs, true, &format!("{venue} step {k}"));
    }

    // A lost book message: a gap for that instrument only, then a
    // resubscription brings it back.
    m.arm(1, VenueFault::SequenceGap);
    let gap = until_gap(&b, &mut c, &mut m, &mut rng, &mut feed, &specs, 1);
    let after: Vec<_> = feed.since(gap).map(|e| (e.instrument.0, e.kind)).collect();
    assert!(matches!(after[0], (1, Kind::Gap { .. })), "{after:?}");
    assert_eq!(after[1], (1, Kind::Resync));
    assert!(
        feed.since(gap).all(|e| e.instrument == InstrumentId(1)
            || !matches!(e.kind, Kind::Gap { .. } | Kind::Resync))
    );
    assert_eq!(valid(&feed), [true, false]);
    send(&b, &mut c, &mut m, &mut feed, &venue.resubscribe(&specs[1]));
    assert_eq!(valid(&feed), [true, true], "{venue}: resubscribed");
    check(&feed, &m, &specs, false, "resubscribed");

    // The book service restarts: snapshots with `u` at 1.
    m.arm(0, VenueFault::Restart);
    let from = feed.events.len();
    let s = step(&mut m, &mut rng, 0, false);
    let mut out = Out::default();
    b.on_step(&mut c, &s, &m, &mut out);
    feed.take(&mut out);
    let kinds: Vec<Kind> = feed.since(from).map(|e| e.kind).collect();
    assert!(
        kinds.contains(&Kind::BookValid { update_id: 1 }),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .any(|k| matches!(k, Kind::Quote { update_id: 1, .. }))
    );
    check(&feed, &m, &specs, false, "restarted");

    // A refused resubscription: `Rejected` for the instrument, the
    // venue's words kept; the next attempt is accepted.
    m.arm(0, VenueFault::SequenceGap);
    until_gap(&b, &mut c, &mut m, &mut rng, &mut feed, &specs, 0);
    m.arm(0, VenueFault::RejectSubscription);
    let from = feed.events.len();
    send(&b, &mut c, &mut m, &mut feed, &venue.resubscribe(&specs[0]));
    assert_eq!(feed.outcomes.last(), Some(&Outcome::Rejected));
    let rejected: Vec<_> = feed
        .since(from)
        .filter(|e| matches!(e.kind, Kind::Rejected { .. }))
        .map(|e| e.instrument)
        .collect();
    assert_eq!(rejected, [InstrumentId(0)]);
    let words = if venue == Venue::BybitSpot {
        "Invalid symbol :[orderbook.50.BTCUSDT]"
    } else {
        "error:handler not found,topic:orderbook.50.BTCUSDT"
    };
    assert_eq!(
        feed.adapter.rejection(),
        words.replace("BTCUSDT", &specs[0].symbol)
    );
    assert_eq!(valid(&feed), [false, true]);
    send(&b, &mut c, &mut m, &mut feed, &venue.resubscribe(&specs[0]));
    assert_eq!(valid(&feed), [true, true], "{venue}: accepted again");
    for k in 0..200 {
        let s = step(&mut m, &mut rng, k % 2, k % 3 == 0);
        let mut out = Out::default();
        b.on_step(&mut c, &s, &m, &mut out);
        feed.take(&mut out);
        check(
            &feed,
            &m,
            &specs,
            false,
            &format!("{venue} after, step {k}"),
        );
    }
}
