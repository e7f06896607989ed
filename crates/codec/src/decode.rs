//! The sans-IO frame decoder.

use core::fmt;

use crate::close::CloseCode;
use crate::error::ProtocolError;
use crate::frame::{OpCode, Role, parse_header};
use crate::mask::{apply_mask, copy_masked};
use crate::utf8::Utf8Stream;

/// Limits and buffering policy of a [`Decoder`].
///
/// Every limit is checked against the frame header, before any payload byte
/// is copied or validated. Build one with struct update syntax:
///
/// ```
/// use tickwire_codec::Config;
///
/// let config = Config { max_message_size: 1 << 20, input_capacity: 1 << 16, ..Config::default() };
/// # assert_eq!(config.max_fragments, 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Largest payload a single frame may announce. Larger frames fail with
    /// [`ProtocolError::FrameTooLarge`] (close code 1009). Default: 16 MiB.
    pub max_frame_size: u64,
    /// Largest message, summed over its fragments. Larger messages fail with
    /// [`ProtocolError::MessageTooLarge`] (close code 1009). The message buffer
    /// given to [`Decoder::new`] caps it too: the effective limit is the smaller
    /// of the two, for every message, whether or not it ends up being copied.
    /// Default: 16 MiB.
    pub max_message_size: usize,
    /// Most frames one fragmented message may use; zero-length continuations
    /// count. More fail with [`ProtocolError::TooManyFragments`] (close code
    /// 1008). Values below 1 act as 1. Default: 1024.
    pub max_fragments: u32,
    /// The capacity of the buffer the caller accumulates input in.
    ///
    /// A single-frame message whose whole frame (header and payload) fits in
    /// this many bytes and has not fully arrived waits in the caller's input:
    /// the decoder consumes nothing of it, and delivers it in place, without a
    /// copy, once it is complete. A larger one is copied into the message
    /// buffer as it arrives. Complete frames are always delivered in place.
    ///
    /// The caller MUST be able to hold this many unconsumed bytes; a value
    /// larger than its real capacity can leave a frame stuck. Default: 0
    /// (frames split across calls are always copied, which is always safe).
    pub input_capacity: usize,
}

impl Config {
    /// The default configuration, usable in `const` contexts.
    pub const fn new() -> Config {
        Config {
            max_frame_size: 16 << 20,
            max_message_size: 16 << 20,
            max_fragments: 1024,
            input_capacity: 0,
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

/// A decoded message or control frame, borrowed from the input or from the
/// decoder's message buffer.
pub enum Message<'a> {
    /// A complete text message, already validated as UTF-8.
    ///
    /// The `str` is mutable so it can be parsed in place (for example by a
    /// JSON parser that unescapes strings in place). Its storage is a plain
    /// byte buffer that is never read as `str` again after this borrow ends,
    /// so `str::as_bytes_mut` on it is sound.
    Text(&'a mut str),
    /// A complete binary message.
    Binary(&'a mut [u8]),
    /// A Ping control frame; the application (or connection layer) should
    /// answer with a Pong carrying the same payload.
    Ping(&'a [u8]),
    /// A Pong control frame.
    Pong(&'a [u8]),
    /// A Close control frame; `None` when it carried no status code.
    ///
    /// After a Close, the decoder treats any further frame as an error.
    Close(Option<CloseFrame<'a>>),
}

impl Message<'_> {
    /// The payload bytes (for Close: the reason, without the code).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Message::Text(s) => s.as_bytes(),
            Message::Binary(b) => b,
            Message::Ping(b) | Message::Pong(b) => b,
            Message::Close(Some(c)) => c.reason.as_bytes(),
            Message::Close(None) => &[],
        }
    }

    /// The opcode of the (first) frame that carried this message.
    pub fn opcode(&self) -> OpCode {
        match self {
            Message::Text(_) => OpCode::Text,
            Message::Binary(_) => OpCode::Binary,
            Message::Ping(_) => OpCode::Ping,
            Message::Pong(_) => OpCode::Pong,
            Message::Close(_) => OpCode::Close,
        }
    }
}

impl fmt::Debug for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Text(s) => f.debug_tuple("Text").field(s).finish(),
            Message::Binary(b) => f.debug_tuple("Binary").field(&b.len()).finish(),
            Message::Ping(b) => f.debug_tuple("Ping").field(b).finish(),
            Message::Pong(b) => f.debug_tuple("Pong").field(b).finish(),
            Message::Close(c) => f.debug_tuple("Close").field(c).finish(),
        }
    }
}

/// The status code and reason of a Close frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseFrame<'a> {
    /// The status code; always [`CloseCode::is_valid_on_wire`].
    pub code: CloseCode,
    /// The reason, validated as UTF-8; at most 123 bytes.
    pub reason: &'a str,
}

