//! `unmask`: in-place XOR unmasking of one payload, tickwire against the peers'
//! public masking functions. Sizes: 128 B (a typical feed message) and 16 KiB.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn unmask(c: &mut Criterion) {
    let mut group = c.benchmark_group("unmask");
    let key = [0x37, 0xfa, 0x21, 0x3d];
    for len in [128usize, 16 * 1024] {
        let mut buf: Vec<u8> = (0..len).map(|i| i as u8).collect();
        group.throughput(Throughput::Bytes(len as u64));
        let mut run = |name: &str, f: &dyn Fn(&mut [u8])| {
            group.bench_function(BenchmarkId::new(name, len), |b| {
                b.iter(|| f(black_box(&mut buf[..])))
            });
        };
        run("tickwire", &|b| tickwire_codec::apply_mask(b, key, 0));
        run("nexus-web", &|b| nexus_web::ws::apply_mask(b, key));
        run("yawc", &|b| yawc::mask::apply_mask(b, key));
        run("sockudo-ws", &|b| sockudo_ws::simd::apply_mask(b, key));
        run("websocket-sans-io", &|b| {
            websocket_sans_io::apply_mask(key, b, 0)
        });
    }
    group.finish();
}

criterion_group!(benches, unmask);
criterion_main!(benches);
