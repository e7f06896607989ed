//! `tls_pipeline`: TLS 1.3 records in memory -> decrypt -> WebSocket frames
//! -> a handler that reads every payload byte. Nanoseconds per message,
//! tickwire's `Driver` against rustls's buffered `ClientConnection` +
//! tungstenite, on the same frames.
//!
//! Each run: a fresh TLS 1.3 handshake and WebSocket upgrade in memory with
//! a rustls server forced to one suite, then the server encrypts N ~200-byte
//! text frames, either one record per message (what exchange servers send:
//! each message is written, and so sealed, on its own) or in 64 KiB writes
//! (16 KiB records of about 80 messages each). The client is timed while it
//! consumes the ciphertext, handed over 64 KiB at a time (tickwire's driver
//! reads each in reads of its `Config::max_read`; tungstenite's stream in
//! reads of up to 64 KiB). tickwire is the real
//! `Driver` over an in-memory stream (`internals::connect_memory`): the
//! receive buffer, the record layer, the frames and the handler call are
//! the code it runs on a socket; only the system call is missing. The
//! handler reads every payload byte (a word-wise checksum), the same for
//! both. Median of R runs.
//!
//! Last, the AEAD alone: ring's own `open_in_place` (AES-128-GCM, the
//! suite exchanges negotiate) on a record that is already in cache, per
//! record and per 200-byte message of it, with the copy that restores the
//! ciphertext each time measured apart and taken out. What the in-place
//! driver spends beyond it is reads, record framing, WebSocket frames and
//! the handler.
//!
//! `cargo bench -p tickwire-benches --bench tls_pipeline [-- N R]`
//! (`cargo test --benches` runs it once, small.)

#![allow(clippy::print_stdout)] // A benchmark reports its results.

use std::hint::black_box;
use std::io::{self, Read, Write};
use std::time::Instant;

use rustls::{ServerConnection, SupportedCipherSuite};
use tickwire_benches::tls::{Pki, client, frames, pki, server};
use tickwire_net::internals::{accept_memory, connect_memory, deliver};
use tickwire_net::{
    Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect, Role, Stamps,
    TlsConfig,
};
use tungstenite::protocol::{Message, Role as WsRole, WebSocket};

const READ: usize = 64 * 1024;

/// The server encrypts `plain` in writes of `write` bytes (one record per
/// message when that is the frame size); returns the ciphertext.
fn encrypt(server: &mut ServerConnection, plain: &[u8], write: usize) -> Vec<u8> {
    let mut wire = Vec::with_capacity(plain.len() * 2 + 1024);
    for chunk in plain.chunks(write) {
        server.writer().write_all(chunk).unwrap();
        while server.wants_write() {
            server.write_tls(&mut wire).unwrap();
        }
    }
    wire
}

/// Reads every payload byte, a word at a time.
fn checksum(sum: u64, bytes: &[u8]) -> u64 {
    let (words, tail) = bytes.as_chunks::<8>();
    let sum = words
        .iter()
        .fold(sum, |a, w| a.rotate_left(5) ^ u64::from_le_bytes(*w));
    tail.iter()
        .fold(sum, |a, &b| a.rotate_left(5) ^ u64::from(b))
}

/// The handler: a checksum of every payload byte.
#[derive(Default)]
struct Sum {
    sum: u64,
    messages: usize,
}

impl Handler for Sum {
    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        self.sum = checksum(self.sum, payload.as_bytes());
        self.messages += 1;
    }

    fn on_close(&mut self, _id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        panic!("the in-memory connection ended: {reason}");
    }
}

