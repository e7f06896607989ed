//! The `frame_decode` workload, shared by the criterion benchmark
//! (`benches/frame_decode.rs`) and the instruction-count harness
//! (`examples/instructions.rs`), so both measure exactly the same code.
//!
//! Every iteration models one socket read: a batch of frames is copied into
//! the implementation's input buffer (each peer's own way of taking bytes in),
//! then every message in it is decoded and its length summed. The copy costs
//! the same for everyone and is included for everyone; `copy-only` measures it
//! alone. Decoders and buffers are built once and reused (steady state).
//!
//! Cases (ids are `<impl>/<case>`):
//! - `text_128`: unmasked 128-byte text frames, client role, UTF-8 validated.
//! - `binary_16k`: unmasked 16 KiB binary frames, client role.
//! - `fragmented_4x100`: 400-byte text messages sent as 4 frames of 100 bytes.
//! - `masked_text_128`: masked 128-byte text frames, server role.
//!
//! Peers that have no UTF-8 check in the API benchmarked (yawc's codec,
//! websocket-sans-io) get `simdutf8::basic::from_utf8` on each text payload
//! here, so every implementation does the same work. Peers without message
//! reassembly in that API are left out of `fragmented_4x100`.

#![allow(missing_docs)] // Benchmark plumbing, documented at module level.

pub mod orders;
pub mod tls;

/// The arguments of a custom benchmark harness: two sizes, then any
/// further words. `cargo bench` passes `--bench` (then the sizes default to
/// `bench`); `cargo test --benches` passes neither (a smoke run: `smoke`).
pub fn harness_args(bench: (usize, usize), smoke: (usize, usize)) -> (usize, usize, Vec<String>) {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let benching = std::env::args().any(|a| a == "--bench");
    let (a, b) = match (args.first(), args.get(1)) {
        (Some(a), Some(b)) => (
            a.parse().expect("the first argument is a count"),
            b.parse().expect("the second argument is a count"),
        ),
        _ if benching => bench,
        _ => smoke,
    };
    (a, b, args.into_iter().skip(2).collect())
}

use std::hint::black_box;
use std::io::{self, Read, Write};

use bytes::BytesMut;
use tickwire_codec::{Config, Decoder, Message, OpCode, Role, encode_frame};

/// One benchmark case: the bytes of one "read" and what decoding them yields.
pub struct Case {
    pub name: &'static str,
    pub role: Role,
    pub batch: Vec<u8>,
    pub messages: usize,
    pub payload_bytes: usize,
}

/// A 128-byte, JSON-shaped ASCII payload, like a trade message.
fn json_payload(len: usize) -> Vec<u8> {
    let base = br#"{"e":"trade","E":1723075200123,"s":"BTCUSDT","t":3712345678,"p":"61234.56000000","q":"0.00123000","T":1723075200122,"m":true}"#;
    base.iter().copied().cycle().take(len).collect()
}

fn frames(role: Role, parts: &[(OpCode, bool, &[u8])], repeat: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 17];
    let mut key = 0x1234_5678u32;
    for _ in 0..repeat {
        for &(op, fin, payload) in parts {
            // The server role receives masked frames; vary the key per frame.
            key = key.wrapping_mul(0x9e37_79b9).wrapping_add(1);
            let mask = (role == Role::Server).then(|| key.to_le_bytes());
            let n = encode_frame(&mut buf, op, fin, payload, mask).unwrap();
            out.extend_from_slice(&buf[..n]);
        }
    }
    out
}

