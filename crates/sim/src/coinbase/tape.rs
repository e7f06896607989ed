//! What Coinbase's `market_trades` and `ticker` channels need of the past:
//! each product's recent trades (a `market_trades` subscription starts
//! with a `snapshot` of them: WebSocket Channels docs, how many
//! unconfirmed) and its running figures for `ticker` (`volume_24_h`,
//! `low_24_h`, ...: here since the simulator started).

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Mutex;

use super::wire;
use crate::market::{Step, Trade};
use crate::protocol::Market;
use crate::server::lock;

/// Recent trades kept per product.
const RECENT_TRADES: usize = 20;

/// Every product's tally, shared by all clients.
#[derive(Default)]
pub(super) struct Tape(Mutex<Vec<Tally>>);

/// One product's trades so far.
#[derive(Clone, Debug, Default)]
struct Tally {
    last_id: u64,
    /// With their times (ms); newest last.
    recent: VecDeque<(Trade, u64)>,
    volume: i64,
    open: i64,
    low: i64,
    high: i64,
}

impl Tape {
    /// Keeps the step's trade, once (each client's step brings it).
    pub(super) fn record(&self, step: &Step) {
        let Some(t) = step.trade else { return };
        let mut tape = lock(&self.0);
        if tape.len() <= step.instrument {
            tape.resize(step.instrument + 1, Tally::default());
        }
        let tally = &mut tape[step.instrument];
        if t.id <= tally.last_id {
            return;
        }
        if tally.last_id == 0 {
            (tally.open, tally.low, tally.high) = (t.price, t.price, t.price);
        }
        tally.last_id = t.id;
        tally.volume += t.size;
        tally.low = tally.low.min(t.price);
        tally.high = tally.high.max(t.price);
        if tally.recent.len() == RECENT_TRADES {
            tally.recent.pop_front();
        }
        tally.recent.push_back((t, step.time_ms));
    }

    /// Product `n`'s recent trades, newest first, as `market_trades`
    /// objects (each after a comma but the very first of `out`).
    pub(super) fn recent(&self, out: &mut String, first: &mut bool, market: &Market, n: usize) {
        let tape = lock(&self.0);
        for &trade in tape.get(n).into_iter().flat_map(|t| t.recent.iter().rev()) {
            if !std::mem::take(first) {
                out.push(',');
            }
            write_trade(out, market, n, trade);
        }
    }

    /// One `ticker` object for product `n`, its best bid and ask the
    /// book's now; false (nothing written) if it has not traded.
    pub(super) fn ticker(&self, out: &mut String, market: &Market, n: usize) -> bool {
        let tape = lock(&self.0);
        let Some(tally) = tape.get(n) else {
            return false;
        };
        let Some((last, _)) = tally.recent.back() else {
            return false;
        };
        let spec = &market.instruments[n];
        let (ps, ss) = (spec.price_scale, spec.size_scale);
        let ((bp, bq), (ap, aq)) = market.books[n].top();
        let change = (last.price - tally.open) as f64 / tally.open as f64 * 100.0;
        let (low, high) = (wire::number(tally.low, ps), wire::number(tally.high, ps));
        let _ = write!(
            out,
            r#"{{"type":"ticker","product_id":"{}","price":"{}","volume_24_h":"{}","low_24_h":"{low}","high_24_h":"{high}","low_52_w":"{low}","high_52_w":"{high}","price_percent_chg_24_h":"{change}","best_bid":"{}","best_bid_quantity":"{}","best_ask":"{}","best_ask_quantity":"{}"}}"#,
            wire::product_id(&spec.symbol),
            wire::number(last.price, ps),
            wire::number(tally.volume, ss),
            wire::number(bp, ps),
            wire::number(bq, ss),
            wire::number(ap, ps),
            wire::number(aq, ss),
        );
        true
    }
}

/// One `market_trades` trade object of product `n`: `side` is the
/// maker's ("Each market trade belongs to a side, which refers to the
/// makers side", WebSocket Channels docs), the taker's opposite.
pub(super) fn write_trade(out: &mut String, market: &Market, n: usize, (t, time_ms): (Trade, u64)) {
    let spec = &market.instruments[n];
    let side = if t.buyer_aggressor { "SELL" } else { "BUY" };
    let _ = write!(
        out,
        r#"{{"trade_id":"{}","product_id":"{}","price":"{}","size":"{}","side":"{side}","time":"{}"}}"#,
        t.id,
        wire::product_id(&spec.symbol),
        wire::number(t.price, spec.price_scale),
        wire::number(t.size, spec.size_scale),
        wire::rfc3339(time_ms * 1_000_000)
    );
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn recent_trades_once_each_and_a_ticker_of_the_book() {
        let mut m = super::super::tests::market();
        let tape = Tape::default();
        let mut s = String::new();
        assert!(!tape.ticker(&mut s, &m, 1) && s.is_empty(), "no trade yet");
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(5);
        let mut step = Step::default();
        let mut trades = Vec::new();
        for _ in 0..30 {
            m.step(1, &mut rng, true, &mut step);
            // Two clients' steps: kept once.
            tape.record(&step);
            tape.record(&step);
            trades.push(step.trade.unwrap());
        }
        let mut first = true;
        s.push('[');
        tape.recent(&mut s, &mut first, &m, 1);
        s.push(']');
        let v: Vec<Value> = serde_json::from_str(&s).unwrap();
        assert_eq!(v.len(), RECENT_TRADES);
        let newest = trades.last().unwrap();
        assert_eq!(v[0]["trade_id"], newest.id.to_string());
        assert_eq!(
            v[0]["side"],
            if newest.buyer_aggressor {
                "SELL"
            } else {
                "BUY"
            }
        );
        assert_eq!(v[0]["price"], wire::number(newest.price, 2));
        let mut s = String::new();
        assert!(tape.ticker(&mut s, &m, 1));
        let t: Value = serde_json::from_str(&s).unwrap();
        let ((bid, bid_size), (ask, _)) = m.books[1].top();
        assert_eq!(t["best_bid"], wire::number(bid, 2));
        assert_eq!(t["best_bid_quantity"], wire::number(bid_size, 8));
        assert_eq!(t["best_ask"], wire::number(ask, 2));
        let volume: i64 = trades.iter().map(|t| t.size).sum();
        assert_eq!(t["volume_24_h"], wire::number(volume, 8));
        let low = trades.iter().map(|t| t.price).min().unwrap();
        assert_eq!(t["low_24_h"], wire::number(low, 2));
    }
}
