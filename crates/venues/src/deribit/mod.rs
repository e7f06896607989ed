//! Deribit JSON-RPC subscriptions: `book.{instrument}.{interval}` (snapshot
//! then changes, `change_id` / `prev_change_id`), `trades.*`, `quote.*`,
//! heartbeats and replies (a refused subscription is an absence from a
//! reply's `result`: see [`plan::deribit`](crate::deribit::plan) for how
//! the request ids tell which channels were asked for).
//!
//! Deribit sends prices and amounts as JSON numbers. Their text is their
//! exact value, and a float is not, so this adapter reads the message with
//! the one-pass scanner in its any-number mode (never simd-json, whose tape
//! keeps only the float) and parses the number text with
//! [`crate::decimal`].

pub mod listing;
pub mod plan;

use crate::adapter::{Instrument, Instruments, Outcome, WireQuote, WireTrade, ms_to_ns, taker};
use crate::book::{Level, Side};
use crate::error::DecodeError;
use crate::event::{Event, InstrumentId, InstrumentSpec};
use crate::scan::{self, Cursor, Numbers, Val};
use crate::sync::{BookSync, LevelResult, Seq, SyncEvent};
use plan::{INSTRUMENTS_PER_REQUEST, SUBSCRIBE_ID, book_channel_symbol};

/// One decoded Deribit message.
#[derive(Debug)]
pub enum Message<'i> {
    /// A `book.{instrument}.{interval}` notification.
    Book(BookData<'i>),
    /// A `trades.*` notification.
    Trades {
        /// The channel.
        channel: &'i str,
        /// How many.
        count: usize,
        /// The trades.
        trades: Trades<'i>,
    },
    /// A `quote.{instrument}` notification: the best bid and ask.
    Quote(QuoteData<'i>),
    /// A reply to a request: `result` or `error`, and the request's `id`.
    Reply {
        /// The request's id, as echoed (`None` when absent or `null`, as
        /// in Deribit's -32600 "request entity too large").
        id: Option<RequestId<'i>>,
        /// What it says.
        answer: Answer<'i>,
    },
    /// `heartbeat` / `test_request`: a `test_request` must be answered with
    /// `public/test`.
    Heartbeat {
        /// Whether Deribit asked for an answer.
        test_request: bool,
    },
    /// Another subscription channel (its name), such as the grouped
    /// `book.{instrument}.{group}.{depth}.{interval}` or `ticker.*`.
    Other(&'i str),
}

/// A request id as a reply echoes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestId<'i> {
    /// A non-negative integer.
    Number(u64),
    /// A string (escape-free).
    Text(&'i str),
}

/// What a reply says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer<'i> {
    /// `result` is a list (of channel names, for `public/subscribe` and
    /// `public/unsubscribe`).
    Channels(ChannelList<'i>),
    /// Another `result` (`"ok"`, `{"version":..}`).
    Done,
    /// `error`: the request was refused.
    Error(RpcError<'i>),
}

/// A reply's `result` list, as sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelList<'i> {
    text: &'i str,
}

impl<'i> ChannelList<'i> {
    /// Each name in it (items that are not strings are skipped).
    pub fn iter(&self) -> impl Iterator<Item = &'i str> + use<'i> {
        let mut c = Cursor::new(self.text, Numbers::Any);
        std::iter::from_fn(move || {
            loop {
                match c.next_val()? {
                    Val::Str(s) => return Some(s),
                    _ => continue,
                }
            }
        })
    }

    /// Whether `name` is in it.
    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|s| s == name)
    }
}

/// A JSON-RPC `error`: `{"code":13778,"message":"raw_subscriptions_not_available_for_unauthorized"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpcError<'i> {
    /// `code` (0 if absent).
    pub code: i64,
    /// `message` (empty if absent).
    pub message: &'i str,
    /// The whole error object's text: the venue's own words.
    pub text: &'i str,
}

/// A book notification.
#[derive(Clone, Copy, Debug)]
pub struct BookData<'i> {
    /// The instrument (`BTC-24SEP21-8000-P`).
    pub instrument: &'i str,
    /// The first notification (the whole book) or a change.
    pub snapshot: bool,
    /// `change_id`.
    pub change_id: u64,
    /// `prev_change_id` (changes only).
    pub prev_change_id: Option<u64>,
    /// `timestamp`, ms since the Unix epoch.
    pub timestamp_ms: u64,
    bids: &'i str,
    asks: &'i str,
}

