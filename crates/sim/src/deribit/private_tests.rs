//! Deribit's private API driven through the protocol, as a client's
//! requests reach it: logging in (and being refused), orders placed,
//! filled and cancelled with their answers and notifications, the open
//! orders a reconnecting client reconciles against, the order credits,
//! and cancel-on-disconnect.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use ring::hmac;
use serde_json::{Value, json};
use tickwire_venues::Venue;

use super::*;
use crate::exchange::SimKey;
use crate::testutil;

/// A throw-away secret, made for the test.
fn secret(rng: &mut StdRng) -> String {
    (0..32)
        .map(|_| char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.random_range(0..36)]))
        .collect()
}

/// Two accounts' keys (`alice`, `bob`), their secrets, and a market that
/// knows them.
struct World {
    d: Deribit,
    m: Market,
    secrets: [String; 2],
}

fn world(config: DeribitPrivate) -> World {
    let mut rng = StdRng::seed_from_u64(30);
    let secrets = [secret(&mut rng), secret(&mut rng)];
    let keys = vec![
        SimKey::hmac("alice", secrets[0].clone()),
        SimKey::hmac("bob", secrets[1].clone()),
    ];
    World {
        d: Deribit::with(config),
        m: testutil::market(Venue::Deribit, 7).with_keys(keys, 1),
        secrets,
    }
}

fn client(w: &World) -> Client {
    let Ok(c) = w.d.open("/ws/api/v2", &w.m) else {
        panic!("/ws/api/v2 refused")
    };
    c
}

/// Sends a request (`method`, `params`, id 1): what came back, parsed.
fn ask(w: &mut World, c: &mut Client, method: &str, params: Value) -> Vec<Value> {
    let text = json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string();
    let mut out = Out::default();
    w.d.on_text(c, &text, &mut w.m, &mut out);
    out.items
        .iter()
        .map(|(t, _)| serde_json::from_str(t.text()).unwrap_or_else(|e| panic!("{e}: {t:?}")))
        .collect()
}

/// The one reply to a request.
fn reply(w: &mut World, c: &mut Client, method: &str, params: Value) -> Value {
    let got = ask(w, c, method, params);
    assert_eq!(got.len(), 1, "{got:?}");
    got.into_iter().next().unwrap()
}

/// A reply's `result`, which it must have.
fn result(w: &mut World, c: &mut Client, method: &str, params: Value) -> Value {
    let r = reply(w, c, method, params);
    assert!(r.get("error").is_none(), "{method}: {r}");
    r["result"].clone()
}

/// A reply's error code and message, which it must have.
fn error(w: &mut World, c: &mut Client, method: &str, params: Value) -> (i64, String) {
    let r = reply(w, c, method, params);
    let e = &r["error"];
    assert!(e.is_object(), "{method}: {r}");
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_owned(),
    )
}

/// Logs in with `client_credentials` as account `k` (0 alice, 1 bob).
fn login(w: &mut World, c: &mut Client, k: usize) -> Value {
    let id = ["alice", "bob"][k];
    let params = json!({
        "grant_type": "client_credentials",
        "client_id": id,
        "client_secret": w.secrets[k],
    });
    result(w, c, "public/auth", params)
}

/// The engine's changes since the last call, handed to every client:
/// each one's notifications.
fn deliver(w: &mut World, clients: &mut [&mut Client]) -> Vec<Vec<Value>> {
    let (_, events) = w.m.take_engine();
    clients
        .iter_mut()
        .map(|c| {
            let mut out = Out::default();
            w.d.on_private(c, &events, &w.m, &mut out);
            out.items
                .iter()
                .map(|(t, _)| serde_json::from_str(t.text()).unwrap())
                .collect()
        })
        .collect()
}