/// The result of one [`Decoder::decode`] call.
#[derive(Debug)]
pub struct Decoded<'a> {
    /// How many bytes at the front of the input the decoder is done with.
    ///
    /// The caller MUST drop exactly these bytes and present the rest, as the
    /// decoder left them, at the front of the next call's input (followed by
    /// any new bytes). The decoder may have unmasked or checked bytes it did
    /// not consume; it remembers that and does not redo the work.
    pub consumed: usize,
    /// The decoded message, or `None` when more input is needed to make progress.
    pub message: Option<Message<'a>>,
}

/// What [`Decoder::decode_located`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    /// Bytes of the input the decoder is done with (as in [`Decoded`]).
    pub consumed: usize,
    /// The kind of message or control frame and where its payload lies;
    /// `None` when more input is needed.
    pub frame: Option<(FrameKind, Location)>,
}

/// The kind of a located message or control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A text message, validated as UTF-8.
    Text,
    /// A binary message.
    Binary,
    /// A Ping.
    Ping,
    /// A Pong.
    Pong,
    /// A Close, with its status code if it carried one (its reason, validated
    /// as UTF-8, is the payload after the 2 code bytes).
    Close(Option<CloseCode>),
}

/// Where a located payload lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// `input[start..end]` of the call's input: a complete frame, in place.
    Input {
        /// Offset of the first payload byte.
        start: usize,
        /// Offset just past the last payload byte.
        end: usize,
    },
    /// The first `len` bytes of the decoder's message buffer.
    Buffer {
        /// The message length.
        len: usize,
    },
}

/// A fragmented message (or a single frame too large to wait in place) being
/// assembled in the message buffer.
#[derive(Clone, Copy, Debug, Default)]
struct Assembly {
    active: bool,
    text: bool,
    len: usize,
    /// For text: how many of the `len` bytes the UTF-8 stream has checked.
    checked: usize,
    fragments: u32,
}

#[derive(Clone, Copy, Debug)]
enum FrameState {
    /// The next input byte starts a frame header.
    Header,
    /// A single-frame message waits in the caller's input; `done` payload bytes
    /// of it are already unmasked and UTF-8 checked.
    InPlace { done: usize },
    /// A data frame's payload is being copied into the message buffer.
    Payload {
        remaining: u64,
        mask: Option<[u8; 4]>,
        mask_pos: usize,
        fin: bool,
    },
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Text,
    Binary,
    Ping,
    Pong,
    Close,
}

#[derive(Clone, Copy, Debug)]
enum Found {
    NeedMore,
    /// A complete frame's payload at `input[start..end]`.
    Input {
        kind: Kind,
        start: usize,
        end: usize,
    },
    /// A complete message at `buf[..len]`.
    Buffer {
        text: bool,
        len: usize,
    },
}

impl Found {
    /// A complete frame of `total` bytes with a `header_len`-byte header at
    /// input position `pos`: the bytes consumed through its end, and where
    /// its payload lies.
    #[inline]
    fn frame_at(pos: usize, header_len: usize, total: usize, kind: Kind) -> (usize, Found) {
        let end = pos + total;
        (
            end,
            Found::Input {
                kind,
                start: pos + header_len,
                end,
            },
        )
    }
}

