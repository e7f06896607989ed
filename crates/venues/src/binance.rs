//! Binance spot, USD-M and COIN-M futures market streams: trade, aggTrade,
//! bookTicker and diff depth, raw or wrapped in a combined stream, and the
//! REST depth snapshot. Decoded from the simd-json tape; strings borrow the
//! payload, numbers in strings stay strings until [`crate::decimal`] scales
//! them.

use simd_json::prelude::*;
use simd_json::tape::Value;

use crate::error::DecodeError;

/// One decoded Binance message.
#[derive(Debug)]
pub enum Message<'t, 'i> {
    /// `<symbol>@trade`.
    Trade(Trade<'i>),
    /// `<symbol>@aggTrade` (`id` is the aggregate trade id).
    AggTrade(Trade<'i>),
    /// `<symbol>@bookTicker`.
    BookTicker(BookTicker<'i>),
    /// `<symbol>@depth[@100ms|@0ms|...]`.
    Depth(Depth<'t, 'i>),
    /// The REST depth snapshot (`/api/v3/depth`, `/fapi/v1/depth`, `/dapi/v1/depth`).
    Snapshot(Snapshot<'t, 'i>),
    /// A reply to a request (`{"result":null,"id":1}`): not market data.
    Control,
    /// A request refused: `{"error":{"code":2,"msg":"Invalid request:
    /// invalid stream"},"id":1}` as the streams send it (the error nested
    /// under `error`; the docs print it flat, `{"code":..,"msg":..}`, which
    /// is read too). Binance acknowledges a stream of a symbol that does
    /// not exist and sends nothing for it; only a malformed request, a
    /// 1025th stream (code 4, "Too many subscriptions") and the like are
    /// refused.
    Error {
        /// `code`.
        code: i64,
        /// `msg`, as sent.
        msg: &'i str,
    },
    /// A market event of a type this adapter does not decode (its `e`).
    Other(&'i str),
}

/// A trade or an aggregate trade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade<'i> {
    /// The symbol, as Binance spells it (`BTCUSDT`).
    pub symbol: &'i str,
    /// Trade id (`t`), or aggregate trade id (`a`).
    pub id: u64,
    /// Price, as sent.
    pub price: &'i str,
    /// Quantity, as sent.
    pub qty: &'i str,
    /// Trade time (`T`), ms since the Unix epoch.
    pub trade_time_ms: u64,
    /// Event time (`E`), ms since the Unix epoch.
    pub event_time_ms: u64,
    /// `m`: the buyer was the maker (so the aggressor sold).
    pub buyer_is_maker: bool,
}

/// Best bid and ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookTicker<'i> {
    /// The symbol.
    pub symbol: &'i str,
    /// Order book update id (`u`).
    pub update_id: u64,
    /// Best bid price and quantity, as sent.
    pub bid: (&'i str, &'i str),
    /// Best ask price and quantity, as sent.
    pub ask: (&'i str, &'i str),
    /// Event time (`E`, futures only), ms since the Unix epoch.
    pub event_time_ms: Option<u64>,
}

pub use crate::json::Levels;

/// A diff depth event.
#[derive(Clone, Copy, Debug)]
pub struct Depth<'t, 'i> {
    /// The symbol.
    pub symbol: &'i str,
    /// First update id in the event (`U`).
    pub first_id: u64,
    /// Last update id in the event (`u`).
    pub last_id: u64,
    /// The previous event's last update id (`pu`, futures only).
    pub prev_last_id: Option<u64>,
    /// Event time (`E`), ms since the Unix epoch.
    pub event_time_ms: u64,
    /// A partial-depth event (`@depth5/10/20`, known from the combined
    /// stream's name): the whole top of the book, not a diff. Never feed it
    /// to a [`BookSync`](crate::sync::BookSync).
    pub partial: bool,
    /// Bid levels (quantity 0 removes the level).
    pub bids: Levels<'t, 'i>,
    /// Ask levels.
    pub asks: Levels<'t, 'i>,
}

/// A REST depth snapshot.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'t, 'i> {
    /// `lastUpdateId`.
    pub last_update_id: u64,
    /// Bid levels, best first.
    pub bids: Levels<'t, 'i>,
    /// Ask levels, best first.
    pub asks: Levels<'t, 'i>,
}

use crate::json::{levels_field as levels_of, str_field as str_of, u64_field as u64_of};

/// Decodes a parsed Binance message (a combined-stream envelope or a raw
/// event, or a REST depth snapshot).
pub fn decode<'t, 'i>(doc: Value<'t, 'i>) -> Result<Message<'t, 'i>, DecodeError> {
    if !doc.is_object() {
        return Err(DecodeError::Type("message"));
    }
    let (data, stream) = match (doc.get("data"), doc.get("stream")) {
        (Some(data), Some(stream)) => (data, stream.into_string()),
        _ => (doc, None),
    };
    // `<symbol>@depth5`, `@depth10`, `@depth20` (optionally `@100ms`): the
    // top levels, whole, every time; not diffs.
    let partial = stream.is_some_and(|s| {
        s.split_once("@depth")
            .is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit()))
    });
    if let Some(all) = data.as_array() {
        // `!<stream>@arr` streams: every symbol at once (mark prices,
        // tickers); not decoded here.
        let e = all
            .get(0)
            .and_then(|first| first.get("e"))
            .and_then(|e| e.into_string())
            .unwrap_or("array");
        return Ok(Message::Other(e));
    }
    if data.contains_key("lastUpdateId") {
        return Ok(Message::Snapshot(Snapshot {
            last_update_id: u64_of(&data, "lastUpdateId")?,
            bids: levels_of(&data, "bids")?,
            asks: levels_of(&data, "asks")?,
        }));
    }
    let error = |e: &Value<'t, 'i>| -> Result<Message<'t, 'i>, DecodeError> {
        Ok(Message::Error {
            code: e
                .get("code")
                .ok_or(DecodeError::Missing("code"))?
                .as_i64()
                .ok_or(DecodeError::Type("code"))?,
            msg: str_of(e, "msg")?,
        })
    };
    let event = match data.get("e") {
        Some(e) => e.into_string().ok_or(DecodeError::Type("e"))?,
        // Spot bookTicker has no event type.
        None if data.contains_key("u") && data.contains_key("b") => "bookTicker",
        None if data.contains_key("error") => {
            return error(&data.get("error").ok_or(DecodeError::Missing("error"))?);
        }
        None if data.contains_key("code") && data.contains_key("msg") => return error(&data),
        None if data.contains_key("result") => return Ok(Message::Control),
        None => return Err(DecodeError::Missing("e")),
    };
    let buyer_is_maker = |v: &Value<'_, '_>| {
        v.get("m")
            .ok_or(DecodeError::Missing("m"))?
            .as_bool()
            .ok_or(DecodeError::Type("m"))
    };
    Ok(match event {
        "trade" => Message::Trade(Trade {
            symbol: str_of(&data, "s")?,
            id: u64_of(&data, "t")?,
            price: str_of(&data, "p")?,
            qty: str_of(&data, "q")?,
            trade_time_ms: u64_of(&data, "T")?,
            event_time_ms: u64_of(&data, "E")?,
            buyer_is_maker: buyer_is_maker(&data)?,
        }),
        "aggTrade" => Message::AggTrade(Trade {
            symbol: str_of(&data, "s")?,
            id: u64_of(&data, "a")?,
            price: str_of(&data, "p")?,
            qty: str_of(&data, "q")?,
            trade_time_ms: u64_of(&data, "T")?,
            event_time_ms: u64_of(&data, "E")?,
            buyer_is_maker: buyer_is_maker(&data)?,
        }),
        "bookTicker" => Message::BookTicker(BookTicker {
            symbol: str_of(&data, "s")?,
            update_id: u64_of(&data, "u")?,
            bid: (str_of(&data, "b")?, str_of(&data, "B")?),
            ask: (str_of(&data, "a")?, str_of(&data, "A")?),
            event_time_ms: data.get("E").and_then(|v| v.as_u64()),
        }),
        "depthUpdate" => Message::Depth(Depth {
            symbol: str_of(&data, "s")?,
            first_id: u64_of(&data, "U")?,
            last_id: u64_of(&data, "u")?,
            // Partial-depth events carry `"pu":-1`: no previous event.
            prev_last_id: match data.get("pu") {
                Some(pu) => match pu.as_i64() {
                    Some(-1) => None,
                    _ => Some(pu.as_u64().ok_or(DecodeError::Type("pu"))?),
                },
                None => None,
            },
            partial,
            event_time_ms: u64_of(&data, "E")?,
            bids: levels_of(&data, "b")?,
            asks: levels_of(&data, "a")?,
        }),
        other => Message::Other(other),
    })
}

