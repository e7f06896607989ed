//! Deribit's order methods over the simulator's matching engine, and how
//! orders and fills read on its wire. Sources ("D" below): the reference
//! pages of `private/buy`, `sell`, `edit`, `cancel`, `cancel_all`,
//! `cancel_all_by_instrument` and `get_open_orders_by_instrument`
//! (docs.deribit.com `/api-reference/trading/*`, mirrored in
//! rosssaunders/coincise `docs/deribit/endpoints/private/`), the
//! `user.orders.*` and `user.trades.*` channel pages, and the RPC error
//! table.
//!
//! - Amounts: "For perpetual and inverse futures the amount is in USD
//!   units" (D `private/buy`, `amount`). The simulated inverse
//!   perpetuals' size unit is one USD (size scale 0), the unit the public
//!   `book.*` and `trades.*` channels already write their amounts in, so
//!   an order's `amount` is its size in the engine as it is; it must be a
//!   multiple of the instrument's `min_trade_amount` (its
//!   `contract_size`, 10 USD for BTC-PERPETUAL, as `public/get_instruments`
//!   lists it), else 10027 `non_integer_contract_amount`. `contracts`
//!   may be given instead, or as well if it matches (D); a non-positive
//!   or unreadable amount is 10021 `invalid_amount`.
//! - Prices in the instrument's tick; one off the tick is 10043
//!   `price_wrong_tick`, a non-positive one 10023 `invalid_price`. `type`
//!   `limit` (the default) or `market`; a market order takes what the
//!   book has (an immediate-or-cancel order limited to the far end of the
//!   book; the rest cancelled), its `price` that limit (Deribit's own
//!   market orders show a price other than their `average_price`: the
//!   `user.changes` example). Other
//!   types (stop, take, trailing) are not simulated: -32602
//!   `"wrong format"`.
//! - `time_in_force`: `good_til_cancelled` (default), `good_til_day`
//!   (rests as good-til-cancelled: the simulator has no trading session
//!   to end), `fill_or_kill` (one that cannot fill whole is refused with
//!   11030 `other_reject`: how Deribit answers it is not documented, and
//!   the engine makes no order of it), `immediate_or_cancel` (the rest
//!   `cancelled`). `post_only` is "only valid in combination with
//!   time_in_force=good_til_cancelled" (D): with another, or on a market
//!   order, 11055 `post_only_not_allowed`. A post-only order that would
//!   take is moved "to be just below the spread" (a buy one tick under
//!   the best ask, a sell one over the best bid), or refused with 11054
//!   `post_only_reject` when `reject_post_only` is set (D).
//! - `label` (at most 64 characters, else -32602) is the order's; labels
//!   need not be unique on Deribit (13032 `non_unique_order_label` is
//!   for methods naming an order by label), so the engine is given it as
//!   its client id only while no other working order of the account has
//!   it.
//! - Order ids are `{currency}-{number}` (`"ETH-100234"`, D `order_id`),
//!   the currency the instrument settles in. An id that names no order of
//!   the account: 10004 `order_not_found`; one that names an order no
//!   longer working: 11044 `not_open_order`.
//! - `private/edit` takes `order_id`, `amount` (or `contracts`) and
//!   `price` (the order's own when left out); the engine's rule: a
//!   smaller amount at the same price keeps the order's place, anything
//!   else queues it anew. `"replaced": true` afterwards (D order object).
//! - Answers: `buy`, `sell` and `edit` `{"order":{..},"trades":[..]}`,
//!   `cancel` the order, `cancel_all*` the number cancelled, the open
//!   orders an array (D). The order object: `order_id`, `order_state`
//!   (`open`, `filled`, `rejected`, `cancelled`), `order_type`,
//!   `time_in_force`, `instrument_name`, `direction`, `price`, `amount`,
//!   `contracts`, `filled_amount`, `average_price` (0 before a fill),
//!   `label`, `post_only` (and `reject_post_only` when post-only),
//!   `reduce_only`, `replaced`, `api`, `web`, `is_liquidation`,
//!   `max_show`, `creation_timestamp`, `last_update_timestamp`, and
//!   `cancel_reason` (`user_request` or `cancel_on_disconnect`) when
//!   cancelled. A trade: `trade_id` (a string), `trade_seq`, `timestamp`,
//!   `tick_direction`, `state` (its order's), `price`, `amount`,
//!   `direction`, `liquidity` (`M`/`T`), `order_id`, `order_type`,
//!   `label` (when the order has one), `post_only`, `reduce_only`, `instrument_name`,
//!   `mark_price`, `index_price` (the mid, as the public `trades.*`
//!   channel writes it), `fee` and `fee_currency` (the maker fee 0, the
//!   taker's 0.05 % of the amount in the settlement currency: the
//!   commissions `public/get_instruments` lists), `matching_id` null.

