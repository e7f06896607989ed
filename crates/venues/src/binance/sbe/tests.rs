//! The SBE streams against the JSON streams: the same market sent both ways
//! gives the same events and the same books.

use tickwire_sbe::spot_stream::{
    BestBidAskHead, DiffHead, Level, SnapshotHead, Trade, TradesHead, encode,
};

use super::*;
use crate::binance::Market;
use crate::book::Limit;
use crate::event::{InstrumentSpec, Kind};
use crate::json::INPUT_PADDING;

fn adapter() -> Adapter {
    Adapter::new(
        Market::Spot,
        &[
            InstrumentSpec::new("BNBBTC", 8, 8, 100),
            InstrumentSpec::new("ETHBTC", 6, 4, 0),
        ],
    )
}

fn json(a: &mut Adapter, text: &str) -> (Result<Outcome, DecodeError>, Vec<Event>) {
    crate::adapter::testutil::feed(a, text, 1)
}

fn binary(a: &mut Adapter, frame: &[u8]) -> (Result<Outcome, DecodeError>, Vec<Event>) {
    let mut events = Vec::new();
    let r = a.on_binary(frame, 1, &mut |e| events.push(e));
    (r, events)
}

fn snapshot(a: &mut Adapter, text: &str) -> Vec<Event> {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, b' ');
    let mut events = Vec::new();
    let id = a.instrument("BNBBTC").unwrap();
    a.on_snapshot_at(id, Limit::Whole, &mut buf, text.len(), 1, &mut |e| {
        events.push(e)
    })
    .unwrap();
    events
}

fn frame(write: impl FnOnce(&mut [u8]) -> Result<usize, tickwire_sbe::EncodeError>) -> Vec<u8> {
    let mut out = vec![0u8; 1024];
    let n = write(&mut out).unwrap();
    out.truncate(n);
    out
}

fn diff(first: i64, last: i64, bids: &[Level], asks: &[Level]) -> Vec<u8> {
    let h = DiffHead {
        event_time_us: 1_672_515_782_136_000,
        first_update_id: first,
        last_update_id: last,
        // Sent at the venue's own exponents, not the instrument's scale.
        price_exponent: -8,
        qty_exponent: -3,
    };
    frame(|out| encode::depth_diff(out, &h, bids, asks, b"BNBBTC"))
}

fn lv(price: i64, qty: i64) -> Level {
    Level { price, qty }
}

