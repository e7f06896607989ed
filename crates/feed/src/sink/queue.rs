//! The queue between the I/O thread and a sink thread, with no system call
//! on the I/O thread's side.
//!
//! A bounded ring allocated once ([`crossbeam_queue::ArrayQueue`]): the
//! I/O thread's [`Publisher::publish`] is a few atomic operations on it
//! and never allocates or wakes anyone. A publisher alone on its queue
//! never waits either; publishers on several threads (the runner's feed
//! threads share their sink's queue) may contend for a slot, and
//! crossbeam then backs off, spinning and, after a few rounds, yielding
//! the thread (`sched_yield`): never a futex, never a sleep. The sink thread's
//! [`Events`] polls, and sleeps when the ring is empty: from
//! [`IDLE_FIRST`] doubling up to [`IDLE_MAX`] (1 ms) while nothing comes.
//! A `std::sync::mpsc::sync_channel` instead wakes a receiver that has
//! caught up and parked: a mutex and a futex call on the sending thread for
//! each event.
//!
//! What the sleep costs: an event waits at most [`IDLE_MAX`] (and the
//! kernel's timer slack) before the sink thread sees it. The JSON Lines
//! sink writes through a 64 KiB buffer anyway, so a line reaches its file
//! when the buffer fills or at shutdown, not per event: a millisecond is
//! nothing to a file's reader. An idle sink thread wakes about a thousand
//! times a second, on its own thread.
//!
//! The queue is gone for its publishers once [`Events`] is dropped (they
//! drop and count), and done for its [`Events`] once every [`Publisher`]
//! is dropped and what they queued is read: a sink drains everything
//! queued before it stops.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{RecvError, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use crate::id::Event;
use crossbeam_queue::ArrayQueue;

/// The consumer's first sleep when the ring is empty.
pub const IDLE_FIRST: Duration = Duration::from_micros(20);

/// The consumer's longest sleep when the ring is empty: the most a queued
/// event waits before the sink thread looks again.
pub const IDLE_MAX: Duration = Duration::from_millis(1);

/// What the publishers and the consumer share.
struct Shared {
    ring: ArrayQueue<Event>,
    dropped: Arc<AtomicU64>,
    /// Live [`Publisher`]s (clones included).
    publishers: AtomicUsize,
    /// Whether the [`Events`] is dropped.
    closed: AtomicBool,
}

/// The I/O thread's end of a sink's queue.
pub struct Publisher {
    shared: Arc<Shared>,
}

impl Publisher {
    /// Queues `event` for the sink, or drops it (and counts it) if the
    /// queue is full or the sink has stopped. Never allocates, never
    /// sleeps or wakes anyone (see the module docs for contention between
    /// publishers). Whether it was queued.
    #[inline]
    pub fn publish(&self, event: Event) -> bool {
        let shared = &*self.shared;
        if !shared.closed.load(Ordering::Relaxed) && shared.ring.push(event).is_ok() {
            return true;
        }
        shared.dropped.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Events dropped so far because the sink was behind (or gone), by
    /// every clone of this publisher.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// The drop counter every clone shares, to read after the publishers
    /// are gone.
    pub fn drop_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.shared.dropped)
    }
}

