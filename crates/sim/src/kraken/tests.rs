use rand::SeedableRng;
use rand::rngs::StdRng;
use tickwire_venues::book::Side;
use tickwire_venues::kraken::Adapter;
use tickwire_venues::plan::Channels;
use tickwire_venues::sync::Resync;
use tickwire_venues::{Event, InstrumentId, InstrumentSpec, Kind, Outcome, Venue, VenueAdapter};

use super::*;
use crate::VenueFault;
use crate::testutil;

fn market() -> Market {
    testutil::market(Venue::Kraken, 1)
}

/// Sends `text` and returns every reply.
fn ask(k: &Kraken, c: &mut Client, m: &mut Market, text: &str) -> Vec<String> {
    let mut out = Out::default();
    k.on_text(c, text, m, &mut out);
    out.items.into_iter().map(|(t, _)| t.into_text()).collect()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A reply with its times checked and removed, for comparing whole.
fn timeless(text: &str) -> String {
    let mut v = json(text);
    let m = v.as_object_mut().unwrap();
    for key in ["time_in", "time_out"] {
        let t = m.remove(key).unwrap_or_else(|| panic!("{key}: {text}"));
        assert!(
            tickwire_venues::time::rfc3339_ns(t.as_str().unwrap()).is_some(),
            "{text}"
        );
    }
    // serde_json keeps keys sorted: Kraken's replies are in that order.
    assert_eq!(
        text.split(r#","time_in""#).next(),
        v.to_string().strip_suffix('}')
    );
    v.to_string()
}

#[test]
fn replies_and_refusals_in_kraken_shapes() {
    let k = Kraken::new();
    let mut m = market();
    assert_eq!(k.open("/", &m).err().map(|r| r.status), Some(404));
    assert_eq!(k.open("/v1", &m).err().map(|r| r.status), Some(404));
    let Ok(mut c) = k.open("/v2", &m) else {
        panic!("/v2 is served")
    };
    let mut out = Out::default();
    k.on_open(&mut c, &mut m, &mut out);
    let status = json(out.items[0].0.text());
    assert_eq!(status["channel"], "status");
    assert_eq!(status["data"][0]["system"], "online");
    assert!(status["data"][0]["connection_id"].as_u64().unwrap() > 1 << 53);

    // One acknowledgement per symbol, each with its snapshot; the unknown
    // symbol refused on its own.
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD","XBT/USD","ETH/USD"],"depth":25},"req_id":1}"#,
    );
    assert_eq!(r.len(), 5, "{r:?}");
    assert_eq!(
        timeless(&r[0]),
        r#"{"method":"subscribe","req_id":1,"result":{"channel":"book","depth":25,"snapshot":true,"symbol":"BTC/USD"},"success":true}"#
    );
    let snapshot = json(&r[1]);
    assert_eq!(
        (snapshot["channel"].as_str(), snapshot["type"].as_str()),
        (Some("book"), Some("snapshot"))
    );
    let data = &snapshot["data"][0];
    assert_eq!(data["bids"].as_array().unwrap().len(), 25);
    assert!(data["checksum"].as_u64().is_some() && data["timestamp"].is_string());
    // Prices at the pair's precision, trailing zeros kept.
    assert!(
        r[1].contains(r#"{"price":59999.9,"qty":"#),
        "{}",
        &r[1][..200]
    );
    assert_eq!(
        timeless(&r[2]),
        r#"{"error":"Currency pair not supported XBT/USD","method":"subscribe","req_id":1,"success":false,"symbol":"XBT/USD"}"#
    );
    assert!(r[3].contains(r#""symbol":"ETH/USD"}"#) && r[4].contains(r#""type":"snapshot""#));
    // Again: refused, and no snapshot.
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD"],"depth":10}}"#,
    );
    assert_eq!(
        r.iter().map(|t| timeless(t)).collect::<Vec<_>>(),
        [
            r#"{"error":"Already subscribed","method":"subscribe","success":false,"symbol":"BTC/USD"}"#
        ]
    );
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD"],"depth":27,"snapshot":true}}"#,
    );
    assert_eq!(
        timeless(&r[0]),
        r#"{"error":"Subscription depth not supported","method":"subscribe","success":false}"#
    );
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"candles","symbol":["BTC/USD"]},"req_id":4}"#,
    );
    assert_eq!(
        timeless(&r[0]),
        r#"{"error":"Unsupported event","method":"subscribe","req_id":4,"success":false}"#
    );
    for bad in [
        "not json",
        r#"{"method":"subscribe"}"#,
        r#"{"method":"subscribe","params":{"channel":"book","symbol":"BTC/USD"}}"#,
        r#"{"method":"launch"}"#,
    ] {
        let r = ask(&k, &mut c, &mut m, bad);
        assert_eq!(
            timeless(&r[0]),
            r#"{"error":"Malformed request","method":"error","success":false}"#,
            "{bad}"
        );
    }
    let r = ask(&k, &mut c, &mut m, r#"{"method":"ping","req_id":101}"#);
    assert_eq!(timeless(&r[0]), r#"{"method":"pong","req_id":101}"#);
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"ping","params":{},"req_id":0}"#,
    );
    assert_eq!(
        timeless(&r[0]),
        r#"{"error":"Unsupported field: 'params' for the given msg type: ping","method":"ping","req_id":0,"success":false}"#
    );
    // Unsubscribe: acknowledged with the depth; a second time, not found.
    let unsub =
        r#"{"method":"unsubscribe","params":{"channel":"book","symbol":["BTC/USD"],"depth":25}}"#;
    let r = ask(&k, &mut c, &mut m, unsub);
    assert_eq!(
        timeless(&r[0]),
        r#"{"method":"unsubscribe","result":{"channel":"book","depth":25,"symbol":"BTC/USD"},"success":true}"#
    );
    let r = ask(&k, &mut c, &mut m, unsub);
    assert!(r[0].starts_with(r#"{"error":"Subscription Not Found","method":"unsubscribe","success":false,"symbol":"BTC/USD""#), "{}", r[0]);
    // An armed refusal takes the next subscription of that book only.
    m.arm(0, VenueFault::RejectSubscription);
    let sub = r#"{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD"]}}"#;
    let r = ask(&k, &mut c, &mut m, sub);
    assert_eq!(
        timeless(&r[0]),
        r#"{"error":"Currency pair not supported BTC/USD","method":"subscribe","success":false,"symbol":"BTC/USD"}"#
    );
    let r = ask(&k, &mut c, &mut m, sub);
    assert!(
        r[0].contains(r#""depth":10,"snapshot":true"#) && r.len() == 2,
        "{r:?}"
    );
    // The instrument channel: the documented acknowledgement, then one
    // large snapshot with every pair's precisions.
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"instrument"},"req_id":79}"#,
    );
    assert_eq!(
        timeless(&r[0]),
        r#"{"method":"subscribe","req_id":79,"result":{"channel":"instrument","snapshot":true,"warnings":["tick_size is deprecated, use price_increment"]},"success":true}"#
    );
    assert!(
        r[1].len() > 500_000
            && r[1].starts_with(r#"{"channel":"instrument","type":"snapshot","data":{"assets":["#)
    );
    // Trades without a snapshot by default; the ticker with one.
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"trade","symbol":["BTC/USD"]}}"#,
    );
    assert_eq!(r.len(), 1);
    assert!(r[0].contains(r#""snapshot":false"#));
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD"],"event_trigger":"bbo"}}"#,
    );
    let t = json(&r[1]);
    assert_eq!(
        (t["type"].as_str(), t["data"][0]["bid"].as_f64()),
        (Some("snapshot"), Some(59999.9))
    );
}

