//! The clock and the stamps, which need no feature: calibration against the
//! OS clock, the mapping to wall-clock time, and monotonic readings per
//! thread. (Recording and export: tests/tsc.rs, with `metrics`.)

use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tickwire_tsc::{Calibration, Clock, Source};

fn clocks() -> Vec<Clock> {
    let mut v = vec![Clock::with_source(Source::Monotonic).unwrap()];
    if let Ok(tsc) = Clock::with_source(Source::Tsc) {
        v.push(tsc);
    }
    v
}

/// The acceptance test: calibrated over 10 ms, the clock agrees with the
/// monotonic clock to 0.1 % over the next 200 ms (typically to a few ppm).
#[test]
fn calibration_agrees_with_the_monotonic_clock_over_200_ms() {
    for clock in clocks() {
        let cal = Calibration::measure(clock, Duration::from_millis(10));
        let (t0, i0) = (clock.now_ordered(), Instant::now());
        thread::sleep(Duration::from_millis(200));
        let (t1, i1) = (clock.now_ordered(), Instant::now());
        let ours = cal.ns_between(t0, t1) as f64;
        let os = (i1 - i0).as_nanos() as f64;
        let error = (ours - os).abs() / os;
        assert!(
            error < 1e-3,
            "{:?}: {ours} ns vs {os} ns ({:.4} %)",
            clock.source(),
            error * 100.0
        );
        // Refining over the longer baseline keeps it there.
        let refined = cal.refine();
        let error = (refined.ns_between(t0, t1) as f64 - os).abs() / os;
        assert!(error < 1e-3, "refined: {:.4} %", error * 100.0);
        if clock.source() == Source::Tsc {
            let hz = cal.ticks_per_second();
            assert!((1e8..1e11).contains(&hz), "{hz} ticks/s");
        } else {
            assert_eq!(cal.ticks_per_second(), 1e9);
        }
    }
}

#[test]
fn readings_map_to_wall_clock_time() {
    for clock in clocks() {
        let cal = Calibration::measure(clock, Duration::from_millis(10));
        thread::sleep(Duration::from_millis(50));
        let ours = cal.to_unix_ns(clock.now()) as i128;
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128;
        // Within a millisecond (the system clock may be slewed by NTP).
        assert!(
            (ours - wall).abs() < 1_000_000,
            "{:?}: {ours} vs {wall}",
            clock.source()
        );
    }
}

/// Stamps never go backwards on one thread, pinned or free to migrate
/// (the invariant TSC is synchronised across cores).
#[test]
fn stamps_are_monotonic_per_thread() {
    let pinned = core_affinity::get_core_ids().and_then(|ids| ids.first().copied());
    let runs: Vec<thread::JoinHandle<()>> = [true, false]
        .into_iter()
        .flat_map(|pin| clocks().into_iter().map(move |c| (pin, c)))
        .map(|(pin, clock)| {
            thread::spawn(move || {
                if pin && let Some(core) = pinned {
                    core_affinity::set_for_current(core);
                }
                let mut last = clock.now();
                for i in 0..1_000_000 {
                    let now = if i % 2 == 0 {
                        clock.now()
                    } else {
                        clock.now_ordered()
                    };
                    assert!(now >= last, "{:?}: {now} after {last}", clock.source());
                    assert_ne!(now, 0, "zero means unstamped");
                    last = now;
                    if i % 100_000 == 0 {
                        thread::yield_now(); // invite a migration
                    }
                }
            })
        })
        .collect();
    for r in runs {
        r.join().unwrap();
    }
}
