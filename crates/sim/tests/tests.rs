//! Integration tests for tickwire-sim, built as one test binary. Every
//! simulated venue listens on loopback, started by the test itself.

mod binance;
mod deribit_private;
mod instruments;
mod lifetime;
mod sbe;
mod standstill;
mod util;
mod ws_api;