/// A sans-IO RFC 6455 frame decoder for one connection.
///
/// Bytes go in through [`decode`](Decoder::decode); messages and control frames
/// come out, borrowed. A message that arrives in a single complete frame is
/// handed out as a slice of the caller's input, with no copy (the fast path).
/// Fragmented messages, and frames that do not fit in the caller's input
/// buffer (see [`Config::input_capacity`]), are assembled in the message
/// buffer `B` that the caller supplies once, at construction (the slow path).
///
/// Text is validated as UTF-8 as it arrives: invalid bytes fail the decoder as
/// soon as they are seen, even in the middle of a frame that has only partly
/// arrived. The decoder never allocates and never panics on any input.
///
/// # Call pattern
///
/// ```
/// use tickwire_codec::{Config, Decoder, Message, Role};
///
/// let mut decoder = Decoder::new(Role::Client, Config::default(), [0u8; 4096]);
/// // Two server frames: "hi" as text and a ping, as read from a socket.
/// let mut input = *b"\x81\x02hi\x89\x00";
/// let mut start = 0;
/// while start < input.len() {
///     let decoded = decoder.decode(&mut input[start..]).expect("valid frames");
///     start += decoded.consumed;
///     match decoded.message {
///         Some(Message::Text(text)) => assert_eq!(text, "hi"),
///         Some(Message::Ping(payload)) => assert!(payload.is_empty()),
///         Some(other) => panic!("unexpected {other:?}"),
///         None => break, // read more bytes, keep input[start..]
///     }
/// }
/// assert_eq!(start, input.len());
/// ```
pub struct Decoder<B> {
    role: Role,
    config: Config,
    buf: B,
    /// The effective message size limit: `min(max_message_size, buf.len())`.
    limit: usize,
    frame: FrameState,
    asm: Assembly,
    utf8: Utf8Stream,
    closed: bool,
    error: Option<ProtocolError>,
}

impl<B: AsMut<[u8]>> Decoder<B> {
    /// Creates a decoder for `role` that assembles messages in `buf`.
    ///
    /// `buf` can be any owned or borrowed byte storage: an array, a
    /// `&'static mut [u8]`, a `Box<[u8]>`. Its length caps the message size.
    pub fn new(role: Role, mut config: Config, mut buf: B) -> Decoder<B> {
        config.max_fragments = config.max_fragments.max(1);
        let limit = config.max_message_size.min(buf.as_mut().len());
        Decoder {
            role,
            config,
            buf,
            limit,
            frame: FrameState::Header,
            asm: Assembly::default(),
            utf8: Utf8Stream::default(),
            closed: false,
            error: None,
        }
    }

    /// The role this decoder was created for.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The configuration in force (with `max_fragments` raised to at least 1).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The largest message this decoder accepts, in bytes.
    pub fn max_message_size(&self) -> usize {
        self.limit
    }

    /// Whether a Close frame has been decoded.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The error that poisoned this decoder, if any.
    pub fn error(&self) -> Option<ProtocolError> {
        self.error
    }

    /// Returns the decoder to its initial state, for a new connection.
    ///
    /// The message buffer is kept (not cleared); nothing is allocated.
    pub fn reset(&mut self) {
        self.frame = FrameState::Header;
        self.asm = Assembly::default();
        self.utf8.reset();
        self.closed = false;
        self.error = None;
    }

    /// Returns the decoder to its initial state for a new connection in
    /// `role` (a connection slot can serve either role over its life).
    pub fn reset_for(&mut self, role: Role) {
        self.role = role;
        self.reset();
    }

    /// Gives the message buffer back.
    pub fn into_buffer(self) -> B {
        self.buf
    }

