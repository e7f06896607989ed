//! Integration tests for tickwire-net, built as one test binary. Every peer
//! runs on 127.0.0.1 and is started by the test itself.

#[global_allocator]
static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

mod actions;
mod alloc;
mod fetch;
mod interop;
mod plain;
mod records;
mod server;
mod tls;
mod util;
