//! Bybit's instruments: `GET https://api.bybit.com/v5/market/instruments-info?category=spot|linear|inverse`
//! (Bybit V5 docs, "Market" → "Get Instruments Info",
//! <https://bybit-exchange.github.io/docs/v5/market/instrument>).
//!
//! `limit` is 1 to 1000 (default 500); linear and inverse answers are
//! paginated by `nextPageCursor` (passed back as `cursor`; empty on the
//! last page); spot answers come in one page. The answer is
//! `{"retCode":0,"retMsg":"OK","result":{"category":…,"list":[…],"nextPageCursor":…}}`
//! (`retCode` other than 0 is an error). Each of `list[]` has `symbol`,
//! `status` (`Trading` is the trading one; `PreLaunch`, `Delivering`,
//! `Closed` are not), `priceFilter.tickSize`, and the size increment in
//! `lotSizeFilter`: `basePrecision` on spot, `qtyStep` on contracts.
//!
//! Case: the docs write symbols "uppercase only"; they are matched
//! exactly.

use serde::Deserialize;

use crate::listed::{Listed, ListingError};
use crate::model::Venue;

/// Bybit's REST host.
pub const HOST: &str = "api.bybit.com";

/// The most pages followed: 1000 instruments a page.
pub const MAX_PAGES: usize = 20;

/// The path of a page of `venue`'s instruments (a Bybit venue), after
/// `cursor` if given.
pub fn path(venue: Venue, cursor: Option<&str>) -> String {
    let category = match venue {
        Venue::BybitLinear => "linear",
        Venue::BybitInverse => "inverse",
        _ => "spot",
    };
    let mut p = format!("/v5/market/instruments-info?category={category}&limit=1000");
    if let Some(c) = cursor {
        p.push_str("&cursor=");
        // The cursor is opaque; escape what a query cannot carry as is.
        for b in c.bytes() {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                p.push(char::from(b));
            } else {
                p.push_str(&format!("%{b:02X}"));
            }
        }
    }
    p
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    ret_code: i64,
    #[serde(default)]
    ret_msg: String,
    result: Option<Result>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Result {
    #[serde(default)]
    list: Vec<Instrument>,
    next_page_cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Instrument {
    symbol: String,
    status: String,
    price_filter: Option<PriceFilter>,
    lot_size_filter: Option<LotSizeFilter>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PriceFilter {
    tick_size: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LotSizeFilter {
    base_precision: Option<String>,
    qty_step: Option<String>,
}

/// One `instruments-info` page: its instruments and the cursor of the
/// next page, if any.
pub fn parse(body: &str) -> std::result::Result<(Vec<Listed>, Option<String>), ListingError> {
    let answer: Answer = serde_json::from_str(body)?;
    if answer.ret_code != 0 {
        return Err(ListingError::Refused(format!(
            "{} {}",
            answer.ret_code, answer.ret_msg
        )));
    }
    let result = answer
        .result
        .ok_or_else(|| ListingError::Shape("no `result`".into()))?;
    let listed = result
        .list
        .iter()
        .map(|i| {
            let lot = i
                .lot_size_filter
                .as_ref()
                .and_then(|l| l.qty_step.as_deref().or(l.base_precision.as_deref()));
            Listed::new(
                &i.symbol,
                &i.status,
                i.status == "Trading",
                i.price_filter.as_ref().and_then(|p| p.tick_size.as_deref()),
                lot,
            )
        })
        .collect();
    let next = result.next_page_cursor.filter(|c| !c.is_empty());
    Ok((listed, next))
}
