//! Kraken spot WebSocket v1: `book-N` (snapshot, updates, CRC32 checksum),
//! `trade`, and the `event` messages. Messages are arrays:
//! `[channelID, {payload}, ({payload},) channelName, pair]`.
//!
//! (v2 sends prices as JSON numbers; decoding those exactly needs the
//! number's text, which the tape does not keep: not done yet.)

use simd_json::prelude::*;
use simd_json::tape::{Array, Value};

use crate::book::{Book, Side};
use crate::decimal::{ZEROS, format_wire};
use crate::error::DecodeError;
use crate::json::Levels;
use crate::sync::{BookSync, SyncEvent};

/// One decoded Kraken v1 message.
#[derive(Debug)]
pub enum Message<'t, 'i> {
    /// A book snapshot (`as`/`bs`) or update (`a`/`b`, with `c`).
    Book(BookData<'t, 'i>),
    /// Trades: `[price, volume, time, side, orderType, misc]` each.
    Trades {
        /// The pair (`XBT/USD`).
        pair: &'i str,
        /// How many.
        count: usize,
    },
    /// `{"event": ...}`: heartbeat, systemStatus, subscriptionStatus, pong.
    Event(&'i str),
    /// Another channel (its name).
    Other(&'i str),
}

/// A book message.
#[derive(Clone, Copy, Debug)]
pub struct BookData<'t, 'i> {
    /// The pair.
    pub pair: &'i str,
    /// `book-10`, `book-1000`, ...
    pub channel: &'i str,
    /// Whether it is the snapshot.
    pub snapshot: bool,
    /// Ask levels (`as` or `a`): `[price, volume, timestamp(, "r")]`.
    pub asks: Option<Levels<'t, 'i>>,
    /// Bid levels (`bs` or `b`).
    pub bids: Option<Levels<'t, 'i>>,
    /// The checksum Kraken sends with updates.
    pub checksum: Option<u32>,
}

/// Decodes a parsed Kraken v1 message.
pub fn decode<'t, 'i>(doc: Value<'t, 'i>) -> Result<Message<'t, 'i>, DecodeError> {
    if let Some(event) = doc.get("event") {
        return Ok(Message::Event(
            event.into_string().ok_or(DecodeError::Type("event"))?,
        ));
    }
    let all: Array<'t, 'i> = doc.as_array().ok_or(DecodeError::Type("message"))?;
    let n = all.len();
    if n < 4 {
        return Err(DecodeError::Missing("channel name"));
    }
    let text = |i: usize, what: &'static str| {
        all.get(i)
            .and_then(|v| v.into_string())
            .ok_or(DecodeError::Type(what))
    };
    let (channel, pair) = (text(n - 2, "channel name")?, text(n - 1, "pair")?);
    if channel.starts_with("book-") {
        let mut book = BookData {
            pair,
            channel,
            snapshot: false,
            asks: None,
            bids: None,
            checksum: None,
        };
        for i in 1..n - 2 {
            let part = all.get(i).ok_or(DecodeError::Missing("book"))?;
            if !part.is_object() {
                return Err(DecodeError::Type("book"));
            }
            let levels = |key: &'static str| -> Result<Option<Levels<'t, 'i>>, DecodeError> {
                match part.get(key) {
                    None => Ok(None),
                    Some(v) => v
                        .as_array()
                        .map(|a| Some(Levels::tape(a)))
                        .ok_or(DecodeError::Type(key)),
                }
            };
            if let Some(a) = levels("as")? {
                book.snapshot = true;
                book.asks = Some(a);
            }
            if let Some(b) = levels("bs")? {
                book.snapshot = true;
                book.bids = Some(b);
            }
            if let Some(a) = levels("a")? {
                book.asks = Some(a);
            }
            if let Some(b) = levels("b")? {
                book.bids = Some(b);
            }
            if let Some(c) = part.get("c") {
                let c = c.into_string().ok_or(DecodeError::Type("c"))?;
                book.checksum = Some(c.parse().map_err(|_| DecodeError::Type("c"))?);
            }
        }
        return Ok(Message::Book(book));
    }
    if channel == "trade" {
        let trades = all
            .get(1)
            .and_then(|v| v.as_array())
            .ok_or(DecodeError::Type("trades"))?;
        return Ok(Message::Trades {
            pair,
            count: trades.len(),
        });
    }
    Ok(Message::Other(channel))
}