/// One level change: `["new"|"change"|"delete", price, amount]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelChange<'i> {
    /// `new`, `change` or `delete`.
    pub action: &'i str,
    /// The price's text, as sent.
    pub price: &'i str,
    /// The amount's text, as sent (`delete` sends 0).
    pub amount: &'i str,
}

impl<'i> BookData<'i> {
    /// The changes to one side.
    pub fn levels(
        &self,
        side: Side,
    ) -> impl Iterator<Item = Result<LevelChange<'i>, DecodeError>> + use<'i> {
        let mut outer = Cursor::new(
            match side {
                Side::Bid => self.bids,
                Side::Ask => self.asks,
            },
            Numbers::Any,
        );
        std::iter::from_fn(move || {
            let v = outer.next_val()?;
            let Val::Array(level) = v else {
                return Some(Err(DecodeError::Type("price level")));
            };
            let mut c = Cursor::new(level, Numbers::Any);
            Some(match (c.next_val(), c.next_val(), c.next_val()) {
                (Some(Val::Str(action)), Some(Val::Num(price)), Some(Val::Num(amount))) => {
                    Ok(LevelChange {
                        action,
                        price,
                        amount,
                    })
                }
                _ => Err(DecodeError::Type("price level")),
            })
        })
    }
}

/// The trades of a `trades.*` notification.
#[derive(Clone, Copy, Debug)]
pub struct Trades<'i> {
    data: &'i str,
}

/// One trade; numbers as their JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade<'i> {
    /// `instrument_name`.
    pub instrument: &'i str,
    /// `price`.
    pub price: &'i str,
    /// `amount` (contracts for futures, base currency for options).
    pub amount: &'i str,
    /// `direction`: the taker's side, `buy` or `sell`.
    pub direction: &'i str,
    /// `timestamp`, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// `trade_id`, as sent (a string).
    pub trade_id: &'i str,
}

impl<'i> Trades<'i> {
    /// Each trade.
    pub fn iter(&self) -> impl Iterator<Item = Result<Trade<'i>, DecodeError>> + use<'i> {
        let mut c = Cursor::new(self.data, Numbers::Any);
        std::iter::from_fn(move || {
            let Val::Object(t) = c.next_val()? else {
                return Some(Err(bad("trade")));
            };
            let (mut instrument, mut price, mut amount, mut direction, mut ts, mut id) =
                (None, None, None, None, None, None);
            let read = scan::object(t, Numbers::Any, |k, v| match (k, v) {
                ("instrument_name", Val::Str(x)) => instrument = Some(x),
                ("price", Val::Num(x)) => price = Some(x),
                ("amount", Val::Num(x)) => amount = Some(x),
                ("direction", Val::Str(x)) => direction = Some(x),
                ("timestamp", v) => ts = v.as_u64(),
                ("trade_id", Val::Str(x)) => id = Some(x),
                _ => {}
            });
            Some(match (read, instrument, price, amount, direction, ts, id) {
                (
                    Some(()),
                    Some(instrument),
                    Some(price),
                    Some(amount),
                    Some(direction),
                    Some(timestamp_ms),
                    Some(trade_id),
                ) => Ok(Trade {
                    instrument,
                    price,
                    amount,
                    direction,
                    timestamp_ms,
                    trade_id,
                }),
                _ => Err(bad("trade")),
            })
        })
    }
}

/// A `quote.{instrument}` notification's best bid and ask, numbers as
/// their JSON text (an empty side: `0`, or `null` read as `0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuoteData<'i> {
    /// `instrument_name`.
    pub instrument: &'i str,
    /// `timestamp`, ms since the Unix epoch.
    pub timestamp_ms: u64,
    /// `best_bid_price`, `best_bid_amount`.
    pub bid: (&'i str, &'i str),
    /// `best_ask_price`, `best_ask_amount`.
    pub ask: (&'i str, &'i str),
}

fn bad(what: &'static str) -> DecodeError {
    DecodeError::Type(what)
}

/// The number a trade id carries: Deribit's `trade_id` is a string, of
/// digits (`"48079254"`) or a book prefix and digits (`"ETH-311974188"`,
/// `"USDC-2436803"`: nautilus_trader `DeribitTradeMsg`, live captures);
/// the trailing digits, or 0 if there are none or too many.
pub fn trade_number(id: &str) -> u64 {
    let digits = id.bytes().rev().take_while(u8::is_ascii_digit).count();
    id[id.len() - digits..].parse().unwrap_or(0)
}

