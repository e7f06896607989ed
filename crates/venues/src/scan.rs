//! A one-pass scanner for the flat JSON objects exchanges send, for the
//! message types where walking the bytes once beats building a tape.
//!
//! It accepts a strict subset of JSON: strings without escapes or control
//! characters, integers that fit 64 bits, `true`/`false`/`null`, and arrays or objects whose
//! extent it finds by matching brackets (strings inside respected). Anything
//! else makes it give up (`None`), and the caller falls back to the full
//! parser: the scanner never decides that a message is invalid, only that
//! it is not simple. What it does accept, it reads exactly as simd-json
//! would (tested on every recorded message and by the fuzzer).

/// A value, borrowed from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val<'i> {
    Str(&'i str),
    /// The number's text (checked against the JSON grammar).
    Num(&'i str),
    Bool(bool),
    Null,
    /// The whole array, brackets included.
    Array(&'i str),
    /// The whole object, braces included.
    Object(&'i str),
}

impl<'i> Val<'i> {
    /// A non-negative integer that fits `u64`.
    pub(crate) fn as_u64(self) -> Option<u64> {
        let Val::Num(n) = self else { return None };
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        n.parse().ok()
    }
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string whose opening quote is at `i`;
/// `None` if it holds an escape or a control character, or is not closed.
#[inline(always)]
pub(crate) fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let close = string_stop(b, i + 1)?;
    (b[close] == b'"').then_some(close + 1)
}

/// The end of the number starting at `i`, per the JSON grammar.
fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], mut i: usize| {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        (i > start).then_some(i)
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let int_start = i;
    i = digits(b, i)?;
    if b[int_start] == b'0' && i - int_start > 1 {
        return None; // leading zeros
    }
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    Some(i)
}

/// The end of the array or object opening at `i` (strings respected).
fn bracket_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => {
                i = string_end(b, i)?;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Which numbers a scan accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Numbers {
    /// Integers that fit 64 bits only: what simd-json reads exactly, for
    /// paths that must agree with it.
    Integers,
    /// Any JSON number, kept as its text (for venues that send prices as
    /// JSON numbers: the text is the exact value).
    Any,
}

/// One value starting at `i`: the value and where it ends.
fn value<'i>(s: &'i str, i: usize, numbers: Numbers) -> Option<(Val<'i>, usize)> {
    let b = s.as_bytes();
    match *b.get(i)? {
        b'"' => {
            let end = string_end(b, i)?;
            Some((Val::Str(&s[i + 1..end - 1]), end))
        }
        b'-' | b'0'..=b'9' => {
            let end = number_end(b, i)?;
            let n = &s[i..end];
            // Only integers that fit 64 bits: simd-json rejects larger
            // ones, and rounds fractions and exponents into floats (the
            // venues' flat messages have neither).
            if numbers == Numbers::Integers
                && n.parse::<u64>().is_err()
                && n.parse::<i64>().is_err()
            {
                return None;
            }
            Some((Val::Num(n), end))
        }
        b't' if b[i..].starts_with(b"true") => Some((Val::Bool(true), i + 4)),
        b'f' if b[i..].starts_with(b"false") => Some((Val::Bool(false), i + 5)),
        b'n' if b[i..].starts_with(b"null") => Some((Val::Null, i + 4)),
        b'[' => {
            let end = bracket_end(b, i)?;
            Some((Val::Array(&s[i..end]), end))
        }
        b'{' => {
            let end = bracket_end(b, i)?;
            Some((Val::Object(&s[i..end]), end))
        }
        _ => None,
    }
}

/// Calls `field` for each key and value of the object that is all of `s`
/// (surrounding whitespace allowed). `None` if `s` is not such an object.
/// Nested arrays and objects are handed over whole, not checked inside.
pub(crate) fn object<'i>(
    s: &'i str,
    numbers: Numbers,
    mut field: impl FnMut(&'i str, Val<'i>),
) -> Option<()> {
    let b = s.as_bytes();
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = string_end(b, i)?;
            let key = &s[i + 1..key_end - 1];
            i = ws(b, key_end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            let (v, end) = value(s, ws(b, i + 1), numbers)?;
            field(key, v);
            i = ws(b, end);
            match b.get(i) {
                Some(b',') => i = ws(b, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (ws(b, i) == b.len()).then_some(())
}

/// Calls `item` for each element of the array that is all of `s`.
pub(crate) fn array<'i>(
    s: &'i str,
    numbers: Numbers,
    mut item: impl FnMut(Val<'i>) -> Option<()>,
) -> Option<()> {
    let b = s.as_bytes();
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        i += 1;
    } else {
        loop {
            let (v, end) = value(s, i, numbers)?;
            item(v)?;
            i = ws(b, end);
            match b.get(i) {
                Some(b',') => i = ws(b, i + 1),
                Some(b']') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (ws(b, i) == b.len()).then_some(())
}

/// Walks the elements of an array one at a time, without allocating.
/// Meant for arrays already checked with [`valid`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<'i> {
    s: &'i str,
    i: usize,
    numbers: Numbers,
    done: bool,
}

impl<'i> Cursor<'i> {
    /// A cursor over the array that is `s`.
    pub(crate) fn new(s: &'i str, numbers: Numbers) -> Cursor<'i> {
        let b = s.as_bytes();
        let i = ws(b, 0);
        let open = b.get(i) == Some(&b'[');
        let i = if open { ws(b, i + 1) } else { i };
        Cursor {
            s,
            i,
            numbers,
            done: !open || b.get(i) == Some(&b']'),
        }
    }

    /// The next element (`None` at the end, or at anything malformed).
    pub(crate) fn next_val(&mut self) -> Option<Val<'i>> {
        if self.done {
            return None;
        }
        let b = self.s.as_bytes();
        let Some((v, end)) = value(self.s, self.i, self.numbers) else {
            self.done = true;
            return None;
        };
        self.i = ws(b, end);
        match b.get(self.i) {
            Some(b',') => self.i = ws(b, self.i + 1),
            _ => self.done = true,
        }
        Some(v)
    }
}

/// Whether `v` is valid JSON all the way down (to a depth of 64).
pub(crate) fn valid(v: Val<'_>, numbers: Numbers, depth: usize) -> bool {
    match v {
        Val::Array(s) => {
            depth < 64
                && array(s, numbers, |x| valid(x, numbers, depth + 1).then_some(())).is_some()
        }
        Val::Object(s) => {
            if depth >= 64 {
                return false;
            }
            let mut ok = true;
            object(s, numbers, |_, x| ok &= valid(x, numbers, depth + 1)).is_some() && ok
        }
        _ => true,
    }
}

// ----- eight bytes at a time ------------------------------------------------

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Eight bytes at `i`, little-endian, if there are eight.
#[inline(always)]
fn word(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// How many ASCII digits start at `i`, eight bytes at a time: a byte
/// below `'0'` borrows into its high bit when `0x30` is taken away,
/// a byte above `'9'` carries into it when `0x46` is added. A borrow
/// or carry can only mark bytes above a byte that is itself marked, so
/// the lowest mark is the first non-digit.
#[inline(always)]
pub(crate) fn digits_at(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    while let Some(w) = word(b, j) {
        let marks = (w.wrapping_sub(0x30 * ONES) | w.wrapping_add(0x46 * ONES)) & HIGHS;
        if marks != 0 {
            return Some(j - i + (marks.trailing_zeros() / 8) as usize);
        }
        j += 8;
    }
    Some(
        j - i
            + b.get(j..)?
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .count(),
    )
}

/// The value of the `n` (1 to 19) ASCII digits at `b[i..]`, eight at a
/// time: the last eight and the eight before them each a word converted
/// at once, the first `n % 8` (or 8) read from the number's first word
/// with `'0'`s shifted in, the parts' products independent of each other.
/// A time in milliseconds (13 digits) read a digit at a time was a chain
/// of 13 dependent multiply-adds; Binance sends two or three in every
/// message. Where fewer than 8 bytes follow the number's start, a digit
/// at a time.
#[inline(always)]
fn uint_value(b: &[u8], i: usize, n: usize) -> u64 {
    use crate::decimal::{eight_digit_value, leading_digits_value};
    let Some(first) = word(b, i) else {
        return b[i..i + n]
            .iter()
            .fold(0u64, |v, &d| v * 10 + u64::from(d - b'0'));
    };
    // Below 9 digits the first word holds them all. From 9 on, each word
    // read after it starts within the number and ends at or before its
    // last digit, which `b` holds: the words are always there.
    let last = |back: usize| {
        eight_digit_value(u64::from_le_bytes(
            b[i + n - back..][..8].try_into().unwrap_or_default(),
        ))
    };
    match n {
        ..=8 => leading_digits_value(first, n),
        9..=16 => leading_digits_value(first, n - 8) * 100_000_000 + last(8),
        _ => {
            leading_digits_value(first, n - 16) * 10_000_000_000_000_000
                + last(16) * 100_000_000
                + last(8)
        }
    }
}

/// The index of the first `"`, `\\` or control character at or after
/// `i` (sixteen bytes at a time, see `simd`).
#[inline(always)]
pub(crate) fn string_stop(b: &[u8], i: usize) -> Option<usize> {
    crate::simd::stop(b, i)
}

/// A read position in a message's text, for the readers of exact layouts:
/// each step reads one piece or answers `None`.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'i> {
    pub(crate) s: &'i str,
    pub(crate) at: usize,
}

impl<'i> Reader<'i> {
    /// The separator and key `,"<key>":`, exactly.
    #[inline(always)]
    pub(crate) fn key<const N: usize>(&mut self, sep: &[u8; N]) -> Option<()> {
        let here: &[u8; N] = self
            .s
            .as_bytes()
            .get(self.at..self.at + N)?
            .try_into()
            .ok()?;
        (here == sep).then(|| self.at += N)
    }

    /// An unsigned integer (JSON: no leading zero).
    #[inline(always)]
    pub(crate) fn uint(&mut self) -> Option<u64> {
        let b = self.s.as_bytes();
        let i = self.at;
        let digits = digits_at(b, i)?;
        // 19 digits always fit in 64 bits: no overflow check per digit
        // (a dependent multiply-and-check per digit was most of the
        // cost).
        if digits == 0 || digits > 19 || (b[i] == b'0' && digits > 1) {
            return None;
        }
        self.at = i + digits;
        Some(uint_value(b, i, digits))
    }

    /// A signed integer that fits an `i64` (JSON: no leading zero).
    #[inline(always)]
    pub(crate) fn int(&mut self) -> Option<i64> {
        let negative = self.s.as_bytes().get(self.at) == Some(&b'-');
        self.at += usize::from(negative);
        let v = i64::try_from(self.uint()?).ok()?;
        Some(if negative { -v } else { v })
    }

    /// A string without escapes or control characters.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Option<&'i str> {
        let i = self.at;
        if self.s.as_bytes().get(i) != Some(&b'"') {
            return None;
        }
        let end = string_end(self.s.as_bytes(), i)?;
        self.at = end;
        self.s.get(i + 1..end - 1)
    }

    /// A string that must be exactly `want`.
    #[inline(always)]
    pub(crate) fn is(&mut self, want: &str) -> Option<()> {
        (self.string()? == want).then_some(())
    }

    #[inline(always)]
    pub(crate) fn boolean(&mut self) -> Option<bool> {
        let rest = self.s.as_bytes().get(self.at..)?;
        if rest.starts_with(b"true") {
            self.at += 4;
            Some(true)
        } else if rest.starts_with(b"false") {
            self.at += 5;
            Some(false)
        } else {
            None
        }
    }

    /// Price levels of `width` strings each, `[["p","q"],...]`, checked
    /// now, with each level's bounds kept in the front of `marks` (which
    /// then moves past them), so that reading the levels later finds them
    /// without another scan. Levels that do not fit are read from the text
    /// instead.
    #[inline(always)]
    pub(crate) fn levels_into<'t>(
        &mut self,
        width: usize,
        marks: &mut &'t mut [[u32; 4]],
    ) -> Option<crate::json::Levels<'t, 'i>> {
        let room = marks.len();
        let fits = self.s.len() <= u32::MAX as usize;
        let mut all = fits;
        let into: &mut [[u32; 4]] = marks;
        let (end, n) = crate::json::levels_marked(self.s, self.at, width, |k, bounds| match into
            .get_mut(k)
        {
            Some(slot) => *slot = bounds,
            None => all = false,
        })?;
        let levels = if all && n <= room {
            let (used, rest) = core::mem::take(marks).split_at_mut(n);
            *marks = rest;
            crate::json::Levels::marked(self.s, used)
        } else {
            crate::json::Levels::text(self.s.get(self.at..end)?, n, width)
        };
        self.at = end;
        Some(levels)
    }

    /// [`levels_into`](Self::levels_into) for levels of two strings, read
    /// first as Binance's shape ([`levels_binance`](crate::json::levels_binance)):
    /// their values kept in the front of `marks.values` beside their bounds,
    /// so the levels are not parsed again. Any other shape is read as
    /// `levels_into` reads it.
    #[inline(always)]
    pub(crate) fn levels_exact_into<'t>(
        &mut self,
        marks: &mut LevelMarks<'t>,
    ) -> Option<crate::json::Levels<'t, 'i>> {
        let room = marks.bounds.len().min(marks.values.len());
        if room == 0 {
            // Nowhere to keep them (a reader without a decoder's room).
            return self.levels_into(2, &mut marks.bounds);
        }
        let (bounds, values) = (&mut *marks.bounds, &mut *marks.values);
        // Levels past the room are not kept; the pass that reads the array
        // marks every level it holds, so `n <= room` says all were kept.
        let read = crate::json::levels_binance(self.s, self.at, |k, b, v| {
            if let (Some(x), Some(y)) = (bounds.get_mut(k), values.get_mut(k)) {
                (*x, *y) = (b, v);
            }
        });
        if let Some((end, n)) = read
            && n <= room
        {
            let (b_used, b_rest) = core::mem::take(&mut marks.bounds).split_at_mut(n);
            let (v_used, v_rest) = core::mem::take(&mut marks.values).split_at_mut(n);
            (marks.bounds, marks.values) = (b_rest, v_rest);
            self.at = end;
            return Some(crate::json::Levels::exact(self.s, b_used, v_used));
        }
        self.levels_into(2, &mut marks.bounds)
    }

    /// The event's closing brace, `tail` bytes before the end.
    #[inline(always)]
    pub(crate) fn close(&self, tail: usize) -> Option<()> {
        let b = self.s.as_bytes();
        (b.get(self.at) == Some(&b'}') && self.at + 1 + tail == b.len()).then_some(())
    }
}

/// Room for the levels a one-pass reader checks in a message: each
/// level's string bounds and, where it reads their values with them
/// ([`Reader::levels_exact_into`]), the values. Each is taken from the
/// front as levels are kept.
pub(crate) struct LevelMarks<'t> {
    pub(crate) bounds: &'t mut [[u32; 4]],
    pub(crate) values: &'t mut [crate::json::ReadLevel],
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The eight-at-a-time scans agree with byte-by-byte ones on
        /// any bytes, at any offset.
        #[test]
        fn word_scans_match_byte_scans(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0x30u8..0x3a, any::<u8>()],
                0..40,
            ),
            at in 0usize..8,
        ) {
            let at = at.min(bytes.len());
            let digits = bytes[at..].iter().take_while(|d| d.is_ascii_digit()).count();
            prop_assert_eq!(digits_at(&bytes, at), Some(digits));
            let stop = bytes[at..]
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .map(|n| at + n);
            prop_assert_eq!(string_stop(&bytes, at), stop);
        }

        /// An unsigned integer is read as the standard library reads its
        /// digits, at every length up to 20 digits, anywhere in a text and
        /// whatever follows it (the words read past its end ignored);
        /// leading zeros, 20 digits and no digit at all refused.
        #[test]
        fn uints_read_as_the_standard_parser_reads_them(
            before in "[a-z:\"]{0,20}",
            digits in "[0-9]{0,20}",
            after in "[,}\\]0-9a-z\"/:.eE+\\-é]{0,12}",
        ) {
            let text = format!("{before}{digits}{after}");
            let mut r = Reader { s: &text, at: before.len() };
            // What follows a number cannot continue it.
            let whole = digits.clone()
                + &after.chars().take_while(|c| c.is_ascii_digit()).collect::<String>();
            let want = (!whole.is_empty()
                && whole.len() <= 19
                && !(whole.starts_with('0') && whole.len() > 1))
                .then(|| whole.parse::<u64>().unwrap());
            prop_assert_eq!(r.uint(), want, "{}", text);
            // Past the number when read, where it was when refused.
            let at = if want.is_some() { before.len() + whole.len() } else { before.len() };
            prop_assert_eq!(r.at, at);
        }
    }

    #[test]
    fn flat_objects_and_what_is_refused() {
        let mut seen = Vec::new();
        object(
            r#" {"e":"trade","E":17,"p":"1.5","m":true,"x":null,"b":[["1","2"]],"o":{"a":"}"}} "#,
            Numbers::Integers,
            |k, v| seen.push((k, v)),
        )
        .unwrap();
        assert_eq!(
            seen,
            [
                ("e", Val::Str("trade")),
                ("E", Val::Num("17")),
                ("p", Val::Str("1.5")),
                ("m", Val::Bool(true)),
                ("x", Val::Null),
                ("b", Val::Array(r#"[["1","2"]]"#)),
                ("o", Val::Object(r#"{"a":"}"}"#)),
            ]
        );
        for bad in [
            r#"{"a":"x\"y"}"#, // escapes: left to the full parser
            r#"{"a":01}"#,     // leading zero
            r#"{"a":1,}"#,     // trailing comma
            r#"{"a":1} x"#,    // trailing garbage
            r#"{"a":[1,2}"#,   // unbalanced
            r#"{"a":"tab	"}"#, // a raw control character
            r#"{"a":tru}"#,
            "",
            "[1]",
        ] {
            assert!(object(bad, Numbers::Any, |_, _| {}).is_none(), "{bad}");
        }
        assert_eq!(Val::Num("123").as_u64(), Some(123));
        assert_eq!(Val::Num("-1").as_u64(), None);
        assert_eq!(Val::Num("1.0").as_u64(), None);
        // Fractions, exponents and 65-bit integers go to simd-json.
        for n in ["1.5", "1e3", "18446744073709551616", "-9223372036854775809"] {
            let text = format!(r#"{{"a":{n}}}"#);
            assert!(object(&text, Numbers::Integers, |_, _| {}).is_none(), "{n}");
            // Kept as text when any number is allowed.
            let mut got = None;
            object(&text, Numbers::Any, |_, v| got = Some(v)).unwrap();
            assert_eq!(got, Some(Val::Num(n)));
        }
        assert_eq!(Val::Num("18446744073709551616").as_u64(), None);
    }
}
