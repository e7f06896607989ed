//! What a simulated venue is: the one trait each venue module implements
//! over the shared market, and the state the server keeps for it.

use std::time::{Duration, Instant};

use tickwire_net::CloseCode;

use rand::rngs::StdRng;

use crate::exchange::{
    Account, EngineReject, Exchange, KeySecret, NewOrder, PrivateEvent, SimKey, SimOrder,
};
use crate::market::{Book, SimInstrument, Step, StepFaults};
use crate::stamps::StreamKind;
use crate::{Sent, VenueFault};

/// The market a venue serves, as its protocol sees it: the instruments,
/// their books, the faults waiting for their next step, and the
/// subscriptions to refuse.
pub(crate) struct Market {
    pub(crate) instruments: Vec<SimInstrument>,
    pub(crate) books: Vec<Book>,
    /// Faults the next step of each instrument carries.
    pub(crate) pending: Vec<StepFaults>,
    /// Refuse the next subscription of each instrument's book.
    reject: Vec<bool>,
    /// How many of the next subscription requests naming each instrument
    /// to ignore.
    ignore: Vec<u32>,
    /// Shutdown notices given so far ([`VenueFault::ShutdownNotice`]): a
    /// client that has seen fewer gets one.
    pub(crate) shutdowns: u32,
    /// Trades and quotes sent, when kept.
    pub(crate) sent: Option<Vec<Sent>>,
    /// The matching engine: keys, working orders, and the steps and
    /// private events its changes owe the clients.
    pub(crate) exchange: Exchange,
}

impl Market {
    pub(crate) fn new(
        instruments: Vec<SimInstrument>,
        books: Vec<Book>,
        keep_sent: bool,
    ) -> Market {
        let n = instruments.len();
        Market {
            instruments,
            books,
            pending: vec![StepFaults::default(); n],
            reject: vec![false; n],
            ignore: vec![0; n],
            shutdowns: 0,
            sent: keep_sent.then(Vec::new),
            exchange: Exchange::new(Vec::new(), n, 0),
        }
    }

    /// The instrument the venue calls `symbol` (as the venue writes it,
    /// case and all).
    pub(crate) fn find(&self, symbol: &str) -> Option<usize> {
        self.instruments.iter().position(|i| i.symbol == symbol)
    }

    /// Whether the next subscription of instrument `n`'s book must be
    /// refused; the refusal is used up.
    pub(crate) fn take_reject(&mut self, n: usize) -> bool {
        self.reject
            .get_mut(n)
            .is_some_and(|r| std::mem::replace(r, false))
    }

    /// Whether the client's request `text` is to be ignored: a
    /// subscription (not an unsubscription) of a book channel naming an
    /// instrument whose [`VenueFault::IgnoreSubscription`] is armed; one of
    /// those armed is used up. Read from the text alone, the same for
    /// every venue: each names its book channel with `book` (OKX `books`,
    /// Bybit `orderbook.N`, Kraken and Deribit `book`), `level2`
    /// (Coinbase) or `depth` (Binance), and writes the symbol whole,
    /// between quotes or a topic's dots (`"BTC-USDT"`,
    /// `"orderbook.50.BTCUSDT"`, `"book.BTC-PERPETUAL.100ms"`).
    /// Letter case aside: Binance writes `SUBSCRIBE` and its symbols in
    /// lower case (`btcusdt@depth@100ms`). A stream named in the URL is
    /// subscribed by no request, and cannot be ignored.
    pub(crate) fn take_ignored(&mut self, text: &str) -> bool {
        if self.ignore.iter().all(|&n| n == 0) {
            return false;
        }
        let text = text.to_ascii_lowercase();
        if !text.contains("subscribe")
            || text.contains("unsubscribe")
            || !["book", "level2", "depth"].iter().any(|c| text.contains(c))
        {
            return false;
        }
        let named = |symbol: &str| {
            text.match_indices(symbol).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + symbol.len()..].chars().next();
                let apart = |c: Option<char>| {
                    c.is_none_or(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '/' | '_')))
                };
                apart(before) && apart(after)
            })
        };
        for (n, ignore) in self.ignore.iter_mut().enumerate() {
            if *ignore > 0 && named(&self.instruments[n].symbol.to_ascii_lowercase()) {
                *ignore -= 1;
                return true;
            }
        }
        false
    }

    /// One market step of instrument `n` (a trade first if `trade`) into
    /// `out`: the faults armed for it taken, its step counter's epoch moved
    /// on a restart. The server's step, and the tests'.
    pub(crate) fn step(&mut self, n: usize, rng: &mut StdRng, trade: bool, out: &mut Step) {
        let book = &mut self.books[n];
        self.exchange
            .step(n, &self.instruments[n], book, rng, trade, out);
        out.faults = std::mem::take(&mut self.pending[n]);
        if out.faults.restart {
            book.epoch = book.version - 1;
        }
    }

    /// Keeps (if kept) the step's trade and its best bid/offer, each if
    /// some client was written a message carrying it ([`Delivered`]).
    pub(crate) fn record(&mut self, s: &Step, delivered: Delivered) {
        let Some(sent) = self.sent.as_mut() else {
            return;
        };
        if let Some(t) = s.trade.filter(|_| delivered.trade) {
            sent.push(Sent::Trade {
                instrument: s.instrument,
                id: t.id,
                price: t.price,
                size: t.size,
                buyer_aggressor: t.buyer_aggressor,
            });
        }
        if let Some((bid, ask)) = s.top.filter(|_| delivered.quote) {
            sent.push(Sent::Quote {
                instrument: s.instrument,
                update_id: s.last_id,
                bid,
                ask,
            });
        }
    }

    /// Arms `fault` for instrument `n`.
    pub(crate) fn arm(&mut self, n: usize, fault: VenueFault) {
        let Some(p) = self.pending.get_mut(n) else {
            return;
        };
        match fault {
            VenueFault::SequenceGap => p.drop_book = true,
            VenueFault::BadChecksum => p.bad_checksum = true,
            VenueFault::Restart => p.restart = true,
            VenueFault::RejectSubscription => self.reject[n] = true,
            VenueFault::IgnoreSubscription => self.ignore[n] += 1,
            VenueFault::ShutdownNotice => self.shutdowns += 1,
        }
    }
}

