//! The trading connections on the feed's driver: a venue's session told
//! its connection opened, closed, each message and the timers; the
//! desk's requests submitted right after the handler that made them
//! returns; the kill switch. The sessions and the desk are `trading`'s;
//! this is where they meet the driver and the handler.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tickwire_net::{CloseCode, Conn, ConnId, Disconnect, Endpoint, Payload, Reconnect, Stamps};
use tickwire_trade::{Now, Out, Reject, Request, State};
use tickwire_tsc::Stage;

use super::{Core, Link};
use crate::live::update::OnEvent;
use crate::live::{Feed, FeedError, log::tickwire_log};
use crate::recording;
use crate::trading::{Trader, Trading, redact};

/// The wall clock, ms since the Unix epoch (signatures, token expiry).
fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// How many rounds of requests a handler's answers to refusals may make
/// within one message (each refusal is handed to the handler, which may
/// ask again): a bound, so a bot that retries a refusal at once cannot
/// spin the feed's thread; what it asked in the last round goes with the
/// next message.
const ROUNDS: usize = 4;

impl<H: OnEvent> Core<H> {
    fn now(&self) -> Now {
        Now {
            unix_ms: wall_ms(),
            tsc: self.clock.now(),
        }
    }

    /// Records a trading connection's message with its secrets blanked
    /// out (`trading::redact`), in the buffer kept for the recording's
    /// copies.
    pub(crate) fn record_trade(&mut self, kind: recording::Kind, id: ConnId, tsc: u64, msg: &[u8]) {
        if self.sinks.recording.is_none() {
            return;
        }
        let mut bytes = std::mem::take(&mut self.scratch);
        bytes.clear();
        bytes.extend_from_slice(msg);
        redact(&mut bytes);
        self.record(kind, id, tsc, &bytes);
        self.scratch = bytes;
    }

    /// Sends what trader `t`'s session wrote, on `conn` (its own
    /// connection, or another's callback's: queued to go as it returns);
    /// without one, it waits for the feed's chores (`Feed::trade_chores`).
    /// A message the driver's queue for other connections cannot take
    /// (full) is kept in the trader's backlog, in order with what follows
    /// it, and sent by the chores as the poll returns: never dropped.
    /// Whether all of it was handed to the driver.
    fn send_out(&mut self, t: usize, conn: Option<&mut Conn<'_>>) -> bool {
        let (Some(id), Some(conn)) = (self.trading.traders[t].conn, conn) else {
            return false;
        };
        if self.trading.traders[t].out.is_empty() {
            return self.trading.traders[t].backlog.is_empty();
        }
        // Taken out while sent (the recording borrows the core); an empty
        // `Out` holds no memory.
        let mut out = std::mem::replace(&mut self.trading.traders[t].out, Out::new(0, 0));
        let tsc = self.clock.now();
        let mut all = self.trading.traders[t].backlog.is_empty();
        for msg in out.iter() {
            if all {
                let sent = if conn.id() == id {
                    conn.send_text(msg)
                } else {
                    conn.send_text_to(id, msg)
                };
                match sent {
                    Ok(()) => {
                        self.record_trade(recording::Kind::Sent, id, tsc, msg.as_bytes());
                        continue;
                    }
                    // Its own connection's send buffer is full: said,
                    // and the connection closed by the chores (the
                    // session reconciles on the next open).
                    Err(why) if conn.id() == id => {
                        self.trade_send_failed(t, why);
                        continue;
                    }
                    Err(_) => all = false,
                }
            }
            self.keep(t, msg);
        }
        out.clear();
        self.trading.traders[t].out = out;
        all
    }

    /// Keeps `msg` in trader `t`'s backlog for the chores; a backlog full
    /// too (never expected: it holds a session call's worth) is said and
    /// ends the connection, so that the session forgets the request and
    /// reconciles with the venue on the next open (no slot stays stuck).
    fn keep(&mut self, t: usize, msg: &str) {
        let trader = &mut self.trading.traders[t];
        if trader
            .backlog
            .message(|m| std::fmt::Write::write_str(m, msg))
            .is_err()
        {
            self.trade_send_failed(t, tickwire_net::SendError::Full);
        }
    }

