//! Error types. Each is a small `Copy` enum with a hand-written `Display`.

use core::fmt;

use crate::close::CloseCode;

/// Why the decoder refused its input.
///
/// Every variant is a reason to fail the WebSocket connection, and
/// [`ProtocolError::close_code`] gives the code to put in the Close frame sent
/// before closing. Once a decoder has returned an error it is poisoned: every
/// later call returns the same error until [`Decoder::reset`](crate::Decoder::reset).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolError {
    /// An RSV1, RSV2 or RSV3 bit was set, but no extension was negotiated.
    ReservedBits,
    /// The opcode is one of the reserved values 0x3-0x7 or 0xB-0xF.
    ReservedOpcode(u8),
    /// A control frame (Close, Ping, Pong) had FIN clear.
    FragmentedControlFrame,
    /// A control frame announced a payload longer than 125 bytes.
    ControlFrameTooLong,
    /// The 64-bit extended payload length had its most significant bit set.
    InvalidLength,
    /// A client sent an unmasked frame to a server.
    UnmaskedFrame,
    /// A server sent a masked frame to a client.
    MaskedFrame,
    /// A Continuation frame arrived while no fragmented message was in progress.
    UnexpectedContinuation,
    /// A new Text or Binary frame arrived while a fragmented message was in progress.
    ExpectedContinuation,
    /// A Close frame carried a 1-byte payload (a status code needs 2).
    InvalidClosePayload,
    /// A Close frame carried a status code that must not appear on the wire.
    InvalidCloseCode(u16),
    /// A text message or a close reason was not valid UTF-8.
    InvalidUtf8,
    /// A frame's payload exceeded the configured maximum frame size.
    FrameTooLarge,
    /// A message exceeded the configured maximum message size (or the message buffer).
    MessageTooLarge,
    /// A fragmented message used more frames than the configured maximum.
    TooManyFragments,
    /// A frame arrived after the peer's Close frame.
    FrameAfterClose,
}

impl ProtocolError {
    /// The status code to send in the Close frame that fails the connection.
    pub const fn close_code(self) -> CloseCode {
        match self {
            ProtocolError::InvalidUtf8 => CloseCode::INVALID_PAYLOAD,
            ProtocolError::FrameTooLarge | ProtocolError::MessageTooLarge => {
                CloseCode::MESSAGE_TOO_BIG
            }
            ProtocolError::TooManyFragments => CloseCode::POLICY_VIOLATION,
            ProtocolError::ReservedBits
            | ProtocolError::ReservedOpcode(_)
            | ProtocolError::FragmentedControlFrame
            | ProtocolError::ControlFrameTooLong
            | ProtocolError::InvalidLength
            | ProtocolError::UnmaskedFrame
            | ProtocolError::MaskedFrame
            | ProtocolError::UnexpectedContinuation
            | ProtocolError::ExpectedContinuation
            | ProtocolError::InvalidClosePayload
            | ProtocolError::InvalidCloseCode(_)
            | ProtocolError::FrameAfterClose => CloseCode::PROTOCOL_ERROR,
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProtocolError::ReservedBits => f.write_str("reserved bits set without an extension"),
            ProtocolError::ReservedOpcode(op) => write!(f, "reserved opcode {op:#x}"),
            ProtocolError::FragmentedControlFrame => f.write_str("fragmented control frame"),
            ProtocolError::ControlFrameTooLong => {
                f.write_str("control frame payload longer than 125 bytes")
            }
            ProtocolError::InvalidLength => {
                f.write_str("64-bit payload length with the most significant bit set")
            }
            ProtocolError::UnmaskedFrame => f.write_str("unmasked frame from a client"),
            ProtocolError::MaskedFrame => f.write_str("masked frame from a server"),
            ProtocolError::UnexpectedContinuation => {
                f.write_str("continuation frame without a message in progress")
            }
            ProtocolError::ExpectedContinuation => {
                f.write_str("new data frame inside a fragmented message")
            }
            ProtocolError::InvalidClosePayload => f.write_str("close frame with a 1-byte payload"),
            ProtocolError::InvalidCloseCode(code) => write!(f, "invalid close code {code}"),
            ProtocolError::InvalidUtf8 => f.write_str("invalid UTF-8 in text"),
            ProtocolError::FrameTooLarge => f.write_str("frame larger than the configured limit"),
            ProtocolError::MessageTooLarge => {
                f.write_str("message larger than the configured limit")
            }
            ProtocolError::TooManyFragments => {
                f.write_str("message split into more fragments than the configured limit")
            }
            ProtocolError::FrameAfterClose => f.write_str("frame received after a close frame"),
        }
    }
}

/// Why a frame could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EncodeError {
    /// The output buffer is too small; `required` bytes are needed.
    InsufficientSize {
        /// The number of bytes the whole frame needs.
        required: usize,
    },
    /// A control frame payload (or close code plus reason) longer than 125 bytes.
    ControlFrameTooLong,
    /// A control frame with FIN clear: control frames cannot be fragmented.
    FragmentedControlFrame,
    /// A close code that must not be sent (see [`CloseCode::is_valid_on_wire`]).
    InvalidCloseCode(u16),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EncodeError::InsufficientSize { required } => {
                write!(f, "output buffer too small: {required} bytes needed")
            }
            EncodeError::ControlFrameTooLong => {
                f.write_str("control frame payload longer than 125 bytes")
            }
            EncodeError::FragmentedControlFrame => {
                f.write_str("control frames cannot be fragmented")
            }
            EncodeError::InvalidCloseCode(code) => write!(f, "close code {code} may not be sent"),
        }
    }
}

impl core::error::Error for ProtocolError {}

impl core::error::Error for EncodeError {}
