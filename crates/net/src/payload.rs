//! Turning decoded frames into what the handler sees. This module holds the
//! crate's only `unsafe` code: two views of text as `str` that skip a second
//! UTF-8 validation.
//!
//! Why: a message's payload is handed out together with [`PAYLOAD_PADDING`]
//! writable bytes after it (what simd-json needs to parse in place), so the
//! handler gets a byte slice longer than the payload, not the codec's
//! `&mut str`. Viewing the text part as `str` again through a checked
//! conversion would validate it twice: on `text_128` that is about as much
//! work again as decoding the frame (BENCHMARKS.md). The codec has just
//! validated exactly these bytes, in [`next_frame`], and nothing can write
//! to them as bytes while a `str` view may still be taken; that is the
//! invariant the `unsafe` blocks rely on.

use tickwire_codec::{CloseCode, Decoder, FrameKind, Location, ProtocolError};

/// Writable bytes after every payload handed to the handler.
pub const PAYLOAD_PADDING: usize = 64;

/// A data message, borrowed from the connection's buffers until the handler
/// returns.
///
/// A message that arrived in one frame is a slice of the receive buffer; it
/// was not copied. At least [`PAYLOAD_PADDING`] writable bytes follow it, so
/// parsers that read (or write) past the end of their input, like
/// simd-json, can work in place: see [`into_padded`](Payload::into_padded).
pub struct Payload<'a> {
    /// The payload, then at least `PAYLOAD_PADDING` more bytes.
    ///
    /// INVARIANT: when `text` is set, `buf[..len]` is valid UTF-8, and no
    /// safe method hands out mutable access to it as bytes (only as `str`,
    /// or by consuming `self`).
    buf: &'a mut [u8],
    len: usize,
    text: bool,
    /// Where to save what the padding covers before handing it out, when it
    /// covers bytes that still matter (the next frames in the receive buffer).
    stash: Option<(&'a mut Restore, usize)>,
}

impl std::fmt::Debug for Payload<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.as_str() {
            Some(s) => f.debug_tuple("Text").field(&s).finish(),
            None => f.debug_tuple("Binary").field(&self.len).finish(),
        }
    }
}

impl<'a> Payload<'a> {
    /// Whether this is a text message (its bytes are valid UTF-8).
    pub fn is_text(&self) -> bool {
        self.text
    }

    /// The message length in bytes (without the padding).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The message bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The text of a text message, without validating it again.
    pub fn as_str(&self) -> Option<&str> {
        if !self.text {
            return None;
        }
        // SAFETY: by the field invariant, `buf[..len]` of a text payload is
        // valid UTF-8 (the codec validated these bytes in `next_frame`) and
        // has not been writable as bytes since.
        Some(unsafe { std::str::from_utf8_unchecked(&self.buf[..self.len]) })
    }

    /// The text of a text message, mutably (as `str`, so it stays UTF-8).
    pub fn as_mut_str(&mut self) -> Option<&mut str> {
        if !self.text {
            return None;
        }
        // SAFETY: as in `as_str`; a `&mut str` cannot be made invalid UTF-8
        // by safe code, so the invariant survives this borrow.
        Some(unsafe { std::str::from_utf8_unchecked_mut(&mut self.buf[..self.len]) })
    }

    /// The bytes of a binary message, mutably.
    pub fn binary_mut(&mut self) -> Option<&mut [u8]> {
        (!self.text).then(|| &mut self.buf[..self.len])
    }

    /// The message followed by at least [`PAYLOAD_PADDING`] writable bytes,
    /// and the message length: for parsers that work in place and read or
    /// write past the end of their input (simd-json needs 64 bytes).
    ///
    /// Everything in the returned slice may be overwritten. The padding's
    /// initial content is unspecified, and the driver restores whatever
    /// bytes it covered once the handler returns. Consumes the payload,
    /// because after this the bytes are no longer known to be UTF-8.
    pub fn into_padded(self) -> (&'a mut [u8], usize) {
        if let Some((stash, at)) = self.stash {
            stash.save(at, &self.buf[self.len..]);
        }
        (self.buf, self.len)
    }
}

