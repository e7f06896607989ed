//! The engine's rules, on books without a server: the exchange and the
//! market's steps alone (what the clients see of it is tested beside the
//! venues, in `reflection.rs`).

use proptest::prelude::*;
use rand::{Rng, SeedableRng};

use super::*;
use crate::market::{Ids, Levels};

const T: u64 = 1_700_000_000_000;

/// A 20-level BTCUSDT-like book (ids as `ids` says), and an exchange over
/// it with two accounts.
fn setup(ids: Ids, seed: u64) -> (SimInstrument, Vec<Book>, Exchange, StdRng) {
    let spec = SimInstrument {
        levels: 20,
        ..SimInstrument::btcusdt()
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let books = vec![Book::new(&spec, &mut rng).with_ids(ids)];
    let keys = vec![SimKey::hmac("a", "sa"), SimKey::hmac("b", "sb")];
    (spec, books, Exchange::new(keys, 1, seed), rng)
}

fn order(account: Account, buy: bool, price: i64, size: i64) -> NewOrder {
    NewOrder {
        account,
        instrument: 0,
        buy,
        price,
        size,
        tif: Tif::Gtc,
        post_only: false,
        client_id: String::new(),
    }
}

fn best(book: &Book) -> (i64, i64) {
    let ((b, _), (a, _)) = book.top();
    (b, a)
}

fn level(book: &Book, bid: bool, price: i64) -> i64 {
    level_size(book, bid, price)
}

/// The fills in `events` of order `id`: (size, maker).
fn fills(events: &[PrivateEvent], id: u64) -> Vec<(i64, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            PrivateEvent::Trade {
                order, size, maker, ..
            } if order.id == id => Some((*size, *maker)),
            _ => None,
        })
        .collect()
}

/// A book rebuilt from a snapshot and the steps after it, as a feed keeps
/// it; and the steps' ids chain.
fn replay(from: &Book, steps: &[Step]) -> (Levels, Levels, u64) {
    let mut bids = from.bids.clone();
    let mut asks = from.asks.clone();
    let mut last = from.update_id;
    for s in steps {
        assert_eq!(s.prev_id, last, "ids chain: {s:?}");
        assert!(s.first_id > last && s.last_id >= s.first_id);
        last = s.last_id;
        for (side, levels) in [(&mut bids, &s.bids), (&mut asks, &s.asks)] {
            for &(p, q) in levels {
                if q == 0 {
                    side.remove(&p);
                } else {
                    side.insert(p, q);
                }
            }
        }
    }
    let (b, a) = market::best_levels(&bids, &asks, usize::MAX);
    (b, a, last)
}

#[test]
fn orders_at_a_price_fill_in_time_order_after_the_crowd_ahead() {
    let (_, mut books, mut ex, _) = setup(Ids::Contiguous, 1);
    let (bid, ask) = best(&books[0]);
    let crowd = level(&books[0], true, bid);
    let a = ex.place(&mut books, order(0, true, bid, 300), T).unwrap();
    let b = ex.place(&mut books, order(1, true, bid, 500), T).unwrap();
    assert_eq!((a.status, b.status), (Status::New, Status::New));
    assert_eq!(
        level(&books[0], true, bid),
        crowd + 800,
        "both in the level"
    );
    // A better price goes first, whatever its time.
    let c = ex
        .place(&mut books, order(1, true, bid + 1, 100), T)
        .unwrap();
    assert!(bid + 1 < ask);
    ex.events.clear();
    // A sell down to `bid` of everything but 200 of b.
    let taker = ex
        .place(&mut books, order(0, false, bid, 100 + crowd + 300 + 300), T)
        .unwrap();
    assert_eq!(taker.status, Status::Filled);
    assert_eq!(fills(&ex.events, c.id), [(100, true)]);
    assert_eq!(fills(&ex.events, a.id), [(300, true)], "a before b");
    assert_eq!(fills(&ex.events, b.id), [(300, true)]);
    assert_eq!(
        fills(&ex.events, taker.id),
        [(100, false), (crowd + 600, false)]
    );
    let left: Vec<_> = ex.open_orders(1, None).map(|o| (o.id, o.filled)).collect();
    assert_eq!(left, [(b.id, 300)]);
    assert!(ex.open_orders(0, None).next().is_none());
    assert_eq!(level(&books[0], true, bid), 200, "b's rest alone");
}

