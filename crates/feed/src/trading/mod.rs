//! Trading on the feed's own driver: a venue's order-entry session
//! ([`tickwire_trade::Session`]) on one more connection of the feed, the
//! bot's handle on it ([`Desk`], from `Update::desk`),
//! its order events in the same update stream
//! (`Update::orders`), and the kill switch
//! ([`KillSwitch`]).
//!
//! - `desk.rs`: [`Desk`], what a handler places, amends and cancels with:
//!   requests into a queue allocated once, answered at once with the
//!   client id or a typed refusal; the feed submits them to the session
//!   and sends their messages right after the handler returns.
//! - `host.rs`: a venue's session as the feed keeps it (its buffers, its
//!   connection, what the kill switch owes), and the tables of them.
//! - `kill.rs`: [`KillSwitch`], when every order is cancelled.
//! - `redact.rs`: secrets blanked out of the trading connection's
//!   messages before a recording keeps them.
//!
//! The trading connection is not paced like subscriptions: an order
//! leaves at once, and the session's own rate limiter keeps the venue's
//! limits (a request over them is refused before it leaves, as
//! [`Reject::RateLimited`](tickwire_trade::Reject::RateLimited)). It
//! reconnects with the driver's backoff; after every (re)connect the
//! session reconciles the venue's open orders before it takes one
//! (until then the desk refuses with
//! [`Reject::NotReady`](tickwire_trade::Reject::NotReady)). A session the
//! venue refused (credentials wrong) is said once, with the venue's code,
//! and its connection is not opened again.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tickwire_trade::{Credentials, Session, SessionConfig};
use tickwire_venues::{InstrumentSpec, Venue};

mod desk;
mod host;
mod kill;
mod redact;

pub use self::desk::Desk;
pub(crate) use self::host::{Trader, Trading};
pub use self::kill::KillSwitch;
pub(crate) use self::redact::redact;

/// How a venue is traded on a feed
/// (`FeedBuilder::trade`): credentials, the
/// client order ids' prefix, the kill switch, and where to connect.
#[non_exhaustive]
pub struct TradeSetup {
    /// The API key and its secret (never printed, logged or recorded).
    pub credentials: Option<Credentials>,
    /// The client order ids' prefix: letters and digits, at most 12,
    /// unique to this bot ([`SessionConfig::prefix`]).
    pub prefix: String,
    /// When every order is cancelled.
    pub kill: KillSwitch,
    /// Connect here instead of the venue's own order-entry host
    /// (`wss://host:port`, the venue's path kept; or a whole URL with its
    /// path), e.g. a simulator. Without it, a venue whose market data has
    /// an endpoint override trades there too (a simulator serves both).
    pub endpoint: Option<String>,
    /// The most orders working at once the session keeps track of.
    pub max_open_orders: usize,
    /// Deribit's session: how it logs in, its client-side credit limits.
    pub deribit: tickwire_trade::deribit::DeribitOptions,
    /// A session of one's own (a venue not built in, a test's script),
    /// instead of the venue's.
    pub(crate) session: Option<Box<dyn Session>>,
}

impl TradeSetup {
    /// The venue's own session with `credentials`, its client ids under
    /// `prefix`; the kill switch on for every cause
    /// ([`KillSwitch::default`]).
    pub fn new(credentials: Credentials, prefix: &str) -> TradeSetup {
        TradeSetup {
            credentials: Some(credentials),
            prefix: prefix.to_owned(),
            kill: KillSwitch::default(),
            endpoint: None,
            max_open_orders: 64,
            deribit: Default::default(),
            session: None,
        }
    }

    /// `session` (one's own) on the connection to `endpoint` (a whole
    /// URL): a venue whose order entry is not built in, or a test's.
    pub fn with_session(session: Box<dyn Session>, endpoint: &str) -> TradeSetup {
        TradeSetup {
            credentials: None,
            prefix: String::new(),
            kill: KillSwitch::default(),
            endpoint: Some(endpoint.to_owned()),
            max_open_orders: 64,
            deribit: Default::default(),
            session: Some(session),
        }
    }

    /// This setup, trading at `endpoint` instead.
    pub fn endpoint(mut self, endpoint: &str) -> TradeSetup {
        self.endpoint = Some(endpoint.to_owned());
        self
    }

    /// This setup with the kill switch `kill`.
    pub fn kill(mut self, kill: KillSwitch) -> TradeSetup {
        self.kill = kill;
        self
    }
}

impl fmt::Debug for TradeSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The credentials' own Debug never shows the secret; the key id
        // is left out here too.
        f.debug_struct("TradeSetup")
            .field("credentials", &self.credentials.is_some())
            .field("prefix", &self.prefix)
            .field("kill", &self.kill)
            .field("endpoint", &self.endpoint)
            .field("max_open_orders", &self.max_open_orders)
            .field("own_session", &self.session.is_some())
            .finish()
    }
}