/// A decoded frame, as the driver dispatches it.
pub(crate) enum Frame<'a> {
    /// A data message. Afterwards, apply the [`Restore`] given to
    /// [`next_frame`]: the handler may have written into the padding.
    Data(Payload<'a>),
    Ping(&'a [u8]),
    Pong,
    Close(Option<CloseCode>),
}

/// Bytes of the receive buffer that a payload's padding covered, saved when
/// the handler asked for the padding, to be put back after it (they may be
/// the next frames).
pub(crate) struct Restore {
    at: usize,
    saved: [u8; PAYLOAD_PADDING],
    len: usize,
}

impl Default for Restore {
    fn default() -> Self {
        Restore {
            at: 0,
            saved: [0; PAYLOAD_PADDING],
            len: 0,
        }
    }
}

impl Restore {
    fn save(&mut self, at: usize, bytes: &[u8]) {
        self.at = at;
        self.len = bytes.len().min(PAYLOAD_PADDING);
        self.saved[..self.len].copy_from_slice(&bytes[..self.len]);
    }

    /// Puts saved bytes back into `buf`, if any were saved, and forgets them.
    pub(crate) fn apply(&mut self, buf: &mut [u8]) {
        if self.len > 0 {
            buf[self.at..self.at + self.len].copy_from_slice(&self.saved[..self.len]);
            self.len = 0;
        }
    }
}

/// Decodes the next frame from `buf[start..end]`. Returns the bytes
/// consumed and the frame, if a complete one was there.
///
/// `buf` MUST extend at least [`PAYLOAD_PADDING`] bytes past `end`, and the
/// decoder's message buffer at least that far past its message-size limit.
pub(crate) fn next_frame<'a>(
    decoder: &'a mut Decoder<Box<[u8]>>,
    buf: &'a mut [u8],
    start: usize,
    end: usize,
    restore: &'a mut Restore,
) -> Result<(usize, Option<Frame<'a>>), ProtocolError> {
    let located = decoder.decode_located(&mut buf[start..end])?;
    let Some((kind, location)) = located.frame else {
        return Ok((located.consumed, None));
    };
    let text = match kind {
        FrameKind::Text => true,
        FrameKind::Binary => false,
        FrameKind::Ping => {
            let Location::Input { start: s, end: e } = location else {
                return Ok((located.consumed, None)); // control frames are never assembled
            };
            return Ok((
                located.consumed,
                Some(Frame::Ping(&buf[start + s..start + e])),
            ));
        }
        FrameKind::Pong => return Ok((located.consumed, Some(Frame::Pong))),
        FrameKind::Close(code) => return Ok((located.consumed, Some(Frame::Close(code)))),
    };
    // `text` comes from the codec's validation of exactly the bytes the
    // payload covers, in this call: the invariant `Payload` relies on.
    let (region, len, stash) = match location {
        Location::Input { start: s, end: e } => {
            let (from, to) = (start + s, start + e);
            let pad_end = (to + PAYLOAD_PADDING).min(buf.len());
            (&mut buf[from..pad_end], to - from, Some((restore, to)))
        }
        Location::Buffer { len } => {
            // Past the message in the message buffer is scratch: nothing to restore.
            let message = decoder.message_buffer();
            let pad_end = (len + PAYLOAD_PADDING).min(message.len());
            (&mut message[..pad_end], len, None)
        }
    };
    Ok((
        located.consumed,
        Some(Frame::Data(Payload {
            buf: region,
            len,
            text,
            stash,
        })),
    ))
}

#[cfg(test)]
mod tests {
    use tickwire_codec::{Config, Decoder, OpCode, Role, encode_frame};

    use super::{Frame, PAYLOAD_PADDING, Restore, next_frame};

    fn decoder() -> Decoder<Box<[u8]>> {
        let config = Config {
            max_message_size: 1024,
            input_capacity: 4096,
            ..Config::default()
        };
        Decoder::new(
            Role::Client,
            config,
            vec![0u8; 1024 + PAYLOAD_PADDING].into_boxed_slice(),
        )
    }

    #[test]
    fn text_views_padding_and_restore() {
        let mut buf = vec![0u8; 4096 + PAYLOAD_PADDING];
        let mut n = encode_frame(&mut buf, OpCode::Text, true, "κόσμε".as_bytes(), None).unwrap();
        n += encode_frame(&mut buf[n..], OpCode::Binary, true, &[7; 100], None).unwrap();
        let mut dec = decoder();
        let mut restore = Restore::default();
        let (used, frame) = next_frame(&mut dec, &mut buf, 0, n, &mut restore).unwrap();
        let Some(Frame::Data(mut payload)) = frame else {
            panic!("data")
        };
        assert!(payload.is_text());
        assert_eq!(payload.as_str(), Some("κόσμε"));
        payload.as_mut_str().unwrap().make_ascii_uppercase();
        assert_eq!(payload.binary_mut(), None);
        let (padded, len) = payload.into_padded();
        assert_eq!(len, "κόσμε".len());
        assert!(padded.len() >= len + PAYLOAD_PADDING);
        // Scribble over the padding (which covers the next frame), then restore.
        padded[len..].fill(0xee);
        restore.apply(&mut buf);
        let (_, frame) = next_frame(&mut dec, &mut buf, used, n, &mut restore).unwrap();
        let Some(Frame::Data(mut payload)) = frame else {
            panic!("data")
        };
        assert_eq!(payload.as_str(), None);
        assert_eq!(payload.binary_mut().unwrap(), &[7; 100]);
    }

    #[test]
    fn assembled_messages_are_padded_in_the_message_buffer() {
        let mut buf = vec![0u8; 4096 + PAYLOAD_PADDING];
        let mut n = encode_frame(&mut buf, OpCode::Text, false, b"frag", None).unwrap();
        n += encode_frame(&mut buf[n..], OpCode::Continuation, true, b"mented", None).unwrap();
        let mut dec = decoder();
        let mut restore = Restore::default();
        let (used, frame) = next_frame(&mut dec, &mut buf, 0, n, &mut restore).unwrap();
        assert_eq!(used, n);
        let Some(Frame::Data(payload)) = frame else {
            panic!("data")
        };
        assert_eq!(payload.as_str(), Some("fragmented"));
        let (padded, len) = payload.into_padded();
        assert_eq!(padded.len(), len + PAYLOAD_PADDING);
    }
}
