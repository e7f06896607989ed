//! simd-json, in place and without allocating: the tape and the parser's
//! buffers are kept between messages, and the input is the payload's own
//! (mutable, padded) bytes.

use core::fmt;

pub use simd_json::INPUT_PADDING;
use simd_json::prelude::*;
use simd_json::tape::{Array, Tape, Value};

use crate::error::DecodeError;
use simd_json::{Buffers, fill_tape_padded};

/// Why a message is not JSON.
///
/// `Copy` and allocation-free: a stream of malformed messages costs the
/// receive path no allocation (simd-json's own error would format a
/// `String` for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonError {
    /// The buffer does not hold [`INPUT_PADDING`] bytes after the message.
    NoPadding,
    /// simd-json rejected the message; `at` is the byte where it stopped.
    Invalid {
        /// The offset in the message.
        at: usize,
    },
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::NoPadding => write!(
                f,
                "the message needs {INPUT_PADDING} bytes of padding after it"
            ),
            JsonError::Invalid { at } => write!(f, "invalid JSON at byte {at}"),
        }
    }
}

impl std::error::Error for JsonError {}

/// A reusable simd-json parser: after the first messages have grown its
/// buffers to the largest message seen, parsing allocates nothing.
pub struct JsonParser {
    buffers: Buffers,
    tape: Option<Tape<'static>>,
}

impl JsonParser {
    /// A parser whose buffers start sized for `capacity`-byte messages.
    pub fn new(capacity: usize) -> JsonParser {
        JsonParser {
            buffers: Buffers::new(capacity),
            tape: Some(Tape(Vec::with_capacity(capacity / 4))),
        }
    }

    /// Parses `buf[..len]` in place (strings are unescaped within it) and
    /// runs `f` on the document. `buf` must hold at least [`INPUT_PADDING`]
    /// bytes after `len` (any content; tickwire-net's payloads have them).
    pub fn parse<R>(
        &mut self,
        buf: &mut [u8],
        len: usize,
        f: impl for<'t, 'i> FnOnce(Value<'t, 'i>) -> R,
    ) -> Result<R, JsonError> {
        if buf.len() < len + INPUT_PADDING {
            return Err(JsonError::NoPadding);
        }
        let mut tape = self.tape.take().unwrap_or_else(|| Tape(Vec::new())).reset();
        let result = match fill_tape_padded(buf, len, &mut self.buffers, &mut tape) {
            Ok(()) => Ok(f(tape.as_value())),
            Err(e) => Err(JsonError::Invalid { at: e.index() }),
        };
        self.tape = Some(tape.reset());
        result
    }
}

impl Default for JsonParser {
    fn default() -> JsonParser {
        JsonParser::new(4096)
    }
}

/// Price levels as sent: `[["price","qty", ...], ...]` (entries after the
/// first two are ignored), on simd-json's tape, or as the array's own text
/// when a one-pass reader has checked it.
#[derive(Clone, Copy)]
pub struct Levels<'t, 'i>(Repr<'t, 'i>);

#[derive(Clone, Copy)]
enum Repr<'t, 'i> {
    Tape(Array<'t, 'i>),
    /// `[["p","q"],...]` exactly (no whitespace, no escapes), `len` pairs,
    /// checked by [`pairs_at`].
    Pairs {
        text: &'i str,
        len: usize,
    },
}

impl<'t, 'i> Levels<'t, 'i> {
    pub(crate) fn tape(a: Array<'t, 'i>) -> Levels<'t, 'i> {
        Levels(Repr::Tape(a))
    }

    /// The array whose text [`pairs_at`] found at `text`.
    pub(crate) fn pairs(text: &'i str, len: usize) -> Levels<'t, 'i> {
        Levels(Repr::Pairs { text, len })
    }

    /// How many levels.
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Tape(a) => a.len(),
            Repr::Pairs { len, .. } => len,
        }
    }

    /// Each level as a book level of `side`, exact at the given scales.
    pub fn scaled(
        &self,
        side: crate::book::Side,
        price_scale: u8,
        size_scale: u8,
    ) -> impl Iterator<Item = crate::sync::LevelResult> + use<'t, 'i> {
        self.iter().map(move |level| {
            let (p, q) = level?;
            Ok((side, crate::decimal::level(p, q, price_scale, size_scale)?))
        })
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each level's price and quantity strings.
    pub fn iter(&self) -> LevelsIter<'t, 'i> {
        LevelsIter(match self.0 {
            Repr::Tape(a) => IterRepr::Tape(a.iter()),
            Repr::Pairs { text, len } => IterRepr::Pairs {
                text,
                at: 1,
                left: len,
            },
        })
    }
}

