//! `book_layouts`: the recorded spot BTCUSDT day's depth diffs (values
//! already exact, no decoding) applied to a book's sides alone, in three
//! layouts, taking turns, ns per level:
//!
//! - `Book`: the project's book (`book/ladder.rs`: each side one sorted
//!   array, a gap walked down it through a message), kept 1000 levels deep
//!   as the REST snapshot gave them, settled after each message.
//! - a sorted `Vec` a side, best first (`insert` and `remove`): the layout a
//!   book starts as, for scale.
//! - a tick-indexed side: each price's size at its tick's slot in an array
//!   (a ring over the side's span, a power of two) and a bit a slot saying
//!   it holds a level; the best price kept as levels come and go. A level
//!   costs one store and a bit, no search and nothing moved: the floor of
//!   what applying a level can cost on this data, not a book (it keeps no
//!   wire digits, tracks no horizon, says nothing of what changed).
//!   Its top 20 levels a side are read once a message, as a book showing 20
//!   would, and timed as a row of their own.
//!
//! The diffs stop before the first at which the book's known levels run out
//! (the market leaves the snapshot's 1000 levels), so every layout applies
//! the same levels to a complete book; after the replay every layout's top
//! 20 levels a side must equal the book's, or the bench fails. The tick is
//! the largest step dividing every price of the snapshot (0.01 here).
//! Needs `../shared/samples` (skips with a line when absent).
//!
//! `cargo bench -p tickwire-benches --bench book_layouts [-- ROUNDS 0]`

#![allow(clippy::print_stdout)] // A benchmark reports its results.

#[path = "common/recording.rs"]
mod recording;

use std::hint::black_box;
use std::time::Instant;

use serde_json::Value;
use tickwire_venues::book::{Book, Level, Limit, Side, Window};
use tickwire_venues::decimal::parse_scaled;

/// One level of a diff or the snapshot: side, price and size at 8 decimals.
type Change = (Side, i64, i64);

fn main() {
    let (rounds, _, _) = tickwire_benches::harness_args((9, 0), (1, 0));
    let file = "spot/original/hftbacktest_spot_btcusdt_20240808.gz";
    let Some(msgs) = recording::binance(file) else {
        eprintln!("book_layouts: skipped, ../shared/samples is absent");
        return;
    };
    let (snapshot, diffs) = changes(&msgs);
    let diffs = complete(&snapshot, &diffs);
    let levels: usize = diffs.iter().map(Vec::len).sum();
    let tick = tick_of(&snapshot);
    println!(
        "{file}: {} diffs of {:.1} levels on average, before the book's known levels run out; tick {tick} (at 8 decimals)",
        diffs.len(),
        levels as f64 / diffs.len() as f64
    );

    // Each side's worst snapshot price: nothing worse is known (the book's
    // horizon; Binance's diffs carry changes all through its book).
    let worst = [Side::Bid, Side::Ask].map(|side| {
        let prices = snapshot.iter().filter(|c| c.0 == side).map(|c| c.1);
        let worst = if side == Side::Bid {
            prices.min()
        } else {
            prices.max()
        };
        worst.expect("a snapshot side")
    });

    let mut times: [Vec<f64>; 4] = Default::default();
    let per_level = |t: Instant| t.elapsed().as_nanos() as f64 / levels as f64;
    for _ in 0..rounds.max(1) {
        // The project's book, as the sync engine applies a message.
        let mut book = Book::with_window(20, 1000, Window::Client);
        for &(side, price, size) in &snapshot {
            book.set(side, price, size);
        }
        book.snapshot_done(Limit::Levels(1000));
        let t = Instant::now();
        for diff in &diffs {
            for &(side, price, size) in diff {
                book.set_open(side, Level::new(price, size));
            }
            book.settle();
        }
        times[0].push(per_level(t));
        // What every layout must show at the end: the book's top 20.
        let want = [Side::Bid, Side::Ask].map(|side| {
            let levels = book.levels(side);
            levels.iter().map(|l| (l.price, l.size)).collect::<Vec<_>>()
        });

        // A sorted `Vec` a side, best first.
        let mut sides = [Vec::with_capacity(4096), Vec::with_capacity(4096)];
        for &c in &snapshot {
            vec_set(&mut sides, &worst, c);
        }
        let t = Instant::now();
        for diff in &diffs {
            for &c in diff {
                vec_set(&mut sides, &worst, c);
            }
        }
        times[1].push(per_level(t));
        for (side, want) in sides.iter().zip(&want) {
            let got: Vec<(i64, i64)> = side.iter().take(20).map(|&(p, s)| (p.abs(), s)).collect();
            assert_eq!(&got, want, "a sorted Vec side differs from the book");
        }

        // Tick-indexed sides: levels alone, then levels and the top 20 read.
        for read in [false, true] {
            let mut sides = [Side::Bid, Side::Ask].map(|side| TickSide::new(side, tick));
            for &(side, price, size) in &snapshot {
                sides[side as usize].set(price, size);
            }
            for (s, worst) in sides.iter_mut().zip(worst) {
                s.snapshot_done(worst);
            }
            let mut top = Vec::with_capacity(20);
            let t = Instant::now();
            for diff in &diffs {
                for &(side, price, size) in diff {
                    sides[side as usize].set(price, size);
                }
                if read {
                    for s in &sides {
                        s.top(20, &mut top);
                        black_box(&top);
                    }
                }
            }
            times[2 + usize::from(read)].push(per_level(t));
            for (side, want) in sides.iter().zip(&want) {
                side.top(20, &mut top);
                assert_eq!(&top, want, "a tick-indexed side differs from the book");
            }
        }
    }
    let rows = [
        "Book (the sorted ladder, each message's levels then settle)",
        "a sorted Vec a side, best first",
        "a tick-indexed side: one store and a bit a level",
        "a tick-indexed side, and its top 20 a side read each message",
    ];
    for (name, v) in rows.into_iter().zip(times) {
        let least = v.iter().copied().fold(f64::MAX, f64::min);
        println!(
            "{name}: {:.2} ns a level, median of {} rounds (least {least:.2})",
            recording::median(v),
            rounds.max(1)
        );
    }
}