fn tickwire(pki: &Pki, suite: SupportedCipherSuite, plain: &[u8], n: usize, write: usize) -> f64 {
    let mut tls = TlsConfig::empty();
    tls.add_ca_pem(pki.ca_pem.as_bytes()).unwrap();
    let config = Config {
        ping_interval: None,
        stale_timeout: None,
        max_connections: 1,
        ..Config::default()
    };
    let mut driver = Driver::new(config, &tls, Sum::default()).unwrap();
    let endpoint = Endpoint::parse("wss://localhost/").unwrap();
    let id = connect_memory(&mut driver, endpoint, 0).unwrap();
    let mut server = server(pki, suite);
    accept_memory(&mut driver, id, &mut server);
    let wire = encrypt(&mut server, plain, write);
    let mut reads: Vec<Vec<u8>> = wire.chunks(READ).map(<[u8]>::to_vec).collect();
    let start = Instant::now();
    for read in &mut reads {
        deliver(&mut driver, id, read).unwrap();
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(driver.handler().messages, n);
    black_box(driver.handler().sum);
    ns
}

/// Replays ciphertext as socket reads of up to 64 KiB; writes are dropped.
struct Replay {
    data: Vec<u8>,
    pos: usize,
}

impl Read for Replay {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(READ).min(self.data.len() - self.pos);
        if n == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for Replay {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn rustls_tungstenite(
    pki: &Pki,
    suite: SupportedCipherSuite,
    plain: &[u8],
    n: usize,
    write: usize,
) -> f64 {
    let mut client = client(pki);
    let mut server = server(pki, suite);
    // The handshake, in memory.
    while client.is_handshaking() || server.is_handshaking() {
        let mut buf = Vec::new();
        while client.wants_write() {
            client.write_tls(&mut buf).unwrap();
        }
        server.read_tls(&mut &buf[..]).unwrap();
        server.process_new_packets().unwrap();
        buf.clear();
        while server.wants_write() {
            server.write_tls(&mut buf).unwrap();
        }
        client.read_tls(&mut &buf[..]).unwrap();
        client.process_new_packets().unwrap();
    }
    let wire = encrypt(&mut server, plain, write);
    let stream = rustls::StreamOwned::new(client, Replay { data: wire, pos: 0 });
    let mut ws = WebSocket::from_raw_socket(stream, WsRole::Client, None);
    let mut sum = 0u64;
    let start = Instant::now();
    for _ in 0..n {
        match ws.read().unwrap() {
            Message::Text(t) => {
                sum = t
                    .as_bytes()
                    .iter()
                    .fold(sum, |a, &b| a.wrapping_add(u64::from(b)));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    black_box(sum);
    ns
}

/// ns per open of a `len`-byte plaintext record with ring's
/// `open_in_place` on hot memory, less the copy that restores it; the copy
/// alone.
fn ring_open(len: usize, iterations: usize) -> (f64, f64) {
    use ring::aead::{AES_128_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
    let key = LessSafeKey::new(UnboundKey::new(&AES_128_GCM, &[7u8; 16]).unwrap());
    let nonce = || Nonce::assume_unique_for_key([3u8; 12]);
    let aad = [23u8, 3, 3, 0, 0];
    let mut sealed = vec![b'x'; len];
    key.seal_in_place_append_tag(nonce(), Aad::from(aad), &mut sealed)
        .unwrap();
    let mut work = sealed.clone();
    let time = |open: bool, work: &mut Vec<u8>| {
        let start = Instant::now();
        for _ in 0..iterations {
            work.copy_from_slice(&sealed);
            if open {
                let plain = key
                    .open_in_place(nonce(), Aad::from(aad), black_box(&mut work[..]))
                    .unwrap();
                black_box(plain[0]);
            }
            black_box(&work);
        }
        start.elapsed().as_nanos() as f64 / iterations as f64
    };
    let (mut both, mut copy) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        both.push(time(true, &mut work));
        copy.push(time(false, &mut work));
    }
    let copy = median(copy);
    (median(both) - copy, copy)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (n, runs, _) = tickwire_benches::harness_args((200_000, 7), (2_000, 1));
    let pki = pki();
    let plain = frames(n);
    let frame = plain.len() / n;
    println!("tls_pipeline: {n} messages of 200 B per run, median of {runs} runs, ns/message");
    println!(
        "{:<32} {:<22} {:>10} {:>20} {:>8}",
        "suite", "records", "tickwire", "rustls+tungstenite", "ratio"
    );
    let suites = [
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
    ];
    for (records, write) in [("one per message", frame), ("16 KiB (~80 messages)", READ)] {
        for (name, suite) in suites {
            let mut ours = Vec::new();
            let mut theirs = Vec::new();
            for _ in 0..runs {
                // Interleaved, so drift on a shared machine hits both alike.
                ours.push(tickwire(&pki, suite, &plain, n, write));
                theirs.push(rustls_tungstenite(&pki, suite, &plain, n, write));
            }
            let (a, b) = (median(ours), median(theirs));
            println!(
                "{name:<32} {records:<22} {a:>10.1} {b:>20.1} {:>7.2}x",
                b / a
            );
        }
    }
    println!();
    println!("ring open_in_place alone, AES-128-GCM, hot memory (median of 7):");
    println!(
        "{:<32} {:>12} {:>16} {:>12}",
        "record", "ns/record", "ns/200 B message", "copy ns"
    );
    let iterations = (n / 10).max(100);
    for (name, len) in [("one message (201 B)", frame), ("16 KiB", 16 * 1024)] {
        let (open, copy) = ring_open(len, iterations);
        let per_message = open * frame as f64 / len as f64;
        println!("{name:<32} {open:>12.1} {per_message:>16.1} {copy:>12.1}");
    }
}
