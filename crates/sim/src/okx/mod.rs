//! OKX v5 public market data (`/ws/v5/public`), as its API documentation
//! (docs-v5, "WebSocket" overview, "Order book channel", "Trades
//! channel", "Error Code") and recorded streams describe it. Each rule is
//! noted next to the code that implements it; D-WS, D-BOOK, D-TRD and
//! D-ERR name those pages, as in the research note on OKX.
//!
//! - One path, `/ws/v5/public` (query allowed: `?brokerId=9999`); nothing
//!   is sent on open.
//! - `{"op":"subscribe"|"unsubscribe","args":[{"channel":..,"instId":..}],
//!   "id":..}`, answered with one event per argument, the error of an
//!   argument as `{"event":"error","msg":..,"code":"60018",..}` with no
//!   `arg` (the instrument named only in the text).
//! - Text `ping`, text `pong`; a client silent for 30 s is closed with
//!   4004 "No data received in 30s".
//! - At most 480 `subscribe`/`unsubscribe`/`login` requests a connection
//!   in any hour (D-WS "Connect"; [`budget`]): the one over it is
//!   answered 60014 "Requests too frequent" and the connection closed.
//! - `books` (400 levels, snapshot then updates chained by
//!   `seqId`/`prevSeqId`, the window kept complete, `"checksum":0` as OKX
//!   has sent since June 2026, or the CRC32 it sent before as an option:
//!   `checksums`),
//!   `bbo-tbt` (a one-level snapshot when the top changes) and `trades`.
//! - REST `GET /api/v5/public/instruments` lists what is served
//!   (`listing`); an `instId` not listed is refused 60018 on the
//!   WebSocket, 51001 there.
//!
//! Not simulated: `books5`, `books-l2-tbt`, `books50-l2-tbt` and every
//! other channel (refused with 60018, as OKX refuses a channel it does not
//! serve on the URL; the real `books-l2-tbt` needs a login and a fee tier,
//! 64003); the last trade OKX replays right after a `trades` subscription
//! (an old trade, research note section 5); the `notice` (64008) OKX sends
//! 60 s before a service upgrade; sequence resets after maintenance.

pub(crate) mod budget;
mod checksums;
mod listing;
mod window;
mod wire;

#[cfg(test)]
mod roundtrip;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tickwire_net::CloseCode;

use crate::market::{SimInstrument, Step};
use crate::protocol::{Market, Out, Protocol, Response, Tick};
use crate::stamps::StreamKind;
use crate::time::now_ms;

use budget::{RequestBudget, Window as Requests};
use checksums::Checksums;
use window::{WINDOW, Window};
use wire::BookMessage;

/// The path OKX serves public market data on: "wss://ws.okx.com:8443/ws/v5/public" (D-WS).
const PUBLIC_PATH: &str = "/ws/v5/public";

/// "The connection will break automatically if the subscription is not
/// established or data has not been pushed for more than 30 seconds"
/// (D-WS, "Connect"); the close frame is 4004 "No data received in 30s"
/// (D-ERR, WebSocket close codes). Counted from the client's last message,
/// as the code's words say.
const SILENCE: Duration = Duration::from_secs(30);

/// "If there are no updates to the depth for an extended period (Around
/// 60 seconds) ... OKX will send a message with 'asks': [], 'bids': [] to
/// inform users that the connection is still active. seqId is the same as
/// the last sent message and prevSeqId equals to seqId" (D-BOOK, "Sequence
/// ID").
const QUIET_BOOK: Duration = Duration::from_secs(60);

/// The channels simulated here; any other name is refused with 60018, as
/// OKX refuses a channel not served on the URL (`candle1m` on /public:
/// research note, section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Channel {
    Books,
    BboTbt,
    Trades,
}

impl Channel {
    fn parse(name: &str) -> Option<Channel> {
        match name {
            "books" => Some(Channel::Books),
            "bbo-tbt" => Some(Channel::BboTbt),
            "trades" => Some(Channel::Trades),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Channel::Books => "books",
            Channel::BboTbt => "bbo-tbt",
            Channel::Trades => "trades",
        }
    }
}

