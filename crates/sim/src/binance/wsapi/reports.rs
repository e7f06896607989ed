//! The user data stream: the exchange's private events as
//! `executionReport`s on each subscription of their account.

use std::fmt::Write as _;

use super::orders::{dec, json_str, quote, quote_asset};
use super::{Meta, OrderType, Session, WsApi, status_name, tif_name};
use crate::exchange::{PrivateEvent, SimOrder, Status};
use crate::market::SimInstrument;
use crate::protocol::{Market, Out};

impl WsApi {
    /// The exchange's private events: each order's report updated, and
    /// each into an `executionReport` for every subscription of its
    /// account on this connection, `{"subscriptionId":N,"event":{..}}`
    /// ("Event format"; `user-data-stream.md` "Order Update").
    pub(crate) fn on_private(
        &self,
        session: &mut Session,
        events: &[PrivateEvent],
        market: &Market,
        now_ms: u64,
        out: &mut Out,
    ) {
        for e in events {
            let (order, trade) = match e {
                PrivateEvent::Order(o) => (o, None),
                PrivateEvent::Trade {
                    order,
                    trade_id,
                    price,
                    size,
                    maker,
                    ..
                } => (order, Some((*trade_id, *price, *size, *maker))),
            };
            let meta = {
                let mut s = self.shared();
                let meta = s.orders.entry(order.id).or_insert_with(|| Meta::of(order));
                if let Some((id, price, size, _)) = trade
                    && id > meta.last_trade
                {
                    meta.last_trade = id;
                    meta.quote += i128::from(price) * i128::from(size);
                }
                if order.updated_ms >= meta.last.updated_ms {
                    meta.last = order.clone();
                }
                meta.clone()
            };
            let subs: Vec<u32> = session
                .subs
                .iter()
                .filter(|s| s.1 == order.account)
                .map(|s| s.0)
                .collect();
            if subs.is_empty() {
                continue;
            }
            // Fills are reported by their trades; an order event that only
            // follows a fill adds nothing.
            let x = match (trade, order.status) {
                (Some(_), _) => "TRADE",
                (None, Status::New) => "NEW",
                (None, Status::Canceled) => "CANCELED",
                (None, Status::Expired) => "EXPIRED",
                (None, Status::Rejected) => "REJECTED",
                (None, Status::PartiallyFilled | Status::Filled) => continue,
            };
            let spec = &market.instruments[order.instrument];
            session.executions += 1;
            let report = execution_report(order, &meta, spec, x, trade, session.executions, now_ms);
            for id in subs {
                out.push(format!(r#"{{"subscriptionId":{id},"event":{report}}}"#));
            }
        }
    }
}

/// An `executionReport` ("Order Update"): its fields in the documented
/// order; on a cancel `c` is the cancel's client id and `C` the order's
/// ("Original client order ID; This is the ID of the order being
/// canceled"); `W` only while the order works on the book ("Appears when
/// the order is working on the book").
fn execution_report(
    order: &SimOrder,
    meta: &Meta,
    spec: &SimInstrument,
    x: &str,
    trade: Option<(u64, i64, i64, bool)>,
    execution: u64,
    now_ms: u64,
) -> String {
    let (c, orig) = match (&meta.cancel_id, order.status) {
        (Some(cancel), Status::Canceled) => (cancel.as_str(), order.client_id.as_str()),
        _ => (order.client_id.as_str(), ""),
    };
    let mut s = String::with_capacity(640);
    let _ = write!(
        s,
        r#"{{"e":"executionReport","E":{now_ms},"s":"{}","c":{},"S":"{}","o":"{}","f":"{}","q":"#,
        spec.symbol,
        json_str(c),
        if order.buy { "BUY" } else { "SELL" },
        meta.kind.name(),
        tif_name(meta.tif),
    );
    dec(&mut s, order.size, spec.size_scale);
    s.push_str(r#","p":"#);
    dec(
        &mut s,
        if meta.kind == OrderType::Market {
            0
        } else {
            order.price
        },
        spec.price_scale,
    );
    let _ = write!(
        s,
        r#","P":"0.00000000","F":"0.00000000","g":-1,"C":{},"x":"{x}","X":"{}","r":"NONE","i":{},"l":"#,
        json_str(orig),
        status_name(order.status),
        order.id
    );
    let (trade_id, price, size, maker) = trade.unwrap_or((0, 0, 0, false));
    dec(&mut s, size, spec.size_scale);
    s.push_str(r#","z":"#);
    dec(&mut s, order.filled, spec.size_scale);
    s.push_str(r#","L":"#);
    dec(&mut s, price, spec.price_scale);
    let (n, asset) = if trade.is_some() {
        ("\"0.00000000\"".to_string(), json_str(&quote_asset(spec)))
    } else {
        ("\"0\"".to_string(), "null".to_string())
    };
    let working = matches!(order.status, Status::New | Status::PartiallyFilled);
    let _ = write!(
        s,
        r#","n":{n},"N":{asset},"T":{},"t":{},"I":{execution},"w":{working},"m":{maker},"M":false,"O":{},"Z":"#,
        order.updated_ms,
        if trade.is_some() { trade_id as i64 } else { -1 },
        order.created_ms
    );
    quote(&mut s, meta.quote, spec);
    s.push_str(r#","Y":"#);
    quote(&mut s, i128::from(price) * i128::from(size), spec);
    s.push_str(r#","Q":"0.00000000""#);
    if working {
        let _ = write!(s, r#","W":{}"#, order.created_ms);
    }
    s.push_str(r#","V":"NONE"}"#);
    s
}
