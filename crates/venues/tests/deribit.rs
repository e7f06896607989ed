//! Deribit over the recording in `../shared/samples` (skipped, with a line
//! saying so, when absent): every message decodes, and the `book.*.raw`
//! chains (46 notifications over several instruments) stay valid with
//! `prev_change_id == previous change_id` and never cross.

mod common;

use std::collections::BTreeMap;

use tickwire_venues::deribit::{self, Message};
use tickwire_venues::sync::{BookSync, Chain, SyncConfig, SyncEvent};

#[test]
fn the_book_chains_stay_valid() {
    let Some(dir) = common::samples("deribit") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("cryptofeed_DERIBIT.ws.1.0.jsonl")).unwrap();
    let mut books: BTreeMap<String, BookSync> = BTreeMap::new();
    let (mut valid, mut updates, mut others) = (0, 0, 0);
    for (i, line) in text.lines().filter(|l| !l.is_empty()).enumerate() {
        match deribit::decode(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)) {
            Message::Book(b) => {
                let sync = books
                    .entry(b.instrument.to_owned())
                    .or_insert_with(|| BookSync::new(Chain::Deribit, SyncConfig::default()));
                deribit::feed_book(sync, &b, 8, 4, &mut |e| match e {
                    SyncEvent::Valid { .. } => valid += 1,
                    SyncEvent::Updated { .. } => updates += 1,
                    other => panic!("line {}: {other:?}", i + 1),
                })
                .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            }
            _ => others += 1,
        }
    }
    eprintln!(
        "{} books, {valid} snapshots, {updates} changes, {others} other messages",
        books.len()
    );
    assert_eq!(valid + updates, 46);
    assert!(updates > 0 && others > 0);
    assert!(
        books
            .values()
            .all(|s| s.book().is_some_and(|b| !b.is_crossed()))
    );
}
