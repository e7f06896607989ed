//! Both order-entry sessions on arbitrary venue messages, with the bot's
//! requests in between: nothing may panic, the events of one message stay
//! within the room the caller gave (the session never grows the caller's
//! vector), and the session's tables stay within their bounds.
//!
//! The first byte picks the venue (even: Deribit, odd: Binance) and which
//! requests go between messages; the rest is messages separated by
//! newlines. Ids 1 to 8 are the session's first requests (the login and
//! the set-up), so a seed that answers them walks a session to `Ready`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwire_trade::binance::BinanceSession;
use tickwire_trade::deribit::{DeribitOptions, DeribitSession};
use tickwire_trade::{
    ClientOrderId, Credentials, Limit, Now, OrderEvent, Out, Request, Session, SessionConfig,
    Side, TimeInForce,
};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec};

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
    // A throw-away shared secret: both venues sign with HMAC-SHA256 then.
    let credentials = Credentials::hmac("fuzzkey", b"not-a-secret");
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
                new_cid: ClientOrderId(n as u64 / 2),
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