/// The decimal scales of one instrument's prices and quantities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scales {
    /// Decimal places kept in prices.
    pub price: u8,
    /// Decimal places kept in quantities.
    pub qty: u8,
}

fn scaled_levels<'a>(
    bids: Levels<'a, 'a>,
    asks: Levels<'a, 'a>,
    scales: Scales,
) -> impl Iterator<Item = crate::sync::LevelResult> + 'a {
    use crate::book::Side;
    bids.scaled(Side::Bid, scales.price, scales.qty)
        .chain(asks.scaled(Side::Ask, scales.price, scales.qty))
}

/// Feeds a diff depth event into `sync` (whose chain must be
/// [`Chain::BinanceSpot`](crate::sync::Chain::BinanceSpot) for spot and
/// [`Chain::BinanceFutures`](crate::sync::Chain::BinanceFutures) for
/// USD-M and COIN-M).
pub fn feed_depth(
    sync: &mut crate::sync::BookSync,
    depth: &Depth<'_, '_>,
    scales: Scales,
    emit: &mut impl FnMut(crate::sync::SyncEvent),
) -> Result<(), DecodeError> {
    let seq = crate::sync::Seq {
        first: depth.first_id,
        last: depth.last_id,
        prev: depth.prev_last_id,
    };
    sync.on_diff(seq, scaled_levels(depth.bids, depth.asks, scales), emit)
}

/// Feeds a REST depth snapshot into `sync`, its `limit` not told: each
/// side ends at its worst level (see [`feed_snapshot_at`]).
pub fn feed_snapshot(
    sync: &mut crate::sync::BookSync,
    snapshot: &Snapshot<'_, '_>,
    scales: Scales,
    emit: &mut impl FnMut(crate::sync::SyncEvent),
) -> Result<(), DecodeError> {
    feed_snapshot_at(sync, snapshot, scales, Limit::Unknown, emit)
}

/// [`feed_snapshot`] of a snapshot fetched with `limit` (the request's
/// `limit=`): a side with fewer levels is the market's whole side, one
/// with as many may go on below (see [`crate::book`]).
pub fn feed_snapshot_at(
    sync: &mut crate::sync::BookSync,
    snapshot: &Snapshot<'_, '_>,
    scales: Scales,
    limit: Limit,
    emit: &mut impl FnMut(crate::sync::SyncEvent),
) -> Result<(), DecodeError> {
    sync.on_snapshot_at(
        snapshot.last_update_id,
        limit,
        scaled_levels(snapshot.bids, snapshot.asks, scales),
        emit,
    )
}

