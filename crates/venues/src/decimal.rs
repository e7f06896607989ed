//! Exact decimal prices and sizes: wire strings to integers at a fixed
//! scale, with no floating point anywhere.
//!
//! `"61737.63000000"` at scale 2 is `6173763`; at scale 8 it is
//! `6173763000000`. A string with more non-zero fractional digits than the
//! scale keeps is an error, never a rounding.

use core::fmt;

use crate::model::Level;

/// The most decimal places a scale may have. `i64` holds 18 digits: at
/// scale 12, prices up to 999,999 are exact.
pub const MAX_SCALE: u8 = 18;

/// Why a decimal string was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecimalError {
    /// Empty, or not `-?digits[.digits][(e|E)[+|-]digits]`.
    Syntax,
    /// More non-zero fractional digits than the scale keeps.
    TooPrecise,
    /// Does not fit an `i64` at this scale.
    Overflow,
}

impl fmt::Display for DecimalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecimalError::Syntax => "not a decimal number",
            DecimalError::TooPrecise => "more decimal places than the instrument's scale",
            DecimalError::Overflow => "too large for the instrument's scale",
        })
    }
}

impl std::error::Error for DecimalError {}

/// 10^0 to 10^18 (10^19 does not fit an `i64`).
pub(crate) const POW10: [i64; 19] = {
    let mut t = [1i64; 19];
    let mut i = 1;
    while i < 19 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Parses `s` (`-?[0-9]+(\.[0-9]*)?` or `-?\.[0-9]+`, either with an
/// optional exponent `[eE][+-]?[0-9]+`) as an integer count of `10^-scale`
/// units, exactly.
#[inline]
pub fn parse_scaled(s: &[u8], scale: u8) -> Result<i64, DecimalError> {
    match parse_fast(s, scale) {
        Some((v, _)) => Ok(v),
        None => parse_scaled_slow(s, scale),
    }
}

/// Whether the 8 bytes of `x` are all ASCII digits.
#[inline]
pub(crate) fn eight_digits(x: u64) -> bool {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    (x & HIGH) | (((x.wrapping_add(0x0606_0606_0606_0606)) & HIGH) >> 4) == 0x3333_3333_3333_3333
}

/// The value of 8 ASCII digits, the first in the lowest byte (a
/// little-endian load of the string).
#[inline]
pub(crate) fn eight_digit_value(x: u64) -> u64 {
    let x = x.wrapping_sub(0x3030_3030_3030_3030);
    let x = x.wrapping_mul(10).wrapping_add(x >> 8);
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    (((x & MASK).wrapping_mul(100 + (1_000_000 << 32)))
        .wrapping_add(((x >> 16) & MASK).wrapping_mul(1 + (10_000 << 32))))
        >> 32
}

/// Bytes of 1 each in a word.
const ONES: u64 = u64::MAX / 255;

/// The value of the `k` (1 to 8) ASCII digits in the low bytes of `w`
/// (the first in the lowest byte; the bytes above them are ignored), or
/// `None` if one is not a digit.
#[inline(always)]
fn digits_value(w: u64, k: usize) -> Option<u64> {
    let y = zero_padded(w, k);
    eight_digits(y).then(|| eight_digit_value(y))
}

/// The `k` (1 to 8) low bytes of `w` moved to its top, `'0'`s shifted in
/// below them: eight digits with the same value, when they are digits.
#[inline(always)]
fn zero_padded(w: u64, k: usize) -> u64 {
    debug_assert!((1..=8).contains(&k), "{k} digits");
    let pad = 8 * (8 - k as u32);
    (w << pad) | ((ONES * u64::from(b'0')) & ((1u64 << pad) - 1))
}

/// The value of the `k` (1 to 8) ASCII digits in the low bytes of `w`
/// (the bytes above them are ignored), known to be digits.
#[inline(always)]
pub(crate) fn leading_digits_value(w: u64, k: usize) -> u64 {
    eight_digit_value(zero_padded(w, k))
}

/// Where the first `.` is among the bytes of `w` (8: none).
#[inline(always)]
fn first_point(w: u64) -> usize {
    first_byte(w, b'.')
}

/// Where the first byte `c` is among the bytes of `w` (8: none): a zero
/// byte of `w ^ c…` is found exactly (the borrow marks only bytes above
/// the first).
#[inline(always)]
fn first_byte(w: u64, c: u8) -> usize {
    let t = w ^ (ONES * u64::from(c));
    ((t.wrapping_sub(ONES) & !t & (ONES << 7)).trailing_zeros() / 8) as usize
}

/// Where the first byte of `w` that is not a digit may be (8: none), by
/// one bit: every ASCII digit (`0x30` to `0x39`) has bit 4 set, and a
/// point (`0x2e`) or a quote (`0x22`) has it clear. So where the bytes
/// before it are digits, the first byte with it clear is the first that
/// is not; a byte found this way must still be checked to be the one
/// wanted, and the bytes before it to be digits (`:`, `p` and others
/// have bit 4 set too). Two steps shorter than
/// [`first_byte`]'s exact search, on the path each level's next string
/// waits on.
#[inline(always)]
fn first_not_digit(w: u64) -> usize {
    ((!w & (ONES << 4)).trailing_zeros() / 8) as usize
}

/// Byte `at` (below 8) of `w`.
#[inline(always)]
fn byte_of(w: u64, at: usize) -> u8 {
    (w >> (8 * at)) as u8
}

/// `w` without its byte `at` (below 8): the bytes above it move down.
#[inline(always)]
fn without_byte(w: u64, at: usize) -> u64 {
    let below = (1u64 << (8 * at)) - 1;
    (w & below) | ((w >> 8) & !below)
}

/// A price or quantity in Binance's shape, the string starting at `b[at]`
/// and ending at a closing quote: 1 to 7 integer digits, a point and 1 to
/// 8 fractional digits (spot: always 8, "61737.63000000", "0.00123000";
/// the futures markets: the symbol's tick and lot decimals, "58710.20",
/// "0.014").
/// Returns its integer digits as a word, in its last bytes with `'0'`s in
/// front; its fraction as a word of eight digits, `'0'`s after those sent
/// (the value at 8 decimals); how many fractional digits were sent; and
/// where its closing quote is. `None` where the point or the quote is not
/// where the shape puts them (no search: the first word holds the point,
/// the word after it the fraction and its quote, or the quote follows
/// it). Binance documents its prices and quantities only as decimal
/// strings, not their digits (the USD-M futures docs' "Diff. Book Depth
/// Streams" example: `["0.0024","10"]`): this shape is what its markets
/// send. A whole number ("10") is not in it: an array whose first level
/// has one is read by [`binance_words_fixed`], else by the general
/// parser. With `EIGHT`, exactly 8 fractional digits
/// (spot's shape), found faster. The words' bytes are not checked to be
/// digits:
/// [`crate::simd::level_values`] checks them as it reads them.
#[inline(always)]
pub(crate) fn binance_words<const EIGHT: bool>(
    b: &[u8],
    at: usize,
) -> Option<(u64, u64, u8, usize)> {
    let zeros = ONES * u64::from(b'0');
    let lo = match word_at(b, at) {
        Some(w) => w,
        None if !EIGHT => short_word(b, at),
        // 8 fractional digits and a quote follow the point: 10 bytes.
        None => return None,
    };
    let dot = first_not_digit(lo);
    if dot == 0 || dot >= 8 || byte_of(lo, dot) != b'.' {
        return None;
    }
    let f = at + dot + 1;
    let frac = match word_at(b, f) {
        Some(w) => w,
        None if !EIGHT => short_word(b, f),
        None => return None,
    };
    // The fraction's quote. With `EIGHT` (spot), right after the word:
    // where the next string starts then waits on the point's place alone,
    // not on a search of the fraction's word as well (a quote inside the
    // word is not a digit, and the level is refused).
    let n = if EIGHT { 8 } else { first_byte(frac, b'"') };
    if n == 0 || b.get(f + n) != Some(&b'"') {
        return None;
    }
    let sent = u64::MAX >> (8 * (8 - n as u32));
    let frac = (frac & sent) | (zeros & !sent);
    // The bytes from the point on shifted out, `'0'`s shifted in.
    Some((zero_padded(lo, dot), frac, n as u8, f + n))
}

/// [`binance_words`] where the fractional digits are known: exactly `n`,
/// 1 to 8, or 0 for a whole number (1 to 7 digits, no point). Nothing is
/// searched for but the first byte that is not a digit ([`first_not_digit`]:
/// the point, or a whole number's quote), so the next string's start
/// waits on that alone, as with spot's 8. Binance's
/// futures streams send each symbol's prices and quantities with a fixed
/// number of decimals, trailing zeros kept: the docs say only that they
/// are strings, the samples' recordings show it (USD-M BTCUSDT's 185,197
/// levels all like "58710.20", "0.010"; four USD-M and ten COIN-M symbols
/// of 2021 each with one price digit count, 1 to 5, and whole-number
/// quantities), so the first level of an array gives them for the rest.
/// Returns the words as [`binance_words`] does and where the closing
/// quote must be, which the caller checks (it is the first byte of what
/// follows the string: `","` or `"]`): a string with more digits fails
/// that check, one with fewer has a non-digit among the `n`, which
/// [`crate::simd::level_values`] refuses. `None` where the point (or the
/// whole number's end) is not in the first word, or the point is another
/// byte. Its point-and-fraction
/// steps repeat [`binance_words`]'s on purpose: with them shared through
/// one helper the level loop's reader was no longer inlined and a
/// futures level took twice as long (`venues`, 100 + 100 USD-M levels
/// 2.47 -> 5.1-5.3 us).
#[inline(always)]
pub(crate) fn binance_words_fixed(b: &[u8], at: usize, n: usize) -> Option<(u64, u64, usize)> {
    debug_assert!(n <= 8, "{n} fractional digits");
    let zeros = ONES * u64::from(b'0');
    let lo = word_at(b, at).unwrap_or_else(|| short_word(b, at));
    if n == 0 {
        // A whole number: 1 to 7 digits up to the quote, which the
        // caller checks where the string ends.
        let k = first_not_digit(lo);
        if k == 0 || k >= 8 {
            return None;
        }
        return Some((zero_padded(lo, k), zeros, at + k));
    }
    let dot = first_not_digit(lo);
    if dot == 0 || dot >= 8 || byte_of(lo, dot) != b'.' {
        return None;
    }
    let f = at + dot + 1;
    let frac = word_at(b, f).unwrap_or_else(|| short_word(b, f));
    let sent = u64::MAX >> (8 * (8 - n as u32));
    let frac = (frac & sent) | (zeros & !sent);
    Some((zero_padded(lo, dot), frac, f + n))
}

/// The fractional digits of the string at `b[at..]`, as
/// [`binance_words_fixed`] takes them (0: a whole number), and where its
/// closing quote is: an array's first level, for the levels after it.
/// Its digits are not checked here: reading it does that.
#[inline(always)]
pub(crate) fn binance_digits(b: &[u8], at: usize) -> Option<(u8, usize)> {
    let lo = word_at(b, at).unwrap_or_else(|| short_word(b, at));
    let quote = first_byte(lo, b'"');
    if quote < first_point(lo) {
        return (quote > 0).then_some((0, at + quote));
    }
    let (_, _, n, end) = binance_words::<false>(b, at)?;
    Some((n, end))
}

/// The 8 bytes at `b[at..]`, little-endian.
#[inline(always)]
fn word_at(b: &[u8], at: usize) -> Option<u64> {
    // The range's end given: one check of it against the length (and
    // one of the start against the end, which only a wrapped end fails),
    // where `get(at..)` then the chunk tested the start and then what was
    // left (`venues`, a level 0.4-0.5 ns faster, spot and USD-M alike).
    b.get(at..at.wrapping_add(8))
        .and_then(|r| r.first_chunk::<8>())
        .map(|w| u64::from_le_bytes(*w))
}

/// The fewer than 8 bytes left at `b[at..]`, zeros after them.
#[cold]
fn short_word(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    let rest = b.get(at..).unwrap_or_default();
    let n = rest.len().min(8);
    w[..n].copy_from_slice(&rest[..n]);
    u64::from_le_bytes(w)
}

/// `s` at `scale` and its fractional digit count ([`scale_of`]), for the
/// strings venues send: unsigned, at most 19 bytes, at most 18 digits at
/// the scale. `None` for anything else, valid or not:
/// [`parse_scaled_slow`] decides. Strings of 4 to 16 bytes (nearly all)
/// are read a word at a time, without a loop.
#[inline]
fn parse_fast(s: &[u8], scale: u8) -> Option<(i64, u8)> {
    let len = s.len();
    if !(4..=16).contains(&len) || scale > MAX_SCALE {
        return parse_bytes(s, scale);
    }
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or_default());
    // Binance spot's shape, every price and quantity it sends: up to
    // seven integer digits, a point and exactly eight fractional digits
    // ("61737.63000000", "0.00123000"). The last eight bytes are the
    // fraction and the first word holds the integer digits: two
    // conversions, no search for the point.
    if len >= 10 && s[len - 9] == b'.' {
        let frac = word(len - 8);
        if eight_digits(frac)
            && let Some(int) = digits_value(word(0), len - 9)
        {
            return at_scale(
                int * 100_000_000 + eight_digit_value(frac),
                len - 1,
                8,
                scale,
            );
        }
    }
    let (v, digits, frac) = if len <= 8 {
        // The string in the low bytes: two overlapping loads.
        let half = |at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or_default());
        let w = u64::from(half(0)) | (u64::from(half(len - 4)) << (8 * (len - 4)));
        match first_point(w) {
            dot if dot < len => (
                digits_value(without_byte(w, dot), len - 1)?,
                len - 1,
                len - dot - 1,
            ),
            _ => (digits_value(w, len)?, len, 0),
        }
    } else {
        // The first 8 bytes, and the other `len - 8` in the low bytes of
        // the second word.
        let (lo, hi) = (word(0), word(len - 8) >> (8 * (16 - len)));
        let m = len - 8;
        match (first_point(lo), first_point(hi)) {
            (dot, _) if dot < 8 => (
                digits_value(without_byte(lo, dot), 7)? * POW10[m] as u64 + digits_value(hi, m)?,
                len - 1,
                len - dot - 1,
            ),
            (_, dot) if dot < m => {
                let after = match m - 1 {
                    0 => 0,
                    k => digits_value(without_byte(hi, dot), k)?,
                };
                (
                    digits_value(lo, 8)? * POW10[m - 1] as u64 + after,
                    len - 1,
                    m - 1 - dot,
                )
            }
            _ => (
                digits_value(lo, 8)? * POW10[m] as u64 + digits_value(hi, m)?,
                len,
                0,
            ),
        }
    };
    at_scale(v, digits, frac, scale)
}

