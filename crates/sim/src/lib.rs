//! An exchange simulator: a TLS WebSocket and HTTP server on loopback that
//! speaks a venue's public market-data protocol, so a feed can be run,
//! tested and measured against every venue without the internet.
//!
//! - [`Simulator::start`] serves one [`Venue`] (its paths, subscriptions
//!   with the venue's success and error replies, application pings and what
//!   the venue does when they stop, book channels with its sequencing and
//!   checksum, trades, best bid/offer, REST snapshots where it has them).
//! - Instruments as each venue lists them: [`SimInstrument::listed`] is a
//!   venue's catalogue (the [`SimInstrument::pair`] first, then a few more,
//!   named and scaled as the venue writes them), [`Listing`] what its list
//!   says of each. A simulator lists exactly what it serves
//!   ([`SimConfig::instruments`], catalogued or a test's own), where the
//!   venue lists instruments: Binance `exchangeInfo`, OKX
//!   `public/instruments`, Bybit `instruments-info`, Kraken's `instrument`
//!   channel and REST `AssetPairs`, Coinbase's public products, Deribit
//!   `public/get_instruments`; and it refuses a symbol it does not list as
//!   the venue does (an error reply, or an acknowledgement and silence
//!   where that is the venue's way).
//! - One market model ([`SimInstrument`], a random-walk book per
//!   instrument) moves a step at a time; each venue module formats the same
//!   step its own way (`binance`, `okx`, `bybit`, `kraken`, `coinbase`,
//!   `deribit`). Same seed, same market.
//! - A matching engine under the venues' private APIs: accounts by API key
//!   ([`SimConfig::keys`]), limit orders resting in the simulated books by
//!   price and time (part of the public levels every client sees), crossing
//!   orders filling level by level with their trades printed, resting
//!   orders filled by the market's own trades after the crowd ahead of
//!   them. [`Simulator::open_orders`] says what is still working.
//! - Faults a venue can cause are injected on demand ([`VenueFault`]: a
//!   lost book message, a wrong checksum, a refused subscription, a book
//!   service restart); network faults are the proxy's
//!   (`tickwire-testkit`).
//! - [`SendStamps`]: just before a message is written, its TSC is filed
//!   under (instrument, stream kind, id), so a feed in the same process
//!   measures each message's wire latency end to end.
//!
//! The market moves only while at least one client is subscribed to
//! market data of some instrument (by a request, or by the URL it
//! connected to, from the upgrade on): until then, and while every client
//! has unsubscribed, it stands still as it does with no client at all. A
//! client that connects and never subscribes is still answered and kept
//! to the venue's rules (pings, heartbeats, its timers), but the market
//! does not wait on time for anyone: what is recorded as sent
//! ([`SimConfig::keep_sent`]) is only what was written to a client.
//!
//! A simulator is a server, not part of any receive path: it allocates per
//! message and blocks on writes. Every client gets every message it
//! subscribed to, in order, or is disconnected: a client that does not
//! keep up blocks the market for at most the write timeout, then is
//! dropped (as venues drop slow consumers).

#![deny(unsafe_code)]

mod binance;
mod bybit;
mod catalogue;
mod cert;
mod coinbase;
mod deribit;
mod exchange;
mod kraken;
mod limits;
mod market;
mod okx;
mod pacer;
mod protocol;
#[cfg(test)]
mod reflection;
#[cfg(test)]
mod refusals;
mod server;
mod stamps;
#[cfg(test)]
mod testutil;
mod time;

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use tickwire_net::server::ServerTls;
pub use tickwire_venues::Venue;

pub use binance::{WsApiLimits, pregenerate};
pub use catalogue::{Contract, Listing};
pub use cert::self_signed;
pub use deribit::{DeribitPrivate, OrderCredits};
pub use exchange::{KeySecret, SimKey, SimOrder, Status};
pub use market::{Levels, SimInstrument};
pub use okx::budget::RequestBudget;
pub use protocol::Frame;
pub use stamps::{SendStamps, StreamKind};

use server::Running;