    /// A message of trader `t` that could not be handed to the driver:
    /// said (with its cause), and its connection closed so the session's
    /// requests in flight are forgotten and its orders read again.
    fn trade_send_failed(&mut self, t: usize, why: impl std::fmt::Display) {
        let trader = &mut self.trading.traders[t];
        trader.backlog.clear();
        trader.send_failed = true;
        let why = format_args!(
            "venue {}: a trading message could not be sent ({why}): the trading connection \
             is closed and opened again, and its orders read again",
            trader.name
        );
        tickwire_log(why);
        self.stats.venues[trader.venue].set_last_failure(why, Instant::now());
    }

    /// The requests the handler made, submitted to their sessions and
    /// their messages handed to the driver: on `conn`'s callback, as it
    /// returns. A request the session refuses goes back to the handler
    /// at once as a `Rejected` order event, in an update of its own venue.
    pub(super) fn submit_queued(&mut self, mut conn: Option<&mut Conn<'_>>) {
        for _ in 0..ROUNDS {
            let mut queue = std::mem::take(self.trading.queue.get_mut());
            if queue.is_empty() {
                *self.trading.queue.get_mut() = queue;
                return;
            }
            for q in queue.drain(..) {
                let now = self.now();
                let trader = &mut self.trading.traders[q.trader];
                match trader.session.submit(&q.request, now, &mut trader.out) {
                    Ok(()) => {
                        trader.sent(now.tsc);
                        let v = trader.venue;
                        let sent = self.send_out(q.trader, conn.as_deref_mut());
                        if sent && q.recv_tsc != 0 {
                            let ns = self
                                .calibration
                                .to_ns(self.clock.now().saturating_sub(q.recv_tsc));
                            self.venues[v].recorder.record_ns(Stage::TickToTrade, ns);
                        }
                    }
                    Err(reason) => {
                        let e = trader.refusal(&q.request, reason);
                        self.trading.refused.push((q.trader, e));
                    }
                }
            }
            *self.trading.queue.get_mut() = queue;
            if self.trading.refused.is_empty() || !H::EVENTS {
                self.trading.refused.clear();
                return;
            }
            self.deliver_refused();
        }
        // Still asking after every round: the rest waits for the next
        // message (or the next poll's chores), in the queue.
    }

    /// The refusals in `Trading::refused` to the handler, each venue's in
    /// an update of its own venue (in the order of the traders).
    fn deliver_refused(&mut self) {
        for t in 0..self.trading.traders.len() {
            let Trading {
                refused, orders, ..
            } = &mut self.trading;
            orders.clear();
            orders.extend(refused.iter().filter(|r| r.0 == t).map(|r| r.1));
            if !orders.is_empty() {
                let v = self.trading.traders[t].venue;
                self.deliver(v, 0);
            }
        }
        self.trading.refused.clear();
        self.trading.orders.clear();
    }

    /// At shutdown, before the kill switch's cancel-all is written: every
    /// request still queued goes back to the handler as `Rejected`
    /// (`NotReady`), none sent after the cancel-all. The desk takes no
    /// more (`Trading::closing`).
    fn refuse_queued(&mut self) {
        let mut queue = std::mem::take(self.trading.queue.get_mut());
        for q in queue.drain(..) {
            let e = self.trading.traders[q.trader].refusal(&q.request, Reject::NotReady);
            self.trading.refused.push((q.trader, e));
        }
        *self.trading.queue.get_mut() = queue;
        if H::EVENTS {
            self.deliver_refused();
        }
        self.trading.refused.clear();
    }

    /// The market-data loss kill switch of venue `v`: every book of the
    /// venue invalid after one was valid (gaps, resyncs, its lines down)
    /// cancels every order of its session, once until a book is valid
    /// again.
    pub(super) fn watch_market(&mut self, v: usize) {
        let Some(Some(t)) = self.trading.by_venue.get(v).copied() else {
            return;
        };
        if self.stopping {
            // The feed closes its lines: the kill switch's shutdown cause
            // has had its turn.
            return;
        }
        let state = &self.venues[v];
        let from = (state.base - self.first) as usize;
        let to = from + state.setup.instruments.len();
        let up = self.valid.get(from..to).is_some_and(|b| b.contains(&true));
        let trader = &mut self.trading.traders[t];
        let lost = trader.market_up && !up;
        trader.market_up = up;
        if lost && trader.kill.on_market_loss {
            tickwire_log(format_args!(
                "venue {}: every book of the venue is invalid (its market data is lost): \
                 the kill switch cancels every order",
                trader.name
            ));
            self.kill(t);
        }
    }

