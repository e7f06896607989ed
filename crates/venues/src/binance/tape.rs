//! Binance messages read from the simd-json tape: every shape, nested or
//! not, as the documentation describes it.

use simd_json::prelude::*;
use simd_json::tape::Value;

use super::{BookTicker, Depth, Message, Snapshot, Trade};
use crate::error::DecodeError;
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
    let partial = stream.is_some_and(|s| super::partial_depth(s.as_bytes()));
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
