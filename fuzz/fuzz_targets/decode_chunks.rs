//! The decoder, fed arbitrary bytes in arbitrary chunks, in both roles.
//!
//! Input layout: 4 configuration bytes, then the byte stream.
//! - byte 0: bit 0 selects the role; bits 1-2 pick `input_capacity`.
//! - byte 1: `max_fragments` (1-16).
//! - byte 2: `max_message_size` in units of 64 bytes (1-256).
//! - byte 3: seed for the chunk sizes.
//!
//! Asserted: no panic; `consumed` never exceeds the input; what the decoder
//! leaves unconsumed stays below `max(MAX_CONTROL_FRAME_LEN, input_capacity)`
//! (memory is bounded by the configured limits); no message exceeds the
//! message limit; and the chunked run yields exactly the messages and error
//! of the whole-input run.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_codec::{Config, Decoder, MAX_CONTROL_FRAME_LEN, Message, ProtocolError, Role};

#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Text(Vec<u8>),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<(u16, Vec<u8>)>),
}

fn owned(m: &Message<'_>) -> Ev {
    match m {
        Message::Text(s) => Ev::Text(s.as_bytes().to_vec()),
        Message::Binary(b) => Ev::Binary(b.to_vec()),
        Message::Ping(b) => Ev::Ping(b.to_vec()),
        Message::Pong(b) => Ev::Pong(b.to_vec()),
        Message::Close(c) => Ev::Close(c.map(|c| (c.code.0, c.reason.as_bytes().to_vec()))),
    }
}

const BUF: usize = 16 * 1024;

fn run(
    role: Role,
    config: Config,
    stream: &[u8],
    mut next_chunk: impl FnMut() -> usize,
) -> (Vec<Ev>, Option<ProtocolError>) {
    let mut dec = Decoder::new(role, config, [0u8; BUF]);
    let bound = MAX_CONTROL_FRAME_LEN.max(config.input_capacity);
    let limit = dec.max_message_size();
    let mut pending: Vec<u8> = Vec::new();
    let mut events = Vec::new();
    let mut fed = 0;
    loop {
        loop {
            let len = pending.len();
            let (consumed, ev) = match dec.decode(&mut pending) {
                Ok(d) => (d.consumed, d.message.as_ref().map(owned)),
                Err(e) => return (events, Some(e)),
            };
            assert!(consumed <= len, "consumed {consumed} of {len}");
            pending.drain(..consumed);
            match ev {
                Some(ev) => {
                    if let Ev::Text(b) | Ev::Binary(b) = &ev {
                        assert!(
                            b.len() <= limit,
                            "message of {} over limit {limit}",
                            b.len()
                        );
                    }
                    events.push(ev);
                }
                None => break,
            }
        }
        assert!(
            pending.len() < bound,
            "held back {} bytes, bound {bound}",
            pending.len()
        );
        if fed == stream.len() {
            return (events, None);
        }
        let n = next_chunk().clamp(1, stream.len() - fed);
        pending.extend_from_slice(&stream[fed..fed + n]);
        fed += n;
    }
}

fuzz_target!(|data: &[u8]| {
    let [b0, b1, b2, seed, ref stream @ ..] = *data else {
        return;
    };
    let role = if b0 & 1 == 0 {
        Role::Client
    } else {
        Role::Server
    };
    let input_capacity = [0, 64, 1024, 8192][usize::from((b0 >> 1) & 3)];
    let config = Config {
        max_fragments: u32::from(b1 % 16) + 1,
        max_message_size: (usize::from(b2) + 1) * 64,
        max_frame_size: 12 * 1024,
        input_capacity,
    };
    let whole = run(role, config, stream, || usize::MAX);
    let mut state = u32::from(seed) | 1;
    let chunked = run(role, config, stream, || {
        // xorshift: chunk sizes from 1 to 64, mostly small.
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state % 64) as usize + 1
    });
    assert_eq!(whole, chunked);
});