/// A reply (no `method`): its `id`, and `result` or `error`.
fn reply<'i>(
    id: Option<Val<'i>>,
    result: Option<Val<'i>>,
    error: Option<Val<'i>>,
) -> Result<Message<'i>, DecodeError> {
    let id = match id {
        Some(Val::Str(s)) => Some(RequestId::Text(s)),
        Some(v) => v.as_u64().map(RequestId::Number),
        None => None,
    };
    let answer = match (error, result) {
        (Some(Val::Object(e)), _) => {
            let (mut code, mut message) = (0, "");
            scan::object(e, Numbers::Any, |k, v| match (k, v) {
                ("code", Val::Num(n)) => code = n.parse().unwrap_or(0),
                ("message", Val::Str(m)) => message = m,
                _ => {}
            })
            .ok_or(bad("error"))?;
            Answer::Error(RpcError {
                code,
                message,
                text: e,
            })
        }
        (Some(_), _) => return Err(bad("error")),
        (None, Some(v @ Val::Array(list))) => {
            if !scan::valid(v, Numbers::Any, 0) {
                return Err(bad("result"));
            }
            Answer::Channels(ChannelList { text: list })
        }
        (None, Some(_)) => Answer::Done,
        (None, None) => return Err(DecodeError::Missing("method")),
    };
    Ok(Message::Reply { id, answer })
}

/// Decodes one message (its text; nothing is written to it).
pub fn decode(text: &str) -> Result<Message<'_>, DecodeError> {
    let (mut method, mut params, mut id, mut result, mut error) = (None, None, None, None, None);
    scan::object(text, Numbers::Any, |k, v| match k {
        "method" => method = Some(v),
        "params" => params = Some(v),
        "id" => id = Some(v),
        "result" => result = Some(v),
        "error" => error = Some(v),
        _ => {}
    })
    .ok_or(bad("message"))?;
    let method = match method {
        None => return reply(id, result, error),
        Some(Val::Str(m)) => m,
        Some(_) => return Err(bad("method")),
    };
    let Some(Val::Object(params)) = params else {
        return Err(DecodeError::Missing("params"));
    };
    let (mut channel, mut data, mut kind) = (None, None, None);
    scan::object(params, Numbers::Any, |k, v| match k {
        "channel" => channel = Some(v),
        "data" => data = Some(v),
        "type" => kind = Some(v),
        _ => {}
    })
    .ok_or(bad("params"))?;
    if method == "heartbeat" {
        return Ok(Message::Heartbeat {
            test_request: kind == Some(Val::Str("test_request")),
        });
    }
    let Some(Val::Str(channel)) = channel else {
        return Err(DecodeError::Missing("channel"));
    };
    let data = data.ok_or(DecodeError::Missing("data"))?;
    if !scan::valid(data, Numbers::Any, 0) {
        return Err(bad("data"));
    }
    let mut parts = channel.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        // `book.{instrument}.{interval}`: snapshot then changes. The
        // grouped `book.{instrument}.{group}.{depth}.{interval}` (whole
        // top-N books with no `type`) is another channel.
        (Some("book"), Some(_), Some(_), None) => book(data),
        (Some("trades"), ..) => {
            let Val::Array(trades) = data else {
                return Err(bad("data"));
            };
            let mut c = Cursor::new(trades, Numbers::Any);
            let mut count = 0;
            while c.next_val().is_some() {
                count += 1;
            }
            Ok(Message::Trades {
                channel,
                count,
                trades: Trades { data: trades },
            })
        }
        (Some("quote"), Some(_), None, None) => quote(data),
        _ => Ok(Message::Other(channel)),
    }
}