use crate::book::Limit;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{INPUT_PADDING, JsonParser};

    /// Decodes `text` (padded) and hands the message to `check`.
    fn with(text: &str, check: impl FnOnce(Message<'_, '_>)) {
        crate::json::with_doc(text, |doc| check(decode(doc).unwrap()));
    }

    // The fixtures below follow the examples in Binance's public API
    // documentation (spot "Trade Streams", "Diff. Depth Stream",
    // "Individual Symbol Book Ticker Streams"; futures "Diff. Book Depth
    // Streams"), written here by hand.

    #[test]
    fn trade() {
        with(
            r#"{"e":"trade","E":1672515782136,"s":"BNBBTC","t":12345,"p":"0.001","q":"100","T":1672515782136,"m":true,"M":true}"#,
            |m| {
                let Message::Trade(t) = m else {
                    panic!("{m:?}")
                };
                assert_eq!(
                    t,
                    Trade {
                        symbol: "BNBBTC",
                        id: 12345,
                        price: "0.001",
                        qty: "100",
                        trade_time_ms: 1672515782136,
                        event_time_ms: 1672515782136,
                        buyer_is_maker: true,
                    }
                );
            },
        );
    }

    #[test]
    fn combined_stream_depth_and_futures_pu() {
        with(
            r#"{"stream":"bnbbtc@depth","data":{"e":"depthUpdate","E":1672515782136,"s":"BNBBTC","U":157,"u":160,"b":[["0.0024","10"]],"a":[["0.0026","100"],["0.0027","0"]]}}"#,
            |m| {
                let Message::Depth(d) = m else {
                    panic!("{m:?}")
                };
                assert_eq!(
                    (d.symbol, d.first_id, d.last_id, d.prev_last_id),
                    ("BNBBTC", 157, 160, None)
                );
                assert!(!d.partial);
                let bids: Vec<_> = d.bids.iter().map(Result::unwrap).collect();
                let asks: Vec<_> = d.asks.iter().map(Result::unwrap).collect();
                assert_eq!(bids, [("0.0024", "10")]);
                assert_eq!(asks, [("0.0026", "100"), ("0.0027", "0")]);
            },
        );
        with(
            r#"{"e":"depthUpdate","E":123456789,"T":123456788,"s":"BTCUSDT","U":157,"u":160,"pu":149,"b":[["0.0024","10"]],"a":[["0.0026","100"]]}"#,
            |m| {
                let Message::Depth(d) = m else {
                    panic!("{m:?}")
                };
                assert_eq!(d.prev_last_id, Some(149));
            },
        );
        with(
            r#"{"stream":"btcusdt@depth5@100ms","data":{"e":"depthUpdate","E":1,"T":1,"s":"BTCUSDT","U":7,"u":9,"pu":-1,"b":[],"a":[]}}"#,
            |m| {
                let Message::Depth(d) = m else {
                    panic!("{m:?}")
                };
                assert!(d.partial);
                assert_eq!(d.prev_last_id, None);
            },
        );
    }

    #[test]
    fn book_ticker_snapshot_and_control() {
        with(
            r#"{"u":400900217,"s":"BNBUSDT","b":"25.35190000","B":"31.21000000","a":"25.36520000","A":"40.66000000"}"#,
            |m| {
                let Message::BookTicker(t) = m else {
                    panic!("{m:?}")
                };
                assert_eq!(t.update_id, 400900217);
                assert_eq!(t.bid, ("25.35190000", "31.21000000"));
                assert_eq!(t.ask, ("25.36520000", "40.66000000"));
                assert_eq!(t.event_time_ms, None);
            },
        );
        with(
            r#"{"lastUpdateId":1027024,"bids":[["4.00000000","431.00000000"]],"asks":[["4.00000200","12.00000000"]]}"#,
            |m| {
                let Message::Snapshot(s) = m else {
                    panic!("{m:?}")
                };
                assert_eq!(
                    (s.last_update_id, s.bids.len(), s.asks.len()),
                    (1027024, 1, 1)
                );
            },
        );
        with(r#"{"result":null,"id":1}"#, |m| {
            assert!(matches!(m, Message::Control))
        });
        with(r#"{"code":2,"msg":"Invalid request"}"#, |m| {
            assert!(matches!(
                m,
                Message::Error {
                    code: 2,
                    msg: "Invalid request"
                }
            ))
        });
        with(
            r#"{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":7}"#,
            |m| {
                assert!(matches!(
                    m,
                    Message::Error {
                        code: 2,
                        msg: "Invalid request: invalid stream"
                    }
                ))
            },
        );
        with(r#"{"e":"kline","E":1,"s":"X","k":{}}"#, |m| {
            assert!(matches!(m, Message::Other("kline")))
        });
    }

    #[test]
    fn malformed_messages_are_typed_errors() {
        for (text, want) in [
            (
                r#"{"e":"trade","E":1,"s":"X","t":1,"p":"1","q":"1","T":1}"#,
                DecodeError::Missing("m"),
            ),
            (
                r#"{"e":"trade","E":1,"s":"X","t":"1","p":"1","q":"1","T":1,"m":true}"#,
                DecodeError::Type("t"),
            ),
            (
                r#"{"e":"depthUpdate","E":1,"s":"X","U":1,"u":2,"b":{},"a":[]}"#,
                DecodeError::Type("b"),
            ),
            (r#"[1,2,3]"#, DecodeError::Type("message")),
            (r#"{"x":1}"#, DecodeError::Missing("e")),
        ] {
            let mut buf = text.as_bytes().to_vec();
            buf.resize(text.len() + INPUT_PADDING, b' ');
            let got = JsonParser::default()
                .parse(&mut buf, text.len(), |doc| decode(doc).map(|_| ()))
                .unwrap();
            assert_eq!(got, Err(want), "{text}");
        }
        // A bad level surfaces when the levels are read.
        with(
            r#"{"e":"depthUpdate","E":1,"s":"X","U":1,"u":2,"b":[["1"]],"a":[]}"#,
            |m| {
                let Message::Depth(d) = m else { panic!() };
                assert_eq!(
                    d.bids.iter().next(),
                    Some(Err(DecodeError::Type("price level")))
                );
            },
        );
        let mut buf = b"{\"e\":".to_vec();
        let len = buf.len();
        buf.resize(len + INPUT_PADDING, b' ');
        assert!(JsonParser::default().parse(&mut buf, len, |_| ()).is_err());
    }
}

/// Decodes Binance messages: the one-pass [`scan`] for flat messages
/// (trades, book tickers: most of the traffic), simd-json for the rest. Reuses its buffers: no allocation per
/// message once warm.
pub struct Decoder {
    parser: JsonParser,
    /// Where the levels of a depth update in a fixed layout are, found
    /// while checking them (see [`Levels`]).
    marks: Vec<[u32; 4]>,
}

/// Depth levels a [`Decoder`] marks while checking them; an update with
/// more (a rare, large diff) is read from its text instead.
const MARKED_LEVELS: usize = 2048;

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
        if let Some(text) = buf.get(..len).and_then(crate::adapter::utf8) {
            if let Some(m) = fixed::read(text, &mut self.marks) {
                return f(Ok(m));
            }
            if let Some(m) = scan_general(text) {
                return f(Ok(m));
            }
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

use crate::json::JsonParser;
use crate::scan::{self, Numbers, Val};

/// The fields a Binance message can have, first occurrence of each.
#[derive(Default)]
struct Fields<'i> {
    e: Option<Val<'i>>,
    big_e: Option<Val<'i>>,
    s: Option<Val<'i>>,
    t: Option<Val<'i>>,
    a: Option<Val<'i>>,
    p: Option<Val<'i>>,
    q: Option<Val<'i>>,
    big_t: Option<Val<'i>>,
    m: Option<Val<'i>>,
    big_u: Option<Val<'i>>,
    u: Option<Val<'i>>,
    pu: Option<Val<'i>>,
    b: Option<Val<'i>>,
    big_b: Option<Val<'i>>,
    big_a: Option<Val<'i>>,
    last_update_id: Option<Val<'i>>,
    bids: Option<Val<'i>>,
    asks: Option<Val<'i>>,
    result: bool,
    code: bool,
    stream: Option<Val<'i>>,
    data: Option<Val<'i>>,
    /// A repeated key or nested JSON that is not valid: give up.
    bad: bool,
}

impl<'i> Fields<'i> {
    fn of(text: &'i str) -> Option<Fields<'i>> {
        let mut f = Fields::default();
        scan::object(text, Numbers::Integers, |key, v| {
            if matches!(v, Val::Array(_) | Val::Object(_)) && !scan::valid(v, Numbers::Integers, 0)
            {
                f.bad = true;
            }
            let slot = match key {
                "e" => &mut f.e,
                "E" => &mut f.big_e,
                "s" => &mut f.s,
                "t" => &mut f.t,
                "a" => &mut f.a,
                "p" => &mut f.p,
                "q" => &mut f.q,
                "T" => &mut f.big_t,
                "m" => &mut f.m,
                "U" => &mut f.big_u,
                "u" => &mut f.u,
                "pu" => &mut f.pu,
                "b" => &mut f.b,
                "B" => &mut f.big_b,
                "A" => &mut f.big_a,
                "lastUpdateId" => &mut f.last_update_id,
                "bids" => &mut f.bids,
                "asks" => &mut f.asks,
                "stream" => &mut f.stream,
                "data" => &mut f.data,
                "result" => {
                    f.bad |= f.result;
                    f.result = true;
                    return;
                }
                "code" => {
                    f.bad |= f.code;
                    f.code = true;
                    return;
                }
                _ => return,
            };
            if slot.is_some() {
                f.bad = true;
            }
            *slot = Some(v);
        })?;
        (!f.bad).then_some(f)
    }
}

fn text(v: Option<Val<'_>>) -> Option<&str> {
    match v? {
        Val::Str(s) => Some(s),
        _ => None,
    }
}

/// The one-pass path, without simd-json: first [`scan_fixed`] (Binance's
/// exact layouts, depth updates included), then a general scanner for
/// other flat messages (trade, aggTrade, bookTicker, replies, other
/// events; no string escapes), read exactly as [`decode`] reads them;
/// `None` means "use simd-json" ([`Decoder`] does both). REST snapshots,
/// and depth updates in any other layout, always get `None`: the general
/// scanner reads level arrays slower than simd-json. Checked against
/// [`decode`] on every recorded message and by the fuzzer.
pub fn scan<'i>(text_in: &'i str) -> Option<Message<'i, 'i>> {
    scan_fixed(text_in).or_else(|| scan_general(text_in))
}

/// [`scan`] past the fixed layouts.
fn scan_general(text_in: &str) -> Option<Message<'_, '_>> {
    let mut f = Fields::of(text_in)?;
    if let (Some(data), Some(stream)) = (f.data, f.stream) {
        // A combined-stream envelope: the event is inside.
        let (Val::Object(inner), Val::Str(_)) = (data, stream) else {
            return None;
        };
        f = Fields::of(inner)?;
    }
    if f.last_update_id.is_some() {
        // Level arrays: simd-json's vectorised pass reads them faster than
        // this scanner validates and walks them (BENCHMARKS.md).
        return None;
    }
    let event = match f.e {
        Some(e) => text(Some(e))?,
        None if f.u.is_some() && f.b.is_some() => "bookTicker",
        // An error goes to `decode`: its fields are nested.
        None if f.result && !f.code => return Some(Message::Control),
        None => return None,
    };
    let bool_of = |v: Option<Val<'_>>| match v? {
        Val::Bool(b) => Some(b),
        _ => None,
    };
    Some(match event {
        "trade" | "aggTrade" => {
            let trade = Trade {
                symbol: text(f.s)?,
                id: if event == "trade" { f.t } else { f.a }?.as_u64()?,
                price: text(f.p)?,
                qty: text(f.q)?,
                trade_time_ms: f.big_t?.as_u64()?,
                event_time_ms: f.big_e?.as_u64()?,
                buyer_is_maker: bool_of(f.m)?,
            };
            if event == "trade" {
                Message::Trade(trade)
            } else {
                Message::AggTrade(trade)
            }
        }
        "bookTicker" => Message::BookTicker(BookTicker {
            symbol: text(f.s)?,
            update_id: f.u?.as_u64()?,
            bid: (text(f.b)?, text(f.big_b)?),
            ask: (text(f.a)?, text(f.big_a)?),
            // The tape path reads `E` leniently; only a clean one here.
            event_time_ms: match f.big_e {
                None => None,
                Some(v) => Some(v.as_u64()?),
            },
        }),
        "depthUpdate" => return None,
        _ => Message::Other(event),
    })
}

