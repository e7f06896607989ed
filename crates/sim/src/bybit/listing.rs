//! Bybit's instrument list: `GET /v5/market/instruments-info` ("Get
//! Instruments Info", v5 "Market" docs).
//!
//! - `category` (`spot`, `linear`, `inverse`, `option`) is required;
//!   `symbol` (upper case) narrows it. The answer is
//!   `{"retCode":0,"retMsg":"OK","result":{"category":..,"list":[..],
//!   "nextPageCursor":""},"retExtInfo":{},"time":..}`; each instrument has
//!   `symbol`, `status` (`Trading`), `baseCoin`, `quoteCoin`,
//!   `priceFilter.tickSize`, and `lotSizeFilter`: spot's
//!   `basePrecision` and `minOrderQty`, the contracts' `qtyStep` and
//!   `minOrderQty`; contracts add `contractType` (`LinearPerpetual`,
//!   `InversePerpetual`), `settleCoin` and `priceScale`.
//! - A symbol Bybit does not list is not an error: `retCode` 0 and an
//!   empty `list` (pybit issue 294, 2025: `BTC/USDT` answered so). A
//!   simulator serves one category: another valid one lists nothing.
//! - No or an unknown `category`: `retCode` 10001 with "params error:
//!   Category is invalid" (10001 is "Request parameter error", v5 "Error
//!   Codes"; the words are unconfirmed), HTTP 200 as Bybit answers its
//!   business errors.

use serde_json::{Value, json};
use tickwire_venues::Venue;

use crate::catalogue::{Contract, Listing};
use crate::market::{Digits, decimal};
use crate::protocol::{Market, Response, query};
use crate::time::now_ms;

/// The list's path.
pub(super) const PATH: &str = "/v5/market/instruments-info";

fn number(n: i64, scale: u8) -> String {
    let mut s = String::new();
    decimal(&mut s, n, scale, Digits::Fixed(scale));
    s
}

/// The answer to `GET path` (query included) from a simulator of `venue`.
pub(super) fn instruments(venue: Venue, path: &str, market: &Market) -> Response {
    let served = match venue {
        Venue::BybitSpot => "spot",
        Venue::BybitInverse => "inverse",
        _ => "linear",
    };
    let category = query(path, "category").unwrap_or_default();
    if !["spot", "linear", "inverse", "option"].contains(&category) {
        let body = json!({
            "retCode": 10001,
            "retMsg": "params error: Category is invalid",
            "result": {},
            "retExtInfo": {},
            "time": now_ms(),
        });
        return Response::json(200, body.to_string());
    }
    let list: Vec<Value> = market
        .instruments
        .iter()
        .filter(|_| category == served)
        .filter(|i| query(path, "symbol").is_none_or(|s| s == i.symbol))
        .map(|i| instrument(&Listing::of(venue, i)))
        .collect();
    let body = json!({
        "retCode": 0,
        "retMsg": "OK",
        "result": {"category": category, "list": list, "nextPageCursor": ""},
        "retExtInfo": {},
        "time": now_ms(),
    });
    Response::json(200, body.to_string())
}

fn instrument(l: &Listing) -> Value {
    let i = &l.instrument;
    let tick = number(1, i.price_scale);
    let step = number(1, i.size_scale);
    let min = number(l.min_size, i.size_scale);
    match l.contract {
        Contract::Spot => json!({
            "symbol": i.symbol,
            "baseCoin": l.base,
            "quoteCoin": l.quote,
            "innovation": "0",
            "status": "Trading",
            "marginTrading": "none",
            "lotSizeFilter": {
                "basePrecision": step,
                "quotePrecision": "0.00000001",
                "minOrderQty": min,
                "maxOrderQty": "9000",
                "minOrderAmt": "1",
                "maxOrderAmt": "2000000",
            },
            "priceFilter": {"tickSize": tick},
        }),
        contract => {
            let (kind, settle) = match contract {
                Contract::Inverse { .. } => ("InversePerpetual", l.base.as_str()),
                _ => ("LinearPerpetual", l.quote.as_str()),
            };
            json!({
                "symbol": i.symbol,
                "contractType": kind,
                "status": "Trading",
                "baseCoin": l.base,
                "quoteCoin": l.quote,
                "settleCoin": settle,
                "launchTime": "1584230400000",
                "deliveryTime": "0",
                "priceScale": i.price_scale.to_string(),
                "priceFilter": {
                    "minPrice": tick,
                    "maxPrice": "1999999.00",
                    "tickSize": tick,
                },
                "lotSizeFilter": {
                    "maxOrderQty": "9000",
                    "minOrderQty": min,
                    "qtyStep": step,
                },
                "fundingInterval": 480,
            })
        }
    }
}
