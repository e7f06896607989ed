//! Deribit's answers and private-channel news read into events: one
//! event per fact (the rule is in the parent module's docs).
//!
//! - An answer echoes its request's `id` with `result` or `error`
//!   (JSON-RPC 2.0, docs.deribit.com "JSON-RPC").
//! - `user.orders.{instrument}.raw` sends one order object per message;
//!   the aggregated intervals send a list (ccxt `ts/src/pro/deribit.ts`,
//!   `handleOrders`: "if Array.isArray(data)").
//! - `user.trades.{instrument}.raw` sends a list of trades (the same file,
//!   `handleMyTrades`).
//! - `private/buy`, `sell` and `edit` answer `{order, trades}`;
//!   `private/cancel` answers the order; `cancel_all` and
//!   `cancel_all_by_instrument` the number cancelled;
//!   `get_open_orders_by_instrument` a list of orders (the methods' pages,
//!   mirrored at `rosssaunders/coincise:docs/deribit/endpoints/private/`).

use simd_json::prelude::{ValueAsScalar, ValueIntoString};
use simd_json::tape::{Array, Value};
use tickwire_venues::InstrumentId;

use super::wire::{self, OrderMsg, OrderState, TradeMsg};
use super::{Core, LOGIN_BACKOFF_MAX_MS, TOKEN_ROOM, send};
use crate::order::{ClientOrderId, OrderEvent, OrderKind, Reject, VenueOrderId};
use crate::orders::OpenOrder;
use crate::out::Out;
use crate::pending::{Asked, InFlight};
use crate::session::{Now, State};

impl Core {
    pub(super) fn handle(
        &mut self,
        doc: Value<'_, '_>,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) -> Option<()> {
        if let Some(method) = doc.get("method") {
            let params = doc.get("params")?;
            match method.into_string()? {
                "subscription" => self.notification(&params, events),
                "heartbeat" => {
                    if params.get("type").and_then(|t| t.into_string()) == Some("test_request") {
                        let _ = send(&mut self.pending, out, Asked::Other, now, wire::test);
                    }
                    Some(())
                }
                _ => Some(()),
            }
        } else {
            let id = doc.get("id")?.as_u64()?;
            // An answer to nothing in flight: a request of a connection
            // gone (ids never repeat), ignored.
            let Some(asked) = self.pending.answer(id) else {
                return Some(());
            };
            if let Some(error) = doc.get("error") {
                let code = error.get("code").and_then(|c| c.as_i64()).unwrap_or(0);
                self.refused(asked, code, now, out, events);
                Some(())
            } else {
                let result = doc.get("result")?;
                self.answered(asked.asked, asked.sent_tsc, &result, now, out, events)
            }
        }
    }

    fn notification(&mut self, params: &Value<'_, '_>, events: &mut Vec<OrderEvent>) -> Option<()> {
        let channel = params.get("channel")?.into_string()?;
        let data = params.get("data")?;
        if channel.starts_with("user.orders.") {
            // `raw` sends one order; an interval, a list of them.
            match data.as_array() {
                Some(list) => {
                    for o in list.iter() {
                        self.order_news(&o, None, None, events);
                    }
                }
                None => self.order_news(&data, None, None, events),
            }
        } else if channel.starts_with("user.trades.") {
            for t in data.as_array()?.iter() {
                let Some(t) = TradeMsg::read(&t, self.scales()) else {
                    continue;
                };
                self.fill(&t, None, events);
            }
        }
        Some(())
    }

