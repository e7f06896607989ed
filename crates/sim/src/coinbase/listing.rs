//! Coinbase Advanced Trade's public product list: `GET
//! /api/v3/brokerage/market/products` ("List Public Products") and `GET
//! /api/v3/brokerage/market/products/{product_id}` ("Get Public
//! Product"), both without authentication (Advanced Trade REST API docs).
//!
//! - The list is `{"products":[..],"num_products":N}`; `product_ids`
//!   (repeated: `product_ids=BTC-USD&product_ids=ETH-USD`) narrows it,
//!   `product_type` `SPOT` keeps it (`FUTURE` lists nothing: no futures
//!   here). A product has `product_id`, `price`, `base_increment` (the
//!   size step), `quote_increment` and `price_increment` (the tick),
//!   `base_min_size`, `base_max_size`, `quote_min_size`, `status`
//!   (`online`), `trading_disabled`, `is_disabled`, `product_type`
//!   (`SPOT`), `base_currency_id`, `quote_currency_id`, `display_name`,
//!   `alias`, `alias_to`, every number a string.
//! - A `-USDC` product other than `USDT-USDC` and `EURC-USDC` is its
//!   `-USD` one ("Other channels will return the same data as the
//!   corresponding '-USD' based products", WebSocket Channels; see
//!   `wire::product_id`): the single product `BTC-USDC` answers with
//!   `product_id` `BTC-USDC` and `alias` `BTC-USD`, and `BTC-USD`'s
//!   `alias_to` names `BTC-USDC`; the whole list holds both, each alias
//!   a product of its own (its `alias` set), as the venue lists them.
//! - A product not listed: `404` with the Advanced Trade error body
//!   `{"error":"NOT_FOUND","error_details":"ProductID is invalid",
//!   "message":"ProductID is invalid"}` (the error body's fields are the
//!   documented ones; the words are those public clients report, and are
//!   unconfirmed). An id in `product_ids` that is not listed is left out.

use serde_json::{Value, json};
use tickwire_venues::Venue;

use crate::catalogue::Listing;
use crate::market::{Digits, decimal};
use crate::protocol::{Market, Response};

use super::wire::product;

/// The list's path; a product's is under it.
pub(super) const PATH: &str = "/api/v3/brokerage/market/products";

fn number(n: i64, scale: u8) -> String {
    let mut s = String::new();
    decimal(&mut s, n, scale, Digits::Trimmed);
    s
}

/// Every value of `key` in `path`'s query.
fn values<'a>(path: &'a str, key: &str) -> Vec<&'a str> {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .filter_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .collect()
}

/// The answer to `GET path` (query included), if it is a product request.
pub(super) fn products(path: &str, market: &Market) -> Option<Response> {
    let route = path.split('?').next()?;
    if route == PATH {
        let ids = values(path, "product_ids");
        let spot = values(path, "product_type")
            .first()
            .is_none_or(|t| *t == "SPOT");
        let listed: Vec<Value> = if spot && ids.is_empty() {
            // Each product, and each `-USD` one's `-USDC` alias as a
            // product of its own (its `alias` naming the `-USD` one): the
            // list holds every id a client may subscribe.
            (0..market.instruments.len())
                .flat_map(|n| {
                    let usdc = market.instruments[n]
                        .symbol
                        .strip_suffix("-USD")
                        .map(|base| format!("{base}-USDC"))
                        .filter(|id| product(market, id) == Some(n))
                        .filter(|id| market.instruments.iter().all(|i| &i.symbol != id));
                    std::iter::once(entry(market, n, None))
                        .chain(usdc.map(|id| entry(market, n, Some(&id))))
                })
                .collect()
        } else if spot {
            ids.iter()
                .filter_map(|id| product(market, id).map(|n| entry(market, n, Some(id))))
                .collect()
        } else {
            Vec::new()
        };
        let body = json!({"num_products": listed.len(), "products": listed});
        return Some(Response::json(200, body.to_string()));
    }
    let id = route.strip_prefix(PATH)?.strip_prefix('/')?;
    if id.contains('/') {
        // `/book`, `/ticker`, `/candles`: not simulated.
        return None;
    }
    Some(match product(market, id) {
        Some(n) => Response::json(200, entry(market, n, Some(id)).to_string()),
        None => Response::json(
            404,
            json!({
                "error": "NOT_FOUND",
                "error_details": "ProductID is invalid",
                "message": "ProductID is invalid",
            })
            .to_string(),
        ),
    })
}

/// Instrument `n` as a product, named `asked` if asked by another of its
/// names (a `-USDC` alias).
fn entry(market: &Market, n: usize, asked: Option<&str>) -> Value {
    let l = Listing::of(Venue::Coinbase, &market.instruments[n]);
    let i = &l.instrument;
    let id = asked.unwrap_or(&i.symbol);
    let alias = if id == i.symbol {
        ""
    } else {
        i.symbol.as_str()
    };
    let alias_to: Vec<String> = match i.symbol.strip_suffix("-USD") {
        Some(base) if id == i.symbol => vec![format!("{base}-USDC")],
        _ => Vec::new(),
    };
    let ((bid, _), (ask, _)) = market.books[n].top();
    let quote = id.rsplit('-').next().unwrap_or(&l.quote);
    json!({
        "product_id": id,
        "price": number(bid, i.price_scale),
        "mid_market_price": number((bid + ask) / 2, i.price_scale),
        "base_increment": number(1, i.size_scale),
        "quote_increment": number(1, i.price_scale),
        "price_increment": number(1, i.price_scale),
        "base_min_size": number(l.min_size, i.size_scale),
        "base_max_size": "3400",
        "quote_min_size": "1",
        "quote_max_size": "150000000",
        "base_name": l.base,
        "quote_name": quote,
        "status": "online",
        "trading_disabled": false,
        "is_disabled": false,
        "cancel_only": false,
        "limit_only": false,
        "post_only": false,
        "auction_mode": false,
        "view_only": false,
        "product_type": "SPOT",
        "base_currency_id": l.base,
        "quote_currency_id": quote,
        "base_display_symbol": l.base,
        "quote_display_symbol": quote,
        "display_name": id,
        "alias": alias,
        "alias_to": alias_to,
        "product_venue": "CBE",
    })
}