#[test]
fn trade_and_ticker_snapshots_tell_the_recent_market() {
    let k = Kraken::new();
    let mut m = market();
    let Ok(mut c) = k.open("/v2", &m) else {
        panic!("/v2 is served")
    };
    let (mut rng, mut step, mut out) = (StdRng::seed_from_u64(3), Step::default(), Out::default());
    for _ in 0..120 {
        m.step(0, &mut rng, true, &mut step);
        k.on_step(&mut c, &step, &m, &mut out);
    }
    assert!(out.items.is_empty(), "nothing subscribed, nothing sent");
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"trade","symbol":["BTC/USD"],"snapshot":true}}"#,
    );
    let snapshot = json(&r[1]);
    let trades = snapshot["data"].as_array().unwrap();
    assert_eq!(
        (snapshot["type"].as_str(), trades.len()),
        (Some("snapshot"), 50)
    );
    let ids: Vec<u64> = trades
        .iter()
        .map(|t| t["trade_id"].as_u64().unwrap())
        .collect();
    assert_eq!(*ids.last().unwrap(), m.books[0].trade_id);
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "oldest first: {ids:?}"
    );
    let r = ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD"]}}"#,
    );
    let t = json(&r[1]);
    let d = &t["data"][0];
    assert_eq!(d["trades"].as_u64(), Some(120));
    assert!(d["low"].as_f64() <= d["vwap"].as_f64() && d["vwap"].as_f64() <= d["high"].as_f64());
    assert!(d["volume"].as_f64().unwrap() > 0.0, "{d}");
}

