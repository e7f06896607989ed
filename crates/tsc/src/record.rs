//! Recording stamps into per-stage histograms on the hot thread, and
//! collecting them on another, without either ever waiting for the other.
//!
//! Each [`Recorder`] owns two slots, each a full set of histograms behind a
//! `Mutex`. Both sides only ever `try_lock` (so neither parks on the futex,
//! and no unlock ever has to wake anyone): if the collector holds one slot,
//! the recorder records into the other. The collector locks one slot at a time,
//! folds it into its own copy and empties it, so the recorder always finds
//! a free slot at its first or second try; if it ever finds neither (the
//! collector switched slots in between), it drops the sample and counts it.
//! Every histogram is allocated when the recorder is created; recording
//! allocates nothing.
//!
//! [`Recorder::record_deferred`] does not touch the histograms: it writes
//! the stamps into the recorder's ring (`ring.rs`) and the collector
//! records them when it drains it ([`Collector::drain`]), on its own
//! thread. Only when the ring is full does the recorder record itself.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use hdrhistogram::Histogram;

use crate::clock::{Calibration, calibration};
use crate::ring::{PUBLISH, Producer, Ring};
use crate::stage::{Stage, Stamps};

/// The shape of every histogram: values from 1 ns to `max_ns` (larger ones
/// are recorded as `max_ns`) with `significant_digits` of precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramConfig {
    /// The largest value kept exactly. Default: 60 s.
    pub max_ns: u64,
    /// Decimal digits of precision, 1 to 5. Default: 3 (0.1 %): about 220
    /// KiB per histogram at the default range; 2 digits take a tenth.
    pub significant_digits: u8,
}

impl Default for HistogramConfig {
    fn default() -> HistogramConfig {
        HistogramConfig {
            max_ns: 60_000_000_000,
            significant_digits: 3,
        }
    }
}

impl HistogramConfig {
    /// An empty histogram of this shape.
    ///
    /// # Panics
    ///
    /// If `max_ns < 2` or `significant_digits > 5`.
    pub fn histogram(&self) -> Histogram<u64> {
        Histogram::new_with_bounds(1, self.max_ns, self.significant_digits)
            .expect("HistogramConfig: max_ns >= 2 and significant_digits <= 5")
    }
}

/// One histogram per [`Stage`], in nanoseconds.
#[derive(Clone, Debug)]
pub struct StageSet {
    histograms: Vec<Histogram<u64>>,
}

impl StageSet {
    /// Empty histograms of the given shape, one per stage.
    pub fn new(config: HistogramConfig) -> StageSet {
        StageSet {
            histograms: Stage::ALL.iter().map(|_| config.histogram()).collect(),
        }
    }

    /// The histogram of `stage`.
    pub fn get(&self, stage: Stage) -> &Histogram<u64> {
        &self.histograms[stage.index()]
    }

    /// Records `ns` for `stage` (clamped to the histogram's range).
    #[inline]
    pub fn record(&mut self, stage: Stage, ns: u64) {
        self.histograms[stage.index()].saturating_record(ns);
    }

    /// Records every stage `stamps` covers, converting with `cal`.
    #[inline]
    pub fn record_stamps(&mut self, stamps: &Stamps, cal: &Calibration) {
        for stage in Stage::ALL {
            if let Some((from, to)) = stage.span(stamps) {
                self.record(stage, cal.ns_between(from, to));
            }
        }
        self.record_exchange(stamps, cal);
    }

    /// The exchange stage of `stamps`, on the wall clock, if it has one.
    #[inline]
    fn record_exchange(&mut self, stamps: &Stamps, cal: &Calibration) {
        if stamps.exchange_unix_ns != 0 && stamps.read_end != 0 {
            let local = cal.to_unix_ns(stamps.read_end);
            // An exchange clock ahead of ours records as 0.
            self.record(
                Stage::Exchange,
                local.saturating_sub(stamps.exchange_unix_ns),
            );
        }
    }

