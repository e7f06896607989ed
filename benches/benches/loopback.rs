//! `loopback`: one TLS 1.3 (AES-128-GCM) WebSocket connection over
//! 127.0.0.1, the same rustls server for every client: tickwire's `Driver`
//! against tungstenite (sync, over rustls's `StreamOwned`), each busy-polling
//! and blocking. The server runs on core 0, the client on core 1.
//!
//! - Throughput: the server writes N pre-encrypted 200-byte messages, either
//!   batched into 16 KiB records or one record per message (as exchanges
//!   send them), as fast as the socket takes them; the client's rate is
//!   messages from its first to its last. A client that only reads the raw
//!   socket shows how fast the server and the loopback can go.
//! - Latency: the server sends one message every 100 us, each in its own
//!   record, stamped with the TSC just before it is encrypted; the client
//!   records stamp -> handler in an HdrHistogram. The server sleeps between
//!   sends: on 2 cores, a spinning server and a spinning client leave the
//!   kernel no CPU to deliver loopback packets (seen: 4 ms at p50). Each
//!   client runs 3 times, interleaved with the others; the table shows the
//!   median of each percentile.
//!
//! `cargo bench -p tickwire-benches --bench loopback [-- N K]`
//! (`cargo test --benches` runs it once, small.)

#![allow(clippy::print_stdout)] // A benchmark reports its results.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use tickwire_benches::tls::{MESSAGE, Pki, pki, server};
use tickwire_codec::handshake::{RequestStatus, ServerHandshake, write_response};
use tickwire_codec::{OpCode, encode_frame};
use tickwire_net::{Config, Conn, Driver, Endpoint, Handler, Payload, PollMode, Stamps, TlsConfig};
use tungstenite::protocol::Message;

const SUITE: rustls::SupportedCipherSuite =
    rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256;
/// Where the 20-digit TSC stamp sits in a latency message.
const STAMP_AT: usize = 40;

#[derive(Clone, Copy)]
enum Load {
    /// N messages in writes of the given size, as fast as the socket takes them.
    Throughput(usize, usize),
    /// K messages, one every `interval`.
    Latency(usize, Duration),
}

/// Writes the send TSC into a latency message, as 20 decimal digits.
fn stamp(msg: &mut [u8], mut stamp: u64) {
    for d in msg[STAMP_AT..STAMP_AT + 20].iter_mut().rev() {
        *d = b'0' + (stamp % 10) as u8;
        stamp /= 10;
    }
}

fn stamp_of(payload: &[u8]) -> u64 {
    payload[STAMP_AT..STAMP_AT + 20]
        .iter()
        .fold(0, |a, &d| a * 10 + u64::from(d - b'0'))
}

fn pin(core: usize) {
    if let Some(id) = core_affinity::get_core_ids().and_then(|ids| ids.into_iter().nth(core)) {
        core_affinity::set_for_current(id);
    }
}

/// Serves one WebSocket-over-TLS connection with `load`. Returns the port
/// and a handle that yields the server's send time.
fn serve(pki: &Pki, load: Load, clock: quanta::Clock) -> (u16, JoinHandle<Duration>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let conn = server(pki, SUITE);
    let handle = thread::spawn(move || {
        pin(0);
        let (sock, _) = listener.accept().unwrap();
        sock.set_nodelay(true).unwrap();
        let mut tls = StreamOwned::new(conn, sock);
        // The WebSocket upgrade.
        let mut request = Vec::new();
        let mut hs = ServerHandshake::new();
        let accept = loop {
            let mut chunk = [0u8; 4096];
            let n = tls.read(&mut chunk).unwrap();
            request.extend_from_slice(&chunk[..n]);
            if let RequestStatus::Complete { request, .. } = hs.parse_request(&request).unwrap() {
                break *request.accept();
            }
        };
        let mut out = [0u8; 256];
        let n = write_response(&mut out, &accept, None).unwrap();
        tls.write_all(&out[..n]).unwrap();
        tls.flush().unwrap();
        let mut frame = [0u8; 256];
        let start = Instant::now();
        match load {
            Load::Throughput(n, write) => {
                // Encrypt everything first, then only write.
                let len = encode_frame(&mut frame, OpCode::Text, true, MESSAGE, None).unwrap();
                let plain = frame[..len].repeat(n);
                let mut wire = Vec::with_capacity(plain.len() * 2);
                for chunk in plain.chunks(write.max(len)) {
                    tls.conn.writer().write_all(chunk).unwrap();
                    while tls.conn.wants_write() {
                        tls.conn.write_tls(&mut wire).unwrap();
                    }
                }
                let start = Instant::now();
                tls.sock.write_all(&wire).unwrap();
                let elapsed = start.elapsed();
                // End of stream tells the raw-socket reader it has it all
                // (it cannot count ciphertext: the WebSocket handshake may
                // have read ahead into it).
                tls.sock.shutdown(std::net::Shutdown::Write).unwrap();
                drain(&mut tls.sock);
                return elapsed;
            }
            Load::Latency(n, interval) => {
                let mut msg = MESSAGE.to_vec();
                for _ in 0..n {
                    // Sleep, leaving the core to the kernel, which delivers
                    // loopback packets on it (a spinning or yielding server,
                    // with a spinning client on the other core, measured
                    // 4 ms and 45 us at p50).
                    thread::sleep(interval);
                    stamp(&mut msg, clock.raw());
                    let len = encode_frame(&mut frame, OpCode::Text, true, &msg, None).unwrap();
                    tls.write_all(&frame[..len]).unwrap(); // one record per message
                    tls.flush().unwrap();
                }
            }
        }
        let elapsed = start.elapsed();
        drain(&mut tls.sock);
        elapsed
    });
    (port, handle)
}

