//! The driver's own receive path (receive buffer, the in-place TLS 1.3
//! record layer, WebSocket frames, the handler call) over an in-memory
//! stream, after a real handshake with rustls: fed arbitrary records:
//! garbage, records the peer sealed properly with arbitrary inner content
//! (types, padding, handshake messages, alerts, key updates), and
//! well-formed frames, cut into arbitrary reads and deliveries.
//!
//! Input: a seed byte (the driver's read size, the stream's chunks and the
//! delivery cuts), then operations, each
//! a tag byte:
//! - `0, n, bytes[n]`: raw bytes on the wire;
//! - `1, type, padding, n, bytes[n]`: a record sealed by the peer;
//! - `2, requested`: a KeyUpdate from the peer (which then rotates its key);
//! - `3, padding, n, bytes[n]`: a text frame of `n` ASCII bytes, one record;
//! - `4, cut, n, bytes[n]`: a binary frame of `n` bytes, sealed as two
//!   records cut at `cut`.
//!
//! Asserted: no panic; with only well-formed frames and key updates, the
//! connection stays open and the handler gets exactly those payloads, in
//! order.

#![no_main]

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use tickwire_codec::{OpCode, encode_frame};
use tickwire_net::internals::{self as fuzzing, Peer, Secrets};
use tickwire_net::{
    Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect, Role, Stamps,
};

/// What the driver handed over.
#[derive(Default)]
struct Collect {
    messages: Vec<Vec<u8>>,
    ended: Option<String>,
}

impl Handler for Collect {
    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        self.messages.push(payload.as_bytes().to_vec());
    }

    fn on_close(&mut self, _id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        self.ended = Some(reason.to_string());
        Reconnect::No
    }
}

/// A driver whose reads ask for at most `max_read` bytes.
fn driver(max_read: usize) -> RefCell<Driver<Collect>> {
    let config = Config {
        max_connections: 1,
        read_buffer_size: 32 * 1024,
        max_read,
        max_message_size: 64 * 1024,
        ping_interval: None,
        stale_timeout: None,
        ..Config::default()
    };
    RefCell::new(Driver::new(config, &fuzzing::tls_config(ca_pem()), Collect::default()).unwrap())
}

thread_local! {
    /// Drivers for the whole run (each starts a resolver thread), with
    /// the smallest reads and with the default ones: each input opens a
    /// connection in one of them and ends it.
    static DRIVERS: [RefCell<Driver<Collect>>; 2] = [driver(4 * 1024), driver(32 * 1024)];
}

fn pki() -> &'static (String, Secrets) {
    static PKI: OnceLock<(String, Secrets)> = OnceLock::new();
    PKI.get_or_init(|| {
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
        let server = rustls::ServerConnection::new(Arc::new(config)).unwrap();
        let secrets = fuzzing::handshake(
            &fuzzing::tls_config(ca.pem().as_bytes()),
            server,
            "localhost",
        );
        (ca.pem(), secrets)
    })
}

fn ca_pem() -> &'static [u8] {
    pki().0.as_bytes()
}

/// A server's unmasked frame.
fn frame(op: OpCode, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; payload.len() + 14];
    let n = encode_frame(&mut out, op, true, payload, None).unwrap();
    out.truncate(n);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, mut ops)) = data.split_first() else {
        return;
    };
    let secrets = &pki().1;
    let mut peer = Peer::new(secrets);
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    let mut only_frames = true;
    loop {
        match *ops {
            [0, n, ref rest @ ..] => {
                let n = usize::from(n).min(rest.len());
                wire.extend_from_slice(&rest[..n]);
                only_frames = false;
                ops = &rest[n..];
            }
            [1, typ, padding, n, ref rest @ ..] => {
                let n = usize::from(n).min(rest.len());
                // Mostly application data; then handshake messages and
                // alerts; the rest as given.
                let typ = match typ {
                    0..=199 => 23,
                    200..=219 => 22,
                    220..=239 => 21,
                    other => other,
                };
                peer.record(typ, &rest[..n], usize::from(padding % 40), &mut wire);
                only_frames = false;
                ops = &rest[n..];
            }
            [2, requested, ref rest @ ..] => {
                peer.key_update(requested & 1 == 1, &mut wire);
                ops = rest;
            }
            [3, padding, n, ref rest @ ..] => {
                let n = usize::from(n).min(rest.len());
                let text: Vec<u8> = rest[..n].iter().map(|b| b & 0x7f).collect();
                peer.record(
                    23,
                    &frame(OpCode::Text, &text),
                    usize::from(padding % 40),
                    &mut wire,
                );
                expected.push(text);
                ops = &rest[n..];
            }
            [4, cut, n, ref rest @ ..] => {
                let n = usize::from(n).min(rest.len());
                let bytes = frame(OpCode::Binary, &rest[..n]);
                let cut = usize::from(cut) % (bytes.len() + 1);
                peer.record(23, &bytes[..cut], 0, &mut wire);
                peer.record(23, &bytes[cut..], 0, &mut wire);
                expected.push(rest[..n].to_vec());
                ops = &rest[n..];
            }
            [_, ref rest @ ..] => ops = rest,
            [] => break,
        }
    }

    DRIVERS.with(|drivers| {
        let driver = &mut *drivers[usize::from(seed & 0x10 != 0)].borrow_mut();
        let handler = driver.handler_mut();
        handler.messages.clear();
        handler.ended = None;
        let endpoint = Endpoint::parse("wss://localhost/").unwrap();
        let chunk = usize::from(seed % 16) * 997; // 0: whatever the read asks for
        let id = fuzzing::connect_memory_established(driver, endpoint, secrets, chunk).unwrap();
        let mut state = u32::from(seed) | 1;
        let mut at = 0;
        while at < wire.len() && driver.is_live(id) {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let end = (at + (state % 3000) as usize + 1).min(wire.len());
            let mut delivery = wire[at..end].to_vec();
            fuzzing::deliver(driver, id, &mut delivery).unwrap();
            at = end;
        }
        if only_frames {
            let handler = driver.handler();
            assert_eq!(handler.ended, None, "well-formed records failed");
            assert_eq!(handler.messages, expected);
        }
        if driver.is_live(id) {
            fuzzing::end_memory(driver, id).unwrap();
        }
    });
});