    /// Records every stage of each of `stamps`, as
    /// [`record_stamps`](Self::record_stamps) one by one would: a stage's
    /// equal spans in a row (the wake-up and read of messages from one
    /// read, the decryption of those from one record) go in as one
    /// count.
    pub fn record_all(&mut self, stamps: &[Stamps], cal: &Calibration) {
        for stage in Stage::ALL {
            let h = &mut self.histograms[stage.index()];
            let mut run: Option<(u64, u64)> = None;
            for s in stamps {
                let Some((from, to)) = stage.span(s) else {
                    continue;
                };
                let ticks = to.saturating_sub(from);
                match &mut run {
                    Some((t, n)) if *t == ticks => *n += 1,
                    _ => {
                        if let Some((t, n)) = run.replace((ticks, 1)) {
                            h.saturating_record_n(cal.to_ns(t), n);
                        }
                    }
                }
            }
            if let Some((t, n)) = run {
                h.saturating_record_n(cal.to_ns(t), n);
            }
        }
        for s in stamps {
            self.record_exchange(s, cal);
        }
    }

    /// Adds every count of `other` (same shape) into `self`.
    pub fn add(&mut self, other: &StageSet) {
        for (into, from) in self.histograms.iter_mut().zip(&other.histograms) {
            // Same bounds on both sides (one config per registry), so the
            // addition always fits.
            let _ = into.add(from);
        }
    }

    /// Empties every histogram (keeps their memory).
    pub fn reset(&mut self) {
        self.histograms.iter_mut().for_each(Histogram::reset);
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.histograms.iter().all(|h| h.is_empty())
    }
}

/// What a recorder counts besides latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Messages received.
    Messages,
    /// Payload bytes received.
    Bytes,
    /// Errors (bad messages, protocol errors) seen.
    Errors,
    /// Reconnects.
    Reconnects,
    /// Samples dropped because both slots were busy (should stay 0).
    Dropped,
}

impl Counter {
    /// Every counter.
    pub const ALL: [Counter; 5] = [
        Counter::Messages,
        Counter::Bytes,
        Counter::Errors,
        Counter::Reconnects,
        Counter::Dropped,
    ];

    /// Its name in Prometheus output (`tickwire_<name>_total`).
    pub fn name(self) -> &'static str {
        match self {
            Counter::Messages => "messages",
            Counter::Bytes => "bytes",
            Counter::Errors => "errors",
            Counter::Reconnects => "reconnects",
            Counter::Dropped => "dropped_samples",
        }
    }
}

struct Slot {
    set: StageSet,
    /// The newest calibration, put here by the collector.
    calibration: Calibration,
}

pub(crate) struct Shared {
    pub(crate) name: String,
    slots: [Mutex<Slot>; 2],
    /// Stamps of [`Recorder::record_deferred`] on their way to the
    /// collector.
    ring: Ring,
    counters: [AtomicU64; Counter::ALL.len()],
}

