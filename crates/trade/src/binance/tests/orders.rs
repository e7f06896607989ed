//! Orders: what is written, the news of answers and reports told once,
//! refusals, and the rate limits.

use super::*;

#[test]
fn orders_are_written_with_exact_decimals_and_the_venues_names() {
    let mut s = ready("[]");
    let mut out = Out::new(8192, 16);
    let order = limit(Side::Bid, 6_000_012, 1_500);
    s.submit(
        &Request::Place {
            cid: ClientOrderId(8),
            order,
        },
        now(),
        &mut out,
    )
    .unwrap();
    let post = Limit {
        side: Side::Ask,
        post_only: true,
        ..order
    };
    s.submit(
        &Request::Place {
            cid: ClientOrderId(9),
            order: post,
        },
        now(),
        &mut out,
    )
    .unwrap();
    let m = sent(&out);
    assert_eq!(
        m[0],
        format!(
            r#"{{"id":5,"method":"order.place","params":{{"newClientOrderId":"tw-8","newOrderRespType":"FULL","price":"60000.12","quantity":"0.015","side":"BUY","symbol":"BTCUSDT","timeInForce":"GTC","timestamp":{T0},"type":"LIMIT"}}}}"#
        )
    );
    assert_eq!(
        m[1],
        format!(
            r#"{{"id":6,"method":"order.place","params":{{"newClientOrderId":"tw-9","newOrderRespType":"FULL","price":"60000.12","quantity":"0.015","side":"SELL","symbol":"BTCUSDT","timestamp":{T0},"type":"LIMIT_MAKER"}}}}"#
        )
    );
    let bad = |order| Request::Place {
        cid: ClientOrderId(10),
        order,
    };
    let mut out = Out::new(8192, 16);
    assert_eq!(
        s.submit(&bad(limit(Side::Bid, 0, 1)), now(), &mut out),
        Err(Reject::BadValue)
    );
    let elsewhere = Limit {
        instrument: InstrumentId(5),
        ..order
    };
    assert_eq!(
        s.submit(&bad(elsewhere), now(), &mut out),
        Err(Reject::UnknownInstrument)
    );
    assert_eq!(
        s.submit(
            &Request::Cancel {
                cid: ClientOrderId(44)
            },
            now(),
            &mut out
        ),
        Err(Reject::UnknownOrder)
    );
    assert!(out.is_empty());
}

