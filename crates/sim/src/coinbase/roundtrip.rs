//! The simulated Coinbase against tickwire's own Coinbase adapter, with no
//! network: every frame the protocol writes goes into
//! `tickwire_venues::coinbase::Adapter::on_message`, and the adapter's
//! books and trades are checked against the market after every step.

use rand::SeedableRng;
use rand::rngs::StdRng;
use tickwire_venues::book::Side;
use tickwire_venues::coinbase::Adapter;
use tickwire_venues::plan::Channels;
use tickwire_venues::sync::Resync;
use tickwire_venues::{
    Aggressor, Event, InstrumentId, InstrumentSpec, Kind, Outcome, Venue, VenueAdapter,
};

use super::{Client, Coinbase};
use crate::VenueFault;
use crate::market::{Levels, Step};
use crate::protocol::{Market, Out, Protocol};
use crate::stamps::StreamKind;
use crate::testutil::{self, Consumer};

/// BTC-USD shows 10 levels of its 25 000 a side (the adapter keeps 2000
/// and tracks the horizon below them); ETH-USD 50 of its 200 (all kept).
const DEPTHS: [usize; 2] = [10, 50];

/// One connection: its protocol state, and the adapter and consumer on
/// the other end.
struct Link {
    client: Client,
    adapter: Adapter,
    consumer: Consumer,
    /// Every event so far.
    events: Vec<Event>,
    /// The outcome of every frame so far.
    outcomes: Vec<Outcome>,
}

struct Harness {
    cb: Coinbase,
    market: Market,
    specs: Vec<InstrumentSpec>,
    rng: StdRng,
    step: Step,
    k: usize,
}

impl Harness {
    fn new() -> Harness {
        let market = super::tests::market();
        let specs: Vec<InstrumentSpec> = market
            .instruments
            .iter()
            .zip(DEPTHS)
            .map(|(i, d)| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, d))
            .collect();
        Harness {
            // Requests come faster than the venue takes them (a test).
            cb: super::budget::unlimited(),
            market,
            specs,
            rng: StdRng::seed_from_u64(7),
            step: Step::default(),
            k: 0,
        }
    }

    /// A connection subscribed as the plan for `specs` says.
    fn connect(&mut self, specs: &[InstrumentSpec]) -> Link {
        let mut link = Link {
            client: super::tests::connect(&self.cb, &self.market),
            adapter: Adapter::new(&self.specs),
            consumer: Consumer::new(DEPTHS),
            events: Vec::new(),
            outcomes: Vec::new(),
        };
        let plans = Venue::Coinbase.plans(specs, Channels::default()).unwrap();
        assert_eq!(plans[0].path, "/");
        for frame in &plans[0].subscribe {
            self.send(&mut link, frame);
        }
        link
    }

    /// A client frame: the venue's answers go to the adapter.
    fn send(&mut self, link: &mut Link, text: &str) {
        let mut out = Out::default();
        self.cb
            .on_text(&mut link.client, text, &mut self.market, &mut out);
        deliver(link, out);
    }

    /// One market step (instruments in turn, every third trading), to
    /// every link.
    fn step(&mut self, links: &mut [&mut Link], fault: Option<VenueFault>) {
        let n = self.k % self.market.instruments.len();
        let trade = self.k.is_multiple_of(3);
        self.k += 1;
        if let Some(f) = fault {
            self.market.arm(n, f);
        }
        self.market.step(n, &mut self.rng, trade, &mut self.step);
        for link in links.iter_mut() {
            let mut out = Out::default();
            self.cb
                .on_step(&mut link.client, &self.step, &self.market, &mut out);
            let from = link.events.len();
            deliver(link, out);
            if let Some(t) = self.step.trade
                && link.client.has(super::Channel::MarketTrades, n)
            {
                let trades: Vec<Kind> = link.events[from..]
                    .iter()
                    .filter(|e| matches!(e.kind, Kind::Trade { .. }))
                    .map(|e| e.kind)
                    .collect();
                let aggressor = if t.buyer_aggressor {
                    Aggressor::Buy
                } else {
                    Aggressor::Sell
                };
                assert_eq!(
                    trades,
                    [Kind::Trade {
                        price: t.price,
                        size: t.size,
                        aggressor,
                        trade_id: t.id
                    }]
                );
            }
        }
    }

    /// The venue's book `n` at the shown depth.
    fn truth(&self, n: usize) -> (Levels, Levels) {
        self.market.books[n].levels(DEPTHS[n])
    }

    /// The adapter's and the consumer's book `n`, if valid, equal the
    /// market's.
    fn check(&self, link: &Link, n: usize) -> bool {
        let Some(book) = link.adapter.book(InstrumentId(n as u32)) else {
            return false;
        };
        let shown = |side| -> Levels {
            book.levels(side)
                .iter()
                .map(|l| (l.price, l.size))
                .collect()
        };
        let truth = self.truth(n);
        assert_eq!(
            (shown(Side::Bid), shown(Side::Ask)),
            truth,
            "instrument {n} at step {}",
            self.k
        );
        assert_eq!(link.consumer.levels(n), Some(truth), "consumer {n}");
        true
    }

    /// Resubscribes every book that asked for it (`Resync`), as the feed
    /// does: the plan's frames.
    fn recover(&mut self, link: &mut Link, from: usize) {
        let asked: Vec<u32> = link.events[from..]
            .iter()
            .filter(|e| e.kind == Kind::Resync)
            .map(|e| e.instrument.0)
            .collect();
        for n in asked {
            for frame in Venue::Coinbase.resubscribe(&self.specs[n as usize]) {
                self.send(link, &frame);
            }
        }
    }
}

