use super::*;
use crate::market::Ids;
use crate::testutil::{Consumer, deliver};
use tickwire_venues::InstrumentSpec;
use tickwire_venues::book::Limit;
use tickwire_venues::json::INPUT_PADDING;

/// `venue`'s market, its books' ids running as the server runs them.
fn market(venue: Venue) -> Market {
    let mut m = crate::testutil::market(venue, 1);
    for book in &mut m.books {
        book.ids = Ids::of(venue);
    }
    m
}

/// Where a client gets instrument 0's depth diffs raw, and where its REST
/// snapshot is asked for.
fn depth_paths(venue: Venue, symbol: &str) -> (String, String) {
    let s = symbol.to_ascii_lowercase();
    match venue {
        Venue::BinanceSpot => (
            format!("/ws/{s}@depth@100ms"),
            format!("/api/v3/depth?symbol={symbol}&limit=5"),
        ),
        Venue::BinanceUsdM => (
            format!("/public/ws/{s}@depth@100ms"),
            format!("/fapi/v1/depth?symbol={symbol}&limit=5"),
        ),
        _ => (
            format!("/ws/{s}@depth@100ms"),
            format!("/dapi/v1/depth?symbol={symbol}&limit=5"),
        ),
    }
}

/// USD-M's and COIN-M's depth update ids jump as Binance's do (USD-M
/// "Diff. Book Depth Streams": `U=157, u=160, pu=149`; in the recorded
/// streams `U > pu + 1` in 2,324 of 2,362 events): between two events
/// and within one, with `pu` always the previous event's `u`; a REST
/// snapshot's `lastUpdateId` is an id in the range of the event whose
/// state it shows, not always its `u`. Spot's stay back to back (`U` =
/// previous `u` + 1, one id a level changed) and its snapshot says the
/// last `u`.
#[test]
fn futures_depth_ids_jump_and_spot_ids_do_not() {
    for venue in [Venue::BinanceUsdM, Venue::BinanceCoinM, Venue::BinanceSpot] {
        let b = Binance::new(venue);
        let mut m = market(venue);
        let symbol = m.instruments[0].symbol.clone();
        let (ws, rest) = depth_paths(venue, &symbol);
        let mut c = b.open(&ws, &m).unwrap();
        let mut rng = StdRng::seed_from_u64(3);
        let mut step = Step::default();
        let mut prev_u = m.books[0].update_id;
        let (events, mut between, mut within, mut inside) = (2000u64, 0u64, 0u64, 0u64);
        for _ in 0..events {
            m.step(0, &mut rng, false, &mut step);
            let mut out = Out::default();
            b.on_step(&mut c, &step, &m, &mut out);
            assert_eq!(out.items.len(), 1, "{venue}: one depth event");
            let d: serde_json::Value = serde_json::from_str(out.items[0].0.text()).unwrap();
            let (first, last) = (d["U"].as_u64().unwrap(), d["u"].as_u64().unwrap());
            let changed =
                (d["b"].as_array().unwrap().len() + d["a"].as_array().unwrap().len()).max(1) as u64;
            assert!(first <= last, "{venue}: {d}");
            if venue == Venue::BinanceSpot {
                assert_eq!(first, prev_u + 1, "{venue}: {d}");
                assert_eq!(last - first + 1, changed, "{venue}: {d}");
                assert!(d.get("pu").is_none(), "{venue}: {d}");
            } else {
                assert_eq!(d["pu"].as_u64(), Some(prev_u), "{venue}: {d}");
                between += u64::from(first > prev_u + 1);
                within += u64::from(last - first + 1 > changed);
            }
            let r = b.rest(&rest, &m);
            assert_eq!(r.status, 200, "{}", r.body);
            let snapshot: serde_json::Value = serde_json::from_str(&r.body).unwrap();
            let id = snapshot["lastUpdateId"].as_u64().unwrap();
            assert!(
                (first..=last).contains(&id),
                "{venue}: lastUpdateId {id} outside the last event's {first}..={last}"
            );
            inside += u64::from(id < last);
            prev_u = last;
        }
        if venue == Venue::BinanceSpot {
            assert_eq!(inside, 0, "spot's snapshot says the last u");
        } else {
            // As the recorded streams: nearly every event jumps.
            assert!(
                between * 10 >= events * 9,
                "{venue}: {between} of {events} jumped"
            );
            assert!(
                within * 2 >= events,
                "{venue}: {within} of {events} skipped inside"
            );
            assert!(
                inside * 4 >= events,
                "{venue}: {inside} of {events} snapshots inside"
            );
        }
    }
}

