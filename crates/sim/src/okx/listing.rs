//! OKX's instrument list: `GET /api/v5/public/instruments` ("Public Data
//! REST API", "Get instruments", API v5 docs).
//!
//! - `instType` is required: `SPOT`, `MARGIN`, `SWAP`, `FUTURES` or
//!   `OPTION`; `instId` narrows it to one. The answer is
//!   `{"code":"0","msg":"","data":[..]}`; each instrument has `instType`,
//!   `instId`, `baseCcy` and `quoteCcy` (spot), `uly`, `instFamily`,
//!   `settleCcy`, `ctVal`, `ctMult`, `ctValCcy`, `ctType` (swaps),
//!   `tickSz`, `lotSz`, `minSz` and `state` (`live`), every number a
//!   string.
//! - Refusals (body `code` and `msg`, "Error Code" table of the v5
//!   docs): no `instType` 50014 "Parameter instType can not be empty.";
//!   another value 51000 "Parameter instType error"; an `instId` not
//!   listed under that type 51001 "Instrument ID, Instrument ID code, or
//!   Spread ID doesn't exist." (the words OKX answers, as an OKX.Net
//!   issue of 2026 quotes them). The HTTP status of these is unconfirmed:
//!   400 here; clients read `code`.
//! - Here only spot pairs (`BTC-USDT`) and swaps (`-SWAP`) are simulated:
//!   `MARGIN`, `FUTURES` and `OPTION` list nothing.

use serde_json::{Value, json};
use tickwire_venues::Venue;

use crate::catalogue::{Contract, Listing};
use crate::market::{Digits, decimal};
use crate::protocol::{Market, Response, query};

/// The list's path.
pub(super) const PATH: &str = "/api/v5/public/instruments";

fn error(code: &str, msg: &str) -> Response {
    Response::json(
        400,
        json!({"code": code, "msg": msg, "data": []}).to_string(),
    )
}

/// `n` units at `scale` decimals, as OKX writes them (`"0.01"`).
fn number(n: i64, scale: u8) -> String {
    let mut s = String::new();
    decimal(&mut s, n, scale, Digits::Trimmed);
    s
}

/// The answer to `GET path` (query included).
pub(super) fn instruments(path: &str, market: &Market) -> Response {
    let Some(kind) = query(path, "instType").filter(|t| !t.is_empty()) else {
        return error("50014", "Parameter instType can not be empty.");
    };
    if !["SPOT", "MARGIN", "SWAP", "FUTURES", "OPTION"].contains(&kind) {
        return error("51000", "Parameter instType error");
    }
    let listed: Vec<Listing> = market
        .instruments
        .iter()
        .map(|i| Listing::of(Venue::Okx, i))
        .filter(|l| inst_type(l) == kind)
        .filter(|l| query(path, "instId").is_none_or(|id| l.instrument.symbol == id))
        .collect();
    if listed.is_empty() && query(path, "instId").is_some() {
        return error(
            "51001",
            "Instrument ID, Instrument ID code, or Spread ID doesn't exist.",
        );
    }
    let data: Vec<Value> = listed.iter().map(instrument).collect();
    Response::json(
        200,
        json!({"code": "0", "msg": "", "data": data}).to_string(),
    )
}

/// `SPOT` or `SWAP`.
fn inst_type(l: &Listing) -> &'static str {
    match l.contract {
        Contract::Spot => "SPOT",
        _ => "SWAP",
    }
}

fn instrument(l: &Listing) -> Value {
    let i = &l.instrument;
    let spot = inst_type(l) == "SPOT";
    let family = format!("{}-{}", l.base, l.quote);
    let (ct_val, ct_type) = match l.contract {
        Contract::Linear { value, value_scale } => (number(value, value_scale), "linear"),
        Contract::Inverse { usd } => (usd.to_string(), "inverse"),
        Contract::Spot => (String::new(), ""),
    };
    json!({
        "instType": inst_type(l),
        "instId": i.symbol,
        "uly": if spot { "" } else { &family },
        "instFamily": if spot { "" } else { &family },
        "baseCcy": if spot { l.base.as_str() } else { "" },
        "quoteCcy": if spot { l.quote.as_str() } else { "" },
        "settleCcy": if spot { "" } else { l.quote.as_str() },
        "ctVal": ct_val,
        "ctMult": if spot { "" } else { "1" },
        "ctValCcy": if spot { "" } else { l.base.as_str() },
        "ctType": ct_type,
        "tickSz": number(1, i.price_scale),
        "lotSz": number(1, i.size_scale),
        "minSz": number(l.min_size, i.size_scale),
        "state": "live",
        "listTime": "1606468572000",
        "expTime": "",
        "lever": if spot { "" } else { "100" },
    })
}
