//! One test per RFC 6455 rule and per limit, each expecting its specific error
//! and close code. Inputs are hand-built bytes, so the encoder's own checks
//! cannot hide a decoder bug.

use tickwire_codec::{CloseCode, Config, ProtocolError, Role};

use crate::util::{Ev, decode_all, decoder, run};

/// Decodes `bytes` whole, and again one byte at a time, and expects the same
/// error both ways, with the given close code.
fn expect(role: Role, config: Config, bytes: &[u8], error: ProtocolError, code: u16) {
    for chunk in [bytes.len().max(1), 1] {
        let mut dec = decoder(role, config, 1 << 16);
        let out = run(&mut dec, bytes, &[chunk]);
        assert_eq!(out.error, Some(error), "chunk {chunk}: {bytes:02x?}");
        assert_eq!(error.close_code(), CloseCode(code));
        // The decoder is poisoned: it repeats the error.
        assert_eq!(dec.decode(&mut []).err(), Some(error));
        assert_eq!(dec.error(), Some(error));
    }
}

fn client(bytes: &[u8], error: ProtocolError, code: u16) {
    expect(Role::Client, Config::default(), bytes, error, code);
}

#[test]
fn rsv_bits_without_an_extension() {
    for rsv in [0x40, 0x20, 0x10, 0x70] {
        client(&[0x81 | rsv, 0x00], ProtocolError::ReservedBits, 1002);
    }
}

#[test]
fn reserved_opcodes() {
    for op in (0x3..=0x7).chain(0xb..=0xf) {
        client(&[0x80 | op, 0x00], ProtocolError::ReservedOpcode(op), 1002);
    }
}

#[test]
fn control_frames_must_have_fin() {
    for op in [0x8, 0x9, 0xa] {
        client(&[op, 0x00], ProtocolError::FragmentedControlFrame, 1002);
    }
}

#[test]
fn control_frames_carry_at_most_125_bytes() {
    for op in [0x88, 0x89, 0x8a] {
        client(
            &[op, 126, 0x00, 126],
            ProtocolError::ControlFrameTooLong,
            1002,
        );
        client(
            &[op, 127, 0, 0, 0, 0, 0, 0, 0, 5],
            ProtocolError::ControlFrameTooLong,
            1002,
        );
    }
    // 125 is fine.
    let mut ping = vec![0x89, 125];
    ping.extend([b'p'; 125]);
    let mut dec = decoder(Role::Client, Config::default(), 1024);
    assert_eq!(
        decode_all(&mut dec, &ping).events,
        [Ev::Ping(vec![b'p'; 125])]
    );
}

#[test]
fn sixty_four_bit_length_with_msb_set() {
    client(
        &[0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1],
        ProtocolError::InvalidLength,
        1002,
    );
}

#[test]
fn masking_rules_follow_the_role() {
    client(
        &[0x81, 0x81, 1, 2, 3, 4, b'a' ^ 1],
        ProtocolError::MaskedFrame,
        1002,
    );
    expect(
        Role::Server,
        Config::default(),
        &[0x81, 0x01, b'a'],
        ProtocolError::UnmaskedFrame,
        1002,
    );
}

#[test]
fn continuation_without_a_started_message() {
    client(
        &[0x80, 0x01, b'a'],
        ProtocolError::UnexpectedContinuation,
        1002,
    );
    // Also after a fragmented message has completed.
    client(
        &[0x01, 0x01, b'a', 0x80, 0x01, b'b', 0x80, 0x00],
        ProtocolError::UnexpectedContinuation,
        1002,
    );
}

#[test]
fn new_data_frame_inside_a_fragmented_message() {
    client(
        &[0x01, 0x01, b'a', 0x81, 0x01, b'b'],
        ProtocolError::ExpectedContinuation,
        1002,
    );
    client(
        &[0x02, 0x01, b'a', 0x02, 0x01, b'b'],
        ProtocolError::ExpectedContinuation,
        1002,
    );
}

