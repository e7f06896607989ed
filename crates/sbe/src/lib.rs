//! Simple Binary Encoding read in place, without allocating.
//!
//! [SBE] lays a message out as fixed-size fields at fixed offsets, so a
//! field is one load at a constant offset: nothing is searched for, nothing
//! is copied. This crate reads and writes the one schema tickwire speaks,
//! Binance's spot market-data streams ([`spot_stream`]: trades, best bid and
//! ask, the 20-level book and the book diffs), and describes its layouts as
//! data ([`layout`]) so that a test can hold them against the facts of the
//! venue's published schema (`schema/spot_stream_1_0.toml`).
//!
//! - [`spot_stream::decode`] checks a whole message once (schema id,
//!   version, every block, group and var-data length against the bytes),
//!   then hands out views whose accessors read at compile-time offsets:
//!   an offset past a block's end fails the build.
//! - [`spot_stream::encode`] writes the same messages (for the simulator,
//!   the tests and the fuzz seeds), checking the buffer once.
//!
//! Every error is a `Copy` enum ([`DecodeError`], [`EncodeError`]); nothing
//! here panics on input, and the crate uses neither `std` nor `alloc`.
//!
//! [SBE]: https://github.com/FIXTradingCommunity/fix-simple-binary-encoding

#![no_std]
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

mod error;
pub mod layout;
mod le;
pub mod spot_stream;

pub use error::{DecodeError, EncodeError};
