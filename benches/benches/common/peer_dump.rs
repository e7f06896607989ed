//! A market of the `sbe` bench (the simulated one, or the recorded day)
//! written out for a peer to replay
//! (`benches/sbe_peer.sh`: nautilus_trader's own Binance SBE pipeline,
//! built apart in `scripts/sbe-judge`), with what tickwire's books held at
//! its end, so the peer's can be checked against them. One record after
//! another, each `TAG u8, INSTRUMENT u8, LENGTH u32 LE`, then `LENGTH`
//! bytes:
//! - `I`: an instrument, `SYMBOL PRICE_SCALE SIZE_SCALE` (in the adapter's
//!   order: the first is instrument 0);
//! - `R`: a REST depth snapshot of the instrument, its JSON body;
//! - `S`: an SBE frame, as the stream sends it (the instrument its own);
//! - `T`, last, one an instrument: its book in tickwire's adapter after
//!   every `R` and `S` before (the SBE side, book depth 500: the simulated
//!   market's whole book, the recorded day's best 500 levels a side), a
//!   line a level, its bids best first, then its asks: `B PRICE SIZE` or
//!   `A PRICE SIZE`, in decimals at the instrument's scales.

use std::io::Write;

use tickwire_venues::InstrumentId;
use tickwire_venues::book::Side;
use tickwire_venues::decimal::format_scaled;

use super::{Both, Instruments, Set, What, adapter_for, feed};

/// Writes `all` (a market's messages) to `path`, as the top says.
pub(crate) fn dump(path: &str, all: &[Both], instruments: &Instruments, rx: &mut [u8]) {
    let mut out = Vec::new();
    let mut record = |tag: u8, instrument: usize, bytes: &[u8]| {
        out.push(tag);
        out.push(u8::try_from(instrument).expect("at most 256 instruments"));
        let len = u32::try_from(bytes.len()).expect("a record under 4 GiB");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(bytes);
    };
    for (n, (symbol, ps, ss)) in instruments.iter().enumerate() {
        record(b'I', n, format!("{symbol} {ps} {ss}").as_bytes());
    }
    for m in all {
        let instrument = m.instrument as usize;
        match m.what {
            What::Snapshot => record(b'R', instrument, &m.json[..m.len]),
            _ => record(b'S', instrument, &m.sbe),
        }
    }
    let set = Set::of(&all.iter().collect::<Vec<_>>());
    let mut adapter = adapter_for(&set, instruments, 500);
    let mut gaps = 0;
    feed(&set, &mut adapter, true, rx, |e| {
        gaps += u32::from(matches!(e.kind, tickwire_venues::Kind::Gap { .. }));
    });
    assert_eq!(gaps, 0, "the market gapped");
    for (n, &(symbol, ps, ss)) in instruments.iter().enumerate() {
        let book = adapter
            .book(InstrumentId(n as u32))
            .unwrap_or_else(|| panic!("{symbol}: no book at the end"));
        let mut lines = String::new();
        for (tag, side) in [("B ", Side::Bid), ("A ", Side::Ask)] {
            assert!(!book.levels(side).is_empty(), "{symbol}: a side empty");
            for l in book.levels(side).iter() {
                lines.push_str(tag);
                format_scaled(l.price, ps, &mut lines);
                lines.push(' ');
                format_scaled(l.size, ss, &mut lines);
                lines.push('\n');
            }
        }
        record(b'T', n, lines.as_bytes());
    }
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&out))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
}