/// OKX.
pub(crate) struct Okx {
    /// Connections opened, for their `connId`s.
    opened: AtomicU64,
    /// What the `books` messages' `checksum` carries.
    checksums: Checksums,
    /// Requests a connection may send ([`budget::OKX`] unless set).
    budget: RequestBudget,
}

impl Okx {
    /// OKX as it is: `"checksum":0`.
    pub(crate) fn new() -> Okx {
        Okx::with_checksums(Checksums::Zero)
    }

    /// OKX with its `books` messages' `checksum` as `checksums` says.
    pub(crate) fn with_checksums(checksums: Checksums) -> Okx {
        Okx {
            opened: AtomicU64::new(0),
            checksums,
            budget: RequestBudget::venue(),
        }
    }
}

/// A client: its `connId`, channels, and a `books` window per instrument.
pub(crate) struct Client {
    /// "connId: Connection ID", 8 hex digits, in every event (D-WS).
    conn_id: String,
    /// (instrument, channel) pairs subscribed.
    subs: Vec<(usize, Channel)>,
    /// Each `books` subscription's window and chain.
    books: Vec<BookFeed>,
    /// Its requests of the budget's window.
    requests: Requests,
    /// It went over its request budget: answered 60014, and closed at
    /// its next tick; nothing more it sends is read.
    over: bool,
}

/// One `books` subscription of one client.
struct BookFeed {
    instrument: usize,
    /// The instrument, for the keep-alive (sent without the market at
    /// hand).
    spec: SimInstrument,
    window: Window,
    /// The window's checksum as its messages carry it (0 but with
    /// [`Checksums::Crc32`]), as last sent.
    checksum: i32,
    /// The last `seqId` published: the next update's `prevSeqId`.
    seq: u64,
    /// When the last message was pushed (for the 60 s keep-alive).
    pushed: Instant,
}

impl Client {
    fn subscribed(&self, n: usize, channel: Channel) -> bool {
        self.subs.contains(&(n, channel))
    }

    fn ack(&self, id: Option<&str>, op: &str, channel: Channel, inst_id: &str) -> String {
        wire::ack(&self.conn_id, id, op, channel.name(), inst_id)
    }

    fn error(&self, id: Option<&str>, code: &str, msg: &str) -> String {
        wire::error(&self.conn_id, id, code, msg)
    }

    fn not_found(&self, id: Option<&str>, channel: &str, inst_id: &str) -> String {
        wire::not_found(&self.conn_id, id, channel, inst_id)
    }
}

impl Okx {
    /// Subscribes or unsubscribes one argument.
    fn one_arg(
        &self,
        client: &mut Client,
        id: Option<&str>,
        subscribe: bool,
        arg: &Value,
        market: &mut Market,
        out: &mut Out,
    ) {
        let channel = arg.get("channel").and_then(Value::as_str);
        let inst_id = arg.get("instId").and_then(Value::as_str);
        let (Some(name), Some(inst_id)) = (channel, inst_id) else {
            // 60013 "Invalid args" (D-ERR): an argument without a channel
            // or an instrument (the instruments channel's `instType` is
            // not simulated). The exact text OKX adds is unconfirmed.
            return out.push(client.error(id, "60013", "Invalid args"));
        };
        let (Some(n), Some(channel)) = (market.find(inst_id), Channel::parse(name)) else {
            return out.push(client.not_found(id, name, inst_id));
        };
        let op = if subscribe {
            "subscribe"
        } else {
            "unsubscribe"
        };
        if !subscribe {
            client.subs.retain(|s| *s != (n, channel));
            if channel == Channel::Books {
                client.books.retain(|f| f.instrument != n);
            }
            return out.push(client.ack(id, op, channel, inst_id));
        }
        if channel == Channel::Books && market.take_reject(n) {
            // A refused subscription: OKX's reply for an instrument it
            // does not serve on this URL.
            return out.push(client.not_found(id, name, inst_id));
        }
        out.push(client.ack(id, op, channel, inst_id));
        if client.subscribed(n, channel) {
            // A repeated subscription is acknowledged again, and its data
            // is not sent twice (the 2022 recording: channels subscribed
            // two or three times on one socket, no message duplicated).
            // Whether it brings a new snapshot is unconfirmed: not here.
            return;
        }
        client.subs.push((n, channel));
        if channel == Channel::Books {
            // "400 depth levels will be pushed in the initial full
            // snapshot" (D-BOOK), `prevSeqId` -1 ("except in snapshot
            // messages where the prevSeqId is always -1", D-BOOK
            // "Sequence ID"). Taken under the market's lock, between
            // steps: the next step's update chains onto it.
            let book = &market.books[n];
            let spec = &market.instruments[n];
            let window = Window::new(book);
            let (bids, asks) = window.top(WINDOW);
            let checksum = self.checksums.of(&window, spec);
            let snapshot = BookMessage {
                snapshot: true,
                bids: &bids,
                asks: &asks,
                ts: now_ms(),
                checksum,
                prev_seq_id: -1,
                seq_id: book.update_id,
            };
            out.push(snapshot.text(spec));
            client.books.push(BookFeed {
                instrument: n,
                spec: spec.clone(),
                window,
                checksum,
                seq: book.update_id,
                pushed: Instant::now(),
            });
        }
    }
}

