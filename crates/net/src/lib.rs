//! An async-free WebSocket engine for market-data clients: many connections
//! per thread on one mio `Poll`, every buffer allocated at start-up.
//!
//! - [`Driver`] owns the poll and a slab of connection slots sized by
//!   [`Config`]. Call [`Driver::poll_once`] in a loop: blocking, or spinning
//!   on a pinned core ([`PollMode`]: `BusyPoll` spins on epoll, `BusyRead`
//!   on the open sockets themselves); it reads every ready socket until it
//!   is drained, decodes frames with `tickwire-codec`, and calls your
//!   [`Handler`] with borrowed, mutable payloads and TSC [`Stamps`].
//! - Connections are `ws://` or `wss://` ([`Endpoint`]); TLS is rustls 0.23
//!   with certificate and host-name verification always on ([`TlsConfig`]).
//! - Protocol chores are automatic: pongs, the close handshake, pings every
//!   `ping_interval` with a pong deadline, a stale-data timeout, and
//!   reconnects with exponential backoff and jitter. Subscriptions sent from
//!   [`Handler::on_open`] are paced by `send_rate`, so a reconnect storm
//!   never floods a venue.
//! - A minimal server role ([`Driver::listen`]) accepts plain WebSocket
//!   clients into the same slots, for tests, benchmarks and simulators;
//!   [`server`] is a blocking TLS (or plain) WebSocket and HTTP server, one
//!   thread per client, for exchange simulators.
//!
//! Name resolution runs on a helper thread so that a slow DNS answer never
//! stalls the other connections. Nothing here panics on input from the
//! wire: every failure is a typed [`Disconnect`].
//!
//! ```no_run
//! use tickwire_net::{Config, Conn, Driver, Endpoint, Handler, Payload, Stamps, TlsConfig};
//!
//! struct Print;
//! impl Handler for Print {
//!     fn on_open(&mut self, conn: &mut Conn<'_>) {
//!         conn.send_text(r#"{"method":"SUBSCRIBE","params":["btcusdt@trade"],"id":1}"#)
//!             .expect("queued");
//!     }
//!     fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
//!         println!("{}", String::from_utf8_lossy(payload.as_bytes()));
//!     }
//! }
//!
//! let mut driver = Driver::new(Config::default(), &TlsConfig::webpki_roots(), Print)?;
//! driver.connect(Endpoint::parse("wss://stream.binance.com:9443/ws")?)?;
//! loop {
//!     driver.poll_once()?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod actions;
mod config;
mod driver;
mod error;
mod event;
mod fetch;
mod id;
#[cfg(any(fuzzing, feature = "internals"))]
#[doc(hidden)]
pub mod internals;
mod outgoing;
mod payload;
mod receive;
mod region;
mod resolve;
pub mod server;
mod socket;
mod tls;

pub use config::{
    Backoff, Config, Endpoint, MAX_HEADERS, MAX_PROTOCOLS, PollMode, SlotSize, UrlError,
};
pub use driver::{Driver, SetupError};
pub use error::{DriverError, SendError};
pub use event::{Disconnect, Excerpt, Handler, Reconnect, ResponseHead, Stamps, Timeout, TlsInfo};
pub use fetch::FetchError;
pub use id::ConnId;
pub use outgoing::Conn;
pub use payload::{PAYLOAD_PADDING, Payload};
pub use resolve::ResolveError;
pub use tickwire_codec::{CloseCode, ProtocolError, Role, handshake::HandshakeError};
pub use tls::{TlsConfig, TlsConfigError, TlsError, TlsErrorKind};
