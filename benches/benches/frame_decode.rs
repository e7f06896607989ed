//! `frame_decode`: tickwire's decoder against peer crates, same inputs, same
//! run. The workload is described in `src/lib.rs`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tickwire_benches::{IMPLS, cases, runner};

fn frame_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame_decode");
    for case in cases() {
        group.throughput(Throughput::Bytes(case.batch.len() as u64));
        for &name in IMPLS {
            let Some(mut f) = runner(name, &case) else {
                continue;
            };
            // Every implementation must decode every payload byte of the batch.
            assert_eq!(f(), case.payload_bytes, "{name}/{}", case.name);
            group.bench_function(BenchmarkId::new(name, case.name), |b| {
                b.iter(|| black_box(f()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, frame_decode);
criterion_main!(benches);
