//! Defects a review found in the Binance session: each of these tests
//! failed before its fix.

use super::*;

/// `openOrders.status` for BTCUSDT refused (the venue's weight limit),
/// ETHBTC's answered after: the session goes `Ready` with BTCUSDT never
/// reconciled (the docs say it stays `Reconciling`).
#[test]
fn a_refused_reconciliation_keeps_the_session_from_ready() {
    let (c, _) = ed25519();
    let mut s = BinanceSession::new(config(), c).unwrap();
    let mut out = Out::new(8192, 32);
    s.on_open(now(), &mut out);
    feed(
        &mut s,
        r#"{"id":1,"status":200,"result":{"apiKey":"KEY","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}}"#,
    );
    feed(
        &mut s,
        r#"{"id":2,"status":200,"result":{"subscriptionId":0}}"#,
    );
    feed(
        &mut s,
        r#"{"id":3,"status":429,"error":{"code":-1003,"msg":"Too much request weight used."}}"#,
    );
    feed(&mut s, r#"{"id":4,"status":200,"result":[]}"#);
    assert_eq!(
        s.state(),
        State::Reconciling,
        "Ready without BTCUSDT's open orders"
    );
}

/// A logon refused for the clock (-1021) or the venue's load (-1003, 429)
/// is made final like a bad key: nothing is sent again, even after a
/// reconnect, until the process restarts.
#[test]
fn a_transient_logon_refusal_is_not_final() {
    for refusal in [
        r#"{"id":1,"status":400,"error":{"code":-1021,"msg":"Timestamp for this request is outside of the recvWindow."}}"#,
        r#"{"id":1,"status":429,"error":{"code":-1003,"msg":"Too many requests queued."}}"#,
    ] {
        let (c, _) = ed25519();
        let mut s = BinanceSession::new(config(), c).unwrap();
        let mut out = Out::new(4096, 8);
        s.on_open(now(), &mut out);
        feed(&mut s, refusal);
        s.on_close(now());
        let mut out = Out::new(4096, 8);
        s.on_open(now(), &mut out);
        assert_eq!(
            out.len(),
            1,
            "logon tried again on the next connection: {refusal}"
        );
    }
}

/// A `TRADE_PREVENTION` report of an order that still works (STP mode
/// DECREMENT on the larger order: `X` stays `NEW`, faqs/stp_faq.md
/// scenario G) is taken for its end: the order is forgotten while it rests.
#[test]
fn an_stp_decrement_does_not_end_a_working_order() {
    let mut s = ready("[]");
    let mut out = Out::new(8192, 16);
    s.submit(
        &Request::Place {
            cid: ClientOrderId(8),
            order: limit(Side::Bid, 2_341_610, 847),
        },
        now(),
        &mut out,
    )
    .unwrap();
    feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","C":"","x":"NEW","X":"NEW","r":"NONE","i":4293153,"l":"0","z":"0","L":"0","T":1,"t":-1,"m":false}}"#,
    );
    assert!(s.open_orders().get(ClientOrderId(8)).is_some());
    let (events, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":2,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","C":"","x":"TRADE_PREVENTION","X":"NEW","r":"NONE","i":4293153,"l":"0","z":"0","L":"0","T":2,"t":-1,"m":false,"v":4,"A":"0.00200000","B":"0.00200000"}}"#,
    );
    assert!(
        s.open_orders().get(ClientOrderId(8)).is_some(),
        "still working at the venue, forgotten here; events {events:?}"
    );
}

/// After a reconnect, an order this session knew that ended while the
/// connection was down is never told (Deribit's session reports it
/// `Canceled`); the orders still open are told `Accepted` a second time.
#[test]
fn orders_gone_during_a_reconnect_are_told_canceled() {
    let open = r#"[{"symbol":"BTCUSDT","orderId":1,"orderListId":-1,"clientOrderId":"tw-8","price":"1.00","origQty":"1.00000","executedQty":"0","cummulativeQuoteQty":"0","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","stopPrice":"0","icebergQty":"0","time":1,"updateTime":1,"isWorking":true,"workingTime":1,"origQuoteOrderQty":"0","selfTradePreventionMode":"NONE"}]"#;
    let mut s = ready(open);
    assert!(s.open_orders().get(ClientOrderId(8)).is_some());
    s.on_close(now());
    let mut out = Out::new(8192, 32);
    s.on_open(now(), &mut out);
    let mut told = Vec::new();
    for m in [
        r#"{"id":5,"status":200,"result":{"apiKey":"KEY","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}}"#,
        r#"{"id":6,"status":200,"result":{"subscriptionId":0}}"#,
        r#"{"id":7,"status":200,"result":[]}"#,
        r#"{"id":8,"status":200,"result":[]}"#,
    ] {
        told.extend(feed(&mut s, m).0);
    }
    assert_eq!(s.state(), State::Ready);
    assert!(
        told.iter()
            .any(|e| e.cid == Some(ClientOrderId(8)) && e.kind == OrderKind::Canceled),
        "tw8 vanished without an event: {told:?}"
    );
}

