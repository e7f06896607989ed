//! How Deribit writes its replies and notifications: JSON-RPC 2.0
//! envelopes, prices and amounts as JSON numbers with at least one decimal
//! (`2960.0`, a delete's `0.0`: the recorded 2021 frames).

use std::fmt::Write as _;

use crate::market::{Digits, SimInstrument, decimal};
use crate::time::now_us;

/// Where the change ids start: Deribit's come from one venue-wide counter,
/// near 1.4e11 by 2026 (the research note's captures), so consecutive
/// messages of one instrument jump by arbitrary amounts.
const CHANGE_ID_BASE: u64 = 140_000_000_000;

/// The `change_id` of instrument `n` (of `count`) once its book reached
/// update id `update_id`: the market's update ids (one per level changed)
/// interleaved over the instruments, so ids jump within an instrument and
/// never repeat across instruments, as a venue-wide counter's do.
pub(super) fn change_id(update_id: u64, n: usize, count: usize) -> u64 {
    CHANGE_ID_BASE + update_id * count as u64 + n as u64
}

/// A reply: `{"jsonrpc":"2.0","id":..,<body>,"usIn":..,"usOut":..,
/// "usDiff":..,"testnet":false}`, the shape of the recorded subscribe reply
/// (cryptofeed capture, 2021) and of the 13778 refusal (live observations,
/// 2026). `id` is the request's id re-serialised, or `None` to leave it
/// out (-32600 has none).
fn envelope(id: Option<&str>, us_in: u64, body: &str) -> String {
    let us_out = now_us().max(us_in);
    let mut s = String::with_capacity(96 + body.len());
    s.push_str(r#"{"jsonrpc":"2.0","#);
    if let Some(id) = id {
        let _ = write!(s, r#""id":{id},"#);
    }
    let _ = write!(
        s,
        r#"{body},"usIn":{us_in},"usOut":{us_out},"usDiff":{},"testnet":false}}"#,
        us_out - us_in
    );
    s
}

/// A success reply carrying `result` (JSON text).
pub(super) fn result(id: Option<&str>, us_in: u64, result: &str) -> String {
    envelope(id, us_in, &format!(r#""result":{result}"#))
}

/// An error reply: `"error":{"code":..,"message":..[,"data":{"reason":..,
/// "param":..}]}` (Deribit's RPC error table; `data` as ccxt quotes it for
/// -32602).
pub(super) fn error(
    id: Option<&str>,
    us_in: u64,
    code: i64,
    message: &str,
    data: Option<(&str, &str)>,
) -> String {
    let mut body = format!(r#""error":{{"code":{code},"message":"{message}""#);
    if let Some((reason, param)) = data {
        let _ = write!(body, r#","data":{{"reason":"{reason}","param":"{param}"}}"#);
    }
    body.push('}');
    envelope(id, us_in, &body)
}

/// A list of channel names as a JSON array.
pub(super) fn names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut s = String::from("[");
    for (k, n) in names.into_iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(s, "{n:?}");
    }
    s.push(']');
    s
}

/// `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":..}}`
/// (nautilus_trader `test_data/ws_test_request.json`; tardis-node checks
/// `method === 'heartbeat'` and `params.type === 'test_request'`).
pub(super) fn heartbeat(kind: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"heartbeat","params":{{"type":"{kind}"}}}}"#)
}

/// A notification: `method` "subscription", no `id`, `params` with
/// `channel` and `data` (docs.deribit.com `/articles/notifications`).
pub(super) fn notification(channel: &str, data: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"subscription","params":{{"channel":"{channel}","data":{data}}}}}"#
    )
}

/// A price or amount as Deribit writes it: a JSON number with at least one
/// decimal.
pub(super) fn number(out: &mut String, value: i64, scale: u8) {
    decimal(out, value, scale, Digits::AtLeastOne);
}

/// One side's levels: `["new"|"change"|"delete", price, amount]`.
pub(super) fn levels(out: &mut String, spec: &SimInstrument, levels: &[(&str, i64, i64)]) {
    out.push('[');
    for (k, (action, price, size)) in levels.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, r#"[""#);
        out.push_str(action);
        out.push_str("\",");
        number(out, *price, spec.price_scale);
        out.push(',');
        number(out, *size, spec.size_scale);
        out.push(']');
    }
    out.push(']');
}

