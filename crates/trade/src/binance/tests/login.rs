//! Logging on, subscribing, reconciling, and the signatures.

use base64::Engine as _;

use super::wire::{Auth, Params};
use super::*;

#[test]
fn logon_is_signed_over_the_sorted_parameters_with_the_ed25519_key() {
    let (c, public) = ed25519();
    let mut s = BinanceSession::new(config(), c).unwrap();
    let mut out = Out::new(4096, 8);
    s.on_open(now(), &mut out);
    assert_eq!(s.state(), State::LoggingIn);
    let m = sent(&out);
    assert_eq!(m.len(), 1);
    let sig = signature(&m[0]);
    assert_eq!(
        m[0],
        format!(
            r#"{{"id":1,"method":"session.logon","params":{{"apiKey":"KEY","timestamp":{T0},"signature":"{sig}"}}}}"#
        )
    );
    let payload = format!("apiKey=KEY&timestamp={T0}");
    let sig = base64::engine::general_purpose::STANDARD
        .decode(sig)
        .unwrap();
    ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, &public)
        .verify(payload.as_bytes(), &sig)
        .expect("the signature verifies over exactly the sorted payload");

    // Logged on: the user data stream on this connection, then the open
    // orders, symbol by symbol (2 × weight 6 < 80), with `timestamp` only.
    let (_, m) = feed(
        &mut s,
        r#"{"id":1,"status":200,"result":{"apiKey":"KEY","authorizedSince":1649729878532,"connectedSince":1649729873021,"returnRateLimits":false,"serverTime":1649729878630,"userDataStream":false}}"#,
    );
    assert_eq!(m, [r#"{"id":2,"method":"userDataStream.subscribe"}"#]);
    let (_, m) = feed(
        &mut s,
        r#"{"id":2,"status":200,"result":{"subscriptionId":0}}"#,
    );
    assert_eq!(s.subscription(), Some(0));
    assert_eq!(
        m,
        [
            format!(
                r#"{{"id":3,"method":"openOrders.status","params":{{"symbol":"BTCUSDT","timestamp":{T0}}}}}"#
            ),
            format!(
                r#"{{"id":4,"method":"openOrders.status","params":{{"symbol":"ETHBTC","timestamp":{T0}}}}}"#
            ),
        ]
    );
    assert_eq!(s.state(), State::Reconciling);
}

#[test]
fn a_refused_logon_is_refused_for_good() {
    let (c, _) = ed25519();
    let mut s = BinanceSession::new(config(), c).unwrap();
    let mut out = Out::new(4096, 8);
    s.on_open(now(), &mut out);
    let (events, m) = feed(
        &mut s,
        r#"{"id":1,"status":401,"error":{"code":-1022,"msg":"Signature for this request is not valid."}}"#,
    );
    assert!(events.is_empty() && m.is_empty());
    assert_eq!(s.state(), State::Refused { code: -1022 });
    s.on_close(now());
    let mut out = Out::new(4096, 8);
    s.on_open(now(), &mut out);
    assert!(out.is_empty(), "not retried after a reconnect");
    assert_eq!(s.state(), State::Refused { code: -1022 });
    let place = Request::Place {
        cid: ClientOrderId(1),
        order: limit(Side::Bid, 1, 1),
    };
    assert_eq!(s.submit(&place, now(), &mut out), Err(Reject::NotReady));
}

#[test]
fn an_order_found_open_is_kept_and_not_placed_again_and_nothing_goes_before_ready() {
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
    let place = |cid| Request::Place {
        cid: ClientOrderId(cid),
        order: limit(Side::Ask, 2_341_610, 847),
    };
    let mut out = Out::new(4096, 8);
    assert_eq!(s.submit(&place(9), now(), &mut out), Err(Reject::NotReady));
    // The docs' example open order, under this session's prefix, and one
    // of another bot's.
    let (events, _) = feed(
        &mut s,
        r#"{"id":3,"status":200,"result":[{"symbol":"BTCUSDT","orderId":12569099453,"orderListId":-1,"clientOrderId":"tw-7","price":"23416.10000000","origQty":"0.00847000","executedQty":"0.00720000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"172.43931000","status":"PARTIALLY_FILLED","timeInForce":"GTC","type":"LIMIT","side":"SELL","stopPrice":"0.00000000","icebergQty":"0.00000000","time":1660801715639,"updateTime":1660801717945,"isWorking":true,"workingTime":1660801715639,"origQuoteOrderQty":"0.00000000","selfTradePreventionMode":"NONE"},{"symbol":"BTCUSDT","orderId":5,"orderListId":-1,"clientOrderId":"4d96324ff9d44481926157","price":"1.00","origQty":"1.00000000","executedQty":"0.00000000","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY"}],"rateLimits":[{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000,"count":6}]}"#,
    );
    assert_eq!(
        events,
        [event(
            7,
            "12569099453",
            OrderKind::Accepted {
                side: Side::Ask,
                price: 2_341_610,
                size: 127
            },
            1660801717945,
            0
        )]
    );
    assert_eq!(s.state(), State::Reconciling, "ETHBTC not answered yet");
    assert_eq!(s.submit(&place(9), now(), &mut out), Err(Reject::NotReady));
    feed(&mut s, r#"{"id":4,"status":200,"result":[]}"#);
    assert_eq!(s.state(), State::Ready);
    let o = s.open_orders().get(ClientOrderId(7)).unwrap();
    assert_eq!((o.filled, o.leaves, o.price), (720, 127, 2_341_610));
    assert_eq!(s.open_orders().len(), 1);
    assert_eq!(s.submit(&place(7), now(), &mut out), Err(Reject::Duplicate));
    assert!(out.is_empty());
    assert_eq!(s.submit(&place(9), now(), &mut out), Ok(()));
}

#[test]
fn hmac_signatures_match_the_docs_example() {
    // `web-socket-api.md`, "SIGNED request example (HMAC)": the example
    // key, parameters, payload and signature.
    let c = Credentials::hmac(
        "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A",
        b"NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j",
    );
    let mut out = Out::new(4096, 4);
    out.message(|m| {
        let auth = Auth::Hmac(&c);
        let mut p = Params::open(m, 1, "order.place", auth)?;
        p.text("price", "52000.00")?;
        p.text("quantity", "0.01000000")?;
        p.number("recvWindow", 100)?;
        p.text("side", "SELL")?;
        p.text("symbol", "BTCUSDT")?;
        p.text("timeInForce", "GTC")?;
        p.number("timestamp", 1645423376532)?;
        p.text("type", "LIMIT")?;
        assert_eq!(
            core::str::from_utf8(p.payload()).unwrap(),
            "apiKey=vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A&price=52000.00&quantity=0.01000000&recvWindow=100&side=SELL&symbol=BTCUSDT&timeInForce=GTC&timestamp=1645423376532&type=LIMIT"
        );
        p.close(auth)
    })
    .unwrap();
    let m = sent(&out);
    assert_eq!(
        signature(&m[0]),
        "aa1b5712c094bc4e57c05a1a5c1fd8d88dcd628338ea863fec7b88e59fe2db24"
    );

    // An HMAC session cannot log on: it subscribes by signature and signs
    // every request.
    let mut s = BinanceSession::new(config(), Credentials::hmac("K", b"secret")).unwrap();
    let mut out = Out::new(4096, 8);
    s.on_open(now(), &mut out);
    let m = sent(&out);
    let mut hex = [0u8; 64];
    let expect = Credentials::hmac("K", b"secret")
        .hmac_hex(&[format!("apiKey=K&timestamp={T0}").as_bytes()], &mut hex)
        .unwrap()
        .to_owned();
    assert_eq!(
        m,
        [format!(
            r#"{{"id":1,"method":"userDataStream.subscribe.signature","params":{{"apiKey":"K","timestamp":{T0},"signature":"{expect}"}}}}"#
        )]
    );
    let (_, m) = feed(
        &mut s,
        r#"{"id":1,"status":200,"result":{"subscriptionId":3}}"#,
    );
    assert_eq!(s.subscription(), Some(3));
    let mut hex = [0u8; 64];
    let expect = Credentials::hmac("K", b"secret")
        .hmac_hex(
            &[format!("apiKey=K&symbol=BTCUSDT&timestamp={T0}").as_bytes()],
            &mut hex,
        )
        .unwrap()
        .to_owned();
    assert_eq!(
        m[0],
        format!(
            r#"{{"id":2,"method":"openOrders.status","params":{{"apiKey":"K","symbol":"BTCUSDT","timestamp":{T0},"signature":"{expect}"}}}}"#
        )
    );
    // A refused key on the signature subscription: refused for good.
    let mut s = BinanceSession::new(config(), Credentials::hmac("K", b"secret")).unwrap();
    let mut out = Out::new(4096, 8);
    s.on_open(now(), &mut out);
    feed(
        &mut s,
        r#"{"id":1,"status":401,"error":{"code":-2015,"msg":"Invalid API-key, IP, or permissions for action."}}"#,
    );
    assert_eq!(s.state(), State::Refused { code: -2015 });
}

#[test]
fn a_prefix_the_venues_ids_cannot_carry_is_refused_at_setup() {
    let made = |prefix: &str, instruments: Vec<InstrumentSpec>| {
        let config = SessionConfig {
            prefix: prefix.into(),
            instruments,
            ..config()
        };
        BinanceSession::new(config, Credentials::hmac("K", b"s")).err()
    };
    assert_eq!(made("", config().instruments), Some(SetupError::Prefix));
    assert_eq!(made("tw_1", config().instruments), Some(SetupError::Prefix));
    assert_eq!(
        made("abcdefghijklm", config().instruments),
        Some(SetupError::Prefix)
    );
    assert_eq!(made("tw", vec![]), Some(SetupError::NoInstruments));
    assert_eq!(made("abcdefghijkl", config().instruments), None);
}

#[test]
fn a_set_up_step_that_finds_no_room_is_written_from_the_next_timer() {
    let (c, _) = ed25519();
    let mut s = BinanceSession::new(config(), c).unwrap();
    let mut small = Out::new(16, 4);
    s.on_open(now(), &mut small);
    assert!(small.is_empty());
    assert_eq!(s.state(), State::LoggingIn);
    let mut out = Out::new(4096, 8);
    s.on_timer(now(), &mut out);
    assert_eq!(sent(&out).len(), 1);
    assert!(sent(&out)[0].contains("session.logon"));
    // The unsent request's id is not used again: the logon is id 2.
    feed(
        &mut s,
        r#"{"id":2,"status":200,"result":{"apiKey":"KEY","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}}"#,
    );
    // Room for the first open-orders request only.
    let text = r#"{"id":3,"status":200,"result":{"subscriptionId":0}}"#;
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, 0);
    let mut one = Out::new(4096, 1);
    s.on_text(&mut buf, text.len(), now(), &mut one, &mut Vec::new());
    assert_eq!(
        sent(&one),
        [format!(
            r#"{{"id":4,"method":"openOrders.status","params":{{"symbol":"BTCUSDT","timestamp":{T0}}}}}"#
        )]
    );
    feed(&mut s, r#"{"id":4,"status":200,"result":[]}"#);
    assert_eq!(s.state(), State::Reconciling, "ETHBTC's not asked yet");
    let mut out = Out::new(4096, 8);
    s.on_timer(now(), &mut out);
    assert_eq!(
        sent(&out),
        [format!(
            r#"{{"id":6,"method":"openOrders.status","params":{{"symbol":"ETHBTC","timestamp":{T0}}}}}"#
        )]
    );
    feed(&mut s, r#"{"id":6,"status":200,"result":[]}"#);
    assert_eq!(s.state(), State::Ready);
}
