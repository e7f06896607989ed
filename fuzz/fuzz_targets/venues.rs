//! Every venue decoder on arbitrary bytes: parse in place, decode, read
//! every level at a scale, feed books to sync engines, check checksums.
//! Nothing may panic and a valid book is never crossed; errors are fine.
//! Binance's one-pass scanner and OKX's fixed-layout reader, alone and as
//! their `Decoder`s run them (with the level marks), are checked against
//! simd-json on every input.
//!
//! The first byte picks the venue (by its value mod 6: Binance, OKX,
//! Kraken, Bybit, Coinbase, Deribit) and the scales;
//! the rest is one or more messages separated by newlines, fed in order to
//! the same engines.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_venues::binance::{self, Scales, feed_depth, feed_snapshot};
use tickwire_venues::book::Window;
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::sync::{BookSync, Chain, SyncConfig};
use tickwire_venues::{bybit, coinbase, deribit, kraken, okx};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, data)) = data.split_first() else {
        return;
    };
    let scales = Scales {
        price: (pick >> 1) % 19,
        qty: (pick >> 3) % 19,
    };
    // 8 levels shown of 16 kept; the top bit picks who keeps the kept
    // levels complete (a venue window, or the client's own bound).
    let config = SyncConfig {
        depth: 8,
        keep: 16,
        window: if pick & 0x80 == 0 {
            Window::Client
        } else {
            Window::Venue
        },
        max_buffered_diffs: 4,
        max_buffered_levels: 64,
        // Binance's books deepen from refresh snapshots (any `lastUpdateId`
        // line while valid is one).
        deepen: true,
    };
    let venue = pick % 6;
    let mut engines = match venue {
        0 => vec![
            BookSync::new(Chain::BinanceSpot, config),
            BookSync::new(Chain::BinanceFutures, config),
        ],
        1 => vec![BookSync::new(Chain::OkxSeq, config)],
        2 => vec![BookSync::new(Chain::Kraken, config)],
        3 => vec![BookSync::new(Chain::Bybit, config)],
        4 => vec![BookSync::new(Chain::Coinbase, config)],
        _ => vec![BookSync::new(Chain::Deribit, config)],
    };
    let mut parser = JsonParser::new(256);
    let mut binance_decoder = binance::Decoder::new();
    let mut okx_decoder = okx::Decoder::new();
    for msg in data.split(|&b| b == b'\n') {
        // Binance's one-pass scanner and OKX's fixed-layout reader must
        // read what they accept exactly as simd-json does, and accept only
        // valid JSON.
        let fast = match std::str::from_utf8(msg) {
            Ok(text) if venue == 0 => binance::scan(text).map(|m| format!("{m:?}")),
            Ok(text) if venue == 1 => okx::scan_fixed(text).map(|m| format!("{m:?}")),
            _ => None,
        };
        // What the decoders make of it (their fast paths, else simd-json).
        let decoded = {
            let mut copy = msg.to_vec();
            copy.resize(msg.len() + INPUT_PADDING, 0);
            match venue {
                0 => binance_decoder
                    .decode(&mut copy, msg.len(), |m| m.ok().map(|m| format!("{m:?}"))),
                1 => okx_decoder.decode(&mut copy, msg.len(), |m| m.ok().map(|m| format!("{m:?}"))),
                _ => None,
            }
        };
        if venue == 5 {
            // Deribit is read by the scanner alone, from the text.
            if let Ok(text) = std::str::from_utf8(msg)
                && let Ok(deribit::Message::Book(b)) = deribit::decode(text)
            {
                let sync = &mut engines[0];
                let _ = deribit::feed_book(sync, &b, scales.price, scales.qty, &mut |_| {});
                if let Some(book) = sync.book() {
                    assert!(!book.is_crossed(), "a valid book is never crossed");
                }
            }
            continue;
        }
        if venue == 2
            && let Ok(text) = std::str::from_utf8(msg)
            && let Ok(kraken::v2::Message::Book(b)) = kraken::v2::decode(text)
        {
            // Kraken v2 is read by the scanner alone, from the text.
            let precision = kraken::v2::Precision {
                price: scales.price,
                qty: scales.qty,
            };
            let sync = &mut engines[0];
            let _ = kraken::v2::feed_book(sync, &b, precision, &mut |_| {});
            if let Some(book) = sync.book() {
                assert!(!book.is_crossed(), "a valid book is never crossed");
            }
            continue;
        }
        let mut buf = msg.to_vec();
        buf.resize(msg.len() + INPUT_PADDING, 0);
        let parsed = parser.parse(&mut buf, msg.len(), |doc| {
            if let Some(fast) = &fast {
                let slow = if venue == 0 {
                    binance::decode(doc).map(|m| format!("{m:?}"))
                } else {
                    okx::decode(doc).map(|m| format!("{m:?}"))
                };
                assert_eq!(Ok(fast), slow.as_ref(), "scanner and simd-json disagree");
            }
            if venue <= 1 {
                let slow = if venue == 0 {
                    binance::decode(doc).ok().map(|m| format!("{m:?}"))
                } else {
                    okx::decode(doc).ok().map(|m| format!("{m:?}"))
                };
                assert_eq!(decoded, slow, "decoder and simd-json disagree");
            }
            for sync in &mut engines {
                let mut emit = |_| {};
                if venue == 0 {
                    match binance::decode(doc) {
                        Ok(binance::Message::Depth(d)) => {
                            let _ = feed_depth(sync, &d, scales, &mut emit);
                        }
                        Ok(binance::Message::Snapshot(s)) => {
                            let _ = feed_snapshot(sync, &s, scales, &mut emit);
                        }
                        _ => {}
                    }
                } else if venue == 1 {
                    match okx::decode(doc) {
                        Ok(okx::Message::Book(b)) => {
                            let _ = okx::feed_book(sync, &b, scales.price, scales.qty, &mut emit);
                        }
                        Ok(okx::Message::Trades(t)) => t.iter().for_each(drop),
                        _ => {}
                    }
                } else if venue == 2 {
                    if let Ok(kraken::Message::Book(b)) = kraken::decode(doc) {
                        let _ = kraken::feed_book(sync, &b, scales.price, scales.qty, &mut emit);
                    }
                } else if venue == 3 {
                    if let Ok(bybit::Message::Book(b)) = bybit::decode(doc) {
                        let _ = bybit::feed_book(sync, &b, scales.price, scales.qty, &mut emit);
                    }
                } else if let Ok(env) = coinbase::decode(doc) {
                    match env.message {
                        coinbase::Message::Level2(events) => {
                            for e in events.books().flatten() {
                                let _ = coinbase::feed_book(
                                    sync,
                                    &e,
                                    scales.price,
                                    scales.qty,
                                    &mut emit,
                                );
                            }
                        }
                        coinbase::Message::Trades(events) => events.trades().for_each(drop),
                        _ => {}
                    }
                }
                if let Some(book) = sync.book() {
                    assert!(!book.is_crossed(), "a valid book is never crossed");
                }
            }
        });
        assert!(
            parsed.is_ok() || (fast.is_none() && decoded.is_none()),
            "the scanner accepted what simd-json rejects"
        );
    }
});
