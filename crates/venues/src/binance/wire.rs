//! Binance's messages read: each into one [`Message`], by the first of
//! three paths that takes it ([`Decoder`] tries them in this order; see
//! [`super`]).

pub use crate::json::Levels;

use super::{decode, scan};
use crate::error::DecodeError;
use crate::json::JsonParser;

/// Whether a combined stream's name is a partial book depth's,
/// `<symbol>@depth5`, `@depth10`, `@depth20` (optionally `@100ms`): the top
/// levels, whole, every time, not diffs. Binance names a stream
/// `<symbol>@<channel>`, the symbol in lower case with no `@` ("Websocket
/// Market Streams": "Stream Names are in the form <symbol>@<channel>";
/// "Partial Book Depth Streams": `<symbol>@depth<levels>` or
/// `<symbol>@depth<levels>@100ms`; "Diff. Depth Stream": `<symbol>@depth`
/// or `<symbol>@depth@100ms`), so the channel starts after the first `@`.
#[inline]
pub(crate) fn partial_depth(stream: &[u8]) -> bool {
    let Some(at) = stream.iter().position(|&b| b == b'@') else {
        return false;
    };
    let channel = &stream[at + 1..];
    channel.starts_with(b"depth") && channel.get(5).is_some_and(u8::is_ascii_digit)
}

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

/// Decodes Binance messages: the one-pass [`scan`] for flat messages
/// (trades, book tickers: most of the traffic), simd-json for the rest. Reuses its buffers: no allocation per
/// message once warm.
pub struct Decoder {
    parser: JsonParser,
    /// Where the levels of a depth update in a fixed layout are, found
    /// while checking them (see [`Levels`]).
    marks: Vec<[u32; 4]>,
    /// Their prices and quantities, read with them when they have
    /// Binance's shape.
    values: Vec<crate::json::ReadLevel>,
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
            values: vec![crate::json::ReadLevel::default(); MARKED_LEVELS],
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
        self.decode_input((buf, len), f)
    }

    /// [`decode`](Self::decode) of a message as its transport hands it
    /// over: text the transport checked is not checked again.
    pub fn decode_input<'a, R>(
        &mut self,
        input: impl crate::adapter::Input<'a>,
        f: impl for<'t, 'i> FnOnce(Result<Message<'t, 'i>, DecodeError>) -> R,
    ) -> R {
        let checked = input.text();
        let mut f = Some(f);
        let (buf, len) = match checked {
            Some(text) => {
                if let Some(r) = self.scan(text, &mut f) {
                    return r;
                }
                input.into_padded()
            }
            None => {
                let (buf, len) = input.into_padded();
                if let Some(text) = buf.get(..len).and_then(crate::adapter::utf8)
                    && let Some(r) = self.scan(text, &mut f)
                {
                    return r;
                }
                (buf, len)
            }
        };
        match self.parser.parse(buf, len, |doc| {
            (f.take().expect("called once"))(decode(doc))
        }) {
            Ok(r) => r,
            Err(e) => (f.take().expect("not called"))(Err(DecodeError::Json(e))),
        }
    }

    /// The scanners' reading of `text` handed to `f` (taken), if one reads
    /// it: the fixed layouts, then the flat general scanner.
    #[inline]
    fn scan<R>(
        &mut self,
        text: &str,
        f: &mut Option<impl for<'t, 'i> FnOnce(Result<Message<'t, 'i>, DecodeError>) -> R>,
    ) -> Option<R> {
        let m = match scan::scan_fixed_marked(text, &mut self.marks, &mut self.values) {
            Some(m) => m,
            None => scan::scan_general(text)?,
        };
        Some((f.take().expect("taken only here, once"))(Ok(m)))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Partial depth by its stream's name, whichever scanner reads the
    /// message: the fixed layouts and simd-json's tape agree.
    #[test]
    fn partial_depth_streams_by_name() {
        for (stream, partial) in [
            ("btcusdt@depth5", true),
            ("btcusdt@depth10@100ms", true),
            ("btcusdt@depth20@500ms", true),
            ("btcusdt@depth", false),
            ("btcusdt@depth@100ms", false),
            ("btcusdt@depth@0ms", false),
            ("btcusdt@trade", false),
            ("btcusdt@bookTicker", false),
            ("depth5", false),
            ("", false),
        ] {
            assert_eq!(partial_depth(stream.as_bytes()), partial, "{stream}");
            let text = format!(
                r#"{{"stream":"{stream}","data":{{"e":"depthUpdate","E":1,"s":"BTCUSDT","U":7,"u":9,"b":[],"a":[]}}}}"#
            );
            let (mut marks, mut values) = ([[0u32; 4]; 4], [crate::json::ReadLevel::default(); 4]);
            let Some(Message::Depth(d)) = scan::scan_fixed_marked(&text, &mut marks, &mut values)
            else {
                panic!("{text}")
            };
            assert_eq!(d.partial, partial, "fixed layout: {stream}");
            crate::json::with_doc(&text, |doc| {
                let Ok(Message::Depth(d)) = decode(doc) else {
                    panic!("{text}")
                };
                assert_eq!(d.partial, partial, "tape: {stream}");
            });
        }
    }
}
