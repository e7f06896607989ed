//! The examples of RFC 6455 section 5.7 and the handshake sample of section 1.3,
//! decoded and re-encoded byte for byte.

use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus, Request, accept_key};
use tickwire_codec::{Config, OpCode, Role, encode_frame};

use crate::util::{Ev, decode_all, decoder};

const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

fn decode(role: Role, bytes: &[u8]) -> Vec<Ev> {
    let mut dec = decoder(role, Config::default(), 1 << 17);
    let out = decode_all(&mut dec, bytes);
    assert_eq!(out.error, None);
    out.events
}

fn encode(opcode: OpCode, fin: bool, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = vec![0u8; payload.len() + 14];
    let n = encode_frame(&mut out, opcode, fin, payload, mask).unwrap();
    out.truncate(n);
    out
}

#[test]
fn single_frame_unmasked_text() {
    let frame = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    assert_eq!(decode(Role::Client, &frame), [Ev::Text("Hello".into())]);
    assert_eq!(encode(OpCode::Text, true, b"Hello", None), frame);
}

#[test]
fn single_frame_masked_text() {
    let frame = [
        0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    assert_eq!(decode(Role::Server, &frame), [Ev::Text("Hello".into())]);
    assert_eq!(encode(OpCode::Text, true, b"Hello", Some(MASK)), frame);
}

#[test]
fn fragmented_unmasked_text() {
    let first = [0x01, 0x03, 0x48, 0x65, 0x6c];
    let last = [0x80, 0x02, 0x6c, 0x6f];
    let stream = [&first[..], &last[..]].concat();
    assert_eq!(decode(Role::Client, &stream), [Ev::Text("Hello".into())]);
    assert_eq!(encode(OpCode::Text, false, b"Hel", None), first);
    assert_eq!(encode(OpCode::Continuation, true, b"lo", None), last);
}

#[test]
fn unmasked_ping_and_masked_pong() {
    let ping = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    let pong = [
        0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    assert_eq!(decode(Role::Client, &ping), [Ev::Ping(b"Hello".to_vec())]);
    assert_eq!(decode(Role::Server, &pong), [Ev::Pong(b"Hello".to_vec())]);
    assert_eq!(encode(OpCode::Ping, true, b"Hello", None), ping);
    assert_eq!(encode(OpCode::Pong, true, b"Hello", Some(MASK)), pong);
}

#[test]
fn binary_256_bytes_uses_16_bit_length() {
    let payload: Vec<u8> = (0..=255).collect();
    let frame = encode(OpCode::Binary, true, &payload, None);
    assert_eq!(frame[..4], [0x82, 0x7e, 0x01, 0x00]);
    assert_eq!(frame.len(), 4 + 256);
    assert_eq!(decode(Role::Client, &frame), [Ev::Binary(payload)]);
}

#[test]
fn binary_64k_uses_64_bit_length() {
    let payload: Vec<u8> = (0..65536u32).map(|i| (i * 31) as u8).collect();
    let frame = encode(OpCode::Binary, true, &payload, None);
    assert_eq!(
        frame[..10],
        [0x82, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00]
    );
    assert_eq!(decode(Role::Client, &frame), [Ev::Binary(payload)]);
}

#[test]
fn handshake_sample_key_and_accept() {
    // RFC 6455 section 1.3: "dGhlIHNhbXBsZSBub25jZQ==" -> "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
    assert_eq!(
        &accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
        b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
    let request = Request {
        protocols: &["chat", "superchat"],
        headers: &[("Origin", "http://example.com")],
        ..Request::new("server.example.com", "/chat")
    };
    let mut hs = ClientHandshake::new(*b"the sample nonce");
    let mut out = [0u8; 512];
    let n = hs.write_request(&mut out, &request).unwrap();
    let expected = "GET /chat HTTP/1.1\r\n\
        Host: server.example.com\r\n\
        Upgrade: websocket\r\n\
        Connection: Upgrade\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
        Sec-WebSocket-Version: 13\r\n\
        Sec-WebSocket-Protocol: chat, superchat\r\n\
        Origin: http://example.com\r\n\r\n";
    assert_eq!(std::str::from_utf8(&out[..n]).unwrap(), expected);

    let response = b"HTTP/1.1 101 Switching Protocols\r\n\
        Upgrade: websocket\r\n\
        Connection: Upgrade\r\n\
        Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\
        Sec-WebSocket-Protocol: chat\r\n\r\n";
    assert_eq!(
        hs.parse_response(response, request.protocols),
        Ok(HandshakeStatus::Complete {
            consumed: response.len(),
            protocol: Some("chat"),
        })
    );
}
