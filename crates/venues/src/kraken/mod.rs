//! Kraken spot: the WebSocket v1 decoder ([`v1`]: arrays, `book-N` with its
//! CRC32 checksum, `trade`), the v2 protocol and its adapter ([`v2`]:
//! `wss://ws.kraken.com/v2`, JSON objects, prices as JSON numbers;
//! [`Adapter`] is that adapter), the connection plan ([`plan`]) and the
//! instrument list ([`listing`]). The v1 items are re-exported here, where
//! they have always been.

pub mod listing;
pub mod plan;
pub mod v1;
pub mod v2;

pub use v1::*;
pub use v2::Adapter;
