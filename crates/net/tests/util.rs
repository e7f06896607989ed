//! Test peers and a recording handler.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use tickwire_codec::handshake::{RequestStatus, ServerHandshake, write_response};
use tickwire_codec::{
    Config as CodecConfig, Decoder, Message, OpCode, Role, encode_close, encode_frame,
};
use tickwire_net::{
    Backoff, Config, Conn, ConnId, Disconnect, Driver, Handler, Payload, Reconnect, ResponseHead,
    Stamps, TlsConfig,
};

/// An owned copy of what a peer received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    Text(String),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<u16>),
}

// ----- certificates ----------------------------------------------------------

pub(crate) struct Pki {
    /// The test CA, in PEM.
    pub(crate) ca_pem: String,
    /// A CA nobody's certificate chains to.
    pub(crate) other_ca_pem: String,
    /// Serves `localhost` and 127.0.0.1, issued by the test CA.
    pub(crate) server: Arc<ServerConfig>,
    /// Serves only `other.example`, issued by the test CA.
    pub(crate) wrong_name: Arc<ServerConfig>,
    /// The `server` certificate with each TLS 1.3 suite alone.
    pub(crate) tls13_suites: Vec<(&'static str, Arc<ServerConfig>)>,
    /// The `server` certificate, TLS 1.2 only.
    pub(crate) tls12_only: Arc<ServerConfig>,
    /// The `server` certificate and its key, in PEM, for peers not written
    /// in Rust.
    pub(crate) server_cert_pem: String,
    pub(crate) server_key_pem: String,
}

fn ca(name: &str) -> (rcgen::Certificate, rcgen::Issuer<'static, rcgen::KeyPair>) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (cert, rcgen::Issuer::new(params, key))
}

fn server_cert(
    names: &[&str],
    issuer: &rcgen::Issuer<'static, rcgen::KeyPair>,
) -> (rcgen::Certificate, rcgen::KeyPair) {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let mut params = rcgen::CertificateParams::new(names).unwrap();
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, issuer).unwrap();
    (cert, key)
}

fn server_config(cert: &rcgen::Certificate, key: &rcgen::KeyPair) -> Arc<ServerConfig> {
    server_config_with(
        cert,
        key,
        None,
        &[&rustls::version::TLS13, &rustls::version::TLS12],
    )
}

fn server_config_with(
    cert: &rcgen::Certificate,
    key: &rcgen::KeyPair,
    suite: Option<rustls::SupportedCipherSuite>,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<ServerConfig> {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(suite) = suite {
        provider.cipher_suites = vec![suite];
    }
    let config = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(versions)
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    Arc::new(config)
}

pub(crate) fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let (ca_cert, issuer) = ca("tickwire test CA");
        let (other, _) = ca("unrelated CA");
        let (cert, key) = server_cert(&["localhost", "127.0.0.1"], &issuer);
        let (wrong, wrong_key) = server_cert(&["other.example"], &issuer);
        Pki {
            ca_pem: ca_cert.pem(),
            other_ca_pem: other.pem(),
            server: server_config(&cert, &key),
            tls13_suites: [
                (
                    "TLS13_AES_128_GCM_SHA256",
                    rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256,
                ),
                (
                    "TLS13_AES_256_GCM_SHA384",
                    rustls::crypto::ring::cipher_suite::TLS13_AES_256_GCM_SHA384,
                ),
                (
                    "TLS13_CHACHA20_POLY1305_SHA256",
                    rustls::crypto::ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
                ),
            ]
            .into_iter()
            .map(|(name, suite)| {
                (
                    name,
                    server_config_with(&cert, &key, Some(suite), &[&rustls::version::TLS13]),
                )
            })
            .collect(),
            tls12_only: server_config_with(&cert, &key, None, &[&rustls::version::TLS12]),
            wrong_name: server_config(&wrong, &wrong_key),
            server_cert_pem: cert.pem(),
            server_key_pem: key.serialize_pem(),
        }
    })
}

/// Trusts only the test CA.
pub(crate) fn test_tls() -> TlsConfig {
    let mut tls = TlsConfig::empty();
    tls.add_ca_pem(pki().ca_pem.as_bytes()).unwrap();
    tls
}

