//! The WebSocket API through the protocol: a client opened at `/ws-api/v3`,
//! its requests signed with keys made here (throw-away Ed25519 and HMAC
//! keys), the answers and user data stream events read as JSON. Requests go
//! through [`WsApi::on_text`] with a time of the test's own, so rate-limit
//! windows and `recvWindow` never depend on the clock.

use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};

use super::*;
use crate::exchange::SimKey;
use crate::market::{Digits, decimal};

/// A time at the start of a minute (and so of a 10 s window).
const NOW: u64 = 1_800_000_000_000;
const ED_KEY: &str = "EdKey0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789abcd";
const HMAC_KEY: &str = "HmacKey0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab";

fn ed25519_pair() -> Ed25519KeyPair {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap()
}

/// A client of the WebSocket API and the simulator it talks to.
struct Api {
    binance: Binance,
    market: Market,
    client: Client,
    pair: Ed25519KeyPair,
    secret: String,
    now: u64,
    /// User data stream events received.
    events: Vec<Value>,
}

impl Api {
    fn new(limits: WsApiLimits) -> Api {
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
    fn call(&mut self, method: &str, params: Value) -> Value {
        let request = json!({"id": "r1", "method": method, "params": params});
        self.raw(&request.to_string())
    }

    fn raw(&mut self, text: &str) -> Value {
        let mut out = Out::default();
        let session = self.client.api.as_mut().unwrap();
        self.binance
            .wsapi
            .on_text(session, text, &mut self.market, self.now, &mut out);
        let answer: Value = serde_json::from_str(&out.items[0].0).unwrap();
        // Then events the request itself ended with (none but
        // `eventStreamTerminated`).
        for (text, _) in &out.items[1..] {
            self.events.push(serde_json::from_str(text).unwrap());
        }
        let (_, events) = self.market.take_engine();
        let mut out = Out::default();
        self.binance
            .on_private(&mut self.client, &events, &self.market, &mut out);
        for (text, _) in out.items {
            self.events.push(serde_json::from_str(&text).unwrap());
        }
        answer
    }

    /// `params` signed with the Ed25519 key, as the docs sign: every
    /// parameter but `signature`, sorted by name, `k=v` joined by `&`.
    fn ed_signed(&self, params: Value) -> Value {
        self.signed(params, ED_KEY, |payload| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(self.pair.sign(payload).as_ref())
        })
    }

    fn hmac_signed(&self, params: Value) -> Value {
        self.signed(params, HMAC_KEY, |payload| {
            let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, self.secret.as_bytes());
            let tag = ring::hmac::sign(&key, payload);
            tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
        })
    }

    fn signed(&self, params: Value, key: &str, sign: impl Fn(&[u8]) -> String) -> Value {
        let mut p = params.as_object().unwrap().clone();
        p.insert("apiKey".into(), key.into());
        p.entry("timestamp").or_insert(self.now.into());
        let payload = wsapi::payload(&p);
        p.insert("signature".into(), sign(payload.as_bytes()).into());
        Value::Object(p)
    }

    /// Logs on with the Ed25519 key and subscribes to the user data
    /// stream.
    fn logged_on(limits: WsApiLimits) -> Api {
        let mut api = Api::new(limits);
        let params = api.ed_signed(json!({}));
        let r = api.call("session.logon", params);
        assert_eq!(r["status"], 200, "{r}");
        let r = api.call("userDataStream.subscribe", json!({}));
        assert_eq!(r["result"]["subscriptionId"], 0, "{r}");
        api
    }

    fn best(&self) -> (i64, i64) {
        let ((bid, _), (ask, _)) = self.market.books[0].top();
        (bid, ask)
    }

    fn price(&self, ticks: i64) -> String {
        let mut s = String::new();
        decimal_of(&mut s, ticks, self.market.instruments[0].price_scale);
        s
    }

    /// A LIMIT GTC order of 0.001 BTC, logged-on style (timestamp only).
    fn limit(&self, side: &str, ticks: i64, client_id: &str) -> Value {
        json!({"symbol": "BTCUSDT", "side": side, "type": "LIMIT", "timeInForce": "GTC",
               "price": self.price(ticks), "quantity": "0.00100", "newClientOrderId": client_id,
               "timestamp": self.now})
    }
}