/// [`parse_fast`] byte by byte, for strings of 1 to 3 or 17 to 19 bytes.
#[inline(never)]
fn parse_bytes(s: &[u8], scale: u8) -> Option<(i64, u8)> {
    // At most 19 digits: they fit a u64.
    if s.len() > 19 || scale > MAX_SCALE {
        return None;
    }
    let mut v: u64 = 0;
    let mut dot = usize::MAX;
    let mut k = 0;
    while let Some(&b) = s.get(k) {
        // After the point, 8 digits at once where there are 8.
        if dot != usize::MAX
            && let Some(c) = s.get(k..k + 8)
        {
            let x = u64::from_le_bytes(c.try_into().ok()?);
            if eight_digits(x) {
                v = v * 100_000_000 + eight_digit_value(x);
                k += 8;
                continue;
            }
        }
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            v = v * 10 + u64::from(d);
        } else if b == b'.' && dot == usize::MAX {
            dot = k;
        } else {
            return None;
        }
        k += 1;
    }
    let (frac, digits) = match dot {
        usize::MAX => (0, s.len()),
        dot => (s.len() - dot - 1, s.len() - 1),
    };
    at_scale(v, digits, frac, scale)
}

/// `v`, a number of `digits` digits of which `frac` are fractional, at
/// `scale`: `None` where it does not fit 18 digits, or drops a digit that
/// is not 0.
#[inline(always)]
fn at_scale(v: u64, digits: usize, frac: usize, scale: u8) -> Option<(i64, u8)> {
    let scale = usize::from(scale);
    if digits == 0 || digits - frac + scale > 18 {
        return None;
    }
    let v = if frac > scale {
        // Digits past the scale: zeros, or the slow path says which error.
        let (q, r) = div_pow10(v, frac - scale);
        if r != 0 {
            return None;
        }
        q
    } else {
        v * POW10[scale - frac] as u64
    };
    // At most 18 digits: fits an i64.
    Some((v as i64, frac as u8))
}

