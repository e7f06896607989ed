//! The encoder and the decoder against each other, and the decoder against
//! any bytes: every message reads back as written, every truncation and
//! every bent header is a typed error, nothing panics.

use proptest::prelude::*;
use tickwire_sbe::DecodeError;
use tickwire_sbe::spot_stream::{
    self, BestBidAskHead, DiffHead, Level, Message, SnapshotHead, Trade, TradesHead, encode,
};

fn level() -> impl Strategy<Value = Level> {
    (any::<i64>(), any::<i64>()).prop_map(|(price, qty)| Level { price, qty })
}

fn levels() -> impl Strategy<Value = Vec<Level>> {
    proptest::collection::vec(level(), 0..40)
}

fn symbol() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..=255)
}

fn trade() -> impl Strategy<Value = Trade> {
    (any::<i64>(), any::<i64>(), any::<i64>(), any::<bool>()).prop_map(
        |(id, price, qty, is_buyer_maker)| Trade {
            id,
            price,
            qty,
            is_buyer_maker,
        },
    )
}

/// One message of any template, written.
#[derive(Debug, Clone)]
enum Written {
    Trades(TradesHead, Vec<Trade>, Vec<u8>),
    Bbo(BestBidAskHead, Vec<u8>),
    Snapshot(SnapshotHead, Vec<Level>, Vec<Level>, Vec<u8>),
    Diff(DiffHead, Vec<Level>, Vec<Level>, Vec<u8>),
}

fn written() -> impl Strategy<Value = Written> {
    let e = any::<i8>();
    prop_oneof![
        (
            any::<(i64, i64)>(),
            e,
            e,
            proptest::collection::vec(trade(), 0..10),
            symbol()
        )
            .prop_map(|((event, transact), p, q, t, s)| Written::Trades(
                TradesHead {
                    event_time_us: event,
                    transact_time_us: transact,
                    price_exponent: p,
                    qty_exponent: q
                },
                t,
                s
            )),
        (any::<(i64, i64)>(), e, e, level(), level(), symbol()).prop_map(
            |((event, id), p, q, bid, ask, s)| {
                Written::Bbo(
                    BestBidAskHead {
                        event_time_us: event,
                        book_update_id: id,
                        price_exponent: p,
                        qty_exponent: q,
                        bid,
                        ask,
                    },
                    s,
                )
            }
        ),
        (any::<(i64, i64)>(), e, e, levels(), levels(), symbol()).prop_map(
            |((event, id), p, q, b, a, s)| {
                Written::Snapshot(
                    SnapshotHead {
                        event_time_us: event,
                        book_update_id: id,
                        price_exponent: p,
                        qty_exponent: q,
                    },
                    b,
                    a,
                    s,
                )
            }
        ),
        (any::<(i64, i64, i64)>(), e, e, levels(), levels(), symbol()).prop_map(
            |((event, first, last), p, q, b, a, s)| {
                Written::Diff(
                    DiffHead {
                        event_time_us: event,
                        first_update_id: first,
                        last_update_id: last,
                        price_exponent: p,
                        qty_exponent: q,
                    },
                    b,
                    a,
                    s,
                )
            }
        ),
    ]
}

fn encode_into(w: &Written, out: &mut [u8]) -> usize {
    match w {
        Written::Trades(h, t, s) => encode::trades(out, h, t, s),
        Written::Bbo(h, s) => encode::best_bid_ask(out, h, s),
        Written::Snapshot(h, b, a, s) => encode::depth_snapshot(out, h, b, a, s),
        Written::Diff(h, b, a, s) => encode::depth_diff(out, h, b, a, s),
    }
    .expect("room enough")
}

