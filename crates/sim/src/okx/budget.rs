//! The WebSocket request budgets the simulated venues enforce, and the
//! handle a test or the demo changes them through while the simulator
//! runs ([`RequestBudget`], [`crate::SimConfig::request_budget`]).
//!
//! - OKX counts the `subscribe`, `unsubscribe` and `login` requests of
//!   each connection: "The total number of 'subscribe'/'unsubscribe'/
//!   'login' requests per connection is limited to 480 times per hour";
//!   "WebSocket login and subscription rate limits are based on
//!   connection" (API v5 docs, "WebSocket > Connect"). A request is a
//!   frame, however many `args` it carries (one request subscribes "one
//!   or more channels", "Subscribe"). Counted here over a sliding hour:
//!   a fixed hour never holds more than a sliding one does.
//! - Coinbase Advanced Trade counts the messages of an address: "Advanced
//!   Trade API WebSocket unauthenticated messages are rate-limited at 8
//!   per second per IP address" ("Advanced Trade WebSocket Rate
//!   Limits"), over every connection from it; here more than 8 in any one
//!   second (a sliding second, the strictest reading). Every client of
//!   the simulator comes from one address, loopback: all of them are
//!   counted together.
//!
//! What either venue does to a client over its budget is not documented.
//! OKX's only recorded answer is an error event, `{"event":"error","msg":
//! "Requests too frequent","code":"60014","connId":"5f3f787a"}` (ccxt issue
//! 25373); nothing recorded says it closes the connection. The simulator
//! answers so and then closes the connection (1008), as tickwire's issue
//! 27 asks ("a budget breach closes the connection, as the venue does"):
//! a client that respects the budget never finds out which it is, and one
//! that does not is told at once. Coinbase's answer is unknown: the
//! connection whose message went over is closed (1008), with no error
//! frame. Both close codes and texts are the simulator's own.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::server::lock;

/// OKX's budget: 480 requests a connection in any hour.
pub(crate) const OKX: (u32, Duration) = (480, Duration::from_secs(3600));

/// Coinbase's budget: 8 messages an address in any second.
pub(crate) const COINBASE: (u32, Duration) = (8, Duration::from_secs(1));

/// A venue's WebSocket request budget, as the simulator enforces it (see
/// the module's text): the venue's documented one, or one set in its
/// place; changed at any time through any clone, which shares it.
#[derive(Clone, Debug, Default)]
pub struct RequestBudget {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Requests in any window of this length, instead of the venue's own.
    limit: Mutex<Option<(u32, Duration)>>,
    /// Clients closed for going over it.
    breaches: AtomicU64,
}

impl RequestBudget {
    /// The venue's own documented budget (OKX: 480 requests a connection
    /// an hour; Coinbase: 8 messages an address a second; the other
    /// venues' are not enforced by this).
    pub fn venue() -> RequestBudget {
        RequestBudget::default()
    }

    /// At most `requests` in any `window` instead of the venue's own
    /// (counted as the venue counts: OKX's requests a connection,
    /// Coinbase's messages an address).
    pub fn new(requests: u32, window: Duration) -> RequestBudget {
        let budget = RequestBudget::default();
        budget.set(Some((requests, window)));
        budget
    }

    /// Changes it, while the simulator runs too: `requests` in any
    /// `window`, or (`None`) the venue's own again. What was counted
    /// stays counted.
    pub fn set(&self, limit: Option<(u32, Duration)>) {
        *lock(&self.shared.limit) = limit;
    }

    /// What it is now: the one set, or `own`, the venue's.
    pub(crate) fn limit_or(&self, own: (u32, Duration)) -> (u32, Duration) {
        lock(&self.shared.limit).unwrap_or(own)
    }

    /// Clients the simulator closed for going over it.
    pub fn breaches(&self) -> u64 {
        self.shared.breaches.load(Ordering::Relaxed)
    }

    /// A client went over it (and is closed).
    pub(crate) fn breached(&self) {
        self.shared.breaches.fetch_add(1, Ordering::Relaxed);
    }
}

impl super::Okx {
    /// OKX with `budget` in place of its documented request budget (the
    /// same handle: it may change while the simulator runs).
    pub(crate) fn with_budget(mut self, budget: RequestBudget) -> super::Okx {
        self.budget = budget;
        self
    }

    /// A request of `op` from `client` at `now`: whether it is within the
    /// connection's budget (not a `subscribe`, `unsubscribe` or `login`:
    /// not counted). One over it marks the client, to be closed.
    pub(crate) fn admit(&self, client: &mut super::Client, op: Option<&str>, now: Instant) -> bool {
        if !matches!(op, Some("subscribe" | "unsubscribe" | "login"))
            || client.requests.admit(now, self.budget.limit_or(OKX))
        {
            return true;
        }
        client.over = true;
        self.budget.breached();
        false
    }
}

/// The requests of a sliding window, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Window {
    times: VecDeque<Instant>,
}

