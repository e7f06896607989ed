//! OKX v5 public channels: `books` / `books-l2-tbt` / `books50-l2-tbt`
//! (snapshot and updates, `seqId`/`prevSeqId`, the CRC32 checksum where it
//! is not 0: OKX has sent 0 since June 2026), `bbo-tbt`,
//! `trades`, and the `event` replies (acknowledgements, and errors as
//! refusals).

pub mod listing;
pub mod plan;

use simd_json::prelude::*;
use simd_json::tape::{Array, Value};

use crate::adapter::{Instruments, Outcome, WireQuote, WireTrade, best, ms_to_ns, taker};
use crate::book::{Book, Level, Limit, Side};
use crate::crc_text;
use crate::error::DecodeError;
use crate::event::{Event, InstrumentSpec};
use crate::json::str_field as str_of;
use crate::json::{JsonParser, Levels};
use crate::sync::{BookSync, Seq, SyncEvent};

/// One decoded OKX message.
#[derive(Debug)]
pub enum Message<'t, 'i> {
    /// A book channel's snapshot or update (also `bbo-tbt`, whose every
    /// message is a one-level snapshot).
    Book(BookData<'t, 'i>),
    /// `trades`: one or more trades.
    Trades(Trades<'t, 'i>),
    /// `{"event": ...}` other than an error or a notice: subscribe,
    /// unsubscribe, login, channel-conn-count.
    Event(&'i str),
    /// `{"event":"error","code":"60018","msg":"...","connId":...}`: a
    /// request refused. OKX sends no `arg` with it: the instrument, if
    /// any, is named only in `msg` (`"Wrong URL or
    /// channel:books,instId:BTC-USDT doesn't exist. ..."`).
    Error {
        /// The code (a string of digits on the wire; 0 if it is not one).
        code: i64,
        /// OKX's words.
        msg: &'i str,
    },
    /// `{"event":"notice","code":"64008","msg":"...","connId":...}`: the
    /// venue tells the connection something (`64008`: it will soon be
    /// closed for a service upgrade).
    Notice {
        /// The code (a string of digits on the wire; 0 if it is not one).
        code: i64,
    },
    /// A channel this adapter does not decode (its name).
    Other(&'i str),
}

/// The notice that the connection "will soon be closed for a service
/// upgrade": pushed to public (and private) connections ahead of the
/// upgrade, "60 seconds" before it in the current English API v5 docs
/// (30 in older and Chinese versions), the client to connect anew
/// ("Notification", WebSocket overview). nautilus_trader's OKX adapter
/// reconnects on it too.
pub const SERVICE_UPGRADE: i64 = 64008;

/// Snapshot or update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The whole book (sent on subscribe).
    Snapshot,
    /// Changes: size 0 removes a level.
    Update,
}

/// A book message.
#[derive(Clone, Copy, Debug)]
pub struct BookData<'t, 'i> {
    /// `books`, `books-l2-tbt`, `books50-l2-tbt`, `bbo-tbt`, `books5`.
    pub channel: &'i str,
    /// The instrument (`BTC-USDT`).
    pub inst_id: &'i str,
    /// Snapshot or update (`bbo-tbt` and `books5` send no action: each
    /// message is a snapshot).
    pub action: Action,
    /// Asks, best first: `[price, size, "0", orders]`.
    pub asks: Levels<'t, 'i>,
    /// Bids, best first.
    pub bids: Levels<'t, 'i>,
    /// Time, ms since the Unix epoch.
    pub ts_ms: u64,
    /// The CRC32 OKX computed over its top 25 levels; 0 since OKX stopped
    /// computing it in June 2026 (see [`feed_book`]).
    pub checksum: Option<i64>,
    /// `seqId` (absent in recordings from before OKX added it).
    pub seq_id: Option<i64>,
    /// `prevSeqId` (-1 on a snapshot).
    pub prev_seq_id: Option<i64>,
}

/// The trades of a `trades` message.
#[derive(Clone, Copy)]
pub struct Trades<'t, 'i>(Array<'t, 'i>);

impl std::fmt::Debug for Trades<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One trade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade<'i> {
    /// The instrument.
    pub inst_id: &'i str,
    /// OKX's trade id (a string of digits).
    pub trade_id: &'i str,
    /// Price, as sent.
    pub px: &'i str,
    /// Size, as sent.
    pub sz: &'i str,
    /// The taker's side: `buy` or `sell`.
    pub side: &'i str,
    /// Time, ms since the Unix epoch.
    pub ts_ms: u64,
}

