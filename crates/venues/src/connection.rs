//! One connection's plan and the rules every venue's plan shares: where to
//! connect, what to send, how to keep it, and what an instrument may not
//! ask for. Each venue's own rules are its `plan` module
//! (`crate::binance::plan`, ...); [`crate::plan`] gathers them.

use std::fmt;
use std::time::Duration;

use crate::event::InstrumentSpec;

/// What to receive for each instrument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channels {
    /// Trades (Binance: `@trade`; with `aggregate`, `@aggTrade`).
    pub trades: bool,
    /// Binance: aggregate trades instead of trades.
    pub aggregate: bool,
    /// Best bid and offer (Binance `@bookTicker`, OKX `bbo-tbt`, Kraken
    /// `ticker`). Not offered for Bybit, Coinbase and Deribit here.
    pub quotes: bool,
    /// The order book (each instrument's `depth` in its spec is the depth
    /// subscribed where the venue asks for one).
    pub books: bool,
}

impl Default for Channels {
    fn default() -> Channels {
        Channels {
            trades: true,
            aggregate: false,
            quotes: true,
            books: true,
        }
    }
}

/// An application-level keep-alive the venue expects from the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppPing {
    /// The text frame to send.
    pub text: String,
    /// How often, at the latest.
    pub every: Duration,
}

/// One connection: where, what to send once connected, how to keep it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionPlan {
    /// Host name (TLS server name too).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Request path of the WebSocket upgrade.
    pub path: String,
    /// Text frames to send after the handshake, in order.
    pub subscribe: Vec<String>,
    /// The least time between two of those frames (the venue's incoming
    /// message-rate limit, with a margin).
    pub pace: Duration,
    /// Application ping, where the venue needs one (WebSocket pings from
    /// the server are answered by tickwire-net on their own).
    pub ping: Option<AppPing>,
    /// Longer than this without any message means the connection is dead
    /// (the venue's heartbeat or ping interval, with a margin): reconnect.
    pub max_silence: Duration,
    /// The venue closes connections after this long (the feed opens a
    /// replacement before then, make-before-break).
    pub max_lifetime: Option<Duration>,
    /// Indices (into the instruments given) carried by this connection.
    pub instruments: Vec<usize>,
    /// The largest message the venue may send on this connection (its
    /// book snapshots, mostly): the receive buffer to set aside for it.
    pub max_message: usize,
    /// The upgrade request's header that must carry the user's API key,
    /// where the venue's streams need one (Binance SBE: `X-MBX-APIKEY`).
    /// The key itself is never in a plan (plans are printed): the feed
    /// adds it when it connects.
    pub api_key_header: Option<&'static str>,
}

/// A message size no venue's ordinary messages reach: the default receive
/// buffer's message limit.
pub const DEFAULT_MAX_MESSAGE: usize = 1 << 20;

/// An instrument the venue's plan cannot carry.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// A symbol with characters no venue uses (it would have to be escaped
    /// in the subscription, and no venue sends such symbols back).
    Symbol(String),
    /// A book depth the venue does not offer.
    Depth {
        /// The symbol.
        symbol: String,
        /// The depth asked for.
        depth: usize,
        /// The depths the venue offers.
        offered: &'static [usize],
    },
    /// A book depth deeper than the venue's snapshots or windows let a book
    /// keep exact.
    TooDeep {
        /// The symbol.
        symbol: String,
        /// The depth asked for.
        depth: usize,
        /// The most the venue allows.
        max: usize,
    },
    /// Two instruments whose data the venue sends as one product's, under
    /// one id (Coinbase answers `BTC-USDC` as `BTC-USD`): configure one.
    SameProduct {
        /// The symbol configured second.
        symbol: String,
        /// The symbol configured first.
        other: String,
        /// The id both are answered under.
        wire: String,
    },
    /// A channel the venue does not offer (what, and what it offers).
    Channel(&'static str),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Symbol(s) => write!(
                f,
                "symbol {s:?}: only letters, digits and . _ - / are allowed"
            ),
            PlanError::Depth {
                symbol,
                depth,
                offered,
            } => write!(
                f,
                "symbol {symbol:?}: book depth {depth} is not offered (choose one of {offered:?})"
            ),
            PlanError::TooDeep { symbol, depth, max } => write!(
                f,
                "symbol {symbol:?}: book depth {depth} cannot be kept exact here (at most {max})"
            ),
            PlanError::SameProduct {
                symbol,
                other,
                wire,
            } => write!(
                f,
                "symbols {other:?} and {symbol:?}: the venue sends both as {wire:?}, \
                 one product's data (keep one of them)"
            ),
            PlanError::Channel(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for PlanError {}

pub(crate) fn check_symbols(instruments: &[InstrumentSpec]) -> Result<(), PlanError> {
    for i in instruments {
        let ok = !i.symbol.is_empty()
            && i.symbol
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'));
        if !ok {
            return Err(PlanError::Symbol(i.symbol.clone()));
        }
    }
    Ok(())
}

/// The smallest of the venue's `offered` window depths (ascending) that
/// holds `depth` levels (and at least `least`), or why there is none.
pub(crate) fn window_for(
    i: &InstrumentSpec,
    least: usize,
    offered: &'static [usize],
) -> Result<usize, PlanError> {
    let want = i.depth.max(least);
    offered
        .iter()
        .copied()
        .find(|&d| d >= want)
        .ok_or_else(|| PlanError::TooDeep {
            symbol: i.symbol.clone(),
            depth: i.depth,
            max: offered.last().copied().unwrap_or(0),
        })
}

/// No deeper than `max`.
pub(crate) fn check_depth(i: &InstrumentSpec, max: usize) -> Result<(), PlanError> {
    if i.depth <= max {
        Ok(())
    } else {
        Err(PlanError::TooDeep {
            symbol: i.symbol.clone(),
            depth: i.depth,
            max,
        })
    }
}

/// A JSON array of strings (the symbols are checked to need no escaping).
pub(crate) fn json_strings<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::from("[");
    for (n, s) in items.into_iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
    out.push(']');
    out
}

/// Splits `streams` (each tagged with its instrument index) into
/// connections of at most `per_connection` streams, never splitting one
/// instrument's streams across two connections.
pub(crate) fn split(
    streams: Vec<(usize, String)>,
    per_connection: usize,
) -> Vec<(Vec<usize>, Vec<String>)> {
    let mut out: Vec<(Vec<usize>, Vec<String>)> = Vec::new();
    let mut i = 0;
    while i < streams.len() {
        let instrument = streams[i].0;
        let j = streams[i..]
            .iter()
            .position(|(k, _)| *k != instrument)
            .map_or(streams.len(), |n| i + n);
        let group = &streams[i..j];
        let fits = out
            .last()
            .is_some_and(|(_, s)| s.len() + group.len() <= per_connection);
        if !fits {
            out.push((Vec::new(), Vec::new()));
        }
        let (instruments, names) = out.last_mut().expect("pushed");
        instruments.push(instrument);
        names.extend(group.iter().map(|(_, s)| s.clone()));
        i = j;
    }
    out
}
