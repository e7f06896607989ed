//! Two decimals' digits at once: a price's and a quantity's integer and
//! fractional digits, sixteen bytes each, checked and converted in one
//! pass (SSE2's multiply-adds: pairs of digits, then pairs of pairs, then
//! pairs of those), where the word-at-a-time kernel converts each eight
//! digits in turn. SSE2 on x86-64, the word-at-a-time kernel elsewhere.

/// The values of a level's price and quantity from their digits, each
/// given as two little-endian words of ASCII digits: its integer digits
/// in the last bytes of the first (`'0'`s in front) and its eight
/// fractional digits. Each value is `integer × 10^8 + fraction`; `None`
/// if any of the 32 bytes is not an ASCII digit. Inlined where called
/// within [`in_sse2`].
#[inline(always)]
pub(crate) fn level_values(words: [u64; 4]) -> Option<[u64; 2]> {
    #[cfg(target_arch = "x86_64")]
    {
        let [pi, pf, qi, qf] = words;
        // SAFETY: as for `classify` in `simd/mod.rs`: SSE2 is part of
        // the x86-64 baseline, and the function reads nothing but its
        // arguments.
        let (price, qty) = unsafe { level_values_sse2(pi, pf, qi, qf) };
        (price != NOT_DIGITS).then_some([price, qty])
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        level_values_words(words)
    }
}

/// Runs `f` in a function compiled for SSE2, so that [`level_values`]'s
/// SSE2 kernel, called from `f`, is inlined into it (a function compiled
/// for a target feature is not inlined into one compiled without it, even
/// where the target always has the feature): a loop over levels calls
/// this once, not the kernel once a level.
#[inline(always)]
pub(crate) fn in_sse2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: as for `classify` in `simd/mod.rs`: SSE2 is part of
        // the x86-64 baseline; `run` only calls `f`.
        unsafe { run(f) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        f()
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn run<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// What [`level_values_sse2`] returns for bytes that are not all digits
/// (a value of 15 digits is far below it).
#[cfg(target_arch = "x86_64")]
const NOT_DIGITS: u64 = u64::MAX;

/// [`level_values`], the words and the values in registers (not through
/// memory, where a call that is not inlined would wait on a stalled
/// load), [`NOT_DIGITS`] for bytes that are not all digits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn level_values_sse2(pi: u64, pf: u64, qi: u64, qf: u64) -> (u64, u64) {
    use core::arch::x86_64::{
        _mm_and_si128, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_madd_epi16, _mm_max_epu8,
        _mm_movemask_epi8, _mm_packs_epi32, _mm_set_epi64x, _mm_set1_epi8, _mm_set1_epi32,
        _mm_setzero_si128, _mm_sub_epi8, _mm_unpackhi_epi8, _mm_unpackhi_epi64, _mm_unpacklo_epi8,
    };
    let [pi, pf, qi, qf] = [pi, pf, qi, qf].map(|w| w as i64);
    // Each byte's digit, the most significant first (the lowest byte).
    let zero = _mm_set1_epi8(b'0' as i8);
    let p = _mm_sub_epi8(_mm_set_epi64x(pf, pi), zero);
    let q = _mm_sub_epi8(_mm_set_epi64x(qf, qi), zero);
    // A digit is at most 9 (a byte below '0' wrapped above it).
    let nine = _mm_set1_epi8(9);
    let digit = |v| _mm_cmpeq_epi8(_mm_max_epu8(v, nine), nine);
    if _mm_movemask_epi8(_mm_and_si128(digit(p), digit(q))) != 0xFFFF {
        return (NOT_DIGITS, 0);
    }
    // Each 16-bit pair `[a, b]` times `[m, 1]`, summed: `a × m + b`.
    let times = |m: i32| _mm_set1_epi32((1 << 16) | m);
    let z = _mm_setzero_si128();
    let pairs = |v| {
        let lo = _mm_madd_epi16(_mm_unpacklo_epi8(v, z), times(10));
        let hi = _mm_madd_epi16(_mm_unpackhi_epi8(v, z), times(10));
        // Two-digit numbers, eight of them, as 16-bit lanes.
        _mm_packs_epi32(lo, hi)
    };
    // Four-digit numbers: the price's four, then the quantity's.
    let fours = _mm_packs_epi32(
        _mm_madd_epi16(pairs(p), times(100)),
        _mm_madd_epi16(pairs(q), times(100)),
    );
    // Eight-digit numbers: price integer, price fraction, quantity
    // integer, quantity fraction.
    let eights = _mm_madd_epi16(fours, times(10_000));
    let value = |w: i64| {
        let w = w as u64;
        (w & 0xFFFF_FFFF) * 100_000_000 + (w >> 32)
    };
    (
        value(_mm_cvtsi128_si64(eights)),
        value(_mm_cvtsi128_si64(_mm_unpackhi_epi64(eights, eights))),
    )
}

