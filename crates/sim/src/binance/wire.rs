//! How Binance writes things: prices and sizes at a market's precision,
//! stream names, the REST depth snapshot, and the stream payloads of a
//! market step.

use std::fmt::Write as _;

use tickwire_venues::Venue;

use super::{Binance, Kind, pair};
use crate::market::{Book, Digits, SimInstrument, Step, decimal};
use crate::time::now_ms;

impl Binance {
    /// How a price or size is written: spot pads to 8 decimals, futures
    /// use the symbol's precision.
    pub(super) fn digits(&self, scale: u8) -> Digits {
        if self.spot() {
            Digits::Fixed(8)
        } else {
            Digits::Fixed(scale)
        }
    }

    pub(super) fn levels(&self, out: &mut String, spec: &SimInstrument, levels: &[(i64, i64)]) {
        for (k, (p, q)) in levels.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str("[\"");
            decimal(out, *p, spec.price_scale, self.digits(spec.price_scale));
            out.push_str("\",\"");
            decimal(out, *q, spec.size_scale, self.digits(spec.size_scale));
            out.push_str("\"]");
        }
    }

    /// A stream's name, as `LIST_SUBSCRIPTIONS` and the combined
    /// streams' wrapper write it: the JSON diffs as `@depth@100ms`, the
    /// SBE ones as `@depth` (their only name).
    pub(super) fn stream_name(&self, symbol: &str, kind: Kind) -> String {
        let s = symbol.to_ascii_lowercase();
        match kind {
            Kind::Trade => format!("{s}@trade"),
            Kind::AggTrade => format!("{s}@aggTrade"),
            Kind::BookTicker => format!("{s}@bookTicker"),
            Kind::Depth if self.sbe() => format!("{s}@depth"),
            Kind::Depth => format!("{s}@depth@100ms"),
            Kind::BestBidAsk => format!("{s}@bestBidAsk"),
            Kind::Depth20 => format!("{s}@depth20"),
        }
    }

    /// The REST depth answer for `spec`'s book, `limit` levels a side.
    pub(super) fn snapshot(&self, spec: &SimInstrument, book: &Book, limit: usize) -> String {
        let (bids, asks) = book.levels(limit);
        let mut s = String::with_capacity(128 + limit * 60);
        let _ = write!(s, r#"{{"lastUpdateId":{}"#, book.snapshot_id);
        if !self.spot() {
            let t = now_ms();
            let _ = write!(s, r#","E":{t},"T":{t}"#);
        }
        if self.venue == Venue::BinanceCoinM {
            let _ = write!(
                s,
                r#","symbol":"{}","pair":"{}""#,
                spec.symbol,
                pair(&spec.symbol)
            );
        }
        s.push_str(r#","bids":["#);
        self.levels(&mut s, spec, &bids);
        s.push_str(r#"],"asks":["#);
        self.levels(&mut s, spec, &asks);
        s.push_str("]}");
        s
    }

    /// The messages of one step, by kind, as raw payloads.
    pub(super) fn payloads(
        &self,
        step: &Step,
        spec: &SimInstrument,
        out: &mut Vec<(Kind, u64, String)>,
    ) {
        let e = step.time_ms;
        let sym = &spec.symbol;
        let (ps, ss) = (spec.price_scale, spec.size_scale);
        if let Some(t) = step.trade {
            let m = !t.buyer_aggressor;
            let mut p = String::with_capacity(200);
            // One trade is one aggregate trade here.
            let mut price = String::new();
            decimal(&mut price, t.price, ps, self.digits(ps));
            let mut qty = String::new();
            decimal(&mut qty, t.size, ss, self.digits(ss));
            match self.venue {
                Venue::BinanceSpot => {
                    let _ = write!(
                        p,
                        r#"{{"e":"trade","E":{e},"s":"{sym}","t":{},"p":"{price}","q":"{qty}","T":{e},"m":{m},"M":true}}"#,
                        t.id
                    );
                }
                _ => {
                    let _ = write!(
                        p,
                        r#"{{"e":"trade","E":{e},"T":{e},"s":"{sym}","t":{},"p":"{price}","q":"{qty}","X":"MARKET","m":{m}}}"#,
                        t.id
                    );
                }
            }
            out.push((Kind::Trade, t.id, p));
            let mut a = String::with_capacity(200);
            if self.spot() {
                let _ = write!(
                    a,
                    r#"{{"e":"aggTrade","E":{e},"s":"{sym}","a":{id},"p":"{price}","q":"{qty}","f":{id},"l":{id},"T":{e},"m":{m},"M":true}}"#,
                    id = t.id
                );
            } else {
                let _ = write!(
                    a,
                    r#"{{"e":"aggTrade","E":{e},"a":{id},"s":"{sym}","p":"{price}","q":"{qty}","f":{id},"l":{id},"T":{e},"m":{m}}}"#,
                    id = t.id
                );
            }
            out.push((Kind::AggTrade, t.id, a));
        }
        if !step.faults.drop_book {
            let mut d = String::with_capacity(96 + 40 * (step.bids.len() + step.asks.len()));
            let (first, last, prev) = (step.first_id, step.last_id, step.prev_id);
            match self.venue {
                Venue::BinanceSpot => {
                    let _ = write!(
                        d,
                        r#"{{"e":"depthUpdate","E":{e},"s":"{sym}","U":{first},"u":{last},"b":["#
                    );
                }
                Venue::BinanceUsdM => {
                    let _ = write!(
                        d,
                        r#"{{"e":"depthUpdate","E":{e},"T":{e},"s":"{sym}","U":{first},"u":{last},"pu":{prev},"b":["#
                    );
                }
                _ => {
                    let _ = write!(
                        d,
                        r#"{{"e":"depthUpdate","E":{e},"T":{e},"s":"{sym}","ps":"{}","U":{first},"u":{last},"pu":{prev},"b":["#,
                        pair(sym)
                    );
                }
            }
            self.levels(&mut d, spec, &step.bids);
            d.push_str(r#"],"a":["#);
            self.levels(&mut d, spec, &step.asks);
            d.push_str("]}");
            out.push((Kind::Depth, last, d));
        }
        if let Some(((bp, bq), (ap, aq))) = step.top {
            let u = step.last_id;
            let mut t = String::with_capacity(200);
            let num = |v, scale| {
                let mut s = String::new();
                decimal(&mut s, v, scale, self.digits(scale));
                s
            };
            let (b, bq, a, aq) = (num(bp, ps), num(bq, ss), num(ap, ps), num(aq, ss));
            match self.venue {
                Venue::BinanceSpot => {
                    let _ = write!(
                        t,
                        r#"{{"u":{u},"s":"{sym}","b":"{b}","B":"{bq}","a":"{a}","A":"{aq}"}}"#
                    );
                }
                Venue::BinanceUsdM => {
                    let _ = write!(
                        t,
                        r#"{{"e":"bookTicker","u":{u},"s":"{sym}","b":"{b}","B":"{bq}","a":"{a}","A":"{aq}","T":{e},"E":{e}}}"#
                    );
                }
                _ => {
                    let _ = write!(
                        t,
                        r#"{{"u":{u},"e":"bookTicker","s":"{sym}","ps":"{}","b":"{b}","B":"{bq}","a":"{a}","A":"{aq}","T":{e},"E":{e}}}"#,
                        pair(sym)
                    );
                }
            }
            out.push((Kind::BookTicker, u, t));
        }
    }
}
