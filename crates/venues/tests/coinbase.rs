//! A Coinbase Advanced Trade session through the adapter, once warm,
//! allocates nothing: acknowledgements and heartbeats as live frames have
//! them (no `client_id`, a numeric counter), a snapshot deeper than the
//! book keeps, updates, trades, a refusal and a gap; and so does one whose
//! `-USDC` product is answered under its `-USD` id.

use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::sync::Resync;
use tickwire_venues::{
    Aggressor, Event, InstrumentId, InstrumentSpec, Kind, Outcome, VenueAdapter, coinbase,
};

fn padded(text: &str) -> (Vec<u8>, usize) {
    let mut b = text.as_bytes().to_vec();
    b.resize(text.len() + INPUT_PADDING, 0);
    (b, text.len())
}

/// A `level2` snapshot of `levels` a side around 60 000.00.
fn snapshot(seq: u64, product: &str, levels: i64) -> String {
    let mut updates = Vec::new();
    for k in 1..=levels {
        for (side, price) in [("bid", 6_000_000 - k), ("offer", 6_000_000 + k)] {
            updates.push(format!(
                r#"{{"side":"{side}","event_time":"2026-09-07T01:57:58.894355Z","price_level":"{}.{:02}","new_quantity":"0.5"}}"#,
                price / 100,
                price % 100
            ));
        }
    }
    format!(
        r#"{{"channel":"l2_data","client_id":"","timestamp":"2026-09-07T01:57:58.894355Z","sequence_num":{seq},"events":[{{"type":"snapshot","product_id":"{product}","updates":[{}]}}]}}"#,
        updates.join(",")
    )
}

fn session() -> Vec<String> {
    let mut m = vec![
        r#"{"channel":"subscriptions","timestamp":"2026-09-07T23:37:22.278662782Z","sequence_num":0,"events":[{"subscriptions":{"heartbeats":["heartbeats"]}}]}"#.to_owned(),
        snapshot(1, "BTC-USD", 3000),
        r#"{"channel":"subscriptions","timestamp":"2026-09-07T23:37:22.278739877Z","sequence_num":2,"events":[{"subscriptions":{"heartbeats":["heartbeats"],"level2":["BTC-USD","ETH-USD"]}}]}"#.to_owned(),
        // ETH-USD's subscription was refused: its snapshot never comes.
        r#"{"type":"error","message":"authentication failure"}"#.to_owned(),
    ];
    let mut seq = 3;
    for i in 0..300 {
        let qty = if i % 2 == 0 { "1.25" } else { "0" };
        m.push(format!(
            r#"{{"channel":"l2_data","client_id":"","timestamp":"2026-09-07T01:57:59.1Z","sequence_num":{seq},"events":[{{"type":"update","product_id":"BTC-USD","updates":[{{"side":"bid","event_time":"2026-09-07T01:57:59.1Z","price_level":"59999.99","new_quantity":"0"}},{{"side":"offer","event_time":"2026-09-07T01:57:59.1Z","price_level":"60000.5","new_quantity":"{qty}"}}]}}]}}"#
        ));
        m.push(format!(
            r#"{{"channel":"market_trades","client_id":"","timestamp":"2026-09-07T01:57:59.2Z","sequence_num":{},"events":[{{"type":"update","trades":[{{"trade_id":"{i}","product_id":"BTC-USD","price":"60000.01","size":"0.3","side":"SELL","time":"2026-09-07T01:57:59.2Z"}}]}}]}}"#,
            seq + 1
        ));
        m.push(format!(
            r#"{{"channel":"heartbeats","timestamp":"2026-09-07T23:37:22.675755362Z","sequence_num":{},"events":[{{"current_time":"2026-09-07 23:37:22.674409 +0000 UTC m=+139651.272674714","heartbeat_counter":139651}}]}}"#,
            seq + 2
        ));
        seq += 3;
    }
    // A lost frame, then the book's new snapshot.
    m.push(snapshot(seq + 1, "BTC-USD", 3000));
    m
}

#[test]
fn a_session_allocates_nothing_once_warm() {
    session_allocates_nothing_once_warm("BTC-USD");
}

/// Configured as BTC-USDC, the product is answered as BTC-USD (its frames
/// say so): the same book, trades and refusal, nothing allocated for it.
#[test]
fn a_usdc_product_answered_under_its_usd_id_allocates_nothing_once_warm() {
    session_allocates_nothing_once_warm("BTC-USDC");
}

/// The session, its frames keyed BTC-USD, into an adapter whose first
/// instrument is `first`.
fn session_allocates_nothing_once_warm(first: &str) {
    let mut msgs: Vec<(Vec<u8>, usize)> = session().iter().map(|t| padded(t)).collect();
    let mut adapter = coinbase::Adapter::new(&[
        InstrumentSpec::new(first, 2, 8, 25),
        InstrumentSpec::new("ETH-USD", 2, 8, 25),
    ]);
    let mut events: Vec<Event> = Vec::with_capacity(64 * 1024);
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(msgs.len());
    for (buf, len) in msgs.iter_mut() {
        adapter
            .on_message(buf, *len, 0, &mut |e| events.push(e))
            .unwrap();
    }
    events.clear();
    let ((), allocations) = tickwire_testkit::allocations(|| {
        adapter.on_disconnect(0, &mut |e| events.push(e));
        for (buf, len) in msgs.iter_mut() {
            let outcome = adapter
                .on_message(buf, *len, 0, &mut |e| events.push(e))
                .unwrap();
            outcomes.push(outcome);
        }
    });
    assert_eq!(allocations, 0);
    let count = |f: fn(&Kind) -> bool| events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(count(|k| matches!(k, Kind::BookValid { .. })), 2);
    assert_eq!(
        count(|k| matches!(
            k,
            Kind::Trade {
                aggressor: Aggressor::Buy,
                ..
            }
        )),
        300,
        "a SELL maker is a buyer taking"
    );
    let rejected: Vec<u32> = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Rejected { .. }))
        .map(|e| e.instrument.0)
        .collect();
    assert_eq!(rejected, [1]);
    assert_eq!(adapter.rejection(), "authentication failure");
    assert_eq!(
        outcomes.iter().filter(|o| **o == Outcome::Rejected).count(),
        1
    );
    assert_eq!(
        outcomes.iter().filter(|o| **o == Outcome::Control).count(),
        302
    );
    assert!(events.iter().any(|e| e.kind
        == Kind::Gap {
            why: Resync::Sequence {
                expected: 903,
                got: 904
            }
        }));
    let book = adapter.book(InstrumentId(0)).expect("valid again");
    assert_eq!(book.levels(tickwire_venues::book::Side::Bid).len(), 25);
    assert!(adapter.book(InstrumentId(1)).is_none());
}
