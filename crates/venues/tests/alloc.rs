//! The adapters the recordings cannot cover (no Kraken v2 or Coinbase
//! Advanced Trade traffic in `../shared/samples`, no Binance SBE frames):
//! once warm, messages through them allocate nothing, books kept valid all
//! the while.

use tickwire_venues::book::{Book, Side};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{Event, InstrumentId, InstrumentSpec, Kind, coinbase, kraken};

fn padded(text: &str) -> (Vec<u8>, usize) {
    let mut b = text.as_bytes().to_vec();
    b.resize(text.len() + INPUT_PADDING, 0);
    (b, text.len())
}

/// Runs `msgs` through `on_message` twice (the first pass warms up) and
/// returns the second pass's allocations and events.
fn twice(
    msgs: &mut [(Vec<u8>, usize)],
    mut on_message: impl FnMut(&mut [u8], usize, &mut Vec<Event>),
) -> (u64, Vec<Event>) {
    let mut events = Vec::with_capacity(msgs.len() * 8);
    for (buf, len) in msgs.iter_mut() {
        on_message(buf, *len, &mut events);
    }
    events.clear();
    let ((), allocations) = tickwire_testkit::allocations(|| {
        for (buf, len) in msgs.iter_mut() {
            on_message(buf, *len, &mut events);
        }
    });
    (allocations, events)
}

