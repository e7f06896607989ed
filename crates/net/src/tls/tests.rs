//! The TLS 1.2 path (rustls's unbuffered API) against a real rustls server,
//! in memory: several records handed to one [`TlsSession::open`] call, as
//! one socket read brings them.

use std::io::Write;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection};

use super::{Mode, TlsConfig, TlsSession};
use crate::region::Region;

/// A TLS 1.2-only server for `localhost`, and a client configuration that
/// trusts its CA.
fn tls12_server() -> (TlsConfig, ServerConnection) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let mut tls = TlsConfig::empty();
    tls.add_ca_pem(ca.pem().as_bytes()).unwrap();
    (tls, ServerConnection::new(Arc::new(config)).unwrap())
}

/// Runs the handshake in memory, as the driver does, up to the TLS 1.2
/// traffic path.
fn handshake(tls: &TlsConfig, server: &mut ServerConnection) -> TlsSession {
    let context = tls.context().unwrap();
    let mut client = TlsSession::new(&context, "localhost").unwrap();
    let mut to_server = Region::new(1 << 16);
    let mut from_server = Vec::new();
    for _ in 0..16 {
        let (used, done) = client.handshake(&mut from_server, &mut to_server).unwrap();
        from_server.drain(..used);
        let mut pending = to_server.pending();
        while !pending.is_empty() {
            server.read_tls(&mut pending).unwrap();
        }
        to_server.clear();
        server.process_new_packets().unwrap();
        if done {
            break;
        }
        while server.wants_write() {
            server.write_tls(&mut from_server).unwrap();
        }
    }
    assert_eq!(client.mode(), Mode::Rustls12, "TLS 1.2 negotiated");
    assert!(from_server.is_empty(), "the handshake used every byte");
    client
}

/// Receives `wire` through `client` in reads of the sizes `reads` gives,
/// laid out as the receive buffer is (plaintext appended over the consumed
/// ciphertext), and returns the plaintext and whether close_notify came.
fn receive(
    client: &mut TlsSession,
    wire: &[u8],
    reads: impl IntoIterator<Item = usize>,
) -> (Vec<u8>, bool) {
    let mut buf = vec![0u8; wire.len()];
    let mut out = Region::new(1 << 16);
    let (mut plain_end, mut cipher_start, mut cipher_end) = (0, 0, 0);
    let mut closed = false;
    for n in reads {
        let n = n.min(wire.len() - cipher_end);
        buf[cipher_end..cipher_end + n].copy_from_slice(&wire[cipher_end..cipher_end + n]);
        cipher_end += n;
        let opened = client
            .open(&mut buf, plain_end, cipher_start..cipher_end, &mut out)
            .unwrap();
        (plain_end, cipher_start) = (opened.plain_end, opened.cipher_start);
        closed = opened.close_notify;
        if closed || cipher_end == wire.len() {
            break;
        }
    }
    assert_eq!(cipher_start, wire.len(), "every record consumed");
    assert!(out.pending().is_empty(), "nothing to answer");
    buf.truncate(plain_end);
    (buf, closed)
}

/// The TLS records in `wire`, by their headers.
fn count_records(wire: &[u8]) -> usize {
    let (mut at, mut n) = (0, 0);
    while at + 5 <= wire.len() {
        at += 5 + usize::from(u16::from_be_bytes([wire[at + 3], wire[at + 4]]));
        n += 1;
    }
    assert_eq!(at, wire.len(), "whole records");
    n
}

/// rustls documents that after `ReadTraffic` the caller discards
/// `UnbufferedStatus::discard` plus every `AppDataRecord::discard` from the
/// front of the incoming bytes: with many records in one read, every one of
/// them must come out, whole and in order, and every byte be consumed
/// exactly once (a record read twice fails to decrypt, a byte skipped
/// desynchronises the stream).
#[test]
fn tls12_records_read_together_arrive_whole_and_in_order() {
    // Sizes from one byte to a full record, each message its own write, so
    // its own record (the largest takes two); distinct bytes, so a message
    // lost, repeated or reordered shows.
    let messages: Vec<Vec<u8>> = (0..60usize)
        .map(|i| {
            let len = [1, 7, 100, 1000, 5000, 16_384, 20_000][i % 7];
            (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
        })
        .collect();
    let want = messages.concat();
    // All at once (one read, close_notify last), then in reads of sizes
    // that cut records anywhere while still holding several whole ones.
    let cuts: [&[usize]; 2] = [&[usize::MAX], &[1, 4, 37, 1_000, 17_000, 60_001, 333]];
    for cut in cuts {
        let (tls, mut server) = tls12_server();
        let mut client = handshake(&tls, &mut server);
        server.set_buffer_limit(None);
        let mut wire = Vec::new();
        for m in &messages {
            server.writer().write_all(m).unwrap();
        }
        server.send_close_notify();
        while server.wants_write() {
            server.write_tls(&mut wire).unwrap();
        }
        assert!(
            count_records(&wire) > messages.len(),
            "one record or more each"
        );
        let reads = cut.iter().copied().cycle();
        let (plain, closed) = receive(&mut client, &wire, reads);
        assert_eq!(plain.len(), want.len(), "reads {cut:?}");
        assert!(plain == want, "reads {cut:?}: the plaintext differs");
        assert!(closed, "reads {cut:?}: close_notify after the data");
    }
}