/// If `s[i..]` starts with an array of string pairs in the tightest form,
/// `[["p","q"],["p","q"]]` (no whitespace, strings without escapes or
/// control characters; `[]` too), the index after it and the number of
/// pairs. `None` for anything else.
pub(crate) fn pairs_at(s: &str, i: usize) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let mut j = i + 1;
    if b.get(j) == Some(&b']') {
        return Some((j + 1, 0));
    }
    let mut n = 0;
    // The structure, from the quotes alone; then one pass over the whole
    // array (which the compiler vectorises) for what a string may not hold
    // unescaped: a backslash would start an escape, control characters are
    // not allowed.
    let end = loop {
        // `["`
        if b.get(j..j + 2)? != b"[\"" {
            return None;
        }
        let end = crate::scan::quote_at(b, j + 2)?;
        // `","`
        if b.get(end..end + 3)? != b"\",\"" {
            return None;
        }
        let end = crate::scan::quote_at(b, end + 3)?;
        // `"]` then `,` or `]`
        if b.get(end..end + 2)? != b"\"]" {
            return None;
        }
        n += 1;
        match b.get(end + 2)? {
            b',' => j = end + 3,
            b']' => break end + 3,
            _ => return None,
        }
    };
    let clean = b[i..end]
        .iter()
        .fold(true, |ok, &c| ok & (c != b'\\') & (c >= 0x20));
    clean.then_some((end, n))
}

/// The iterator of [`Levels::iter`].
pub struct LevelsIter<'t, 'i>(IterRepr<'t, 'i>);

enum IterRepr<'t, 'i> {
    Tape(simd_json::tape::array::Iter<'t, 'i>),
    Pairs {
        text: &'i str,
        /// The `[` of the next pair.
        at: usize,
        left: usize,
    },
}

fn level_pair<'i>(
    first: Option<&'i str>,
    second: Option<&'i str>,
) -> Result<(&'i str, &'i str), DecodeError> {
    match (first, second) {
        (Some(p), Some(q)) => Ok((p, q)),
        _ => Err(DecodeError::Type("price level")),
    }
}

impl<'t, 'i> Iterator for LevelsIter<'t, 'i> {
    type Item = Result<(&'i str, &'i str), DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Tape(levels) => {
                let level = levels.next()?;
                Some(match level.as_array() {
                    None => Err(DecodeError::Type("price level")),
                    Some(pair) => level_pair(
                        pair.get(0).and_then(|v| v.into_string()),
                        pair.get(1).and_then(|v| v.into_string()),
                    ),
                })
            }
            IterRepr::Pairs { text, at, left } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                // Checked by `pairs_at`: `["p","q"]` then `,` or `]`.
                let b = text.as_bytes();
                let p_start = *at + 2;
                let p_end = crate::scan::quote_at(b, p_start)?;
                let q_start = p_end + 3;
                let q_end = crate::scan::quote_at(b, q_start)?;
                *at = q_end + 3;
                Some(Ok((text.get(p_start..p_end)?, text.get(q_start..q_end)?)))
            }
        }
    }
}

impl fmt::Debug for Levels<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The field `key` of an object.
pub(crate) fn field<'t, 'i>(
    v: &Value<'t, 'i>,
    key: &'static str,
) -> Result<Value<'t, 'i>, DecodeError> {
    v.get(key).ok_or(DecodeError::Missing(key))
}

/// The string field `key`.
pub(crate) fn str_field<'i>(v: &Value<'_, 'i>, key: &'static str) -> Result<&'i str, DecodeError> {
    field(v, key)?.into_string().ok_or(DecodeError::Type(key))
}

/// The unsigned integer field `key`.
pub(crate) fn u64_field(v: &Value<'_, '_>, key: &'static str) -> Result<u64, DecodeError> {
    field(v, key)?.as_u64().ok_or(DecodeError::Type(key))
}

/// The price-level array field `key`.
pub(crate) fn levels_field<'t, 'i>(
    v: &Value<'t, 'i>,
    key: &'static str,
) -> Result<Levels<'t, 'i>, DecodeError> {
    field(v, key)?
        .as_array()
        .map(Levels::tape)
        .ok_or(DecodeError::Type(key))
}

/// Test support: parses a padded copy of `text` and hands `f` the document.
#[cfg(test)]
pub(crate) fn with_doc<R>(text: &str, f: impl for<'t, 'i> FnOnce(Value<'t, 'i>) -> R) -> R {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, b' ');
    JsonParser::default()
        .parse(&mut buf, text.len(), f)
        .expect("valid JSON")
}