    /// Cancel-all on trader `t`'s session: owed until the session takes
    /// it (`kill_due`), now if it is ready, else as soon as it is
    /// (reconnected and reconciled).
    pub(super) fn kill(&mut self, t: usize) {
        let trader = &mut self.trading.traders[t];
        trader.kill_owed = true;
        trader.kill_due_ms = 0;
        self.kill_due(t);
    }

    /// The cancel-all the kill switch owes trader `t`, if its session is
    /// ready and its rate limit's wait is over: into the session's `out`
    /// (sent by the caller). A refusal for the client-side rate limit is
    /// tried again after its wait; any other is said, and the debt
    /// dropped.
    pub(crate) fn kill_due(&mut self, t: usize) {
        let now = self.now();
        let trader = &mut self.trading.traders[t];
        if !trader.kill_owed
            || trader.session.state() != State::Ready
            || now.unix_ms < trader.kill_due_ms
        {
            return;
        }
        let all = Request::CancelAll { instrument: None };
        match trader.session.submit(&all, now, &mut trader.out) {
            Ok(()) => {
                trader.kill_owed = false;
                trader.sent(now.tsc);
            }
            Err(Reject::RateLimited { retry_after_ms }) => {
                trader.kill_due_ms = now.unix_ms + retry_after_ms.max(1);
            }
            Err(why) => {
                trader.kill_owed = false;
                tickwire_log(format_args!(
                    "venue {}: the kill switch's cancel-all was refused: {why}",
                    trader.name
                ));
            }
        }
    }

    /// A trading connection opened: the session logs in.
    pub(super) fn trade_open(&mut self, t: usize, conn: &mut Conn<'_>) {
        let now = self.now();
        let url = std::mem::take(&mut self.trading.traders[t].url);
        self.record(recording::Kind::Opened, conn.id(), now.tsc, url.as_bytes());
        self.trading.traders[t].url = url;
        let trader = &mut self.trading.traders[t];
        trader.failed_told = false;
        trader.session.on_open(now, &mut trader.out);
        self.send_out(t, Some(conn));
        self.trade_state(t, conn);
    }

    /// A trading connection's message: its events to the handler, in an
    /// update of the venue (`Update::orders`), then what the handler
    /// asked.
    pub(super) fn trade_message(
        &mut self,
        t: usize,
        conn: &mut Conn<'_>,
        payload: Payload<'_>,
        stamps: Stamps,
    ) {
        let (buf, len) = payload.into_padded();
        self.record_trade(
            recording::Kind::Received,
            conn.id(),
            stamps.read_end,
            &buf[..len],
        );
        let now = self.now();
        let trader = &mut self.trading.traders[t];
        trader.events.clear();
        trader
            .session
            .on_text(buf, len, now, &mut trader.out, &mut trader.events);
        self.send_out(t, Some(conn));
        let Core {
            trading,
            venues,
            calibration,
            ..
        } = self;
        let trader = &mut trading.traders[t];
        let v = trader.venue;
        // Each request's round trip once: at the first event carrying its
        // stamp (`Trader::answered`), from the stamp it was submitted with
        // (just before its message was written and handed to the driver)
        // to this message's read.
        for i in 0..trader.events.len() {
            let e = trader.events[i];
            trading.orders.push(trader.feed_event(&e));
            if e.sent_tsc != 0 && trader.answered(e.sent_tsc) {
                let ns = calibration.to_ns(stamps.read_end.saturating_sub(e.sent_tsc));
                venues[v].recorder.record_ns(Stage::RoundTrip, ns);
            }
        }
        self.trade_state(t, conn);
        self.deliver(v, stamps.read_end);
        self.trading.orders.clear();
        self.submit_queued(Some(conn));
    }