#[test]
fn a_crossing_order_takes_level_by_level_and_rests_the_rest() {
    for ids in [Ids::Contiguous, Ids::Jumping] {
        let (_, mut books, mut ex, _) = setup(ids, 2);
        let before = books[0].clone();
        let (_, ask) = best(&books[0]);
        let l1 = level(&books[0], false, ask);
        let l2 = level(&books[0], false, ask + 1);
        let l3 = level(&books[0], false, ask + 2);
        let size = l1 + l2 + 7;
        let o = ex
            .place(&mut books, order(0, true, ask + 1, size), T)
            .unwrap();
        assert_eq!((o.filled, o.status), (l1 + l2, Status::PartiallyFilled));
        // One step a level taken (its trade, the level gone), then the
        // rest resting at the limit.
        let trades: Vec<_> = ex.steps.iter().filter_map(|s| s.trade).collect();
        assert_eq!(
            trades
                .iter()
                .map(|t| (t.price, t.size, t.buyer_aggressor))
                .collect::<Vec<_>>(),
            [(ask, l1, true), (ask + 1, l2, true)]
        );
        assert_eq!(trades[1].id, trades[0].id + 1);
        assert_eq!(ex.steps.len(), 3);
        assert_eq!(ex.steps[0].asks, [(ask, 0)]);
        assert_eq!(ex.steps[2].bids, [(ask + 1, 7)]);
        assert_eq!(best(&books[0]), (ask + 1, ask + 2));
        assert_eq!(level(&books[0], false, ask + 2), l3);
        // The steps bring a copy of the book before to the book after.
        let (bids, asks, last) = replay(&before, &ex.steps);
        assert_eq!((bids, asks), books[0].levels(usize::MAX));
        assert_eq!(last, books[0].update_id);
        assert_eq!(
            ex.open_orders(0, Some(0)).map(|o| o.id).collect::<Vec<_>>(),
            [o.id]
        );
    }
}

#[test]
fn ioc_leaves_nothing_and_fok_fills_whole_or_not_at_all() {
    let (_, mut books, mut ex, _) = setup(Ids::Contiguous, 3);
    let (bid, ask) = best(&books[0]);
    let l1 = level(&books[0], false, ask);
    let mut ioc = order(0, true, ask, l1 + 5);
    ioc.tif = Tif::Ioc;
    let o = ex.place(&mut books, ioc, T).unwrap();
    assert_eq!((o.filled, o.status), (l1, Status::Expired));
    assert!(ex.open_orders(0, None).next().is_none());
    assert_eq!(best(&books[0]).0, bid, "nothing rested");
    let (_, ask) = best(&books[0]);
    let l1 = level(&books[0], false, ask);
    let mut fok = order(0, true, ask, l1 + 1);
    fok.tif = Tif::Fok;
    ex.steps.clear();
    ex.events.clear();
    let book = books[0].clone();
    assert_eq!(ex.place(&mut books, fok.clone(), T), Err(EngineReject::Fok));
    assert!(ex.steps.is_empty() && ex.events.is_empty());
    assert_eq!(books[0].levels(usize::MAX), book.levels(usize::MAX));
    fok.price = ask + 1;
    let o = ex.place(&mut books, fok, T).unwrap();
    assert_eq!((o.filled, o.status), (l1 + 1, Status::Filled));
}

/// Numbers no market has are refused, not overflowed: the engine runs on
/// the market thread, and a request never stops it.
#[test]
fn prices_and_sizes_past_any_market_are_refused() {
    let (spec, mut books, mut ex, mut rng) = setup(Ids::Contiguous, 9);
    let (bid, ask) = best(&books[0]);
    for (price, size, why) in [
        (0, 1, EngineReject::BadPrice),
        (-5, 1, EngineReject::BadPrice),
        (i64::MAX, 1, EngineReject::BadPrice),
        (bid, 0, EngineReject::BadSize),
        (bid, i64::MAX, EngineReject::BadSize),
    ] {
        assert_eq!(
            ex.place(&mut books, order(0, true, price, size), T),
            Err(why)
        );
    }
    let mut far = order(0, true, bid, 1);
    far.instrument = 1;
    assert_eq!(
        ex.place(&mut books, far, T),
        Err(EngineReject::UnknownInstrument)
    );
    // The largest taken, resting on both sides, many of them at a level.
    for _ in 0..64 {
        ex.place(&mut books, order(0, true, bid - 3, MAX_SIZE), T)
            .unwrap();
        ex.place(&mut books, order(1, false, MAX_PRICE, MAX_SIZE), T)
            .unwrap();
    }
    let o = ex
        .place(&mut books, order(1, false, ask + 1, 5), T)
        .unwrap();
    assert_eq!(
        ex.amend(&mut books, 1, o.id, MAX_PRICE.saturating_add(1), 5, T),
        Err(EngineReject::BadPrice)
    );
    let mut out = Step::default();
    for k in 0..500 {
        ex.step(0, &spec, &mut books[0], &mut rng, k % 2 == 0, &mut out);
    }
    let ((b, _), (a, _)) = books[0].top();
    assert!(b < a);
}

