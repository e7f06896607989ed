//! The venue's side of Bybit's book topics: one copy of each instrument's
//! book, moved by every step, and for each `orderbook.{depth}` topic the
//! window of the best `depth` levels a side as last sent and its update
//! id `u`. Shared by all clients, so that a topic's `u` is the venue's,
//! the same on every connection (as Bybit's is: "u" is per topic, not per
//! connection), and the stamp a message is filed under is the id every
//! client's adapter reports for it.
//!
//! A step is worked out once, by the first client that sees it (the
//! server hands every client every step, in order, whatever it
//! subscribed), and kept in a short log for the clients after it in the
//! same burst.

use std::collections::{BTreeMap, VecDeque};

use crate::market::{Book, Levels, Step, best_levels};

/// The book depths Bybit serves on spot, linear and inverse (v5
/// "Orderbook": 1, 50, 200 and 1000 levels; linear 500 went offline on
/// 2025-09-30 and is refused, "error:handler not found", third-party
/// measurement of 2026-07-25).
pub(super) const DEPTHS: [usize; 4] = [1, 50, 200, 1000];

/// What one step sent on one book topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Update {
    /// The whole window: every level-1 message (level 1 "has `snapshot`
    /// message only"), and every depth's after a restart (`u` back at 1).
    Snapshot {
        /// The topic's `u`.
        u: u64,
        /// Bids, best first.
        bids: Levels,
        /// Asks, best first.
        asks: Levels,
    },
    /// The levels of the window that changed, best first; size 0: the
    /// level left the window (traded away, cancelled, or pushed below it).
    Delta {
        /// The topic's `u`: the previous message's + 1.
        u: u64,
        /// Bids, best first.
        bids: Levels,
        /// Asks, best first.
        asks: Levels,
    },
    /// Lost (a `drop_book` fault): the message the step made, its `u`
    /// used, never sent.
    Lost(Box<Update>),
}

/// What one step of an instrument sent.
#[derive(Debug)]
pub(super) struct Sent {
    /// The book's step counter after the step ([`Step::version`]).
    pub(super) version: u64,
    /// `(depth, update)` for each topic whose window changed.
    pub(super) books: Vec<(usize, Update)>,
    /// The step's trade's tick direction (`L`, linear and inverse).
    pub(super) tick: Option<&'static str>,
    /// The log entry's number, over all instruments.
    number: u64,
}

/// A topic's window as the venue last sent it.
#[derive(Debug)]
struct Topic {
    u: u64,
    bids: Levels,
    asks: Levels,
}

/// One instrument's stream.
#[derive(Debug)]
struct Stream {
    /// The step the copy of the book is at.
    version: u64,
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
    /// The last step's cross sequence (`seq`) and time.
    seq: u64,
    time_ms: u64,
    /// A topic per depth of [`DEPTHS`], once subscribed by anyone.
    topics: [Option<Topic>; 4],
    /// The last trade's price and tick direction.
    last_trade: Option<(i64, &'static str)>,
    log: VecDeque<Sent>,
}

/// A book topic's window now, as a subscription's snapshot sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Window {
    pub(super) u: u64,
    /// The cross sequence of the last step.
    pub(super) seq: u64,
    /// The matching engine's time of the last step (`cts`).
    pub(super) time_ms: u64,
    pub(super) bids: Levels,
    pub(super) asks: Levels,
}

/// Log entries kept per instrument at most (a burst of more steps of one
/// instrument than this would leave the last clients of the burst
/// without some).
const LOG: usize = 4096;

/// Every instrument's stream (made at its first subscription).
#[derive(Debug, Default)]
pub(super) struct Streams {
    streams: Vec<Option<Stream>>,
    /// Log entries made so far.
    made: u64,
    /// Whether a client read an entry another made since the last was
    /// made: then the next one made starts a new burst, and every client
    /// is done with the entries before it.
    read: bool,
}