impl Window {
    /// A request at `at`: whether it is within the budget, `limit`
    /// requests in any `window` (the `window` up to it, it included).
    /// Counted if it is.
    pub(crate) fn admit(&mut self, at: Instant, (limit, window): (u32, Duration)) -> bool {
        while self
            .times
            .front()
            .is_some_and(|&t| at.saturating_duration_since(t) >= window)
        {
            self.times.pop_front();
        }
        if self.times.len() >= limit as usize {
            return false;
        }
        self.times.push_back(at);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_its_limit_and_lets_the_next_go_once_the_oldest_is_out_of_it() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut w = Window::default();
        for k in 0..3 {
            assert!(w.admit(t0 + s(k), (3, s(10))), "{k}");
        }
        // A fourth within 10 s of the first: over.
        assert!(!w.admit(t0 + s(9), (3, s(10))));
        // Refused, not counted: the first leaves the window at 10 s.
        assert!(w.admit(t0 + s(10), (3, s(10))));
        assert!(!w.admit(t0 + s(10), (3, s(10))));
        // A limit lowered to nothing refuses everything.
        assert!(!w.admit(t0 + s(100), (0, s(10))));
        // The handle: the venue's own until set, shared by its clones.
        let budget = RequestBudget::venue();
        assert_eq!(budget.limit_or(OKX), OKX);
        let clone = budget.clone();
        clone.set(Some((5, s(2))));
        assert_eq!(budget.limit_or(OKX), (5, s(2)));
        budget.breached();
        assert_eq!(clone.breaches(), 1);
        clone.set(None);
        assert_eq!(RequestBudget::new(1, s(1)).limit_or(COINBASE), (1, s(1)));
        assert_eq!(budget.limit_or(COINBASE), COINBASE);
    }
}

/// OKX's budget as its protocol keeps it.
#[cfg(test)]
mod okx {
    use std::time::{Duration, Instant};

    use tickwire_net::CloseCode;

    use super::RequestBudget;
    use crate::okx::Okx;
    use crate::okx::tests::{ask, client, json, market};
    use crate::protocol::{Out, Protocol, Tick};

    const SUB: &str = r#"{"op":"subscribe","args":[{"channel":"trades","instId":"BTC-USDT"}]}"#;
    const UNSUB: &str = r#"{"op":"unsubscribe","args":[{"channel":"trades","instId":"BTC-USDT"}]}"#;

    /// 480 requests in an hour are served; the 481st gets 60014 and the
    /// connection is closed at its next tick; nothing it sends after is
    /// read.
    #[test]
    fn the_481st_request_in_an_hour_is_refused_and_the_connection_closed() {
        let (okx, mut m) = (Okx::new(), market());
        let mut c = client(&okx, &m);
        // Requests of several arguments count once each (a frame is a
        // request).
        let two = r#"{"op":"subscribe","args":[{"channel":"trades","instId":"BTC-USDT"},{"channel":"bbo-tbt","instId":"BTC-USDT"}]}"#;
        for k in 0..480 {
            let text = match k % 3 {
                0 => SUB,
                1 => UNSUB,
                _ => two,
            };
            for r in ask(&okx, &mut c, &mut m, text) {
                assert!(!r.contains("60014"), "request {k}: {r}");
            }
            // A ping is no request.
            assert_eq!(ask(&okx, &mut c, &mut m, "ping"), ["pong"]);
        }
        let mut out = Out::default();
        assert_eq!(
            okx.on_tick(&mut c, Instant::now(), Duration::ZERO, &mut out),
            Tick::Keep
        );
        let replies = ask(
            &okx,
            &mut c,
            &mut m,
            r#"{"id":"481","op":"subscribe","args":[{"channel":"books","instId":"ETH-USDT"}]}"#,
        );
        assert_eq!(replies.len(), 1, "{replies:?}");
        let e = json(&replies[0]);
        assert_eq!(
            (&e["id"], &e["event"], &e["code"], &e["msg"]),
            (
                &json(r#""481""#),
                &json(r#""error""#),
                &json(r#""60014""#),
                &json(r#""Requests too frequent""#)
            )
        );
        assert!(c.books.is_empty(), "the request was not served");
        assert_eq!(
            okx.on_tick(&mut c, Instant::now(), Duration::ZERO, &mut out),
            Tick::Close(CloseCode::POLICY_VIOLATION, "Requests too frequent")
        );
        assert!(ask(&okx, &mut c, &mut m, "ping").is_empty());
        assert_eq!(okx.budget.breaches(), 1);
        // Another connection has a budget of its own.
        let mut d = client(&okx, &m);
        assert_eq!(ask(&okx, &mut d, &mut m, SUB).len(), 1);
    }

    /// A budget set in place of OKX's (the simulator's configuration):
    /// the window slides, logins count, and it may change while clients
    /// are connected.
    #[test]
    fn a_budget_set_for_a_test_slides_and_changes_at_once() {
        let budget = RequestBudget::new(3, Duration::from_secs(10));
        let (okx, m) = (Okx::new().with_budget(budget.clone()), market());
        let (mut c, mut d, mut e) = (client(&okx, &m), client(&okx, &m), client(&okx, &m));
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let (sub, login) = (Some("subscribe"), Some("login"));
        assert!(okx.admit(&mut c, sub, at(0)));
        assert!(okx.admit(&mut c, login, at(1)));
        // Pings and anything else are not requests.
        for _ in 0..10 {
            assert!(okx.admit(&mut c, None, at(1)));
            assert!(okx.admit(&mut c, Some("ping"), at(1)));
        }
        assert!(okx.admit(&mut c, Some("unsubscribe"), at(2)));
        // The first is 10 s old: out of the window.
        assert!(okx.admit(&mut c, sub, at(10)));
        assert!(!okx.admit(&mut c, sub, at(10)));
        assert!(c.over);
        // Lowered to nothing while a client is connected: its next request
        // is over.
        budget.set(Some((0, Duration::from_secs(10))));
        assert!(!okx.admit(&mut d, sub, at(11)));
        assert_eq!(budget.breaches(), 2);
        // Back to OKX's own.
        budget.set(None);
        assert!(okx.admit(&mut e, sub, at(13)));
    }
}
