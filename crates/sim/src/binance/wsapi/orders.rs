//! The WebSocket API's trading requests (`order.*`, `openOrders.*`) on the
//! simulator's exchange and their answers in the documented shapes (see
//! `mod.rs` for the envelope and the limits, `sign.rs` for the
//! signatures, `reports.rs` for the `executionReport` events).

use std::fmt::Write as _;

use serde_json::Value;

use super::sign::parse_decimal;
use super::{
    Call, DAY_MS, Meta, OrderType, Params, Refusal, TEN_S_MS, WsApi, filter_failure, mandatory,
    refuse, rejected, status_name, tif_name, unknown_order,
};
use crate::exchange::{EngineReject, NewOrder, PrivateEvent, SimOrder, Status, Tif};
use crate::market::{Digits, SimInstrument, decimal};

/// A price or quantity parameter at the instrument's `scale`, checked
/// against its filter: "`price` >= `minPrice`, `price` <= `maxPrice`,
/// `price` % `tickSize` == 0" (`filters.md` PRICE_FILTER; LOT_SIZE the
/// same with `minQty`, `maxQty`, `stepSize`), with the bounds `exchangeInfo`
/// lists (see `listing.rs`). More decimals than the asset precision (8)
/// is -1111 "Parameter '%s' has too much precision."
fn amount(
    p: &Params<'_>,
    name: &str,
    scale: u8,
    (min, max): (i64, i64),
    filter: &str,
) -> Result<i64, Refusal> {
    let text = p.required(name)?;
    match parse_decimal(&text, 8) {
        Err(()) => return Err(mandatory(name)),
        Ok(None) => {
            return Err(refuse(
                400,
                -1111,
                format!("Parameter '{name}' has too much precision."),
            ));
        }
        Ok(Some(_)) => {}
    }
    match parse_decimal(&text, scale) {
        Ok(Some(v)) if (min..=max).contains(&v) => Ok(v),
        _ => Err(filter_failure(filter)),
    }
}

/// The bounds of an instrument's filters, as `listing.rs` lists them:
/// price one tick to 1 000 000, quantity the listing's minimum to 9 000.
fn bounds(spec: &SimInstrument) -> ((i64, i64), (i64, i64)) {
    let listing = crate::Listing::of(tickwire_venues::Venue::BinanceSpot, spec);
    let p = 10i64.pow(u32::from(spec.price_scale));
    let q = 10i64.pow(u32::from(spec.size_scale));
    ((1, 1_000_000 * p), (listing.min_size, 9_000 * q))
}

/// Orders whose reports are kept, at most (see `submit`).
const KEPT_ORDERS: usize = 100_000;

/// Binance spot writes every decimal with 8 digits.
pub(super) fn dec(s: &mut String, v: i64, scale: u8) {
    s.push('"');
    decimal(s, v, scale, Digits::Fixed(8));
    s.push('"');
}

/// A quote quantity (price × quantity, at both scales).
pub(super) fn quote(s: &mut String, v: i128, spec: &SimInstrument) {
    let v = i64::try_from(v).unwrap_or(i64::MAX);
    dec(s, v, spec.price_scale + spec.size_scale);
}

/// "`newClientOrderId` ... Arbitrary unique ID among open orders";
/// Binance takes `^[\.A-Z\:/a-z0-9_-]{1,36}$` (the legal range its -1100
/// ILLEGAL_CHARS names for it).
fn client_id_legal(id: &str) -> bool {
    (1..=36).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".:/_-".contains(&b))
}

/// A new order's parameters, checked.
struct Order {
    instrument: usize,
    buy: bool,
    kind: OrderType,
    tif: Tif,
    price: i64,
    size: i64,
    client_id: Option<String>,
    resp: Resp,
}

/// `newOrderRespType`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resp {
    Ack,
    Result,
    Full,
}

