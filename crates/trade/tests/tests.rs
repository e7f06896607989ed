//! The crate's integration tests, one binary.

mod deribit;
mod order_path;