impl<'t, 'i> Trades<'t, 'i> {
    /// Each trade.
    pub fn iter(&self) -> impl Iterator<Item = Result<Trade<'i>, DecodeError>> + use<'t, 'i> {
        let all = self.0;
        all.iter().map(|t| {
            Ok(Trade {
                inst_id: str_of(&t, "instId")?,
                trade_id: str_of(&t, "tradeId")?,
                px: str_of(&t, "px")?,
                sz: str_of(&t, "sz")?,
                side: str_of(&t, "side")?,
                ts_ms: ms_of(&t, "ts")?,
            })
        })
    }
}

/// OKX sends times as strings of digits.
fn ms_of(v: &Value<'_, '_>, key: &'static str) -> Result<u64, DecodeError> {
    str_of(v, key)?.parse().map_err(|_| DecodeError::Type(key))
}

fn i64_opt(v: &Value<'_, '_>, key: &'static str) -> Result<Option<i64>, DecodeError> {
    match v.get(key) {
        None => Ok(None),
        Some(x) => x.as_i64().map(Some).ok_or(DecodeError::Type(key)),
    }
}

/// An error event's `code`: documented and sent as a string (`"60018"`,
/// OKX API v5 "Subscribe" and every capture), read as a number too.
fn error_code(doc: &Value<'_, '_>) -> Result<i64, DecodeError> {
    match doc.get("code") {
        None => Ok(0),
        Some(c) => match c.into_string() {
            Some(text) => Ok(text.parse().unwrap_or(0)),
            None => c.as_i64().ok_or(DecodeError::Type("code")),
        },
    }
}

/// Decodes a parsed OKX message.
pub fn decode<'t, 'i>(doc: Value<'t, 'i>) -> Result<Message<'t, 'i>, DecodeError> {
    if !doc.is_object() {
        return Err(DecodeError::Type("message"));
    }
    if let Some(event) = doc.get("event") {
        let event = event.into_string().ok_or(DecodeError::Type("event"))?;
        if event == "error" {
            return Ok(Message::Error {
                code: error_code(&doc)?,
                msg: match doc.get("msg") {
                    None => "",
                    Some(m) => m.into_string().ok_or(DecodeError::Type("msg"))?,
                },
            });
        }
        if event == "notice" {
            return Ok(Message::Notice {
                code: error_code(&doc)?,
            });
        }
        return Ok(Message::Event(event));
    }
    let arg = doc.get("arg").ok_or(DecodeError::Missing("arg"))?;
    let channel = str_of(&arg, "channel")?;
    let data = doc
        .get("data")
        .ok_or(DecodeError::Missing("data"))?
        .as_array()
        .ok_or(DecodeError::Type("data"))?;
    match channel {
        "trades" | "trades-all" => Ok(Message::Trades(Trades(data))),
        "books" | "books-l2-tbt" | "books50-l2-tbt" | "books5" | "bbo-tbt" => {
            let book = data.get(0).ok_or(DecodeError::Missing("data[0]"))?;
            let levels = |key: &'static str| {
                book.get(key)
                    .ok_or(DecodeError::Missing(key))?
                    .as_array()
                    .map(Levels::tape)
                    .ok_or(DecodeError::Type(key))
            };
            let action = match doc.get("action") {
                None => Action::Snapshot,
                Some(a) => match a.into_string() {
                    Some("snapshot") => Action::Snapshot,
                    Some("update") => Action::Update,
                    _ => return Err(DecodeError::Type("action")),
                },
            };
            Ok(Message::Book(BookData {
                channel,
                inst_id: str_of(&arg, "instId")?,
                action,
                asks: levels("asks")?,
                bids: levels("bids")?,
                ts_ms: ms_of(&book, "ts")?,
                checksum: i64_opt(&book, "checksum")?,
                seq_id: i64_opt(&book, "seqId")?,
                prev_seq_id: i64_opt(&book, "prevSeqId")?,
            }))
        }
        other => Ok(Message::Other(other)),
    }
}

