//! `replay`: a whole recorded Binance day-slice (diffs, the REST snapshot,
//! trades, book tickers) through tickwire-venues, per message: decoding
//! alone (`binance::Decoder`), and the full adapter (decode, exact
//! decimals, book sync, normalised events). Needs `../shared/samples`
//! (skips with a line when absent). Each replay runs through a new adapter
//! made (and its decoder warmed) before timing, so each buffers, bridges
//! the snapshot and follows the chain as the recording did; the first
//! replay is a warm-up. The recordings' snapshots were
//! fetched at `limit=1000` and are told so; the books show 20, 500, 1000
//! and 5000 levels, and each line says how many events a message made,
//! how often the book gapped, and for what share of the messages it was
//! valid (the market leaving the snapshot's 1000 levels is the only gap
//! expected at 20 and 500). A book showing 1000 or 5000 levels of a
//! 1000-level snapshot is exact only while no level of it is removed: its
//! rows time a book that is valid for next to none of the replay and
//! otherwise only buffers diffs, and say so. Which message is the REST
//! snapshot is known before timing (a feed knows it by where it came
//! from), so the timed loop is the adapter's work alone.
//! Before them, each recording's book tickers, trades and depth diffs
//! alone: decoded, and (tickers and trades, which touch no book) through
//! the whole adapter, ns a message, to show where a whole replay's time
//! goes by kind.
//!
//! `cargo bench -p tickwire-benches --bench replay [-- RUNS]`

#![allow(clippy::print_stdout)] // A benchmark reports its results.

#[path = "common/recording.rs"]
mod recording;

use std::cell::Cell;
use std::hint::black_box;
use std::time::Instant;

use tickwire_venues::binance::{Adapter, Decoder, Market};
use tickwire_venues::book::Limit;
use tickwire_venues::{InstrumentId, InstrumentSpec, Kind};

fn main() {
    let (runs, _, _) = tickwire_benches::harness_args((7, 0), (1, 0));
    for (file, market) in [
        (
            "spot/original/hftbacktest_spot_btcusdt_20240808.gz",
            Market::Spot,
        ),
        (
            "usdm/original/hftbacktest_usdm_btcusdt_20240808.gz",
            Market::UsdM,
        ),
    ] {
        let Some(mut msgs) = recording::binance(file) else {
            eprintln!("replay: skipped, ../shared/samples is absent");
            return;
        };
        kinds(file, market, &msgs, runs);
        let n = msgs.len() as f64;
        for depth in [20, 500, 1000, 5000] {
            let spec = [InstrumentSpec::new("BTCUSDT", 8, 8, depth)];
            let mut decoder = Decoder::new();
            let (mut events, mut gaps, valid) = (0u64, 0u64, Cell::new(false));
            let mut count = |e: tickwire_venues::Event| {
                events += 1;
                match e.kind {
                    Kind::Gap { .. } => {
                        gaps += 1;
                        valid.set(false);
                    }
                    Kind::BookValid { .. } => valid.set(true),
                    _ => {}
                }
            };
            // Messages after which the book was valid (read from the
            // events, outside the adapter).
            let mut valid_after = 0u64;
            let (mut decode_ns, mut adapt_ns) = (Vec::new(), Vec::new());
            for _ in 0..runs + 1 {
                let t = Instant::now();
                for (buf, len, _) in msgs.iter_mut() {
                    black_box(decoder.decode(buf, *len, |m| m.is_ok()));
                }
                decode_ns.push(t.elapsed().as_nanos() as f64 / n);
                // A new adapter each replay, made before timing: one told
                // its connection dropped keeps the diffs it buffered (ids
                // carry across connections), which are newer than the
                // recording's snapshot, so it would never be valid again.
                // Its decoder is warmed on the largest message, the
                // snapshot, which the stream refuses without a change.
                let mut adapter = Adapter::new(market, &spec);
                if let Some((buf, len, _)) = msgs.iter().find(|m| m.2) {
                    let mut warm = buf.clone();
                    black_box(adapter.on_message(&mut warm, *len, 0, &mut |_| ()).is_err());
                }
                valid.set(false);
                let t = Instant::now();
                for (buf, len, snapshot) in msgs.iter_mut() {
                    let r = if *snapshot {
                        let limit = Limit::Levels(1000);
                        adapter.on_snapshot_at(InstrumentId(0), limit, buf, *len, 0, &mut count)
                    } else {
                        adapter.on_message(buf, *len, 0, &mut count)
                    };
                    black_box(r.is_ok());
                    valid_after += u64::from(valid.get());
                }
                adapt_ns.push(t.elapsed().as_nanos() as f64 / n);
            }
            // The first of each is warm-up.
            decode_ns.remove(0);
            adapt_ns.remove(0);
            let (d, a) = (recording::median(decode_ns), recording::median(adapt_ns));
            let replays = (runs + 1) as f64;
            println!(
                "{file}, book depth {depth}: {} messages, {:.2} events each, {:.1} gaps a replay, book valid after {:.1} % of messages; median of {runs} replays: decode {d:.0} ns/message, adapter {a:.0} ns/message (book and events add {:.0})",
                msgs.len(),
                events as f64 / (n * replays),
                gaps as f64 / replays,
                100.0 * valid_after as f64 / (n * replays),
                a - d
            );
        }
    }
}

/// Each kind of message of a recording alone, ns a message: decoded, and
/// for trades and book tickers (which touch no book) through the whole
/// adapter too. Diffs are decoded only: without their snapshot an adapter
/// only buffers them. Where a whole replay's time goes, by kind.
fn kinds(file: &str, market: Market, msgs: &[(Vec<u8>, usize, bool)], runs: usize) {
    let spec = [InstrumentSpec::new("BTCUSDT", 8, 8, 20)];
    for (kind, key, adapt) in [
        ("book tickers", &b"bookTicker"[..], true),
        ("trades", &b"\"e\":\"trade\""[..], true),
        ("depth diffs", &b"depthUpdate"[..], false),
    ] {
        let mut set: Vec<_> = msgs
            .iter()
            .filter(|(buf, len, snapshot)| {
                !snapshot && buf[..*len].windows(key.len()).any(|w| w == key)
            })
            .cloned()
            .collect();
        if set.is_empty() {
            continue;
        }
        let n = set.len() as f64;
        let mut decoder = Decoder::new();
        let (mut decode_ns, mut adapt_ns) = (Vec::new(), Vec::new());
        for _ in 0..runs + 1 {
            let t = Instant::now();
            for (buf, len, _) in set.iter_mut() {
                black_box(decoder.decode(buf, *len, |m| m.is_ok()));
            }
            decode_ns.push(t.elapsed().as_nanos() as f64 / n);
            if adapt {
                let mut adapter = Adapter::new(market, &spec);
                let mut events = 0u64;
                let t = Instant::now();
                for (buf, len, _) in set.iter_mut() {
                    black_box(
                        adapter
                            .on_message(buf, *len, 0, &mut |_| events += 1)
                            .is_ok(),
                    );
                }
                adapt_ns.push(t.elapsed().as_nanos() as f64 / n);
                // Every one of them made an event.
                assert!(
                    events >= set.len() as u64,
                    "{file}: {kind} made {events} events"
                );
            }
        }
        decode_ns.remove(0);
        let whole = if adapt {
            adapt_ns.remove(0);
            format!(", adapter {:.0}", recording::median(adapt_ns))
        } else {
            String::new()
        };
        println!(
            "{file}, {kind} alone ({} messages): median of {runs} replays, ns/message: decode {:.0}{whole}",
            set.len(),
            recording::median(decode_ns),
        );
    }
}
