//! Why a venue message could not be decoded.

use core::fmt;

pub use crate::decimal::ShortText;
use crate::decimal::{BadValue, DecimalError};
use crate::event::InstrumentId;

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
    /// A field's value is one the venue never sends (a negative id in a
    /// binary message).
    Range(&'static str),
    /// A binary frame that is not a message of the venue's SBE schema.
    Sbe(tickwire_sbe::DecodeError),
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

/// Why a message is not JSON.
///
/// `Copy` and allocation-free: a stream of malformed messages costs the
/// receive path no allocation (simd-json's own error would format a
/// `String` for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonError {
    /// The buffer does not hold [`INPUT_PADDING`](simd_json::INPUT_PADDING) bytes after the message.
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
                "the message needs {} bytes of padding after it",
                simd_json::INPUT_PADDING
            ),
            JsonError::Invalid { at } => write!(f, "invalid JSON at byte {at}"),
        }
    }
}

impl std::error::Error for JsonError {}

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
            DecodeError::Range(k) => write!(f, "field {k:?} out of the venue's range"),
            DecodeError::Sbe(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<tickwire_sbe::DecodeError> for DecodeError {
    fn from(e: tickwire_sbe::DecodeError) -> DecodeError {
        DecodeError::Sbe(e)
    }
}

impl From<JsonError> for DecodeError {
    fn from(e: JsonError) -> DecodeError {
        DecodeError::Json(e)
    }
}

impl From<BadValue> for DecodeError {
    fn from(e: BadValue) -> DecodeError {
        DecodeError::Decimal(BadDecimal {
            field: e.field,
            error: e.error,
            value: e.value,
            scale: e.scale,
            instrument: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{DecodeError, InstrumentId};
    use crate::decimal::{self, DecimalError};

    /// A value the scale cannot hold: the decimal layer says which field,
    /// the text and the scale; above it, the error takes the instrument
    /// once the adapter knows it, and says all of it.
    #[test]
    fn a_bad_value_becomes_a_decode_error_that_names_everything() {
        let bad = decimal::level("61737.634", "1", 2, 0).unwrap_err();
        assert_eq!(
            (bad.field, bad.value.as_str(), bad.scale),
            ("price", "61737.634", 2)
        );
        assert_eq!(bad.error, DecimalError::TooPrecise);
        let DecodeError::Decimal(d) = DecodeError::from(bad).at(InstrumentId(3)) else {
            panic!("not a decimal error");
        };
        assert_eq!(
            (d.field, d.scale, d.instrument),
            ("price", 2, Some(InstrumentId(3)))
        );
        assert_eq!(
            DecodeError::Decimal(d).to_string(),
            "price \"61737.634\": more decimal places than the instrument's scale (2 decimals)"
        );
    }
}
