//! Kraken spot WebSocket v2 (`wss://ws.kraken.com/v2`): JSON objects with
//! prices and quantities as JSON numbers, read with the scanner in its
//! any-number mode (the number's text is its exact value).
//!
//! What this module relies on, each with its source (the research note
//! behind them is the project's `kraken.md`):
//!
//! - Replies to requests carry `method` and no `channel`; a refusal has
//!   `"success":false` and Kraken's words in `error` ("Book", "Ping": the
//!   `error` field, "Condition: if success is false"). A subscription is
//!   answered per symbol, and a symbol's refusal names it in a top-level
//!   `symbol` (live: `{"error":"Currency pair not supported XBT/USD",
//!   "method":"subscribe","success":false,"symbol":"XBT/USD",...}`); a bad
//!   depth names none (`"Subscription depth not supported"`); a second
//!   subscription of a symbol is `"Already subscribed"`, with `symbol`,
//!   while the first stays in force.
//! - `instrument` ("Instrument" channel): `data` is an object of `assets`
//!   and `pairs`; each pair has its `price_precision` and `qty_precision`,
//!   increments in exponent notation (`1e-08`). Snapshot and update share
//!   the schema.
//! - `book` ("Book", "Spot WebSocket v2 book checksum" guide): snapshot and
//!   updates both carry `checksum`, the CRC32 of the top 10 asks then the
//!   top 10 bids, each price and quantity written at the pair's precision
//!   with the point and leading zeros removed (trailing zeros kept); every
//!   level of a message applied before the checksum, and the book
//!   truncated to the subscribed depth ("you won't receive "qty": 0 for
//!   price levels that fall out of scope"), at the message's end here (see
//!   [`crate::book`]).
//! - `trade` ("Trade"): a snapshot is "the most recent 50 trades", history
//!   rather than news, so it is not emitted.
//! - `ticker` ("Ticker") with `event_trigger: bbo`: best bid and offer.
//! - `heartbeat` and `status`: control.

use crate::adapter::{Instruments, Outcome, WireQuote, WireTrade, taker};
use crate::book::Side;
use crate::decimal::MAX_SCALE;
use crate::error::DecodeError;
use crate::event::{Event, InstrumentSpec};
use crate::scan::{self, Cursor, Numbers, Val};
use crate::sync::{BookSync, LevelResult, SyncEvent};
use crate::time::rfc3339_ns;

