//! The WebSocket API's orders through the protocol (see `tests.rs` for
//! the client the tests drive): placed, listed, cancelled, replaced,
//! filled and refused, with their answers and execution reports.

use serde_json::{Value, json};

use super::WsApiLimits;
use super::tests::{Api, NOW, error};
use crate::market::{Digits, decimal};

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