#[test]
fn post_only_refuses_to_take() {
    let (_, mut books, mut ex, _) = setup(Ids::Contiguous, 4);
    let (bid, ask) = best(&books[0]);
    let before = books[0].clone();
    for (buy, price) in [(true, ask), (true, ask + 3), (false, bid), (false, bid - 1)] {
        let mut o = order(0, buy, price, 10);
        o.post_only = true;
        assert_eq!(ex.place(&mut books, o, T), Err(EngineReject::WouldTake));
    }
    assert!(ex.steps.is_empty() && ex.events.is_empty());
    assert_eq!(books[0].levels(usize::MAX), before.levels(usize::MAX));
    let mut o = order(0, true, ask - 1, 10);
    o.post_only = true;
    assert_eq!(ex.place(&mut books, o, T).unwrap().status, Status::New);
}

#[test]
fn a_size_down_keeps_the_queue_place_and_a_new_price_loses_it() {
    let (_, mut books, mut ex, _) = setup(Ids::Contiguous, 5);
    let (bid, _) = best(&books[0]);
    let crowd = level(&books[0], true, bid);
    let a = ex.place(&mut books, order(0, true, bid, 300), T).unwrap();
    let b = ex.place(&mut books, order(1, true, bid, 300), T).unwrap();
    let a2 = ex.amend(&mut books, 0, a.id, bid, 200, T + 1).unwrap();
    assert_eq!((a2.id, a2.size, a2.updated_ms), (a.id, 200, T + 1));
    assert_eq!(level(&books[0], true, bid), crowd + 500);
    ex.events.clear();
    ex.place(&mut books, order(1, false, bid, crowd + 200), T)
        .unwrap();
    assert_eq!(fills(&ex.events, a.id), [(200, true)], "a still first");
    assert!(fills(&ex.events, b.id).is_empty());
    // b away and back: behind c, which came while it was away.
    let c = ex.place(&mut books, order(0, true, bid, 100), T).unwrap();
    ex.amend(&mut books, 1, b.id, bid - 1, 300, T).unwrap();
    ex.amend(&mut books, 1, b.id, bid, 300, T).unwrap();
    ex.events.clear();
    ex.place(&mut books, order(1, false, bid, 150), T).unwrap();
    assert_eq!(fills(&ex.events, c.id), [(100, true)], "c first now");
    assert_eq!(fills(&ex.events, b.id), [(50, true)]);
    // A size up loses the place too; below what filled is refused.
    assert_eq!(
        ex.amend(&mut books, 1, b.id, bid, 50, T),
        Err(EngineReject::BadSize)
    );
    assert_eq!(
        ex.amend(&mut books, 0, b.id, bid, 400, T),
        Err(EngineReject::UnknownOrder),
        "another account's order"
    );
    let b2 = ex.amend(&mut books, 1, b.id, bid, 400, T).unwrap();
    assert_eq!(
        (b2.filled, b2.size, b2.status),
        (50, 400, Status::PartiallyFilled)
    );
    assert_eq!(level(&books[0], true, bid), 350);
    // Post-only to a crossing price: refused, the order as it was.
    let (_, ask) = best(&books[0]);
    let mut p = order(0, false, ask + 5, 10);
    p.post_only = true;
    let p = ex.place(&mut books, p, T).unwrap();
    assert_eq!(
        ex.amend(&mut books, 0, p.id, bid, 10, T),
        Err(EngineReject::WouldTake)
    );
    assert!(level(&books[0], false, ask + 5) >= 10);
    assert_eq!(ex.open_orders(0, None).filter(|o| o.id == p.id).count(), 1);
}