#[test]
fn heartbeats_while_subscribed_and_a_silent_idle_client_is_closed() {
    let k = Kraken::new();
    let mut m = market();
    let Ok(mut c) = k.open("/v2", &m) else {
        panic!("/v2 is served")
    };
    let mut out = Out::default();
    let t0 = Instant::now();
    // No subscription: kept while it talks, closed after 60 s of silence.
    assert_eq!(
        k.on_tick(&mut c, t0, Duration::from_secs(59), &mut out),
        Tick::Keep
    );
    assert_eq!(
        k.on_tick(&mut c, t0, Duration::from_secs(60), &mut out),
        Tick::Close(CloseCode::NORMAL, "")
    );
    // A client that pings is not silent.
    assert_eq!(ask(&k, &mut c, &mut m, r#"{"method":"ping"}"#).len(), 1);
    assert_eq!(
        k.on_tick(&mut c, t0, Duration::from_millis(5), &mut out),
        Tick::Keep
    );
    assert!(out.items.is_empty(), "no heartbeat before a subscription");
    // Subscribed: a heartbeat a second, whatever else flows, and silence
    // is no reason to close.
    ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"subscribe","params":{"channel":"trade","symbol":["ETH/USD"]}}"#,
    );
    let start = Instant::now();
    let mut beats = 0;
    for ms in (0..10_000).step_by(10) {
        let now = start + Duration::from_millis(ms);
        assert_eq!(
            k.on_tick(&mut c, now, Duration::from_secs(600), &mut out),
            Tick::Keep
        );
        beats += out
            .items
            .drain(..)
            .filter(|(t, _)| t.text() == HEARTBEAT)
            .count();
    }
    assert!((9..=10).contains(&beats), "{beats}");
    // Nothing subscribed any more: no heartbeats, and silence closes again.
    ask(
        &k,
        &mut c,
        &mut m,
        r#"{"method":"unsubscribe","params":{"channel":"trade","symbol":["ETH/USD"]}}"#,
    );
    let later = start + Duration::from_secs(20);
    assert!(matches!(
        k.on_tick(&mut c, later, Duration::from_secs(61), &mut out),
        Tick::Close(..)
    ));
    assert!(out.items.is_empty());
}

/// A simulated Kraken connection feeding the venue's tickwire adapter, with
/// no network in between.
struct Rig {
    kraken: Kraken,
    market: Market,
    client: Client,
    adapter: Adapter,
    specs: Vec<InstrumentSpec>,
    rng: StdRng,
    step: Step,
    /// Every event, in order.
    events: Vec<Event>,
}

impl Rig {
    /// BTC/USD shows 10 levels (subscribed at 10), ETH/USD 20 (at 25);
    /// the venue's default scales, so the checksum's precisions come from
    /// the instrument channel.
    fn new() -> Rig {
        let (ps, ss) = Venue::Kraken.default_scales();
        let specs = vec![
            InstrumentSpec::new("BTC/USD", ps, ss, 10),
            InstrumentSpec::new("ETH/USD", ps, ss, 20),
        ];
        let kraken = Kraken::new();
        let mut market = market();
        let Ok(mut client) = kraken.open("/v2", &market) else {
            panic!("/v2 is served")
        };
        let mut out = Out::default();
        kraken.on_open(&mut client, &mut market, &mut out);
        let mut rig = Rig {
            adapter: Adapter::new(&specs),
            kraken,
            market,
            client,
            specs,
            rng: StdRng::seed_from_u64(7),
            step: Step::default(),
            events: Vec::new(),
        };
        rig.deliver(out);
        rig
    }

