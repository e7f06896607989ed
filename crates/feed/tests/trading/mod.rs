//! Trading on the feed: a venue's order-entry session on the feed's own
//! driver, the bot's desk from the handler, order events in the update
//! stream, the kill switch, the tick-to-trade and round-trip stages.
//!
//! - `bot.rs`: the bot both run.
//! - `script.rs`: the feed's part, against a scripted session and
//!   exchange (whatever a venue's session does).
//! - `setup.rs`: what a user gets for a trading setup that cannot run.
//! - `venues.rs`: end to end with each venue's own session (Deribit,
//!   Binance spot) against its simulator's private API.

mod bot;
mod script;
mod setup;
mod venues;
