//! Defects a review found in the Deribit session: each test failed before
//! its fix.

use super::*;

/// A venue's `expires_in` near u64::MAX: `now + expires_in*800` overflows
/// (news.rs `answered`, Asked::Login): a panic in any build with overflow
/// checks (tests, fuzzing), a wrapped refresh time otherwise.
#[test]
fn a_huge_expires_in_does_not_panic() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.s.on_open(now(0), &mut r.out);
    let auth = r.sent().remove(0);
    let answer = AUTH_OK.replace("\"expires_in\":900", "\"expires_in\":18446744073709551615");
    r.answer(&auth["id"], &answer, 10);
    assert_eq!(r.s.state(), State::Reconciling);
}

/// Hostile amounts: `o.amount - o.filled` in `reconcile` overflows.
#[test]
fn hostile_open_order_amounts_do_not_panic() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    for m in r.logged_in() {
        let result = match m["method"].as_str().unwrap() {
            "private/get_open_orders_by_instrument"
                if m["params"]["instrument_name"] == "BTC-PERPETUAL" =>
            {
                format!(
                    "[{}]",
                    order("BTC-1", "bot-1", "open", "100", 0, 0)
                        .replace("\"amount\":0", "\"amount\":-9223372036854775807")
                        .replace("\"filled_amount\":0", "\"filled_amount\":10")
                )
            }
            _ => setup_answer(&m).to_owned(),
        };
        r.answer(&m["id"], &result, 20);
    }
}

/// A refused `private/buy` of the second instrument is reported on the
/// first: `refused` looks the instrument up in the working orders, where a
/// placing in flight is not.
#[test]
fn a_refused_place_names_its_own_instrument() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let req = Request::Place {
        cid: ClientOrderId(7),
        order: Limit {
            instrument: InstrumentId(1),
            side: Side::Bid,
            price: 100,
            size: 1,
            tif: TimeInForce::GoodTillCancel,
            post_only: false,
        },
    };
    let m = r.submit(req, 30).unwrap();
    let ev = r.error(&m["id"], 10009, "not_enough_funds", 40);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].instrument, InstrumentId(1), "{:?}", ev[0]);
}

/// The set-up's open-orders request for one instrument finds no room in
/// the caller's `Out`: it is never sent, `setup_left` counts only what was,
/// and the session goes `Ready` without having reconciled that instrument
/// (Deribit labels are not unique: a re-sent place is a second order).
#[test]
fn ready_never_skips_an_instruments_reconciliation() {
    let secret = secret();
    let mut s = DeribitSession::new(
        config(false),
        Credentials::hmac("AbCdEf", &secret),
        DeribitOptions::default(),
    )
    .unwrap();
    // Room for the login's answer's follow-ups but one: subscribe + 1 of 2.
    let mut out = Out::new(1 << 16, 3);
    s.on_open(now(0), &mut out);
    let auth: Json = serde_json::from_str(out.iter().next().unwrap()).unwrap();
    out.clear();
    // Fill one slot so only two of the three set-up messages fit.
    out.message(|m| fmt::Write::write_str(m, "x")).unwrap();
    let feed = |s: &mut DeribitSession, out: &mut Out, text: String| {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        let mut ev = Vec::with_capacity(64);
        s.on_text(&mut buf, text.len(), now(10), out, &mut ev);
    };
    feed(
        &mut s,
        &mut out,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{AUTH_OK}}}"#,
            auth["id"]
        ),
    );
    let sent: Vec<Json> = out
        .iter()
        .skip(1)
        .map(|m| serde_json::from_str(m).unwrap())
        .collect();
    assert_eq!(sent.len(), 2, "subscribe and one open-orders request");
    out.clear();
    for m in &sent {
        let result = setup_answer(m);
        feed(
            &mut s,
            &mut out,
            format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, m["id"]),
        );
    }
    // ETH-PERPETUAL's open orders were never asked for.
    assert_ne!(
        s.state(),
        State::Ready,
        "Ready without reconciling ETH-PERPETUAL"
    ); // The timer sends what is owed; its answer makes the session Ready.
    out.clear();
    s.on_timer(now(30), &mut out);
    let owed: Vec<Json> = out
        .iter()
        .map(|m| serde_json::from_str(m).unwrap())
        .collect();
    assert_eq!(owed.len(), 1);
    assert_eq!(owed[0]["params"]["instrument_name"], "ETH-PERPETUAL");
    out.clear();
    feed(
        &mut s,
        &mut out,
        format!(r#"{{"jsonrpc":"2.0","id":{},"result":[]}}"#, owed[0]["id"]),
    );
    assert_eq!(s.state(), State::Ready);
}

