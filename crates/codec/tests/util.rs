//! Shared helpers: an owned copy of decoded events, and a driver that feeds a
//! byte stream in chunks the way a socket reader with an accumulating buffer would.

use tickwire_codec::{
    Config, Decoder, FrameKind, Location, MAX_CONTROL_FRAME_LEN, Message, ProtocolError, Role,
};

/// An owned copy of a [`Message`], for comparing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    Text(String),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<(u16, String)>),
}

impl Ev {
    pub(crate) fn of(m: &Message<'_>) -> Ev {
        match m {
            Message::Text(s) => Ev::Text(s.to_string()),
            Message::Binary(b) => Ev::Binary(b.to_vec()),
            Message::Ping(b) => Ev::Ping(b.to_vec()),
            Message::Pong(b) => Ev::Pong(b.to_vec()),
            Message::Close(c) => Ev::Close(c.map(|c| (c.code.0, c.reason.to_string()))),
        }
    }
}

/// What a run produced: the events in order, then the error that stopped it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) events: Vec<Ev>,
    pub(crate) error: Option<ProtocolError>,
}

pub(crate) fn decoder(role: Role, config: Config, buf_len: usize) -> Decoder<Vec<u8>> {
    Decoder::new(role, config, vec![0; buf_len])
}

/// Decodes everything in `input` in one buffer, as a single read would.
pub(crate) fn decode_all(dec: &mut Decoder<Vec<u8>>, input: &[u8]) -> Outcome {
    run(dec, input, &[input.len().max(1)])
}

/// Feeds `stream` in chunks whose sizes cycle through `chunks` (0 acts as 1),
/// decoding after every chunk. Asserts the decoder's contract on the way:
/// `consumed` never exceeds the input, and what the decoder leaves
/// unconsumed stays below `max(MAX_CONTROL_FRAME_LEN, input_capacity)`.
pub(crate) fn run(dec: &mut Decoder<Vec<u8>>, stream: &[u8], chunks: &[usize]) -> Outcome {
    let bound = MAX_CONTROL_FRAME_LEN.max(dec.config().input_capacity);
    let mut pending: Vec<u8> = Vec::new();
    let mut events = Vec::new();
    let mut fed = 0;
    let mut i = 0;
    loop {
        loop {
            let (consumed, ev) = match dec.decode(&mut pending) {
                Err(error) => {
                    return Outcome {
                        events,
                        error: Some(error),
                    };
                }
                Ok(d) => (d.consumed, d.message.as_ref().map(Ev::of)),
            };
            assert!(consumed <= pending.len(), "consumed more than the input");
            pending.drain(..consumed);
            match ev {
                Some(ev) => events.push(ev),
                None => break,
            }
        }
        assert!(
            pending.len() < bound,
            "decoder held back {} bytes (bound {bound})",
            pending.len()
        );
        if fed == stream.len() {
            return Outcome {
                events,
                error: None,
            };
        }
        let n = chunks[i % chunks.len()].clamp(1, stream.len() - fed);
        i += 1;
        pending.extend_from_slice(&stream[fed..fed + n]);
        fed += n;
    }
}

/// Like [`run`], through `decode_located`: the events are rebuilt from the
/// reported kinds and locations.
pub(crate) fn run_located(dec: &mut Decoder<Vec<u8>>, stream: &[u8], chunks: &[usize]) -> Outcome {
    let mut pending: Vec<u8> = Vec::new();
    let mut events = Vec::new();
    let mut fed = 0;
    let mut i = 0;
    loop {
        loop {
            let located = match dec.decode_located(&mut pending) {
                Err(error) => {
                    return Outcome {
                        events,
                        error: Some(error),
                    };
                }
                Ok(l) => l,
            };
            let ev = located.frame.map(|(kind, location)| {
                let bytes = match location {
                    Location::Input { start, end } => pending[start..end].to_vec(),
                    Location::Buffer { len } => dec.message_buffer()[..len].to_vec(),
                };
                match kind {
                    FrameKind::Text => Ev::Text(String::from_utf8(bytes).unwrap()),
                    FrameKind::Binary => Ev::Binary(bytes),
                    FrameKind::Ping => Ev::Ping(bytes),
                    FrameKind::Pong => Ev::Pong(bytes),
                    FrameKind::Close(code) => Ev::Close(
                        code.map(|c| (c.0, String::from_utf8(bytes[2..].to_vec()).unwrap())),
                    ),
                }
            });
            pending.drain(..located.consumed);
            match ev {
                Some(ev) => events.push(ev),
                None => break,
            }
        }
        if fed == stream.len() {
            return Outcome {
                events,
                error: None,
            };
        }
        let n = chunks[i % chunks.len()].clamp(1, stream.len() - fed);
        i += 1;
        pending.extend_from_slice(&stream[fed..fed + n]);
        fed += n;
    }
}