/// A `book.*` notification: the snapshot (`type` "snapshot", no
/// `prev_change_id` key: the recorded frames) or a change (`type`
/// "change" with `prev_change_id`), keys in the recorded order.
#[allow(clippy::too_many_arguments)] // one caller, all named
pub(super) fn book(
    channel: &str,
    spec: &SimInstrument,
    time_ms: u64,
    prev_change_id: Option<u64>,
    change_id: u64,
    bids: &[(&str, i64, i64)],
    asks: &[(&str, i64, i64)],
) -> String {
    let mut d = String::with_capacity(160 + 40 * (bids.len() + asks.len()));
    match prev_change_id {
        None => {
            let _ = write!(d, r#"{{"type":"snapshot","timestamp":{time_ms},"#);
        }
        Some(prev) => {
            let _ = write!(
                d,
                r#"{{"type":"change","timestamp":{time_ms},"prev_change_id":{prev},"#
            );
        }
    }
    let _ = write!(
        d,
        r#""instrument_name":"{}","change_id":{change_id},"bids":"#,
        spec.symbol
    );
    levels(&mut d, spec, bids);
    d.push_str(r#","asks":"#);
    levels(&mut d, spec, asks);
    d.push('}');
    notification(channel, &d)
}

/// A trade as `trades.*` sends it, in an array of one (D-spec example:
/// `trade_seq`, `trade_id` a string, `timestamp`, `tick_direction`,
/// `price`, `mark_price`, `instrument_name`, `index_price`, `direction`
/// the taker's side, `amount`).
pub(super) struct TradeText {
    pub(super) seq: u64,
    pub(super) id: u64,
    pub(super) time_ms: u64,
    pub(super) tick_direction: u8,
    pub(super) price: i64,
    /// Mark and index prices, at one more decimal than prices (they are
    /// not on the tick).
    pub(super) mark: i64,
    pub(super) buy: bool,
    pub(super) amount: i64,
}

pub(super) fn trades(channel: &str, spec: &SimInstrument, t: &TradeText) -> String {
    let mut d = String::with_capacity(256);
    let _ = write!(
        d,
        r#"[{{"trade_seq":{},"trade_id":"{}","timestamp":{},"tick_direction":{},"price":"#,
        t.seq, t.id, t.time_ms, t.tick_direction
    );
    number(&mut d, t.price, spec.price_scale);
    d.push_str(r#","mark_price":"#);
    number(&mut d, t.mark, spec.price_scale + 1);
    let _ = write!(d, r#","instrument_name":"{}","index_price":"#, spec.symbol);
    number(&mut d, t.mark, spec.price_scale + 1);
    let _ = write!(
        d,
        r#","direction":"{}","amount":"#,
        if t.buy { "buy" } else { "sell" }
    );
    number(&mut d, t.amount, spec.size_scale);
    d.push_str("}]");
    notification(channel, &d)
}

/// A `quote.*` notification (D-spec "Best bid/ask price and size.",
/// keys in the recorded order); an empty side is price 0 and amount 0.
pub(super) fn quote(
    channel: &str,
    spec: &SimInstrument,
    time_ms: u64,
    bid: (i64, i64),
    ask: (i64, i64),
) -> String {
    let mut d = String::with_capacity(200);
    let _ = write!(
        d,
        r#"{{"timestamp":{time_ms},"instrument_name":"{}","best_bid_price":"#,
        spec.symbol
    );
    number(&mut d, bid.0, spec.price_scale);
    d.push_str(r#","best_bid_amount":"#);
    number(&mut d, bid.1, spec.size_scale);
    d.push_str(r#","best_ask_price":"#);
    number(&mut d, ask.0, spec.price_scale);
    d.push_str(r#","best_ask_amount":"#);
    number(&mut d, ask.1, spec.size_scale);
    d.push('}');
    notification(channel, &d)
}
