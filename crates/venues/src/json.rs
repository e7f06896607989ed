//! simd-json, in place and without allocating: the tape and the parser's
//! buffers are kept between messages, and the input is the payload's own
//! (mutable, padded) bytes.

use core::fmt;

pub use simd_json::INPUT_PADDING;
use simd_json::tape::{Tape, Value};
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
