//! Binance spot's WebSocket API (`/ws-api/v3`) over the wire: a client
//! signing with an HMAC key of its own sends a burst of requests, the
//! simulator answers each, and its exchange holds the orders placed. The
//! API limits requests by weight and order counts, not by messages a
//! second (`web-socket-api.md` "Rate limits" gives no such limit for it,
//! unlike the streams' 5): a burst past the streams' limit is answered,
//! not closed.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ring::hmac;
use tickwire_net::{
    Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect, Role, Stamps,
    TlsConfig,
};
use tickwire_sim::{SimConfig, SimKey, Simulator, Venue, WsApiLimits};

const KEY: &str = "WireTestKey0123456789abcdefABCDEF";

/// Sends `requests` at once when it opens; keeps every text it gets.
struct Client {
    requests: Vec<String>,
    texts: Vec<serde_json::Value>,
    closed: Option<Disconnect>,
}

impl Handler for Client {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        for r in &self.requests {
            conn.send_text(r).unwrap();
        }
    }

    fn on_message(&mut self, _: &mut Conn<'_>, payload: Payload<'_>, _: Stamps) {
        let text = payload.as_str().unwrap_or_default();
        self.texts.push(serde_json::from_str(text).unwrap());
    }

    fn on_close(&mut self, _: ConnId, _: Role, reason: &Disconnect) -> Reconnect {
        self.closed = Some(reason.clone());
        Reconnect::No
    }
}

/// `params` signed as the docs sign them (sorted, `k=v&...`, HMAC-SHA256
/// in hex), as a request.
fn signed(id: u32, method: &str, params: &[(&str, String)], secret: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let mut p: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    p.push(("apiKey".into(), KEY.into()));
    p.push(("timestamp".into(), now.to_string()));
    p.sort();
    let payload: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let tag = hmac::sign(&key, payload.join("&").as_bytes());
    let signature: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let mut object = serde_json::Map::new();
    for (k, v) in p {
        object.insert(k, v.into());
    }
    object.insert("signature".into(), signature.into());
    serde_json::json!({"id": id, "method": method, "params": object}).to_string()
}

/// `order.place` of a resting buy, client id `wire-{k}`.
fn place(k: u32, secret: &str) -> String {
    let params = [
        ("symbol", "BTCUSDT".to_string()),
        ("side", "BUY".into()),
        ("type", "LIMIT".into()),
        ("timeInForce", "GTC".into()),
        ("price", format!("{}.00", 50_000 + k)),
        ("quantity", "0.00100".into()),
        ("newClientOrderId", format!("wire-{k}")),
    ];
    signed(k, "order.place", &params, secret)
}

