//! simd-json, in place and without allocating: the tape and the parser's
//! buffers are kept between messages, and the input is the payload's own
//! (mutable, padded) bytes.

use core::fmt;

pub use simd_json::INPUT_PADDING;
use simd_json::prelude::*;
use simd_json::tape::{Array, Tape, Value};

use crate::error::DecodeError;
use simd_json::{Buffers, fill_tape_padded};

pub use crate::error::JsonError;

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
    /// `[["p","q",...],...]` exactly (no whitespace, no escapes), `len`
    /// levels of `width` strings each, checked by [`levels_marked`].
    Text {
        text: &'i str,
        len: usize,
        width: usize,
    },
    /// The same, with each level's price and quantity bounds found while
    /// checking it: `[price start, price end, qty start, qty end]`.
    Marked {
        text: &'i str,
        marks: &'t [[u32; 4]],
    },
    /// The same, each level in Binance's shape ([`levels_binance`]), its
    /// price and quantity read in the same pass.
    Exact {
        text: &'i str,
        marks: &'t [[u32; 4]],
        values: &'t [ReadLevel],
    },
}

impl<'t, 'i> Levels<'t, 'i> {
    pub(crate) fn tape(a: Array<'t, 'i>) -> Levels<'t, 'i> {
        Levels(Repr::Tape(a))
    }

    /// The array whose text [`levels_marked`] found at `text`: `len` levels of
    /// `width` strings.
    pub(crate) fn text(text: &'i str, len: usize, width: usize) -> Levels<'t, 'i> {
        Levels(Repr::Text { text, len, width })
    }

    /// The array whose levels [`levels_marked`] marked in `text`.
    pub(crate) fn marked(text: &'i str, marks: &'t [[u32; 4]]) -> Levels<'t, 'i> {
        Levels(Repr::Marked { text, marks })
    }

    /// The levels [`levels_binance`] read in `text`: their bounds and
    /// values (as many of each).
    pub(crate) fn exact(
        text: &'i str,
        marks: &'t [[u32; 4]],
        values: &'t [ReadLevel],
    ) -> Levels<'t, 'i> {
        Levels(Repr::Exact {
            text,
            marks,
            values,
        })
    }

    /// Each level's price and quantity as read with the levels (Binance's
    /// shape), if they were, with the text and the strings' bounds they
    /// were read from.
    #[inline]
    pub(crate) fn values(&self) -> Option<ReadValues<'t, 'i>> {
        match self.0 {
            Repr::Exact {
                text,
                marks,
                values,
            } => Some(ReadValues {
                text,
                marks,
                values,
            }),
            _ => None,
        }
    }

    /// How many levels.
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Tape(a) => a.len(),
            Repr::Text { len, .. } => len,
            Repr::Marked { marks, .. } | Repr::Exact { marks, .. } => marks.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each level's price and quantity strings.
    pub fn iter(&self) -> LevelsIter<'t, 'i> {
        LevelsIter(match self.0 {
            Repr::Tape(a) => IterRepr::Tape(a.iter()),
            Repr::Text { text, len, width } => IterRepr::Text {
                text,
                quotes: crate::simd::Quotes::new(text.as_bytes(), 0),
                left: len,
                width,
            },
            Repr::Marked { text, marks } | Repr::Exact { text, marks, .. } => IterRepr::Marked {
                text,
                marks: marks.iter(),
            },
        })
    }
}

