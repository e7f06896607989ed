//! An offline walk through the codec, with no network: a client writes its
//! upgrade request, reads a canned server response and the frames that
//! follow it (market-data messages, one fragmented, a ping and a close), and
//! encodes the replies the protocol requires.
//!
//! Run: `cargo run --release -p tickwire-codec --example decode`

#![allow(clippy::print_stdout)] // An example prints what it does.

use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus, Request};
use tickwire_codec::{
    CloseCode, Config, Decoder, Message, OpCode, Role, encode_close, encode_frame,
};

/// What a server would send: the 101 response, then frames, as one byte stream.
fn server_bytes() -> Vec<u8> {
    let mut out = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
        Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        .to_vec();
    let mut frame = [0u8; 512];
    let trade = br#"{"e":"trade","s":"BTCUSDT","p":"61234.56","q":"0.0012","T":1723075200122}"#;
    let book =
        br#"{"e":"depthUpdate","s":"BTCUSDT","U":101,"u":103,"b":[["61234.50","1.2"]],"a":[]}"#;
    let frames: [(OpCode, bool, &[u8]); 5] = [
        (OpCode::Text, true, trade),
        (OpCode::Text, false, &book[..40]),
        (OpCode::Ping, true, b"keepalive"),
        (OpCode::Continuation, true, &book[40..]),
        (OpCode::Close, true, &[0x03, 0xe9]),
    ];
    for (op, fin, payload) in frames {
        let n = encode_frame(&mut frame, op, fin, payload, None).expect("frame fits");
        out.extend_from_slice(&frame[..n]);
    }
    out
}

fn main() {
    // A real client draws the nonce from a CSPRNG for every connection.
    let request = Request::new("stream.example.com:9443", "/ws/btcusdt@trade");
    let mut handshake = ClientHandshake::new(*b"the sample nonce");
    let mut out = [0u8; 512];
    let n = handshake
        .write_request(&mut out, &request)
        .expect("request fits");
    println!(
        "request ({n} bytes):\n{}",
        String::from_utf8_lossy(&out[..n])
    );

    let mut input = server_bytes();
    let HandshakeStatus::Complete { consumed, .. } = handshake
        .parse_response(&input, request.protocols)
        .expect("valid response")
    else {
        unreachable!("the canned response is complete");
    };
    println!(
        "upgrade accepted; {} bytes of frames follow",
        input.len() - consumed
    );

    let mut decoder = Decoder::new(Role::Client, Config::default(), vec![0u8; 1 << 16]);
    let mut reply = [0u8; 256];
    let mut start = consumed;
    loop {
        let decoded = decoder.decode(&mut input[start..]).expect("valid frames");
        start += decoded.consumed;
        let Some(message) = decoded.message else {
            break;
        };
        match message {
            Message::Text(text) => println!("text  {text}"),
            Message::Binary(bytes) => println!("binary {} bytes", bytes.len()),
            Message::Ping(payload) => {
                // Clients mask what they send; the key must be fresh and random.
                let n = encode_frame(&mut reply, OpCode::Pong, true, payload, Some([1, 2, 3, 4]))
                    .expect("pong fits");
                println!(
                    "ping  {:?} -> reply with a {n}-byte pong",
                    String::from_utf8_lossy(payload)
                );
            }
            Message::Pong(_) => println!("pong"),
            Message::Close(close) => {
                let code = close.map_or(CloseCode::NORMAL, |c| c.code);
                let n = encode_close(&mut reply, Some((code, "")), Some([5, 6, 7, 8]))
                    .expect("close fits");
                println!(
                    "close {code} -> echo it in a {n}-byte close frame, then close the socket"
                );
            }
        }
    }
}
