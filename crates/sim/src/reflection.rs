//! The matching engine seen from the clients: what orders change in the
//! books reaches every client's feed as market data (a Binance feed keeps
//! books equal to the simulator's through crossing orders, resting orders
//! and cancels), and the server's side of it over a real connection (a
//! request's steps written to every client before any further random
//! step, private events to their account, orders cancelled when their
//! client is gone). Beside the venues, as `refusals` is: the engine
//! (`crate::exchange`) names none of them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tickwire_testkit::ws::Client;
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentSpec, Kind, Venue, plan};

use crate::SimConfig;
use crate::binance::Binance;
use crate::exchange::{Account, NewOrder, PrivateEvent, SimKey, Tif};
use crate::market::{Ids, Step};
use crate::protocol::{Market, Out, Protocol, Response};
use crate::server::Running;
use crate::testutil::{Consumer, deliver};
use crate::time::now_ms;

fn order(account: Account, instrument: usize, buy: bool, price: i64, size: i64) -> NewOrder {
    NewOrder {
        account,
        instrument,
        buy,
        price,
        size,
        tif: Tif::Gtc,
        post_only: false,
        client_id: String::new(),
    }
}

/// Orders of every kind on both instruments of `m`, drawn from `rng`:
/// resting near the top, crossing a few levels deep, cancels and amends.
fn trade_some(m: &mut Market, rng: &mut StdRng) {
    for _ in 0..rng.random_range(1..4) {
        let n = rng.random_range(0..2);
        let ((bid, bid_size), (ask, ask_size)) = m.books[n].top();
        let buy = rng.random_bool(0.5);
        match rng.random_range(0..5) {
            // Crossing: through the top level and into the next.
            0 => {
                let (price, size) = if buy {
                    (ask + 2, ask_size + 1)
                } else {
                    (bid - 2, bid_size + 1)
                };
                let _ = m.place(order(0, n, buy, price, size), now_ms());
            }
            1 => {
                let open: Vec<u64> = m.open_orders(0, Some(n)).map(|o| o.id).collect();
                if let Some(&id) = open.first() {
                    let _ = m.cancel(0, id, now_ms());
                }
            }
            2 => {
                let open: Vec<_> = m.open_orders(0, Some(n)).cloned().collect();
                if let Some(o) = open.last() {
                    let _ = m.amend(0, o.id, o.price, o.filled + 1, now_ms());
                }
            }
            // Resting at or near the top.
            _ => {
                let off = rng.random_range(0..3);
                let price = if buy { bid - off } else { ask + off };
                let size = rng.random_range(1..=bid_size.max(2));
                let _ = m.place(order(0, n, buy, price, size), now_ms());
            }
        }
    }
}

