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
    /// The value at `scale`, exactly (for one value; a message's many
    /// take a [`Scaler`], which decides this once: the same rule, held
    /// equal by a proptest, written twice because a scaler made for one
    /// value costs a quote 24 instructions more even inlined, 547 -> 571
    /// by `benches/sbe_instructions.sh`). One multiplication or one division,
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
        digits(self.exponent)
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

/// How mantissas sent at one exponent become values at one scale, decided
/// once for a message (its exponent is the message's, the scale the
/// instrument's) and then one multiplication or one division a value, by
/// a power of ten read from a table when the scaler was made; none when
/// the exponent is the scale's (the usual case: a venue sends an
/// instrument's prices at its tick's decimals).
///
/// `i64::MIN` is refused: it is SBE's null for an `int64`, and its
/// magnitude has no `i64` (the text parser refuses it too, and for the
/// same reason at each scale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scaler {
    op: Op,
    /// Whether the value is divided (the exponent below the scale's):
    /// what `i64::MIN` is refused as.
    down: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Same,
    Up(i64),
    Down(i64),
    /// Every value fails so, but for 0 unless `zero_too` (the scale is
    /// past [`MAX_SCALE`]).
    Fails {
        error: DecimalError,
        zero_too: bool,
    },
}

impl Scaler {
    /// Values sent as mantissas at `exponent`, read at `scale`.
    pub fn new(exponent: i8, scale: u8) -> Scaler {
        let shift = i32::from(exponent) + i32::from(scale);
        let op = if scale > MAX_SCALE {
            Op::Fails {
                error: DecimalError::Overflow,
                zero_too: true,
            }
        } else if shift == 0 {
            Op::Same
        } else if shift > 0 {
            match POW10.get(shift.unsigned_abs() as usize) {
                Some(&p) => Op::Up(p),
                None => Op::Fails {
                    error: DecimalError::Overflow,
                    zero_too: false,
                },
            }
        } else {
            // A non-zero i64 is below 10^19: no multiple of 10^19 or more.
            match POW10.get(shift.unsigned_abs() as usize) {
                Some(&p) => Op::Down(p),
                None => Op::Fails {
                    error: DecimalError::TooPrecise,
                    zero_too: false,
                },
            }
        };
        Scaler {
            op,
            down: shift < 0,
        }
    }

    /// `value × 10^exponent` at the scale, exactly, or why not.
    #[inline(always)]
    pub fn scale(self, value: i64) -> Result<i64, DecimalError> {
        match self.op {
            Op::Fails { error, zero_too } => {
                if value == 0 && !zero_too {
                    Ok(0)
                } else {
                    Err(error)
                }
            }
            // Its digits end in 8: below the scale, a non-zero digit.
            _ if value == i64::MIN => Err(if self.down {
                DecimalError::TooPrecise
            } else {
                DecimalError::Overflow
            }),
            Op::Same => Ok(value),
            Op::Up(p) => value.checked_mul(p).ok_or(DecimalError::Overflow),
            Op::Down(p) => {
                if value % p == 0 {
                    Ok(value / p)
                } else {
                    Err(DecimalError::TooPrecise)
                }
            }
        }
    }
}

/// A message's levels, prices at one exponent and sizes at another, as
/// book levels at an instrument's two scales: both [`Scaler`]s and both
/// digit counts decided once.
#[derive(Clone, Copy, Debug)]
pub struct LevelScaler {
    price: Scaler,
    size: Scaler,
    price_exponent: i8,
    size_exponent: i8,
    price_scale: u8,
    size_scale: u8,
}

impl LevelScaler {
    /// Prices sent at `price_exponent` read at `price_scale`, sizes sent
    /// at `size_exponent` at `size_scale`.
    pub fn new(price_exponent: i8, size_exponent: i8, price_scale: u8, size_scale: u8) -> Self {
        LevelScaler {
            price: Scaler::new(price_exponent, price_scale),
            size: Scaler::new(size_exponent, size_scale),
            price_exponent,
            size_exponent,
            price_scale,
            size_scale,
        }
    }

    /// The level of a price and a size as sent.
    #[inline(always)]
    pub fn level(&self, price: i64, size: i64) -> Result<Level, BadValue> {
        match (self.price.scale(price), self.size.scale(size)) {
            (Ok(p), Ok(s)) => Ok(Level {
                price: p,
                size: s,
                price_digits: digits(self.price_exponent),
                size_digits: digits(self.size_exponent),
            }),
            _ => Err(self.bad(price, size)),
        }
    }

    /// The error for a level [`level`](Self::level) refused: the price's
    /// if it is bad, else the size's.
    #[cold]
    fn bad(&self, price: i64, size: i64) -> BadValue {
        let (p, s) = (
            Mantissa {
                value: price,
                exponent: self.price_exponent,
            },
            Mantissa {
                value: size,
                exponent: self.size_exponent,
            },
        );
        match self.price.scale(price) {
            Err(e) => p.bad("price", e, self.price_scale),
            Ok(_) => {
                // The size's error (never taken for a level that was not refused).
                let e = self
                    .size
                    .scale(size)
                    .err()
                    .unwrap_or(DecimalError::Overflow);
                s.bad("size", e, self.size_scale)
            }
        }
    }
}

/// The fractional digits a value sent at `exponent` has: `-exponent`, or 0.
#[inline(always)]
fn digits(exponent: i8) -> u8 {
    exponent.saturating_neg().max(0) as u8
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

    /// A multiple of a power of ten (up to `10^18`), of either sign, or
    /// one off it: what dividing down takes, and what it refuses nearest
    /// to that (a random `i64` is nearly never such a multiple).
    fn multiples_of_tens() -> impl Strategy<Value = i64> {
        (any::<i64>(), 0usize..=18, -1i64..=1).prop_map(|(v, k, off)| {
            let p = POW10[k];
            (v / p).wrapping_mul(p).saturating_add(off)
        })
    }

    /// A level's price or size as sent: SBE's null, zero, any, small,
    /// and near multiples of powers of ten.
    fn a_level_value() -> impl Strategy<Value = i64> {
        prop_oneof![
            Just(i64::MIN),
            Just(0),
            any::<i64>(),
            -1_000_000i64..1_000_000,
            multiples_of_tens(),
        ]
    }

    proptest! {
        /// The same value as its decimal text reads at every scale, or the
        /// same refusal.
        #[test]
        fn a_mantissa_is_its_decimal_text(
            value in prop_oneof![
                Just(i64::MIN),
                Just(i64::MAX),
                Just(0),
                any::<i64>(),
                multiples_of_tens(),
            ],
            exponent in -24i8..24,
            scale in 0u8..=18,
        ) {
            let text = format!("{value}e{exponent}");
            prop_assert_eq!(m(value, exponent).scaled(scale), parse_scaled(text.as_bytes(), scale), "{}", text);
            // A message's scaler, decided once, scales each value the same.
            prop_assert_eq!(Scaler::new(exponent, scale).scale(value), m(value, exponent).scaled(scale));
        }

        /// A message's levels through one `LevelScaler` are each value's
        /// level, errors (their field and text) included.
        #[test]
        fn a_level_scaler_reads_levels_as_each_value_reads(
            price in a_level_value(),
            size in a_level_value(),
            exponents in (-20i8..20, -20i8..20),
            scales in (0u8..=19, 0u8..=19),
        ) {
            let scaler = LevelScaler::new(exponents.0, exponents.1, scales.0, scales.1);
            prop_assert_eq!(
                scaler.level(price, size),
                level(m(price, exponents.0), m(size, exponents.1), scales.0, scales.1)
            );
        }
    }
}
