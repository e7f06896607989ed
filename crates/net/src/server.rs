//! A small blocking server role, for exchange simulators and tests: TLS
//! (rustls) or plain TCP, one thread per connection, each request either
//! answered as plain HTTP (a REST snapshot) or upgraded to WebSocket with
//! `tickwire-codec`'s server handshake and frames.
//!
//! It is not the receive path and is not tuned like it: it allocates its
//! buffers per connection and blocks on writes. What it guarantees is what
//! a simulator needs: a real TLS 1.3 server, byte-exact frames (text and
//! binary), and a [`Session::send_text`] that returns once the frame is
//! handed to the kernel (so a send stamp taken just before it is honest).

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use tickwire_codec::handshake::{
    HandshakeError, RequestStatus, ServerHandshake, write_rejection, write_response,
};
use tickwire_codec::{CloseCode, OpCode, Role};
use tickwire_codec::{Config as DecodeConfig, Decoder, Message};
use tickwire_codec::{encode_close, encode_frame};

use crate::tls::TlsConfigError;

/// The largest request head a session reads.
const MAX_HEAD: usize = 16 * 1024;
/// The largest message a session accepts from a client.
const MAX_MESSAGE: usize = 64 * 1024;

/// A server certificate and key, for [`Server::bind`].
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// A TLS 1.3 / 1.2 server (ring provider) presenting the PEM
    /// certificate chain `chain` (leaf first) with the PEM private key `key`.
    pub fn from_pem(chain: &[u8], key: &[u8]) -> Result<ServerTls, TlsConfigError> {
        let certs = CertificateDer::pem_slice_iter(chain)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TlsConfigError::Pem(e.to_string()))?;
        if certs.is_empty() {
            return Err(TlsConfigError::NoCertificates);
        }
        let key =
            PrivateKeyDer::from_pem_slice(key).map_err(|e| TlsConfigError::Pem(e.to_string()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsConfigError::Certificate(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| TlsConfigError::Certificate(e.to_string()))?;
        Ok(ServerTls {
            config: Arc::new(config),
        })
    }
}

/// A listening socket; [`accept`](Server::accept) hands out [`Session`]s.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    tls: Option<ServerTls>,
}

impl Server {
    /// Listens on `addr` (port 0 picks a free one: see
    /// [`local_addr`](Server::local_addr)), with TLS when `tls` is given.
    pub fn bind(addr: SocketAddr, tls: Option<ServerTls>) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Server { listener, tls })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Waits up to `timeout` for a client; `Ok(None)` if none came. The TLS
    /// handshake happens on the session's first read.
    pub fn accept(&self, timeout: Duration) -> io::Result<Option<Session>> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    stream.set_nonblocking(false)?;
                    stream.set_nodelay(true)?;
                    let stream = match &self.tls {
                        None => Stream::Plain(stream),
                        Some(tls) => {
                            let conn = ServerConnection::new(Arc::clone(&tls.config))
                                .map_err(io::Error::other)?;
                            Stream::Tls(Box::new(StreamOwned::new(conn, stream)))
                        }
                    };
                    return Ok(Some(Session {
                        stream,
                        peer,
                        input: Vec::with_capacity(MAX_HEAD),
                        decoder: Decoder::new(
                            Role::Server,
                            DecodeConfig::default(),
                            vec![0; MAX_MESSAGE],
                        ),
                        out: Vec::with_capacity(1 << 16),
                        upgraded: false,
                        pending_accept: None,
                        close_sent: false,
                        pings: 0,
                        pongs: 0,
                    }));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Ok(None);
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// What a client asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// A WebSocket upgrade of this path (with its query); answer with
    /// [`Session::accept_websocket`].
    WebSocket {
        /// The request target.
        path: String,
        /// The request's headers, names as sent (a venue may refuse an
        /// upgrade without one, as Binance's SBE streams refuse one
        /// without an API key).
        headers: Vec<(String, String)>,
    },
    /// A plain HTTP GET of this path (with its query); answer with
    /// [`Session::respond`].
    Get {
        /// The request target.
        path: String,
    },
}

