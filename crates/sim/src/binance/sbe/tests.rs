//! The SBE streams against the JSON streams of the same market, message
//! by message, and against tickwire's own adapter.

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Value;
use tickwire_sbe::spot_stream::{self, Level, Message};
use tickwire_venues::book::Limit;
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec, Venue};

use super::super::{Binance, Client};
use super::{DEPTH20, NO_API_KEY, admit};
use crate::VenueFault;
use crate::market::{Ids, Step};
use crate::protocol::{Frame, Market, Out, Protocol, StampKey};
use crate::stamps::StreamKind;
use crate::testutil::{Consumer, market};

/// Whether the JSON decimal `text` (`"59999.99000000"`) is the value
/// `mantissa` × 10^`exponent`: compared exactly, at the finer of the two
/// scales.
fn same_value(text: &str, mantissa: i64, exponent: i8) -> bool {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits: i128 = format!("{int}{frac}").parse().unwrap();
    let text_exponent = -(frac.len() as i32);
    let exponent = i32::from(exponent);
    let finest = text_exponent.min(exponent);
    let scale = |v: i128, e: i32| v * 10i128.pow((e - finest) as u32);
    scale(digits, text_exponent) == scale(i128::from(mantissa), exponent)
}

/// `levels` as JSON writes them (`[["price","qty"],..]`) equal to the SBE
/// ones, in order.
fn same_levels(json: &Value, sbe: &[Level], price_exponent: i8, qty_exponent: i8) -> bool {
    let json = json.as_array().unwrap();
    json.len() == sbe.len()
        && json.iter().zip(sbe).all(|(j, l)| {
            same_value(j[0].as_str().unwrap(), l.price, price_exponent)
                && same_value(j[1].as_str().unwrap(), l.qty, qty_exponent)
        })
}

