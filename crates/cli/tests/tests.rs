//! Integration tests for the `tickwire-feed` program, built as one test
//! binary: each runs the binary as a user does (its exit code, its lines,
//! the files it leaves), against servers on 127.0.0.1 the test starts.

mod running;
mod util;

#[cfg(feature = "aeron")]
mod aeron;

mod cli;
mod demo_compare;
mod demo_trade;
mod first_run;
mod instruments;
mod jsonl_schema;
mod never_connected;
mod record;
mod replay;
mod report;
mod run;
mod said;
mod subscribe;