#[test]
fn close_with_one_byte_payload() {
    client(
        &[0x88, 0x01, 0x03],
        ProtocolError::InvalidClosePayload,
        1002,
    );
}

#[test]
fn close_codes_outside_the_valid_ranges() {
    for code in [
        0u16, 999, 1004, 1005, 1006, 1012, 1015, 1016, 1100, 2000, 2999, 5000, 65535,
    ] {
        let [hi, lo] = code.to_be_bytes();
        client(
            &[0x88, 0x02, hi, lo],
            ProtocolError::InvalidCloseCode(code),
            1002,
        );
    }
    for code in [
        1000u16, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999,
    ] {
        let [hi, lo] = code.to_be_bytes();
        let mut dec = decoder(Role::Client, Config::default(), 64);
        let out = decode_all(&mut dec, &[0x88, 0x04, hi, lo, b'o', b'k']);
        assert_eq!(out.events, [Ev::Close(Some((code, "ok".into())))]);
    }
}

#[test]
fn close_reason_must_be_utf8() {
    client(
        &[0x88, 0x04, 0x03, 0xe8, 0xce, 0x41],
        ProtocolError::InvalidUtf8,
        1007,
    );
}

#[test]
fn empty_close_has_no_code() {
    let mut dec = decoder(Role::Client, Config::default(), 64);
    assert_eq!(
        decode_all(&mut dec, &[0x88, 0x00]).events,
        [Ev::Close(None)]
    );
    assert!(dec.is_closed());
}

#[test]
fn frames_after_close() {
    client(
        &[0x88, 0x00, 0x81, 0x00],
        ProtocolError::FrameAfterClose,
        1002,
    );
}

#[test]
fn invalid_utf8_in_a_single_frame() {
    client(
        &[0x81, 0x03, b'a', 0xff, b'b'],
        ProtocolError::InvalidUtf8,
        1007,
    );
    // A text message must not end inside a code point.
    client(&[0x81, 0x02, b'a', 0xce], ProtocolError::InvalidUtf8, 1007);
}

/// Fail-fast: a frame announcing 100 bytes, of which only 11 have arrived,
/// the last one invalid. The error comes now, not when the frame completes.
#[test]
fn invalid_utf8_fails_before_the_frame_completes() {
    let mut partial = vec![0x81, 100];
    partial.extend_from_slice(b"0123456789");
    partial.push(0xff);
    for input_capacity in [0, 4096] {
        let config = Config {
            input_capacity,
            ..Config::default()
        };
        let mut dec = decoder(Role::Client, config, 4096);
        let mut input = partial.clone();
        assert_eq!(
            dec.decode(&mut input).err(),
            Some(ProtocolError::InvalidUtf8)
        );
        // One byte at a time it fails exactly at the bad byte.
        let mut dec = decoder(Role::Client, config, 4096);
        let mut pending = Vec::new();
        for (i, b) in partial.iter().enumerate() {
            pending.push(*b);
            match dec.decode(&mut pending) {
                Ok(d) => {
                    assert!(d.message.is_none());
                    let n = d.consumed;
                    pending.drain(..n);
                }
                Err(e) => {
                    assert_eq!(e, ProtocolError::InvalidUtf8);
                    assert_eq!(i, partial.len() - 1, "failed at byte {i}");
                }
            }
        }
        assert_eq!(dec.error(), Some(ProtocolError::InvalidUtf8));
    }
}