/// One decoded v2 message.
#[derive(Debug)]
pub enum Message<'i> {
    /// A `book` snapshot or update (the first entry of `data`).
    Book(BookData<'i>),
    /// `trade`: one or more trades.
    Trades(Trades<'i>),
    /// `ticker`: best bid and ask (the first entry of `data`).
    Ticker(Ticker<'i>),
    /// `instrument`: the pairs' precisions.
    Instruments(Pairs<'i>),
    /// A request Kraken refused (`"success":false`).
    Refused(Refusal<'i>),
    /// `heartbeat`, `status`, or a successful reply to a `method` request.
    Control(&'i str),
    /// Another channel (its name).
    Other(&'i str),
}

/// A book message.
#[derive(Clone, Copy, Debug)]
pub struct BookData<'i> {
    /// The pair (`BTC/USD`).
    pub symbol: &'i str,
    /// Snapshot (replaces the book) or update.
    pub snapshot: bool,
    /// Kraken's CRC32 of its top 10 levels a side after this message.
    pub checksum: u32,
    /// `timestamp` (RFC 3339), where sent.
    pub timestamp: Option<&'i str>,
    bids: &'i str,
    asks: &'i str,
}

/// The trades of a `trade` message.
#[derive(Clone, Copy, Debug)]
pub struct Trades<'i> {
    /// The snapshot sent on subscription (recent history), or an update.
    pub snapshot: bool,
    data: &'i str,
}

/// One trade; numbers as their JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade<'i> {
    /// The pair.
    pub symbol: &'i str,
    /// The taker's side: `buy` or `sell`.
    pub side: &'i str,
    /// Price.
    pub price: &'i str,
    /// Quantity.
    pub qty: &'i str,
    /// Kraken's trade id.
    pub trade_id: u64,
    /// RFC 3339 time.
    pub timestamp: &'i str,
}

impl<'i> Trades<'i> {
    /// Each trade.
    pub fn iter(&self) -> impl Iterator<Item = Result<Trade<'i>, DecodeError>> + use<'i> {
        let mut c = Cursor::new(self.data, Numbers::Any);
        std::iter::from_fn(move || {
            let Val::Object(t) = c.next_val()? else {
                return Some(Err(DecodeError::Type("trade")));
            };
            let (mut symbol, mut side, mut price, mut qty, mut id, mut ts) =
                (None, None, None, None, None, None);
            let read = scan::object(t, Numbers::Any, |k, v| match (k, v) {
                ("symbol", Val::Str(x)) => symbol = Some(x),
                ("side", Val::Str(x)) => side = Some(x),
                ("price", Val::Num(x)) => price = Some(x),
                ("qty", Val::Num(x)) => qty = Some(x),
                ("trade_id", v) => id = v.as_u64(),
                ("timestamp", Val::Str(x)) => ts = Some(x),
                _ => {}
            });
            Some(match (read, symbol, side, price, qty, id, ts) {
                (
                    Some(()),
                    Some(symbol),
                    Some(side),
                    Some(price),
                    Some(qty),
                    Some(trade_id),
                    Some(timestamp),
                ) => Ok(Trade {
                    symbol,
                    side,
                    price,
                    qty,
                    trade_id,
                    timestamp,
                }),
                _ => Err(DecodeError::Type("trade")),
            })
        })
    }
}

/// A `ticker` message's best bid and ask; numbers as their JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticker<'i> {
    /// The pair.
    pub symbol: &'i str,
    /// Best bid price and quantity.
    pub bid: (&'i str, &'i str),
    /// Best ask price and quantity.
    pub ask: (&'i str, &'i str),
    /// `timestamp` (RFC 3339), where sent.
    pub timestamp: Option<&'i str>,
}

/// A pair's precisions, from Kraken's `instrument` channel: how many
/// decimals its prices and quantities have. The checksum is computed over
/// the values written with exactly these many decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Precision {
    /// `price_precision`.
    pub price: u8,
    /// `qty_precision`.
    pub qty: u8,
}

/// The `pairs` of an `instrument` message.
#[derive(Clone, Copy, Debug)]
pub struct Pairs<'i> {
    /// The snapshot sent on subscription (every pair), or an update.
    pub snapshot: bool,
    pairs: &'i str,
}

/// One pair of an `instrument` message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair<'i> {
    /// The pair (`BTC/USD`).
    pub symbol: &'i str,
    /// Its precisions, or why they cannot be had: a field absent
    /// (`Missing`), or not a number of at most [`MAX_SCALE`] decimals
    /// (`Type`), naming the field.
    pub precision: Result<Precision, DecodeError>,
}

impl<'i> Pairs<'i> {
    /// Each pair.
    pub fn iter(&self) -> impl Iterator<Item = Result<Pair<'i>, DecodeError>> + use<'i> {
        let mut c = Cursor::new(self.pairs, Numbers::Any);
        std::iter::from_fn(move || {
            let Val::Object(p) = c.next_val()? else {
                return Some(Err(DecodeError::Type("pair")));
            };
            let (mut symbol, mut price, mut qty) = (None, None, None);
            let read = scan::object(p, Numbers::Any, |k, v| match (k, v) {
                ("symbol", Val::Str(s)) => symbol = Some(s),
                ("price_precision", v) => price = Some(v),
                ("qty_precision", v) => qty = Some(v),
                _ => {}
            });
            let digits = |v: Option<Val<'_>>, key: &'static str| match v {
                None => Err(DecodeError::Missing(key)),
                Some(v) => v
                    .as_u64()
                    .and_then(|d| u8::try_from(d).ok())
                    .filter(|d| *d <= MAX_SCALE)
                    .ok_or(DecodeError::Type(key)),
            };
            Some(match (read, symbol) {
                (Some(()), Some(symbol)) => Ok(Pair {
                    symbol,
                    precision: digits(price, "price_precision").and_then(|price| {
                        Ok(Precision {
                            price,
                            qty: digits(qty, "qty_precision")?,
                        })
                    }),
                }),
                (None, _) => Err(DecodeError::Type("pair")),
                (_, None) => Err(DecodeError::Missing("symbol")),
            })
        })
    }
}