/// One `FULL` answer with 300 fills (more than any fixed window of trade
/// ids), then the same trades as `executionReport`s: each fill is told
/// once.
#[test]
fn a_fill_is_told_once_whatever_the_burst() {
    let mut s = ready("[]");
    let mut out = Out::new(8192, 16);
    s.submit(
        &Request::Place {
            cid: ClientOrderId(8),
            order: limit(Side::Bid, 100, 100_000),
        },
        now(),
        &mut out,
    )
    .unwrap();
    let id = sent(&out)[0].split(',').next().unwrap()[6..].to_owned();
    let n = 300u64;
    let fills: Vec<String> = (1..=n)
        .map(|t| format!(r#"{{"price":"1.00","qty":"0.00001","commission":"0","commissionAsset":"BTC","tradeId":{t}}}"#))
        .collect();
    let answer = format!(
        r#"{{"id":{id},"status":200,"result":{{"symbol":"BTCUSDT","orderId":9,"orderListId":-1,"clientOrderId":"tw-8","transactTime":1,"price":"1.00","origQty":"1.00000","executedQty":"0.00300","cummulativeQuoteQty":"0","status":"PARTIALLY_FILLED","timeInForce":"GTC","type":"LIMIT","side":"BUY","workingTime":1,"fills":[{}]}}}}"#,
        fills.join(",")
    );
    let (told, _) = feed(&mut s, &answer);
    let fills_told = |t: &[OrderEvent]| {
        t.iter()
            .filter(|e| matches!(e.kind, OrderKind::Filled { .. }))
            .count()
    };
    assert_eq!(fills_told(&told), n as usize);
    let mut again = 0;
    for t in 1..=n {
        let report = format!(
            r#"{{"subscriptionId":0,"event":{{"e":"executionReport","E":2,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"1.00000","p":"1.00","C":"","x":"TRADE","X":"PARTIALLY_FILLED","r":"NONE","i":9,"l":"0.00001","z":"{}","L":"1.00","T":2,"t":{t},"m":false}}}}"#,
            format_args!("0.{:05}", t)
        );
        again += fills_told(&feed(&mut s, &report).0);
    }
    assert_eq!(again, 0, "fills told a second time");
    let o = s.open_orders().get(ClientOrderId(8)).unwrap();
    assert_eq!((o.filled, o.leaves), (300, 99_700));
}

/// The same order prevented again until the venue ends it: its working
/// size shrinks by the prevented quantity, and `EXPIRED_IN_MATCH` ends it.
#[test]
fn an_stp_decrement_shrinks_the_order_and_expiry_in_match_ends_it() {
    let mut s = ready(
        r#"[{"symbol":"BTCUSDT","orderId":4293153,"orderListId":-1,"clientOrderId":"tw-8","price":"23416.10","origQty":"0.00847","executedQty":"0.00100","cummulativeQuoteQty":"0","status":"PARTIALLY_FILLED","timeInForce":"GTC","type":"LIMIT","side":"BUY","stopPrice":"0","icebergQty":"0","time":1,"updateTime":1,"isWorking":true,"workingTime":1,"origQuoteOrderQty":"0","selfTradePreventionMode":"DECREMENT"}]"#,
    );
    let report = |x: &str, status: &str, a: &str| {
        format!(
            r#"{{"subscriptionId":0,"event":{{"e":"executionReport","E":2,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","C":"","x":"{x}","X":"{status}","r":"NONE","i":4293153,"l":"0","z":"0.00100","L":"0","T":2,"t":-1,"m":false,"v":4,"A":"{a}","B":"0.00200000"}}}}"#
        )
    };
    let (e, _) = feed(
        &mut s,
        &report("TRADE_PREVENTION", "PARTIALLY_FILLED", "0.00200000"),
    );
    assert_eq!(
        e.iter().map(|e| e.kind).collect::<Vec<_>>(),
        [OrderKind::Amended {
            price: 2_341_610,
            size: 647
        }]
    );
    let o = s.open_orders().get(ClientOrderId(8)).unwrap();
    assert_eq!((o.filled, o.leaves), (100, 547));
    let (e, _) = feed(
        &mut s,
        &report("TRADE_PREVENTION", "EXPIRED_IN_MATCH", "0.00400000"),
    );
    assert_eq!(
        e.iter().map(|e| e.kind).collect::<Vec<_>>(),
        [OrderKind::Canceled]
    );
    assert!(s.open_orders().get(ClientOrderId(8)).is_none());
}

/// A logon refused for the clock is told and tried again from the timer,
/// not before the backoff; a bad key's refusal is final.
#[test]
fn a_passing_logon_refusal_is_retried_after_a_backoff() {
    let (c, _) = ed25519();
    let mut s = BinanceSession::new(config(), c).unwrap();
    let mut out = Out::new(4096, 8);
    s.on_open(now(), &mut out);
    let (e, _) = feed(
        &mut s,
        r#"{"id":1,"status":400,"error":{"code":-1021,"msg":"Timestamp for this request is outside of the recvWindow."}}"#,
    );
    assert_eq!(e.len(), 1, "the refusal is told: {e:?}");
    assert_eq!(s.state(), State::LoggingIn);
    let at = |ms| Now {
        unix_ms: T0 + ms,
        tsc: 1,
    };
    let mut out = Out::new(4096, 8);
    s.on_timer(at(999), &mut out);
    assert_eq!(out.len(), 0, "tried again before the backoff");
    s.on_timer(at(1_000), &mut out);
    assert!(sent(&out)[0].contains("session.logon"));
    feed(
        &mut s,
        r#"{"id":2,"status":401,"error":{"code":-2015,"msg":"Invalid API-key, IP, or permissions for action."}}"#,
    );
    assert_eq!(s.state(), State::Refused { code: -2015 });
}

/// A refused reconciliation is done again from the timer (the feed never
/// reconnects a session by itself), and `Ready` comes once it is whole.
#[test]
fn a_refused_reconciliation_is_retried_from_the_timer() {
    let (c, _) = ed25519();
    let mut s = BinanceSession::new(config(), c).unwrap();
    let mut out = Out::new(8192, 32);
    s.on_open(now(), &mut out);
    feed(
        &mut s,
        r#"{"id":1,"status":200,"result":{"apiKey":"KEY","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}}"#,
    );
    feed(
        &mut s,
        r#"{"id":2,"status":200,"result":{"subscriptionId":0}}"#,
    );
    // 429 with the time the venue takes requests again.
    feed(
        &mut s,
        &format!(
            r#"{{"id":3,"status":429,"error":{{"code":-1003,"msg":"Too much request weight used.","data":{{"serverTime":{T0},"retryAfter":{}}}}}}}"#,
            T0 + 5_000
        ),
    );
    feed(&mut s, r#"{"id":4,"status":200,"result":[]}"#);
    assert_eq!(s.state(), State::Reconciling);
    let at = |ms| Now {
        unix_ms: T0 + ms,
        tsc: 1,
    };
    let mut out = Out::new(8192, 8);
    s.on_timer(at(4_999), &mut out);
    assert_eq!(out.len(), 0, "sent before the venue's retryAfter");
    s.on_timer(at(5_000), &mut out);
    let asked = sent(&out);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked.iter().all(|m| m.contains("openOrders.status")));
    feed(&mut s, r#"{"id":5,"status":200,"result":[]}"#);
    feed(&mut s, r#"{"id":6,"status":200,"result":[]}"#);
    assert_eq!(s.state(), State::Ready);
}

/// An order still open after a reconnect is not told `Accepted` again,
/// and a place in flight when the connection closed frees its id.
#[test]
fn a_reconnect_keeps_open_orders_quiet_and_frees_ids_in_flight() {
    let open = r#"[{"symbol":"BTCUSDT","orderId":1,"orderListId":-1,"clientOrderId":"tw-8","price":"1.00","origQty":"1.00000","executedQty":"0.20000","cummulativeQuoteQty":"0","status":"PARTIALLY_FILLED","timeInForce":"GTC","type":"LIMIT","side":"BUY","stopPrice":"0","icebergQty":"0","time":1,"updateTime":1,"isWorking":true,"workingTime":1,"origQuoteOrderQty":"0","selfTradePreventionMode":"NONE"}]"#;
    let mut s = ready(open);
    let mut out = Out::new(8192, 8);
    s.submit(
        &Request::Place {
            cid: ClientOrderId(9),
            order: limit(Side::Bid, 100, 1_000),
        },
        now(),
        &mut out,
    )
    .unwrap();
    s.on_close(now());
    let mut out = Out::new(8192, 32);
    s.on_open(now(), &mut out);
    let mut told = Vec::new();
    for m in [
        r#"{"id":6,"status":200,"result":{"apiKey":"KEY","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}}"#,
        r#"{"id":7,"status":200,"result":{"subscriptionId":0}}"#,
        &format!(r#"{{"id":8,"status":200,"result":{open}}}"#),
        r#"{"id":9,"status":200,"result":[]}"#,
    ] {
        told.extend(feed(&mut s, m).0);
    }
    assert_eq!(s.state(), State::Ready);
    assert_eq!(told, [], "news of an order that did not change");
    let o = s.open_orders().get(ClientOrderId(8)).unwrap();
    assert_eq!((o.filled, o.leaves), (20_000, 80_000));
    let mut out = Out::new(8192, 8);
    let again = s.submit(
        &Request::Place {
            cid: ClientOrderId(9),
            order: limit(Side::Bid, 100, 1_000),
        },
        now(),
        &mut out,
    );
    assert_eq!(again, Ok(()), "the id of a place lost with the connection");
}

/// Another bot's orders under a longer prefix that starts with ours
/// (`tw1-8` of prefix `tw1`; a bare `tw8` of no separator) are not this
/// session's.
#[test]
fn another_bots_longer_prefix_is_not_ours() {
    let other = |c: &str| {
        format!(
            r#"[{{"symbol":"BTCUSDT","orderId":1,"orderListId":-1,"clientOrderId":"{c}","price":"1.00","origQty":"1.00000","executedQty":"0","cummulativeQuoteQty":"0","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","stopPrice":"0","icebergQty":"0","time":1,"updateTime":1,"isWorking":true,"workingTime":1,"origQuoteOrderQty":"0","selfTradePreventionMode":"NONE"}}]"#
        )
    };
    for c in ["tw1-8", "tw18", "tw8", "tw-", "tw-8x"] {
        let s = ready(&other(c));
        assert!(s.open_orders().is_empty(), "{c} taken for this session's");
    }
    let s = ready(&other("tw-8"));
    assert!(s.open_orders().get(ClientOrderId(8)).is_some());
}

/// A 429's `retryAfter` holds every request in the local limiter until
/// then (a request while banned extends the ban).
#[test]
fn a_venue_retry_after_holds_the_local_limiter() {
    let mut s = ready("[]");
    let mut out = Out::new(8192, 8);
    let place = |cid| Request::Place {
        cid: ClientOrderId(cid),
        order: limit(Side::Bid, 100, 1_000),
    };
    s.submit(&place(8), now(), &mut out).unwrap();
    let (e, _) = feed(
        &mut s,
        &format!(
            r#"{{"id":5,"status":429,"error":{{"code":-1003,"msg":"Too much request weight used.","data":{{"serverTime":{T0},"retryAfter":{}}}}}}}"#,
            T0 + 5_000
        ),
    );
    assert_eq!(
        e[0].kind,
        OrderKind::Rejected {
            reason: Reject::VenueRateLimited { code: -1003 }
        }
    );
    assert_eq!(
        s.submit(&place(9), now(), &mut out),
        Err(Reject::RateLimited {
            retry_after_ms: 5_000
        })
    );
    let later = Now {
        unix_ms: T0 + 5_000,
        tsc: 1,
    };
    assert_eq!(s.submit(&place(9), later, &mut out), Ok(()));
}