    /// Every message of `out` into the adapter; their outcomes.
    fn deliver(&mut self, out: Out) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        for (frame, key) in out.items {
            let from = self.events.len();
            let outcome = testutil::deliver(&mut self.adapter, frame.text(), &mut self.events);
            // A trade is stamped under the id the adapter reports.
            if let Some((n, StreamKind::Trade, id)) = key {
                let ids: Vec<(u32, u64)> = self.events[from..]
                    .iter()
                    .filter_map(|e| match e.kind {
                        Kind::Trade { trade_id, .. } => Some((e.instrument.0, trade_id)),
                        _ => None,
                    })
                    .collect();
                assert_eq!(ids, [(n as u32, id)]);
            }
            outcomes.push(outcome);
        }
        outcomes
    }

    fn send(&mut self, text: &str) -> Vec<Outcome> {
        let mut out = Out::default();
        self.kraken
            .on_text(&mut self.client, text, &mut self.market, &mut out);
        self.deliver(out)
    }

    /// The plan's subscription frames, in order.
    fn subscribe(&mut self) -> Vec<Outcome> {
        let plans = Venue::Kraken
            .plans(&self.specs, Channels::default())
            .unwrap();
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0].path, "/v2");
        let frames = plans[0].subscribe.clone();
        frames.iter().flat_map(|f| self.send(f)).collect()
    }

    /// One market step of instrument `n` (a trade every third), through the
    /// protocol into the adapter.
    fn step(&mut self, n: usize, k: usize) {
        self.market
            .step(n, &mut self.rng, k.is_multiple_of(3), &mut self.step);
        let mut out = Out::default();
        self.kraken
            .on_step(&mut self.client, &self.step, &self.market, &mut out);
        self.deliver(out);
    }

    /// Whether the adapter's book of `n` is valid and shows what the
    /// market's top levels are, at the shown depth.
    fn equal(&self, n: usize) -> Option<bool> {
        let book = self.adapter.book(InstrumentId(n as u32))?;
        let spec = &self.market.instruments[n];
        let depth = self.specs[n].depth;
        let (ps, ss) = (self.specs[n].price_scale, self.specs[n].size_scale);
        let up = |v: i64, from: u8, to: u8| v * 10i64.pow(u32::from(to - from));
        let (bids, asks) = self.market.books[n].levels(depth);
        let ours = |side| -> Vec<(i64, i64)> {
            book.levels(side)
                .iter()
                .map(|l| (l.price, l.size))
                .collect()
        };
        let theirs = |levels: Vec<(i64, i64)>| -> Vec<(i64, i64)> {
            levels
                .into_iter()
                .map(|(p, q)| (up(p, spec.price_scale, ps), up(q, spec.size_scale, ss)))
                .collect()
        };
        Some(ours(Side::Bid) == theirs(bids) && ours(Side::Ask) == theirs(asks))
    }

    /// The kinds of the events of instrument `n` from `from` on.
    fn kinds(&self, n: usize, from: usize) -> Vec<Kind> {
        self.events[from..]
            .iter()
            .filter(|e| e.instrument.0 as usize == n)
            .map(|e| e.kind)
            .filter(|k| !matches!(k, Kind::Trade { .. } | Kind::Quote { .. }))
            .collect()
    }
}

