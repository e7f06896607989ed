//! Book levels from a venue's wire strings: the step between the parser,
//! which finds the strings, and the book, which holds exact integers.

use crate::error::DecodeError;
use crate::json::Levels;
use crate::model::{Level, Side};

/// A level as an adapter hands it over: its side and value, or why it
/// could not be read.
pub type LevelResult = Result<(Side, Level), DecodeError>;

/// Each of `levels` as a book level of `side`, exact at the given scales.
pub fn scaled_levels<'t, 'i>(
    levels: &Levels<'t, 'i>,
    side: Side,
    price_scale: u8,
    size_scale: u8,
) -> impl Iterator<Item = LevelResult> + use<'t, 'i> {
    levels.iter().map(move |level| {
        let (p, q) = level?;
        Ok((side, crate::decimal::level(p, q, price_scale, size_scale)?))
    })
}
