//! Bad input never panics: the venue's messages cut short, bytes changed,
//! numbers at their extremes, and text that is not JSON at all.

use proptest::prelude::*;

use super::*;

/// Messages of every kind the session reads, as the docs write them.
const MESSAGES: &[&str] = &[
    r#"{"id":5,"status":200,"result":{"symbol":"BTCUSDT","orderId":4293153,"orderListId":-1,"clientOrderId":"tw-8","transactTime":1660801715793,"price":"23416.10000000","origQty":"0.00847000","executedQty":"0.00635000","status":"PARTIALLY_FILLED","timeInForce":"GTC","type":"LIMIT","side":"BUY","fills":[{"price":"23416.10000000","qty":"0.00635000","commission":"0.000000","commissionAsset":"BNB","tradeId":1650422481}]},"rateLimits":[{"rateLimitType":"ORDERS","interval":"SECOND","intervalNum":10,"limit":50,"count":1}]}"#,
    r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1499405658700,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","C":"","x":"TRADE","X":"PARTIALLY_FILLED","r":"NONE","i":4293153,"l":"0.00100000","z":"0.00735000","L":"23416.10000000","T":1499405658699,"t":1650422490,"m":true}}"#,
    r#"{"id":6,"status":409,"error":{"code":-2021,"msg":"Order cancel-replace partially failed.","data":{"cancelResult":"SUCCESS","newOrderResult":"FAILURE","cancelResponse":{"symbol":"BTCUSDT","origClientOrderId":"tw-7","orderId":12,"clientOrderId":"x","transactTime":1,"price":"1.00","origQty":"0.01000","executedQty":"0","status":"CANCELED","timeInForce":"GTC","type":"LIMIT","side":"BUY"},"newOrderResponse":{"code":-2010,"msg":"Account has insufficient balance for requested action."}}}}"#,
    r#"{"id":7,"status":200,"result":[{"symbol":"BTCUSDT","origClientOrderId":"tw-7","orderId":11,"clientOrderId":"x9","transactTime":1684804350068,"price":"1.00","origQty":"0.01000","executedQty":"0","status":"CANCELED","timeInForce":"GTC","type":"LIMIT","side":"BUY"}]}"#,
    r#"{"id":null,"status":401,"error":{"code":-2015,"msg":"Invalid API-key, IP, or permissions for action."}}"#,
];

fn session() -> BinanceSession {
    let mut s = ready(
        r#"[{"symbol":"BTCUSDT","orderId":12,"orderListId":-1,"clientOrderId":"tw-7","price":"1.00","origQty":"0.01000","executedQty":"0","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","updateTime":1}]"#,
    );
    let mut out = Out::new(8192, 16);
    let place = Request::Place {
        cid: ClientOrderId(8),
        order: limit(Side::Bid, 2_341_610, 847),
    };
    s.submit(&place, now(), &mut out).unwrap();
    s
}

proptest! {
    #[test]
    fn changed_or_cut_messages_never_panic(
        which in 0..MESSAGES.len(),
        cut in 0usize..600,
        flips in proptest::collection::vec((0usize..600, any::<u8>()), 0..4),
    ) {
        let mut s = session();
        let mut text = MESSAGES[which].as_bytes().to_vec();
        text.truncate(cut.max(1).min(text.len()));
        for (at, b) in flips {
            if let Some(x) = text.get_mut(at) {
                *x = b;
            }
        }
        let len = text.len();
        text.resize(len + INPUT_PADDING, 0);
        let mut out = Out::new(8192, 16);
        let mut events = Vec::new();
        s.on_text(&mut text, len, now(), &mut out, &mut events);
        // The session still answers for itself.
        let _ = s.state();
        prop_assert!(s.open_orders().len() <= 16);
    }

    #[test]
    fn extreme_numbers_never_panic(
        q in prop_oneof![Just(i64::MAX), Just(0i64), 0..i64::MAX],
        z in prop_oneof![Just(i64::MAX), Just(0i64), 0..i64::MAX],
        count in prop_oneof![Just(u64::MAX), any::<u64>()],
        most in any::<u64>(),
        num in 1u64..100,
    ) {
        let mut s = session();
        // At BTCUSDT's size scale, so that they read back whole.
        let decimal = |v: i64| {
            let mut t = String::new();
            wire::decimal(&mut t, v, 5).unwrap();
            t
        };
        let (q, z) = (decimal(q), decimal(z));
        let report = format!(
            r#"{{"subscriptionId":0,"event":{{"e":"executionReport","E":1,"s":"BTCUSDT","c":"tw-7","S":"BUY","o":"LIMIT","f":"GTC","q":"{q}","p":"1","C":"","x":"TRADE","X":"PARTIALLY_FILLED","r":"NONE","i":12,"l":"{z}","z":"{z}","L":"1","T":1,"t":9,"m":true}}}}"#
        );
        let answer = format!(
            r#"{{"id":5,"status":200,"result":{{"symbol":"BTCUSDT","orderId":1,"clientOrderId":"tw-8","transactTime":1,"price":"1","origQty":"{q}","executedQty":"0","status":"NEW","side":"BUY","fills":[{{"price":"1","qty":"{z}","tradeId":1}},{{"price":"1","qty":"{z}","tradeId":2}}]}},"rateLimits":[{{"rateLimitType":"ORDERS","interval":"SECOND","intervalNum":{num},"limit":{most},"count":{count}}}]}}"#
        );
        for text in [report, answer] {
            let mut buf = text.as_bytes().to_vec();
            buf.resize(text.len() + INPUT_PADDING, 0);
            s.on_text(&mut buf, text.len(), now(), &mut Out::new(8192, 16), &mut Vec::new());
        }
        let mut out = Out::new(8192, 16);
        let _ = s.submit(
            &Request::Amend { cid: ClientOrderId(7), new_cid: ClientOrderId(9), price: 1, size: i64::MIN },
            now(),
            &mut out,
        );
        let _ = s.submit(
            &Request::Place { cid: ClientOrderId(10), order: limit(Side::Bid, 1, 1) },
            now(),
            &mut out,
        );
    }
}
