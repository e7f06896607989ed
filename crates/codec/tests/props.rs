//! Property tests: encode/decode round trips over every opcode, size class,
//! mask and role; and streaming equivalence: a byte stream fed in arbitrary
//! chunks (down to one byte) yields the same messages and errors as fed whole.
//!
//! Case counts follow proptest's default (256) or `PROPTEST_CASES`; for a
//! deeper run: `PROPTEST_CASES=20000 cargo test --release -p tickwire-codec props`.

use proptest::prelude::*;
use tickwire_codec::{Config, EncodeError, OpCode, Role, encode_close, encode_frame};

use crate::util::{Ev, Outcome, decode_all, decoder, run, run_located};

/// The payload sizes where the length encoding changes, plus their neighbours.
fn size_class() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1),
        Just(125),
        Just(126),
        Just(127),
        Just(65535),
        Just(65536),
        65537usize..70000,
        2usize..300,
    ]
}

fn text_of_len(len: usize, seed: u8) -> String {
    // Mostly ASCII with 2-, 3- and 4-byte code points mixed in.
    let mut s = String::with_capacity(len + 4);
    let alphabet = ['a', 'Z', '{', 'κ', '€', '😀', '0'];
    let mut i = usize::from(seed);
    while s.len() < len {
        let c = alphabet[i % alphabet.len()];
        if s.len() + c.len_utf8() > len {
            s.push('x');
        } else {
            s.push(c);
        }
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    s
}

fn frame(opcode: OpCode, fin: bool, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = vec![0u8; payload.len() + 14];
    let n = encode_frame(&mut out, opcode, fin, payload, mask).unwrap();
    out.truncate(n);
    out
}

/// The role whose frames the decoder in `role` receives masks them.
fn mask_for(role: Role, key: [u8; 4]) -> Option<[u8; 4]> {
    match role {
        Role::Server => Some(key),
        Role::Client => None,
    }
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::Client), Just(Role::Server)]
}

proptest! {
    #[test]
    fn data_frames_round_trip(
        role in role(),
        key in any::<[u8; 4]>(),
        len in size_class(),
        seed in any::<u8>(),
        text in any::<bool>(),
        split in any::<prop::sample::Index>(),
    ) {
        let mask = mask_for(role, key);
        let (opcode, payload, expected) = if text {
            let s = text_of_len(len, seed);
            (OpCode::Text, s.clone().into_bytes(), Ev::Text(s))
        } else {
            let b: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(seed | 1)).collect();
            (OpCode::Binary, b.clone(), Ev::Binary(b))
        };
        let config = Config { max_message_size: 1 << 17, ..Config::default() };

        // As one frame.
        let mut dec = decoder(role, config, 1 << 17);
        let out = decode_all(&mut dec, &frame(opcode, true, &payload, mask));
        prop_assert_eq!(&out, &Outcome { events: vec![expected.clone()], error: None });

        // As two fragments (a Text/Binary start and a Continuation), split on a
        // byte boundary that may fall inside a code point.
        let at = split.index(payload.len() + 1);
        let mut stream = frame(opcode, false, &payload[..at], mask);
        stream.extend(frame(OpCode::Continuation, true, &payload[at..], mask));
        let mut dec = decoder(role, config, 1 << 17);
        let out = decode_all(&mut dec, &stream);
        prop_assert_eq!(&out, &Outcome { events: vec![expected], error: None });
    }

    #[test]
    fn control_frames_round_trip(
        role in role(),
        key in any::<[u8; 4]>(),
        len in 0usize..=125,
        over in 126usize..70000,
        code in prop_oneof![1000u16..=1003, 1007u16..=1011, 3000u16..=4999],
    ) {
        let mask = mask_for(role, key);
        let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
        for (opcode, expected) in [
            (OpCode::Ping, Ev::Ping(payload.clone())),
            (OpCode::Pong, Ev::Pong(payload.clone())),
        ] {
            let mut dec = decoder(role, Config::default(), 256);
            let out = decode_all(&mut dec, &frame(opcode, true, &payload, mask));
            prop_assert_eq!(out.events, vec![expected]);
            let mut buf = vec![0u8; over + 14];
            prop_assert_eq!(
                encode_frame(&mut buf, opcode, true, &vec![0; over], mask),
                Err(EncodeError::ControlFrameTooLong)
            );
        }
        let reason = text_of_len(len.saturating_sub(2), key[0]);
        let mut buf = [0u8; 256];
        let n = encode_close(&mut buf, Some((code.into(), &reason)), mask).unwrap();
        let mut dec = decoder(role, Config::default(), 256);
        let out = decode_all(&mut dec, &buf[..n]);
        prop_assert_eq!(out.events, vec![Ev::Close(Some((code, reason)))]);
        let n = encode_close(&mut buf, None, mask).unwrap();
        let mut dec = decoder(role, Config::default(), 256);
        prop_assert_eq!(decode_all(&mut dec, &buf[..n]).events, vec![Ev::Close(None)]);
    }
}

