//! Book levels from a venue's wire strings: the step between the parser,
//! which finds the strings, and the book, which holds exact integers; and
//! [`Sides`], how a message's two sides of levels reach the sync engine.

use crate::error::DecodeError;
use crate::json::{Levels, LevelsIter, ReadLevel};
use crate::mantissa::LevelScaler;
use crate::model::{Level, Side};

/// A level as an adapter hands it over: its side and value, or why it
/// could not be read.
pub type LevelResult = Result<(Side, Level), DecodeError>;

/// Each of `levels` as a book level of `side`, exact at the given scales.
///
/// Levels whose values were read with them (Binance's shape, by the
/// Binance decoder's one-pass reader, kept at 8 decimals) are
/// scaled from there, one step decided once for the message
/// ([`LevelScaler`]), keeping the fractional digits each was sent with; a
/// value the scale cannot hold is read again from its text, so that the
/// error is the text parser's, word for word. Other levels are parsed from
/// their strings.
pub fn scaled_levels<'t, 'i>(
    levels: &Levels<'t, 'i>,
    side: Side,
    price_scale: u8,
    size_scale: u8,
) -> ScaledLevels<'t, 'i> {
    let repr = match levels.values() {
        Some(read) => Repr::Read {
            text: read.text,
            levels: read.marks.iter().zip(read.values),
            scaler: LevelScaler::new(-8, -8, price_scale, size_scale),
            same: price_scale == 8 && size_scale == 8,
        },
        None => Repr::Text(levels.iter()),
    };
    ScaledLevels {
        repr,
        side,
        price_scale,
        size_scale,
    }
}

/// The iterator of [`scaled_levels`].
pub struct ScaledLevels<'t, 'i> {
    repr: Repr<'t, 'i>,
    side: Side,
    price_scale: u8,
    size_scale: u8,
}

enum Repr<'t, 'i> {
    Read {
        text: &'i str,
        levels: core::iter::Zip<core::slice::Iter<'t, [u32; 4]>, core::slice::Iter<'t, ReadLevel>>,
        scaler: LevelScaler,
        /// The instrument's scales are the values' (8): nothing to scale,
        /// nothing to refuse (a read value is below 10^15).
        same: bool,
    },
    Text(LevelsIter<'t, 'i>),
}

impl Iterator for ScaledLevels<'_, '_> {
    type Item = LevelResult;

