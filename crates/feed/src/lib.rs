//! The feed handler as a library: the engine the `tickwire-feed` program
//! (the `tickwire-feed-cli` crate) runs, for a bot to embed, and the pieces other programs (and the fuzz
//! targets) use too.
//!
//! - [`Feed`] and [`FeedBuilder`]: venues by name, instruments as the
//!   configuration writes them, polled on the caller's thread; each
//!   message's events reach the handler with the books as the message
//!   left them ([`Update`]); snapshots, resubscriptions, reconnects and
//!   standby lines are inside. `examples/book_top.rs` is a whole bot.
//!
//! # The types a bot is handed
//!
//! Re-exported here from `tickwire-venues`, so a bot depends on this crate
//! alone:
//!
//! - [`Update`]: what a handler gets once per message: its [`Event`]s
//!   ([`Update::events`]) and the books they changed ([`Update::book`],
//!   [`Update::books`]), with each instrument's symbol and decimals.
//! - [`Book`]: one instrument's order book; [`Book::top`] is its best bid
//!   and ask, [`Book::levels`] a side's [`Levels`] ([`Side`]), best first.
//! - [`Level`]: a price and a size, as integers at the instrument's scales
//!   ([`Update::price`] writes one as a decimal).
//! - [`Event`]: what a message said, for one instrument (its feed-wide
//!   [`FeedId`]); its [`Kind`] is a trade (with its [`Aggressor`]), a
//!   quote, a book's snapshot or change, the book valid again, a gap, a
//!   resync, a lost connection, a refused request.
//! - [`VenueId`]: a venue of one feed ([`Feed::venue`] by name), which
//!   every method about one venue takes.
//! - [`InstrumentSpec`]: a symbol with its decimals and book depth;
//!   [`Venue`]: a venue by name.
//!
//! ```
//! use tickwire_feed::{Book, Event, FeedId, Kind, Level, Side};
//!
//! /// The spread of a book, in its price units; `None` while a side is empty.
//! fn spread(book: &Book) -> Option<i64> {
//!     let (bid, ask): (Level, Level) = book.top()?;
//!     Some(ask.price - bid.price)
//! }
//!
//! /// The trades among a message's events, by instrument.
//! fn trades(events: &[Event]) -> impl Iterator<Item = (FeedId, i64)> + '_ {
//!     events.iter().filter_map(|e| match e.kind {
//!         Kind::Trade { price, .. } => Some((e.instrument, price)),
//!         _ => None,
//!     })
//! }
//!
//! let _ = (spread, trades, Side::Bid);
//! ```
//!
//! # Modules
//!
//! - [`recording`]: the binary log `tickwire-feed record` writes and
//!   `replay` reads: every message received or sent, with its receive TSC
//!   and wall-clock time, CRC-checked, in rotated files.

//! - [`sink`]: the queue between the I/O thread and the sinks (never
//!   waits, drops and counts when full) and the JSON Lines sink.

//! - [`replay`]: a recording through the venue adapters, as fast as
//!   possible or at its own pace.
//! - [`shm`]: the shared-memory event ring (one writer, any number of
//!   readers in other processes, overruns detected and counted, followed
//!   across feed restarts).
//! - [`trading`]: order entry on the feed's own driver
//!   ([`FeedBuilder::trade`]): the handler's [`Desk`]
//!   ([`Update::desk`]), order events in [`Update::orders`], the
//!   [`KillSwitch`].

#![deny(unsafe_code)]

/// The `log` target every line of the feed library's is written to: an
/// embedding program's logger routes (or filters) it by this name. Here,
/// at the crate's root, so that every module (the sinks too) may name it
/// without depending on [`live`]; [`live::LOG_TARGET`] is the same.
pub const LOG_TARGET: &str = "tickwire_feed";

#[cfg(feature = "aeron")]
pub mod aeron;
mod builder;
pub mod config;
#[cfg(feature = "sim")]
pub mod demo;
mod id;
pub mod instruments;
pub mod live;
pub mod mirror;
pub mod recording;
pub mod replay;
pub mod runner;
#[allow(unsafe_code)]
pub mod shm;
#[cfg(feature = "sim")]
mod simulated;
pub mod sink;
pub mod stream;
pub mod threads;
pub mod trading;

pub use builder::{FeedBuilder, Running};
pub use id::{Event, FeedId, VenueId};
pub use trading::{Desk, KillSwitch, TradeSetup};

/// The directory, under the current one, in which the `tickwire-feed`
/// program makes one directory per run for the outputs a configuration
/// names by a relative path ([`FeedConfig::preflight`](config::FeedConfig::preflight)
/// checks them there).
pub const RUNS_ROOT: &str = "runs";

/// The README's Rust snippets, compiled (and run where they need no
/// network) as this crate's doctests, so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeSnippets;
pub use live::{ApiKey, BadUrl, SetupError, UrlProblem};
pub use live::{Connectivity, NeverConnected, VenueStatus};
pub use live::{Feed, FeedError, Fixed, NoHandler, OnEvent, Update};
// The types the feed hands a bot, so that they are one click from this
// crate's front page (a bot need not depend on tickwire-venues to name
// them).
pub use tickwire_venues::book::{Book, Level, Levels, Side};
pub use tickwire_venues::{Aggressor, InstrumentSpec, Kind, Venue};
// And those of order entry ([`FeedBuilder::trade`]).
pub use live::OrderEvent;
pub use tickwire_trade::{
    ClientOrderId, Credentials, OpenOrder, OpenOrders, OrderKind, Reject, State as SessionState,
    TimeInForce,
};