/// If `s[i..]` starts with an array of levels of `width` (at least 2)
/// strings each in the tightest form, `[["p","q"],["p","q"]]` (no
/// whitespace, strings without escapes or control characters; `[]` too),
/// the index after it and the number of levels. `None` for anything else.
/// If `s[i..]` starts with an array of levels of `width` (at least 2)
/// strings each in the tightest form, `[["p","q"],["p","q"]]` (no
/// whitespace, strings without escapes or control characters; `[]` too),
/// the index after it and the number of levels; `None` for anything else.
/// On the way, `mark` gets each level's number and the bounds of its
/// price and quantity (they count only if the whole array passes).
#[inline(always)]
pub(crate) fn levels_marked(
    s: &str,
    i: usize,
    width: usize,
    mut mark: impl FnMut(usize, [u32; 4]),
) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'[') || width < 2 {
        return None;
    }
    if b.get(i + 1) == Some(&b']') {
        return Some((i + 2, 0));
    }
    // Quote to quote: every byte outside the strings is then checked to be
    // exactly `[`, `","`, `]` and `,`; inside them, no backslash (an
    // escape) or control character.
    let mut quotes = crate::simd::Quotes::new(b, i);
    let mut j = i + 1;
    let mut n = 0;
    loop {
        // `["`
        if b.get(j) != Some(&b'[') || quotes.next_quote()? != j + 1 {
            return None;
        }
        let mut close = quotes.next_quote()?;
        let mut bounds = [j + 2, close, 0, 0];
        for k in 1..width {
            // `","`
            if b.get(close + 1) != Some(&b',') || quotes.next_quote()? != close + 2 {
                return None;
            }
            let open = close + 3;
            close = quotes.next_quote()?;
            if k == 1 {
                (bounds[2], bounds[3]) = (open, close);
            }
        }
        // Texts past 4 GiB are not marked (no venue sends one).
        mark(n, bounds.map(|x| x as u32));
        n += 1;
        // `"]` then `,` or `]`
        match b.get(close + 1..close + 3)? {
            b"]," => j = close + 3,
            b"]]" => return quotes.clean_until(close + 3).then_some((close + 3, n)),
            _ => return None,
        }
    }
}

/// [`levels_marked`] for levels of two strings each in Binance's shape
/// ([`binance_words`](crate::decimal::binance_words)), or with every
/// price's and every quantity's fractional digits those of the first
/// level's (none for whole numbers), read in the same pass: `mark` gets
/// each level's number, the bounds of its price and quantity, and their
/// values (a level number may be marked up to three times: spot's
/// 8-digit shape is tried first, then the first level's digits, then any
/// digits, each from the first level, so marks are kept by number). Every
/// byte between the strings is checked where the shape puts it (`["`,
/// the price, `","`, the quantity, `"]`, then `,` or `]`); spot's shape
/// and pointed fixed digits search for no quote (whole numbers and any
/// digits search a word for it). `None` for anything else, which
/// [`levels_marked`] then reads.
#[inline(always)]
pub(crate) fn levels_binance(
    s: &str,
    i: usize,
    mut mark: impl FnMut(usize, [u32; 4], ReadLevel),
) -> Option<(usize, usize)> {
    // The digits' kernel inlines into the loop (SSE2 on x86-64). Spot's
    // shape (8 fractional digits) first, faster; then any digits, out of
    // line (the futures markets' streams).
    let spot = |b: &[u8], at, _| crate::decimal::binance_words::<true>(b, at);
    crate::simd::in_sse2(|| levels_binance_loop(s, i, &mut mark, spot))
        .or_else(|| levels_binance_any(s, i, &mut mark))
}

/// [`levels_binance`] for other fractional digits: first as many as the
/// first level's price and quantity have (none: whole numbers), for every
/// level (the futures markets' fixed decimals,
/// [`binance_words_fixed`](crate::decimal::binance_words_fixed)); where a
/// level differs, any digits but at least one, searched for in each
/// string.
#[inline(never)]
fn levels_binance_any(
    s: &str,
    i: usize,
    mark: &mut impl FnMut(usize, [u32; 4], ReadLevel),
) -> Option<(usize, usize)> {
    use crate::decimal::binance_digits;
    let b = s.as_bytes();
    let first = |j: usize| {
        if b.get(j..j + 3)? != b"[[\"" {
            return None;
        }
        let (price_digits, p_end) = binance_digits(b, j + 3)?;
        let (qty_digits, _) = binance_digits(b, p_end + 3)?;
        Some((price_digits, qty_digits))
    };
    let any = |b: &[u8], at, _| crate::decimal::binance_words::<false>(b, at);
    crate::simd::in_sse2(|| {
        first(i)
            .and_then(|digits| levels_binance_fixed(s, i, digits, mark))
            .or_else(|| levels_binance_loop(s, i, mark, any))
    })
}

