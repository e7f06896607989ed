//! The clients. tungstenite, nexus-web and the ceiling read through the very
//! same rustls `StreamOwned` (built by `rustls_stream`), so that among them
//! only the WebSocket layer differs; tickwire's `Driver` brings its own TLS
//! record layer. Every client hands each payload to `Measure::message`.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use rustls::{ClientConnection, StreamOwned};
use tickwire_benches::tls::{MESSAGE, Pki, client};
use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus, Request};
use tickwire_net::{Config, Driver, Endpoint, PollMode, TlsConfig};
use tickwire_tsc::Calibration;
use tungstenite::protocol::Message;

use crate::measure::{Measure, Report};

/// Connects `client` in `mode` to the server on `port` and runs it until
/// `measure` has all it wants. `sizes` are tickwire's
/// `Config::read_buffer_size` and `Config::max_read`.
pub(crate) fn run(
    pki: &Pki,
    port: u16,
    (client, mode): (&str, &str),
    sizes: (usize, usize),
    measure: Measure,
) -> Report {
    let busy = mode != "blocking";
    match client {
        "tickwire" => {
            let mode = match mode {
                "busy-poll" => PollMode::BusyPoll,
                "busy-read" => PollMode::BusyRead,
                _ => PollMode::Blocking,
            };
            tickwire(pki, port, mode, sizes, measure)
        }
        "tungstenite" => tungstenite(pki, port, busy, measure),
        "nexus-web" => nexus_web(pki, port, busy, measure),
        "ceiling" => ceiling(pki, port, busy, measure),
        other => panic!("unknown client {other:?}"),
    }
}

fn tickwire(
    pki: &Pki,
    port: u16,
    mode: PollMode,
    (read_buffer, max_read): (usize, usize),
    measure: Measure,
) -> Report {
    let mut tls = TlsConfig::empty();
    tls.add_ca_pem(pki.ca_pem.as_bytes()).unwrap();
    let config = Config {
        poll_mode: mode,
        ping_interval: None,
        stale_timeout: None,
        max_connections: 1,
        read_buffer_size: read_buffer,
        max_read,
        ..Config::default()
    };
    let mut driver = Driver::new(config, &tls, measure).unwrap();
    driver
        .connect(Endpoint::parse(&format!("wss://localhost:{port}/")).unwrap())
        .unwrap();
    while driver.handler().got < driver.handler().want {
        driver.poll_timeout(Duration::from_millis(100)).unwrap();
    }
    let measure = std::mem::replace(
        driver.handler_mut(),
        Measure::new(tickwire_tsc::calibration(), 0, false),
    );
    measure.report()
}

/// A socket that notes when its last read returned data, so that
/// tungstenite's read -> handler time is measured from the same point as
/// tickwire's `Stamps::read`.
pub(crate) struct StampedSocket {
    sock: TcpStream,
    clock: Calibration,
    last_read: u64,
}

impl Read for StampedSocket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.sock.read(buf)?;
        if n > 0 {
            self.last_read = self.clock.clock().now();
        }
        Ok(n)
    }
}

impl Write for StampedSocket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sock.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.sock.flush()
    }
}

/// The TLS stream under tungstenite, nexus-web and the ceiling: rustls's
/// blocking `StreamOwned` over the (stamped) socket. The TLS handshake
/// runs on the first write.
type RustlsStream = StreamOwned<ClientConnection, StampedSocket>;

fn rustls_stream(pki: &Pki, port: u16, clock: Calibration) -> RustlsStream {
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_nodelay(true).unwrap();
    let sock = StampedSocket {
        sock,
        clock,
        last_read: 0,
    };
    StreamOwned::new(client(pki), sock)
}