impl Clone for Publisher {
    fn clone(&self) -> Publisher {
        // Relaxed: `self` keeps the count above zero meanwhile.
        self.shared.publishers.fetch_add(1, Ordering::Relaxed);
        Publisher {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        // Release: whatever this publisher queued is in the ring before
        // the consumer sees the count fall (`Events::try_recv`'s Acquire).
        self.shared.publishers.fetch_sub(1, Ordering::Release);
    }
}

/// The sink thread's end of the queue: polled, never woken.
pub struct Events {
    shared: Arc<Shared>,
}

/// A queue for `capacity` events (at least one): the publisher, and the
/// events a sink thread reads. Everything it needs is allocated here.
pub fn queue(capacity: usize) -> (Publisher, Events) {
    let shared = Arc::new(Shared {
        ring: ArrayQueue::new(capacity.max(1)),
        dropped: Arc::new(AtomicU64::new(0)),
        publishers: AtomicUsize::new(1),
        closed: AtomicBool::new(false),
    });
    (
        Publisher {
            shared: Arc::clone(&shared),
        },
        Events { shared },
    )
}

impl Events {
    /// The next queued event, without waiting: `Empty` if none is queued
    /// yet, `Disconnected` once every publisher is gone and all they
    /// queued has been read.
    pub fn try_recv(&self) -> Result<Event, TryRecvError> {
        if let Some(e) = self.shared.ring.pop() {
            return Ok(e);
        }
        if self.shared.publishers.load(Ordering::Acquire) == 0 {
            // The last publisher may have queued between the pop and the
            // load: look once more, now that nothing more can come.
            return self.shared.ring.pop().ok_or(TryRecvError::Disconnected);
        }
        Err(TryRecvError::Empty)
    }

    /// The next event, sleeping (never longer than [`IDLE_MAX`] at a
    /// time) while none is queued; `Err` once every publisher is gone and
    /// all they queued has been read.
    pub fn recv(&self) -> Result<Event, RecvError> {
        let mut idle = Idle::default();
        loop {
            match self.try_recv() {
                Ok(e) => return Ok(e),
                Err(TryRecvError::Disconnected) => return Err(RecvError),
                Err(TryRecvError::Empty) => idle.sleep(None),
            }
        }
    }

    /// As [`recv`](Self::recv), giving up after `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Event, RecvTimeoutError> {
        // A timeout past what `Instant` holds is no timeout (as std's
        // receiver has it).
        let Some(deadline) = Instant::now().checked_add(timeout) else {
            return self
                .recv()
                .map_err(|RecvError| RecvTimeoutError::Disconnected);
        };
        let mut idle = Idle::default();
        loop {
            match self.try_recv() {
                Ok(e) => return Ok(e),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(RecvTimeoutError::Timeout);
                    }
                    idle.sleep(Some(deadline - now));
                }
            }
        }
    }

    /// The events queued now, without waiting.
    pub fn try_iter(&self) -> impl Iterator<Item = Event> + '_ {
        std::iter::from_fn(|| self.try_recv().ok())
    }

    /// Every event, waiting for each, until every publisher is gone and
    /// all they queued has been read.
    pub fn iter(&self) -> impl Iterator<Item = Event> + '_ {
        std::iter::from_fn(|| self.recv().ok())
    }

    /// Events queued and not read yet.
    pub fn len(&self) -> usize {
        self.shared.ring.len()
    }

    /// Whether no event is queued.
    pub fn is_empty(&self) -> bool {
        self.shared.ring.is_empty()
    }
}

impl Drop for Events {
    /// The publishers drop and count from now on; what is queued and will
    /// never be read is counted dropped too.
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Relaxed);
        self.shared.count_unread();
    }
}

impl Shared {
    /// Takes what is left in the ring, counting it dropped.
    fn count_unread(&self) {
        let mut unread = 0;
        while self.ring.pop().is_some() {
            unread += 1;
        }
        if unread > 0 {
            self.dropped.fetch_add(unread, Ordering::Relaxed);
        }
    }
}

impl Drop for Shared {
    /// A publish under way as the [`Events`] went (it saw the queue open,
    /// then pushed after the drain) left its event behind: counted when
    /// the last publisher goes too.
    fn drop(&mut self) {
        self.count_unread();
    }
}

impl IntoIterator for Events {
    type Item = Event;
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter(self)
    }
}

/// Every event of an [`Events`], waiting for each, until every publisher
/// is gone and all they queued has been read.
pub struct IntoIter(Events);

impl Iterator for IntoIter {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        self.0.recv().ok()
    }
}

