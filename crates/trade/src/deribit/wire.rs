//! Deribit's private JSON-RPC messages: requests written in place into an
//! [`Out`](crate::out::Out), answers and notifications read in place from
//! simd-json's tape. Every rule relied on names its source.
//!
//! - Framing: JSON-RPC 2.0 over one WebSocket, `{"jsonrpc":"2.0","id":N,
//!   "method":...,"params":{...}}`; an answer echoes `id` with `result` or
//!   `error: {code, message}`; a notification is `{"method":
//!   "subscription","params":{"channel":...,"data":...}}`
//!   (<https://docs.deribit.com/#json-rpc>, "Notifications"; the docs'
//!   mirror `rosssaunders/coincise:docs/deribit/response_formats.md`).
//! - On a WebSocket, `public/auth` authenticates the connection itself:
//!   later private requests on it carry no `access_token` (docs.deribit.com
//!   "Authentication": the token goes "inside request JSON parameters" only
//!   when a request is not on an authenticated connection; ccxt
//!   `ts/src/pro/deribit.ts` subscribes to private channels after
//!   `public/auth` without a token).
//! - Prices and amounts are JSON numbers (`price`, `amount`: "number" in
//!   `private/buy`'s parameters and results).

use core::fmt::{self, Write as _};

use simd_json::prelude::{ValueAsScalar, ValueIntoString};
use simd_json::tape::Value;
use tickwire_venues::decimal::parse_scaled;

use crate::order::{Limit, Reject, Side, TimeInForce};
use crate::out::Message;