/// Which Binance market: it decides the depth chain rule and the
/// endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Market {
    /// Spot (`stream.binance.com`, `api.binance.com/api/v3/depth`).
    Spot,
    /// USD-M futures (`fstream.binance.com`, `fapi.binance.com/fapi/v1/depth`).
    UsdM,
    /// COIN-M futures (`dstream.binance.com`, `dapi.binance.com/dapi/v1/depth`).
    CoinM,
}

impl Market {
    /// The depth chain rule of the market.
    pub fn chain(self) -> crate::sync::Chain {
        match self {
            Market::Spot => crate::sync::Chain::BinanceSpot,
            Market::UsdM | Market::CoinM => crate::sync::Chain::BinanceFutures,
        }
    }
}

use crate::adapter::{Instruments, Outcome, Stamp, Verdict, ms_to_ns};
use crate::event::{Aggressor, Event, InstrumentId, InstrumentSpec};

/// Binance messages in, normalised [`Event`]s out, for one connection's
/// instruments: trades and aggregate trades, book tickers as quotes, and
/// diff depth kept in step with REST snapshots.
///
/// The owner fetches a depth snapshot whenever a
/// [`Kind::Resync`](crate::Kind::Resync) event names a book, and hands the response to
/// [`Adapter::on_snapshot`]; diffs arriving meanwhile are buffered (the
/// one that bridges the snapshot usually arrives before the snapshot
/// does). Nothing allocates once the decoder has seen the largest message.
pub struct Adapter {
    market: Market,
    decoder: Decoder,
    instruments: Instruments,
}