/// A `book.*` notification's data.
fn book(data: Val<'_>) -> Result<Message<'_>, DecodeError> {
    let Val::Object(data) = data else {
        return Err(bad("data"));
    };
    let mut f: [Option<Val<'_>>; 7] = [None; 7];
    const KEYS: [&str; 7] = [
        "type",
        "instrument_name",
        "change_id",
        "prev_change_id",
        "timestamp",
        "bids",
        "asks",
    ];
    scan::object(data, Numbers::Any, |k, v| {
        if let Some(i) = KEYS.iter().position(|&key| key == k) {
            f[i].get_or_insert(v);
        }
    })
    .ok_or(bad("data"))?;
    let id = |v: Option<Val<'_>>, key: &'static str| {
        v.ok_or(DecodeError::Missing(key))?.as_u64().ok_or(bad(key))
    };
    fn array<'i>(v: Option<Val<'i>>, key: &'static str) -> Result<&'i str, DecodeError> {
        match v {
            Some(Val::Array(a)) => Ok(a),
            Some(_) => Err(bad(key)),
            None => Err(DecodeError::Missing(key)),
        }
    }
    Ok(Message::Book(BookData {
        snapshot: match f[0] {
            Some(Val::Str("snapshot")) => true,
            Some(Val::Str("change")) => false,
            _ => return Err(bad("type")),
        },
        instrument: match f[1] {
            Some(Val::Str(s)) => s,
            _ => return Err(bad("instrument_name")),
        },
        change_id: id(f[2], "change_id")?,
        // A snapshot has no `prev_change_id` on the wire (the recorded
        // 2021 captures); nautilus_trader's test data writes `null`.
        prev_change_id: match f[3] {
            None | Some(Val::Null) => None,
            v => Some(id(v, "prev_change_id")?),
        },
        timestamp_ms: id(f[4], "timestamp")?,
        bids: array(f[5], "bids")?,
        asks: array(f[6], "asks")?,
    }))
}

/// A `quote.*` notification's data.
fn quote(data: Val<'_>) -> Result<Message<'_>, DecodeError> {
    let Val::Object(data) = data else {
        return Err(bad("data"));
    };
    let (mut instrument, mut ts) = (None, None);
    let mut n: [&str; 4] = ["0"; 4];
    let mut bad_number = false;
    scan::object(data, Numbers::Any, |k, v| {
        let slot = match k {
            "instrument_name" => {
                if let Val::Str(s) = v {
                    instrument = Some(s);
                }
                return;
            }
            "timestamp" => {
                ts = v.as_u64();
                return;
            }
            "best_bid_price" => 0,
            "best_bid_amount" => 1,
            "best_ask_price" => 2,
            "best_ask_amount" => 3,
            _ => return,
        };
        match v {
            Val::Num(x) => n[slot] = x,
            Val::Null => n[slot] = "0",
            _ => bad_number = true,
        }
    })
    .ok_or(bad("data"))?;
    if bad_number {
        return Err(bad("quote"));
    }
    Ok(Message::Quote(QuoteData {
        instrument: instrument.ok_or(DecodeError::Missing("instrument_name"))?,
        timestamp_ms: ts.ok_or(DecodeError::Missing("timestamp"))?,
        bid: (n[0], n[1]),
        ask: (n[2], n[3]),
    }))
}

/// A book notification's levels, bids then asks, at the scales.
fn scaled<'i>(
    book: &BookData<'i>,
    price_scale: u8,
    size_scale: u8,
) -> impl Iterator<Item = LevelResult> + use<'i> {
    let scale = move |side: Side| {
        move |change: Result<LevelChange<'_>, DecodeError>| -> LevelResult {
            let c = change?;
            let mut level: Level =
                crate::decimal::level(c.price, c.amount, price_scale, size_scale)?;
            match c.action {
                "delete" => level.size = 0,
                "new" | "change" => {}
                _ => return Err(bad("action")),
            }
            Ok((side, level))
        }
    };
    book.levels(Side::Bid)
        .map(scale(Side::Bid))
        .chain(book.levels(Side::Ask).map(scale(Side::Ask)))
}

/// Feeds a book notification into `sync` (chain
/// [`Chain::Deribit`](crate::sync::Chain::Deribit)).
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<(), DecodeError> {
    let levels = scaled(book, price_scale, size_scale);
    if book.snapshot {
        sync.on_snapshot(book.change_id, levels, emit)
    } else {
        let seq = Seq {
            first: book.change_id,
            last: book.change_id,
            prev: book.prev_change_id,
        };
        sync.on_diff(seq, levels, emit)
    }
}

/// What to send when Deribit's heartbeat asks (`test_request`).
pub const TEST_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"method":"public/test","params":{}}"#;

