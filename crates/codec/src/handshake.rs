//! The opening handshake (RFC 6455 section 4), client side.
//!
//! [`ClientHandshake`] writes the HTTP/1.1 upgrade request into a caller
//! buffer and validates the server's response with `httparse`, using a fixed
//! budget of [`MAX_HEADERS`] headers on the stack and a byte budget
//! ([`ClientHandshake::set_max_response_len`]). Feeding a response in pieces
//! costs linear time: each call scans only the new bytes for the end of the
//! header block, and the response is parsed exactly once, when it is complete.

use core::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha1::{Digest as _, Sha1};

/// The GUID that RFC 6455 appends to the key before hashing.
pub const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Headers the response parser has room for; a response with more is refused.
pub const MAX_HEADERS: usize = 64;

/// Default cap on the size of the response header block, in bytes.
pub const DEFAULT_MAX_RESPONSE_LEN: usize = 16 * 1024;

/// Computes `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key`:
/// base64(SHA-1(key + GUID)).
pub fn accept_key(key: &[u8]) -> [u8; 28] {
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(GUID.as_bytes());
    let digest = sha.finalize();
    let mut out = [0u8; 28];
    // 20 bytes always encode to exactly 28 base64 characters.
    let written = STANDARD.encode_slice(digest, &mut out);
    debug_assert_eq!(written, Ok(28));
    out
}

/// What the client asks for.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The `Host` header: host name, plus `:port` when it is not the scheme's default.
    pub host: &'a str,
    /// The request target: path and query, starting with `/`.
    pub path: &'a str,
    /// Subprotocols to offer in `Sec-WebSocket-Protocol`, in order of preference.
    pub protocols: &'a [&'a str],
    /// Extra header lines (name, value), e.g. `Origin` or `User-Agent`.
    pub headers: &'a [(&'a str, &'a str)],
}

impl<'a> Request<'a> {
    /// A request for `path` on `host` with no subprotocols and no extra headers.
    pub const fn new(host: &'a str, path: &'a str) -> Request<'a> {
        Request {
            host,
            path,
            protocols: &[],
            headers: &[],
        }
    }
}

/// Why a handshake failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The request to write is not valid HTTP: an empty host, a path that does
    /// not start with `/`, a control character or space where none may be, or
    /// a subprotocol or header name that is not an HTTP token.
    InvalidRequest,
    /// The output buffer is too small; `required` bytes are needed.
    InsufficientSize {
        /// The length of the whole request.
        required: usize,
    },
    /// The response header block is larger than the configured maximum.
    ResponseTooLarge,
    /// The response has more than [`MAX_HEADERS`] headers.
    TooManyHeaders,
    /// The response is not valid HTTP/1.1.
    MalformedResponse,
    /// The server answered with a status other than 101 Switching Protocols
    /// (for example 429 when rate limited, or 403).
    Status(u16),
    /// `Upgrade: websocket` is missing.
    MissingUpgrade,
    /// The `Connection` header does not contain the `upgrade` token.
    MissingConnectionUpgrade,
    /// `Sec-WebSocket-Accept` is missing, repeated, or does not match the key.
    InvalidAccept,
    /// The server accepted an extension the client did not offer.
    UnexpectedExtension,
    /// The server selected a subprotocol the client did not offer.
    UnexpectedProtocol,
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HandshakeError::InvalidRequest => f.write_str("invalid handshake request"),
            HandshakeError::InsufficientSize { required } => {
                write!(f, "output buffer too small: {required} bytes needed")
            }
            HandshakeError::ResponseTooLarge => f.write_str("handshake response too large"),
            HandshakeError::TooManyHeaders => f.write_str("too many headers in handshake response"),
            HandshakeError::MalformedResponse => f.write_str("malformed handshake response"),
            HandshakeError::Status(code) => write!(f, "server answered HTTP {code} instead of 101"),
            HandshakeError::MissingUpgrade => f.write_str("response lacks `Upgrade: websocket`"),
            HandshakeError::MissingConnectionUpgrade => {
                f.write_str("response lacks `Connection: upgrade`")
            }
            HandshakeError::InvalidAccept => f.write_str("missing or wrong Sec-WebSocket-Accept"),
            HandshakeError::UnexpectedExtension => {
                f.write_str("server accepted an extension that was not offered")
            }
            HandshakeError::UnexpectedProtocol => {
                f.write_str("server selected a subprotocol that was not offered")
            }
        }
    }
}

impl core::error::Error for HandshakeError {}