impl Adapter {
    /// An adapter for `instruments` (symbols as Binance sends them in `s`:
    /// upper case, `BTCUSDT`; COIN-M `BTCUSD_PERP`), with their books.
    pub fn new(market: Market, instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            market,
            decoder: Decoder::new(),
            instruments: Instruments::new(instruments, market.chain(), move |depth| {
                crate::plan::binance::book_shape(market, depth)
            }),
        }
    }

    /// The market.
    pub fn market(&self) -> Market {
        self.market
    }

    /// The instruments, in [`InstrumentId`] order.
    pub fn instruments(&self) -> impl Iterator<Item = &InstrumentSpec> {
        self.instruments.specs()
    }

    /// Decodes one stream message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes (it is
    /// parsed in place), and emits its events. A message that cannot be
    /// read is an error and emits nothing, except that a depth diff whose
    /// levels cannot be read invalidates its book (`Gap`, `Resync`).
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let instruments = &mut self.instruments;
        self.decoder.decode(buf, len, |message| match message? {
            Message::Trade(t) | Message::AggTrade(t) => {
                let aggressor = if t.buyer_is_maker {
                    Aggressor::Sell
                } else {
                    Aggressor::Buy
                };
                let known = instruments.trade(
                    t.symbol,
                    t.price,
                    t.qty,
                    aggressor,
                    t.id,
                    ms_to_ns(t.trade_time_ms),
                    recv_tsc,
                    emit,
                )?;
                Ok(if known {
                    Outcome::Data
                } else {
                    Outcome::Ignored
                })
            }
            Message::BookTicker(q) => {
                let ns = q.event_time_ms.map_or(0, ms_to_ns);
                let known =
                    instruments.quote(q.symbol, q.bid, q.ask, q.update_id, ns, recv_tsc, emit)?;
                Ok(if known {
                    Outcome::Data
                } else {
                    Outcome::Ignored
                })
            }
            Message::Depth(d) if !d.partial => instruments.book_message(
                d.symbol,
                ms_to_ns(d.event_time_ms),
                recv_tsc,
                emit,
                |sync, price, qty, emit| feed_depth(sync, &d, Scales { price, qty }, &mut { emit }),
            ),
            // Partial depth (`@depth5`...) is the top of the book, whole:
            // not normalised into book events.
            Message::Depth(_) | Message::Other(_) => Ok(Outcome::Ignored),
            // A REST snapshot goes to `on_snapshot`, which knows its symbol.
            Message::Snapshot(_) => Err(DecodeError::Type("snapshot on the stream")),
            Message::Control => Ok(Outcome::Control),
            Message::Error { code, msg } => {
                // The reply names the request by its id only, not the
                // streams: the refusal concerns the connection.
                instruments.reject(None, code, msg, recv_tsc, emit);
                Ok(Outcome::Rejected)
            }
        })
    }

    /// Applies a REST depth snapshot (the body of `GET .../depth?symbol=..`,
    /// with the same padding as [`on_message`](Self::on_message)) to the
    /// book of `id`, replays the diffs buffered meanwhile, and emits the
    /// book (`BookSnapshot`, its levels, `BookValid`) if they bridge it.
    /// The request's `limit` is not told, so each side of the book ends
    /// at its worst level ([`Limit::Unknown`]): never wrong, but a side
    /// with fewer levels than the book shows cannot be known whole, so a
    /// thin market's book gaps (`DepthExhausted`) at once. A snapshot
    /// fetched as [`plan::binance::snapshot_path`](crate::plan::binance::snapshot_path)
    /// asks goes to [`on_snapshot_at`](Self::on_snapshot_at) with
    /// `Limit::Levels(plan::binance::snapshot_limit(market, depth))`: a side
    /// with fewer levels is then the market's whole side.
    pub fn on_snapshot(
        &mut self,
        id: InstrumentId,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        self.on_snapshot_at(id, Limit::Unknown, buf, len, recv_tsc, emit)
    }

    /// [`on_snapshot`](Self::on_snapshot) of a snapshot fetched with
    /// `limit` (the request's `limit=`, as [`plan::binance::snapshot_path`](crate::plan::binance::snapshot_path)
    /// asks): a side with fewer levels is the market's whole side. A limit
    /// above the market's deepest snapshot counts as that deepest (spot
    /// truncates `limit` to 5000), so a full 5000-level side is never
    /// taken for whole.
    pub fn on_snapshot_at(
        &mut self,
        id: InstrumentId,
        limit: Limit,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let limit = match limit {
            Limit::Levels(n) => Limit::Levels(n.min(crate::plan::binance::max_limit(self.market))),
            other => other,
        };
        let Some(instrument) = self.instruments.get_mut(id) else {
            return Ok(Outcome::Ignored);
        };
        let Some(sync) = instrument.sync.as_mut() else {
            return Ok(Outcome::Ignored);
        };
        let scales = Scales {
            price: instrument.spec.price_scale,
            qty: instrument.spec.size_scale,
        };
        self.decoder.decode(buf, len, |message| {
            let Message::Snapshot(s) = message? else {
                return Err(DecodeError::Missing("lastUpdateId"));
            };
            let stamp = Stamp {
                id,
                exchange_ns: 0,
                recv_tsc,
            };
            let mut verdict = Verdict::new(stamp, emit);
            feed_snapshot_at(sync, &s, scales, limit, &mut |e| verdict.on(e))
                .map_err(|e| e.at(id))?;
            verdict.finish(sync);
            Ok(Outcome::Data)
        })
    }

    /// The connection went down: emits `Disconnected`, then `Gap` for every
    /// book that was valid; its `Resync` (fetch the snapshot now) comes
    /// with the first diff of the new connection. A book not valid yet
    /// keeps its buffered diffs: update ids carry across connections, so
    /// they may yet bridge.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.instruments.disconnect(recv_tsc, emit);
    }
}

#[cfg(test)]
mod adapter_tests {
    use super::*;
    use crate::book::Side;
    use crate::event::Kind;
    use crate::json::INPUT_PADDING;
    use crate::sync::Resync;

    fn adapter() -> Adapter {
        Adapter::new(
            Market::Spot,
            &[
                InstrumentSpec::new("BNBBTC", 8, 8, 100),
                InstrumentSpec::new("ETHBTC", 6, 4, 0),
            ],
        )
    }

    fn feed(a: &mut Adapter, text: &str, tsc: u64) -> (Result<Outcome, DecodeError>, Vec<Event>) {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        let mut events = Vec::new();
        let r = a.on_message(&mut buf, text.len(), tsc, &mut |e| events.push(e));
        (r, events)
    }

    fn snapshot(a: &mut Adapter, text: &str) -> Vec<Event> {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        let mut events = Vec::new();
        let id = a.instrument("BNBBTC").unwrap();
        // The market's whole book: a side shorter than the shown depth is
        // all there is.
        a.on_snapshot_at(id, Limit::Whole, &mut buf, text.len(), 9, &mut |e| {
            events.push(e)
        })
        .unwrap();
        events
    }

