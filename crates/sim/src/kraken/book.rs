//! One client's `book` subscription of one pair: the window Kraken keeps
//! complete at the subscribed depth, the updates that move it, their
//! checksum, and the faults (a lost message, a wrong checksum).
//!
//! Kraken's rules, from its v2 book checksum guide ("Maintaining the
//! book") and the live measurements the research note quotes:
//!
//! - An update carries the levels of the window that changed; a removed
//!   level is sent with `"qty":0`. After applying a whole message the
//!   client truncates to the subscribed depth: "you won't receive "qty": 0
//!   for price levels that fall out of scope".
//! - Kraken keeps the window complete: a level that enters it because one
//!   inside was removed is sent as an ordinary insert (the level3 guide
//!   says so; measured for `book`: 1 412 of 1 412 checksums at depth 10
//!   only match with such refills).
//! - Levels in an update are not ordered (measured).
//! - A step that changes nothing in the window sends nothing: Kraken
//!   publishes on change.
//! - `checksum`: CRC32 of the top 10 asks (best first) then the top 10
//!   bids, each price then quantity written at the pair's precision with
//!   the point and leading zeros removed, trailing zeros kept.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use super::wire::{number, rfc3339};
use crate::market::{Book, Levels, SimInstrument, StepFaults};

/// Levels the checksum covers on each side.
const CHECKSUM_LEVELS: usize = 10;

/// A book as a client holds it: bids and asks, best first.
type View = (Levels, Levels);

/// A held-back update older than this is delivered late rather than lost
/// (nothing after it could show the loss).
const HOLD: Duration = Duration::from_secs(1);

/// One `book` subscription of one client.
pub(super) struct BookSub {
    /// The instrument.
    pub(super) n: usize,
    /// The subscribed depth.
    pub(super) depth: usize,
    /// The window as Kraken last published it.
    window: View,
    /// A lost message is due (`drop_book`). Kraken has no sequence: a loss
    /// is found only when a later update's checksum does not match the
    /// client's book. So the first update that changes the top 10 is held
    /// back, and lost only if the update after it shows the loss; if that
    /// one would not (it restores what the lost one changed, and a wrong
    /// book would pass its checksum), the held one is delivered late and
    /// the next top-10 change tried. A client's book is never wrong with
    /// a checksum that says it is right.
    drop_armed: bool,
    /// The update held back: its text, the window before it (what the
    /// client holds), and since when.
    held: Option<(String, View, Instant)>,
    /// A wrong checksum is due on the next update sent.
    bad_armed: bool,
}

impl BookSub {
    /// A subscription at `depth`, starting from `book` (its snapshot).
    pub(super) fn new(n: usize, depth: usize, book: &Book) -> BookSub {
        BookSub {
            n,
            depth,
            window: book.levels(depth),
            drop_armed: false,
            held: None,
            bad_armed: false,
        }
    }

    /// The snapshot this subscription started from: `depth` levels a side
    /// (fewer if the book is thinner), best first, with its checksum.
    pub(super) fn snapshot(&self, spec: &SimInstrument, time_us: u64) -> String {
        let (bids, asks) = &self.window;
        let crc = checksum(bids, asks, spec);
        message("snapshot", spec, bids, asks, crc, time_us)
    }

    /// The updates this client receives for a step of the instrument (none,
    /// one, or a held-back one and this one): the window's changes, the
    /// step's faults applied.
    pub(super) fn on_step(
        &mut self,
        spec: &SimInstrument,
        book: &Book,
        faults: StepFaults,
        time_us: u64,
        out: &mut Vec<String>,
    ) {
        self.drop_armed |= faults.drop_book;
        self.bad_armed |= faults.bad_checksum;
        let new = book.levels(self.depth);
        let mut bids = Vec::new();
        let mut asks = Vec::new();
        changes(true, &self.window.0, &new.0, &book.bids, &mut bids);
        changes(false, &self.window.1, &new.1, &book.asks, &mut asks);
        if bids.is_empty() && asks.is_empty() {
            return;
        }
        let crc = checksum(&new.0, &new.1, spec);
        let before = std::mem::replace(&mut self.window, new);
        let held = self.held.take();
        let changes_top = checksum(&before.0, &before.1, spec) != crc;
        // Worst first: not the order a book keeps.
        bids.reverse();
        asks.reverse();
        let text = |crc| message("update", spec, &bids, &asks, crc, time_us);
        let bad = &mut self.bad_armed;
        let mut sent = || if std::mem::take(bad) { !crc } else { crc };
        match held {
            Some((held, view, _)) => {
                let after = apply(&view, &bids, &asks, self.depth);
                if checksum(&after.0, &after.1, spec) != crc {
                    // The loss shows in this update: the held one is lost.
                    self.drop_armed = false;
                } else {
                    out.push(held);
                }
                out.push(text(sent()));
            }
            None if self.drop_armed && changes_top => {
                self.held = Some((text(crc), before, Instant::now()));
            }
            None => out.push(text(sent())),
        }
    }

