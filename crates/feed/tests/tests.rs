//! Integration tests for tickwire-feed the library, built as one test
//! binary: a bot's feed against in-process simulators (the `sim` feature,
//! turned on for these tests by the crate's dev-dependency on itself).
//! Every peer runs on 127.0.0.1 and is started by the test itself. The
//! tests that run the `tickwire-feed` program are the cli crate's.

// Counts allocations per thread: a test measures its own thread only,
// whatever the tests beside it allocate.
#[global_allocator]
static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

mod common;

mod budgets;
mod coinbase;
mod deepen;
mod demo;
mod embed;
mod faults;
mod lines;
mod live;
mod metrics;
mod pacing;
mod rest;
mod shm;
mod trading;
mod unreachable;
mod venues;
