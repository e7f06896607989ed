//! Kraken v1 over the recordings in `../shared/samples` (skipped, with a
//! line saying so, when absent): every message decodes, and every book
//! update of the `book-1000` recording (4269 of them, across the pairs)
//! matches Kraken's CRC32 checksum.

mod common;

use std::collections::BTreeMap;

use tickwire_venues::decimal::scale_of;
use tickwire_venues::json::JsonParser;
use tickwire_venues::kraken::{self, Message};
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};

#[test]
fn every_book_update_matches_kraken_checksum() {
    let Some(dir) = common::samples("kraken") else {
        return;
    };
    let mut parser = JsonParser::default();
    let mut checked = 0;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for file in [
        "cryptofeed_KRAKEN.ws.48.0.jsonl",
        "cryptofeed_KRAKEN.ws.49.0.jsonl",
        "cryptofeed_KRAKEN.ws.50.0.jsonl",
    ] {
        let text = std::fs::read(dir.join(file)).unwrap();
        let mut books: BTreeMap<String, (BookSync, (u8, u8))> = BTreeMap::new();
        let mut gaps = Vec::new();
        for (line, mut buf, len) in common::padded_lines(&text) {
            parser
                .parse(&mut buf, len, |doc| {
                    let m = kraken::decode(doc).unwrap_or_else(|e| panic!("{file}:{line}: {e}"));
                    let kind = match &m {
                        Message::Book(_) => "book".to_owned(),
                        Message::Trades { .. } => "trade".to_owned(),
                        Message::Event(e) => format!("event:{e}"),
                        Message::Other(c) => format!("other:{c}"),
                    };
                    *kinds.entry(kind).or_default() += 1;
                    if let Message::Book(b) = m {
                        let depth: usize = b.channel["book-".len()..].parse().unwrap();
                        // Kraken prints each pair at fixed precisions (its
                        // AssetPairs metadata); read them off the snapshot.
                        let (sync, scales) = books.entry(b.pair.to_owned()).or_insert_with(|| {
                            let (p, q) = b.asks.unwrap().iter().next().unwrap().unwrap();
                            (
                                BookSync::new(
                                    Chain::Kraken,
                                    SyncConfig {
                                        depth,
                                        ..SyncConfig::default()
                                    },
                                ),
                                (scale_of(p.as_bytes()), scale_of(q.as_bytes())),
                            )
                        });
                        let mut emit = |e: SyncEvent| {
                            if let SyncEvent::Gap(why) = e {
                                gaps.push((line, why));
                            }
                        };
                        if kraken::feed_book(sync, &b, scales.0, scales.1, &mut emit).unwrap() {
                            checked += 1;
                        }
                    }
                })
                .unwrap();
        }
        assert_eq!(gaps, [], "{file}: no checksum mismatch");
    }
    eprintln!("{checked} checksums; {kinds:?}");
    assert!(checked >= 4269, "{checked} checksums");
}
