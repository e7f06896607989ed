//! Sixty-four bytes at a time: where the quotes are, and whether any byte
//! may not stand unescaped in a JSON string (a backslash, a control
//! character). Level arrays are walked from quote to quote with these
//! masks, so finding a string's end no longer waits on the load that found
//! the previous one (BENCHMARKS.md, "Depth levels by quote masks").
//!
//! Also the end of one string, sixteen bytes at a time, for the readers of
//! exact layouts.
//!
//! And the digits of a level's two decimals at once ([`digits`]).
//!
//! SSE2 on x86-64, where every CPU has it; portable code elsewhere. **The
//! crate's only `unsafe`** is the four calls into the SSE2 functions here
//! and in [`digits`]: Rust asks for it even though SSE2 is part of the
//! x86-64 baseline.

mod digits;

pub(crate) use digits::{in_sse2, level_values};

/// One block's classes, bit `k` for byte `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Masks {
    /// `"`.
    pub(crate) quotes: u64,
    /// `\\` and the control characters below 0x20.
    pub(crate) bad: u64,
}

/// Classifies `b[at..at + 64]`; bytes past the end of `b` are neither.
#[inline(always)]
pub(crate) fn block(b: &[u8], at: usize) -> Masks {
    match b.get(at..at + 64) {
        Some(full) => classify(full.try_into().expect("64 bytes")),
        None => {
            let mut tail = [b' '; 64];
            let rest = b.get(at..).unwrap_or_default();
            tail[..rest.len()].copy_from_slice(rest);
            classify(&tail)
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(c: &[u8; 64]) -> Masks {
    // SAFETY: `classify_sse2` only needs SSE2, which every x86-64 CPU has
    // (it is part of the architecture's baseline, and of Rust's
    // `x86_64-*` targets); it reads nothing but `c`.
    unsafe { classify_sse2(c) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn classify_sse2(c: &[u8; 64]) -> Masks {
    use core::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x,
        _mm_set1_epi8,
    };
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let below_space = _mm_set1_epi8(0x1f);
    let (mut quotes, mut bad) = (0u64, 0u64);
    for (k, lane) in c.chunks_exact(16).enumerate() {
        let word = |at: usize| i64::from_le_bytes(lane[at..at + 8].try_into().expect("8 bytes"));
        // Two 8-byte halves: the compiler makes this one unaligned load.
        let v = _mm_set_epi64x(word(8), word(0));
        let q = _mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) as u16;
        // `v <= 0x1f` unsigned: the larger of the two is 0x1f.
        let control = _mm_cmpeq_epi8(_mm_max_epu8(v, below_space), below_space);
        let x = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, backslash), control)) as u16;
        quotes |= u64::from(q) << (16 * k);
        bad |= u64::from(x) << (16 * k);
    }
    Masks { quotes, bad }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(c: &[u8; 64]) -> Masks {
    classify_words(c)
}

/// The portable way: each byte's class in its high bit, exactly (no
/// borrow between bytes), then the eight high bits gathered by a multiply.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_words(c: &[u8; 64]) -> Masks {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // High bit set in each byte of `x` that is zero.
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    // The high bits of the eight bytes, as eight bits.
    let gather = |m: u64| ((m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) & 0xff;
    let (mut quotes, mut bad) = (0u64, 0u64);
    for (k, w) in c.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let q = zero(w ^ (u64::from(b'"') * ONES));
        // Below 0x20: the top three bits are all zero.
        let control = zero(w & (0xe0 * ONES));
        let x = zero(w ^ (u64::from(b'\\') * ONES)) | control;
        quotes |= gather(q) << (8 * k);
        bad |= gather(x) << (8 * k);
    }
    Masks { quotes, bad }
}

