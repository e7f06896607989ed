//! Deribit's JSON-RPC messages read with the scanner (prices sent as JSON
//! numbers stay exact): books, trades, quotes, and the replies to requests.

use crate::book::Side;
use crate::error::DecodeError;
use crate::scan::{self, Cursor, Numbers, Val};

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

pub(super) fn bad(what: &'static str) -> DecodeError {
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
