//! The opening handshake (RFC 6455 section 4), both sides.
//!
//! [`ClientHandshake`] writes the HTTP/1.1 upgrade request into a caller
//! buffer and validates the server's response; [`ServerHandshake`] validates a
//! client's request and [`write_response`] answers it. Both parse with
//! `httparse`, using a fixed budget of [`MAX_HEADERS`] headers on the stack and
//! a byte budget for the header block. Feeding a header block in pieces costs
//! linear time: each call scans only the new bytes for its end, and the block
//! is parsed exactly once, when it is complete.

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
    /// The header block is larger than the configured maximum.
    TooLarge,
    /// The header block has more than [`MAX_HEADERS`] headers.
    TooManyHeaders,
    /// The response or request is not valid HTTP/1.1.
    Malformed,
    /// The request's method is not GET.
    NotGet,
    /// The request has no `Host` header.
    MissingHost,
    /// `Sec-WebSocket-Key` is missing, repeated, or not 16 bytes in base64.
    InvalidKey,
    /// `Sec-WebSocket-Version` is not 13. Answer with status 426 and
    /// `Sec-WebSocket-Version: 13` ([`write_rejection`] does).
    UnsupportedVersion,
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
            HandshakeError::TooLarge => f.write_str("handshake header block too large"),
            HandshakeError::TooManyHeaders => f.write_str("too many headers in handshake"),
            HandshakeError::Malformed => f.write_str("malformed handshake"),
            HandshakeError::NotGet => f.write_str("upgrade request method is not GET"),
            HandshakeError::MissingHost => f.write_str("upgrade request lacks a Host header"),
            HandshakeError::InvalidKey => f.write_str("missing or invalid Sec-WebSocket-Key"),
            HandshakeError::UnsupportedVersion => f.write_str("Sec-WebSocket-Version is not 13"),
            HandshakeError::Status(code) => write!(f, "server answered HTTP {code} instead of 101"),
            HandshakeError::MissingUpgrade => f.write_str("no `Upgrade: websocket` header"),
            HandshakeError::MissingConnectionUpgrade => {
                f.write_str("no `upgrade` token in the Connection header")
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
/// let request = Request::new("server.example.com", "/chat");
/// let mut hs = ClientHandshake::new(*b"the sample nonce");
/// assert_eq!(hs.key(), "dGhlIHNhbXBsZSBub25jZQ==");
/// let mut out = [0u8; 256];
/// let n = hs.write_request(&mut out, &request).unwrap();
/// assert!(out[..n].starts_with(b"GET /chat HTTP/1.1\r\nHost: server.example.com\r\n"));
///
/// let response = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
///     Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
/// assert_eq!(hs.parse_response(&response[..40], request.protocols), Ok(HandshakeStatus::Partial));
/// assert_eq!(
///     hs.parse_response(response, request.protocols),
///     Ok(HandshakeStatus::Complete { consumed: response.len(), protocol: None })
/// );
/// ```
///
/// The handshake keeps only what it derived (the key, the expected accept
/// value and how far it has scanned); the [`Request`] is passed to
/// [`write_request`](Self::write_request) and its subprotocols to
/// [`parse_response`](Self::parse_response), so the caller can own both in
/// whatever form suits it.
#[derive(Clone, Debug)]
pub struct ClientHandshake {
    key: [u8; 24],
    accept: [u8; 28],
    scanned: usize,
    max_response_len: usize,
}

impl ClientHandshake {
    /// Prepares a handshake; `nonce` MUST be 16 bytes from a good random source
    /// (RFC 6455 section 4.1), fresh for every connection attempt.
    pub fn new(nonce: [u8; 16]) -> ClientHandshake {
        let mut key = [0u8; 24];
        // 16 bytes always encode to exactly 24 base64 characters.
        let written = STANDARD.encode_slice(nonce, &mut key);
        debug_assert_eq!(written, Ok(24));
        ClientHandshake {
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

    /// Writes the upgrade request for `r` into `out` and returns its length.
    pub fn write_request(&self, out: &mut [u8], r: &Request<'_>) -> Result<usize, HandshakeError> {
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
        w.finish()
    }

    /// Validates the server's response.
    ///
    /// `input` is everything received so far (call again with the grown
    /// buffer after [`HandshakeStatus::Partial`]); `offered` is the request's
    /// subprotocol list. Checks the 101 status, `Upgrade: websocket`, the
    /// `upgrade` token in `Connection`, `Sec-WebSocket-Accept`, and that no
    /// extension and no subprotocol outside `offered` was selected.
    pub fn parse_response<'p>(
        &mut self,
        input: &[u8],
        offered: &[&'p str],
    ) -> Result<HandshakeStatus<'p>, HandshakeError> {
        let prefix = input.len().min(5);
        if input[..prefix] != b"HTTP/"[..prefix] {
            return Err(HandshakeError::Malformed);
        }
        let Some(end) = find_end(input, &mut self.scanned, self.max_response_len)? else {
            return Ok(HandshakeStatus::Partial);
        };
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let consumed = match response.parse(&input[..end]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err(HandshakeError::Malformed),
            Err(httparse::Error::TooManyHeaders) => return Err(HandshakeError::TooManyHeaders),
            Err(_) => return Err(HandshakeError::Malformed),
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
                connection |= has_token(value, b"upgrade");
            } else if h.name.eq_ignore_ascii_case("sec-websocket-accept") {
                accept += 1;
                accept_ok = value == self.accept;
            } else if h.name.eq_ignore_ascii_case("sec-websocket-extensions") {
                if !value.is_empty() {
                    return Err(HandshakeError::UnexpectedExtension);
                }
            } else if h.name.eq_ignore_ascii_case("sec-websocket-protocol") {
                protocol_headers += 1;
                protocol = offered.iter().copied().find(|p| p.as_bytes() == value);
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

/// Progress of [`ServerHandshake::parse_request`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestStatus<'b> {
    /// The header block is not complete; call again with more bytes.
    Partial,
    /// A valid upgrade request.
    Complete {
        /// Length of the request header block; bytes after it are frames.
        consumed: usize,
        /// What the client asked for.
        request: UpgradeRequest<'b>,
    },
}

/// A validated client upgrade request, borrowing the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpgradeRequest<'b> {
    /// The request target (path and query).
    pub path: &'b str,
    /// The `Host` header.
    pub host: &'b str,
    /// The first `Sec-WebSocket-Protocol` header, as sent (a comma-separated
    /// list in order of preference), if any.
    pub protocols: Option<&'b str>,
    accept: [u8; 28],
}

impl<'b> UpgradeRequest<'b> {
    /// The `Sec-WebSocket-Accept` value that answers this request's key.
    pub fn accept(&self) -> &[u8; 28] {
        &self.accept
    }

    /// The offered subprotocols, trimmed, in the client's order.
    pub fn offered_protocols(&self) -> impl Iterator<Item = &'b str> + 'b {
        self.protocols
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
    }
}

/// The server side of one opening handshake: validates the client's request.
///
/// ```
/// use tickwire_codec::handshake::{RequestStatus, ServerHandshake, write_response};
///
/// let request = b"GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\n\
///     Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
///     Sec-WebSocket-Version: 13\r\n\r\n";
/// let mut hs = ServerHandshake::new();
/// let RequestStatus::Complete { request: req, .. } = hs.parse_request(request).unwrap() else {
///     panic!("complete");
/// };
/// assert_eq!(req.path, "/chat");
/// let mut out = [0u8; 256];
/// let n = write_response(&mut out, req.accept(), None).unwrap();
/// assert!(out[..n].ends_with(b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"));
/// ```
#[derive(Clone, Debug)]
pub struct ServerHandshake {
    scanned: usize,
    max_request_len: usize,
}

impl Default for ServerHandshake {
    fn default() -> Self {
        ServerHandshake::new()
    }
}

impl ServerHandshake {
    /// A handshake with the default byte budget ([`DEFAULT_MAX_RESPONSE_LEN`]).
    pub const fn new() -> ServerHandshake {
        ServerHandshake {
            scanned: 0,
            max_request_len: DEFAULT_MAX_RESPONSE_LEN,
        }
    }

    /// Caps the size of the request header block.
    pub fn set_max_request_len(&mut self, bytes: usize) -> &mut Self {
        self.max_request_len = bytes;
        self
    }

    /// Validates a client's upgrade request (RFC 6455 section 4.2.1).
    ///
    /// `input` is everything received so far. Checks the GET method, a
    /// `Host` header, `Upgrade: websocket`, the `upgrade` token in
    /// `Connection`, a `Sec-WebSocket-Key` of 16 base64-encoded bytes and
    /// `Sec-WebSocket-Version: 13`. Extensions the client offers are ignored
    /// (none is accepted).
    pub fn parse_request<'b>(
        &mut self,
        input: &'b [u8],
    ) -> Result<RequestStatus<'b>, HandshakeError> {
        let Some(end) = find_end(input, &mut self.scanned, self.max_request_len)? else {
            return Ok(RequestStatus::Partial);
        };
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        let consumed = match request.parse(&input[..end]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err(HandshakeError::Malformed),
            Err(httparse::Error::TooManyHeaders) => return Err(HandshakeError::TooManyHeaders),
            Err(_) => return Err(HandshakeError::Malformed),
        };
        if request.method != Some("GET") {
            return Err(HandshakeError::NotGet);
        }
        if request.version != Some(1) {
            return Err(HandshakeError::Malformed);
        }
        let path = request.path.unwrap_or_default();
        let mut host = None;
        let mut upgrade = false;
        let mut connection = false;
        let mut keys = 0;
        let mut key: &[u8] = &[];
        let mut version_ok = false;
        let mut protocols = None;
        for h in request.headers.iter() {
            let value = trim(h.value);
            if h.name.eq_ignore_ascii_case("host") {
                host = core::str::from_utf8(value).ok();
            } else if h.name.eq_ignore_ascii_case("upgrade") {
                upgrade |= value
                    .split(|&b| b == b',')
                    .any(|t| trim(t).eq_ignore_ascii_case(b"websocket"));
            } else if h.name.eq_ignore_ascii_case("connection") {
                connection |= has_token(value, b"upgrade");
            } else if h.name.eq_ignore_ascii_case("sec-websocket-key") {
                keys += 1;
                key = value;
            } else if h.name.eq_ignore_ascii_case("sec-websocket-version") {
                version_ok = value == b"13";
            } else if h.name.eq_ignore_ascii_case("sec-websocket-protocol") && protocols.is_none() {
                protocols = core::str::from_utf8(value).ok();
            }
        }
        let Some(host) = host.filter(|h| !h.is_empty()) else {
            return Err(HandshakeError::MissingHost);
        };
        if !upgrade {
            return Err(HandshakeError::MissingUpgrade);
        }
        if !connection {
            return Err(HandshakeError::MissingConnectionUpgrade);
        }
        // The key must be 16 bytes in (canonical) base64, which is 24 characters.
        let mut nonce = [0u8; 18];
        if keys != 1 || key.len() != 24 || STANDARD.decode_slice(key, &mut nonce) != Ok(16) {
            return Err(HandshakeError::InvalidKey);
        }
        if !version_ok {
            return Err(HandshakeError::UnsupportedVersion);
        }
        Ok(RequestStatus::Complete {
            consumed,
            request: UpgradeRequest {
                path,
                host,
                protocols,
                accept: accept_key(key),
            },
        })
    }
}

/// Writes the `101 Switching Protocols` answer to an upgrade request and
/// returns its length. `protocol`, if any, MUST be one the client offered.
pub fn write_response(
    out: &mut [u8],
    accept: &[u8; 28],
    protocol: Option<&str>,
) -> Result<usize, HandshakeError> {
    if protocol.is_some_and(|p| !is_token(p)) {
        return Err(HandshakeError::InvalidRequest);
    }
    let mut w = Writer { out, pos: 0 };
    w.put(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ");
    w.put(accept);
    if let Some(p) = protocol {
        w.put(b"\r\nSec-WebSocket-Protocol: ");
        w.put(p.as_bytes());
    }
    w.put(b"\r\n\r\n");
    w.finish()
}

/// Writes an HTTP error answer to a request that failed [`ServerHandshake`]
/// validation (400 Bad Request, or 426 Upgrade Required with
/// `Sec-WebSocket-Version: 13` for [`HandshakeError::UnsupportedVersion`]),
/// with `Connection: close`, and returns its length.
pub fn write_rejection(out: &mut [u8], error: HandshakeError) -> Result<usize, HandshakeError> {
    let mut w = Writer { out, pos: 0 };
    if error == HandshakeError::UnsupportedVersion {
        w.put(b"HTTP/1.1 426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\n");
    } else {
        w.put(b"HTTP/1.1 400 Bad Request\r\n");
    }
    w.put(b"Connection: close\r\nContent-Length: 0\r\n\r\n");
    w.finish()
}

/// Finds the end of a header block in `input`, resuming the scan where the
/// last call stopped. `Ok(None)` means "not yet"; a block (or a partial one)
/// over `max` bytes is an error.
fn find_end(
    input: &[u8],
    scanned: &mut usize,
    max: usize,
) -> Result<Option<usize>, HandshakeError> {
    match find_blank_line(input, (*scanned).min(input.len())) {
        Some(end) if end > max => Err(HandshakeError::TooLarge),
        Some(end) => Ok(Some(end)),
        None => {
            *scanned = input.len();
            if input.len() > max {
                Err(HandshakeError::TooLarge)
            } else {
                Ok(None)
            }
        }
    }
}

/// Whether a comma-separated header value contains `token`, ignoring case.
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| trim(t).eq_ignore_ascii_case(token))
}

/// Writes pieces into a slice, counting the length even past its end so the
/// caller learns the size it needs.
struct Writer<'b> {
    out: &'b mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn finish(self) -> Result<usize, HandshakeError> {
        if self.pos > self.out.len() {
            Err(HandshakeError::InsufficientSize { required: self.pos })
        } else {
            Ok(self.pos)
        }
    }

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