    /// Decodes the next message or control frame from `input`.
    ///
    /// `input` MUST start with the bytes the previous call did not consume.
    /// The decoder may rewrite bytes inside `input` (it unmasks masked
    /// payloads in place). On `Ok`, [`Decoded::consumed`] says how many bytes
    /// to drop; [`Decoded::message`] is `None` when the input holds no further
    /// complete message, which is a state, not an error.
    ///
    /// On `Err` the connection must be failed: send a Close frame with
    /// [`ProtocolError::close_code`] and close. The decoder then keeps
    /// returning the same error until [`reset`](Decoder::reset).
    pub fn decode<'a>(&'a mut self, input: &'a mut [u8]) -> Result<Decoded<'a>, ProtocolError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let (consumed, found) = match self.advance(input) {
            Ok(v) => v,
            Err(e) => {
                self.error = Some(e);
                return Err(e);
            }
        };
        let Decoder { buf, error, .. } = self;
        let built = match found {
            Found::NeedMore => {
                return Ok(Decoded {
                    consumed,
                    message: None,
                });
            }
            Found::Input { kind, start, end } => build(kind, &mut input[start..end]),
            Found::Buffer { text, len } => {
                let kind = if text { Kind::Text } else { Kind::Binary };
                build(kind, &mut buf.as_mut()[..len])
            }
        };
        match built {
            Ok(message) => Ok(Decoded {
                consumed,
                message: Some(message),
            }),
            Err(e) => {
                *error = Some(e);
                Err(e)
            }
        }
    }

    /// Like [`decode`](Self::decode), with the same validation, but returns
    /// where the payload lies instead of borrowing it.
    ///
    /// For callers that manage their buffers themselves: for example to hand
    /// out the payload together with writable bytes after it (which a
    /// borrowed [`Message`] cannot cover). A [`Location::Buffer`] payload is
    /// at the front of [`message_buffer`](Self::message_buffer). Text has
    /// been validated as UTF-8 and a Close frame's code and reason checked,
    /// exactly as by `decode`.
    pub fn decode_located(&mut self, input: &mut [u8]) -> Result<Located, ProtocolError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let result = self.advance(input).and_then(|(consumed, found)| {
            let frame = match found {
                Found::NeedMore => None,
                Found::Input { kind, start, end } => Some((
                    check(kind, &input[start..end])?,
                    Location::Input { start, end },
                )),
                Found::Buffer { text, len } => {
                    let kind = if text { Kind::Text } else { Kind::Binary };
                    Some((
                        check(kind, &self.buf.as_mut()[..len])?,
                        Location::Buffer { len },
                    ))
                }
            };
            Ok(Located { consumed, frame })
        });
        if let Err(e) = result {
            self.error = Some(e);
        }
        result
    }

    /// The whole message buffer given to [`new`](Self::new), where
    /// [`Location::Buffer`] payloads are assembled. Bytes beyond the
    /// message-size limit are never written by the decoder.
    pub fn message_buffer(&mut self) -> &mut [u8] {
        self.buf.as_mut()
    }

    /// Runs the state machine over `input` until a message is complete or
    /// the input is exhausted. Returns positions, not borrows, so that the
    /// caller can borrow whichever buffer holds the result.
    fn advance(&mut self, input: &mut [u8]) -> Result<(usize, Found), ProtocolError> {
        if let Some(found) = self.fast_path(input) {
            return Ok(found);
        }
        let result = self.advance_slow(input);
        // Text copied into the message buffer is validated before this call
        // returns anything but the completed message (whose whole-message
        // check in `build` covers it): before "need more", before a control
        // frame that interleaves, and before an error found further on, which
        // must not hide invalid UTF-8 that came first. So invalid bytes still
        // fail the call they arrive in, and a message that arrives whole in
        // one call is validated once, not once per fragment plus once whole.
        if !matches!(result, Ok((_, Found::Buffer { .. }))) {
            self.check_pending_utf8()?;
        }
        result
    }

    /// Feeds the text copied since the last check to the UTF-8 stream.
    fn check_pending_utf8(&mut self) -> Result<(), ProtocolError> {
        let asm = &mut self.asm;
        if asm.active && asm.text && asm.checked < asm.len {
            let fresh = self
                .buf
                .as_mut()
                .get(asm.checked..asm.len)
                .unwrap_or_default();
            self.utf8
                .feed(fresh)
                .map_err(|_| ProtocolError::InvalidUtf8)?;
            asm.checked = asm.len;
        }
        Ok(())
    }

    fn advance_slow(&mut self, input: &mut [u8]) -> Result<(usize, Found), ProtocolError> {
        let mut pos = 0;
        loop {
            if let FrameState::Payload {
                remaining,
                mask,
                mask_pos,
                fin,
            } = self.frame
            {
                let avail = input.len() - pos;
                let n = if remaining < avail as u64 {
                    remaining as usize
                } else {
                    avail
                };
                let start = self.asm.len;
                // The header check guaranteed `asm.len + remaining <= limit <= buf.len()`.
                let Some(dst) = self.buf.as_mut().get_mut(start..start + n) else {
                    return Err(ProtocolError::MessageTooLarge);
                };
                let src = &input[pos..pos + n];
                match mask {
                    Some(key) => copy_masked(dst, src, key, mask_pos),
                    None => dst.copy_from_slice(src),
                }
                // UTF-8 of the copied bytes is checked lazily, see `advance`.
                self.asm.len += n;
                pos += n;
                let remaining = remaining - n as u64;
                if remaining > 0 {
                    self.frame = FrameState::Payload {
                        remaining,
                        mask,
                        mask_pos: (mask_pos + n) & 3,
                        fin,
                    };
                    return Ok((pos, Found::NeedMore));
                }
                self.frame = FrameState::Header;
                if fin {
                    // `build` validates the whole message, including any code
                    // point left incomplete at the end.
                    self.utf8.reset();
                    let Assembly { text, len, .. } = self.asm;
                    self.asm = Assembly::default();
                    return Ok((pos, Found::Buffer { text, len }));
                }
                continue;
            }

            let rest = &mut input[pos..];
            if self.closed && !rest.is_empty() {
                return Err(ProtocolError::FrameAfterClose);
            }
            let Some(h) = parse_header(rest, self.role, self.asm.active)? else {
                return Ok((pos, Found::NeedMore));
            };
            if h.payload_len > self.config.max_frame_size {
                return Err(ProtocolError::FrameTooLarge);
            }

            if h.opcode.is_control() {
                // At most MAX_CONTROL_FRAME_LEN: the header parser enforced it.
                let total = h.header_len + h.payload_len as usize;
                if rest.len() < total {
                    return Ok((pos, Found::NeedMore));
                }
                if let Some(key) = h.mask {
                    apply_mask(&mut rest[h.header_len..total], key, 0);
                }
                let kind = match h.opcode {
                    OpCode::Close => {
                        self.closed = true;
                        Kind::Close
                    }
                    OpCode::Ping => Kind::Ping,
                    _ => Kind::Pong,
                };
                return Ok(Found::frame_at(pos, h.header_len, total, kind));
            }

            if h.fin && !self.asm.active {
                // A single-frame message: deliver it in place if possible.
                if h.payload_len > self.limit as u64 {
                    return Err(ProtocolError::MessageTooLarge);
                }
                let text = h.opcode == OpCode::Text;
                let payload_len = h.payload_len as usize;
                let total = h.header_len + payload_len;
                let avail = rest.len() - h.header_len;
                let done = match self.frame {
                    // Guard against a caller that broke the contract and
                    // presented other bytes than before: never index past them.
                    FrameState::InPlace { done } => done.min(avail).min(payload_len),
                    _ => 0,
                };
                if rest.len() >= total {
                    self.frame = FrameState::Header;
                    if let Some(key) = h.mask {
                        apply_mask(&mut rest[h.header_len + done..total], key, done);
                    }
                    let kind = if text { Kind::Text } else { Kind::Binary };
                    return Ok(Found::frame_at(pos, h.header_len, total, kind));
                }
                if total <= self.config.input_capacity {
                    let fresh = &mut rest[h.header_len + done..];
                    if let Some(key) = h.mask {
                        apply_mask(fresh, key, done);
                    }
                    if text {
                        if done == 0 {
                            self.utf8.reset();
                        }
                        self.utf8
                            .feed(fresh)
                            .map_err(|_| ProtocolError::InvalidUtf8)?;
                    }
                    self.frame = FrameState::InPlace { done: avail };
                    return Ok((pos, Found::NeedMore));
                }
                // Too large to wait in the caller's buffer: assemble it in ours.
            }

            if h.opcode != OpCode::Continuation {
                self.asm = Assembly {
                    active: true,
                    text: h.opcode == OpCode::Text,
                    len: 0,
                    checked: 0,
                    fragments: 0,
                };
                self.utf8.reset();
            }
            self.asm.fragments = self.asm.fragments.saturating_add(1);
            if self.asm.fragments > self.config.max_fragments {
                return Err(ProtocolError::TooManyFragments);
            }
            if h.payload_len > (self.limit - self.asm.len) as u64 {
                return Err(ProtocolError::MessageTooLarge);
            }
            self.frame = FrameState::Payload {
                remaining: h.payload_len,
                mask: h.mask,
                mask_pos: 0,
                fin: h.fin,
            };
            pos += h.header_len;
        }
    }
}