/// `v / 10^n` and `v % 10^n` (`n` < 19), by constants.
#[inline]
fn div_pow10(v: u64, n: usize) -> (u64, u64) {
    macro_rules! by {
        ($($n:literal)*) => {
            match n {
                $($n => (v / 10u64.pow($n), v % 10u64.pow($n)),)*
                _ => (v / 10u64.pow(18), v % 10u64.pow(18)),
            }
        };
    }
    by!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17)
}

/// [`parse_scaled`] of any string: what the fast path leaves (signs,
/// exponents, more than 18 digits, errors) and what it is checked against.
///
/// An exponent (`1e-08`, `2.5E+3`) moves the point, as JSON's number
/// grammar (RFC 8259 §6) says it does: venues that send prices as JSON
/// numbers may write them so (Kraken's v2 `instrument` channel writes its
/// increments as `1e-08`), and the number's text is still its exact value.
#[cold]
fn parse_scaled_slow(s: &[u8], scale: u8) -> Result<i64, DecimalError> {
    let (negative, rest) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let (mantissa, exponent) = split_exponent(rest)?;
    let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
        Some(dot) => (&mantissa[..dot], &mantissa[dot + 1..]),
        None => (mantissa, &mantissa[mantissa.len()..]),
    };
    if (int.is_empty() && frac.is_empty())
        || scale > MAX_SCALE
        || !int.iter().chain(frac).all(u8::is_ascii_digit)
    {
        return Err(DecimalError::Syntax);
    }
    let v = if exponent == 0 {
        scaled_digits(int, frac, scale)?
    } else {
        shifted(int, frac, exponent, scale)?
    };
    Ok(if negative { -v } else { v })
}

