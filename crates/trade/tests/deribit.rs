//! The Deribit session's order path allocates nothing once warm: a
//! request written, its answer, a fill on the private channel, a cancel
//! and its answer, all counted by the binary's counting allocator
//! (declared in `order_path.rs`).

use std::io::Write as _;

use tickwire_trade::deribit::{DeribitOptions, DeribitSession};
use tickwire_trade::{
    ClientOrderId, Credentials, Limit, Now, OrderEvent, OrderKind, Out, Request, Session,
    SessionConfig, Side, State, TimeInForce,
};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec};

fn now(ms: u64) -> Now {
    Now {
        unix_ms: 1_700_000_000_000 + ms,
        tsc: ms,
    }
}

/// The `id` of the one message in `out` (read without allocating).
fn id_of(out: &Out) -> u64 {
    let m = out.iter().next().expect("a request");
    let at = m.find("\"id\":").expect("an id") + 5;
    m[at..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0, |n, d| n * 10 + u64::from(d - b'0'))
}

/// Hands `buf` (the text written into it) to the session, padded.
fn feed(
    s: &mut DeribitSession,
    buf: &mut Vec<u8>,
    at: u64,
    out: &mut Out,
    ev: &mut Vec<OrderEvent>,
) {
    let len = buf.len();
    buf.resize(len + INPUT_PADDING, b' ');
    s.on_text(buf, len, now(at), out, ev);
    buf.clear();
}

const ORDER: &str = r#""time_in_force":"good_til_cancelled","reduce_only":false,"post_only":false,"order_type":"limit","max_show":10,"last_update_timestamp":1590483719521,"is_liquidation":false,"instrument_name":"BTC-PERPETUAL","direction":"buy","creation_timestamp":1590483719521,"average_price":0,"api":true,"amount":10"#;

#[test]
fn a_warm_place_fill_cancel_loop_allocates_nothing() {
    let secret: Vec<u8> = (0..16)
        .map(|k| b'a' + (std::process::id() as u8 ^ k) % 26)
        .collect();
    let config = SessionConfig {
        instruments: vec![InstrumentSpec::new("BTC-PERPETUAL", 1, 0, 0)],
        prefix: "bot".into(),
        cancel_on_disconnect: true,
        max_open_orders: 16,
    };
    let mut s = DeribitSession::new(
        config,
        Credentials::hmac("key", &secret),
        DeribitOptions::default(),
    )
    .unwrap();
    let mut out = Out::new(1 << 14, 16);
    let mut ev = Vec::with_capacity(16);
    let mut buf = Vec::with_capacity(1 << 14);

    // Log in and set up: the login, then cancel-on-disconnect, the
    // subscription and the open orders, answered in turn.
    s.on_open(now(0), &mut out);
    let id = id_of(&out);
    out.clear();
    write!(buf, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"access_token":"a","expires_in":900,"refresh_token":"r","scope":"connection","token_type":"bearer"}}}}"#).unwrap();
    feed(&mut s, &mut buf, 1, &mut out, &mut ev);
    let ids: Vec<(u64, bool, bool)> = out
        .iter()
        .map(|m| {
            let at = m.find("\"id\":").unwrap() + 5;
            let id = m[at..].split(',').next().unwrap().parse().unwrap();
            (
                id,
                m.contains("get_open_orders"),
                m.contains("private/subscribe"),
            )
        })
        .collect();
    out.clear();
    for (id, orders, subscribe) in ids {
        let result = match (orders, subscribe) {
            (true, _) => "[]",
            (_, true) => r#"["user.orders.BTC-PERPETUAL.raw","user.trades.BTC-PERPETUAL.raw"]"#,
            _ => "\"ok\"",
        };
        write!(buf, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#).unwrap();
        feed(&mut s, &mut buf, 2, &mut out, &mut ev);
    }
    assert_eq!(s.state(), State::Ready);

    let mut round = |k: u64, s: &mut DeribitSession, out: &mut Out, ev: &mut Vec<OrderEvent>| {
        let at = 1000 * (k + 1);
        let cid = 1000 + k;
        let place = Request::Place {
            cid: ClientOrderId(cid),
            order: Limit {
                instrument: InstrumentId(0),
                side: Side::Bid,
                price: 89005,
                size: 10,
                tif: TimeInForce::GoodTillCancel,
                post_only: true,
            },
        };
        s.submit(&place, now(at), out).unwrap();
        let id = id_of(out);
        out.clear();
        ev.clear();
        write!(buf, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"order":{{"price":8900.5,"order_state":"open","order_id":"BTC-{k}","label":"bot-{cid}","filled_amount":0,{ORDER}}},"trades":[]}}}}"#).unwrap();
        feed(s, &mut buf, at + 1, out, ev);
        write!(buf, r#"{{"jsonrpc":"2.0","method":"subscription","params":{{"channel":"user.trades.BTC-PERPETUAL.raw","data":[{{"trade_id":"BTC-9{k}","timestamp":1590484156350,"state":"open","price":8900.5,"order_id":"BTC-{k}","liquidity":"M","label":"bot-{cid}","instrument_name":"BTC-PERPETUAL","direction":"buy","amount":4}}]}}}}"#).unwrap();
        feed(s, &mut buf, at + 2, out, ev);
        s.submit(
            &Request::Cancel {
                cid: ClientOrderId(cid),
            },
            now(at + 3),
            out,
        )
        .unwrap();
        let id = id_of(out);
        out.clear();
        write!(buf, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"price":8900.5,"order_state":"cancelled","order_id":"BTC-{k}","label":"bot-{cid}","filled_amount":4,{ORDER}}}}}"#).unwrap();
        feed(s, &mut buf, at + 4, out, ev);
        let kinds = ev.iter().map(|e| e.kind);
        assert!(matches!(
            [
                kinds.clone().next(),
                kinds.clone().nth(1),
                kinds.clone().nth(2)
            ],
            [
                Some(OrderKind::Accepted { .. }),
                Some(OrderKind::Filled {
                    size: 4,
                    leaves: 6,
                    ..
                }),
                Some(OrderKind::Canceled)
            ]
        ));
        assert_eq!(ev.len(), 3);
    };
    for k in 0..3 {
        round(k, &mut s, &mut out, &mut ev);
    }
    let ((), n) = tickwire_testkit::allocations(|| {
        for k in 3..203 {
            round(k, &mut s, &mut out, &mut ev);
        }
    });
    assert_eq!(n, 0, "allocations over 200 warm rounds");
    assert!(s.open_orders().is_empty());
    assert_eq!(s.unreadable(), 0);
}