/// Instrument `n`'s REST snapshot as the feed asks for it (at the limit
/// of a book showing 20 levels): the limit, and the body.
fn take_snapshot(b: &Binance, m: &Market, n: usize) -> (usize, String) {
    let market = b.market();
    let (_, path) = plan::binance::snapshot_path(market, &m.instruments[n].symbol, 20);
    let r = b.rest(&path, m);
    assert_eq!(r.status, 200, "{}", r.body);
    (plan::binance::snapshot_limit(market, 20), r.body)
}

/// A snapshot fed into the adapter as the feed feeds it.
fn feed_snapshot(
    adapter: &mut tickwire_venues::binance::Adapter,
    n: usize,
    (limit, body): (usize, String),
    events: &mut Vec<tickwire_venues::Event>,
) {
    let mut buf = body.into_bytes();
    let len = buf.len();
    buf.resize(len + INPUT_PADDING, 0);
    let id = tickwire_venues::InstrumentId(n as u32);
    adapter
        .on_snapshot_at(id, Limit::Levels(limit), &mut buf, len, 0, &mut |e| {
            events.push(e)
        })
        .unwrap();
}

/// The simulated markets against tickwire's own Binance adapter, with no
/// network: time and again the connection drops, diffs come, a REST
/// snapshot is taken between two steps and applied a few diffs later (as
/// the feed's fetch returns while the stream goes on), and from then on
/// both books are valid and equal to the market's after every step: over
/// the futures' jumping ids, the rule `U <= lastUpdateId <= u` for the
/// first diff and `pu` = previous `u` after it; over spot's, `U` =
/// previous `u` + 1.
#[test]
fn the_adapter_keeps_every_market_s_books_over_its_ids() {
    for venue in [Venue::BinanceUsdM, Venue::BinanceCoinM, Venue::BinanceSpot] {
        let b = Binance::new(venue);
        let mut m = market(venue);
        let specs: Vec<InstrumentSpec> = m
            .instruments
            .iter()
            .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 20))
            .collect();
        let mut adapter =
            tickwire_venues::binance::Adapter::new(venue.binance_market().unwrap(), &specs);
        let names: Vec<String> = m
            .instruments
            .iter()
            .map(|i| format!("{}@depth@100ms", i.symbol.to_ascii_lowercase()))
            .collect();
        let route = if venue == Venue::BinanceUsdM {
            "/public"
        } else {
            ""
        };
        let mut c = b
            .open(&format!("{route}/stream?streams={}", names.join("/")), &m)
            .unwrap();
        let mut consumer = Consumer::new([20, 20]);
        let mut rng = StdRng::seed_from_u64(5);
        let (mut step, mut k, mut events) = (Step::default(), 0usize, Vec::new());
        let mut next = |m: &mut Market,
                        adapter: &mut tickwire_venues::binance::Adapter,
                        events: &mut Vec<tickwire_venues::Event>| {
            m.step(k % 2, &mut rng, k % 3 == 0, &mut step);
            k += 1;
            let mut out = Out::default();
            b.on_step(&mut c, &step, m, &mut out);
            for (frame, _) in out.items {
                deliver(adapter, frame.text(), events);
            }
        };
        for round in 0..30 {
            adapter.on_disconnect(0, &mut |e| events.push(e));
            // Diffs of both books come before the snapshots are taken...
            for _ in 0..2 + round % 3 {
                next(&mut m, &mut adapter, &mut events);
            }
            let snapshots = [take_snapshot(&b, &m, 0), take_snapshot(&b, &m, 1)];
            // ... and go on while they are on their way.
            for _ in 0..round % 4 {
                next(&mut m, &mut adapter, &mut events);
            }
            for (n, snapshot) in snapshots.into_iter().enumerate() {
                feed_snapshot(&mut adapter, n, snapshot, &mut events);
            }
            for e in events.drain(..) {
                consumer.on(&e);
            }
            for j in 0..40 {
                next(&mut m, &mut adapter, &mut events);
                for e in events.drain(..) {
                    assert!(
                        !matches!(e.kind, tickwire_venues::Kind::Gap { .. }),
                        "{venue}, round {round}: {e:?}"
                    );
                    consumer.on(&e);
                }
                for n in 0..2 {
                    // A spot snapshot whose `lastUpdateId` is the last
                    // diff's `u` waits for the next diff to bridge it.
                    match consumer.levels(n) {
                        Some(levels) => assert_eq!(
                            levels,
                            m.books[n].levels(20),
                            "{venue}, round {round}, instrument {n}"
                        ),
                        None => assert!(j < 2, "{venue}, round {round}: {n} not valid"),
                    }
                }
            }
        }
    }
}

