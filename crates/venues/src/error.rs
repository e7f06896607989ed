//! Why a venue message could not be decoded.

use core::fmt;

use crate::decimal::DecimalError;
use crate::event::InstrumentId;
use crate::json::JsonError;

/// A message that is not what its venue's documentation says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON.
    Json(JsonError),
    /// Not UTF-8 (only where the adapter reads the text without simd-json,
    /// which checks it itself).
    Utf8,
    /// A required field is absent.
    Missing(&'static str),
    /// A field has the wrong JSON type.
    Type(&'static str),
    /// A price or size is not an exact decimal at the instrument's scale:
    /// which field, why, the value as sent, the scale, and (once the
    /// adapter knows it) the instrument.
    Decimal(BadDecimal),
}

/// A value an instrument's scale cannot hold (see [`DecodeError::Decimal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadDecimal {
    /// `price` or `size`.
    pub field: &'static str,
    /// Why.
    pub error: DecimalError,
    /// The value's text as sent (its first [`ShortText::CAPACITY`] bytes).
    pub value: ShortText,
    /// The scale it had to fit.
    pub scale: u8,
    /// The instrument, in its adapter's table.
    pub instrument: Option<InstrumentId>,
}

impl DecodeError {
    /// The error, saying which instrument it concerns.
    pub fn at(self, id: InstrumentId) -> DecodeError {
        match self {
            DecodeError::Decimal(mut d) => {
                d.instrument.get_or_insert(id);
                DecodeError::Decimal(d)
            }
            other => other,
        }
    }
}

/// A few bytes of text, kept inline so that an error stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShortText {
    bytes: [u8; ShortText::CAPACITY],
    len: u8,
}

impl ShortText {
    /// The most bytes kept.
    pub const CAPACITY: usize = 30;

    /// The first [`CAPACITY`](Self::CAPACITY) bytes of `s` (cut at a
    /// character boundary).
    pub fn new(s: &str) -> ShortText {
        let mut end = s.len().min(Self::CAPACITY);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; Self::CAPACITY];
        bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        ShortText {
            bytes,
            len: end as u8,
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Debug for ShortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ShortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Json(e) => e.fmt(f),
            DecodeError::Utf8 => f.write_str("not UTF-8"),
            DecodeError::Missing(k) => write!(f, "missing field {k:?}"),
            DecodeError::Type(k) => write!(f, "field {k:?} has the wrong type"),
            DecodeError::Decimal(d) => write!(
                f,
                "{} {:?}: {} ({} decimals)",
                d.field, d.value, d.error, d.scale
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<JsonError> for DecodeError {
    fn from(e: JsonError) -> DecodeError {
        DecodeError::Json(e)
    }
}