/// Crossing orders, resting orders and cancels between the random steps:
/// tickwire's own Binance adapter, fed the depth diffs of both, keeps both
/// books valid (no gap) and equal to the simulator's after every change,
/// over spot's contiguous ids and the futures' jumping ones.
#[test]
fn a_binance_feed_keeps_the_simulator_s_books_through_orders() {
    for venue in [Venue::BinanceSpot, Venue::BinanceUsdM] {
        let b = Binance::new(venue);
        let mut m = crate::testutil::market(venue, 3);
        for book in &mut m.books {
            book.ids = Ids::of(venue);
        }
        m = m.with_keys(vec![SimKey::hmac("k", "s")], 3);
        let specs: Vec<InstrumentSpec> = m
            .instruments
            .iter()
            .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 20))
            .collect();
        let bmarket = venue.binance_market().unwrap();
        let mut adapter = tickwire_venues::binance::Adapter::new(bmarket, &specs);
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
        let mut events = Vec::new();
        let mut rng = StdRng::seed_from_u64(11);
        let mut step = Step::default();
        // A diff of each book, then their snapshots (as a feed takes them:
        // diffs first, buffered, then the snapshot).
        for n in 0..2 {
            m.step(n, &mut rng, false, &mut step);
            let mut out = Out::default();
            b.on_step(&mut c, &step, &m, &mut out);
            for (frame, _) in out.items {
                deliver(&mut adapter, frame.text(), &mut events);
            }
        }
        for n in 0..2 {
            let (_, path) = plan::binance::snapshot_path(bmarket, &m.instruments[n].symbol, 20);
            let r = b.rest(&path, &m);
            assert_eq!(r.status, 200, "{}", r.body);
            let mut buf = r.body.into_bytes();
            let len = buf.len();
            buf.resize(len + INPUT_PADDING, 0);
            let limit = plan::binance::snapshot_limit(bmarket, 20);
            let id = tickwire_venues::InstrumentId(n as u32);
            adapter
                .on_snapshot_at(
                    id,
                    tickwire_venues::book::Limit::Levels(limit),
                    &mut buf,
                    len,
                    0,
                    &mut |e| events.push(e),
                )
                .unwrap();
        }
        let (mut trades, mut resting) = (0, 0);
        for k in 0..1500 {
            let mut steps = Vec::new();
            if k % 2 == 1 {
                trade_some(&mut m, &mut rng);
                let (engine, private) = m.take_engine();
                trades += engine.iter().filter(|s| s.trade.is_some()).count();
                assert!(private.iter().all(|e| e.order().account == 0));
                steps = engine;
            } else {
                m.step(k / 2 % 2, &mut rng, k % 3 == 0, &mut step);
                steps.push(step.clone());
                let (engine, _) = m.take_engine();
                assert!(engine.is_empty(), "a random step makes no engine step");
            }
            resting += m.open_orders(0, None).count();
            let mut out = Out::default();
            for s in &steps {
                b.on_step(&mut c, s, &m, &mut out);
            }
            for (frame, _) in out.items {
                deliver(&mut adapter, frame.text(), &mut events);
            }
            for e in events.drain(..) {
                assert!(!matches!(e.kind, Kind::Gap { .. }), "{venue}, {k}: {e:?}");
                consumer.on(&e);
            }
            if k < 4 {
                // The snapshots wait for a diff of each book to bridge.
                continue;
            }
            for n in 0..2 {
                assert_eq!(
                    consumer.levels(n),
                    Some(m.books[n].levels(20)),
                    "{venue}, {k}, instrument {n}"
                );
            }
        }
        assert!(trades > 200 && resting > 1000, "{trades} {resting}");
    }
}

/// A venue of a few words, for the server's side of trading: `login KEY`,
/// `buy PRICE SIZE`, `sell PRICE SIZE`, `ping`; a client opened at
/// `/watch` is sent a snapshot of instrument 0 and every step of it.
struct Toy;

#[derive(Default)]
struct ToyClient {
    account: Option<Account>,
    watching: bool,
}

