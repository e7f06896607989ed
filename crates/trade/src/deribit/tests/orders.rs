//! Orders: requests as written, refusals, and answers and notifications
//! decoded to events.

use super::*;
use crate::order::VenueOrderId;

#[test]
fn requests_are_written_as_the_docs_ask() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let m = r
        .submit(
            Request::Place {
                cid: ClientOrderId(42),
                order: Limit {
                    instrument: InstrumentId(1),
                    side: Side::Ask,
                    price: 210_050,
                    size: 3,
                    tif: TimeInForce::GoodTillCancel,
                    post_only: true,
                },
            },
            30,
        )
        .unwrap();
    assert_eq!(m["method"], "private/sell");
    assert_eq!(
        m["params"],
        serde_json::json!({"instrument_name":"ETH-PERPETUAL","amount":3,"type":"limit","price":2100.5,
            "label":"bot-42","time_in_force":"good_til_cancelled","post_only":true,"reject_post_only":true})
    );
    let mut ioc = place(43, Side::Bid, 89000, 1);
    if let Request::Place { order, .. } = &mut ioc {
        order.tif = TimeInForce::ImmediateOrCancel;
    }
    assert_eq!(
        r.submit(ioc, 31).unwrap()["params"]["time_in_force"],
        "immediate_or_cancel"
    );
    r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("ETH-7", "bot-42", "open", "2100.5", 3, 0)
                .replace("BTC-PERPETUAL", "ETH-PERPETUAL")
                .replace("\"buy\"", "\"sell\"")
        ),
        32,
    );
    let edit = r
        .submit(
            Request::Amend {
                cid: ClientOrderId(42),
                new_cid: ClientOrderId(42),
                price: 210_100,
                size: 5,
            },
            33,
        )
        .unwrap();
    assert_eq!(edit["method"], "private/edit");
    assert_eq!(
        edit["params"],
        serde_json::json!({"order_id":"ETH-7","amount":5,"price":2101})
    );
    let cancel = r
        .submit(
            Request::Cancel {
                cid: ClientOrderId(42),
            },
            34,
        )
        .unwrap();
    assert_eq!(
        (cancel["method"].as_str(), &cancel["params"]),
        (
            Some("private/cancel"),
            &serde_json::json!({"order_id":"ETH-7"})
        )
    );
    let all = r
        .submit(Request::CancelAll { instrument: None }, 35)
        .unwrap();
    assert_eq!(all["method"], "private/cancel_all");
    let one = r
        .submit(
            Request::CancelAll {
                instrument: Some(InstrumentId(1)),
            },
            36,
        )
        .unwrap();
    assert_eq!(one["method"], "private/cancel_all_by_instrument");
    assert_eq!(one["params"]["instrument_name"], "ETH-PERPETUAL");
}

#[test]
fn requests_are_refused_before_anything_is_written() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let bad = |cid, price, size, instrument| Request::Place {
        cid: ClientOrderId(cid),
        order: Limit {
            instrument: InstrumentId(instrument),
            side: Side::Bid,
            price,
            size,
            tif: TimeInForce::GoodTillCancel,
            post_only: false,
        },
    };
    let mut check = |req: Request, want: Reject| {
        assert_eq!(r.s.submit(&req, now(30), &mut r.out), Err(want), "{req:?}");
        assert!(r.out.is_empty());
    };
    check(bad(1, 0, 1, 0), Reject::BadValue);
    check(bad(1, 1, -1, 0), Reject::BadValue);
    check(bad(1, 1, 1, 9), Reject::UnknownInstrument);
    check(
        Request::Cancel {
            cid: ClientOrderId(5),
        },
        Reject::UnknownOrder,
    );
    check(
        Request::Amend {
            cid: ClientOrderId(5),
            new_cid: ClientOrderId(5),
            price: 1,
            size: 1,
        },
        Reject::UnknownOrder,
    );
    check(
        Request::CancelAll {
            instrument: Some(InstrumentId(7)),
        },
        Reject::UnknownInstrument,
    );
    let mut post_ioc = bad(1, 1, 1, 0);
    if let Request::Place { order, .. } = &mut post_ioc {
        order.post_only = true;
        order.tif = TimeInForce::FillOrKill;
    }
    check(post_ioc, Reject::BadValue);
    assert!(r.submit(bad(1, 1, 1, 0), 31).is_ok());
    assert_eq!(
        r.s.submit(&bad(1, 1, 1, 0), now(32), &mut r.out),
        Err(Reject::Duplicate),
        "in flight"
    );
}