#[test]
fn an_order_lives_through_answers_and_reports_each_told_once() {
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
    // The report of the new order comes first: the acceptance, with the
    // request's stamp (the round trip is to the first word).
    let (e, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1499405658658,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","P":"0.00000000","F":"0.00000000","g":-1,"C":"","x":"NEW","X":"NEW","r":"NONE","i":4293153,"l":"0.00000000","z":"0.00000000","L":"0.00000000","n":"0","N":null,"T":1499405658657,"t":-1,"I":8641984,"w":true,"m":false,"M":false,"O":1499405658657,"Z":"0.00000000","Y":"0.00000000","Q":"0.00000000","W":1499405658657,"V":"NONE"}}"#,
    );
    let accepted = OrderKind::Accepted {
        side: Side::Bid,
        price: 2_341_610,
        size: 847,
    };
    assert_eq!(e, [event(8, "4293153", accepted, 1499405658657, 77)]);
    // Then the FULL answer with a fill on arrival: the acceptance is an
    // echo, the fill is news.
    let (e, _) = feed(
        &mut s,
        r#"{"id":5,"status":200,"result":{"symbol":"BTCUSDT","orderId":4293153,"orderListId":-1,"clientOrderId":"tw-8","transactTime":1660801715793,"price":"23416.10000000","origQty":"0.00847000","executedQty":"0.00635000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"148.69223500","status":"PARTIALLY_FILLED","timeInForce":"GTC","type":"LIMIT","side":"BUY","workingTime":1660801715793,"fills":[{"price":"23416.10000000","qty":"0.00635000","commission":"0.000000","commissionAsset":"BNB","tradeId":1650422481}],"selfTradePreventionMode":"NONE"},"rateLimits":[{"rateLimitType":"ORDERS","interval":"SECOND","intervalNum":10,"limit":50,"count":1},{"rateLimitType":"ORDERS","interval":"DAY","intervalNum":1,"limit":160000,"count":1},{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000,"count":1}]}"#,
    );
    let fill = |size, leaves, trade_id, maker| OrderKind::Filled {
        price: 2_341_610,
        size,
        leaves,
        trade_id,
        maker,
    };
    assert_eq!(
        e,
        [event(
            8,
            "4293153",
            fill(635, 212, 1650422481, false),
            1660801715793,
            77
        )]
    );
    // The report of that same trade: an echo.
    let trade = |t: u64, l: &str, z: &str| {
        format!(
            r#"{{"subscriptionId":0,"event":{{"e":"executionReport","E":1499405658700,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","P":"0.00000000","F":"0.00000000","g":-1,"C":"","x":"TRADE","X":"PARTIALLY_FILLED","r":"NONE","i":4293153,"l":"{l}","z":"{z}","L":"23416.10000000","n":"0","N":"BNB","T":1499405658699,"t":{t},"I":8641990,"w":true,"m":true,"M":true,"O":1499405658657,"Z":"0","Y":"0","Q":"0.00000000","W":1499405658657,"V":"NONE"}}}}"#
        )
    };
    let (e, _) = feed(&mut s, &trade(1650422481, "0.00635000", "0.00635000"));
    assert!(e.is_empty(), "{e:?}");
    // A later trade as the maker, then the order's last.
    let (e, _) = feed(&mut s, &trade(1650422490, "0.00100000", "0.00735000"));
    assert_eq!(
        e,
        [event(
            8,
            "4293153",
            fill(100, 112, 1650422490, true),
            1499405658699,
            0
        )]
    );
    assert_eq!(s.open_orders().get(ClientOrderId(8)).unwrap().leaves, 112);
    let (e, _) = feed(&mut s, &trade(1650422491, "0.00112000", "0.00847000"));
    assert_eq!(
        e,
        [event(
            8,
            "4293153",
            fill(112, 0, 1650422491, true),
            1499405658699,
            0
        )]
    );
    assert!(s.open_orders().is_empty());
    // Its id names no new order while its late news may still come.
    let mut out = Out::new(8192, 16);
    let again = Request::Place {
        cid: ClientOrderId(8),
        order: limit(Side::Bid, 1, 1),
    };
    assert_eq!(s.submit(&again, now(), &mut out), Err(Reject::Duplicate));
    // A late NEW of the finished order is an echo.
    let (e, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1,"s":"BTCUSDT","c":"tw-8","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","C":"","x":"NEW","X":"NEW","r":"NONE","i":4293153,"l":"0","z":"0","L":"0","T":1,"t":-1,"m":false}}"#,
    );
    assert!(e.is_empty());
}

