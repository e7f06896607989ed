//! `sbe`: one recorded Binance spot market (`../shared/samples`, the replay
//! bench's BTCUSDT day-slice) through the whole adapter twice: as recorded,
//! in JSON (`on_message`, combined-stream wrapper and all), and written
//! into the venue's SBE stream schema message for message (`on_binary`:
//! depth diffs, trades, best bid/ask; the same REST snapshot in JSON for
//! both). Same adapter, same books, same events (checked: the two replays'
//! event counts and gaps must agree), so the difference is the encoding.
//! Prices go into SBE at exponent -2 and quantities at -5 (BTCUSDT's tick
//! and lot; -8 in a message with a finer value), the instrument keeps 8
//! decimals of each as the replay bench does: every value read costs the
//! SBE side its multiplication by a power of ten. Per message kind (a replay of that kind alone: the diffs with
//! their snapshot, the trades, the tickers) and whole, at book depths 20
//! and 500; `aggTrade` has no SBE stream and is left out of both.
//!
//! `cargo bench -p tickwire-benches --bench sbe [-- RUNS]`

#![allow(clippy::print_stdout)] // A benchmark reports its results.

#[path = "common/recording.rs"]
mod recording;

use std::hint::black_box;
use std::time::Instant;

use serde_json::Value;
use tickwire_sbe::spot_stream::{BestBidAskHead, DiffHead, Level, Trade, TradesHead, encode};
use tickwire_venues::binance::{Adapter, Market};
use tickwire_venues::book::Limit;
use tickwire_venues::decimal::parse_scaled;
use tickwire_venues::{InstrumentId, InstrumentSpec, Kind};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum What {
    Snapshot,
    Diff,
    Trade,
    Ticker,
}

/// One message both ways: the JSON as recorded (padded), its length, and
/// the SBE frame (empty for the REST snapshot, which stays JSON).
struct Both {
    what: What,
    json: Vec<u8>,
    len: usize,
    sbe: Vec<u8>,
    levels: usize,
}

/// The exponents the SBE side is written at: BTCUSDT's tick and lot, or
/// the recording's eight decimals for a message with a value finer than
/// them (the venue's exponents are per message).
const PRICE_EXPONENT: i8 = -2;
const QTY_EXPONENT: i8 = -5;

fn text(v: &Value) -> &[u8] {
    v.as_str().expect("a decimal string").as_bytes()
}

/// The exponent that holds every value of `values` exactly: `preferred`,
/// or -8.
fn exponent<'v>(values: impl Iterator<Item = &'v Value>, preferred: i8) -> i8 {
    let mut values = values;
    if values.all(|v| parse_scaled(text(v), preferred.unsigned_abs()).is_ok()) {
        preferred
    } else {
        -8
    }
}

fn mantissa(v: &Value, exponent: i8) -> i64 {
    parse_scaled(text(v), exponent.unsigned_abs()).expect("exact at 8 decimals")
}

fn levels(v: &Value, pe: i8, qe: i8) -> Vec<Level> {
    v.as_array()
        .expect("levels")
        .iter()
        .map(|l| Level {
            price: mantissa(&l[0], pe),
            qty: mantissa(&l[1], qe),
        })
        .collect()
}

/// The recording's message in SBE, or `None` for a stream SBE lacks.
fn to_sbe(json: &[u8]) -> Option<(What, Vec<u8>, usize)> {
    let v: Value = serde_json::from_slice(json).ok()?;
    if v.get("lastUpdateId").is_some() {
        return Some((What::Snapshot, Vec::new(), 0));
    }
    let d = v.get("data").unwrap_or(&v);
    let symbol = d["s"].as_str()?.as_bytes();
    let us = |k: &str| d[k].as_i64().unwrap_or(0) * 1000;
    let mut out = vec![0u8; 1 << 16];
    let (what, n, levels) = match d.get("e").and_then(Value::as_str) {
        Some("depthUpdate") => {
            let all = || {
                let (b, a) = (d["b"].as_array().into_iter(), d["a"].as_array().into_iter());
                b.chain(a).flatten()
            };
            let pe = exponent(all().map(|l| &l[0]), PRICE_EXPONENT);
            let qe = exponent(all().map(|l| &l[1]), QTY_EXPONENT);
            let h = DiffHead {
                event_time_us: us("E"),
                first_update_id: d["U"].as_i64()?,
                last_update_id: d["u"].as_i64()?,
                price_exponent: pe,
                qty_exponent: qe,
            };
            let (b, a) = (levels(&d["b"], pe, qe), levels(&d["a"], pe, qe));
            let n = encode::depth_diff(&mut out, &h, &b, &a, symbol).ok()?;
            (What::Diff, n, b.len() + a.len())
        }
        Some("trade") => {
            let (pe, qe) = (
                exponent([&d["p"]].into_iter(), PRICE_EXPONENT),
                exponent([&d["q"]].into_iter(), QTY_EXPONENT),
            );
            let h = TradesHead {
                event_time_us: us("E"),
                transact_time_us: us("T"),
                price_exponent: pe,
                qty_exponent: qe,
            };
            let t = Trade {
                id: d["t"].as_i64()?,
                price: mantissa(&d["p"], pe),
                qty: mantissa(&d["q"], qe),
                is_buyer_maker: d["m"].as_bool()?,
            };
            (
                What::Trade,
                encode::trades(&mut out, &h, &[t], symbol).ok()?,
                0,
            )
        }
        None if d.get("u").is_some() => {
            let pe = exponent([&d["b"], &d["a"]].into_iter(), PRICE_EXPONENT);
            let qe = exponent([&d["B"], &d["A"]].into_iter(), QTY_EXPONENT);
            let h = BestBidAskHead {
                event_time_us: 0,
                book_update_id: d["u"].as_i64()?,
                price_exponent: pe,
                qty_exponent: qe,
                bid: Level {
                    price: mantissa(&d["b"], pe),
                    qty: mantissa(&d["B"], qe),
                },
                ask: Level {
                    price: mantissa(&d["a"], pe),
                    qty: mantissa(&d["A"], qe),
                },
            };
            (
                What::Ticker,
                encode::best_bid_ask(&mut out, &h, symbol).ok()?,
                0,
            )
        }
        _ => return None,
    };
    out.truncate(n);
    Some((what, out, levels))
}