/// `s` split at its exponent marker: the mantissa, and the exponent's
/// value (0 without one), saturated at +-`i32::MAX` (no mantissa is that
/// long: a digit that is not 0 then overflows or is too precise at every
/// scale, as it would unsaturated).
fn split_exponent(s: &[u8]) -> Result<(&[u8], i32), DecimalError> {
    let Some(at) = s.iter().position(|&b| b == b'e' || b == b'E') else {
        return Ok((s, 0));
    };
    let (negative, digits) = match &s[at + 1..] {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(DecimalError::Syntax);
    }
    let magnitude = digits.iter().fold(0i32, |v, &d| {
        v.saturating_mul(10).saturating_add(i32::from(d - b'0'))
    });
    Ok((&s[..at], if negative { -magnitude } else { magnitude }))
}

/// The digits `int`, then `frac` after the point, at `scale`.
fn scaled_digits(int: &[u8], frac: &[u8], scale: u8) -> Result<i64, DecimalError> {
    // Digits past the scale must be zeros.
    let keep = frac.len().min(usize::from(scale));
    if frac[keep..].iter().any(|&b| b != b'0') {
        return Err(DecimalError::TooPrecise);
    }
    let kept = int.len() + keep;
    if kept <= 18 {
        // 18 digits always fit: no overflow check per digit (a dependent
        // multiply-and-check per digit was the cost of the whole parse).
        let v = int
            .iter()
            .chain(&frac[..keep])
            .fold(0i64, |v, &d| v * 10 + i64::from(d - b'0'));
        return v
            .checked_mul(POW10[usize::from(scale) - keep])
            .ok_or(DecimalError::Overflow);
    }
    let mut v: i64 = 0;
    for &d in int.iter().chain(&frac[..keep]) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(d - b'0')))
            .ok_or(DecimalError::Overflow)?;
    }
    for _ in keep..usize::from(scale) {
        v = v.checked_mul(10).ok_or(DecimalError::Overflow)?;
    }
    Ok(v)
}

