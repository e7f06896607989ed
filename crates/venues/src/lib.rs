//! Exchange market data, decoded in place and kept honest.
//!
//! - [`decimal`]: wire strings to integers at a fixed scale, exactly (no
//!   floats anywhere).
//! - [`json`]: simd-json over the payload's own bytes, reusing its tape, so
//!   a message costs no allocation.
//! - [`binance`]: Binance spot, USD-M and COIN-M streams and REST snapshots.
//! - [`okx`]: OKX v5 books (sequence ids and CRC32 checksum), bbo, trades.
//! - [`kraken`]: Kraken spot v1 books (CRC32 checksum, depth truncation),
//!   trades; [`kraken::v2`] books, read with the scanner (JSON-number prices).
//! - [`bybit`]: Bybit v5 order books (`u` continuity, snapshot resets), trades.
//! - [`coinbase`]: Coinbase Advanced Trade level2 and market trades, with the
//!   connection-wide `sequence_num` check.
//! - [`deribit`]: Deribit books (`change_id` chain) and trades, read with the
//!   scanner so that prices sent as JSON numbers stay exact.
//! - [`plan`]: per venue, the connections a set of instruments needs, the
//!   frames that subscribe them, and the keep-alive rules.
//! - [`time`]: venue timestamps to nanoseconds.
//! - [`book`]: fixed-depth price-level books, allocated at subscription.
//! - [`sync`]: one synchronisation engine, venue rules as data: buffer
//!   diffs, snapshot, bridge, chain check, and an explicit `Gap` before any
//!   book state is dropped.
//!
//! - [`event`]: the normalised events every adapter emits (trades, quotes,
//!   book snapshots and deltas, `BookValid`, `Gap`, `Resync`), with
//!   integer prices, exchange time and the receive stamp.
//!
//! Adapters ([`binance::Adapter`], ...) put it together: a venue's text
//! messages in, [`Event`]s out, books kept in step, nothing allocated per
//! message.

mod adapter;
pub mod binance;
pub mod book;
pub mod bybit;
pub mod coinbase;
pub mod decimal;
pub mod deribit;
mod error;
pub mod event;
pub mod json;
pub mod kraken;
pub mod okx;
pub mod plan;
mod scan;
pub mod sync;
pub mod time;

pub use adapter::{Outcome, VenueAdapter};
pub use error::DecodeError;
pub use event::{Aggressor, Event, InstrumentId, InstrumentSpec, Kind};
