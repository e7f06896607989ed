//! OKX over the recordings in `../shared/samples` (skipped, with a line
//! saying so, when absent): every message decodes, every book message
//! (3 snapshots, 287 updates) matches OKX's own CRC32 checksum, and the
//! fixed-layout reader reads every book message exactly as simd-json does.

mod common;

use std::collections::BTreeMap;

use tickwire_venues::json::JsonParser;
use tickwire_venues::okx::{self, Message};
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};

#[test]
fn every_book_message_matches_okx_checksum() {
    let Some(dir) = common::samples("okx") else {
        return;
    };
    let text = std::fs::read(dir.join("cryptofeed_OKX.ws.1.0.jsonl")).unwrap();
    let mut decoder = okx::Decoder::new();
    let mut books: BTreeMap<String, BookSync> = BTreeMap::new();
    let (mut checked, mut trades, mut events_seen) = (0, 0, 0);
    let mut gaps = Vec::new();
    for (line, mut buf, len) in common::padded_lines(&text) {
        decoder.decode(&mut buf, len, |m| {
            match m.unwrap_or_else(|e| panic!("line {line}: {e}")) {
                Message::Book(b) => {
                    let sync = books.entry(b.inst_id.to_owned()).or_insert_with(|| {
                        BookSync::new(
                            Chain::OkxSeq,
                            SyncConfig {
                                depth: 400,
                                ..SyncConfig::default()
                            },
                        )
                    });
                    let mut emit = |e: SyncEvent| {
                        if let SyncEvent::Gap(why) = e {
                            gaps.push((line, why));
                        }
                    };
                    if okx::feed_book(sync, &b, 8, 8, &mut emit).unwrap() {
                        checked += 1;
                    }
                }
                Message::Trades(t) => {
                    trades += t.iter().map(Result::unwrap).count();
                }
                Message::Event(_) => events_seen += 1,
                Message::Other(_) => {}
            }
        });
    }
    eprintln!(
        "{checked} checksums, {trades} trades, {events_seen} events, books {:?}",
        books.keys()
    );
    assert_eq!(gaps, [], "no gap, no checksum mismatch");
    assert_eq!(checked, 290);
    assert!(trades > 0 && events_seen > 0);
    assert!(books.values().all(BookSync::is_valid));
}

#[test]
fn the_fixed_layout_reads_every_book_message_as_simd_json_does() {
    let Some(dir) = common::samples("okx") else {
        return;
    };
    let mut parser = JsonParser::default();
    let (mut books, mut fixed) = (0, 0);
    for file in [
        "cryptofeed_OKX.ws.1.0.jsonl",
        "crypto-msg-parser_okx.jsonl",
        "schema_examples_nautilus_okx.jsonl",
    ] {
        let text = std::fs::read(dir.join(file)).unwrap();
        for (line, mut buf, len) in common::padded_lines(&text) {
            let original = std::str::from_utf8(&buf[..len]).unwrap().to_owned();
            let slow = parser
                .parse(&mut buf, len, |doc| match okx::decode(doc) {
                    Ok(m @ Message::Book(_)) => Some(format!("{m:?}")),
                    _ => None,
                })
                .ok()
                .flatten();
            let fast = okx::scan_fixed(&original).map(|m| format!("{m:?}"));
            if fast.is_some() {
                fixed += 1;
                assert_eq!(fast, slow, "{file}:{line}");
            }
            books += usize::from(slow.is_some());
        }
    }
    eprintln!("{fixed} of {books} book messages in the fixed layout");
    // Every recorded book message is in the layout OKX documents.
    assert!(books >= 290);
    assert_eq!(fixed, books);
}
