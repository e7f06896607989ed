//! A recorder's ring of stamps: the hot thread writes a message's stamps
//! in (eight plain stores) and the collector's thread turns them into
//! histogram counts, so that the histograms' work is not on the thread
//! that receives.
//!
//! One producer (the [`Recorder`](crate::Recorder), `&mut`), one consumer
//! at a time (the [`Collector`](crate::Collector), behind its own lock).
//! The producer publishes what it wrote with a release store of `tail`
//! (every [`PUBLISH`] stamps, and at each flush); the consumer hands slots
//! back with a release store of `head` once it has read them. No `unsafe`:
//! each slot is eight relaxed atomics, which on x86-64 are plain moves.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::stage::Stamps;

/// Stamps a ring holds (a power of two): 16384 of 64 bytes, 1 MiB a
/// recorder (its histograms take 4 MiB). At 3 million messages a second
/// that is 5.5 ms of them; the exporter drains every millisecond by
/// default ([`ExportConfig::drain`](crate::ExportConfig::drain)), but an
/// exporter thread sharing a busy core may wait several: with 4096 slots
/// (1.4 ms), `demo --max` at 2.9 M msg/s found the ring full for about one
/// message in ten.
pub const RING: usize = 16384;

/// The producer publishes at least every this many stamps, so that a long
/// burst reaches the consumer before the ring fills.
pub const PUBLISH: usize = 64;

/// One message's stamps, a cache line.
#[repr(align(64))]
struct Slot([AtomicU64; 8]);

/// An index alone on its cache lines (the producer's and the consumer's
/// do not share one).
#[repr(align(128))]
struct Index(AtomicUsize);

pub(crate) struct Ring {
    slots: Box<[Slot]>,
    /// Slots read up to here (the consumer's).
    head: Index,
    /// Slots written up to here (the producer's), as published.
    tail: Index,
}

impl Ring {
    pub(crate) fn new() -> Ring {
        Ring {
            slots: (0..RING)
                .map(|_| Slot(Default::default()))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
            head: Index(AtomicUsize::new(0)),
            tail: Index(AtomicUsize::new(0)),
        }
    }

    /// Reads every published stamp into `buf` (up to its capacity at a
    /// time), calling `f` on each batch, and hands the slots back.
    pub(crate) fn drain(&self, buf: &mut Vec<Stamps>, mut f: impl FnMut(&[Stamps])) {
        let tail = self.tail.0.load(Ordering::Acquire);
        let mut head = self.head.0.load(Ordering::Relaxed);
        let chunk = buf.capacity().max(1);
        while head != tail {
            buf.clear();
            let end = tail.min(head + chunk);
            for i in head..end {
                let f = &self.slots[i % RING].0;
                let v = |k: usize| f[k].load(Ordering::Relaxed);
                buf.push(Stamps {
                    poll: v(0),
                    read_start: v(1),
                    read_end: v(2),
                    decrypted: v(3),
                    decoded: v(4),
                    parsed: v(5),
                    handled: v(6),
                    exchange_unix_ns: v(7),
                });
            }
            f(buf);
            head = end;
            self.head.0.store(head, Ordering::Release);
        }
    }
}

/// The producer's side: where it writes next, what it has published, and
/// the consumer's head as last seen.
#[derive(Default)]
pub(crate) struct Producer {
    tail: usize,
    published: usize,
    head: usize,
}

impl Producer {
    /// Writes `s` in; false if the ring is full.
    #[inline]
    pub(crate) fn push(&mut self, ring: &Ring, s: &Stamps) -> bool {
        if self.tail - self.head == RING {
            self.head = ring.head.0.load(Ordering::Acquire);
            if self.tail - self.head == RING {
                return false;
            }
        }
        let f = &ring.slots[self.tail % RING].0;
        for (k, v) in [
            s.poll,
            s.read_start,
            s.read_end,
            s.decrypted,
            s.decoded,
            s.parsed,
            s.handled,
            s.exchange_unix_ns,
        ]
        .into_iter()
        .enumerate()
        {
            f[k].store(v, Ordering::Relaxed);
        }
        self.tail += 1;
        if self.tail - self.published >= PUBLISH {
            self.publish(ring);
        }
        true
    }

    /// Makes every stamp written so far visible to the consumer.
    #[inline]
    pub(crate) fn publish(&mut self, ring: &Ring) {
        if self.published != self.tail {
            ring.tail.0.store(self.tail, Ordering::Release);
            self.published = self.tail;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(i: u64) -> Stamps {
        Stamps {
            poll: i,
            read_start: i + 1,
            read_end: i + 2,
            decrypted: i + 3,
            decoded: i + 4,
            parsed: i + 5,
            handled: i + 6,
            exchange_unix_ns: i + 7,
        }
    }

    /// Every stamp comes out once, whole and in order, across wrap-arounds,
    /// with a consumer on another thread; a full ring refuses a push.
    #[test]
    fn stamps_come_out_once_whole_and_in_order() {
        let ring = std::sync::Arc::new(Ring::new());
        let total = 5 * RING as u64 + 17;
        // Either side waits for the other only this long: a side that
        // failed ends the test instead of hanging it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let consumer = {
            let ring = std::sync::Arc::clone(&ring);
            std::thread::spawn(move || {
                let mut buf = Vec::with_capacity(100);
                let mut next = 0u64;
                while next < total {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "{next} of {total} stamps came out"
                    );
                    ring.drain(&mut buf, |got| {
                        for s in got {
                            assert_eq!(*s, stamp(next * 10));
                            next += 1;
                        }
                    });
                    std::thread::yield_now();
                }
                next
            })
        };
        let mut p = Producer::default();
        for i in 0..total {
            while !p.push(&ring, &stamp(i * 10)) {
                assert!(
                    std::time::Instant::now() < deadline && !consumer.is_finished(),
                    "the ring stayed full at stamp {i}: the consumer stopped"
                );
                std::thread::yield_now();
            }
        }
        p.publish(&ring);
        assert_eq!(consumer.join().unwrap(), total);

        // Nobody drains: the ring takes RING stamps, then refuses.
        let ring = Ring::new();
        let mut p = Producer::default();
        for i in 0..RING as u64 {
            assert!(p.push(&ring, &stamp(i)));
        }
        assert!(!p.push(&ring, &stamp(0)));
        p.publish(&ring);
        let mut buf = Vec::with_capacity(64);
        let mut seen = 0;
        ring.drain(&mut buf, |got| seen += got.len());
        assert_eq!(seen, RING);
        assert!(p.push(&ring, &stamp(1)), "room again once drained");
    }
}
