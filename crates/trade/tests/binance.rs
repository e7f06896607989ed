//! The Binance session's order path allocates nothing once warm: placing,
//! the venue's acknowledgement, a fill report, cancelling and its answer,
//! over and over (counted by the binary's allocator, `order_path.rs`).

use ring::signature::Ed25519KeyPair;
use tickwire_trade::binance::BinanceSession;
use tickwire_trade::{
    ClientOrderId, Credentials, Limit, Now, OrderEvent, OrderKind, Out, Request, Session,
    SessionConfig, Side, State, TimeInForce,
};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec};

const T0: u64 = 1_700_000_000_000;

fn padded(text: &str) -> Vec<u8> {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, 0);
    buf
}

/// The venue's side of round `k`: the place's FULL answer (resting), a
/// partial fill's report, the cancel's answer.
fn round(k: u64) -> [Vec<u8>; 3] {
    let (place, cancel) = (2 + 2 * k, 3 + 2 * k);
    [
        padded(&format!(
            r#"{{"id":{place},"status":200,"result":{{"symbol":"BTCUSDT","orderId":{k},"orderListId":-1,"clientOrderId":"tw{k}","transactTime":1660801715639,"price":"23416.10","origQty":"0.00847","executedQty":"0.00000000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"0.00000000","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","workingTime":1660801715639,"fills":[],"selfTradePreventionMode":"NONE"}},"rateLimits":[{{"rateLimitType":"ORDERS","interval":"SECOND","intervalNum":10,"limit":50,"count":1}},{{"rateLimitType":"ORDERS","interval":"DAY","intervalNum":1,"limit":160000,"count":{k}}},{{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000,"count":2}}]}}"#
        )),
        padded(&format!(
            r#"{{"subscriptionId":0,"event":{{"e":"executionReport","E":1499405658700,"s":"BTCUSDT","c":"tw{k}","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","P":"0.00000000","F":"0.00000000","g":-1,"C":"","x":"TRADE","X":"PARTIALLY_FILLED","r":"NONE","i":{k},"l":"0.00100000","z":"0.00100000","L":"23416.10000000","n":"0","N":"BNB","T":1499405658699,"t":{t},"I":8641990,"w":true,"m":true,"M":true,"O":1499405658657,"Z":"0","Y":"0","Q":"0.00000000","W":1499405658657,"V":"NONE"}}}}"#,
            t = 1_000 + k
        )),
        padded(&format!(
            r#"{{"id":{cancel},"status":200,"result":{{"symbol":"BTCUSDT","origClientOrderId":"tw{k}","orderId":{k},"orderListId":-1,"clientOrderId":"c{k}","transactTime":1684804350068,"price":"23416.10000000","origQty":"0.00847000","executedQty":"0.00100000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"23.41610000","status":"CANCELED","timeInForce":"GTC","type":"LIMIT","side":"BUY","selfTradePreventionMode":"NONE"}},"rateLimits":[{{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000,"count":3}}]}}"#
        )),
    ]
}

#[test]
fn a_warm_place_ack_fill_cancel_loop_allocates_nothing() {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    let credentials = Credentials::ed25519("KEY", pkcs8.as_ref()).unwrap();
    let config = SessionConfig {
        instruments: vec![InstrumentSpec::new("BTCUSDT", 2, 5, 0)],
        prefix: "tw".into(),
        cancel_on_disconnect: false,
        max_open_orders: 16,
    };
    let mut s = BinanceSession::new(config, credentials).unwrap();
    let mut out = Out::new(16 * 1024, 16);
    let mut events: Vec<OrderEvent> = Vec::with_capacity(16);
    let now = |k: u64| Now {
        unix_ms: T0 + k,
        tsc: k,
    };
    s.on_open(now(0), &mut out);
    for text in [
        r#"{"id":1,"status":200,"result":{"apiKey":"KEY","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}}"#,
        r#"{"id":2,"status":200,"result":{"subscriptionId":0}}"#,
        r#"{"id":3,"status":200,"result":[]}"#,
    ] {
        let mut buf = padded(text);
        s.on_text(&mut buf, text.len(), now(0), &mut out, &mut events);
    }
    assert_eq!(s.state(), State::Ready);
    out.clear();

    let warm = 8;
    let rounds = 64;
    let mut texts: Vec<[Vec<u8>; 3]> = (1..=warm + rounds).map(round).collect();
    let mut lens: Vec<[usize; 3]> = texts
        .iter()
        .map(|r| r.clone().map(|b| b.len() - INPUT_PADDING))
        .collect();
    let mut run = |k: u64, texts: &mut [Vec<u8>; 3], lens: &[usize; 3]| {
        let mut counts = [0u64; 3];
        let mut count = |events: &mut Vec<OrderEvent>| {
            for e in events.iter() {
                match e.kind {
                    OrderKind::Accepted { .. } => counts[0] += 1,
                    OrderKind::Filled { .. } => counts[1] += 1,
                    OrderKind::Canceled => counts[2] += 1,
                    _ => {}
                }
            }
            events.clear();
        };
        let place = Request::Place {
            cid: ClientOrderId(k),
            order: Limit {
                instrument: InstrumentId(0),
                side: Side::Bid,
                price: 2_341_610,
                size: 847,
                tif: TimeInForce::GoodTillCancel,
                post_only: false,
            },
        };
        s.submit(&place, now(k), &mut out).unwrap();
        out.clear();
        let [ack, fill, canceled] = texts;
        s.on_text(ack, lens[0], now(k), &mut out, &mut events);
        count(&mut events);
        s.on_text(fill, lens[1], now(k), &mut out, &mut events);
        count(&mut events);
        s.submit(
            &Request::Cancel {
                cid: ClientOrderId(k),
            },
            now(k),
            &mut out,
        )
        .unwrap();
        out.clear();
        s.on_text(canceled, lens[2], now(k), &mut out, &mut events);
        count(&mut events);
        counts
    };
    for (i, (t, l)) in texts
        .iter_mut()
        .zip(lens.iter_mut())
        .take(warm as usize)
        .enumerate()
    {
        assert_eq!(run(i as u64 + 1, t, l), [1, 1, 1]);
    }
    let (totals, allocations) = tickwire_testkit::allocations(|| {
        let mut totals = [0u64; 3];
        for (i, (t, l)) in texts
            .iter_mut()
            .zip(lens.iter())
            .enumerate()
            .skip(warm as usize)
        {
            let c = run(i as u64 + 1, t, l);
            for (a, b) in totals.iter_mut().zip(c) {
                *a += b;
            }
        }
        totals
    });
    assert_eq!(
        totals, [rounds; 3],
        "every round accepted, filled, cancelled"
    );
    assert_eq!(allocations, 0);
    assert!(s.open_orders().is_empty());
    assert_eq!(s.unreadable(), 0);
}