impl Streams {
    /// Instrument `n`'s stream, made from its `book` now if it has none.
    fn stream(&mut self, n: usize, book: &Book) -> &mut Stream {
        if self.streams.len() <= n {
            self.streams.resize_with(n + 1, || None);
        }
        self.streams[n].get_or_insert_with(|| Stream {
            version: book.version,
            bids: book.bids.clone(),
            asks: book.asks.clone(),
            seq: book.update_id,
            time_ms: crate::time::now_ms(),
            topics: [None, None, None, None],
            last_trade: None,
            log: VecDeque::new(),
        })
    }

    /// Instrument `n` has a subscriber (its trades): its stream runs.
    pub(super) fn open(&mut self, n: usize, book: &Book) {
        self.stream(n, book);
    }

    /// The window of topic `orderbook.{depth}` of instrument `n` now, for
    /// a subscription's snapshot: "Once you have subscribed successfully,
    /// you will receive a `snapshot`" ("Orderbook"). Called between steps
    /// with `book` the market's: the stream is at the same step. A topic
    /// no one had subscribed starts at the book's step count since its
    /// last restart ([`Book::u`]).
    pub(super) fn subscribe(&mut self, n: usize, depth: usize, book: &Book) -> Window {
        let stream = self.stream(n, book);
        let k = slot(depth);
        let (bids, asks) = stream.window(depth);
        let topic = stream.topics[k].get_or_insert_with(|| Topic {
            u: book.u(),
            bids,
            asks,
        });
        Window {
            u: topic.u,
            seq: stream.seq,
            time_ms: stream.time_ms,
            bids: topic.bids.clone(),
            asks: topic.asks.clone(),
        }
    }

    /// What `step` sent: worked out if no client has seen it yet, else
    /// read from the log. `None` if no one subscribed the instrument
    /// before the step.
    pub(super) fn step(&mut self, step: &Step) -> Option<&Sent> {
        let n = step.instrument;
        let stream = self.streams.get(n)?.as_ref()?;
        if step.version > stream.version {
            if std::mem::take(&mut self.read) {
                let first = self.made;
                for s in self.streams.iter_mut().flatten() {
                    while s.log.front().is_some_and(|e| e.number < first) {
                        s.log.pop_front();
                    }
                }
            }
            let number = self.made;
            self.made += 1;
            let stream = self.streams[n].as_mut()?;
            let sent = stream.advance(step, number);
            if stream.log.len() == LOG {
                stream.log.pop_front();
            }
            stream.log.push_back(sent);
        } else {
            self.read = true;
        }
        let stream = self.streams[n].as_ref()?;
        stream.log.iter().rev().find(|e| e.version == step.version)
    }
}

/// The index of `depth` in [`DEPTHS`] (a depth not offered is refused
/// before it gets here; it would share the last slot).
fn slot(depth: usize) -> usize {
    DEPTHS
        .iter()
        .position(|&d| d == depth)
        .unwrap_or(DEPTHS.len() - 1)
}

impl Stream {
    /// The best `depth` levels a side.
    fn window(&self, depth: usize) -> (Levels, Levels) {
        best_levels(&self.bids, &self.asks, depth)
    }