fn decimal_of(s: &mut String, v: i64, scale: u8) {
    decimal(s, v, scale, Digits::Trimmed);
}

fn error(r: &Value) -> (u64, i64, &str) {
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
        let payload = wsapi::payload(forged.as_object().unwrap());
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

/// A resting order through its life: placed (`NEW`, FULL by default with
/// no fills), listed by `openOrders.status` and `order.status`, cancelled
/// by its client id with a cancel id of its own (`CANCELED`,
/// `origClientOrderId` the order's, `clientOrderId` the cancel's), then
/// unknown to a second cancel (-2011) and still told by `order.status`; the
/// user data stream reports `NEW` and `CANCELED` with `c` and `C` as
/// documented.
#[test]
fn a_resting_order_is_placed_listed_and_cancelled_with_its_reports() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let (bid, _) = api.best();
    let r = api.call("order.place", api.limit("BUY", bid - 5, "quote-1"));
    assert_eq!(r["status"], 200, "{r}");
    let placed = &r["result"];
    assert_eq!(placed["symbol"], "BTCUSDT");
    assert_eq!(placed["clientOrderId"], "quote-1");
    assert_eq!(placed["status"], "NEW");
    assert_eq!(placed["type"], "LIMIT");
    assert_eq!(placed["timeInForce"], "GTC");
    assert_eq!(placed["side"], "BUY");
    assert_eq!(placed["origQty"], "0.00100000");
    assert_eq!(placed["executedQty"], "0.00000000");
    let mut want = String::new();
    decimal(&mut want, bid - 5, 2, Digits::Fixed(8));
    assert_eq!(placed["price"], want);
    assert_eq!(placed["fills"], json!([]));
    let id = placed["orderId"].as_u64().unwrap();
    assert_eq!(api.events.len(), 1, "{:?}", api.events);
    let new = &api.events[0];
    assert_eq!(new["subscriptionId"], 0);
    assert_eq!(new["event"]["e"], "executionReport");
    assert_eq!(new["event"]["x"], "NEW");
    assert_eq!(new["event"]["X"], "NEW");
    assert_eq!(new["event"]["i"], id);
    assert_eq!(new["event"]["c"], "quote-1");
    assert_eq!(new["event"]["w"], true);

    let open = api.call(
        "openOrders.status",
        json!({"symbol": "BTCUSDT", "timestamp": NOW}),
    );
    assert_eq!(open["result"].as_array().unwrap().len(), 1, "{open}");
    assert_eq!(open["result"][0]["orderId"], id);
    assert_eq!(open["result"][0]["isWorking"], true);
    let status = api.call(
        "order.status",
        json!({"symbol": "BTCUSDT", "origClientOrderId": "quote-1", "timestamp": NOW}),
    );
    assert_eq!(status["result"]["orderId"], id, "{status}");

    let cancel = json!({"symbol": "BTCUSDT", "origClientOrderId": "quote-1",
                        "newClientOrderId": "cancel-1", "timestamp": NOW});
    let r = api.call("order.cancel", cancel.clone());
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["result"]["status"], "CANCELED");
    assert_eq!(r["result"]["origClientOrderId"], "quote-1");
    assert_eq!(r["result"]["clientOrderId"], "cancel-1");
    assert_eq!(r["result"]["orderId"], id);
    let report = &api.events[1]["event"];
    assert_eq!(report["x"], "CANCELED", "{report}");
    assert_eq!(report["c"], "cancel-1");
    assert_eq!(report["C"], "quote-1");
    assert_eq!(report["w"], false);

    let again = api.call("order.cancel", cancel);
    assert_eq!(
        error(&again),
        (400, -2011, "Unknown order sent."),
        "{again}"
    );
    let status = api.call(
        "order.status",
        json!({"symbol": "BTCUSDT", "orderId": id, "timestamp": NOW}),
    );
    assert_eq!(status["result"]["status"], "CANCELED", "{status}");
    let none = api.call(
        "order.status",
        json!({"symbol": "BTCUSDT", "orderId": id + 100, "timestamp": NOW}),
    );
    assert_eq!(error(&none), (400, -2013, "Order does not exist."));
    let open = api.call("openOrders.status", json!({"timestamp": NOW}));
    assert_eq!(open["result"], json!([]), "{open}");
}

