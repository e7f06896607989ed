//! A venue's REST request budget, shared by every book of the venue, so
//! that snapshot fetches never get the user's IP address banned.
//!
//! The venue counts request weight per fixed minute (Binance:
//! `REQUEST_WEIGHT` per `MINUTE`, see
//! [`plan::binance::rest_weight_per_minute`](tickwire_venues::plan::binance::rest_weight_per_minute)).
//! The budget is a token bucket holding half that limit and refilling at
//! half the limit a minute: within any one fixed minute it can spend at
//! most what it held at the start plus a minute's refill, the limit
//! itself, never more; and in the steady state it leaves the other half to
//! whatever else the user runs from the same address.
//!
//! A 429 (over the limit anyway: another program on the address) holds
//! every fetch of the venue for its `Retry-After` (the venue's own rule:
//! "the number of seconds required to wait ... to prevent a ban"); a 418
//! or 403 (banned) stops them until the ban's `Retry-After`, or for
//! [`RestBudget::BAN`] if it gives none.

use std::time::{Duration, Instant};

/// What a venue's REST budget says of a request now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Send it (its weight is spent).
    Now,
    /// Not before this.
    Later(Instant),
}

/// What a REST answer other than 200 did to the venue's fetches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// 429: over the venue's limit; every fetch waits this long.
    Throttled(Duration),
    /// 418 or 403: banned; no fetch for this long.
    Banned(Duration),
    /// Another error with a `Retry-After` (a 503 in maintenance): every
    /// fetch waits this long.
    Held(Duration),
    /// Another error: only the book's own backoff.
    Failed,
}

impl Refusal {
    /// How long every fetch of the venue waits, if at all.
    pub(crate) fn wait(self) -> Option<Duration> {
        match self {
            Refusal::Throttled(w) | Refusal::Banned(w) | Refusal::Held(w) => Some(w),
            Refusal::Failed => None,
        }
    }
}

/// A venue's REST request budget (see the module's text).
#[derive(Debug)]
pub(crate) struct RestBudget {
    capacity: f64,
    tokens: f64,
    /// Tokens a second.
    rate: f64,
    refilled: Instant,
    /// Nothing goes before this: a 429's or a ban's `Retry-After`.
    held_until: Option<Instant>,
    /// When the request told to wait may go: nothing lighter overtakes it
    /// before then (requests are admitted in the order asked).
    next: Option<Instant>,
}

impl RestBudget {
    /// How long fetches stop after a ban that does not say its end (the
    /// shortest ban Binance names is 2 minutes; Bybit's IP bans "usually
    /// 30 minutes").
    pub(crate) const BAN: Duration = Duration::from_secs(300);
    /// How long fetches wait after a 429 that does not say.
    pub(crate) const THROTTLE: Duration = Duration::from_secs(60);

    /// A budget for a venue allowing `per_minute` weight a minute (at
    /// least 2); full.
    pub(crate) fn new(per_minute: u32, now: Instant) -> RestBudget {
        let capacity = f64::from(per_minute.max(2)) / 2.0;
        RestBudget {
            capacity,
            tokens: capacity,
            rate: capacity / 60.0,
            refilled: now,
            held_until: None,
            next: None,
        }
    }

