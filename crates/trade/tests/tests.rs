//! The crate's integration tests, one binary.

mod binance;
mod order_path;
