//! The Deribit session against messages written as Deribit's docs show
//! them (docs.deribit.com method pages; `private/buy`'s example answer,
//! `user.orders.*` and `user.trades.*` notifications).

use serde_json::Value as Json;
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec};

use super::*;
use crate::order::{Limit, Side};

const T0: u64 = 1_700_000_000_000;

fn now(ms: u64) -> Now {
    Now {
        unix_ms: T0 + ms,
        tsc: 1_000 + ms,
    }
}

/// A throw-away secret, new for each test.
fn secret() -> Vec<u8> {
    use ring::rand::SecureRandom;
    let mut s = [0u8; 16];
    ring::rand::SystemRandom::new().fill(&mut s).unwrap();
    s.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
        .into_bytes()
}

fn config(cancel_on_disconnect: bool) -> SessionConfig {
    SessionConfig {
        instruments: vec![
            InstrumentSpec::new("BTC-PERPETUAL", 1, 0, 0),
            InstrumentSpec::new("ETH-PERPETUAL", 2, 0, 0),
        ],
        prefix: "bot".into(),
        cancel_on_disconnect,
        max_open_orders: 32,
    }
}

struct Rig {
    s: DeribitSession,
    out: Out,
    events: Vec<OrderEvent>,
    secret: Vec<u8>,
}

impl Rig {
    fn new(cod: bool, grant: Grant) -> Rig {
        let secret = secret();
        let s = DeribitSession::new(
            config(cod),
            Credentials::hmac("AbCdEf", &secret),
            DeribitOptions {
                grant,
                ..DeribitOptions::default()
            },
        )
        .unwrap();
        Rig {
            s,
            out: Out::new(1 << 16, 64),
            events: Vec::with_capacity(64),
            secret,
        }
    }

    /// The messages written since the last call, as JSON.
    fn sent(&mut self) -> Vec<Json> {
        let m = self
            .out
            .iter()
            .map(|m| serde_json::from_str(m).unwrap())
            .collect();
        self.out.clear();
        m
    }

    fn text(&mut self, text: &str, at: u64) -> Vec<OrderEvent> {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        self.events.clear();
        self.s.on_text(
            &mut buf,
            text.len(),
            now(at),
            &mut self.out,
            &mut self.events,
        );
        self.events.clone()
    }

    fn answer(&mut self, id: &Json, result: &str, at: u64) -> Vec<OrderEvent> {
        self.text(
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result},"usIn":1,"usOut":2,"usDiff":1,"testnet":true}}"#),
            at,
        )
    }

    fn error(&mut self, id: &Json, code: i64, message: &str, at: u64) -> Vec<OrderEvent> {
        self.text(
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"message":"{message}","code":{code}}},"usIn":1,"usOut":2,"usDiff":1,"testnet":true}}"#),
            at,
        )
    }

    /// Opens and logs in (token for 900 s): the set-up requests.
    fn logged_in(&mut self) -> Vec<Json> {
        self.s.on_open(now(0), &mut self.out);
        let auth = self.sent().remove(0);
        self.answer(&auth["id"], AUTH_OK, 10);
        self.sent()
    }

    /// Logged in and reconciled with no open orders.
    fn ready(&mut self) {
        for m in self.logged_in() {
            let result = match m["method"].as_str().unwrap() {
                "private/get_open_orders_by_instrument" => "[]",
                "private/subscribe" => r#"["user.orders.BTC-PERPETUAL.raw"]"#,
                _ => r#""ok""#,
            };
            self.answer(&m["id"], result, 20);
        }
        assert_eq!(self.s.state(), State::Ready);
    }

    fn submit(&mut self, r: Request, at: u64) -> Result<Json, Reject> {
        self.s.submit(&r, now(at), &mut self.out)?;
        let mut m = self.sent();
        assert_eq!(m.len(), 1);
        Ok(m.remove(0))
    }
}