/// HMAC-SHA256 of `text` under `secret`, in hex.
fn sign(secret: &str, text: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    hmac::sign(&key, text.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// BTC-PERPETUAL's mid price as Deribit writes it: the simulated book
/// starts with nothing there (bids below, asks above).
fn mid(w: &World) -> f64 {
    w.m.instruments[0].mid as f64 / 10.0
}

#[test]
fn client_credentials_log_in_and_wrong_ones_are_refused_with_13004() {
    let mut w = world(DeribitPrivate::default());
    let mut c = client(&w);
    let secret = w.secrets[0].clone();
    let bad = |id: &str, secret: &str| json!({"grant_type":"client_credentials","client_id":id,"client_secret":secret});
    let (code, message) = error(&mut w, &mut c, "public/auth", bad("alice", "wrong"));
    assert_eq!((code, message.as_str()), (13004, "invalid_credentials"));
    // Bob's secret is not Alice's; an unknown key is refused alike.
    let bobs = w.secrets[1].clone();
    assert_eq!(
        error(&mut w, &mut c, "public/auth", bad("alice", &bobs)).0,
        13004
    );
    assert_eq!(
        error(&mut w, &mut c, "public/auth", bad("carol", &secret)).0,
        13004
    );
    // A missing secret: -32602 naming it.
    let r = reply(
        &mut w,
        &mut c,
        "public/auth",
        json!({"grant_type":"client_credentials","client_id":"alice"}),
    );
    assert_eq!(
        r["error"],
        json!({"code":-32602,"message":"Invalid params","data":{"reason":"value required","param":"client_secret"}})
    );
    // Still not logged in.
    let (code, _) = error(
        &mut w,
        &mut c,
        "private/get_open_orders_by_instrument",
        json!({"instrument_name":"BTC-PERPETUAL"}),
    );
    assert_eq!(code, 13009);

    let r = reply(&mut w, &mut c, "public/auth", bad("alice", &secret));
    let got = &r["result"];
    assert_eq!(r["id"], json!(1));
    assert_eq!(got["token_type"], json!("bearer"));
    assert_eq!(got["expires_in"], json!(900));
    assert!(
        got["scope"].as_str().unwrap().contains("connection"),
        "{got}"
    );
    let (access, refresh) = (
        got["access_token"].as_str().unwrap(),
        got["refresh_token"].as_str().unwrap(),
    );
    assert_ne!(access, refresh);
    assert!(access.len() > 40, "{access}");
    // The secret is nowhere in the answer.
    assert!(!r.to_string().contains(&secret));
}

#[test]
fn client_signature_is_checked_and_a_stale_timestamp_refused() {
    let mut w = world(DeribitPrivate::default());
    let mut c = client(&w);
    let secret = w.secrets[0].clone();
    let now = now_ms();
    let signed = |ts: u64, nonce: &str, data: &str, secret: &str| {
        json!({
            "grant_type": "client_signature",
            "client_id": "alice",
            "timestamp": ts,
            "nonce": nonce,
            "data": data,
            "signature": sign(secret, &format!("{ts}\n{nonce}\n{data}")),
        })
    };
    // Signed with another secret, or over other fields than sent.
    let (code, message) = error(
        &mut w,
        &mut c,
        "public/auth",
        signed(now, "n1", "", "not-the-secret"),
    );
    assert_eq!((code, message.as_str()), (13004, "invalid_credentials"));
    let mut tampered = signed(now, "n1", "", &secret);
    tampered["data"] = json!("x");
    assert_eq!(error(&mut w, &mut c, "public/auth", tampered).0, 13004);
    // "Valid for 60 seconds since generation".
    let stale = signed(now - 61_000, "n2", "", &secret);
    assert_eq!(error(&mut w, &mut c, "public/auth", stale).0, 13004);
    assert_eq!(
        error(&mut w, &mut c, "private/get_open_orders", json!({})).0,
        13009
    );
    // Right: logged in (a timestamp 50 s old still is; the signature's
    // hex in upper case too).
    let mut ok = signed(now - 50_000, "n3", "some data", &secret);
    ok["signature"] = json!(ok["signature"].as_str().unwrap().to_ascii_uppercase());
    let got = result(&mut w, &mut c, "public/auth", ok);
    assert_eq!(got["token_type"], json!("bearer"));
    assert_eq!(
        result(&mut w, &mut c, "private/get_open_orders", json!({})),
        json!([])
    );
}

#[test]
fn private_methods_need_a_live_token_and_refresh_gives_a_new_one() {
    // Tokens that expire at once: the login authorises nothing.
    let mut w = world(DeribitPrivate {
        token_lifetime: Duration::ZERO,
        ..DeribitPrivate::default()
    });
    let mut c = client(&w);
    let buy = json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":mid(&w)});
    let (code, message) = error(&mut w, &mut c, "private/buy", buy.clone());
    assert_eq!((code, message.as_str()), (13009, "unauthorized"));
    assert_eq!(
        error(
            &mut w,
            &mut c,
            "private/subscribe",
            json!({"channels":["user.orders.BTC-PERPETUAL.raw"]})
        )
        .0,
        13009
    );
    let first = login(&mut w, &mut c, 0);
    assert_eq!(first["expires_in"], json!(1), "shown as at least a second");
    assert_eq!(
        error(&mut w, &mut c, "private/buy", buy.clone()).0,
        13009,
        "expired"
    );
    // Refreshed, asking for an hour: a new pair.
    let refresh = first["refresh_token"].as_str().unwrap().to_owned();
    let second = result(
        &mut w,
        &mut c,
        "public/auth",
        json!({"grant_type":"refresh_token","refresh_token":refresh,"scope":"expires:3600"}),
    );
    assert_eq!(second["expires_in"], json!(3600));
    assert_ne!(second["access_token"], first["access_token"]);
    let placed = result(&mut w, &mut c, "private/buy", buy.clone());
    assert_eq!(placed["order"]["order_state"], json!("open"));
    // The old refresh token is spent; a token other than the current one
    // is refused.
    let again = json!({"grant_type":"refresh_token","refresh_token":refresh});
    assert_eq!(error(&mut w, &mut c, "public/auth", again).0, 13004);
    let mut stale = buy.clone();
    stale["access_token"] = first["access_token"].clone();
    assert_eq!(error(&mut w, &mut c, "private/buy", stale).0, 13009);
    let mut current = buy;
    current["access_token"] = second["access_token"].clone();
    assert!(result(&mut w, &mut c, "private/buy", current)["order"].is_object());
    // A token is the connection's: another connection cannot refresh it.
    let mut other = client(&w);
    let theirs = json!({"grant_type":"refresh_token","refresh_token":second["refresh_token"]});
    assert_eq!(error(&mut w, &mut other, "public/auth", theirs).0, 13004);
}

#[test]
fn raw_channels_open_after_login() {
    let mut w = world(DeribitPrivate::default());
    let mut c = client(&w);
    let raw = json!({"channels":["book.BTC-PERPETUAL.raw"]});
    assert_eq!(
        error(&mut w, &mut c, "public/subscribe", raw.clone()).0,
        13778
    );
    login(&mut w, &mut c, 0);
    let got = ask(&mut w, &mut c, "public/subscribe", raw);
    assert_eq!(got[0]["result"], json!(["book.BTC-PERPETUAL.raw"]));
    assert_eq!(got[1]["params"]["data"]["type"], json!("snapshot"));
}

#[test]
fn an_order_rests_fills_and_is_told_on_both_sides() {
    let mut w = world(DeribitPrivate::default());
    let (mut alice, mut bob) = (client(&w), client(&w));
    login(&mut w, &mut alice, 0);
    login(&mut w, &mut bob, 1);
    let subscribed = result(
        &mut w,
        &mut alice,
        "private/subscribe",
        json!({"channels":["user.orders.BTC-PERPETUAL.raw","user.trades.BTC-PERPETUAL.raw","user.orders.NOPE.raw","trades.BTC-PERPETUAL.100ms"]}),
    );
    assert_eq!(
        subscribed,
        json!([
            "user.orders.BTC-PERPETUAL.raw",
            "user.trades.BTC-PERPETUAL.raw",
            "trades.BTC-PERPETUAL.100ms"
        ])
    );
    result(
        &mut w,
        &mut bob,
        "private/subscribe",
        // The kind and currency form, as ccxt's `watch_my_trades` asks.
        json!({"channels":["user.trades.any.BTC.raw","user.trades.option.ETH.raw"]}),
    );
    let px = mid(&w);
    // Alice bids 20 USD inside the spread: it rests.
    let placed = result(
        &mut w,
        &mut alice,
        "private/buy",
        json!({"instrument_name":"BTC-PERPETUAL","amount":20,"type":"limit","price":px,"label":"q-1"}),
    );
    let order = &placed["order"];
    assert_eq!(placed["trades"], json!([]));
    let id = order["order_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("BTC-"), "{id}");
    for (k, v) in [
        ("order_state", json!("open")),
        ("order_type", json!("limit")),
        ("direction", json!("buy")),
        ("amount", json!(20.0)),
        ("contracts", json!(2.0)),
        ("filled_amount", json!(0.0)),
        ("price", json!(px)),
        ("label", json!("q-1")),
        ("time_in_force", json!("good_til_cancelled")),
        ("post_only", json!(false)),
        ("instrument_name", json!("BTC-PERPETUAL")),
        ("average_price", json!(0.0)),
    ] {
        assert_eq!(order[k], v, "{k}: {order}");
    }
    assert!(order["creation_timestamp"].as_u64().unwrap() > 1_600_000_000_000);
    let told = deliver(&mut w, &mut [&mut alice, &mut bob]);
    assert_eq!(told[0].len(), 1, "{:?}", told[0]);
    assert_eq!(told[0][0]["method"], json!("subscription"));
    assert_eq!(
        told[0][0]["params"]["channel"],
        json!("user.orders.BTC-PERPETUAL.raw")
    );
    assert_eq!(
        told[0][0]["params"]["data"]["order_id"],
        json!(id),
        "one object, raw"
    );
    assert!(told[1].is_empty(), "not Bob's order");

    // Bob sells 10 at her price: he takes half of it.
    let sold = result(
        &mut w,
        &mut bob,
        "private/sell",
        json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":px,"time_in_force":"immediate_or_cancel"}),
    );
    assert_eq!(sold["order"]["order_state"], json!("filled"), "{sold}");
    let trades = sold["trades"].as_array().unwrap();
    assert_eq!(trades.len(), 1, "{sold}");
    let t = &trades[0];
    assert_eq!(
        (
            t["liquidity"].clone(),
            t["direction"].clone(),
            t["amount"].clone(),
            t["price"].clone()
        ),
        (json!("T"), json!("sell"), json!(10.0), json!(px))
    );
    assert_eq!(t["order_id"], sold["order"]["order_id"]);
    assert!(
        t["trade_id"].is_string() && t["fee"].as_f64().unwrap() > 0.0,
        "{t}"
    );
    assert_eq!(t["fee_currency"], json!("BTC"));
    let told = deliver(&mut w, &mut [&mut alice, &mut bob]);
    let channels: Vec<&str> = told[0]
        .iter()
        .map(|n| n["params"]["channel"].as_str().unwrap())
        .collect();
    assert!(
        channels.contains(&"user.trades.BTC-PERPETUAL.raw"),
        "{channels:?}"
    );
    let fill = told[0]
        .iter()
        .find(|n| n["params"]["channel"] == json!("user.trades.BTC-PERPETUAL.raw"))
        .unwrap();
    let fill = &fill["params"]["data"][0];
    assert_eq!(
        (
            fill["liquidity"].clone(),
            fill["order_id"].clone(),
            fill["amount"].clone(),
            fill["label"].clone()
        ),
        (json!("M"), json!(id), json!(10.0), json!("q-1"))
    );
    assert_eq!(
        fill["trade_id"], t["trade_id"],
        "the same trade on both sides"
    );
    let update = told[0]
        .iter()
        .rev()
        .find(|n| n["params"]["channel"] == json!("user.orders.BTC-PERPETUAL.raw"))
        .unwrap();
    assert_eq!(update["params"]["data"]["filled_amount"], json!(10.0));
    assert_eq!(update["params"]["data"]["order_state"], json!("open"));
    assert_eq!(update["params"]["data"]["average_price"], json!(px));
    assert!(
        told[1]
            .iter()
            .any(|n| n["params"]["data"][0]["liquidity"] == json!("T")),
        "{:?}",
        told[1]
    );

    // Reconciliation data: what is still working, as the client placed it.
    let open = result(
        &mut w,
        &mut alice,
        "private/get_open_orders_by_instrument",
        json!({"instrument_name":"BTC-PERPETUAL"}),
    );
    assert_eq!(open.as_array().unwrap().len(), 1);
    assert_eq!(
        (
            open[0]["order_id"].clone(),
            open[0]["filled_amount"].clone(),
            open[0]["label"].clone()
        ),
        (json!(id), json!(10.0), json!("q-1"))
    );
    assert_eq!(
        result(
            &mut w,
            &mut bob,
            "private/get_open_orders_by_instrument",
            json!({"instrument_name":"BTC-PERPETUAL"})
        ),
        json!([])
    );
    assert_eq!(
        result(
            &mut w,
            &mut alice,
            "private/get_open_orders_by_instrument",
            json!({"instrument_name":"ETH-PERPETUAL"})
        ),
        json!([])
    );

    // Cancelled: told, then gone; a second cancel is refused.
    let cancelled = result(&mut w, &mut alice, "private/cancel", json!({"order_id":id}));
    assert_eq!(
        (
            cancelled["order_state"].clone(),
            cancelled["cancel_reason"].clone()
        ),
        (json!("cancelled"), json!("user_request"))
    );
    let told = deliver(&mut w, &mut [&mut alice]);
    assert_eq!(
        told[0].last().unwrap()["params"]["data"]["order_state"],
        json!("cancelled")
    );
    assert_eq!(
        error(&mut w, &mut alice, "private/cancel", json!({"order_id":id})),
        (11044, "not_open_order".into())
    );
    assert_eq!(
        error(
            &mut w,
            &mut alice,
            "private/cancel",
            json!({"order_id":"BTC-999999"})
        )
        .0,
        10004
    );
    assert!(w.m.open_orders(0, None).next().is_none());
}

#[test]
fn amounts_prices_and_flags_are_checked_as_deribit_does() {
    let mut w = world(DeribitPrivate::default());
    let mut c = client(&w);
    login(&mut w, &mut c, 0);
    let px = mid(&w);
    let buy = |amount: Value, price: Value| json!({"instrument_name":"BTC-PERPETUAL","amount":amount,"price":price});
    // BTC-PERPETUAL trades in 10 USD.
    assert_eq!(
        error(&mut w, &mut c, "private/buy", buy(json!(15), json!(px))),
        (10027, "non_integer_contract_amount".into())
    );
    assert_eq!(
        error(&mut w, &mut c, "private/buy", buy(json!(0), json!(px))).0,
        10021
    );
    assert_eq!(
        error(
            &mut w,
            &mut c,
            "private/buy",
            buy(json!(10), json!(px + 0.05))
        )
        .0,
        10043
    );
    assert_eq!(
        error(&mut w, &mut c, "private/buy", buy(json!(10), json!(-1))).0,
        10023
    );
    let r = reply(
        &mut w,
        &mut c,
        "private/buy",
        json!({"instrument_name":"NOPE","amount":10,"price":px}),
    );
    assert_eq!(r["error"]["code"], json!(-32602));
    // `contracts` instead of `amount`: two are 20 USD.
    let placed = result(
        &mut w,
        &mut c,
        "private/buy",
        json!({"instrument_name":"BTC-PERPETUAL","contracts":2,"price":px}),
    );
    assert_eq!(placed["order"]["amount"], json!(20.0));
    assert_eq!(
        error(
            &mut w,
            &mut c,
            "private/buy",
            json!({"instrument_name":"BTC-PERPETUAL","contracts":2,"amount":10,"price":px})
        )
        .0,
        -32602
    );
    // Post-only: on an IOC order not allowed; crossing, moved just inside
    // the spread, or refused with `reject_post_only`.
    let ask_px = w.m.books[0].top().1.0 as f64 / 10.0;
    assert_eq!(error(&mut w, &mut c, "private/buy", json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":ask_px,"post_only":true,"time_in_force":"immediate_or_cancel"})).0, 11055);
    assert_eq!(
        error(
            &mut w,
            &mut c,
            "private/buy",
            json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":ask_px,"post_only":true,"reject_post_only":true})
        ),
        (11054, "post_only_reject".into())
    );
    let moved = result(
        &mut w,
        &mut c,
        "private/buy",
        json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":ask_px + 5.0,"post_only":true}),
    );
    assert_eq!(moved["order"]["price"], json!(ask_px - 0.1), "{moved}");
    assert_eq!(moved["trades"], json!([]));
    // Edit: a new price and amount, `replaced` after.
    let id = placed["order"]["order_id"].clone();
    let edited = result(
        &mut w,
        &mut c,
        "private/edit",
        json!({"order_id":id,"amount":30,"price":px - 1.0}),
    );
    assert_eq!(
        (
            edited["order"]["amount"].clone(),
            edited["order"]["price"].clone(),
            edited["order"]["replaced"].clone()
        ),
        (json!(30.0), json!(px - 1.0), json!(true))
    );
    // Cancel all of one instrument, then all: how many.
    result(
        &mut w,
        &mut c,
        "private/sell",
        json!({"instrument_name":"ETH-PERPETUAL","amount":3,"price":3100.0}),
    );
    assert_eq!(
        result(
            &mut w,
            &mut c,
            "private/cancel_all_by_instrument",
            json!({"instrument_name":"BTC-PERPETUAL"})
        ),
        json!(2)
    );
    assert_eq!(
        result(&mut w, &mut c, "private/cancel_all", json!({})),
        json!(1)
    );
    assert_eq!(
        result(&mut w, &mut c, "private/cancel_all", json!({})),
        json!(0)
    );
    // A market order takes from the book at once.
    let taken = result(
        &mut w,
        &mut c,
        "private/buy",
        json!({"instrument_name":"BTC-PERPETUAL","amount":10,"type":"market"}),
    );
    assert_eq!(taken["order"]["order_type"], json!("market"));
    assert_eq!(taken["order"]["filled_amount"], json!(10.0), "{taken}");
    assert!(!taken["trades"].as_array().unwrap().is_empty());
}

#[test]
fn order_credits_run_out_with_10028_and_the_session_ends() {
    let mut w = world(DeribitPrivate {
        order_credits: OrderCredits {
            cost: 1_000,
            max: 2_000,
            refill: 0,
        },
        ..DeribitPrivate::default()
    });
    let mut c = client(&w);
    login(&mut w, &mut c, 0);
    let px = mid(&w);
    let buy = json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":px});
    result(&mut w, &mut c, "private/buy", buy.clone());
    // Not a matching-engine request: free of them.
    result(&mut w, &mut c, "private/get_open_orders", json!({}));
    result(&mut w, &mut c, "private/cancel_all", json!({}));
    let (code, message) = error(&mut w, &mut c, "private/buy", buy.clone());
    assert_eq!((code, message.as_str()), (10028, "too_many_requests"));
    let mut out = Out::default();
    let tick =
        w.d.on_tick(&mut c, Instant::now(), Duration::ZERO, &mut out);
    assert!(matches!(tick, Tick::Close(..)), "{tick:?}");
    // The credits are the account's: another connection of it has none
    // either; the other account has its own.
    let mut again = client(&w);
    login(&mut w, &mut again, 0);
    assert_eq!(
        error(&mut w, &mut again, "private/buy", buy.clone()).0,
        10028
    );
    let mut bob = client(&w);
    login(&mut w, &mut bob, 1);
    result(&mut w, &mut bob, "private/buy", buy);
}

/// The two limits are apart: matching-engine requests draw on the order
/// credits only, so a connection whose other requests used up their pool
/// (100 at 500 credits) still places and cancels.
#[test]
fn matching_requests_do_not_draw_on_the_other_requests_pool() {
    let mut w = world(DeribitPrivate::default());
    let mut c = client(&w);
    login(&mut w, &mut c, 0);
    // The login took one; 99 more empty the pool (no tick: no refill).
    for _ in 0..99 {
        result(&mut w, &mut c, "private/get_open_orders", json!({}));
    }
    assert_eq!(
        error(&mut w, &mut c, "private/get_open_orders", json!({})).0,
        10028,
        "the other requests' pool is empty"
    );
    let mut w = world(DeribitPrivate::default());
    let mut c = client(&w);
    login(&mut w, &mut c, 0);
    for _ in 0..99 {
        result(&mut w, &mut c, "private/get_open_orders", json!({}));
    }
    let px = mid(&w);
    let buy = json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":px,"label":"a"});
    result(&mut w, &mut c, "private/buy", buy);
    result(&mut w, &mut c, "private/cancel_all", json!({}));
}

#[test]
fn cancel_on_disconnect_cancels_the_connections_orders_only() {
    let mut w = world(DeribitPrivate::default());
    let (mut a, mut b) = (client(&w), client(&w));
    login(&mut w, &mut a, 0);
    login(&mut w, &mut b, 0);
    let px = mid(&w);
    let buy = json!({"instrument_name":"BTC-PERPETUAL","amount":10,"price":px - 3.0});
    assert_eq!(
        result(
            &mut w,
            &mut a,
            "private/get_cancel_on_disconnect",
            json!({})
        ),
        json!({"scope":"connection","enabled":false})
    );
    assert_eq!(
        result(
            &mut w,
            &mut a,
            "private/enable_cancel_on_disconnect",
            json!({})
        ),
        json!("ok")
    );
    assert_eq!(
        result(
            &mut w,
            &mut a,
            "private/get_cancel_on_disconnect",
            json!({"scope":"connection"})
        ),
        json!({"scope":"connection","enabled":true})
    );
    let mine = result(&mut w, &mut a, "private/buy", buy.clone())["order"]["order_id"].clone();
    let theirs = result(&mut w, &mut b, "private/buy", buy.clone())["order"]["order_id"].clone();
    result(
        &mut w,
        &mut b,
        "private/subscribe",
        json!({"channels":["user.orders.BTC-PERPETUAL.100ms"]}),
    );
    deliver(&mut w, &mut [&mut b]);
    w.d.on_gone(&mut a, &mut w.m);
    let open: Vec<u64> = w.m.open_orders(0, None).map(|o| o.id).collect();
    assert_eq!(
        open,
        vec![trading::parse_order_id(theirs.as_str().unwrap()).unwrap()]
    );
    // The other connection of the account is told, its reason given (an
    // array: the 100ms channel).
    let told = deliver(&mut w, &mut [&mut b]);
    let data = &told[0][0]["params"]["data"][0];
    assert_eq!(
        (
            data["order_id"].clone(),
            data["order_state"].clone(),
            data["cancel_reason"].clone()
        ),
        (mine, json!("cancelled"), json!("cancel_on_disconnect"))
    );
    // Without it (the default), or after `private/logout`, nothing is.
    w.d.on_gone(&mut b, &mut w.m);
    assert_eq!(w.m.open_orders(0, None).count(), 1);
    let mut c = client(&w);
    login(&mut w, &mut c, 0);
    result(
        &mut w,
        &mut c,
        "private/enable_cancel_on_disconnect",
        json!({}),
    );
    result(&mut w, &mut c, "private/buy", buy.clone());
    assert!(
        ask(&mut w, &mut c, "private/logout", json!({})).is_empty(),
        "no answer"
    );
    w.d.on_gone(&mut c, &mut w.m);
    assert_eq!(w.m.open_orders(0, None).count(), 2);
    // The account scope: connections logging in afterwards start with it.
    let mut e = client(&w);
    login(&mut w, &mut e, 0);
    result(
        &mut w,
        &mut e,
        "private/enable_cancel_on_disconnect",
        json!({"scope":"account"}),
    );
    assert_eq!(
        result(
            &mut w,
            &mut e,
            "private/get_cancel_on_disconnect",
            json!({})
        ),
        json!({"scope":"connection","enabled":false})
    );
    let mut d = client(&w);
    login(&mut w, &mut d, 0);
    assert_eq!(
        result(
            &mut w,
            &mut d,
            "private/get_cancel_on_disconnect",
            json!({})
        ),
        json!({"scope":"connection","enabled":true})
    );
    result(&mut w, &mut d, "private/buy", buy);
    w.d.on_gone(&mut d, &mut w.m);
    assert_eq!(w.m.open_orders(0, None).count(), 2);
}