impl<B> Decoder<B> {
    /// The hot path: a complete, single-frame Text or Binary message with a
    /// 7- or 16-bit length at the front of the input, while nothing else is
    /// in progress. It only accepts frames that the general path would
    /// accept in the same way; anything else, including anything that is an
    /// error, returns `None` and takes the general path, which applies every
    /// rule. The streaming-equivalence property tests cover both paths.
    #[inline(always)]
    fn fast_path(&mut self, input: &mut [u8]) -> Option<(usize, Found)> {
        if !matches!(self.frame, FrameState::Header) || self.asm.active || self.closed {
            return None;
        }
        // FIN set, RSV clear, and a Text or Binary opcode.
        let (kind, b1) = match *input {
            [0x81, b1, ..] => (Kind::Text, b1),
            [0x82, b1, ..] => (Kind::Binary, b1),
            _ => return None,
        };
        let masked = b1 & 0x80 != 0;
        if masked != matches!(self.role, Role::Server) {
            return None;
        }
        let (key_at, len) = match b1 & 0x7f {
            126 => (
                4,
                usize::from(u16::from_be_bytes([*input.get(2)?, *input.get(3)?])),
            ),
            127 => return None,
            n => (2, usize::from(n)),
        };
        let start = if masked { key_at + 4 } else { key_at };
        let end = start + len;
        if len > self.limit || len as u64 > self.config.max_frame_size || input.len() < end {
            return None;
        }
        if masked {
            let key = [
                input[key_at],
                input[key_at + 1],
                input[key_at + 2],
                input[key_at + 3],
            ];
            apply_mask(&mut input[start..end], key, 0);
        }
        Some(Found::frame_at(0, start, end, kind))
    }
}