/// Levels as `price:size,...`.
fn levels(l: &[(i64, i64)]) -> String {
    l.iter()
        .map(|(p, s)| format!("{p}:{s}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl Protocol for Toy {
    type Client = ToyClient;

    fn open(&self, path: &str, _: &Market) -> Result<ToyClient, Response> {
        Ok(ToyClient {
            account: None,
            watching: path == "/watch",
        })
    }

    fn subscribed(&self, client: &ToyClient) -> bool {
        client.watching
    }

    fn on_open(&self, client: &mut ToyClient, market: &mut Market, out: &mut Out) {
        if client.watching {
            let book = &market.books[0];
            let (bids, asks) = book.levels(usize::MAX);
            out.push(format!(
                "snap {} {} {}",
                book.update_id,
                levels(&bids),
                levels(&asks)
            ));
        }
    }

    fn on_text(&self, client: &mut ToyClient, text: &str, market: &mut Market, out: &mut Out) {
        let words: Vec<&str> = text.split(' ').collect();
        let reply = match (words.as_slice(), client.account) {
            (["ping"], _) => "pong".to_string(),
            (["login", key], _) => {
                client.account = market.key(key).map(|(a, _)| a);
                format!("login {:?}", client.account)
            }
            ([side @ ("buy" | "sell"), price, size], Some(account)) => {
                let o = order(
                    account,
                    0,
                    *side == "buy",
                    price.parse().unwrap(),
                    size.parse().unwrap(),
                );
                match market.place(o, now_ms()) {
                    Ok(o) => format!("placed {} {}", o.id, o.filled),
                    Err(e) => format!("refused {e:?}"),
                }
            }
            _ => "?".to_string(),
        };
        out.push(reply);
    }

    fn on_step(&self, client: &mut ToyClient, step: &Step, _: &Market, out: &mut Out) {
        if client.watching && step.instrument == 0 {
            out.push(format!(
                "step {} {} {} {} {}",
                step.prev_id,
                step.last_id,
                step.trade.map_or(0, |t| t.size),
                levels(&step.bids),
                levels(&step.asks)
            ));
        }
    }

    fn on_private(
        &self,
        client: &mut ToyClient,
        events: &[PrivateEvent],
        _: &Market,
        out: &mut Out,
    ) {
        for e in events {
            let o = e.order();
            if Some(o.account) == client.account {
                let fill = match e {
                    PrivateEvent::Trade { size, maker, .. } => {
                        format!("{size} {}", if *maker { "maker" } else { "taker" })
                    }
                    PrivateEvent::Order(_) => "0".into(),
                };
                out.push(format!("private {} {:?} {fill}", o.id, o.status));
            }
        }
    }

    fn on_gone(&self, client: &mut ToyClient, market: &mut Market) {
        if let Some(a) = client.account {
            market.cancel_all(a, None, now_ms());
        }
    }
}

/// A book kept from the Toy's snapshot and steps, its ids chained.
#[derive(Default)]
struct Watched {
    bids: std::collections::BTreeMap<i64, i64>,
    asks: std::collections::BTreeMap<i64, i64>,
    last: u64,
    trades: u64,
}

impl Watched {
    fn on(&mut self, text: &str) {
        let w: Vec<&str> = text.split(' ').collect();
        let parse = |side: &mut std::collections::BTreeMap<i64, i64>, l: &str| {
            for level in l.split(',').filter(|l| !l.is_empty()) {
                let (p, s) = level.split_once(':').unwrap();
                let (p, s) = (p.parse().unwrap(), s.parse().unwrap());
                if s == 0 {
                    side.remove(&p);
                } else {
                    side.insert(p, s);
                }
            }
        };
        match w[0] {
            "snap" => {
                self.last = w[1].parse().unwrap();
                parse(&mut self.bids, w[2]);
                parse(&mut self.asks, w[3]);
            }
            "step" => {
                assert_eq!(w[1].parse::<u64>().unwrap(), self.last, "ids chain: {text}");
                self.last = w[2].parse().unwrap();
                self.trades += u64::from(w[3] != "0");
                parse(&mut self.bids, w[4]);
                parse(&mut self.asks, w[5]);
            }
            _ => {}
        }
    }
}

/// Over a real connection: a trader's crossing order is answered, its
/// fills reach it (and nobody else), and the watcher gets the order's
/// steps in line with the random ones; its resting order is cancelled
/// when it goes (`on_gone`), the watcher sees that too, and at the end
/// the watcher's book is the simulator's.
#[test]
fn the_server_hands_out_what_orders_change() {
    let config = SimConfig {
        instruments: vec![crate::SimInstrument {
            levels: 20,
            ..crate::SimInstrument::btcusdt()
        }],
        rate: 1000,
        keys: vec![SimKey::hmac("trader", "s"), SimKey::hmac("other", "t")],
        ..SimConfig::default()
    };
    let (shared, addr, threads) = crate::server::start(config, Toy).unwrap();
    let mut watcher = Client::connect(addr, "/watch");
    let mut book = Watched::default();
    for t in watcher.until("snapshot", |t| t.starts_with("snap")) {
        book.on(&t);
    }
    let mut trader = Client::connect(addr, "/trade");
    let mut other = Client::connect(addr, "/trade");
    trader.send("login trader");
    trader.until("login", |t| t == "login Some(0)");
    other.send("login other");
    other.until("login", |t| t == "login Some(1)");
    // Crossing: the best ask level and one lot of the next, at the price
    // the watcher's book says, the market held still meanwhile (requests
    // are still answered, and their steps written).
    for t in watcher.until("some steps", |t| t.starts_with("step")) {
        book.on(&t);
    }
    shared.pause(true);
    watcher.send("ping");
    for t in watcher.until("pong", |t| t == "pong") {
        book.on(&t);
    }
    let (&ask, &size) = book.asks.iter().next().unwrap();
    let trades_before = book.trades;
    trader.send(&format!("buy {} {}", ask + 1, size + 1));
    let answers = trader.until("placed", |t| t.starts_with("placed"));
    let filled: i64 = answers
        .last()
        .unwrap()
        .split(' ')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(filled, size + 1, "{answers:?}");
    // The watcher has the two trades' steps before any random one.
    let count = std::cell::Cell::new(0);
    let seen = watcher.until("the second trade", |t| {
        count.set(count.get() + u32::from(t.starts_with("step")));
        count.get() == 2
    });
    for t in &seen {
        book.on(t);
    }
    let trades: Vec<&String> = seen.iter().filter(|t| t.starts_with("step")).collect();
    assert_eq!(trades.len(), 2, "{seen:?}");
    assert_eq!(trades[0].split(' ').nth(3), Some(size.to_string().as_str()));
    assert_eq!(trades[1].split(' ').nth(3), Some("1"), "{seen:?}");
    shared.pause(false);
    let private = trader.until("its fills", |t| {
        t.starts_with("private") && t.contains("Filled")
    });
    assert!(
        private
            .iter()
            .any(|t| t.ends_with(&format!(" {size} taker"))),
        "{private:?}"
    );
    // A resting order of the trader's, well below the market.
    let (&bid, _) = book.bids.iter().next_back().unwrap();
    trader.send(&format!("buy {} 7", bid - 5));
    trader.until("placed", |t| t.starts_with("placed"));
    assert_eq!(
        crate::server::lock(&shared.market)
            .exchange
            .all_open()
            .len(),
        1
    );
    // One lot bettering the best bid (or joining it): the market's own
    // trades fill it, and the fill reaches the trader with the step batch.
    shared.pause(true);
    watcher.send("ping");
    for t in watcher.until("pong", |t| t == "pong") {
        book.on(&t);
    }
    let (&best_bid, _) = book.bids.iter().next_back().unwrap();
    let (&best_ask, _) = book.asks.iter().next().unwrap();
    let price = if best_ask - best_bid > 1 {
        best_bid + 1
    } else {
        best_bid
    };
    trader.send(&format!("buy {price} 1"));
    let placed = trader.until("placed", |t| t.starts_with("placed"));
    let id = placed
        .last()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    assert!(placed.last().unwrap().ends_with(" 0"), "{placed:?}");
    shared.pause(false);
    let filled = format!("private {id} Filled 1 maker");
    trader.until("a maker fill", |t| t == filled);
    // The other account heard nothing of it.
    other.send("ping");
    let heard = other.until("pong", |t| t == "pong");
    assert_eq!(heard, ["pong"], "private events go to their account only");
    // The trader goes: its order is cancelled, and the watcher sees it.
    drop(trader);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !shared.open_orders().is_empty() {
        assert!(Instant::now() < deadline, "the order outlived its client");
        std::thread::sleep(Duration::from_millis(5));
    }
    shared.pause(true);
    watcher.send("ping");
    for t in watcher.until("pong", |t| t == "pong") {
        book.on(&t);
    }
    assert!(book.trades > trades_before, "the crossing order's trades");
    let (id, bids, asks) = shared.book(0, usize::MAX).unwrap();
    assert_eq!(book.last, id);
    assert_eq!(
        (
            book.bids
                .iter()
                .rev()
                .map(|(p, s)| (*p, *s))
                .collect::<Vec<_>>(),
            book.asks.iter().map(|(p, s)| (*p, *s)).collect::<Vec<_>>()
        ),
        (bids, asks)
    );
    assert!(!book.bids.contains_key(&(bid - 5)) || book.bids[&(bid - 5)] != 7);
    stop(&shared, threads);
}

fn stop(shared: &Arc<crate::server::Shared<Toy>>, threads: Vec<std::thread::JoinHandle<()>>) {
    shared.stop();
    for t in threads {
        t.join().unwrap();
    }
    shared.close_clients();
}