#[test]
fn cancels_and_cancel_replace_end_the_old_order_and_accept_the_new() {
    let mut s = ready(
        r#"[{"symbol":"BTCUSDT","orderId":12569099453,"orderListId":-1,"clientOrderId":"tw-7","price":"23416.10000000","origQty":"0.00847000","executedQty":"0.00001000","status":"PARTIALLY_FILLED","timeInForce":"GTC","type":"LIMIT_MAKER","side":"SELL","updateTime":1}]"#,
    );
    let mut out = Out::new(8192, 16);
    let amend = Request::Amend {
        cid: ClientOrderId(7),
        new_cid: ClientOrderId(8),
        price: 2_345_000,
        size: 848,
    };
    s.submit(&amend, now(), &mut out).unwrap();
    assert_eq!(
        sent(&out),
        [format!(
            r#"{{"id":5,"method":"order.cancelReplace","params":{{"cancelOrigClientOrderId":"tw-7","cancelReplaceMode":"STOP_ON_FAILURE","newClientOrderId":"tw-8","newOrderRespType":"FULL","price":"23450","quantity":"0.00847","side":"SELL","symbol":"BTCUSDT","timestamp":{T0},"type":"LIMIT_MAKER"}}}}"#
        )]
    );
    let (e, _) = feed(
        &mut s,
        r#"{"id":5,"status":200,"result":{"cancelResult":"SUCCESS","newOrderResult":"SUCCESS","cancelResponse":{"symbol":"BTCUSDT","origClientOrderId":"tw-7","orderId":12569099453,"orderListId":-1,"clientOrderId":"91fe37ce9e69c90d6358c0","transactTime":1684804350068,"price":"23416.10000000","origQty":"0.00847000","executedQty":"0.00001000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"0.23416100","status":"CANCELED","timeInForce":"GTC","type":"LIMIT_MAKER","side":"SELL","selfTradePreventionMode":"NONE"},"newOrderResponse":{"symbol":"BTCUSDT","orderId":12569099454,"orderListId":-1,"clientOrderId":"tw-8","transactTime":1660813156959,"price":"23450.00000000","origQty":"0.00847000","executedQty":"0.00000000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"0.00000000","status":"NEW","timeInForce":"GTC","type":"LIMIT_MAKER","side":"SELL","fills":[],"selfTradePreventionMode":"NONE"}}}"#,
    );
    assert_eq!(
        e,
        [
            event(7, "12569099453", OrderKind::Canceled, 1684804350068, 77),
            event(
                8,
                "12569099454",
                OrderKind::Accepted {
                    side: Side::Ask,
                    price: 2_345_000,
                    size: 847
                },
                1660813156959,
                77
            ),
        ]
    );
    // The report of the cancel names the old id in `C`: an echo.
    let (e, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1,"s":"BTCUSDT","c":"91fe37ce9e69c90d6358c0","S":"SELL","o":"LIMIT_MAKER","f":"GTC","q":"0.00847000","p":"23416.10000000","C":"tw-7","x":"CANCELED","X":"CANCELED","r":"NONE","i":12569099453,"l":"0","z":"0.00001000","L":"0","T":1,"t":-1,"m":false}}"#,
    );
    assert!(e.is_empty());
    // Cancel the new one; the venue's report tells it first.
    let mut out = Out::new(8192, 16);
    s.submit(
        &Request::Cancel {
            cid: ClientOrderId(8),
        },
        now(),
        &mut out,
    )
    .unwrap();
    assert_eq!(
        sent(&out),
        [format!(
            r#"{{"id":6,"method":"order.cancel","params":{{"origClientOrderId":"tw-8","symbol":"BTCUSDT","timestamp":{T0}}}}}"#
        )]
    );
    let (e, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1684804350000,"s":"BTCUSDT","c":"x1","S":"SELL","o":"LIMIT_MAKER","f":"GTC","q":"0.00847000","p":"23450.00000000","C":"tw-8","x":"CANCELED","X":"CANCELED","r":"NONE","i":12569099454,"l":"0","z":"0","L":"0","T":1684804350001,"t":-1,"m":false}}"#,
    );
    assert_eq!(
        e,
        [event(
            8,
            "12569099454",
            OrderKind::Canceled,
            1684804350001,
            77
        )]
    );
    let (e, _) = feed(
        &mut s,
        r#"{"id":6,"status":200,"result":{"symbol":"BTCUSDT","origClientOrderId":"tw-8","orderId":12569099454,"orderListId":-1,"clientOrderId":"x1","transactTime":1684804350068,"price":"23450.00000000","origQty":"0.00847000","executedQty":"0","status":"CANCELED","timeInForce":"GTC","type":"LIMIT_MAKER","side":"SELL"}}"#,
    );
    assert!(e.is_empty(), "the answer is the echo");
    assert!(s.open_orders().is_empty());
}