/// A busy venue (10028) answering the fresh login that stands in for a
/// refused refresh puts a Ready session in `Refused` for good.
#[test]
fn a_busy_venue_during_a_refresh_is_not_final() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let at = r.s.refresh_at_ms().unwrap() - T0;
    r.s.on_timer(now(at), &mut r.out);
    let refresh = r.sent().remove(0);
    assert_eq!(refresh["params"]["grant_type"], "refresh_token");
    r.error(&refresh["id"], 13009, "unauthorized", at + 1);
    let login = r.sent().remove(0);
    assert_eq!(login["params"]["grant_type"], "client_signature");
    r.error(&login["id"], 10028, "too_many_requests", at + 2);
    assert!(
        !matches!(r.s.state(), State::Refused { .. }),
        "a transient refusal made final: {:?}",
        r.s.state()
    );
}

/// A taker order that trades against more than 64 resting orders: the
/// answer's trades fill the 64-entry window, and the same trades on
/// `user.trades` then count the first ones again (fills told twice, and
/// `leaves` driven to 0 so the still-resting order is forgotten).
#[test]
fn a_fill_is_told_once_even_after_64_trades() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let m = r.submit(place(5, Side::Bid, 90000, 1000), 30).unwrap();
    let trades: Vec<String> = (1..=70)
        .map(|k| trade(&format!("ETH-{k}"), "ETH-9", "bot-5", "9000.0", 1, "T"))
        .collect();
    let list = format!("[{}]", trades.join(","));
    let ev = r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":{list}}}"#,
            order("ETH-9", "bot-5", "open", "9000.0", 1000, 70)
        ),
        40,
    );
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e.kind, OrderKind::Filled { .. }))
            .count(),
        70
    );
    let again = r.text(&notification("user.trades.BTC-PERPETUAL.raw", &list), 41);
    assert!(again.is_empty(), "fills told twice: {}", again.len());
}

/// Another bot's prefix that extends this one's ("bot" and "bot-1"): its
/// labels parse as this session's client ids, so its orders are adopted.
#[test]
fn another_bots_longer_prefix_is_not_ours() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    let mut adopted = 0;
    for m in r.logged_in() {
        let result = match m["method"].as_str().unwrap() {
            "private/get_open_orders_by_instrument"
                if m["params"]["instrument_name"] == "BTC-PERPETUAL" =>
            {
                // The old form's lookalike, and the other bot's own form.
                format!(
                    "[{},{}]",
                    order("BTC-1", "bot11700000000000000", "open", "100", 10, 0),
                    order("BTC-2", "bot1-1700000000000000", "open", "100", 10, 0)
                )
            }
            _ => setup_answer(&m).to_owned(),
        };
        adopted += r.answer(&m["id"], &result, 20).len();
    }
    assert_eq!(adopted, 0, "another bot's order taken for ours");
}

/// `private/cancel_all` answers a count only; the session takes every
/// known order for cancelled, even when the count (0 here) says none was.
/// An order that filled just before, whose `user.trades` comes after the
/// answer, then loses its fill: `fill` drops trades of unknown orders.
#[test]
fn a_fill_racing_a_cancel_all_is_not_lost() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let m = r.submit(place(5, Side::Bid, 90000, 10), 30).unwrap();
    r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("ETH-9", "bot-5", "open", "9000.0", 10, 0)
        ),
        31,
    );
    let c = r
        .submit(Request::CancelAll { instrument: None }, 32)
        .unwrap();
    let ev = r.answer(&c["id"], "0", 33);
    let late = r.text(
        &notification(
            "user.trades.BTC-PERPETUAL.raw",
            &format!("[{}]", trade("ETH-77", "ETH-9", "bot-5", "9000.0", 10, "M")),
        ),
        34,
    );
    assert!(
        late.iter()
            .any(|e| matches!(e.kind, OrderKind::Filled { .. })),
        "cancel-all answered 0 but told {ev:?}; the fill that came after was dropped"
    );
}

/// More of this session's orders open at the venue than its table holds:
/// `reconcile` tells `Accepted` for every one, tracked or not, so one
/// message brings more events than `max_open_orders` (the caller's
/// documented room; the fuzz target asserts it) and the bot is told of
/// orders the session then ignores (their fills are dropped).
#[test]
fn reconcile_tells_no_order_it_cannot_keep() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    let list: Vec<String> = (1..=40)
        .map(|k| {
            order(
                &format!("BTC-{k}"),
                &format!("bot-{k}"),
                "open",
                "100",
                10,
                0,
            )
        })
        .collect();
    let list = format!("[{}]", list.join(","));
    let mut told = 0;
    for m in r.logged_in() {
        let result = match m["method"].as_str().unwrap() {
            "private/get_open_orders_by_instrument"
                if m["params"]["instrument_name"] == "BTC-PERPETUAL" =>
            {
                list.clone()
            }
            _ => setup_answer(&m).to_owned(),
        };
        told += r.answer(&m["id"], &result, 20).len();
    }
    assert!(
        told <= 32,
        "{told} Accepted for a table of 32 ({} kept)",
        r.s.open_orders().len()
    );
    assert_eq!(
        told,
        r.s.open_orders().len() + 1,
        "each kept order, and one word"
    );
}