/// One market, both ways: a diff before the snapshot, the snapshot, a diff
/// after it, a trade, a quote. The same events, the same book.
#[test]
fn the_same_market_in_sbe_and_in_json_gives_the_same_events() {
    let rest = r#"{"lastUpdateId":160,"bids":[["0.00240000","10.000"]],"asks":[["0.00260000","100.000"]]}"#;
    let (mut j, mut s) = (adapter(), adapter());
    let both = |j: &mut Adapter, s: &mut Adapter, text: &str, bytes: Vec<u8>| {
        let (rj, ej) = json(j, text);
        let (rs, es) = binary(s, &bytes);
        assert_eq!(rj, rs, "{text}");
        // Digits as sent differ (JSON's text has its own); the values not.
        let strip = |e: &[Event]| -> Vec<Kind> { e.iter().map(|e| e.kind).collect() };
        assert_eq!(strip(&ej), strip(&es), "{text}");
        assert_eq!(
            ej.iter().map(|e| e.exchange_ns).collect::<Vec<_>>(),
            es.iter().map(|e| e.exchange_ns).collect::<Vec<_>>()
        );
    };
    both(
        &mut j,
        &mut s,
        r#"{"e":"depthUpdate","E":1672515782136,"s":"BNBBTC","U":157,"u":160,"b":[["0.00240000","10.000"]],"a":[]}"#,
        diff(157, 160, &[lv(240_000, 10_000)], &[]),
    );
    assert_eq!(snapshot(&mut j, rest), snapshot(&mut s, rest));
    both(
        &mut j,
        &mut s,
        r#"{"e":"depthUpdate","E":1672515782136,"s":"BNBBTC","U":161,"u":163,"b":[["0.00241000","2.500"],["0.00240000","0.000"]],"a":[["0.00259000","1.000"]]}"#,
        diff(
            161,
            163,
            &[lv(241_000, 2_500), lv(240_000, 0)],
            &[lv(259_000, 1_000)],
        ),
    );
    let id = j.instrument("BNBBTC").unwrap();
    let book = s.book(id).expect("valid");
    assert_eq!(
        book.top().map(|(b, a)| (b.price, b.size, a.price, a.size)),
        Some((241_000, 250_000_000, 259_000, 100_000_000))
    );
    let levels = |a: &Adapter, side| -> Vec<(i64, i64)> {
        let book = a.book(id).expect("valid");
        book.levels(side)
            .iter()
            .map(|l| (l.price, l.size))
            .collect()
    };
    for side in [Side::Bid, Side::Ask] {
        assert_eq!(levels(&j, side), levels(&s, side));
    }
    assert_eq!(levels(&s, Side::Bid), [(241_000, 250_000_000)]);
    assert_eq!(
        levels(&s, Side::Ask),
        [(259_000, 100_000_000), (260_000, 10_000_000_000)]
    );
    let t = TradesHead {
        event_time_us: 1_672_515_782_136_000,
        transact_time_us: 1_672_515_782_135_000,
        price_exponent: -8,
        qty_exponent: -3,
    };
    both(
        &mut j,
        &mut s,
        r#"{"e":"trade","E":1672515782136,"s":"BNBBTC","t":12345,"p":"0.00241000","q":"1.500","T":1672515782135,"m":true,"M":true}"#,
        frame(|out| {
            encode::trades(
                out,
                &t,
                &[Trade {
                    id: 12345,
                    price: 241_000,
                    qty: 1_500,
                    is_buyer_maker: true,
                }],
                b"BNBBTC",
            )
        }),
    );
    // A gap in the diffs: the same gap.
    both(
        &mut j,
        &mut s,
        r#"{"e":"depthUpdate","E":1672515782136,"s":"BNBBTC","U":170,"u":171,"b":[],"a":[]}"#,
        diff(170, 171, &[], &[]),
    );
    assert!(s.book(id).is_none() && j.book(id).is_none());
}

/// Quotes are exact, and ids skipped by the venue's culling neither drop
/// the next quote nor say anything of the book (the one event is the
/// quote).
#[test]
fn a_quote_is_exact_and_one_after_culled_ids_is_taken() {
    let mut a = adapter();
    let q = |id: i64| {
        let h = BestBidAskHead {
            event_time_us: 1_000_000,
            book_update_id: id,
            price_exponent: -8,
            qty_exponent: -3,
            bid: lv(240_000, 10_000),
            ask: lv(260_000, 500),
        };
        frame(|out| encode::best_bid_ask(out, &h, b"ETHBTC"))
    };
    let (r, ev) = binary(&mut a, &q(400));
    assert_eq!(r, Ok(Outcome::Data));
    assert_eq!(
        ev.iter()
            .map(|e| (e.kind, e.exchange_ns))
            .collect::<Vec<_>>(),
        [(
            Kind::Quote {
                bid_price: 2_400,
                bid_size: 100_000,
                ask_price: 2_600,
                ask_size: 5_000,
                update_id: 400,
            },
            1_000_000_000
        )]
    );
    // Ids 401..=409 culled by the venue: the next quote is simply newer.
    let (r, ev) = binary(&mut a, &q(410));
    assert_eq!((r, ev.len()), (Ok(Outcome::Data), 1));
    assert!(matches!(ev[0].kind, Kind::Quote { update_id: 410, .. }));
}

/// A best bid/ask of `symbol`, readable at ETHBTC's scales.
fn quote_of(symbol: &[u8]) -> Vec<u8> {
    let h = BestBidAskHead {
        event_time_us: 1_000_000,
        book_update_id: 1,
        price_exponent: -8,
        qty_exponent: -3,
        bid: lv(240_000, 10_000),
        ask: lv(260_000, 500),
    };
    frame(|out| encode::best_bid_ask(out, &h, symbol))
}

