//! Kraken spot WebSocket v1: `book-N` (snapshot, updates, CRC32 checksum),
//! `trade`, and the `event` messages. Messages are arrays:
//! `[channelID, {payload}, ({payload},) channelName, pair]`.
//!
//! The v2 protocol and its adapter are [`super::v2`].

use simd_json::prelude::*;
use simd_json::tape::{Array, Value};

use crate::book::{Book, Side};
use crate::crc_text;
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
    // The whole string in one stack buffer, one CRC update.
    crc_text::crc32::<512>(|text| {
        let mut side = |side| {
            for level in book.kept(side).iter().take(10) {
                // Digits without the point, leading zeros stripped.
                text.digits(level.price, price_scale, level.price_digits);
                text.digits(level.size, size_scale, level.size_digits);
            }
        };
        side(Side::Ask);
        side(Side::Bid);
    })
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
        .flat_map(move |l| crate::book::scaled_levels(&l, Side::Ask, price_scale, size_scale));
    let bids = book
        .bids
        .into_iter()
        .flat_map(move |l| crate::book::scaled_levels(&l, Side::Bid, price_scale, size_scale));
    let levels = asks.chain(bids);
    sync.on_unsequenced(book.snapshot, 0, levels, emit)?;
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

    proptest::proptest! {
        /// The checksum is the CRC32 of the strings as sent (trailing
        /// zeros included) with the point removed and leading zeros
        /// stripped, asks then bids, top 10 each, for books of any shape
        /// and values of any length at scales 0 to 9.
        #[test]
        fn checksum_is_the_crc_of_the_strings_as_sent(
            bids in crc_text::tests::sent_side(20),
            asks in crc_text::tests::sent_side(20),
            price_scale in 0u8..=9,
            size_scale in 0u8..=9,
        ) {
            let (book, bids, asks) =
                crc_text::tests::book_as_sent(&bids, &asks, price_scale, size_scale);
            let mut want = String::new();
            for (p, s) in asks.iter().take(10).chain(bids.iter().take(10)) {
                for v in [p, s] {
                    let digits: String = v.chars().filter(|&c| c != '.').collect();
                    want += digits.trim_start_matches('0');
                }
            }
            proptest::prop_assert_eq!(
                checksum(&book, price_scale, size_scale),
                crc32fast::hash(want.as_bytes())
            );
        }
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
