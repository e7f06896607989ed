//! Thread placement: pinning to a core (core_affinity) and the real-time
//! FIFO scheduling class (thread-priority), each failing with a message a
//! user can act on rather than silently running unpinned; and a thread's
//! CPU clock ([`CpuClock`]), which tells a busy thread from one that waited.

use std::io;
use std::time::Duration;

use thread_priority::{
    RealtimeThreadSchedulePolicy, ThreadPriority, ThreadPriorityValue, ThreadSchedulePolicy,
    set_thread_priority_and_policy, thread_native_id,
};

/// The cores this process may run on.
pub fn cores() -> Vec<usize> {
    core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect()
}

/// The highest-numbered core this process may run on (the one least
/// likely to take the kernel's and other programs' work).
pub fn last_core() -> Option<usize> {
    cores().into_iter().max()
}

/// Pins the calling thread to `core`.
pub fn pin(core: usize) -> io::Result<()> {
    let allowed = cores();
    if !allowed.contains(&core) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot pin to core {core}: this process may only run on cores {allowed:?}"),
        ));
    }
    if core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "pinning to core {core} failed (sched_setaffinity refused)"
        )))
    }
}

/// Puts the calling thread in the SCHED_FIFO class at `priority` (1-99).
pub fn fifo(priority: u8) -> io::Result<()> {
    let value = ThreadPriorityValue::try_from(priority).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("priority {priority}: {e}"),
        )
    })?;
    set_thread_priority_and_policy(
        thread_native_id(),
        ThreadPriority::Crossplatform(value),
        ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
    )
    .map_err(|e| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "SCHED_FIFO priority {priority} not permitted ({e:?}): run as root, grant \
                 CAP_SYS_NICE (setcap cap_sys_nice+ep on the binary), or raise RLIMIT_RTPRIO \
                 (ulimit -r / limits.conf); or leave `priority` unset"
            ),
        )
    })
}

/// The CPU time one thread has used, read from any thread of the process
/// (`pthread_getcpuclockid(3)`, then `clock_gettime(2)` on that clock: one
/// system call a reading). Against the wall clock over the same span it
/// says how much of it the thread was on a core: a thread that bounds a
/// rate is on it all of the time; one that waits on another, or is
/// pushed off its core by other threads, is not. Linux and Android (where
/// libc declares the call); elsewhere [`CpuClock::of`] says `None`.
#[derive(Clone, Copy, Debug)]
pub struct CpuClock(#[cfg(any(target_os = "linux", target_os = "android"))] libc::clockid_t);

#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
impl CpuClock {
    /// The clock of the thread `thread` runs, while that thread lives
    /// (after it ends, [`CpuClock::used`] says `None`, or reads a later
    /// thread given its id: read it only while the thread runs). `None`
    /// if the system has no such clock.
    pub fn of<T>(thread: &std::thread::JoinHandle<T>) -> Option<CpuClock> {
        use std::os::unix::thread::JoinHandleExt;
        let mut clock: libc::clockid_t = 0;
        // SAFETY: `as_pthread_t` names a thread not yet joined nor
        // detached (its handle is borrowed here, and joining or detaching
        // takes the handle), so the id is one pthread_getcpuclockid(3) may
        // be given; it writes one `clockid_t` to `&mut clock`, a local that
        // outlives the call.
        let r = unsafe { libc::pthread_getcpuclockid(thread.as_pthread_t(), &mut clock) };
        (r == 0).then_some(CpuClock(clock))
    }

    /// The CPU time the thread has used since it started, `None` if the
    /// clock cannot be read (the thread has ended).
    pub fn used(&self) -> Option<Duration> {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime(2) writes one `timespec` to `&mut t`, a
        // local that outlives the call; a clock id that no longer names a
        // thread makes it fail with EINVAL, which is checked, not undefined.
        let r = unsafe { libc::clock_gettime(self.0, &mut t) };
        if r != 0 {
            return None;
        }
        Some(Duration::new(
            u64::try_from(t.tv_sec).ok()?,
            u32::try_from(t.tv_nsec).ok()?,
        ))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
impl CpuClock {
    /// No thread CPU clock on this system: `None`.
    pub fn of<T>(_thread: &std::thread::JoinHandle<T>) -> Option<CpuClock> {
        None
    }

    /// Never reached (no clock is made here): `None`.
    pub fn used(&self) -> Option<Duration> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread spinning on work shows its CPU time; one blocked on a
    /// channel for the same span shows next to none. No timing is assumed:
    /// the spinner runs until its own clock says 50 ms (however long a
    /// loaded machine takes to give it that), then the blocked one is read.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_cpu_clock_counts_work_and_not_waiting() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, mpsc};
        use std::time::Instant;

        let (tx, rx) = mpsc::channel::<()>();
        let blocked = std::thread::spawn(move || rx.recv());
        let stop = Arc::new(AtomicBool::new(false));
        let spinning = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005) + 1);
                }
                x
            })
        };
        let (spins, waits) = (
            CpuClock::of(&spinning).expect("a CPU clock for a live thread"),
            CpuClock::of(&blocked).expect("a CPU clock for a live thread"),
        );
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut before = Duration::ZERO;
        loop {
            let used = spins.used().expect("the spinning thread's clock");
            assert!(
                used >= before,
                "a CPU clock went back: {before:?} -> {used:?}"
            );
            before = used;
            if used >= Duration::from_millis(50) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "50 ms of CPU never came: {used:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let waited = waits.used().expect("the blocked thread's clock");
        assert!(
            waited < Duration::from_millis(10),
            "a thread blocked on a channel used {waited:?} of CPU"
        );
        stop.store(true, Ordering::Relaxed);
        spinning.join().unwrap();
        tx.send(()).unwrap();
        blocked.join().unwrap().unwrap();
    }

    #[test]
    fn pinning_to_an_allowed_core_works_and_a_missing_one_is_named() {
        let core = last_core().expect("at least one core");
        std::thread::spawn(move || pin(core).unwrap())
            .join()
            .unwrap();
        let e = pin(100_000).unwrap_err();
        assert!(e.to_string().contains("core 100000"), "{e}");
    }

    #[test]
    fn an_out_of_range_priority_is_refused_by_name() {
        let e = fifo(0).unwrap_err();
        assert!(e.to_string().contains("priority 0"), "{e}");
    }
}