use std::fmt::Write as _;

use serde_json::Value;

use super::wire::number;
use crate::exchange::{EngineReject, SimOrder, Status, Tif};
use crate::market::SimInstrument;

/// A refusal: Deribit's code, message, and -32602's `data`.
pub(super) type Refusal = (i64, &'static str, Option<(&'static str, &'static str)>);

/// The RPC error table's codes used here.
pub(super) mod code {
    pub(in super::super) const INVALID_PARAMS: i64 = -32602;
    pub(in super::super) const ORDER_NOT_FOUND: i64 = 10004;
    pub(in super::super) const INVALID_AMOUNT: i64 = 10021;
    pub(in super::super) const INVALID_PRICE: i64 = 10023;
    pub(in super::super) const NON_INTEGER_CONTRACT_AMOUNT: i64 = 10027;
    pub(in super::super) const PRICE_WRONG_TICK: i64 = 10043;
    pub(in super::super) const OTHER_REJECT: i64 = 11030;
    pub(in super::super) const NOT_OPEN_ORDER: i64 = 11044;
    pub(in super::super) const POST_ONLY_REJECT: i64 = 11054;
    pub(in super::super) const POST_ONLY_NOT_ALLOWED: i64 = 11055;
}

pub(super) fn invalid(reason: &'static str, param: &'static str) -> Refusal {
    (
        code::INVALID_PARAMS,
        "Invalid params",
        Some((reason, param)),
    )
}

/// What the simulator remembers of an order beyond the engine's record:
/// what Deribit's order object says and the engine does not keep.
#[derive(Clone, Debug)]
pub(super) struct Extra {
    pub(super) label: String,
    pub(super) market: bool,
    /// The time in force as written (`good_til_day` stays that).
    pub(super) tif: &'static str,
    pub(super) post_only: bool,
    pub(super) reject_post_only: bool,
    pub(super) replaced: bool,
    /// Sum of price × amount over its fills, for `average_price`.
    pub(super) notional: i128,
    /// The last fill folded into `notional` (fills come in trade id order).
    pub(super) counted: u64,
    /// Why it was cancelled, once it was.
    pub(super) cancel_reason: Option<&'static str>,
}

/// An order request's fields, read and checked.
pub(super) struct Placing {
    pub(super) buy: bool,
    pub(super) price: Option<i64>,
    pub(super) size: i64,
    pub(super) tif: Tif,
    pub(super) extra: Extra,
}

/// A JSON number in units of 10^-`scale`, if it is a whole number of them.
fn units(v: &Value, scale: u8) -> Option<Result<i64, ()>> {
    let x = v.as_f64()?;
    let scaled = x * 10f64.powi(i32::from(scale));
    let whole = scaled.round();
    if !whole.is_finite() || whole.abs() > 9e15 {
        return Some(Err(()));
    }
    Some(if (scaled - whole).abs() < 1e-6 {
        Ok(whole as i64)
    } else {
        Err(())
    })
}

/// The amount of `params` (`amount` or `contracts`, which must match if
/// both are given) in size units; `step` the contract size, `contract` one
/// contract in size units.
pub(super) fn amount(
    params: &Value,
    spec: &SimInstrument,
    step: i64,
    contract: i64,
) -> Result<i64, Refusal> {
    let bad = (code::INVALID_AMOUNT, "invalid_amount", None);
    let fraction = (
        code::NON_INTEGER_CONTRACT_AMOUNT,
        "non_integer_contract_amount",
        None,
    );
    let amount = match params.get("amount") {
        None | Some(Value::Null) => None,
        Some(v) => match units(v, spec.size_scale) {
            None => return Err(bad),
            Some(Err(())) => return Err(fraction),
            Some(Ok(a)) => Some(a),
        },
    };
    let contracts = match params.get("contracts") {
        None | Some(Value::Null) => None,
        Some(v) => match units(v, 0) {
            Some(Ok(c)) => Some(c.saturating_mul(contract)),
            _ => return Err(bad),
        },
    };
    let size = match (amount, contracts) {
        (Some(a), Some(c)) if a != c => return Err(invalid("must match amount", "contracts")),
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => return Err(invalid("value required", "amount")),
    };
    if size <= 0 {
        return Err(bad);
    }
    if size % step.max(1) != 0 {
        return Err(fraction);
    }
    Ok(size)
}

/// A price parameter in ticks.
pub(super) fn price(v: &Value, spec: &SimInstrument) -> Result<i64, Refusal> {
    match units(v, spec.price_scale) {
        None => Err((code::INVALID_PRICE, "invalid_price", None)),
        Some(Err(())) => Err((code::PRICE_WRONG_TICK, "price_wrong_tick", None)),
        Some(Ok(p)) if p <= 0 => Err((code::INVALID_PRICE, "invalid_price", None)),
        Some(Ok(p)) => Ok(p),
    }
}

/// Reads `private/buy` or `sell`'s parameters.
pub(super) fn placing(
    params: &Value,
    buy: bool,
    spec: &SimInstrument,
    step: i64,
    contract: i64,
) -> Result<Placing, Refusal> {
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    let flag = |key: &str| params.get(key).and_then(Value::as_bool).unwrap_or(false);
    let size = amount(params, spec, step, contract)?;
    let market = match text("type").unwrap_or("limit") {
        "limit" => false,
        "market" => true,
        _ => return Err(invalid("wrong format", "type")),
    };
    let (tif, tif_text) = match text("time_in_force").unwrap_or("good_til_cancelled") {
        "good_til_cancelled" => (Tif::Gtc, "good_til_cancelled"),
        "good_til_day" => (Tif::Gtc, "good_til_day"),
        "fill_or_kill" => (Tif::Fok, "fill_or_kill"),
        "immediate_or_cancel" => (Tif::Ioc, "immediate_or_cancel"),
        _ => return Err(invalid("wrong format", "time_in_force")),
    };
    let label = text("label").unwrap_or("");
    if label.chars().count() > 64 {
        return Err(invalid("too long", "label"));
    }
    let post_only = flag("post_only");
    if post_only && (market || tif_text != "good_til_cancelled") {
        return Err((code::POST_ONLY_NOT_ALLOWED, "post_only_not_allowed", None));
    }
    let price = match (market, params.get("price")) {
        (true, _) => None,
        (false, None | Some(Value::Null)) => return Err(invalid("value required", "price")),
        (false, Some(v)) => Some(price(v, spec)?),
    };
    Ok(Placing {
        buy,
        price,
        size,
        // A market order takes what it can and cancels the rest.
        tif: if market && tif == Tif::Gtc {
            Tif::Ioc
        } else {
            tif
        },
        extra: Extra {
            label: label.to_owned(),
            market,
            tif: tif_text,
            post_only,
            reject_post_only: post_only && flag("reject_post_only"),
            replaced: false,
            notional: 0,
            counted: 0,
            cancel_reason: None,
        },
    })
}

/// An engine refusal as Deribit's error (`known`: the id named an order
/// this venue placed, which may have closed since).
pub(super) fn refusal(r: EngineReject, known: bool) -> Refusal {
    match r {
        EngineReject::WouldTake => (code::POST_ONLY_REJECT, "post_only_reject", None),
        EngineReject::UnknownOrder | EngineReject::NotOpen if known => {
            (code::NOT_OPEN_ORDER, "not_open_order", None)
        }
        EngineReject::UnknownOrder | EngineReject::NotOpen => {
            (code::ORDER_NOT_FOUND, "order_not_found", None)
        }
        EngineReject::BadPrice => (code::INVALID_PRICE, "invalid_price", None),
        EngineReject::BadSize => (code::INVALID_AMOUNT, "invalid_amount", None),
        EngineReject::Fok => (code::OTHER_REJECT, "other_reject fill_or_kill", None),
        EngineReject::DuplicateClientId => invalid("duplicate", "label"),
        EngineReject::UnknownInstrument => invalid("wrong format", "instrument_name"),
    }
}

/// The id Deribit shows for order `id` of an instrument settled in
/// `currency`.
pub(super) fn order_id(currency: &str, id: u64) -> String {
    format!("{currency}-{id}")
}

/// The engine's id in an order id (`BTC-17`), whatever its currency.
pub(super) fn parse_order_id(text: &str) -> Option<u64> {
    text.rsplit_once('-')?.1.parse().ok()
}

/// `order_state` of an engine status.
fn state(s: Status) -> &'static str {
    match s {
        Status::New | Status::PartiallyFilled => "open",
        Status::Filled => "filled",
        Status::Canceled | Status::Expired => "cancelled",
        Status::Rejected => "rejected",
    }
}

