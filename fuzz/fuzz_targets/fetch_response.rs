//! `Driver::fetch`'s response reader (status line, headers, Content-Length
//! or chunked body joined in place) on arbitrary bytes: never panics, a
//! complete response's body lies inside the buffer, and a response found
//! complete in a prefix is the same response when more bytes follow.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_net::internals::fetch_response;

fuzz_target!(|data: &[u8]| {
    let mut whole = data.to_vec();
    let full = fetch_response(&mut whole, false);
    if let Ok(Some((_, body))) = &full {
        assert!(body.end <= whole.len());
    }
    let mut at_eof = data.to_vec();
    if let Ok(Some((_, body))) = fetch_response(&mut at_eof, true) {
        assert!(body.end <= at_eof.len());
    }
    // Complete in the first half: the same status and body in the whole.
    let mut half = data[..data.len() / 2].to_vec();
    if let Ok(Some((status, body))) = fetch_response(&mut half, false) {
        let Ok(Some((s2, b2))) = full else {
            panic!("complete in a prefix, not in the whole: {full:?}");
        };
        assert_eq!(status, s2);
        assert_eq!(half[body.clone()], whole[b2]);
    }
});
