//! Kraken's REST pair list, `GET /0/public/AssetPairs` ("Get Tradable
//! Asset Pairs", Spot REST API docs); the WebSocket v2 `instrument`
//! channel is `wire::instrument_snapshot`.
//!
//! - `{"error":[],"result":{<pair key>:{..}}}`; each pair has `altname`
//!   (`XBTUSD`), `wsname` (`XBT/USD`: REST keeps the old asset codes,
//!   where WebSocket v2 writes `BTC/USD`), `base` and `quote` (`XXBT`,
//!   `ZUSD`), `pair_decimals`, `lot_decimals`, `cost_decimals`,
//!   `tick_size`, `ordermin`, `costmin`, `status` (`online`). The key is
//!   the two asset codes joined when both are legacy ones (`XXBTZUSD`),
//!   else the altname (`SOLUSD`).
//! - `pair=` takes a comma-separated list of keys or altnames; one not
//!   listed answers `{"error":["EQuery:Unknown asset pair"]}` (Kraken's
//!   "EQuery:Unknown asset pair", quoted in the API docs' error list and
//!   ccxt's `exceptions` table), HTTP 200 as Kraken answers its errors.

use serde_json::{Map, Value, json};
use tickwire_venues::Venue;

use crate::catalogue::Listing;
use crate::market::{Digits, decimal};
use crate::protocol::{Market, Response, query};

/// The list's path.
pub(super) const PATH: &str = "/0/public/AssetPairs";

/// Kraken's REST code of an asset: Bitcoin is `XBT`, and the oldest
/// assets carry an `X` (crypto) or `Z` (fiat) in front.
fn code(asset: &str) -> (String, bool) {
    let asset = if asset == "BTC" { "XBT" } else { asset };
    match asset {
        "XBT" | "ETH" | "LTC" | "XRP" | "XLM" | "ETC" | "XMR" | "ZEC" | "XDG" => {
            (format!("X{asset}"), true)
        }
        "USD" | "EUR" | "GBP" | "CAD" | "JPY" => (format!("Z{asset}"), true),
        _ => (asset.to_owned(), false),
    }
}

/// The REST names of `l`: key, altname, wsname, base code, quote code.
fn names(l: &Listing) -> [String; 5] {
    let rest = |a: &str| {
        if a == "BTC" {
            "XBT".to_owned()
        } else {
            a.to_owned()
        }
    };
    let (base, old_base) = code(&l.base);
    let (quote, old_quote) = code(&l.quote);
    let alt = format!("{}{}", rest(&l.base), rest(&l.quote));
    let key = if old_base && old_quote {
        format!("{base}{quote}")
    } else {
        alt.clone()
    };
    let ws = format!("{}/{}", rest(&l.base), rest(&l.quote));
    [key, alt, ws, base, quote]
}

/// The answer to `GET path` (query included).
pub(super) fn asset_pairs(path: &str, market: &Market) -> Response {
    let listed: Vec<(Listing, [String; 5])> = market
        .instruments
        .iter()
        .map(|i| Listing::of(Venue::Kraken, i))
        .map(|l| {
            let n = names(&l);
            (l, n)
        })
        .collect();
    let mut result = Map::new();
    let wanted: Option<Vec<&str>> = query(path, "pair").map(|p| p.split(',').collect());
    for (l, [key, alt, ws, base, quote]) in &listed {
        if wanted
            .as_ref()
            .is_some_and(|w| !w.iter().any(|p| p == key || p == alt))
        {
            continue;
        }
        let i = &l.instrument;
        let mut tick = String::new();
        decimal(&mut tick, 1, i.price_scale, Digits::Trimmed);
        let mut ordermin = String::new();
        decimal(&mut ordermin, l.min_size, i.size_scale, Digits::Trimmed);
        result.insert(
            key.clone(),
            json!({
                "altname": alt,
                "wsname": ws,
                "aclass_base": "currency",
                "base": base,
                "aclass_quote": "currency",
                "quote": quote,
                "lot": "unit",
                "cost_decimals": 5,
                "pair_decimals": i.price_scale,
                "lot_decimals": i.size_scale,
                "lot_multiplier": 1,
                "tick_size": tick,
                "ordermin": ordermin,
                "costmin": "0.5",
                "status": "online",
            }),
        );
    }
    let unknown = wanted.as_ref().is_some_and(|w| {
        w.iter()
            .any(|p| !listed.iter().any(|(_, n)| n[0] == *p || n[1] == *p))
    });
    let body = if unknown {
        json!({"error": ["EQuery:Unknown asset pair"]})
    } else {
        json!({"error": [], "result": Value::Object(result)})
    };
    Response::json(200, body.to_string())
}
