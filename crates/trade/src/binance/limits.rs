//! [`RateLimits`]: Binance's rate limits as the venue reports them in the
//! `rateLimits` array of its answers, kept so that an order that would
//! pass one is refused here, before it leaves, rather than by the venue.
//!
//! The rules this follows (`web-socket-api.md`, "Rate limits", in
//! <https://github.com/binance/binance-spot-api-docs>):
//!
//! - Every answer may carry `rateLimits`: one entry per limit the request
//!   counted against, each with `rateLimitType` (`REQUEST_WEIGHT`,
//!   `ORDERS`), `interval` (`SECOND`, `MINUTE`, `HOUR`, `DAY`),
//!   `intervalNum`, `limit` and `count` (the usage in the current interval).
//! - Limits are counted by intervals that start on the clock: a `1 MINUTE`
//!   interval starts every minute, `10 SECOND` at :00, :10, :20 ... of each
//!   minute, `1 DAY` at 00:00 UTC. So an interval is a multiple of its
//!   length since the Unix epoch, and a limit reached frees up when the
//!   next interval starts.
//! - `ORDERS` (the unfilled order count) is per account and may go down
//!   (orders that fill give their count back, `faqs/order_count_decrement.md`);
//!   `REQUEST_WEIGHT` is per IP address. Either kind may count other
//!   sessions' requests too: the venue's count is the truth and replaces
//!   ours whenever an answer brings it.
//! - Until the first answer says otherwise, the limits are those the
//!   docs' examples show for spot: `ORDERS` 50 per 10 s and 160,000 per
//!   day, `REQUEST_WEIGHT` 6,000 per minute.

/// What a limit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitKind {
    /// `REQUEST_WEIGHT`: the weight of every request, per IP address.
    RequestWeight,
    /// `ORDERS`: new orders (the unfilled order count), per account.
    Orders,
}

/// One of the venue's limits and its usage in the current interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// What it counts.
    pub kind: LimitKind,
    /// The interval's length in ms (`intervalNum` × `interval`).
    pub interval_ms: u64,
    /// The most allowed per interval.
    pub limit: u64,
    /// Used in the interval `window` (the venue's count when an answer
    /// brought it, plus what was sent since and not yet answered).
    pub count: u64,
    /// Which interval `count` is of: ms since the epoch / `interval_ms`.
    pub window: u64,
}

impl RateLimit {
    /// The usage at `now_ms`: `count`, or 0 once a new interval started.
    fn used(&self, now_ms: u64) -> u64 {
        if now_ms / self.interval_ms == self.window {
            self.count
        } else {
            0
        }
    }

    /// ms from `now_ms` until the next interval starts.
    fn until_next(&self, now_ms: u64) -> u64 {
        self.interval_ms - now_ms % self.interval_ms
    }
}

/// The most limits kept (the venue reports three for spot orders).
const SLOTS: usize = 6;

/// The venue's limits, at most six, in a fixed table.
#[derive(Clone, Debug)]
pub struct RateLimits {
    slots: [Option<RateLimit>; SLOTS],
    /// Nothing is admitted before this unix ms time (the venue's
    /// `retryAfter`; 0: no ban).
    blocked_until_ms: u64,
}

impl Default for RateLimits {
    fn default() -> RateLimits {
        RateLimits::new()
    }
}

impl RateLimits {
    /// The spot limits the docs show, unused, until the venue says more.
    pub fn new() -> RateLimits {
        let limit = |kind, interval_ms, limit| {
            Some(RateLimit {
                kind,
                interval_ms,
                limit,
                count: 0,
                window: 0,
            })
        };
        let mut slots = [None; SLOTS];
        slots[0] = limit(LimitKind::Orders, 10_000, 50);
        slots[1] = limit(LimitKind::Orders, 86_400_000, 160_000);
        slots[2] = limit(LimitKind::RequestWeight, 60_000, 6_000);
        RateLimits {
            slots,
            blocked_until_ms: 0,
        }
    }

    /// The limits known, with their usage as last counted.
    pub fn iter(&self) -> impl Iterator<Item = &RateLimit> {
        self.slots.iter().flatten()
    }

