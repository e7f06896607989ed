//! The text a venue's book checksum covers, rebuilt from a book's values
//! and wire digit counts into one stack buffer, then hashed by one CRC32
//! update (CRC32 over many small pieces costs twice as much).
//!
//! A value is written in one of two forms, each byte for byte the text of
//! [`format_wire`] followed by its trailing zeros (the tests below hold
//! them to a `format!` reference): [`CrcText::wire`] as sent
//! (`"60000.10"`, OKX) and [`CrcText::digits`] with the point removed and
//! leading zeros stripped (`"6000010"`, Kraken).
//!
//! The fast paths format a value's digits eight at a time in a register
//! ([`eight`]: no division per digit, no table), cut the integer part and
//! the kept fraction digits out of them by shifts, and write them with
//! fixed-size stores into a pre-sized chunk of the buffer: one `u64` of
//! digits for a value below 10^8 at a scale of at most 8 (most prices and
//! sizes), a `u128` for one below 10^16 at a scale of at most 15.
//! Anything else (a negative value, a larger one, a deeper scale, a string
//! with more than [`MAX_ZEROS`] zeros past the scale) takes
//! [`format_wire`] itself.

use crate::decimal::{MAX_SCALE, ZEROS, format_wire};

/// Bytes a fast-path field may touch past the text's end: 16 + 1 + 16 for
/// the integer part, the point and the fraction (bytes past the field's
/// end are garbage that the next field overwrites), then [`MAX_ZEROS`],
/// then a separator.
const FIELD: usize = 16 + 1 + 16 + MAX_ZEROS + 1;
/// Trailing zeros past the scale the fast path writes (a wire string may
/// carry more fraction digits than the instrument's scale keeps).
const MAX_ZEROS: usize = 32;
/// 16 ASCII zeros, one per byte of a `u128`.
const ASCII_ZEROS: u128 = u128::from_le_bytes([b'0'; 16]);
/// 8 of them.
const ASCII_ZEROS_8: u64 = u64::from_le_bytes([b'0'; 8]);

/// The CRC32 of the text `write` writes (see the module docs), written
/// in a buffer of `N` bytes on the stack (hashed whenever it holds
/// `N - FIELD` bytes: `N` is best a little more than the text usually
/// takes).
#[inline(always)]
pub(crate) fn crc32<const N: usize>(write: impl FnOnce(&mut CrcText<'_, N>)) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    let mut buf = [0u8; N];
    let mut text = CrcText {
        crc: &mut crc,
        buf: &mut buf,
        n: 0,
    };
    write(&mut text);
    text.flush();
    crc.finalize()
}

/// A checksum's text being written: a buffer, and the position in it,
/// which stays in a register (the buffer and the hasher are the ones
/// behind references).
pub(crate) struct CrcText<'a, const N: usize> {
    crc: &'a mut crc32fast::Hasher,
    buf: &'a mut [u8; N],
    /// Bytes of `buf` written and not yet hashed.
    n: usize,
}

