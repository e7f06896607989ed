//! Symbols: an instrument found in the table by its symbol (as text, or
//! as bytes not yet known to be text), and a symbol found as a word in a
//! venue's text.

use super::{Instruments, utf8};
use crate::event::InstrumentId;

impl Instruments {
    #[inline]
    pub(crate) fn find(&self, symbol: &str) -> Option<InstrumentId> {
        // A few instruments: comparing the symbols is cheaper than hashing
        // (the last of a symbol listed twice, as in the index).
        if self.list.len() <= 4 {
            return self.find_few(symbol.as_bytes());
        }
        self.index.get(symbol).map(|&i| InstrumentId(i))
    }

    /// [`find`](Self::find) by a symbol's bytes, not yet known to be text
    /// (a binary message's): compared as they are in a small table, only
    /// a larger one's hashed index needs them checked as UTF-8 first.
    #[inline]
    pub(crate) fn find_bytes(&self, symbol: &[u8]) -> Option<InstrumentId> {
        if self.list.len() <= 4 {
            return self.find_few(symbol);
        }
        self.find(utf8(symbol)?)
    }

    #[inline]
    fn find_few(&self, symbol: &[u8]) -> Option<InstrumentId> {
        (self.list.iter())
            .rposition(|i| same(i.spec.symbol.as_bytes(), symbol))
            .map(|i| InstrumentId(i as u32))
    }
}

/// Whether two symbols are the same bytes, compared in at most two loads
/// a side where they are 4 to 16 bytes long (most symbols are: `BTCUSDT`,
/// `BTC-USD-SWAP`, `ETH-PERPETUAL`), the first and last 4 or 8 bytes,
/// which overlap and so cover every byte. Kept inline: the slices' `==`
/// is a call to `memcmp`, which with the lookup around it was about 13 %
/// of a best bid/ask's samples through the SBE adapter (`sbe` bench), and
/// the UTF-8 check before it (now left to symbols not found) about 9 %.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        4..=8 => {
            let w =
                |s: &[u8], at: usize| u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]]);
            w(a, 0) == w(b, 0) && w(a, n - 4) == w(b, n - 4)
        }
        9..=16 => {
            let w = |s: &[u8], at: usize| {
                let mut word = [0; 8];
                word.copy_from_slice(&s[at..at + 8]);
                u64::from_le_bytes(word)
            };
            w(a, 0) == w(b, 0) && w(a, n - 8) == w(b, n - 8)
        }
        _ => a == b,
    }
}

/// Whether `text` holds `symbol` as a word of its own: not preceded or
/// followed by a letter, digit or one of `-_/.` (so `BTCUSDT` is not
/// found in `BTCUSDTX` nor `BTC-USD` in `BTC-USDT`).
pub(super) fn names(text: &str, symbol: &str) -> bool {
    let part = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'.');
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find(symbol) {
        let start = from + at;
        let end = start + symbol.len();
        let before = start == 0 || !part(bytes[start - 1]);
        let after = end == bytes.len() || !part(bytes[end]);
        if before && after {
            return true;
        }
        from = start + 1;
        while !text.is_char_boundary(from) {
            from += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::same;

    proptest! {
        /// The same answer as the slices' `==` at every length up to past
        /// the word loads' range, for symbols that differ anywhere (one
        /// byte changed at any place) and for unrelated ones.
        #[test]
        fn same_is_slice_equality(
            a in proptest::collection::vec(any::<u8>(), 0..24),
            at in any::<prop::sample::Index>(),
            flip in 1u8..=255,
            b in proptest::collection::vec(any::<u8>(), 0..24),
        ) {
            prop_assert!(same(&a, &a));
            prop_assert_eq!(same(&a, &b), a == b);
            if !a.is_empty() {
                let mut c = a.clone();
                c[at.index(a.len())] ^= flip;
                prop_assert!(!same(&a, &c));
                prop_assert!(!same(&c, &a));
            }
            // A prefix is not the symbol.
            if !a.is_empty() {
                prop_assert!(!same(&a, &a[..a.len() - 1]));
            }
        }
    }
}
