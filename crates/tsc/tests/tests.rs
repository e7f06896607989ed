//! Integration tests for tickwire-tsc, built as one test binary: the clock
//! (no feature needed) and, with the `report` feature, recording and
//! export end to end. The allocation counter counts per thread.

#[global_allocator]
static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

mod clock;
#[cfg(feature = "report")]
mod tsc;