    /// Applies `step` and works out what each topic sends.
    ///
    /// - A delta is sent only when the topic's window changed (a live
    ///   capture of 2026 saw no delta with both arrays empty), with `u`
    ///   one more than the topic's last.
    /// - The window is kept complete on the wire: a level pushed out of
    ///   the top `depth` gets an explicit `"0"`, and one that enters it
    ///   from below is sent in the same delta (Bybit's historical-data
    ///   file of `orderbook.500.XRPUSDT` of 2024-12-01, in nautilus_trader's
    ///   test data, keeps exactly 500 levels a side after every message).
    ///   Sending the difference between the window before and after the
    ///   step does both.
    /// - Level 1 sends the whole window as a snapshot each time
    ///   ("Linear, inverse, spot level 1 data has `snapshot` message only").
    /// - `restart`: Bybit restarted its book service; every topic sends a
    ///   snapshot with `u` back at 1 ("Occasionally, you'll receive "u"=1,
    ///   which is a snapshot data due to the restart of the service. So
    ///   please overwrite your local orderbook").
    /// - `drop_book`: the step's message of every topic is lost; its `u`
    ///   is used all the same (also where the window did not change, so
    ///   that the loss always shows as a gap), and a client sees the next
    ///   delta skip one.
    fn advance(&mut self, step: &Step, number: u64) -> Sent {
        for (side, levels) in [(&mut self.bids, &step.bids), (&mut self.asks, &step.asks)] {
            for &(price, size) in levels {
                if size == 0 {
                    side.remove(&price);
                } else {
                    side.insert(price, size);
                }
            }
        }
        self.version = step.version;
        self.seq = step.last_id;
        self.time_ms = step.time_ms;
        let tick = step.trade.map(|t| {
            let tick = match self.last_trade {
                Some((last, _)) if t.price > last => "PlusTick",
                Some((last, _)) if t.price < last => "MinusTick",
                Some((_, "MinusTick" | "ZeroMinusTick")) => "ZeroMinusTick",
                Some(_) => "ZeroPlusTick",
                None => "PlusTick",
            };
            self.last_trade = Some((t.price, tick));
            tick
        });
        let mut books = Vec::new();
        for (k, depth) in DEPTHS.iter().enumerate() {
            if self.topics[k].is_none() {
                continue;
            }
            let (bids, asks) = self.window(*depth);
            let Some(topic) = self.topics[k].as_mut() else {
                continue;
            };
            let db = changes(&topic.bids, &bids, |a, b| a > b);
            let da = changes(&topic.asks, &asks, |a, b| a < b);
            let lost = step.faults.drop_book;
            let update = if step.faults.restart {
                topic.u = 1;
                Some(Update::Snapshot {
                    u: 1,
                    bids: bids.clone(),
                    asks: asks.clone(),
                })
            } else if lost || !db.is_empty() || !da.is_empty() {
                topic.u += 1;
                let message = if *depth == 1 {
                    Update::Snapshot {
                        u: topic.u,
                        bids: bids.clone(),
                        asks: asks.clone(),
                    }
                } else {
                    Update::Delta {
                        u: topic.u,
                        bids: db,
                        asks: da,
                    }
                };
                Some(if lost {
                    Update::Lost(Box::new(message))
                } else {
                    message
                })
            } else {
                None
            };
            topic.bids = bids;
            topic.asks = asks;
            if let Some(update) = update {
                books.push((*depth, update));
            }
        }
        Sent {
            version: step.version,
            books,
            tick,
            number,
        }
    }
}