/// `public/auth`'s answer as the docs show it.
const AUTH_OK: &str = r#"{"access_token":"1582628593469.1MbQ-J_4.CBP-OqOwm_FBdMYj4cRK2dMXyHPfBtXGpzLxhWg31nHu3H_Q60FpE5_vqUBEQGSiMrIGzw3nC37NMb9d1tpBNqBOM_Ql9pXOmgtV9Yj3Pq1c6BqC6dU6eTxHMFO67x8GpJxqw_QcKP5IepwGBD-gfKSHfAv9AEnLJkNu3JkMJBdLToY1lrBnuedF3dU_uARm","expires_in":900,"refresh_token":"1582628593469.1GP4rQd0.A9Wa78o5kFRIUP49mScaD1CqHgiK50HOl2VA6kCtWa8BQZU5Dr03BhcbXPNvEh3I_MVixKZXnyoBeKJwLl8LXnfo180ckAiPj3zOclcUu4zkXuF3NNP3sTPcDf1B3C1CwMKkJ1NOcf1yPmRbsrd7hbgQ-hLa40tfx6Oa-85ymm_3Z65LZcnCeLrqlj_A9jM","scope":"connection mainaccount","enabled_features":[],"token_type":"bearer"}"#;

fn place(cid: u64, side: Side, price: i64, size: i64) -> Request {
    Request::Place {
        cid: ClientOrderId(cid),
        order: Limit {
            instrument: InstrumentId(0),
            side,
            price,
            size,
            tif: TimeInForce::GoodTillCancel,
            post_only: false,
        },
    }
}

/// An order object in `private/buy`'s example's shape.
fn order(id: &str, label: &str, state: &str, price: &str, amount: u64, filled: u64) -> String {
    format!(
        r#"{{"web":false,"time_in_force":"good_til_cancelled","replaced":false,"reduce_only":false,"price":{price},"post_only":false,"order_type":"limit","order_state":"{state}","order_id":"{id}","max_show":{amount},"last_update_timestamp":1590483719521,"label":"{label}","is_liquidation":false,"instrument_name":"BTC-PERPETUAL","filled_amount":{filled},"direction":"buy","creation_timestamp":1590483719521,"average_price":0,"api":true,"amount":{amount}}}"#
    )
}

/// A trade in `user.trades`' shape.
fn trade(
    trade_id: &str,
    order_id: &str,
    label: &str,
    price: &str,
    amount: u64,
    liq: &str,
) -> String {
    format!(
        r#"{{"trade_seq":30289432,"trade_id":"{trade_id}","timestamp":1590484156350,"tick_direction":0,"state":"open","reduce_only":false,"price":{price},"post_only":false,"order_type":"limit","order_id":"{order_id}","matching_id":null,"mark_price":8895.19,"liquidity":"{liq}","label":"{label}","instrument_name":"BTC-PERPETUAL","index_price":8900.45,"fee_currency":"BTC","fee":-0.00561798,"direction":"buy","amount":{amount}}}"#
    )
}

fn notification(channel: &str, data: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"subscription","params":{{"channel":"{channel}","data":{data}}}}}"#
    )
}

#[test]
fn the_signature_login_signs_timestamp_nonce_and_data_and_never_sends_the_secret() {
    let mut r = Rig::new(true, Grant::ClientSignature);
    r.s.on_open(now(0), &mut r.out);
    assert_eq!(r.s.state(), State::LoggingIn);
    let raw: Vec<String> = r.out.iter().map(str::to_owned).collect();
    let m = r.sent().remove(0);
    assert_eq!(m["method"], "public/auth");
    let p = &m["params"];
    assert_eq!(p["grant_type"], "client_signature");
    assert_eq!(p["client_id"], "AbCdEf");
    assert_eq!(p["timestamp"], T0);
    assert_eq!(p["data"], "");
    // HMAC-SHA256 of "timestamp\nnonce\ndata" under the secret, in hex.
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &r.secret);
    let string = format!("{T0}\n{}\n", p["nonce"].as_str().unwrap());
    let want: String = ring::hmac::sign(&key, string.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(p["signature"], want.as_str());
    let secret = String::from_utf8(r.secret.clone()).unwrap();
    assert!(!raw[0].contains(&secret));
    // A second login uses another nonce.
    r.s.on_close(now(1));
    r.s.on_open(now(1), &mut r.out);
    assert_ne!(r.sent()[0]["params"]["nonce"], p["nonce"]);
}

