//! What the application sees: the [`Handler`] trait and its arguments.

use std::fmt;
use std::io;
use std::time::Duration;

use tickwire_codec::handshake::HandshakeError;
use tickwire_codec::{CloseCode, ProtocolError, Role};

use crate::fetch::FetchError;
use crate::id::ConnId;
use crate::outgoing::Conn;
use crate::payload::Payload;
use crate::resolve::ResolveError;
use crate::tls::TlsError;

/// The clock readings taken for a message, handed to
/// [`Handler::on_message`]; tickwire-net fills `poll` to `decrypted` (once per read; `decoded` is the handler's to stamp).
pub use tickwire_tsc::Stamps;

/// What TLS is carrying a connection, and what its record layer has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsInfo {
    /// TLS 1.3 through tickwire's in-place record layer (no allocation, no
    /// copy per record). False for TLS 1.2, which goes through rustls.
    pub in_place: bool,
    /// Records received by the in-place layer.
    pub records_in: u64,
    /// Records sent by the in-place layer.
    pub records_out: u64,
    /// Session tickets handed to rustls after the handshake.
    pub tickets: u32,
    /// Key updates from the peer.
    pub key_updates_in: u32,
    /// Key updates we sent.
    pub key_updates_out: u32,
}

/// Which deadline expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Timeout {
    /// Name resolution and TCP connect took longer than `connect_timeout`.
    Connect,
    /// The TLS and WebSocket handshakes took longer than `handshake_timeout`.
    Handshake,
    /// A Ping went unanswered for `pong_timeout`.
    Pong,
    /// No byte arrived for `stale_timeout`.
    Stale,
    /// The peer did not finish the close handshake within `close_timeout`.
    Close,
}

/// Why a connection ended.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Disconnect {
    /// The peer sent a Close frame, which was answered. `code` is `None`
    /// when the frame carried no status code.
    Remote {
        /// The peer's close code.
        code: Option<CloseCode>,
    },
    /// The application closed the connection. It is not reconnected.
    Local {
        /// The close code sent.
        code: CloseCode,
    },
    /// The peer broke the WebSocket protocol; a Close frame with
    /// [`ProtocolError::close_code`] was sent.
    Protocol(ProtocolError),
    /// The server answered the upgrade with another status than 101 (429
    /// when rate limited, 403, 451, 503 in maintenance): the status, and
    /// the start of the body that came with the headers, which usually
    /// says why.
    Refused {
        /// The HTTP status.
        status: u16,
        /// The start of the response body.
        body: Excerpt,
    },
    /// The opening handshake failed (a malformed answer, a wrong accept
    /// key, an extension not asked for).
    Handshake(HandshakeError),
    /// TLS failed: an untrusted certificate, a wrong host name, an alert.
    Tls(TlsError),
    /// The host name did not resolve to an address.
    Resolve(ResolveError),
    /// A socket error: connection refused, reset, unreachable.
    Io(io::ErrorKind),
    /// The TCP connection ended without a Close frame (close code 1006).
    Eof,
    /// A deadline passed.
    Timeout(Timeout),
    /// The peer does not read: the send buffer overflowed.
    SendBufferFull,
    /// A [`Driver::fetch`](crate::Driver::fetch) got its response (handed
    /// to [`Handler::on_response`]); the connection is not reconnected.
    Fetched,
    /// A fetch's response could not be read.
    Fetch(FetchError),
}

