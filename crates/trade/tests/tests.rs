//! The crate's integration tests, one binary.

mod order_path;
