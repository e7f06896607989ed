//! The simulated OKX against tickwire's own OKX adapter, with no network:
//! every message the protocol writes goes into
//! `tickwire_venues::okx::Adapter::on_message`, and the adapter's books,
//! trades and quotes are checked against the market after every step.

use rand::SeedableRng;
use rand::rngs::StdRng;
use tickwire_venues::book::Side;
use tickwire_venues::okx::Adapter;
use tickwire_venues::plan::Channels;
use tickwire_venues::sync::Resync;
use tickwire_venues::{Aggressor, Event, InstrumentId, InstrumentSpec, Kind, Outcome, Venue};

use super::{Checksums, Client, Okx};
use crate::VenueFault;
use crate::market::{Levels, SimInstrument, Step};
use crate::protocol::{Market, Out, Protocol};
use crate::testutil::{self, Consumer, deliver};

struct Harness {
    okx: Okx,
    market: Market,
    client: Client,
    specs: Vec<InstrumentSpec>,
    adapter: Adapter,
    consumer: Consumer,
    rng: StdRng,
    step: Step,
    steps: u64,
    /// Events of the last messages fed.
    events: Vec<Event>,
    /// The `checksum` of every `books` message fed.
    book_checksums: Vec<i64>,
}

impl Harness {
    /// BTC-USDT 450 levels deep (more than the 400 `books` carries),
    /// shown 400 deep; ETH-USDT 200 levels deep, shown 20 deep; served
    /// by `okx`.
    fn new(okx: Okx) -> Harness {
        let mut instruments = SimInstrument::pair(Venue::Okx);
        instruments[0].levels = 450;
        let mut rng = StdRng::seed_from_u64(11);
        let specs: Vec<InstrumentSpec> = instruments
            .iter()
            .zip([400, 20])
            .map(|(i, depth)| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, depth))
            .collect();
        let market = testutil::market_of(instruments, &mut rng);
        let Ok(client) = okx.open("/ws/v5/public", &market) else {
            panic!("the public path is refused")
        };
        Harness {
            okx,
            market,
            client,
            adapter: Adapter::new(&specs),
            consumer: Consumer::new(specs.iter().map(|s| s.depth)),
            specs,
            rng,
            step: Step::default(),
            steps: 0,
            events: Vec::new(),
            book_checksums: Vec::new(),
        }
    }

    /// Feeds what the protocol wrote into the adapter: each message's
    /// outcome.
    fn feed(&mut self, out: &mut Out) -> Vec<Outcome> {
        self.events.clear();
        let mut outcomes = Vec::new();
        for (frame, _) in out.items.drain(..) {
            let text = frame.into_text();
            if text.starts_with(r#"{"arg":{"channel":"books","#) {
                let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
                let checksum = v["data"][0]["checksum"].as_i64();
                self.book_checksums
                    .push(checksum.expect("every books message has a checksum"));
            }
            outcomes.push(deliver(&mut self.adapter, &text, &mut self.events));
        }
        for e in &self.events {
            self.consumer.on(e);
        }
        outcomes
    }

    fn send(&mut self, text: &str) -> Vec<Outcome> {
        let mut out = Out::default();
        self.okx
            .on_text(&mut self.client, text, &mut self.market, &mut out);
        self.feed(&mut out)
    }

    /// One market step of instrument `n`, as the server makes it (faults
    /// armed for it taken), sent and fed.
    fn step(&mut self, n: usize) {
        let trade = self.steps.is_multiple_of(3);
        self.steps += 1;
        self.market.step(n, &mut self.rng, trade, &mut self.step);
        let mut out = Out::default();
        self.okx
            .on_step(&mut self.client, &self.step, &self.market, &mut out);
        self.feed(&mut out);
    }

    /// Instrument `n`'s book in the adapter (and as the consumer rebuilt
    /// it) is the market's, at its shown depth.
    fn assert_books_equal(&self, n: usize, context: &str) {
        let depth = self.specs[n].depth;
        let want = self.market.books[n].levels(depth);
        let book = self
            .adapter
            .book(InstrumentId(n as u32))
            .unwrap_or_else(|| panic!("{context}: book {n} not valid"));
        let got = |side| -> Levels {
            book.levels(side)
                .iter()
                .map(|l| (l.price, l.size))
                .collect()
        };
        assert_eq!(
            (got(Side::Bid), got(Side::Ask)),
            want,
            "{context}: book {n}"
        );
        assert_eq!(
            self.consumer.levels(n),
            Some(want),
            "{context}: consumer {n}"
        );
    }

    /// The step's trade and quote came through as the market made them.
    fn assert_trade_and_quote(&self) {
        let n = self.step.instrument as u32;
        let trades: Vec<Kind> = self
            .events
            .iter()
            .filter(|e| matches!(e.kind, Kind::Trade { .. }))
            .map(|e| {
                assert_eq!(e.instrument.0, n);
                e.kind
            })
            .collect();
        let want: Vec<Kind> = self
            .step
            .trade
            .iter()
            .map(|t| Kind::Trade {
                price: t.price,
                size: t.size,
                aggressor: if t.buyer_aggressor {
                    Aggressor::Buy
                } else {
                    Aggressor::Sell
                },
                trade_id: t.id,
            })
            .collect();
        assert_eq!(trades, want);
        let quotes: Vec<Kind> = self
            .events
            .iter()
            .filter(|e| e.instrument.0 == n && matches!(e.kind, Kind::Quote { .. }))
            .map(|e| e.kind)
            .collect();
        let want: Vec<Kind> = self
            .step
            .top
            .iter()
            .map(|((bp, bq), (ap, aq))| Kind::Quote {
                bid_price: *bp,
                bid_size: *bq,
                ask_price: *ap,
                ask_size: *aq,
                update_id: self.step.last_id,
            })
            .collect();
        assert_eq!(quotes, want);
    }

    /// Kinds of the last events, of instrument `n`.
    fn kinds(&self, n: usize) -> Vec<Kind> {
        self.events
            .iter()
            .filter(|e| e.instrument.0 == n as u32)
            .map(|e| e.kind)
            .collect()
    }

    /// The plan's own frames: one ack per argument, two snapshots, both
    /// books equal to the market's.
    fn subscribe(&mut self) {
        let plans = Venue::Okx
            .plans(&self.specs, Channels::default())
            .expect("a plan");
        assert_eq!(plans[0].path, "/ws/v5/public");
        for frame in plans.iter().flat_map(|p| p.subscribe.clone()) {
            let outcomes = self.send(&frame);
            assert_eq!(
                outcomes.iter().filter(|o| **o == Outcome::Control).count(),
                6,
                "{outcomes:?}"
            );
            assert_eq!(outcomes.iter().filter(|o| **o == Outcome::Data).count(), 2);
        }
        self.assert_books_equal(0, "after the snapshots");
        self.assert_books_equal(1, "after the snapshots");
    }

    /// The last events of instrument `n` end in a gap for `why`'s reason,
    /// and its book is gone.
    fn assert_gap(&self, n: usize, why: fn(&Resync) -> bool) {
        let kinds = self.kinds(n);
        assert!(
            matches!(kinds[..], [.., Kind::Gap { why: ref w }, Kind::Resync] if why(w)),
            "{kinds:?}"
        );
        assert!(self.adapter.book(InstrumentId(n as u32)).is_none());
    }

    fn resubscribe(&mut self, n: usize) -> Vec<Outcome> {
        let frames = Venue::Okx.resubscribe(&self.specs[n]);
        let mut outcomes = Vec::new();
        for f in frames {
            outcomes.extend(self.send(&f));
        }
        outcomes
    }
}