    #[inline(always)]
    fn next(&mut self) -> Option<LevelResult> {
        let (ps, ss) = (self.price_scale, self.size_scale);
        let level = match &mut self.repr {
            Repr::Read {
                text,
                levels,
                scaler,
                same,
            } => {
                let (bounds, read) = levels.next()?;
                if *same {
                    return Some(Ok((
                        self.side,
                        Level {
                            price: read.price,
                            size: read.qty,
                            price_digits: read.price_digits,
                            size_digits: read.qty_digits,
                        },
                    )));
                }
                match scaler.level(read.price, read.qty) {
                    Ok(level) => Ok(Level {
                        price_digits: read.price_digits,
                        size_digits: read.qty_digits,
                        ..level
                    }),
                    Err(_) => from_text(text, bounds, ps, ss),
                }
            }
            Repr::Text(levels) => match levels.next()? {
                Ok((p, q)) => crate::decimal::level(p, q, ps, ss).map_err(DecodeError::from),
                Err(e) => Err(e),
            },
        };
        Some(level.map(|l| (self.side, l)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.repr {
            Repr::Read { levels, .. } => levels.size_hint(),
            Repr::Text(levels) => levels.size_hint(),
        }
    }
}

/// A message's bids then its asks, each through [`scaled_levels`]: the
/// levels a book message hands its sync engine.
pub fn scaled_sides<'t, 'i>(
    bids: &Levels<'t, 'i>,
    asks: &Levels<'t, 'i>,
    price_scale: u8,
    size_scale: u8,
) -> ScaledSides<'t, 'i> {
    Sides::new(
        scaled_levels(bids, Side::Bid, price_scale, size_scale),
        scaled_levels(asks, Side::Ask, price_scale, size_scale),
    )
}

/// The iterator of [`scaled_sides`].
pub type ScaledSides<'t, 'i> = Sides<ScaledLevels<'t, 'i>>;

/// One side's levels of a message, then the other's (bids then asks for
/// most venues). Its `next` is inlined where the levels are taken, as
/// `Iterator::chain`'s was not: a level then came back through memory,
/// and the engine's read of it waited on a store that could not be
/// forwarded to it (most of the time its buffering of a diff took, by
/// `perf`).
pub struct Sides<I> {
    first: I,
    second: I,
    on_second: bool,
}

impl<I> Sides<I> {
    /// `first`'s levels, then `second`'s.
    pub fn new(first: I, second: I) -> Self {
        Sides {
            first,
            second,
            on_second: false,
        }
    }
}

impl<I: Iterator<Item = LevelResult>> Iterator for Sides<I> {
    type Item = LevelResult;

    #[inline(always)]
    fn next(&mut self) -> Option<LevelResult> {
        if !self.on_second {
            match self.first.next() {
                Some(level) => return Some(level),
                None => self.on_second = true,
            }
        }
        self.second.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let second = self.second.size_hint();
        if self.on_second {
            return second;
        }
        let first = self.first.size_hint();
        (
            first.0.saturating_add(second.0),
            first.1.zip(second.1).and_then(|(a, b)| a.checked_add(b)),
        )
    }
}

/// A level whose value the scale could not hold, read from its strings:
/// the text parser's error.
#[cold]
fn from_text(text: &str, bounds: &[u32; 4], ps: u8, ss: u8) -> Result<Level, DecodeError> {
    let at = |a: u32, b: u32| text.get(a as usize..b as usize).unwrap_or_default();
    let [p, p_end, q, q_end] = *bounds;
    Ok(crate::decimal::level(at(p, p_end), at(q, q_end), ps, ss)?)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `Sides` hands over what `Iterator::chain` of its two sides does, in
    /// the same order, with the same size hint at every step, errors and
    /// empty sides included.
    #[test]
    fn sides_are_the_chain_of_both() {
        let level = |side, price| Ok((side, Level::new(price, 1)));
        let bad = || Err(DecodeError::Type("price level"));
        let cases: [(Vec<LevelResult>, Vec<LevelResult>); 4] = [
            (vec![], vec![]),
            (vec![level(Side::Bid, 3), bad()], vec![]),
            (vec![], vec![level(Side::Ask, 4)]),
            (
                vec![level(Side::Bid, 3), level(Side::Bid, 2)],
                vec![bad(), level(Side::Ask, 4)],
            ),
        ];
        for (first, second) in cases {
            let mut chain = first.clone().into_iter().chain(second.clone());
            let mut sides = Sides::new(first.into_iter(), second.into_iter());
            loop {
                assert_eq!(sides.size_hint(), chain.size_hint());
                let (s, c) = (sides.next(), chain.next());
                assert_eq!(s, c);
                if c.is_none() {
                    break;
                }
            }
        }
    }

    proptest! {
        /// Levels read with their values (Binance's shape) come out of
        /// `scaled_levels` exactly as the text parser reads their strings,
        /// at every scale, errors (and the value's text in them) included.
        #[test]
        fn levels_read_with_their_values_scale_as_their_text_parses(
            levels in proptest::collection::vec(
                (
                    ("[0-9]{1,7}", prop_oneof!["[0-9]{8}", "[0-9]{1,8}"]),
                    ("[0-9]{1,7}", prop_oneof!["[0-9]{8}", "[0-9]{1,8}"]),
                ),
                1..6,
            ),
            // The values' own scale (8, nothing to scale) often, and every other.
            price_scale in prop_oneof![Just(8u8), 0u8..=19],
            size_scale in prop_oneof![Just(8u8), 0u8..=19],
        ) {
            let strings: Vec<(String, String)> = levels
                .iter()
                .map(|((pi, pf), (qi, qf))| (format!("{pi}.{pf}"), format!("{qi}.{qf}")))
                .collect();
            let body: Vec<String> =
                strings.iter().map(|(p, q)| format!("[\"{p}\",\"{q}\"]")).collect();
            let text = format!("[{}]", body.join(","));
            let (mut marks, mut values) = (Vec::new(), Vec::new());
            let read = crate::json::levels_binance(&text, 0, |k, b, v| {
                marks.truncate(k);
                values.truncate(k);
                marks.push(b);
                values.push(v);
            });
            prop_assert!(read.is_some(), "{}", text);
            let exact = Levels::exact(&text, &marks, &values);
            let got: Vec<LevelResult> =
                scaled_levels(&exact, Side::Ask, price_scale, size_scale).collect();
            let want: Vec<LevelResult> = strings
                .iter()
                .map(|(p, q)| {
                    crate::decimal::level(p, q, price_scale, size_scale)
                        .map(|l| (Side::Ask, l))
                        .map_err(DecodeError::from)
                })
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}
