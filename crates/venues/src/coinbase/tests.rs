use super::*;
use crate::event::Aggressor;
use crate::sync::{Chain, Resync, SyncConfig};

// Shapes from the Advanced Trade WebSocket documentation ("Level2
// Channel", "Market Trades Channel"); values ours.

pub(crate) const SNAPSHOT: &str = r#"{"channel":"l2_data","client_id":"","timestamp":"2023-02-09T20:32:50.714964855Z","sequence_num":0,"events":[{"type":"snapshot","product_id":"BTC-USD","updates":[{"side":"bid","event_time":"1970-01-01T00:00:00Z","price_level":"21921.73","new_quantity":"0.06317902"},{"side":"offer","event_time":"1970-01-01T00:00:00Z","price_level":"21921.74","new_quantity":"0.5"}]}]}"#;
pub(crate) const UPDATE: &str = r#"{"channel":"l2_data","client_id":"","timestamp":"2023-02-09T20:32:50.714964855Z","sequence_num":1,"events":[{"type":"update","product_id":"BTC-USD","updates":[{"side":"bid","event_time":"2023-02-09T20:32:50.714964855Z","price_level":"21921.73","new_quantity":"0"},{"side":"bid","event_time":"2023-02-09T20:32:50.714964855Z","price_level":"21921.70","new_quantity":"1.25"}]}]}"#;
pub(crate) const TRADES: &str = r#"{"channel":"market_trades","client_id":"","timestamp":"2023-02-09T20:19:35.39625135Z","sequence_num":2,"events":[{"type":"snapshot","trades":[{"trade_id":"000000000","product_id":"ETH-USD","price":"1260.01","size":"0.3","side":"BUY","time":"2019-08-14T20:42:27.265Z"}]}]}"#;

#[test]
fn level2_snapshot_update_and_the_connection_sequence() {
    let mut sync = BookSync::new(Chain::Coinbase, SyncConfig::default());
    let mut seq = ConnectionSeq::default();
    let mut ev = Vec::new();
    for text in [SNAPSHOT, UPDATE] {
        crate::json::with_doc(text, |doc| {
            let env = decode(doc).unwrap();
            let number = env.sequence_num.unwrap();
            seq.check(number).unwrap();
            let Message::Level2(events) = env.message else {
                panic!()
            };
            for e in events.books() {
                feed_book_numbered(&mut sync, &e.unwrap(), number, 2, 8, &mut |x| ev.push(x))
                    .unwrap();
            }
        });
    }
    assert_eq!(
        ev,
        [
            SyncEvent::Valid { update_id: 0 },
            SyncEvent::Updated { update_id: 1 }
        ]
    );
    let (bid, ask) = sync.book().unwrap().top().unwrap();
    assert_eq!(
        (bid.price, bid.size, ask.price),
        (2_192_170, 125_000_000, 2_192_174)
    );
    crate::json::with_doc(TRADES, |doc| {
        let env = decode(doc).unwrap();
        seq.check(env.sequence_num.unwrap()).unwrap();
        let Message::Trades(events) = env.message else {
            panic!()
        };
        // A snapshot's trades are history: none read.
        assert_eq!(events.trades().count(), 0);
    });
    let update = TRADES.replace("\"snapshot\"", "\"update\"");
    crate::json::with_doc(&update, |doc| {
        let Message::Trades(events) = decode(doc).unwrap().message else {
            panic!()
        };
        let trades: Vec<_> = events.trades().map(Result::unwrap).collect();
        assert_eq!(
            (trades[0].price, trades[0].size, trades[0].side),
            ("1260.01", "0.3", "BUY")
        );
    });
    // A lost message anywhere on the connection: every book resyncs.
    assert_eq!(
        seq.check(4),
        Err(Resync::Sequence {
            expected: 3,
            got: 4
        })
    );
    sync.invalidate_all(
        Resync::Sequence {
            expected: 3,
            got: 4,
        },
        &mut |x| ev.push(x),
    );
    assert_eq!(
        ev[2],
        SyncEvent::Gap(Resync::Sequence {
            expected: 3,
            got: 4
        })
    );
    assert!(sync.book().is_none());
    assert_eq!(
        seq.check(5),
        Ok(()),
        "the chain goes on from the new number"
    );
}

#[test]
fn sides_as_the_documentation_means_them() {
    assert_eq!(aggressor("BUY"), Aggressor::Sell);
    assert_eq!(aggressor("SELL"), Aggressor::Buy);
    assert_eq!(aggressor("buy"), Aggressor::Unknown);
}

#[test]
fn control_error_and_bad_messages() {
    crate::json::with_doc(
        r#"{"channel":"heartbeats","client_id":"","timestamp":"t","sequence_num":7,"events":[]}"#,
        |doc| {
            let env = decode(doc).unwrap();
            assert_eq!(env.sequence_num, Some(7));
            assert!(matches!(env.message, Message::Control("heartbeats")));
        },
    );
    crate::json::with_doc(
        r#"{"type":"error","message":"authentication failure"}"#,
        |doc| {
            let env = decode(doc).unwrap();
            assert_eq!(env.sequence_num, None);
            assert!(matches!(
                env.message,
                Message::Error("authentication failure")
            ));
        },
    );
    crate::json::with_doc(r#"{"type":"ticker"}"#, |doc| {
        assert_eq!(decode(doc).err(), Some(DecodeError::Missing("channel")));
    });
    crate::json::with_doc(r#"{"channel":"l2_data","events":[]}"#, |doc| {
        assert_eq!(
            decode(doc).err(),
            Some(DecodeError::Missing("sequence_num"))
        );
    });
    crate::json::with_doc(r#"{"channel":7,"sequence_num":1}"#, |doc| {
        assert_eq!(decode(doc).err(), Some(DecodeError::Type("channel")));
    });
    crate::json::with_doc(
        r#"{"channel":"l2_data","sequence_num":1,"events":[{"type":"update","product_id":"X","updates":[{"side":"middle","price_level":"1","new_quantity":"1"}]}]}"#,
        |doc| {
            let Message::Level2(events) = decode(doc).unwrap().message else {
                panic!()
            };
            let e = events.books().next().unwrap().unwrap();
            assert_eq!(
                e.updates().next().unwrap().err(),
                Some(DecodeError::Type("side"))
            );
        },
    );
}
