//! Unstable internals for tickwire's own fuzz targets (compiled with
//! `--cfg fuzzing`, which cargo-fuzz sets) and benchmarks (the `internals`
//! feature). Not part of the API.

use std::ops::Range;
use std::sync::Arc;

use crate::payload::{Frame, Payload, next_frame};
use crate::receive::{Incoming, open_tls};
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

/// The driver's receive path without a socket: TLS 1.3 records decrypted
/// in place, then WebSocket frames decoded, as `Driver` does them.
pub struct Pipeline {
    session: TlsSession,
    rx: Incoming,
    out: Region,
}

impl Pipeline {
    /// Handshakes in memory with `server` (which then encrypts what the
    /// pipeline will read) and prepares buffers the size the driver's defaults use.
    pub fn connect(tls: &TlsConfig, server: &mut rustls::ServerConnection, host: &str) -> Pipeline {
        Pipeline {
            session: handshake_session(tls, server, host),
            rx: Incoming::new(256 * 1024, 1 << 20, 1024),
            out: Region::new(64 * 1024),
        }
    }

    /// One socket read's worth of ciphertext: copied into the receive buffer
    /// (as `read()` would), decrypted in place, decoded, and every data
    /// message handed to `on_message`. Returns how many there were.
    pub fn read(
        &mut self,
        bytes: &[u8],
        mut on_message: impl FnMut(Payload<'_>),
    ) -> Result<usize, String> {
        let mut fed = 0;
        let mut messages = 0;
        while fed < bytes.len() {
            self.rx.compact();
            let n = (self.rx.cap - self.rx.cipher_end).min(bytes.len() - fed);
            let at = self.rx.cipher_end;
            self.rx.buf[at..at + n].copy_from_slice(&bytes[fed..fed + n]);
            self.rx.cipher_end += n;
            fed += n;
            open_tls(&mut self.session, &mut self.rx, &mut self.out).map_err(|e| e.to_string())?;
            loop {
                let Incoming {
                    buf,
                    start,
                    end,
                    decoder,
                    restore,
                    ..
                } = &mut self.rx;
                let (consumed, frame) =
                    next_frame(decoder, buf, *start, *end, restore).map_err(|e| e.to_string())?;
                *start += consumed;
                match frame {
                    None => break,
                    Some(Frame::Data(payload)) => {
                        on_message(payload);
                        self.rx.restore.apply(&mut self.rx.buf);
                        messages += 1;
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(messages)
    }
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

/// Our record layer and a peer that seals records for it, both starting from
/// the keys of a real handshake. Key updates after that use a stand-in
/// schedule that both ends share.
pub struct Records {
    ours: RecordLayer,
    our_keys: Schedule,
    peer: RecordLayer,
    peer_keys: Schedule,
    out: Region,
}

/// What [`Records::open`] returned.
pub struct Opened {
    pub plain_end: usize,
    pub cipher_start: usize,
    pub close_notify: bool,
}

impl Records {
    pub fn new(s: &Secrets) -> Records {
        let ours = RecordLayer::new(&s.rx, s.rx_seq, &s.tx, s.tx_seq).expect("valid keys");
        let peer = RecordLayer::new(&s.tx, s.tx_seq, &s.rx, s.rx_seq).expect("valid keys");
        Records {
            ours,
            our_keys: Schedule {
                base: s.rx.clone(),
                rx: 0,
                tx: 0,
            },
            peer,
            // The peer's send keys must match our receive keys after updates.
            peer_keys: Schedule {
                base: s.rx.clone(),
                rx: 0,
                tx: 0,
            },
            out: Region::new(1 << 16),
        }
    }

    /// The peer seals `content` as one record of inner type `content_type`
    /// followed by `padding` zero bytes, appended to `wire`.
    pub fn peer_record(
        &mut self,
        content_type: u8,
        content: &[u8],
        padding: usize,
        wire: &mut Vec<u8>,
    ) {
        let mut region = Region::new(content.len() + padding + 64);
        let mut inner = content.to_vec();
        inner.push(content_type);
        inner.resize(content.len() + 1 + padding, 0);
        if self.peer.seal_raw(&inner, &mut region).is_ok() {
            wire.extend_from_slice(region.pending());
        }
    }

    /// The peer sends a KeyUpdate and rotates its send key (matching the
    /// key our receive side will derive).
    pub fn peer_key_update(&mut self, requested: bool, wire: &mut Vec<u8>) {
        self.peer_record(22, &[24, 0, 0, 1, u8::from(requested)], 0, wire);
        let next = derive(&self.peer_keys.base, self.peer_keys.rx.wrapping_add(1));
        self.peer_keys.rx = self.peer_keys.rx.wrapping_add(1);
        self.peer.set_tx_key(&next);
    }

    /// Runs our record layer over `buf[cipher]`, appending plaintext at
    /// `plain_end`; `None` when the record layer failed the connection.
    pub fn open(
        &mut self,
        buf: &mut [u8],
        plain_end: usize,
        cipher: Range<usize>,
    ) -> Option<Opened> {
        self.out.clear();
        self.ours
            .open(buf, plain_end, cipher, &mut self.our_keys, &mut self.out)
            .ok()
            .map(|o| Opened {
                plain_end: o.plain_end,
                cipher_start: o.cipher_start,
                close_notify: o.close_notify,
            })
    }

    /// Seals application data with our record layer.
    pub fn seal(&mut self, data: &[u8]) -> usize {
        self.out.clear();
        self.ours
            .seal(data, &mut self.our_keys, &mut self.out)
            .unwrap_or(0)
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