    /// An order object's news (see the module's docs), with the trades of
    /// the same answer, if any; `sent_tsc` of the answer's request.
    fn order_news(
        &mut self,
        v: &Value<'_, '_>,
        trades: Option<Array<'_, '_>>,
        sent_tsc: Option<u64>,
        events: &mut Vec<OrderEvent>,
    ) {
        let Some(o) = OrderMsg::read(v, self.scales()) else {
            return;
        };
        let Some(cid) = wire::cid_of(o.label, &self.config.prefix).map(ClientOrderId) else {
            return;
        };
        let Some((instrument, _)) = self.instrument_of(o.instrument) else {
            return;
        };
        let event = |core: &Core, kind| OrderEvent {
            cid: Some(cid),
            instrument,
            venue_order: VenueOrderId::new(o.order_id),
            kind,
            venue_time_ns: o.time_ms.saturating_mul(1_000_000),
            sent_tsc: sent_tsc.unwrap_or_else(|| core.in_flight_tsc(cid, &kind)),
        };
        let has_trades = trades.as_ref().is_some_and(|t| !t.is_empty());
        match self.orders.get(cid).copied() {
            None if !self.is_done(cid)
                && (matches!(o.state, OrderState::Open | OrderState::Filled)
                    || (has_trades && o.state == OrderState::Cancelled)) =>
            {
                self.emit(
                    event(
                        self,
                        OrderKind::Accepted {
                            side: o.side,
                            price: o.price,
                            size: o.amount,
                        },
                    ),
                    events,
                );
            }
            Some(k)
                if o.state == OrderState::Open
                    && (k.price != o.price || k.leaves.saturating_add(k.filled) != o.amount) =>
            {
                self.emit(
                    event(
                        self,
                        OrderKind::Amended {
                            price: o.price,
                            size: o.amount,
                        },
                    ),
                    events,
                );
            }
            _ => {}
        }
        if let Some(trades) = trades {
            for t in trades.iter() {
                if let Some(t) = TradeMsg::read(&t, self.scales()) {
                    self.fill(&t, sent_tsc, events);
                }
            }
        }
        match o.state {
            OrderState::Cancelled if self.orders.known(cid) => {
                self.emit(event(self, OrderKind::Canceled), events);
            }
            OrderState::Rejected if self.orders.known(cid) => {
                self.emit(
                    event(
                        self,
                        OrderKind::Rejected {
                            reason: Reject::Venue { code: 0 },
                        },
                    ),
                    events,
                );
            }
            _ => {}
        }
    }

    /// A trade of one of the session's orders, once: a trade whose number
    /// (`trade_id`'s digits) is not above the last one applied to its
    /// order is one already told. Deribit numbers trades in sequence per
    /// currency ("trade_id: Unique (per currency) trade identifier",
    /// `private/buy`'s answer, docs.deribit.com), and both places a trade
    /// comes from (the request's answer, `user.trades`) list an order's
    /// trades in that sequence; no window of ids seen to overrun. A trade
    /// of an order that ended a moment ago (a cancel that crossed its
    /// fill) is still told, with nothing left.
    fn fill(&mut self, t: &TradeMsg<'_>, sent_tsc: Option<u64>, events: &mut Vec<OrderEvent>) {
        let Some(cid) = wire::cid_of(t.label, &self.config.prefix).map(ClientOrderId) else {
            return;
        };
        if t.amount <= 0 {
            // Not a trade as documented (amounts are positive).
            self.unreadable += 1;
            return;
        }
        let (instrument, leaves) = match self.orders.get(cid) {
            Some(known) => (
                known.instrument,
                known.leaves.saturating_sub(t.amount).max(0),
            ),
            None => match self.ended(cid) {
                Some(e) => (e.instrument, 0),
                // Not known yet: the message that makes it known carries it.
                None => return,
            },
        };
        let number = tickwire_venues::deribit::trade_number(t.trade_id);
        if number <= self.last_trade(cid) {
            return;
        }
        self.set_last_trade(cid, number);
        let kind = OrderKind::Filled {
            price: t.price,
            size: t.amount,
            leaves,
            trade_id: number,
            maker: t.maker,
        };
        let sent_tsc = sent_tsc.unwrap_or_else(|| self.in_flight_tsc(cid, &kind));
        self.emit(
            OrderEvent {
                cid: Some(cid),
                instrument,
                venue_order: VenueOrderId::new(t.order_id),
                kind,
                venue_time_ns: t.time_ms.saturating_mul(1_000_000),
                sent_tsc,
            },
            events,
        );
    }