/// The JSON-RPC envelope's start, up to and including `"params":{` (or
/// the whole request when it has no parameters: `params` is `None`).
fn head(m: &mut Message<'_>, id: u64, method: &str) -> fmt::Result {
    write!(
        m,
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{{"
    )
}

/// `public/auth` with `grant_type: client_signature`: the secret never
/// leaves the host. The signature is HMAC-SHA256 (hex) of
/// `timestamp + "\n" + nonce + "\n" + data` under the client secret
/// (docs.deribit.com "Additional authorization method - signature
/// credentials (WebSocket API)":
/// `StringToSign = Timestamp + "\n" + Nonce + "\n" + Data` and
/// `Signature = HEX_STRING(HMAC-SHA256(ClientSecret, StringToSign))`, as
/// quoted by the `deribit-api` gem's `Deribit.signature`; parameters
/// from `public/auth`'s table: `timestamp` integer ms, `nonce` and `data`
/// strings).
pub(crate) fn auth_signature(
    m: &mut Message<'_>,
    id: u64,
    client_id: &str,
    timestamp_ms: u64,
    nonce: &str,
    signature: &str,
) -> fmt::Result {
    head(m, id, "public/auth")?;
    m.write_str("\"grant_type\":\"client_signature\",\"client_id\":\"")?;
    m.escaped(client_id)?;
    write!(
        m,
        "\",\"timestamp\":{timestamp_ms},\"signature\":\"{signature}\",\"nonce\":\"{nonce}\",\"data\":\"\"}}}}"
    )
}

/// `public/auth` with `grant_type: client_credentials` (`client_id`,
/// `client_secret`: `public/auth`'s parameters).
pub(crate) fn auth_credentials(
    m: &mut Message<'_>,
    id: u64,
    client_id: &str,
    secret: &str,
) -> fmt::Result {
    head(m, id, "public/auth")?;
    m.write_str("\"grant_type\":\"client_credentials\",\"client_id\":\"")?;
    m.escaped(client_id)?;
    m.write_str("\",\"client_secret\":\"")?;
    m.escaped(secret)?;
    m.write_str("\"}}")
}

/// `public/auth` with `grant_type: refresh_token`: a new token (and a new
/// refresh token) before the current one expires.
pub(crate) fn auth_refresh(m: &mut Message<'_>, id: u64, refresh_token: &str) -> fmt::Result {
    head(m, id, "public/auth")?;
    m.write_str("\"grant_type\":\"refresh_token\",\"refresh_token\":\"")?;
    m.escaped(refresh_token)?;
    m.write_str("\"}}")
}

/// `private/enable_cancel_on_disconnect` with `scope: connection`: the
/// venue cancels the session's orders when this connection drops
/// (`rosssaunders/coincise:docs/deribit/endpoints/private/post_enable_cancel_on_disconnect.md`:
/// `scope` "connection" or "account", default "connection").
pub(crate) fn enable_cancel_on_disconnect(m: &mut Message<'_>, id: u64) -> fmt::Result {
    head(m, id, "private/enable_cancel_on_disconnect")?;
    m.write_str("\"scope\":\"connection\"}}")
}

/// `private/subscribe` to `user.orders.{instrument}.raw` and
/// `user.trades.{instrument}.raw` for each instrument (the channels'
/// names from docs.deribit.com "Subscriptions": `user.orders.
/// {instrument_name}.{interval}`, `user.trades.{instrument_name}.
/// {interval}`, interval `raw` for every change as it happens).
pub(crate) fn subscribe<'a>(
    m: &mut Message<'_>,
    id: u64,
    symbols: impl Iterator<Item = &'a str>,
) -> fmt::Result {
    head(m, id, "private/subscribe")?;
    m.write_str("\"channels\":[")?;
    for (k, s) in symbols.enumerate() {
        if k > 0 {
            m.write_str(",")?;
        }
        m.write_str("\"user.orders.")?;
        m.escaped(s)?;
        m.write_str(".raw\",\"user.trades.")?;
        m.escaped(s)?;
        m.write_str(".raw\"")?;
    }
    m.write_str("]}}")
}

/// `private/get_open_orders_by_instrument` (`instrument_name`; `type`
/// defaults to `all`).
pub(crate) fn open_orders(m: &mut Message<'_>, id: u64, symbol: &str) -> fmt::Result {
    head(m, id, "private/get_open_orders_by_instrument")?;
    m.write_str("\"instrument_name\":\"")?;
    m.escaped(symbol)?;
    m.write_str("\"}}")
}

/// The label of a client id: the prefix, `-`, then the number in
/// decimal. Prefixes are letters and digits, so no prefix followed by `-`
/// begins another's label ("bot" and "bot1" cannot read each other's).
fn label(m: &mut Message<'_>, prefix: &str, cid: u64) -> fmt::Result {
    m.write_str("\"label\":\"")?;
    m.escaped(prefix)?;
    write!(m, "-{cid}\"")
}

/// `private/buy` or `private/sell` of a limit order (`private/buy`'s
/// parameters: `instrument_name`, `amount`, `type: limit`, `price`,
/// `label` (at most 64 characters), `time_in_force`
/// good_til_cancelled / immediate_or_cancel / fill_or_kill, `post_only`
/// with `reject_post_only: true`: "the order is put to the order book
/// unmodified or the request is rejected" rather than repriced; both only
/// with good_til_cancelled).
#[allow(clippy::too_many_arguments)]
pub(crate) fn place(
    m: &mut Message<'_>,
    id: u64,
    symbol: &str,
    price_scale: u8,
    size_scale: u8,
    prefix: &str,
    cid: u64,
    order: &Limit,
) -> fmt::Result {
    head(
        m,
        id,
        match order.side {
            Side::Bid => "private/buy",
            Side::Ask => "private/sell",
        },
    )?;
    m.write_str("\"instrument_name\":\"")?;
    m.escaped(symbol)?;
    m.write_str("\",\"amount\":")?;
    m.decimal(order.size, size_scale)?;
    m.write_str(",\"type\":\"limit\",\"price\":")?;
    m.decimal(order.price, price_scale)?;
    m.write_str(",")?;
    label(m, prefix, cid)?;
    m.write_str(",\"time_in_force\":\"")?;
    m.write_str(match order.tif {
        TimeInForce::GoodTillCancel => "good_til_cancelled",
        TimeInForce::ImmediateOrCancel => "immediate_or_cancel",
        TimeInForce::FillOrKill => "fill_or_kill",
    })?;
    m.write_str("\"")?;
    if order.post_only {
        m.write_str(",\"post_only\":true,\"reject_post_only\":true")?;
    }
    m.write_str("}}")
}

/// `private/edit`: a working order's new `amount` (its whole size) and
/// `price`, by `order_id` (`private/edit`'s parameters).
pub(crate) fn edit(
    m: &mut Message<'_>,
    id: u64,
    order_id: &str,
    amount: (i64, u8),
    price: (i64, u8),
) -> fmt::Result {
    head(m, id, "private/edit")?;
    m.write_str("\"order_id\":\"")?;
    m.escaped(order_id)?;
    m.write_str("\",\"amount\":")?;
    m.decimal(amount.0, amount.1)?;
    m.write_str(",\"price\":")?;
    m.decimal(price.0, price.1)?;
    m.write_str("}}")
}

/// `private/cancel` by `order_id`.
pub(crate) fn cancel(m: &mut Message<'_>, id: u64, order_id: &str) -> fmt::Result {
    head(m, id, "private/cancel")?;
    m.write_str("\"order_id\":\"")?;
    m.escaped(order_id)?;
    m.write_str("\"}}")
}

/// `private/cancel_all`, or `private/cancel_all_by_instrument`
/// (`instrument_name`), both with `detailed: true` ("When detailed is set
/// to true, the output format is changed to include a list of all
/// cancelled orders", docs.deribit.com `private/cancel_all` and
/// `private/cancel_all_by_instrument`): the answer then names the orders
/// that ended, not only their number.
pub(crate) fn cancel_all(m: &mut Message<'_>, id: u64, symbol: Option<&str>) -> fmt::Result {
    match symbol {
        None => {
            head(m, id, "private/cancel_all")?;
            m.write_str("\"detailed\":true}}")
        }
        Some(s) => {
            head(m, id, "private/cancel_all_by_instrument")?;
            m.write_str("\"instrument_name\":\"")?;
            m.escaped(s)?;
            m.write_str("\",\"detailed\":true}}")
        }
    }
}

/// `public/test`, the answer a `heartbeat` of `type: test_request` asks
/// for (docs.deribit.com `public/set_heartbeat`: "respond with
/// public/test").
pub(crate) fn test(m: &mut Message<'_>, id: u64) -> fmt::Result {
    head(m, id, "public/test")?;
    m.write_str("}}")
}

/// What a refusal's code means to the bot (docs.deribit.com "Error Codes",
/// mirrored at `rosssaunders/coincise:docs/deribit/error_codes.md`):
/// 10028 `too_many_requests`; 10000 `authorization_required`, 13004
/// `invalid_credentials`, 13009 `unauthorized`, 13021 `forbidden`; 10009
/// `not_enough_funds`; 10004 `order_not_found`, 11044 `not_open_order`;
/// 11054 `post_only_reject` ("rejected due to reject_post_only flag").
pub(crate) fn reject_of(code: i64) -> Reject {
    match code {
        10028 => Reject::VenueRateLimited { code },
        10000 | 13004 | 13009 | 13021 => Reject::Auth { code },
        10009 => Reject::InsufficientFunds,
        10004 | 11044 => Reject::UnknownOrder,
        11054 => Reject::WouldTake,
        _ => Reject::Venue { code },
    }
}

/// Whether a login refused with `code` is final: the credentials
/// themselves (docs.deribit.com "Error Codes", mirrored at
/// `rosssaunders/coincise:docs/deribit/error_codes.md`: 10000
/// `authorization_required`, 13004 `invalid_credentials`, 13009
/// `unauthorized` "Wrong or expired authorization token or bad
/// signature", 13021 `forbidden` "Not enough permissions"). Any other
/// code (10028 `too_many_requests`, 10040 `retry` "Request can't be
/// processed right now and should be retried", 11051 `system_maintenance`,
/// 13028 `temporarily_unavailable`, ...) is the venue's state, not the
/// key's: the login is tried again later.
pub(crate) fn final_login_refusal(code: i64) -> bool {
    matches!(code, 10000 | 13004 | 13009 | 13021)
}

/// A JSON number (or a number's text) as an integer count of
/// `10^-scale`, exactly. simd-json reads a number with a fraction as the
/// nearest `f64`; Rust writes an `f64` as the shortest decimal that reads
/// back as it, which is the text Deribit sent for any number of up to 15
/// significant digits, and that text is scaled exactly. `None`: not a
/// number, or not representable at the scale.
pub(crate) fn scaled(v: &Value<'_, '_>, scale: u8) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return i.checked_mul(10i64.checked_pow(u32::from(scale))?);
    }
    if let Some(s) = v.as_str() {
        return parse_scaled(s.as_bytes(), scale).ok();
    }
    scaled_f64(v.as_f64()?, scale)
}