// ----- a scripted WebSocket server peer --------------------------------------

/// The peer's transport: plain TCP, or rustls over it.
enum Io {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Read for Io {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Io::Plain(s) => s.read(buf),
            Io::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Io {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Io::Plain(s) => s.write(buf),
            Io::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Io::Plain(s) => s.flush(),
            Io::Tls(s) => s.flush(),
        }
    }
}

/// The server end of one test connection, written with blocking sockets and
/// the codec, independent of the driver under test.
pub(crate) struct Peer {
    io: Io,
    decoder: Decoder<Vec<u8>>,
    buf: Vec<u8>,
    pub(crate) path: String,
}

impl Peer {
    fn new(stream: TcpStream, tls: Option<Arc<ServerConfig>>) -> io::Result<Peer> {
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.set_nodelay(true)?;
        let io = match tls {
            Some(config) => {
                let conn = ServerConnection::new(config).map_err(io::Error::other)?;
                Io::Tls(Box::new(StreamOwned::new(conn, stream)))
            }
            None => Io::Plain(stream),
        };
        Ok(Peer {
            io,
            decoder: Decoder::new(Role::Server, CodecConfig::default(), vec![0; 1 << 20]),
            buf: Vec::new(),
            path: String::new(),
        })
    }

    fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 4096];
        let n = self.io.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    /// Reads the upgrade request (without answering it).
    pub(crate) fn read_request(&mut self) -> io::Result<[u8; 28]> {
        let mut hs = ServerHandshake::new();
        loop {
            match hs.parse_request(&self.buf) {
                Ok(RequestStatus::Complete { consumed, request }) => {
                    self.path = request.path.to_owned();
                    let accept = *request.accept();
                    self.buf.drain(..consumed);
                    return Ok(accept);
                }
                Ok(RequestStatus::Partial) => self.fill()?,
                Err(e) => return Err(io::Error::other(e)),
            }
        }
    }

    /// Reads the upgrade request and accepts it.
    pub(crate) fn upgrade(&mut self) -> io::Result<()> {
        let accept = self.read_request()?;
        let mut out = [0u8; 256];
        let n = write_response(&mut out, &accept, None).map_err(io::Error::other)?;
        self.write(&out[..n])
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.io.write_all(bytes)?;
        self.io.flush()
    }

    /// Under TLS, seals each of `records` as a record of its own (one over
    /// 16 KiB as several) and sends them all in one write on the socket.
    pub(crate) fn write_records(&mut self, records: &[&[u8]]) -> io::Result<()> {
        let Io::Tls(tls) = &mut self.io else {
            return Err(io::Error::other("not TLS"));
        };
        tls.conn.set_buffer_limit(None);
        for record in records {
            tls.conn.writer().write_all(record)?;
        }
        let mut wire = Vec::new();
        while tls.conn.wants_write() {
            tls.conn.write_tls(&mut wire)?;
        }
        tls.sock.write_all(&wire)?;
        tls.sock.flush()
    }

    /// Writes `bytes` one byte per write call (one TLS record each under TLS).
    pub(crate) fn write_bytewise(&mut self, bytes: &[u8]) -> io::Result<()> {
        for b in bytes {
            self.write(std::slice::from_ref(b))?;
        }
        Ok(())
    }

    pub(crate) fn frame(opcode: OpCode, fin: bool, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; payload.len() + 14];
        let n = encode_frame(&mut out, opcode, fin, payload, None).unwrap();
        out.truncate(n);
        out
    }

    pub(crate) fn send(&mut self, opcode: OpCode, payload: &[u8]) -> io::Result<()> {
        self.write(&Self::frame(opcode, true, payload))
    }

    pub(crate) fn close(&mut self, code: u16, reason: &str) -> io::Result<()> {
        let mut out = [0u8; 131];
        let n = encode_close(&mut out, Some((code.into(), reason)), None).unwrap();
        self.write(&out[..n])
    }

    /// Sends a TLS 1.3 KeyUpdate that asks for the client's too.
    pub(crate) fn key_update(&mut self) -> io::Result<()> {
        let Io::Tls(tls) = &mut self.io else {
            return Err(io::Error::other("not TLS"));
        };
        tls.conn.refresh_traffic_keys().map_err(io::Error::other)?;
        self.io.flush()
    }

    /// The TLS version the connection negotiated, if it is TLS.
    pub(crate) fn tls_version(&self) -> Option<rustls::ProtocolVersion> {
        match &self.io {
            Io::Tls(tls) => tls.conn.protocol_version(),
            Io::Plain(_) => None,
        }
    }

    /// The next frame-level event from the client.
    pub(crate) fn recv(&mut self) -> io::Result<Ev> {
        loop {
            let mut input = std::mem::take(&mut self.buf);
            let result = match self.decoder.decode(&mut input) {
                Err(e) => Err(io::Error::other(e)),
                Ok(d) => {
                    let ev = d.message.map(|m| match m {
                        Message::Text(t) => Ev::Text(t.to_string()),
                        Message::Binary(b) => Ev::Binary(b.to_vec()),
                        Message::Ping(p) => Ev::Ping(p.to_vec()),
                        Message::Pong(p) => Ev::Pong(p.to_vec()),
                        Message::Close(c) => Ev::Close(c.map(|c| c.code.0)),
                    });
                    Ok((d.consumed, ev))
                }
            };
            let (consumed, ev) = match result {
                Ok(v) => v,
                Err(e) => {
                    self.buf = input;
                    return Err(e);
                }
            };
            input.drain(..consumed);
            self.buf = input;
            match ev {
                Some(ev) => return Ok(ev),
                None => self.fill()?,
            }
        }
    }

    /// The next data message, answering pings on the way.
    pub(crate) fn recv_data(&mut self) -> io::Result<Ev> {
        loop {
            match self.recv()? {
                Ev::Ping(p) => self.send(OpCode::Pong, &p)?,
                Ev::Pong(_) => {}
                other => return Ok(other),
            }
        }
    }

    /// Reads a plain HTTP request head (up to the empty line) and returns
    /// it.
    pub(crate) fn read_http_head(&mut self) -> io::Result<String> {
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head: Vec<u8> = self.buf.drain(..end + 4).collect();
                return Ok(String::from_utf8_lossy(&head).into_owned());
            }
            self.fill()?;
        }
    }

    /// Reads until the client closes the TCP connection (or sends a close).
    pub(crate) fn drain_until_eof(&mut self) {
        while self.fill().is_ok() {}
    }
}