/// A replay's events and gaps, and its median ns/message.
fn replay(msgs: &mut [&mut Both], depth: usize, sbe: bool, runs: usize) -> (f64, u64, u64) {
    let spec = [InstrumentSpec::new("BTCUSDT", 8, 8, depth)];
    let mut times = Vec::new();
    let (mut events, mut gaps) = (0u64, 0u64);
    for run in 0..runs + 1 {
        let mut adapter = Adapter::new(Market::Spot, &spec);
        let (mut e, mut g) = (0u64, 0u64);
        let mut count = |ev: tickwire_venues::Event| {
            e += 1;
            g += u64::from(matches!(ev.kind, Kind::Gap { .. }));
        };
        let t = Instant::now();
        for m in msgs.iter_mut() {
            let r = match (m.what, sbe) {
                (What::Snapshot, _) => {
                    let limit = Limit::Levels(1000);
                    adapter.on_snapshot_at(
                        InstrumentId(0),
                        limit,
                        &mut m.json,
                        m.len,
                        0,
                        &mut count,
                    )
                }
                (_, false) => adapter.on_message(&mut m.json, m.len, 0, &mut count),
                (_, true) => adapter.on_binary(&m.sbe, 0, &mut count),
            };
            black_box(r.is_ok());
        }
        let ns = t.elapsed().as_nanos() as f64 / msgs.len() as f64;
        // The first is a warm-up.
        if run > 0 {
            times.push(ns);
        }
        (events, gaps) = (e, g);
    }
    (recording::median(times), events, gaps)
}

fn main() {
    let (runs, _, _) = tickwire_benches::harness_args((7, 0), (1, 0));
    let file = "spot/original/hftbacktest_spot_btcusdt_20240808.gz";
    let Some(recorded) = recording::binance(file) else {
        eprintln!("sbe: skipped, ../shared/samples is absent");
        return;
    };
    let mut all: Vec<Both> = recorded
        .into_iter()
        .filter_map(|(json, len, _)| {
            let (what, sbe, levels) = to_sbe(&json[..len])?;
            Some(Both {
                what,
                json,
                len,
                sbe,
                levels,
            })
        })
        .collect();
    let diffs = all.iter().filter(|m| m.what == What::Diff).count();
    let levels: usize = all.iter().map(|m| m.levels).sum();
    println!(
        "{file}: {} messages with an SBE stream ({diffs} diffs of {:.1} levels on average), {runs} replays each, median",
        all.len(),
        levels as f64 / diffs.max(1) as f64
    );
    for depth in [20, 500] {
        for (name, kinds) in [
            (
                "whole",
                &[What::Snapshot, What::Diff, What::Trade, What::Ticker][..],
            ),
            (
                "depth diffs (and the snapshot)",
                &[What::Snapshot, What::Diff][..],
            ),
            ("trades", &[What::Trade][..]),
            ("best bid/ask", &[What::Ticker][..]),
        ] {
            let mut msgs: Vec<&mut Both> =
                all.iter_mut().filter(|m| kinds.contains(&m.what)).collect();
            let (json, je, jg) = replay(&mut msgs, depth, false, runs);
            let (sbe, se, sg) = replay(&mut msgs, depth, true, runs);
            assert_eq!(
                (je, jg),
                (se, sg),
                "the two replays' events and gaps differ"
            );
            println!(
                "book depth {depth}, {name}: {} messages, {:.2} events each, {jg} gaps; JSON {json:.0} ns/message, SBE {sbe:.0} ns/message ({:.1}x)",
                msgs.len(),
                je as f64 / msgs.len() as f64,
                json / sbe
            );
        }
    }
}