fn check(w: &Written, m: &Message<'_>) -> Result<(), TestCaseError> {
    match (w, m) {
        (Written::Trades(h, t, s), Message::Trades(d)) => {
            prop_assert_eq!(&d.head(), h);
            prop_assert_eq!(d.trades().len(), t.len());
            prop_assert_eq!(&d.trades().collect::<Vec<_>>(), t);
            prop_assert_eq!(d.symbol(), &s[..]);
        }
        (Written::Bbo(h, s), Message::BestBidAsk(d)) => {
            prop_assert_eq!(&d.head(), h);
            prop_assert_eq!(d.symbol(), &s[..]);
        }
        (Written::Snapshot(h, b, a, s), Message::DepthSnapshot(d)) => {
            prop_assert_eq!(&d.head(), h);
            prop_assert_eq!(&d.bids().collect::<Vec<_>>(), b);
            prop_assert_eq!(&d.asks().collect::<Vec<_>>(), a);
            prop_assert_eq!(d.symbol(), &s[..]);
        }
        (Written::Diff(h, b, a, s), Message::DepthDiff(d)) => {
            prop_assert_eq!(&d.head(), h);
            prop_assert_eq!(d.bids().len(), b.len());
            prop_assert_eq!(&d.bids().collect::<Vec<_>>(), b);
            prop_assert_eq!(&d.asks().collect::<Vec<_>>(), a);
            prop_assert_eq!(d.symbol(), &s[..]);
        }
        (w, m) => prop_assert!(false, "wrote {w:?}, read {m:?}"),
    }
    Ok(())
}

proptest! {
    /// Any message reads back as written; the length returned is the
    /// message's, and a buffer one byte short is refused with that length.
    #[test]
    fn every_message_reads_back_as_written(w in written()) {
        let mut out = vec![0u8; 4096];
        let n = encode_into(&w, &mut out);
        let m = spot_stream::decode(&out[..n]).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(&w, &m)?;
        let mut short = vec![0u8; n - 1];
        let refused = match &w {
            Written::Trades(h, t, s) => encode::trades(&mut short, h, t, s),
            Written::Bbo(h, s) => encode::best_bid_ask(&mut short, h, s),
            Written::Snapshot(h, b, a, s) => encode::depth_snapshot(&mut short, h, b, a, s),
            Written::Diff(h, b, a, s) => encode::depth_diff(&mut short, h, b, a, s),
        };
        prop_assert_eq!(refused, Err(tickwire_sbe::EncodeError::BufferTooSmall { need: n }));
    }

    /// Every truncation of a message is `Truncated`; a byte more is
    /// `Trailing`.
    #[test]
    fn a_cut_or_a_longer_message_is_refused(w in written(), cut in any::<prop::sample::Index>(), extra in 1usize..4) {
        let mut out = vec![0u8; 4096];
        let n = encode_into(&w, &mut out);
        let at = cut.index(n);
        let got = spot_stream::decode(&out[..at]);
        prop_assert!(matches!(got, Err(DecodeError::Truncated { have, .. }) if have == at), "{:?}", got);
        let got = spot_stream::decode(&out[..n + extra]);
        prop_assert!(matches!(got, Err(DecodeError::Trailing { extra: e, .. }) if e == extra), "{:?}", got);
    }

    /// Longer blocks and entries than the schema's (as SBE lets a writer
    /// send) are stepped over by their lengths: the fields read the same.
    #[test]
    fn longer_blocks_and_entries_are_stepped_over(
        head in any::<(i64, i64, i64)>(),
        bids in levels(),
        asks in levels(),
        pad_block in 1usize..9,
        pad_entry in 1usize..9,
    ) {
        let h = DiffHead { event_time_us: head.0, first_update_id: head.1, last_update_id: head.2, price_exponent: -2, qty_exponent: -8 };
        // Written by hand: root block and entries padded with 0xEE.
        let mut b = Vec::new();
        b.extend_from_slice(&((26 + pad_block) as u16).to_le_bytes());
        b.extend_from_slice(&10003u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        for v in [h.event_time_us, h.first_update_id, h.last_update_id] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&[h.price_exponent as u8, h.qty_exponent as u8]);
        b.extend(std::iter::repeat_n(0xEE, pad_block));
        for side in [&bids, &asks] {
            b.extend_from_slice(&((16 + pad_entry) as u16).to_le_bytes());
            b.extend_from_slice(&(side.len() as u16).to_le_bytes());
            for l in side.iter() {
                b.extend_from_slice(&l.price.to_le_bytes());
                b.extend_from_slice(&l.qty.to_le_bytes());
                b.extend(std::iter::repeat_n(0xEE, pad_entry));
            }
        }
        b.extend_from_slice(&[3, b'A', b'B', b'C']);
        let m = spot_stream::decode(&b).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(&Written::Diff(h, bids, asks, b"ABC".to_vec()), &m)?;
    }

    /// Any bytes: an answer, never a panic; bytes that decode, written
    /// again, are no longer than they were and read back as the same
    /// message (padding, and the entry length of an empty group, may go).
    #[test]
    fn any_bytes_decode_or_are_refused(mut bytes in proptest::collection::vec(any::<u8>(), 0..300), template in 10000u16..10005) {
        if bytes.len() >= 8 {
            // Often a real header, so the bodies are reached.
            bytes[2..4].copy_from_slice(&template.to_le_bytes());
            bytes[4..8].copy_from_slice(&[1, 0, 0, 0]);
        }
        if let Ok(m) = spot_stream::decode(&bytes)
            && let Some(again) = write_again(&m)
        {
            prop_assert!(again.len() <= bytes.len());
            let read_back = spot_stream::decode(&again).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(read_back, m);
        }
    }

    /// Trades written with longer blocks and entries read the same.
    #[test]
    fn longer_trade_entries_are_stepped_over(list in proptest::collection::vec(trade(), 0..6), pad in 1usize..9) {
        let mut b = Vec::new();
        b.extend_from_slice(&((18 + pad) as u16).to_le_bytes());
        b.extend_from_slice(&10000u16.to_le_bytes());
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&5i64.to_le_bytes());
        b.extend_from_slice(&6i64.to_le_bytes());
        b.extend_from_slice(&[0xFE, 0xFB]);
        b.extend(std::iter::repeat_n(0xEE, pad));
        b.extend_from_slice(&((25 + pad) as u16).to_le_bytes());
        b.extend_from_slice(&(list.len() as u32).to_le_bytes());
        for t in &list {
            for v in [t.id, t.price, t.qty] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.push(u8::from(t.is_buyer_maker));
            // Padding bytes above 1: only isBuyerMaker is a boolean.
            b.extend(std::iter::repeat_n(0xEE, pad));
        }
        b.extend_from_slice(&[1, b'X']);
        let h = TradesHead { event_time_us: 5, transact_time_us: 6, price_exponent: -2, qty_exponent: -5 };
        let m = spot_stream::decode(&b).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(&Written::Trades(h, list, b"X".to_vec()), &m)?;
    }
}