    /// What an answer said of one limit at `now_ms`: `count` used of
    /// `limit` per `interval_ms`, to which `in_flight` (what requests still
    /// unanswered will count) is added. A limit not yet known takes a free
    /// slot (ignored when none is left).
    pub fn observe(
        &mut self,
        kind: LimitKind,
        interval_ms: u64,
        limit: u64,
        count: u64,
        in_flight: u64,
        now_ms: u64,
    ) {
        if interval_ms == 0 {
            return;
        }
        let entry = RateLimit {
            kind,
            interval_ms,
            limit,
            count: count.saturating_add(in_flight),
            window: now_ms / interval_ms,
        };
        let same = |s: &Option<RateLimit>| {
            s.is_some_and(|s| s.kind == kind && s.interval_ms == interval_ms)
        };
        if let Some(slot) = self.slots.iter_mut().find(|s| same(s)) {
            *slot = Some(entry);
        } else if let Some(slot) = self.slots.iter_mut().find(|s| s.is_none()) {
            *slot = Some(entry);
        }
    }

    /// Whether `weight` more request weight and `orders` more orders fit
    /// every limit at `now_ms`; if not, the ms until all that refuse them
    /// have started a new interval.
    pub fn check(&self, weight: u64, orders: u64, now_ms: u64) -> Result<(), u64> {
        let mut wait = self.blocked_until_ms.saturating_sub(now_ms);
        for l in self.iter() {
            let more = match l.kind {
                LimitKind::RequestWeight => weight,
                LimitKind::Orders => orders,
            };
            if more > 0 && l.used(now_ms).saturating_add(more) > l.limit {
                wait = wait.max(l.until_next(now_ms));
            }
        }
        if wait == 0 { Ok(()) } else { Err(wait) }
    }

    /// The venue refused a request for its limits (429) or banned the IP
    /// (418) until `until_ms` (unix ms, its `retryAfter`): nothing passes
    /// [`check`](Self::check) before then.
    pub fn block_until(&mut self, until_ms: u64) {
        self.blocked_until_ms = self.blocked_until_ms.max(until_ms);
    }

    /// Until when (unix ms) the venue said to send nothing (0: no ban).
    pub fn blocked_until(&self) -> u64 {
        self.blocked_until_ms
    }

    /// Counts `weight` and `orders` sent at `now_ms`.
    pub fn spend(&mut self, weight: u64, orders: u64, now_ms: u64) {
        for l in self.slots.iter_mut().flatten() {
            let more = match l.kind {
                LimitKind::RequestWeight => weight,
                LimitKind::Orders => orders,
            };
            l.count = l.used(now_ms).saturating_add(more);
            l.window = now_ms / l.interval_ms;
        }
    }
}

/// An interval's name and multiplier as ms (`None`: a name not in the
/// docs' list).
pub fn interval_ms(interval: &str, num: u64) -> Option<u64> {
    let unit = match interval {
        "SECOND" => 1_000,
        "MINUTE" => 60_000,
        "HOUR" => 3_600_000,
        "DAY" => 86_400_000,
        _ => return None,
    };
    num.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_reached_frees_up_when_its_interval_starts_again() {
        let mut l = RateLimits::new();
        // 12:00:03.250 into a 10 s interval: 49 of 50 orders used.
        let now = 1_700_000_003_250;
        l.observe(LimitKind::Orders, 10_000, 50, 49, 0, now);
        assert_eq!(l.check(1, 1, now), Ok(()));
        l.spend(1, 1, now);
        // :03.250 -> the next 10 s interval starts at :10.000.
        assert_eq!(l.check(1, 1, now), Err(6_750));
        assert_eq!(l.check(1, 0, now), Ok(()), "a cancel counts no order");
        assert_eq!(l.check(1, 1, now + 6_750), Ok(()), "a new interval");
    }

    #[test]
    fn the_venues_count_replaces_ours_with_what_is_in_flight_added() {
        let mut l = RateLimits::new();
        let now = 60_000 * 1_000;
        l.spend(5_000, 0, now);
        l.observe(LimitKind::RequestWeight, 60_000, 6_000, 5_990, 4, now);
        assert_eq!(l.check(6, 0, now), Ok(()));
        assert_eq!(l.check(7, 0, now), Err(60_000));
        let w = l
            .iter()
            .find(|r| r.kind == LimitKind::RequestWeight)
            .unwrap();
        assert_eq!(w.count, 5_994);
        assert_eq!(interval_ms("SECOND", 10), Some(10_000));
        assert_eq!(interval_ms("WEEK", 1), None);
    }
}