/// The digits `int`, then `frac` after the point, times `10^exponent`, at
/// `scale`: the point moves, the digits stay.
fn shifted(int: &[u8], frac: &[u8], exponent: i32, scale: u8) -> Result<i64, DecimalError> {
    let digits = || int.iter().chain(frac);
    if digits().all(|&d| d == b'0') {
        return Ok(0);
    }
    // Fractional digits at `10^-scale` units: the digits' count past the
    // point once moved, less the scale. Negative: zeros appended.
    let n = (int.len() + frac.len()) as i64;
    let past = frac.len() as i64 - i64::from(exponent) - i64::from(scale);
    if past > 0 {
        // The last `past` digits fall below the scale: zeros only.
        let keep = (n - past).max(0) as usize;
        if digits().skip(keep).any(|&d| d != b'0') {
            return Err(DecimalError::TooPrecise);
        }
    }
    let keep = (n - past.max(0)) as usize;
    let mut v: i64 = 0;
    for &d in digits().take(keep) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(d - b'0')))
            .ok_or(DecimalError::Overflow)?;
    }
    for _ in 0..(-past).max(0) {
        v = v.checked_mul(10).ok_or(DecimalError::Overflow)?;
    }
    Ok(v)
}

/// The number of fractional digits `s` carries, trailing zeros included
/// (`"0.01000"` -> 5, `"1e-08"` -> 8, `"1.5e3"` -> 0): the scale that keeps
/// it exact.
pub fn scale_of(s: &[u8]) -> u8 {
    let (mantissa, exponent) = split_exponent(s).unwrap_or((s, 0));
    let frac = mantissa
        .iter()
        .position(|&b| b == b'.')
        .map_or(0, |dot| mantissa.len() - dot - 1);
    (frac as i64 - i64::from(exponent)).clamp(0, 255) as u8
}

/// `text` at `scale`, or the error naming `field`, the value and the scale.
#[inline]
pub fn scaled(field: &'static str, text: &str, scale: u8) -> Result<i64, BadValue> {
    parse_scaled(text.as_bytes(), scale).map_err(|error| BadValue {
        field,
        error,
        value: ShortText::new(text),
        scale,
    })
}

/// A book level from its wire strings: exact values at the scales, and the
/// strings' fractional digit counts.
#[inline]
pub fn level(price: &str, size: &str, price_scale: u8, size_scale: u8) -> Result<Level, BadValue> {
    // One pass over each string in the usual case.
    if let (Some((price, price_digits)), Some((size, size_digits))) = (
        parse_fast(price.as_bytes(), price_scale),
        parse_fast(size.as_bytes(), size_scale),
    ) {
        return Ok(Level {
            price,
            size,
            price_digits,
            size_digits,
        });
    }
    level_slow(price, size, price_scale, size_scale)
}

#[cold]
fn level_slow(price: &str, size: &str, price_scale: u8, size_scale: u8) -> Result<Level, BadValue> {
    Ok(Level {
        price: scaled("price", price, price_scale)?,
        size: scaled("size", size, size_scale)?,
        price_digits: scale_of(price.as_bytes()),
        size_digits: scale_of(size.as_bytes()),
    })
}

/// Writes `v` (at `scale`) as it was sent with `digits` fractional digits:
/// `format_wire(3_026_110_000_000, 8, 1)` is `"30261.1"`, with `digits` 0
/// `"30261"` (the trailing digits dropped must be zeros, which an exact
/// parse guarantees). Into a stack buffer: returns the bytes written and
/// how many more `'0'`s follow them (a wire string may carry more trailing
/// zeros than the scale keeps).
pub fn format_wire(v: i64, scale: u8, digits: u8, out: &mut [u8; 48]) -> (usize, usize) {
    // 64-bit arithmetic throughout: |v| < 2^63 and scale <= 18.
    let scale = scale.min(MAX_SCALE);
    let unit = 10u64.pow(u32::from(scale));
    let abs = v.unsigned_abs();
    let (mut int, mut frac) = (abs / unit, abs % unit);
    let mut n = 0;
    if v < 0 {
        out[n] = b'-';
        n += 1;
    }
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (int % 10) as u8;
        int /= 10;
        if int == 0 {
            break;
        }
    }
    out[n..n + tmp.len() - i].copy_from_slice(&tmp[i..]);
    n += tmp.len() - i;
    if digits > 0 {
        out[n] = b'.';
        n += 1;
        // All `scale` fraction digits, then keep the first `digits`.
        let kept = usize::from(digits.min(scale));
        let mut all = [b'0'; 18];
        for d in all[..usize::from(scale)].iter_mut().rev() {
            *d = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
        out[n..n + kept].copy_from_slice(&all[..kept]);
        n += kept;
    }
    (n, usize::from(digits.saturating_sub(scale)))
}

