//! The WebSocket API through the protocol: a client opened at `/ws-api/v3`,
//! its requests signed with keys made here (throw-away Ed25519 and HMAC
//! keys), the answers and user data stream events read as JSON. Requests go
//! through [`WsApi::on_text`] with a time of the test's own, so rate-limit
//! windows and `recvWindow` never depend on the clock.

use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};

use super::*;
use crate::binance::{Binance, Client};
use crate::exchange::SimKey;
use crate::market::{Digits, decimal};
use crate::protocol::Protocol;
use tickwire_venues::Venue;

/// A time at the start of a minute (and so of a 10 s window).
pub(super) const NOW: u64 = 1_800_000_000_000;
pub(super) const ED_KEY: &str = "EdKey0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789abcd";
pub(super) const HMAC_KEY: &str = "HmacKey0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab";

pub(super) fn ed25519_pair() -> Ed25519KeyPair {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap()
}

/// A client of the WebSocket API and the simulator it talks to.
pub(super) struct Api {
    pub(super) binance: Binance,
    pub(super) market: Market,
    pub(super) client: Client,
    pair: Ed25519KeyPair,
    secret: String,
    pub(super) now: u64,
    /// User data stream events received.
    pub(super) events: Vec<Value>,
}

impl Api {
    pub(super) fn new(limits: WsApiLimits) -> Api {
        let pair = ed25519_pair();
        let mut raw = [0u8; 32];
        SystemRandom::new().fill(&mut raw).unwrap();
        let secret: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let public: [u8; 32] = pair.public_key().as_ref().try_into().unwrap();
        let keys = vec![
            SimKey::ed25519(ED_KEY, public),
            SimKey::hmac(HMAC_KEY, secret.clone()),
        ];
        let market = crate::testutil::market(Venue::BinanceSpot, 1).with_keys(keys, 1);
        let binance = Binance::with_limits(Venue::BinanceSpot, limits);
        let mut client = binance.open("/ws-api/v3", &market).unwrap();
        // Connected at the test's time, not the clock's.
        client.api = Some(binance.wsapi.connect("/ws-api/v3", NOW));
        Api {
            binance,
            market,
            client,
            pair,
            secret,
            now: NOW,
            events: Vec::new(),
        }
    }

    /// A request's answer; the user data stream events it caused are kept.
    pub(super) fn call(&mut self, method: &str, params: Value) -> Value {
        let request = json!({"id": "r1", "method": method, "params": params});
        self.raw(&request.to_string())
    }

    pub(super) fn raw(&mut self, text: &str) -> Value {
        let mut out = Out::default();
        let session = self.client.api.as_mut().unwrap();
        self.binance
            .wsapi
            .on_text(session, text, &mut self.market, self.now, &mut out);
        let answer: Value = serde_json::from_str(out.items[0].0.text()).unwrap();
        // Then events the request itself ended with (none but
        // `eventStreamTerminated`).
        for (frame, _) in &out.items[1..] {
            self.events
                .push(serde_json::from_str(frame.text()).unwrap());
        }
        let (_, events) = self.market.take_engine();
        let mut out = Out::default();
        self.binance
            .on_private(&mut self.client, &events, &self.market, &mut out);
        for (frame, _) in out.items {
            self.events
                .push(serde_json::from_str(frame.text()).unwrap());
        }
        answer
    }

    /// `params` signed with the Ed25519 key, as the docs sign: every
    /// parameter but `signature`, sorted by name, `k=v` joined by `&`.
    pub(super) fn ed_signed(&self, params: Value) -> Value {
        self.signed(params, ED_KEY, |payload| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(self.pair.sign(payload).as_ref())
        })
    }

    pub(super) fn hmac_signed(&self, params: Value) -> Value {
        self.signed(params, HMAC_KEY, |payload| {
            let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, self.secret.as_bytes());
            let tag = ring::hmac::sign(&key, payload);
            tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
        })
    }

    pub(super) fn signed(&self, params: Value, key: &str, sign: impl Fn(&[u8]) -> String) -> Value {
        let mut p = params.as_object().unwrap().clone();
        p.insert("apiKey".into(), key.into());
        p.entry("timestamp").or_insert(self.now.into());
        let payload = payload(&p);
        p.insert("signature".into(), sign(payload.as_bytes()).into());
        Value::Object(p)
    }

    /// Logs on with the Ed25519 key and subscribes to the user data
    /// stream.
    pub(super) fn logged_on(limits: WsApiLimits) -> Api {
        let mut api = Api::new(limits);
        let params = api.ed_signed(json!({}));
        let r = api.call("session.logon", params);
        assert_eq!(r["status"], 200, "{r}");
        let r = api.call("userDataStream.subscribe", json!({}));
        assert_eq!(r["result"]["subscriptionId"], 0, "{r}");
        api
    }

    pub(super) fn best(&self) -> (i64, i64) {
        let ((bid, _), (ask, _)) = self.market.books[0].top();
        (bid, ask)
    }

    pub(super) fn price(&self, ticks: i64) -> String {
        let mut s = String::new();
        decimal_of(&mut s, ticks, self.market.instruments[0].price_scale);
        s
    }

    /// A LIMIT GTC order of 0.001 BTC, logged-on style (timestamp only).
    pub(super) fn limit(&self, side: &str, ticks: i64, client_id: &str) -> Value {
        json!({"symbol": "BTCUSDT", "side": side, "type": "LIMIT", "timeInForce": "GTC",
               "price": self.price(ticks), "quantity": "0.00100", "newClientOrderId": client_id,
               "timestamp": self.now})
    }
}