/// The levels at `s[i..]` with every price's fractional digits `price`
/// and every quantity's `qty` (0: whole numbers).
#[inline(always)]
fn levels_binance_fixed(
    s: &str,
    i: usize,
    (price, qty): (u8, u8),
    mark: &mut impl FnMut(usize, [u32; 4], ReadLevel),
) -> Option<(usize, usize)> {
    let fixed = |b: &[u8], at, is_qty: bool| {
        let n = if is_qty { qty } else { price };
        let (int, frac, end) = crate::decimal::binance_words_fixed(b, at, usize::from(n))?;
        Some((int, frac, n, end))
    };
    levels_binance_loop(s, i, mark, fixed)
}

/// The levels of the array at `s[i..]`, each string's digits read as
/// words by `words` (the text, where the string starts, and whether it is
/// the quantity: its two words, its fractional digits, where its closing
/// quote is, as [`binance_words`](crate::decimal::binance_words) gives
/// them).
#[inline(always)]
fn levels_binance_loop(
    s: &str,
    i: usize,
    mark: &mut impl FnMut(usize, [u32; 4], ReadLevel),
    words: impl Fn(&[u8], usize, bool) -> Option<(u64, u64, u8, usize)>,
) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'[') || b.len() > u32::MAX as usize {
        return None;
    }
    if b.get(i + 1) == Some(&b']') {
        return Some((i + 2, 0));
    }
    let mut j = i + 1;
    let mut n = 0;
    loop {
        if b.get(j..j + 2)? != b"[\"" {
            return None;
        }
        let (price_int, price_frac, price_digits, p_end) = words(b, j + 2, false)?;
        if b.get(p_end..p_end + 3)? != b"\",\"" {
            return None;
        }
        let (qty_int, qty_frac, qty_digits, q_end) = words(b, p_end + 3, true)?;
        // Both checked to be digits and read at once; at most 15 digits
        // each, well inside an i64.
        let [price, qty] = crate::simd::level_values([price_int, price_frac, qty_int, qty_frac])?
            .map(|v| v as i64);
        // Below 4 GiB: checked above.
        let bounds = [j + 2, p_end, p_end + 3, q_end].map(|x| x as u32);
        let level = ReadLevel {
            price,
            qty,
            price_digits,
            qty_digits,
        };
        mark(n, bounds, level);
        n += 1;
        match b.get(q_end..q_end + 3)? {
            b"\"]," => j = q_end + 3,
            b"\"]]" => return Some((q_end + 3, n)),
            _ => return None,
        }
    }
}

/// Levels whose values were read with them ([`Levels::values`]).
#[derive(Clone, Copy)]
pub(crate) struct ReadValues<'t, 'i> {
    /// The text the levels are in.
    pub(crate) text: &'i str,
    /// Each level's price and quantity bounds in `text`.
    pub(crate) marks: &'t [[u32; 4]],
    /// Each level's price and quantity.
    pub(crate) values: &'t [ReadLevel],
}

/// A level's price and quantity as read with it: each at 8 decimals, and
/// how many fractional digits it was sent with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReadLevel {
    pub(crate) price: i64,
    pub(crate) qty: i64,
    pub(crate) price_digits: u8,
    pub(crate) qty_digits: u8,
}

/// The iterator of [`Levels::iter`].
pub struct LevelsIter<'t, 'i>(IterRepr<'t, 'i>);

