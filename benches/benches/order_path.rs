//! `order_path`: one order's life on a warm session, sans-IO (see
//! `src/orders.rs`): placed, accepted, partly filled, cancelled, the
//! cancel answered. tickwire's Deribit and Binance sessions against the
//! common serde_json way of writing an order client, on the same texts in
//! the same run; `copy-only` is the texts' writing alone, which every
//! implementation's round includes.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use tickwire_benches::orders::{CopyOnly, OrderVenue, Serde, Tickwire};

fn order_path(c: &mut Criterion) {
    for venue in OrderVenue::ALL {
        let mut group = c.benchmark_group(format!("order_path/{}", venue.name()));
        let mut copy = CopyOnly::new(venue);
        group.bench_function("copy-only", |b| b.iter(|| black_box(copy.round())));
        let mut tickwire = Tickwire::new(venue);
        group.bench_function("tickwire", |b| b.iter(|| black_box(tickwire.round())));
        let mut serde = Serde::new(venue);
        group.bench_function("serde_json", |b| b.iter(|| black_box(serde.round())));
        group.finish();
    }
}

criterion_group!(benches, order_path);
criterion_main!(benches);