/// One item of a generated stream.
#[derive(Clone, Debug)]
enum Item {
    /// A data message split into `fragments` frames, with a Ping between
    /// fragments where `pings` says so.
    Data {
        text: bool,
        len: usize,
        seed: u8,
        fragments: usize,
        pings: Vec<bool>,
    },
    Pong(Vec<u8>),
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        4 => (any::<bool>(), 0usize..700, any::<u8>(), 1usize..5, prop::collection::vec(any::<bool>(), 4))
            .prop_map(|(text, len, seed, fragments, pings)| Item::Data { text, len, seed, fragments, pings }),
        1 => prop::collection::vec(any::<u8>(), 0..=125).prop_map(Item::Pong),
    ]
}

/// Encodes `items` as the peer of `role` would send them, ending with a
/// Close frame, and returns the stream and the events it must decode to.
fn build_stream(role: Role, items: &[Item], key: [u8; 4]) -> (Vec<u8>, Vec<Ev>) {
    let mask = mask_for(role, key);
    let mut stream = Vec::new();
    let mut events = Vec::new();
    for item in items {
        match item {
            Item::Pong(p) => {
                stream.extend(frame(OpCode::Pong, true, p, mask));
                events.push(Ev::Pong(p.clone()));
            }
            Item::Data {
                text,
                len,
                seed,
                fragments,
                pings,
            } => {
                let (opcode, payload, ev) = if *text {
                    let s = text_of_len(*len, *seed);
                    (OpCode::Text, s.clone().into_bytes(), Ev::Text(s))
                } else {
                    let b: Vec<u8> = (0..*len).map(|i| (i as u8) ^ seed).collect();
                    (OpCode::Binary, b.clone(), Ev::Binary(b))
                };
                let step = payload.len().div_ceil(*fragments).max(1);
                let mut parts: Vec<&[u8]> = payload.chunks(step).collect();
                if parts.is_empty() {
                    parts.push(&[]);
                }
                for (i, part) in parts.iter().enumerate() {
                    let op = if i == 0 { opcode } else { OpCode::Continuation };
                    let last = i + 1 == parts.len();
                    stream.extend(frame(op, last, part, mask));
                    if !last && pings[i % pings.len()] {
                        stream.extend(frame(OpCode::Ping, true, b"hb", mask));
                        events.push(Ev::Ping(b"hb".to_vec()));
                    }
                }
                events.push(ev);
            }
        }
    }
    let mut close = [0u8; 64];
    let n = encode_close(&mut close, Some((1000.into(), "bye")), mask).unwrap();
    stream.extend_from_slice(&close[..n]);
    events.push(Ev::Close(Some((1000, "bye".into()))));
    (stream, events)
}

fn capacity() -> impl Strategy<Value = usize> {
    prop_oneof![Just(0usize), Just(131), Just(800), Just(1 << 16)]
}

proptest! {
    #[test]
    fn chunked_valid_stream_equals_whole(
        role in role(),
        key in any::<[u8; 4]>(),
        items in prop::collection::vec(item(), 0..10),
        chunks in prop::collection::vec(1usize..80, 1..8),
        input_capacity in capacity(),
    ) {
        let (stream, expected) = build_stream(role, &items, key);
        let config = Config { input_capacity, ..Config::default() };
        let whole = decode_all(&mut decoder(role, config, 4096), &stream);
        prop_assert_eq!(&whole, &Outcome { events: expected, error: None });
        let chunked = run(&mut decoder(role, config, 4096), &stream, &chunks);
        prop_assert_eq!(&chunked, &whole);
        let bytewise = run(&mut decoder(role, config, 4096), &stream, &[1]);
        prop_assert_eq!(&bytewise, &whole);
        // decode_located reports the same messages and errors.
        let located = run_located(&mut decoder(role, config, 4096), &stream, &chunks);
        prop_assert_eq!(&located, &whole);
    }

    #[test]
    fn chunked_corrupt_stream_equals_whole(
        role in role(),
        key in any::<[u8; 4]>(),
        items in prop::collection::vec(item(), 1..8),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        chunks in prop::collection::vec(1usize..80, 1..8),
        input_capacity in capacity(),
        max_fragments in 1u32..6,
    ) {
        let (mut stream, _) = build_stream(role, &items, key);
        for (at, byte) in flips {
            let i = at.index(stream.len());
            stream[i] = byte;
        }
        let config = Config {
            input_capacity,
            max_fragments,
            max_message_size: 1000,
            ..Config::default()
        };
        let whole = decode_all(&mut decoder(role, config, 4096), &stream);
        let chunked = run(&mut decoder(role, config, 4096), &stream, &chunks);
        prop_assert_eq!(&chunked, &whole);
        let bytewise = run(&mut decoder(role, config, 4096), &stream, &[1]);
        prop_assert_eq!(&bytewise, &whole);
        // decode_located reports the same messages and errors.
        let located = run_located(&mut decoder(role, config, 4096), &stream, &chunks);
        prop_assert_eq!(&located, &whole);
    }
}