#[test]
fn the_credentials_grant_is_an_option() {
    let mut r = Rig::new(false, Grant::ClientCredentials);
    r.s.on_open(now(0), &mut r.out);
    let m = r.sent().remove(0);
    assert_eq!(m["params"]["grant_type"], "client_credentials");
    assert_eq!(m["params"]["client_id"], "AbCdEf");
    assert_eq!(
        m["params"]["client_secret"],
        String::from_utf8(r.secret.clone()).unwrap().as_str()
    );
}

#[test]
fn a_refused_login_is_refused_for_good_and_a_busy_venue_is_asked_once_more() {
    let mut r = Rig::new(true, Grant::ClientSignature);
    r.s.on_open(now(0), &mut r.out);
    let auth = r.sent().remove(0);
    r.error(&auth["id"], 13004, "invalid_credentials", 5);
    assert_eq!(r.s.state(), State::Refused { code: 13004 });
    assert_eq!(
        r.s.submit(&place(1, Side::Bid, 1, 1), now(6), &mut r.out),
        Err(Reject::NotReady)
    );
    r.s.on_timer(now(60_000), &mut r.out);
    r.s.on_close(now(60_001));
    r.s.on_open(now(60_002), &mut r.out);
    assert!(r.out.is_empty(), "not tried again");
    assert_eq!(r.s.state(), State::Refused { code: 13004 });

    let mut r = Rig::new(true, Grant::ClientSignature);
    r.s.on_open(now(0), &mut r.out);
    let auth = r.sent().remove(0);
    r.error(&auth["id"], 10028, "too_many_requests", 5);
    assert_eq!(r.s.state(), State::LoggingIn);
    r.s.on_timer(now(1004), &mut r.out);
    assert!(r.out.is_empty(), "not before a second");
    r.s.on_timer(now(1005), &mut r.out);
    assert_eq!(r.sent()[0]["method"], "public/auth");
    r.s.on_timer(now(5000), &mut r.out);
    assert!(r.out.is_empty(), "once");
}

#[test]
fn set_up_turns_on_cancel_on_disconnect_subscribes_and_reads_open_orders_before_ready() {
    let mut r = Rig::new(true, Grant::ClientSignature);
    let setup = r.logged_in();
    assert_eq!(r.s.state(), State::Reconciling);
    let methods: Vec<&str> = setup
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "private/enable_cancel_on_disconnect",
            "private/subscribe",
            "private/get_open_orders_by_instrument",
            "private/get_open_orders_by_instrument"
        ]
    );
    assert_eq!(setup[0]["params"]["scope"], "connection");
    assert_eq!(
        setup[1]["params"]["channels"],
        serde_json::json!([
            "user.orders.BTC-PERPETUAL.raw",
            "user.trades.BTC-PERPETUAL.raw",
            "user.orders.ETH-PERPETUAL.raw",
            "user.trades.ETH-PERPETUAL.raw"
        ])
    );
    assert_eq!(setup[2]["params"]["instrument_name"], "BTC-PERPETUAL");
    assert_eq!(setup[3]["params"]["instrument_name"], "ETH-PERPETUAL");
    // Answers in any order; Ready with the last, not before.
    for (k, i) in [3, 0, 2, 1].into_iter().enumerate() {
        assert_eq!(
            r.s.submit(&place(1, Side::Bid, 1, 1), now(11), &mut r.out),
            Err(Reject::NotReady)
        );
        let result = match i {
            2 | 3 => "[]",
            1 => r#"["user.orders.BTC-PERPETUAL.raw"]"#,
            _ => r#""ok""#,
        };
        r.answer(&setup[i]["id"], result, 12);
        assert_eq!(r.s.state() == State::Ready, k == 3);
    }
    assert!(r.out.is_empty());

    // Without cancel-on-disconnect, no such request.
    let mut r = Rig::new(false, Grant::ClientSignature);
    let setup = r.logged_in();
    assert!(
        setup
            .iter()
            .all(|m| m["method"] != "private/enable_cancel_on_disconnect")
    );
    assert_eq!(setup.len(), 3);
}