/// A buy at the best ask takes it: FULL answer with the fill (price,
/// quantity, trade id), `FILLED`, `cummulativeQuoteQty` price × quantity;
/// the stream reports the trade as a taker's (`x` TRADE, `m` false, `l`,
/// `L`, `z`, `Z`).
#[test]
fn a_crossing_order_fills_and_says_so_in_full() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let (_, ask) = api.best();
    let r = api.call("order.place", api.limit("BUY", ask, "take-1"));
    assert_eq!(r["status"], 200, "{r}");
    let res = &r["result"];
    assert_eq!(res["status"], "FILLED", "{res}");
    assert_eq!(res["executedQty"], "0.00100000");
    let fills = res["fills"].as_array().unwrap();
    assert_eq!(fills.len(), 1, "{res}");
    let price: f64 = fills[0]["price"].as_str().unwrap().parse().unwrap();
    assert_eq!(fills[0]["qty"], "0.00100000");
    assert!(fills[0]["tradeId"].as_u64().is_some());
    let quote: f64 = res["cummulativeQuoteQty"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((quote - price * 0.001).abs() < 1e-9, "{quote} {price}");
    let trade = api
        .events
        .iter()
        .map(|e| &e["event"])
        .find(|e| e["x"] == "TRADE")
        .expect("a TRADE report");
    assert_eq!(trade["X"], "FILLED");
    assert_eq!(trade["m"], false);
    assert_eq!(trade["l"], "0.00100000");
    assert_eq!(trade["z"], "0.00100000");
    assert_eq!(trade["L"], fills[0]["price"]);
    assert_eq!(trade["t"], fills[0]["tradeId"]);
    assert_eq!(trade["Z"], res["cummulativeQuoteQty"]);

    // A MARKET sell takes from the bids, whatever their price; FULL by
    // default, its price written as zero.
    let (bid, _) = api.best();
    let market = json!({"symbol": "BTCUSDT", "side": "SELL", "type": "MARKET",
                        "quantity": "0.00200", "timestamp": NOW});
    let r = api.call("order.place", market);
    assert_eq!(r["result"]["status"], "FILLED", "{r}");
    assert_eq!(r["result"]["type"], "MARKET");
    assert_eq!(r["result"]["price"], "0.00000000");
    assert_eq!(r["result"]["fills"][0]["price"], {
        let mut s = String::new();
        decimal(&mut s, bid, 2, Digits::Fixed(8));
        s
    });
    let mut priced = json!({"symbol": "BTCUSDT", "side": "SELL", "type": "MARKET",
                            "quantity": "0.00200", "price": "1.00", "timestamp": NOW});
    assert_eq!(error(&api.call("order.place", priced.clone())).1, -1106);
    priced.as_object_mut().unwrap().remove("quantity");
    priced.as_object_mut().unwrap().remove("price");
    assert_eq!(error(&api.call("order.place", priced)).1, -1102);
}