pub fn cases() -> Vec<Case> {
    let text = json_payload(128);
    let binary: Vec<u8> = (0..16 * 1024).map(|i| (i * 7) as u8).collect();
    let frag = json_payload(400);
    let fragmented = [
        (OpCode::Text, false, &frag[..100]),
        (OpCode::Continuation, false, &frag[100..200]),
        (OpCode::Continuation, false, &frag[200..300]),
        (OpCode::Continuation, true, &frag[300..]),
    ];
    vec![
        Case {
            name: "text_128",
            role: Role::Client,
            batch: frames(Role::Client, &[(OpCode::Text, true, &text)], 64),
            messages: 64,
            payload_bytes: 64 * 128,
        },
        Case {
            name: "binary_16k",
            role: Role::Client,
            batch: frames(Role::Client, &[(OpCode::Binary, true, &binary)], 4),
            messages: 4,
            payload_bytes: 4 * 16 * 1024,
        },
        Case {
            name: "fragmented_4x100",
            role: Role::Client,
            batch: frames(Role::Client, &fragmented, 16),
            messages: 16,
            payload_bytes: 16 * 400,
        },
        Case {
            name: "masked_text_128",
            role: Role::Server,
            batch: frames(Role::Server, &[(OpCode::Text, true, &text)], 64),
            messages: 64,
            payload_bytes: 64 * 128,
        },
    ]
}

/// The harness floor: the copy every implementation's iteration starts with,
/// and no decoding. Subtract it to see what decoding itself costs.
fn copy_only(case: &Case) -> impl FnMut() -> usize + use<> {
    let mut input = vec![0u8; 1 << 18];
    let batch = case.batch.clone();
    let payload_bytes = case.payload_bytes;
    move || {
        input[..batch.len()].copy_from_slice(&batch);
        black_box(&mut input);
        payload_bytes
    }
}

fn tickwire(case: &Case) -> impl FnMut() -> usize + use<> {
    let config = Config {
        input_capacity: 1 << 18,
        ..Config::default()
    };
    let mut decoder = Decoder::new(case.role, config, vec![0u8; 1 << 18]);
    // A read buffer as the connection layer sizes it (large, so page-aligned).
    let mut input = vec![0u8; 1 << 18];
    let batch = case.batch.clone();
    move || {
        let input = &mut input[..batch.len()];
        input.copy_from_slice(&batch);
        let mut start = 0;
        let mut total = 0;
        loop {
            let d = decoder.decode(&mut input[start..]).unwrap();
            start += d.consumed;
            match d.message {
                Some(Message::Text(t)) => total += t.len(),
                Some(Message::Binary(b)) => total += b.len(),
                Some(_) => {}
                None => break,
            }
        }
        total
    }
}

fn nexus(case: &Case) -> impl FnMut() -> usize + use<> {
    use nexus_web::ws::{FrameReader, Message, Role as NRole};
    let role = match case.role {
        Role::Client => NRole::Client,
        Role::Server => NRole::Server,
    };
    let mut reader = FrameReader::builder()
        .role(role)
        .buffer_capacity(1 << 18)
        .message_capacity(1 << 18)
        .build();
    let batch = case.batch.clone();
    move || {
        reader.read(&batch).unwrap();
        let mut total = 0;
        while let Some(m) = reader.next().unwrap() {
            match m {
                Message::Text(t) => total += t.len(),
                Message::Binary(b) => total += b.len(),
                _ => {}
            }
        }
        total
    }
}

/// Replays one batch per `rewind` through `Read`, and discards writes.
struct Replay {
    data: Vec<u8>,
    pos: usize,
}

impl Read for Replay {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.data.len() - self.pos);
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

fn tungstenite(case: &Case) -> impl FnMut() -> usize + use<> {
    use tungstenite::protocol::{Message, Role as TRole, WebSocket};
    let role = match case.role {
        Role::Client => TRole::Client,
        Role::Server => TRole::Server,
    };
    let replay = Replay {
        data: case.batch.clone(),
        pos: 0,
    };
    let mut ws = WebSocket::from_raw_socket(replay, role, None);
    let messages = case.messages;
    move || {
        ws.get_mut().pos = 0;
        let mut total = 0;
        for _ in 0..messages {
            match ws.read().unwrap() {
                Message::Text(t) => total += t.len(),
                Message::Binary(b) => total += b.len(),
                _ => {}
            }
        }
        total
    }
}