/// Deribit messages in, normalised [`Event`]s out, for one connection's
/// instruments (`BTC-PERPETUAL`, in the order its plan was made with):
/// `trades.*` as trades, `quote.*` as quotes, `book.*` kept in step
/// (`change_id` chain). A `test_request` heartbeat comes back as
/// [`Outcome::Answer`] with [`TEST_ANSWER`], which must be sent at once.
///
/// A book that breaks emits `Gap` then `Resync`: resubscribe it. A book
/// channel the venue did not accept emits `Rejected`: the reply to a
/// `public/subscribe` lists what it accepted, and the request's id (see
/// [`plan::deribit`](crate::deribit::plan)) says which book channels it
/// asked for; an `error` reply refuses every instrument its request named.
pub struct Adapter {
    instruments: Instruments,
    /// Per instrument: its book channel is in the reply being read
    /// (allocated here, so that reading a reply allocates nothing).
    accepted: Vec<bool>,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::Deribit,
                plan::book_shape,
            ),
            accepted: vec![false; instruments.len()],
        }
    }

    /// Decodes one message, `buf[..len]` (read in place with the scanner:
    /// no padding needed), and emits its events.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let text = crate::adapter::text(buf, len)?;
        let instruments = &mut self.instruments;
        match decode(text)? {
            Message::Reply { id, answer } => Ok(self.on_reply(id, answer, text, recv_tsc, emit)),
            Message::Heartbeat {
                test_request: false,
            } => Ok(Outcome::Control),
            Message::Heartbeat { test_request: true } => Ok(Outcome::Answer(TEST_ANSWER)),
            Message::Other(_) => Ok(Outcome::Ignored),
            Message::Trades { trades, .. } => {
                let trades = trades.iter().map(|t| {
                    let t = t?;
                    Ok(WireTrade {
                        symbol: t.instrument,
                        price: t.price,
                        size: t.amount,
                        aggressor: taker(t.direction),
                        trade_id: trade_number(t.trade_id),
                        exchange_ns: ms_to_ns(t.timestamp_ms),
                    })
                });
                instruments.trades(trades, recv_tsc, emit)
            }
            Message::Quote(q) => {
                let quote = WireQuote {
                    bid: q.bid,
                    ask: q.ask,
                    // A quote carries no update id.
                    update_id: 0,
                    exchange_ns: ms_to_ns(q.timestamp_ms),
                };
                instruments.quote(q.instrument, quote, recv_tsc, emit)
            }
            Message::Book(book) => instruments.book_message(
                book.instrument,
                ms_to_ns(book.timestamp_ms),
                recv_tsc,
                emit,
                |spec, sync, emit| {
                    let (ps, ss) = (spec.price_scale, spec.size_scale);
                    feed_book(sync, &book, ps, ss, &mut { emit })?;
                    Ok(true)
                },
            ),
        }
    }

    /// A reply. Which instruments' book channels its request named comes
    /// from its id ([`plan::deribit`](crate::deribit::plan)): the plan's
    /// k-th subscription (`100 + k`) named those of instruments `100 k` to
    /// `100 k + 99` that have a book; a resubscription names its channel
    /// as its id. Each of them absent from `result` was refused (Deribit
    /// leaves out what it does not accept, with no error); an `error`
    /// refuses every instrument the request named, or, when the id names
    /// none we know, is kept as the venue's words with no instrument.
    fn on_reply(
        &mut self,
        id: Option<RequestId<'_>>,
        answer: Answer<'_>,
        text: &str,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Outcome {
        let n = self.instruments.len();
        let asked = match id {
            Some(RequestId::Number(id)) if id >= SUBSCRIBE_ID => {
                let k = usize::try_from(id - SUBSCRIBE_ID).unwrap_or(usize::MAX);
                let first = k.saturating_mul(INSTRUMENTS_PER_REQUEST).min(n);
                Some(first..first.saturating_add(INSTRUMENTS_PER_REQUEST).min(n))
            }
            Some(RequestId::Text(channel)) => book_channel_symbol(channel)
                .and_then(|s| self.instruments.find(s))
                .map(|i| i.0 as usize..i.0 as usize + 1),
            _ => None,
        };
        match (answer, asked) {
            (Answer::Error(e), Some(asked)) => {
                self.instruments
                    .reject_where(e.code, e.text, recv_tsc, emit, |id, _| {
                        asked.contains(&(id.0 as usize))
                    });
                Outcome::Rejected
            }
            (Answer::Error(e), None) => {
                self.instruments
                    .reject(None, e.code, e.text, recv_tsc, emit);
                Outcome::Rejected
            }
            (Answer::Channels(list), Some(asked)) => {
                let accepted = &mut self.accepted;
                accepted[asked.clone()].fill(false);
                for name in list.iter() {
                    if let Some(i) =
                        book_channel_symbol(name).and_then(|s| self.instruments.find(s))
                        && asked.contains(&(i.0 as usize))
                    {
                        accepted[i.0 as usize] = true;
                    }
                }
                // A book asked for and left out of the list was refused.
                let refused = |id: InstrumentId, i: &Instrument| {
                    let k = id.0 as usize;
                    asked.contains(&k) && i.sync.is_some() && !accepted[k]
                };
                let any = asked.clone().any(|k| {
                    let id = InstrumentId(k as u32);
                    self.instruments.get(id).is_some_and(|i| refused(id, i))
                });
                if !any {
                    // Not a refusal: the words of the last one stay.
                    return Outcome::Control;
                }
                self.instruments
                    .reject_where(0, text, recv_tsc, emit, refused);
                Outcome::Rejected
            }
            _ => Outcome::Control,
        }
    }

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.instruments.disconnect(recv_tsc, emit);
    }
}