/// A refused request, in Kraken's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal<'i> {
    /// The request's `method` (`subscribe`, `unsubscribe`, `ping`; `error`
    /// for a request Kraken could not read), empty if none.
    pub method: &'i str,
    /// Kraken's words (`error`).
    pub error: &'i str,
    /// The symbol refused, for a refusal of one symbol of a subscription.
    pub symbol: Option<&'i str>,
    /// The request's `req_id`, echoed.
    pub req_id: Option<u64>,
}

/// Kraken's words when a symbol is subscribed twice on one connection
/// (live capture, a peer's log of 2025-12-20): the request is refused, the
/// subscription already in force stays.
pub const ALREADY_SUBSCRIBED: &str = "Already subscribed";

impl<'i> BookData<'i> {
    /// One side's levels: the price and quantity texts as sent.
    pub fn levels(
        &self,
        side: Side,
    ) -> impl Iterator<Item = Result<(&'i str, &'i str), DecodeError>> + use<'i> {
        let mut c = Cursor::new(
            match side {
                Side::Bid => self.bids,
                Side::Ask => self.asks,
            },
            Numbers::Any,
        );
        std::iter::from_fn(move || {
            let Val::Object(level) = c.next_val()? else {
                return Some(Err(DecodeError::Type("price level")));
            };
            let (mut price, mut qty) = (None, None);
            let read = scan::object(level, Numbers::Any, |k, v| match (k, v) {
                ("price", Val::Num(n)) => price = Some(n),
                ("qty", Val::Num(n)) => qty = Some(n),
                _ => {}
            });
            Some(match (read, price, qty) {
                (Some(()), Some(p), Some(q)) => Ok((p, q)),
                _ => Err(DecodeError::Type("price level")),
            })
        })
    }
}

/// A string field, if present; a field of another type is an error.
fn string_field<'i>(
    v: Option<Val<'i>>,
    what: &'static str,
) -> Result<Option<&'i str>, DecodeError> {
    match v {
        None => Ok(None),
        Some(Val::Str(s)) => Ok(Some(s)),
        Some(_) => Err(DecodeError::Type(what)),
    }
}