impl<const N: usize> CrcText<'_, N> {
    /// Bytes written before they are hashed.
    const CAP: usize = N - FIELD;

    /// A chunk of `FIELD` bytes at the text's end, hashing what is written
    /// first if the buffer is full.
    #[inline(always)]
    fn chunk(&mut self) -> &mut [u8; FIELD] {
        if self.n > Self::CAP {
            self.flush();
        }
        let n = self.n;
        (&mut self.buf[n..n + FIELD])
            .try_into()
            .expect("n <= CAP: FIELD bytes of room")
    }

    #[inline(always)]
    fn flush(&mut self) {
        self.crc.update(&self.buf[..self.n]);
        self.n = 0;
    }

    /// Appends `bytes`, hashing the buffer whenever it fills.
    fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.n >= Self::CAP {
                self.flush();
            }
            let k = bytes.len().min(Self::CAP - self.n);
            self.buf[self.n..self.n + k].copy_from_slice(&bytes[..k]);
            self.n += k;
            bytes = &bytes[k..];
        }
    }

    /// Drops the last byte written, if any: a separator written after the
    /// last field (the last thing written is never hashed before
    /// [`crc32`] returns).
    pub(crate) fn unbyte(&mut self) {
        self.n = self.n.saturating_sub(1);
    }

    /// Appends `v` (at `scale`) as sent with `digits` fraction digits
    /// ([`format_wire`]'s text and trailing zeros), then `sep`.
    #[inline(always)]
    pub(crate) fn wire(&mut self, v: i64, scale: u8, digits: u8, sep: u8) {
        let c = Counts::of(scale, digits);
        if let Some(d) = c.eight(v) {
            let out = self.chunk();
            let n = wire(out, d.0, d.1, c);
            out[n] = sep;
            self.n += n + 1;
        } else if let Some(d) = c.sixteen(v) {
            let out = self.chunk();
            let n = wire(out, d.0, d.1, c);
            out[n] = sep;
            self.n += n + 1;
        } else {
            self.n = Self::slow(self.crc, self.buf, self.n, v, scale, digits, false);
            self.chunk()[0] = sep;
            self.n += 1;
        }
    }

    /// Appends `v` (at `scale`, sent with `digits` fraction digits) with
    /// the point removed and leading zeros stripped: [`format_wire`]'s
    /// digits and trailing zeros, nothing for a zero.
    #[inline(always)]
    pub(crate) fn digits(&mut self, v: i64, scale: u8, digits: u8) {
        let c = Counts::of(scale, digits);
        if let Some(d) = c.eight(v) {
            self.n += stripped(self.chunk(), d.0, d.1, c);
        } else if let Some(d) = c.sixteen(v) {
            self.n += stripped(self.chunk(), d.0, d.1, c);
        } else {
            self.n = Self::slow(self.crc, self.buf, self.n, v, scale, digits, true);
        }
    }

    /// Any value: [`format_wire`]'s text, as [`wire`](Self::wire) or
    /// [`digits`](Self::digits) (`strip`) write it, after the `n` bytes of
    /// `buf` written; returns how many are written then. (Not a method:
    /// a writer whose address is passed to a call keeps its position in
    /// memory rather than in a register.)
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn slow(
        crc: &mut crc32fast::Hasher,
        buf: &mut [u8; N],
        n: usize,
        v: i64,
        scale: u8,
        digits: u8,
        strip: bool,
    ) -> usize {
        let mut w = CrcText { crc, buf, n };
        let mut out = [0u8; 48];
        let (len, mut zeros) = format_wire(v, scale, digits, &mut out);
        let mut text = &out[..len];
        if strip {
            // Digits without the point, leading zeros stripped.
            let mut kept = [0u8; 48];
            let mut k = 0;
            for &d in text.iter().filter(|&&b| b != b'.') {
                if k == 0 && d == b'0' {
                    continue;
                }
                kept[k] = d;
                k += 1;
            }
            if k == 0 {
                zeros = 0;
            }
            out = kept;
            text = &out[..k];
        }
        w.push(text);
        while zeros > 0 {
            let k = zeros.min(ZEROS.len());
            w.push(&ZEROS[..k]);
            zeros -= k;
        }
        w.n
    }
}

/// How a value's digits are cut: its scale and how many fraction digits
/// it was sent with.
#[derive(Clone, Copy)]
struct Counts {
    /// The scale (capped as [`format_wire`] caps it).
    scale: usize,
    /// Whether the value was sent with a point.
    point: bool,
    /// Fraction digits written: `min(digits, scale)`.
    kept: usize,
    /// Zeros after them: `digits - scale`, if more.
    zeros: usize,
}

impl Counts {
    #[inline(always)]
    fn of(scale: u8, digits: u8) -> Counts {
        let scale = usize::from(scale.min(MAX_SCALE));
        let digits = usize::from(digits);
        Counts {
            scale,
            point: digits > 0,
            kept: digits.min(scale),
            zeros: digits.saturating_sub(scale),
        }
    }

    /// A value from 0 to 10^8 - 1 at a scale of at most 8: its 8 digits
    /// (ASCII, zero-padded, the most significant in the lowest byte) and
    /// how many are significant (0 for 0).
    #[inline(always)]
    fn eight(self, v: i64) -> Option<(u64, usize)> {
        if !(0..100_000_000).contains(&v) || self.scale > 8 || self.zeros > MAX_ZEROS {
            return None;
        }
        let d = eight(v as u64);
        // Leading zero digits are the low zero bytes (all 8 for 0).
        Some((d + ASCII_ZEROS_8, 8 - (d.trailing_zeros() / 8) as usize))
    }

    /// A value from 0 to 10^16 - 1 at a scale of at most 15: its 16
    /// digits, as [`eight`](Self::eight) gives 8.
    #[inline(always)]
    fn sixteen(self, v: i64) -> Option<(u128, usize)> {
        if !(0..10_000_000_000_000_000).contains(&v) || self.scale > 15 || self.zeros > MAX_ZEROS {
            return None;
        }
        let v = v as u64;
        let d = u128::from(eight(v / 100_000_000)) | (u128::from(eight(v % 100_000_000)) << 64);
        Some((d + ASCII_ZEROS, 16 - (d.trailing_zeros() / 8) as usize))
    }
}