/// The engine's refusals as Binance words them: a LIMIT_MAKER at the ask
/// (-2010 "Order would immediately match and take."), the client id of an
/// open order (-2010 "Duplicate order sent.", free again once cancelled);
/// and the filters': a price off the tick, a quantity off the step (-1013
/// "Filter failure: ..."), more decimals than 8 (-1111), a bad side, type
/// or time in force, a LIMIT without `timeInForce` (-1102), an unknown
/// symbol (-1121).
#[test]
fn refusals_carry_binance_s_codes_and_messages() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let (bid, ask) = api.best();
    let mut maker = api.limit("BUY", ask, "mk-1");
    maker["type"] = "LIMIT_MAKER".into();
    maker.as_object_mut().unwrap().remove("timeInForce");
    assert_eq!(
        error(&api.call("order.place", maker.clone())),
        (400, -2010, "Order would immediately match and take.")
    );
    maker["timeInForce"] = "GTC".into();
    assert_eq!(error(&api.call("order.place", maker)).1, -1106);

    assert_eq!(
        api.call("order.place", api.limit("BUY", bid - 3, "dup"))["status"],
        200
    );
    assert_eq!(
        error(&api.call("order.place", api.limit("BUY", bid - 4, "dup"))),
        (400, -2010, "Duplicate order sent.")
    );
    let cancel = json!({"symbol": "BTCUSDT", "origClientOrderId": "dup", "timestamp": NOW});
    assert_eq!(api.call("order.cancel", cancel)["status"], 200);
    assert_eq!(
        api.call("order.place", api.limit("BUY", bid - 4, "dup"))["status"],
        200
    );

    let mut p = api.limit("BUY", bid - 3, "f-1");
    p["price"] = format!("{}.001", (bid - 3) / 100).into();
    assert_eq!(
        error(&api.call("order.place", p.clone())),
        (400, -1013, "Filter failure: PRICE_FILTER")
    );
    p["price"] = "1.000000001".into();
    assert_eq!(
        error(&api.call("order.place", p)),
        (400, -1111, "Parameter 'price' has too much precision.")
    );
    let mut q = api.limit("BUY", bid - 3, "f-2");
    q["quantity"] = "0.000001".into();
    assert_eq!(
        error(&api.call("order.place", q)),
        (400, -1013, "Filter failure: LOT_SIZE")
    );
    for (field, value, code) in [
        ("side", "BOTH", -1117),
        ("type", "STOP_LOSS", -1116),
        ("timeInForce", "GTD", -1115),
        ("symbol", "NOPEUSDT", -1121),
    ] {
        let mut o = api.limit("BUY", bid - 3, "f-3");
        o[field] = value.into();
        assert_eq!(error(&api.call("order.place", o)).1, code, "{field}");
    }
    let mut o = api.limit("BUY", bid - 3, "f-4");
    o.as_object_mut().unwrap().remove("timeInForce");
    let r = api.call("order.place", o);
    assert_eq!(
        error(&r),
        (
            400,
            -1102,
            "Mandatory parameter 'timeInForce' was not sent, was empty/null, or malformed."
        )
    );
}