impl Protocol for Okx {
    type Client = Client;

    fn shutdown_notice(&self, client: &Client) -> Option<String> {
        Some(wire::upgrade_notice(&client.conn_id))
    }

    fn subscribed(&self, client: &Client) -> bool {
        !client.subs.is_empty()
    }

    /// `public/instruments` (see `listing.rs`).
    fn instruments(&self, path: &str, market: &Market) -> Option<Response> {
        (path.split('?').next() == Some(listing::PATH)).then(|| listing::instruments(path, market))
    }

    fn open(&self, path: &str, _market: &Market) -> Result<Client, Response> {
        let (route, _) = path.split_once('?').unwrap_or((path, ""));
        if route != PUBLIC_PATH {
            // `/ws/v5/business` and `/ws/v5/private` exist but are not
            // simulated; what OKX answers on an unknown path is
            // unconfirmed: a plain 404.
            return Err(Response::json(404, ""));
        }
        let k = self.opened.fetch_add(1, Ordering::Relaxed);
        // 8 hex digits that differ from one connection to the next.
        let mixed = k.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        Ok(Client {
            conn_id: format!("{:08x}", mixed as u32),
            subs: Vec::new(),
            books: Vec::new(),
            requests: Requests::default(),
            over: false,
        })
    }

    fn on_text(&self, client: &mut Client, text: &str, market: &mut Market, out: &mut Out) {
        if client.over {
            return; // Closed at its next tick: not read.
        }
        // "send the String 'ping' ... Expect a 'pong' as a response"
        // (D-WS, "Connect"): text frames, not JSON.
        if text == "ping" {
            return out.push("pong".into());
        }
        // "Invalid request: {...}" with the request as sent, code 60012
        // (D-WS "Subscribe" error example, D-ERR).
        let invalid = |client: &Client, id: Option<&str>| {
            client.error(id, "60012", &format!("Invalid request: {text}"))
        };
        let Ok(Value::Object(req)) = serde_json::from_str::<Value>(text) else {
            return out.push(invalid(client, None));
        };
        // `id`: "Provided by client ... A combination of case-sensitive
        // alphanumerics, all numbers, or all letters of up to 32
        // characters" (D-WS).
        let id = match req.get("id") {
            None => None,
            Some(Value::String(s))
                if s.len() <= 32 && s.bytes().all(|b| b.is_ascii_alphanumeric()) =>
            {
                Some(s.as_str())
            }
            Some(_) => return out.push(invalid(client, None)),
        };
        let op = req.get("op").and_then(Value::as_str);
        // "The total number of 'subscribe'/'unsubscribe'/'login' requests
        // per connection is limited to 480 times per hour" (D-WS
        // "Connect"), a request a frame (see `budget`). Over it: the one
        // error OKX is recorded sending for a WebSocket rate limit, then
        // the close (at the next tick; `budget` says why).
        if !self.admit(client, op, Instant::now()) {
            return out.push(client.error(id, "60014", "Requests too frequent"));
        }
        let subscribe = match op {
            Some("subscribe") => true,
            Some("unsubscribe") => false,
            // 60019 "Invalid op" (D-ERR; the op in the text is how OKX
            // fills it, unconfirmed).
            Some(op) => return out.push(client.error(id, "60019", &format!("Invalid op: {op}"))),
            None => return out.push(invalid(client, id)),
        };
        let Some(args) = req.get("args").and_then(Value::as_array) else {
            // The docs' own example: `"argss"` gets 60012.
            return out.push(invalid(client, id));
        };
        if args.is_empty() {
            return out.push(invalid(client, id));
        }
        for arg in args {
            self.one_arg(client, id, subscribe, arg, market, out);
        }
    }

