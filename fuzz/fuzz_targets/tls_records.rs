//! The in-place TLS 1.3 record layer, after a real handshake with rustls,
//! fed arbitrary records: garbage, and records the peer sealed properly with
//! arbitrary inner content (types, padding, handshake messages, alerts, key
//! updates), cut into arbitrary chunks.
//!
//! Input: a chunk-size seed, then operations, each a tag byte:
//! - `0, n, bytes[n]`: raw bytes on the wire;
//! - `1, type, padding, n, bytes[n]`: a record sealed by the peer;
//! - `2, requested`: a KeyUpdate from the peer (which then rotates its key).
//!
//! Asserted: no panic; the plaintext never overtakes the ciphertext still to
//! read; with only well-formed application data, exactly that data comes out.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use tickwire_net::internals::{self as fuzzing, Records, Secrets};

fn secrets() -> &'static Secrets {
    static SECRETS: OnceLock<Secrets> = OnceLock::new();
    SECRETS.get_or_init(|| {
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
        fuzzing::handshake(
            &fuzzing::tls_config(ca.pem().as_bytes()),
            server,
            "localhost",
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, mut ops)) = data.split_first() else {
        return;
    };
    let mut records = Records::new(secrets());
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    let mut only_data = true;
    loop {
        match *ops {
            [0, n, ref rest @ ..] => {
                let n = usize::from(n).min(rest.len());
                wire.extend_from_slice(&rest[..n]);
                only_data = false;
                ops = &rest[n..];
            }
            [1, typ, padding, n, ref rest @ ..] => {
                let n = usize::from(n).min(rest.len());
                let content = &rest[..n];
                // Mostly application data, so that sequences get long; then
                // handshake messages and alerts; the rest as given.
                let typ = match typ {
                    0..=199 => 23,
                    200..=219 => 22,
                    220..=239 => 21,
                    other => other,
                };
                records.peer_record(typ, content, usize::from(padding % 40), &mut wire);
                if typ == 23 {
                    expected.extend_from_slice(content);
                } else {
                    only_data = false;
                }
                ops = &rest[n..];
            }
            [2, requested, ref rest @ ..] => {
                records.peer_key_update(requested & 1 == 1, &mut wire);
                ops = rest;
            }
            [_, ref rest @ ..] => ops = rest,
            [] => break,
        }
    }

    let mut buf = wire.clone();
    buf.resize(wire.len() + 64, 0);
    let (mut plain_end, mut cipher_start, mut cipher_end) = (0, 0, 0);
    let mut state = u32::from(seed) | 1;
    let mut failed = false;
    while cipher_end < wire.len() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        cipher_end = (cipher_end + (state % 2000) as usize + 1).min(wire.len());
        match records.open(&mut buf, plain_end, cipher_start..cipher_end) {
            Some(opened) => {
                assert!(
                    opened.plain_end <= opened.cipher_start,
                    "plaintext overtook ciphertext"
                );
                assert!(opened.cipher_start <= cipher_end);
                plain_end = opened.plain_end;
                cipher_start = opened.cipher_start;
                if opened.close_notify {
                    break;
                }
            }
            None => {
                failed = true;
                break;
            }
        }
    }
    if only_data {
        assert!(!failed, "well-formed records failed to open");
        assert_eq!(&buf[..plain_end], &expected[..]);
    }
    let _ = records.seal(&buf[..plain_end.min(1000)]);
});
