//! The crate's integration tests, one binary.

mod binance;
mod deribit;
mod order_path;