impl Call<'_> {
    pub(super) fn trade(&mut self, method: &str, p: &Params<'_>) -> Result<String, Refusal> {
        match method {
            "order.place" => self.place(p),
            // "Validates new order parameters and verifies your signature
            // but does not send the order into the matching engine":
            // answered `{}` ("Test new order"; `computeCommissionRates`
            // not simulated).
            "order.test" => self.order(p).map(|_| "{}".to_string()),
            "order.cancel" => self.cancel(p),
            "order.cancelReplace" => self.cancel_replace(p),
            "order.status" => self.order_status(p),
            "openOrders.status" => self.open_orders(p),
            _ => self.cancel_all(p),
        }
    }

    /// The instrument `symbol` names: -1121 "Invalid symbol." for one not
    /// listed (`errors.md` -1121 BAD_SYMBOL).
    fn symbol(&self, p: &Params<'_>) -> Result<usize, Refusal> {
        let symbol = p.required("symbol")?;
        self.market
            .find(&symbol)
            .ok_or_else(|| refuse(400, -1121, "Invalid symbol."))
    }

    /// `order.place`'s parameters (and the new order of
    /// `order.cancelReplace`), as "Place new order" lists them: `side`
    /// `BUY` or `SELL`; `type` with the parameters it makes mandatory
    /// (LIMIT: `timeInForce`, `price`, `quantity`; LIMIT_MAKER: `price`,
    /// `quantity`; MARKET: `quantity` here, `quoteOrderQty` not being
    /// simulated); `timeInForce` GTC, IOC or FOK; `newOrderRespType` ACK,
    /// RESULT or FULL, by default "`MARKET` and `LIMIT` orders use `FULL`
    /// by default, other order types default to `ACK`". A parameter the
    /// type does not take is -1106 "Parameter '%s' sent when not
    /// required."; an unknown side -1117 "Invalid side.", type -1116
    /// "Invalid orderType." (the stop and take-profit types too: not
    /// simulated), time in force -1115 "Invalid timeInForce."
    fn order(&self, p: &Params<'_>) -> Result<Order, Refusal> {
        let instrument = self.symbol(p)?;
        let spec = &self.market.instruments[instrument];
        let buy = match p.required("side")?.as_str() {
            "BUY" => true,
            "SELL" => false,
            _ => return Err(refuse(400, -1117, "Invalid side.")),
        };
        let kind = match p.required("type")?.as_str() {
            "LIMIT" => OrderType::Limit,
            "LIMIT_MAKER" => OrderType::LimitMaker,
            "MARKET" => OrderType::Market,
            _ => return Err(refuse(400, -1116, "Invalid orderType.")),
        };
        let not_required = |name: &str| {
            refuse(
                400,
                -1106,
                format!("Parameter '{name}' sent when not required."),
            )
        };
        let tif = match kind {
            OrderType::Limit => match p.required("timeInForce")?.as_str() {
                "GTC" => Tif::Gtc,
                "IOC" => Tif::Ioc,
                "FOK" => Tif::Fok,
                _ => return Err(refuse(400, -1115, "Invalid timeInForce.")),
            },
            _ if p.has("timeInForce") => return Err(not_required("timeInForce")),
            OrderType::LimitMaker => Tif::Gtc,
            OrderType::Market => Tif::Ioc,
        };
        let (prices, sizes) = bounds(spec);
        let price = if kind == OrderType::Market {
            if p.has("price") {
                return Err(not_required("price"));
            }
            // A market order takes what the book has: priced through it.
            if buy { prices.1 } else { prices.0 }
        } else {
            amount(p, "price", spec.price_scale, prices, "PRICE_FILTER")?
        };
        let size = amount(p, "quantity", spec.size_scale, sizes, "LOT_SIZE")?;
        let client_id = p.text("newClientOrderId");
        if client_id.as_deref().is_some_and(|c| !client_id_legal(c)) {
            return Err(refuse(
                400,
                -1100,
                r"Illegal characters found in parameter 'newClientOrderId'; legal range is '^[\.A-Z\:/a-z0-9_-]{1,36}$'.",
            ));
        }
        let resp = match p.text("newOrderRespType").as_deref() {
            None if kind == OrderType::LimitMaker => Resp::Ack,
            None | Some("FULL") => Resp::Full,
            Some("RESULT") => Resp::Result,
            Some("ACK") => Resp::Ack,
            Some(_) => return Err(mandatory("newOrderRespType")),
        };
        Ok(Order {
            instrument,
            buy,
            kind,
            tif,
            price,
            size,
            client_id,
            resp,
        })
    }

    /// The unfilled order count, checked and (if `count`) taken: over
    /// either limit, 429 -1015 "Too many new orders; current limit is %s
    /// orders per %s." ("Unfilled Order Count": "If you exceed this,
    /// requests fail with status `429`", with a `retryAfter`). "Successfully
    /// placed orders update the `ORDERS` rate limit type"; "If the unfilled
    /// order count for `intervalNum:DAY` is exceeded, the unfilled order
    /// count for `intervalNum:SECOND` is no longer incremented" (changelog
    /// 2025-04-07). Not simulated: the count's decrement for orders that
    /// fill (`faqs/order_count_decrement.md`).
    fn orders_room(&mut self) -> Result<(), Refusal> {
        let limits = self.api.limits;
        let now = self.now_ms;
        let mut s = self.api.shared();
        let ten = s
            .orders_10s
            .entry(self.account)
            .or_default()
            .count(now, TEN_S_MS);
        let day = s
            .orders_day
            .entry(self.account)
            .or_default()
            .count(now, DAY_MS);
        self.usage.orders = Some((ten, day));
        let over = if day >= limits.orders_per_day {
            Some((limits.orders_per_day, "1 DAY", (now / DAY_MS + 1) * DAY_MS))
        } else if ten >= limits.orders_per_10s {
            Some((
                limits.orders_per_10s,
                "10 SECOND",
                (now / TEN_S_MS + 1) * TEN_S_MS,
            ))
        } else {
            None
        };
        match over {
            None => Ok(()),
            Some((limit, per, retry)) => Err(Refusal {
                status: 429,
                code: -1015,
                msg: format!("Too many new orders; current limit is {limit} orders per {per}."),
                data: Some(format!(r#"{{"serverTime":{now},"retryAfter":{retry}}}"#)),
            }),
        }
    }

    /// Counts one order placed.
    fn count_order(&mut self) {
        let limits = self.api.limits;
        let now = self.now_ms;
        let mut s = self.api.shared();
        let day = s
            .orders_day
            .entry(self.account)
            .or_default()
            .add(now, DAY_MS, 1);
        let ten = s.orders_10s.entry(self.account).or_default();
        let ten = if day > limits.orders_per_day {
            ten.count(now, TEN_S_MS)
        } else {
            ten.add(now, TEN_S_MS, 1)
        };
        self.usage.orders = Some((ten, day));
    }

    /// `order.place`. Engine refusals read as Binance's: a LIMIT_MAKER that
    /// would cross -2010 "Order would immediately match and take."; a
    /// `newClientOrderId` of an open order -2010 "Duplicate order sent."
    /// ("The `clOrdId` is already in use"; "A new order with the same
    /// `clientOrderId` is accepted only when the previous one is filled or
    /// expired"); prices and sizes the engine cannot take, their filters'
    /// failures.
    fn place(&mut self, p: &Params<'_>) -> Result<String, Refusal> {
        let o = self.order(p)?;
        self.orders_room()?;
        let r = self.submit(&o);
        if r.is_ok() {
            self.count_order();
        }
        r
    }

    /// Places a checked order: its answer in its `newOrderRespType`'s
    /// shape.
    fn submit(&mut self, o: &Order) -> Result<String, Refusal> {
        let client_id = o
            .client_id
            .clone()
            .unwrap_or_else(|| self.api.generate_id());
        let new = NewOrder {
            account: self.account,
            instrument: o.instrument,
            buy: o.buy,
            price: o.price,
            size: o.size,
            tif: o.tif,
            post_only: o.kind == OrderType::LimitMaker,
            client_id,
        };
        let before = self.market.exchange.events.len();
        let order = match self.market.place(new.clone(), self.now_ms) {
            Ok(order) => order,
            Err(EngineReject::Fok) => self.fok_expired(new),
            Err(e) => {
                return Err(match e {
                    EngineReject::WouldTake => rejected("Order would immediately match and take."),
                    EngineReject::DuplicateClientId => rejected("Duplicate order sent."),
                    EngineReject::BadPrice => filter_failure("PRICE_FILTER"),
                    EngineReject::BadSize => filter_failure("LOT_SIZE"),
                    _ => rejected("Unsupported order combination"),
                });
            }
        };
        // The trades it made as a taker, from the private events it queued.
        let fills: Vec<(i64, i64, u64)> = self.market.exchange.events[before..]
            .iter()
            .filter_map(|e| match e {
                PrivateEvent::Trade {
                    order: t,
                    trade_id,
                    price,
                    size,
                    ..
                } if t.id == order.id => Some((*price, *size, *trade_id)),
                _ => None,
            })
            .collect();
        let quote: i128 = fills
            .iter()
            .map(|(p, q, _)| i128::from(*p) * i128::from(*q))
            .sum();
        let meta = Meta {
            kind: o.kind,
            tif: o.tif,
            quote,
            last_trade: fills.iter().map(|f| f.2).max().unwrap_or(0),
            cancel_id: None,
            last: order.clone(),
        };
        let spec = &self.market.instruments[order.instrument];
        let mut s = String::with_capacity(512);
        let _ = write!(
            s,
            r#"{{"symbol":"{}","orderId":{},"orderListId":-1,"clientOrderId":{},"transactTime":{}"#,
            spec.symbol,
            order.id,
            json_str(&order.client_id),
            self.now_ms
        );
        if o.resp != Resp::Ack {
            s.push(',');
            report_fields(&mut s, &order, &meta, spec);
            let _ = write!(
                s,
                r#","workingTime":{},"selfTradePreventionMode":"NONE""#,
                order.created_ms
            );
        }
        if o.resp == Resp::Full {
            s.push_str(r#","fills":["#);
            for (k, (price, size, trade_id)) in fills.iter().enumerate() {
                if k > 0 {
                    s.push(',');
                }
                s.push_str(r#"{"price":"#);
                dec(&mut s, *price, spec.price_scale);
                s.push_str(r#","qty":"#);
                dec(&mut s, *size, spec.size_scale);
                let _ = write!(
                    s,
                    r#","commission":"0.00000000","commissionAsset":"{}","tradeId":{trade_id}}}"#,
                    quote_asset(spec)
                );
            }
            s.push(']');
        }
        s.push('}');
        let mut shared = self.api.shared();
        // What is kept of orders that left the book (for `order.status`)
        // is bounded: past the bound, it is forgotten, the working orders
        // kept.
        if shared.orders.len() >= KEPT_ORDERS {
            shared
                .orders
                .retain(|_, m| matches!(m.last.status, Status::New | Status::PartiallyFilled));
        }
        shared.orders.insert(order.id, meta);
        Ok(s)
    }

    /// A FOK order the book cannot fill whole. Binance accepts it and
    /// expires it ("`FOK` ... the order will expire unless it cannot be
    /// immediately filled for the entire quantity"; `enums.md` `EXPIRED`:
    /// "LIMIT FOK orders with no fill"): a 200 answer, status `EXPIRED`,
    /// and an `EXPIRED` execution report. The engine refuses such an order
    /// without giving it an id, so its id here is drawn from a range the
    /// engine's ids (from 1, one an order) never reach: 2^52 and up.
    fn fok_expired(&mut self, new: NewOrder) -> SimOrder {
        let id = {
            let mut s = self.api.shared();
            s.expired += 1;
            (1 << 52) + s.expired
        };
        let order = SimOrder {
            id,
            account: new.account,
            instrument: new.instrument,
            client_id: new.client_id,
            buy: new.buy,
            price: new.price,
            size: new.size,
            filled: 0,
            status: Status::Expired,
            created_ms: self.now_ms,
            updated_ms: self.now_ms,
        };
        self.market
            .exchange
            .events
            .push(PrivateEvent::Order(order.clone()));
        order
    }

    /// The open order of this account on `instrument` that `id` or
    /// `client_id` names (both: the id's, if it carries that client id:
    /// "the `orderId` is searched first, then the `origClientOrderId` from
    /// that result is checked against that order").
    fn find_open(
        &self,
        instrument: usize,
        id: Option<u64>,
        client_id: Option<&str>,
    ) -> Option<SimOrder> {
        self.market
            .open_orders(self.account, Some(instrument))
            .find(|o| id.is_none_or(|id| o.id == id) && client_id.is_none_or(|c| o.client_id == c))
            .cloned()
    }

    /// `order.cancel`: `symbol`, and `orderId` or `origClientOrderId`
    /// (neither: -1102 "Param '%s' or '%s' must be sent, but both were
    /// empty/null!"); an order not open (unknown, filled, cancelled, of
    /// another symbol) -2011 "Unknown order sent."; answered with the
    /// order's report, `clientOrderId` the cancel's `newClientOrderId`
    /// ("New ID for the canceled order. Automatically generated if not
    /// sent") and `origClientOrderId` the order's.
    fn cancel(&mut self, p: &Params<'_>) -> Result<String, Refusal> {
        let instrument = self.symbol(p)?;
        self.cancel_one(
            instrument,
            p,
            "orderId",
            "origClientOrderId",
            "newClientOrderId",
        )
    }

    fn cancel_one(
        &mut self,
        instrument: usize,
        p: &Params<'_>,
        id_name: &str,
        client_name: &str,
        new_name: &str,
    ) -> Result<String, Refusal> {
        let id = p.long(id_name)?;
        let client_id = p.text(client_name);
        if id.is_none() && client_id.is_none() {
            return Err(refuse(
                400,
                -1102,
                format!(
                    "Param '{client_name}' or '{id_name}' must be sent, but both were empty/null!"
                ),
            ));
        }
        let found = self
            .find_open(instrument, id, client_id.as_deref())
            .ok_or_else(unknown_order)?;
        let cancel_id = p.text(new_name).unwrap_or_else(|| self.api.generate_id());
        let order = self
            .market
            .cancel(self.account, found.id, self.now_ms)
            .map_err(|_| unknown_order())?;
        Ok(self.canceled(&order, cancel_id))
    }

    /// The report of a cancelled order (`order.cancel`'s result), its
    /// cancel's client id remembered for its `CANCELED` execution report.
    fn canceled(&self, order: &SimOrder, cancel_id: String) -> String {
        let spec = &self.market.instruments[order.instrument];
        let meta = {
            let mut s = self.api.shared();
            let meta = s.orders.entry(order.id).or_insert_with(|| Meta::of(order));
            meta.cancel_id = Some(cancel_id.clone());
            meta.last = order.clone();
            meta.clone()
        };
        let mut s = String::with_capacity(512);
        let _ = write!(
            s,
            r#"{{"symbol":"{}","origClientOrderId":{},"orderId":{},"orderListId":-1,"clientOrderId":{},"transactTime":{},"#,
            spec.symbol,
            json_str(&order.client_id),
            order.id,
            json_str(&cancel_id),
            self.now_ms
        );
        report_fields(&mut s, order, &meta, spec);
        s.push_str(r#","selfTradePreventionMode":"NONE"}"#);
        s
    }

    /// `order.cancelReplace`: "Filters and order count limits are
    /// evaluated before cancellation and order placement occurs"; "If new
    /// order placement is not attempted, your order count is still
    /// incremented"; `cancelReplaceMode` `STOP_ON_FAILURE` ("if
    /// cancellation request fails, new order placement will not be
    /// attempted") or `ALLOW_FAILURE`. Both done: 200 with
    /// `cancelResult`, `newOrderResult`, `cancelResponse`,
    /// `newOrderResponse`; one failed: 409 -2021 "Order cancel-replace
    /// partially failed."; none done: 400 -2022 "Order cancel-replace
    /// failed.", each with the same four under `error.data`, a failed
    /// half as its `{"code","msg"}` and one not attempted `null`.
    fn cancel_replace(&mut self, p: &Params<'_>) -> Result<String, Refusal> {
        let stop_on_failure = match p.required("cancelReplaceMode")?.as_str() {
            "STOP_ON_FAILURE" => true,
            "ALLOW_FAILURE" => false,
            _ => return Err(mandatory("cancelReplaceMode")),
        };
        let o = self.order(p)?;
        self.orders_room()?;
        self.count_order();
        let cancel = self.cancel_one(
            o.instrument,
            p,
            "cancelOrderId",
            "cancelOrigClientOrderId",
            "cancelNewClientOrderId",
        );
        let placed = if cancel.is_err() && stop_on_failure {
            None
        } else {
            Some(self.submit(&o))
        };
        let half = |r: &Result<String, Refusal>| match r {
            Ok(body) => ("SUCCESS", body.clone()),
            Err(e) => (
                "FAILURE",
                format!(r#"{{"code":{},"msg":{}}}"#, e.code, json_str(&e.msg)),
            ),
        };
        let (cancel_result, cancel_body) = half(&cancel);
        let (new_result, new_body) = match &placed {
            None => ("NOT_ATTEMPTED", "null".to_string()),
            Some(r) => half(r),
        };
        let body = format!(
            r#"{{"cancelResult":"{cancel_result}","newOrderResult":"{new_result}","cancelResponse":{cancel_body},"newOrderResponse":{new_body}}}"#
        );
        match (cancel.is_ok(), placed.as_ref().is_some_and(Result::is_ok)) {
            (true, true) => Ok(body),
            (false, false) => Err(Refusal {
                status: 400,
                code: -2022,
                msg: "Order cancel-replace failed.".into(),
                data: Some(body),
            }),
            _ => Err(Refusal {
                status: 409,
                code: -2021,
                msg: "Order cancel-replace partially failed.".into(),
                data: Some(body),
            }),
        }
    }

    /// `order.status`: an open order, or one this simulator has seen
    /// leave the book; by `orderId` or `origClientOrderId` (both: they
    /// must name the same order, else -2039 "Client order ID is not
    /// correct for this order ID.", changelog 2025-04-08); none: -2013
    /// "Order does not exist."
    fn order_status(&mut self, p: &Params<'_>) -> Result<String, Refusal> {
        let instrument = self.symbol(p)?;
        let id = p.long("orderId")?;
        let client_id = p.text("origClientOrderId");
        if id.is_none() && client_id.is_none() {
            return Err(refuse(
                400,
                -1102,
                "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!",
            ));
        }
        let open = self.find_open(instrument, id, None).or_else(|| {
            id.is_none()
                .then(|| self.find_open(instrument, None, client_id.as_deref()))
                .flatten()
        });
        let order = open.or_else(|| {
            let s = self.api.shared();
            s.orders
                .values()
                .filter(|m| m.last.account == self.account && m.last.instrument == instrument)
                .filter(|m| id.is_none_or(|id| m.last.id == id))
                .filter(|m| id.is_some() || client_id.as_deref() == Some(&m.last.client_id))
                .max_by_key(|m| m.last.id)
                .map(|m| m.last.clone())
        });
        let order = order.ok_or_else(|| refuse(400, -2013, "Order does not exist."))?;
        if id.is_some() && client_id.as_deref().is_some_and(|c| c != order.client_id) {
            return Err(refuse(
                400,
                -2039,
                "Client order ID is not correct for this order ID.",
            ));
        }
        Ok(self.status_report(&order))
    }

    /// An order in `order.status`'s shape (`openOrders.status` lists the
    /// same).
    fn status_report(&self, order: &SimOrder) -> String {
        let spec = &self.market.instruments[order.instrument];
        let meta = self
            .api
            .shared()
            .orders
            .get(&order.id)
            .cloned()
            .unwrap_or_else(|| Meta::of(order));
        let mut s = String::with_capacity(512);
        let _ = write!(
            s,
            r#"{{"symbol":"{}","orderId":{},"orderListId":-1,"clientOrderId":{},"#,
            spec.symbol,
            order.id,
            json_str(&order.client_id),
        );
        report_fields(&mut s, order, &meta, spec);
        let working = matches!(order.status, Status::New | Status::PartiallyFilled);
        let _ = write!(
            s,
            r#","stopPrice":"0.00000000","icebergQty":"0.00000000","time":{},"updateTime":{},"isWorking":{working},"workingTime":{},"selfTradePreventionMode":"NONE"}}"#,
            order.created_ms, order.updated_ms, order.created_ms
        );
        s
    }

    /// `openOrders.status`: `symbol` optional ("If omitted, open orders
    /// for all symbols are returned"), "a flat list".
    fn open_orders(&mut self, p: &Params<'_>) -> Result<String, Refusal> {
        let instrument = if p.has("symbol") {
            Some(self.symbol(p)?)
        } else {
            None
        };
        let orders: Vec<SimOrder> = self
            .market
            .open_orders(self.account, instrument)
            .cloned()
            .collect();
        let items: Vec<String> = orders.iter().map(|o| self.status_report(o)).collect();
        Ok(format!("[{}]", items.join(",")))
    }

    /// `openOrders.cancelAll`: "Cancel all open orders on a symbol",
    /// answered with one `order.cancel` report each. With none open the
    /// venue answers 400 -2011 "Unknown order sent." (its REST twin
    /// `DELETE /api/v3/openOrders` does: binance/binance-connector-python
    /// issue 185, python-binance issue 533).
    fn cancel_all(&mut self, p: &Params<'_>) -> Result<String, Refusal> {
        let instrument = self.symbol(p)?;
        let open: Vec<u64> = self
            .market
            .open_orders(self.account, Some(instrument))
            .map(|o| o.id)
            .collect();
        if open.is_empty() {
            return Err(unknown_order());
        }
        let mut items = Vec::with_capacity(open.len());
        for id in open {
            if let Ok(order) = self.market.cancel(self.account, id, self.now_ms) {
                let cancel_id = self.api.generate_id();
                items.push(self.canceled(&order, cancel_id));
            }
        }
        Ok(format!("[{}]", items.join(",")))
    }
}

impl Meta {
    /// What is known of an order first seen in an event.
    pub(super) fn of(order: &SimOrder) -> Meta {
        Meta {
            kind: OrderType::Limit,
            tif: Tif::Gtc,
            quote: 0,
            last_trade: 0,
            cancel_id: None,
            last: order.clone(),
        }
    }
}

/// A JSON string.
pub(super) fn json_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// The instrument's quote asset, as `exchangeInfo` lists it.
pub(super) fn quote_asset(spec: &SimInstrument) -> String {
    crate::Listing::of(tickwire_venues::Venue::BinanceSpot, spec).quote
}

/// The fields every order report shares, from `price` to `side`.
fn report_fields(s: &mut String, order: &SimOrder, meta: &Meta, spec: &SimInstrument) {
    s.push_str(r#""price":"#);
    let price = if meta.kind == OrderType::Market {
        0
    } else {
        order.price
    };
    dec(s, price, spec.price_scale);
    s.push_str(r#","origQty":"#);
    dec(s, order.size, spec.size_scale);
    s.push_str(r#","executedQty":"#);
    dec(s, order.filled, spec.size_scale);
    s.push_str(r#","origQuoteOrderQty":"0.00000000","cummulativeQuoteQty":"#);
    quote(s, meta.quote, spec);
    let _ = write!(
        s,
        r#","status":"{}","timeInForce":"{}","type":"{}","side":"{}""#,
        status_name(order.status),
        tif_name(meta.tif),
        meta.kind.name(),
        if order.buy { "BUY" } else { "SELL" }
    );
}

impl WsApi {
    /// A client order id for a request that sent none ("Automatically
    /// generated if not sent"): 22 characters, as Binance's are.
    pub(super) fn generate_id(&self) -> String {
        let mut s = self.shared();
        s.generated += 1;
        format!("sim{:019}", s.generated)
    }
}