/// With the real checksums OKX sent before June 2026 (an option): every
/// book message's checksum compared and matched, and a wrong one caught.
#[test]
fn the_adapter_follows_the_simulated_market() {
    let mut h = Harness::new(Okx::with_checksums(Checksums::Crc32));
    h.subscribe();
    for k in 0..2000 {
        let n = k % 2;
        h.step(n);
        h.assert_trade_and_quote();
        for m in 0..2 {
            h.assert_books_equal(m, &format!("step {k}"));
        }
    }
    assert!(
        h.adapter.checksums_verified >= 2000,
        "every book message's checksum was checked"
    );

    // A lost book message: the instrument's next one gaps (its prevSeqId
    // is the lost seqId), Gap then Resync for it alone.
    h.market.arm(0, VenueFault::SequenceGap);
    h.step(0);
    assert!(
        h.kinds(0)
            .iter()
            .all(|k| !matches!(k, Kind::BookDelta { .. }))
    );
    h.step(1);
    h.assert_books_equal(1, "the other book");
    h.step(0);
    assert!(
        matches!(
            h.kinds(0)[..],
            [
                ..,
                Kind::Gap {
                    why: Resync::Sequence { .. }
                },
                Kind::Resync
            ]
        ),
        "{:?}",
        h.kinds(0)
    );
    assert!(h.adapter.book(InstrumentId(0)).is_none());
    h.step(1);
    h.assert_books_equal(1, "the other book, after the gap");
    // Resubscribing brings a snapshot that makes it valid and equal.
    let outcomes = h.resubscribe(0);
    assert_eq!(
        outcomes,
        [Outcome::Control, Outcome::Control, Outcome::Data]
    );
    assert!(matches!(h.kinds(0).last(), Some(Kind::BookValid { .. })));
    h.assert_books_equal(0, "after resubscribing");
    for k in 0..200 {
        h.step(k % 2);
        h.assert_books_equal(0, "after the resubscription");
        h.assert_books_equal(1, "after the resubscription");
    }

    // A wrong checksum: Gap(Checksum), Resync, and the same recovery.
    h.market.arm(1, VenueFault::BadChecksum);
    h.step(1);
    assert!(
        matches!(
            h.kinds(1)[..],
            [
                ..,
                Kind::Gap {
                    why: Resync::Checksum { .. }
                },
                Kind::Resync
            ]
        ),
        "{:?}",
        h.kinds(1)
    );
    h.step(0);
    h.assert_books_equal(0, "the other book, after the bad checksum");
    h.resubscribe(1);
    h.assert_books_equal(1, "after resubscribing");

    // A refused subscription: OKX's 60018 error, Rejected for the
    // instrument it names, the venue's words kept.
    h.market.arm(1, VenueFault::RejectSubscription);
    let outcomes = h.resubscribe(1);
    assert_eq!(outcomes, [Outcome::Control, Outcome::Rejected]);
    assert_eq!(h.kinds(1), [Kind::Rejected { code: 60018 }]);
    assert!(h.kinds(0).is_empty());
    let words = tickwire_venues::VenueAdapter::rejection(&h.adapter);
    assert!(
        words.starts_with("Wrong URL or channel:books,instId:ETH-USDT doesn't exist"),
        "{words}"
    );
    // The refusal is used up: the next subscription brings the book back.
    let outcomes = h.resubscribe(1);
    assert_eq!(
        outcomes,
        [Outcome::Control, Outcome::Control, Outcome::Data]
    );
    for k in 0..200 {
        h.step(k % 2);
        h.assert_trade_and_quote();
        h.assert_books_equal(0, "after the refusal");
        h.assert_books_equal(1, "after the refusal");
    }
}