/// The most significant digits an `f64`'s shortest decimal is known to
/// give back as sent: any decimal of up to 15 significant digits survives
/// the round trip through the nearest `f64` (`f64::DIGITS`).
const EXACT_DIGITS: usize = f64::DIGITS as usize;

/// [`scaled`] of a number simd-json read as an `f64`. A value whose
/// shortest decimal has more than 15 significant digits may not be the
/// text the venue sent (the `f64` nearest a 17-digit text can print as
/// another text): `None`, unreadable, rather than a number that may be
/// wrong. Deribit's prices and amounts have a handful of digits.
fn scaled_f64(f: f64, scale: u8) -> Option<i64> {
    if !f.is_finite() {
        return None;
    }
    let mut text = StackText::default();
    write!(text, "{f}").ok()?;
    // Significant digits: from the first that is not zero to the last.
    let (mut seen, mut significant) = (0, 0);
    let digits = text.as_bytes().iter().filter(|b| b.is_ascii_digit());
    for &b in digits.skip_while(|&&b| b == b'0') {
        seen += 1;
        if b != b'0' {
            significant = seen;
        }
    }
    if significant > EXACT_DIGITS {
        return None;
    }
    parse_scaled(text.as_bytes(), scale).ok()
}

/// A number's text, on the stack.
struct StackText {
    buf: [u8; 48],
    len: usize,
}

