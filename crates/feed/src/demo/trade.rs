//! `tickwire-feed demo --trade`: the quoting strategy on the feed against
//! Deribit's simulator, which trades (its matching engine behind its
//! private API): market data and orders from the same simulator over TLS
//! on loopback, the order-entry session on the feed's own driver.
//!
//! The strategy quotes both sides at the top of the book (a bid at the
//! best bid, an ask at the best ask), amends a quote when the top moves
//! away from it, places it again once it is done, and once a second takes
//! the best ask with a small immediate-or-cancel order (so that every run
//! fills, whatever the random market does to the quotes). At the end the
//! kill switch cancels every order and waits for the answers, and the
//! simulator is asked that no order is left open as soon as the session
//! holds none, BEFORE the connections close: Deribit's cancel-on-disconnect
//! would cancel everything at the close and hide a cancel-all that did
//! not work.
//!
//! The API key is made for the run (a throw-away secret from the
//! operating system's randomness, through std's hasher keys): it is
//! given to the simulator and to the session, and never printed.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tickwire_net::TlsConfig;
use tickwire_sim::{DeribitPrivate, OrderCredits, SimConfig, SimInstrument, SimKey, Simulator};
use tickwire_trade::deribit::{Bucket, CreditLimits, DeribitOptions};
use tickwire_trade::{ClientOrderId, Credentials, OrderKind, Side, State, TimeInForce};
use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics, Stage};
use tickwire_venues::{InstrumentSpec, Venue};

use crate::live::{Feed, OnEvent, Update, VenueSetup};
use crate::trading::TradeSetup;

/// What the trading demo did.
#[derive(Clone, Debug, Default)]
pub struct TradeSummary {
    /// Requests the desk took (orders, amends, cancels).
    pub sent: u64,
    /// Orders the venue accepted.
    pub acknowledged: u64,
    /// Fills: all, and those of resting orders (maker).
    pub fills: u64,
    /// Of them, the fills of resting quotes.
    pub maker_fills: u64,
    /// Requests refused (by the session or the venue).
    pub refused: u64,
    /// Orders the kill switch's cancel-all ended at the exit.
    pub cancelled_at_exit: u64,
    /// Tick to trade: count, p50, p99, p99.9 (ns).
    pub tick_to_trade: Percentiles,
    /// Order round trip: count, p50, p99, p99.9 (ns).
    pub round_trip: Percentiles,
    /// Orders the simulator still held open once the kill switch's
    /// cancel-all was answered (the session holding none), before the
    /// connections closed.
    pub left_open: usize,
    /// Whether the session came to hold no working order at the exit
    /// before the close (the kill switch's cancel-all answered): if not,
    /// `left_open` is the simulator's count after the close, when its
    /// cancel-on-disconnect may have done the kill switch's work.
    pub cancel_all_answered: bool,
}

/// A stage's count and percentiles, in ns.
#[derive(Clone, Copy, Debug, Default)]
pub struct Percentiles {
    /// How many were measured.
    pub count: u64,
    /// The median.
    pub p50: u64,
    /// The 99th percentile.
    pub p99: u64,
    /// The 99.9th percentile.
    pub p999: u64,
}

/// The quoting strategy (see the module's docs).
#[derive(Default)]
struct Quoter {
    /// The working bid and ask (or asked for).
    quotes: [Option<ClientOrderId>; 2],
    /// When each was last placed or amended: a quote moves at most every
    /// `MOVE_EVERY` (the session's rate limit would refuse the rest).
    moved: [Option<Instant>; 2],
    /// When the last taking order went.
    last_take: Option<Instant>,
    /// The order size, in lots (the venue's minimum).
    size: i64,
    summary: TradeSummary,
    /// Shutting down: counts the kill switch's cancels.
    exiting: bool,
    /// The simulator, asked what it holds open when the session, exiting,
    /// holds nothing (before the close).
    sim: Option<Rc<Simulator>>,
    /// What it held open then.
    open_at_exit: Option<usize>,
}

