//! [`Out`]: the text messages a session wants sent, written in place into
//! a buffer allocated once. A session writes each message with
//! `core::fmt::Write` (`write!`), which formats integers and copies strings
//! without allocating; the caller takes the messages in order and hands
//! each to its connection.

use core::fmt;

/// Messages waiting to be sent, in order, in one buffer that never grows.
#[derive(Debug)]
pub struct Out {
    bytes: Vec<u8>,
    /// Where each finished message ends in `bytes`.
    ends: Vec<usize>,
    /// Where the message being written started; `None` between messages.
    open: Option<usize>,
    /// The message being written ran out of room.
    overflowed: bool,
}

/// The buffer of an [`Out`] was too small for a message, or its table of
/// messages full: the message was dropped whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutFull;

impl fmt::Display for OutFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no room for the message")
    }
}

impl core::error::Error for OutFull {}

impl Out {
    /// Room for `bytes` bytes of messages, and at most `messages` of them.
    pub fn new(bytes: usize, messages: usize) -> Out {
        Out {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(messages),
            open: None,
            overflowed: false,
        }
    }

    /// Writes one message with `write` (which may call `write!` on it any
    /// number of times): kept whole, or dropped whole with `OutFull`.
    pub fn message(
        &mut self,
        write: impl FnOnce(&mut Message<'_>) -> fmt::Result,
    ) -> Result<(), OutFull> {
        if self.ends.len() == self.ends.capacity() {
            return Err(OutFull);
        }
        let start = self.bytes.len();
        self.open = Some(start);
        self.overflowed = false;
        let written = write(&mut Message { out: self });
        self.open = None;
        if written.is_err() || self.overflowed {
            self.bytes.truncate(start);
            return Err(OutFull);
        }
        self.ends.push(self.bytes.len());
        Ok(())
    }

    /// The messages written, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let m = &self.bytes[start..end];
            start = end;
            // Only `&str`s are ever appended (`Message::write_str`).
            core::str::from_utf8(m).unwrap_or_default()
        })
    }

    /// How many messages wait.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Forgets every message (after sending them).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }
}

/// The message being written into an [`Out`].
pub struct Message<'a> {
    out: &'a mut Out,
}

impl fmt::Write for Message<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let out = &mut *self.out;
        if out.bytes.capacity() - out.bytes.len() < s.len() {
            out.overflowed = true;
            return Err(fmt::Error);
        }
        out.bytes.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

impl Message<'_> {
    /// Appends `s` with JSON string escaping (quotes not included).
    pub fn escaped(&mut self, s: &str) -> fmt::Result {
        use fmt::Write;
        let mut from = 0;
        for (at, c) in s.char_indices() {
            let esc = match c {
                '"' => "\\\"",
                '\\' => "\\\\",
                c if (c as u32) < 0x20 => {
                    self.write_str(&s[from..at])?;
                    write!(self, "\\u{:04x}", c as u32)?;
                    from = at + 1;
                    continue;
                }
                _ => continue,
            };
            self.write_str(&s[from..at])?;
            self.write_str(esc)?;
            from = at + 1;
        }
        self.write_str(&s[from..])
    }

    /// Appends an integer at `scale` decimals as its exact decimal text,
    /// the fraction's trailing zeros dropped (`6000012` at 2 is `60000.12`,
    /// `6000000` at 2 is `60000`, `-5` at 3 is `-0.005`).
    pub fn decimal(&mut self, v: i64, scale: u8) -> fmt::Result {
        use fmt::Write;
        let scale = scale.min(18);
        let unit = 10u64.pow(u32::from(scale));
        let abs = v.unsigned_abs();
        let (int, mut frac) = (abs / unit, abs % unit);
        if v < 0 {
            self.write_str("-")?;
        }
        write!(self, "{int}")?;
        if frac == 0 {
            return Ok(());
        }
        let mut digits = usize::from(scale);
        while frac % 10 == 0 {
            frac /= 10;
            digits -= 1;
        }
        write!(self, ".{frac:0digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn messages_are_kept_whole_or_dropped_whole() {
        let mut out = Out::new(32, 2);
        out.message(|m| write!(m, "{{\"id\":{}}}", 7)).unwrap();
        assert_eq!(out.message(|m| m.write_str(&"x".repeat(40))), Err(OutFull));
        out.message(|m| m.write_str("b")).unwrap();
        assert_eq!(
            out.message(|m| m.write_str("c")),
            Err(OutFull),
            "table full"
        );
        assert_eq!(out.iter().collect::<Vec<_>>(), ["{\"id\":7}", "b"]);
        out.clear();
        assert!(out.is_empty());
    }

    #[test]
    fn decimals_and_escapes_are_exact() {
        let mut out = Out::new(128, 4);
        out.message(|m| {
            m.decimal(6_000_012, 2)?;
            m.write_str(" ")?;
            m.decimal(-5, 3)?;
            m.write_str(" ")?;
            m.decimal(6_000_000, 2)?;
            m.write_str(" ")?;
            m.escaped("a\"b\\c\n")
        })
        .unwrap();
        assert_eq!(
            out.iter().next(),
            Some("60000.12 -0.005 60000 a\\\"b\\\\c\\u000a")
        );
    }
}