/// Writes a JSON string.
fn string(out: &mut String, s: &str) {
    let _ = write!(out, "{}", Value::String(s.to_owned()));
}

/// The average fill price, at two more decimals than prices (0 before a
/// fill).
fn average(out: &mut String, spec: &SimInstrument, o: &SimOrder, e: &Extra) {
    if o.filled == 0 {
        out.push_str("0.0");
        return;
    }
    let avg = e.notional * 100 / i128::from(o.filled);
    number(out, avg as i64, spec.price_scale + 2);
}

/// The order object.
pub(super) fn order(
    out: &mut String,
    spec: &SimInstrument,
    currency: &str,
    contract: i64,
    o: &SimOrder,
    e: &Extra,
) {
    let _ = write!(
        out,
        r#"{{"web":false,"time_in_force":"{}","replaced":{},"reduce_only":false,"price":"#,
        e.tif, e.replaced
    );
    number(out, o.price, spec.price_scale);
    let _ = write!(
        out,
        r#","post_only":{},"order_type":"{}","order_state":"{}","order_id":"{}","max_show":"#,
        e.post_only,
        if e.market { "market" } else { "limit" },
        state(o.status),
        order_id(currency, o.id)
    );
    number(out, o.size, spec.size_scale);
    let _ = write!(out, r#","last_update_timestamp":{},"label":"#, o.updated_ms);
    string(out, &e.label);
    let _ = write!(
        out,
        r#","is_liquidation":false,"instrument_name":"{}","filled_amount":"#,
        spec.symbol
    );
    number(out, o.filled, spec.size_scale);
    let _ = write!(
        out,
        r#","direction":"{}","creation_timestamp":{},"average_price":"#,
        if o.buy { "buy" } else { "sell" },
        o.created_ms
    );
    average(out, spec, o, e);
    out.push_str(r#","api":true,"amount":"#);
    number(out, o.size, spec.size_scale);
    out.push_str(r#","contracts":"#);
    number(out, o.size / contract.max(1), 0);
    if e.post_only {
        let _ = write!(out, r#","reject_post_only":{}"#, e.reject_post_only);
    }
    if matches!(o.status, Status::Canceled | Status::Expired) {
        let reason = e.cancel_reason.unwrap_or("user_request");
        let _ = write!(out, r#","cancel_reason":"{reason}""#);
    }
    out.push('}');
}

/// A fill as `user.trades.*` and the order methods' `trades` write it.
pub(super) struct Fill<'a> {
    pub(super) order: &'a SimOrder,
    pub(super) extra: &'a Extra,
    pub(super) trade_id: u64,
    pub(super) price: i64,
    pub(super) size: i64,
    pub(super) maker: bool,
    pub(super) time_ms: u64,
    /// The book's mid at one more decimal than prices.
    pub(super) mark: i64,
    /// Plus tick 0, zero-plus 1, minus 2, zero-minus 3.
    pub(super) tick_direction: u8,
}

pub(super) fn trade(out: &mut String, spec: &SimInstrument, currency: &str, f: &Fill<'_>) {
    let o = f.order;
    let _ = write!(
        out,
        r#"{{"trade_seq":{},"trade_id":"{}","timestamp":{},"tick_direction":{},"state":"{}","reduce_only":false,"price":"#,
        f.trade_id,
        f.trade_id,
        f.time_ms,
        f.tick_direction,
        state(o.status)
    );
    number(out, f.price, spec.price_scale);
    let _ = write!(
        out,
        r#","post_only":{},"order_type":"{}","order_id":"{}","matching_id":null,"mark_price":"#,
        f.extra.post_only,
        if f.extra.market { "market" } else { "limit" },
        order_id(currency, o.id)
    );
    number(out, f.mark, spec.price_scale + 1);
    let _ = write!(out, r#","liquidity":"{}""#, if f.maker { "M" } else { "T" });
    // "User defined label (presented only when previously set for order
    // by user)" (D trades' `label`).
    if !f.extra.label.is_empty() {
        out.push_str(r#","label":"#);
        string(out, &f.extra.label);
    }
    let _ = write!(
        out,
        r#","instrument_name":"{}","index_price":"#,
        spec.symbol
    );
    number(out, f.mark, spec.price_scale + 1);
    // Inverse: the fee is in the coin, amount / price × rate.
    let fee = if f.maker {
        0.0
    } else {
        let usd = f.size as f64 / 10f64.powi(i32::from(spec.size_scale));
        let px = f.price as f64 / 10f64.powi(i32::from(spec.price_scale));
        usd / px * 0.0005
    };
    let _ = write!(
        out,
        r#","fee_currency":"{currency}","fee":{fee},"direction":"{}","amount":"#,
        if o.buy { "buy" } else { "sell" }
    );
    number(out, f.size, spec.size_scale);
    out.push('}');
}
