//! Deribit's instruments: `GET https://www.deribit.com/api/v2/public/get_instruments?currency=any`
//! (Deribit API docs, "Market data" → `public/get_instruments`,
//! <https://docs.deribit.com/#public-get_instruments>): `currency` is
//! `BTC`, `ETH`, `USDC`, `USDT`, `EURR` or `any` ("The currency symbol
//! or "any" for all"); expired instruments are left out unless
//! `expired=true`. The method has its own rate limit, 1 request per 10
//! seconds with a burst of 5: one request at start-up is within it.
//!
//! The answer is JSON-RPC: `{"jsonrpc":"2.0","result":[…]}`, or
//! `{"error":{"code":…,"message":…}}`. Each of `result[]` has
//! `instrument_name`, `is_active`, and JSON numbers (not strings)
//! `tick_size` (the price increment; options also give
//! `tick_size_steps`, coarser ticks above some prices, all multiples of
//! it), `min_trade_amount` (amounts are multiples of it: USD for inverse
//! futures and perpetuals, the base coin for options and linear
//! contracts) and `contract_size`. The numbers are read as the text the
//! venue wrote (serde_json's `RawValue`), never as floats.
//!
//! Case: instrument names are upper case (`BTC-PERPETUAL`); they are
//! matched exactly.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::listed::{Listed, ListingError};

/// Deribit's host.
pub const HOST: &str = "www.deribit.com";

/// Every unexpired instrument of every currency.
pub const PATH: &str = "/api/v2/public/get_instruments?currency=any";

#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    result: Option<Vec<Instrument<'a>>>,
    error: Option<Refusal>,
}

#[derive(Deserialize)]
struct Refusal {
    code: i64,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct Instrument<'a> {
    instrument_name: String,
    #[serde(default)]
    is_active: bool,
    #[serde(borrow)]
    tick_size: Option<&'a RawValue>,
    #[serde(borrow)]
    min_trade_amount: Option<&'a RawValue>,
}

/// A `get_instruments` answer.
pub fn parse(body: &str) -> Result<Vec<Listed>, ListingError> {
    let answer: Answer<'_> = serde_json::from_str(body)?;
    if let Some(e) = answer.error {
        return Err(ListingError::Refused(format!("{} {}", e.code, e.message)));
    }
    let result = answer
        .result
        .ok_or_else(|| ListingError::Shape("no `result`".into()))?;
    Ok(result
        .iter()
        .map(|i| {
            Listed::new(
                &i.instrument_name,
                if i.is_active { "active" } else { "inactive" },
                i.is_active,
                i.tick_size.map(|r| r.get()),
                i.min_trade_amount.map(|r| r.get()),
            )
        })
        .collect())
}
