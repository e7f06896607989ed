//! `replay`: a whole recorded Binance day-slice (diffs, the REST snapshot,
//! trades, book tickers) through tickwire-venues, per message: decoding
//! alone (`binance::Decoder`), and the full adapter (decode, exact
//! decimals, book sync, normalised events). Needs `../shared/samples`
//! (skips with a line when absent). Warm: the adapter is told its
//! connection dropped between replays, so each replay buffers, bridges the
//! snapshot and follows the chain again. The recordings' snapshots were
//! fetched at `limit=1000` and are told so; the books show 500 and 20 of
//! those levels, and each line says how often the book gapped (the market
//! leaving the snapshot's 1000 levels is the only gap expected).
//!
//! `cargo bench -p tickwire-benches --bench replay [-- RUNS]`

#![allow(clippy::print_stdout)] // A benchmark reports its results.

use std::hint::black_box;
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use tickwire_venues::binance::{Adapter, Decoder, Market};
use tickwire_venues::book::Limit;
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec, Kind};

fn recording(file: &str) -> Option<Vec<(Vec<u8>, usize)>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/samples/binance")
        .join(file);
    let raw = std::fs::read(&path).ok()?;
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_end(&mut text)
        .ok()?;
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let msg = &l[l.iter().position(|&b| b == b' ')? + 1..];
            let mut buf = msg.to_vec();
            buf.resize(msg.len() + INPUT_PADDING, 0);
            Some((buf, msg.len()))
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

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
        let Some(mut msgs) = recording(file) else {
            eprintln!("replay: skipped, ../shared/samples is absent");
            return;
        };
        let n = msgs.len() as f64;
        for depth in [500, 20] {
            let spec = [InstrumentSpec::new("BTCUSDT", 8, 8, depth)];
            let mut decoder = Decoder::new();
            let mut adapter = Adapter::new(market, &spec);
            let (mut events, mut gaps) = (0u64, 0u64);
            let mut count = |e: tickwire_venues::Event| {
                events += 1;
                gaps += u64::from(matches!(e.kind, Kind::Gap { .. }));
            };
            let (mut decode_ns, mut adapt_ns) = (Vec::new(), Vec::new());
            for _ in 0..runs + 1 {
                let t = Instant::now();
                for (buf, len) in msgs.iter_mut() {
                    black_box(decoder.decode(buf, *len, |m| m.is_ok()));
                }
                decode_ns.push(t.elapsed().as_nanos() as f64 / n);
                adapter.on_disconnect(0, &mut |_| ());
                let t = Instant::now();
                for (buf, len) in msgs.iter_mut() {
                    let r = if buf[..*len].windows(14).any(|w| w == b"\"lastUpdateId\"") {
                        let limit = Limit::Levels(1000);
                        adapter.on_snapshot_at(InstrumentId(0), limit, buf, *len, 0, &mut count)
                    } else {
                        adapter.on_message(buf, *len, 0, &mut count)
                    };
                    black_box(r.is_ok());
                }
                adapt_ns.push(t.elapsed().as_nanos() as f64 / n);
            }
            // The first of each is warm-up.
            decode_ns.remove(0);
            adapt_ns.remove(0);
            let (d, a) = (median(decode_ns), median(adapt_ns));
            let replays = (runs + 1) as f64;
            println!(
                "{file}, book depth {depth}: {} messages, {:.2} events each, {:.1} gaps a replay; median of {runs} replays: decode {d:.0} ns/message, adapter {a:.0} ns/message (book and events add {:.0})",
                msgs.len(),
                events as f64 / (n * replays),
                gaps as f64 / replays,
                a - d
            );
        }
    }
}