/// A server that runs `script` on each accepted connection, in a thread of
/// its own, with the connection's number (from 0). What scripts report
/// through their `Sender` comes out of [`TestServer::log`].
pub(crate) struct TestServer {
    pub(crate) port: u16,
    pub(crate) log: Receiver<String>,
}

impl TestServer {
    pub(crate) fn start<F>(tls: Option<Arc<ServerConfig>>, script: F) -> TestServer
    where
        F: Fn(&mut Peer, usize, &Sender<String>) -> io::Result<()> + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        Self::serve(listener, tls, script)
    }

    /// Serves on an already bound listener (to control the port).
    pub(crate) fn serve<F>(
        listener: TcpListener,
        tls: Option<Arc<ServerConfig>>,
        script: F,
    ) -> TestServer
    where
        F: Fn(&mut Peer, usize, &Sender<String>) -> io::Result<()> + Send + Sync + 'static,
    {
        let port = listener.local_addr().unwrap().port();
        let (tx, log) = mpsc::channel();
        let script = Arc::new(script);
        thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { continue };
                let (script, tx, tls) = (Arc::clone(&script), tx.clone(), tls.clone());
                thread::spawn(move || {
                    let mut peer = match Peer::new(stream, tls) {
                        Ok(p) => p,
                        Err(e) => return drop(tx.send(format!("peer error: {e}"))),
                    };
                    if let Err(e) = script(&mut peer, n, &tx) {
                        let _ = tx.send(format!("script {n} ended: {e}"));
                    }
                });
            }
        });
        TestServer { port, log }
    }

    pub(crate) fn url(&self, tls: bool, path: &str) -> String {
        let scheme = if tls { "wss" } else { "ws" };
        format!("{scheme}://localhost:{}{path}", self.port)
    }

    /// The next log line, waiting up to 10 s.
    pub(crate) fn next_log(&self) -> String {
        self.log
            .recv_timeout(Duration::from_secs(10))
            .expect("the test server reports within 10 s")
    }
}

