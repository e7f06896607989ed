//! `stamps`: what timing a message costs. One clock reading (tickwire's
//! `Clock::now` and `now_ordered`, against quanta's `raw` and std's
//! `Instant::now`), one histogram record, one `Recorder::record` of a full
//! set of stamps (seven stages into their histograms, converted to ns), and
//! a thousand `Recorder::record_deferred`s (into the ring; the histograms
//! are the collector's work).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use tickwire_tsc::{HistogramConfig, Metrics, Stage, Stamps, calibration};

fn stamps(c: &mut Criterion) {
    let cal = calibration();
    let clock = cal.clock();
    let mut group = c.benchmark_group("clock");
    group.bench_function("tickwire now", |b| b.iter(|| black_box(clock.now())));
    group.bench_function("tickwire now_ordered", |b| {
        b.iter(|| black_box(clock.now_ordered()))
    });
    let quanta = quanta::Clock::new();
    group.bench_function("quanta raw", |b| b.iter(|| black_box(quanta.raw())));
    group.bench_function("std Instant::now", |b| b.iter(|| black_box(Instant::now())));
    group.finish();

    let mut group = c.benchmark_group("record");
    let mut h = HistogramConfig::default().histogram();
    let mut v = 1u64;
    group.bench_function("hdrhistogram record", |b| {
        b.iter(|| {
            v = v.wrapping_mul(6364136223846793005).wrapping_add(1);
            h.saturating_record(black_box(100 + (v >> 44)));
        })
    });
    let metrics = Metrics::new(HistogramConfig::default());
    let mut recorder = metrics.recorder("bench");
    group.bench_function("recorder record_ns (one stage)", |b| {
        b.iter(|| {
            v = v.wrapping_mul(6364136223846793005).wrapping_add(1);
            recorder.record_ns(Stage::Json, black_box(100 + (v >> 44)));
        })
    });
    let base = clock.now();
    // A message's stamps, spans varying with `v`.
    let stamp = |v: u64| {
        let step = 50 + (v >> 52);
        Stamps {
            poll: base,
            read_start: base + step,
            read_end: base + 2 * step,
            decrypted: base + 3 * step,
            decoded: base + 4 * step,
            parsed: base + 5 * step,
            handled: base + 6 * step,
            exchange_unix_ns: 0,
        }
    };
    group.bench_function("recorder record (all stamps)", |b| {
        b.iter(|| {
            v = v.wrapping_mul(6364136223846793005).wrapping_add(1);
            recorder.record(black_box(&stamp(v)));
        })
    });
    // What the feed does: the stamps into the ring, the histogram work left
    // to the collector's thread (here drained between batches, untimed).
    group.bench_function("recorder record_deferred (all stamps, 1000 a batch)", |b| {
        b.iter_batched(
            || metrics.drain(),
            |()| {
                for _ in 0..1000 {
                    v = v.wrapping_mul(6364136223846793005).wrapping_add(1);
                    recorder.record_deferred(black_box(&stamp(v)));
                }
                recorder.flush();
            },
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, stamps);
criterion_main!(benches);