/// Progress of [`ClientHandshake::parse_response`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeStatus<'a> {
    /// The header block is not complete; call again with more bytes.
    Partial,
    /// The server accepted the upgrade.
    Complete {
        /// Length of the response header block. Bytes after it are WebSocket
        /// frames the server sent right away; hand them to the decoder.
        consumed: usize,
        /// The subprotocol the server selected, from the offered list.
        protocol: Option<&'a str>,
    },
}

/// The client side of one opening handshake.
///
/// ```
/// use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus, Request};
///
/// // The nonce MUST come from a good random source; this is RFC 6455's sample.
/// let mut hs = ClientHandshake::new(Request::new("server.example.com", "/chat"), *b"the sample nonce");
/// assert_eq!(hs.key(), "dGhlIHNhbXBsZSBub25jZQ==");
/// let mut out = [0u8; 256];
/// let n = hs.write_request(&mut out).unwrap();
/// assert!(out[..n].starts_with(b"GET /chat HTTP/1.1\r\nHost: server.example.com\r\n"));
///
/// let response = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
///     Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
/// assert_eq!(hs.parse_response(&response[..40]), Ok(HandshakeStatus::Partial));
/// assert_eq!(
///     hs.parse_response(response),
///     Ok(HandshakeStatus::Complete { consumed: response.len(), protocol: None })
/// );
/// ```
#[derive(Clone, Debug)]
pub struct ClientHandshake<'a> {
    request: Request<'a>,
    key: [u8; 24],
    accept: [u8; 28],
    scanned: usize,
    max_response_len: usize,
}

impl<'a> ClientHandshake<'a> {
    /// Prepares a handshake; `nonce` MUST be 16 bytes from a good random source
    /// (RFC 6455 section 4.1), fresh for every connection attempt.
    pub fn new(request: Request<'a>, nonce: [u8; 16]) -> ClientHandshake<'a> {
        let mut key = [0u8; 24];
        // 16 bytes always encode to exactly 24 base64 characters.
        let written = STANDARD.encode_slice(nonce, &mut key);
        debug_assert_eq!(written, Ok(24));
        ClientHandshake {
            request,
            key,
            accept: accept_key(&key),
            scanned: 0,
            max_response_len: DEFAULT_MAX_RESPONSE_LEN,
        }
    }

    /// Caps the size of the response header block (default
    /// [`DEFAULT_MAX_RESPONSE_LEN`]).
    pub fn set_max_response_len(&mut self, bytes: usize) -> &mut Self {
        self.max_response_len = bytes;
        self
    }

    /// The `Sec-WebSocket-Key` sent in the request.
    pub fn key(&self) -> &str {
        // The key is base64, which is ASCII.
        core::str::from_utf8(&self.key).unwrap_or_default()
    }

    /// Writes the upgrade request into `out` and returns its length.
    pub fn write_request(&self, out: &mut [u8]) -> Result<usize, HandshakeError> {
        let r = &self.request;
        let valid = !r.host.is_empty()
            && r.host.bytes().all(is_visible)
            && r.path.starts_with('/')
            && r.path.bytes().all(is_visible)
            && r.protocols.iter().all(|p| is_token(p))
            && r.headers
                .iter()
                .all(|(n, v)| is_token(n) && v.bytes().all(is_field_value_byte));
        if !valid {
            return Err(HandshakeError::InvalidRequest);
        }
        let mut w = Writer { out, pos: 0 };
        w.put(b"GET ");
        w.put(r.path.as_bytes());
        w.put(b" HTTP/1.1\r\nHost: ");
        w.put(r.host.as_bytes());
        w.put(b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ");
        w.put(&self.key);
        w.put(b"\r\nSec-WebSocket-Version: 13\r\n");
        for (i, p) in r.protocols.iter().enumerate() {
            w.put(if i == 0 {
                b"Sec-WebSocket-Protocol: "
            } else {
                b", "
            });
            w.put(p.as_bytes());
        }
        if !r.protocols.is_empty() {
            w.put(b"\r\n");
        }
        for (name, value) in r.headers {
            w.put(name.as_bytes());
            w.put(b": ");
            w.put(value.as_bytes());
            w.put(b"\r\n");
        }
        w.put(b"\r\n");
        if w.pos > w.out.len() {
            return Err(HandshakeError::InsufficientSize { required: w.pos });
        }
        Ok(w.pos)
    }

    /// Validates the server's response.
    ///
    /// `input` is everything received so far (call again with the grown
    /// buffer after [`HandshakeStatus::Partial`]). Checks the 101 status,
    /// `Upgrade: websocket`, the `upgrade` token in `Connection`,
    /// `Sec-WebSocket-Accept`, and that no extension or unoffered subprotocol
    /// was selected.
    pub fn parse_response(&mut self, input: &[u8]) -> Result<HandshakeStatus<'a>, HandshakeError> {
        let prefix = input.len().min(5);
        if input[..prefix] != b"HTTP/"[..prefix] {
            return Err(HandshakeError::MalformedResponse);
        }
        let Some(end) = find_blank_line(input, self.scanned.min(input.len())) else {
            self.scanned = input.len();
            if input.len() > self.max_response_len {
                return Err(HandshakeError::ResponseTooLarge);
            }
            return Ok(HandshakeStatus::Partial);
        };
        if end > self.max_response_len {
            return Err(HandshakeError::ResponseTooLarge);
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let consumed = match response.parse(&input[..end]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err(HandshakeError::MalformedResponse),
            Err(httparse::Error::TooManyHeaders) => return Err(HandshakeError::TooManyHeaders),
            Err(_) => return Err(HandshakeError::MalformedResponse),
        };
        let code = response.code.unwrap_or(0);
        if code != 101 {
            return Err(HandshakeError::Status(code));
        }
        let mut upgrade = false;
        let mut connection = false;
        let mut accept = 0;
        let mut accept_ok = false;
        let mut protocol = None;
        let mut protocol_headers = 0;
        for h in response.headers.iter() {
            let value = trim(h.value);
            if h.name.eq_ignore_ascii_case("upgrade") {
                upgrade |= value.eq_ignore_ascii_case(b"websocket");
            } else if h.name.eq_ignore_ascii_case("connection") {
                connection |= value
                    .split(|&b| b == b',')
                    .any(|t| trim(t).eq_ignore_ascii_case(b"upgrade"));
            } else if h.name.eq_ignore_ascii_case("sec-websocket-accept") {
                accept += 1;
                accept_ok = value == self.accept;
            } else if h.name.eq_ignore_ascii_case("sec-websocket-extensions") {
                if !value.is_empty() {
                    return Err(HandshakeError::UnexpectedExtension);
                }
            } else if h.name.eq_ignore_ascii_case("sec-websocket-protocol") {
                protocol_headers += 1;
                protocol = self
                    .request
                    .protocols
                    .iter()
                    .copied()
                    .find(|p| p.as_bytes() == value);
                if protocol.is_none() {
                    return Err(HandshakeError::UnexpectedProtocol);
                }
            }
        }
        if !upgrade {
            return Err(HandshakeError::MissingUpgrade);
        }
        if !connection {
            return Err(HandshakeError::MissingConnectionUpgrade);
        }
        if accept != 1 || !accept_ok {
            return Err(HandshakeError::InvalidAccept);
        }
        if protocol_headers > 1 {
            return Err(HandshakeError::UnexpectedProtocol);
        }
        Ok(HandshakeStatus::Complete { consumed, protocol })
    }
}

/// Writes pieces into a slice, counting the length even past its end so the
/// caller learns the size it needs.
struct Writer<'b> {
    out: &'b mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        if let Some(dst) = self.out.get_mut(self.pos..end) {
            dst.copy_from_slice(bytes);
        }
        self.pos = end;
    }
}

