//! OKX's messages read: the push and reply shapes of the v5 public
//! channels, decoded from simd-json's tape or, for the exact book layout,
//! by the scanner.

use crate::error::DecodeError;
use crate::json::str_field as str_of;
use crate::json::{JsonParser, Levels};
use simd_json::prelude::*;
use simd_json::tape::{Array, Value};

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
    /// computing it in June 2026 (see [`feed_book`](super::feed_book)).
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
