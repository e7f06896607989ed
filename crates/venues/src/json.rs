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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// simd-json's description.
    pub reason: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON: {}", self.reason)
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
            return Err(JsonError {
                reason: format!("needs {INPUT_PADDING} bytes of padding after the message"),
            });
        }
        let mut tape = self.tape.take().unwrap_or_else(|| Tape(Vec::new())).reset();
        let result = match fill_tape_padded(buf, len, &mut self.buffers, &mut tape) {
            Ok(()) => Ok(f(tape.as_value())),
            Err(e) => Err(JsonError {
                reason: e.to_string(),
            }),
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
/// first two are ignored).
#[derive(Clone, Copy)]
pub struct Levels<'t, 'i>(pub(crate) Array<'t, 'i>);

impl fmt::Debug for Levels<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'t, 'i> Levels<'t, 'i> {
    /// How many levels.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each level's price and quantity strings.
    pub fn iter(
        &self,
    ) -> impl Iterator<Item = Result<(&'i str, &'i str), DecodeError>> + use<'t, 'i> {
        let levels = self.0;
        levels.iter().map(|level| {
            let pair = level.as_array().ok_or(DecodeError::Type("price level"))?;
            match (
                pair.get(0).and_then(|v| v.into_string()),
                pair.get(1).and_then(|v| v.into_string()),
            ) {
                (Some(p), Some(q)) => Ok((p, q)),
                _ => Err(DecodeError::Type("price level")),
            }
        })
    }
}