/// The snapshot's levels and each later depth diff's, at 8 decimals, in
/// the recording's order.
fn changes(msgs: &[(Vec<u8>, usize, bool)]) -> (Vec<Change>, Vec<Vec<Change>>) {
    let value =
        |v: &Value| parse_scaled(v.as_str().expect("a string").as_bytes(), 8).expect("8 decimals");
    let side_levels = |v: &Value, side: Side, out: &mut Vec<Change>| {
        for l in v.as_array().expect("levels") {
            out.push((side, value(&l[0]), value(&l[1])));
        }
    };
    let mut snapshot = Vec::new();
    let mut last_id = None;
    let mut diffs = Vec::new();
    for (buf, len, is_snapshot) in msgs {
        let v: Value = serde_json::from_slice(&buf[..*len]).expect("JSON");
        let v = v.get("data").cloned().unwrap_or(v);
        if *is_snapshot {
            side_levels(&v["bids"], Side::Bid, &mut snapshot);
            side_levels(&v["asks"], Side::Ask, &mut snapshot);
            last_id = v["lastUpdateId"].as_u64();
        } else if v["e"] == "depthUpdate" {
            let mut diff = Vec::new();
            side_levels(&v["b"], Side::Bid, &mut diff);
            side_levels(&v["a"], Side::Ask, &mut diff);
            diffs.push((v["u"].as_u64().expect("u"), diff));
        }
    }
    // Binance: a diff with `u` <= the snapshot's lastUpdateId is older than
    // the snapshot; the first after it bridges it (it arrived before the
    // snapshot's answer in these recordings), and the chain is unbroken.
    let last_id = last_id.expect("a snapshot");
    let diffs = diffs
        .into_iter()
        .filter(|(u, _)| *u > last_id)
        .map(|(_, d)| d)
        .collect();
    (snapshot, diffs)
}

/// The diffs up to the first after which the book's shown levels are no
/// longer exact.
fn complete(snapshot: &[Change], diffs: &[Vec<Change>]) -> Vec<Vec<Change>> {
    let mut book = Book::with_window(20, 1000, Window::Client);
    for &(side, price, size) in snapshot {
        book.set(side, price, size);
    }
    book.snapshot_done(Limit::Levels(1000));
    let mut kept = Vec::new();
    for diff in diffs {
        for &(side, price, size) in diff {
            book.set(side, price, size);
        }
        book.settle();
        if !book.is_exact() || book.is_crossed() {
            break;
        }
        kept.push(diff.clone());
    }
    kept
}

