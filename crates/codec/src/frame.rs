//! The base framing protocol (RFC 6455 section 5.2): roles, opcodes, headers.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-------+-+-------------+-------------------------------+
//! |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//! |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//! |N|V|V|V|       |S|             |   (if payload len==126/127)   |
//! | |1|2|3|       |K|             |                               |
//! +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//! |     Extended payload length continued, if payload len == 127  |
//! + - - - - - - - - - - - - - - - +-------------------------------+
//! |                               |Masking-key, if MASK set to 1  |
//! +-------------------------------+-------------------------------+
//! ```

use crate::error::ProtocolError;

/// Which end of the connection the codec serves.
///
/// The role decides the masking rules: a client masks every frame it sends and
/// rejects masked frames; a server never masks and rejects unmasked frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The end that opened the connection; it masks what it sends.
    Client,
    /// The end that accepted the connection; it expects masked frames.
    Server,
}

impl Role {
    /// Whether frames sent in this role must be masked (true for clients).
    #[inline]
    pub const fn masks_outgoing(self) -> bool {
        matches!(self, Role::Client)
    }
}

/// A frame opcode that RFC 6455 defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OpCode {
    /// 0x0: a continuation of a fragmented message.
    Continuation = 0x0,
    /// 0x1: the first (or only) frame of a text message.
    Text = 0x1,
    /// 0x2: the first (or only) frame of a binary message.
    Binary = 0x2,
    /// 0x8: a Close control frame.
    Close = 0x8,
    /// 0x9: a Ping control frame.
    Ping = 0x9,
    /// 0xA: a Pong control frame.
    Pong = 0xA,
}

impl OpCode {
    /// Decodes the low 4 bits of the first header byte; reserved values give `None`.
    #[inline]
    pub const fn from_bits(bits: u8) -> Option<OpCode> {
        match bits & 0x0f {
            0x0 => Some(OpCode::Continuation),
            0x1 => Some(OpCode::Text),
            0x2 => Some(OpCode::Binary),
            0x8 => Some(OpCode::Close),
            0x9 => Some(OpCode::Ping),
            0xA => Some(OpCode::Pong),
            _ => None,
        }
    }

    /// Whether this is a control opcode (Close, Ping or Pong).
    #[inline]
    pub const fn is_control(self) -> bool {
        (self as u8) & 0x8 != 0
    }
}

/// The longest control frame: 2 header bytes, a 4-byte masking key and 125 payload bytes.
///
/// Control frames are never copied: an incomplete one waits in the caller's
/// input, so an input buffer must be able to hold at least this many bytes.
pub const MAX_CONTROL_FRAME_LEN: usize = 2 + 4 + 125;

/// The longest frame header: 2 + 8 (64-bit length) + 4 (masking key) bytes.
pub const MAX_HEADER_LEN: usize = 14;

/// A parsed and validated frame header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub(crate) fin: bool,
    pub(crate) opcode: OpCode,
    pub(crate) mask: Option<[u8; 4]>,
    pub(crate) payload_len: u64,
    pub(crate) header_len: usize,
}