    /// Looks at trader `t`'s session after it was told something: a
    /// refusal of its credentials is said once and ends its connection
    /// (not retried); a session ready again owes the kill switch's
    /// cancel-all if it was lost.
    fn trade_state(&mut self, t: usize, conn: &mut Conn<'_>) {
        let trader = &mut self.trading.traders[t];
        let state = trader.session.state();
        if state == trader.state {
            return;
        }
        trader.state = state;
        match state {
            State::Refused { code } if !trader.refused_told => {
                trader.refused_told = true;
                let why = format_args!(
                    "venue {}: the venue refused the trading session's credentials (its code \
                     {code}): no order can be sent; not retried (check the API key, its secret \
                     and its permissions, then start again)",
                    trader.name
                );
                tickwire_log(why);
                self.stats.venues[trader.venue].set_last_failure(why, Instant::now());
                let _ = conn.close(CloseCode::NORMAL, "credentials refused");
            }
            State::Ready => {
                let n = trader.session.open_orders().len();
                tickwire_log(format_args!(
                    "venue {}: trading session ready ({n} working orders found)",
                    trader.name
                ));
                if trader.kill_owed {
                    self.kill_due(t);
                    self.send_out(t, Some(conn));
                }
            }
            _ => {}
        }
    }

    /// A trading connection closed: the session forgets its requests in
    /// flight; it reconnects (with the driver's backoff) unless the feed
    /// stops or the venue refused its credentials.
    pub(super) fn trade_close(&mut self, t: usize, id: ConnId, reason: &Disconnect) -> Reconnect {
        let now = self.now();
        let was = self.trading.traders[t].state;
        let trader = &mut self.trading.traders[t];
        trader.session.on_close(now);
        trader.state = trader.session.state();
        // Its requests in flight are forgotten: so is what was not sent.
        trader.backlog.clear();
        trader.send_failed = false;
        trader.in_flight.clear();
        if self.stopping || trader.refused_told {
            self.links.remove(&id);
            return Reconnect::No;
        }
        if was != State::Disconnected {
            // At shutdown (the kill switch waiting), a session lost owes
            // its cancel-all again, whatever the loss's own rule.
            if trader.kill.on_session_loss || self.trading.closing {
                trader.kill_owed = true;
                trader.kill_due_ms = 0;
            }
            let why = format_args!(
                "venue {}: the trading connection to {} was lost ({reason}); reconnecting \
                 with backoff; no order is sent before the venue's open orders are read again{}",
                trader.name,
                trader.url,
                if trader.kill.on_session_loss {
                    ", then the kill switch cancels every order"
                } else {
                    ""
                }
            );
            tickwire_log(why);
            self.stats.venues[trader.venue].set_last_failure(why, Instant::now());
        } else if !trader.failed_told {
            // It never opened: said once until it does.
            trader.failed_told = true;
            let why = format_args!(
                "venue {}: the trading connection to {} failed ({reason}); trying again \
                 with backoff (said once until it opens)",
                trader.name, trader.url
            );
            tickwire_log(why);
            self.stats.venues[trader.venue].set_last_failure(why, Instant::now());
        }
        Reconnect::Yes
    }
}

impl<H: OnEvent> Feed<H> {
    /// Opens every trading venue's connection, unpaced (an order leaves
    /// at once: the session's own rate limiter keeps the venue's limits).
    pub(crate) fn connect_traders(&mut self) -> Result<(), FeedError> {
        for t in 0..self.driver.handler().trading.traders.len() {
            let url = self.driver.handler().trading.traders[t].url.clone();
            let endpoint = Endpoint::parse(&url).map_err(|e| super::super::bad_url(&url, e))?;
            let id = self
                .driver
                .connect(endpoint)
                .map_err(|e| FeedError::Io(std::io::Error::other(e)))?;
            let _ = self.driver.pace(id, Duration::ZERO);
            let core = self.driver.handler_mut();
            core.links.insert(id, Link::Trade(t));
            core.trading.traders[t].conn = Some(id);
        }
        Ok(())
    }

