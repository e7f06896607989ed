//! Test support shared by the tickwire crates.
//!
//! [`CountingAllocator`] counts heap allocations per thread, so a test can
//! prove that a code path allocates nothing while other test threads (and
//! the test's own peers) allocate freely. Install it in a test binary:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;
//! ```
//!
//! then measure with [`allocations`], or the bytes asked for with
//! [`allocated_bytes`].
//!
//! [`proxy::Proxy`] sits between a client and a loopback server and injects
//! network faults (1-byte segments, delays, stalls, resets, closes without
//! a close frame, a corrupted, duplicated or dropped range, refused
//! connections) for the robustness tests. [`ws::Client`] is a blocking
//! WebSocket client over plain TCP for tests that speak to a simulator as a
//! bare client.

pub mod proxy;
pub mod ws;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// A global allocator that forwards to `System` and counts, per thread,
/// every `alloc`, `alloc_zeroed` and `realloc`, and the bytes they ask for
/// (a `realloc` counts what it grows by).
pub struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

fn bump(bytes: usize) {
    // `try_with`: the allocator also runs while a thread is being torn down.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|c| c.set(c.get() + bytes as u64));
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees carry over; counting touches only a
// thread-local `Cell` that never allocates (const-initialised, no destructor).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump(new_size.saturating_sub(layout.size()));
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// How many allocations this thread has made so far (with
/// [`CountingAllocator`] installed; always 0 without it).
pub fn allocations_so_far() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `f` and returns its result with the number of allocations it made
/// on this thread.
pub fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = allocations_so_far();
    let r = f();
    (r, allocations_so_far() - before)
}

/// Runs `f` and returns its result with the bytes it asked the allocator
/// for on this thread (freed or not): what a structure built in `f` sets
/// aside, to check a memory budget against.
pub fn allocated_bytes<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let bytes = || BYTES.with(Cell::get);
    let before = bytes();
    let r = f();
    (r, bytes() - before)
}
