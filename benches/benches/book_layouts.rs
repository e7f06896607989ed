//! `book_layouts`: the recorded spot BTCUSDT day's depth diffs (values
//! already exact, no decoding) applied to a book's sides alone, in three
//! layouts, taking turns, ns per level:
//!
//! - `Book`: the project's book (`book/ladder.rs`: each side one sorted
//!   array, a gap walked down it through a message), kept 1000 levels deep
//!   as the REST snapshot gave them, each message's levels set open and the
//!   book settled after it, as the sync engine applies them.
//! - a sorted `Vec` a side, best first (`insert` and `remove`): every change
//!   near the top moves the whole side, the cost the ladder was made to
//!   avoid; for scale, not a fair rival.
//! - a tick-indexed side: each price's size at its tick's slot in an array
//!   (a ring over the side's span, a power of two) and a bit a slot saying
//!   it holds a level; the best price kept as levels come and go. A level
//!   costs one store and a bit, no search and nothing moved. Not a book: it
//!   keeps no wire digits and says nothing of what changed. Its top 20
//!   levels a side are read once a message, as a book showing 20 would, in
//!   a row of its own.
//!
//! Every layout does the book's work on the same levels: the diffs stop
//! before the first at which the book's known levels run out (the market
//! leaves the snapshot's 1000 levels), and each message applies only the
//! changes the book takes, those not worse than its horizon as it stood at
//! the message's start (recorded in a first pass; the book moves it in as
//! it cuts its sides back to 1000 levels), the `Vec` cutting its sides
//! there as the book does. After each round every layout must hold exactly
//! the book's kept levels, every one of them, or the bench fails. The tick
//! is the largest step dividing every snapshot price (0.01 here); the bench
//! fails if a side ever spans more ticks than the ring has slots.
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
    let tick = tick_of(&snapshot);
    let steps = complete(&snapshot, &diffs, tick);
    let levels: usize = steps.iter().map(|s| s.diff.len()).sum();
    println!(
        "{file}: {} diffs of {:.1} levels on average, before the book's known levels run out; tick {tick} (at 8 decimals)",
        steps.len(),
        levels as f64 / steps.len() as f64
    );

    // The changes the book takes: those not past its horizon.
    let within = steps
        .iter()
        .flat_map(|s| {
            s.diff
                .iter()
                .map(|&(side, price, _)| (side, price, s.horizon))
        })
        .filter(|&(side, price, h)| vec_key(side, price) <= vec_key(side, h[side as usize]))
        .count();
    let mut times: [Vec<f64>; 4] = Default::default();
    let per_level = |t: Instant| t.elapsed().as_nanos() as f64 / levels as f64;
    for _ in 0..rounds.max(1) {
        // The project's book, as the sync engine applies a message.
        let mut book = book_from(&snapshot);
        let t = Instant::now();
        for step in &steps {
            for &(side, price, size) in &step.diff {
                book.set_open(side, Level::new(price, size));
            }
            book.settle();
        }
        times[0].push(per_level(t));
        // What every layout must hold at the end: the book's kept levels.
        let kept = [Side::Bid, Side::Ask].map(|side| {
            let levels = book.kept(side);
            levels.iter().map(|l| (l.price, l.size)).collect::<Vec<_>>()
        });
        let last = [Side::Bid, Side::Ask].map(|side| book.horizon(side).expect("a horizon"));

        // A sorted `Vec` a side, best first.
        let mut sides = [Vec::with_capacity(4096), Vec::with_capacity(4096)];
        for &c in &snapshot {
            vec_set(&mut sides, &steps[0].horizon, c);
        }
        let t = Instant::now();
        for step in &steps {
            vec_cut(&mut sides, &step.horizon);
            for &c in &step.diff {
                vec_set(&mut sides, &step.horizon, c);
            }
        }
        vec_cut(&mut sides, &last);
        times[1].push(per_level(t));
        for (k, (side, want)) in sides.iter().zip(&kept).enumerate() {
            let got: Vec<(i64, i64)> = side
                .iter()
                .map(|&(key, s)| (if k == 0 { -key } else { key }, s))
                .collect();
            assert_eq!(&got, want, "a sorted Vec side differs from the book");
        }

        // Tick-indexed sides: levels alone, then levels and the top 20 read.
        for read in [false, true] {
            let mut sides = [Side::Bid, Side::Ask].map(|side| TickSide::new(side, tick));
            for (s, &h) in sides.iter_mut().zip(&steps[0].horizon) {
                s.horizon = Some(h / tick);
            }
            for &(side, price, size) in &snapshot {
                sides[side as usize].set(price, size);
            }
            let mut top = Vec::with_capacity(20);
            let t = Instant::now();
            for step in &steps {
                for (s, &h) in sides.iter_mut().zip(&step.horizon) {
                    s.horizon = Some(h / tick);
                }
                for &(side, price, size) in &step.diff {
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
            // The same changes taken as the book took, no more.
            let taken: usize = sides.iter().map(|s| s.taken).sum();
            assert_eq!(
                taken,
                snapshot.len() + within,
                "a tick-indexed side took other changes"
            );
            for ((s, &h), want) in sides.iter_mut().zip(&last).zip(&kept) {
                s.horizon = Some(h / tick);
                s.top(usize::MAX, &mut top);
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

/// A diff, and each side's horizon (its worst known price) as the book
/// had it when the diff came: changes worse than it are not taken.
struct Step {
    diff: Vec<Change>,
    horizon: [i64; 2],
}

/// The book the snapshot makes.
fn book_from(snapshot: &[Change]) -> Book {
    let mut book = Book::with_window(20, 1000, Window::Client);
    for &(side, price, size) in snapshot {
        book.set(side, price, size);
    }
    book.snapshot_done(Limit::Levels(1000));
    book
}

/// The diffs up to the first after which the book's shown levels are no
/// longer exact, each with the horizons it met; checks that no side spans
/// more ticks than a tick-indexed side's ring holds.
fn complete(snapshot: &[Change], diffs: &[Vec<Change>], tick: i64) -> Vec<Step> {
    let mut book = book_from(snapshot);
    // A tick-indexed side keeps a slot's bit from the snapshot's worst
    // level on (the horizon only moves in): its span runs from there.
    let first = [Side::Bid, Side::Ask].map(|side| book.horizon(side).expect("a horizon"));
    let mut steps = Vec::new();
    for diff in diffs {
        let horizon = [Side::Bid, Side::Ask].map(|side| book.horizon(side).expect("a horizon"));
        for &(side, price, size) in diff {
            book.set_open(side, Level::new(price, size));
        }
        book.settle();
        if !book.is_exact() || book.is_crossed() {
            break;
        }
        for (side, h) in [Side::Bid, Side::Ask].into_iter().zip(first) {
            let best = book.levels(side).get(0).map_or(h, |l| l.price);
            let span = (best - h).unsigned_abs() / tick as u64;
            assert!(span < SLOTS as u64, "{side:?} spans {span} ticks");
        }
        steps.push(Step {
            diff: diff.clone(),
            horizon,
        });
    }
    steps
}

/// The largest step dividing every snapshot price.
fn tick_of(snapshot: &[Change]) -> i64 {
    let gcd = |mut a: i64, mut b: i64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a.abs()
    };
    let tick = snapshot.iter().fold(0, |g, &(_, p, _)| gcd(g, p));
    assert!(tick > 0, "no tick: every snapshot price is 0");
    tick
}

/// The key a sorted `Vec` side orders by, best first (bids negated), and
/// its horizon's.
fn vec_key(side: Side, price: i64) -> i64 {
    if side == Side::Bid { -price } else { price }
}

/// A change to a sorted `Vec` side, ignored past the side's horizon as the
/// book ignores it.
fn vec_set(sides: &mut [Vec<(i64, i64)>; 2], horizon: &[i64; 2], (side, price, size): Change) {
    let key = vec_key(side, price);
    if key > vec_key(side, horizon[side as usize]) {
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

/// Each side cut after its horizon, as the book cuts its sides when it
/// settles.
fn vec_cut(sides: &mut [Vec<(i64, i64)>; 2], horizon: &[i64; 2]) {
    for (k, side) in [Side::Bid, Side::Ask].into_iter().enumerate() {
        let h = vec_key(side, horizon[k]);
        let keep = sides[k].partition_point(|l| l.0 <= h);
        sides[k].truncate(keep);
    }
}

/// Slots in a tick-indexed side: a power of two above the recorded sides'
/// spans (the asks outgrow 32,768 within the slice; each diff checked).
const SLOTS: usize = 1 << 16;

/// One side indexed by tick: `size[t % SLOTS]` for tick `t`, a bit a slot
/// for "holds a level", the best tick, and the worst tick known (the
/// book's horizon, set by the caller: a change worse than it is ignored,
/// and reads stop there).
struct TickSide {
    side: Side,
    tick: i64,
    size: Vec<i64>,
    held: Vec<u64>,
    best: Option<i64>,
    horizon: Option<i64>,
    /// Changes taken (not past the horizon).
    taken: usize,
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
            taken: 0,
        }
    }

    #[inline]
    fn slot(t: i64) -> usize {
        t.rem_euclid(SLOTS as i64) as usize
    }

    #[inline]
    fn set(&mut self, price: i64, size: i64) {
        let t = price / self.tick;
        let better = |a: i64, b: i64| if self.side == Side::Bid { a > b } else { a < b };
        if self.horizon.is_some_and(|h| better(h, t)) {
            return;
        }
        self.taken += 1;
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