#[test]
fn the_adapter_keeps_the_markets_books_through_losses_bad_checksums_and_refusals() {
    let mut rig = Rig::new();
    // ETH/USD's book subscription will be refused once.
    rig.market.arm(1, VenueFault::RejectSubscription);
    let outcomes = rig.subscribe();
    assert!(outcomes.contains(&Outcome::Rejected), "{outcomes:?}");
    assert_eq!(rig.kinds(1, 0), [Kind::Rejected { code: 0 }]);
    assert_eq!(
        rig.adapter.rejection(),
        "Currency pair not supported ETH/USD"
    );
    assert_eq!(rig.equal(0), Some(true));
    assert_eq!(rig.equal(1), None);
    // Subscribed again, it comes.
    let again = Venue::Kraken.resubscribe(&rig.specs[1]);
    rig.send(&again[1]);
    assert_eq!(rig.equal(1), Some(true));

    let (mut trades, mut quotes) = (0, 0);
    // Steps at which a book is expected not to be valid, or stale.
    // (first event, step) of each book's fault still to be found.
    let mut lost: [Option<(usize, usize)>; 2] = [None, None];
    let mut recovered = [0; 2];
    for k in 0..4000 {
        let n = k % 2;
        match k {
            400 => {
                rig.market.arm(0, VenueFault::SequenceGap);
                lost[0] = Some((rig.events.len(), k));
            }
            1600 => {
                rig.market.arm(1, VenueFault::BadChecksum);
                lost[1] = Some((rig.events.len(), k));
            }
            2800 => {
                rig.market.arm(1, VenueFault::SequenceGap);
                lost[1] = Some((rig.events.len(), k));
            }
            _ => {}
        }
        let from = rig.events.len();
        rig.step(n, k);
        let step = rig.step.clone();
        // Trades and quotes: the step's, at the adapter's scales.
        for e in &rig.events[from..] {
            let s = 10i64.pow(u32::from(10 - rig.market.instruments[n].price_scale));
            match e.kind {
                Kind::Trade {
                    price,
                    size,
                    aggressor,
                    trade_id,
                } => {
                    let t = step.trade.expect("a trade");
                    assert_eq!((price, size, trade_id), (t.price * s, t.size, t.id));
                    assert_eq!(
                        aggressor == tickwire_venues::Aggressor::Buy,
                        t.buyer_aggressor
                    );
                    trades += 1;
                }
                Kind::Quote {
                    bid_price,
                    bid_size,
                    ask_price,
                    ask_size,
                    ..
                } => {
                    let ((bp, bq), (ap, aq)) = step.top.expect("a new top");
                    assert_eq!(
                        (bid_price, bid_size, ask_price, ask_size),
                        (bp * s, bq, ap * s, aq)
                    );
                    quotes += 1;
                }
                _ => {}
            }
        }
        if let Some((since, at)) = lost[n] {
            let kinds: Vec<Kind> = rig
                .kinds(n, since)
                .into_iter()
                .filter(|k| !matches!(k, Kind::BookDelta { .. }))
                .collect();
            if kinds.contains(&Kind::Resync) {
                // Found: a gap (the checksum), then a resync (updates the
                // checksum vouched for may come before); the other book
                // untouched.
                assert!(
                    matches!(
                        kinds[..],
                        [
                            Kind::Gap {
                                why: Resync::Checksum { .. }
                            },
                            Kind::Resync
                        ]
                    ),
                    "{kinds:?}"
                );
                let other = rig.kinds(1 - n, since);
                assert!(
                    !other
                        .iter()
                        .any(|k| matches!(k, Kind::Gap { .. } | Kind::Resync)),
                    "{other:?}"
                );
                assert_eq!(rig.equal(n), None);
                for frame in Venue::Kraken.resubscribe(&rig.specs[n]) {
                    rig.send(&frame);
                }
                assert_eq!(rig.equal(n), Some(true), "valid again at step {k}");
                recovered[n] += 1;
                lost[n] = None;
            } else {
                // A loss shows at the first update the checksum can see it
                // in: a few of the instrument's steps.
                assert!(k < at + 200, "fault of step {at} not found by step {k}");
            }
        }
        for (i, lost) in lost.iter().enumerate() {
            if lost.is_none() {
                assert_eq!(rig.equal(i), Some(true), "instrument {i} at step {k}");
            }
        }
    }
    assert_eq!(recovered, [1, 2]);
    assert!(trades > 1000 && quotes > 500, "{trades} {quotes}");
    assert!(rig.adapter.checksums_verified > 3000);
}

#[test]
fn a_book_sent_before_its_precision_is_asked_for_again_once_it_is_known() {
    let mut rig = Rig::new();
    // The book first, then the instrument channel: the snapshot cannot be
    // checked, so the book waits, and asks for a new one.
    let book =
        r#"{"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD"],"depth":10}}"#;
    assert_eq!(rig.send(book), [Outcome::Control, Outcome::Data]);
    assert_eq!(rig.equal(0), None);
    assert!(rig.kinds(0, 0).is_empty());
    rig.send(r#"{"method":"subscribe","params":{"channel":"instrument"}}"#);
    assert_eq!(rig.kinds(0, 0), [Kind::Resync]);
    let from = rig.events.len();
    for frame in Venue::Kraken.resubscribe(&rig.specs[0]) {
        rig.send(&frame);
    }
    assert!(matches!(
        rig.kinds(0, from).last(),
        Some(Kind::BookValid { .. })
    ));
    for k in 0..200 {
        rig.step(0, k);
        assert_eq!(rig.equal(0), Some(true));
    }
}