#[test]
fn subscriptions_are_answered_like_binance() {
    let b = Binance::new(Venue::BinanceSpot);
    let mut m = market(Venue::BinanceSpot);
    let mut c = b.open("/ws", &m).unwrap();
    let mut out = Out::default();
    let mut ask = |c: &mut Client, m: &mut Market, text: &str| {
        b.on_text(c, text, m, &mut out);
        out.items.pop().unwrap().0.into_text()
    };
    let a = ask(
        &mut c,
        &mut m,
        r#"{"method":"SUBSCRIBE","params":["btcusdt@trade","btcusdt@depth@100ms"],"id":7}"#,
    );
    assert_eq!(a, r#"{"result":null,"id":7}"#);
    assert_eq!(c.streams, [(0, Kind::Trade), (0, Kind::Depth)]);
    // A symbol that does not exist: acknowledged, and nothing comes.
    let a = ask(
        &mut c,
        &mut m,
        r#"{"method":"SUBSCRIBE","params":["btcusdx@depth"],"id":8}"#,
    );
    assert_eq!(a, r#"{"result":null,"id":8}"#);
    assert_eq!(c.streams.len(), 2);
    let a = ask(&mut c, &mut m, r#"{"method":"LIST_SUBSCRIPTIONS","id":9}"#);
    assert_eq!(
        a,
        r#"{"result":["btcusdt@trade","btcusdt@depth@100ms"],"id":9}"#
    );
    let a = ask(
        &mut c,
        &mut m,
        r#"{"method":"UNSUBSCRIBE","params":["btcusdt@trade"],"id":10}"#,
    );
    assert_eq!(a, r#"{"result":null,"id":10}"#);
    assert_eq!(c.streams, [(0, Kind::Depth)]);
    let a = ask(
        &mut c,
        &mut m,
        r#"{"method":"SUBSCRIBE","params":["@@@x###"],"id":11}"#,
    );
    assert_eq!(
        a,
        r#"{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":11}"#
    );
    let a = ask(&mut c, &mut m, "not json");
    assert!(a.contains(r#""code":3"#), "{a}");
    // An armed refusal: the next subscription of the book is refused.
    m.arm(1, crate::VenueFault::RejectSubscription);
    let a = ask(
        &mut c,
        &mut m,
        r#"{"method":"SUBSCRIBE","params":["ethusdt@depth"],"id":12}"#,
    );
    assert!(a.contains(r#""code":2"#), "{a}");
    let a = ask(
        &mut c,
        &mut m,
        r#"{"method":"SUBSCRIBE","params":["ethusdt@depth"],"id":13}"#,
    );
    assert_eq!(a, r#"{"result":null,"id":13}"#);
}

#[test]
fn rest_limits_follow_each_market() {
    let m = market(Venue::BinanceUsdM);
    let b = Binance::new(Venue::BinanceUsdM);
    let r = b.rest("/fapi/v1/depth?symbol=BTCUSDT&limit=7", &m);
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        r#"{"code":-4021,"msg":"'7' is not valid depth limit."}"#
    );
    let r = b.rest("/fapi/v1/depth?symbol=BTCUSDT&limit=5", &m);
    assert_eq!(r.status, 200);
    assert!(
        r.body.starts_with(r#"{"lastUpdateId":1000000,"E":"#),
        "{}",
        r.body
    );
    // Five levels a side: four separators each.
    assert_eq!(r.body.matches("],[").count(), 8, "{}", r.body);
    let r = b.rest("/fapi/v1/depth?symbol=BTCUSDX", &m);
    assert_eq!(
        (r.status, r.body.as_str()),
        (400, r#"{"code":-1121,"msg":"Invalid symbol."}"#)
    );
    let spot = Binance::new(Venue::BinanceSpot);
    let m = market(Venue::BinanceSpot);
    let r = spot.rest("/api/v3/depth?symbol=BTCUSDT&limit=3", &m);
    assert_eq!(r.status, 200);
    assert!(r.body.contains(r#"["59999.99000000","#), "{}", r.body);
    assert_eq!(spot.rest("/fapi/v1/depth?symbol=BTCUSDT", &m).status, 404);
}

#[test]
fn usdm_paths_serve_their_tier_only() {
    let b = Binance::new(Venue::BinanceUsdM);
    let m = market(Venue::BinanceUsdM);
    let c = b
        .open("/market/stream?streams=btcusdt@aggTrade/btcusdt@depth", &m)
        .unwrap();
    assert!(Binance::served(c.tier, Kind::AggTrade) && !Binance::served(c.tier, Kind::Depth));
    let c = b.open("/public/ws/btcusdt@depth", &m).unwrap();
    assert!(!c.combined && Binance::served(c.tier, Kind::Trade));
    assert!(b.open("/private/ws", &m).is_err());
}

/// The event type of a message (`depthUpdate`, `trade`, ...), raw or
/// combined.
fn event_type(text: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let data = v.get("data").unwrap_or(&v);
    data["e"].as_str().unwrap_or_default().to_owned()
}

/// USD-M serves `@depth`, `@bookTicker` and `@trade` on `/public` only
/// and `@aggTrade` on `/market` only ("Important WebSocket Change
/// Notice"); a stream subscribed on the other path is acknowledged and
/// never delivered (it "fails silently rather than erroring", Binance
/// CaaS "Market Data Streams"), whether subscribed by a request or named
/// in the URL.
#[test]
fn usdm_streams_on_the_wrong_path_are_acknowledged_and_never_delivered() {
    let b = Binance::new(Venue::BinanceUsdM);
    let mut m = market(Venue::BinanceUsdM);
    let names = "btcusdt@depth@100ms/btcusdt@bookTicker/btcusdt@trade/btcusdt@aggTrade";
    let request = r#"{"method":"SUBSCRIBE","params":["btcusdt@depth@100ms","btcusdt@bookTicker","btcusdt@trade","btcusdt@aggTrade"],"id":1}"#;
    let public = ["bookTicker", "depthUpdate", "trade"];
    let mut rng = StdRng::seed_from_u64(7);
    let mut step = Step::default();
    for (path, by_request, want) in [
        ("/public/ws", true, &public[..]),
        ("/market/ws", true, &["aggTrade"][..]),
        (
            &format!("/public/stream?streams={names}"),
            false,
            &public[..],
        ),
        (
            &format!("/market/stream?streams={names}"),
            false,
            &["aggTrade"][..],
        ),
    ] {
        let mut c = b.open(path, &m).unwrap();
        let mut out = Out::default();
        if by_request {
            b.on_text(&mut c, request, &mut m, &mut out);
            assert_eq!(out.items[0].0.text(), r#"{"result":null,"id":1}"#, "{path}");
            out.items.clear();
        }
        let mut got = std::collections::BTreeSet::new();
        for k in 0..200 {
            m.step(0, &mut rng, k % 2 == 0, &mut step);
            b.on_step(&mut c, &step, &m, &mut out);
            got.extend(
                out.items
                    .drain(..)
                    .map(|(frame, _)| event_type(frame.text())),
            );
        }
        assert_eq!(
            got.iter().map(String::as_str).collect::<Vec<_>>(),
            want,
            "{path}"
        );
    }
}