crate::adapter::venue_adapter!(Adapter);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Chain, Resync, SyncConfig};

    // Shapes from Deribit's API documentation ("book.{instrument_name}.
    // {interval}", "heartbeat"); values ours.

    #[test]
    fn snapshot_changes_and_a_gap() {
        let mut sync = BookSync::new(Chain::Deribit, SyncConfig::default());
        let mut ev = Vec::new();
        fn feed(sync: &mut BookSync, text: &str, ev: &mut Vec<SyncEvent>) {
            let Message::Book(b) = decode(text).unwrap() else {
                panic!()
            };
            feed_book(sync, &b, 4, 1, &mut |e| ev.push(e)).unwrap();
        }
        feed(
            &mut sync,
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"snapshot","timestamp":1554373962454,"instrument_name":"BTC-PERPETUAL","change_id":297217,"bids":[["new",5042.34,30.0],["new",5041.94,20.0]],"asks":[["new",5042.64,40.0]]}}}"#,
            &mut ev,
        );
        feed(
            &mut sync,
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"change","timestamp":1554373911330,"prev_change_id":297217,"instrument_name":"BTC-PERPETUAL","change_id":297218,"bids":[["delete",5042.34,0.0]],"asks":[["change",5042.64,10.5]]}}}"#,
            &mut ev,
        );
        assert_eq!(
            ev,
            [
                SyncEvent::Valid { update_id: 297217 },
                SyncEvent::Updated { update_id: 297218 }
            ]
        );
        let book = sync.book().unwrap();
        let (bid, ask) = book.top().unwrap();
        assert_eq!(
            (bid.price, ask.price, ask.size),
            (50_419_400, 50_426_400, 105)
        );
        feed(
            &mut sync,
            r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"change","timestamp":1,"prev_change_id":297220,"instrument_name":"BTC-PERPETUAL","change_id":297221,"bids":[],"asks":[]}}}"#,
            &mut ev,
        );
        assert_eq!(
            ev[2],
            SyncEvent::Gap(Resync::Sequence {
                expected: 297218,
                got: 297220
            })
        );
    }

    #[test]
    fn prices_are_exact_from_the_number_text() {
        // 0.1 + 0.2 style values a float would not keep.
        let text = r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.X.raw","data":{"type":"snapshot","timestamp":1,"instrument_name":"X","change_id":1,"bids":[["new",0.30000000000000004,1e2]],"asks":[]}}}"#;
        let Message::Book(b) = decode(text).unwrap() else {
            panic!()
        };
        let level = b.levels(Side::Bid).next().unwrap().unwrap();
        assert_eq!((level.price, level.amount), ("0.30000000000000004", "1e2"));
        // An exponent moves the point (JSON's number grammar): exact too.
        let mut sync = BookSync::new(Chain::Deribit, SyncConfig::default());
        feed_book(&mut sync, &b, 17, 0, &mut |_| {}).unwrap();
        let best = *sync.book().unwrap().levels(Side::Bid).get(0).unwrap();
        assert_eq!((best.price, best.size), (30_000_000_000_000_004, 100));
        // One it cannot keep exactly is a typed error, not a rounding.
        assert!(feed_book(&mut sync, &b, 16, 0, &mut |_| {}).is_err());
    }

    #[test]
    fn heartbeats_replies_trades_and_garbage() {
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#)
                .unwrap(),
            Message::Heartbeat { test_request: true }
        ));
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","id":1,"result":["book.X.raw"]}"#).unwrap(),
            Message::Reply { .. }
        ));
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.raw","data":[{"price":5040.5,"amount":10.0},{"price":5041.0,"amount":1.0}]}}"#).unwrap(),
            Message::Trades { count: 2, .. }
        ));
        for bad in [
            "",
            "[]",
            r#"{"method":1}"#,
            r#"{"method":"subscription","params":{"channel":"book.X.raw","data":{"type":"snapshot"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":"no"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
        ] {
            assert!(decode(bad).is_err(), "{bad}");
        }
    }
}
