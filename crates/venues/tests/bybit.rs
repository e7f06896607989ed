//! Bybit v5 over the recording in `../shared/samples` (skipped, with a line
//! saying so, when absent): the XRPUSDT `orderbook.500` chain (a snapshot
//! and 49 deltas) decodes, stays valid with `u` +1 every message, and never
//! crosses.

mod common;

use tickwire_venues::bybit::{self, Message};
use tickwire_venues::json::JsonParser;
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};

#[test]
fn the_v5_orderbook_chain_stays_valid() {
    let Some(dir) = common::samples("bybit") else {
        return;
    };
    let text = std::fs::read(dir.join("nautilus_2024-12-01_XRPUSDT_ob500.data.jsonl")).unwrap();
    let mut parser = JsonParser::default();
    let mut sync = BookSync::new(
        Chain::Bybit,
        SyncConfig {
            depth: 500,
            ..SyncConfig::default()
        },
    );
    let mut events = Vec::new();
    for (line, mut buf, len) in common::padded_lines(&text) {
        parser
            .parse(&mut buf, len, |doc| {
                let Message::Book(b) =
                    bybit::decode(doc).unwrap_or_else(|e| panic!("line {line}: {e}"))
                else {
                    panic!("line {line}: not a book message")
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