#[test]
fn rate_limits_are_read_from_answers_and_push_back_before_and_after_sending() {
    let mut s = ready("[]");
    let mut out = Out::new(8192, 16);
    let place = |cid| Request::Place {
        cid: ClientOrderId(cid),
        order: limit(Side::Bid, 100, 100),
    };
    s.submit(&place(1), now(), &mut out).unwrap();
    // The answer says 50 of 50 orders in this 10 s interval are used.
    feed(
        &mut s,
        r#"{"id":5,"status":200,"result":{"symbol":"BTCUSDT","orderId":1,"orderListId":-1,"clientOrderId":"tw-1","transactTime":1,"price":"1.00","origQty":"0.001","executedQty":"0","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","fills":[]},"rateLimits":[{"rateLimitType":"ORDERS","interval":"SECOND","intervalNum":10,"limit":50,"count":50},{"rateLimitType":"ORDERS","interval":"DAY","intervalNum":1,"limit":160000,"count":4043},{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000,"count":321}]}"#,
    );
    let orders = s
        .rate_limits()
        .iter()
        .find(|l| l.kind == LimitKind::Orders && l.interval_ms == 10_000)
        .unwrap();
    assert_eq!((orders.limit, orders.count), (50, 50));
    let mut out = Out::new(8192, 16);
    // 1_700_000_003_250 is 3.25 s into its 10 s interval.
    assert_eq!(
        s.submit(&place(2), now(), &mut out),
        Err(Reject::RateLimited {
            retry_after_ms: 6_750
        })
    );
    assert!(out.is_empty());
    // A cancel counts no order: it still goes.
    s.submit(
        &Request::Cancel {
            cid: ClientOrderId(1),
        },
        now(),
        &mut out,
    )
    .unwrap();
    // The venue's own refusal: a typed event, nothing sent again.
    let later = Now {
        unix_ms: T0 + 10_000,
        tsc: 78,
    };
    let mut out = Out::new(8192, 16);
    s.submit(&place(3), later, &mut out).unwrap();
    let (e, m) = feed(
        &mut s,
        r#"{"id":7,"status":429,"error":{"code":-1015,"msg":"Too many new orders; current limit is 50 orders per 10 SECOND."},"rateLimits":[{"rateLimitType":"ORDERS","interval":"SECOND","intervalNum":10,"limit":50,"count":50}]}"#,
    );
    assert!(m.is_empty());
    assert_eq!(
        e.iter().map(|e| (e.cid, e.kind)).collect::<Vec<_>>(),
        [(
            Some(ClientOrderId(3)),
            OrderKind::Rejected {
                reason: Reject::VenueRateLimited { code: -1015 }
            }
        )]
    );
    assert!(!s.open_orders().known(ClientOrderId(3)));
}

#[test]
fn refusals_say_why_and_unreadable_messages_are_counted() {
    let mut s = ready("[]");
    let mut out = Out::new(8192, 16);
    let post = Limit {
        post_only: true,
        ..limit(Side::Bid, 100, 100)
    };
    s.submit(
        &Request::Place {
            cid: ClientOrderId(4),
            order: post,
        },
        now(),
        &mut out,
    )
    .unwrap();
    let (e, _) = feed(
        &mut s,
        r#"{"id":5,"status":400,"error":{"code":-2010,"msg":"Order would immediately match and take."}}"#,
    );
    assert_eq!(
        e.iter().map(|e| (e.cid, e.kind)).collect::<Vec<_>>(),
        [(
            Some(ClientOrderId(4)),
            OrderKind::Rejected {
                reason: Reject::WouldTake
            }
        )]
    );
    assert!(!s.open_orders().known(ClientOrderId(4)));
    assert_eq!(s.unreadable(), 0);
    assert!(!s.server_shutting_down());
    let (e, _) = feed(
        &mut s,
        r#"{"event":{"e":"serverShutdown","E":1770123456789}}"#,
    );
    assert!(e.is_empty() && s.server_shutting_down());
    let (e, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"outboundAccountPosition","E":1564034571105,"u":1564034571073,"B":[{"a":"ETH","f":"10000.000000","l":"0.000000"}]}}"#,
    );
    assert!(e.is_empty());
    assert_eq!(s.unreadable(), 0);
    feed(&mut s, "{not json");
    feed(&mut s, r#"{"hello":1}"#);
    assert_eq!(s.unreadable(), 2);
}