// The matching engine, as the venue modules' private APIs reach it (with
// the market locked).
impl Market {
    /// The market with these accounts' keys; `seed` draws the engine's id
    /// gaps.
    pub(crate) fn with_keys(mut self, keys: Vec<SimKey>, seed: u64) -> Market {
        self.exchange = Exchange::new(keys, self.instruments.len(), seed);
        self
    }

    /// Places an order (see [`crate::exchange`]'s rules): its state after,
    /// or why it was refused. `now_ms`: wall time, ms since the Unix epoch.
    pub(crate) fn place(&mut self, o: NewOrder, now_ms: u64) -> Result<SimOrder, EngineReject> {
        self.exchange.place(&mut self.books, o, now_ms)
    }

    /// Cancels the account's working order `order_id`.
    pub(crate) fn cancel(
        &mut self,
        account: Account,
        order_id: u64,
        now_ms: u64,
    ) -> Result<SimOrder, EngineReject> {
        self.exchange
            .cancel(&mut self.books, account, order_id, now_ms)
    }

    /// The account's working order `order_id` at a new price and total
    /// size (a size-down at the same price keeps its queue place).
    pub(crate) fn amend(
        &mut self,
        account: Account,
        order_id: u64,
        price: i64,
        size: i64,
        now_ms: u64,
    ) -> Result<SimOrder, EngineReject> {
        self.exchange
            .amend(&mut self.books, account, order_id, price, size, now_ms)
    }

    /// Cancels the account's working orders (of `instrument`, or all):
    /// how many were.
    pub(crate) fn cancel_all(
        &mut self,
        account: Account,
        instrument: Option<usize>,
        now_ms: u64,
    ) -> usize {
        self.exchange
            .cancel_all(&mut self.books, account, instrument, now_ms)
    }

    /// The account's working orders (of `instrument`, or all), oldest
    /// first.
    pub(crate) fn open_orders(
        &self,
        account: Account,
        instrument: Option<usize>,
    ) -> impl Iterator<Item = &SimOrder> {
        self.exchange.open_orders(account, instrument)
    }

    /// The account of API key `key`, and what its signatures are checked
    /// with.
    pub(crate) fn key(&self, key: &str) -> Option<(Account, &KeySecret)> {
        self.exchange.key(key)
    }

    /// What the engine's changes owe the clients since last taken: the
    /// steps every client is written (before any further random step),
    /// and the private events.
    pub(crate) fn take_engine(&mut self) -> (Vec<Step>, Vec<PrivateEvent>) {
        (
            std::mem::take(&mut self.exchange.steps),
            std::mem::take(&mut self.exchange.events),
        )
    }
}

