//! The servers: one rustls (AES-128-GCM) WebSocket server for every client,
//! and the plain TCP server of the latency floor. Both run pinned to core 0.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustls::StreamOwned;
use tickwire_benches::tls::{MESSAGE, Pki, server};
use tickwire_codec::handshake::{RequestStatus, ServerHandshake, write_response};
use tickwire_codec::{OpCode, encode_frame};
use tickwire_tsc::Calibration;

use crate::measure::stamp;
use crate::pin;

const SUITE: rustls::SupportedCipherSuite =
    rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256;

#[derive(Clone, Copy)]
pub(crate) enum Load {
    /// N messages, handed to rustls in writes of the given size (at most
    /// 16 KiB of plaintext per record; 0: one record per message), all
    /// encrypted before the first is sent, then written as fast as the
    /// socket takes them.
    Throughput(usize, usize),
    /// K messages, one every `interval`.
    Latency(usize, Duration),
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
/// and a handle that yields when the server began to send (for throughput:
/// after it encrypted everything).
pub(crate) fn serve(pki: &Pki, load: Load, clock: Calibration) -> (u16, JoinHandle<Instant>) {
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
        let mut start = Instant::now();
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
                drop(plain);
                start = Instant::now();
                tls.sock.write_all(&wire).unwrap();
                // End of stream tells the raw-socket reader it has it all
                // (it cannot count ciphertext: the WebSocket handshake may
                // have read ahead into it).
                tls.sock.shutdown(std::net::Shutdown::Write).unwrap();
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
        drain(&mut tls.sock);
        start
    });
    (port, handle)
}

/// The latency floor's server: the same cadence and stamp as
/// `Load::Latency`, written as raw bytes over plain TCP.
pub(crate) fn serve_plain(
    k: usize,
    interval: Duration,
    clock: Calibration,
) -> (u16, JoinHandle<()>) {
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

/// Reads until the client goes away.
fn drain(sock: &mut TcpStream) {
    let mut buf = vec![0u8; 1 << 16];
    while sock.read(&mut buf).is_ok_and(|n| n > 0) {}
}