/// [`level_values`] a word at a time.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn level_values_words(words: [u64; 4]) -> Option<[u64; 2]> {
    use crate::decimal::{eight_digit_value, eight_digits};
    if !words.iter().all(|&w| eight_digits(w)) {
        return None;
    }
    let [pi, pf, qi, qf] = words.map(eight_digit_value);
    Some([pi * 100_000_000 + pf, qi * 100_000_000 + qf])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A byte at a time.
    fn reference(words: [u64; 4]) -> Option<[u64; 2]> {
        let mut values = [0u64; 4];
        for (v, w) in values.iter_mut().zip(words) {
            for b in w.to_le_bytes() {
                if !b.is_ascii_digit() {
                    return None;
                }
                *v = *v * 10 + u64::from(b - b'0');
            }
        }
        Some([
            values[0] * 100_000_000 + values[1],
            values[2] * 100_000_000 + values[3],
        ])
    }

    fn words(bytes: &[u8]) -> [u64; 4] {
        core::array::from_fn(|k| u64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().unwrap()))
    }

    /// Fixed inputs, for Miri (which skips the proptest): every digit in
    /// every place, the bytes either side of the digits, a high byte.
    #[test]
    fn both_kernels_read_digits_and_refuse_the_rest() {
        let all: Vec<u8> = (0..32).map(|k| b'0' + (k % 10) as u8).collect();
        let nines = [b'9'; 32];
        for bytes in [all.as_slice(), &nines, &[b'0'; 32]] {
            let w = words(bytes);
            assert_eq!(level_values(w), reference(w));
            assert_eq!(in_sse2(|| level_values(w)), reference(w));
            assert_eq!(level_values_words(w), reference(w));
            assert!(reference(w).is_some());
        }
        for bad in [b'/', b':', b'.', b'"', 0, 0x80, 0xb0, 0xff] {
            for at in [0, 7, 8, 15, 16, 31] {
                let mut bytes = all.clone();
                bytes[at] = bad;
                let w = words(&bytes);
                assert_eq!(level_values(w), None, "{bad:#x} at {at}");
                assert_eq!(level_values_words(w), None, "{bad:#x} at {at}");
            }
        }
        assert_eq!(
            level_values(words(b"00000617123456780000000000001000")),
            Some([61_712_345_678, 1_000])
        );
    }

    proptest! {
        /// Both kernels read as a plain loop does, digits or not.
        #[test]
        #[cfg_attr(miri, ignore = "proptest is slow under Miri: see the fixed inputs above")]
        fn kernels_read_digits_as_a_loop_does(
            bytes in proptest::collection::vec(
                prop_oneof![20 => b'0'..=b'9', 1 => any::<u8>(), 1 => Just(b'/'), 1 => Just(b':')],
                32,
            ),
        ) {
            let w = words(&bytes);
            prop_assert_eq!(level_values(w), reference(w));
            prop_assert_eq!(level_values_words(w), reference(w));
        }
    }
}