/// What of one market step went out to a client: read from the stamp keys
/// of the messages its protocol queued for the step (a trade message is
/// stamped under its trade id, a best bid/offer under
/// [`StreamKind::BookTicker`]), so the record of what was sent follows what
/// the venue wrote, whatever its subscriptions, tiers and faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Delivered {
    /// A message carrying the step's trade.
    pub(crate) trade: bool,
    /// A best bid/offer message of the step.
    pub(crate) quote: bool,
}

impl Delivered {
    /// What `items`, queued for step `s`, carry of it (text or binary:
    /// only their keys are read).
    pub(crate) fn of(s: &Step, items: &[(Frame, Option<StampKey>)]) -> Delivered {
        let trade = s.trade.map(|t| t.id);
        let mut d = Delivered::default();
        for (_, key) in items {
            match *key {
                Some((n, StreamKind::Trade, id)) if n == s.instrument && Some(id) == trade => {
                    d.trade = true;
                }
                Some((n, StreamKind::BookTicker, _)) if n == s.instrument => d.quote = true,
                _ => {}
            }
        }
        d
    }

    /// Either went out.
    pub(crate) fn or(self, other: Delivered) -> Delivered {
        Delivered {
            trade: self.trade || other.trade,
            quote: self.quote || other.quote,
        }
    }
}

/// Where a message's send stamp is filed: (instrument, kind, id).
pub(crate) type StampKey = (usize, StreamKind, u64);

/// One WebSocket message for a client: a text frame (every venue's
/// replies and notices, and most venues' market data, all JSON) or a
/// binary frame (Binance's SBE market data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A text frame: JSON.
    Text(String),
    /// A binary frame: an SBE message.
    Binary(Vec<u8>),
}

impl Frame {
    /// The payload's length in bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            Frame::Text(t) => t.len(),
            Frame::Binary(b) => b.len(),
        }
    }

    /// The text of a message a test expects to be text (a binary one
    /// fails the test).
    #[cfg(test)]
    #[track_caller]
    pub(crate) fn text(&self) -> &str {
        match self {
            Frame::Text(t) => t,
            Frame::Binary(b) => panic!("a binary message ({} bytes), not text", b.len()),
        }
    }

    /// [`text`](Frame::text), owned.
    #[cfg(test)]
    #[track_caller]
    pub(crate) fn into_text(self) -> String {
        match self {
            Frame::Text(t) => t,
            Frame::Binary(b) => panic!("a binary message ({} bytes), not text", b.len()),
        }
    }
}

/// Messages for one client, each with the key its send stamp is filed
/// under (if any): queued in order, written in one go.
#[derive(Default)]
pub(crate) struct Out {
    pub(crate) items: Vec<(Frame, Option<StampKey>)>,
}

impl Out {
    /// A text message with no send stamp (a reply, a heartbeat, a
    /// snapshot).
    pub(crate) fn push(&mut self, text: String) {
        self.items.push((Frame::Text(text), None));
    }

    /// Market data in a text message, stamped under (instrument, kind, id)
    /// when written: the id the feed's adapter reports for it (the trade
    /// id, or the update id of a book or quote message).
    pub(crate) fn stamped(&mut self, text: String, instrument: usize, kind: StreamKind, id: u64) {
        self.items
            .push((Frame::Text(text), Some((instrument, kind, id))));
    }

    /// A binary message with no send stamp.
    pub(crate) fn push_binary(&mut self, data: Vec<u8>) {
        self.items.push((Frame::Binary(data), None));
    }

    /// Market data in a binary message, stamped as
    /// [`stamped`](Out::stamped) stamps text.
    pub(crate) fn stamped_binary(
        &mut self,
        data: Vec<u8>,
        instrument: usize,
        kind: StreamKind,
        id: u64,
    ) {
        self.items
            .push((Frame::Binary(data), Some((instrument, kind, id))));
    }
}

/// What the server does with a client after its timers ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tick {
    /// Keep it.
    Keep,
    /// Close it, as the venue does (a missed heartbeat, a silent client).
    Close(CloseCode, &'static str),
}

/// The `Content-Type` of a JSON answer, as Binance writes it.
pub(crate) const JSON: &str = "application/json;charset=UTF-8";

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    /// Its `Content-Type`.
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
}

impl Response {
    /// A JSON body, as the venues answer REST requests.
    pub(crate) fn json(status: u16, body: impl Into<String>) -> Response {
        Response {
            status,
            content_type: JSON,
            body: body.into(),
        }
    }