#[test]
fn a_cancel_replace_that_fails_in_half_says_which_half() {
    let open = r#"[{"symbol":"BTCUSDT","orderId":11,"orderListId":-1,"clientOrderId":"tw-1","price":"1.00","origQty":"0.01000","executedQty":"0","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","updateTime":1},{"symbol":"BTCUSDT","orderId":12,"orderListId":-1,"clientOrderId":"tw-2","price":"1.00","origQty":"0.01000","executedQty":"0","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","updateTime":1}]"#;
    let mut s = ready(open);
    let mut out = Out::new(8192, 16);
    let amend = |cid, new_cid| Request::Amend {
        cid: ClientOrderId(cid),
        new_cid: ClientOrderId(new_cid),
        price: 200,
        size: 1_000,
    };
    s.submit(&amend(1, 3), now(), &mut out).unwrap();
    s.submit(&amend(2, 4), now(), &mut out).unwrap();
    assert_eq!(
        s.submit(&amend(1, 4), now(), &mut out),
        Err(Reject::Duplicate),
        "4 is in flight"
    );
    // STOP_ON_FAILURE, the cancel failed: no new order, the old one works.
    let (e, _) = feed(
        &mut s,
        r#"{"id":5,"status":400,"error":{"code":-2022,"msg":"Order cancel-replace failed.","data":{"cancelResult":"FAILURE","newOrderResult":"NOT_ATTEMPTED","cancelResponse":{"code":-2011,"msg":"Unknown order sent."},"newOrderResponse":null}}}"#,
    );
    assert_eq!(
        e.iter().map(|e| (e.cid, e.kind)).collect::<Vec<_>>(),
        [(
            Some(ClientOrderId(3)),
            OrderKind::Rejected {
                reason: Reject::UnknownOrder
            }
        )]
    );
    assert!(s.open_orders().get(ClientOrderId(1)).is_some());
    assert!(!s.open_orders().known(ClientOrderId(3)));
    // The cancel went through, the new order was refused (409).
    let (e, _) = feed(
        &mut s,
        r#"{"id":6,"status":409,"error":{"code":-2021,"msg":"Order cancel-replace partially failed.","data":{"cancelResult":"SUCCESS","newOrderResult":"FAILURE","cancelResponse":{"symbol":"BTCUSDT","origClientOrderId":"tw-2","orderId":12,"orderListId":-1,"clientOrderId":"91fe37ce9e69c90d6358c0","transactTime":1684804350068,"price":"1.00","origQty":"0.01000","executedQty":"0","status":"CANCELED","timeInForce":"GTC","type":"LIMIT","side":"BUY","selfTradePreventionMode":"NONE"},"newOrderResponse":{"code":-2010,"msg":"Account has insufficient balance for requested action."}}}}"#,
    );
    assert_eq!(
        e.iter().map(|e| (e.cid, e.kind)).collect::<Vec<_>>(),
        [
            (Some(ClientOrderId(2)), OrderKind::Canceled),
            (
                Some(ClientOrderId(4)),
                OrderKind::Rejected {
                    reason: Reject::InsufficientFunds
                }
            )
        ]
    );
    assert_eq!(s.open_orders().len(), 1);
}

