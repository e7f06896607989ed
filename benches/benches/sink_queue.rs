//! `sink_queue`: what handing an event to the JSON Lines sink costs the
//! feed thread. The queue the feed used before (`std::sync::mpsc`'s
//! `sync_channel`, whose `try_send` wakes a receiver that caught up and
//! parked: a mutex and a futex call) against the feed's sink queue now
//! (`tickwire_feed::sink::queue`: a lock-free ring the sink thread polls),
//! in the same run, each with a consumer thread draining it as the sink
//! thread does.
//!
//! - `burst`: 1000 events back to back to a consumer that had caught up
//!   and gone idle: throughput.
//! - `one at a time`: one event to a consumer that has caught up and gone
//!   idle (the feed's usual case: a message's few events, then a wait for
//!   the socket), its `publish` alone timed.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{TrySendError, sync_channel};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tickwire_feed::sink;
use tickwire_feed::{Event, FeedId};
use tickwire_venues::event::Kind;

const CAPACITY: usize = 1 << 16;

fn event(n: u64) -> Event {
    Event {
        instrument: FeedId(0),
        exchange_ns: n,
        recv_tsc: n,
        kind: Kind::Trade {
            price: 6_173_763,
            size: 123_000,
            aggressor: tickwire_venues::event::Aggressor::Buy,
            trade_id: n,
        },
    }
}

/// One side of a queue under test: publish, and how many the consumer
/// thread has taken.
trait Queue {
    fn publish(&self, e: Event) -> bool;
    fn taken(&self) -> u64;
}

struct Std {
    tx: std::sync::mpsc::SyncSender<Event>,
    taken: Arc<AtomicU64>,
}

impl Queue for Std {
    #[inline]
    fn publish(&self, e: Event) -> bool {
        match self.tx.try_send(e) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        }
    }
    fn taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }
}

struct Ring {
    publisher: sink::Publisher,
    taken: Arc<AtomicU64>,
}

impl Queue for Ring {
    #[inline]
    fn publish(&self, e: Event) -> bool {
        self.publisher.publish(e)
    }
    fn taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }
}

/// A consumer thread counting what it takes from `events` until the end.
fn consume(events: impl IntoIterator<Item = Event> + Send + 'static) -> Arc<AtomicU64> {
    let taken = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&taken);
    thread::spawn(move || {
        for e in events {
            black_box(e);
            counter.fetch_add(1, Ordering::Release);
        }
    });
    taken
}

/// Waits until the consumer has taken all `published`, then 50 us more,
/// so that it has gone idle (std's receiver parks after a few spins and
/// yields; the ring's consumer sleeps at once).
fn settle(q: &impl Queue, published: u64) {
    while q.taken() < published {
        std::hint::spin_loop();
    }
    let idle = Instant::now();
    while idle.elapsed() < Duration::from_micros(50) {
        std::hint::spin_loop();
    }
}

fn bench_queue(c: &mut Criterion, name: &str, q: &impl Queue) {
    let mut published = 0u64;
    // Criterion sizes a run by the time measured, and each iteration's
    // settling is not measured: short measurement times keep the runs'
    // wall time to seconds.
    let mut group = c.benchmark_group("sink_queue burst");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(1));
    group.throughput(criterion::Throughput::Elements(1000));
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                settle(q, published);
                let start = Instant::now();
                for _ in 0..1000 {
                    published += u64::from(q.publish(event(published)));
                }
                spent += start.elapsed();
            }
            spent
        })
    });
    group.finish();
    let mut group = c.benchmark_group("sink_queue one at a time");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(10));
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                settle(q, published);
                let start = Instant::now();
                published += u64::from(q.publish(black_box(event(published))));
                spent += start.elapsed();
            }
            spent
        })
    });
    group.finish();
}

fn queues(c: &mut Criterion) {
    let (tx, rx) = sync_channel(CAPACITY);
    let std = Std {
        tx,
        taken: consume(rx),
    };
    bench_queue(c, "std sync_channel (before)", &std);
    let (publisher, events) = sink::queue(CAPACITY);
    let ring = Ring {
        publisher,
        taken: consume(events),
    };
    bench_queue(c, "sink queue (after)", &ring);
}

criterion_group!(benches, queues);
criterion_main!(benches);