    /// The weight it holds when full: half the limit a minute.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> f64 {
        self.capacity
    }

    /// A budget that never holds anything back (a venue without a REST
    /// limit).
    pub(crate) fn unlimited(now: Instant) -> RestBudget {
        RestBudget {
            capacity: f64::INFINITY,
            tokens: f64::INFINITY,
            rate: 0.0,
            refilled: now,
            held_until: None,
            next: None,
        }
    }

    /// Spends `weight` if the budget has it now; otherwise says when it
    /// will.
    pub(crate) fn take(&mut self, weight: u32, now: Instant) -> Admit {
        if let Some(until) = self.held_until {
            if now < until {
                return Admit::Later(until);
            }
            self.held_until = None;
        }
        if let Some(at) = self.next {
            if now < at {
                return Admit::Later(at);
            }
            self.next = None;
        }
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.capacity);
        self.refilled = now;
        // A request heavier than the whole bucket goes once it is full.
        let weight = f64::from(weight).min(self.capacity);
        if self.tokens >= weight {
            self.tokens -= weight;
            return Admit::Now;
        }
        let wait = (weight - self.tokens) / self.rate;
        let at = now + Duration::from_secs_f64(wait);
        self.next = Some(at);
        Admit::Later(at)
    }

    /// A request was answered `status` (not 200), with `retry_after`, at
    /// `now`: what that means for every fetch of the venue, held
    /// accordingly.
    pub(crate) fn refused(
        &mut self,
        status: u16,
        retry_after: Option<Duration>,
        now: Instant,
    ) -> Refusal {
        let refusal = match (status, retry_after) {
            (429, wait) => Refusal::Throttled(wait.unwrap_or(Self::THROTTLE)),
            // Binance's 418, a firewall's or Bybit's 403.
            (418 | 403, wait) => Refusal::Banned(wait.unwrap_or(Self::BAN)),
            (_, Some(wait)) => Refusal::Held(wait),
            (_, None) => Refusal::Failed,
        };
        if let Some(wait) = refusal.wait() {
            self.hold(now, now + wait);
        }
        refusal
    }

    /// Gives back `weight` taken for a request that could not be sent.
    pub(crate) fn refund(&mut self, weight: u32) {
        self.tokens = (self.tokens + f64::from(weight)).min(self.capacity);
    }

    /// Holds every request until `until` (a `Retry-After` received at
    /// `now`), and empties the bucket: what it held was not the venue's
    /// count.
    pub(crate) fn hold(&mut self, now: Instant, until: Instant) {
        self.held_until = Some(self.held_until.map_or(until, |h| h.max(until)));
        if self.capacity.is_finite() {
            self.tokens = 0.0;
            self.refilled = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_minute_never_sees_more_than_the_limit() {
        // Requests of weight 50 as fast as the budget admits them, over ten
        // minutes: every fixed minute (from the start, and from any other
        // second) spends at most the venue's 6000.
        let t0 = Instant::now();
        let mut budget = RestBudget::new(6000, t0);
        let mut sent = Vec::new();
        let mut now = t0;
        while now < t0 + Duration::from_secs(600) {
            match budget.take(50, now) {
                Admit::Now => sent.push(now),
                Admit::Later(at) => {
                    assert!(at > now);
                    now = at;
                }
            }
        }
        for start in 0..540 {
            let from = t0 + Duration::from_secs(start);
            let to = from + Duration::from_secs(60);
            let weight = 50 * sent.iter().filter(|&&t| t >= from && t < to).count();
            assert!(weight <= 6000, "{weight} in the minute from {start} s");
        }
        // And it is used: half the limit a minute, in the steady state.
        let last = sent
            .iter()
            .filter(|&&t| t >= t0 + Duration::from_secs(540))
            .count();
        assert!(
            (59..=61).contains(&last),
            "{last} requests in the last minute"
        );
    }

    #[test]
    fn a_hold_stops_everything_until_it_ends_then_starts_empty() {
        let t0 = Instant::now();
        let mut budget = RestBudget::new(6000, t0);
        let until = t0 + Duration::from_secs(30);
        budget.hold(t0, until);
        assert_eq!(budget.take(5, t0), Admit::Later(until));
        // A shorter hold does not shorten it.
        budget.hold(t0, t0 + Duration::from_secs(1));
        assert_eq!(budget.take(5, t0), Admit::Later(until));
        // After it: the bucket refilled for 30 s only (1500 of 3000).
        assert_eq!(budget.take(1500, until), Admit::Now);
        assert!(matches!(budget.take(50, until), Admit::Later(_)));
        // Told to wait, a heavy request is not overtaken by a light one.
        let mut budget = RestBudget::new(100, t0);
        assert_eq!(budget.take(40, t0), Admit::Now);
        let Admit::Later(at) = budget.take(50, t0) else {
            panic!("50 more than the 50 held");
        };
        assert_eq!(budget.take(5, t0), Admit::Later(at));
        assert_eq!(budget.take(50, at), Admit::Now);
        let mut free = RestBudget::unlimited(t0);
        assert_eq!(free.take(250, t0), Admit::Now);
    }

    #[test]
    fn each_refusal_holds_the_venue_as_long_as_it_says() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let cases = [
            (429, Some(s(7)), Refusal::Throttled(s(7))),
            (429, None, Refusal::Throttled(RestBudget::THROTTLE)),
            (418, Some(s(120)), Refusal::Banned(s(120))),
            (403, None, Refusal::Banned(RestBudget::BAN)),
            (503, Some(s(30)), Refusal::Held(s(30))),
            (500, None, Refusal::Failed),
        ];
        for (status, retry_after, expected) in cases {
            let mut budget = RestBudget::new(6000, t0);
            assert_eq!(
                budget.refused(status, retry_after, t0),
                expected,
                "{status}"
            );
            match expected.wait() {
                Some(wait) => assert_eq!(budget.take(5, t0), Admit::Later(t0 + wait), "{status}"),
                None => assert_eq!(budget.take(5, t0), Admit::Now, "{status}"),
            }
        }
    }
}
