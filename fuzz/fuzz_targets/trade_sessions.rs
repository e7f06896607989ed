//! Both order-entry sessions on arbitrary venue messages, with the bot's
//! requests in between: nothing may panic, the events of one message stay
//! within the room the caller gave (the session never grows the caller's
//! vector), and the session's tables stay within their bounds.
//!
//! The first byte picks the venue (even: Deribit, odd: Binance), on
//! Binance the key (bit 2 set: Ed25519, which logs the session on; else
//! HMAC, which signs each request) and which requests go between
//! messages; the rest is messages separated by newlines. Ids 1 to 8 are the session's first requests (the login and
//! the set-up), so a seed that answers them walks a session to `Ready`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_trade::binance::BinanceSession;
use tickwire_trade::deribit::{DeribitOptions, DeribitSession};
use tickwire_trade::{
    ClientOrderId, Credentials, Limit, Now, OrderEvent, Out, Request, Session, SessionConfig, Side,
    TimeInForce,
};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec};

/// A throw-away Ed25519 key for the fuzzer, fixed so runs repeat: PKCS#8
/// v1 (RFC 8410: the algorithm id 1.3.101.112 and the 32-byte seed).
const ED25519_PKCS8: [u8; 48] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
];

/// The most events one message may bring (the sessions' documented need:
/// one per open order, as a reconciliation or a cancel-all brings).
const MAX_OPEN: usize = 16;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, data)) = data.split_first() else {
        return;
    };
    let deribit = pick & 1 == 0;
    let (symbols, scales) = if deribit {
        (["BTC-PERPETUAL", "ETH-PERPETUAL"], [(1, 0), (2, 0)])
    } else {
        (["BTCUSDT", "ETHUSDT"], [(2, 5), (2, 4)])
    };
    let config = SessionConfig {
        instruments: symbols
            .iter()
            .zip(scales)
            .map(|(s, (p, q))| InstrumentSpec::new(s, p, q, 0))
            .collect(),
        prefix: "fz".into(),
        cancel_on_disconnect: pick & 2 != 0,
        max_open_orders: MAX_OPEN,
    };
    // A throw-away shared secret (both venues sign with HMAC-SHA256 then),
    // or on Binance a throw-away Ed25519 key.
    let credentials = if !deribit && pick & 4 != 0 {
        Credentials::ed25519("fuzzkey", &ED25519_PKCS8).unwrap()
    } else {
        Credentials::hmac("fuzzkey", b"not-a-secret")
    };
    let mut session: Box<dyn Session> = if deribit {
        Box::new(DeribitSession::new(config, credentials, DeribitOptions::default()).unwrap())
    } else {
        Box::new(BinanceSession::new(config, credentials).unwrap())
    };
    let mut out = Out::new(1 << 16, 256);
    let mut events: Vec<OrderEvent> = Vec::with_capacity(MAX_OPEN + 8);
    let room = events.capacity();
    let mut now = Now {
        unix_ms: 1_700_000_000_000,
        tsc: 1,
    };
    session.on_open(now, &mut out);
    let mut buf = Vec::new();
    for (n, message) in data.split(|&b| b == b'\n').enumerate() {
        now.unix_ms += 7;
        now.tsc += 100;
        buf.clear();
        buf.extend_from_slice(message);
        buf.resize(message.len() + INPUT_PADDING, b' ');
        events.clear();
        session.on_text(&mut buf, message.len(), now, &mut out, &mut events);
        assert!(events.capacity() == room, "the caller's events grew");
        let request = match (pick >> 2).wrapping_add(n as u8) % 5 {
            0 => Request::Place {
                cid: ClientOrderId(n as u64),
                order: Limit {
                    instrument: InstrumentId((n % 3) as u32),
                    side: if n % 2 == 0 { Side::Bid } else { Side::Ask },
                    price: 1 + (n as i64) * 3,
                    size: 1 + n as i64,
                    tif: TimeInForce::GoodTillCancel,
                    post_only: n % 4 == 0,
                },
            },
            1 => Request::Cancel {
                cid: ClientOrderId(n as u64 / 2),
            },
            2 => Request::Amend {
                cid: ClientOrderId(n as u64 / 2),
                // A new id: Binance's `order.cancelReplace` path (the
                // same id is refused before it leaves).
                new_cid: ClientOrderId(1_000 + n as u64),
                price: 5,
                size: 2,
            },
            3 => Request::CancelAll { instrument: None },
            _ => {
                session.on_timer(now, &mut out);
                continue;
            }
        };
        let _ = session.submit(&request, now, &mut out);
        assert!(session.open_orders().len() <= MAX_OPEN);
        if out.len() > 128 {
            out.clear();
        }
        if n % 64 == 63 {
            session.on_close(now);
            session.on_open(now, &mut out);
        }
    }
});