/// A decoded message written again by the encoder.
fn write_again(m: &Message<'_>) -> Option<Vec<u8>> {
    let mut out = vec![0u8; 1 << 16];
    let n = match m {
        Message::Trades(t) => {
            let list: Vec<_> = t.trades().collect();
            encode::trades(&mut out, &t.head(), &list, t.symbol())
        }
        Message::BestBidAsk(b) => encode::best_bid_ask(&mut out, &b.head(), b.symbol()),
        Message::DepthSnapshot(s) => {
            let (b, a): (Vec<_>, Vec<_>) = (s.bids().collect(), s.asks().collect());
            encode::depth_snapshot(&mut out, &s.head(), &b, &a, s.symbol())
        }
        Message::DepthDiff(s) => {
            let (b, a): (Vec<_>, Vec<_>) = (s.bids().collect(), s.asks().collect());
            encode::depth_diff(&mut out, &s.head(), &b, &a, s.symbol())
        }
        Message::Unknown { .. } => return None,
    }
    .ok()?;
    out.truncate(n);
    Some(out)
}

fn sample() -> Vec<u8> {
    let mut out = vec![0u8; 256];
    let h = TradesHead {
        event_time_us: 1,
        transact_time_us: 2,
        price_exponent: -2,
        qty_exponent: -5,
    };
    let t = [Trade {
        id: 9,
        price: 100,
        qty: 5,
        is_buyer_maker: true,
    }];
    let n = encode::trades(&mut out, &h, &t, b"BTCUSDT").unwrap();
    out.truncate(n);
    out
}

#[test]
fn another_schema_or_version_is_refused_and_an_unknown_template_skipped() {
    let mut b = sample();
    b[4] = 2;
    assert_eq!(
        spot_stream::decode(&b).unwrap_err(),
        DecodeError::SchemaId(2)
    );
    let mut b = sample();
    b[6] = 1;
    assert_eq!(
        spot_stream::decode(&b).unwrap_err(),
        DecodeError::Version(1)
    );
    let mut b = sample();
    b[2..4].copy_from_slice(&10009u16.to_le_bytes());
    assert!(matches!(
        spot_stream::decode(&b),
        Ok(Message::Unknown { template_id: 10009 })
    ));
}