/// What a client sent on an upgraded session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A text message.
    Text(String),
    /// A binary message.
    Binary(Vec<u8>),
    /// The client closed (the close is answered).
    Closed(Option<CloseCode>),
}

/// Why a session failed.
#[derive(Debug)]
pub enum ServerError {
    /// The socket or TLS failed (a TLS failure is an `io::Error` from rustls).
    Io(io::Error),
    /// The request was not a valid HTTP GET or WebSocket upgrade (it was
    /// answered with 400 or 426).
    Handshake(HandshakeError),
    /// The client broke the WebSocket protocol (the session sent a close
    /// with the matching code).
    Protocol(tickwire_codec::ProtocolError),
    /// The client went away.
    Eof,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Io(e) => write!(f, "socket: {e}"),
            ServerError::Handshake(e) => write!(f, "bad request: {e}"),
            ServerError::Protocol(e) => write!(f, "protocol error: {e}"),
            ServerError::Eof => f.write_str("the client went away"),
        }
    }
}

impl std::error::Error for ServerError {}

impl From<io::Error> for ServerError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            ServerError::Eof
        } else {
            ServerError::Io(e)
        }
    }
}

/// One client connection.
pub struct Session {
    stream: Stream,
    peer: SocketAddr,
    /// Received bytes not consumed yet.
    input: Vec<u8>,
    decoder: Decoder<Vec<u8>>,
    out: Vec<u8>,
    upgraded: bool,
    /// The `Sec-WebSocket-Accept` of a read upgrade request.
    pending_accept: Option<[u8; 28]>,
    /// A close frame was sent: nothing may follow it.
    close_sent: bool,
    /// Pings received (each answered).
    pings: u64,
    /// Pongs received.
    pongs: u64,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("peer", &self.peer)
            .field("upgraded", &self.upgraded)
            .finish_non_exhaustive()
    }
}

