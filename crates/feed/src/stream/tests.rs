use proptest::prelude::*;
use tickwire_venues::book::Side;
use tickwire_venues::event::{Aggressor, Kind};

use super::*;
use crate::shm::tests::every_kind;

fn instrument(venue: &str, symbol: &str) -> Instrument {
    Instrument {
        venue: venue.into(),
        symbol: symbol.into(),
        price_scale: 2,
        size_scale: 8,
    }
}

fn event(kind: Kind) -> Event {
    Event {
        instrument: FeedId(3),
        exchange_ns: 1_723_161_255_208_000_000,
        recv_tsc: 987_654_321,
        kind,
    }
}

#[test]
fn every_kind_comes_back_as_it_went() {
    for (n, kind) in every_kind().into_iter().enumerate() {
        let e = event(kind);
        let m = encode_event(0xdead_beef, n as u64 + 1, &e, 42).unwrap();
        assert_eq!(
            decode(&m).unwrap(),
            Message::Event {
                publisher: 0xdead_beef,
                sequence: n as u64 + 1,
                event: e,
                unix_ns: 42
            }
        );
        assert_eq!(event_sequence(&m), Some((0xdead_beef, n as u64 + 1)));
    }
}

/// The offsets `docs/stream.md` gives, read by hand from the bytes, as a
/// reader in another language would read them.
#[test]
fn an_event_sits_at_the_documented_offsets() {
    let e = Event {
        instrument: FeedId(0x0102_0304),
        exchange_ns: 11,
        recv_tsc: 22,
        kind: Kind::BookDelta {
            side: Side::Ask,
            price: -5,
            size: 7,
            update_id: 99,
            last: true,
        },
    };
    let m = encode_event(0x0a0b_0c0d, 0x1122_3344_5566_7788, &e, 33).unwrap();
    let u64_at = |at: usize| u64::from_le_bytes(m[at..at + 8].try_into().unwrap());
    assert_eq!(&m[0..2], b"TW");
    assert_eq!(m[2], 1, "version");
    assert_eq!(m[3], 1, "an event");
    assert_eq!(&m[4..8], &0x0a0b_0c0du32.to_le_bytes());
    assert_eq!(u64_at(8), 0x1122_3344_5566_7788);
    assert_eq!(&m[16..20], &0x0102_0304u32.to_le_bytes());
    assert_eq!(
        (m[20], m[21], m[22], m[23]),
        (4, 1, 1, 0),
        "delta, ask, last"
    );
    assert_eq!((u64_at(24), u64_at(32), u64_at(40)), (11, 22, 33));
    assert_eq!(u64_at(48) as i64, -5);
    assert_eq!((u64_at(56), u64_at(64)), (7, 99));
    assert_eq!((u64_at(72), u64_at(80)), (0, 0));
    assert_eq!(m.len(), 88);

    let trade = encode_event(
        1,
        1,
        &event(Kind::Trade {
            price: 100,
            size: 2,
            aggressor: Aggressor::Sell,
            trade_id: 77,
        }),
        0,
    )
    .unwrap();
    assert_eq!((trade[20], trade[21]), (1, 1), "trade, sell");
    assert_eq!(trade[48..56], 100u64.to_le_bytes());
    assert_eq!(trade[64..72], 77u64.to_le_bytes());
}