/// Kraken's book checksum: CRC32 over the top 10 asks (best first), then
/// the top 10 bids, each as its price then its volume, written as sent with
/// the decimal point removed and leading zeros stripped.
pub fn checksum(book: &Book, price_scale: u8, size_scale: u8) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    // The whole string in one stack buffer, one CRC update.
    let mut text = [0u8; 2048];
    let mut n = 0;
    for side in [Side::Ask, Side::Bid] {
        for level in book.levels(side).iter().take(10) {
            for (v, scale, digits) in [
                (level.price, price_scale, level.price_digits),
                (level.size, size_scale, level.size_digits),
            ] {
                if text.len() - n < 50 {
                    crc.update(&text[..n]);
                    n = 0;
                }
                let mut buf = [0u8; 48];
                let (len, mut zeros) = format_wire(v, scale, digits, &mut buf);
                // Digits without the point, leading zeros stripped.
                let mut leading = true;
                for &d in buf[..len].iter().filter(|&&b| b != b'.') {
                    if leading && d == b'0' {
                        continue;
                    }
                    leading = false;
                    text[n] = d;
                    n += 1;
                }
                if !leading && zeros > 0 {
                    crc.update(&text[..n]);
                    n = 0;
                    while zeros > 0 {
                        let k = zeros.min(ZEROS.len());
                        crc.update(&ZEROS[..k]);
                        zeros -= k;
                    }
                }
            }
        }
    }
    crc.update(&text[..n]);
    crc.finalize()
}

