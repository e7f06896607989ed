//! `loopback`: one TLS 1.3 (AES-128-GCM) WebSocket connection over
//! 127.0.0.1, the same rustls server for every client: tickwire's `Driver`
//! against tungstenite (sync, over rustls's `StreamOwned`), each spinning and
//! blocking (tickwire spins two ways: on epoll, `BusyPoll`, and on the socket,
//! `BusyRead`, as tungstenite over a non-blocking socket does). The server runs on core 0, the client on core 1.
//!
//! - Throughput: the server writes N pre-encrypted 200-byte messages, either
//!   batched into 16 KiB records or one record per message (as exchanges
//!   send them), as fast as the socket takes them; the client's rate is
//!   messages from its first to its last. A client that only reads the raw
//!   socket shows how fast the server and the loopback can go.
//! - Latency: the server sends one message every 100 us, each in its own
//!   record, stamped with the TSC just before it is encrypted; the client
//!   records stamp -> handler in an HdrHistogram. The server spins between
//!   sends (`LOOPBACK_SERVER_SLEEP=1`: it sleeps; every row is then ~3 us
//!   slower, and the tails shorter, since no vCPU is kept busy). Each
//!   client runs 5 times, interleaved with the others; the table shows the
//!   median of each percentile, and how often tickwire beat tungstenite.
//!   A plain TCP client of a plain TCP server with the same cadence (no TLS,
//!   no WebSocket), waiting in each of tickwire's three ways, shows the floor
//!   the kernel and the VM set, and what each way of waiting costs.
//!
//! `cargo bench -p tickwire-benches --bench loopback [-- N K [throughput|latency]]`
//! (`cargo test --benches` runs it once, small.)

#![allow(clippy::print_stdout)] // A benchmark reports its results.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rustls::StreamOwned;
use tickwire_benches::tls::{MESSAGE, Pki, client, pki, server};
use tickwire_codec::handshake::{RequestStatus, ServerHandshake, write_response};
use tickwire_codec::{OpCode, encode_frame};
use tickwire_net::{Config, Conn, Driver, Endpoint, Handler, Payload, PollMode, Stamps, TlsConfig};
use tickwire_tsc::Calibration;
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

/// Pins the calling thread to `core` by its number. (Not through
/// `core_affinity::get_core_ids`, which lists only the cores the caller's
/// current mask allows: a thread spawned by an already pinned thread would
/// find only its parent's core, and both ends would share it.)
fn pin(core: usize) {
    if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
        eprintln!("loopback: could not pin a thread to core {core}; numbers will be noisy");
    }
}