impl Default for StackText {
    fn default() -> StackText {
        StackText {
            buf: [0; 48],
            len: 0,
        }
    }
}

impl StackText {
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// An order's state (`order_state`: "open", "filled", "rejected",
/// "cancelled", "untriggered").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OrderState {
    Open,
    Filled,
    Rejected,
    Cancelled,
    /// Untriggered, or a state this reader does not know: not news.
    Other,
}

/// The fields of an order object this session reads (`private/buy`'s
/// `result.order`, `user.orders.*` data, `get_open_orders_by_instrument`
/// items): `order_id`, `label`, `instrument_name`, `direction`, `price`,
/// `amount`, `filled_amount`, `order_state`, `last_update_timestamp`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrderMsg<'i> {
    pub order_id: &'i str,
    pub label: &'i str,
    pub instrument: &'i str,
    pub side: Side,
    pub price: i64,
    pub amount: i64,
    pub filled: i64,
    pub state: OrderState,
    pub time_ms: u64,
}

impl<'i> OrderMsg<'i> {
    /// Reads an order of an instrument whose scales `scales` gives (by
    /// its name); `None` if a field is missing or not as documented (an
    /// order without a label is read with an empty one).
    pub(crate) fn read(
        v: &Value<'_, 'i>,
        scales: impl Fn(&str) -> Option<(u8, u8)>,
    ) -> Option<OrderMsg<'i>> {
        let instrument = v.get("instrument_name")?.into_string()?;
        let (ps, ss) = scales(instrument)?;
        let amount = scaled(&v.get("amount")?, ss)?;
        let filled = v
            .get("filled_amount")
            .and_then(|f| scaled(&f, ss))
            .unwrap_or(0);
        // Amounts are never negative as documented: such an order is
        // unreadable, not arithmetic to overflow on.
        if amount < 0 || filled < 0 {
            return None;
        }
        Some(OrderMsg {
            order_id: v.get("order_id")?.into_string()?,
            label: v.get("label").and_then(|l| l.into_string()).unwrap_or(""),
            instrument,
            side: side(v.get("direction")?.into_string()?)?,
            price: scaled(&v.get("price")?, ps)?,
            amount,
            filled,
            state: match v.get("order_state")?.into_string()? {
                "open" => OrderState::Open,
                "filled" => OrderState::Filled,
                "rejected" => OrderState::Rejected,
                "cancelled" => OrderState::Cancelled,
                _ => OrderState::Other,
            },
            time_ms: v
                .get("last_update_timestamp")
                .and_then(|t| t.as_u64())
                .unwrap_or(0),
        })
    }
}