/// Decodes one v2 message (its text).
pub fn decode(text: &str) -> Result<Message<'_>, DecodeError> {
    let (mut channel, mut kind, mut data, mut method) = (None, None, None, None);
    let (mut success, mut error, mut symbol, mut req_id) = (None, None, None, None);
    scan::object(text, Numbers::Any, |k, v| match k {
        "channel" => channel = Some(v),
        "type" => kind = Some(v),
        "data" => data = Some(v),
        "method" => method = Some(v),
        "success" => success = Some(v),
        // A capital `Error` is the shape one peer (NautilusTrader,
        // `common/consts.rs`) reports for "Exceeded msg rate".
        "error" | "Error" => error = Some(v),
        "symbol" => symbol = Some(v),
        "req_id" => req_id = v.as_u64(),
        _ => {}
    })
    .ok_or(DecodeError::Type("message"))?;
    if channel.is_none() && (error.is_some() || success == Some(Val::Bool(false))) {
        return Ok(Message::Refused(Refusal {
            method: string_field(method, "method")?.unwrap_or(""),
            error: string_field(error, "error")?.unwrap_or(""),
            symbol: string_field(symbol, "symbol")?,
            req_id,
        }));
    }
    let channel = match (channel, method) {
        (Some(Val::Str(c)), _) => c,
        (None, Some(Val::Str(m))) => return Ok(Message::Control(m)),
        _ => return Err(DecodeError::Missing("channel")),
    };
    match channel {
        "book" | "trade" | "ticker" | "instrument" => {}
        "heartbeat" | "status" => return Ok(Message::Control(channel)),
        other => return Ok(Message::Other(other)),
    }
    let snapshot = match kind {
        Some(Val::Str("snapshot")) => true,
        Some(Val::Str("update")) => false,
        _ => return Err(DecodeError::Type("type")),
    };
    if channel == "instrument" {
        let Some(Val::Object(data)) = data else {
            return Err(DecodeError::Type("data"));
        };
        let mut pairs = None;
        scan::object(data, Numbers::Any, |k, v| {
            if k == "pairs" {
                pairs = Some(v);
            }
        })
        .ok_or(DecodeError::Type("data"))?;
        let pairs = match pairs {
            None => "[]",
            Some(Val::Array(a)) if scan::valid(Val::Array(a), Numbers::Any, 0) => a,
            Some(_) => return Err(DecodeError::Type("pairs")),
        };
        return Ok(Message::Instruments(Pairs { snapshot, pairs }));
    }
    let Some(Val::Array(data)) = data else {
        return Err(DecodeError::Missing("data"));
    };
    if !scan::valid(Val::Array(data), Numbers::Any, 0) {
        return Err(DecodeError::Type("data"));
    }
    if channel == "trade" {
        return Ok(Message::Trades(Trades { snapshot, data }));
    }
    let Some(Val::Object(first)) = Cursor::new(data, Numbers::Any).next_val() else {
        return Err(DecodeError::Missing("data[0]"));
    };
    if channel == "ticker" {
        let (mut symbol, mut bid, mut bid_qty, mut ask, mut ask_qty, mut ts) =
            (None, None, None, None, None, None);
        scan::object(first, Numbers::Any, |k, v| match (k, v) {
            ("symbol", Val::Str(x)) => symbol = Some(x),
            ("bid", Val::Num(x)) => bid = Some(x),
            ("bid_qty", Val::Num(x)) => bid_qty = Some(x),
            ("ask", Val::Num(x)) => ask = Some(x),
            ("ask_qty", Val::Num(x)) => ask_qty = Some(x),
            ("timestamp", Val::Str(x)) => ts = Some(x),
            _ => {}
        })
        .ok_or(DecodeError::Type("data[0]"))?;
        return Ok(Message::Ticker(Ticker {
            symbol: symbol.ok_or(DecodeError::Missing("symbol"))?,
            bid: (
                bid.ok_or(DecodeError::Missing("bid"))?,
                bid_qty.ok_or(DecodeError::Missing("bid_qty"))?,
            ),
            ask: (
                ask.ok_or(DecodeError::Missing("ask"))?,
                ask_qty.ok_or(DecodeError::Missing("ask_qty"))?,
            ),
            timestamp: ts,
        }));
    }
    let (mut symbol, mut bids, mut asks, mut checksum, mut timestamp) =
        (None, None, None, None, None);
    scan::object(first, Numbers::Any, |k, v| match (k, v) {
        ("symbol", Val::Str(s)) => symbol = Some(s),
        ("bids", Val::Array(a)) => bids = Some(a),
        ("asks", Val::Array(a)) => asks = Some(a),
        ("checksum", v) => checksum = v.as_u64(),
        ("timestamp", Val::Str(s)) => timestamp = Some(s),
        _ => {}
    })
    .ok_or(DecodeError::Type("data[0]"))?;
    Ok(Message::Book(BookData {
        symbol: symbol.ok_or(DecodeError::Missing("symbol"))?,
        timestamp,
        snapshot,
        checksum: checksum
            .and_then(|c| u32::try_from(c).ok())
            .ok_or(DecodeError::Missing("checksum"))?,
        bids: bids.ok_or(DecodeError::Missing("bids"))?,
        asks: asks.ok_or(DecodeError::Missing("asks"))?,
    }))
}

