//! The crate's only `unsafe`: the x86-64 time-stamp counter instructions.
//!
//! `_rdtsc` and `_mm_lfence` are `unsafe fn`s in `core::arch` only because
//! all intrinsics were declared that way; neither reads or writes memory,
//! and both exist on every x86-64 CPU (RDTSC since the Pentium, LFENCE is
//! SSE2, which x86-64 requires). Elsewhere the module reports no TSC and the
//! clock falls back to the OS monotonic clock.

/// Whether this CPU has an invariant TSC: one that ticks at a constant rate
/// in every power state and is synchronised across cores (CPUID leaf
/// 0x8000_0007, EDX bit 8).
#[cfg(target_arch = "x86_64")]
pub(crate) fn invariant_tsc() -> bool {
    use core::arch::x86_64::__cpuid;
    let max_extended = __cpuid(0x8000_0000).eax;
    max_extended >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn invariant_tsc() -> bool {
    false
}

/// One `rdtsc`: the counter, not ordered against the instructions around it.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86-64 CPU and touches no memory; the
    // intrinsic is `unsafe` only by declaration (see the module docs).
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// `lfence; rdtsc`: the counter, read only after every earlier instruction
/// has completed locally (AMD documents LFENCE as dispatch-serialising once
/// the OS enables it, which Linux does on every AMD CPU it mitigates).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn rdtsc_ordered() -> u64 {
    // SAFETY: LFENCE (SSE2, part of x86-64) and RDTSC touch no memory; the
    // intrinsics are `unsafe` only by declaration (see the module docs).
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    0
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn rdtsc_ordered() -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_counter_moves_forward() {
        let a = rdtsc();
        let b = rdtsc_ordered();
        let c = rdtsc();
        assert!(a <= b && b <= c, "{a} {b} {c}");
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(rdtsc() > c, "a millisecond passed without a tick");
    }

    /// CPUID's answer against the kernel's: Linux sets the `nonstop_tsc`
    /// flag in /proc/cpuinfo from the same CPUID bit (0x8000_0007 EDX[8]).
    #[test]
    fn detection_agrees_with_the_kernel() {
        if cfg!(not(target_arch = "x86_64")) {
            assert!(!invariant_tsc());
            return;
        }
        let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else {
            eprintln!("skipped: no /proc/cpuinfo to compare with");
            return;
        };
        let Some(flags) = cpuinfo.lines().find(|l| l.starts_with("flags")) else {
            eprintln!("skipped: /proc/cpuinfo lists no flags");
            return;
        };
        let kernel = flags.split_whitespace().any(|f| f == "nonstop_tsc");
        assert_eq!(invariant_tsc(), kernel, "CPUID and the kernel disagree");
    }
}
