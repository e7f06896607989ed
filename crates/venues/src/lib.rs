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
//! - [`event`]: the normalised events every adapter emits (trades, quotes,
//!   book snapshots and deltas, `BookValid`, `Gap`, `Resync`), with
//!   integer prices, exchange time and the receive stamp.
//!
//! Adapters ([`binance::Adapter`], [`okx::Adapter`], [`bybit::Adapter`],
//! [`kraken::v2::Adapter`], [`coinbase::Adapter`], [`deribit::Adapter`];
//! [`VenueAdapter`] over all of them) put it together: a venue's text
//! messages in, [`Event`]s out, books kept in step, nothing allocated per
//! message once warm.
//!
//! ```
//! use tickwire_venues::binance::{Adapter, Market};
//! use tickwire_venues::json::INPUT_PADDING;
//! use tickwire_venues::{Event, InstrumentSpec, Kind, Outcome};
//!
//! // BTCUSDT: prices to 2 decimals, sizes to 5, a book of 1000 levels a side.
//! let mut adapter = Adapter::new(Market::Spot, &[InstrumentSpec::new("BTCUSDT", 2, 5, 1000)]);
//!
//! // A message as tickwire-net hands it over: the text, then padding that
//! // the parser may write into.
//! let text = br#"{"e":"trade","E":1,"s":"BTCUSDT","t":7,"p":"61737.63","q":"0.00123","T":1,"m":true,"M":true}"#;
//! let mut buf = text.to_vec();
//! buf.resize(text.len() + INPUT_PADDING, 0);
//!
//! let mut events: Vec<Event> = Vec::new();
//! let outcome = adapter.on_message(&mut buf, text.len(), 0, &mut |e| events.push(e))?;
//! assert_eq!(outcome, Outcome::Data);
//! let Kind::Trade { price, size, .. } = events[0].kind else { unreachable!() };
//! assert_eq!((price, size), (6_173_763, 123)); // exact: 61737.63 and 0.00123
//!
//! // A depth diff before any snapshot: the book asks for one (`Resync`)
//! // and says nothing else until a REST snapshot bridges it.
//! let text = br#"{"e":"depthUpdate","E":2,"s":"BTCUSDT","U":10,"u":12,"b":[["61737.60","1.5"]],"a":[]}"#;
//! let mut buf = text.to_vec();
//! buf.resize(text.len() + INPUT_PADDING, 0);
//! events.clear();
//! adapter.on_message(&mut buf, text.len(), 0, &mut |e| events.push(e))?;
//! assert_eq!(events.iter().map(|e| e.kind).collect::<Vec<_>>(), [Kind::Resync]);
//! # Ok::<(), tickwire_venues::DecodeError>(())
//! ```

#![deny(unsafe_code)]

mod adapter;
pub mod binance;
pub mod book;
pub mod bybit;
pub mod coinbase;
mod connection;
mod crc_text;
pub mod decimal;
pub mod deribit;
mod error;
pub mod event;
pub mod json;
pub mod kraken;
mod listed;
pub mod listing;
pub mod mantissa;
mod model;
pub mod okx;
pub mod plan;
mod scan;
#[allow(unsafe_code)]
mod simd;
pub mod sync;
pub mod time;
mod venue;

pub use adapter::{Input, Lead, Lines, Outcome, VenueAdapter};
pub use error::{BadDecimal, DecodeError, ShortText};
pub use event::{Aggressor, Event, InstrumentId, InstrumentSpec, Kind};
pub use model::{Line, Venue};
