//! Deribit's private API over the wire: a client logs in with a
//! `client_signature`, enables cancel-on-disconnect, places an order and
//! is told of it on `user.orders`; another connection of the account sees
//! it among the open orders; when the first connection closes, the
//! simulator cancels it (and the order is gone from the simulator too).

use std::time::{Duration, Instant};

use crate::util::wait;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use ring::hmac;
use serde_json::{Value, json};
use tickwire_net::{
    CloseCode, Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect,
    Role, Stamps, TlsConfig,
};
use tickwire_sim::{SimConfig, SimKey, Simulator, Venue};

/// Records every text it is sent.
#[derive(Default)]
struct Client {
    conn: Option<ConnId>,
    texts: Vec<Value>,
}

impl Handler for Client {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        self.conn = Some(conn.id());
    }

    fn on_message(&mut self, _: &mut Conn<'_>, payload: Payload<'_>, _: Stamps) {
        let text = payload.as_str().unwrap_or_default();
        self.texts.push(serde_json::from_str(text).unwrap());
    }

    fn on_close(&mut self, _: ConnId, _: Role, _: &Disconnect) -> Reconnect {
        Reconnect::No
    }
}

fn connect(simulator: &Simulator) -> Driver<Client> {
    let config = Config {
        send_rate: None,
        ping_interval: None,
        ..Config::default()
    };
    let mut driver = Driver::new(config, &TlsConfig::empty(), Client::default()).unwrap();
    let url = format!("ws://{}/ws/api/v2", simulator.addr());
    driver.connect(Endpoint::parse(&url).unwrap()).unwrap();
    wait(&mut driver, "open", |c| c.conn.is_some());
    driver
}

/// Sends request `id` and waits for its answer.
fn call(driver: &mut Driver<Client>, id: u64, method: &str, params: Value) -> Value {
    let conn = driver.handler().conn.unwrap();
    let text = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string();
    driver.send_text(conn, &text).unwrap();
    wait(driver, method, |c| {
        c.texts.iter().any(|t| t["id"] == json!(id))
    });
    let got = driver.handler().texts.iter().find(|t| t["id"] == json!(id));
    let got = got.unwrap().clone();
    assert!(got.get("error").is_none(), "{method}: {got}");
    got["result"].clone()
}

fn login(driver: &mut Driver<Client>, secret: &str) -> Value {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let nonce = "wire-test";
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let tag = hmac::sign(&key, format!("{ts}\n{nonce}\n").as_bytes());
    let signature: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let params = json!({"grant_type":"client_signature","client_id":"k","timestamp":ts,
        "nonce":nonce,"data":"","signature":signature});
    call(driver, 1, "public/auth", params)
}

#[test]
fn an_order_of_a_connection_with_cancel_on_disconnect_is_cancelled_when_it_closes() {
    // A throw-away secret.
    let secret = format!("{:032x}", StdRng::from_os_rng().random::<u128>());
    let simulator = Simulator::start(SimConfig {
        rate: 200,
        keys: vec![SimKey::hmac("k", secret.clone())],
        ..SimConfig::new(Venue::Deribit)
    })
    .unwrap();
    let mut a = connect(&simulator);
    assert_eq!(login(&mut a, &secret)["token_type"], json!("bearer"));
    assert_eq!(
        call(&mut a, 2, "private/enable_cancel_on_disconnect", json!({})),
        json!("ok")
    );
    let channels = json!({"channels":["user.orders.BTC-PERPETUAL.raw"]});
    call(&mut a, 3, "private/subscribe", channels);
    // Far below the book: it rests.
    let buy = json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":50000.0,"label":"w"});
    let placed = call(&mut a, 4, "private/buy", buy);
    let id = placed["order"]["order_id"].clone();
    assert_eq!(placed["order"]["order_state"], json!("open"));
    wait(&mut a, "user.orders", |c| {
        c.texts
            .iter()
            .any(|t| t["params"]["data"]["order_id"] == id)
    });
    assert_eq!(simulator.open_orders().len(), 1);

    let mut b = connect(&simulator);
    login(&mut b, &secret);
    let open = call(
        &mut b,
        2,
        "private/get_open_orders_by_instrument",
        json!({"instrument_name":"BTC-PERPETUAL"}),
    );
    assert_eq!(open[0]["order_id"], id);

    let conn = a.handler().conn.unwrap();
    a.close(conn, CloseCode::NORMAL, "bye").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !simulator.open_orders().is_empty() {
        assert!(Instant::now() < deadline, "not cancelled within 60 s");
        a.poll_timeout(Duration::from_millis(10)).unwrap();
        b.poll_timeout(Duration::from_millis(10)).unwrap();
    }
    let open = call(
        &mut b,
        3,
        "private/get_open_orders_by_instrument",
        json!({"instrument_name":"BTC-PERPETUAL"}),
    );
    assert_eq!(open, json!([]));
}