/// What the simulator serves.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The venue it speaks.
    pub venue: Venue,
    /// Listen here (port 0: any free port).
    pub addr: SocketAddr,
    /// TLS certificate, or plain `ws://`/`http://` without.
    pub tls: Option<ServerTls>,
    /// The instruments this simulator serves, with symbols as the venue
    /// writes them: all it lists and all it streams. Pick them from the
    /// venue's catalogue ([`SimInstrument::listed`]) or make your own (an
    /// instrument outside the catalogue is listed too, its [`Listing`]
    /// read from its symbol); a subscription naming any other symbol is
    /// refused the venue's way.
    pub instruments: Vec<SimInstrument>,
    /// Market steps per second over all instruments (0: as fast as the
    /// clients take them).
    pub rate: u32,
    /// Steps generated back to back at each tick (rate stays the average).
    pub burst: u32,
    /// One step in this many also trades first.
    pub trade_every: u32,
    /// The random seed.
    pub seed: u64,
    /// Keep a copy of every trade and quote sent, for tests
    /// ([`Simulator::sent`]): a step's trade if a message carrying it was
    /// written to some client, its best bid/offer if a best bid/offer
    /// message of that step was (a message stamped
    /// [`StreamKind::BookTicker`]: Binance's `bookTicker` (its SBE
    /// streams' `bestBidAsk`), OKX's
    /// `bbo-tbt`, Bybit's `orderbook.1`, Kraken's `ticker`; Coinbase's
    /// and Deribit's quotes carry no stamp, and are not kept). Steps made
    /// before a client subscribed are not in it.
    pub keep_sent: bool,
    /// Pin the market thread (which spins between steps at high rates) to
    /// this core, away from the feed's.
    pub core: Option<usize>,
    /// Instead of stepping a market, send these messages to every client
    /// (ignoring subscriptions), and answer REST requests with its
    /// snapshots: a recording served back, or a market made ahead of time
    /// ([`pregenerate`]) sent as fast as a feed takes it.
    pub script: Option<Arc<Script>>,
    /// With a script: send only its first this many messages, then hold
    /// the rest as a venue gone quiet would (connections open, pings and
    /// requests answered, [`Simulator::finished`] false) until stopped. A
    /// test's way to have a run miss its deadline on any machine, however
    /// fast. `None`: the whole script.
    pub script_hold: Option<usize>,
    /// The REST request weight a minute the venue allows before it answers
    /// 429, then 418 to a client that does not wait (see
    /// [`SimStats::rest_throttled`]); `None`: the venue's own documented
    /// limit (Binance spot 6000, futures 2400).
    pub rest_weight_limit: Option<u32>,
    /// The WebSocket request budget the venue enforces: OKX's subscribe,
    /// unsubscribe and login requests a connection (480 an hour), or
    /// Coinbase's messages an address (8 a second); a client over it is
    /// closed ([`RequestBudget`]). The venue's documented one by default.
    /// A clone shares it: a test or the demo may lower it while the
    /// simulator runs ([`Simulator::request_budget`]), and count the
    /// clients closed for going over it. The other venues do not use it.
    pub request_budget: RequestBudget,
    /// Close every client this long after its upgrade (close code 1001),
    /// as a venue ends a connection's life: Binance's last 24 hours ("a
    /// single connection to stream.binance.com is only valid for 24
    /// hours; expect to be disconnected at the 24 hour mark", WebSocket
    /// Streams docs). `None`: connections live on.
    pub max_lifetime: Option<std::time::Duration>,
    /// How long after a [`VenueFault::ShutdownNotice`] the clients it
    /// reached are closed. The venues give more (OKX "60 seconds prior to
    /// the upgrade", older versions of its docs 30; Binance no fixed time
    /// since 2026-06-09): the default, 5 s, is shorter, so that tests and
    /// the demo see the close without waiting a minute.
    pub shutdown_lead: std::time::Duration,
    /// Every instrument's mid sweeps: a tick up every step for this many
    /// steps, then down as long (levels taken one by one from the side it
    /// moves into, a busy symbol's way through a book). `None`: a random
    /// walk.
    pub sweep: Option<u32>,
    /// The API keys it accepts, one account each (the index is the
    /// account; [`SimOrder::account`]). Venues check requests' signatures
    /// with them. Empty: no private API.
    pub keys: Vec<SimKey>,
    /// Deribit's private API: its tokens' lifetime and its order credits
    /// (the venue's own by default; a test shortens or lowers them).
    pub deribit: DeribitPrivate,
    /// Binance spot's WebSocket API rate limits (request weight a minute,
    /// orders per 10 s and a day): the venue's by default, small in tests
    /// of the refusals.
    pub ws_api_limits: WsApiLimits,
}