/// Feeds a book message into `sync` (chain [`Chain::Kraken`](crate::sync::Chain::Kraken),
/// depth = the subscribed depth: levels beyond it are dropped, as Kraken
/// requires) and checks the checksum when the message has one. Returns
/// whether a checksum was compared and matched.
pub fn feed_book(
    sync: &mut BookSync,
    book: &BookData<'_, '_>,
    price_scale: u8,
    size_scale: u8,
    emit: &mut impl FnMut(SyncEvent),
) -> Result<bool, DecodeError> {
    let asks = book
        .asks
        .into_iter()
        .flat_map(move |l| l.scaled(Side::Ask, price_scale, size_scale));
    let bids = book
        .bids
        .into_iter()
        .flat_map(move |l| l.scaled(Side::Bid, price_scale, size_scale));
    let levels = asks.chain(bids);
    sync.on_unsequenced(book.snapshot, levels, emit)?;
    Ok(match book.checksum {
        Some(expected) => sync.verify(
            i64::from(expected),
            |b| i64::from(checksum(b, price_scale, size_scale)),
            emit,
        ),
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Chain, Resync, SyncConfig};

    fn with(text: &str, f: impl FnOnce(Message<'_, '_>)) {
        crate::json::with_doc(text, |doc| f(decode(doc).unwrap()));
    }

    // Shapes from Kraken's v1 documentation ("book", "trade", checksum
    // guide); values ours.

    #[test]
    fn snapshot_then_two_part_update_with_checksum() {
        let mut sync = BookSync::new(
            Chain::Kraken,
            SyncConfig {
                depth: 10,
                ..SyncConfig::default()
            },
        );
        let mut events = Vec::new();
        with(
            r#"[0,{"as":[["5541.30000","2.50700000","1534614248.123678"],["5541.80000","0.33000000","1534614098.345543"]],"bs":[["5541.20000","1.52900000","1534614248.765567"],["5539.90000","0.30000000","1534614241.769870"]]},"book-10","XBT/USD"]"#,
            |m| {
                let Message::Book(b) = m else { panic!("{m:?}") };
                assert!(b.snapshot && b.checksum.is_none());
                feed_book(&mut sync, &b, 5, 8, &mut |e| events.push(e)).unwrap();
            },
        );
        assert_eq!(events, [SyncEvent::Valid { update_id: 0 }]);
        // The documented string: asks then bids, '.' removed, zeros stripped.
        let after = "5541300002507000005541800003300000055412000015290000055399000030000000";
        let want = crc32fast::hash(after.as_bytes());
        let update = format!(
            r#"[0,{{"a":[["5541.80000","0.33000000","1534614335.345903"]]}},{{"b":[["5541.20000","1.52900000","1534614335.345903"]],"c":"{want}"}},"book-10","XBT/USD"]"#
        );
        with(&update, |m| {
            let Message::Book(b) = m else { panic!() };
            assert!(!b.snapshot);
            assert_eq!(b.checksum, Some(want));
            assert!(feed_book(&mut sync, &b, 5, 8, &mut |e| events.push(e)).unwrap());
        });
        // A checksum that does not match invalidates the book.
        with(
            r#"[0,{"b":[["5541.20000","1.00000000","1534614335.345903"]],"c":"12345"},"book-10","XBT/USD"]"#,
            |m| {
                let Message::Book(b) = m else { panic!() };
                assert!(!feed_book(&mut sync, &b, 5, 8, &mut |e| events.push(e)).unwrap());
            },
        );
        assert!(matches!(events.last(), Some(SyncEvent::SnapshotNeeded)));
        assert!(events.iter().any(|e| matches!(
            e,
            SyncEvent::Gap(Resync::Checksum {
                expected: 12345,
                ..
            })
        )));
        assert!(sync.book().is_none());
    }

    #[test]
    fn events_and_trades() {
        with(r#"{"event":"heartbeat"}"#, |m| {
            assert!(matches!(m, Message::Event("heartbeat")))
        });
        with(
            r#"[0,[["5541.20000","0.15850568","1534614057.321597","s","l",""],["6060.00000","0.02455000","1534614057.324998","b","l",""]],"trade","XBT/USD"]"#,
            |m| {
                assert!(matches!(
                    m,
                    Message::Trades {
                        pair: "XBT/USD",
                        count: 2
                    }
                ))
            },
        );
        with(r#"[0,{"x":1},"ticker","XBT/USD"]"#, |m| {
            assert!(matches!(m, Message::Other("ticker")))
        });
    }
}

/// Kraken spot WebSocket v2 (`wss://ws.kraken.com/v2`): `book` snapshot and
/// updates with a checksum, read with the scanner in its any-number mode
/// because v2 sends prices and quantities as JSON numbers.
pub mod v2 {
    use crate::book::Side;
    use crate::error::DecodeError;
    use crate::scan::{self, Cursor, Numbers, Val};
    use crate::sync::{BookSync, LevelResult, SyncEvent};

    /// One decoded v2 message.
    #[derive(Debug)]
    pub enum Message<'i> {
        /// A `book` snapshot or update (the first entry of `data`).
        Book(BookData<'i>),
        /// `heartbeat`, `status`, or a reply to a `method` request.
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
        bids: &'i str,
        asks: &'i str,
    }

