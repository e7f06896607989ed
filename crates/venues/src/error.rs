//! Why a venue message could not be decoded.

use core::fmt;

use crate::decimal::DecimalError;
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
    /// A price or size is not an exact decimal at the instrument's scale.
    Decimal(&'static str, DecimalError),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Json(e) => e.fmt(f),
            DecodeError::Utf8 => f.write_str("not UTF-8"),
            DecodeError::Missing(k) => write!(f, "missing field {k:?}"),
            DecodeError::Type(k) => write!(f, "field {k:?} has the wrong type"),
            DecodeError::Decimal(k, e) => write!(f, "field {k:?}: {e}"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<JsonError> for DecodeError {
    fn from(e: JsonError) -> DecodeError {
        DecodeError::Json(e)
    }
}
