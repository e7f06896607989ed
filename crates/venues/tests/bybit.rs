//! Bybit v5 over the recording in `../shared/samples` (skipped, with a line
//! saying so, when absent): the XRPUSDT `orderbook.500` chain (a snapshot
//! and 49 deltas) decodes, stays valid with `u` +1 every message, and never
//! crosses.

use std::path::PathBuf;

use tickwire_venues::bybit::{self, Message};
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};

#[test]
fn the_v5_orderbook_chain_stays_valid() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/samples/bybit/nautilus_2024-12-01_XRPUSDT_ob500.data.jsonl");
    let Ok(text) = std::fs::read(&path) else {
        eprintln!("skipped: ../shared/samples is absent");
        return;
    };
    let mut parser = JsonParser::default();
    let mut sync = BookSync::new(
        Chain::Bybit,
        SyncConfig {
            depth: 500,
            ..SyncConfig::default()
        },
    );
    let mut events = Vec::new();
    for (i, line) in text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let mut buf = line.to_vec();
        buf.resize(line.len() + INPUT_PADDING, 0);
        parser
            .parse(&mut buf, line.len(), |doc| {
                let Message::Book(b) =
                    bybit::decode(doc).unwrap_or_else(|e| panic!("line {}: {e}", i + 1))
                else {
                    panic!("line {}: not a book message", i + 1)
                };
                bybit::feed_book(&mut sync, &b, 4, 0, &mut |e| events.push(e)).unwrap();
            })
            .unwrap();
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, SyncEvent::Valid { .. }))
            .count(),
        1
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, SyncEvent::Updated { .. }))
            .count(),
        49
    );
    assert!(
        !events.iter().any(|e| matches!(e, SyncEvent::Gap(_))),
        "{events:?}"
    );
    let book = sync.book().unwrap();
    assert!(!book.is_crossed());
    assert!(book.levels(tickwire_venues::book::Side::Bid).len() > 100);
}