    /// A plain-text body (an upgrade refused in words, not JSON).
    pub(crate) fn text(status: u16, body: impl Into<String>) -> Response {
        Response {
            status,
            content_type: "text/plain;charset=UTF-8",
            body: body.into(),
        }
    }
}

/// A venue: how its clients connect, subscribe and are kept alive, and how
/// each market step reads on its wire. All calls but `rest` come from the
/// market thread, between steps, with the market locked: a snapshot sent
/// from `on_text` is always consistent with the steps that follow.
pub(crate) trait Protocol: Send + Sync + 'static {
    /// What the venue remembers of one connection (subscriptions, its
    /// sequence numbers, heartbeat deadlines).
    type Client: Send;

    /// The head of a WebSocket upgrade to `path` (query included), before
    /// [`open`](Protocol::open): `Err` is the HTTP refusal the venue gives
    /// an upgrade it does not take whatever the path (one without the
    /// credentials it requires). `headers`: the request's fields, names
    /// and values as the client sent them (names compare without regard
    /// to case, RFC 9110 section 5.1). By default every upgrade passes.
    fn admit(&self, path: &str, headers: &[(String, String)]) -> Result<(), Response> {
        let _ = (path, headers);
        Ok(())
    }

    /// A WebSocket upgrade to `path` (query included) that
    /// [`admit`](Protocol::admit) let through: the new client, or the HTTP
    /// refusal the venue gives for a path it does not serve.
    fn open(&self, path: &str, market: &Market) -> Result<Self::Client, Response>;

    /// Whether the client has asked for market data of some instrument
    /// (by a request, or by its URL at the upgrade) and still has it: the
    /// market moves only while some client has. Channels that carry
    /// no market step (heartbeats, status, reference data) do not count.
    fn subscribed(&self, client: &Self::Client) -> bool;

    /// The client has joined the market: what the venue sends first (and
    /// snapshots of what the URL subscribed to).
    fn on_open(&self, client: &mut Self::Client, market: &mut Market, out: &mut Out) {
        let _ = (client, market, out);
    }

    /// A text message from the client: subscriptions, pings, requests.
    fn on_text(&self, client: &mut Self::Client, text: &str, market: &mut Market, out: &mut Out);

    /// One market step: what this client receives of it.
    fn on_step(&self, client: &mut Self::Client, step: &Step, market: &Market, out: &mut Out);

    /// Changes to orders (the engine's [`PrivateEvent`]s of the request or
    /// step batch just handled, in order, every account's): what this
    /// client receives of them (its own account's, on the channels it
    /// subscribed to). Called for every client after the batch's steps.
    fn on_private(
        &self,
        client: &mut Self::Client,
        events: &[PrivateEvent],
        market: &Market,
        out: &mut Out,
    ) {
        let _ = (client, events, market, out);
    }

    /// The client is gone (closed, dropped or kicked): what the venue does
    /// then, with the market locked (Deribit's cancel-on-disconnect
    /// cancels its account's orders here). What it changes reaches the
    /// other clients as any request's changes do.
    fn on_gone(&self, client: &mut Self::Client, market: &mut Market) {
        let _ = (client, market);
    }

    /// Timers, run at every poll of the client: heartbeats to send, and
    /// whether the venue would close it now. `idle` is how long the client
    /// has sent nothing (pings and pongs of the WebSocket protocol aside).
    fn on_tick(
        &self,
        client: &mut Self::Client,
        now: Instant,
        idle: Duration,
        out: &mut Out,
    ) -> Tick {
        let _ = (client, now, idle, out);
        Tick::Keep
    }

    /// The venue's notice that it will close the connection soon (a
    /// service restart), if it sends one.
    fn shutdown_notice(&self, client: &Self::Client) -> Option<String> {
        let _ = client;
        None
    }

    /// The messages a second the venue takes from one connection, if it
    /// limits them (text messages, and the pings and pongs the session
    /// counts): a connection that sends more in any second is closed, as
    /// the venue closes it.
    fn incoming_limit(&self) -> Option<usize> {
        None
    }

    /// [`incoming_limit`](Protocol::incoming_limit) for this client (a
    /// venue serving two APIs on one server may limit them apart).
    fn client_incoming_limit(&self, client: &Self::Client) -> Option<usize> {
        let _ = client;
        self.incoming_limit()
    }

    /// The REST request weight a minute the venue allows, if it has a
    /// limit.
    fn rest_weight_limit(&self) -> Option<u32> {
        None
    }

    /// What a GET of `path` weighs against that limit.
    fn rest_weight(&self, path: &str) -> u32 {
        let _ = path;
        1
    }

    /// An HTTP GET of the venue's instrument list (`path` with its
    /// query), in the venue's documented shape: every instrument the
    /// simulator serves ([`Market::instruments`]), listed as
    /// [`Listing::of`](crate::Listing::of) says. `None`: not a list
    /// request (then [`rest`](Protocol::rest) answers it). Answered the
    /// same with a script.
    fn instruments(&self, path: &str, market: &Market) -> Option<Response> {
        let _ = (path, market);
        None
    }

    /// An HTTP GET of `path` (query included).
    fn rest(&self, path: &str, market: &Market) -> Response {
        let _ = (path, market);
        Response::json(404, r#"{"error":"not found"}"#)
    }
}

