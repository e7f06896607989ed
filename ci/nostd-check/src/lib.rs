//! See Cargo.toml: a no_std, no-alloc consumer of tickwire-codec and tickwire-sbe.
#![no_std]

use tickwire_codec::handshake::{ClientHandshake, Request};
use tickwire_codec::{Config, Decoder, Message, OpCode, Role, encode_frame};

/// Encodes, decodes and writes a handshake request, so that all of the codec
/// is linked into the library. Never run; only built.
#[unsafe(no_mangle)]
pub extern "C" fn tickwire_nostd_check() -> usize {
    let mut frame = [0u8; 64];
    let n = encode_frame(&mut frame, OpCode::Text, true, b"hello", None).unwrap_or(0);
    let mut decoder = Decoder::new(Role::Client, Config::default(), [0u8; 256]);
    let mut total = 0;
    if let Ok(d) = decoder.decode(&mut frame[..n]) {
        if let Some(Message::Text(t)) = d.message {
            total += t.len();
        }
    }
    let hs = ClientHandshake::new([0; 16]);
    let mut out = [0u8; 256];
    total
        + hs.write_request(&mut out, &Request::new("example.com", "/"))
            .unwrap_or(0)
}

/// Writes and reads an SBE book diff, so that the decoder is linked too.
/// Never run; only built.
#[unsafe(no_mangle)]
pub extern "C" fn tickwire_nostd_check_sbe() -> i64 {
    use tickwire_sbe::spot_stream::{self, DiffHead, Level, Message, encode};
    let mut frame = [0u8; 128];
    let bids = [Level { price: 1, qty: 2 }];
    let n =
        encode::depth_diff(&mut frame, &DiffHead::default(), &bids, &[], b"BTCUSDT").unwrap_or(0);
    match spot_stream::decode(&frame[..n]) {
        Ok(Message::DepthDiff(d)) => d.bids().map(|l| l.price + l.qty).sum(),
        _ => 0,
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