#[test]
fn cancel_all_cancels_one_account_s_orders_and_gives_the_levels_back() {
    let (_, mut books, mut ex, _) = setup(Ids::Contiguous, 6);
    let before = books[0].levels(usize::MAX);
    let (bid, ask) = best(&books[0]);
    let mut a = order(0, true, bid - 2, 10);
    a.client_id = "x1".into();
    ex.place(&mut books, a.clone(), T).unwrap();
    assert_eq!(
        ex.place(&mut books, a.clone(), T),
        Err(EngineReject::DuplicateClientId)
    );
    ex.place(&mut books, order(0, false, ask + 3, 20), T)
        .unwrap();
    ex.place(&mut books, order(0, false, ask + 1, 30), T)
        .unwrap();
    let other = ex.place(&mut books, order(1, true, bid, 40), T).unwrap();
    assert_eq!(ex.cancel_all(&mut books, 0, None, T), 3);
    assert_eq!(ex.cancel_all(&mut books, 0, None, T), 0);
    assert_eq!(ex.all_open(), std::slice::from_ref(&other));
    let c = ex.cancel(&mut books, 1, other.id, T).unwrap();
    assert_eq!(c.status, Status::Canceled);
    assert_eq!(
        ex.cancel(&mut books, 1, other.id, T),
        Err(EngineReject::UnknownOrder)
    );
    assert_eq!(books[0].levels(usize::MAX), before, "every level as it was");
    // The client id is free again.
    ex.place(&mut books, a, T).unwrap();
}

/// A random trade at a resting order's level takes the crowd that was
/// ahead of it first (less what left the level meanwhile: a level that
/// shrinks below the crowd ahead takes it from there); the order fills
/// with what is left of the trade, as a maker at its price, until it is
/// filled whole.
#[test]
fn random_trades_fill_a_resting_order_after_the_crowd_ahead() {
    let (mut waited, mut fills_seen) = (0, 0);
    for seed in 0..20 {
        let (w, f) = fill_after_the_crowd(seed);
        waited += w;
        fills_seen += f;
    }
    assert!(waited > 0 && fills_seen > 20, "{waited} {fills_seen}");
}

/// One order's life in [`random_trades_fill_a_resting_order_after_the_crowd_ahead`]:
/// how many trades at its level went to the crowd ahead, and how many
/// fills it had.
fn fill_after_the_crowd(seed: u64) -> (i64, i64) {
    let (spec, mut books, mut ex, mut rng) = setup(Ids::Contiguous, seed);
    let (bid, _) = best(&books[0]);
    let bid = bid - 1;
    let size = 2_500_000;
    let mut ahead = level(&books[0], true, bid);
    let o = ex.place(&mut books, order(0, true, bid, size), T).unwrap();
    ex.events.clear();
    let mut out = Step::default();
    let (mut left, mut fills_seen, mut waited) = (size, 0, 0);
    for _ in 0..20_000 {
        ex.step(0, &spec, &mut books[0], &mut rng, true, &mut out);
        let got: i64 = fills(&ex.events, o.id).iter().map(|f| f.0).sum();
        let want = match out.trade.filter(|t| t.price == bid && !t.buyer_aggressor) {
            Some(t) => {
                let want = (t.size - ahead).clamp(0, left);
                waited += i64::from(want == 0 && ahead > 0);
                ahead = (ahead - t.size).max(0);
                want
            }
            None => 0,
        };
        assert_eq!(got, want, "ahead {ahead}, left {left}: {out:?}");
        for e in ex.events.drain(..) {
            let PrivateEvent::Trade {
                price,
                maker,
                order,
                ..
            } = e
            else {
                panic!("{e:?}");
            };
            assert!(maker && price == bid && order.id == o.id);
            fills_seen += 1;
        }
        left -= got;
        let ((b, _), (a, _)) = books[0].top();
        assert!(b < a);
        if left == 0 {
            break;
        }
        let here = level(&books[0], true, bid);
        assert!(here >= left);
        ahead = ahead.min(here - left);
    }
    assert_eq!(left, 0, "filled in the end");
    assert!(ex.all_open().is_empty());
    (waited, fills_seen)
}