/// tungstenite's sync `WebSocket`; busy: spinning on `read` over a
/// non-blocking socket.
fn tungstenite(pki: &Pki, port: u16, busy: bool, mut measure: Measure) -> Report {
    let stream = rustls_stream(pki, port, measure.clock);
    let (mut ws, _) =
        tungstenite::client::client(format!("wss://localhost:{port}/"), stream).unwrap();
    if busy {
        ws.get_mut().sock.sock.set_nonblocking(true).unwrap();
    }
    while measure.got < measure.want {
        match ws.read() {
            Ok(Message::Text(t)) => {
                measure.read_stamp = ws.get_ref().sock.last_read;
                measure.message(t.as_bytes());
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("tungstenite: {e}"),
        }
    }
    measure.report()
}

/// nexus-web's blocking `ws::Client<S: Read + Write>`: its own HTTP upgrade
/// (`Client::connect_with`), then `recv`, which fills its `FrameReader`
/// (`read_from`: library defaults, a 1 MiB buffer compacted when full) and
/// hands out zero-copy messages, text validated as UTF-8. Busy: spinning on
/// `recv` over a non-blocking socket (it returns `None` on `WouldBlock`).
fn nexus_web(pki: &Pki, port: u16, busy: bool, mut measure: Measure) -> Report {
    use nexus_web::ws::{Client, Message};
    let stream = rustls_stream(pki, port, measure.clock);
    let mut ws = Client::connect_with(stream, &format!("wss://localhost:{port}/")).unwrap();
    if busy {
        ws.stream_mut().sock.sock.set_nonblocking(true).unwrap();
    }
    while measure.got < measure.want {
        match ws.recv() {
            Ok(Some(Message::Text(t))) => measure.message(t.as_bytes()),
            Ok(_) => {}
            Err(e) => panic!("nexus-web: {e}"),
        }
    }
    measure.report()
}

/// The ceiling of a WebSocket client over `StreamOwned`: the least framing
/// that works for this server, and nothing else (no opcode, UTF-8 or
/// length checks, no control frames). Reads into one buffer and frames in
/// place; the partial frame at the end moves to the front before the next
/// read. Busy: spinning on `read` over a non-blocking socket.
fn ceiling(pki: &Pki, port: u16, busy: bool, mut measure: Measure) -> Report {
    let mut tls = rustls_stream(pki, port, measure.clock);
    let mut buf = vec![0u8; 64 * 1024];
    // The upgrade by tickwire-codec: frames follow the response's header block.
    let host = format!("localhost:{port}");
    let request = Request::new(&host, "/");
    let mut hs = ClientHandshake::new(*b"loopback ceiling");
    let n = hs.write_request(&mut buf, &request).unwrap();
    tls.write_all(&buf[..n]).unwrap();
    tls.flush().unwrap();
    let mut end = 0;
    let mut start = loop {
        end += tls.read(&mut buf[end..]).unwrap();
        if let HandshakeStatus::Complete { consumed, .. } =
            hs.parse_response(&buf[..end], &[]).unwrap()
        {
            break consumed;
        }
    };
    if busy {
        tls.sock.sock.set_nonblocking(true).unwrap();
    }
    loop {
        while let Some((header, len)) = frame(&buf[start..end]) {
            measure.message(&buf[start + header..start + header + len]);
            start += header + len;
        }
        if measure.got >= measure.want {
            return measure.report();
        }
        buf.copy_within(start..end, 0);
        end -= start;
        start = 0;
        assert!(end < buf.len(), "a frame larger than the ceiling's buffer");
        match tls.read(&mut buf[end..]) {
            Ok(0) => panic!("the server stopped early"),
            Ok(n) => end += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("ceiling: {e}"),
        }
    }
}

/// The header and payload lengths of the frame at the start of `b`, if it
/// is all there. Server frames are unmasked: a 2-byte header, then a 16-
/// or 64-bit length for payloads over 125 bytes.
fn frame(b: &[u8]) -> Option<(usize, usize)> {
    let (header, len) = match *b.get(1)? & 0x7f {
        126 => (
            4,
            usize::from(u16::from_be_bytes(b.get(2..4)?.try_into().ok()?)),
        ),
        127 => (
            10,
            usize::try_from(u64::from_be_bytes(b.get(2..10)?.try_into().ok()?)).ok()?,
        ),
        n => (2, usize::from(n)),
    };
    (b.len() >= header + len).then_some((header, len))
}

/// The server's ceiling: after a real TLS and WebSocket handshake, spins
/// reading the raw socket 64 KiB at a time without decrypting, until the
/// server ends the stream after the ciphertext of all its messages.
/// Returns when the end came; the rate counts from when the server began
/// to write, not from the first read, which may return bytes sent before
/// the server encrypted its load (such as TLS session tickets).
pub(crate) fn raw_socket(pki: &Pki, port: u16) -> Instant {
    let conn = client(pki);
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let stream = StreamOwned::new(conn, sock);
    let (ws, _) = tungstenite::client::client(format!("wss://localhost:{port}/"), stream).unwrap();
    let mut sock = ws.into_inner().sock;
    // Spinning: a sleeping reader costs the server's core a wake-up every
    // few segments.
    sock.set_nonblocking(true).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match sock.read(&mut buf) {
            Ok(0) => return Instant::now(),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("raw socket: {e}"),
        }
    }
}

/// The latency floor's client: reads `MESSAGE.len()`-byte messages from
/// plain TCP in one of tickwire's three ways: spinning on `read` of a
/// non-blocking socket (`busy-read`), spinning on `epoll_wait` with a zero
/// timeout and reading what it reports (`busy-poll`, through mio as
/// tickwire does), or blocking in `read`. Without TLS or WebSocket work, the
/// difference between the rows is what each way of waiting costs.
pub(crate) fn plain_tcp(port: u16, mode: &str, mut measure: Measure) -> Report {
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_nodelay(true).unwrap();
    sock.set_nonblocking(mode != "blocking").unwrap();
    let mut sock = mio::net::TcpStream::from_std(sock);
    let mut poll = mio::Poll::new().unwrap();
    let mut events = mio::Events::with_capacity(8);
    if mode == "busy-poll" {
        poll.registry()
            .register(&mut sock, mio::Token(0), mio::Interest::READABLE)
            .unwrap();
    }
    let mut msg = MESSAGE.to_vec();
    let mut got = 0;
    while measure.got < measure.want {
        if mode == "busy-poll" {
            poll.poll(&mut events, Some(Duration::ZERO)).unwrap();
            if events.is_empty() {
                continue;
            }
        }
        // Read until the socket is drained (edge-triggered for busy-poll).
        loop {
            match sock.read(&mut msg[got..]) {
                Ok(0) => panic!("the server stopped early"),
                Ok(n) => {
                    got += n;
                    measure.read_stamp = measure.clock.clock().now();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("plain TCP: {e}"),
            }
            if got == msg.len() {
                measure.message(&msg);
                got = 0;
            }
            if mode == "blocking" || measure.got == measure.want {
                break;
            }
        }
    }
    measure.report()
}