#[test]
fn a_table_goes_in_parts_and_comes_back_whole() {
    let names: Vec<Instrument> = (0..19)
        .map(|i| instrument("binance", &format!("SYM{i}USDT")))
        .collect();
    let parts = encode_table(7, &names).unwrap();
    assert_eq!(parts.len(), 3, "8 + 8 + 3");
    assert!(parts.iter().all(|p| p.len() <= TABLE_PART_LEN));
    let mut got = Vec::new();
    for p in &parts {
        // Not an event: the hot path's reader passes it over.
        assert_eq!(event_sequence(p), None);
        assert_eq!(decode_event(p), Ok(None));
        match decode(p).unwrap() {
            Message::Table {
                publisher,
                total,
                entries,
            } => {
                assert_eq!((publisher, total), (7, 19));
                got.extend(entries);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(got.len(), 19);
    for (i, (g, n)) in got.iter().zip(&names).enumerate() {
        assert_eq!(g.id, FeedId(i as u32));
        assert_eq!((&g.venue, &g.symbol), (&n.venue, &n.symbol));
        assert_eq!((g.price_scale, g.size_scale), (2, 8));
    }
    // The entry's documented offsets.
    let p = &parts[1];
    assert_eq!(&p[12..16], &8u32.to_le_bytes(), "first entry of part 2");
    let e = &p[TABLE_HEADER..TABLE_HEADER + ENTRY_LEN];
    assert_eq!(&e[0..4], &8u32.to_le_bytes());
    assert_eq!((e[4], e[5], e[6], e[7]), (2, 8, 7, 8));
    assert_eq!(&e[8..15], b"binance");
    assert_eq!(&e[40..50], b"SYM8USDT\0\0");
}

#[test]
fn a_name_too_long_is_refused_not_cut() {
    let long = "X".repeat(MAX_SYMBOL + 1);
    let err = encode_table(1, &[instrument("okx", &long)]).unwrap_err();
    assert!(err.to_string().contains("at most"));
    assert!(encode_table(1, &[instrument("okx", &"X".repeat(MAX_SYMBOL))]).is_ok());
}

#[test]
fn another_version_or_magic_is_refused_and_an_unknown_kind_skipped() {
    let mut m = encode_event(1, 5, &event(Kind::Resync), 0).unwrap();
    m[2] = 2;
    assert_eq!(decode(&m), Err(BadMessage::Version(2)));
    assert_eq!(event_sequence(&m), None);
    m[2] = 1;
    m[0] = b'X';
    assert_eq!(decode(&m), Err(BadMessage::Magic));
    m[0] = b'T';
    m[20] = 200;
    assert_eq!(
        decode(&m),
        Ok(Message::Unknown {
            publisher: 1,
            sequence: 5
        })
    );
    assert_eq!(decode(&m[..40]), Err(BadMessage::Length));
    m[3] = 9;
    assert_eq!(decode(&m), Err(BadMessage::Type(9)));
}

/// A gap with a reason this version does not name, and a book event that
/// does not read, are gaps: a reader never keeps trusting a book past one.
#[test]
fn a_gap_of_an_unnamed_reason_or_a_bent_book_event_is_a_gap() {
    let gap = Kind::Gap {
        why: Resync::Disconnected,
    };
    for (kind, sub, flag) in [(6, 77, 0), (4, 2, 0), (4, 0, 9), (3, 0, 0), (5, 0, 0)] {
        let mut m = encode_event(1, 5, &event(Kind::Resync), 0).unwrap();
        (m[20], m[21], m[22]) = (kind, sub, flag);
        if kind == 3 {
            // A level count past u32.
            m[56..64].copy_from_slice(&u64::MAX.to_le_bytes());
        }
        let read = decode_event(&m)
            .unwrap()
            .map(|(_, _, e, _)| (e.kind, e.instrument));
        if kind == 5 {
            // Nothing of `book valid` can be out of its table.
            assert!(matches!(read, Some((Kind::BookValid { .. }, _))));
        } else {
            assert_eq!(
                read,
                Some((gap, FeedId(3))),
                "kind {kind} sub {sub} flag {flag}"
            );
        }
    }
    // Another kind not known: skipped, not a gap.
    let mut m = encode_event(1, 5, &event(Kind::Resync), 0).unwrap();
    m[20] = 11;
    assert_eq!(decode_event(&m), Ok(None));
}

#[test]
fn a_table_part_without_entries_is_refused() {
    let mut p = encode_table(1, &[instrument("a", "b")]).unwrap().remove(0);
    p[16] = 0;
    p.truncate(TABLE_HEADER);
    assert_eq!(decode(&p), Err(BadMessage::Length));
}

#[test]
fn a_table_entry_out_of_place_is_refused() {
    let mut p = encode_table(1, &[instrument("a", "b"), instrument("c", "d")])
        .unwrap()
        .remove(0);
    p[TABLE_HEADER + ENTRY_LEN] = 5;
    assert_eq!(decode(&p), Err(BadMessage::Table));
}

#[test]
fn the_sequence_check_counts_what_was_lost() {
    let mut s = Sequence::new();
    assert_eq!(s.observe(100), Step::Joined);
    assert_eq!(s.observe(101), Step::Next);
    assert_eq!(s.observe(105), Step::Gap { lost: 3 });
    assert_eq!(s.observe(104), Step::Old);
    assert_eq!(s.observe(105), Step::Old);
    assert_eq!(s.observe(106), Step::Next);
    assert_eq!((s.received, s.gaps, s.lost, s.old), (4, 1, 3, 2));
    assert_eq!(s.last(), Some(106));
}

proptest! {
    /// Any bytes: a message or a typed refusal, never a panic.
    #[test]
    fn any_bytes_read_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..1200)) {
        let _ = decode(&bytes);
        let _ = decode_event(&bytes);
        let _ = event_sequence(&bytes);
    }

    /// A real message cut short, or with one byte changed, never panics
    /// and a cut event is never read as an event.
    #[test]
    fn a_cut_or_bent_message_never_panics(
        cut in 0usize..88,
        at in 0usize..88,
        to in any::<u8>(),
        kind in 0usize..14,
    ) {
        let kinds = every_kind();
        let m = encode_event(9, 1, &event(kinds[kind % kinds.len()]), 3).unwrap();
        prop_assert!(decode_event(&m[..cut]).is_err());
        let mut bent = m;
        bent[at] = to;
        let _ = decode(&bent);
        let parts = encode_table(9, &[instrument("bybit", "BTCUSDT"), instrument("okx", "ETH-USDT")]).unwrap();
        let _ = decode(&parts[0][..cut.min(parts[0].len())]);
    }
}