/// The digits of [`Counts::eight`] or [`Counts::sixteen`] as integers of
/// `BYTES` bytes.
trait Digits: Copy {
    const BYTES: usize;
    /// Drops the first `k` digits (`k < BYTES`).
    fn skip(self, k: usize) -> Self;
    /// Writes all `BYTES` at the start of `out`.
    fn put(self, out: &mut [u8]);
}

impl Digits for u64 {
    const BYTES: usize = 8;
    #[inline(always)]
    fn skip(self, k: usize) -> u64 {
        self >> (8 * k)
    }
    #[inline(always)]
    fn put(self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.to_le_bytes());
    }
}

impl Digits for u128 {
    const BYTES: usize = 16;
    #[inline(always)]
    fn skip(self, k: usize) -> u128 {
        self >> (8 * k)
    }
    #[inline(always)]
    fn put(self, out: &mut [u8]) {
        out[..16].copy_from_slice(&self.to_le_bytes());
    }
}

/// Writes `text` (`sig` significant digits) as sent: the integer part,
/// then the point and the kept fraction digits, then the zeros past the
/// scale. Returns the length.
#[inline(always)]
fn wire<D: Digits>(out: &mut [u8; FIELD], text: D, sig: usize, c: Counts) -> usize {
    // Integer part: at least one digit ("0"), and the fraction's digits
    // behind it (overwritten below when there is a point).
    let int_digits = sig.max(c.scale + 1);
    if int_digits > D::BYTES {
        // Only 8 digits at scale 8, below 1: the integer part is the
        // '0' they do not have.
        out[0] = b'0';
    } else {
        text.skip(D::BYTES - int_digits).put(&mut out[..]);
    }
    let mut n = int_digits - c.scale;
    if c.point {
        out[n] = b'.';
        // The fraction's digits, the first `kept` of them, then the zeros
        // past the scale (scale 0: no fraction digits, any shift will do).
        text.skip((D::BYTES - c.scale).min(D::BYTES - 1))
            .put(&mut out[n + 1..]);
        n += 1 + c.kept;
        if c.zeros > 0 {
            out[n..n + MAX_ZEROS].copy_from_slice(&ZEROS[..MAX_ZEROS]);
            n += c.zeros;
        }
    }
    n
}

/// Writes `text` ([`wire`]'s arguments) with the point removed and leading
/// zeros stripped: from the first significant digit to the last kept one
/// (none if the first significant digit is not kept: the kept ones are 0).
/// Returns the length.
#[inline(always)]
fn stripped<D: Digits>(out: &mut [u8; FIELD], text: D, sig: usize, c: Counts) -> usize {
    let len = (sig + c.kept).saturating_sub(c.scale);
    text.skip((D::BYTES - sig).min(D::BYTES - 1))
        .put(&mut out[..]);
    if c.zeros > 0 && len > 0 {
        out[len..len + MAX_ZEROS].copy_from_slice(&ZEROS[..MAX_ZEROS]);
        return len + c.zeros;
    }
    len
}

