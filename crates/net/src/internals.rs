//! Unstable internals for tickwire's own fuzz targets (compiled with
//! `--cfg fuzzing`, which cargo-fuzz sets) and benchmarks (the `internals`
//! feature). Not part of the API.

use std::io::{Read, Write};
use std::ops::Range;
use std::sync::Arc;

use tickwire_codec::handshake::{RequestStatus, ServerHandshake, write_response};

use crate::config::Endpoint;
use crate::driver::Driver;
use crate::error::DriverError;
use crate::event::Handler;
use crate::id::ConnId;
use crate::region::Region;
use crate::tls::record::{KeySchedule, RecordError, RecordLayer, TrafficKey};
use crate::tls::{Mode, TlsConfig, TlsSession};

/// The client's keys and sequence numbers right after a real handshake.
#[derive(Clone)]
pub struct Secrets {
    rx: TrafficKey,
    rx_seq: u64,
    tx: TrafficKey,
    tx_seq: u64,
}

/// Runs a real TLS 1.3 handshake in memory between a client session (as the
/// driver uses it) and `server`, and returns the session, in place.
fn handshake_session(
    tls: &TlsConfig,
    server: &mut rustls::ServerConnection,
    host: &str,
) -> TlsSession {
    let context = tls.context().expect("a usable TLS configuration");
    let mut client = TlsSession::new(&context, host).expect("a valid host name");
    let mut to_server = Region::new(1 << 16);
    let mut from_server = vec![0u8; 1 << 16];
    let mut filled = 0;
    let mut used = 0;
    for _ in 0..16 {
        let (n, done) = client
            .handshake(&mut from_server[used..filled], &mut to_server)
            .expect("the handshake succeeds");
        used += n;
        let mut pending = to_server.pending();
        while !pending.is_empty() {
            server.read_tls(&mut pending).expect("the server reads");
        }
        to_server.clear();
        server.process_new_packets().expect("the server accepts");
        if done {
            break;
        }
        let mut out = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut out).expect("the server writes");
        }
        from_server[filled..filled + out.len()].copy_from_slice(&out);
        filled += out.len();
    }
    assert_eq!(client.mode(), Mode::InPlace, "TLS 1.3 negotiated");
    client
}

/// Runs a real TLS 1.3 handshake in memory with `server` and returns the
/// client's traffic secrets.
pub fn handshake(tls: &TlsConfig, mut server: rustls::ServerConnection, host: &str) -> Secrets {
    let client = handshake_session(tls, &mut server, host);
    let (rx, rx_seq, tx, tx_seq) = client.secrets.clone().expect("secrets kept");
    Secrets {
        rx,
        rx_seq,
        tx,
        tx_seq,
    }
}

/// A client connection of a real [`Driver`] to `endpoint` over an
/// in-memory stream whose reads return at most `chunk` bytes (0: as
/// many as the driver asks for). Its TLS handshake and upgrade request
/// are written at once; [`accept_memory`] plays the server's side.
pub fn connect_memory<H: Handler>(
    driver: &mut Driver<H>,
    endpoint: Endpoint,
    chunk: usize,
) -> Result<ConnId, DriverError> {
    driver.memory_open(endpoint, chunk, None)
}

/// The peer sends `bytes` on an in-memory connection: the driver reads and
/// processes them as it would a socket's (receive buffer, TLS in place,
/// frames, handler). `bytes` is lent, not copied, and comes back as it was
/// unless the connection ended meanwhile.
pub fn deliver<H: Handler>(
    driver: &mut Driver<H>,
    id: ConnId,
    bytes: &mut Vec<u8>,
) -> Result<(), DriverError> {
    driver.memory_deliver(id, bytes)
}

/// Appends what the driver wrote on an in-memory connection since the last
/// call to `out`.
pub fn written<H: Handler>(
    driver: &mut Driver<H>,
    id: ConnId,
    out: &mut Vec<u8>,
) -> Result<(), DriverError> {
    driver.memory_written(id, out)
}

/// Ends the in-memory connection `id` at once (the handler hears
/// [`Disconnect::Io`](crate::Disconnect::Io)) and frees its slot.
pub fn end_memory<H: Handler>(driver: &mut Driver<H>, id: ConnId) -> Result<(), DriverError> {
    driver.memory_end(id)
}

/// Plays `server` (TLS) and a WebSocket server's upgrade on the in-memory
/// connection `id` until the driver has it open.
pub fn accept_memory<H: Handler>(
    driver: &mut Driver<H>,
    id: ConnId,
    server: &mut rustls::ServerConnection,
) {
    let mut wire = Vec::new();
    let mut request = Vec::new();
    let mut upgrade = ServerHandshake::new();
    let mut answered = false;
    for _ in 0..32 {
        if driver.is_open(id) {
            return;
        }
        wire.clear();
        written(driver, id, &mut wire).expect("a live connection");
        let mut pending = &wire[..];
        while !pending.is_empty() {
            server.read_tls(&mut pending).expect("the server reads");
        }
        server.process_new_packets().expect("the server accepts");
        if !answered {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = server.reader().read(&mut chunk) {
                request.extend_from_slice(&chunk[..n]);
            }
            if let Ok(RequestStatus::Complete { request, .. }) = upgrade.parse_request(&request) {
                let accept = *request.accept();
                let mut out = [0u8; 256];
                let n = write_response(&mut out, &accept, None).expect("room for the response");
                server
                    .writer()
                    .write_all(&out[..n])
                    .expect("the server takes it");
                answered = true;
            }
        }
        let mut reply = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut reply).expect("the server writes");
        }
        if !reply.is_empty() {
            deliver(driver, id, &mut reply).expect("a live connection");
        }
    }
    assert!(driver.is_open(id), "the in-memory handshake completes");
}

