//! Proves the zero-allocation claim with a counting global allocator.
//!
//! The counter is thread-local, so tests running in parallel on other threads
//! do not disturb it.

use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus, Request};
use tickwire_codec::{Config, Decoder, Message, OpCode, Role, encode_close, encode_frame};
use tickwire_testkit::{CountingAllocator, allocations};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn the_counter_sees_allocations() {
    let (v, n) = allocations(|| vec![1u8; 10]);
    assert_eq!(v.len(), 10);
    assert_eq!(n, 1);
}

/// Builds a stream with every kind of frame the decoder handles: single-frame
/// text and binary, a fragmented text message with a ping in the middle, a
/// large binary frame, a pong and a close.
fn stream(mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = vec![0u8; 1 << 16];
    let mut pos = 0;
    let big = vec![0xabu8; 20_000];
    let frames: [(OpCode, bool, &[u8]); 8] = [
        (OpCode::Text, true, br#"{"e":"trade","p":"42.0"}"#),
        (OpCode::Binary, true, &[1, 2, 3]),
        (OpCode::Text, false, "frag κ".as_bytes()),
        (OpCode::Ping, true, b"hb"),
        (OpCode::Continuation, false, b"ment"),
        (OpCode::Continuation, true, b"ed"),
        (OpCode::Binary, true, &big),
        (OpCode::Pong, true, b""),
    ];
    for (op, fin, payload) in frames {
        pos += encode_frame(&mut out[pos..], op, fin, payload, mask).unwrap();
    }
    pos += encode_close(&mut out[pos..], Some((1000.into(), "done")), mask).unwrap();
    out.truncate(pos);
    out
}

/// Decodes `input` with reads of `chunk` bytes into a fixed buffer, the way
/// the connection layer does, and returns the number of messages.
fn decode_in_chunks(
    dec: &mut Decoder<Vec<u8>>,
    input: &[u8],
    buf: &mut [u8],
    chunk: usize,
) -> usize {
    let (mut start, mut end, mut fed, mut messages) = (0, 0, 0, 0);
    while fed < input.len() || start < end {
        let n = chunk.min(input.len() - fed).min(buf.len() - end);
        buf[end..end + n].copy_from_slice(&input[fed..fed + n]);
        end += n;
        fed += n;
        loop {
            let d = dec.decode(&mut buf[start..end]).expect("valid stream");
            start += d.consumed;
            match d.message {
                Some(Message::Text(t)) => assert!(!t.is_empty()),
                Some(_) => {}
                None => break,
            }
            messages += 1;
        }
        // Compact, as a reader with a fixed buffer does.
        buf.copy_within(start..end, 0);
        end -= start;
        start = 0;
        if n == 0 && fed == input.len() {
            break;
        }
    }
    messages
}

#[test]
fn decoding_allocates_nothing_in_either_role() {
    for (role, mask) in [(Role::Client, None), (Role::Server, Some([5, 6, 7, 8]))] {
        let input = stream(mask);
        for (chunk, input_capacity) in [(input.len(), 0), (7, 0), (1500, 1 << 15), (1, 1 << 15)] {
            let config = Config {
                input_capacity,
                ..Config::default()
            };
            let mut dec = Decoder::new(role, config, vec![0u8; 1 << 16]);
            let mut buf = vec![0u8; 1 << 16];
            let (messages, allocs) =
                allocations(|| decode_in_chunks(&mut dec, &input, &mut buf, chunk));
            assert_eq!(messages, 7, "{role:?} chunk {chunk}");
            assert_eq!(allocs, 0, "{role:?} chunk {chunk} allocated");
        }
    }
}

#[test]
fn encoding_and_handshake_allocate_nothing() {
    let mut out = vec![0u8; 4096];
    let payload = vec![7u8; 1000];
    let ((), allocs) = allocations(|| {
        encode_frame(&mut out, OpCode::Binary, true, &payload, Some([1, 2, 3, 4])).unwrap();
        encode_close(&mut out, Some((1001.into(), "bye")), None).unwrap();
        let request = Request::new("example.com", "/ws");
        let mut hs = ClientHandshake::new([3; 16]);
        hs.write_request(&mut out, &request).unwrap();
        let resp = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                     Connection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n";
        assert!(hs.parse_response(&resp[..20], &[]) == Ok(HandshakeStatus::Partial));
        assert!(hs.parse_response(resp, &[]).is_err());
    });
    assert_eq!(allocs, 0);
}