fn yawc(case: &Case) -> impl FnMut() -> usize + use<> {
    use tokio_util::codec::Decoder as _;
    use yawc::frame::OpCode as YOp;
    let role = match case.role {
        Role::Client => yawc::Role::Client,
        Role::Server => yawc::Role::Server,
    };
    let mut decoder = yawc::codec::Decoder::new(role, 1 << 20);
    let mut buf = BytesMut::with_capacity(1 << 18);
    let batch = case.batch.clone();
    move || {
        buf.extend_from_slice(&batch);
        let mut total = 0;
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            let payload = frame.payload();
            if frame.opcode() == YOp::Text {
                simdutf8::basic::from_utf8(payload).unwrap();
            }
            total += payload.len();
        }
        total
    }
}

fn sockudo(case: &Case) -> impl FnMut() -> usize + use<> {
    use sockudo_ws::protocol::{Message, Protocol, Role as SRole};
    let role = match case.role {
        Role::Client => SRole::Client,
        Role::Server => SRole::Server,
    };
    let mut protocol = Protocol::new(role, 1 << 20, 1 << 20);
    let mut buf = BytesMut::with_capacity(1 << 18);
    let mut out = Vec::with_capacity(128);
    let batch = case.batch.clone();
    move || {
        buf.extend_from_slice(&batch);
        protocol.process_into(&mut buf, &mut out).unwrap();
        let mut total = 0;
        for m in out.drain(..) {
            match m {
                Message::Text(t) | Message::Binary(t) => total += t.len(),
                _ => {}
            }
        }
        total
    }
}

fn sans_io(case: &Case) -> impl FnMut() -> usize + use<> {
    use websocket_sans_io::{Opcode, WebsocketFrameDecoder, WebsocketFrameEvent};
    let mut decoder = WebsocketFrameDecoder::default();
    let mut input = vec![0u8; 1 << 18];
    let batch = case.batch.clone();
    move || {
        let input = &mut input[..batch.len()];
        input.copy_from_slice(&batch);
        let mut start = 0;
        let mut total = 0;
        loop {
            let r = decoder.add_data(&mut input[start..]).unwrap();
            let chunk = start..start + r.consumed_bytes;
            start += r.consumed_bytes;
            match r.event {
                Some(WebsocketFrameEvent::PayloadChunk { original_opcode }) => {
                    if original_opcode == Opcode::Text {
                        simdutf8::basic::from_utf8(&input[chunk.clone()]).unwrap();
                    }
                    total += chunk.len();
                }
                Some(_) => {}
                None if r.consumed_bytes == 0 => break,
                None => {}
            }
        }
        total
    }
}

/// Every implementation, in report order.
pub const IMPLS: &[&str] = &[
    "copy-only",
    "tickwire",
    "nexus-web",
    "tungstenite",
    "sockudo-ws",
    "yawc",
    "websocket-sans-io",
];

/// One iteration of `name` on `case`, returning the payload bytes decoded;
/// `None` when that implementation's I/O-free API cannot do the case.
pub fn runner(name: &str, case: &Case) -> Option<Box<dyn FnMut() -> usize>> {
    let reassembles = matches!(
        name,
        "copy-only" | "tickwire" | "nexus-web" | "tungstenite" | "sockudo-ws"
    );
    if case.name == "fragmented_4x100" && !reassembles {
        return None;
    }
    Some(match name {
        "copy-only" => Box::new(copy_only(case)),
        "tickwire" => Box::new(tickwire(case)),
        "nexus-web" => Box::new(nexus(case)),
        "tungstenite" => Box::new(tungstenite(case)),
        "sockudo-ws" => Box::new(sockudo(case)),
        "yawc" => Box::new(yawc(case)),
        "websocket-sans-io" => Box::new(sans_io(case)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::{IMPLS, cases, runner};

    #[test]
    fn every_runner_decodes_every_payload_byte_every_time() {
        for case in cases() {
            for &name in IMPLS {
                let Some(mut f) = runner(name, &case) else {
                    assert!(
                        case.name == "fragmented_4x100",
                        "{name} skips {}",
                        case.name
                    );
                    continue;
                };
                for _ in 0..3 {
                    assert_eq!(f(), case.payload_bytes, "{name}/{}", case.name);
                }
            }
        }
    }
}