/// One trade of `symbol` with trade id `id`, readable at ETHBTC's scales.
fn trade_of(id: i64, symbol: &[u8]) -> Vec<u8> {
    let trade = Trade {
        id,
        price: 240_000,
        qty: 1,
        is_buyer_maker: false,
    };
    frame(|out| encode::trades(out, &TradesHead::default(), &[trade], symbol))
}

#[test]
fn what_is_not_the_schemas_or_not_this_adapters_is_said() {
    let mut a = adapter();
    let d = diff(1, 2, &[lv(240_000, 1)], &[]);
    let (r, ev) = binary(&mut a, &d[..d.len() - 1]);
    assert!(
        matches!(
            r,
            Err(DecodeError::Sbe(
                tickwire_sbe::DecodeError::Truncated { .. }
            ))
        ),
        "{r:?}"
    );
    assert!(ev.is_empty());
    // A symbol not in the table; the 20-level book (not normalised).
    let other = frame(|out| encode::depth_diff(out, &DiffHead::default(), &[], &[], b"XRPBTC"));
    assert_eq!(binary(&mut a, &other), (Ok(Outcome::Ignored), vec![]));
    let top =
        frame(|out| encode::depth_snapshot(out, &SnapshotHead::default(), &[], &[], b"BNBBTC"));
    assert_eq!(binary(&mut a, &top), (Ok(Outcome::Ignored), vec![]));
    // A best bid/ask and a trade of a symbol not in the table: not ours.
    let others = [quote_of(b"XRPBTC"), trade_of(1, b"XRPBTC")];
    for m in &others {
        assert_eq!(binary(&mut a, m), (Ok(Outcome::Ignored), vec![]));
    }
    // Its trade id the venue never sends (negative) is still said, as of
    // a trade of ours.
    for symbol in [&b"XRPBTC"[..], b"ETHBTC"] {
        let bad = trade_of(-1, symbol);
        assert_eq!(
            binary(&mut a, &bad),
            (Err(DecodeError::Range("id")), vec![])
        );
    }
    // A symbol that is not text, in a diff, a best bid/ask and a trade
    // (found by its bytes, then checked only as not found): said, nothing
    // emitted.
    let not_text = b"ETH\xffBTC";
    let messages = [
        frame(|out| encode::depth_diff(out, &DiffHead::default(), &[], &[], not_text)),
        quote_of(not_text),
        trade_of(1, not_text),
    ];
    for m in &messages {
        assert_eq!(binary(&mut a, m), (Err(DecodeError::Utf8), vec![]));
    }
    // A price below the instrument's scale (ETHBTC keeps 6 decimals):
    // the typed error, naming the instrument.
    let t = TradesHead {
        price_exponent: -8,
        qty_exponent: 0,
        ..TradesHead::default()
    };
    let trade = frame(|out| {
        encode::trades(
            out,
            &t,
            &[Trade {
                id: 1,
                price: 240_001,
                qty: 1,
                is_buyer_maker: false,
            }],
            b"ETHBTC",
        )
    });
    let (r, _) = binary(&mut a, &trade);
    let Err(DecodeError::Decimal(d)) = r else {
        panic!("{r:?}")
    };
    assert_eq!(
        (d.field, d.value.as_str(), d.scale),
        ("price", "240001e-8", 6)
    );
    assert_eq!(d.instrument, a.instrument("ETHBTC"));
    // A negative update id is not the venue's.
    let bad = diff(-1, 2, &[], &[]);
    assert_eq!(
        binary(&mut a, &bad).0,
        Err(DecodeError::Range("firstBookUpdateId"))
    );
    // Two trades, the second below the scale: the message emits nothing.
    let two = frame(|out| {
        let ok = Trade {
            id: 1,
            price: 240_000,
            qty: 1,
            is_buyer_maker: false,
        };
        let bad = Trade {
            id: 2,
            price: 240_001,
            ..ok
        };
        encode::trades(out, &t, &[ok, bad], b"ETHBTC")
    });
    let (r, ev) = binary(&mut a, &two);
    assert!(matches!(r, Err(DecodeError::Decimal(_))), "{r:?}");
    assert!(ev.is_empty(), "{ev:?}");
}
