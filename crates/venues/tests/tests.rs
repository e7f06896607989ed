//! Integration tests for tickwire-venues, built as one test binary. The
//! allocation counter counts per thread, so the tests that assert "no
//! allocation once warm" share the binary with the others.

#[global_allocator]
static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

mod alloc;
mod binance;
mod bybit;
mod coinbase;
mod common;
mod deribit;
mod differential;
mod events;
mod kraken;
mod lines;
mod okx;
