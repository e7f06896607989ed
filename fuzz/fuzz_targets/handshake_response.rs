//! The handshake response validator, fed arbitrary bytes whole and growing.
//!
//! Asserted: no panic; `consumed` never exceeds the input; a response larger
//! than the configured cap is never `Partial`; and feeding the response one
//! growing prefix at a time (as a reader appending to a buffer does) ends with
//! the same answer as parsing it whole.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus};

const MAX: usize = 2048;

const OFFERED: &[&str] = &["chat", "v2.json"];

fn handshake() -> ClientHandshake {
    let mut hs = ClientHandshake::new(*b"the sample nonce");
    hs.set_max_response_len(MAX);
    hs
}

fuzz_target!(|data: &[u8]| {
    let Some((&step, input)) = data.split_first() else {
        return;
    };
    let whole = handshake().parse_response(input, OFFERED);
    match whole {
        Ok(HandshakeStatus::Complete { consumed, .. }) => assert!(consumed <= input.len()),
        Ok(HandshakeStatus::Partial) => assert!(input.len() <= MAX),
        Err(_) => {}
    }
    let mut hs = handshake();
    let step = usize::from(step % 32) + 1;
    let mut end = 0;
    let grown = loop {
        end = (end + step).min(input.len());
        let r = hs.parse_response(&input[..end], OFFERED);
        if end == input.len() || !matches!(r, Ok(HandshakeStatus::Partial)) {
            break r;
        }
    };
    // A prefix can only be rejected early if the whole input is rejected too.
    match (&whole, &grown) {
        (Ok(w), Ok(g)) => assert_eq!(w, g),
        (Err(_), Err(_)) => {}
        _ => panic!("whole {whole:?} but grown {grown:?}"),
    }
});
