//! Binance's `exchangeInfo`: spot, USD-M and COIN-M futures.
//!
//! - Spot: `GET https://api.binance.com/api/v3/exchangeInfo`, request
//!   weight 20; `showPermissionSets=false` leaves each symbol's
//!   `permissionSets` empty, which is most of the answer's size
//!   (Binance Spot API docs, "General endpoints" → "Exchange
//!   information",
//!   <https://developers.binance.com/docs/binance-spot-api-docs/rest-api/general-endpoints#exchange-information>).
//!   Each of `symbols[]` has `symbol`, `status` (`TRADING` is the trading
//!   one; `BREAK`, `HALT`, `END_OF_DAY` are not) and `filters[]`: the
//!   `PRICE_FILTER`'s `tickSize` and the `LOT_SIZE` filter's `stepSize`,
//!   both decimal strings; a `tickSize` of zero means the rule is off
//!   ("Filters" page, `PRICE_FILTER`).
//! - USD-M: `GET https://fapi.binance.com/fapi/v1/exchangeInfo`, weight 1
//!   (USDⓈ-M Futures docs, "Market Data" → "Exchange Information",
//!   <https://developers.binance.com/docs/derivatives/usds-margined-futures/market-data/rest-api/Exchange-Information>):
//!   the same `symbol`, `status` and filters.
//! - COIN-M: `GET https://dapi.binance.com/dapi/v1/exchangeInfo`, weight 1
//!   (COIN-M Futures docs, "Market Data" → "Exchange Information",
//!   <https://developers.binance.com/docs/derivatives/coin-margined-futures/market-data/Exchange-Information>):
//!   the status is `contractStatus`, not `status`.
//!
//! Case: symbols are upper case in every REST answer and message; only
//! stream names are written in lower case ("All symbols for streams are
//! lowercase", WebSocket Streams page), which the plans do themselves. A
//! configured symbol must be the listed spelling.

use serde::Deserialize;

use crate::listed::{Listed, ListingError};
use crate::model::Venue;

/// The host and path of `venue`'s `exchangeInfo` (a Binance venue).
pub fn request(venue: Venue) -> (&'static str, &'static str) {
    match venue {
        Venue::BinanceUsdM => ("fapi.binance.com", "/fapi/v1/exchangeInfo"),
        Venue::BinanceCoinM => ("dapi.binance.com", "/dapi/v1/exchangeInfo"),
        _ => (
            "api.binance.com",
            "/api/v3/exchangeInfo?showPermissionSets=false",
        ),
    }
}

/// The request weight of `venue`'s `exchangeInfo` (the SBE streams'
/// symbols are spot's: its list, its weight).
pub fn weight(venue: Venue) -> u32 {
    match venue {
        Venue::BinanceSpot | Venue::BinanceSpotSbe => 20,
        _ => 1,
    }
}

#[derive(Deserialize)]
struct Answer {
    symbols: Vec<Symbol>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Symbol {
    symbol: String,
    status: Option<String>,
    contract_status: Option<String>,
    #[serde(default)]
    filters: Vec<Filter>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Filter {
    filter_type: String,
    tick_size: Option<String>,
    step_size: Option<String>,
}

/// Binance's error answer: `{"code":-1121,"msg":"Invalid symbol."}`.
#[derive(Deserialize)]
struct Refusal {
    code: i64,
    msg: String,
}

/// An `exchangeInfo` answer (any of the three markets).
pub fn parse(body: &str) -> Result<Vec<Listed>, ListingError> {
    if let Ok(r) = serde_json::from_str::<Refusal>(body) {
        return Err(ListingError::Refused(format!("{} {}", r.code, r.msg)));
    }
    let answer: Answer = serde_json::from_str(body)?;
    Ok(answer
        .symbols
        .iter()
        .map(|s| {
            let status = s
                .status
                .as_deref()
                .or(s.contract_status.as_deref())
                .unwrap_or("");
            let filter = |kind: &str| s.filters.iter().find(|f| f.filter_type == kind);
            Listed::new(
                &s.symbol,
                status,
                status == "TRADING",
                filter("PRICE_FILTER").and_then(|f| f.tick_size.as_deref()),
                filter("LOT_SIZE").and_then(|f| f.step_size.as_deref()),
            )
        })
        .collect())
}
