//! The pieces of the `tickwire-feed` binary that other programs (and the
//! fuzz targets) use too.
//!
//! - [`recording`]: the binary log `tickwire-feed record` writes and
//!   `replay` reads: every message received or sent, with its receive TSC
//!   and wall-clock time, CRC-checked, in rotated files.

pub mod recording;