/// Every frame of `out` into the adapter, each with its padding; the
/// stamp each market-data frame was filed under is the id the adapter
/// reports for it.
fn deliver(link: &mut Link, out: Out) {
    for (frame, key) in out.items {
        let text = frame.into_text();
        let from = link.events.len();
        let outcome = testutil::deliver(&mut link.adapter, &text, &mut link.events);
        link.outcomes.push(outcome);
        for e in &link.events[from..] {
            link.consumer.on(e);
            match (key, e.kind) {
                (Some((_, StreamKind::Depth, id)), Kind::BookDelta { update_id, .. }) => {
                    assert_eq!(update_id, id)
                }
                (Some((_, StreamKind::Trade, id)), Kind::Trade { trade_id, .. }) => {
                    assert_eq!(trade_id, id)
                }
                _ => {}
            }
        }
    }
}

fn kinds_of(link: &Link, from: usize, n: u32) -> Vec<Kind> {
    link.events[from..]
        .iter()
        .filter(|e| e.instrument.0 == n)
        .map(|e| e.kind)
        .collect()
}

#[test]
fn books_and_trades_follow_the_market_through_a_lost_message_and_a_refusal() {
    let mut h = Harness::new();
    let specs = h.specs.clone();
    let mut a = h.connect(&specs);
    // The plan: heartbeats, level2 (two snapshots, the first of several
    // megabytes), market_trades; every frame numbered in one chain.
    assert!(a.adapter.book(InstrumentId(0)).is_some() && a.adapter.book(InstrumentId(1)).is_some());
    assert!(a.events.iter().any(|e| e.kind
        == Kind::BookSnapshot {
            update_id: 1,
            bids: 10,
            asks: 10,
            depth: 10
        }));
    assert_eq!(a.outcomes[0], Outcome::Control);
    // A second connection carrying ETH-USD alone (the venue's advice for
    // busy products): BTC-USD's lost message is not on it.
    let mut b = h.connect(&specs[1..]);
    assert!(b.adapter.book(InstrumentId(0)).is_none());

    for _ in 0..1500 {
        h.step(&mut [&mut a, &mut b], None);
        assert!(h.check(&a, 0) && h.check(&a, 1) && h.check(&b, 1));
    }
    let trades = a
        .events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Trade { .. }))
        .count();
    assert_eq!(trades, 500);

    // BTC-USD's next book message is lost: `sequence_num` skips it, and
    // every book of the connection has a gap and asks for a snapshot; the
    // other connection sees nothing.
    let (from_a, from_b) = (a.events.len(), b.events.len());
    assert_eq!(h.k % 2, 0, "BTC-USD's turn");
    h.step(&mut [&mut a, &mut b], Some(VenueFault::SequenceGap));
    h.step(&mut [&mut a, &mut b], None);
    for n in 0..2 {
        let mut kinds = kinds_of(&a, from_a, n);
        kinds.retain(|k| !matches!(k, Kind::Trade { .. }));
        assert!(
            matches!(
                kinds[..],
                [
                    Kind::Gap {
                        why: Resync::Sequence { .. }
                    },
                    Kind::Resync,
                    ..
                ]
            ),
            "{n}: {kinds:?}"
        );
        assert!(a.adapter.book(InstrumentId(n)).is_none());
    }
    assert!(
        !b.events[from_b..]
            .iter()
            .any(|e| matches!(e.kind, Kind::Gap { .. } | Kind::Resync))
    );
    assert!(h.check(&b, 1));

    // Resubscribing each (unsubscribe, subscribe) brings a snapshot: valid
    // and equal again.
    let from = a.events.len();
    h.recover(&mut a, from_a);
    for n in 0..2 {
        let kinds = kinds_of(&a, from, n);
        assert!(
            kinds.iter().any(|k| matches!(k, Kind::BookValid { .. })),
            "{kinds:?}"
        );
        assert!(h.check(&a, n as usize));
    }
    for _ in 0..200 {
        h.step(&mut [&mut a, &mut b], None);
        assert!(h.check(&a, 0) && h.check(&a, 1) && h.check(&b, 1));
    }

    // Another lost message, and ETH-USD's resubscription is refused: the
    // venue's words, `Rejected` for ETH-USD alone (BTC-USD's snapshot came
    // first), and its book waits.
    h.market.arm(1, VenueFault::RejectSubscription);
    let from = a.events.len();
    h.step(&mut [&mut a, &mut b], Some(VenueFault::SequenceGap));
    h.step(&mut [&mut a, &mut b], None);
    let outcomes = a.outcomes.len();
    let after_gap = a.events.len();
    h.recover(&mut a, from);
    let rejected: Vec<(u32, Kind)> = a.events[after_gap..]
        .iter()
        .filter(|e| matches!(e.kind, Kind::Rejected { .. }))
        .map(|e| (e.instrument.0, e.kind))
        .collect();
    assert_eq!(rejected, [(1, Kind::Rejected { code: 0 })]);
    assert_eq!(a.outcomes[outcomes..].last(), Some(&Outcome::Rejected));
    assert_eq!(a.adapter.rejection(), "authentication failure");
    h.step(&mut [&mut a, &mut b], None);
    assert!(h.check(&a, 0));
    assert!(a.adapter.book(InstrumentId(1)).is_none());
    // Subscribed again (the feed's retry: the subscribe frame alone), it
    // is accepted.
    h.send(&mut a, &Venue::Coinbase.resubscribe(&specs[1])[1]);
    for _ in 0..100 {
        h.step(&mut [&mut a, &mut b], None);
        assert!(h.check(&a, 0) && h.check(&a, 1) && h.check(&b, 1));
    }
    let broken = |e: &Event| {
        matches!(
            e.kind,
            Kind::Gap {
                why: Resync::DepthExhausted | Resync::Crossed
            }
        )
    };
    assert!(!a.events.iter().any(broken) && !b.events.iter().any(broken));
}