/// The word that some open orders are not kept: one `Rejected { Full }`
/// without a client id, naming the instrument.
#[test]
fn orders_the_table_cannot_keep_are_told_once_typed() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    let list: Vec<String> = (1..=40)
        .map(|k| {
            order(
                &format!("BTC-{k}"),
                &format!("bot-{k}"),
                "open",
                "100",
                10,
                0,
            )
        })
        .collect();
    let list = format!("[{}]", list.join(","));
    let mut events = Vec::new();
    for m in r.logged_in() {
        let result = match m["method"].as_str().unwrap() {
            "private/get_open_orders_by_instrument"
                if m["params"]["instrument_name"] == "BTC-PERPETUAL" =>
            {
                list.clone()
            }
            _ => setup_answer(&m).to_owned(),
        };
        events.extend(r.answer(&m["id"], &result, 20));
    }
    let full: Vec<_> = events
        .iter()
        .filter(|e| {
            e.kind
                == OrderKind::Rejected {
                    reason: Reject::Full,
                }
        })
        .collect();
    assert_eq!(full.len(), 1);
    assert_eq!((full[0].cid, full[0].instrument), (None, InstrumentId(0)));
    let accepted = events
        .iter()
        .filter(|e| matches!(e.kind, OrderKind::Accepted { .. }))
        .count();
    assert_eq!(accepted, r.s.open_orders().len());
}

/// A fill that crossed a `private/cancel`: the cancel's answer ends the
/// order, its trade comes after on `user.trades` and is still told (once).
#[test]
fn a_trade_after_a_cancels_answer_is_told_once() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    let m = r.submit(place(5, Side::Bid, 90000, 10), 30).unwrap();
    r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("ETH-9", "bot-5", "open", "9000.0", 10, 0)
        ),
        31,
    );
    let c = r
        .submit(
            Request::Cancel {
                cid: ClientOrderId(5),
            },
            32,
        )
        .unwrap();
    let ev = r.answer(
        &c["id"],
        &order("ETH-9", "bot-5", "cancelled", "9000.0", 10, 4),
        33,
    );
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].kind, OrderKind::Canceled);
    let late = notification(
        "user.trades.BTC-PERPETUAL.raw",
        &format!("[{}]", trade("ETH-77", "ETH-9", "bot-5", "9000.0", 4, "M")),
    );
    let ev = r.text(&late, 34);
    assert_eq!(ev.len(), 1);
    assert!(matches!(
        ev[0].kind,
        OrderKind::Filled {
            size: 4,
            leaves: 0,
            ..
        }
    ));
    assert!(r.text(&late, 35).is_empty(), "told once");
}

/// A venue busy at login (10028, 10040, 11051, 13028): tried again after
/// 1 s, then 2 s, then 4 s..., never given up; credentials refused
/// (13004) end it.
#[test]
fn a_busy_venue_is_asked_again_with_a_growing_wait() {
    for code in [10028, 10040, 11051, 13028] {
        let mut r = Rig::new(false, Grant::ClientSignature);
        r.s.on_open(now(0), &mut r.out);
        let mut auth = r.sent().remove(0);
        let mut at = 0;
        for wait in [1000, 2000, 4000, 8000] {
            r.error(&auth["id"], code, "busy", at);
            assert_eq!(r.s.state(), State::LoggingIn, "code {code}");
            r.s.on_timer(now(at + wait - 1), &mut r.out);
            assert!(r.out.is_empty(), "code {code}: not before {wait} ms");
            r.s.on_timer(now(at + wait), &mut r.out);
            auth = r.sent().remove(0);
            assert_eq!(auth["method"], "public/auth");
            at += wait;
        }
        r.error(&auth["id"], 13004, "invalid_credentials", at);
        assert_eq!(r.s.state(), State::Refused { code: 13004 });
    }
}

/// Only the label form `prefix-number` is this session's: no sign, no
/// leading zero, nothing after.
#[test]
fn only_the_written_label_form_is_read_back() {
    assert_eq!(wire::cid_of("bot-7", "bot"), Some(7));
    assert_eq!(wire::cid_of("bot-0", "bot"), Some(0));
    for other in [
        "bot7", "bot-07", "bot-+7", "bot-7x", "bot-", "bot1-7", "xbot-7",
    ] {
        assert_eq!(wire::cid_of(other, "bot"), None, "{other}");
    }
}