#[test]
fn a_refused_set_up_keeps_the_session_from_ready() {
    let mut r = Rig::new(true, Grant::ClientSignature);
    let setup = r.logged_in();
    r.error(&setup[0]["id"], 11029, "invalid_arguments", 12);
    for m in &setup[1..] {
        r.answer(&m["id"], "[]", 13);
    }
    assert_eq!(r.s.state(), State::Reconciling);
    assert_eq!(r.s.setup_error(), Some(11029));
}

#[test]
fn an_order_found_open_by_its_label_is_not_placed_again() {
    let mut r = Rig::new(true, Grant::ClientSignature);
    let setup = r.logged_in();
    let list = format!(
        "[{},{}]",
        order("BTC-1", "bot7", "open", "8900.5", 40, 10),
        order("BTC-2", "manual1", "open", "8800", 10, 0)
    );
    let mut events = Vec::new();
    for m in &setup {
        let result = match (
            m["method"].as_str().unwrap(),
            &m["params"]["instrument_name"],
        ) {
            ("private/get_open_orders_by_instrument", n) if n == "BTC-PERPETUAL" => list.as_str(),
            ("private/get_open_orders_by_instrument", _) => "[]",
            _ => r#""ok""#,
        };
        events.extend(r.answer(&m["id"], result, 20));
    }
    assert_eq!(r.s.state(), State::Ready);
    let o = *r.s.open_orders().get(ClientOrderId(7)).unwrap();
    assert_eq!(
        (o.price, o.leaves, o.filled, o.side, o.venue_order.as_str()),
        (89005, 30, 10, Side::Bid, "BTC-1")
    );
    assert_eq!(
        r.s.open_orders().len(),
        1,
        "another client's order is not ours"
    );
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].kind,
        OrderKind::Accepted {
            side: Side::Bid,
            price: 89005,
            size: 40
        }
    );
    assert_eq!(
        r.s.submit(&place(7, Side::Bid, 89000, 10), now(21), &mut r.out),
        Err(Reject::Duplicate)
    );
    assert!(r.out.is_empty());
}

#[test]
fn after_a_reconnect_orders_gone_from_the_venue_are_reported_ended() {
    let mut r = Rig::new(true, Grant::ClientSignature);
    r.ready();
    let m = r.submit(place(3, Side::Bid, 89000, 10), 30).unwrap();
    r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("BTC-9", "bot3", "open", "8900", 10, 0)
        ),
        31,
    );
    assert!(r.s.open_orders().get(ClientOrderId(3)).is_some());
    r.s.on_close(now(40));
    assert_eq!(r.s.state(), State::Disconnected);
    let setup = r.logged_in();
    let mut events = Vec::new();
    for m in &setup {
        let result = if m["method"] == "private/get_open_orders_by_instrument" {
            "[]"
        } else {
            r#""ok""#
        };
        events.extend(r.answer(&m["id"], result, 50));
    }
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0].cid, events[0].kind),
        (Some(ClientOrderId(3)), OrderKind::Canceled)
    );
    assert!(r.s.open_orders().is_empty());
}