#[test]
fn an_answer_and_the_notifications_are_decoded_to_exact_events_once() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let m = r.submit(place(7, Side::Bid, 89005, 40), 100).unwrap();
    let sent_tsc = now(100).tsc;
    // The order news comes first on the channel, then the answer.
    let e = r.text(
        &notification(
            "user.orders.BTC-PERPETUAL.raw",
            &order("BTC-77", "bot-7", "open", "8900.5", 40, 0),
        ),
        101,
    );
    let accepted = OrderEvent {
        cid: Some(ClientOrderId(7)),
        instrument: InstrumentId(0),
        venue_order: VenueOrderId::new("BTC-77"),
        kind: OrderKind::Accepted {
            side: Side::Bid,
            price: 89005,
            size: 40,
        },
        venue_time_ns: 1_590_483_719_521_000_000,
        sent_tsc,
    };
    assert_eq!(e, [accepted]);
    let e = r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("BTC-77", "bot-7", "open", "8900.5", 40, 0)
        ),
        102,
    );
    assert!(e.is_empty(), "said once: {e:?}");
    // A fill on the channel, then the order's news of it: one event.
    let e = r.text(
        &notification(
            "user.trades.BTC-PERPETUAL.raw",
            &format!(
                "[{}]",
                trade("BTC-1001", "BTC-77", "bot-7", "8900.5", 15, "M")
            ),
        ),
        110,
    );
    assert_eq!(
        e,
        [OrderEvent {
            kind: OrderKind::Filled {
                price: 89005,
                size: 15,
                leaves: 25,
                trade_id: 1001,
                maker: true
            },
            venue_time_ns: 1_590_484_156_350_000_000,
            sent_tsc: 0,
            ..accepted
        }]
    );
    assert!(
        r.text(
            &notification(
                "user.orders.BTC-PERPETUAL.raw",
                &order("BTC-77", "bot-7", "open", "8900.5", 40, 15)
            ),
            111
        )
        .is_empty()
    );
    assert!(
        r.text(
            &notification(
                "user.trades.BTC-PERPETUAL.raw",
                &format!(
                    "[{}]",
                    trade("BTC-1001", "BTC-77", "bot-7", "8900.5", 15, "M")
                )
            ),
            112
        )
        .is_empty(),
        "the same trade again"
    );
    assert_eq!(r.s.open_orders().get(ClientOrderId(7)).unwrap().leaves, 25);
    // A cancel: its answer, then the channel's news of it (said once).
    let c = r
        .submit(
            Request::Cancel {
                cid: ClientOrderId(7),
            },
            120,
        )
        .unwrap();
    let e = r.answer(
        &c["id"],
        &order("BTC-77", "bot-7", "cancelled", "8900.5", 40, 15),
        121,
    );
    assert_eq!(e.len(), 1);
    assert_eq!(
        (e[0].kind, e[0].sent_tsc),
        (OrderKind::Canceled, now(120).tsc)
    );
    assert!(
        r.text(
            &notification(
                "user.orders.BTC-PERPETUAL.raw",
                &order("BTC-77", "bot-7", "cancelled", "8900.5", 40, 15)
            ),
            122
        )
        .is_empty()
    );
    assert!(r.s.open_orders().is_empty());

    // An order that takes at once: the answer carries the trades; the
    // channel's copy of a trade adds nothing.
    let m = r.submit(place(8, Side::Bid, 89010, 10), 130).unwrap();
    let e = r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[{},{}]}}"#,
            order("BTC-78", "bot-8", "filled", "8901", 10, 10),
            trade("BTC-2001", "BTC-78", "bot-8", "8900", 4, "T"),
            trade("BTC-2002", "BTC-78", "bot-8", "8901", 6, "T")
        ),
        131,
    );
    let kinds: Vec<OrderKind> = e.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            OrderKind::Accepted {
                side: Side::Bid,
                price: 89010,
                size: 10
            },
            OrderKind::Filled {
                price: 89000,
                size: 4,
                leaves: 6,
                trade_id: 2001,
                maker: false
            },
            OrderKind::Filled {
                price: 89010,
                size: 6,
                leaves: 0,
                trade_id: 2002,
                maker: false
            },
        ]
    );
    assert!(e.iter().all(|e| e.sent_tsc == now(130).tsc));
    let again = format!(
        "[{},{}]",
        trade("BTC-2001", "BTC-78", "bot-8", "8900", 4, "T"),
        trade("BTC-2002", "BTC-78", "bot-8", "8901", 6, "T")
    );
    assert!(
        r.text(&notification("user.trades.BTC-PERPETUAL.raw", &again), 132)
            .is_empty()
    );
    assert!(
        r.text(
            &notification(
                "user.orders.BTC-PERPETUAL.raw",
                &order("BTC-78", "bot-8", "filled", "8901", 10, 10)
            ),
            133
        )
        .is_empty()
    );
    assert!(r.s.open_orders().is_empty());
    assert_eq!(
        r.s.submit(&place(8, Side::Bid, 1, 1), now(134), &mut r.out),
        Err(Reject::Duplicate),
        "a finished order's id is not used again"
    );
    // Other clients' orders and trades are not this session's.
    assert!(
        r.text(
            &notification(
                "user.orders.BTC-PERPETUAL.raw",
                &order("BTC-90", "", "open", "8000", 10, 0)
            ),
            140
        )
        .is_empty()
    );
    assert_eq!(r.s.unreadable(), 0);
    assert!(r.text("{\"jsonrpc\":\"2.0\",", 141).is_empty());
    assert_eq!(r.s.unreadable(), 1);
}