enum IterRepr<'t, 'i> {
    Tape(simd_json::tape::array::Iter<'t, 'i>),
    Text {
        text: &'i str,
        /// The quotes still ahead.
        quotes: crate::simd::Quotes<'i>,
        left: usize,
        width: usize,
    },
    Marked {
        text: &'i str,
        marks: core::slice::Iter<'t, [u32; 4]>,
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

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        // The marked levels inline, in the caller's loop; the other two
        // out of line, where their size does not crowd it.
        match &mut self.0 {
            IterRepr::Marked { text, marks } => {
                let &[p, p_end, q, q_end] = marks.next()?;
                let at = |a: u32, b: u32| text.get(a as usize..b as usize);
                Some(Ok((at(p, p_end)?, at(q, q_end)?)))
            }
            IterRepr::Tape(levels) => next_on_tape(levels),
            IterRepr::Text {
                text,
                quotes,
                left,
                width,
            } => next_in_text(text, quotes, left, *width),
        }
    }
}

#[inline(never)]
fn next_on_tape<'i>(
    levels: &mut simd_json::tape::array::Iter<'_, 'i>,
) -> Option<Result<(&'i str, &'i str), DecodeError>> {
    let level = levels.next()?;
    Some(match level.as_array() {
        None => Err(DecodeError::Type("price level")),
        Some(pair) => level_pair(
            pair.get(0).and_then(|v| v.into_string()),
            pair.get(1).and_then(|v| v.into_string()),
        ),
    })
}