pub(super) fn decimal_of(s: &mut String, v: i64, scale: u8) {
    decimal(s, v, scale, Digits::Trimmed);
}

pub(super) fn error(r: &Value) -> (u64, i64, &str) {
    (
        r["status"].as_u64().unwrap(),
        r["error"]["code"].as_i64().unwrap_or(0),
        r["error"]["msg"].as_str().unwrap_or(""),
    )
}

/// `session.logon` takes an Ed25519 key's signature of the sorted
/// parameters and nothing else: a signature by another key (-1022), an
/// HMAC key (-1022: "Only Ed25519 keys are supported"), an unknown key
/// (-2015, 401), a malformed one (-2014), a stale or early timestamp
/// (-1021, both messages), and a `recvWindow` over 60000 (-1102) are
/// refused and leave the session unauthenticated; `session.status` and
/// `session.logout` say who is logged on.
#[test]
fn logon_takes_an_ed25519_signature_and_refuses_the_rest() {
    let mut api = Api::new(WsApiLimits::default());
    let status = api.call("session.status", json!({}));
    assert_eq!(status["result"]["apiKey"], Value::Null, "{status}");

    let mut forged = api.ed_signed(json!({}));
    let other = ed25519_pair();
    {
        use base64::Engine as _;
        let payload = payload(forged.as_object().unwrap());
        forged["signature"] = base64::engine::general_purpose::STANDARD
            .encode(other.sign(payload.as_bytes()).as_ref())
            .into();
    }
    let r = api.call("session.logon", forged);
    assert_eq!(
        error(&r),
        (400, -1022, "Signature for this request is not valid."),
        "{r}"
    );
    let hmac = api.hmac_signed(json!({}));
    assert_eq!(error(&api.call("session.logon", hmac)).1, -1022);
    let mut unknown = api.ed_signed(json!({}));
    unknown["apiKey"] = "Unknown0123456789".into();
    assert_eq!(
        error(&api.call("session.logon", unknown)),
        (
            401,
            -2015,
            "Invalid API-key, IP, or permissions for action."
        )
    );
    let mut malformed = api.ed_signed(json!({}));
    malformed["apiKey"] = "not a key!".into();
    assert_eq!(
        error(&api.call("session.logon", malformed)),
        (401, -2014, "API-key format invalid.")
    );
    let stale = api.ed_signed(json!({"timestamp": NOW - 5_001}));
    assert_eq!(
        error(&api.call("session.logon", stale)),
        (
            400,
            -1021,
            "Timestamp for this request is outside of the recvWindow."
        )
    );
    // Inside a wider window, the same age is fine.
    let widened = api.ed_signed(json!({"timestamp": NOW - 5_001, "recvWindow": 6000}));
    assert_eq!(api.call("session.logon", widened)["status"], 200);
    api.call("session.logout", json!({}));
    let early = api.ed_signed(json!({"timestamp": NOW + 1_000}));
    assert_eq!(
        error(&api.call("session.logon", early)),
        (
            400,
            -1021,
            "Timestamp for this request was 1000ms ahead of the server's time."
        )
    );
    let wide = api.ed_signed(json!({"recvWindow": 60001}));
    assert_eq!(error(&api.call("session.logon", wide)).1, -1102);
    let status = api.call("session.status", json!({}));
    assert_eq!(status["result"]["apiKey"], Value::Null, "{status}");

    let good = api.ed_signed(json!({}));
    let r = api.call("session.logon", good);
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["id"], "r1");
    assert_eq!(r["result"]["apiKey"], ED_KEY);
    assert_eq!(r["result"]["authorizedSince"], NOW);
    let status = api.call("session.status", json!({}));
    assert_eq!(status["result"]["apiKey"], ED_KEY, "{status}");
    assert_eq!(status["result"]["userDataStream"], false);
    let out = api.call("session.logout", json!({}));
    assert_eq!(out["result"]["apiKey"], Value::Null, "{out}");
    // Logged out, a trading request must carry its own key.
    let r = api.call("openOrders.status", json!({"timestamp": NOW}));
    assert_eq!(error(&r).1, -1102, "{r}");
    assert!(error(&r).2.contains("'apiKey'"), "{r}");
}

