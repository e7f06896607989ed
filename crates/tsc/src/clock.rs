//! The clock: raw TSC reads when the TSC can be trusted, the OS monotonic
//! clock otherwise, and the calibration that turns either into nanoseconds
//! and into wall-clock time.

use std::fmt;
use std::sync::{OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::arch;

/// A clock reading in the clock's own units: TSC ticks, or nanoseconds on
/// the monotonic fallback. Zero never comes from a clock; it marks a stamp
/// that was not taken.
pub type Ticks = u64;

/// Where a [`Clock`]'s readings come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The x86-64 time-stamp counter (`rdtsc`), invariant on this CPU.
    Tsc,
    /// `std::time::Instant` (`CLOCK_MONOTONIC` on Linux), in nanoseconds
    /// since the first reading in this process.
    Monotonic,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Tsc => "tsc",
            Source::Monotonic => "monotonic",
        })
    }
}

/// Why a [`Clock`] could not be built on the source asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoInvariantTsc;

impl fmt::Display for NoInvariantTsc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("this CPU has no invariant TSC (or is not x86-64)")
    }
}

impl std::error::Error for NoInvariantTsc {}

/// A cheap, `Copy` handle that reads the time.
///
/// [`Clock::now`] is one `rdtsc` (about 10 ns) behind a branch on a field
/// that never changes, which the CPU predicts and a loop hoists. Readings
/// are only comparable between clocks of the same [`Source`]; all clocks
/// from [`Clock::new`] in a process share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    tsc: bool,
}

/// The environment variable that forces the monotonic fallback when set to
/// `monotonic` (for hosts whose TSC is flagged invariant but misbehaves).
pub const CLOCK_ENV: &str = "TICKWIRE_CLOCK";

fn default_source() -> Source {
    static SOURCE: OnceLock<Source> = OnceLock::new();
    *SOURCE.get_or_init(|| {
        let forced = std::env::var(CLOCK_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("monotonic"));
        if !forced && arch::invariant_tsc() {
            Source::Tsc
        } else {
            Source::Monotonic
        }
    })
}

/// The monotonic fallback's zero, fixed at the first reading.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn monotonic_ns(at: Instant) -> Ticks {
    // +1: zero means "not stamped".
    at.saturating_duration_since(epoch()).as_nanos() as u64 + 1
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::new()
    }
}

impl Clock {
    /// The TSC if this CPU has an invariant one, else the monotonic clock.
    /// Setting `TICKWIRE_CLOCK=monotonic` forces the fallback.
    pub fn new() -> Clock {
        Clock {
            tsc: default_source() == Source::Tsc,
        }
    }

    /// A clock on `source`; fails for [`Source::Tsc`] without an invariant
    /// TSC.
    pub fn with_source(source: Source) -> Result<Clock, NoInvariantTsc> {
        match source {
            Source::Tsc if arch::invariant_tsc() => Ok(Clock { tsc: true }),
            Source::Tsc => Err(NoInvariantTsc),
            Source::Monotonic => {
                epoch();
                Ok(Clock { tsc: false })
            }
        }
    }

    /// Where the readings come from.
    pub fn source(&self) -> Source {
        if self.tsc {
            Source::Tsc
        } else {
            Source::Monotonic
        }
    }

    /// The time now, not ordered against the instructions around it (the
    /// CPU may read it a few instructions early or late). For stamps.
    #[inline(always)]
    pub fn now(&self) -> Ticks {
        if self.tsc {
            arch::rdtsc()
        } else {
            monotonic_ns(Instant::now())
        }
    }

    /// The time now, read only after every earlier instruction has
    /// completed (`lfence; rdtsc`, about 16 ns): for the start of a measured
    /// section, so that earlier work does not leak into it.
    #[inline(always)]
    pub fn now_ordered(&self) -> Ticks {
        if self.tsc {
            arch::rdtsc_ordered()
        } else {
            monotonic_ns(Instant::now())
        }
    }

    /// A reading taken as close as possible to `Instant::now()` and
    /// `SystemTime::now()`: the pair with the narrowest bracket of five.
    fn pair(&self) -> (Ticks, Instant, SystemTime) {
        let mut best = (u64::MAX, 0, Instant::now(), SystemTime::now());
        for _ in 0..5 {
            let before = self.now_ordered();
            let instant = Instant::now();
            let wall = SystemTime::now();
            let after = self.now_ordered();
            let width = after.wrapping_sub(before);
            if width < best.0 {
                best = (width, before + width / 2, instant, wall);
            }
        }
        (best.1, best.2, best.3)
    }
}