#[test]
fn kraken_v2_allocates_nothing_once_warm() {
    // The book alternates between two states; each update carries the
    // checksum Kraken would send for the state it leads to.
    let (ps, qs) = (1, 8);
    let state = |bid_qty: i64| {
        let mut b = Book::new(10);
        b.set_level(Side::Bid, level(452_835, bid_qty));
        b.set_level(Side::Ask, level(452_852, 100_000));
        kraken::checksum(&b, ps, qs)
    };
    fn level(price: i64, size: i64) -> tickwire_venues::book::Level {
        tickwire_venues::book::Level {
            price,
            size,
            price_digits: 1,
            size_digits: 8,
        }
    }
    let mut msgs = vec![padded(&format!(
        r#"{{"channel":"book","type":"snapshot","data":[{{"symbol":"BTC/USD","bids":[{{"price":45283.5,"qty":0.1}}],"asks":[{{"price":45285.2,"qty":0.001}}],"checksum":{}}}]}}"#,
        state(10_000_000)
    ))];
    for i in 0..500 {
        let (qty, units) = if i % 2 == 0 {
            ("0.25", 25_000_000)
        } else {
            ("0.1", 10_000_000)
        };
        msgs.push(padded(&format!(
            r#"{{"channel":"book","type":"update","data":[{{"symbol":"BTC/USD","bids":[{{"price":45283.5,"qty":{qty}}}],"asks":[],"checksum":{},"timestamp":"2023-10-06T17:35:55.440295Z"}}]}}"#,
            state(units)
        )));
        msgs.push(padded(r#"{"channel":"trade","type":"update","data":[{"symbol":"BTC/USD","side":"buy","price":45283.5,"qty":0.00027625,"ord_type":"limit","trade_id":10218208,"timestamp":"2023-10-06T17:35:55.440295Z"}]}"#));
        msgs.push(padded(r#"{"channel":"ticker","type":"update","data":[{"symbol":"BTC/USD","bid":45283.5,"bid_qty":0.1,"ask":45285.2,"ask_qty":0.001}]}"#));
        msgs.push(padded(r#"{"channel":"heartbeat"}"#));
    }
    let mut adapter = kraken::v2::Adapter::new(&[InstrumentSpec::new("BTC/USD", ps, qs, 10)]);
    // The pair's precisions, as its `instrument` message would give them.
    adapter.set_precision("BTC/USD", kraken::v2::Precision { price: ps, qty: qs });
    let (allocations, events) = twice(&mut msgs, |buf, len, events| {
        adapter
            .on_message(buf, len, 0, &mut |e| events.push(e))
            .unwrap();
    });
    assert_eq!(allocations, 0);
    assert!(!events.iter().any(|e| matches!(e.kind, Kind::Gap { .. })));
    let count = |f: fn(&Kind) -> bool| events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(count(|k| matches!(k, Kind::Trade { .. })), 500);
    assert_eq!(count(|k| matches!(k, Kind::Quote { .. })), 500);
    assert_eq!(count(|k| matches!(k, Kind::BookDelta { .. })), 500 + 2);
    assert!(adapter.book(InstrumentId(0)).is_some());
}

#[test]
fn coinbase_allocates_nothing_once_warm() {
    let mut msgs = Vec::new();
    let mut seq = 0;
    let mut next = || {
        seq += 1;
        seq - 1
    };
    msgs.push(padded(&format!(
        r#"{{"channel":"l2_data","client_id":"","timestamp":"2023-02-09T20:32:50.714964855Z","sequence_num":{},"events":[{{"type":"snapshot","product_id":"BTC-USD","updates":[{{"side":"bid","event_time":"1970-01-01T00:00:00Z","price_level":"21921.73","new_quantity":"0.06317902"}},{{"side":"offer","event_time":"1970-01-01T00:00:00Z","price_level":"21921.74","new_quantity":"0.5"}}]}}]}}"#,
        next()
    )));
    for i in 0..500 {
        let qty = if i % 2 == 0 { "1.25" } else { "0" };
        msgs.push(padded(&format!(
            r#"{{"channel":"l2_data","client_id":"","timestamp":"2023-02-09T20:32:50.714964855Z","sequence_num":{},"events":[{{"type":"update","product_id":"BTC-USD","updates":[{{"side":"bid","event_time":"2023-02-09T20:32:50.714964855Z","price_level":"21921.70","new_quantity":"{qty}"}}]}}]}}"#,
            next()
        )));
        msgs.push(padded(&format!(
            r#"{{"channel":"market_trades","client_id":"","timestamp":"2023-02-09T20:19:35.39625135Z","sequence_num":{},"events":[{{"type":"update","trades":[{{"trade_id":"{i}","product_id":"BTC-USD","price":"21921.73","size":"0.3","side":"BUY","time":"2019-08-14T20:42:27.265Z"}}]}}]}}"#,
            next()
        )));
    }
    let mut adapter = coinbase::Adapter::new(&[InstrumentSpec::new("BTC-USD", 2, 8, 100)]);
    let mut events = Vec::with_capacity(msgs.len() * 8);
    for (buf, len) in msgs.iter_mut() {
        adapter
            .on_message(buf, *len, 0, &mut |e| events.push(e))
            .unwrap();
    }
    events.clear();
    // The second pass is a new connection: its sequence starts again.
    let ((), allocations) = tickwire_testkit::allocations(|| {
        adapter.on_disconnect(0, &mut |e| events.push(e));
        for (buf, len) in msgs.iter_mut() {
            adapter
                .on_message(buf, *len, 0, &mut |e| events.push(e))
                .unwrap();
        }
    });
    assert_eq!(allocations, 0);
    let gaps: Vec<Kind> = events
        .iter()
        .map(|e| e.kind)
        .filter(|k| matches!(k, Kind::Gap { .. }))
        .collect();
    assert_eq!(
        gaps,
        [Kind::Gap {
            why: tickwire_venues::sync::Resync::Disconnected
        }],
        "only the disconnect's gap: the new connection's sequence is a new chain"
    );
    let count = |f: fn(&Kind) -> bool| events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(count(|k| matches!(k, Kind::Trade { .. })), 500);
    assert_eq!(count(|k| matches!(k, Kind::BookValid { .. })), 1);
    assert_eq!(count(|k| matches!(k, Kind::BookDelta { .. })), 500 + 2);
    assert!(adapter.book(InstrumentId(0)).is_some());
}

/// Binance spot's SBE frames (`on_binary`): depth diffs bridged to a
/// REST snapshot, trades and best bid/ask, at exponents other than the
/// instrument's scales (each value multiplied in): once warm, nothing is
/// allocated and the book stays valid.
#[test]
fn binance_sbe_allocates_nothing_once_warm() {
    use tickwire_sbe::spot_stream::{BestBidAskHead, DiffHead, Level, Trade, TradesHead, encode};
    use tickwire_venues::binance::{Adapter, Market};
    use tickwire_venues::book::Limit;
    let spec = [InstrumentSpec::new("BTCUSDT", 8, 8, 20)];
    let mut adapter = Adapter::new(Market::Spot, &spec);
    let mut events: Vec<Event> = Vec::with_capacity(1 << 16);
    let (mut snapshot, len) = padded(
        r#"{"lastUpdateId":100,"bids":[["100.00","1.0"],["99.00","2.0"]],"asks":[["101.00","1.0"],["102.00","2.0"]]}"#,
    );
    adapter
        .on_snapshot_at(
            InstrumentId(0),
            Limit::Levels(1000),
            &mut snapshot,
            len,
            0,
            &mut |e| events.push(e),
        )
        .unwrap();
    // Step k: a diff (ids 101 + k), a trade (id k), a best bid/ask.
    let frames: Vec<Vec<u8>> = (0..1000i64)
        .flat_map(|k| {
            let mut diff = vec![0u8; 256];
            let bid = Level {
                price: 9_900 - k % 50,
                qty: 100 + k,
            };
            let ask = Level {
                price: 10_100 + k % 50,
                qty: 0,
            };
            let h = DiffHead {
                event_time_us: 1_000 + k,
                first_update_id: 101 + k,
                last_update_id: 101 + k,
                price_exponent: -2,
                qty_exponent: -2,
            };
            let n = encode::depth_diff(&mut diff, &h, &[bid], &[ask], b"BTCUSDT").unwrap();
            diff.truncate(n);
            let mut trade = vec![0u8; 128];
            let t = TradesHead {
                event_time_us: 1_000 + k,
                transact_time_us: 1_000 + k,
                price_exponent: -2,
                qty_exponent: -5,
            };
            let x = Trade {
                id: k + 1,
                price: 10_050,
                qty: 12_345,
                is_buyer_maker: k % 2 == 0,
            };
            let n = encode::trades(&mut trade, &t, &[x], b"BTCUSDT").unwrap();
            trade.truncate(n);
            let mut quote = vec![0u8; 128];
            let q = BestBidAskHead {
                event_time_us: 1_000 + k,
                book_update_id: 101 + k,
                price_exponent: -2,
                qty_exponent: -2,
                bid: Level {
                    price: 10_000,
                    qty: 100,
                },
                ask: Level {
                    price: 10_100,
                    qty: 100,
                },
            };
            let n = encode::best_bid_ask(&mut quote, &q, b"BTCUSDT").unwrap();
            quote.truncate(n);
            [diff, trade, quote]
        })
        .collect();
    let (warm, counted) = frames.split_at(frames.len() / 2);
    for f in warm {
        adapter.on_binary(f, 0, &mut |e| events.push(e)).unwrap();
    }
    assert!(adapter.book(InstrumentId(0)).is_some(), "valid once warm");
    events.clear();
    let ((), allocations) = tickwire_testkit::allocations(|| {
        for f in counted {
            adapter.on_binary(f, 0, &mut |e| events.push(e)).unwrap();
        }
    });
    assert_eq!(allocations, 0);
    let count = |f: fn(&Kind) -> bool| events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(count(|k| matches!(k, Kind::Trade { .. })), 500);
    assert_eq!(count(|k| matches!(k, Kind::Gap { .. })), 0);
    assert!(count(|k| matches!(k, Kind::BookDelta { .. })) >= 500);
    assert!(adapter.book(InstrumentId(0)).is_some(), "still valid");
}

/// What `SyncConfig::bytes` says a book's engine sets aside (the book
/// share of the budget `run --check` prints) is what creating it asks the
/// allocator for, on every venue, shallow and deep.
#[test]
fn a_book_engine_sets_aside_what_its_config_says() {
    use tickwire_venues::Venue;
    use tickwire_venues::sync::BookSync;
    for (name, venue) in Venue::ALL {
        for depth in [5, 20, 400] {
            let config = venue.sync_config(depth);
            let budget = config.bytes() as u64;
            let (sync, bytes) =
                tickwire_testkit::allocated_bytes(|| BookSync::new(venue.chain(), config));
            drop(sync);
            assert!(
                bytes >= budget && bytes - budget <= budget / 20 + 1024,
                "{name} at depth {depth}: the engine asked for {bytes} bytes, its config says {budget}"
            );
        }
    }
}