/// The consumer's sleeps while the ring stays empty: [`IDLE_FIRST`],
/// doubling up to [`IDLE_MAX`]; a new `Idle` for each wait.
struct Idle(Duration);

impl Default for Idle {
    fn default() -> Idle {
        Idle(IDLE_FIRST)
    }
}

impl Idle {
    /// Sleeps the next step, or `limit` if that is shorter.
    fn sleep(&mut self, limit: Option<Duration>) {
        let step = limit.map_or(self.0, |l| l.min(self.0));
        std::thread::sleep(step);
        self.0 = (self.0 * 2).min(IDLE_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::FeedId;
    use tickwire_venues::event::Kind;

    fn nth(n: u64) -> Event {
        Event {
            instrument: FeedId(0),
            exchange_ns: n,
            recv_tsc: n,
            kind: Kind::Resync,
        }
    }

    /// Every event comes out once and in order on another thread, across
    /// many wrap-arounds of a small ring, with the producer retrying when
    /// it is full; then the consumer is told the producer is gone.
    #[test]
    fn events_come_out_once_in_order_then_the_end_is_said() {
        let (publisher, events) = queue(16);
        let total = 100_000u64;
        let consumer = std::thread::spawn(move || {
            let mut next = 0;
            for e in events {
                assert_eq!(e.exchange_ns, next);
                next += 1;
            }
            next
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        for n in 0..total {
            while !publisher.publish(nth(n)) {
                assert!(
                    Instant::now() < deadline && !consumer.is_finished(),
                    "the queue stayed full at event {n}"
                );
                std::thread::yield_now();
            }
        }
        drop(publisher);
        assert_eq!(consumer.join().unwrap(), total);
    }

    /// A clone keeps the queue open; what the last publisher queued is
    /// read after it is gone; a timeout is a timeout while one is alive.
    #[test]
    fn the_queue_ends_with_its_last_publisher_after_its_events() {
        let (publisher, events) = queue(4);
        let clone = publisher.clone();
        assert_eq!(
            events.recv_timeout(Duration::from_millis(1)),
            Err(RecvTimeoutError::Timeout)
        );
        drop(publisher);
        assert!(clone.publish(nth(1)));
        assert!(clone.publish(nth(2)));
        assert_eq!(events.try_recv(), Ok(nth(1)));
        drop(clone);
        assert_eq!(events.try_recv(), Ok(nth(2)));
        assert_eq!(events.try_recv(), Err(TryRecvError::Disconnected));
        assert_eq!(events.recv(), Err(RecvError));
        assert_eq!(
            events.recv_timeout(Duration::from_secs(60)),
            Err(RecvTimeoutError::Disconnected)
        );
        // A timeout no deadline can hold waits as `recv` does.
        assert_eq!(
            events.recv_timeout(Duration::MAX),
            Err(RecvTimeoutError::Disconnected)
        );
    }

    /// Every event published is read or counted dropped: queued and never
    /// read when the sink went, refused after it went.
    #[test]
    fn what_a_gone_sink_never_read_is_counted_dropped() {
        let (publisher, events) = queue(4);
        let dropped = publisher.drop_counter();
        assert!(publisher.publish(nth(1)));
        assert!(publisher.publish(nth(2)));
        assert!(publisher.publish(nth(3)));
        assert_eq!(events.try_recv(), Ok(nth(1)));
        drop(events);
        assert_eq!(dropped.load(Ordering::Relaxed), 2, "the two never read");
        assert!(!publisher.publish(nth(4)));
        assert_eq!(dropped.load(Ordering::Relaxed), 3);
        assert_eq!(publisher.dropped(), 3);
    }

    /// The publishing thread allocates nothing per event while a sink
    /// thread drains the queue and, caught up, sleeps (the allocator that
    /// counts is installed by `sink`'s tests); every event arrives.
    #[test]
    fn publishing_to_a_draining_sink_thread_allocates_nothing() {
        let (publisher, events) = queue(256);
        let seen = Arc::new(AtomicU64::new(0));
        let consumer = {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                for _ in events {
                    seen.fetch_add(1, Ordering::Release);
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        let (published, allocations) = tickwire_testkit::allocations(|| {
            let mut published = 0;
            for burst in 0..50u64 {
                for n in 0..100 {
                    assert!(publisher.publish(nth(burst * 100 + n)));
                    published += 1;
                }
                // The sink thread catches up, then finds the ring empty.
                while seen.load(Ordering::Acquire) < published {
                    assert!(Instant::now() < deadline, "the sink thread stopped");
                    std::thread::yield_now();
                }
            }
            published
        });
        assert_eq!(allocations, 0);
        assert_eq!(publisher.dropped(), 0);
        drop(publisher);
        consumer.join().unwrap();
        assert_eq!(seen.load(Ordering::Acquire), published);
    }

    /// The publishing thread makes no `futex` call while a sink thread
    /// drains the queue and, caught up, goes idle: the publishing thread
    /// runs under a seccomp filter that fails every `futex` call of its
    /// own (a channel that wakes its parked receiver so would leave it
    /// parked, and the events unread).
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn publishing_to_an_idle_sink_thread_makes_no_futex_call() {
        let (publisher, events) = queue(256);
        let seen = Arc::new(AtomicU64::new(0));
        let consumer = {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                for _ in events {
                    seen.fetch_add(1, Ordering::Release);
                }
            })
        };
        let producer = {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                no_futex_on_this_thread();
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut published = 0;
                for burst in 0..20u64 {
                    for n in 0..10 {
                        assert!(publisher.publish(nth(burst * 10 + n)));
                        published += 1;
                    }
                    // The sink thread catches up, then idles a while
                    // (parked or asleep) before the next burst.
                    while seen.load(Ordering::Acquire) < published {
                        if Instant::now() > deadline {
                            return Err(published);
                        }
                        std::thread::yield_now();
                    }
                    let idle = Instant::now();
                    while idle.elapsed() < Duration::from_millis(2) {
                        std::hint::spin_loop();
                    }
                }
                Ok(published)
            })
        };
        let published = producer.join().unwrap();
        assert_eq!(
            published,
            Ok(200),
            "events stayed unread: the sink thread needed a futex call to wake"
        );
        consumer.join().unwrap();
        assert_eq!(seen.load(Ordering::Acquire), 200);
    }

    /// Makes every later `futex` call of this thread (not of the others)
    /// fail with `EPERM`: a seccomp filter, which applies to the thread
    /// that installs it and the threads it starts afterwards.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[allow(unsafe_code)]
    fn no_futex_on_this_thread() {
        const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
        let op = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        };
        let filter = [
            // The architecture (seccomp_data.arch): another one is let be.
            op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 4, 0, 0),
            op(
                libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
                AUDIT_ARCH_X86_64,
                0,
                3,
            ),
            // The call's number (seccomp_data.nr).
            op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, 0),
            op(
                libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
                libc::SYS_futex as u32,
                0,
                1,
            ),
            op(
                libc::BPF_RET | libc::BPF_K,
                libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
                0,
                0,
            ),
            op(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW, 0, 0),
        ];
        let program = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr().cast_mut(),
        };
        // SAFETY: prctl(2) with PR_SET_NO_NEW_PRIVS takes four further
        // integer arguments, all given; it changes only this thread's
        // (and its later children's) privileges.
        let r = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        assert_eq!(
            r,
            0,
            "PR_SET_NO_NEW_PRIVS: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: PR_SET_SECCOMP with SECCOMP_MODE_FILTER reads a
        // `sock_fprog` whose `filter` points to `len` instructions; both
        // live on this stack frame until the call returns, and the kernel
        // copies them.
        let r = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &raw const program,
                0,
                0,
            )
        };
        assert_eq!(r, 0, "PR_SET_SECCOMP: {}", std::io::Error::last_os_error());
    }
}