impl SimConfig {
    /// `venue` with its default pair of instruments ([`SimInstrument::pair`]).
    pub fn new(venue: Venue) -> SimConfig {
        SimConfig {
            venue,
            instruments: SimInstrument::pair(venue),
            ..SimConfig::default()
        }
    }
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            venue: Venue::BinanceSpot,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: None,
            instruments: vec![SimInstrument::btcusdt(), SimInstrument::ethusdt()],
            rate: 10_000,
            request_budget: RequestBudget::venue(),
            burst: 1,
            trade_every: 3,
            seed: 1,
            keep_sent: false,
            core: None,
            script: None,
            script_hold: None,
            rest_weight_limit: None,
            max_lifetime: None,
            shutdown_lead: std::time::Duration::from_secs(5),
            sweep: None,
            keys: Vec::new(),
            deribit: DeribitPrivate::default(),
            ws_api_limits: WsApiLimits::default(),
        }
    }
}

/// A message of a [`Script`]: its send-stamp key (instrument, kind, id)
/// if it has one, its wall time (ns, for pacing), and the message.
pub type ScriptMessage = (Option<(usize, StreamKind, u64)>, u64, Frame);

/// Messages to send as they are (see [`SimConfig::script`]).
#[derive(Debug, Default)]
pub struct Script {
    /// In order.
    pub messages: Vec<ScriptMessage>,
    /// REST answers by the request's `symbol=`.
    pub snapshots: HashMap<String, String>,
    /// The index of the first message not sent until every snapshot has
    /// been served (waited for up to 10 s), so a client's diff buffer need
    /// not hold more than the diffs before it. For a recording, where its
    /// feed had them all; `None`: just after the first book message of
    /// every instrument, told by the messages' stamp keys.
    pub snapshots_by: Option<usize>,
    /// At the messages' own pace (their wall times), or as fast as the
    /// clients take them.
    pub real_time: bool,
}

/// A fault a venue can cause, injected into an instrument's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VenueFault {
    /// The instrument's next book message is lost: its sequence skips one
    /// (Binance `U`, OKX `prevSeqId`, Bybit `u`, Deribit `prev_change_id`,
    /// Coinbase the connection's `sequence_num`; Kraken, which has none,
    /// finds it by its checksum).
    SequenceGap,
    /// The instrument's next book message carries a wrong checksum (OKX,
    /// Kraken; ignored elsewhere).
    BadChecksum,
    /// The next subscription of the instrument's book is refused with the
    /// venue's own error reply.
    RejectSubscription,
    /// The venue restarts its book service: the book is sent again as a
    /// snapshot with its update counter back at 1 (Bybit's `u=1`).
    Restart,
    /// The next subscription request of the instrument's book is ignored:
    /// no reply, no snapshot, no data (what a client sees when a venue
    /// drops a request, or answers a resubscription with nothing). Armed
    /// `n` times, the next `n` are.
    IgnoreSubscription,
    /// The venue's service is about to restart: every client connected
    /// now gets the venue's notice (Binance `serverShutdown`, OKX notice
    /// `64008`; venues without one: nothing) and is closed (1001)
    /// [`SimConfig::shutdown_lead`] later. Clients that connect after it
    /// are not. The instrument is not used.
    ShutdownNotice,
}

/// A trade or quote as the simulator sent it (see [`SimConfig::keep_sent`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sent {
    /// A trade: instrument index, id, price and size in the instrument's
    /// units, and whether the buyer was the aggressor.
    Trade {
        /// Index into [`SimConfig::instruments`].
        instrument: usize,
        /// Trade id.
        id: u64,
        /// Price in ticks.
        price: i64,
        /// Size in size units.
        size: i64,
        /// The buyer took liquidity.
        buyer_aggressor: bool,
    },
    /// A best bid/offer.
    Quote {
        /// Index into [`SimConfig::instruments`].
        instrument: usize,
        /// The book's update id.
        update_id: u64,
        /// Best bid price and size.
        bid: (i64, i64),
        /// Best ask price and size.
        ask: (i64, i64),
    },
}

/// What the simulator did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Market steps generated.
    pub steps: u64,
    /// WebSocket messages written (over all clients).
    pub messages: u64,
    /// Payload bytes written.
    pub bytes: u64,
    /// WebSocket clients accepted.
    pub clients: u64,
    /// Clients dropped for being too slow or failing.
    pub dropped_clients: u64,
    /// Clients that closed their connection with a close frame.
    pub closed_clients: u64,
    /// Clients the venue closed (a missed heartbeat, silence).
    pub kicked_clients: u64,
    /// REST requests answered 200.
    pub snapshots: u64,
    /// REST requests received.
    pub rest_requests: u64,
    /// Clients closed for sending more messages a second than the venue
    /// takes (counted among `kicked_clients` too).
    pub too_fast: u64,
    /// Clients closed at the end of their life (`max_lifetime`; counted
    /// among `kicked_clients` too).
    pub expired_clients: u64,
    /// REST requests answered 429: past the weight limit.
    pub rest_throttled: u64,
    /// REST requests answered 418: the client did not wait as a 429 told
    /// it to, and is banned (or still is).
    pub rest_banned: u64,
}