/// What turns window `old` into window `new` (both best first, `better`
/// ordering prices best first): levels gone as size 0, new and changed
/// levels with their size, best first.
fn changes(old: &[(i64, i64)], new: &[(i64, i64)], better: fn(i64, i64) -> bool) -> Levels {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    loop {
        match (old.get(i), new.get(j)) {
            (None, None) => return out,
            (Some(&(p, _)), None) => {
                out.push((p, 0));
                i += 1;
            }
            (None, Some(&level)) => {
                out.push(level);
                j += 1;
            }
            (Some(&(po, so)), Some(&(pn, sn))) => {
                if po == pn {
                    if so != sn {
                        out.push((pn, sn));
                    }
                    i += 1;
                    j += 1;
                } else if better(po, pn) {
                    out.push((po, 0));
                    i += 1;
                } else {
                    out.push((pn, sn));
                    j += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::market::{self, SimInstrument, StepFaults};

    #[test]
    fn changes_remove_insert_and_resize_best_first() {
        let old = [(105, 1), (104, 2), (102, 3)];
        let new = [(106, 9), (105, 1), (104, 5), (103, 4)];
        assert_eq!(
            changes(&old, &new, |a, b| a > b),
            [(106, 9), (104, 5), (103, 4), (102, 0)]
        );
        let old = [(10, 1), (11, 1)];
        let new = [(11, 2), (12, 1)];
        assert_eq!(
            changes(&old, &new, |a, b| a < b),
            [(10, 0), (11, 2), (12, 1)]
        );
        assert!(changes(&new, &new, |a, b| a < b).is_empty());
    }

    /// Two clients' views of one burst agree: the second reads what the
    /// first worked out, and a topic's `u` goes up by one per message.
    #[test]
    fn every_client_reads_the_same_step_and_u_chains() {
        let spec = SimInstrument {
            levels: 60,
            ..SimInstrument::btcusdt()
        };
        let mut rng = StdRng::seed_from_u64(3);
        let mut book = Book::new(&spec, &mut rng);
        let mut streams = Streams::default();
        let first = streams.subscribe(0, 50, &book);
        assert_eq!(first.u, book.u());
        assert_eq!((first.bids.len(), first.asks.len()), (50, 50));
        let mut u = first.u;
        let mut window = book.levels(50);
        for burst in 0..200 {
            let mut steps = vec![Step::default(); 3];
            for s in &mut steps {
                market::step(0, &spec, &mut book, &mut rng, burst % 2 == 0, s);
            }
            let mut seen = Vec::new();
            for _client in 0..2 {
                let mut view = Vec::new();
                for s in &steps {
                    let sent = streams.step(s).expect("logged");
                    view.push(sent.books.clone());
                }
                seen.push(view);
            }
            assert_eq!(seen[0], seen[1]);
            for books in &seen[0] {
                for (_, update) in books {
                    let Update::Delta {
                        u: next,
                        bids,
                        asks,
                    } = update
                    else {
                        panic!("{update:?}")
                    };
                    assert_eq!(*next, u + 1);
                    u = *next;
                    apply(&mut window.0, bids, |a, b| a > b);
                    apply(&mut window.1, asks, |a, b| a < b);
                }
            }
            assert_eq!(window, book.levels(50), "burst {burst}");
        }
        // The log holds one burst once a second client has read it.
        assert!(streams.streams[0].as_ref().unwrap().log.len() <= 3);
    }

    /// Applies a delta to a window held best first, without trimming it:
    /// the delta alone must keep it the market's top levels.
    fn apply(window: &mut Levels, delta: &[(i64, i64)], better: fn(i64, i64) -> bool) {
        for &(p, s) in delta {
            let at = window.iter().position(|&(q, _)| !better(q, p));
            match at {
                Some(i) if window[i].0 == p => {
                    if s == 0 {
                        window.remove(i);
                    } else {
                        window[i].1 = s;
                    }
                }
                _ if s == 0 => panic!("deletes unknown level {p}"),
                Some(i) => window.insert(i, (p, s)),
                None => window.push((p, s)),
            }
        }
    }

    #[test]
    fn a_restart_resends_every_topic_from_one_and_a_loss_uses_a_u() {
        let spec = SimInstrument {
            levels: 20,
            ..SimInstrument::ethusdt()
        };
        let mut rng = StdRng::seed_from_u64(4);
        let mut book = Book::new(&spec, &mut rng);
        let mut streams = Streams::default();
        let one = streams.subscribe(0, 1, &book);
        let deep = streams.subscribe(0, 1000, &book);
        assert_eq!((one.bids.len(), deep.bids.len()), (1, 20));
        let mut s = Step::default();
        market::step(0, &spec, &mut book, &mut rng, false, &mut s);
        s.faults = StepFaults {
            drop_book: true,
            ..StepFaults::default()
        };
        let sent = streams.step(&s).unwrap();
        assert!(
            sent.books
                .iter()
                .all(|(_, u)| matches!(u, Update::Lost(m) if !matches!(**m, Update::Lost(_))))
        );
        assert_eq!(sent.books.len(), 2);
        market::step(0, &spec, &mut book, &mut rng, false, &mut s);
        s.faults = StepFaults {
            restart: true,
            ..StepFaults::default()
        };
        let sent = streams.step(&s).unwrap();
        let (b1, a1) = book.levels(1);
        let (b, a) = book.levels(1000);
        assert_eq!(
            sent.books,
            [
                (
                    1,
                    Update::Snapshot {
                        u: 1,
                        bids: b1,
                        asks: a1
                    }
                ),
                (
                    1000,
                    Update::Snapshot {
                        u: 1,
                        bids: b,
                        asks: a
                    }
                )
            ]
        );
    }
}