/// Waits `interval` between two latency messages: spinning, so that the
/// server's core is awake when it sends (loopback delivery runs on the
/// sender's core), or, with `LOOPBACK_SERVER_SLEEP` set, sleeping.
fn pace(interval: Duration) {
    if std::env::var_os("LOOPBACK_SERVER_SLEEP").is_some() {
        thread::sleep(interval);
    } else {
        let until = Instant::now() + interval;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}

/// Serves one WebSocket-over-TLS connection with `load`. Returns the port
/// and a handle that yields the server's send time.
fn serve(pki: &Pki, load: Load, clock: Calibration) -> (u16, JoinHandle<Duration>) {
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
                    pace(interval);
                    stamp(&mut msg, clock.clock().now());
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

/// The latency floor's server: the same cadence and stamp as
/// `Load::Latency`, written as raw bytes over plain TCP.
fn serve_plain(k: usize, interval: Duration, clock: Calibration) -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = thread::spawn(move || {
        pin(0);
        let (mut sock, _) = listener.accept().unwrap();
        sock.set_nodelay(true).unwrap();
        let mut msg = MESSAGE.to_vec();
        for _ in 0..k {
            pace(interval);
            stamp(&mut msg, clock.clock().now());
            sock.write_all(&msg).unwrap();
        }
        drain(&mut sock);
    });
    (port, handle)
}

/// The latency floor's client: reads `MESSAGE.len()`-byte messages from
/// plain TCP in one of tickwire's three ways: spinning on `read` of a
/// non-blocking socket (`busy-read`), spinning on `epoll_wait` with a zero
/// timeout and reading what it reports (`busy-poll`, through mio as
/// tickwire does), or blocking in `read`. Without TLS or WebSocket work, the
/// difference between the rows is what each way of waiting costs.
fn plain_client(port: u16, mode: &str, mut measure: Measure) -> Report {
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

/// Reads until the client goes away.
fn drain(sock: &mut TcpStream) {
    let mut buf = vec![0u8; 1 << 16];
    while sock.read(&mut buf).is_ok_and(|n| n > 0) {}
}

/// What a client measured.
struct Report {
    per_second: f64,
    latency: Histogram<u64>,
    library: Histogram<u64>,
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap()
}

struct Measure {
    clock: Calibration,
    want: usize,
    got: usize,
    first: Option<Instant>,
    last: Instant,
    latency: Histogram<u64>,
    /// Read return -> handler: the client library's own share.
    library: Histogram<u64>,
    /// When the socket read that brought the current message returned.
    read_stamp: u64,
    stamped: bool,
}

impl Measure {
    fn new(clock: Calibration, want: usize, stamped: bool) -> Measure {
        Measure {
            clock,
            want,
            got: 0,
            first: None,
            last: Instant::now(),
            latency: new_histogram(),
            library: new_histogram(),
            read_stamp: 0,
            stamped,
        }
    }

    /// The handler's work, the same for every client: read every payload
    /// byte (a word-wise checksum), and the stamp in latency runs. The wall
    /// clock is read only at the first and the last message.
    fn message(&mut self, payload: &[u8]) {
        if self.stamped {
            let now = self.clock.clock().now();
            let ns = self.clock.ns_between(stamp_of(payload), now);
            self.latency.saturating_record(ns.max(1));
            let ns = self.clock.ns_between(self.read_stamp, now);
            self.library.saturating_record(ns.max(1));
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
            library: self.library,
        }
    }
}

impl Handler for Measure {
    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, stamps: Stamps) {
        self.read_stamp = stamps.read_end;
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
        Measure::new(tickwire_tsc::calibration(), 0, false),
    );
    measure.report()
}

/// A socket that notes when its last read returned data, so that
/// tungstenite's read -> handler time is measured from the same point as
/// tickwire's `Stamps::read`.
struct StampedSocket {
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

fn tungstenite(pki: &Pki, port: u16, busy: bool, mut measure: Measure) -> Report {
    let conn = client(pki);
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_nodelay(true).unwrap();
    let sock = StampedSocket {
        sock,
        clock: measure.clock,
        last_read: 0,
    };
    let stream = StreamOwned::new(conn, sock);
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

/// The server's ceiling: after a real TLS and WebSocket handshake, reads
/// the raw socket without decrypting, until the server ends the stream
/// after the ciphertext of `n` messages.
fn drain_client(pki: &Pki, port: u16, n: usize) -> Report {
    let conn = client(pki);
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
        library: new_histogram(),
    }
}

fn main() {
    let (n, k, rest) = tickwire_benches::harness_args((500_000, 20_000), (2_000, 200));
    let only = rest.first().map(String::as_str);
    let (throughput, latency) = match only {
        None => (true, true),
        Some("throughput") => (true, false),
        Some("latency") => (false, true),
        Some(other) => panic!("unknown section {other:?}: throughput or latency"),
    };
    pin(1);
    let pki = pki();
    let clock = tickwire_tsc::calibration();
    // tungstenite's "busy-poll" spins on a non-blocking `read`, as tickwire's
    // busy-read does; tickwire's busy-poll spins on `epoll_wait`.
    let clients: [(&str, &str); 5] = [
        ("tickwire", "busy-poll"),
        ("tickwire", "busy-read"),
        ("tickwire", "blocking"),
        ("tungstenite", "busy-poll"),
        ("tungstenite", "blocking"),
    ];
    let run = |client: &str, mode: &str, load: Load| -> (Report, Duration) {
        let (port, server) = serve(&pki, load, clock);
        let (want, stamped) = match load {
            Load::Throughput(n, _) => (n, false),
            Load::Latency(k, _) => (k, true),
        };
        let measure = Measure::new(clock, want, stamped);
        let report = match (client, mode) {
            ("tickwire", "busy-poll") => tickwire(&pki, port, PollMode::BusyPoll, measure),
            ("tickwire", "busy-read") => tickwire(&pki, port, PollMode::BusyRead, measure),
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
    if throughput {
        const REPS: usize = 5;
        println!("throughput: {n} messages; {REPS} runs of each, interleaved: median (min-max)");
        println!(
            "{:<12} {:<10} {:<16} {:>12} {:>22}",
            "client", "mode", "records", "messages/s", "range"
        );
        let shapes = [("16 KiB", 64 * 1024), ("one per message", 0)];
        // rates[shape][client][rep]; the raw socket is the last "client".
        let mut rates = vec![vec![Vec::new(); clients.len() + 1]; shapes.len()];
        for _ in 0..REPS {
            let (port, server) = serve(&pki, Load::Throughput(n, 64 * 1024), clock);
            rates[0][clients.len()].push(drain_client(&pki, port, n).per_second);
            server.join().unwrap();
            for (s, &(_, write)) in shapes.iter().enumerate() {
                for (c, &(client, mode)) in clients.iter().enumerate() {
                    rates[s][c].push(run(client, mode, Load::Throughput(n, write)).0.per_second);
                }
            }
        }
        let median = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            (v[v.len() / 2], v[0], v[v.len() - 1])
        };
        let row = |client: &str, mode: &str, records: &str, v: &[f64]| {
            let (m, lo, hi) = median(v);
            println!(
                "{client:<12} {mode:<10} {records:<16} {m:>12.0} {:>22}",
                format!("({lo:.0}-{hi:.0})")
            );
        };
        row("raw socket", "blocking", "16 KiB", &rates[0][clients.len()]);
        for (s, &(records, _)) in shapes.iter().enumerate() {
            for (c, &(client, mode)) in clients.iter().enumerate() {
                row(client, mode, records, &rates[s][c]);
            }
        }
        // Clients 0 and 1 spin, as 3 does; 2 and 4 block.
        for (s, &(records, _)) in shapes.iter().enumerate() {
            for (mode, ours, theirs) in
                [("busy-poll", 0, 3), ("busy-read", 1, 3), ("blocking", 2, 4)]
            {
                let ratios: Vec<f64> = rates[s][ours]
                    .iter()
                    .zip(&rates[s][theirs])
                    .map(|(a, b)| a / b)
                    .collect();
                let (m, lo, hi) = median(&ratios);
                println!(
                    "{records}: tickwire {mode} / tungstenite: {m:.2}x (runs {lo:.2}x-{hi:.2}x)"
                );
            }
        }
    }
    if !latency {
        return;
    }
    println!();
    const REPS: usize = 5;
    let interval = Duration::from_micros(100);
    let rows: [(&str, &str); 8] = [
        clients[0],
        clients[1],
        clients[2],
        clients[3],
        clients[4],
        ("plain TCP", "busy-poll"),
        ("plain TCP", "busy-read"),
        ("plain TCP", "blocking"),
    ];
    let mut runs: Vec<Vec<Report>> = (0..rows.len()).map(|_| Vec::new()).collect();
    for _ in 0..REPS {
        for (i, &(client, mode)) in rows.iter().enumerate() {
            let report = if client == "plain TCP" {
                let (port, server) = serve_plain(k, interval, clock);
                let measure = Measure::new(clock, k, true);
                let report = plain_client(port, mode, measure);
                server.join().unwrap();
                report
            } else {
                run(client, mode, Load::Latency(k, interval)).0
            };
            runs[i].push(report);
        }
    }
    type Pick = fn(&Report) -> &Histogram<u64>;
    let tables: [(&str, Pick); 2] = [
        ("stamp -> handler (end to end)", |r| &r.latency),
        (
            "socket read returned -> handler (the client's own share)",
            |r| &r.library,
        ),
    ];
    for (title, pick) in tables {
        println!(
            "latency: {k} messages, one every 100 us, one record each; {title}; \
             median of {REPS} interleaved runs, microseconds"
        );
        println!(
            "{:<12} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9}",
            "client", "mode", "p50", "p90", "p99", "p99.9", "max"
        );
        for ((client, mode), reports) in rows.iter().zip(&runs) {
            let median = |f: &dyn Fn(&Histogram<u64>) -> u64| {
                let mut v: Vec<u64> = reports.iter().map(|r| f(pick(r))).collect();
                v.sort_unstable();
                v[v.len() / 2] as f64 / 1000.0
            };
            println!(
                "{client:<12} {mode:<10} {:>8.2} {:>8.2} {:>8.1} {:>8.1} {:>9.1}",
                median(&|h| h.value_at_quantile(0.5)),
                median(&|h| h.value_at_quantile(0.9)),
                median(&|h| h.value_at_quantile(0.99)),
                median(&|h| h.value_at_quantile(0.999)),
                median(&|h| h.max()),
            );
        }
        // Rows 0 and 1 spin, as row 3 does; rows 2 and 4 block.
        for (mode, ours, theirs) in [("busy-poll", 0, 3), ("busy-read", 1, 3), ("blocking", 2, 4)] {
            let below = |q: f64| {
                runs[ours]
                    .iter()
                    .zip(&runs[theirs])
                    .filter(|(a, b)| pick(a).value_at_quantile(q) < pick(b).value_at_quantile(q))
                    .count()
            };
            println!(
                "tickwire {mode}: below tungstenite in {}/{REPS} runs at p50, {}/{REPS} at p90",
                below(0.5),
                below(0.9)
            );
        }
        println!();
    }
}