/// The header fields of a request head the codec has accepted (so it
/// parses), names and values as sent.
fn head_fields(head: &[u8]) -> Vec<(String, String)> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut fields);
    let _ = req.parse(head);
    req.headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect()
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl Session {
    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The pings the client has sent so far (counted as
    /// [`recv`](Self::recv) reads and answers them): for a server that
    /// counts them against a limit on incoming messages, as Binance does.
    pub fn pings_received(&self) -> u64 {
        self.pings
    }

    /// The pongs the client has sent so far (counted as
    /// [`recv`](Self::recv) reads and skips them).
    pub fn pongs_received(&self) -> u64 {
        self.pongs
    }

    /// Reads more input; `Ok(false)` on a read timeout.
    fn fill(&mut self) -> Result<bool, ServerError> {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => Err(ServerError::Eof),
            Ok(n) => {
                self.input.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) if is_timeout(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// [`Session::fill`] without waiting.
    fn fill_now(&mut self) -> Result<bool, ServerError> {
        self.stream.tcp().set_nonblocking(true)?;
        let filled = self.fill();
        self.stream.tcp().set_nonblocking(false)?;
        filled
    }

    /// Reads the request head (completing the TLS handshake first), within
    /// `timeout`. A malformed upgrade is answered (400 or 426) and returned
    /// as an error.
    pub fn read_request(&mut self, timeout: Duration) -> Result<Request, ServerError> {
        self.stream.tcp().set_read_timeout(Some(timeout))?;
        let deadline = Instant::now() + timeout;
        let mut handshake = ServerHandshake::new();
        handshake.set_max_request_len(MAX_HEAD);
        loop {
            match handshake.parse_request(&self.input) {
                Ok(RequestStatus::Complete { consumed, request }) => {
                    let path = request.path.to_owned();
                    let accept = *request.accept();
                    let headers = head_fields(&self.input[..consumed]);
                    self.input.drain(..consumed);
                    self.pending_accept = Some(accept);
                    return Ok(Request::WebSocket { path, headers });
                }
                Ok(RequestStatus::Partial) => {}
                Err(HandshakeError::MissingUpgrade | HandshakeError::MissingConnectionUpgrade) => {
                    // Not an upgrade: a plain GET.
                    let mut headers = [httparse::EMPTY_HEADER; 32];
                    let mut req = httparse::Request::new(&mut headers);
                    if let Ok(httparse::Status::Complete(n)) = req.parse(&self.input)
                        && req.method == Some("GET")
                    {
                        let path = req.path.unwrap_or("/").to_owned();
                        self.input.drain(..n);
                        return Ok(Request::Get { path });
                    }
                    return Err(self.reject(HandshakeError::Malformed));
                }
                Err(e) => return Err(self.reject(e)),
            }
            if Instant::now() >= deadline {
                return Err(ServerError::Io(io::ErrorKind::TimedOut.into()));
            }
            self.fill()?;
        }
    }

    fn reject(&mut self, error: HandshakeError) -> ServerError {
        let mut out = [0u8; 256];
        if let Ok(n) = write_rejection(&mut out, error) {
            let _ = self.stream.write_all(&out[..n]);
            let _ = self.stream.flush();
        }
        ServerError::Handshake(error)
    }

    /// Answers a [`Request::Get`] with `status` and `body` (and closes the
    /// connection after it, as `Connection: close` says).
    pub fn respond(
        &mut self,
        status: u16,
        content_type: &str,
        body: &[u8],
    ) -> Result<(), ServerError> {
        self.respond_with(status, content_type, &[], body)
    }

    /// [`respond`](Self::respond) with more headers (`Retry-After`, say).
    pub fn respond_with(
        &mut self,
        status: u16,
        content_type: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<(), ServerError> {
        let reason = match status {
            200 => "OK",
            400 => "Bad Request",
            403 => "Forbidden",
            404 => "Not Found",
            418 => "I'm a teapot",
            429 => "Too Many Requests",
            _ => "Status",
        };
        self.out.clear();
        let mut head = format!("HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ));
        self.out.extend_from_slice(head.as_bytes());
        self.out.extend_from_slice(body);
        let result = self
            .stream
            .write_all(&self.out)
            .and_then(|()| self.stream.flush());
        self.out.clear();
        result?;
        if let Stream::Tls(s) = &mut self.stream {
            s.conn.send_close_notify();
            let _ = s.flush();
        }
        Ok(())
    }

    /// Accepts the [`Request::WebSocket`] just read: writes the `101`
    /// answer. Frames may be sent from then on.
    pub fn accept_websocket(&mut self) -> Result<(), ServerError> {
        let accept = self
            .pending_accept
            .take()
            .ok_or(ServerError::Handshake(HandshakeError::InvalidRequest))?;
        let mut out = [0u8; 256];
        let n = write_response(&mut out, &accept, None).map_err(ServerError::Handshake)?;
        self.stream.write_all(&out[..n])?;
        self.stream.flush()?;
        self.upgraded = true;
        Ok(())
    }

    /// Appends a frame to the queued output.
    fn queue_frame(&mut self, opcode: OpCode, payload: &[u8]) -> Result<(), ServerError> {
        if self.close_sent {
            return Err(ServerError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                "a close frame was sent",
            )));
        }
        let at = self.out.len();
        self.out.resize(at + payload.len() + 14, 0);
        let n = encode_frame(&mut self.out[at..], opcode, true, payload, None)
            .map_err(|_| ServerError::Io(io::ErrorKind::InvalidInput.into()))?;
        self.out.truncate(at + n);
        Ok(())
    }

    fn send_frame(&mut self, opcode: OpCode, payload: &[u8]) -> Result<(), ServerError> {
        self.queue_frame(opcode, payload)?;
        self.flush()
    }

    /// Sends a text message (one unmasked frame, after any queued ones)
    /// and returns once it has been written to the socket.
    pub fn send_text(&mut self, text: &str) -> Result<(), ServerError> {
        self.send_frame(OpCode::Text, text.as_bytes())
    }

    /// Queues a text message without writing it: [`flush`](Self::flush)
    /// writes every queued frame in one go (one TLS write, one system
    /// call), which is how a simulator sends a burst.
    pub fn queue_text(&mut self, text: &str) -> Result<(), ServerError> {
        self.queue_frame(OpCode::Text, text.as_bytes())
    }

    /// Queues a binary message (one unmasked frame) without writing it,
    /// as [`queue_text`](Self::queue_text) does a text one: for a venue
    /// whose market data is binary (Binance's SBE streams), in order with
    /// the text frames queued around it.
    pub fn queue_binary(&mut self, data: &[u8]) -> Result<(), ServerError> {
        self.queue_frame(OpCode::Binary, data)
    }

    /// Writes every queued frame to the socket.
    pub fn flush(&mut self) -> Result<(), ServerError> {
        if !self.out.is_empty() {
            let result = self
                .stream
                .write_all(&self.out)
                .and_then(|()| self.stream.flush());
            self.out.clear();
            result?;
        }
        Ok(())
    }

    /// Sends a ping.
    pub fn send_ping(&mut self, data: &[u8]) -> Result<(), ServerError> {
        self.send_frame(OpCode::Ping, data)
    }

    /// Sends a close frame with `code` (once: later sends fail). The
    /// session should then be read until the client's close or
    /// [`ServerError::Eof`].
    pub fn send_close(&mut self, code: CloseCode, reason: &str) -> Result<(), ServerError> {
        let mut out = [0u8; 132];
        let n = encode_close(&mut out, Some((code, reason)), None)
            .map_err(|_| ServerError::Io(io::ErrorKind::InvalidInput.into()))?;
        self.flush()?;
        self.close_sent = true;
        self.stream.write_all(&out[..n])?;
        self.stream.flush()?;
        Ok(())
    }

    /// The next message from the client, waiting at most `timeout`
    /// (`Ok(None)`: nothing yet). Pings are answered and pongs skipped,
    /// both counted ([`pings_received`](Self::pings_received),
    /// [`pongs_received`](Self::pongs_received)); a close is answered and
    /// returned.
    ///
    /// `Duration::ZERO` never waits: only bytes that have already arrived
    /// are read. (A socket read timeout is rounded up to the kernel's tick,
    /// milliseconds, so a tiny timeout would stall a sender that polls.)
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Incoming>, ServerError> {
        let poll = timeout.is_zero();
        if !poll {
            self.stream.tcp().set_read_timeout(Some(timeout))?;
        }
        let deadline = Instant::now() + timeout;
        loop {
            let decoded = match self.decoder.decode(&mut self.input) {
                Ok(d) => d,
                Err(e) => {
                    let _ = self.send_close(e.close_code(), "");
                    return Err(ServerError::Protocol(e));
                }
            };
            let consumed = decoded.consumed;
            let message = match decoded.message {
                None => None,
                Some(Message::Text(t)) => Some(Some(Incoming::Text(t.to_owned()))),
                Some(Message::Binary(b)) => Some(Some(Incoming::Binary(b.to_vec()))),
                Some(Message::Ping(p)) => {
                    self.pings += 1;
                    let p = p.to_vec();
                    self.input.drain(..consumed);
                    if !self.close_sent {
                        self.send_frame(OpCode::Pong, &p)?;
                    }
                    continue;
                }
                Some(Message::Pong(_)) => {
                    self.pongs += 1;
                    Some(None)
                }
                Some(Message::Close(c)) => {
                    let code = c.map(|c| c.code);
                    Some(Some(Incoming::Closed(code)))
                }
            };
            self.input.drain(..consumed);
            match message {
                Some(Some(Incoming::Closed(code))) => {
                    if !self.close_sent {
                        let _ = self.send_close(code.unwrap_or(CloseCode::NORMAL), "");
                    }
                    return Ok(Some(Incoming::Closed(code)));
                }
                Some(Some(m)) => return Ok(Some(m)),
                Some(None) => continue,
                None => {}
            }
            let filled = if poll { self.fill_now()? } else { self.fill()? };
            if !filled && (poll || Instant::now() >= deadline) {
                return Ok(None);
            }
        }
    }
}
