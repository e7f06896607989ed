//! Exact decimal prices and sizes: wire strings to integers at a fixed
//! scale, with no floating point anywhere.
//!
//! `"61737.63000000"` at scale 2 is `6173763`; at scale 8 it is
//! `6173763000000`. A string with more non-zero fractional digits than the
//! scale keeps is an error, never a rounding.

use core::fmt;

/// The most decimal places a scale may have. `i64` holds 18 digits: at
/// scale 12, prices up to 999,999 are exact.
pub const MAX_SCALE: u8 = 18;

/// Why a decimal string was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecimalError {
    /// Empty, or not `-?digits[.digits]` (exponents are not accepted).
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

/// 10^0 to 10^18.
const POW10: [i64; 19] = {
    let mut t = [1i64; 19];
    let mut i = 1;
    while i < 19 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Parses `s` (`-?[0-9]+(\.[0-9]*)?` or `-?\.[0-9]+`) as an integer count of
/// `10^-scale` units, exactly.
#[inline]
pub fn parse_scaled(s: &[u8], scale: u8) -> Result<i64, DecimalError> {
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let (int, frac) = match digits.iter().position(|&b| b == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[digits.len()..]),
    };
    if (int.is_empty() && frac.is_empty())
        || scale > MAX_SCALE
        || !int.iter().chain(frac).all(u8::is_ascii_digit)
    {
        return Err(DecimalError::Syntax);
    }
    // Digits past the scale must be zeros.
    let keep = frac.len().min(usize::from(scale));
    if frac[keep..].iter().any(|&b| b != b'0') {
        return Err(DecimalError::TooPrecise);
    }
    let kept = int.len() + keep;
    let v = if kept <= 18 {
        // 18 digits always fit: no overflow check per digit (a dependent
        // multiply-and-check per digit was the cost of the whole parse).
        let v = int
            .iter()
            .chain(&frac[..keep])
            .fold(0i64, |v, &d| v * 10 + i64::from(d - b'0'));
        v.checked_mul(POW10[usize::from(scale) - keep])
            .ok_or(DecimalError::Overflow)?
    } else {
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
        v
    };
    Ok(if negative { -v } else { v })
}

/// The number of fractional digits `s` carries, trailing zeros included
/// (`"0.01000"` -> 5): the scale that keeps it exact.
pub fn scale_of(s: &[u8]) -> u8 {
    s.iter()
        .position(|&b| b == b'.')
        .map_or(0, |dot| (s.len() - dot - 1).min(255) as u8)
}

/// `text` at `scale`, or the error naming `field`, the value and the scale.
#[inline]
pub fn scaled(field: &'static str, text: &str, scale: u8) -> Result<i64, crate::DecodeError> {
    parse_scaled(text.as_bytes(), scale).map_err(|error| {
        crate::DecodeError::Decimal(crate::error::BadDecimal {
            field,
            error,
            value: crate::error::ShortText::new(text),
            scale,
            instrument: None,
        })
    })
}

/// A book level from its wire strings: exact values at the scales, and the
/// strings' fractional digit counts.
pub fn level(
    price: &str,
    size: &str,
    price_scale: u8,
    size_scale: u8,
) -> Result<crate::book::Level, crate::DecodeError> {
    Ok(crate::book::Level {
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

#[cfg(test)]
mod tests {
    use super::*;

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
            b"1e5",
            b"1.2.3",
            b"+1",
            b" 1",
            b"0x10",
            b"1,5",
        ] {
            assert_eq!(parse_scaled(bad, 4), Err(DecimalError::Syntax), "{bad:?}");
        }
        assert_eq!(parse_scaled(b"9223372036854775807", 0), Ok(i64::MAX));
        assert_eq!(
            parse_scaled(b"9223372036854775808", 0),
            Err(DecimalError::Overflow)
        );
        assert_eq!(parse_scaled(b"1", 19), Err(DecimalError::Syntax));
        assert_eq!(scale_of(b"0.01000"), 5);
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