    /// A held-back update that no later one has shown lost for [`HOLD`]:
    /// delivered late (the loss is tried again on a later change).
    pub(super) fn overdue(&mut self, now: Instant) -> Option<String> {
        let (_, _, since) = self.held.as_ref()?;
        if now.saturating_duration_since(*since) < HOLD {
            return None;
        }
        self.held.take().map(|(text, _, _)| text)
    }
}

/// A `book` message ("Book": one element in `data`; `checksum` and
/// `timestamp` on snapshots and updates alike).
fn message(
    kind: &str,
    spec: &SimInstrument,
    bids: &[(i64, i64)],
    asks: &[(i64, i64)],
    crc: u32,
    time_us: u64,
) -> String {
    let mut s = String::with_capacity(160 + 48 * (bids.len() + asks.len()));
    let _ = write!(
        s,
        r#"{{"channel":"book","type":"{kind}","data":[{{"symbol":"{}","bids":["#,
        spec.symbol
    );
    levels(&mut s, spec, bids);
    s.push_str(r#"],"asks":["#);
    levels(&mut s, spec, asks);
    let _ = write!(
        s,
        r#"],"checksum":{crc},"timestamp":"{}"}}]}}"#,
        rfc3339(time_us)
    );
    s
}

fn levels(out: &mut String, spec: &SimInstrument, levels: &[(i64, i64)]) {
    for (k, (p, q)) in levels.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(r#"{"price":"#);
        number(out, *p, spec.price_scale);
        out.push_str(r#","qty":"#);
        number(out, *q, spec.size_scale);
        out.push('}');
    }
}

/// The changes that take a client holding `old` (one side, best first) to
/// `new`: levels that are new or changed, and `0` for a level that left
/// the window because it left the book. A level pushed below the window by
/// better ones is not sent (the client truncates). Both lists are sorted
/// best first, so one merge finds them.
fn changes(
    bid: bool,
    old: &[(i64, i64)],
    new: &[(i64, i64)],
    book: &BTreeMap<i64, i64>,
    out: &mut Vec<(i64, i64)>,
) {
    let better = |a: i64, b: i64| if bid { a > b } else { a < b };
    let (mut i, mut j) = (0, 0);
    loop {
        match (old.get(i), new.get(j)) {
            (Some(&(po, qo)), Some(&(pn, qn))) if po == pn => {
                if qo != qn {
                    out.push((pn, qn));
                }
                i += 1;
                j += 1;
            }
            (Some(&(po, _)), Some(&(pn, qn))) if better(pn, po) => {
                out.push((pn, qn));
                j += 1;
            }
            (None, Some(&(pn, qn))) => {
                out.push((pn, qn));
                j += 1;
            }
            (Some(&(po, _)), _) => {
                if !book.contains_key(&po) {
                    out.push((po, 0));
                }
                i += 1;
            }
            (None, None) => break,
        }
    }
}

/// `view` after an update, as a client applies it: every level, then each
/// side cut back to `depth`.
fn apply(view: &View, bids: &[(i64, i64)], asks: &[(i64, i64)], depth: usize) -> View {
    let side = |held: &[(i64, i64)], update: &[(i64, i64)], bid: bool| -> Levels {
        let mut m: BTreeMap<i64, i64> = held.iter().copied().collect();
        for &(p, q) in update {
            if q == 0 {
                m.remove(&p);
            } else {
                m.insert(p, q);
            }
        }
        if bid {
            m.into_iter().rev().take(depth).collect()
        } else {
            m.into_iter().take(depth).collect()
        }
    };
    (side(&view.0, bids, true), side(&view.1, asks, false))
}

/// Kraken's checksum of a book (bids and asks best first) at the pair's
/// precisions (the simulated instrument's scales).
///
/// Written apart from the adapter's (`tickwire_venues::kraken::checksum`)
/// on purpose: the simulator is the independent oracle the adapter's
/// checksum is tested against, so a mistake in one is not repeated in the
/// other. Both are checked against the guide's example (tests below).
pub(super) fn checksum(bids: &[(i64, i64)], asks: &[(i64, i64)], spec: &SimInstrument) -> u32 {
    let mut text = String::with_capacity(40 * CHECKSUM_LEVELS);
    let mut value = String::with_capacity(24);
    let top = asks.iter().take(CHECKSUM_LEVELS);
    for &(p, q) in top.chain(bids.iter().take(CHECKSUM_LEVELS)) {
        for (v, precision) in [(p, spec.price_scale), (q, spec.size_scale)] {
            value.clear();
            number(&mut value, v, precision);
            let digits = value.trim_start_matches(['0', '.']);
            text.extend(digits.chars().filter(|c| *c != '.'));
        }
    }
    crc32fast::hash(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::market::{self, Step};

    fn btc() -> SimInstrument {
        SimInstrument::pair(tickwire_venues::Venue::Kraken).remove(0)
    }

    /// The example of Kraken's checksum guide (BTC/USD: 1 price decimal,
    /// 8 quantity decimals): 3310070434.
    #[test]
    fn the_documented_checksum() {
        let asks = [
            (452_852, 100_000),
            (452_864, 154_571_953),
            (452_866, 154_571_109),
            (452_896, 154_560_911),
            (452_902, 15_890_660),
            (452_918, 154_553_491),
            (452_947, 4_454_749),
            (452_961, 35_380_000),
            (452_975, 9_945_542),
            (452_995, 18_772_827),
        ];
        let bids = [
            (452_835, 10_000_000),
            (452_834, 154_582_015),
            (452_821, 10_000_000),
            (452_810, 10_000_000),
            (452_803, 154_592_586),
            (452_790, 7_990_000),
            (452_776, 3_310_103),
            (452_775, 30_000_000),
            (452_773, 154_602_737),
            (452_766, 15_445_238),
        ];
        assert_eq!(checksum(&bids, &asks, &btc()), 3_310_070_434);
        // Levels past the top 10 do not count.
        let mut deeper = bids.to_vec();
        deeper.push((452_700, 1));
        assert_eq!(checksum(&deeper, &asks, &btc()), 3_310_070_434);
        // The adapter's own implementation agrees, from a book that holds
        // the levels as the v2 adapter records them (every value with the
        // pair's precision).
        use tickwire_venues::book::{Book, Level, Side};
        let mut book = Book::new(10);
        for (side, levels) in [(Side::Bid, &deeper[..]), (Side::Ask, &asks[..])] {
            for &(price, size) in levels {
                let level = Level {
                    price,
                    size,
                    price_digits: 1,
                    size_digits: 8,
                };
                book.set_level(side, level);
            }
        }
        book.settle();
        assert_eq!(
            tickwire_venues::kraken::checksum(&book, 1, 8),
            3_310_070_434
        );
    }

    /// A `book` message's bids, asks and checksum.
    fn parse(text: &str) -> (Levels, Levels, u32) {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let side = |k: &str| -> Levels {
            let f = |x: &serde_json::Value, s: i32| {
                (x.as_f64().unwrap() * 10f64.powi(s)).round() as i64
            };
            v["data"][0][k]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| (f(&l["price"], 1), f(&l["qty"], 8)))
                .collect()
        };
        let crc = v["data"][0]["checksum"].as_u64().unwrap() as u32;
        (side("bids"), side("asks"), crc)
    }

    /// Every update, applied to the window as Kraken says (apply, then
    /// truncate), gives the market's top `depth` levels again; nothing is
    /// sent for a step that leaves the window alone; and the window shows
    /// the refills and the silent push-outs it should.
    #[test]
    fn updates_keep_a_truncating_client_equal_to_the_market() {
        let spec = SimInstrument {
            levels: 30,
            ..btc()
        };
        let mut rng = StdRng::seed_from_u64(5);
        let mut book = Book::new(&spec, &mut rng);
        let mut step = Step::default();
        for depth in [10, 25] {
            let mut sub = BookSub::new(0, depth, &book);
            let mut client = sub.window.clone();
            let (mut silent, mut refills) = (0, 0);
            for i in 0..3000 {
                market::step(0, &spec, &mut book, &mut rng, i % 3 == 0, &mut step);
                let mut sent = Vec::new();
                sub.on_step(&spec, &book, StepFaults::default(), 0, &mut sent);
                silent += usize::from(sent.is_empty());
                for text in sent {
                    let (b, a, crc) = parse(&text);
                    let worst = client.1.last().map(|(p, _)| *p);
                    refills += a
                        .iter()
                        .filter(|(p, q)| *q > 0 && worst.is_some_and(|w| *p > w))
                        .count();
                    client = apply(&client, &b, &a, depth);
                    assert_eq!(crc, checksum(&client.0, &client.1, &spec));
                }
                assert_eq!(client, book.levels(depth), "depth {depth}, step {i}");
            }
            assert!(silent > 0 && refills > 0, "{silent} {refills}");
        }
    }

    /// A lost update: one message, and the first update the client gets
    /// after it has a checksum its book does not match; before it every
    /// checksum matched. A loss nothing shows is delivered late instead.
    #[test]
    fn a_lost_update_is_one_the_checksum_sees_and_a_bad_checksum_is_wrong() {
        let spec = btc();
        let mut rng = StdRng::seed_from_u64(8);
        let mut book = Book::new(&spec, &mut rng);
        let mut step = Step::default();
        let lose = StepFaults {
            drop_book: true,
            ..StepFaults::default()
        };
        for seed_step in 0..20 {
            let mut sub = BookSub::new(0, 10, &book);
            let mut client = sub.window.clone();
            let mut found = false;
            for i in 0..500 {
                market::step(0, &spec, &mut book, &mut rng, i % 4 == 0, &mut step);
                let faults = if i == seed_step {
                    lose
                } else {
                    StepFaults::default()
                };
                let mut sent = Vec::new();
                sub.on_step(&spec, &book, faults, 0, &mut sent);
                for text in sent {
                    let (b, a, crc) = parse(&text);
                    client = apply(&client, &b, &a, 10);
                    if crc != checksum(&client.0, &client.1, &spec) {
                        assert_ne!(client, sub.window);
                        found = true;
                    }
                }
                if found {
                    break;
                }
                if sub.held.is_none() {
                    // Nothing in flight: the client has the market's book.
                    assert_eq!(
                        client,
                        book.levels(10),
                        "step {i}: wrong with no sign of it"
                    );
                }
            }
            assert!(found, "a loss armed at step {seed_step} was never seen");
        }
        // Held back with nothing after it: delivered late, nothing lost.
        let mut sub = BookSub::new(0, 10, &book);
        let mut sent = Vec::new();
        while sub.held.is_none() {
            market::step(0, &spec, &mut book, &mut rng, false, &mut step);
            sub.on_step(&spec, &book, lose, 0, &mut sent);
        }
        let since = sub.held.as_ref().expect("held").2;
        assert!(
            sub.overdue(since + HOLD - Duration::from_nanos(1))
                .is_none()
        );
        let late = sub.overdue(since + HOLD).expect("delivered late");
        let (b, a, crc) = parse(&late);
        let mut client = sub.held.take().map_or(sub.window.clone(), |h| h.1);
        client = apply(&client, &b, &a, 10);
        assert_eq!(
            (client, crc),
            (
                sub.window.clone(),
                checksum(&sub.window.0, &sub.window.1, &spec)
            )
        );
        // A wrong checksum: the next update's, and only it.
        let bad = StepFaults {
            bad_checksum: true,
            ..StepFaults::default()
        };
        let mut sub = BookSub::new(0, 10, &book);
        let mut sent = Vec::new();
        while sent.is_empty() {
            market::step(0, &spec, &mut book, &mut rng, false, &mut step);
            sub.on_step(&spec, &book, bad, 0, &mut sent);
        }
        let good = checksum(&sub.window.0, &sub.window.1, &spec);
        assert_eq!(parse(&sent[0]).2, !good);
        sent.clear();
        while sent.is_empty() {
            market::step(0, &spec, &mut book, &mut rng, false, &mut step);
            sub.on_step(&spec, &book, StepFaults::default(), 0, &mut sent);
        }
        assert_eq!(
            parse(&sent[0]).2,
            checksum(&sub.window.0, &sub.window.1, &spec)
        );
    }
}