/// `x < 10^8` as eight decimal digits (values 0 to 9, not ASCII), the most
/// significant in the lowest byte: SIMD within a register, splitting into
/// 4 + 4 digits, then each half into 2 + 2, then each pair into 1 + 1, each
/// split by a multiply and shift that divides exactly in its range
/// (`n * 10486 >> 20` is `n / 100` for `n < 10^4`, `n * 103 >> 10` is
/// `n / 10` for `n < 100`).
#[inline(always)]
fn eight(x: u64) -> u64 {
    debug_assert!(x < 100_000_000);
    // Lanes of 32 bits: the high four digits in the low lane.
    let fours = (x / 10_000) | ((x % 10_000) << 32);
    let hundreds = ((fours * 10_486) >> 20) & 0x0000_007F_0000_007F;
    // Lanes of 16 bits: each four's high pair in its low lane.
    let pairs = ((fours - 100 * hundreds) << 16) | hundreds;
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    // Lanes of 8 bits: each pair's tens digit in its low lane.
    ((pairs - 10 * tens) << 8) | tens
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One side of a book for the checksum tests: up to `max` levels as
    /// `price -> (size, price zeros, size zeros)` ([`book_as_sent`]).
    pub(crate) fn sent_side(
        max: usize,
    ) -> impl Strategy<Value = std::collections::BTreeMap<i64, (i64, u8, u8)>> {
        proptest::collection::btree_map(
            1i64..1_000_000_000,
            (1i64..100_000_000_000, 0u8..3, 0u8..3),
            0..max,
        )
    }

    /// A side's levels as sent: price and size strings, best first.
    pub(crate) type SentSide = Vec<(String, String)>;

    /// A book from levels given as `(price, (size, price zeros, size zeros))`
    /// a side, each value sent as a string (with trailing zeros as asked),
    /// read back as the feed reads it; and those strings, best first.
    pub(crate) fn book_as_sent(
        bids: &std::collections::BTreeMap<i64, (i64, u8, u8)>,
        asks: &std::collections::BTreeMap<i64, (i64, u8, u8)>,
        price_scale: u8,
        size_scale: u8,
    ) -> (crate::book::Book, SentSide, SentSide) {
        let mut book = crate::book::Book::new(40);
        let mut sides = [Vec::new(), Vec::new()];
        for (i, side, levels, offset) in [
            (0, crate::book::Side::Bid, bids, 0),
            (1, crate::book::Side::Ask, asks, 1_000_000_000),
        ] {
            for (&p, &(s, pz, sz)) in levels {
                let (p, s) = (sent(p + offset, price_scale, pz), sent(s, size_scale, sz));
                book.set_level(
                    side,
                    crate::decimal::level(&p, &s, price_scale, size_scale).unwrap(),
                );
                sides[i].push((p, s));
            }
        }
        sides[0].reverse();
        let [bids, asks] = sides;
        (book, bids, asks)
    }

    /// `v` at `scale` as a venue sends it, with `format!`: the fraction
    /// digits it needs, then `zeros` more (`"0.5000"`); no point if it
    /// needs none and `zeros` is 0.
    pub(crate) fn sent(v: i64, scale: u8, zeros: u8) -> String {
        let unit = 10i64.pow(u32::from(scale));
        let frac = if scale == 0 {
            String::new()
        } else {
            format!("{:0w$}", v % unit, w = usize::from(scale))
        };
        let frac = frac.trim_end_matches('0').to_string() + &"0".repeat(usize::from(zeros));
        if frac.is_empty() {
            format!("{}", v / unit)
        } else {
            format!("{}.{frac}", v / unit)
        }
    }

    /// A small buffer: long texts are hashed in pieces.
    const N: usize = 256;

    /// The OKX form built the obvious way: integer part, then the point
    /// and `digits` fraction digits (the value's, then zeros past the
    /// scale), with `format!`.
    fn wire_reference(v: i64, scale: u8, digits: u8) -> String {
        let scale = u32::from(scale.min(MAX_SCALE));
        let unit = 10i128.pow(scale);
        let abs = i128::from(v).abs();
        let sign = if v < 0 { "-" } else { "" };
        let int = abs / unit;
        if digits == 0 {
            return format!("{sign}{int}");
        }
        let frac = if scale == 0 {
            String::new()
        } else {
            format!("{:0w$}", abs % unit, w = scale as usize)
        };
        let frac: String = frac
            .chars()
            .chain(core::iter::repeat('0'))
            .take(usize::from(digits))
            .collect();
        format!("{sign}{int}.{frac}")
    }

    /// The Kraken form: the OKX form without the point, leading zeros
    /// stripped.
    fn digits_reference(v: i64, scale: u8, digits: u8) -> String {
        let s: String = wire_reference(v, scale, digits)
            .chars()
            .filter(|&c| c != '.')
            .collect();
        s.trim_start_matches('0').to_string()
    }

    /// The text left in the buffer (all of it while nothing was hashed
    /// yet) and the CRC32 of all of it.
    fn written(f: impl FnOnce(&mut CrcText<'_, N>)) -> (String, u32) {
        let mut s = String::new();
        let crc = crc32::<N>(|t| {
            f(t);
            s = String::from_utf8(t.buf[..t.n].to_vec()).unwrap();
        });
        (s, crc)
    }

    fn check(v: i64, scale: u8, digits: u8) -> Result<(), TestCaseError> {
        for (strip, want) in [
            (false, wire_reference(v, scale, digits)),
            (true, digits_reference(v, scale, digits)),
        ] {
            // After a prefix (garbage past a field's end must not show),
            // and followed by a separator.
            let (got, crc) = written(|t| {
                t.push(b"x");
                if strip {
                    t.digits(v, scale, digits);
                    t.push(b":");
                } else {
                    t.wire(v, scale, digits, b':');
                }
            });
            let want = format!("x{want}:");
            // The text itself while it fits the buffer, its CRC always.
            if want.len() < N - FIELD {
                prop_assert_eq!(&got, &want, "v {} scale {} digits {}", v, scale, digits);
            }
            prop_assert_eq!(
                crc,
                crc32fast::hash(want.as_bytes()),
                "v {} scale {} digits {}",
                v,
                scale,
                digits
            );
        }
        Ok(())
    }

    #[test]
    fn values_as_sent() {
        for (v, scale, digits, wire, digits_form) in [
            (6_000_000, 2, 2, "60000.00", "6000000"),
            (12_345_678, 8, 8, "0.12345678", "12345678"),
            (12_300_000, 8, 3, "0.123", "123"),
            (3_026_110_000_000, 8, 1, "30261.1", "302611"),
            (3_026_110_000_000, 8, 0, "30261", "30261"),
            (5, 0, 3, "5.000", "5000"),
            (0, 8, 8, "0.00000000", ""),
            (0, 0, 0, "0", ""),
            (0, 2, 0, "0", ""),
            (415, 0, 0, "415", "415"),
            (
                9_999_999_999_999_999,
                4,
                4,
                "999999999999.9999",
                "9999999999999999",
            ),
            (
                10_000_000_000_000_000,
                4,
                4,
                "1000000000000.0000",
                "10000000000000000",
            ),
            (
                i64::MAX,
                18,
                18,
                "9.223372036854775807",
                "9223372036854775807",
            ),
            (-150, 2, 2, "-1.50", "-150"),
            (-5, 1, 1, "-0.5", "-05"),
        ] {
            assert_eq!(wire_reference(v, scale, digits), wire);
            assert_eq!(digits_reference(v, scale, digits), digits_form);
            check(v, scale, digits).unwrap();
        }
    }

    #[test]
    fn long_text_is_hashed_in_pieces() {
        let mut want = String::new();
        let (_, crc) = written(|t| {
            for i in 0..1000i64 {
                let (v, digits) = (i * 7_777_777, (i % 40) as u8);
                t.wire(v, 4, digits, b':');
                t.digits(v, 4, digits);
                want += &wire_reference(v, 4, digits);
                want += ":";
                want += &digits_reference(v, 4, digits);
            }
            // Past the fast path's zeros, and past the buffer.
            t.wire(1, 0, 255, b'/');
            want += &wire_reference(1, 0, 255);
            want += "/";
            t.push(&[b'z'; 3 * N]);
            want += &"z".repeat(3 * N);
        });
        assert_eq!(crc, crc32fast::hash(want.as_bytes()));
    }

    #[test]
    fn the_multiplies_divide_exactly_in_their_ranges() {
        for n in 0..10_000u64 {
            assert_eq!((n * 10_486) >> 20, n / 100);
        }
        for n in 0..100u64 {
            assert_eq!((n * 103) >> 10, n / 10);
        }
        for x in [0, 1, 9, 10, 99_999_999, 12_345_678, 10_000_000, 9_999] {
            let want = format!("{x:08}");
            assert_eq!((eight(x) + ASCII_ZEROS_8).to_le_bytes(), want.as_bytes());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Any value at any scale with any digit count, both forms, fast
        /// path or not, against the `format!` reference.
        #[test]
        fn both_forms_match_the_reference(
            v in prop_oneof![
                0i64..1_000,
                0i64..100_000_000,
                0i64..10_000_000_000_000_000,
                any::<i64>(),
                // Values as sent with trailing zeros: a few significant
                // digits times a power of ten.
                (0i64..100_000, 0u32..12).prop_map(|(m, e)| m * 10i64.pow(e)),
            ],
            scale in 0u8..=20,
            extra in prop_oneof![Just(0u8), 0u8..=40, any::<u8>()],
            fewer in prop_oneof![Just(0u8), 0u8..=20],
        ) {
            // As many digits as the scale (the common case), more (zeros
            // past the scale), or fewer (trailing zeros dropped).
            let digits = if extra > 0 { scale.saturating_add(extra) } else { scale.saturating_sub(fewer) };
            check(v, scale, digits)?;
        }

        #[test]
        fn eight_digits(x in 0u64..100_000_000) {
            let want = format!("{x:08}");
            prop_assert_eq!((eight(x) + 0x3030_3030_3030_3030).to_le_bytes(), want.as_bytes());
        }
    }
}