/// Zeros to feed a checksum after [`format_wire`]'s bytes.
pub(crate) const ZEROS: [u8; 64] = [b'0'; 64];

/// Writes `v` at `scale` as a decimal string with exactly `scale`
/// fractional digits (the inverse of [`parse_scaled`]).
pub fn format_scaled(v: i64, scale: u8, out: &mut String) {
    use fmt::Write as _;
    let scale = u32::from(scale);
    let unit = 10u128.pow(scale);
    let abs = i128::from(v).unsigned_abs();
    if v < 0 {
        out.push('-');
    }
    let _ = write!(out, "{}", abs / unit);
    if scale > 0 {
        let _ = write!(out, ".{:0width$}", abs % unit, width = scale as usize);
    }
}

/// A value a scale cannot hold: which field, why, the text as sent and
/// the scale (the crate's `DecodeError::Decimal` once an adapter has it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BadValue {
    /// `price` or `size`.
    pub field: &'static str,
    /// Why.
    pub error: DecimalError,
    /// The value's text as sent (its first [`ShortText::CAPACITY`] bytes).
    pub value: ShortText,
    /// The scale it had to fit.
    pub scale: u8,
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?}: {} ({} decimals)",
            self.field, self.value, self.error, self.scale
        )
    }
}

impl std::error::Error for BadValue {}

/// A few bytes of text, kept inline so that an error stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShortText {
    bytes: [u8; ShortText::CAPACITY],
    len: u8,
}

impl ShortText {
    /// The most bytes kept.
    pub const CAPACITY: usize = 30;

