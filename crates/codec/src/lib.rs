//! A sans-IO [RFC 6455] WebSocket codec that never allocates.
//!
//! Bytes in, decisions out. This crate parses and writes WebSocket frames and
//! the HTTP/1.1 opening handshake; it does no I/O, reads no clock, and uses
//! neither `std` nor `alloc`. The error types implement `core::error::Error`
//! (the same trait as `std::error::Error`) with or without `std`; the `std`
//! feature (on by default) only lets simdutf8 pick its AVX2 or SSE4.2 UTF-8
//! kernel at run time, and changes no behaviour.
//!
//! - [`Decoder`] turns received bytes into [`Message`]s for either [`Role`].
//!   A message that arrives in one complete frame is returned as a mutable
//!   slice of the caller's input, with no copy; fragmented messages are
//!   assembled in a fixed buffer the caller supplies. Every RFC 6455 rule is
//!   checked, text is validated as UTF-8 as it arrives (fail-fast, even inside
//!   a partly received frame), and every limit in [`Config`] is enforced
//!   before a payload byte is copied.
//! - [`encode_frame`], [`encode_close`] and [`encode_header`] write frames into
//!   a caller buffer; a buffer that is too small is an error that carries the
//!   size needed.
//! - [`handshake`] writes the upgrade request and validates the response.
//!
//! Every decoding error is a [`ProtocolError`], a `Copy` enum whose
//! [`close_code`](ProtocolError::close_code) is the status to send when
//! failing the connection. Nothing in this crate panics on input from the wire.
//!
//! Not here: sockets, TLS, timers, ping scheduling, reconnects (see
//! `tickwire-net`), and extensions such as permessage-deflate (an RSV bit is
//! always a protocol error).
//!
//! [RFC 6455]: https://www.rfc-editor.org/rfc/rfc6455

#![no_std]
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

mod close;
mod decode;
mod encode;
mod error;
mod frame;
pub mod handshake;
mod mask;
mod utf8;

pub use close::CloseCode;
pub use decode::{CloseFrame, Config, Decoded, Decoder, FrameKind, Located, Location, Message};
pub use encode::{encode_close, encode_frame, encode_header};
pub use error::{EncodeError, ProtocolError};
pub use frame::{MAX_CONTROL_FRAME_LEN, MAX_HEADER_LEN, OpCode, Role, header_len};
pub use mask::apply_mask;
