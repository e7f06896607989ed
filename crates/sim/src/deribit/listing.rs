//! Deribit's instrument list: `public/get_instruments`, over the JSON-RPC
//! WebSocket and as `GET /api/v2/public/get_instruments?currency=..`
//! (docs.deribit.com "public/get_instruments"; its OpenAPI spec).
//!
//! - `currency` is required: `BTC`, `ETH`, `USDC`, `USDT`, `EURR` or
//!   `any`; it is the instrument's settlement currency (BTC-PERPETUAL is
//!   BTC's, SOL_USDC-PERPETUAL USDC's). `kind` (`future`, `option`,
//!   `spot`, `future_combo`, `option_combo`) narrows it; perpetuals are
//!   futures. `expired=true` lists the recently expired: none here.
//! - The result is an array; each instrument has `instrument_name`,
//!   `kind`, `is_active`, `state` (`open`), `tick_size`,
//!   `tick_size_steps`, `min_trade_amount`, `contract_size`,
//!   `base_currency`, `quote_currency`, `counter_currency`,
//!   `settlement_currency`, `settlement_period` (`perpetual`),
//!   `instrument_type` (`reversed` or `linear`), `price_index`, numbers as
//!   JSON numbers (the docs' example).
//! - A `currency` or `kind` outside those: -32602 "Invalid params" with
//!   `data` `{"reason":"wrong format","param":..}`; none: `"reason":"value
//!   required"` (Deribit's RPC error table; the shape the other -32602
//!   refusals here take). Over REST the error comes with HTTP 400.

use serde_json::{Value, json};
use tickwire_venues::Venue;

use crate::catalogue::{Contract, Listing};
use crate::protocol::{Market, query};

/// The REST path.
pub(super) const PATH: &str = "/api/v2/public/get_instruments";

/// The method's parameters from a REST query (`currency`, `kind`,
/// `expired`).
pub(super) fn params_of(path: &str) -> Value {
    let mut params = serde_json::Map::new();
    for key in ["currency", "kind"] {
        if let Some(v) = query(path, key) {
            params.insert(key.into(), Value::String(v.into()));
        }
    }
    if let Some(v) = query(path, "expired") {
        params.insert("expired".into(), Value::Bool(v == "true"));
    }
    Value::Object(params)
}

/// The result (a JSON array) for `params`, or the refusal's reason and
/// parameter.
pub(super) fn instruments(
    params: Option<&Value>,
    market: &Market,
) -> Result<String, (&'static str, &'static str)> {
    let get = |key: &str| params.and_then(|p| p.get(key));
    let currency = match get("currency") {
        None | Some(Value::Null) => return Err(("value required", "currency")),
        Some(Value::String(c))
            if ["BTC", "ETH", "USDC", "USDT", "EURR", "any"].contains(&c.as_str()) =>
        {
            c.as_str()
        }
        Some(_) => return Err(("wrong format", "currency")),
    };
    let kind = match get("kind") {
        None | Some(Value::Null) => None,
        Some(Value::String(k))
            if ["future", "option", "spot", "future_combo", "option_combo"]
                .contains(&k.as_str()) =>
        {
            Some(k.as_str())
        }
        Some(_) => return Err(("wrong format", "kind")),
    };
    let expired = get("expired").and_then(Value::as_bool).unwrap_or(false);
    let list: Vec<Value> = market
        .instruments
        .iter()
        .enumerate()
        .map(|(n, i)| (n, Listing::of(Venue::Deribit, i)))
        .filter(|_| !expired && kind.is_none_or(|k| k == "future"))
        .filter(|(_, l)| currency == "any" || settlement(l) == currency)
        .map(|(n, l)| instrument(n, &l))
        .collect();
    Ok(Value::Array(list).to_string())
}

/// The currency `l` settles in: an inverse perpetual its base, a linear
/// one its quote.
pub(super) fn settlement(l: &Listing) -> &str {
    match l.contract {
        Contract::Inverse { .. } => &l.base,
        _ => &l.quote,
    }
}

/// `units` at `scale` decimals as a JSON number.
fn number(units: i64, scale: u8) -> f64 {
    units as f64 / 10f64.powi(i32::from(scale))
}

fn instrument(n: usize, l: &Listing) -> Value {
    let i = &l.instrument;
    let (kind, contract_size) = match l.contract {
        Contract::Inverse { usd } => ("reversed", f64::from(usd)),
        _ => ("linear", 1.0),
    };
    json!({
        "instrument_name": i.symbol,
        "instrument_id": 124_972 + n,
        "kind": "future",
        "is_active": true,
        "state": "open",
        "tick_size": number(1, i.price_scale),
        "tick_size_steps": [],
        "min_trade_amount": number(l.min_size, i.size_scale),
        "contract_size": contract_size,
        "base_currency": l.base,
        "quote_currency": l.quote,
        "counter_currency": l.quote,
        "settlement_currency": settlement(l),
        "settlement_period": "perpetual",
        "instrument_type": kind,
        "future_type": kind,
        "price_index": format!("{}_{}", l.base.to_ascii_lowercase(), l.quote.to_ascii_lowercase()),
        "expiration_timestamp": 32_503_708_800_000u64,
        "creation_timestamp": 1_534_167_754_000u64,
        "max_leverage": 50,
        "maker_commission": 0.0,
        "taker_commission": 0.0005,
        "rfq": false,
    })
}
