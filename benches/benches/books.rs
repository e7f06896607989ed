//! `books`: keeping a book. One level update applied to a 1000-level book
//! (a size change near the top, an insert and its delete), and one
//! checksum over the top levels as OKX (25 a side) and Kraken (10 a side)
//! define them, rebuilt from the book's values without allocating.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use tickwire_venues::book::{Book, Level, Side};
use tickwire_venues::{kraken, okx};

/// A book with `n` levels a side around 60,000.00 (scale 2), sizes at
/// scale 8, wire digits as an exchange would send them.
fn book(n: i64) -> Book {
    let mut b = Book::new(n as usize);
    for i in 0..n {
        let level = |price| Level {
            price,
            size: 12_345_678 + i,
            price_digits: 2,
            size_digits: 8,
        };
        b.set_level(Side::Bid, level(6_000_000 - i));
        b.set_level(Side::Ask, level(6_000_001 + i));
    }
    b
}

fn books(c: &mut Criterion) {
    let mut group = c.benchmark_group("book");
    let mut b = book(1000);
    let mut size = 1;
    group.bench_function("update size, level 3 of 1000", |bench| {
        bench.iter(|| {
            size += 1;
            b.set(Side::Bid, black_box(5_999_997), size);
        })
    });
    group.bench_function("insert + delete, level 5 of 1000", |bench| {
        bench.iter(|| {
            // 5_999_995.5 does not exist at scale 2: use a fresh price
            // between levels by shifting scale-free: remove then re-add.
            b.set(Side::Ask, black_box(6_000_005), 0);
            b.set_level(
                Side::Ask,
                Level {
                    price: 6_000_005,
                    size: 7,
                    price_digits: 2,
                    size_digits: 8,
                },
            );
        })
    });
    let b = book(1000);
    group.bench_function("okx checksum, 25 + 25", |bench| {
        bench.iter(|| black_box(okx::checksum(black_box(&b), 2, 8)))
    });
    group.bench_function("kraken checksum, 10 + 10", |bench| {
        bench.iter(|| black_box(kraken::checksum(black_box(&b), 2, 8)))
    });
    group.finish();
}

criterion_group!(benches, books);
criterion_main!(benches);