/// Reads until the client goes away.
fn drain(sock: &mut TcpStream) {
    let mut buf = vec![0u8; 1 << 16];
    while sock.read(&mut buf).is_ok_and(|n| n > 0) {}
}

/// What a client measured.
struct Report {
    per_second: f64,
    latency: Histogram<u64>,
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap()
}

struct Measure {
    clock: quanta::Clock,
    want: usize,
    got: usize,
    first: Option<Instant>,
    last: Instant,
    latency: Histogram<u64>,
    stamped: bool,
}

impl Measure {
    fn new(clock: quanta::Clock, want: usize, stamped: bool) -> Measure {
        Measure {
            clock,
            want,
            got: 0,
            first: None,
            last: Instant::now(),
            latency: new_histogram(),
            stamped,
        }
    }

    /// The handler's work, the same for every client: read every payload
    /// byte (a word-wise checksum), and the stamp in latency runs. The wall
    /// clock is read only at the first and the last message.
    fn message(&mut self, payload: &[u8]) {
        if self.stamped {
            let now = self.clock.raw();
            let ns = self.clock.delta_as_nanos(stamp_of(payload), now);
            self.latency.saturating_record(ns.max(1));
        }
        let (words, tail) = payload.as_chunks::<8>();
        let sum = words.iter().fold(0u64, |a, w| a ^ u64::from_le_bytes(*w));
        std::hint::black_box(tail.iter().fold(sum, |a, &b| a ^ u64::from(b)));
        self.got += 1;
        if self.got == 1 {
            self.first = Some(Instant::now());
        }
        if self.got == self.want {
            self.last = Instant::now();
        }
    }

    fn report(self) -> Report {
        let span = self.last - self.first.unwrap_or(self.last);
        Report {
            per_second: (self.got.saturating_sub(1)) as f64 / span.as_secs_f64().max(1e-9),
            latency: self.latency,
        }
    }
}

impl Handler for Measure {
    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        self.message(payload.as_bytes());
    }
}

fn tickwire(pki: &Pki, port: u16, mode: PollMode, measure: Measure) -> Report {
    let mut tls = TlsConfig::empty();
    tls.add_ca_pem(pki.ca_pem.as_bytes()).unwrap();
    let config = Config {
        poll_mode: mode,
        ping_interval: None,
        stale_timeout: None,
        max_connections: 1,
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
        Measure::new(quanta::Clock::new(), 0, false),
    );
    measure.report()
}

fn tungstenite(pki: &Pki, port: u16, busy: bool, mut measure: Measure) -> Report {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_der.clone()).unwrap();
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let conn = ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_nodelay(true).unwrap();
    let stream = StreamOwned::new(conn, sock);
    let (mut ws, _) =
        tungstenite::client::client(format!("wss://localhost:{port}/"), stream).unwrap();
    if busy {
        ws.get_mut().sock.set_nonblocking(true).unwrap();
    }
    while measure.got < measure.want {
        match ws.read() {
            Ok(Message::Text(t)) => measure.message(t.as_bytes()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("tungstenite: {e}"),
        }
    }
    measure.report()
}