    fn kinds(events: &[Event]) -> Vec<Kind> {
        events.iter().map(|e| e.kind).collect()
    }

    #[test]
    fn a_refused_request_is_a_rejection_with_binances_words() {
        let mut a = adapter();
        let (r, ev) = feed(
            &mut a,
            r#"{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":3}"#,
            1,
        );
        assert_eq!(r, Ok(Outcome::Rejected));
        // The reply names no stream: nothing is said of a book.
        assert!(ev.is_empty(), "{ev:?}");
        assert_eq!(
            crate::VenueAdapter::rejection(&a),
            "Invalid request: invalid stream"
        );
        let (r, _) = feed(&mut a, r#"{"result":null,"id":4}"#, 2);
        assert_eq!(r, Ok(Outcome::Control));
    }

    #[test]
    fn trades_and_quotes_are_exact_integers_with_both_stamps() {
        let mut a = adapter();
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"trade","E":1672515782136,"s":"BNBBTC","t":12345,"p":"0.001","q":"100","T":1672515782135,"m":true,"M":true}"#,
            77,
        );
        assert_eq!(r, Ok(Outcome::Data));
        assert_eq!(
            ev,
            [Event {
                instrument: InstrumentId(0),
                exchange_ns: 1_672_515_782_135_000_000,
                recv_tsc: 77,
                kind: Kind::Trade {
                    price: 100_000,
                    size: 10_000_000_000,
                    aggressor: Aggressor::Sell,
                    trade_id: 12345,
                },
            }]
        );
        let (_, ev) = feed(
            &mut a,
            r#"{"u":400900217,"s":"ETHBTC","b":"0.051","B":"31.2","a":"0.052","A":"40.66"}"#,
            78,
        );
        assert_eq!(ev[0].instrument, InstrumentId(1));
        assert_eq!(ev[0].exchange_ns, 0, "spot bookTicker has no time");
        assert_eq!(
            ev[0].kind,
            Kind::Quote {
                bid_price: 51_000,
                bid_size: 312_000,
                ask_price: 52_000,
                ask_size: 406_600,
                update_id: 400900217,
            }
        );
        // More digits than the instrument's scale: a typed error, nothing
        // emitted.
        let (r, ev) = feed(
            &mut a,
            r#"{"u":1,"s":"ETHBTC","b":"0.0510001","B":"1","a":"0.052","A":"1"}"#,
            79,
        );
        assert!(
            matches!(
                r,
                Err(DecodeError::Decimal(crate::BadDecimal {
                    field: "price",
                    ..
                }))
            ),
            "{r:?}"
        );
        assert!(ev.is_empty());
        // Unknown symbols, other channels and replies are told apart.
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"trade","E":1,"s":"XRPBTC","t":1,"p":"1","q":"1","T":1,"m":false}"#,
            0,
        );
        assert_eq!((r, ev.len()), (Ok(Outcome::Ignored), 0));
        let (r, _) = feed(&mut a, r#"{"result":null,"id":1}"#, 0);
        assert_eq!(r, Ok(Outcome::Control));
        let (r, _) = feed(&mut a, r#"{"e":"kline","E":1,"s":"BNBBTC","k":{}}"#, 0);
        assert_eq!(r, Ok(Outcome::Ignored));
    }

    #[test]
    fn the_book_is_silent_until_the_snapshot_is_bridged_then_speaks_in_deltas() {
        let mut a = adapter();
        // Before any snapshot: a request for one, nothing about the book.
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1000,"s":"BNBBTC","U":157,"u":160,"b":[["0.0024","10"]],"a":[["0.0026","100"]]}"#,
            1,
        );
        assert_eq!(kinds(&ev), [Kind::Resync]);
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1001,"s":"BNBBTC","U":161,"u":165,"b":[["0.0024","0"],["0.0023","5"]],"a":[]}"#,
            2,
        );
        assert!(ev.is_empty(), "{ev:?}");
        // The snapshot (at 158) is bridged by the buffered 157..160, and
        // 161..165 applies on top: the book is emitted once, whole.
        let ev = snapshot(
            &mut a,
            r#"{"lastUpdateId":158,"bids":[["0.0024","1"],["0.0022","2"]],"asks":[["0.0026","3"],["0.0030","4"]]}"#,
        );
        let d = |side, price, size, last| Kind::BookDelta {
            side,
            price,
            size,
            update_id: 165,
            last,
        };
        assert_eq!(
            kinds(&ev),
            [
                Kind::BookSnapshot {
                    update_id: 165,
                    bids: 2,
                    asks: 2,
                    depth: 100,
                },
                d(Side::Bid, 230_000, 500_000_000, false),
                d(Side::Bid, 220_000, 200_000_000, false),
                d(Side::Ask, 260_000, 10_000_000_000, false),
                d(Side::Ask, 300_000, 400_000_000, true),
                Kind::BookValid { update_id: 165 },
            ]
        );
        assert!(ev.iter().all(|e| e.recv_tsc == 9));
        // A chained diff: its levels, the last one marked.
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1002,"s":"BNBBTC","U":166,"u":166,"b":[["0.0022","0"]],"a":[["0.0027","1"]]}"#,
            3,
        );
        assert_eq!(
            kinds(&ev),
            [
                Kind::BookDelta {
                    side: Side::Bid,
                    price: 220_000,
                    size: 0,
                    update_id: 166,
                    last: false
                },
                Kind::BookDelta {
                    side: Side::Ask,
                    price: 270_000,
                    size: 100_000_000,
                    update_id: 166,
                    last: true
                },
            ]
        );
        assert_eq!(ev[0].exchange_ns, 1_002_000_000);
        // A gap: said once, a snapshot asked for, then silence.
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1003,"s":"BNBBTC","U":170,"u":171,"b":[],"a":[]}"#,
            4,
        );
        assert_eq!(
            kinds(&ev),
            [
                Kind::Gap {
                    why: Resync::Sequence {
                        expected: 167,
                        got: 170
                    }
                },
                Kind::Resync
            ]
        );
        assert!(a.book(InstrumentId(0)).is_none());
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1004,"s":"BNBBTC","U":172,"u":172,"b":[],"a":[]}"#,
            5,
        );
        assert!(ev.is_empty());
    }

    #[test]
    fn a_crossing_diff_is_a_gap_and_its_levels_are_never_emitted() {
        let mut a = adapter();
        let (r, _) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1,"s":"BNBBTC","U":10,"u":11,"b":[],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        snapshot(
            &mut a,
            r#"{"lastUpdateId":10,"bids":[["1.0","1"]],"asks":[["2.0","1"]]}"#,
        );
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":2,"s":"BNBBTC","U":12,"u":12,"b":[["3.0","1"]],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        assert_eq!(
            kinds(&ev),
            [
                Kind::Gap {
                    why: Resync::Crossed
                },
                Kind::Resync
            ]
        );
    }

    #[test]
    fn a_disconnect_gaps_every_valid_book_once() {
        let mut a = adapter();
        let (r, _) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1,"s":"BNBBTC","U":10,"u":11,"b":[],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        snapshot(
            &mut a,
            r#"{"lastUpdateId":10,"bids":[["1.0","1"]],"asks":[["2.0","1"]]}"#,
        );
        let mut ev = Vec::new();
        a.on_disconnect(42, &mut |e| ev.push(e));
        assert_eq!(
            kinds(&ev),
            [
                Kind::Disconnected,
                Kind::Gap {
                    why: Resync::Disconnected
                }
            ]
        );
        assert!(ev.iter().all(|e| e.recv_tsc == 42));
        ev.clear();
        a.on_disconnect(43, &mut |e| ev.push(e));
        assert_eq!(kinds(&ev), [Kind::Disconnected]);
        // The new connection's first diff asks for the snapshot, which
        // then bridges to it.
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":2,"s":"BNBBTC","U":20,"u":21,"b":[],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        assert_eq!(kinds(&ev), [Kind::Resync]);
        let ev = snapshot(
            &mut a,
            r#"{"lastUpdateId":20,"bids":[["1.0","1"]],"asks":[["2.0","1"]]}"#,
        );
        assert!(
            matches!(
                kinds(&ev)[..],
                [
                    Kind::BookSnapshot { .. },
                    ..,
                    Kind::BookValid { update_id: 21 }
                ]
            ),
            "{:?}",
            kinds(&ev)
        );
    }
}
crate::adapter::venue_adapter!(Adapter);