/// Runs `requests` on a new connection to `simulator` until `answers`
/// frames came (or it closed): the client after.
fn exchange(simulator: &Simulator, requests: Vec<String>, answers: usize) -> Client {
    let client = Client {
        requests,
        texts: Vec::new(),
        closed: None,
    };
    let config = Config {
        send_rate: None,
        ping_interval: None,
        ..Config::default()
    };
    let mut driver = Driver::new(config, &TlsConfig::empty(), client).unwrap();
    let url = format!("ws://{}/ws-api/v3", simulator.addr());
    driver.connect(Endpoint::parse(&url).unwrap()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while driver.handler().texts.len() < answers && driver.handler().closed.is_none() {
        assert!(
            Instant::now() < deadline,
            "{answers} answers: not within 60 s"
        );
        driver.poll_timeout(Duration::from_millis(10)).unwrap();
    }
    driver.into_handler()
}

/// The limits `SimConfig::ws_api_limits` sets are the ones enforced and
/// reported: with 2 orders a day, the third order of a burst is refused
/// with 429 -1015 and not placed (unless the UTC day turned between the
/// answers, the reset the docs describe, which the test then accepts).
#[test]
fn configured_order_limits_are_enforced_over_the_wire() {
    let secret: String = (0..32).map(|k| format!("{:02x}", k * 5 + 1)).collect();
    let simulator = Simulator::start(SimConfig {
        keys: vec![SimKey::hmac(KEY, secret.clone())],
        ws_api_limits: WsApiLimits {
            orders_per_day: 2,
            ..WsApiLimits::default()
        },
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let client = exchange(&simulator, (0..3).map(|k| place(k, &secret)).collect(), 3);
    assert_eq!(client.closed, None);
    let day = |t: &serde_json::Value| t["rateLimits"][1]["count"].clone();
    assert_eq!(
        client.texts[1]["rateLimits"][1]["limit"], 2,
        "{:?}",
        client.texts
    );
    assert_eq!(day(&client.texts[1]), 2);
    let third = &client.texts[2];
    if day(third) != 1 {
        assert_eq!(third["status"], 429, "{third}");
        assert_eq!(third["error"]["code"], -1015);
        assert_eq!(
            third["error"]["msg"],
            "Too many new orders; current limit is 2 orders per 1 DAY."
        );
        assert_eq!(simulator.open_orders().len(), 2);
    }
    simulator.stop();
}

#[test]
fn a_burst_of_signed_requests_is_answered_and_the_orders_rest() {
    let secret: String = (0..32).map(|k| format!("{:02x}", k * 7 + 3)).collect();
    let simulator = Simulator::start(SimConfig {
        keys: vec![SimKey::hmac(KEY, secret.clone())],
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let mut requests: Vec<String> = (0..10).map(|k| place(k, &secret)).collect();
    requests.push(signed(
        10,
        "openOrders.status",
        &[("symbol", "BTCUSDT".into())],
        &secret,
    ));
    let client = exchange(&simulator, requests, 11);
    let client = &client;
    assert_eq!(
        client.closed,
        None,
        "closed after {} answers",
        client.texts.len()
    );
    for (k, answer) in client.texts.iter().enumerate() {
        assert_eq!(answer["id"], k, "answers in order: {answer}");
        assert_eq!(answer["status"], 200, "{answer}");
    }
    assert_eq!(client.texts[10]["result"].as_array().unwrap().len(), 10);
    let open = simulator.open_orders();
    assert_eq!(open.len(), 10);
    assert!(
        open.iter()
            .all(|o| o.client_id.starts_with("wire-") && o.buy)
    );
    simulator.stop();
}

/// ccxt (`ccxt.pro`'s binance class, which nobody here wrote) places an
/// order with `createOrderWs` and cancels it with `cancelOrderWs` against
/// a TLS simulator, signing each request with an HMAC key, then with an
/// Ed25519 key (ccxt signs with Ed25519 when its secret is a PEM private
/// key): `scripts/ccxt-binance-orders.py`, run by the Python named in
/// `TICKWIRE_PYTHON` (`scripts/py-venv.sh` prints the project's, which
/// has ccxt). Without it the test has nothing to run and says so.
#[test]
fn ccxt_places_and_cancels_an_order_through_the_ws_api() {
    use base64::Engine as _;
    use ring::signature::{Ed25519KeyPair, KeyPair};
    let Some(python) = std::env::var_os("TICKWIRE_PYTHON") else {
        eprintln!(
            "ccxt_places_and_cancels_an_order_through_the_ws_api: TICKWIRE_PYTHON unset, ccxt not run"
        );
        return;
    };
    // Throw-away keys, handed to the script through its environment.
    let secret: String = (0..32)
        .map(|k| format!("{:02x}", (k * 37 + 11) % 256))
        .collect();
    ccxt(&python, SimKey::hmac(KEY, secret.clone()), &secret);
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let public: [u8; 32] = pair.public_key().as_ref().try_into().unwrap();
    // ring writes PKCS#8 v2 (the public key too), which the Python
    // `cryptography` ccxt loads it with refuses: the same seed in v1 (RFC
    // 8410's 48 bytes; in ring's v2 the seed is bytes 16 to 48).
    let mut v1 = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    v1.extend_from_slice(&pkcs8.as_ref()[16..48]);
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(&v1)
    );
    ccxt(&python, SimKey::ed25519(KEY, public), &pem);
}

/// `scripts/ccxt-binance-orders.py` against a TLS simulator that knows
/// `key`, ccxt holding `secret`: it must pass and leave nothing open.
fn ccxt(python: &std::ffi::OsStr, key: SimKey, secret: &str) {
    let (tls, ca) = tickwire_sim::self_signed().unwrap();
    let dir = std::env::temp_dir().join(format!("tickwire-ccxt-ws-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let simulator = Simulator::start(SimConfig {
        keys: vec![key],
        tls: Some(tls),
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/ccxt-binance-orders.py"
    );
    let mut child = std::process::Command::new(python)
        .arg(script)
        .arg("--port")
        .arg(simulator.addr().port().to_string())
        .arg("--ca")
        .arg(&ca_file)
        .env("TICKWIRE_CCXT_KEY", KEY)
        .env("TICKWIRE_CCXT_SECRET", secret)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("ccxt: not done within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success(), "ccxt: {status}");
    assert!(
        simulator.open_orders().is_empty(),
        "the order was cancelled"
    );
    simulator.stop();
}

/// Over the wire, with an Ed25519 key: `session.logon`, then
/// `userDataStream.subscribe`, then an order that takes from the book;
/// the server hands the engine's events to the session, which reports
/// them on its subscription (`executionReport` `NEW`, then `TRADE`s that
/// add up to the order).
#[test]
fn a_logged_on_session_gets_its_execution_reports() {
    use base64::Engine as _;
    use ring::signature::{Ed25519KeyPair, KeyPair};
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let public: [u8; 32] = pair.public_key().as_ref().try_into().unwrap();
    let simulator = Simulator::start(SimConfig {
        keys: vec![SimKey::ed25519(KEY, public)],
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let payload = format!("apiKey={KEY}&timestamp={now}");
    let signature = base64::engine::general_purpose::STANDARD.encode(pair.sign(payload.as_bytes()));
    let logon = serde_json::json!({"id": 1, "method": "session.logon",
        "params": {"apiKey": KEY, "timestamp": now, "signature": signature}});
    let place = serde_json::json!({"id": 3, "method": "order.place", "params": {
        "symbol": "BTCUSDT", "side": "BUY", "type": "LIMIT", "timeInForce": "IOC",
        "price": "70000.00", "quantity": "0.00100", "timestamp": now}});
    let client = Client {
        requests: vec![
            logon.to_string(),
            r#"{"id":2,"method":"userDataStream.subscribe"}"#.into(),
            place.to_string(),
        ],
        texts: Vec::new(),
        closed: None,
    };
    let config = Config {
        send_rate: None,
        ping_interval: None,
        ..Config::default()
    };
    let mut driver = Driver::new(config, &TlsConfig::empty(), client).unwrap();
    let url = format!("ws://{}/ws-api/v3", simulator.addr());
    driver.connect(Endpoint::parse(&url).unwrap()).unwrap();
    let filled = |c: &Client| {
        c.texts
            .iter()
            .filter(|t| t["event"]["x"] == "TRADE")
            .any(|t| t["event"]["X"] == "FILLED")
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !filled(driver.handler()) && driver.handler().closed.is_none() {
        assert!(
            Instant::now() < deadline,
            "the fill's report: not within 60 s"
        );
        driver.poll_timeout(Duration::from_millis(10)).unwrap();
    }
    let texts = &driver.handler().texts;
    let answer = |id: u64| texts.iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(answer(1)["status"], 200, "{texts:?}");
    assert_eq!(answer(2)["result"]["subscriptionId"], 0);
    let placed = &answer(3)["result"];
    assert_eq!(placed["status"], "FILLED", "{placed}");
    let reports: Vec<&serde_json::Value> = texts
        .iter()
        .filter(|t| t["subscriptionId"] == 0)
        .map(|t| &t["event"])
        .collect();
    assert_eq!(reports[0]["x"], "NEW", "{reports:?}");
    assert_eq!(reports[0]["i"], placed["orderId"]);
    let traded: f64 = reports
        .iter()
        .filter(|r| r["x"] == "TRADE")
        .map(|r| r["l"].as_str().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!((traded - 0.001).abs() < 1e-12, "{reports:?}");
    assert_eq!(
        reports.iter().filter(|r| r["x"] == "TRADE").count(),
        placed["fills"].as_array().unwrap().len()
    );
    simulator.stop();
}