/// The server's ceiling: after a real TLS and WebSocket handshake, reads
/// the raw socket without decrypting, until the server ends the stream
/// after the ciphertext of `n` messages.
fn drain_client(pki: &Pki, port: u16, n: usize) -> Report {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_der.clone()).unwrap();
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let conn = ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let stream = StreamOwned::new(conn, sock);
    let (ws, _) = tungstenite::client::client(format!("wss://localhost:{port}/"), stream).unwrap();
    let mut sock = ws.into_inner().sock;
    let mut buf = vec![0u8; 1 << 16];
    let mut first = None;
    while sock.read(&mut buf).unwrap() > 0 {
        first.get_or_insert_with(Instant::now);
    }
    let span = first.map_or(Duration::ZERO, |f| f.elapsed());
    Report {
        per_second: n as f64 / span.as_secs_f64().max(1e-9),
        latency: new_histogram(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let bench = std::env::args().any(|a| a == "--bench");
    let (n, k) = match (args.first(), args.get(1)) {
        (Some(n), Some(k)) => (n.parse().unwrap(), k.parse().unwrap()),
        _ if bench => (500_000, 20_000),
        _ => (2_000, 200), // `cargo test --benches`: a smoke run
    };
    pin(1);
    let pki = pki();
    let clock = quanta::Clock::new();
    let clients: [(&str, &str); 4] = [
        ("tickwire", "busy-poll"),
        ("tickwire", "blocking"),
        ("tungstenite", "busy-poll"),
        ("tungstenite", "blocking"),
    ];
    let run = |client: &str, mode: &str, load: Load| -> (Report, Duration) {
        let (port, server) = serve(&pki, load, clock.clone());
        let (want, stamped) = match load {
            Load::Throughput(n, _) => (n, false),
            Load::Latency(k, _) => (k, true),
        };
        let measure = Measure::new(clock.clone(), want, stamped);
        let report = match (client, mode) {
            ("tickwire", "busy-poll") => tickwire(&pki, port, PollMode::BusyPoll, measure),
            ("tickwire", _) => tickwire(&pki, port, PollMode::Blocking, measure),
            (_, "busy-poll") => tungstenite(&pki, port, true, measure),
            _ => tungstenite(&pki, port, false, measure),
        };
        (report, server.join().unwrap())
    };

    println!(
        "loopback: TLS 1.3 AES-128-GCM, {} B messages, server on core 0, client on core 1",
        MESSAGE.len()
    );
    println!("throughput: {n} messages, median of 3 runs");
    println!(
        "{:<12} {:<10} {:<16} {:>12} {:>18}",
        "client", "mode", "records", "messages/s", "server write time"
    );
    {
        let mut rates = Vec::new();
        for _ in 0..3 {
            let (port, server) = serve(&pki, Load::Throughput(n, 64 * 1024), clock.clone());
            rates.push(drain_client(&pki, port, n).per_second);
            server.join().unwrap();
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{:<12} {:<10} {:<16} {:>12.0} {:>18}",
            "raw socket", "blocking", "16 KiB", rates[1], "(the ceiling)"
        );
    }
    for (records, write) in [("16 KiB", 64 * 1024), ("one per message", 0)] {
        for (client, mode) in clients {
            let mut rates = Vec::new();
            let mut server_time = Duration::ZERO;
            for _ in 0..3 {
                let (report, sent) = run(client, mode, Load::Throughput(n, write));
                rates.push(report.per_second);
                server_time = sent;
            }
            rates.sort_by(f64::total_cmp);
            println!(
                "{client:<12} {mode:<10} {records:<16} {:>12.0} {:>15.1} ms",
                rates[1],
                server_time.as_secs_f64() * 1e3
            );
        }
    }
    println!();
    println!(
        "latency: {k} messages, one every 100 us, one record each; stamp -> handler, microseconds"
    );
    println!(
        "{:<12} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9}",
        "client", "mode", "p50", "p90", "p99", "p99.9", "max"
    );
    let mut runs: Vec<Vec<Histogram<u64>>> = vec![Vec::new(); clients.len()];
    for _ in 0..3 {
        for (i, (client, mode)) in clients.iter().enumerate() {
            let (report, _) = run(client, mode, Load::Latency(k, Duration::from_micros(100)));
            runs[i].push(report.latency);
        }
    }
    for ((client, mode), histograms) in clients.iter().zip(&runs) {
        let median = |f: &dyn Fn(&Histogram<u64>) -> u64| {
            let mut v: Vec<u64> = histograms.iter().map(f).collect();
            v.sort_unstable();
            v[v.len() / 2] as f64 / 1000.0
        };
        println!(
            "{client:<12} {mode:<10} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1}",
            median(&|h| h.value_at_quantile(0.5)),
            median(&|h| h.value_at_quantile(0.9)),
            median(&|h| h.value_at_quantile(0.99)),
            median(&|h| h.value_at_quantile(0.999)),
            median(&|h| h.max()),
        );
    }
}