/// A `-USDC` product as a client configures and subscribes it: the venue
/// answers it as its `-USD` product, keyed `BTC-USD` ("Other channels will
/// return the same data as the corresponding '-USD' based products",
/// WebSocket Channels docs), whether the market names the instrument as
/// the venue does (`BTC-USD`) or as a simulated feed names it after its
/// configuration (`BTC-USDC`); the adapter's `BTC-USDC` book and trades
/// follow the market either way.
#[test]
fn a_usdc_product_is_answered_under_its_usd_id_and_kept() {
    for named in ["BTC-USD", "BTC-USDC"] {
        let mut h = Harness::new();
        h.market.instruments[0].symbol = named.into();
        let btc = &h.market.instruments[0];
        h.specs[0] = InstrumentSpec::new("BTC-USDC", btc.price_scale, btc.size_scale, DEPTHS[0]);
        // Every frame names the product BTC-USD, never BTC-USDC: one
        // product, asked for by both names, gets one snapshot.
        let mut c = super::tests::connect(&h.cb, &h.market);
        let mut out = Out::default();
        let both =
            r#"{"type":"subscribe","product_ids":["BTC-USDC","BTC-USD"],"channel":"level2"}"#;
        h.cb.on_text(&mut c, both, &mut h.market, &mut out);
        assert_eq!(out.items.len(), 2, "{named}: a snapshot and the ack");
        for (frame, _) in &out.items {
            let text = frame.text();
            assert!(
                text.contains(r#""BTC-USD""#) && !text.contains("BTC-USDC"),
                "{named}: {}",
                text.get(..300).unwrap_or(text)
            );
        }
        let specs = h.specs.clone();
        let mut a = h.connect(&specs);
        assert!(
            h.check(&a, 0),
            "{named}: BTC-USDC's book from BTC-USD's snapshot"
        );
        for _ in 0..300 {
            h.step(&mut [&mut a], None);
            assert!(h.check(&a, 0) && h.check(&a, 1), "{named}");
        }
        let trades = (a.events.iter())
            .filter(|e| e.instrument == InstrumentId(0) && matches!(e.kind, Kind::Trade { .. }))
            .count();
        assert_eq!(
            trades, 50,
            "{named}: every third step trades, BTC's every other"
        );
    }
}