/// The index of the first `"`, `\\` or control character at or after
/// `at`, sixteen bytes at a time: the end of a string (or why it is not a
/// plain one) in one step for most values venues send.
#[inline(always)]
pub(crate) fn stop(b: &[u8], at: usize) -> Option<usize> {
    let mut j = at;
    while let Some(lane) = b.get(j..j + 16) {
        let m = stops16(lane.try_into().expect("16 bytes"));
        if m != 0 {
            return Some(j + m.trailing_zeros() as usize);
        }
        j += 16;
    }
    let rest = b.get(j..)?;
    let mut tail = [b' '; 16];
    tail[..rest.len()].copy_from_slice(rest);
    let m = stops16(&tail);
    (m != 0).then(|| j + m.trailing_zeros() as usize)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stops16(c: &[u8; 16]) -> u32 {
    // SAFETY: as for `classify`: SSE2 is part of the x86-64 baseline, and
    // the function reads nothing but `c`.
    unsafe { stops16_sse2(c) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn stops16_sse2(c: &[u8; 16]) -> u32 {
    use core::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x,
        _mm_set1_epi8,
    };
    let word = |at: usize| i64::from_le_bytes(c[at..at + 8].try_into().expect("8 bytes"));
    let v = _mm_set_epi64x(word(8), word(0));
    let below_space = _mm_set1_epi8(0x1f);
    let control = _mm_cmpeq_epi8(_mm_max_epu8(v, below_space), below_space);
    let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
    let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
    _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn stops16(c: &[u8; 16]) -> u32 {
    c.iter().enumerate().fold(0, |m, (k, &x)| {
        m | (u32::from(x == b'"' || x == b'\\' || x < 0x20) << k)
    })
}

/// The quotes from `at` on, in order, 64 bytes at a time; and whether a
/// backslash or control character was passed on the way.
pub(crate) struct Quotes<'a> {
    b: &'a [u8],
    /// Where the current block starts.
    base: usize,
    /// The current block's quotes not yet handed out.
    left: u64,
    /// The current block's other marks.
    bad: u64,
    /// Marks in the blocks already left behind.
    bad_before: bool,
}

impl<'a> Quotes<'a> {
    #[inline(always)]
    pub(crate) fn new(b: &'a [u8], at: usize) -> Quotes<'a> {
        let m = block(b, at);
        Quotes {
            b,
            base: at,
            left: m.quotes,
            bad: m.bad,
            bad_before: false,
        }
    }

    /// The next quote's index.
    #[inline(always)]
    pub(crate) fn next_quote(&mut self) -> Option<usize> {
        if self.left == 0 {
            self.refill()?;
        }
        let k = self.left.trailing_zeros() as usize;
        self.left &= self.left - 1;
        Some(self.base + k)
    }

    /// Moves on to the next block that holds a quote (once every 64 bytes:
    /// kept out of line so the quote-to-quote path stays small).
    #[inline(never)]
    fn refill(&mut self) -> Option<()> {
        while self.left == 0 {
            self.base += 64;
            if self.base >= self.b.len() {
                return None;
            }
            self.bad_before |= self.bad != 0;
            let m = block(self.b, self.base);
            (self.left, self.bad) = (m.quotes, m.bad);
        }
        Some(())
    }

    /// Whether no backslash or control character lies between the start
    /// and `end` (exclusive; at most 64 bytes past the current block).
    #[inline(always)]
    pub(crate) fn clean_until(&self, end: usize) -> bool {
        let n = end.saturating_sub(self.base);
        let here = if n >= 64 {
            self.bad
        } else {
            self.bad & ((1 << n) - 1)
        };
        !self.bad_before
            && here == 0
            && (n <= 64
                || self
                    .b
                    .get(self.base + 64..end)
                    .is_some_and(|rest| rest.iter().all(|&c| c != b'\\' && c >= 0x20)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(c: &[u8]) -> Masks {
        let (mut quotes, mut bad) = (0, 0);
        for (k, &x) in c.iter().enumerate() {
            quotes |= u64::from(x == b'"') << k;
            bad |= u64::from(x == b'\\' || x < 0x20) << k;
        }
        Masks { quotes, bad }
    }

    proptest! {
        /// Both kernels (the SSE2 one behind this crate's only `unsafe`,
        /// and the portable one) classify every byte as a plain loop does.
        #[test]
        #[cfg_attr(miri, ignore = "proptest is slow under Miri: see the fixed inputs below")]
        fn kernels_classify_every_byte(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x21, any::<u8>()],
                64,
            ),
        ) {
            let c: &[u8; 64] = bytes.as_slice().try_into().unwrap();
            prop_assert_eq!(classify(c), reference(c));
            prop_assert_eq!(classify_words(c), reference(c));
        }

        /// `stop` finds the first quote, backslash or control character
        /// from any start, near the end of the bytes too.
        #[test]
        #[cfg_attr(miri, ignore = "proptest is slow under Miri: see the fixed inputs below")]
        fn stop_finds_the_first_mark(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), Just(0x1f), 0x20u8..0x7f, any::<u8>()],
                0..80,
            ),
            at in 0usize..80,
        ) {
            let at = at.min(bytes.len());
            let want = bytes[at..]
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .map(|n| at + n);
            prop_assert_eq!(stop(&bytes, at), want);
        }

        /// The walker hands out every quote in order, from any start, and
        /// sees every mark before any end.
        #[test]
        #[cfg_attr(miri, ignore = "proptest is slow under Miri: see the fixed inputs below")]
        fn quotes_in_order_and_marks_until_any_end(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), Just(b'a'), Just(0x1f)],
                0..300,
            ),
            at in 0usize..70,
            end in 0usize..400,
        ) {
            let at = at.min(bytes.len());
            let mut q = Quotes::new(&bytes, at);
            let want: Vec<usize> =
                (at..bytes.len()).filter(|&i| bytes[i] == b'"').collect();
            let mut got = Vec::new();
            while let Some(i) = q.next_quote() {
                got.push(i);
                // Any end up to 64 bytes past the current block.
                let end = (q.base + end % 128).min(bytes.len()).max(at);
                let clean = bytes[at..end].iter().all(|&c| c != b'\\' && c >= 0x20);
                prop_assert_eq!(q.clean_until(end), clean, "{} {}", at, end);
            }
            prop_assert_eq!(got, want);
        }
    }

    /// The kernels and their callers on fixed inputs at every length and
    /// start near the block boundaries (where an out-of-bounds load would
    /// be): what Miri runs (the proptests above cost it minutes, in
    /// proptest's own machinery).
    #[test]
    fn kernels_on_every_boundary() {
        let edges = [0usize, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 150];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for pattern in 0..3 {
            let bytes: Vec<u8> = (0..150)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match (pattern, x % 16) {
                        (0, _) => b'a',
                        (1, 0) => b'"',
                        (1, 1) => b'\\',
                        (1, 2) => 0x1f,
                        (2, 0..=7) => b'"',
                        _ => (x >> 8) as u8 | 0x20,
                    }
                })
                .collect();
            let c: &[u8; 64] = bytes[..64].try_into().unwrap();
            assert_eq!(classify(c), reference(c));
            assert_eq!(classify_words(c), reference(c));
            for &len in &edges {
                let b = &bytes[..len];
                for &at in edges.iter().filter(|&&at| at <= len) {
                    let want = b[at..]
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                        .map(|n| at + n);
                    assert_eq!(stop(b, at), want, "{pattern} {len} {at}");
                    let mut q = Quotes::new(b, at);
                    let mut got = Vec::new();
                    while let Some(i) = q.next_quote() {
                        got.push(i);
                        let end = len.min(q.base + 64);
                        let clean = b[at..end.max(at)].iter().all(|&c| c != b'\\' && c >= 0x20);
                        assert_eq!(q.clean_until(end.max(at)), clean, "{pattern} {len} {at}");
                    }
                    let want: Vec<usize> = (at..len).filter(|&i| b[i] == b'"').collect();
                    assert_eq!(got, want, "{pattern} {len} {at}");
                }
            }
        }
    }
}