#[test]
fn an_amend_is_reported_with_its_new_price_and_size() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let m = r.submit(place(1, Side::Bid, 89000, 10), 10).unwrap();
    r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("BTC-5", "bot-1", "open", "8900", 10, 0)
        ),
        11,
    );
    let e = r
        .submit(
            Request::Amend {
                cid: ClientOrderId(1),
                new_cid: ClientOrderId(1),
                price: 89010,
                size: 12,
            },
            12,
        )
        .unwrap();
    let ev = r.answer(
        &e["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("BTC-5", "bot-1", "open", "8901", 12, 0)
        ),
        13,
    );
    assert_eq!(ev.len(), 1);
    assert_eq!(
        (ev[0].kind, ev[0].sent_tsc),
        (
            OrderKind::Amended {
                price: 89010,
                size: 12
            },
            now(12).tsc
        )
    );
    let o = r.s.open_orders().get(ClientOrderId(1)).unwrap();
    assert_eq!((o.price, o.leaves), (89010, 12));
}

#[test]
fn refusals_map_to_the_venues_codes() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    for (k, (code, message, want)) in [
        (11054, "post_only_reject", Reject::WouldTake),
        (
            10028,
            "too_many_requests",
            Reject::VenueRateLimited { code: 10028 },
        ),
        (10009, "not_enough_funds", Reject::InsufficientFunds),
        (13009, "unauthorized", Reject::Auth { code: 13009 }),
        (11029, "invalid_arguments", Reject::Venue { code: 11029 }),
    ]
    .into_iter()
    .enumerate()
    {
        let cid = 10 + k as u64;
        let m = r.submit(place(cid, Side::Bid, 89000, 10), 10).unwrap();
        let e = r.error(&m["id"], code, message, 11);
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].cid, e[0].kind, e[0].sent_tsc),
            (
                Some(ClientOrderId(cid)),
                OrderKind::Rejected { reason: want },
                now(10).tsc
            )
        );
        assert!(
            !r.s.open_orders().known(ClientOrderId(cid)),
            "the id is free again"
        );
    }
    let m = r.submit(place(1, Side::Bid, 89000, 10), 20).unwrap();
    r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("BTC-5", "bot-1", "open", "8900", 10, 0)
        ),
        21,
    );
    let c = r
        .submit(
            Request::Cancel {
                cid: ClientOrderId(1),
            },
            22,
        )
        .unwrap();
    let e = r.error(&c["id"], 11044, "not_open_order", 23);
    assert_eq!(
        e[0].kind,
        OrderKind::Rejected {
            reason: Reject::UnknownOrder
        }
    );
}

#[test]
fn cancel_all_ends_every_order_of_its_scope() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    for cid in 1..=3 {
        let m = r.submit(place(cid, Side::Bid, 89000, 10), 10).unwrap();
        r.answer(
            &m["id"],
            &format!(
                r#"{{"order":{},"trades":[]}}"#,
                order(
                    &format!("BTC-{cid}"),
                    &format!("bot-{cid}"),
                    "open",
                    "8900",
                    10,
                    0
                )
            ),
            11,
        );
    }
    let m = r
        .submit(Request::CancelAll { instrument: None }, 12)
        .unwrap();
    assert_eq!(m["params"]["detailed"], true);
    // `detailed: true`: a report per currency and kind, its orders listed.
    let cancelled: Vec<String> = (1..=3)
        .map(|cid| {
            order(
                &format!("BTC-{cid}"),
                &format!("bot-{cid}"),
                "cancelled",
                "8900",
                10,
                0,
            )
        })
        .collect();
    let e = r.answer(
        &m["id"],
        &format!(
            r#"[{{"currency":"BTC","type":"limit","instrument_name":"BTC-PERPETUAL","total":3,"result":[{}]}}]"#,
            cancelled.join(",")
        ),
        13,
    );
    assert_eq!(e.len(), 3);
    assert!(e.iter().all(|e| e.kind == OrderKind::Canceled));
    assert!(r.s.open_orders().is_empty());
}