    /// Each session's timers (a token to refresh, a keep-alive), and what
    /// the sessions wrote outside a callback, sent.
    pub(crate) fn trade_chores(&mut self) {
        if !self.driver.handler_mut().trading.queue.get_mut().is_empty() {
            // Left from a handler's last round of refusals: into the
            // sessions' `out`, sent below.
            self.driver.handler_mut().submit_queued(None);
        }
        for t in 0..self.driver.handler().trading.traders.len() {
            let core = self.driver.handler_mut();
            core.kill_due(t);
            let now = core.now();
            let trader: &mut Trader = &mut core.trading.traders[t];
            let Some(id) = trader.conn else {
                continue;
            };
            if trader.state != State::Disconnected {
                trader.session.on_timer(now, &mut trader.out);
            }
            // What the driver's queue could not take first, then the rest,
            // in order; a send that fails is said and ends the connection.
            let mut failed = trader.send_failed.then_some(None);
            for which in [true, false] {
                let trader = &mut self.driver.handler_mut().trading.traders[t];
                let from = if which {
                    &mut trader.backlog
                } else {
                    &mut trader.out
                };
                if from.is_empty() {
                    continue;
                }
                let mut out = std::mem::replace(from, Out::new(0, 0));
                for msg in out.iter() {
                    if failed.is_some() {
                        break;
                    }
                    if let Err(e) = self.driver.send_text(id, msg) {
                        failed = Some(Some(e));
                        break;
                    }
                    self.driver.handler_mut().record_trade(
                        recording::Kind::Sent,
                        id,
                        now.tsc,
                        msg.as_bytes(),
                    );
                }
                out.clear();
                let trader = &mut self.driver.handler_mut().trading.traders[t];
                if which {
                    trader.backlog = out;
                } else {
                    trader.out = out;
                }
            }
            if let Some(why) = failed {
                let core = self.driver.handler_mut();
                if let Some(why) = why {
                    core.trade_send_failed(t, why);
                }
                core.trading.traders[t].send_failed = false;
                let _ = self
                    .driver
                    .close(id, CloseCode::NORMAL, "a message could not be sent");
            }
        }
    }

    /// The shutdown kill switch: cancel-all on every session whose kill
    /// switch says so (but one whose credentials the venue refused): now
    /// if it is ready, else once it is (reconnected and reconciled);
    /// then polls until none of them owes its cancel-all or holds a
    /// working order, or the longest `shutdown_wait` is up.
    pub(crate) fn kill_on_shutdown(&mut self) -> std::io::Result<()> {
        let core = self.driver.handler_mut();
        core.trading.closing = true;
        core.refuse_queued();
        let mut wait = Duration::ZERO;
        for t in 0..core.trading.traders.len() {
            let trader = &core.trading.traders[t];
            if !trader.kill.on_shutdown {
                continue;
            }
            match trader.session.state() {
                State::Refused { .. } => continue,
                State::Ready => {}
                _ => tickwire_log(format_args!(
                    "venue {}: at shutdown the trading session is not ready: its cancel-all \
                     is sent once it is (waiting up to {} ms)",
                    trader.name,
                    trader.kill.shutdown_wait.as_millis()
                )),
            }
            wait = wait.max(trader.kill.shutdown_wait);
            core.kill(t);
        }
        if wait.is_zero() {
            return Ok(());
        }
        // Sent by the chores (and tried again there if its rate limit
        // refused it).
        self.trade_chores();
        let deadline = Instant::now() + wait;
        let done = |core: &Core<H>| {
            core.trading.traders.iter().all(|t| {
                !t.kill.on_shutdown
                    || matches!(t.session.state(), State::Refused { .. })
                    || (!t.kill_owed
                        && t.session.state() == State::Ready
                        && t.session.open_orders().is_empty())
            })
        };
        while !done(self.driver.handler()) && Instant::now() < deadline {
            self.driver.poll_timeout(Duration::from_millis(5))?;
            self.trade_chores();
        }
        if !done(self.driver.handler()) {
            for t in &self.driver.handler().trading.traders {
                let left = t.session.open_orders().len();
                if t.kill.on_shutdown && t.kill_owed {
                    tickwire_log(format_args!(
                        "venue {}: at shutdown the trading session was not ready again within \
                         {} ms: the kill switch's cancel-all was not sent",
                        t.name,
                        t.kill.shutdown_wait.as_millis()
                    ));
                } else if t.kill.on_shutdown && left > 0 {
                    tickwire_log(format_args!(
                        "venue {}: at shutdown {left} orders were still working after {} ms \
                         of the kill switch's cancel-all",
                        t.name,
                        t.kill.shutdown_wait.as_millis()
                    ));
                }
            }
        }
        Ok(())
    }
}