/// Turns a complete payload into a typed message, validating what is left to
/// validate: UTF-8 of text, and the code and reason of a Close frame.
#[inline]
fn build(kind: Kind, payload: &mut [u8]) -> Result<Message<'_>, ProtocolError> {
    Ok(match kind {
        Kind::Text => Message::Text(
            simdutf8::basic::from_utf8_mut(payload).map_err(|_| ProtocolError::InvalidUtf8)?,
        ),
        Kind::Binary => Message::Binary(payload),
        Kind::Ping => Message::Ping(payload),
        Kind::Pong => Message::Pong(payload),
        Kind::Close => Message::Close(parse_close(payload)?),
    })
}

/// Validates a complete payload the way [`build`] does, without typing it.
#[inline]
fn check(kind: Kind, payload: &[u8]) -> Result<FrameKind, ProtocolError> {
    Ok(match kind {
        Kind::Text => {
            simdutf8::basic::from_utf8(payload).map_err(|_| ProtocolError::InvalidUtf8)?;
            FrameKind::Text
        }
        Kind::Binary => FrameKind::Binary,
        Kind::Ping => FrameKind::Ping,
        Kind::Pong => FrameKind::Pong,
        Kind::Close => FrameKind::Close(parse_close(payload)?.map(|c| c.code)),
    })
}

fn parse_close(payload: &[u8]) -> Result<Option<CloseFrame<'_>>, ProtocolError> {
    match payload {
        [] => Ok(None),
        [_] => Err(ProtocolError::InvalidClosePayload),
        [hi, lo, reason @ ..] => {
            let code = CloseCode(u16::from_be_bytes([*hi, *lo]));
            if !code.is_valid_on_wire() {
                return Err(ProtocolError::InvalidCloseCode(code.0));
            }
            let reason = core::str::from_utf8(reason).map_err(|_| ProtocolError::InvalidUtf8)?;
            Ok(Some(CloseFrame { code, reason }))
        }
    }
}
