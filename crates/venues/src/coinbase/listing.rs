//! Coinbase Advanced Trade's public products:
//! `GET https://api.coinbase.com/api/v3/brokerage/market/products`
//! (Advanced Trade API reference, "Public" → "List Public Products",
//! <https://docs.cdp.coinbase.com/advanced-trade/reference/retailbrokerageapi_getpublicproducts>),
//! no authentication, public endpoints limited to 10 requests a second
//! per IP address ("Advanced Trade API Rate Limits").
//!
//! The answer is `{"products":[…],"num_products":N}`; each product has
//! `product_id`, `status` (`online` is the trading one; `offline`,
//! `delisted` are not), `trading_disabled`, and decimal strings
//! `price_increment` (the price tick), `quote_increment` (the quote
//! amount's, used when no `price_increment` is given) and
//! `base_increment` (the size's).
//!
//! Case: `product_id` is upper case (`BTC-USD`) in every answer and
//! message; it is matched exactly.

use serde::Deserialize;

use crate::listed::{Listed, ListingError};

/// Coinbase's REST host.
pub const HOST: &str = "api.coinbase.com";

/// Every public product.
pub const PATH: &str = "/api/v3/brokerage/market/products";

#[derive(Deserialize)]
struct Answer {
    products: Vec<Product>,
}

#[derive(Deserialize)]
struct Product {
    product_id: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    trading_disabled: bool,
    price_increment: Option<String>,
    quote_increment: Option<String>,
    base_increment: Option<String>,
}

/// Coinbase's error answer: `{"error":"NOT_FOUND","message":"…"}`.
#[derive(Deserialize)]
struct Refusal {
    error: String,
    #[serde(default)]
    message: String,
}

/// A `products` answer.
pub fn parse(body: &str) -> Result<Vec<Listed>, ListingError> {
    if let Ok(r) = serde_json::from_str::<Refusal>(body) {
        return Err(ListingError::Refused(format!("{} {}", r.error, r.message)));
    }
    let answer: Answer = serde_json::from_str(body)?;
    Ok(answer
        .products
        .iter()
        .map(|p| {
            let tick = p
                .price_increment
                .as_deref()
                .filter(|s| !s.is_empty())
                .or(p.quote_increment.as_deref());
            Listed::new(
                &p.product_id,
                &p.status,
                p.status == "online" && !p.trading_disabled,
                tick,
                p.base_increment.as_deref(),
            )
        })
        .collect())
}