    fn on_step(&self, client: &mut Client, step: &Step, market: &Market, out: &mut Out) {
        let n = step.instrument;
        if !client.subs.iter().any(|(i, _)| *i == n) {
            return;
        }
        let spec = &market.instruments[n];
        let ts = step.time_ms;
        if let Some(t) = &step.trade
            && client.subscribed(n, Channel::Trades)
        {
            // A trade's `seqId`: "The seqId may be the same for different
            // trade updates that occur at the same time" (D-TRD); the
            // step's first update id here.
            let text = wire::trade(spec, t, ts, step.first_id);
            out.stamped(text, n, StreamKind::Trade, t.id);
        }
        // "The push sequence for order book channels within the same
        // connection and trading symbols is fixed as: bbo-tbt ->
        // books-l2-tbt -> books50-l2-tbt -> books -> books-elp -> books5"
        // (D-BOOK). bbo-tbt pushes "when there is change" only: here,
        // when the step moved the top.
        if let Some((bid, ask)) = step.top
            && client.subscribed(n, Channel::BboTbt)
        {
            let text = wire::bbo(spec, bid, ask, ts, step.last_id);
            out.stamped(text, n, StreamKind::BookTicker, step.last_id);
        }
        if let Some(feed) = client.books.iter_mut().find(|f| f.instrument == n) {
            let (bids, asks) = feed.window.apply(&step.bids, &step.asks);
            // "The prevSeqId in the new message matches with seqId of the
            // previous message" and steps are not +1 (D-BOOK): the step's
            // last update id is its seqId. Every step is a message (a
            // step whose changes all lie below the window sends empty
            // sides), so a lost one always shows as a gap.
            let prev = std::mem::replace(&mut feed.seq, step.last_id);
            feed.checksum = self.checksums.of(&feed.window, spec);
            if step.faults.drop_book {
                return;
            }
            let checksum = if step.faults.bad_checksum {
                checksums::wrong(&feed.window, spec)
            } else {
                feed.checksum
            };
            let update = BookMessage {
                snapshot: false,
                bids: &bids,
                asks: &asks,
                ts,
                checksum,
                prev_seq_id: prev as i64,
                seq_id: step.last_id,
            };
            feed.pushed = Instant::now();
            out.stamped(update.text(spec), n, StreamKind::Depth, step.last_id);
        }
    }

    fn on_tick(&self, client: &mut Client, now: Instant, idle: Duration, out: &mut Out) -> Tick {
        if client.over {
            // Over its request budget (answered 60014 already).
            return Tick::Close(CloseCode::POLICY_VIOLATION, "Requests too frequent");
        }
        if idle >= SILENCE {
            return Tick::Close(CloseCode(4004), "No data received in 30s");
        }
        for feed in &mut client.books {
            if now.saturating_duration_since(feed.pushed) >= QUIET_BOOK {
                feed.pushed = now;
                // The window has not changed: its checksum is the last
                // one sent (0 but with `Checksums::Crc32`).
                let keep_alive = BookMessage {
                    snapshot: false,
                    bids: &[],
                    asks: &[],
                    ts: now_ms(),
                    checksum: feed.checksum,
                    prev_seq_id: feed.seq as i64,
                    seq_id: feed.seq,
                };
                out.push(keep_alive.text(&feed.spec));
            }
        }
        Tick::Keep
    }
}

#[cfg(test)]
pub(super) mod tests;