/// Parses the header at the start of `input`.
///
/// Every rule that depends only on the header, the role and whether a
/// fragmented message is in progress is checked as soon as the bytes that
/// carry it have arrived: a bad first byte fails with one byte of input.
/// Returns `Ok(None)` when the header is not complete yet.
#[inline]
pub(crate) fn parse_header(
    input: &[u8],
    role: Role,
    in_message: bool,
) -> Result<Option<Header>, ProtocolError> {
    let Some(&b0) = input.first() else {
        return Ok(None);
    };
    if b0 & 0x70 != 0 {
        return Err(ProtocolError::ReservedBits);
    }
    let fin = b0 & 0x80 != 0;
    let Some(opcode) = OpCode::from_bits(b0) else {
        return Err(ProtocolError::ReservedOpcode(b0 & 0x0f));
    };
    if opcode.is_control() {
        if !fin {
            return Err(ProtocolError::FragmentedControlFrame);
        }
    } else if opcode == OpCode::Continuation {
        if !in_message {
            return Err(ProtocolError::UnexpectedContinuation);
        }
    } else if in_message {
        return Err(ProtocolError::ExpectedContinuation);
    }

    let Some(&b1) = input.get(1) else {
        return Ok(None);
    };
    let masked = b1 & 0x80 != 0;
    match (role, masked) {
        (Role::Server, false) => return Err(ProtocolError::UnmaskedFrame),
        (Role::Client, true) => return Err(ProtocolError::MaskedFrame),
        _ => {}
    }
    let len7 = b1 & 0x7f;
    // A control frame may carry at most 125 bytes, and lengths must use the
    // minimal encoding, so a 126/127 length code on one is an error either way.
    // Data frames with a non-minimal length encoding are tolerated.
    if opcode.is_control() && len7 > 125 {
        return Err(ProtocolError::ControlFrameTooLong);
    }
    let (len_bytes, mut header_len) = match len7 {
        126 => (2, 4),
        127 => (8, 10),
        _ => (0, 2),
    };
    if input.len() < header_len {
        return Ok(None);
    }
    let payload_len = match len_bytes {
        0 => u64::from(len7),
        2 => u64::from(u16::from_be_bytes([input[2], input[3]])),
        _ => {
            let mut be = [0u8; 8];
            be.copy_from_slice(&input[2..10]);
            let len = u64::from_be_bytes(be);
            if len >> 63 != 0 {
                return Err(ProtocolError::InvalidLength);
            }
            len
        }
    };
    if masked {
        header_len += 4;
        if input.len() < header_len {
            return Ok(None);
        }
    }
    let mask = if masked {
        let k = 2 + len_bytes;
        Some([input[k], input[k + 1], input[k + 2], input[k + 3]])
    } else {
        None
    };
    Ok(Some(Header {
        fin,
        opcode,
        mask,
        payload_len,
        header_len,
    }))
}

/// The size of a header for a payload of `payload_len` bytes.
#[inline]
pub const fn header_len(payload_len: usize, masked: bool) -> usize {
    let base = if payload_len < 126 {
        2
    } else if payload_len <= u16::MAX as usize {
        4
    } else {
        10
    };
    if masked { base + 4 } else { base }
}

#[cfg(test)]
mod tests {
    use super::{OpCode, Role, parse_header};
    use crate::error::ProtocolError;

    #[test]
    fn every_opcode_value_is_classified() {
        for bits in 0u8..16 {
            let op = OpCode::from_bits(bits);
            match bits {
                0..=2 | 8..=10 => assert_eq!(op.map(|o| o as u8), Some(bits)),
                _ => assert_eq!(op, None, "{bits:#x} is reserved"),
            }
        }
        assert!(OpCode::Ping.is_control() && !OpCode::Binary.is_control());
    }

    #[test]
    fn fails_on_the_first_byte_when_it_is_enough() {
        let r = parse_header(&[0x83], Role::Client, false);
        assert_eq!(r.err(), Some(ProtocolError::ReservedOpcode(3)));
        let r = parse_header(&[0x09], Role::Client, false);
        assert_eq!(r.err(), Some(ProtocolError::FragmentedControlFrame));
        // A 127 length code on a Ping fails before the extended length arrives.
        let r = parse_header(&[0x89, 0x7f], Role::Client, false);
        assert_eq!(r.err(), Some(ProtocolError::ControlFrameTooLong));
    }

    #[test]
    fn tolerates_a_non_minimal_length_only_on_data_frames() {
        let h = parse_header(&[0x82, 126, 0, 5], Role::Client, false)
            .unwrap()
            .unwrap();
        assert_eq!((h.payload_len, h.header_len), (5, 4));
        let r = parse_header(&[0x89, 126], Role::Client, false);
        assert_eq!(r.err(), Some(ProtocolError::ControlFrameTooLong));
    }
}