    fn answered(
        &mut self,
        asked: Asked,
        sent_tsc: u64,
        result: &Value<'_, '_>,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) -> Option<()> {
        match asked {
            Asked::Login => {
                // `expires_in`: the token's life in seconds; refreshed at 80 %.
                let expires_in = result
                    .get("expires_in")
                    .and_then(|e| e.as_u64())
                    .unwrap_or(0);
                self.refresh_at_ms =
                    Some(now.unix_ms.saturating_add(expires_in.saturating_mul(800)));
                self.login_retries = 0;
                self.refresh_token.clear();
                if let Some(t) = result.get("refresh_token").and_then(|t| t.into_string())
                    && t.len() <= TOKEN_ROOM
                {
                    self.refresh_token.push_str(t);
                }
                self.refreshing = false;
                self.login_is_refresh = false;
                if self.state == State::LoggingIn {
                    self.set_up(now, out);
                }
            }
            Asked::Setup => {
                // `private/subscribe` answers the channels it subscribed:
                // one missing (an instrument the venue does not list) would
                // leave its orders' news unheard.
                if let Some(channels) = result.as_array()
                    && channels.len() < 2 * self.config.instruments.len()
                {
                    self.setup_error = Some(0);
                }
                self.setup_answered();
            }
            Asked::OpenOrders(i) => {
                self.reconcile(InstrumentId(i), result.as_array()?, events);
                self.setup_answered();
            }
            Asked::Place(_) | Asked::Amend(..) | Asked::Cancel(_) => {
                // buy / sell / edit: `{order, trades}`; cancel: the order.
                let order = result.get("order").unwrap_or(*result);
                let trades = result.get("trades").and_then(|t| t.as_array());
                self.order_news(&order, trades, Some(sent_tsc), events);
            }
            Asked::CancelAll(_) => {
                // Asked with `detailed: true` ("the output format is changed
                // to include a list of all cancelled orders",
                // docs.deribit.com `private/cancel_all`): a list of reports,
                // each with its cancelled orders in `result`; each listed
                // order ends, and only those. A bare count (a venue that
                // ignores `detailed`) names none: each order's own
                // `user.orders` news ends it, so an order that filled
                // meanwhile keeps its fills.
                if let Some(reports) = result.as_array() {
                    for r in reports.iter() {
                        match r.get("result").and_then(|o| o.as_array()) {
                            Some(orders) => {
                                for o in orders.iter() {
                                    self.order_news(&o, None, Some(sent_tsc), events);
                                }
                            }
                            None => self.order_news(&r, None, Some(sent_tsc), events),
                        }
                    }
                }
            }
            Asked::Other => {}
        }
        Some(())
    }