/// The collector's lock: `try_lock` until it succeeds, yielding in between.
/// Never `lock`: a collector parked on the futex would make the recorder's
/// unlock a `FUTEX_WAKE` system call on the hot thread. The recorder holds a
/// slot for ~50 ns, so the first or second try almost always succeeds.
fn lock(m: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    loop {
        match m.try_lock() {
            Ok(guard) => return guard,
            // A recorder that panicked mid-record leaves a histogram that
            // is still valid: use it.
            Err(TryLockError::Poisoned(p)) => return p.into_inner(),
            Err(TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
}

/// The collector's lock on whichever slot is free (the recorder holds at
/// most one, briefly), yielding between tries as [`lock`] does.
fn lock_either(slots: &[Mutex<Slot>; 2]) -> MutexGuard<'_, Slot> {
    loop {
        for m in slots {
            match m.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        std::thread::yield_now();
    }
}

/// Records one stream's stamps (one connection, or one venue's channel:
/// whatever the name means to you). Owned by the thread that receives; not
/// `Clone`, so each counter has a single writer.
pub struct Recorder {
    shared: Arc<Shared>,
    current: usize,
    /// Its side of the ring of [`record_deferred`](Self::record_deferred).
    producer: Producer,
}

impl Recorder {
    pub(crate) fn new(name: &str, config: HistogramConfig) -> (Recorder, Collector) {
        let cal = calibration();
        let slot = || {
            Mutex::new(Slot {
                set: StageSet::new(config),
                calibration: cal,
            })
        };
        let shared = Arc::new(Shared {
            name: name.to_owned(),
            slots: [slot(), slot()],
            ring: Ring::new(),
            counters: Default::default(),
        });
        let collector = Collector {
            shared: Arc::clone(&shared),
            config,
            drained: Mutex::new(Vec::with_capacity(PUBLISH)),
        };
        let recorder = Recorder {
            shared,
            current: 0,
            producer: Producer::default(),
        };
        (recorder, collector)
    }

    /// The stream's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Runs `f` on a free slot; false if none was free.
    #[inline]
    fn with_slot(&mut self, f: impl FnOnce(&mut Slot)) -> bool {
        for _ in 0..2 {
            match self.shared.slots[self.current].try_lock() {
                Ok(mut slot) => {
                    f(&mut slot);
                    return true;
                }
                Err(TryLockError::Poisoned(p)) => {
                    f(&mut p.into_inner());
                    return true;
                }
                Err(TryLockError::WouldBlock) => self.current ^= 1,
            }
        }
        false
    }

    /// Records every stage `stamps` covers. Never blocks, never allocates.
    #[inline]
    pub fn record(&mut self, stamps: &Stamps) {
        if !self.with_slot(|slot| {
            let cal = slot.calibration;
            slot.set.record_stamps(stamps, &cal);
        }) {
            self.add(Counter::Dropped, 1);
        }
    }

    /// [`record`](Self::record), by the collector's thread: the stamps go
    /// into a ring of [`RING`](crate::RING) (eight stores, no lock, no histogram work
    /// here) and the collector records them when it drains the ring
    /// ([`Collector::drain`]; the exporter does every
    /// [`ExportConfig::drain`](crate::ExportConfig::drain)). They are
    /// handed over at every [`flush`](Self::flush) and every [`PUBLISH`](crate::PUBLISH)
    /// stamps. When the ring is full (no collector drains, or it fell
    /// behind) the stamps are recorded here, as `record` does: none is
    /// lost. Never blocks, never allocates.
    #[inline]
    pub fn record_deferred(&mut self, stamps: &Stamps) {
        if !self.producer.push(&self.shared.ring, stamps) {
            self.producer.publish(&self.shared.ring);
            self.record(stamps);
        }
    }

    /// Hands every stamp [`record_deferred`](Self::record_deferred) took
    /// to the collector (one release store): once a turn of a receive
    /// loop, when the burst it read is handled.
    #[inline]
    pub fn flush(&mut self) {
        self.producer.publish(&self.shared.ring);
    }

    /// Records `ns` for one stage. Never blocks, never allocates.
    #[inline]
    pub fn record_ns(&mut self, stage: Stage, ns: u64) {
        if !self.with_slot(|slot| slot.set.record(stage, ns)) {
            self.add(Counter::Dropped, 1);
        }
    }

    /// Adds `n` to a counter (a plain store: this is its only writer).
    #[inline]
    pub fn add(&mut self, counter: Counter, n: u64) {
        let c = &self.shared.counters[counter as usize];
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// Counts one received message of `bytes` payload bytes.
    #[inline]
    pub fn count_message(&mut self, bytes: usize) {
        self.add(Counter::Messages, 1);
        self.add(Counter::Bytes, bytes as u64);
    }
}

impl Drop for Recorder {
    /// Hands over what it took: a last collection records it.
    fn drop(&mut self) {
        self.flush();
    }
}

/// The other end of a [`Recorder`]: empties its histograms into the
/// caller's, for an exporter thread.
pub struct Collector {
    shared: Arc<Shared>,
    config: HistogramConfig,
    /// The collector's side, one caller at a time: the ring's consumer
    /// and the slots' other holder, with its drain buffer.
    drained: Mutex<Vec<Stamps>>,
}

impl Collector {
    /// The stream's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The shape of the recorder's histograms.
    pub fn config(&self) -> HistogramConfig {
        self.config
    }

    /// Moves everything recorded since the last call into `into` (same
    /// shape), and hands the recorder `calibration` for what comes next.
    /// Holds one slot at a time, briefly; the recorder uses the other.
    pub fn collect(&self, into: &mut StageSet, calibration: Calibration) {
        // The collector's side holds one slot at a time, whichever thread
        // collects or drains: the recorder always finds the other free.
        let mut buf = self.collecting();
        self.drain_into(&mut buf);
        for slot in &self.shared.slots {
            let mut slot = lock(slot);
            into.add(&slot.set);
            slot.set.reset();
            slot.calibration = calibration;
        }
    }

    /// Records the stamps the recorder handed over
    /// ([`Recorder::record_deferred`]) into its histograms, taking one
    /// slot a batch. [`collect`](Self::collect) drains first; the exporter
    /// also drains between collections, so that the ring never fills.
    pub fn drain(&self) {
        let mut buf = self.collecting();
        self.drain_into(&mut buf);
    }

    /// The collector's side, one caller at a time (with its drain buffer).
    fn collecting(&self) -> MutexGuard<'_, Vec<Stamps>> {
        self.drained.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn drain_into(&self, buf: &mut Vec<Stamps>) {
        let shared = &self.shared;
        shared.ring.drain(buf, |stamps| {
            let mut slot = lock_either(&shared.slots);
            let cal = slot.calibration;
            slot.set.record_all(stamps, &cal);
        });
    }

    /// A counter's value.
    pub fn counter(&self, counter: Counter) -> u64 {
        self.shared.counters[counter as usize].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamps(base: u64) -> Stamps {
        Stamps {
            poll: base,
            read_start: base + 100,
            read_end: base + 300,
            decrypted: base + 400,
            decoded: base + 450,
            parsed: base + 700,
            handled: base + 800,
            exchange_unix_ns: 0,
        }
    }

    #[test]
    fn every_stage_lands_in_its_histogram() {
        let (mut rec, col) = Recorder::new("s", HistogramConfig::default());
        for i in 0..1000 {
            rec.record(&stamps(1_000_000 + i));
            rec.count_message(200);
        }
        let cal = calibration();
        let mut set = StageSet::new(col.config());
        col.collect(&mut set, cal);
        for (stage, ticks) in [
            (Stage::Wake, 100),
            (Stage::Read, 200),
            (Stage::Tls, 100),
            (Stage::Frame, 50),
            (Stage::Json, 250),
            (Stage::Handler, 100),
            (Stage::Total, 500),
        ] {
            let h = set.get(stage);
            assert_eq!(h.len(), 1000, "{stage}");
            let want = cal.to_ns(ticks);
            assert!(
                h.equivalent(h.value_at_quantile(0.5), want),
                "{stage}: {} vs {want}",
                h.value_at_quantile(0.5)
            );
        }
        assert!(set.get(Stage::Exchange).is_empty());
        assert_eq!(col.counter(Counter::Messages), 1000);
        assert_eq!(col.counter(Counter::Bytes), 200_000);
        assert_eq!(col.counter(Counter::Dropped), 0);
        // Collected means gone from the recorder.
        let mut again = StageSet::new(col.config());
        col.collect(&mut again, cal);
        assert!(again.is_empty());
    }

    /// Deferred stamps land in the same histograms as recorded ones, once
    /// flushed and collected; runs of equal spans count once per stamp; a
    /// full ring makes the recorder record the rest itself.
    #[test]
    fn deferred_stamps_record_alike() {
        let config = HistogramConfig::default();
        let (mut now, now_col) = Recorder::new("now", config);
        let (mut later, later_col) = Recorder::new("later", config);
        let cal = calibration();
        let collect = |col: &Collector| {
            let mut set = StageSet::new(config);
            col.collect(&mut set, cal);
            set
        };
        // Three reads of several messages (fewer than `PUBLISH` in all):
        // the wake-up and read spans repeat within each, the others change
        // with every message.
        let mut all = Vec::new();
        for read in 0..3u64 {
            for m in 0..(5 + 7 * read) {
                let mut s = stamps(1_000_000 * (read + 1));
                s.decoded += 10 * m;
                s.parsed += 10 * m + m * m;
                s.handled += 20 * m + m * m;
                s.exchange_unix_ns = cal.to_unix_ns(s.read_end) - 1_000 * (m + 1);
                all.push(s);
            }
        }
        assert!(all.len() < PUBLISH);
        for s in &all {
            now.record(s);
            later.record_deferred(s);
        }
        assert!(collect(&later_col).is_empty(), "nothing before the flush");
        later.flush();
        let (a, b) = (collect(&now_col), collect(&later_col));
        for stage in Stage::ALL {
            assert_eq!(a.get(stage), b.get(stage), "{stage}");
            let from_stamps = !matches!(
                stage,
                Stage::Lead | Stage::TickToTrade | Stage::RoundTrip | Stage::Delivered
            );
            let want = if from_stamps { all.len() } else { 0 };
            assert_eq!(b.get(stage).len(), want as u64, "{stage}");
        }
        // Nobody drains: the ring fills, and what does not fit is recorded
        // at once; a collection then has every one of them.
        let n = crate::RING + 10;
        for s in all.iter().cycle().take(n) {
            later.record_deferred(s);
        }
        let mut direct = StageSet::new(config);
        for slot in &later_col.shared.slots {
            direct.add(&slot.lock().unwrap().set);
        }
        assert_eq!(
            direct.get(Stage::Total).len(),
            10,
            "recorded by the recorder"
        );
        later.flush();
        assert_eq!(collect(&later_col).get(Stage::Total).len(), n as u64);
        assert_eq!(later_col.counter(Counter::Dropped), 0);
    }

    #[test]
    fn a_busy_slot_sends_the_recorder_to_the_other() {
        let (mut rec, col) = Recorder::new("s", HistogramConfig::default());
        let held = col.shared.slots[0].lock().unwrap();
        rec.record_ns(Stage::Json, 5);
        drop(held);
        let both = (
            col.shared.slots[0].lock().unwrap(),
            col.shared.slots[1].lock().unwrap(),
        );
        rec.record_ns(Stage::Json, 7); // nowhere to go: dropped, counted
        drop(both);
        let mut set = StageSet::new(col.config());
        col.collect(&mut set, calibration());
        assert_eq!(set.get(Stage::Json).len(), 1);
        assert_eq!(set.get(Stage::Json).max(), 5);
        assert_eq!(col.counter(Counter::Dropped), 1);
    }

    #[test]
    fn exchange_latency_is_wall_clock() {
        let (mut rec, col) = Recorder::new("s", HistogramConfig::default());
        let cal = calibration();
        let clock = cal.clock();
        let now = clock.now();
        let wall = cal.to_unix_ns(now);
        rec.record(&Stamps {
            read_end: now,
            exchange_unix_ns: wall - 3_000_000, // 3 ms ago
            ..Stamps::default()
        });
        rec.record(&Stamps {
            read_end: now,
            exchange_unix_ns: wall + 1_000, // a clock ahead of ours
            ..Stamps::default()
        });
        let mut set = StageSet::new(col.config());
        col.collect(&mut set, cal);
        let h = set.get(Stage::Exchange);
        assert_eq!(h.len(), 2);
        assert!(h.equivalent(h.max(), 3_000_000), "{}", h.max());
        assert_eq!(h.min(), 0);
    }
}