/// Book messages (`books`, `books-l2-tbt`, `books50-l2-tbt`, `books5`,
/// `bbo-tbt`) in the exact layout OKX sends them, read by comparing bytes
/// in order, levels checked in the same pass and read from the text later
/// ([`Levels`]): `{"arg":{"channel":..,"instId":..},"action":..,"data":[
/// {"asks":[..],"bids":[..], then "ts", "checksum", "prevSeqId", "seqId"
/// (and `books5`'s "instId") in any order}]}`. `None` for anything else, however valid (trades,
/// events, whitespace, escapes, a field OKX adds): [`decode`] reads those.
pub fn scan_fixed(s: &str) -> Option<Message<'_, '_>> {
    fixed(s, &mut &mut [][..])
}

/// [`scan_fixed`], keeping the bounds of the levels' prices and sizes in
/// the front of `marks` while they fit (so reading them later finds them
/// without another scan).
fn fixed<'t, 'i>(s: &'i str, marks: &mut &'t mut [[u32; 4]]) -> Option<Message<'t, 'i>> {
    use crate::scan::Reader;
    const ARG: &[u8] = br#"{"arg":{"channel":"#;
    if !s.as_bytes().starts_with(ARG) {
        return None;
    }
    let mut r = Reader { s, at: ARG.len() };
    let channel = r.string()?;
    if !matches!(
        channel,
        "books" | "books-l2-tbt" | "books50-l2-tbt" | "books5" | "bbo-tbt"
    ) {
        return None;
    }
    r.key(br#","instId":"#)?;
    let inst_id = r.string()?;
    let action = if r.key(br#"},"action":"#).is_some() {
        let action = match r.string()? {
            "snapshot" => Action::Snapshot,
            "update" => Action::Update,
            _ => return None,
        };
        r.key(br#","data":[{"asks":"#)?;
        action
    } else {
        r.key(br#"},"data":[{"asks":"#)?;
        Action::Snapshot
    };
    let asks = r.levels_into(4, marks)?;
    r.key(br#","bids":"#)?;
    let bids = r.levels_into(4, marks)?;
    let (mut ts_ms, mut checksum, mut seq_id, mut prev_seq_id) = (None, None, None, None);
    let mut data_inst_id = None;
    // Each once, in any order (a repeated key: the general path).
    fn once<T>(slot: &mut Option<T>, v: Option<T>) -> Option<()> {
        match slot {
            Some(_) => None,
            None => {
                *slot = Some(v?);
                Some(())
            }
        }
    }
    while r.key(b"}]}").is_none() {
        if r.key(br#","ts":"#).is_some() {
            once(&mut ts_ms, r.string()?.parse().ok())?;
        } else if r.key(br#","checksum":"#).is_some() {
            once(&mut checksum, r.int())?;
        } else if r.key(br#","seqId":"#).is_some() {
            once(&mut seq_id, r.int())?;
        } else if r.key(br#","prevSeqId":"#).is_some() {
            once(&mut prev_seq_id, r.int())?;
        } else if r.key(br#","instId":"#).is_some() {
            // `books5` repeats the instrument here.
            once(&mut data_inst_id, r.string())?;
        } else {
            return None;
        }
    }
    (r.at == s.len()).then_some(())?;
    Some(Message::Book(BookData {
        channel,
        inst_id,
        action,
        asks,
        bids,
        ts_ms: ts_ms?,
        checksum,
        seq_id,
        prev_seq_id,
    }))
}

/// Decodes OKX messages: book messages by [`scan_fixed`] (most of the
/// traffic), simd-json for the rest. Reuses its buffers: no allocation per
/// message once warm.
pub struct Decoder {
    parser: JsonParser,
    /// Where the levels of a book message in the fixed layout are.
    marks: Vec<[u32; 4]>,
}

/// Levels a [`Decoder`] marks while checking them (`books` snapshots have
/// 400 a side); a message with more is read from its text instead.
const MARKED_LEVELS: usize = 1024;

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder with a parser sized for 64 KiB messages.
    pub fn new() -> Decoder {
        Decoder {
            parser: JsonParser::new(64 * 1024),
            marks: vec![[0; 4]; MARKED_LEVELS],
        }
    }

    /// Decodes `buf[..len]` (followed by [`INPUT_PADDING`](crate::json::INPUT_PADDING)
    /// bytes) and hands the result to `f`.
    pub fn decode<R>(
        &mut self,
        buf: &mut [u8],
        len: usize,
        f: impl for<'t, 'i> FnOnce(Result<Message<'t, 'i>, DecodeError>) -> R,
    ) -> R {
        if let Some(text) = buf.get(..len).and_then(crate::adapter::utf8)
            && let Some(m) = fixed(text, &mut &mut self.marks[..])
        {
            return f(Ok(m));
        }
        let mut f = Some(f);
        match self.parser.parse(buf, len, |doc| {
            (f.take().expect("called once"))(decode(doc))
        }) {
            Ok(r) => r,
            Err(e) => (f.take().expect("not called"))(Err(DecodeError::Json(e))),
        }
    }
}

/// OKX's book checksum: CRC32 of the top 25 levels as
/// `bid1px:bid1sz:ask1px:ask1sz:bid2px:...` (a side that runs out is
/// skipped), with the wire strings as sent, as a signed 32-bit integer.
/// Rebuilt from the book's values and wire digit counts, without
/// allocating.
pub fn checksum(book: &Book, price_scale: u8, size_scale: u8) -> i64 {
    let (bids, asks) = (book.kept(Side::Bid), book.kept(Side::Ask));
    let both = bids.len().min(asks.len()).min(25);
    // The longer side's levels past the shorter one's.
    let rest = if bids.len() > both { bids } else { asks };
    // The whole string in one stack buffer, one CRC update.
    let crc = crc_text::crc32::<2048>(|text| {
        let mut level = |l: &Level| {
            text.wire(l.price, price_scale, l.price_digits, b':');
            text.wire(l.size, size_scale, l.size_digits, b':');
        };
        for (bid, ask) in bids.iter().zip(asks.iter()).take(both) {
            level(bid);
            level(ask);
        }
        rest.iter().skip(both).take(25 - both).for_each(level);
        // Every field was followed by a ':'; the last one is not part of it.
        text.unbyte();
    });
    i64::from(crc as i32)
}

/// How many levels a side the book channel's window holds, which OKX keeps
/// complete (OKX API v5, "Order book channel": `books` and `books-l2-tbt`
/// push "400 depth levels", `books50-l2-tbt` 50, `books5` a 5-level
/// snapshot each time, `bbo-tbt` 1). A book that keeps fewer levels than
/// its snapshot's window tracks a horizon ([`crate::book`]).
fn channel_window(channel: &str) -> Limit {
    match channel {
        "books" | "books-l2-tbt" => Limit::Levels(plan::BOOK_LEVELS),
        "books50-l2-tbt" => Limit::Levels(50),
        "books5" => Limit::Levels(5),
        "bbo-tbt" => Limit::Levels(1),
        _ => Limit::Unknown,
    }
}

/// Feeds a book message into `sync` (chain [`Chain::OkxSeq`](crate::sync::Chain::OkxSeq)),
/// then checks OKX's checksum when it sends a real one. Returns whether a
/// checksum was compared and matched.
///
/// A checksum of 0, or none, means "no checksum", and is never compared.
/// OKX, "OKX Order Book Channels Checksum Field Deprecation" (21 May
/// 2026; demo trading from 2 June 2026, production from 23 June 2026): on
/// `books`, `books-l2-tbt` and `books50-l2-tbt` "the checksum field will
/// remain present in push messages but will always return 0 and must no
/// longer be used for data integrity validation"; integrity is `prevSeqId`
/// equal to the previous message's `seqId`, which `sync` checks whatever
/// the checksum. Any other value is verified: recorded days from before
/// carry real checksums. The cost of reading 0 as none is that a real
/// CRC32 that happens to be 0 (one message in 2^32 on those days) goes
/// unchecked; its `seqId` chain is still checked.
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_, '_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<bool, DecodeError> {
    let levels = crate::book::scaled_levels(&book.bids, Side::Bid, price_scale, size_scale).chain(
        crate::book::scaled_levels(&book.asks, Side::Ask, price_scale, size_scale),
    );
    let seq_id = book.seq_id.unwrap_or(0).max(0) as u64;
    match book.action {
        Action::Snapshot => {
            sync.on_snapshot_at(seq_id, channel_window(book.channel), levels, emit)?
        }
        Action::Update => {
            let seq = Seq {
                first: seq_id,
                last: seq_id,
                prev: book.prev_seq_id.map(|p| p.max(0) as u64),
            };
            sync.on_diff(seq, levels, emit)?;
        }
    }
    // 0: no checksum (OKX's deprecation, above).
    Ok(match book.checksum {
        Some(expected) if expected != 0 => {
            sync.verify(expected, |b| checksum(b, price_scale, size_scale), emit)
        }
        _ => false,
    })
}

/// OKX v5 messages in, normalised [`Event`]s out, for one connection's
/// instruments (`instId`, `BTC-USDT`): `trades` as trades, `bbo-tbt` as
/// quotes, and `books` / `books-l2-tbt` / `books50-l2-tbt` kept in step
/// (`seqId` chain, and OKX's checksum whenever it sends one that is not 0:
/// OKX has sent 0 since June 2026, [`feed_book`]).
///
/// A book that breaks emits `Gap` then `Resync`: its owner resubscribes
/// the book channel, and the next snapshot makes it valid again.
///
/// An `error` event is a refused request ([`Outcome::Rejected`]): OKX
/// answers each argument of a subscription on its own, and an error names
/// its argument only in its words (`"Wrong URL or
/// channel:books,instId:BTC-USDT doesn't exist. ..."`, code 60018: OKX API
/// v5, "Error Code", with `{0}` filled as live captures show), so
/// `Rejected` goes to the instruments those words name. Acknowledgements, `notice` (64008,
/// an upcoming service upgrade) and any other event are control
/// messages.
pub struct Adapter {
    decoder: Decoder,
    instruments: Instruments,
    /// Book messages whose checksum was compared (and matched).
    pub checksums_verified: u64,
}

impl Adapter {
    /// An adapter for `instruments`, with their books.
    pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            decoder: Decoder::new(),
            instruments: Instruments::new(
                instruments,
                crate::sync::Chain::OkxSeq,
                plan::book_shape,
            ),
            checksums_verified: 0,
        }
    }

    /// Decodes one message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes, and
    /// emits its events. OKX's `pong` (the answer to a text `ping`) is a
    /// control message.
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        if buf.get(..len) == Some(b"pong") {
            return Ok(Outcome::Control);
        }
        let Adapter {
            decoder,
            instruments,
            checksums_verified,
        } = self;
        decoder.decode(buf, len, |message| match message? {
            Message::Notice {
                code: SERVICE_UPGRADE,
            } => Ok(Outcome::Closing),
            Message::Event(_) | Message::Notice { .. } => Ok(Outcome::Control),
            // A refused request: `Rejected` for the instruments its words
            // name (OKX sends no `arg` with an error).
            Message::Error { code, msg } => {
                instruments.reject(None, code, msg, recv_tsc, emit);
                Ok(Outcome::Rejected)
            }
            Message::Other(_) => Ok(Outcome::Ignored),
            Message::Trades(trades) => {
                let trades = trades.iter().map(|t| {
                    let t = t?;
                    Ok(WireTrade {
                        symbol: t.inst_id,
                        price: t.px,
                        size: t.sz,
                        aggressor: taker(t.side),
                        trade_id: t.trade_id.parse().unwrap_or(0),
                        exchange_ns: ms_to_ns(t.ts_ms),
                    })
                });
                instruments.trades(trades, recv_tsc, emit)
            }
            Message::Book(book) => match book.channel {
                "books" | "books-l2-tbt" | "books50-l2-tbt" => instruments.book_message(
                    book.inst_id,
                    ms_to_ns(book.ts_ms),
                    recv_tsc,
                    emit,
                    |spec, sync, emit| {
                        let (ps, ss) = (spec.price_scale, spec.size_scale);
                        let verified = feed_book(sync, &book, ps, ss, &mut { emit })?;
                        *checksums_verified += u64::from(verified);
                        Ok(true)
                    },
                ),
                "bbo-tbt" => {
                    // Not read at all when not ours.
                    let Some(id) = instruments.find(book.inst_id) else {
                        return Ok(Outcome::Ignored);
                    };
                    let quote = WireQuote {
                        bid: best(&book.bids)?,
                        ask: best(&book.asks)?,
                        update_id: book.seq_id.unwrap_or(0).max(0) as u64,
                        exchange_ns: ms_to_ns(book.ts_ms),
                    };
                    instruments.quote_at(id, quote, recv_tsc, emit)
                }
                // `books5`: the top five, whole, every time.
                _ => Ok(Outcome::Ignored),
            },
        })
    }

    /// The connection went down: `Disconnected`, then `Gap` and `Resync`
    /// for every book that was valid.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.instruments.disconnect(recv_tsc, emit);
    }
}
crate::adapter::venue_adapter!(Adapter);

#[cfg(test)]
mod tests;