/// The value of `key` in a URL's query, percent-decoded (`%5B%22BTCUSDT%22%5D`
/// is `["BTCUSDT"]`; a malformed escape is kept as written).
pub(crate) fn query_decoded(path: &str, key: &str) -> Option<String> {
    let raw = query(path, key)?.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut k = 0;
    while k < raw.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            raw[k],
            raw.get(k + 1).copied().and_then(hex),
            raw.get(k + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                k += 3;
            }
            (b'+', ..) => {
                out.push(b' ');
                k += 1;
            }
            (b, ..) => {
                out.push(b);
                k += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// The value of `key` in a URL's query.
pub(crate) fn query<'a>(path: &'a str, key: &str) -> Option<&'a str> {
    path.split_once('?')?
        .1
        .split('&')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// A market of `instruments`, their books drawn from `rng`.
#[cfg(test)]
pub(crate) fn market_of(instruments: Vec<SimInstrument>, rng: &mut StdRng) -> Market {
    let books = instruments.iter().map(|i| Book::new(i, rng)).collect();
    Market::new(instruments, books, false)
}

/// `venue`'s default pair ([`SimInstrument::pair`]), its books drawn from
/// `seed`.
#[cfg(test)]
pub(crate) fn market(venue: tickwire_venues::Venue, seed: u64) -> Market {
    use rand::SeedableRng;
    market_of(SimInstrument::pair(venue), &mut StdRng::seed_from_u64(seed))
}

#[cfg(test)]
mod tests {
    use super::market;
    use crate::VenueFault;
    use tickwire_venues::Venue;

    /// An ignored subscription is the next request subscribing the
    /// instrument's book by its whole symbol, once.
    #[test]
    fn the_next_subscription_naming_the_instrument_is_ignored_once() {
        let mut m = market(Venue::BybitSpot, 1);
        let btc = m.instruments[0].symbol.clone();
        let sub = |topic: &str| format!(r#"{{"op":"subscribe","args":["{topic}"]}}"#);
        assert!(
            !m.take_ignored(&sub(&format!("orderbook.50.{btc}"))),
            "not armed"
        );
        m.arm(0, VenueFault::IgnoreSubscription);
        assert!(!m.take_ignored(&sub("orderbook.50.ETHUSDT")));
        assert!(
            !m.take_ignored(&sub(&format!("publicTrade.{btc}"))),
            "not a book"
        );
        // Binance: upper-case method, lower-case streams.
        let mut b = market(Venue::BinanceSpot, 1);
        b.arm(0, VenueFault::IgnoreSubscription);
        assert!(!b.take_ignored(r#"{"method":"SUBSCRIBE","params":["btcusdt@trade"],"id":1}"#));
        assert!(
            b.take_ignored(r#"{"method":"SUBSCRIBE","params":["btcusdt@depth@100ms"],"id":2}"#)
        );
        assert!(!m.take_ignored(&sub(&format!("orderbook.50.{btc}X"))));
        assert!(!m.take_ignored(&format!(
            r#"{{"op":"unsubscribe","args":["orderbook.50.{btc}"]}}"#
        )));
        assert!(m.take_ignored(&sub(&format!("orderbook.50.{btc}"))));
        assert!(
            !m.take_ignored(&sub(&format!("orderbook.50.{btc}"))),
            "used up"
        );
        // Armed twice: ignored twice.
        m.arm(0, VenueFault::IgnoreSubscription);
        m.arm(0, VenueFault::IgnoreSubscription);
        assert!(m.take_ignored(&sub(&format!("orderbook.50.{btc}"))));
        assert!(m.take_ignored(&sub(&format!("orderbook.50.{btc}"))));
        assert!(!m.take_ignored(&sub(&format!("orderbook.50.{btc}"))));
    }
}
