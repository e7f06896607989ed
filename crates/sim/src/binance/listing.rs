//! Binance's instrument lists: `GET /api/v3/exchangeInfo` (spot),
//! `/fapi/v1/exchangeInfo` (USD-M), `/dapi/v1/exchangeInfo` (COIN-M).
//!
//! - Spot ("General endpoints", "Exchange information", Spot REST API
//!   docs, developers.binance.com/docs/binance-spot-api-docs/rest-api/
//!   general-endpoints): weight 20; optional `symbol=BTCUSDT` or
//!   `symbols=["BTCUSDT","BNBBTC"]` (URL-encoded or not); "if the value
//!   provided to symbol or symbols do not exist, the endpoint will throw an
//!   error saying the symbol is invalid": `400 {"code":-1121,"msg":"Invalid
//!   symbol."}` ("Error codes": -1121 INVALID_SYMBOL). Both at once is
//!   -1128 "Combination of optional parameters invalid." A symbol outside
//!   `^[A-Z0-9-_.]{1,20}$` (lower case included) is -1100 "Illegal
//!   characters found in parameter 'symbol'; legal range is
//!   '^[A-Z0-9-_.]{1,20}$'." (the text Binance answers, quoted in
//!   python-binance and Binance.Net issues).
//! - Each symbol: `symbol`, `status` `TRADING`, `baseAsset`, `quoteAsset`,
//!   their precisions (8), and `filters`: `PRICE_FILTER` (`tickSize`),
//!   `LOT_SIZE` (`minQty`, `stepSize`), decimals written with 8 digits as
//!   spot writes every decimal.
//! - Futures ("Exchange Information", USD-M and COIN-M "Market Data"
//!   docs; the weight as open clients carry it too, e.g. polyoxide-binance
//!   `usdm/api/exchange.rs`): weight 1, no symbol parameter (every symbol, whatever the
//!   query). USD-M symbols have `status`, `contractType` `PERPETUAL`,
//!   `pricePrecision`, `quantityPrecision`, `marginAsset`; COIN-M's say
//!   `contractStatus` instead of `status` and add `contractSize` (USD a
//!   contract). Their filters' decimals carry the symbol's own precision.

use serde_json::{Value, json};
use tickwire_venues::Venue;

use crate::catalogue::{Contract, Listing};
use crate::protocol::{Market, Response, query, query_decoded};
use crate::time::now_ms;

/// Spot's list, for its JSON and SBE streams alike (the SBE page sends
/// its readers to spot's REST API).
fn spot(venue: Venue) -> bool {
    matches!(venue, Venue::BinanceSpot | Venue::BinanceSpotSbe)
}

/// The list's path on `venue`.
pub(crate) fn path(venue: Venue) -> &'static str {
    match venue {
        Venue::BinanceSpot | Venue::BinanceSpotSbe => "/api/v3/exchangeInfo",
        Venue::BinanceUsdM => "/fapi/v1/exchangeInfo",
        _ => "/dapi/v1/exchangeInfo",
    }
}

/// What a list request weighs: spot 20, futures 1.
pub(super) fn weight(venue: Venue) -> u32 {
    if spot(venue) { 20 } else { 1 }
}

fn error(code: i64, msg: &str) -> Response {
    Response::json(400, json!({"code": code, "msg": msg}).to_string())
}