/// An open connection of a real [`Driver`] over an in-memory stream, its
/// TLS 1.3 session keyed from `secrets` (the upgrade taken as done), its
/// later keys from the stand-in schedule that [`Peer`] shares: the peer's
/// records, key updates included, reach the driver's receive path.
pub fn connect_memory_established<H: Handler>(
    driver: &mut Driver<H>,
    endpoint: Endpoint,
    secrets: &Secrets,
    chunk: usize,
) -> Result<ConnId, DriverError> {
    let keys = (
        secrets.rx.clone(),
        secrets.rx_seq,
        secrets.tx.clone(),
        secrets.tx_seq,
    );
    let schedule = Schedule {
        base: secrets.rx.clone(),
        rx: 0,
        tx: 0,
    };
    let session = TlsSession::established_with(keys, Box::new(schedule));
    driver.memory_open(endpoint, chunk, Some(session))
}

/// Derives successive update keys the same way for both ends.
struct Schedule {
    base: TrafficKey,
    rx: u8,
    tx: u8,
}

fn derive(base: &TrafficKey, n: u8) -> TrafficKey {
    let mut k = base.clone();
    for b in k.key.iter_mut().chain(k.iv.iter_mut()) {
        *b = b.wrapping_add(n).rotate_left(3);
    }
    k
}

impl KeySchedule for Schedule {
    fn next_rx_key(&mut self) -> Result<TrafficKey, RecordError> {
        self.rx = self.rx.wrapping_add(1);
        Ok(derive(&self.base, self.rx))
    }
    fn next_tx_key(&mut self) -> Result<TrafficKey, RecordError> {
        self.tx = self.tx.wrapping_add(1);
        Ok(derive(&self.base, 100u8.wrapping_add(self.tx)))
    }
    fn new_session_ticket(&mut self, _body: &[u8]) -> Result<(), RecordError> {
        Ok(())
    }
}

/// The server's side of a connection made by [`connect_memory_established`]:
/// it seals records for the driver with the keys of a real handshake, and
/// after key updates with the stand-in schedule the driver's session shares.
pub struct Peer {
    records: RecordLayer,
    keys: Schedule,
}

impl Peer {
    pub fn new(s: &Secrets) -> Peer {
        Peer {
            records: RecordLayer::new(&s.tx, s.tx_seq, &s.rx, s.rx_seq).expect("valid keys"),
            // The peer's send keys must match the driver's receive keys
            // after updates.
            keys: Schedule {
                base: s.rx.clone(),
                rx: 0,
                tx: 0,
            },
        }
    }

    /// Seals `content` as one record of inner type `content_type` followed
    /// by `padding` zero bytes, appended to `wire`.
    pub fn record(&mut self, content_type: u8, content: &[u8], padding: usize, wire: &mut Vec<u8>) {
        let mut region = Region::new(content.len() + padding + 64);
        let mut inner = content.to_vec();
        inner.push(content_type);
        inner.resize(content.len() + 1 + padding, 0);
        if self.records.seal_raw(&inner, &mut region).is_ok() {
            wire.extend_from_slice(region.pending());
        }
    }

    /// Sends a KeyUpdate and rotates the send key (to the key the driver's
    /// receive side will derive).
    pub fn key_update(&mut self, requested: bool, wire: &mut Vec<u8>) {
        self.record(22, &[24, 0, 0, 1, u8::from(requested)], 0, wire);
        // The key the driver's receive side derives next.
        let next = self.keys.next_rx_key().expect("the stand-in never fails");
        self.records.set_tx_key(&next);
    }
}

/// Builds a TLS configuration trusting `ca_pem`.
pub fn tls_config(ca_pem: &[u8]) -> TlsConfig {
    let mut tls = TlsConfig::empty();
    tls.add_ca_pem(ca_pem).expect("a CA certificate");
    tls
}

/// The server configuration type the targets build.
pub type ServerConfig = Arc<rustls::ServerConfig>;

/// [`Driver::fetch`](crate::Driver::fetch)'s response reader on `buf`
/// (joined in place if chunked): `Ok(Some((status, body range)))` once
/// complete.
pub fn fetch_response(
    buf: &mut [u8],
    eof: bool,
) -> Result<Option<(u16, Range<usize>)>, crate::FetchError> {
    Ok(crate::fetch::parse_response(buf, eof)?
        .map(|r| (r.status, r.body_start..r.body_start + r.body_len)))
}