// ----- the client side -------------------------------------------------------

/// A handler that records everything and can subscribe on open.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) opened: Vec<ConnId>,
    pub(crate) messages: Vec<(ConnId, Ev)>,
    pub(crate) closed: Vec<(ConnId, Disconnect)>,
    pub(crate) reconnecting: Vec<(ConnId, u32, Duration)>,
    /// Fetch responses: status and body.
    pub(crate) responses: Vec<(ConnId, u16, Vec<u8>)>,
    /// Sent from `on_open`, every time.
    pub(crate) subscribe: Vec<String>,
    /// What `on_close` answers.
    pub(crate) no_reconnect: bool,
    /// Send every data message back (the server role's echo, or Autobahn's).
    pub(crate) echo: bool,
}

impl Recorder {
    /// A recorder whose connections are never reconnected.
    pub(crate) fn once() -> Recorder {
        Recorder {
            no_reconnect: true,
            ..Recorder::default()
        }
    }
}

impl Handler for Recorder {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        self.opened.push(conn.id());
        for s in &self.subscribe {
            conn.send_text(s).expect("subscription queued");
        }
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, stamps: Stamps) {
        assert!(
            stamps.poll <= stamps.read_start
                && stamps.read_start <= stamps.read_end
                && (stamps.decrypted == 0 || stamps.read_end <= stamps.decrypted)
                && stamps.decoded == 0
                && stamps.poll != 0
                && stamps.parsed == 0,
            "{stamps:?}"
        );
        let ev = match payload.as_str() {
            Some(t) => Ev::Text(t.to_string()),
            None => Ev::Binary(payload.as_bytes().to_vec()),
        };
        if self.echo {
            match &ev {
                Ev::Text(t) => conn.send_text(t).expect("echo queued"),
                Ev::Binary(b) => conn.send_binary(b).expect("echo queued"),
                _ => {}
            }
        }
        self.messages.push((conn.id(), ev));
    }

    fn on_response(&mut self, id: ConnId, head: ResponseHead, body: &mut [u8], len: usize) {
        // The promised padding is there and writable.
        assert!(body.len() >= len + tickwire_net::PAYLOAD_PADDING);
        body[len..].fill(0xff);
        self.responses.push((id, head.status, body[..len].to_vec()));
    }

    fn on_close(&mut self, id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        self.closed.push((id, reason.clone()));
        if self.no_reconnect {
            Reconnect::No
        } else {
            Reconnect::Yes
        }
    }

    fn on_reconnecting(&mut self, id: ConnId, attempt: u32, delay: Duration) {
        self.reconnecting.push((id, attempt, delay));
    }
}

/// A configuration for tests: small buffers, no pacing, no heartbeats, and
/// quick reconnects.
pub(crate) fn test_config() -> Config {
    Config {
        max_connections: 4,
        read_buffer_size: 64 * 1024,
        max_message_size: 1 << 20,
        write_buffer_size: 64 * 1024,
        send_rate: None,
        ping_interval: None,
        stale_timeout: None,
        close_timeout: Duration::from_millis(500),
        backoff: Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(200),
            multiplier: 2.0,
            jitter: 0.1,
        },
        ..Config::default()
    }
}

/// Polls `driver` until `done` holds, failing the test after 10 s.
pub(crate) fn run_until<H: Handler>(driver: &mut Driver<H>, what: &str, done: impl Fn(&H) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(driver.handler()) {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
}

/// Polls `driver` for `time`.
pub(crate) fn run_for<H: Handler>(driver: &mut Driver<H>, time: Duration) {
    let end = Instant::now() + time;
    while Instant::now() < end {
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
}