impl OnEvent for Quoter {
    fn on_update(&mut self, u: &Update<'_>) {
        for e in u.orders() {
            let side = self.quotes.iter().position(|q| q.is_some() && *q == e.cid);
            let s = &mut self.summary;
            let done = match e.kind {
                OrderKind::Accepted { .. } => {
                    s.acknowledged += 1;
                    false
                }
                OrderKind::Filled { leaves, maker, .. } => {
                    s.fills += 1;
                    s.maker_fills += u64::from(maker);
                    leaves <= 0
                }
                OrderKind::Canceled => {
                    s.cancelled_at_exit += u64::from(self.exiting);
                    true
                }
                OrderKind::Rejected { .. } => {
                    s.refused += 1;
                    // An amend refused leaves its order working.
                    let working = e
                        .cid
                        .zip(u.desk())
                        .is_some_and(|(c, d)| d.order(c).is_some());
                    !working
                }
                _ => false,
            };
            if let (true, Some(side)) = (done, side) {
                self.quotes[side] = None;
            }
        }
        if self.exiting {
            // The kill switch's cancel-all answered: the simulator asked
            // now, its connections still open.
            if let (Some(sim), Some(desk)) = (&self.sim, u.desk())
                && desk.open_orders().is_empty()
            {
                self.open_at_exit = Some(sim.open_orders().len());
            }
            return;
        }
        let (Some(desk), Some((id, Some(book)))) = (u.desk(), u.books().last()) else {
            return;
        };
        let Some((bid, ask)) = book.top() else {
            return;
        };
        if desk.state() != State::Ready {
            // Asked for and not answered: forgotten with the session.
            self.quotes = [None; 2];
            return;
        }
        for (n, (side, price)) in [(Side::Bid, bid.price), (Side::Ask, ask.price)]
            .into_iter()
            .enumerate()
        {
            if self.moved[n].is_some_and(|t| t.elapsed() < MOVE_EVERY) {
                continue;
            }
            let next = match self.quotes[n].map(|cid| (cid, desk.order(cid))) {
                Some((cid, Some(o))) if o.price == price => Some(cid),
                Some((cid, Some(o))) => desk.amend(cid, price, o.leaves + o.filled).ok(),
                Some((cid, None)) => Some(cid),
                None => desk.place(id, side, price, self.size).ok(),
            };
            let asked = match (self.quotes[n], next) {
                (None, Some(_)) => true,
                (Some(cid), Some(_)) => desk.order(cid).is_some_and(|o| o.price != price),
                _ => false,
            };
            if asked {
                self.summary.sent += 1;
                self.moved[n] = Some(Instant::now());
            }
            self.quotes[n] = next.or(self.quotes[n]);
        }
        if self
            .last_take
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            self.last_take = Some(Instant::now());
            let take = desk.place_limit(
                id,
                Side::Bid,
                ask.price,
                self.size,
                TimeInForce::ImmediateOrCancel,
                false,
            );
            self.summary.sent += u64::from(take.is_ok());
        }
    }
}

/// How often a quote may move.
const MOVE_EVERY: Duration = Duration::from_millis(200);

/// A throw-away secret (see the module's docs).
fn throw_away() -> String {
    let r = RandomState::new();
    format!("{:016x}{:016x}", r.hash_one(1u8), r.hash_one(2u8))
}