/// Every answer reports the limits the request counts against: `ORDERS`
/// (10 s and day) then `REQUEST_WEIGHT` for order placement, the weight
/// alone otherwise, each request's documented weight added (logon 2,
/// place 1, open orders of a symbol 6). Past the order limit, 429 -1015
/// until the next 10 s window; past the weight limit, 429 -1003 with
/// `retryAfter` the next minute, until that minute; `returnRateLimits`
/// false hides the array.
#[test]
fn rate_limits_are_counted_reported_and_enforced() {
    let limits = WsApiLimits {
        weight_per_minute: 30,
        orders_per_10s: 2,
        orders_per_day: 100,
    };
    let mut api = Api::new(limits);
    // Connecting weighs 2, logging on 2.
    let logon = api.ed_signed(json!({}));
    let r = api.call("session.logon", logon);
    assert_eq!(
        r["rateLimits"],
        json!([{"rateLimitType": "REQUEST_WEIGHT", "interval": "MINUTE", "intervalNum": 1,
                "limit": 30, "count": 4}]),
        "{r}"
    );
    let (bid, _) = api.best();
    let r = api.call("order.place", api.limit("BUY", bid - 5, "l-1"));
    let kinds: Vec<(&Value, &Value, &Value)> = r["rateLimits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (&l["rateLimitType"], &l["interval"], &l["count"]))
        .collect();
    assert_eq!(
        kinds,
        [
            (&json!("ORDERS"), &json!("SECOND"), &json!(1)),
            (&json!("ORDERS"), &json!("DAY"), &json!(1)),
            (&json!("REQUEST_WEIGHT"), &json!("MINUTE"), &json!(5)),
        ],
        "{r}"
    );
    assert_eq!(
        api.call("order.place", api.limit("BUY", bid - 6, "l-2"))["status"],
        200
    );
    let r = api.call("order.place", api.limit("BUY", bid - 7, "l-3"));
    assert_eq!(
        error(&r),
        (
            429,
            -1015,
            "Too many new orders; current limit is 2 orders per 10 SECOND."
        ),
        "{r}"
    );
    assert_eq!(r["error"]["data"]["retryAfter"], NOW + 10_000);
    assert_eq!(r["rateLimits"][0]["count"], 2);
    let open = api.call(
        "openOrders.status",
        json!({"symbol": "BTCUSDT", "timestamp": NOW}),
    );
    assert_eq!(
        open["result"].as_array().unwrap().len(),
        2,
        "the third was not placed"
    );
    assert_eq!(open["rateLimits"].as_array().unwrap().len(), 1, "{open}");
    assert_eq!(open["rateLimits"][0]["count"], 13, "{open}");

    api.now = NOW + 10_000;
    let r = api.call("order.place", api.limit("BUY", bid - 7, "l-3"));
    assert_eq!(r["status"], 200, "a new 10 s window: {r}");
    assert_eq!(r["rateLimits"][0]["count"], 1);
    assert_eq!(r["rateLimits"][1]["count"], 3);

    // Weight: 14 so far; order.status weighs 4: 30, the limit, is still
    // within it.
    let status = json!({"symbol": "BTCUSDT", "origClientOrderId": "l-1",
                        "timestamp": NOW + 10_000, "returnRateLimits": false});
    for _ in 0..4 {
        let r = api.call("order.status", status.clone());
        assert_eq!(r["status"], 200, "{r}");
        assert!(r.get("rateLimits").is_none(), "{r}");
    }
    let r = api.call("order.status", status.clone());
    assert_eq!(error(&r).0, 429, "{r}");
    assert_eq!(error(&r).1, -1003, "{r}");
    assert_eq!(r["error"]["data"]["retryAfter"], NOW + 60_000);
    api.now = NOW + 60_000;
    let mut status = status;
    status["timestamp"] = (NOW + 60_000).into();
    assert_eq!(
        api.call("order.status", status)["status"],
        200,
        "the next minute"
    );
}

/// Without a session, a request signed with its own key acts for that
/// key's account: HMAC-SHA256 in hex (either case, "not
/// case-sensitive") or Ed25519; a wrong HMAC signature is -1022.
/// `userDataStream.subscribe` needs a logged-on session;
/// `userDataStream.subscribe.signature` subscribes any key's account, once
/// a connection (-2035).
#[test]
fn ad_hoc_signed_requests_and_signature_subscriptions() {
    let mut api = Api::new(WsApiLimits::default());
    let (bid, _) = api.best();
    assert_eq!(
        error(&api.call("userDataStream.subscribe", json!({}))).0,
        401
    );
    let sub = api.hmac_signed(json!({}));
    let r = api.call("userDataStream.subscribe.signature", sub.clone());
    assert_eq!(r["result"]["subscriptionId"], 0, "{r}");
    assert_eq!(
        error(&api.call("userDataStream.subscribe.signature", sub)).1,
        -2035
    );

    let mut order = api.hmac_signed(api.limit("SELL", bid + 500, "h-1"));
    order["signature"] = order["signature"].as_str().unwrap().to_uppercase().into();
    let r = api.call("order.place", order);
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(api.events.last().unwrap()["event"]["c"], "h-1");
    let mut wrong = api.hmac_signed(api.limit("SELL", bid + 501, "h-2"));
    wrong["price"] = api.price(bid + 502).into();
    assert_eq!(error(&api.call("order.place", wrong)).1, -1022);
    let ed = api.ed_signed(api.limit("SELL", bid + 503, "e-1"));
    assert_eq!(api.call("order.place", ed)["status"], 200);
    // The Ed25519 key's account is another: its order is not the HMAC
    // account's, and no event of it reached this connection.
    let mine = api.hmac_signed(json!({"symbol": "BTCUSDT"}));
    let open = api.call("openOrders.status", mine);
    assert_eq!(open["result"].as_array().unwrap().len(), 1, "{open}");
    assert!(api.events.iter().all(|e| e["event"]["c"] != "e-1"));
}

/// The envelope: a method may carry `v3/`; an unknown one is refused
/// (-1020) and text that is no JSON object is -1135 with a null id; the id
/// comes back as sent, whatever its JSON type.
#[test]
fn the_envelope_echoes_ids_and_refuses_what_it_cannot_read() {
    let mut api = Api::new(WsApiLimits::default());
    let r = api.raw(r#"{"id":7,"method":"v3/time"}"#);
    assert_eq!(r["id"], 7);
    assert_eq!(r["result"]["serverTime"], NOW);
    let r = api.raw(r#"{"id":null,"method":"ping"}"#);
    assert_eq!(r["status"], 200);
    assert_eq!(r["id"], Value::Null);
    let r = api.raw(r#"{"id":"x","method":"account.status"}"#);
    assert_eq!(error(&r).1, -1020, "{r}");
    assert_eq!(r["id"], "x");
    let r = api.raw("not json");
    assert_eq!(error(&r), (400, -1135, "Invalid JSON Request"));
    assert_eq!(r["id"], Value::Null);
}

/// Ending a subscription says so on the stream: `userDataStream.unsubscribe`
/// and `session.logout` (of the logon's own subscription) each send
/// `eventStreamTerminated` under its id after their answer, and events of
/// the account stop; with none active, unsubscribing is -2036.
#[test]
fn ending_a_subscription_sends_event_stream_terminated() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let r = api.call("userDataStream.unsubscribe", json!({}));
    assert_eq!(r["result"], json!({}), "{r}");
    assert_eq!(api.events.len(), 1, "{:?}", api.events);
    assert_eq!(api.events[0]["subscriptionId"], 0);
    assert_eq!(api.events[0]["event"]["e"], "eventStreamTerminated");
    let (bid, _) = api.best();
    api.call("order.place", api.limit("BUY", bid - 5, "quiet"));
    assert_eq!(api.events.len(), 1, "no report once unsubscribed");
    assert_eq!(
        error(&api.call("userDataStream.unsubscribe", json!({}))),
        (400, -2036, "User Data Stream subscription not active.")
    );
    let r = api.call("userDataStream.subscribe", json!({}));
    assert_eq!(r["result"]["subscriptionId"], 1, "ids are not reused: {r}");
    api.call("session.logout", json!({}));
    let last = api.events.last().unwrap();
    assert_eq!(last["subscriptionId"], 1);
    assert_eq!(last["event"]["e"], "eventStreamTerminated");
    let status = api.call("session.status", json!({}));
    assert_eq!(status["result"]["userDataStream"], false, "{status}");
}

/// `order.test` checks an order as `order.place` would and answers `{}`,
/// placing nothing and counting no order; a connection opened with
/// `returnRateLimits=false` answers without `rateLimits` unless a request
/// asks for them; its `serverShutdown` notice is the API's connection
/// event, `{"event":{"e":"serverShutdown",..}}`.
#[test]
fn order_test_rate_limit_display_and_the_shutdown_notice() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let (bid, _) = api.best();
    let r = api.call("order.test", api.limit("BUY", bid - 5, "t-1"));
    assert_eq!(r["result"], json!({}), "{r}");
    assert_eq!(
        r["rateLimits"].as_array().unwrap().len(),
        1,
        "no order counted: {r}"
    );
    let mut bad = api.limit("BUY", bid - 5, "t-2");
    bad["quantity"] = "0.000001".into();
    assert_eq!(
        error(&api.call("order.test", bad)).2,
        "Filter failure: LOT_SIZE"
    );
    assert!(api.market.open_orders(0, None).next().is_none());
    assert!(api.events.is_empty(), "{:?}", api.events);

    let notice = api.binance.shutdown_notice(&api.client).unwrap();
    let notice: Value = serde_json::from_str(&notice).unwrap();
    assert_eq!(notice["event"]["e"], "serverShutdown", "{notice}");

    api.client = api
        .binance
        .open("/ws-api/v3?returnRateLimits=false", &api.market)
        .unwrap();
    let r = api.call("time", json!({}));
    assert!(r.get("rateLimits").is_none(), "{r}");
    let r = api.call("time", json!({"returnRateLimits": true}));
    assert!(r["rateLimits"].is_array(), "{r}");
    let status = api.call("session.status", json!({}));
    assert_eq!(status["result"]["returnRateLimits"], false, "{status}");
}

mod garbage {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::{Api, NOW};
    use crate::binance::WsApiLimits;

    /// A parameter value: the kinds a client may send, good and bad.
    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            "[0-9]{0,12}(\\.[0-9]{0,12})?".prop_map(Value::from),
            "[A-Z_]{0,12}".prop_map(Value::from),
            ".{0,40}".prop_map(Value::from),
            Just(json!(["BTCUSDT"])),
            Just(json!({"a": 1})),
        ]
    }

    fn request() -> impl Strategy<Value = String> {
        let methods = prop::sample::select(vec![
            "order.place",
            "order.test",
            "order.cancel",
            "order.cancelReplace",
            "order.status",
            "openOrders.status",
            "openOrders.cancelAll",
            "session.logon",
            "session.status",
            "session.logout",
            "userDataStream.subscribe",
            "userDataStream.unsubscribe",
            "userDataStream.subscribe.signature",
            "nonsense",
        ]);
        let names = prop::sample::select(vec![
            "symbol",
            "side",
            "type",
            "timeInForce",
            "price",
            "quantity",
            "newClientOrderId",
            "newOrderRespType",
            "orderId",
            "origClientOrderId",
            "cancelReplaceMode",
            "cancelOrderId",
            "cancelOrigClientOrderId",
            "recvWindow",
            "timestamp",
            "apiKey",
            "signature",
            "subscriptionId",
            "returnRateLimits",
        ]);
        (
            methods,
            prop::collection::vec((names, value()), 0..10),
            any::<u8>(),
        )
            .prop_map(|(method, params, id)| {
                let mut p: Map<String, Value> =
                    params.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                // Mostly well-timed, so the checks past the time run too.
                if id % 4 != 0 {
                    p.insert("timestamp".into(), NOW.into());
                }
                json!({"id": id, "method": method, "params": p}).to_string()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever a logged-on client sends, each request gets one answer,
        /// JSON with its id and an HTTP-like status, and nothing panics;
        /// the exchange's book is never left crossed.
        #[test]
        fn every_request_gets_one_well_formed_answer(requests in prop::collection::vec(request(), 1..12)) {
            let mut api = Api::logged_on(WsApiLimits::default());
            for r in requests {
                let sent: Value = serde_json::from_str(&r).unwrap();
                let answer = api.raw(&r);
                prop_assert_eq!(&answer["id"], &sent["id"]);
                let status = answer["status"].as_u64().unwrap();
                prop_assert!([200, 400, 401, 409, 429].contains(&status), "{}", answer);
                prop_assert_eq!(answer.get("error").is_some(), status != 200, "{}", answer);
                let ((bid, _), (ask, _)) = api.market.books[0].top();
                prop_assert!(bid < ask, "crossed: {} {}", bid, ask);
            }
        }
    }
}