#[inline(never)]
fn next_in_text<'i>(
    text: &'i str,
    quotes: &mut crate::simd::Quotes<'i>,
    left: &mut usize,
    width: usize,
) -> Option<Result<(&'i str, &'i str), DecodeError>> {
    if *left == 0 {
        return None;
    }
    *left -= 1;
    // Checked by `levels_marked`: `["p","q",...]`, so the next four quotes
    // enclose the price and the quantity.
    let p = quotes.next_quote()? + 1;
    let p_end = quotes.next_quote()?;
    let q = quotes.next_quote()? + 1;
    let q_end = quotes.next_quote()?;
    for _ in 2..width {
        quotes.next_quote()?;
        quotes.next_quote()?;
    }
    Some(Ok((text.get(p..p_end)?, text.get(q..q_end)?)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `levels_marked` takes a tightly written array of levels exactly
        /// when no string needs an escape, and its levels, read from the
        /// text or from the marks, read as simd-json's.
        #[test]
        fn text_levels_read_as_the_tape(
            width in 2usize..5,
            levels in proptest::collection::vec(
                proptest::collection::vec("[0-9.a\"\\\\\u{1}é]{0,12}", 4),
                0..6,
            ),
        ) {
            let levels: Vec<Vec<String>> =
                levels.into_iter().map(|mut l| { l.truncate(width); l }).collect();
            let text = serde_json::to_string(&levels).unwrap();
            let plain = levels.iter().flatten().all(|s| {
                !s.contains(['"', '\\', '\u{1}'])
            });
            let mut marks = Vec::new();
            let at = levels_marked(&text, 0, width, |k, m| {
                assert_eq!(k, marks.len());
                marks.push(m);
            });
            prop_assert_eq!(at.is_some(), plain, "{}", text);
            if let Some((end, len)) = at {
                prop_assert_eq!((end, len), (text.len(), levels.len()));
                let read = |l: Levels<'_, '_>| -> Vec<(String, String)> {
                    l.iter()
                        .map(|l| l.map(|(p, q)| (p.to_owned(), q.to_owned())).unwrap())
                        .collect()
                };
                let tape = with_doc(&text, |doc| read(Levels::tape(doc.as_array().unwrap())));
                prop_assert_eq!(read(Levels::text(&text, len, width)), tape.clone());
                prop_assert_eq!(read(Levels::marked(&text, &marks)), tape);
            }
            // Another width never reads it.
            if !levels.is_empty() {
                prop_assert_eq!(levels_marked(&text, 0, width + 1, |_, _| {}), None);
            }
        }
    }

    /// A price or quantity string: Binance's shape most of the time, and
    /// near misses (no point, a point too far, nine fractional
    /// digits, a sign, a stray byte, a quote or escape inside).
    fn wire_value() -> impl Strategy<Value = String> {
        prop_oneof![
            // Spot's 8 fractional digits, and the futures markets' fewer.
            4 => ("[0-9]{1,7}", "[0-9]{8}").prop_map(|(i, f)| format!("{i}.{f}")),
            2 => ("[0-9]{1,7}", "[0-9]{1,8}").prop_map(|(i, f)| format!("{i}.{f}")),
            1 => "[0-9]{0,9}\\.?[0-9]{0,10}",
            1 => "[-+0-9.e\"\\\\a]{0,18}",
            // Another byte where the point would be: the readers find
            // the point by a bit (4) every digit has and it has not, as
            // `-+/, "` and `a` to `o` have not; `:` and `p` to `z` have
            // it, and are refused as digits instead.
            1 => ("[0-9]{1,7}", "[-+/,:a-z \"]", "[0-9]{1,8}")
                .prop_map(|(i, c, f)| format!("{i}{c}{f}")),
        ]
    }

    proptest! {
        /// `levels_binance` reads an array exactly when every string has
        /// Binance's shape, marks the bounds `levels_marked` marks, and
        /// reads the values the text parser reads at 8 decimals; otherwise
        /// it declines and `levels_marked` reads the array as before.
        #[test]
        fn binance_levels_read_in_one_pass_as_marked_and_parsed(
            levels in proptest::collection::vec((wire_value(), wire_value()), 0..8),
            tail in prop_oneof![Just(""), Just(","), Just("}"), Just("]")],
        ) {
            check_binance_levels(&levels, tail)?;
        }

        /// The same where every price has the same fractional digits and
        /// every quantity too, whole numbers included (the futures
        /// markets' fixed decimals, read without searching for the
        /// quotes), but for the odd level with one digit more or fewer, or
        /// another byte where its point would be.
        #[test]
        fn binance_levels_with_fixed_decimals_read_as_parsed(
            digits in (0usize..=8, 0usize..=8),
            levels in proptest::collection::vec(
                (("[0-9]{1,9}", "[0-9]{9}"), ("[0-9]{1,9}", "[0-9]{9}"), 0u8..12),
                1..8,
            ),
            tail in prop_oneof![Just(""), Just("}"), Just("}}")],
            cut in any::<proptest::sample::Index>(),
        ) {
            let levels: Vec<(String, String)> = levels
                .into_iter()
                .map(|((pi, pf), (qi, qf), odd)| {
                    // Now and then one more or one fewer digit.
                    let n = |n: usize, col: u8| match (odd, col) {
                        (0, 0) | (1, 1) => n + 1,
                        (2, 0) | (3, 1) => n.checked_sub(1).unwrap_or(2),
                        _ => n,
                    };
                    // Now and then another byte where the point goes: '/' in
                    // a price, 'a' in a quantity, each with bit 4 clear as
                    // the point has, the bit the readers find it by.
                    let value = |i: &str, f: &str, n: usize, col: u8| match (n, odd) {
                        (0, _) => i.to_owned(),
                        (n, 4) if col == 0 => format!("{i}/{}", &f[..n]),
                        (n, 5) if col == 1 => format!("{i}a{}", &f[..n]),
                        (n, _) => format!("{i}.{}", &f[..n]),
                    };
                    (
                        value(&pi, &pf, n(digits.0, 0), 0),
                        value(&qi, &qf, n(digits.1, 1), 1),
                    )
                })
                .collect();
            check_binance_levels(&levels, tail)?;
            // The fixed-digits reader alone takes the array exactly when
            // every level has the first level's digits (the other readers
            // would read a pointed one the same, and hide it declining).
            let text = levels_text(&levels, tail);
            let alike = levels.iter().all(|(p, q)| {
                (wire_digits(p), wire_digits(q)) == (Some(digits.0), Some(digits.1))
            });
            let digits = (digits.0 as u8, digits.1 as u8);
            let fixed = levels_binance_fixed(&text, 0, digits, &mut |_, _, _| {});
            prop_assert_eq!(fixed.is_some(), alike, "{}", text);
            // Cut anywhere, it never panics and reads only what the marked
            // reader reads.
            let cut = &text[..cut.index(text.len() + 1)];
            if let Some(got) = levels_binance(cut, 0, |_, _, _| {}) {
                prop_assert_eq!(Some(got), levels_marked(cut, 0, 2, |_, _| {}));
            }
        }
    }

    /// `levels_binance` on the array of `levels` followed by `tail`: it
    /// reads it exactly when every string has Binance's shape, or every
    /// price has the first price's fractional digits and every quantity
    /// the first quantity's (whole numbers too); marks the bounds
    /// `levels_marked` marks; and reads the values the text parser reads
    /// at 8 decimals.
    fn check_binance_levels(levels: &[(String, String)], tail: &str) -> Result<(), TestCaseError> {
        let digits = wire_digits;
        let pointed = |v: &str| digits(v).is_some_and(|n| n > 0);
        // Read: every string with a point, or every price with the
        // first price's digits and every quantity with the first
        // quantity's.
        let first = levels.first().map(|(p, q)| (digits(p), digits(q)));
        let alike = first.is_some_and(|(pd, qd)| {
            pd.is_some()
                && qd.is_some()
                && levels
                    .iter()
                    .all(|(p, q)| (digits(p), digits(q)) == (pd, qd))
        });
        let text = levels_text(levels, tail);
        let mut read = Vec::new();
        let got = levels_binance(&text, 0, |k, bounds, values| {
            // A second try (after spot's 8, after the first level's
            // digits) starts again.
            read.truncate(k);
            read.push((bounds, values));
        });
        let all = levels.iter().all(|(p, q)| pointed(p) && pointed(q)) || alike;
        prop_assert_eq!(got.is_some(), all, "{}", text);
        if let Some((end, n)) = got {
            let mut marks = Vec::new();
            let want = levels_marked(&text, 0, 2, |_, m| marks.push(m));
            prop_assert_eq!(Some((end, n)), want);
            prop_assert_eq!(read.iter().map(|r| r.0).collect::<Vec<_>>(), marks);
            for ((p, q), (_, r)) in levels.iter().zip(&read) {
                let l = crate::decimal::level(p, q, 8, 8).unwrap();
                let want = (l.price, l.size, l.price_digits, l.size_digits);
                prop_assert_eq!(want, (r.price, r.qty, r.price_digits, r.qty_digits));
            }
        }
        Ok(())
    }

    /// A string's fractional digits in Binance's shape (1 to 7 integer
    /// digits, a point, 1 to 8 fractional ones), 0 for a whole number of
    /// 1 to 7 digits; `None` for anything else.
    fn wire_digits(v: &str) -> Option<usize> {
        let (i, f) = v.split_once('.').unwrap_or((v, ""));
        let digits = (i.bytes().chain(f.bytes())).all(|b| b.is_ascii_digit());
        let whole = f.is_empty() && !v.contains('.');
        ((1..=7).contains(&i.len()) && f.len() <= 8 && digits && (whole || !f.is_empty()))
            .then_some(f.len())
    }

    /// `levels` as a JSON array of `["p","q"]` levels, then `tail`.
    fn levels_text(levels: &[(String, String)], tail: &str) -> String {
        let body: Vec<String> = levels
            .iter()
            .map(|(p, q)| format!("[\"{p}\",\"{q}\"]"))
            .collect();
        format!("[{}]{tail}", body.join(","))
    }
}