/// Runs the trading demo for `duration` (or until `stop`), saying what it
/// does through `say`.
pub fn run(
    duration: Duration,
    stop: &AtomicBool,
    mut say: impl FnMut(&str),
) -> Result<TradeSummary, String> {
    let venue = Venue::Deribit;
    let (tls, ca) = tickwire_sim::self_signed()?;
    let instrument = SimInstrument::pair(venue).remove(0);
    let secret = throw_away();
    // A higher tier than the lowest for orders (20 a second, bursts of
    // 40) on the simulator, and the session kept to 15 a second, bursts of
    // 20, under it: the two count on clocks of their own (the session's
    // when it sends, the simulator's when it reads), so the session keeps
    // a margin rather than run at the venue's very limit.
    let credits = OrderCredits {
        cost: 1_000,
        max: 40_000,
        refill: 20_000,
    };
    let sim = Simulator::start(SimConfig {
        tls: Some(tls),
        instruments: vec![instrument.clone()],
        rate: 300,
        keys: vec![SimKey::hmac("demo", secret.clone())],
        deribit: DeribitPrivate {
            order_credits: credits,
            ..DeribitPrivate::default()
        },
        ..SimConfig::new(venue)
    })
    .map_err(|e| format!("the simulator: {e}"))?;
    let sim = Rc::new(sim);
    let mut trust = TlsConfig::empty();
    trust.add_ca_pem(ca.as_bytes()).map_err(|e| e.to_string())?;
    let (ps, ss) = venue.default_scales();
    let spec = InstrumentSpec::new(
        &instrument.symbol,
        ps.max(instrument.price_scale),
        ss.max(instrument.size_scale),
        10,
    );
    // BTC-PERPETUAL trades in 10 USD contracts.
    let size = 10 * 10i64.pow(u32::from(spec.size_scale));
    let mut setup = VenueSetup::new("deribit", venue, vec![spec]);
    setup.endpoint = Some(format!("wss://localhost:{}", sim.addr().port()));
    let mut trade = TradeSetup::new(Credentials::hmac("demo", secret.as_bytes()), "demo");
    trade.deribit = DeribitOptions {
        limits: CreditLimits {
            matching: Bucket {
                max: 20_000,
                refill_per_second: 15_000,
                cost: 1_000,
            },
            ..CreditLimits::default()
        },
        ..DeribitOptions::default()
    };
    let metrics = Metrics::new(HistogramConfig::default());
    let exporter = metrics
        .export(ExportConfig::default())
        .map_err(|e| format!("the metrics: {e}"))?;
    let mut feed = Feed::builder()
        .check_instruments(false)
        .setup(setup)
        .tls(trust)
        .metrics(metrics)
        .trade("deribit", trade)
        .build_with(Quoter {
            size,
            sim: Some(Rc::clone(&sim)),
            ..Quoter::default()
        })
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut next_status = start + Duration::from_secs(1);
    while start.elapsed() < duration && !stop.load(Ordering::Relaxed) {
        feed.poll().map_err(|e| e.to_string())?;
        if Instant::now() >= next_status {
            next_status += Duration::from_secs(1);
            let s = &feed.handler().summary;
            say(&format!(
                "{:>3} s  orders sent {}, acknowledged {}, fills {}, refused {}",
                start.elapsed().as_secs(),
                s.sent,
                s.acknowledged,
                s.fills,
                s.refused
            ));
        }
    }
    let quoter = feed.handler_mut();
    quoter.exiting = true;
    if quoter.quotes == [None; 2] && sim.open_orders().is_empty() {
        // Nothing working nor asked for: nothing for the kill switch.
        quoter.open_at_exit = Some(0);
    }
    // The kill switch: cancel-all, its answers waited for, then the close.
    let quoter = feed.into_handler(Duration::from_secs(2));
    let mut summary = quoter.summary;
    summary.cancel_all_answered = quoter.open_at_exit.is_some();
    let totals = exporter.finish().map_err(|e| format!("the metrics: {e}"))?;
    if let Some(t) = totals.iter().find(|t| t.name == "deribit") {
        let of = |stage| {
            let h = t.stages.get(stage);
            Percentiles {
                count: h.len(),
                p50: h.value_at_quantile(0.5),
                p99: h.value_at_quantile(0.99),
                p999: h.value_at_quantile(0.999),
            }
        };
        summary.tick_to_trade = of(Stage::TickToTrade);
        summary.round_trip = of(Stage::RoundTrip);
    }
    // The simulator's engine has the last word on what is open: as it was
    // before the close, else (the session never held nothing) now.
    summary.left_open = quoter
        .open_at_exit
        .unwrap_or_else(|| sim.open_orders().len());
    Ok(summary)
}