/// Whether `symbol` is written as Binance's REST parameters take it.
pub(super) fn legal(symbol: &str) -> bool {
    (1..=20).contains(&symbol.len())
        && symbol
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

/// Binance's answer to a `symbol=` it cannot read.
pub(super) fn illegal_symbol() -> Response {
    error(
        -1100,
        "Illegal characters found in parameter 'symbol'; legal range is '^[A-Z0-9-_.]{1,20}$'.",
    )
}

/// The answer to `GET path` (the list's path, query included).
pub(super) fn exchange_info(
    venue: Venue,
    path: &str,
    market: &Market,
    weight_limit: u32,
) -> Response {
    let mut chosen: Vec<usize> = (0..market.instruments.len()).collect();
    if spot(venue) {
        let one = query(path, "symbol");
        let many = query_decoded(path, "symbols");
        if one.is_some() && many.is_some() {
            return error(-1128, "Combination of optional parameters invalid.");
        }
        let names: Vec<String> = match (one, many) {
            (Some(s), _) => {
                if !legal(s) {
                    return illegal_symbol();
                }
                vec![s.to_owned()]
            }
            (_, Some(list)) => match serde_json::from_str::<Vec<String>>(&list) {
                Ok(names) if !names.is_empty() && names.iter().all(|n| legal(n)) => names,
                _ => {
                    return error(
                        -1100,
                        r#"Illegal characters found in parameter 'symbols'; legal range is '^\[("[A-Z0-9-_.]{1,20}"(,"[A-Z0-9-_.]{1,20}"){0,}){0,1}\]$'."#,
                    );
                }
            },
            (None, None) => Vec::new(),
        };
        if !names.is_empty() {
            chosen.clear();
            for name in &names {
                match market.find(name) {
                    Some(n) => chosen.push(n),
                    None => return error(-1121, "Invalid symbol."),
                }
            }
        }
    }
    let symbols: Vec<Value> = chosen
        .into_iter()
        .map(|n| symbol(venue, &Listing::of(venue, &market.instruments[n])))
        .collect();
    let body = json!({
        "timezone": "UTC",
        "serverTime": now_ms(),
        "rateLimits": [
            {"rateLimitType": "REQUEST_WEIGHT", "interval": "MINUTE", "intervalNum": 1, "limit": weight_limit},
        ],
        "exchangeFilters": [],
        "symbols": symbols,
    });
    Response::json(200, body.to_string())
}

/// One unit at `scale` decimals, written as `venue` writes decimals.
fn unit(venue: Venue, scale: u8) -> String {
    let digits = if spot(venue) { 8 } else { scale };
    let mut s = String::new();
    crate::market::decimal(&mut s, 1, scale, crate::market::Digits::Fixed(digits));
    s
}

/// `n` size units at `scale`, written as `venue` writes decimals.
fn amount(venue: Venue, n: i64, scale: u8) -> String {
    let digits = if spot(venue) { 8 } else { scale };
    let mut s = String::new();
    crate::market::decimal(&mut s, n, scale, crate::market::Digits::Fixed(digits));
    s
}

/// One entry of `symbols`.
fn symbol(venue: Venue, l: &Listing) -> Value {
    let i = &l.instrument;
    let filters = json!([
        {
            "filterType": "PRICE_FILTER",
            "minPrice": unit(venue, i.price_scale),
            "maxPrice": amount(venue, 1_000_000 * 10i64.pow(u32::from(i.price_scale)), i.price_scale),
            "tickSize": unit(venue, i.price_scale),
        },
        {
            "filterType": "LOT_SIZE",
            "minQty": amount(venue, l.min_size, i.size_scale),
            "maxQty": amount(venue, 9_000 * 10i64.pow(u32::from(i.size_scale)), i.size_scale),
            "stepSize": unit(venue, i.size_scale),
        },
    ]);
    match venue {
        Venue::BinanceSpot | Venue::BinanceSpotSbe => json!({
            "symbol": i.symbol,
            "status": "TRADING",
            "baseAsset": l.base,
            "baseAssetPrecision": 8,
            "quoteAsset": l.quote,
            "quotePrecision": 8,
            "quoteAssetPrecision": 8,
            // The types its WebSocket API takes (`wsapi/orders.rs`).
            "orderTypes": ["LIMIT", "LIMIT_MAKER", "MARKET"],
            "isSpotTradingAllowed": true,
            "isMarginTradingAllowed": false,
            "filters": filters,
            "permissions": [],
            "permissionSets": [["SPOT"]],
        }),
        Venue::BinanceUsdM => json!({
            "symbol": i.symbol,
            "pair": i.symbol,
            "contractType": "PERPETUAL",
            "deliveryDate": 4_133_404_800_000u64,
            "status": "TRADING",
            "baseAsset": l.base,
            "quoteAsset": l.quote,
            "marginAsset": l.quote,
            "pricePrecision": i.price_scale,
            "quantityPrecision": i.size_scale,
            "baseAssetPrecision": 8,
            "quotePrecision": 8,
            "underlyingType": "COIN",
            "filters": filters,
        }),
        _ => {
            let usd = match l.contract {
                Contract::Inverse { usd } => usd,
                _ => 10,
            };
            json!({
                "symbol": i.symbol,
                "pair": format!("{}{}", l.base, l.quote),
                "contractType": "PERPETUAL",
                "deliveryDate": 4_133_404_800_000u64,
                "contractStatus": "TRADING",
                "contractSize": usd,
                "baseAsset": l.base,
                "quoteAsset": l.quote,
                "marginAsset": l.base,
                "pricePrecision": i.price_scale,
                "quantityPrecision": i.size_scale,
                "baseAssetPrecision": 8,
                "quotePrecision": 8,
                "filters": filters,
            })
        }
    }
}