/// Feeds a book message into `sync` (chain
/// [`Chain::Kraken`](crate::sync::Chain::Kraken), depth = the subscribed
/// depth), each value read at `scales` (price, size: at least the pair's
/// precisions, or a value that needs them is refused) and written back at
/// `precision` for the checksum, which is then checked. Returns whether it
/// matched.
pub fn feed_book_at(
    sync: &mut BookSync,
    book: &BookData<'_>,
    scales: (u8, u8),
    precision: Precision,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<bool, DecodeError> {
    let (ps, ss) = scales;
    let scale = move |side: Side| {
        move |level: Result<(&str, &str), DecodeError>| -> LevelResult {
            let (p, q) = level?;
            let mut level = crate::decimal::level(p, q, ps, ss)?;
            // The checksum writes every value with the pair's precision,
            // whatever digits the JSON number happened to have ("Spot
            // WebSocket v2 book checksum": Kraken's own sample pads each
            // value to the pair's precision).
            level.price_digits = precision.price;
            level.size_digits = precision.qty;
            Ok((side, level))
        }
    };
    let levels = crate::book::Sides::new(
        book.levels(Side::Ask).map(scale(Side::Ask)),
        book.levels(Side::Bid).map(scale(Side::Bid)),
    );
    sync.on_unsequenced(book.snapshot, 0, levels, emit)?;
    Ok(sync.verify(
        i64::from(book.checksum),
        |b| i64::from(super::v1::checksum(b, ps, ss)),
        emit,
    ))
}

/// [`feed_book_at`] with values kept at the pair's precisions themselves.
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_>,
    precision: Precision,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<bool, DecodeError> {
    feed_book_at(
        sync,
        book,
        (precision.price, precision.qty),
        precision,
        emit,
    )
}

/// Kraken spot v2 messages in, normalised [`Event`]s out, for one
/// connection's pairs (`BTC/USD`): `trade` as trades, `ticker` as quotes,
/// `book` kept in step by its checksum, refusals as `Rejected`.
///
/// Each [`InstrumentSpec`]'s depth is the depth shown (the subscription is
/// the smallest Kraken depth that holds it and the checksum's 10 levels,
/// [`plan::kraken::book_shape`](crate::kraken::plan::book_shape)); its
/// scales are how values are kept, which must hold the pair's precisions
/// ([`Venue::default_scales`](crate::Venue::default_scales) hold every
/// pair's).
///
/// The checksum needs each pair's exact precisions, which come from Kraken
/// itself: its `instrument` channel (subscribed first by the plan), or
/// [`set_precision`](Adapter::set_precision) ahead of time. A book message
/// of a pair whose precision is not known yet cannot be checked, so it is
/// not applied and the book stays invalid (counted in `unchecked_books`);
/// when the precision arrives, such a book asks for a fresh snapshot
/// (`Resync`: resubscribe it), which is then checked like any other. A
/// book whose checksum fails emits `Gap` then `Resync`.
pub struct Adapter {
    instruments: Instruments,
    /// Each instrument's precisions, once known.
    precisions: Vec<Option<Precision>>,
    /// A book message was refused for want of a precision: ask for a
    /// snapshot when it comes.
    waiting: Vec<bool>,
    /// Book messages whose checksum was compared (and matched).
    pub checksums_verified: u64,
    /// Book messages not applied because the pair's precision was not
    /// known yet.
    pub unchecked_books: u64,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::Kraken,
                crate::kraken::plan::book_shape,
            ),
            precisions: vec![None; instruments.len()],
            waiting: vec![false; instruments.len()],
            checksums_verified: 0,
            unchecked_books: 0,
        }
    }

    /// Gives a pair's precisions ahead of Kraken's `instrument` channel
    /// (from Kraken's REST `AssetPairs`, say); the channel's values replace
    /// them when they come. Returns false if the symbol is not in the
    /// table. A book already waiting for its precision asks for a snapshot
    /// at its next update.
    pub fn set_precision(&mut self, symbol: &str, precision: Precision) -> bool {
        let Some(id) = self.instruments.find(symbol) else {
            return false;
        };
        self.precisions[id.0 as usize] = Some(precision);
        true
    }

    /// A pair's precisions, once known.
    pub fn precision(&self, symbol: &str) -> Option<Precision> {
        self.precisions[self.instruments.find(symbol)?.0 as usize]
    }

    /// Decodes one message, `buf[..len]` (read in place, without
    /// simd-json: no padding needed), and emits its events.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let text = crate::adapter::text(buf, len)?;
        match decode(text)? {
            Message::Control(_) => Ok(Outcome::Control),
            Message::Other(_) => Ok(Outcome::Ignored),
            // An unsubscription refused ("Subscription Not Found", the
            // words a peer saw for unsubscribing what is not subscribed)
            // leaves the channel unsubscribed, which is what it asked for:
            // a resubscription's first half after the venue dropped the
            // subscription, no refusal to retry.
            Message::Refused(r) if r.method == "unsubscribe" => Ok(Outcome::Control),
            Message::Refused(r) => {
                // One symbol of a subscription refused: that instrument.
                // "Already subscribed" refuses the request, not the
                // subscription in force; other refusals name no symbol
                // (the text is searched for ours).
                let instrument = (r.method == "subscribe" && r.error != ALREADY_SUBSCRIBED)
                    .then(|| r.symbol.and_then(|s| self.instruments.find(s)))
                    .flatten();
                self.instruments
                    .reject(instrument, 0, r.error, recv_tsc, emit);
                Ok(Outcome::Rejected)
            }
            Message::Instruments(pairs) => {
                // Each pair's precisions are a fact of their own: a pair
                // that cannot be read does not keep the pairs after it
                // from being applied (which of ours would be would depend
                // on the order Kraken lists them in). The first such error
                // is returned once every pair has been read; the pair
                // keeps the precisions it had.
                let mut unread = None;
                for pair in pairs.iter() {
                    let pair = match pair {
                        Ok(pair) => pair,
                        Err(e) => {
                            unread.get_or_insert(e);
                            continue;
                        }
                    };
                    let Some(id) = self.instruments.find(pair.symbol) else {
                        continue;
                    };
                    let precision = match pair.precision {
                        Ok(precision) => precision,
                        Err(e) => {
                            unread.get_or_insert(e);
                            continue;
                        }
                    };
                    let i = id.0 as usize;
                    self.precisions[i] = Some(precision);
                    if std::mem::take(&mut self.waiting[i]) {
                        // Its messages were all held back: the book has
                        // never been fed, so it waits for a snapshot
                        // without having asked (never valid, nothing to
                        // invalidate). `Resync`: resubscribe it.
                        self.instruments
                            .feed_book(id, 0, recv_tsc, emit, |_, sync, emit| {
                                sync.request_snapshot(&mut { emit });
                                Ok(true)
                            })?;
                    }
                }
                match unread {
                    Some(e) => Err(e),
                    None => Ok(Outcome::Control),
                }
            }
            // History, already seen by a feed that was connected: only
            // trades as they happen are emitted (tardis-node maps only
            // `update` trades too).
            Message::Trades(trades) if trades.snapshot => Ok(Outcome::Ignored),
            Message::Trades(trades) => {
                let trades = trades.iter().map(|t| {
                    let t = t?;
                    Ok(WireTrade {
                        symbol: t.symbol.into(),
                        price: t.price,
                        size: t.qty,
                        aggressor: taker(t.side),
                        trade_id: t.trade_id,
                        exchange_ns: rfc3339_ns(t.timestamp).unwrap_or(0),
                    })
                });
                self.instruments.trades(trades, recv_tsc, emit)
            }
            Message::Ticker(q) => {
                let quote = WireQuote {
                    bid: q.bid,
                    ask: q.ask,
                    // A ticker carries no update id.
                    update_id: 0,
                    exchange_ns: q.timestamp.and_then(rfc3339_ns).unwrap_or(0),
                };
                self.instruments.quote(q.symbol, quote, recv_tsc, emit)
            }
            Message::Book(book) => self.book_message(&book, recv_tsc, emit),
        }
    }

    /// One book message: checked at the pair's precision, or held back
    /// until it is known.
    fn book_message(
        &mut self,
        book: &BookData<'_>,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let Adapter {
            instruments,
            precisions,
            waiting,
            checksums_verified,
            unchecked_books,
        } = self;
        let Some(id) = instruments.find(book.symbol) else {
            return Ok(Outcome::Ignored);
        };
        let i = id.0 as usize;
        let exchange_ns = book.timestamp.and_then(rfc3339_ns).unwrap_or(0);
        instruments.feed_book(id, exchange_ns, recv_tsc, emit, |spec, sync, emit| {
            // Not applied, the book left invalid: its checksum cannot be
            // checked yet. Still the book's message (`Data`).
            let Some(precision) = precisions[i] else {
                waiting[i] = true;
                *unchecked_books += 1;
                return Ok(true);
            };
            let scales = (spec.price_scale, spec.size_scale);
            let verified = feed_book_at(sync, book, scales, precision, &mut { emit })?;
            *checksums_verified += u64::from(verified);
            Ok(true)
        })
    }

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid. Precisions are kept (the next
    /// connection's `instrument` snapshot brings them again).
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.waiting.fill(false);
        self.instruments.disconnect(recv_tsc, emit);
    }
}

// With every line down, as at a disconnect: precisions are kept, and the
// books wait for none.
crate::adapter::venue_adapter!(Adapter, |a: &mut Adapter, open: [bool; 2]| {
    if !open[0] && !open[1] {
        a.waiting.fill(false);
    }
});

#[cfg(test)]
mod tests;
