//! The SBE decoder (Binance's spot streams) on arbitrary bytes, with an
//! oracle: a message that decodes, written again by the encoder, is no
//! longer than it was and reads back as the same message, field for field
//! (the encoder drops a longer writer's padding, and the entry length an
//! empty group declares: bytes may differ, fields may not). Errors are
//! fine; panics and disagreements are not.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_sbe::spot_stream::{self, Message, encode};

fuzz_target!(|data: &[u8]| {
    let Ok(m) = spot_stream::decode(data) else {
        return;
    };
    let mut out = [0u8; 1 << 16];
    let mut again = |m: &Message<'_>| -> Option<usize> {
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
        };
        n.ok()
    };
    if let Some(n) = again(&m) {
        assert!(n <= data.len(), "written again longer than read");
        let read_back = spot_stream::decode(&out[..n]).expect("our own writing decodes");
        assert_eq!(read_back, m, "written again differently");
    }
});