#[test]
fn the_token_is_refreshed_at_80_percent_of_its_life_and_orders_keep_flowing() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    // Logged in at +10 ms for 900 s: refreshed at +10 + 720,000 ms.
    assert_eq!(r.s.refresh_at_ms(), Some(T0 + 10 + 720_000));
    r.s.on_timer(now(720_009), &mut r.out);
    assert!(r.out.is_empty(), "not yet");
    r.s.on_timer(now(720_010), &mut r.out);
    let refresh = r.sent().remove(0);
    assert_eq!(refresh["method"], "public/auth");
    assert_eq!(refresh["params"]["grant_type"], "refresh_token");
    assert!(
        refresh["params"]["refresh_token"]
            .as_str()
            .unwrap()
            .starts_with("1582628593469.1GP4rQd0.")
    );
    r.s.on_timer(now(720_020), &mut r.out);
    assert!(r.out.is_empty(), "one refresh in flight");
    // Orders go out while the refresh is in flight and after it.
    let m = r.submit(place(1, Side::Bid, 89000, 10), 720_021).unwrap();
    assert_eq!(m["method"], "private/buy");
    r.answer(
        &refresh["id"],
        &AUTH_OK.replace("\"expires_in\":900", "\"expires_in\":600"),
        720_030,
    );
    assert_eq!(r.s.state(), State::Ready);
    assert_eq!(r.s.refresh_at_ms(), Some(T0 + 720_030 + 480_000));
    let e = r.answer(
        &m["id"],
        &format!(
            r#"{{"order":{},"trades":[]}}"#,
            order("BTC-5", "bot1", "open", "8900", 10, 0)
        ),
        720_031,
    );
    assert!(matches!(e[0].kind, OrderKind::Accepted { .. }));
    assert!(r.submit(place(2, Side::Bid, 89000, 10), 720_032).is_ok());
    // A refused refresh token: a login afresh, and still Ready.
    r.s.on_timer(now(1_300_000), &mut r.out);
    let refresh = r.sent().remove(0);
    r.error(&refresh["id"], 13009, "unauthorized", 1_300_001);
    let login = r.sent().remove(0);
    assert_eq!(login["params"]["grant_type"], "client_signature");
    assert_eq!(r.s.state(), State::Ready);
}

#[test]
fn the_matching_engine_credits_push_back_with_the_wait() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    r.ready();
    for k in 0..20 {
        r.submit(place(100 + k, Side::Bid, 89000, 10), 100).unwrap();
    }
    assert_eq!(
        r.s.submit(&place(200, Side::Bid, 89000, 10), now(100), &mut r.out),
        Err(Reject::RateLimited {
            retry_after_ms: 200
        })
    );
    assert!(r.out.is_empty(), "nothing written");
    assert!(!r.s.open_orders().known(ClientOrderId(200)), "nothing kept");
    assert_eq!(
        r.s.submit(&place(200, Side::Bid, 89000, 10), now(250), &mut r.out),
        Err(Reject::RateLimited { retry_after_ms: 50 })
    );
    assert!(r.submit(place(200, Side::Bid, 89000, 10), 300).is_ok());
}

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
            "label":"bot42","time_in_force":"good_til_cancelled","post_only":true,"reject_post_only":true})
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
            order("ETH-7", "bot42", "open", "2100.5", 3, 0)
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
            &order("BTC-77", "bot7", "open", "8900.5", 40, 0),
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
            order("BTC-77", "bot7", "open", "8900.5", 40, 0)
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
                trade("BTC-1001", "BTC-77", "bot7", "8900.5", 15, "M")
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
                &order("BTC-77", "bot7", "open", "8900.5", 40, 15)
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
                    trade("BTC-1001", "BTC-77", "bot7", "8900.5", 15, "M")
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
        &order("BTC-77", "bot7", "cancelled", "8900.5", 40, 15),
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
                &order("BTC-77", "bot7", "cancelled", "8900.5", 40, 15)
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
            order("BTC-78", "bot8", "filled", "8901", 10, 10),
            trade("BTC-2001", "BTC-78", "bot8", "8900", 4, "T"),
            trade("BTC-2002", "BTC-78", "bot8", "8901", 6, "T")
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
        trade("BTC-2001", "BTC-78", "bot8", "8900", 4, "T"),
        trade("BTC-2002", "BTC-78", "bot8", "8901", 6, "T")
    );
    assert!(
        r.text(&notification("user.trades.BTC-PERPETUAL.raw", &again), 132)
            .is_empty()
    );
    assert!(
        r.text(
            &notification(
                "user.orders.BTC-PERPETUAL.raw",
                &order("BTC-78", "bot8", "filled", "8901", 10, 10)
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
            order("BTC-5", "bot1", "open", "8900", 10, 0)
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
            order("BTC-5", "bot1", "open", "8901", 12, 0)
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
            order("BTC-5", "bot1", "open", "8900", 10, 0)
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
                    &format!("bot{cid}"),
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
    let e = r.answer(&m["id"], "3", 13);
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
