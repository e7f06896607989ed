use super::*;
use crate::sync::{Chain, Resync, SyncConfig};

// Shapes from Deribit's API documentation ("book.{instrument_name}.
// {interval}", "heartbeat"); values ours.

#[test]
fn snapshot_changes_and_a_gap() {
    let mut sync = BookSync::new(Chain::Deribit, SyncConfig::default());
    let mut ev = Vec::new();
    fn feed(sync: &mut BookSync, text: &str, ev: &mut Vec<SyncEvent>) {
        let Message::Book(b) = decode(text).unwrap() else {
            panic!()
        };
        feed_book(sync, &b, 4, 1, &mut |e| ev.push(e)).unwrap();
    }
    feed(
        &mut sync,
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"snapshot","timestamp":1554373962454,"instrument_name":"BTC-PERPETUAL","change_id":297217,"bids":[["new",5042.34,30.0],["new",5041.94,20.0]],"asks":[["new",5042.64,40.0]]}}}"#,
        &mut ev,
    );
    feed(
        &mut sync,
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"change","timestamp":1554373911330,"prev_change_id":297217,"instrument_name":"BTC-PERPETUAL","change_id":297218,"bids":[["delete",5042.34,0.0]],"asks":[["change",5042.64,10.5]]}}}"#,
        &mut ev,
    );
    assert_eq!(
        ev,
        [
            SyncEvent::Valid { update_id: 297217 },
            SyncEvent::Updated { update_id: 297218 }
        ]
    );
    let book = sync.book().unwrap();
    let (bid, ask) = book.top().unwrap();
    assert_eq!(
        (bid.price, ask.price, ask.size),
        (50_419_400, 50_426_400, 105)
    );
    feed(
        &mut sync,
        r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.raw","data":{"type":"change","timestamp":1,"prev_change_id":297220,"instrument_name":"BTC-PERPETUAL","change_id":297221,"bids":[],"asks":[]}}}"#,
        &mut ev,
    );
    assert_eq!(
        ev[2],
        SyncEvent::Gap(Resync::Sequence {
            expected: 297218,
            got: 297220
        })
    );
}

#[test]
fn prices_are_exact_from_the_number_text() {
    // 0.1 + 0.2 style values a float would not keep.
    let text = r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.X.raw","data":{"type":"snapshot","timestamp":1,"instrument_name":"X","change_id":1,"bids":[["new",0.30000000000000004,1e2]],"asks":[]}}}"#;
    let Message::Book(b) = decode(text).unwrap() else {
        panic!()
    };
    let level = b.levels(Side::Bid).next().unwrap().unwrap();
    assert_eq!((level.price, level.amount), ("0.30000000000000004", "1e2"));
    // An exponent moves the point (JSON's number grammar): exact too.
    let mut sync = BookSync::new(Chain::Deribit, SyncConfig::default());
    feed_book(&mut sync, &b, 17, 0, &mut |_| {}).unwrap();
    let best = *sync.book().unwrap().levels(Side::Bid).get(0).unwrap();
    assert_eq!((best.price, best.size), (30_000_000_000_000_004, 100));
    // One it cannot keep exactly is a typed error, not a rounding.
    assert!(feed_book(&mut sync, &b, 16, 0, &mut |_| {}).is_err());
}

#[test]
fn heartbeats_replies_trades_and_garbage() {
    assert!(matches!(
        decode(r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#)
            .unwrap(),
        Message::Heartbeat { test_request: true }
    ));
    assert!(matches!(
        decode(r#"{"jsonrpc":"2.0","id":1,"result":["book.X.raw"]}"#).unwrap(),
        Message::Reply { .. }
    ));
    assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.raw","data":[{"price":5040.5,"amount":10.0},{"price":5041.0,"amount":1.0}]}}"#).unwrap(),
            Message::Trades { count: 2, .. }
        ));
    for bad in [
        "",
        "[]",
        r#"{"method":1}"#,
        r#"{"method":"subscription","params":{"channel":"book.X.raw","data":{"type":"snapshot"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":"no"}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
    ] {
        assert!(decode(bad).is_err(), "{bad}");
    }
}