/// The first thing [`scan`] tries: trades, aggregate trades, book tickers
/// and depth updates in the exact layouts Binance sends them (spot, USD-M
/// and COIN-M, raw or in a combined stream), read by comparing bytes in
/// order; a depth update's levels are checked in the same pass and read
/// from the text later ([`Levels`]). `None` for anything else, however
/// valid.
pub fn scan_fixed(text: &str) -> Option<Message<'_, '_>> {
    fixed::read(text, &mut [])
}

/// The fixed layouts Binance sends its flat messages in, field after field:
/// read by comparing bytes, without looking keys up. Any difference (a
/// field added, reordered, whitespace, an escape) gives `None` and the
/// general scanner takes over. Each layout is its own straight-line
/// function: a table of layouts walked by one generic loop cost about
/// twice as much per message (BENCHMARKS.md).
mod fixed {
    use super::{BookTicker, Depth, Message, Trade};
    use crate::scan::Reader;

    /// Spot trade: e E s t p q T m M.
    fn spot_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
        let event_time_ms = c.uint()?;
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        c.key(br#","t":"#)?;
        let id = c.uint()?;
        c.key(br#","p":"#)?;
        let price = c.string()?;
        c.key(br#","q":"#)?;
        let qty = c.string()?;
        c.key(br#","T":"#)?;
        let trade_time_ms = c.uint()?;
        c.key(br#","m":"#)?;
        let buyer_is_maker = c.boolean()?;
        c.key(br#","M":"#)?;
        c.boolean()?;
        Some(Trade {
            event_time_ms,
            symbol,
            id,
            price,
            qty,
            trade_time_ms,
            buyer_is_maker,
        })
    }

    /// Futures trade: e E T s t p q X m.
    fn futures_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
        let event_time_ms = c.uint()?;
        c.key(br#","T":"#)?;
        let trade_time_ms = c.uint()?;
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        c.key(br#","t":"#)?;
        let id = c.uint()?;
        c.key(br#","p":"#)?;
        let price = c.string()?;
        c.key(br#","q":"#)?;
        let qty = c.string()?;
        c.key(br#","X":"#)?;
        c.string()?;
        c.key(br#","m":"#)?;
        let buyer_is_maker = c.boolean()?;
        Some(Trade {
            event_time_ms,
            symbol,
            id,
            price,
            qty,
            trade_time_ms,
            buyer_is_maker,
        })
    }

    /// Spot aggTrade: e E s a p q f l T m M.
    fn spot_agg_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
        let event_time_ms = c.uint()?;
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        c.key(br#","a":"#)?;
        let id = c.uint()?;
        let (price, qty, trade_time_ms, buyer_is_maker) = agg_rest(c)?;
        c.key(br#","M":"#)?;
        c.boolean()?;
        Some(Trade {
            event_time_ms,
            symbol,
            id,
            price,
            qty,
            trade_time_ms,
            buyer_is_maker,
        })
    }

    /// Futures aggTrade: e E a s p q f l T m.
    fn futures_agg_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
        let event_time_ms = c.uint()?;
        c.key(br#","a":"#)?;
        let id = c.uint()?;
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        let (price, qty, trade_time_ms, buyer_is_maker) = agg_rest(c)?;
        Some(Trade {
            event_time_ms,
            symbol,
            id,
            price,
            qty,
            trade_time_ms,
            buyer_is_maker,
        })
    }

    /// An aggTrade's p q f l T m, as spot and futures both send them.
    #[inline(always)]
    fn agg_rest<'i>(c: &mut Reader<'i>) -> Option<(&'i str, &'i str, u64, bool)> {
        c.key(br#","p":"#)?;
        let price = c.string()?;
        c.key(br#","q":"#)?;
        let qty = c.string()?;
        c.key(br#","f":"#)?;
        c.uint()?;
        c.key(br#","l":"#)?;
        c.uint()?;
        c.key(br#","T":"#)?;
        let trade_time_ms = c.uint()?;
        c.key(br#","m":"#)?;
        Some((price, qty, trade_time_ms, c.boolean()?))
    }

    /// A book ticker's b B a A.
    #[inline(always)]
    fn quotes<'i>(c: &mut Reader<'i>) -> Option<[&'i str; 4]> {
        c.key(br#","b":"#)?;
        let bid = c.string()?;
        c.key(br#","B":"#)?;
        let bid_qty = c.string()?;
        c.key(br#","a":"#)?;
        let ask = c.string()?;
        c.key(br#","A":"#)?;
        Some([bid, bid_qty, ask, c.string()?])
    }

    /// Spot bookTicker: u s b B a A.
    fn spot_ticker<'i>(c: &mut Reader<'i>) -> Option<BookTicker<'i>> {
        let update_id = c.uint()?;
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        let [b, bq, a, aq] = quotes(c)?;
        Some(BookTicker {
            update_id,
            symbol,
            bid: (b, bq),
            ask: (a, aq),
            event_time_ms: None,
        })
    }

    /// COIN-M bookTicker: u e s ps b B a A T E.
    fn coinm_ticker<'i>(c: &mut Reader<'i>) -> Option<BookTicker<'i>> {
        let update_id = c.uint()?;
        c.key(br#","e":"#)?;
        c.is("bookTicker")?;
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        c.key(br#","ps":"#)?;
        c.string()?;
        let [b, bq, a, aq] = quotes(c)?;
        c.key(br#","T":"#)?;
        c.uint()?;
        c.key(br#","E":"#)?;
        let event_time_ms = c.uint()?;
        Some(BookTicker {
            update_id,
            symbol,
            bid: (b, bq),
            ask: (a, aq),
            event_time_ms: Some(event_time_ms),
        })
    }

    /// USD-M bookTicker: e u s b B a A T E.
    fn usdm_ticker<'i>(c: &mut Reader<'i>) -> Option<BookTicker<'i>> {
        let update_id = c.uint()?;
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        let [b, bq, a, aq] = quotes(c)?;
        c.key(br#","T":"#)?;
        c.uint()?;
        c.key(br#","E":"#)?;
        let event_time_ms = c.uint()?;
        Some(BookTicker {
            update_id,
            symbol,
            bid: (b, bq),
            ask: (a, aq),
            event_time_ms: Some(event_time_ms),
        })
    }

    /// Depth updates: spot `e E s U u b a`, USD-M `e E T s U u pu b a`,
    /// COIN-M `e E T s ps U u pu b a`.
    fn depth<'t, 'i>(
        c: &mut Reader<'i>,
        partial: bool,
        marks: &mut &'t mut [[u32; 4]],
    ) -> Option<Depth<'t, 'i>> {
        let event_time_ms = c.uint()?;
        let futures = c.key(br#","T":"#).is_some();
        if futures {
            c.uint()?;
        }
        c.key(br#","s":"#)?;
        let symbol = c.string()?;
        if futures && c.key(br#","ps":"#).is_some() {
            c.string()?;
        }
        c.key(br#","U":"#)?;
        let first_id = c.uint()?;
        c.key(br#","u":"#)?;
        let last_id = c.uint()?;
        let prev_last_id = if futures {
            c.key(br#","pu":"#)?;
            Some(c.uint()?)
        } else {
            None
        };
        c.key(br#","b":"#)?;
        let bids = c.levels_into(2, marks)?;
        c.key(br#","a":"#)?;
        let asks = c.levels_into(2, marks)?;
        Some(Depth {
            symbol,
            first_id,
            last_id,
            prev_last_id,
            event_time_ms,
            partial,
            bids,
            asks,
        })
    }

    /// Reads a raw event occupying `s[i..]` up to its closing brace, which
    /// must be at `s.len() - tail`.
    fn event<'t, 'i>(
        s: &'i str,
        i: usize,
        tail: usize,
        partial: bool,
        marks: &mut &'t mut [[u32; 4]],
    ) -> Option<Message<'t, 'i>> {
        let rest = s.as_bytes().get(i..)?;
        // Each layout's first key and value, up to the value of its second
        // key, which is where each reader starts.
        let layout = |prefix: &[u8]| {
            rest.starts_with(prefix).then(|| Reader {
                s,
                at: i + prefix.len(),
            })
        };
        // Byte 2 (`e` or `u`) and byte 6 (the event's first letter) tell
        // the layouts apart.
        let m = match (rest.get(2)?, rest.get(6)?) {
            (b'e', b't') => {
                let start = layout(br#"{"e":"trade","E":"#)?;
                let mut c = Reader { ..start };
                spot_trade(&mut c)
                    .or_else(|| {
                        c = Reader { ..start };
                        futures_trade(&mut c)
                    })
                    .map(|t| (c.at, Message::Trade(t)))
            }
            (b'e', b'a') => {
                let start = layout(br#"{"e":"aggTrade","E":"#)?;
                let mut c = Reader { ..start };
                spot_agg_trade(&mut c)
                    .or_else(|| {
                        c = Reader { ..start };
                        futures_agg_trade(&mut c)
                    })
                    .map(|t| (c.at, Message::AggTrade(t)))
            }
            (b'e', b'd') => {
                let mut c = layout(br#"{"e":"depthUpdate","E":"#)?;
                depth(&mut c, partial, marks).map(|d| (c.at, Message::Depth(d)))
            }
            (b'e', b'b') => {
                let mut c = layout(br#"{"e":"bookTicker","u":"#)?;
                usdm_ticker(&mut c).map(|t| (c.at, Message::BookTicker(t)))
            }
            (b'u', _) => {
                let start = layout(br#"{"u":"#)?;
                let mut c = Reader { ..start };
                spot_ticker(&mut c)
                    .or_else(|| {
                        c = Reader { ..start };
                        coinm_ticker(&mut c)
                    })
                    .map(|t| (c.at, Message::BookTicker(t)))
            }
            _ => None,
        };
        let (at, m) = m?;
        Reader { s, at }.close(tail)?;
        Some(m)
    }

    /// A raw event, or one wrapped in a combined-stream envelope
    /// (`{"stream":"...","data":{...}}`), in a fixed layout. A depth
    /// update's level bounds go to the front of `marks` while they fit.
    pub(super) fn read<'t, 'i>(
        s: &'i str,
        mut marks: &'t mut [[u32; 4]],
    ) -> Option<Message<'t, 'i>> {
        const STREAM: &[u8] = br#"{"stream":""#;
        let b = s.as_bytes();
        if !b.starts_with(STREAM) {
            return event(s, 0, 0, false, &mut marks);
        }
        let mut c = Reader {
            s,
            at: STREAM.len() - 1,
        };
        let stream = c.string()?;
        // `<symbol>@depth5`, `@depth10`, `@depth20`: the top, whole, not
        // diffs (as `decode` reads the stream name).
        let sb = stream.as_bytes();
        let partial = sb
            .windows(6)
            .position(|w| w == b"@depth")
            .is_some_and(|at| sb.get(at + 6).is_some_and(u8::is_ascii_digit));
        c.key(br#","data":"#)?;
        // The envelope's closing brace must be the last byte.
        if b.last() != Some(&b'}') {
            return None;
        }
        event(s, c.at, 1, partial, &mut marks)
    }
}