#[test]
fn cancel_all_goes_per_symbol_and_others_fills_come_without_a_client_id() {
    let open = r#"[{"symbol":"BTCUSDT","orderId":11,"orderListId":-1,"clientOrderId":"tw-1","price":"1.00","origQty":"0.01000","executedQty":"0","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","updateTime":1}]"#;
    let mut s = ready(open);
    let mut out = Out::new(8192, 16);
    s.submit(&Request::CancelAll { instrument: None }, now(), &mut out)
        .unwrap();
    assert_eq!(
        sent(&out),
        [
            format!(
                r#"{{"id":5,"method":"openOrders.cancelAll","params":{{"symbol":"BTCUSDT","timestamp":{T0}}}}}"#
            ),
            format!(
                r#"{{"id":6,"method":"openOrders.cancelAll","params":{{"symbol":"ETHBTC","timestamp":{T0}}}}}"#
            ),
        ]
    );
    let (e, _) = feed(
        &mut s,
        r#"{"id":5,"status":200,"result":[{"symbol":"BTCUSDT","origClientOrderId":"tw-1","orderId":11,"orderListId":-1,"clientOrderId":"x9","transactTime":1684804350068,"price":"1.00","origQty":"0.01000","executedQty":"0","status":"CANCELED","timeInForce":"GTC","type":"LIMIT","side":"BUY"},{"symbol":"BTCUSDT","origClientOrderId":"manual1","orderId":13,"orderListId":-1,"clientOrderId":"x8","transactTime":1684804350068,"price":"1.00","origQty":"0.01000","executedQty":"0","status":"CANCELED","timeInForce":"GTC","type":"LIMIT","side":"BUY"}]}"#,
    );
    assert_eq!(e, [event(1, "11", OrderKind::Canceled, 1684804350068, 77)]);
    // Nothing open on ETHBTC: the venue says -2011.
    let (e, _) = feed(
        &mut s,
        r#"{"id":6,"status":400,"error":{"code":-2011,"msg":"Unknown order sent."}}"#,
    );
    assert_eq!(
        e.iter()
            .map(|e| (e.cid, e.instrument, e.kind))
            .collect::<Vec<_>>(),
        [(
            None,
            InstrumentId(1),
            OrderKind::Rejected {
                reason: Reject::UnknownOrder
            }
        )]
    );
    // A fill of an order placed elsewhere on the account.
    let (e, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1,"s":"BTCUSDT","c":"web_abc","S":"SELL","o":"LIMIT","f":"GTC","q":"0.00200000","p":"30000.00","C":"","x":"TRADE","X":"FILLED","r":"NONE","i":99,"l":"0.00200000","z":"0.00200000","L":"30000.00","T":5,"t":4242,"m":false}}"#,
    );
    assert_eq!(
        e.iter().map(|e| (e.cid, e.kind)).collect::<Vec<_>>(),
        [(
            None,
            OrderKind::Filled {
                price: 3_000_000,
                size: 200,
                leaves: 0,
                trade_id: 4242,
                maker: false
            }
        )]
    );
}

#[test]
fn an_answer_of_unknown_outcome_leaves_the_order_to_be_found() {
    let mut s = ready("[]");
    let mut out = Out::new(8192, 16);
    let order = Limit {
        instrument: InstrumentId(1),
        ..limit(Side::Ask, 1_000, 10)
    };
    s.submit(
        &Request::Place {
            cid: ClientOrderId(5),
            order,
        },
        now(),
        &mut out,
    )
    .unwrap();
    // `errors.md`, -1007: "Timeout waiting for response from backend
    // server. Send status unknown; execution status unknown."
    let (e, _) = feed(
        &mut s,
        r#"{"id":5,"status":500,"error":{"code":-1007,"msg":"Timeout waiting for response from backend server. Send status unknown; execution status unknown."}}"#,
    );
    assert_eq!(
        e.iter()
            .map(|e| (e.cid, e.instrument, e.kind))
            .collect::<Vec<_>>(),
        [(
            Some(ClientOrderId(5)),
            InstrumentId(1),
            OrderKind::Rejected {
                reason: Reject::Unknown { code: -1007 }
            }
        )]
    );
    // It was placed after all: its report is news, not an echo.
    let (e, _) = feed(
        &mut s,
        r#"{"subscriptionId":0,"event":{"e":"executionReport","E":1,"s":"ETHBTC","c":"tw-5","S":"SELL","o":"LIMIT","f":"GTC","q":"0.0010","p":"0.01000","C":"","x":"NEW","X":"NEW","r":"NONE","i":31,"l":"0","z":"0","L":"0","T":2,"t":-1,"m":false}}"#,
    );
    assert_eq!(
        e.iter().map(|e| (e.cid, e.kind)).collect::<Vec<_>>(),
        [(
            Some(ClientOrderId(5)),
            OrderKind::Accepted {
                side: Side::Ask,
                price: 1_000,
                size: 10
            }
        )]
    );
    assert!(s.open_orders().get(ClientOrderId(5)).is_some());
}