impl fmt::Display for Disconnect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disconnect::Remote { code: Some(c) } => write!(f, "closed by peer with code {c}"),
            Disconnect::Remote { code: None } => f.write_str("closed by peer without a code"),
            Disconnect::Local { code } => write!(f, "closed by application with code {code}"),
            Disconnect::Protocol(e) => write!(f, "protocol error: {e}"),
            Disconnect::Refused { status, body } if body.is_empty() => {
                write!(f, "upgrade refused with HTTP {status}")
            }
            Disconnect::Refused { status, body } => {
                write!(f, "upgrade refused with HTTP {status}: {body}")
            }
            Disconnect::Handshake(e) => write!(f, "handshake failed: {e}"),
            Disconnect::Tls(e) => write!(f, "TLS failed: {e}"),
            Disconnect::Resolve(e) => write!(f, "name resolution failed: {e}"),
            Disconnect::Io(kind) => write!(f, "socket error: {kind}"),
            Disconnect::Eof => f.write_str("connection ended without a close frame"),
            Disconnect::Timeout(t) => write!(f, "timed out: {t:?}"),
            Disconnect::SendBufferFull => f.write_str("send buffer full"),
            Disconnect::Fetched => f.write_str("the fetch completed"),
            Disconnect::Fetch(e) => write!(f, "fetch failed: {e}"),
        }
    }
}

impl std::error::Error for Disconnect {}

/// The start of an HTTP body, for a message: up to
/// [`Excerpt::CAPACITY`] bytes, without surrounding whitespace, with
/// control characters shown as spaces and invalid UTF-8 replaced. Made only
/// when something failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Excerpt(String);

impl Excerpt {
    /// The most bytes kept.
    pub const CAPACITY: usize = 160;

    /// The start of `body`.
    pub fn new(body: &[u8]) -> Excerpt {
        let body = body.trim_ascii();
        let body = &body[..body.len().min(Excerpt::CAPACITY)];
        Excerpt(
            String::from_utf8_lossy(body)
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect(),
        )
    }

    /// The text kept.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Excerpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a fetch's response says besides its body: the status, and how
/// long the server asks the client to wait before the next request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseHead {
    /// The HTTP status.
    pub status: u16,
    /// `Retry-After`, when given in seconds (RFC 9110 10.2.3; a 429 or
    /// 503 carries it, and Binance's 418 says when its ban ends). The date
    /// form is not read.
    pub retry_after: Option<Duration>,
}

impl ResponseHead {
    /// A response head of `status` and no `Retry-After`.
    pub fn new(status: u16) -> ResponseHead {
        ResponseHead {
            status,
            retry_after: None,
        }
    }
}

/// What to do after a client connection ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reconnect {
    /// Reconnect after the backoff delay (the default).
    Yes,
    /// Give the slot up.
    No,
}

/// The application's side of a [`Driver`](crate::Driver): called from
/// [`Driver::poll_once`](crate::Driver::poll_once) on the driver's thread.
///
/// Only `on_message` is required. Callbacks must not block: every connection
/// on the driver waits for them. A callback that panics leaves the driver
/// part way through a read (a payload's padding not put back, actions not
/// carried out): drop the driver rather than poll it again.
pub trait Handler {
    /// A connection completed its handshakes (or, in the server role,
    /// accepted one). Send subscriptions here: they are paced by
    /// `Config::send_rate`, so a reconnect never floods the venue.
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        let _ = conn;
    }

    /// A text or binary message arrived. Pings, pongs and closes are
    /// handled by the driver.
    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, stamps: Stamps);

    /// The response to a [`Driver::fetch`](crate::Driver::fetch): its
    /// status and the headers a client must obey (`head`), and its body,
    /// `body[..len]`, in place in the connection's receive buffer with
    /// [`PAYLOAD_PADDING`](crate::PAYLOAD_PADDING) writable bytes after it
    /// (a JSON parser may parse it in place). Then the connection ends
    /// with [`Disconnect::Fetched`]. Called for any status: a 429 or a 5xx
    /// body says why.
    fn on_response(&mut self, id: ConnId, head: ResponseHead, body: &mut [u8], len: usize) {
        let _ = (id, head, body, len);
    }

    /// A connection ended. For client connections not closed by the
    /// application, the return value decides whether to reconnect.
    fn on_close(&mut self, id: ConnId, role: Role, reason: &Disconnect) -> Reconnect {
        let _ = (id, role, reason);
        Reconnect::Yes
    }

    /// A client connection will reconnect after `delay` (attempt counts
    /// from 1 and resets after a successful handshake).
    fn on_reconnecting(&mut self, id: ConnId, attempt: u32, delay: Duration) {
        let _ = (id, attempt, delay);
    }
}