/// The venue's order-entry URL: `(default, path)`.
///
/// - Deribit: JSON-RPC over WebSocket on the same endpoint as its market
///   data, `wss://www.deribit.com/ws/api/v2` (<https://docs.deribit.com/>,
///   "API Interfaces: JSON-RPC over WebSocket"; the default of the open
///   clients, e.g. `wrytes/deribit-api-client`).
/// - Binance spot: "The base endpoint is:
///   `wss://ws-api.binance.com:443/ws-api/v3`" (<https://developers.binance.com/docs/binance-spot-api-docs/web-socket-api/general-api-information>);
///   "A single connection to the API is only valid for 24 hours": its end
///   is a lost session like any other (reconnected, reconciled).
fn venue_url(venue: Venue) -> Option<(&'static str, &'static str)> {
    match venue {
        Venue::Deribit => Some(("wss://www.deribit.com/ws/api/v2", "/ws/api/v2")),
        Venue::BinanceSpot => Some(("wss://ws-api.binance.com:443/ws-api/v3", "/ws-api/v3")),
        _ => None,
    }
}

/// Where the trading connection of `venue` goes: `own` (the setup's
/// override) or the market data's override (`market`), each a whole URL
/// when it has a path, else its host with the venue's path; else the
/// venue's own host. `None`: no order entry is known for the venue and
/// no URL was given.
pub(crate) fn trade_url(venue: Venue, own: Option<&str>, market: Option<&str>) -> Option<String> {
    let known = venue_url(venue);
    let Some(base) = own.or(market) else {
        return known.map(|(url, _)| url.to_owned());
    };
    let has_path = base
        .split_once("://")
        .is_some_and(|(_, rest)| rest.trim_end_matches('/').contains('/'));
    match known {
        Some((_, path)) if !has_path => Some(format!("{}{path}", base.trim_end_matches('/'))),
        _ => Some(base.to_owned()),
    }
}

/// The venue's own session for `setup`, or why there is none.
pub(crate) fn venue_session(
    venue: Venue,
    setup: &mut TradeSetup,
    instruments: &[InstrumentSpec],
) -> Result<Box<dyn Session>, String> {
    if let Some(own) = setup.session.take() {
        return Ok(own);
    }
    let config = SessionConfig {
        instruments: instruments.to_vec(),
        prefix: setup.prefix.clone(),
        cancel_on_disconnect: setup.kill.on_session_loss,
        max_open_orders: setup.max_open_orders,
    };
    let valid_prefix = !config.prefix.is_empty()
        && config.prefix.len() <= 12
        && config.prefix.bytes().all(|b| b.is_ascii_alphanumeric());
    if !valid_prefix {
        return Err(format!(
            "the client order id prefix {:?} is not 1 to 12 letters and digits",
            config.prefix
        ));
    }
    let Some(credentials) = setup.credentials.take() else {
        return Err("no credentials".into());
    };
    match venue {
        Venue::Deribit => tickwire_trade::DeribitSession::new(config, credentials, setup.deribit)
            .map(|s| Box::new(s) as Box<dyn Session>)
            .map_err(|e| e.to_string()),
        Venue::BinanceSpot => tickwire_trade::BinanceSession::new(config, credentials)
            .map(|s| Box::new(s) as Box<dyn Session>)
            .map_err(|e| e.to_string()),
        _ => Err(format!(
            "order entry for {venue} is not built in (it is for deribit and binance-spot)"
        )),
    }
}

/// The first client order id of a session: the wall clock's ms times 1000,
/// so ids never repeat across restarts of a bot (reconciliation would
/// find an earlier run's order under a reused id: a duplicate).
pub(crate) fn first_cid() -> u64 {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    ms.saturating_mul(1000)
}

/// How long the kill switch waits at shutdown for the venue to answer the
/// cancel-all, by default.
pub(crate) const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trading_urls_keep_the_venues_paths() {
        assert_eq!(
            trade_url(Venue::Deribit, None, None).as_deref(),
            Some("wss://www.deribit.com/ws/api/v2")
        );
        assert_eq!(
            trade_url(Venue::Deribit, None, Some("wss://localhost:9000")).as_deref(),
            Some("wss://localhost:9000/ws/api/v2")
        );
        assert_eq!(
            trade_url(Venue::BinanceSpot, Some("wss://localhost:9/"), None).as_deref(),
            Some("wss://localhost:9/ws-api/v3")
        );
        assert_eq!(
            trade_url(Venue::Okx, Some("ws://127.0.0.1:5/x"), None).as_deref(),
            Some("ws://127.0.0.1:5/x")
        );
        assert_eq!(trade_url(Venue::Okx, None, None), None);
    }
}
