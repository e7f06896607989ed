//! The Binance decoder on arbitrary bytes: parse in place, decode, read
//! every level at a scale, and feed depth and snapshots to a sync engine of
//! each chain. Nothing may panic; errors are fine.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_venues::binance::{self, Message, Scales, feed_depth, feed_snapshot};
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::sync::{BookSync, Chain, SyncConfig};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the scale; the rest is the message (possibly
    // several, split at newlines, fed to the same engines).
    let Some((&scale, data)) = data.split_first() else {
        return;
    };
    let scales = Scales {
        price: scale % 20,
        qty: (scale / 20) % 20,
    };
    let config = SyncConfig {
        depth: 8,
        max_buffered_diffs: 4,
        max_buffered_levels: 64,
    };
    let mut engines = [
        BookSync::new(Chain::BinanceSpot, config),
        BookSync::new(Chain::BinanceFutures, config),
    ];
    let mut parser = JsonParser::new(256);
    for msg in data.split(|&b| b == b'\n') {
        let mut buf = msg.to_vec();
        buf.resize(msg.len() + INPUT_PADDING, 0);
        let _ = parser.parse(&mut buf, msg.len(), |doc| {
            let Ok(m) = binance::decode(doc) else { return };
            for sync in &mut engines {
                let mut emit = |_| {};
                match &m {
                    Message::Depth(d) => {
                        let _ = feed_depth(sync, d, scales, &mut emit);
                    }
                    Message::Snapshot(s) => {
                        let _ = feed_snapshot(sync, s, scales, &mut emit);
                    }
                    _ => {}
                }
                if let Some(book) = sync.book() {
                    assert!(!book.is_crossed(), "a valid book is never crossed");
                }
            }
        });
    }
});