#[test]
fn short_blocks_and_entries_and_bad_booleans_are_refused() {
    let mut b = sample();
    b[0] = 17;
    assert_eq!(
        spot_stream::decode(&b).unwrap_err(),
        DecodeError::BlockLength {
            template: 10000,
            got: 17
        }
    );
    // The trades group's blockLength, after the header and the 18-byte block.
    let mut b = sample();
    b[26] = 24;
    assert_eq!(
        spot_stream::decode(&b).unwrap_err(),
        DecodeError::EntryLength {
            template: 10000,
            got: 24
        }
    );
    // isBuyerMaker: the last byte of the one entry (header 8, block 18, group 6, entry 25).
    let mut b = sample();
    assert_eq!(b[8 + 18 + 6 + 24], 1);
    b[8 + 18 + 6 + 24] = 2;
    assert_eq!(spot_stream::decode(&b).unwrap_err(), DecodeError::Bool(2));
}

#[test]
fn a_count_that_would_overflow_is_truncated_not_a_panic() {
    let mut b = sample();
    b[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        spot_stream::decode(&b),
        Err(DecodeError::Truncated { .. })
    ));
}

/// The fuzz target's seeds, written byte by byte from the schema facts by
/// another hand (a script, not this crate's encoder), read as what they are.
#[test]
fn the_fuzz_seeds_read_as_written() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/sbe_stream");
    let read = |name: &str| std::fs::read(format!("{dir}/{name}")).expect("seed committed");
    let b = read("trades");
    let Ok(Message::Trades(t)) = spot_stream::decode(&b) else {
        panic!("trades")
    };
    assert_eq!((t.price_exponent(), t.qty_exponent()), (-2, -5));
    let got: Vec<_> = t.trades().collect();
    assert_eq!(
        got,
        [
            Trade {
                id: 1,
                price: 6_173_763,
                qty: 150_000,
                is_buyer_maker: true
            },
            Trade {
                id: 2,
                price: 6_173_764,
                qty: 1,
                is_buyer_maker: false
            },
        ]
    );
    assert_eq!(t.symbol(), b"BTCUSDT");
    let b = read("best_bid_ask");
    let Ok(Message::BestBidAsk(q)) = spot_stream::decode(&b) else {
        panic!("bbo")
    };
    let h = q.head();
    assert_eq!(
        (h.book_update_id, h.bid.price, h.ask.price, h.ask.qty),
        (42, 6_173_763, 6_173_764, 5)
    );
    let b = read("depth20");
    let Ok(Message::DepthSnapshot(s)) = spot_stream::decode(&b) else {
        panic!("depth20")
    };
    assert_eq!(s.book_update_id(), 100);
    assert_eq!(
        s.bids().map(|l| (l.price, l.qty)).collect::<Vec<_>>(),
        [(6_173_763, 1), (6_173_762, 2)]
    );
    assert_eq!(
        s.asks().map(|l| (l.price, l.qty)).collect::<Vec<_>>(),
        [(6_173_764, 3)]
    );
    let b = read("depth_diff");
    let Ok(Message::DepthDiff(d)) = spot_stream::decode(&b) else {
        panic!("diff")
    };
    assert_eq!((d.first_update_id(), d.last_update_id()), (101, 103));
    assert_eq!(
        d.bids().map(|l| (l.price, l.qty)).collect::<Vec<_>>(),
        [(6_173_763, 0)]
    );
    assert_eq!(d.asks().len(), 2);
}

/// Found by the fuzz target: a trades message with no trades whose group
/// declares an entry length of 24,064 bytes decodes (nothing to step
/// over), and written again it is as long but not the same bytes (the
/// writer declares 25): the oracle compares fields, not bytes.
#[test]
fn an_empty_group_may_declare_any_entry_length() {
    let mut b = sample();
    // The trades group: entry length 0x5e00, count 0; the symbol empty.
    b.truncate(8 + 18);
    b.extend_from_slice(&[0x00, 0x5e, 0, 0, 0, 0, 0]);
    let m = spot_stream::decode(&b).unwrap();
    let Message::Trades(t) = &m else {
        panic!("{m:?}")
    };
    assert_eq!((t.trades().len(), t.symbol()), (0, &b""[..]));
    let again = write_again(&m).unwrap();
    assert_eq!(again.len(), b.len());
    assert_ne!(again, b);
    assert_eq!(spot_stream::decode(&again).unwrap(), m);
}
