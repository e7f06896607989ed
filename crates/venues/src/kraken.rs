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
        for level in book.kept(side).iter().take(10) {
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
        /// `trade`: one or more trades.
        Trades(Trades<'i>),
        /// `ticker`: best bid and ask (the first entry of `data`).
        Ticker(Ticker<'i>),
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
        /// `timestamp` (RFC 3339; updates only).
        pub timestamp: Option<&'i str>,
        bids: &'i str,
        asks: &'i str,
    }

    /// The trades of a `trade` message.
    #[derive(Clone, Copy, Debug)]
    pub struct Trades<'i> {
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
            "book" | "trade" | "ticker" => {}
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
        if channel == "trade" {
            return Ok(Message::Trades(Trades { data }));
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

    use crate::adapter::{Instruments, Outcome, taker};
    use crate::event::{Event, InstrumentSpec};
    use crate::time::rfc3339_ns;

    /// Kraken spot v2 messages in, normalised [`Event`]s out, for one
    /// connection's pairs (`BTC/USD`): `trade` as trades, `ticker` as
    /// quotes, `book` kept in step by its checksum.
    ///
    /// Each [`InstrumentSpec`]'s scales are the pair's `price_precision`
    /// and `qty_precision` (the checksum is written with exactly those
    /// decimals) and its depth is the subscribed depth (10, 25, 100, 500
    /// or 1000: Kraken leaves truncation to the client). A book whose
    /// checksum fails emits `Gap` then `Resync`: resubscribe it.
    pub struct Adapter {
        instruments: Instruments,
        /// Book messages whose checksum was compared (and matched).
        pub checksums_verified: u64,
    }

    impl Adapter {
        /// An adapter for `instruments`, with their books.
        pub fn new(instruments: &[InstrumentSpec]) -> Adapter {
            Adapter {
                instruments: Instruments::new(
                    instruments,
                    crate::sync::Chain::Kraken,
                    crate::plan::kraken::book_shape,
                ),
                checksums_verified: 0,
            }
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
            let Adapter {
                instruments,
                checksums_verified,
            } = self;
            match decode(text)? {
                Message::Control(_) => Ok(Outcome::Control),
                Message::Other(_) => Ok(Outcome::Ignored),
                Message::Trades(trades) => {
                    let mut outcome = Outcome::Ignored;
                    for trade in trades.iter() {
                        let t = trade?;
                        let ns = rfc3339_ns(t.timestamp).unwrap_or(0);
                        let (id, side) = (t.trade_id, taker(t.side));
                        if instruments
                            .trade(t.symbol, t.price, t.qty, side, id, ns, recv_tsc, emit)?
                        {
                            outcome = Outcome::Data;
                        }
                    }
                    Ok(outcome)
                }
                Message::Ticker(q) => {
                    let ns = q.timestamp.and_then(rfc3339_ns).unwrap_or(0);
                    let known = instruments.quote(q.symbol, q.bid, q.ask, 0, ns, recv_tsc, emit)?;
                    Ok(if known {
                        Outcome::Data
                    } else {
                        Outcome::Ignored
                    })
                }
                Message::Book(book) => instruments.book_message(
                    book.symbol,
                    book.timestamp.and_then(rfc3339_ns).unwrap_or(0),
                    recv_tsc,
                    emit,
                    |sync, price, qty, emit| {
                        let precision = Precision { price, qty };
                        let verified = feed_book(sync, &book, precision, &mut { emit })?;
                        *checksums_verified += u64::from(verified);
                        Ok(())
                    },
                ),
            }
        }

        /// The connection went down: `Disconnected`, then `Gap` and
        /// `Resync` for every book that was valid.
        pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
            self.instruments.disconnect(recv_tsc, emit);
        }
    }

    crate::adapter::venue_adapter!(Adapter);

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
                decode(r#"{"channel":"ohlc","type":"update","data":[]}"#).unwrap(),
                Message::Other("ohlc")
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
            assert!(matches!(
                r,
                Err(DecodeError::Decimal(crate::BadDecimal {
                    field: "price",
                    ..
                }))
            ));
        }

        #[test]
        fn the_adapter_emits_trades_quotes_and_a_checked_book() {
            use crate::adapter::Outcome;
            use crate::event::{Aggressor, InstrumentSpec, Kind};
            let mut a = Adapter::new(&[InstrumentSpec::new("BTC/USD", 1, 8, 10)]);
            let feed = |a: &mut Adapter, text: &str| {
                let mut buf = text.as_bytes().to_vec();
                let mut ev = Vec::new();
                let r = a.on_message(&mut buf, text.len(), 7, &mut |e| ev.push(e));
                (r, ev)
            };
            // Shapes from Kraken's v2 documentation ("Trade", "Ticker").
            let (r, ev) = feed(
                &mut a,
                r#"{"channel":"trade","type":"update","data":[{"symbol":"BTC/USD","side":"buy","price":105944.2,"qty":0.00027625,"ord_type":"limit","trade_id":10218208,"timestamp":"2023-10-06T17:35:55.440295Z"},{"symbol":"BTC/USD","side":"sell","price":105910.5,"qty":0.0001246,"ord_type":"market","trade_id":10218209,"timestamp":"2023-10-06T17:35:56.123456Z"}]}"#,
            );
            assert_eq!(r, Ok(Outcome::Data));
            assert_eq!(ev.len(), 2);
            assert_eq!(ev[0].exchange_ns, 1_696_613_755_440_295_000);
            assert_eq!(
                ev[1].kind,
                Kind::Trade {
                    price: 1_059_105,
                    size: 12_460,
                    aggressor: Aggressor::Sell,
                    trade_id: 10218209
                }
            );
            let (_, ev) = feed(
                &mut a,
                r#"{"channel":"ticker","type":"snapshot","data":[{"symbol":"BTC/USD","bid":105944.2,"bid_qty":2.5,"ask":105944.3,"ask_qty":3.2,"last":105899.4,"volume":163.28908096,"timestamp":"2022-12-25T09:30:59.123456Z"}]}"#,
            );
            assert_eq!(
                ev[0].kind,
                Kind::Quote {
                    bid_price: 1_059_442,
                    bid_size: 250_000_000,
                    ask_price: 1_059_443,
                    ask_size: 320_000_000,
                    update_id: 0
                }
            );
            let want = crc(&[("45285.2", "0.00100000"), ("45283.5", "0.10000000")]);
            let (_, ev) = feed(
                &mut a,
                &format!(
                    r#"{{"channel":"book","type":"snapshot","data":[{{"symbol":"BTC/USD","bids":[{{"price":45283.5,"qty":0.1}}],"asks":[{{"price":45285.2,"qty":0.001}}],"checksum":{want}}}]}}"#
                ),
            );
            assert_eq!(ev.len(), 4, "{ev:?}");
            assert_eq!(a.checksums_verified, 1);
            // A wrong checksum: no deltas, a gap and a resync.
            let (_, ev) = feed(
                &mut a,
                r#"{"channel":"book","type":"update","data":[{"symbol":"BTC/USD","bids":[{"price":45283.4,"qty":1}],"asks":[],"checksum":1}]}"#,
            );
            let kinds: Vec<Kind> = ev.iter().map(|e| e.kind).collect();
            assert!(
                matches!(kinds[..], [Kind::Gap { .. }, Kind::Resync]),
                "{kinds:?}"
            );
            let (r, _) = feed(&mut a, r#"{"channel":"heartbeat"}"#);
            assert_eq!(r, Ok(Outcome::Control));
            let mut bad = b"{\"channel\":\"\xff\"}".to_vec();
            let len = bad.len();
            assert_eq!(
                a.on_message(&mut bad, len, 0, &mut |_| ()),
                Err(DecodeError::Utf8)
            );
        }
    }
}
