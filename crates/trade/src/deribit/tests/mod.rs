//! The Deribit session against messages written as Deribit's docs show
//! them (docs.deribit.com method pages; `private/buy`'s example answer,
//! `user.orders.*` and `user.trades.*` notifications): the login, the
//! set-up, the refresh and the credits here, the orders in `orders.rs`.

mod orders;
mod regressions;

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
                "private/subscribe" => SUBSCRIBED,
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

/// `private/subscribe`'s answer: every channel asked for.
const SUBSCRIBED: &str = r#"["user.orders.BTC-PERPETUAL.raw","user.trades.BTC-PERPETUAL.raw","user.orders.ETH-PERPETUAL.raw","user.trades.ETH-PERPETUAL.raw"]"#;

/// The answer to a set-up request: no open orders, every channel, "ok".
fn setup_answer(m: &Json) -> &'static str {
    match m["method"].as_str().unwrap_or_default() {
        "private/get_open_orders_by_instrument" => "[]",
        "private/subscribe" => SUBSCRIBED,
        _ => r#""ok""#,
    }
}

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
            1 => SUBSCRIBED,
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
fn a_subscription_short_of_a_channel_keeps_the_session_from_ready() {
    let mut r = Rig::new(false, Grant::ClientSignature);
    for m in r.logged_in() {
        let result = match m["method"].as_str().unwrap() {
            "private/subscribe" => {
                r#"["user.orders.BTC-PERPETUAL.raw","user.trades.BTC-PERPETUAL.raw","user.orders.ETH-PERPETUAL.raw"]"#
            }
            _ => "[]",
        };
        r.answer(&m["id"], result, 20);
    }
    assert_eq!(r.s.state(), State::Reconciling);
    assert_eq!(r.s.setup_error(), Some(0));
}

#[test]
fn a_refused_set_up_keeps_the_session_from_ready() {
    let mut r = Rig::new(true, Grant::ClientSignature);
    let setup = r.logged_in();
    r.error(&setup[0]["id"], 11029, "invalid_arguments", 12);
    for m in &setup[1..] {
        r.answer(&m["id"], setup_answer(m), 13);
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
        order("BTC-1", "bot-7", "open", "8900.5", 40, 10),
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
            order("BTC-9", "bot-3", "open", "8900", 10, 0)
        ),
        31,
    );
    assert!(r.s.open_orders().get(ClientOrderId(3)).is_some());
    r.s.on_close(now(40));
    assert_eq!(r.s.state(), State::Disconnected);
    let setup = r.logged_in();
    let mut events = Vec::new();
    for m in &setup {
        events.extend(r.answer(&m["id"], setup_answer(m), 50));
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
            order("BTC-5", "bot-1", "open", "8900", 10, 0)
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
