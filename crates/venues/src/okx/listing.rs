//! OKX's instruments: `GET https://www.okx.com/api/v5/public/instruments?instType=…`
//! (OKX API v5 docs, "Public Data" → "Get instruments",
//! <https://www.okx.com/docs-v5/en/#public-data-rest-api-get-instruments>),
//! rate limit 20 requests per 2 s per IP and instrument type. `instType`
//! is `SPOT`, `MARGIN`, `SWAP`, `FUTURES` or `OPTION`; `OPTION` needs
//! `instFamily` (or `uly`), so options are listed only for the families
//! the configured symbols name (`BTC-USD-250328-100000-C` → `BTC-USD`).
//!
//! The answer is `{"code":"0","msg":"","data":[…]}` (`code` other than
//! `"0"` is an error); each of `data[]` has `instId`, `state` (`live` is
//! the trading one; `suspend`, `preopen`, `test` are not), `tickSz` and
//! `lotSz` as decimal strings.
//!
//! Case: `instId` is upper case (`BTC-USDT`) in every answer and push; the
//! docs never say it is case-insensitive, so it is matched exactly.

use serde::Deserialize;

use crate::listed::{Listed, ListingError};

/// OKX's REST host.
pub const HOST: &str = "www.okx.com";

/// The pages to fetch: spot, perpetual swaps and futures, then an
/// option page per family named by an option symbol in `symbols`.
pub fn paths(symbols: &[&str]) -> Vec<String> {
    let mut paths: Vec<String> = ["SPOT", "SWAP", "FUTURES"]
        .iter()
        .map(|t| format!("/api/v5/public/instruments?instType={t}"))
        .collect();
    let mut families: Vec<String> = symbols.iter().filter_map(|s| option_family(s)).collect();
    families.sort();
    families.dedup();
    for f in families {
        paths.push(format!(
            "/api/v5/public/instruments?instType=OPTION&instFamily={f}"
        ));
    }
    paths
}

/// The instrument family of an option's `instId`
/// (`BTC-USD-250328-100000-C` → `BTC-USD`): five parts, the last `C` or
/// `P`.
fn option_family(symbol: &str) -> Option<String> {
    let parts: Vec<&str> = symbol.split('-').collect();
    match parts[..] {
        [base, quote, _, _, "C" | "P"] => Some(format!("{base}-{quote}")),
        _ => None,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    code: String,
    #[serde(default)]
    msg: String,
    #[serde(default)]
    data: Vec<Instrument>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Instrument {
    inst_id: String,
    state: String,
    tick_sz: Option<String>,
    lot_sz: Option<String>,
}

/// One `instruments` answer.
pub fn parse(body: &str) -> Result<Vec<Listed>, ListingError> {
    let answer: Answer = serde_json::from_str(body)?;
    if answer.code != "0" {
        return Err(ListingError::Refused(format!(
            "{} {}",
            answer.code, answer.msg
        )));
    }
    Ok(answer
        .data
        .iter()
        .map(|i| {
            Listed::new(
                &i.inst_id,
                &i.state,
                i.state == "live",
                i.tick_sz.as_deref(),
                i.lot_sz.as_deref(),
            )
        })
        .collect())
}