/// OKX as it is since June 2026, and the simulator by default: every
/// `books` message carries `"checksum":0`, the adapter compares none, and
/// the `seqId`/`prevSeqId` chain alone keeps both books valid and equal
/// to the market's through a run; a lost message is still a gap, and
/// resubscribing brings the book back. A `BadChecksum` fault is then the
/// one message of the stream with a checksum that is not 0: a wrong one,
/// which the adapter compares and catches.
#[test]
fn with_checksum_0_the_seq_chain_alone_keeps_the_books_and_a_lost_message_is_a_gap() {
    let mut h = Harness::new(Okx::new());
    h.subscribe();
    for k in 0..1000 {
        h.step(k % 2);
        h.assert_trade_and_quote();
        for m in 0..2 {
            h.assert_books_equal(m, &format!("step {k}"));
        }
    }
    assert_eq!(h.adapter.checksums_verified, 0, "no checksum was compared");
    assert!(h.book_checksums.len() >= 1002);
    assert!(
        h.book_checksums.iter().all(|c| *c == 0),
        "every books message carries checksum 0"
    );

    // A lost book message: a gap by the seqId chain alone.
    h.market.arm(0, VenueFault::SequenceGap);
    h.step(0);
    h.step(1);
    h.assert_books_equal(1, "the other book");
    h.step(0);
    h.assert_gap(0, |w| matches!(w, Resync::Sequence { .. }));
    h.step(1);
    h.assert_books_equal(1, "the other book, after the gap");
    let outcomes = h.resubscribe(0);
    assert_eq!(
        outcomes,
        [Outcome::Control, Outcome::Control, Outcome::Data]
    );
    for k in 0..200 {
        h.step(k % 2);
        h.assert_books_equal(0, "after resubscribing");
        h.assert_books_equal(1, "after resubscribing");
    }

    // The one wrong checksum in a stream of zeros is compared, and caught.
    h.book_checksums.clear();
    h.market.arm(1, VenueFault::BadChecksum);
    h.step(1);
    assert!(
        matches!(h.book_checksums[..], [c] if c != 0),
        "{:?}",
        h.book_checksums
    );
    h.assert_gap(1, |w| matches!(w, Resync::Checksum { .. }));
    h.step(0);
    h.assert_books_equal(0, "the other book, after the bad checksum");
    h.resubscribe(1);
    for k in 0..200 {
        h.step(k % 2);
        h.assert_books_equal(0, "after the bad checksum");
        h.assert_books_equal(1, "after the bad checksum");
    }
    assert_eq!(
        h.adapter.checksums_verified, 0,
        "the wrong one did not match"
    );
    assert!(h.book_checksums[1..].iter().all(|c| *c == 0));
}