/// Turns a clock's readings into nanoseconds and into wall-clock time.
///
/// Measured against `Instant` (the OS monotonic clock) over a window at
/// start, then [refined](Calibration::refine) over an ever longer baseline
/// (the exporter does it every interval), which also re-reads the wall clock
/// so that NTP steps and slews are followed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    clock: Clock,
    /// Nanoseconds per tick, 32.32 fixed point.
    mult: u64,
    /// The first reading: the rate is measured from here, so that each
    /// refinement sees a longer baseline.
    rate_ticks: Ticks,
    rate_instant: Instant,
    /// The newest reading and the wall-clock time at it (ns since the Unix
    /// epoch): wall time is mapped from here.
    wall_ticks: Ticks,
    wall_unix_ns: u64,
}

fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Calibration {
    /// Measures `clock` against the monotonic clock over `window` (sleeping
    /// through it). 10 ms gives a few parts per million on a TSC; the
    /// monotonic fallback needs no window.
    pub fn measure(clock: Clock, window: Duration) -> Calibration {
        let (ticks, instant, wall) = clock.pair();
        let start = Calibration {
            clock,
            mult: 1 << 32,
            rate_ticks: ticks,
            rate_instant: instant,
            wall_ticks: ticks,
            wall_unix_ns: unix_ns(wall),
        };
        if !clock.tsc {
            return start;
        }
        std::thread::sleep(window);
        start.refine()
    }

    /// The rate re-measured from the first reading to now (a longer
    /// baseline is a more precise one), and the wall-clock mapping moved to
    /// now.
    pub fn refine(&self) -> Calibration {
        let (ticks, instant, wall) = self.clock.pair();
        let mut next = Calibration {
            wall_ticks: ticks,
            wall_unix_ns: unix_ns(wall),
            ..*self
        };
        if self.clock.tsc {
            let ns = instant
                .saturating_duration_since(self.rate_instant)
                .as_nanos();
            let elapsed = u128::from(ticks.saturating_sub(self.rate_ticks));
            if elapsed > 0 && ns > 0 {
                next.mult = ((ns << 32) / elapsed) as u64;
            }
        }
        next
    }

    /// The clock this calibrates.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Clock ticks per second (1e9 on the monotonic fallback).
    pub fn ticks_per_second(&self) -> f64 {
        (1u128 << 32) as f64 * 1e9 / self.mult as f64
    }

    /// `ticks` of this clock, in nanoseconds.
    #[inline]
    pub fn to_ns(&self, ticks: u64) -> u64 {
        ((u128::from(ticks) * u128::from(self.mult)) >> 32) as u64
    }

    /// Nanoseconds from `from` to `to` (zero if `to` is earlier).
    #[inline]
    pub fn ns_between(&self, from: Ticks, to: Ticks) -> u64 {
        self.to_ns(to.saturating_sub(from))
    }

    /// The wall-clock time of a reading, in ns since the Unix epoch.
    #[inline]
    pub fn to_unix_ns(&self, at: Ticks) -> u64 {
        if at >= self.wall_ticks {
            self.wall_unix_ns + self.to_ns(at - self.wall_ticks)
        } else {
            self.wall_unix_ns
                .saturating_sub(self.to_ns(self.wall_ticks - at))
        }
    }
}

static CURRENT: RwLock<Option<Calibration>> = RwLock::new(None);

/// The process-wide calibration of [`Clock::new`]'s clock: measured on the
/// first call (a 10 ms sleep), refined by [`recalibrate`].
pub fn calibration() -> Calibration {
    if let Some(c) = *CURRENT.read().unwrap_or_else(|e| e.into_inner()) {
        return c;
    }
    let mut current = CURRENT.write().unwrap_or_else(|e| e.into_inner());
    *current.get_or_insert_with(|| Calibration::measure(Clock::new(), Duration::from_millis(10)))
}

/// Refines the process-wide calibration (see [`Calibration::refine`]) and
/// returns it. Cheap (a few clock reads); call it every second or so.
pub fn recalibrate() -> Calibration {
    let refined = calibration().refine();
    *CURRENT.write().unwrap_or_else(|e| e.into_inner()) = Some(refined);
    refined
}
