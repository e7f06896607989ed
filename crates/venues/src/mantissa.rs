//! Exact decimals from a binary mantissa and a power-of-ten exponent, as
//! SBE sends them (Binance's `mantissa64` with an `exponent8` shared by the
//! message's prices, or its quantities): `value × 10^exponent` as an
//! integer count of `10^-scale` units, never through a float. A value the
//! scale cannot hold is the same typed error as for text
//! ([`crate::decimal`]): `TooPrecise` (a non-zero digit below the scale),
//! `Overflow`.

use core::fmt::{self, Write as _};

use crate::decimal::{BadValue, DecimalError, MAX_SCALE, POW10, ShortText};
use crate::model::Level;

/// A decimal as a mantissa and an exponent: `value × 10^exponent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mantissa {
    /// The mantissa.
    pub value: i64,
    /// The power of ten.
    pub exponent: i8,
}

impl Mantissa {
    /// The value at `scale`, exactly. One multiplication or one division,
    /// by a power of ten read from a table; none when the message's
    /// exponent is the scale's (the usual case: a venue sends an
    /// instrument's prices at its tick's decimals).
    ///
    /// `i64::MIN` is refused: it is SBE's null for an `int64`, and its
    /// magnitude has no `i64` (the text parser refuses it too, and for the
    /// same reason at each scale).
    #[inline]
    pub fn scaled(self, scale: u8) -> Result<i64, DecimalError> {
        let shift = i32::from(self.exponent) + i32::from(scale);
        if scale > MAX_SCALE {
            return Err(DecimalError::Overflow);
        }
        if self.value == i64::MIN {
            // Its digits end in 8: below the scale, a non-zero digit.
            return Err(if shift < 0 {
                DecimalError::TooPrecise
            } else {
                DecimalError::Overflow
            });
        }
        if shift == 0 || self.value == 0 {
            return Ok(self.value);
        }
        if shift > 0 {
            let p = POW10.get(shift as usize).ok_or(DecimalError::Overflow)?;
            return self.value.checked_mul(*p).ok_or(DecimalError::Overflow);
        }
        // A non-zero i64 is below 10^19: no multiple of 10^19 or more.
        let p = *POW10
            .get(shift.unsigned_abs() as usize)
            .ok_or(DecimalError::TooPrecise)?;
        if self.value % p == 0 {
            Ok(self.value / p)
        } else {
            Err(DecimalError::TooPrecise)
        }
    }

    /// The fractional digits the value was sent with: `-exponent`, or 0.
    pub fn digits(self) -> u8 {
        self.exponent.saturating_neg().max(0) as u8
    }

    /// The error for this value at `scale`, named `field`; its text reads
    /// `value`e`exponent`.
    #[cold]
    pub fn bad(self, field: &'static str, error: DecimalError, scale: u8) -> BadValue {
        BadValue {
            field,
            error,
            value: self.text(),
            scale,
        }
    }

    fn text(self) -> ShortText {
        struct Buf([u8; ShortText::CAPACITY], usize);
        impl fmt::Write for Buf {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let end = self.1 + s.len();
                self.0
                    .get_mut(self.1..end)
                    .ok_or(fmt::Error)?
                    .copy_from_slice(s.as_bytes());
                self.1 = end;
                Ok(())
            }
        }
        let mut b = Buf([0; ShortText::CAPACITY], 0);
        // At most 20 + 1 + 4 bytes: it fits.
        let _ = write!(b, "{}e{}", self.value, self.exponent);
        ShortText::new(core::str::from_utf8(&b.0[..b.1]).unwrap_or_default())
    }
}

/// A book level from a price and a size as mantissas.
#[inline(always)]
pub fn level(
    price: Mantissa,
    size: Mantissa,
    price_scale: u8,
    size_scale: u8,
) -> Result<Level, BadValue> {
    Ok(Level {
        price: price
            .scaled(price_scale)
            .map_err(|e| price.bad("price", e, price_scale))?,
        size: size
            .scaled(size_scale)
            .map_err(|e| size.bad("size", e, size_scale))?,
        price_digits: price.digits(),
        size_digits: size.digits(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decimal::parse_scaled;
    use proptest::prelude::*;

    fn m(value: i64, exponent: i8) -> Mantissa {
        Mantissa { value, exponent }
    }

    #[test]
    fn mantissas_scale_exactly_or_say_why_not() {
        assert_eq!(m(6_173_763, -2).scaled(2), Ok(6_173_763));
        assert_eq!(m(6_173_763, -2).scaled(8), Ok(6_173_763_000_000));
        assert_eq!(m(6_173_700, -2).scaled(0), Ok(61_737));
        assert_eq!(m(6_173_763, -2).scaled(0), Err(DecimalError::TooPrecise));
        assert_eq!(m(5, 3).scaled(2), Ok(500_000));
        assert_eq!(m(-15, -1).scaled(1), Ok(-15));
        assert_eq!(m(0, -128).scaled(18), Ok(0));
        assert_eq!(m(1, -128).scaled(0), Err(DecimalError::TooPrecise));
        assert_eq!(m(1, 127).scaled(0), Err(DecimalError::Overflow));
        assert_eq!(m(i64::MAX, -1).scaled(2), Err(DecimalError::Overflow));
        assert_eq!(m(i64::MIN, 0).scaled(0), Err(DecimalError::Overflow));
        assert_eq!(m(-i64::MAX, 0).scaled(0), Ok(-i64::MAX));
        assert_eq!(m(1, 0).scaled(19), Err(DecimalError::Overflow));
        let bad = m(6_173_763, -2).bad("price", DecimalError::TooPrecise, 0);
        assert_eq!(bad.value.as_str(), "6173763e-2");
        assert_eq!(
            m(i64::MIN, -128).text().as_str(),
            "-9223372036854775808e-128"
        );
    }

    proptest! {
        /// The same value as its decimal text reads at every scale, or the
        /// same refusal.
        #[test]
        fn a_mantissa_is_its_decimal_text(
            value in prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0), any::<i64>()],
            exponent in -24i8..24,
            scale in 0u8..=18,
        ) {
            let text = format!("{value}e{exponent}");
            prop_assert_eq!(m(value, exponent).scaled(scale), parse_scaled(text.as_bytes(), scale), "{}", text);
        }
    }
}
