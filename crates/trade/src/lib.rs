//! Order entry on the same footing as market data: no async, no
//! allocation once warm, time as an argument.
//!
//! A venue's order-entry connection is a [`Session`]: a sans-IO state
//! machine that logs in, reconciles the venue's open orders after every
//! (re)connect before it takes an order, writes requests into a caller's
//! [`Out`] buffer, and decodes answers and private-channel news into
//! [`OrderEvent`]s. The caller (the feed, `tickwire-feed`) owns the
//! socket and the clock. The vocabulary (`order`) is the same for every
//! venue; each venue's module cites the documentation it follows.
//!
//! - `order.rs`: [`Request`], [`OrderEvent`], [`Reject`], client ids.
//! - `session.rs`: the [`Session`] trait, [`State`], [`Now`].
//! - `out.rs`: [`Out`], messages written in place.
//! - `orders.rs`: [`OpenOrders`], the working orders by client id.
//! - `pending.rs`: [`Pending`], requests in flight by request id.
//! - `credentials.rs`: [`Credentials`] from the environment or an
//!   owner-only file, and the venues' signatures; never printed.
//! - `binance/`: [`BinanceSession`], Binance spot's WebSocket API.

pub mod binance;
pub mod credentials;
pub mod deribit;
pub mod order;
pub mod orders;
pub mod out;
pub mod pending;
pub mod session;

pub use binance::BinanceSession;
pub use credentials::{Credentials, CredentialsError};
pub use deribit::DeribitSession;
pub use order::{
    ClientOrderId, Limit, OrderEvent, OrderKind, Reject, Request, Side, TimeInForce, VenueOrderId,
};
pub use orders::{OpenOrder, OpenOrders};
pub use out::{Message, Out, OutFull};
pub use pending::{Asked, InFlight, Pending};
pub use session::{Now, Session, SessionConfig, State};