/// A client of `b` that asked for `streams` of both instruments, its
/// reply checked.
fn subscribed(b: &Binance, m: &mut Market, streams: &[&str]) -> Client {
    let mut c = b.open("/ws", m).unwrap();
    let params: Vec<String> = ["btcusdt", "ethusdt"]
        .iter()
        .flat_map(|s| streams.iter().map(move |k| format!("{s}@{k}")))
        .collect();
    let request = serde_json::json!({"method": "SUBSCRIBE", "params": params, "id": 1});
    let mut out = Out::default();
    b.on_text(&mut c, &request.to_string(), m, &mut out);
    assert_eq!(out.items.len(), 1);
    assert_eq!(out.items[0].0.text(), r#"{"result":null,"id":1}"#);
    c
}

/// A decoded book message: its key, fixed fields, bids and asks.
type Book<H> = (Option<StampKey>, H, Vec<Level>, Vec<Level>);

/// What the decoded SBE messages of one step were, with their keys.
#[derive(Default)]
struct SbeStep {
    trades: Vec<(
        Option<StampKey>,
        spot_stream::TradesHead,
        Vec<spot_stream::Trade>,
    )>,
    quotes: Vec<(Option<StampKey>, spot_stream::BestBidAskHead)>,
    diffs: Vec<Book<spot_stream::DiffHead>>,
    books: Vec<Book<spot_stream::SnapshotHead>>,
}

fn decode_all(items: &[(Frame, Option<StampKey>)], symbol: &str) -> SbeStep {
    let mut s = SbeStep::default();
    for (frame, key) in items {
        let Frame::Binary(bytes) = frame else {
            panic!("an SBE market event in a text frame: {frame:?}")
        };
        let message = spot_stream::decode(bytes).unwrap();
        let key = *key;
        match message {
            Message::Trades(t) => {
                assert_eq!(t.symbol(), symbol.as_bytes());
                s.trades.push((key, t.head(), t.trades().collect()));
            }
            Message::BestBidAsk(q) => {
                assert_eq!(q.symbol(), symbol.as_bytes());
                s.quotes.push((key, q.head()));
            }
            Message::DepthDiff(d) => {
                assert_eq!(d.symbol(), symbol.as_bytes());
                s.diffs
                    .push((key, d.head(), d.bids().collect(), d.asks().collect()));
            }
            Message::DepthSnapshot(d) => {
                assert_eq!(d.symbol(), symbol.as_bytes());
                s.books
                    .push((key, d.head(), d.bids().collect(), d.asks().collect()));
            }
            Message::Unknown { template_id } => panic!("template {template_id}"),
        }
    }
    s
}

/// One seeded market, stepped for a JSON spot client and an SBE client:
/// every SBE event decodes (with the schema's own decoder) into the
/// values of the JSON event of the same step: trade ids, prices, sizes
/// and sides, quotes and their update ids, diffs with their `U`, `u` and
/// levels, times in µs where JSON's are ms; each is stamped under the same
/// key; a lost book message is lost on both; and `depth20` is the book's
/// top 20 after the step, unstamped. Each of the four templates is
/// written.
#[test]
fn every_sbe_event_says_what_the_json_event_of_the_same_step_says() {
    let json = Binance::new(Venue::BinanceSpot);
    let sbe = Binance::new(Venue::BinanceSpotSbe);
    let mut m = market(Venue::BinanceSpot, 1);
    let mut jc = subscribed(&json, &mut m, &["trade", "bookTicker", "depth"]);
    let mut sc = subscribed(&sbe, &mut m, &["trade", "bestBidAsk", "depth", "depth20"]);
    let mut rng = StdRng::seed_from_u64(11);
    let mut step = Step::default();
    let (mut trades, mut quotes, mut diffs, mut books, mut lost) = (0, 0, 0, 0, 0);
    let mut seen = [false; 3];
    for k in 0..600 {
        let n = k % 2;
        if k % 97 == 50 {
            m.arm(n, VenueFault::SequenceGap);
        }
        m.step(n, &mut rng, k % 3 == 0, &mut step);
        let (mut jo, mut so) = (Out::default(), Out::default());
        json.on_step(&mut jc, &step, &m, &mut jo);
        sbe.on_step(&mut sc, &step, &m, &mut so);
        let spec = &m.instruments[n];
        // The step's exponents: the scales', or one or two decimals finer.
        let finer = (step.last_id % 3) as i8;
        seen[finer as usize] = true;
        let (pe, qe) = (
            -(spec.price_scale as i8) - finer,
            -(spec.size_scale as i8) - finer,
        );
        let f = 10i64.pow(finer as u32);
        let got = decode_all(&so.items, &spec.symbol);
        let (mut jt, mut jq, mut jd) = (None, None, None);
        for (frame, key) in &jo.items {
            let v: Value = serde_json::from_str(frame.text()).unwrap();
            match v["e"].as_str() {
                Some("trade") => jt = Some((v, *key)),
                Some("depthUpdate") => jd = Some((v, *key)),
                None => jq = Some((v, *key)),
                Some(other) => panic!("{other}"),
            }
        }
        let us = |v: &Value| v.as_i64().unwrap() * 1000;

        // The trade.
        assert_eq!(got.trades.len(), usize::from(jt.is_some()), "step {k}");
        if let Some((j, key)) = jt {
            let (skey, head, list) = &got.trades[0];
            assert_eq!(skey, &key, "step {k}: stamped as JSON's");
            assert_eq!(*skey, Some((n, StreamKind::Trade, step.trade.unwrap().id)));
            assert_eq!((head.price_exponent, head.qty_exponent), (pe, qe));
            assert_eq!(head.event_time_us, us(&j["E"]));
            assert_eq!(head.transact_time_us, us(&j["T"]));
            assert_eq!(list.len(), 1, "one trade an event here");
            let t = list[0];
            assert_eq!(t.id, j["t"].as_i64().unwrap());
            assert!(same_value(j["p"].as_str().unwrap(), t.price, pe), "{j}");
            assert!(same_value(j["q"].as_str().unwrap(), t.qty, qe), "{j}");
            assert_eq!(Value::Bool(t.is_buyer_maker), j["m"]);
            trades += 1;
        }

        // The best bid and ask.
        assert_eq!(got.quotes.len(), usize::from(jq.is_some()), "step {k}");
        if let Some((j, key)) = jq {
            let (skey, q) = &got.quotes[0];
            assert_eq!(skey, &key, "step {k}: stamped as JSON's");
            assert_eq!(*skey, Some((n, StreamKind::BookTicker, step.last_id)));
            assert_eq!(q.book_update_id, j["u"].as_i64().unwrap());
            assert_eq!(q.event_time_us, step.time_ms as i64 * 1000);
            assert_eq!((q.price_exponent, q.qty_exponent), (pe, qe));
            for (level, (p, s)) in [(q.bid, ("b", "B")), (q.ask, ("a", "A"))] {
                assert!(same_value(j[p].as_str().unwrap(), level.price, pe), "{j}");
                assert!(same_value(j[s].as_str().unwrap(), level.qty, qe), "{j}");
            }
            quotes += 1;
        }

        // The diff, lost on both when lost.
        assert_eq!(got.diffs.len(), usize::from(jd.is_some()), "step {k}");
        lost += usize::from(step.faults.drop_book);
        assert_eq!(jd.is_none(), step.faults.drop_book, "step {k}");
        if let Some((j, key)) = jd {
            let (skey, head, bids, asks) = &got.diffs[0];
            assert_eq!(skey, &key, "step {k}: stamped as JSON's");
            assert_eq!(*skey, Some((n, StreamKind::Depth, step.last_id)));
            assert_eq!(head.first_update_id, j["U"].as_i64().unwrap());
            assert_eq!(head.last_update_id, j["u"].as_i64().unwrap());
            assert_eq!(head.event_time_us, us(&j["E"]));
            assert_eq!((head.price_exponent, head.qty_exponent), (pe, qe));
            assert!(same_levels(&j["b"], bids, pe, qe), "{j}");
            assert!(same_levels(&j["a"], asks, pe, qe), "{j}");
            diffs += 1;
        }

        // depth20: the book after the step, whatever was lost.
        assert_eq!(got.books.len(), 1, "step {k}");
        let (skey, head, bids, asks) = &got.books[0];
        assert_eq!(*skey, None, "a snapshot is not stamped");
        assert_eq!(head.book_update_id, step.last_id as i64);
        assert_eq!(head.event_time_us, step.time_ms as i64 * 1000);
        assert_eq!((head.price_exponent, head.qty_exponent), (pe, qe));
        let (want_bids, want_asks) = m.books[n].levels(DEPTH20);
        let pairs = |l: &[Level]| l.iter().map(|l| (l.price, l.qty)).collect::<Vec<_>>();
        let scaled = |l: Vec<(i64, i64)>| l.into_iter().map(|(p, q)| (p * f, q * f)).collect();
        assert_eq!(
            (pairs(bids), pairs(asks)),
            (scaled(want_bids), scaled(want_asks))
        );
        assert_eq!(bids.len(), DEPTH20);
        books += 1;
    }
    assert!(trades > 100 && quotes > 100 && diffs > 500 && books == 600);
    assert!(lost >= 5, "{lost} diffs lost");
    assert_eq!(seen, [true; 3], "every exponent written");
}

/// A step written after a later one of its instrument (a burst: the
/// server makes every step before it writes them) gets no `depth20`: it
/// would show the later book under its own id. The later one does.
#[test]
fn depth20_is_written_only_while_the_book_is_at_the_step() {
    let sbe = Binance::new(Venue::BinanceSpotSbe);
    let mut m = market(Venue::BinanceSpot, 2);
    let mut c = subscribed(&sbe, &mut m, &["depth20"]);
    let mut rng = StdRng::seed_from_u64(3);
    let (mut first, mut second) = (Step::default(), Step::default());
    m.step(0, &mut rng, false, &mut first);
    m.step(0, &mut rng, false, &mut second);
    let mut out = Out::default();
    sbe.on_step(&mut c, &first, &m, &mut out);
    assert!(out.items.is_empty(), "{:?}", out.items);
    sbe.on_step(&mut c, &second, &m, &mut out);
    let got = decode_all(&out.items, "BTCUSDT");
    assert_eq!(got.books.len(), 1);
    assert_eq!(got.books[0].1.book_update_id, second.last_id as i64);
}

/// The SBE streams' names are SBE's: JSON spot's own names are
/// acknowledged there and silent (as a name of no stream is), and the SBE
/// names are acknowledged and silent on JSON spot; by request or by URL.
/// `LIST_SUBSCRIPTIONS` says the names as subscribed.
#[test]
fn each_encoding_serves_its_own_stream_names_only() {
    let json = Binance::new(Venue::BinanceSpot);
    let sbe = Binance::new(Venue::BinanceSpotSbe);
    let mut m = market(Venue::BinanceSpot, 4);
    let json_only = [
        "bookTicker",
        "aggTrade",
        "depth@100ms",
        "depth@250ms",
        "depth@500ms",
    ];
    let sbe_only = ["bestBidAsk", "depth20"];
    let silent = [
        (&sbe, subscribed(&sbe, &mut m, &json_only)),
        (&json, subscribed(&json, &mut m, &sbe_only)),
        (&sbe, sbe.open("/ws/btcusdt@bookTicker", &m).unwrap()),
        (
            &sbe,
            sbe.open("/stream?streams=btcusdt@aggTrade/btcusdt@depth@100ms", &m)
                .unwrap(),
        ),
        (&json, json.open("/ws/btcusdt@bestBidAsk", &m).unwrap()),
        (
            &json,
            json.open("/stream?streams=btcusdt@depth20", &m).unwrap(),
        ),
    ];
    let mut rng = StdRng::seed_from_u64(5);
    let mut step = Step::default();
    for (k, (b, mut c)) in silent.into_iter().enumerate() {
        assert!(!b.subscribed(&c), "client {k}");
        for j in 0..50 {
            m.step(j % 2, &mut rng, true, &mut step);
            let mut out = Out::default();
            b.on_step(&mut c, &step, &m, &mut out);
            assert!(out.items.is_empty(), "client {k}: {:?}", out.items);
        }
    }
    let mut c = subscribed(&sbe, &mut m, &["trade", "bestBidAsk", "depth", "depth20"]);
    assert!(sbe.subscribed(&c));
    let mut out = Out::default();
    sbe.on_text(
        &mut c,
        r#"{"method":"LIST_SUBSCRIPTIONS","id":2}"#,
        &mut m,
        &mut out,
    );
    assert_eq!(
        out.items[0].0.text(),
        r#"{"result":["btcusdt@trade","btcusdt@bestBidAsk","btcusdt@depth","btcusdt@depth20","ethusdt@trade","ethusdt@bestBidAsk","ethusdt@depth","ethusdt@depth20"],"id":2}"#
    );
}

/// A combined connection gets the very frames a raw one does: no
/// wrapper around a binary event.
#[test]
fn combined_streams_carry_the_bare_binary_events() {
    let sbe = Binance::new(Venue::BinanceSpotSbe);
    let mut m = market(Venue::BinanceSpot, 6);
    let names = "btcusdt@trade/btcusdt@bestBidAsk/btcusdt@depth/btcusdt@depth20";
    let mut raw = sbe.open(&format!("/ws/{names}"), &m).unwrap();
    let mut combined = sbe.open(&format!("/stream?streams={names}"), &m).unwrap();
    assert!(combined.combined);
    let mut rng = StdRng::seed_from_u64(7);
    let mut step = Step::default();
    let mut seen = 0;
    for k in 0..40 {
        m.step(0, &mut rng, k % 2 == 0, &mut step);
        let (mut a, mut b) = (Out::default(), Out::default());
        sbe.on_step(&mut raw, &step, &m, &mut a);
        sbe.on_step(&mut combined, &step, &m, &mut b);
        assert!(!a.items.is_empty());
        assert_eq!(a.items, b.items);
        seen += a.items.len();
    }
    assert!(seen >= 100, "{seen}");
}

/// `serverShutdown` on the SBE streams: the bare JSON event, in text, on
/// raw and combined connections alike (JSON spot wraps it on combined
/// ones).
#[test]
fn the_shutdown_notice_is_bare_json_on_every_sbe_connection() {
    let sbe = Binance::new(Venue::BinanceSpotSbe);
    let json = Binance::new(Venue::BinanceSpot);
    let m = market(Venue::BinanceSpot, 8);
    for path in ["/ws", "/ws/btcusdt@trade", "/stream?streams=btcusdt@depth"] {
        let c = sbe.open(path, &m).unwrap();
        let notice = sbe.shutdown_notice(&c).unwrap();
        let v: Value = serde_json::from_str(&notice).unwrap();
        assert_eq!(v["e"], "serverShutdown", "{path}: {notice}");
        assert!(v["E"].as_u64().unwrap() > 1_600_000_000_000, "ms: {notice}");
        assert_eq!(v.as_object().unwrap().len(), 2, "{notice}");
    }
    let c = json.open("/stream?streams=btcusdt@depth", &m).unwrap();
    let notice = json.shutdown_notice(&c).unwrap();
    assert!(
        notice.starts_with(r#"{"stream":"!serverShutdown""#),
        "{notice}"
    );
}

/// An upgrade without an API key is refused (400, `No X-MBX-APIKEY
/// header`, as nautilus_trader PR #4092 saw it); a key of any content is
/// taken, its header's name in any case. JSON spot takes any upgrade.
#[test]
fn the_upgrade_needs_an_api_key_on_sbe_only() {
    let sbe = Binance::new(Venue::BinanceSpotSbe);
    let json = Binance::new(Venue::BinanceSpot);
    let headers = |fields: &[(&str, &str)]| -> Vec<(String, String)> {
        fields
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    };
    let host = ("Host", "127.0.0.1");
    for refused in [
        headers(&[host]),
        headers(&[host, ("X-MBX-APIKEY", "")]),
        headers(&[host, ("X-MBX-APIKEY", "   ")]),
        headers(&[host, ("X-MBX-APIKEYS", "k")]),
    ] {
        let r = sbe.admit("/ws", &refused).unwrap_err();
        assert_eq!(
            (r.status, r.body.as_str()),
            (400, NO_API_KEY),
            "{refused:?}"
        );
        assert_eq!(r.body, "No X-MBX-APIKEY header");
        assert!(json.admit("/ws", &refused).is_ok());
    }
    for taken in [
        headers(&[host, ("X-MBX-APIKEY", "any-key")]),
        headers(&[("x-mbx-apikey", "k"), host]),
        headers(&[("X-Mbx-ApiKey", "dGhlIGtleQ==")]),
    ] {
        assert!(sbe.admit("/stream?streams=x", &taken).is_ok(), "{taken:?}");
        assert!(admit(&taken).is_ok());
    }
}

/// Instrument `n`'s REST snapshot as the feed asks for it, into the
/// adapter.
fn feed_snapshot(
    b: &Binance,
    m: &Market,
    adapter: &mut tickwire_venues::binance::Adapter,
    n: usize,
    events: &mut Vec<tickwire_venues::Event>,
) {
    let market = tickwire_venues::binance::Market::Spot;
    let (_, path) =
        tickwire_venues::plan::binance::snapshot_path(market, &m.instruments[n].symbol, 20);
    let r = b.rest(&path, m);
    assert_eq!(r.status, 200, "{}", r.body);
    let limit = tickwire_venues::plan::binance::snapshot_limit(market, 20);
    let mut buf = r.body.into_bytes();
    let len = buf.len();
    buf.resize(len + INPUT_PADDING, 0);
    adapter
        .on_snapshot_at(
            InstrumentId(n as u32),
            Limit::Levels(limit),
            &mut buf,
            len,
            0,
            &mut |e| events.push(e),
        )
        .unwrap();
}

/// The SBE streams through tickwire's own adapter (`on_binary`, the
/// feed's path for binary frames), with the SBE venue's own REST
/// snapshots: after the bridge both books stay valid and equal to the
/// market's, and every stamped message's id is the one the adapter
/// reports for it (what the feed's latency stages look up).
#[test]
fn the_adapter_keeps_the_books_from_the_sbe_streams() {
    let b = Binance::new(Venue::BinanceSpotSbe);
    let mut m = market(Venue::BinanceSpot, 9);
    for book in &mut m.books {
        book.ids = Ids::of(Venue::BinanceSpotSbe);
    }
    let specs: Vec<InstrumentSpec> = m
        .instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 20))
        .collect();
    let mut adapter = tickwire_venues::binance::Adapter::new(
        Venue::BinanceSpotSbe.binance_market().unwrap(),
        &specs,
    );
    let mut c = subscribed(&b, &mut m, &["trade", "bestBidAsk", "depth", "depth20"]);
    let mut consumer = Consumer::new([20, 20]);
    let mut rng = StdRng::seed_from_u64(13);
    let mut step = Step::default();
    let mut events = Vec::new();
    let (mut reported_trades, mut reported_quotes) = (0, 0);
    let mut next = |k: usize,
                    m: &mut Market,
                    adapter: &mut tickwire_venues::binance::Adapter,
                    events: &mut Vec<tickwire_venues::Event>| {
        m.step(k % 2, &mut rng, k.is_multiple_of(3), &mut step);
        let mut out = Out::default();
        b.on_step(&mut c, &step, m, &mut out);
        for (frame, key) in out.items {
            let Frame::Binary(bytes) = frame else {
                panic!("text: {frame:?}")
            };
            let from = events.len();
            adapter
                .on_binary(&bytes, 0, &mut |e| events.push(e))
                .unwrap();
            let Some((n, kind, id)) = key else { continue };
            for e in &events[from..] {
                assert_eq!(e.instrument, InstrumentId(n as u32));
                match (kind, e.kind) {
                    (StreamKind::Trade, tickwire_venues::Kind::Trade { trade_id, .. }) => {
                        assert_eq!(trade_id, id);
                        reported_trades += 1;
                    }
                    (StreamKind::BookTicker, tickwire_venues::Kind::Quote { update_id, .. }) => {
                        assert_eq!(update_id, id);
                        reported_quotes += 1;
                    }
                    (StreamKind::Depth, tickwire_venues::Kind::BookDelta { update_id, .. }) => {
                        assert_eq!(update_id, id);
                    }
                    _ => {}
                }
            }
        }
    };
    let mut k = 0;
    // Diffs come before the snapshots are taken, and after.
    for _ in 0..3 {
        next(k, &mut m, &mut adapter, &mut events);
        k += 1;
    }
    feed_snapshot(&b, &m, &mut adapter, 0, &mut events);
    feed_snapshot(&b, &m, &mut adapter, 1, &mut events);
    for _ in 0..400 {
        next(k, &mut m, &mut adapter, &mut events);
        k += 1;
        for e in events.drain(..) {
            assert!(
                !matches!(e.kind, tickwire_venues::Kind::Gap { .. }),
                "step {k}: {e:?}"
            );
            consumer.on(&e);
        }
        for n in 0..2 {
            // A snapshot whose `lastUpdateId` is the last diff's `u`
            // waits for the next diff to bridge it.
            match consumer.levels(n) {
                Some(levels) => assert_eq!(levels, m.books[n].levels(20), "step {k}, {n}"),
                None => assert!(k < 8, "step {k}: {n} not valid"),
            }
        }
    }
    assert!(reported_trades > 50 && reported_quotes > 50);
}