    /// The first [`CAPACITY`](Self::CAPACITY) bytes of `s` (cut at a
    /// character boundary).
    pub fn new(s: &str) -> ShortText {
        let mut end = s.len().min(Self::CAPACITY);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; Self::CAPACITY];
        bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        ShortText {
            bytes,
            len: end as u8,
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Debug for ShortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ShortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binance_shaped_strings_take_the_short_path_exactly() {
        // Shortest and longest of the shape: one and seven integer digits.
        assert_eq!(parse_fast(b"1.23456789", 8), Some((123_456_789, 8)));
        assert_eq!(parse_fast(b"0.00123000", 8), Some((123_000, 8)));
        let long = b"1234567.12345678";
        assert_eq!(parse_fast(long, 8), Some((123_456_712_345_678, 8)));
        assert_eq!(parse_fast(b"61737.63000000", 2), Some((6_173_763, 8)));
        // Past 18 digits at the scale: the slow path decides (it fits).
        assert_eq!(parse_fast(long, 12), None);
        assert_eq!(parse_scaled(long, 12), Ok(1_234_567_123_456_780_000));
        // A dropped non-zero digit.
        assert_eq!(parse_fast(long, 4), None);
        assert_eq!(parse_scaled(long, 4), Err(DecimalError::TooPrecise));
        // Not the shape, or not a number: the general paths decide.
        assert_eq!(parse_scaled(b"-1.23456789", 8), Ok(-123_456_789));
        assert_eq!(
            parse_scaled(b"12345678.12345678", 8),
            Ok(1_234_567_812_345_678)
        );
        for bad in [
            &b"+1.23456789"[..],
            b"1.2.345678",
            b"1a.23456789",
            b"1.2345678a",
        ] {
            assert_eq!(parse_scaled(bad, 8), Err(DecimalError::Syntax), "{bad:?}");
        }
        let l = level("1.23456789", "0.10000000", 8, 8).unwrap();
        assert_eq!((l.price_digits, l.size_digits), (8, 8));
        assert_eq!(scale_of(long), 8);
    }

    /// The level readers find the point by bit 4 ([`first_not_digit`]):
    /// every byte with it clear that is not a point must be refused where
    /// the point goes, in spot's shape (`EIGHT`), in any digits and in
    /// fixed digits. (Bytes with it set, `:` or `p`, pass here and are
    /// refused as digits when the words are read.)
    #[test]
    fn a_level_readers_point_is_a_point() {
        let read = |text: &[u8]| {
            let mut b = text.to_vec();
            b.extend_from_slice(b",\"1.0\"]]        ");
            (
                binance_words::<true>(&b, 0).map(|w| (w.0, w.1, w.3)),
                binance_words::<false>(&b, 0).map(|w| (w.0, w.1, w.3)),
                binance_words_fixed(&b, 0, 8),
            )
        };
        let int = u64::from_le_bytes(*b"00000001");
        let frac = u64::from_le_bytes(*b"12345678");
        let ok = Some((int, frac, 10));
        assert_eq!(read(b"1.12345678\""), (ok, ok, ok));
        for c in [b'/', b'a', b'"', b',', b' ', b'-', b'+', b'!', 0xa0] {
            let mut text = *b"1.12345678\"";
            text[1] = c;
            assert_eq!(read(&text), (None, None, None), "{:?}", c as char);
        }
        // A whole number ends at its first byte with bit 4 clear: the
        // caller checks that it is the quote.
        let whole = binance_words_fixed(b"12\",\"3\"]]     ", 0, 0);
        assert_eq!(
            whole,
            Some((
                u64::from_le_bytes(*b"00000012"),
                u64::from_le_bytes(*b"00000000"),
                2
            ))
        );
    }

    #[test]
    fn wire_strings_parse_exactly() {
        assert_eq!(parse_scaled(b"61737.63000000", 2), Ok(6_173_763));
        assert_eq!(parse_scaled(b"61737.63000000", 8), Ok(6_173_763_000_000));
        assert_eq!(parse_scaled(b"0.00000000", 8), Ok(0));
        assert_eq!(parse_scaled(b"12", 3), Ok(12_000));
        assert_eq!(parse_scaled(b"-0.5", 1), Ok(-5));
        assert_eq!(parse_scaled(b".25", 2), Ok(25));
        assert_eq!(parse_scaled(b"7.", 0), Ok(7));
        assert_eq!(parse_scaled(b"0.001", 2), Err(DecimalError::TooPrecise));
        for bad in [
            &b""[..],
            b".",
            b"-",
            b"1e",
            b"1e+",
            b"e5",
            b"1e5.0",
            b"1e--5",
            b"1.2.3",
            b"+1",
            b" 1",
            b"0x10",
            b"1,5",
        ] {
            assert_eq!(parse_scaled(bad, 4), Err(DecimalError::Syntax), "{bad:?}");
        }
        // Exponents move the point (JSON numbers: Kraken v2 writes `1e-08`).
        assert_eq!(parse_scaled(b"1e-08", 8), Ok(1));
        assert_eq!(parse_scaled(b"1E-8", 10), Ok(100));
        assert_eq!(parse_scaled(b"1e-08", 7), Err(DecimalError::TooPrecise));
        assert_eq!(parse_scaled(b"2.5e3", 0), Ok(2500));
        assert_eq!(parse_scaled(b"2.5e+3", 2), Ok(250_000));
        assert_eq!(parse_scaled(b"-1.25e1", 1), Ok(-125));
        assert_eq!(parse_scaled(b"1200e-2", 0), Ok(12));
        assert_eq!(parse_scaled(b"1230e-2", 0), Err(DecimalError::TooPrecise));
        assert_eq!(parse_scaled(b"0e99999999999999999999", 8), Ok(0));
        assert_eq!(parse_scaled(b"1e19", 0), Err(DecimalError::Overflow));
        assert_eq!(
            parse_scaled(b"1e99999999999999999999", 0),
            Err(DecimalError::Overflow)
        );
        assert_eq!(
            parse_scaled(b"1e-99999999999", 18),
            Err(DecimalError::TooPrecise)
        );
        // A long mantissa and an exponent past ten thousand: still exact
        // (10^59 overflows; it once parsed as 10^9).
        let long = format!("0.{}1e10050", "0".repeat(9990));
        assert_eq!(
            parse_scaled(long.as_bytes(), 0),
            Err(DecimalError::Overflow)
        );
        let long = format!("0.{}1e10000", "0".repeat(9990));
        assert_eq!(parse_scaled(long.as_bytes(), 0), Ok(1_000_000_000));
        assert_eq!(scale_of(b"1e-08"), 8);
        assert_eq!(scale_of(b"1.5e3"), 0);
        assert_eq!(scale_of(b"1.25e-1"), 3);
        assert_eq!(parse_scaled(b"9223372036854775807", 0), Ok(i64::MAX));
        assert_eq!(
            parse_scaled(b"9223372036854775808", 0),
            Err(DecimalError::Overflow)
        );
        assert_eq!(parse_scaled(b"1", 19), Err(DecimalError::Syntax));
        assert_eq!(scale_of(b"0.01000"), 5);
        // Each length the word-wide path reads, and around it.
        for (text, scale, want) in [
            ("1", 2, Some((100, 0))),
            ("1.5", 2, Some((150, 1))),
            ("12.5", 2, Some((1250, 1))),
            ("0.002", 3, Some((2, 3))),
            ("61737.6", 8, Some((6_173_760_000_000, 1))),
            ("61737.63000000", 2, Some((6_173_763, 8))),
            ("61737.63000000", 8, Some((6_173_763_000_000, 8))),
            ("1234567890.12345", 8, Some((123_456_789_012_345_000, 5))),
            ("1234567890123456", 0, Some((1_234_567_890_123_456, 0))),
            ("12345678901234567", 0, Some((12_345_678_901_234_567, 0))),
            ("61737.63000001", 2, None),
            ("6173.7.6", 2, None),
            ("-61737.6", 2, None),
        ] {
            assert_eq!(parse_fast(text.as_bytes(), scale), want, "{text}");
        }
        assert_eq!(scale_of(b"42"), 0);
    }

    #[test]
    fn wire_strings_are_rebuilt_from_values_and_digit_counts() {
        for (text, scale) in [
            ("30261.1", 8),
            ("30261", 8),
            ("0.00123", 5),
            ("-1.50", 2),
            ("0", 0),
            ("12.3400", 8),
        ] {
            let v = parse_scaled(text.as_bytes(), scale).unwrap();
            let mut out = [0u8; 48];
            let (n, zeros) = format_wire(v, scale, scale_of(text.as_bytes()), &mut out);
            let rebuilt = format!(
                "{}{}",
                core::str::from_utf8(&out[..n]).unwrap(),
                "0".repeat(zeros)
            );
            assert_eq!(rebuilt, text);
        }
    }

    proptest::proptest! {
        /// The one-pass path agrees with the general one wherever it
        /// answers, digit counts included, on strings of digits, points,
        /// signs and other bytes; and answers for plain wire decimals.
        #[test]
        fn the_fast_path_agrees(text in "[-0-9.aé\u{0}/:]{0,30}", plain in "[0-9]{1,9}(\\.[0-9]{0,12})?", scale in 0u8..=20) {
            for t in [text.as_str(), plain.as_str()] {
                let b = t.as_bytes();
                if let Some((v, digits)) = parse_fast(b, scale) {
                    proptest::prop_assert_eq!(parse_scaled_slow(b, scale), Ok(v), "{}", t);
                    proptest::prop_assert_eq!(digits, scale_of(b), "{}", t);
                }
                proptest::prop_assert_eq!(parse_scaled(b, scale), parse_scaled_slow(b, scale), "{}", t);
            }
            let b = plain.as_bytes();
            let frac = b.len() - b.iter().position(|&c| c == b'.').map_or(b.len(), |d| d + 1);
            let fits = b.len() - frac - usize::from(frac > 0 || b.contains(&b'.')) + usize::from(scale) <= 18;
            let exact = b.iter().rev().take(frac.saturating_sub(usize::from(scale))).all(|&c| c == b'0');
            if fits && exact && b.len() <= 19 {
                proptest::prop_assert!(parse_fast(b, scale).is_some(), "{}", plain);
            }
        }

        /// An exponent moves the point and nothing else: `D.Fe<n>` parses
        /// as the same digits written with the point moved, value or error.
        #[test]
        fn an_exponent_moves_the_point(negative: bool, int in "[0-9]{0,12}", frac in "[0-9]{0,12}", e in -30i32..30, upper: bool, scale in 0u8..=18) {
            proptest::prop_assume!(!(int.is_empty() && frac.is_empty()));
            let sign = if negative { "-" } else { "" };
            let marker = if upper { "E" } else { "e" };
            let text = format!("{sign}{int}.{frac}{marker}{e}");
            let digits = format!("{int}{frac}");
            let point = int.len() as i64 + i64::from(e);
            let plain = if point <= 0 {
                format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
            } else if point as usize >= digits.len() {
                format!("{sign}{digits}{}", "0".repeat(point as usize - digits.len()))
            } else {
                let (a, b) = digits.split_at(point as usize);
                format!("{sign}{a}.{b}")
            };
            proptest::prop_assert_eq!(
                parse_scaled(text.as_bytes(), scale),
                parse_scaled(plain.as_bytes(), scale),
                "{} vs {}", text, plain
            );
        }

        /// Against an i128 reference computed digit by digit: exact, or
        /// the right error, for any decimal string and scale.
        #[test]
        fn parsing_is_exact(negative: bool, int in "[0-9]{0,20}", frac in "[0-9]{0,20}", dot: bool, scale in 0u8..=18) {
            let text = format!("{}{int}{}{}", if negative { "-" } else { "" }, if dot || int.is_empty() { "." } else { "" }, if dot || int.is_empty() { frac.as_str() } else { "" });
            let frac = if dot || int.is_empty() { frac } else { String::new() };
            let got = parse_scaled(text.as_bytes(), scale);
            if int.is_empty() && frac.is_empty() {
                proptest::prop_assert_eq!(got, Err(DecimalError::Syntax));
                return Ok(());
            }
            let keep = frac.len().min(usize::from(scale));
            if frac[keep..].bytes().any(|b| b != b'0') {
                proptest::prop_assert_eq!(got, Err(DecimalError::TooPrecise));
                return Ok(());
            }
            let mut v: i128 = 0;
            for d in int.bytes().chain(frac[..keep].bytes()) {
                v = v * 10 + i128::from(d - b'0');
            }
            v *= 10i128.pow(u32::from(scale) - keep as u32);
            if v > i128::from(i64::MAX) {
                proptest::prop_assert_eq!(got, Err(DecimalError::Overflow));
                return Ok(());
            }
            let want = if negative { -(v as i64) } else { v as i64 };
            proptest::prop_assert_eq!(got, Ok(want));
            // And back: the value formats to a string that parses to itself.
            let mut out = String::new();
            format_scaled(want, scale, &mut out);
            proptest::prop_assert_eq!(parse_scaled(out.as_bytes(), scale), Ok(want));
        }
    }
}
