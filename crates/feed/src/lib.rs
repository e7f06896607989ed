//! The feed handler as a library: the engine the `tickwire-feed` binary
//! runs, for a bot to embed, and the pieces other programs (and the fuzz
//! targets) use too.
//!
//! - [`Feed`] and [`FeedBuilder`]: venues by name, instruments as the
//!   configuration writes them, polled on the caller's thread; each
//!   message's events reach the handler with the books as the message
//!   left them ([`Update`]); snapshots, resubscriptions, reconnects and
//!   standby lines are inside. `examples/book_top.rs` is a whole bot.
//! - [`recording`]: the binary log `tickwire-feed record` writes and
//!   `replay` reads: every message received or sent, with its receive TSC
//!   and wall-clock time, CRC-checked, in rotated files.

//! - [`sink`]: the queue between the I/O thread and the sinks (never
//!   waits, drops and counts when full) and the JSON Lines sink.

//! - [`replay`]: a recording through the venue adapters, as fast as
//!   possible or at its own pace.
//! - [`runs`]: where a command's outputs go: a new `runs/<time>-<command>/`
//!   for each run, never overwritten, ignored by git.
//! - [`shm`]: the shared-memory event ring (one writer, any number of
//!   readers in other processes, overruns detected and counted, followed
//!   across feed restarts).

#![deny(unsafe_code)]

mod builder;
pub mod config;
#[cfg(feature = "sim")]
pub mod demo;
pub mod instruments;
pub mod live;
pub mod mirror;
pub mod recording;
pub mod replay;
pub mod runner;
pub mod runs;
#[allow(unsafe_code)]
pub mod shm;
#[cfg(feature = "sim")]
mod simulated;
pub mod sink;
pub mod threads;

pub use builder::{FeedBuilder, Running};

/// The README's Rust snippets, compiled (and run where they need no
/// network) as this crate's doctests, so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeSnippets;
pub use live::{Feed, FeedError, Fixed, NoHandler, OnEvent, Update};