/// The largest step dividing every snapshot price.
fn tick_of(snapshot: &[Change]) -> i64 {
    let gcd = |mut a: i64, mut b: i64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a.abs()
    };
    let p0 = snapshot[0].1;
    snapshot.iter().fold(0, |g, &(_, p, _)| gcd(g, p - p0))
}

/// A sorted `Vec` side, best first, keyed so that best sorts first (bids
/// by negated price); a change worse than the side's `worst` known price
/// is ignored, as the book ignores it.
fn vec_set(sides: &mut [Vec<(i64, i64)>; 2], worst: &[i64; 2], (side, price, size): Change) {
    let key = if side == Side::Bid { -price } else { price };
    let worst = if side == Side::Bid {
        -worst[0]
    } else {
        worst[1]
    };
    if key > worst {
        return;
    }
    let levels = &mut sides[side as usize];
    match levels.binary_search_by(|l| l.0.cmp(&key)) {
        Ok(i) if size == 0 => {
            levels.remove(i);
        }
        Ok(i) => levels[i].1 = size,
        Err(_) if size == 0 => {}
        Err(i) => levels.insert(i, (key, size)),
    }
}

/// Slots in a tick-indexed side: a power of two above the recorded side's
/// span (about 21,000 ticks on the day).
const SLOTS: usize = 1 << 16;

/// One side indexed by tick: `size[t % SLOTS]` for tick `t`, a bit a slot
/// for "holds a level", the best tick, and the worst tick known (the
/// snapshot's worst level, as the book's horizon: Binance's diffs carry
/// changes all through its book, and one below what the snapshot gave
/// says nothing of the levels between).
struct TickSide {
    side: Side,
    tick: i64,
    size: Vec<i64>,
    held: Vec<u64>,
    best: Option<i64>,
    horizon: Option<i64>,
}

impl TickSide {
    fn new(side: Side, tick: i64) -> TickSide {
        TickSide {
            side,
            tick,
            size: vec![0; SLOTS],
            held: vec![0; SLOTS / 64],
            best: None,
            horizon: None,
        }
    }

    #[inline]
    fn slot(t: i64) -> usize {
        t.rem_euclid(SLOTS as i64) as usize
    }

    /// The snapshot is in, its worst level at `worst`: nothing worse is
    /// known.
    fn snapshot_done(&mut self, worst: i64) {
        self.horizon = Some(worst / self.tick);
    }

    #[inline]
    fn set(&mut self, price: i64, size: i64) {
        let t = price / self.tick;
        let better = |a: i64, b: i64| if self.side == Side::Bid { a > b } else { a < b };
        if self.horizon.is_some_and(|h| better(h, t)) {
            return;
        }
        let i = Self::slot(t);
        let was = self.size[i] != 0;
        self.size[i] = size;
        if was == (size != 0) {
            return;
        }
        self.held[i / 64] ^= 1 << (i % 64);
        match self.best {
            Some(b) if size != 0 && !better(t, b) => {}
            _ if size != 0 => self.best = Some(t),
            Some(b) if b == t => self.best = self.next(t),
            _ => {}
        }
    }

    /// The held tick after `t`, worse, up to the horizon: a scan of the
    /// bits, a word at a time.
    #[inline]
    fn next(&self, t: i64) -> Option<i64> {
        let h = self.horizon?;
        let mut t = t;
        if self.side == Side::Bid {
            while t > h {
                t -= 1;
                let bit = Self::slot(t) % 64;
                let w = self.held[Self::slot(t) / 64] & (u64::MAX >> (63 - bit));
                if w != 0 {
                    let found = t - (bit as i64 - (63 - w.leading_zeros() as i64));
                    return (found >= h).then_some(found);
                }
                t -= bit as i64;
            }
        } else {
            while t < h {
                t += 1;
                let bit = Self::slot(t) % 64;
                let w = self.held[Self::slot(t) / 64] & (u64::MAX << bit);
                if w != 0 {
                    let found = t + (w.trailing_zeros() as i64 - bit as i64);
                    return (found <= h).then_some(found);
                }
                t += 63 - bit as i64;
            }
        }
        None
    }

    /// The best `n` levels, best first.
    fn top(&self, n: usize, out: &mut Vec<(i64, i64)>) {
        out.clear();
        let mut t = self.best;
        while let Some(at) = t
            && out.len() < n
        {
            out.push((at * self.tick, self.size[Self::slot(at)]));
            t = self.next(at);
        }
    }
}