    /// A pair's precisions, from Kraken's instrument metadata: how many
    /// decimals its prices and quantities have. The checksum is computed
    /// over the values written with exactly these many decimals.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Precision {
        /// `price_precision`.
        pub price: u8,
        /// `qty_precision`.
        pub qty: u8,
    }

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

    /// Decodes one v2 message (its text).
    pub fn decode(text: &str) -> Result<Message<'_>, DecodeError> {
        let (mut channel, mut kind, mut data, mut method) = (None, None, None, None);
        scan::object(text, Numbers::Any, |k, v| match k {
            "channel" => channel = Some(v),
            "type" => kind = Some(v),
            "data" => data = Some(v),
            "method" => method = Some(v),
            _ => {}
        })
        .ok_or(DecodeError::Type("message"))?;
        let channel = match (channel, method) {
            (Some(Val::Str(c)), _) => c,
            (None, Some(Val::Str(m))) => return Ok(Message::Control(m)),
            _ => return Err(DecodeError::Missing("channel")),
        };
        match channel {
            "book" => {}
            "heartbeat" | "status" => return Ok(Message::Control(channel)),
            other => return Ok(Message::Other(other)),
        }
        let snapshot = match kind {
            Some(Val::Str("snapshot")) => true,
            Some(Val::Str("update")) => false,
            _ => return Err(DecodeError::Type("type")),
        };
        let Some(Val::Array(data)) = data else {
            return Err(DecodeError::Missing("data"));
        };
        if !scan::valid(Val::Array(data), Numbers::Any, 0) {
            return Err(DecodeError::Type("data"));
        }
        let Some(Val::Object(book)) = Cursor::new(data, Numbers::Any).next_val() else {
            return Err(DecodeError::Missing("data[0]"));
        };
        let (mut symbol, mut bids, mut asks, mut checksum) = (None, None, None, None);
        scan::object(book, Numbers::Any, |k, v| match (k, v) {
            ("symbol", Val::Str(s)) => symbol = Some(s),
            ("bids", Val::Array(a)) => bids = Some(a),
            ("asks", Val::Array(a)) => asks = Some(a),
            ("checksum", v) => checksum = v.as_u64(),
            _ => {}
        })
        .ok_or(DecodeError::Type("data[0]"))?;
        Ok(Message::Book(BookData {
            symbol: symbol.ok_or(DecodeError::Missing("symbol"))?,
            snapshot,
            checksum: checksum
                .and_then(|c| u32::try_from(c).ok())
                .ok_or(DecodeError::Missing("checksum"))?,
            bids: bids.ok_or(DecodeError::Missing("bids"))?,
            asks: asks.ok_or(DecodeError::Missing("asks"))?,
        }))
    }

    /// Feeds a book message into `sync` (chain
    /// [`Chain::Kraken`](crate::sync::Chain::Kraken), depth = the
    /// subscribed depth), values at the pair's precisions, then checks the
    /// checksum. Returns whether it matched.
    pub fn feed_book(
        sync: &mut BookSync,
        book: &BookData<'_>,
        precision: Precision,
        emit: &mut impl FnMut(SyncEvent),
    ) -> Result<bool, DecodeError> {
        let scale = move |side: Side| {
            move |level: Result<(&str, &str), DecodeError>| -> LevelResult {
                let (p, q) = level?;
                let mut level = crate::decimal::level(p, q, precision.price, precision.qty)?;
                // v2's checksum writes every value with the pair's precision,
                // whatever digits the JSON number happened to have.
                level.price_digits = precision.price;
                level.size_digits = precision.qty;
                Ok((side, level))
            }
        };
        let levels = book
            .levels(Side::Ask)
            .map(scale(Side::Ask))
            .chain(book.levels(Side::Bid).map(scale(Side::Bid)));
        sync.on_unsequenced(book.snapshot, levels, emit)?;
        Ok(sync.verify(
            i64::from(book.checksum),
            |b| i64::from(super::checksum(b, precision.price, precision.qty)),
            emit,
        ))
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::sync::{Chain, Resync, SyncConfig};

        // Shapes from Kraken's v2 documentation ("Book", "Checksum v2");
        // values ours, checksums computed by the documented rule.

        fn crc(levels: &[(&str, &str)]) -> u32 {
            let f = |s: &str| s.replace('.', "").trim_start_matches('0').to_owned();
            let text: String = levels.iter().map(|(p, q)| f(p) + &f(q)).collect();
            crc32fast::hash(text.as_bytes())
        }

        #[test]
        fn snapshot_and_update_at_the_pair_precision() {
            let precision = Precision { price: 1, qty: 8 };
            let mut sync = BookSync::new(
                Chain::Kraken,
                SyncConfig {
                    depth: 10,
                    ..SyncConfig::default()
                },
            );
            let mut ev = Vec::new();
            // JSON numbers drop trailing zeros; the checksum puts them back.
            let want = crc(&[("45285.2", "0.00100000"), ("45283.5", "0.10000000")]);
            let snapshot = format!(
                r#"{{"channel":"book","type":"snapshot","data":[{{"symbol":"BTC/USD","bids":[{{"price":45283.5,"qty":0.1}}],"asks":[{{"price":45285.2,"qty":0.001}}],"checksum":{want}}}]}}"#
            );
            let Message::Book(b) = decode(&snapshot).unwrap() else {
                panic!()
            };
            assert!(feed_book(&mut sync, &b, precision, &mut |e| ev.push(e)).unwrap());
            let want = crc(&[("45285.2", "0.00100000"), ("45283.5", "0.25000000")]);
            let update = format!(
                r#"{{"channel":"book","type":"update","data":[{{"symbol":"BTC/USD","bids":[{{"price":45283.5,"qty":0.25}}],"asks":[],"checksum":{want},"timestamp":"2023-10-06T17:35:55.440295Z"}}]}}"#
            );
            let Message::Book(b) = decode(&update).unwrap() else {
                panic!()
            };
            assert!(feed_book(&mut sync, &b, precision, &mut |e| ev.push(e)).unwrap());
            assert_eq!(
                ev,
                [
                    SyncEvent::Valid { update_id: 0 },
                    SyncEvent::Updated { update_id: 0 }
                ]
            );
            // A wrong checksum: the book is dropped, explicitly.
            let bad = r#"{"channel":"book","type":"update","data":[{"symbol":"BTC/USD","bids":[],"asks":[],"checksum":1}]}"#;
            let Message::Book(b) = decode(bad).unwrap() else {
                panic!()
            };
            assert!(!feed_book(&mut sync, &b, precision, &mut |e| ev.push(e)).unwrap());
            assert!(
                matches!(ev[3], SyncEvent::Gap(Resync::Checksum { expected: 1, .. })),
                "{ev:?}"
            );
            assert!(sync.book().is_none());
        }

        #[test]
        fn control_messages_and_errors() {
            assert!(matches!(
                decode(r#"{"channel":"heartbeat"}"#).unwrap(),
                Message::Control("heartbeat")
            ));
            assert!(matches!(
                decode(r#"{"method":"subscribe","result":{"channel":"book","symbol":"BTC/USD"},"success":true,"time_in":"x","time_out":"y"}"#).unwrap(),
                Message::Control("subscribe")
            ));
            assert!(matches!(
                decode(r#"{"channel":"ticker","type":"update","data":[]}"#).unwrap(),
                Message::Other("ticker")
            ));
            for bad in [
                "",
                r#"{"channel":"book","type":"update","data":[]}"#,
                r#"{"channel":"book","type":"x","data":[{}]}"#,
            ] {
                assert!(decode(bad).is_err(), "{bad}");
            }
            // More digits than the pair's precision: refused, not rounded.
            let text = r#"{"channel":"book","type":"snapshot","data":[{"symbol":"BTC/USD","bids":[{"price":45283.55,"qty":1}],"asks":[],"checksum":0}]}"#;
            let Message::Book(b) = decode(text).unwrap() else {
                panic!()
            };
            let mut sync = BookSync::new(Chain::Kraken, SyncConfig::default());
            let r = feed_book(&mut sync, &b, Precision { price: 1, qty: 8 }, &mut |_| {});
            assert!(matches!(r, Err(DecodeError::Decimal("price", _))));
        }
    }
}
