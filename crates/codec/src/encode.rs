//! The frame encoder: frames are written into a caller-supplied buffer.

use crate::close::CloseCode;
use crate::error::EncodeError;
use crate::frame::{OpCode, header_len};
use crate::mask::copy_masked;

/// Writes a frame header announcing `payload_len` payload bytes.
///
/// Use this to frame a payload that is already in place right after the
/// header (write the payload, then call [`apply_mask`](crate::apply_mask) on it
/// when `mask` is set). Returns the header length.
///
/// `mask` MUST be `Some` with 4 fresh, unpredictable bytes per frame when
/// sending as a client (RFC 6455 section 5.3) and MUST be `None` as a server.
/// Control frames (Close, Ping, Pong) must have `fin` set and at most 125
/// payload bytes.
pub fn encode_header(
    out: &mut [u8],
    opcode: OpCode,
    fin: bool,
    payload_len: usize,
    mask: Option<[u8; 4]>,
) -> Result<usize, EncodeError> {
    if opcode.is_control() {
        if !fin {
            return Err(EncodeError::FragmentedControlFrame);
        }
        if payload_len > 125 {
            return Err(EncodeError::ControlFrameTooLong);
        }
    }
    let len = header_len(payload_len, mask.is_some());
    let Some(out) = out.get_mut(..len) else {
        return Err(EncodeError::InsufficientSize { required: len });
    };
    out[0] = (u8::from(fin) << 7) | opcode as u8;
    let mask_bit = if mask.is_some() { 0x80 } else { 0 };
    let key_at = if payload_len < 126 {
        out[1] = mask_bit | payload_len as u8;
        2
    } else if let Ok(short) = u16::try_from(payload_len) {
        out[1] = mask_bit | 126;
        out[2..4].copy_from_slice(&short.to_be_bytes());
        4
    } else {
        out[1] = mask_bit | 127;
        out[2..10].copy_from_slice(&(payload_len as u64).to_be_bytes());
        10
    };
    if let Some(key) = mask {
        out[key_at..key_at + 4].copy_from_slice(&key);
    }
    Ok(len)
}

/// Writes a whole frame (header and payload, masked when `mask` is set) into
/// `out` and returns its length.
///
/// A buffer that is too small gives [`EncodeError::InsufficientSize`] with the
/// size needed, and nothing useful is written. See [`encode_header`] for the
/// rules on `mask` and control frames.
pub fn encode_frame(
    out: &mut [u8],
    opcode: OpCode,
    fin: bool,
    payload: &[u8],
    mask: Option<[u8; 4]>,
) -> Result<usize, EncodeError> {
    let required = header_len(payload.len(), mask.is_some()) + payload.len();
    if out.len() < required {
        // Check the control-frame rules first so the error names the real problem.
        encode_header(&mut [], opcode, fin, payload.len(), mask).map_err(|e| match e {
            EncodeError::InsufficientSize { .. } => EncodeError::InsufficientSize { required },
            other => other,
        })?;
    }
    let head = encode_header(out, opcode, fin, payload.len(), mask)?;
    let body = &mut out[head..required];
    match mask {
        Some(key) => copy_masked(body, payload, key, 0),
        None => body.copy_from_slice(payload),
    }
    Ok(required)
}

/// Writes a Close frame and returns its length.
///
/// `close` is the status code and reason to send, or `None` for an empty
/// Close frame. The code must be one a peer may receive
/// ([`CloseCode::is_valid_on_wire`]) and the reason at most 123 bytes.
pub fn encode_close(
    out: &mut [u8],
    close: Option<(CloseCode, &str)>,
    mask: Option<[u8; 4]>,
) -> Result<usize, EncodeError> {
    let Some((code, reason)) = close else {
        return encode_frame(out, OpCode::Close, true, &[], mask);
    };
    if !code.is_valid_on_wire() {
        return Err(EncodeError::InvalidCloseCode(code.0));
    }
    let reason = reason.as_bytes();
    if reason.len() > 123 {
        return Err(EncodeError::ControlFrameTooLong);
    }
    let mut payload = [0u8; 125];
    payload[..2].copy_from_slice(&code.0.to_be_bytes());
    payload[2..2 + reason.len()].copy_from_slice(reason);
    encode_frame(out, OpCode::Close, true, &payload[..2 + reason.len()], mask)
}

#[cfg(test)]
mod tests {
    use super::{encode_close, encode_frame, encode_header};
    use crate::close::CloseCode;
    use crate::error::EncodeError;
    use crate::frame::OpCode;

    #[test]
    fn too_small_buffer_reports_the_required_size() {
        let mut out = [0u8; 10];
        let payload = [7u8; 200];
        assert_eq!(
            encode_frame(&mut out, OpCode::Binary, true, &payload, Some([1, 2, 3, 4])),
            Err(EncodeError::InsufficientSize {
                required: 4 + 4 + 200
            })
        );
        let mut big = [0u8; 208];
        assert_eq!(
            encode_frame(&mut big, OpCode::Binary, true, &payload, Some([1, 2, 3, 4])),
            Ok(208)
        );
    }

    #[test]
    fn control_frame_rules_are_enforced() {
        let mut out = [0u8; 512];
        assert_eq!(
            encode_frame(&mut out, OpCode::Ping, true, &[0; 126], None),
            Err(EncodeError::ControlFrameTooLong)
        );
        assert_eq!(
            encode_frame(&mut out, OpCode::Ping, false, b"x", None),
            Err(EncodeError::FragmentedControlFrame)
        );
        // The rule error wins over a too-small buffer.
        assert_eq!(
            encode_frame(&mut [0u8; 2], OpCode::Pong, true, &[0; 126], None),
            Err(EncodeError::ControlFrameTooLong)
        );
        assert_eq!(
            encode_close(&mut out, Some((CloseCode(1005), "")), None),
            Err(EncodeError::InvalidCloseCode(1005))
        );
        let bytes = [b'x'; 124];
        let long = core::str::from_utf8(&bytes).unwrap();
        assert_eq!(
            encode_close(&mut out, Some((CloseCode::NORMAL, long)), None),
            Err(EncodeError::ControlFrameTooLong)
        );
        assert_eq!(
            encode_close(&mut out, Some((CloseCode::NORMAL, &long[..123])), None),
            Ok(2 + 125)
        );
    }

    #[test]
    fn header_uses_the_minimal_length_encoding() {
        let mut out = [0u8; 14];
        for (len, expected) in [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10)] {
            assert_eq!(
                encode_header(&mut out, OpCode::Text, true, len, None),
                Ok(expected)
            );
            assert_eq!(
                encode_header(&mut out, OpCode::Text, true, len, Some([0; 4])),
                Ok(expected + 4)
            );
        }
    }
}