/// A running simulator; [`stop`](Simulator::stop) (or dropping it) closes
/// every client with 1001 and joins its threads.
pub struct Simulator {
    running: Arc<dyn Running>,
    venue: Venue,
    addr: SocketAddr,
    threads: Vec<JoinHandle<()>>,
    budget: RequestBudget,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("venue", &self.venue)
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// Binds and starts the acceptor and market threads.
    pub fn start(config: SimConfig) -> io::Result<Simulator> {
        fn run<P: protocol::Protocol>(
            config: SimConfig,
            protocol: P,
        ) -> io::Result<server::Started<dyn Running>> {
            let (shared, addr, threads) = server::start(config, protocol)?;
            Ok((shared, addr, threads))
        }
        let venue = config.venue;
        let budget = config.request_budget.clone();
        let (running, addr, threads) = match venue {
            Venue::BinanceSpot
            | Venue::BinanceSpotSbe
            | Venue::BinanceUsdM
            | Venue::BinanceCoinM => {
                let limits = config.ws_api_limits;
                run(config, binance::Binance::with_limits(venue, limits))?
            }
            Venue::Okx => run(config, okx::Okx::new().with_budget(budget.clone()))?,
            Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => {
                run(config, bybit::Bybit::new(venue))?
            }
            Venue::Kraken => run(config, kraken::Kraken::new())?,
            Venue::Coinbase => run(
                config,
                coinbase::Coinbase::new().with_budget(budget.clone()),
            )?,
            Venue::Deribit => {
                let private = config.deribit;
                run(config, deribit::Deribit::with(private))?
            }
        };
        Ok(Simulator {
            running,
            venue,
            addr,
            threads,
            budget,
        })
    }

    /// The request budget it enforces ([`SimConfig::request_budget`]):
    /// lower it for a while, count the clients closed for going over it.
    pub fn request_budget(&self) -> &RequestBudget {
        &self.budget
    }

    /// The venue it speaks.
    pub fn venue(&self) -> Venue {
        self.venue
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The send-stamp side channel.
    pub fn stamps(&self) -> Arc<SendStamps> {
        self.running.stamps()
    }

    /// Sends `text` as is to every client, between two market steps (for
    /// tests of bad input). Returns how many clients it went to.
    pub fn inject(&self, text: &str) -> usize {
        self.running.inject(text)
    }

    /// Arms `fault` on instrument `n` (its index in the configuration);
    /// false if there is no such instrument.
    pub fn fault(&self, n: usize, fault: VenueFault) -> bool {
        self.running.fault(n, fault)
    }

    /// With a script: whether all of it has been sent.
    pub fn finished(&self) -> bool {
        self.running.finished()
    }

    /// Counts so far.
    pub fn stats(&self) -> SimStats {
        self.running.stats()
    }

    /// Stops (or resumes) moving the market; clients stay connected and
    /// are answered. Once `pause(true)` returns, no step (or script
    /// message) is being sent and none starts until resumed: everything
    /// [`sent`](Simulator::sent) holds has been written to the sockets.
    /// (Orders still trade while it is paused: what a request changes in
    /// a book still goes out to every client.)
    pub fn pause(&self, paused: bool) {
        self.running.pause(paused);
    }

    /// Every trade and quote sent so far, if [`SimConfig::keep_sent`]:
    /// what was written to at least one client, in the order of the
    /// market's steps.
    pub fn sent(&self) -> Vec<Sent> {
        self.running.sent()
    }

    /// Instrument `n`'s book now: its last update id, bids best first, asks
    /// best first (at most `depth` levels a side).
    pub fn book(&self, n: usize, depth: usize) -> Option<(u64, Levels, Levels)> {
        self.running.book(n, depth)
    }

    /// Every account's working orders, oldest first: how a test or the
    /// demo asks the simulator whether anything is left open.
    pub fn open_orders(&self) -> Vec<SimOrder> {
        self.running.open_orders()
    }

    /// Stops the market, closes every client with 1001, joins the threads.
    pub fn stop(mut self) -> SimStats {
        self.shutdown();
        self.stats()
    }

    fn shutdown(&mut self) {
        self.running.stop();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.running.close_clients();
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown();
        }
    }
}