#[test]
fn a_test_request_is_answered() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    r.text(
        r#"{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}"#,
        50,
    );
    assert_eq!(r.sent()[0]["method"], "public/test");
}

#[test]
fn numbers_are_scaled_exactly() {
    let parse = |text: &str, scale: u8| {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        JsonParser::default()
            .parse(&mut buf, text.len(), |v| wire::scaled(&v, scale))
            .unwrap()
    };
    assert_eq!(parse("8900.5", 1), Some(89005));
    assert_eq!(parse("0.1", 8), Some(10_000_000));
    assert_eq!(parse("2100.05", 2), Some(210_005));
    assert_eq!(parse("40", 3), Some(40_000));
    assert_eq!(parse("0.123456789012", 12), Some(123_456_789_012));
    assert_eq!(parse("8900.55", 1), None, "finer than the scale");
    assert_eq!(parse("\"x\"", 1), None);
}

#[test]
fn bad_settings_are_refused_at_creation() {
    let make = |prefix: &str| {
        let mut c = config(false);
        c.prefix = prefix.into();
        DeribitSession::new(c, Credentials::hmac("k", b"s"), DeribitOptions::default()).map(|_| ())
    };
    assert_eq!(make("bot-1"), Err(SetupError::Prefix));
    assert_eq!(make(""), Err(SetupError::Prefix));
    assert_eq!(make("abcdefghijklm"), Err(SetupError::Prefix));
    assert_eq!(make("Bot1"), Ok(()));
}

#[test]
fn channel_news_carries_the_stamp_of_the_request_it_answers_only() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let m = r.submit(place(1, Side::Bid, 89000, 10), 10).unwrap();
    r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("BTC-5", "bot-1", "open", "8900", 10, 0)
        ),
        11,
    );
    r.submit(
        Request::Cancel {
            cid: ClientOrderId(1),
        },
        20,
    )
    .unwrap();
    // A fill of the resting order races the cancel: it answers no request.
    let e = r.text(
        &notification(
            "user.trades.BTC-PERPETUAL.raw",
            &format!("[{}]", trade("BTC-3001", "BTC-5", "bot-1", "8900", 2, "M")),
        ),
        21,
    );
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].sent_tsc, 0);
    // The cancel's news on the channel, before its answer, answers it.
    let e = r.text(
        &notification(
            "user.orders.BTC-PERPETUAL.raw",
            &order("BTC-5", "bot-1", "cancelled", "8900", 10, 2),
        ),
        22,
    );
    assert_eq!(
        (e[0].kind, e[0].sent_tsc),
        (OrderKind::Canceled, now(20).tsc)
    );
}

#[test]
fn cancel_all_of_an_instrument_ends_that_instruments_orders_only() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    for (cid, instrument, symbol) in [(1, 0, "BTC-PERPETUAL"), (2, 1, "ETH-PERPETUAL")] {
        let mut p = place(cid, Side::Bid, 89000, 10);
        if let Request::Place { order, .. } = &mut p {
            order.instrument = InstrumentId(instrument);
        }
        let m = r.submit(p, 10).unwrap();
        let o = order(
            &format!("X-{cid}"),
            &format!("bot-{cid}"),
            "open",
            "8900",
            10,
            0,
        )
        .replace("BTC-PERPETUAL", symbol);
        r.answer(&m["id"], &format!(r#"{{"order":{o},"trades":[]}}"#), 11);
    }
    assert_eq!(r.s.open_orders().len(), 2);
    let m = r
        .submit(
            Request::CancelAll {
                instrument: Some(InstrumentId(1)),
            },
            12,
        )
        .unwrap();
    let o =
        order("X-2", "bot-2", "cancelled", "8900", 10, 0).replace("BTC-PERPETUAL", "ETH-PERPETUAL");
    let e = r.answer(
        &m["id"],
        &format!(
            r#"[{{"currency":"ETH","type":"limit","instrument_name":"ETH-PERPETUAL","total":1,"result":[{o}]}}]"#
        ),
        13,
    );
    assert_eq!(e.len(), 1);
    assert_eq!(
        (e[0].cid, e[0].kind),
        (Some(ClientOrderId(2)), OrderKind::Canceled)
    );
    assert!(r.s.open_orders().get(ClientOrderId(1)).is_some());
}
