//! Thread placement: pinning to a core (core_affinity) and the real-time
//! FIFO scheduling class (thread-priority), each failing with a message a
//! user can act on rather than silently running unpinned.

use std::io;

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

#[cfg(test)]
mod tests {
    use super::*;

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