/// A step of a random sequence.
#[derive(Clone, Debug)]
enum Op {
    Place {
        account: usize,
        buy: bool,
        /// Ticks from the other side's best (negative: inside the spread
        /// or crossing).
        off: i64,
        size: i64,
        tif: u8,
        post_only: bool,
    },
    Cancel(usize),
    Amend(usize, i64, i64),
    Steps(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..2usize, any::<bool>(), -3i64..8, 1i64..3_000_000, 0u8..3, any::<bool>()).prop_map(
            |(account, buy, off, size, tif, post_only)| Op::Place { account, buy, off, size, tif, post_only }
        ),
        1 => (0..8usize).prop_map(Op::Cancel),
        1 => (0..8usize, -3i64..3, 1i64..3_000_000).prop_map(|(k, d, s)| Op::Amend(k, d, s)),
        3 => (1u8..30).prop_map(Op::Steps),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the orders and steps: the book is never crossed, no level
    /// holds less than what rests there, every order's size is what was
    /// filled of it plus what rests, and the steps every client is given
    /// bring a copy of the book to the book itself, ids chained.
    #[test]
    fn the_book_stays_sound_whatever_the_orders(
        ops in proptest::collection::vec(op(), 1..60),
        seed in 0u64..1000,
        jumping in any::<bool>(),
    ) {
        let ids = if jumping { Ids::Jumping } else { Ids::Contiguous };
        let (spec, mut books, mut ex, mut rng) = setup(ids, seed);
        let start = books[0].clone();
        let mut sent: Vec<Step> = Vec::new();
        let mut filled: BTreeMap<u64, i64> = BTreeMap::new();
        let mut sizes: BTreeMap<u64, i64> = BTreeMap::new();
        let mut out = Step::default();
        for op in ops {
            match op {
                Op::Place { account, buy, off, size, tif, post_only } => {
                    let (b, a) = best(&books[0]);
                    let price = if buy { a - off } else { b + off };
                    let tif = [Tif::Gtc, Tif::Ioc, Tif::Fok][usize::from(tif)];
                    let o = NewOrder { tif, post_only, ..order(account, buy, price, size) };
                    if let Ok(o) = ex.place(&mut books, o, T) {
                        sizes.insert(o.id, o.size);
                    }
                }
                Op::Cancel(k) => {
                    if let Some(o) = ex.all_open().get(k) {
                        prop_assert!(ex.cancel(&mut books, o.account, o.id, T).is_ok());
                    }
                }
                Op::Amend(k, d, s) => {
                    if let Some(o) = ex.all_open().get(k)
                        && let Ok(a) = ex.amend(&mut books, o.account, o.id, o.price + d, s, T)
                    {
                        sizes.insert(a.id, a.size);
                    }
                }
                Op::Steps(n) => {
                    for k in 0..n {
                        ex.step(0, &spec, &mut books[0], &mut rng, k % 2 == 0, &mut out);
                        sent.push(out.clone());
                    }
                }
            }
            sent.append(&mut ex.steps);
            for e in ex.events.drain(..) {
                if let PrivateEvent::Trade { order, size, .. } = &e {
                    *filled.entry(order.id).or_default() += size;
                    prop_assert_eq!(filled[&order.id], order.filled);
                }
            }
            let ((b, _), (a, _)) = books[0].top();
            prop_assert!(b < a, "crossed: {} >= {}", b, a);
            let mut resting: BTreeMap<(bool, i64), i64> = BTreeMap::new();
            for o in ex.all_open() {
                prop_assert_eq!(o.size, sizes[&o.id]);
                prop_assert_eq!(o.filled, filled.get(&o.id).copied().unwrap_or(0));
                prop_assert!(o.filled < o.size);
                *resting.entry((o.buy, o.price)).or_default() += o.size - o.filled;
            }
            for ((buy, price), size) in resting {
                prop_assert!(level(&books[0], buy, price) >= size, "{} {} below {}", buy, price, size);
            }
        }
        let (bids, asks, last) = replay(&start, &sent);
        prop_assert_eq!((bids, asks), books[0].levels(usize::MAX));
        prop_assert_eq!(last, books[0].update_id);
    }
}

#[test]
fn a_step_without_resting_orders_is_the_walk_s_own() {
    let (spec, mut books, mut ex, mut rng) = setup(Ids::Jumping, 8);
    let mut plain = books[0].clone();
    let mut rng2 = rng.clone();
    let (mut a, mut b) = (Step::default(), Step::default());
    for k in 0..2000 {
        ex.step(0, &spec, &mut books[0], &mut rng, k % 3 == 0, &mut a);
        market::step(0, &spec, &mut plain, &mut rng2, k % 3 == 0, &mut b);
        b.time_ms = a.time_ms;
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "step {k}");
    }
    assert_eq!(rng.random::<u64>(), rng2.random::<u64>());
}
