//! What the venue says, into [`OrderEvent`]s: answers to the session's
//! requests (`web-socket-api.md`, "Response format": `id`, `status`,
//! `result` or `error {code, msg}`, `rateLimits`) and the user data
//! stream's events on the same connection ("Event format":
//! `{"subscriptionId": N, "event": {...}}`; `user-data-stream.md`, "Order
//! Update": `executionReport`). The rule that tells each piece of news
//! once is in the module's docs ([`super`]).

use simd_json::tape::Value;
use tickwire_venues::InstrumentId;
use tickwire_venues::decimal::parse_scaled;

use super::limits::{LimitKind, interval_ms};
use super::wire::{self, flag, integer, number, text};
use super::{ALL, Core, Stalled, Terms};
use crate::order::{ClientOrderId, OrderEvent, OrderKind, Reject, Side, TimeInForce, VenueOrderId};
use crate::orders::OpenOrder;
use crate::out::Out;
use crate::pending::{Asked, InFlight};
use crate::session::{Now, State};

/// The venue's order id (a number) as its text, without allocating.
fn venue_id(n: u64) -> VenueOrderId {
    let mut b = [0u8; 20];
    let mut i = b.len();
    let mut n = n;
    loop {
        i -= 1;
        b[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    VenueOrderId::new(core::str::from_utf8(&b[i..]).unwrap_or_default())
}

/// A price or quantity at `scale`, exactly; `None` for a negative one
/// (none is, on the venue's side, so the arithmetic on them cannot
/// overflow).
fn amount(text: &str, scale: u8) -> Option<i64> {
    parse_scaled(text.as_bytes(), scale)
        .ok()
        .filter(|v| *v >= 0)
}

/// A side as the venue writes it.
fn side(text: &str) -> Option<Side> {
    match text {
        "BUY" => Some(Side::Bid),
        "SELL" => Some(Side::Ask),
        _ => None,
    }
}

/// A venue time in ms as ns (0: none given).
fn ns(ms: Option<u64>) -> u64 {
    ms.unwrap_or(0).saturating_mul(1_000_000)
}

/// The order statuses after which an order no longer works
/// (`enums.md`, "Order status").
fn ended(status: &str) -> bool {
    matches!(
        status,
        "CANCELED" | "EXPIRED" | "EXPIRED_IN_MATCH" | "REJECTED" | "PENDING_CANCEL"
    )
}

/// Whether a refusal leaves the request's outcome unknown: a 5xx status,
/// or -1006 `UNEXPECTED_RESP` / -1007 `TIMEOUT`.
fn unknown(status: u64, code: i64) -> bool {
    status >= 500 || matches!(code, -1006 | -1007)
}

/// The refusal an `error` object (or an inner `{code, msg}` of a
/// cancel-replace's `data`) stands for.
fn refusal(status: u64, error: &Value<'_, '_>) -> Reject {
    let code = integer(error, "code").unwrap_or(0);
    wire::reject(status, code, text(error, "msg").unwrap_or_default())
}

impl Core {
    /// One message: an event of the user data stream, or an answer.
    /// `false`: not a message of the API.
    pub(super) fn on_message(
        &mut self,
        doc: &Value<'_, '_>,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) -> bool {
        if let Some(event) = doc.get("event") {
            return self.on_event(&event, events);
        }
        let Some(status) = number(doc, "status") else {
            return false;
        };
        // The request answered leaves the table first, so what is still
        // in flight is what the venue's counts do not include yet.
        let answered = number(doc, "id").and_then(|id| self.pending.answer(id));
        if let Some(limits) = doc.get("rateLimits").and_then(|l| l.as_array()) {
            let (weight, orders) = self.in_flight();
            for l in limits.iter() {
                self.observe(&l, weight, orders, now);
            }
        }
        let error = doc.get("error");
        let Some(asked) = answered else {
            // An answer to no request in flight: from before a reconnect,
            // or the venue revoking the session ("id": null, -2015, in
            // "Session Authentication").
            if let Some(code) = error.as_ref().and_then(|e| integer(e, "code"))
                && wire::is_auth(code)
                && number(doc, "id").is_none()
            {
                self.state = State::Refused { code };
            }
            return true;
        };
        match (error, doc.get("result")) {
            (Some(e), _) => self.on_refusal(asked, status, &e, now, events),
            (None, Some(r)) => self.on_result(asked, &r, now, out, events),
            (None, None) => return false,
        }
        true
    }

    /// One `rateLimits` entry.
    fn observe(&mut self, l: &Value<'_, '_>, weight: u64, orders: u64, now: Now) {
        let (Some(kind), Some(interval), Some(num), Some(limit), Some(count)) = (
            text(l, "rateLimitType"),
            text(l, "interval"),
            number(l, "intervalNum"),
            number(l, "limit"),
            number(l, "count"),
        ) else {
            return;
        };
        let (kind, in_flight) = match kind {
            "REQUEST_WEIGHT" => (LimitKind::RequestWeight, weight),
            "ORDERS" => (LimitKind::Orders, orders),
            _ => return,
        };
        if let Some(ms) = interval_ms(interval, num) {
            self.limits
                .observe(kind, ms, limit, count, in_flight, now.unix_ms);
        }
    }

    /// A request's success.
    fn on_result(
        &mut self,
        f: InFlight,
        result: &Value<'_, '_>,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) {
        match f.asked {
            Asked::Login => {
                if self.credentials.is_ed25519() {
                    self.subscribe(now, out);
                } else {
                    // `userDataStream.subscribe.signature` answered.
                    self.subscription = number(result, "subscriptionId");
                    self.reconcile(now, out);
                }
            }
            Asked::Setup => {
                self.subscription = number(result, "subscriptionId");
                self.reconcile(now, out);
            }
            Asked::OpenOrders(_) => {
                if let Some(list) = result.as_array() {
                    for o in list.iter() {
                        self.adopt(&o, events);
                    }
                }
                self.reconciled(now, events);
            }
            Asked::Place(cid) => self.order_result(result, Some(cid), f.sent_tsc, events),
            Asked::Amend(old, new) => {
                if let Some(c) = result.get("cancelResponse") {
                    self.order_result(&c, Some(old), f.sent_tsc, events);
                }
                if let Some(n) = result.get("newOrderResponse") {
                    self.order_result(&n, Some(new), f.sent_tsc, events);
                }
            }
            Asked::Cancel(cid) => self.order_result(result, Some(cid), f.sent_tsc, events),
            Asked::CancelAll(_) => {
                if let Some(list) = result.as_array() {
                    for o in list.iter() {
                        let cid = text(&o, "origClientOrderId").and_then(|c| self.cid(c));
                        if cid.is_some() {
                            self.order_result(&o, cid, f.sent_tsc, events);
                        }
                    }
                }
            }
            Asked::Other => {}
        }
    }

    /// Every open orders' request of the reconciliation answered: `Ready`,
    /// the orders known before and not found told `Canceled` (they ended
    /// while the connection was down, as Deribit's session tells them);
    /// or, if one was refused, the whole reconciliation again after the
    /// backoff. Never `Ready` with an instrument not reconciled.
    fn reconciled(&mut self, now: Now, events: &mut Vec<OrderEvent>) {
        let waiting = self
            .pending
            .iter()
            .any(|p| matches!(p.asked, Asked::OpenOrders(_)));
        if waiting || self.stalled.is_some() || self.state != State::Reconciling {
            return;
        }
        if self.redo {
            self.redo = false;
            let not_before = self.limits.blocked_until();
            self.retry(Stalled::Reconcile(0), not_before, now);
            return;
        }
        while let Some(cid) = self.unseen.pop() {
            let Some(o) = self.orders.get(cid).copied() else {
                continue;
            };
            self.emit(
                OrderEvent {
                    cid: Some(cid),
                    instrument: o.instrument,
                    venue_order: o.venue_order,
                    kind: OrderKind::Canceled,
                    venue_time_ns: 0,
                    sent_tsc: 0,
                },
                events,
            );
        }
        self.backoff_ms = super::BACKOFF_FIRST_MS;
        self.state = State::Ready;
    }

    /// A request's refusal (`error`), with the HTTP-like `status`.
    fn on_refusal(
        &mut self,
        f: InFlight,
        status: u64,
        error: &Value<'_, '_>,
        now: Now,
        events: &mut Vec<OrderEvent>,
    ) {
        let code = integer(error, "code").unwrap_or(0);
        // The outcome unknown is not a refusal (see below).
        let reason = if unknown(status, code) {
            Reject::Unknown {
                code: if code == 0 { status as i64 } else { code },
            }
        } else {
            refusal(status, error)
        };
        // 429 / 418 carry when the venue takes requests again
        // (`web-socket-api.md`, "Rate limits": `error.data.retryAfter`, a
        // unix ms time): nothing more is sent before (a request while
        // banned extends the ban).
        if (status == 429 || status == 418)
            && let Some(until) = error.get("data").and_then(|d| number(&d, "retryAfter"))
        {
            self.limits.block_until(until);
        }
        let rejected = |cid, instrument| OrderEvent {
            cid,
            instrument,
            venue_order: VenueOrderId::default(),
            kind: OrderKind::Rejected { reason },
            venue_time_ns: 0,
            sent_tsc: f.sent_tsc,
        };
        match f.asked {
            // The login or the subscription refused for the credentials
            // (`errors.md`: -1022 `INVALID_SIGNATURE`, -2014
            // `BAD_API_KEY_FMT`, -2015 `REJECTED_MBX_KEY`, -1002
            // `UNAUTHORIZED`): said once, as the session's state, and not
            // retried.
            Asked::Login | Asked::Setup if wire::is_auth(code) => {
                self.state = State::Refused { code };
            }
            // Any other refusal passes (-1021 the clock, -1003 / 429 / 418
            // the venue's load, -1007 a timeout, a 5xx): told as an event
            // without a client id, the step tried again after the backoff.
            Asked::Login | Asked::Setup => {
                let step = if f.asked == Asked::Login {
                    Stalled::Login
                } else {
                    Stalled::Subscribe
                };
                let not_before = self.limits.blocked_until();
                self.retry(step, not_before, now);
                events.push(rejected(None, InstrumentId(0)));
            }
            Asked::OpenOrders(i) => {
                if wire::is_auth(code) {
                    self.state = State::Refused { code };
                } else {
                    self.redo = true;
                }
                let at = if i == ALL { 0 } else { i };
                self.emit(rejected(None, InstrumentId(at)), events);
                self.reconciled(now, events);
            }
            // The execution status is unknown (`web-socket-api.md`,
            // "Status codes": a 5xx "does not necessarily mean that your
            // request has failed"; `errors.md`: -1006 and -1007, "execution
            // status unknown"): told, but the order's id is not taken for
            // finished, so a report of it, if it was placed, is news.
            Asked::Place(cid) | Asked::Amend(_, cid) if unknown(status, code) => {
                let at = self.instrument_of(cid);
                self.orders.unreserve(cid);
                events.push(rejected(Some(cid), at));
            }
            Asked::Place(cid) | Asked::Cancel(cid) => {
                let at = self.instrument_of(cid);
                self.emit(rejected(Some(cid), at), events);
            }
            Asked::Amend(old, new) => {
                let at = self.instrument_of(old);
                // `data` tells each half (`order.cancelReplace`'s
                // responses): a cancel that succeeded ended the old order;
                // the new order's refusal is its own, or the cancel's when
                // it was not attempted (STOP_ON_FAILURE).
                let data = error.get("data");
                let half = |key| data.as_ref().and_then(|d| d.get(key));
                let mut why = reason;
                if let Some(c) = half("cancelResponse") {
                    if text(&c, "status").is_some() {
                        self.order_result(&c, Some(old), f.sent_tsc, events);
                    } else if integer(&c, "code").is_some() {
                        why = refusal(status, &c);
                    }
                }
                if let Some(n) = half("newOrderResponse") {
                    if number(&n, "orderId").is_some() {
                        self.order_result(&n, Some(new), f.sent_tsc, events);
                        return;
                    }
                    if integer(&n, "code").is_some() {
                        why = refusal(status, &n);
                    }
                }
                let mut e = rejected(Some(new), at);
                e.kind = OrderKind::Rejected { reason: why };
                self.emit(e, events);
            }
            Asked::CancelAll(i) => {
                self.emit(rejected(None, InstrumentId(i.unwrap_or(0))), events);
            }
            Asked::Other => {}
        }
    }

    /// An order as an answer shows it (`order.place` with `FULL`,
    /// `order.cancel`, the halves of `order.cancelReplace`, the entries of
    /// `openOrders.cancelAll`): accepted if new to the session, its
    /// `fills` (trade ids not yet told; all taken on arrival, so not the
    /// maker), and its end if its status is final.
    fn order_result(
        &mut self,
        o: &Value<'_, '_>,
        cid: Option<ClientOrderId>,
        sent_tsc: u64,
        events: &mut Vec<OrderEvent>,
    ) {
        let Some(at) = text(o, "symbol").and_then(|s| self.symbol(s)) else {
            return;
        };
        let spec = &self.instruments[at as usize];
        let (ps, ss) = (spec.price_scale, spec.size_scale);
        let dec = |key, scale| text(o, key).and_then(|t| amount(t, scale));
        let event = |kind| OrderEvent {
            cid,
            instrument: InstrumentId(at),
            venue_order: number(o, "orderId").map(venue_id).unwrap_or_default(),
            kind,
            venue_time_ns: ns(number(o, "transactTime")),
            sent_tsc,
        };
        let status = text(o, "status").unwrap_or_default();
        let (price, size) = (dec("price", ps), dec("origQty", ss));
        if status != "CANCELED"
            && let (Some(s), Some(price), Some(size)) =
                (text(o, "side").and_then(side), price, size)
        {
            self.emit(
                event(OrderKind::Accepted {
                    side: s,
                    price,
                    size,
                }),
                events,
            );
        }
        if let (Some(fills), Some(size)) = (o.get("fills").and_then(|f| f.as_array()), size) {
            let mut done = 0i64;
            for f in fills.iter() {
                let (Some(p), Some(q), Some(t)) = (
                    text(&f, "price").and_then(|t| amount(t, ps)),
                    text(&f, "qty").and_then(|t| amount(t, ss)),
                    number(&f, "tradeId"),
                ) else {
                    continue;
                };
                done = done.saturating_add(q);
                let fill = OrderKind::Filled {
                    price: p,
                    size: q,
                    leaves: size.saturating_sub(done),
                    trade_id: t,
                    maker: false,
                };
                self.fill(done, event(fill), events);
            }
        }
        if ended(status) {
            self.emit(event(OrderKind::Canceled), events);
        }
    }

    /// An order found open when reconciling.
    fn adopt(&mut self, o: &Value<'_, '_>, events: &mut Vec<OrderEvent>) {
        let Some(cid) = text(o, "clientOrderId").and_then(|c| self.cid(c)) else {
            return;
        };
        let Some(at) = text(o, "symbol").and_then(|s| self.symbol(s)) else {
            return;
        };
        let spec = &self.instruments[at as usize];
        let (ps, ss) = (spec.price_scale, spec.size_scale);
        let dec = |key, scale| text(o, key).and_then(|t| amount(t, scale));
        let (Some(s), Some(price), Some(size), Some(filled)) = (
            text(o, "side").and_then(side),
            dec("price", ps),
            dec("origQty", ss),
            dec("executedQty", ss),
        ) else {
            return;
        };
        let order = OpenOrder {
            cid,
            instrument: InstrumentId(at),
            venue_order: number(o, "orderId").map(venue_id).unwrap_or_default(),
            side: s,
            price,
            leaves: size.saturating_sub(filled),
            filled,
        };
        // Known before the reconnect: still working, kept as the venue
        // shows it, and not told again as a new order.
        if let Some(at) = self.unseen.iter().position(|&c| c == cid) {
            self.unseen.swap_remove(at);
        }
        let known = self.orders.get(cid).is_some();
        if !self.orders.insert(order) || known {
            return;
        }
        let tif = match text(o, "timeInForce") {
            Some("IOC") => TimeInForce::ImmediateOrCancel,
            Some("FOK") => TimeInForce::FillOrKill,
            _ => TimeInForce::GoodTillCancel,
        };
        if self.terms.len() < self.terms.capacity() && !self.terms.iter().any(|t| t.cid == cid) {
            self.terms.push(Terms {
                cid,
                instrument: InstrumentId(at),
                tif,
                post_only: text(o, "type") == Some("LIMIT_MAKER"),
            });
        }
        events.push(OrderEvent {
            cid: Some(cid),
            instrument: order.instrument,
            venue_order: order.venue_order,
            kind: OrderKind::Accepted {
                side: s,
                price,
                size: order.leaves,
            },
            venue_time_ns: ns(number(o, "updateTime")),
            sent_tsc: 0,
        });
    }

    /// A user data stream event: `executionReport`s of this session's
    /// orders (and fills of the account's other orders, without a client
    /// id); `serverShutdown` noted ([`super::BinanceSession::server_shutting_down`]);
    /// the others (balances, ...) are not orders'.
    fn on_event(&mut self, ev: &Value<'_, '_>, events: &mut Vec<OrderEvent>) -> bool {
        match text(ev, "e") {
            Some("executionReport") => {}
            Some("serverShutdown") => {
                self.shutting_down = true;
                return true;
            }
            _ => return ev.as_object().is_some(),
        }
        self.on_report(ev, events).is_some()
    }

    /// One `executionReport` (`user-data-stream.md`, "Order Update";
    /// execution types in `enums.md`): `x` what happened, `c` the client
    /// id (`C` the original one when the report is of a cancel, for the
    /// cancel itself gets a new id), `S` side, `p` price, `q` quantity,
    /// `l` / `L` the last fill's quantity and price, `z` filled so far,
    /// `t` trade id, `m` maker, `i` order id, `T` transaction time.
    fn on_report(&mut self, ev: &Value<'_, '_>, events: &mut Vec<OrderEvent>) -> Option<()> {
        let Some(at) = self.symbol(text(ev, "s")?) else {
            return Some(()); // not a symbol the session trades
        };
        let spec = &self.instruments[at as usize];
        let (ps, ss) = (spec.price_scale, spec.size_scale);
        let dec = |key, scale| amount(text(ev, key)?, scale);
        let x = text(ev, "x")?;
        let original = text(ev, "C").filter(|c| !c.is_empty());
        let client = match x {
            "CANCELED" => original.or(text(ev, "c")),
            _ => text(ev, "c"),
        }?;
        let cid = self.cid(client);
        let sent_tsc = cid.map_or(0, |c| self.sent_about(c, x));
        let event = |kind| OrderEvent {
            cid,
            instrument: InstrumentId(at),
            venue_order: number(ev, "i").map(venue_id).unwrap_or_default(),
            kind,
            venue_time_ns: ns(number(ev, "T").or(number(ev, "E"))),
            sent_tsc,
        };
        let kind = match x {
            "NEW" => OrderKind::Accepted {
                side: side(text(ev, "S")?)?,
                price: dec("p", ps)?,
                size: dec("q", ss)?,
            },
            "TRADE" => {
                let trade_id = integer(ev, "t")?;
                let filled = dec("z", ss)?;
                let fill = OrderKind::Filled {
                    price: dec("L", ps)?,
                    size: dec("l", ss)?,
                    leaves: dec("q", ss)?.saturating_sub(filled),
                    trade_id: trade_id.max(0) as u64,
                    maker: flag(ev, "m")?,
                };
                self.fill(filled, event(fill), events);
                return Some(());
            }
            "CANCELED" | "EXPIRED" => OrderKind::Canceled,
            // Self-trade prevention (`faqs/stp_faq.md`; `user-data-stream.md`:
            // `v` the prevented match, `A` the quantity prevented so far,
            // `B` by this match): the order ends only when its status `X`
            // says so (`EXPIRED_IN_MATCH`, `EXPIRED`, `enums.md`); under
            // `DECREMENT` the larger order keeps working (`X` stays `NEW`
            // or `PARTIALLY_FILLED`) for its quantity less `A`, told as an
            // amend to that size.
            "TRADE_PREVENTION" => {
                if ended(text(ev, "X")?) {
                    OrderKind::Canceled
                } else {
                    OrderKind::Amended {
                        price: dec("p", ps)?,
                        size: dec("q", ss)?.saturating_sub(dec("A", ss).unwrap_or(0)),
                    }
                }
            }
            "REJECTED" => OrderKind::Rejected {
                reason: match text(ev, "r") {
                    Some("WOULD_MATCH_IMMEDIATELY") => Reject::WouldTake,
                    Some("INSUFFICIENT_BALANCES") => Reject::InsufficientFunds,
                    _ => Reject::Venue { code: 0 },
                },
            },
            "REPLACED" => OrderKind::Amended {
                price: dec("p", ps)?,
                size: dec("q", ss)?,
            },
            _ => return Some(()),
        };
        if cid.is_some() {
            self.emit(event(kind), events);
        }
        Some(())
    }

    /// A fill that brings the order's filled total to `filled`, told once
    /// whatever the burst: news only while `filled` is above what the
    /// session counted for the order (the venue's running total, `z` in
    /// an `executionReport`, `user-data-stream.md`: "Cumulative filled
    /// quantity"; in a `FULL` answer the sum of its `fills` so far, as an
    /// order's fills on arrival are its first), so an answer's fills and
    /// the same trades' reports, in either order, count once, with no
    /// window to overrun. An ended order's fills were all told before its
    /// end. The account's other orders' fills (without a client id) come
    /// only as reports, each once, and are all told.
    fn fill(&mut self, filled: i64, e: OrderEvent, events: &mut Vec<OrderEvent>) {
        if let Some(cid) = e.cid {
            let known = self.orders.get(cid).map_or(0, |o| o.filled);
            if self.finished.contains(cid) || filled <= known {
                return;
            }
        }
        self.emit(e, events);
    }

    /// The stamp of the request in flight that a report of `cid` answers
    /// first (0: none).
    fn sent_about(&self, cid: ClientOrderId, x: &str) -> u64 {
        self.pending
            .iter()
            .find(|p| match (x, p.asked) {
                ("NEW" | "TRADE" | "REJECTED", Asked::Place(c)) => c == cid,
                ("NEW" | "TRADE" | "REJECTED", Asked::Amend(_, c)) => c == cid,
                ("CANCELED", Asked::Cancel(c) | Asked::Amend(c, _)) => c == cid,
                ("CANCELED", Asked::CancelAll(Some(i))) => {
                    self.orders.get(cid).is_some_and(|o| o.instrument.0 == i)
                }
                _ => false,
            })
            .map_or(0, |p| p.sent_tsc)
    }

    /// Tells `e` unless it is the echo of news told already (see the
    /// module's docs), and keeps the session's table of orders by it.
    fn emit(&mut self, e: OrderEvent, events: &mut Vec<OrderEvent>) {
        if let Some(cid) = e.cid {
            let echo = match e.kind {
                OrderKind::Accepted { .. } => {
                    self.orders.get(cid).is_some() || self.finished.contains(cid)
                }
                OrderKind::Canceled | OrderKind::Rejected { .. } => self.finished.contains(cid),
                _ => false,
            };
            if echo {
                return;
            }
            self.orders.apply(&e);
            let over = match e.kind {
                OrderKind::Canceled => true,
                OrderKind::Rejected { .. } => self.orders.get(cid).is_none(),
                OrderKind::Filled { leaves, .. } => leaves <= 0,
                _ => false,
            };
            if over {
                self.orders.remove(cid);
                self.finished.push(cid);
                if let Some(at) = self.terms.iter().position(|t| t.cid == cid) {
                    self.terms.swap_remove(at);
                }
            }
        }
        events.push(e);
    }

    /// The instrument of one of the session's orders, working or asked
    /// for.
    fn instrument_of(&self, cid: ClientOrderId) -> InstrumentId {
        match self.orders.get(cid) {
            Some(o) => o.instrument,
            None => self
                .terms
                .iter()
                .find(|t| t.cid == cid)
                .map_or(InstrumentId(0), |t| t.instrument),
        }
    }

    /// The index of the instrument the venue calls `symbol`.
    fn symbol(&self, symbol: &str) -> Option<u32> {
        self.instruments
            .iter()
            .position(|i| i.symbol == symbol)
            .map(|i| i as u32)
    }
}
