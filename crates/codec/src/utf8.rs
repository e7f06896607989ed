//! Incremental, fail-fast UTF-8 validation.
//!
//! A text message can arrive one byte at a time, split across frames and reads.
//! [`Utf8Stream`] validates each piece as it arrives and carries an incomplete
//! trailing code point (at most 3 bytes) to the next piece, so invalid input is
//! rejected at the first byte that makes it invalid, not when the message ends.
//! Bulk validation is simdutf8's; only the carried code point is handled here.

/// The state carried between pieces of one text message.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Utf8Stream {
    carry: [u8; 4],
    carry_len: u8,
}

/// The byte was invalid UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Invalid;

/// Length of the sequence a leading byte announces, or 0 if it cannot lead one.
#[inline]
fn sequence_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 0,
    }
}

impl Utf8Stream {
    /// Forgets any carried bytes; call at the start of each text message.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.carry_len = 0;
    }

    /// Validates the next piece of the message.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Invalid> {
        if self.carry_len > 0 {
            let have = usize::from(self.carry_len);
            // The carried bytes were a valid prefix, so the lead byte is valid.
            let want = sequence_len(self.carry[0]);
            let take = (want - have).min(bytes.len());
            self.carry[have..have + take].copy_from_slice(&bytes[..take]);
            let have = have + take;
            bytes = &bytes[take..];
            match core::str::from_utf8(&self.carry[..have]) {
                Ok(_) => self.carry_len = 0,
                // Still a valid prefix: wait for more.
                Err(e) if e.error_len().is_none() => {
                    self.carry_len = have as u8;
                    return Ok(());
                }
                Err(_) => return Err(Invalid),
            }
        }
        // The common case, valid and complete, takes the faster basic check;
        // only a failure pays for compat's error position.
        if simdutf8::basic::from_utf8(bytes).is_ok() {
            return Ok(());
        }
        match simdutf8::compat::from_utf8(bytes) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() => {
                // The input ended inside a code point that is valid so far.
                let tail = &bytes[e.valid_up_to()..];
                self.carry[..tail.len()].copy_from_slice(tail);
                self.carry_len = tail.len() as u8;
                Ok(())
            }
            Err(_) => Err(Invalid),
        }
    }

    /// Checks that the message did not end inside a code point. The decoder
    /// does not need it (it re-checks whole messages); the tests do.
    #[cfg(test)]
    pub(crate) fn finish(&mut self) -> Result<(), Invalid> {
        let incomplete = self.carry_len != 0;
        self.carry_len = 0;
        if incomplete { Err(Invalid) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::{Invalid, Utf8Stream};

    /// Feeds `input` split at every pair of cut points and compares with std.
    fn check_all_splits(input: &[u8]) {
        let expected = core::str::from_utf8(input).is_ok();
        for a in 0..=input.len() {
            for b in a..=input.len() {
                let mut s = Utf8Stream::default();
                let r = s
                    .feed(&input[..a])
                    .and_then(|()| s.feed(&input[a..b]))
                    .and_then(|()| s.feed(&input[b..]))
                    .and_then(|()| s.finish());
                assert_eq!(r.is_ok(), expected, "{input:x?} split at {a},{b}");
            }
        }
    }

    #[test]
    fn agrees_with_std_on_every_split() {
        let cases: &[&[u8]] = &[
            b"",
            b"hello",
            "κόσμε".as_bytes(),
            "\u{10348}\u{20ac}\u{a2}$".as_bytes(),
            &[0xf4, 0x90, 0x80, 0x80],       // above U+10FFFF
            &[0xed, 0xa0, 0x80],             // surrogate
            &[0xc0, 0xaf],                   // overlong
            &[0xe0, 0x80, 0xaf],             // overlong
            &[0xf0, 0x80, 0x80, 0xaf],       // overlong
            &[0xce, 0xba, 0xe1, 0xbd],       // ends inside a code point
            &[0x61, 0xff, 0x62],             // never valid
            &[0xf0, 0x9f, 0x98, 0x80, 0x80], // stray continuation
        ];
        for c in cases {
            check_all_splits(c);
        }
    }

    #[test]
    fn rejects_at_the_first_invalid_byte() {
        // 0xF4 0x90 can never start a valid sequence: fail before the rest arrives.
        let mut s = Utf8Stream::default();
        assert_eq!(s.feed(&[0xce, 0xba, 0xf4]), Ok(()));
        assert_eq!(s.feed(&[0x90]), Err(Invalid));
        // A valid prefix alone is not an error until the message ends.
        let mut s = Utf8Stream::default();
        assert_eq!(s.feed(&[0xf0, 0x9f]), Ok(()));
        assert_eq!(s.feed(&[0x98]), Ok(()));
        assert_eq!(s.finish(), Err(Invalid));
    }
}