/// The fields of a trade this session reads (`private/buy`'s
/// `result.trades[]`, `user.trades.*` data items): `trade_id` (a string,
/// unique per currency), `order_id`, `label`, `instrument_name`, `price`,
/// `amount`, `liquidity` ("M" maker, "T" taker), `timestamp`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TradeMsg<'i> {
    pub trade_id: &'i str,
    pub order_id: &'i str,
    pub label: &'i str,
    pub price: i64,
    pub amount: i64,
    pub maker: bool,
    pub time_ms: u64,
}

impl<'i> TradeMsg<'i> {
    /// Reads a trade (see [`OrderMsg::read`]).
    pub(crate) fn read(
        v: &Value<'_, 'i>,
        scales: impl Fn(&str) -> Option<(u8, u8)>,
    ) -> Option<TradeMsg<'i>> {
        let instrument = v.get("instrument_name")?.into_string()?;
        let (ps, ss) = scales(instrument)?;
        Some(TradeMsg {
            trade_id: v.get("trade_id")?.into_string()?,
            order_id: v.get("order_id")?.into_string()?,
            label: v.get("label").and_then(|l| l.into_string()).unwrap_or(""),
            price: scaled(&v.get("price")?, ps)?,
            amount: scaled(&v.get("amount")?, ss)?,
            maker: v.get("liquidity").and_then(|l| l.into_string()) == Some("M"),
            time_ms: v.get("timestamp").and_then(|t| t.as_u64()).unwrap_or(0),
        })
    }
}

fn side(direction: &str) -> Option<Side> {
    match direction {
        "buy" => Some(Side::Bid),
        "sell" => Some(Side::Ask),
        _ => None,
    }
}

/// The client id a label carries: the session's prefix, `-`, then
/// decimal digits (nothing else), or `None` (another client's order).
pub(crate) fn cid_of(label: &str, prefix: &str) -> Option<u64> {
    let digits = label.strip_prefix(prefix)?.strip_prefix('-')?;
    // Only the form `label` writes: no sign, no leading zero.
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::scaled_f64;

    #[test]
    fn numbers_read_as_floats_are_exact_or_unreadable() {
        assert_eq!(scaled_f64(8900.5, 1), Some(89_005));
        assert_eq!(scaled_f64(0.0012, 4), Some(12));
        assert_eq!(scaled_f64(1200.0, 0), Some(1200));
        assert_eq!(scaled_f64(-3.25, 2), Some(-325));
        assert_eq!(scaled_f64(8900.55, 1), None, "more digits than the scale");
        // 15 significant digits come back as sent.
        assert_eq!(
            scaled_f64(123_456_789_012.345, 3),
            Some(123_456_789_012_345)
        );
        // 17 do not: the f64 nearest 1234567890123456.7 prints as
        // 1234567890123456.8; refused rather than read wrong.
        assert_eq!(scaled_f64(1_234_567_890_123_456.7, 1), None);
        assert_eq!(scaled_f64(f64::NAN, 1), None);
        assert_eq!(scaled_f64(f64::INFINITY, 1), None);
    }
}