    /// The venue's open orders of one instrument after a (re)connect.
    fn reconcile(
        &mut self,
        instrument: InstrumentId,
        list: Array<'_, '_>,
        events: &mut Vec<OrderEvent>,
    ) {
        let listed = |prefix: &str, cid: ClientOrderId| {
            list.iter().any(|v| {
                v.get("label")
                    .and_then(|l| l.into_string())
                    .and_then(|l| wire::cid_of(l, prefix))
                    == Some(cid.0)
            })
        };
        // Known orders the venue no longer lists ended meanwhile.
        let mut told = 0usize;
        let mut k = 0;
        while let Some(o) = self.nth_order(k) {
            if o.instrument == instrument && !listed(&self.config.prefix, o.cid) {
                self.emit(
                    OrderEvent {
                        cid: Some(o.cid),
                        instrument,
                        venue_order: o.venue_order,
                        kind: OrderKind::Canceled,
                        venue_time_ns: 0,
                        sent_tsc: 0,
                    },
                    events,
                );
                told += 1;
            } else {
                k += 1;
            }
        }
        // The orders new to the session, and the room to keep them: the
        // table's, and the caller's for events (at most a table's worth
        // per message), one kept for the word that some are not kept.
        let new = list
            .iter()
            .filter_map(|v| self.working(&v))
            .filter(|(_, cid)| self.orders.get(*cid).is_none())
            .count();
        let capacity = self.config.max_open_orders.max(1);
        let free = capacity.saturating_sub(self.orders.len());
        let mut room = free.min(capacity.saturating_sub(told));
        if new > room {
            room = room.min(capacity.saturating_sub(told + 1));
        }
        let mut untracked = 0u32;
        for v in list.iter() {
            let Some((o, cid)) = self.working(&v) else {
                continue;
            };
            let known = self.orders.get(cid).is_some();
            if !known && room == 0 {
                untracked = untracked.saturating_add(1);
                continue;
            }
            let order = OpenOrder {
                cid,
                instrument,
                venue_order: VenueOrderId::new(o.order_id),
                side: o.side,
                price: o.price,
                leaves: o.amount.saturating_sub(o.filled).max(0),
                filled: o.filled,
            };
            if !self.orders.insert(order) {
                untracked = untracked.saturating_add(1);
                continue;
            }
            if !known {
                room -= 1;
                events.push(OrderEvent {
                    cid: Some(cid),
                    instrument,
                    venue_order: VenueOrderId::new(o.order_id),
                    kind: OrderKind::Accepted {
                        side: o.side,
                        price: o.price,
                        size: o.amount,
                    },
                    venue_time_ns: o.time_ms.saturating_mul(1_000_000),
                    sent_tsc: 0,
                });
            }
        }
        self.untracked = self.untracked.saturating_add(untracked);
        if untracked > 0 {
            // Said once per reconciliation, typed: working at the venue,
            // not kept here (a cancel-all still ends them).
            events.push(OrderEvent {
                cid: None,
                instrument,
                venue_order: VenueOrderId::default(),
                kind: OrderKind::Rejected {
                    reason: Reject::Full,
                },
                venue_time_ns: 0,
                sent_tsc: 0,
            });
        }
    }

    /// An open order of this session in an open-orders answer.
    fn working<'i>(&self, v: &Value<'_, 'i>) -> Option<(OrderMsg<'i>, ClientOrderId)> {
        let o = OrderMsg::read(v, self.scales())?;
        let cid = wire::cid_of(o.label, &self.config.prefix).map(ClientOrderId)?;
        (o.state == OrderState::Open).then_some((o, cid))
    }

    fn refused(
        &mut self,
        flight: InFlight,
        code: i64,
        now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) {
        let (asked, sent_tsc) = (flight.asked, flight.sent_tsc);
        let rejected = |cid: Option<ClientOrderId>, instrument: InstrumentId| OrderEvent {
            cid,
            instrument,
            venue_order: VenueOrderId::default(),
            kind: OrderKind::Rejected {
                reason: wire::reject_of(code),
            },
            venue_time_ns: 0,
            sent_tsc,
        };
        match asked {
            Asked::Login if self.login_is_refresh => {
                // The refresh token was refused: log in afresh.
                self.refresh_token.clear();
                self.login(now, out);
            }
            Asked::Login if !wire::final_login_refusal(code) => {
                // The venue's state, not the credentials: tried again from
                // `on_timer`, after a wait doubling from 1 s (up to a cap),
                // not every second for as long as the venue is busy.
                let wait = (1000u64 << self.login_retries.min(16)).min(LOGIN_BACKOFF_MAX_MS);
                self.login_retries = self.login_retries.saturating_add(1);
                self.retry_login_at_ms = Some(now.unix_ms.saturating_add(wait));
            }
            Asked::Login => {
                self.refreshing = false;
                self.refresh_at_ms = None;
                self.state = State::Refused { code };
            }
            Asked::Setup | Asked::OpenOrders(_) => {
                self.setup_error = Some(code);
                self.setup_answered();
            }
            Asked::Place(cid) | Asked::Amend(cid, _) | Asked::Cancel(cid) => {
                // A placing is not in the table yet: its instrument was
                // kept with the request.
                let instrument = flight
                    .instrument
                    .or_else(|| self.orders.get(cid).map(|o| o.instrument))
                    .unwrap_or(InstrumentId(0));
                self.emit(rejected(Some(cid), instrument), events);
            }
            Asked::CancelAll(of) => {
                self.emit(rejected(None, InstrumentId(of.unwrap_or(0))), events);
            }
            Asked::Other => {}
        }
    }
}