/// `order.cancelReplace`: both halves done (200, `SUCCESS` twice, the
/// cancel's and the new order's reports); the order to cancel unknown
/// under `STOP_ON_FAILURE` (400 -2022, `NOT_ATTEMPTED`, no new order) and
/// under `ALLOW_FAILURE` (409 -2021, the new order placed).
#[test]
fn cancel_replace_answers_each_documented_outcome() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let (bid, _) = api.best();
    api.call("order.place", api.limit("BUY", bid - 5, "cr-1"));
    let mut replace = api.limit("BUY", bid - 6, "cr-2");
    replace["cancelReplaceMode"] = "STOP_ON_FAILURE".into();
    replace["cancelOrigClientOrderId"] = "cr-1".into();
    let r = api.call("order.cancelReplace", replace.clone());
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["result"]["cancelResult"], "SUCCESS");
    assert_eq!(r["result"]["newOrderResult"], "SUCCESS");
    assert_eq!(r["result"]["cancelResponse"]["status"], "CANCELED");
    assert_eq!(r["result"]["cancelResponse"]["origClientOrderId"], "cr-1");
    assert_eq!(r["result"]["newOrderResponse"]["clientOrderId"], "cr-2");
    assert_eq!(r["result"]["newOrderResponse"]["status"], "NEW");

    replace["cancelOrigClientOrderId"] = "nothing".into();
    replace["newClientOrderId"] = "cr-3".into();
    let r = api.call("order.cancelReplace", replace.clone());
    assert_eq!(
        error(&r),
        (400, -2022, "Order cancel-replace failed."),
        "{r}"
    );
    let data = &r["error"]["data"];
    assert_eq!(data["cancelResult"], "FAILURE");
    assert_eq!(data["newOrderResult"], "NOT_ATTEMPTED");
    assert_eq!(data["cancelResponse"]["code"], -2011);
    assert_eq!(data["newOrderResponse"], Value::Null);

    replace["cancelReplaceMode"] = "ALLOW_FAILURE".into();
    let r = api.call("order.cancelReplace", replace);
    assert_eq!(
        error(&r),
        (409, -2021, "Order cancel-replace partially failed."),
        "{r}"
    );
    let data = &r["error"]["data"];
    assert_eq!(data["newOrderResult"], "SUCCESS");
    assert_eq!(data["newOrderResponse"]["clientOrderId"], "cr-3");
    let open = api.call(
        "openOrders.status",
        json!({"symbol": "BTCUSDT", "timestamp": NOW}),
    );
    let ids: Vec<&Value> = open["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["clientOrderId"])
        .collect();
    assert_eq!(ids, [&json!("cr-2"), &json!("cr-3")], "{open}");
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

/// `openOrders.cancelAll` cancels every open order of the symbol and
/// answers a cancel report each; with none open, -2011.
#[test]
fn cancel_all_cancels_every_open_order_of_the_symbol() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let (bid, ask) = api.best();
    api.call("order.place", api.limit("BUY", bid - 5, "a-1"));
    api.call("order.place", api.limit("SELL", ask + 5, "a-2"));
    let all = json!({"symbol": "BTCUSDT", "timestamp": NOW});
    let r = api.call("openOrders.cancelAll", all.clone());
    let done = r["result"].as_array().unwrap();
    assert_eq!(done.len(), 2, "{r}");
    assert!(done.iter().all(|o| o["status"] == "CANCELED"));
    assert_eq!(done[0]["origClientOrderId"], "a-1");
    assert_eq!(
        api.events
            .iter()
            .filter(|e| e["event"]["x"] == "CANCELED")
            .count(),
        2
    );
    assert!(api.market.open_orders(0, None).next().is_none());
    assert_eq!(
        error(&api.call("openOrders.cancelAll", all)),
        (400, -2011, "Unknown order sent.")
    );
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

/// Orders the book cannot fill as asked expire, answered 200 as Binance
/// answers them: a FOK larger than the book holds within its limit and an
/// IOC that does not cross come back `EXPIRED` with nothing filled, each
/// with an `EXPIRED` execution report, and neither is left open.
#[test]
fn fok_and_ioc_orders_that_cannot_fill_expire() {
    let mut api = Api::logged_on(WsApiLimits::default());
    let (bid, ask) = api.best();
    let mut fok = api.limit("BUY", ask, "fok-1");
    fok["timeInForce"] = "FOK".into();
    fok["quantity"] = "100.00000".into();
    let r = api.call("order.place", fok);
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["result"]["status"], "EXPIRED", "{r}");
    assert_eq!(r["result"]["executedQty"], "0.00000000");
    assert_eq!(r["result"]["fills"], json!([]));
    let mut ioc = api.limit("BUY", bid - 5, "ioc-1");
    ioc["timeInForce"] = "IOC".into();
    let r = api.call("order.place", ioc);
    assert_eq!(r["result"]["status"], "EXPIRED", "{r}");
    let expired: Vec<&Value> = api
        .events
        .iter()
        .map(|e| &e["event"])
        .filter(|e| e["x"] == "EXPIRED")
        .map(|e| &e["c"])
        .collect();
    assert_eq!(expired, [&json!("fok-1"), &json!("ioc-1")]);
    assert!(api.market.open_orders(0, None).next().is_none());
    let status = api.call(
        "order.status",
        json!({"symbol": "BTCUSDT", "origClientOrderId": "fok-1", "timestamp": NOW}),
    );
    assert_eq!(status["result"]["status"], "EXPIRED", "{status}");
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