/// Fail-fast across fragments: the first fragment ends inside a code point
/// (0xCE starts a 2-byte sequence) and the second continues it with a byte
/// that cannot continue it. The error comes with that byte, while the second
/// fragment is still incomplete.
#[test]
fn invalid_utf8_across_fragment_boundaries() {
    let stream = [0x01, 0x02, b'a', 0xce, 0x80, 0x05, b'A', b'b'];
    let mut dec = decoder(Role::Client, Config::default(), 4096);
    let mut input = stream.to_vec();
    assert_eq!(
        dec.decode(&mut input).err(),
        Some(ProtocolError::InvalidUtf8)
    );

    // The same split is fine when the continuation byte is valid.
    let mut dec = decoder(Role::Client, Config::default(), 4096);
    let out = decode_all(&mut dec, &[0x01, 0x02, b'a', 0xce, 0x80, 0x02, 0xba, b'!']);
    assert_eq!(out.events, [Ev::Text("aκ!".into())]);
    // Masked, in the server role, split over a control frame.
    let mut dec = decoder(Role::Server, Config::default(), 4096);
    let k = [9, 8, 7, 6];
    let out = decode_all(
        &mut dec,
        &[
            0x01,
            0x82,
            9,
            8,
            7,
            6,
            b'a' ^ 9,
            0xce ^ 8, //
            0x89,
            0x80,
            1,
            1,
            1,
            1, //
            0x80,
            0x81,
            k[0],
            k[1],
            k[2],
            k[3],
            0x41 ^ k[0],
        ],
    );
    assert_eq!(out.events, [Ev::Ping(vec![])]);
    assert_eq!(out.error, Some(ProtocolError::InvalidUtf8));
}

#[test]
fn frame_size_limit_is_checked_on_the_header() {
    let config = Config {
        max_frame_size: 999,
        ..Config::default()
    };
    // Only the header is present: the limit fires before any payload arrives.
    expect(
        Role::Client,
        config,
        &[0x82, 126, 0x03, 0xe8],
        ProtocolError::FrameTooLarge,
        1009,
    );
    let mut dec = decoder(Role::Client, config, 4096);
    let mut frame = vec![0x82, 126, 0x03, 0xe7];
    frame.extend([0u8; 999]);
    assert_eq!(
        decode_all(&mut dec, &frame).events,
        [Ev::Binary(vec![0; 999])]
    );
}

#[test]
fn message_size_limit_is_checked_before_copying() {
    let config = Config {
        max_message_size: 1000,
        ..Config::default()
    };
    // A single frame over the limit.
    expect(
        Role::Client,
        config,
        &[0x82, 126, 0x03, 0xe9],
        ProtocolError::MessageTooLarge,
        1009,
    );
    // Two fragments whose sum is over it: the second header trips it.
    let mut stream = vec![0x02, 126, 0x02, 0x58];
    stream.extend([1u8; 600]);
    stream.extend([0x80, 126, 0x01, 0x91]); // 401 more: 1001 in all
    expect(
        Role::Client,
        config,
        &stream,
        ProtocolError::MessageTooLarge,
        1009,
    );
}

#[test]
fn message_buffer_caps_the_message_size() {
    let mut dec = decoder(Role::Client, Config::default(), 100);
    assert_eq!(dec.max_message_size(), 100);
    let mut frame = vec![0x82, 101];
    frame.extend([0u8; 101]);
    // Rejected even though the frame is complete and would need no copy:
    // the limit must not depend on how the bytes were chunked.
    assert_eq!(
        decode_all(&mut dec, &frame).error,
        Some(ProtocolError::MessageTooLarge)
    );
}

#[test]
fn zero_length_continuations_count_as_fragments() {
    let config = Config {
        max_fragments: 4,
        ..Config::default()
    };
    // Start + 3 empty continuations = 4 frames: fine, then one more is too many.
    let ok = [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00];
    let mut dec = decoder(Role::Client, config, 64);
    assert_eq!(decode_all(&mut dec, &ok).events, [Ev::Binary(vec![])]);
    let bad = [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00];
    expect(
        Role::Client,
        config,
        &bad,
        ProtocolError::TooManyFragments,
        1008,
    );
}

#[test]
fn reset_clears_a_poisoned_decoder() {
    let mut dec = decoder(Role::Client, Config::default(), 64);
    assert!(decode_all(&mut dec, &[0x83, 0x00]).error.is_some());
    dec.reset();
    assert_eq!(dec.error(), None);
    let out = decode_all(&mut dec, &[0x81, 0x02, b'o', b'k']);
    assert_eq!(
        out,
        crate::util::Outcome {
            events: vec![Ev::Text("ok".into())],
            error: None
        }
    );
}