/// Finds the end of the header block (just past the empty line), examining
/// only line feeds at or after `from`. Accepts CRLF and bare LF line endings,
/// as httparse does.
fn find_blank_line(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(off) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + off;
        let blank = match nl {
            0 => false,
            1 => buf[0] == b'\n',
            _ => buf[nl - 1] == b'\n' || (buf[nl - 1] == b'\r' && buf[nl - 2] == b'\n'),
        };
        if blank {
            return Some(nl + 1);
        }
        i = nl + 1;
    }
    None
}

fn trim(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

/// Visible ASCII, no spaces: what a host or a request target may contain.
fn is_visible(b: u8) -> bool {
    b.is_ascii_graphic()
}

/// `field-vchar` or space/tab; excludes CR, LF and other controls.
fn is_field_value_byte(b: u8) -> bool {
    b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80
}

/// An HTTP token (RFC 9110 section 5.6.2).
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::find_blank_line;

    #[test]
    fn blank_line_is_found_wherever_the_scan_resumes() {
        let resp = b"HTTP/1.1 101 OK\r\nA: b\r\n\r\ntail";
        let end = resp.len() - 4;
        for from in 0..end {
            assert_eq!(find_blank_line(resp, from), Some(end), "from {from}");
        }
        assert_eq!(find_blank_line(b"HTTP/1.1 101\nA: b\n\n", 0), Some(19));
        assert_eq!(find_blank_line(b"HTTP/1.1 101\r\nA: b\r\n", 0), None);
    }
}
