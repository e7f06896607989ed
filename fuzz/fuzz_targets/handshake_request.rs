//! The server-side request validator, fed arbitrary bytes whole and growing.
//!
//! Asserted: no panic; `consumed` never exceeds the input; an input larger
//! than the cap is never `Partial`; growing prefixes end with the same answer
//! as the whole input; and an accepted request's answer can be written.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_codec::handshake::{RequestStatus, ServerHandshake, write_rejection, write_response};

const MAX: usize = 2048;

fn handshake() -> ServerHandshake {
    let mut hs = ServerHandshake::new();
    hs.set_max_request_len(MAX);
    hs
}

fuzz_target!(|data: &[u8]| {
    let Some((&step, input)) = data.split_first() else {
        return;
    };
    let whole = handshake().parse_request(input);
    let mut out = [0u8; 512];
    match &whole {
        Ok(RequestStatus::Complete { consumed, request }) => {
            assert!(*consumed <= input.len());
            let protocol = request.offered_protocols().next();
            let _ = write_response(&mut out, request.accept(), protocol);
        }
        Ok(RequestStatus::Partial) => assert!(input.len() <= MAX),
        Err(e) => {
            write_rejection(&mut out, *e).expect("a rejection fits in 512 bytes");
        }
    }
    let mut hs = handshake();
    let step = usize::from(step % 32) + 1;
    let mut end = 0;
    let grown = loop {
        end = (end + step).min(input.len());
        let r = hs.parse_request(&input[..end]);
        if end == input.len() || !matches!(r, Ok(RequestStatus::Partial)) {
            break r;
        }
    };
    match (&whole, &grown) {
        (Ok(w), Ok(g)) => assert_eq!(w, g),
        (Err(_), Err(_)) => {}
        _ => panic!("whole {whole:?} but grown {grown:?}"),
    }
});
