//! Deribit's rate limit kept on this side: credit buckets that refill
//! continuously, so a request the venue would refuse (and answer by
//! closing the session) is refused here first, with when to try again.
//!
//! The rules followed (Deribit, "Rate Limits",
//! <https://docs.deribit.com/articles/rate-limits> and
//! <https://support.deribit.com/hc/en-us/articles/25944617523357-Rate-Limits>):
//! - Each request costs credits from a pool per sub-account; the pool
//!   refills continuously ("like a leaky bucket") up to a maximum.
//! - Non-matching-engine requests, by default: 500 credits each, at most
//!   50,000, refilled at 10,000 a second (20 a second, 100 at once).
//! - Matching-engine requests (`private/buy`, `sell`, `edit`, `cancel`,
//!   `cancel_all`, `cancel_all_by_instrument`, ...) have their own limit,
//!   by volume tier; the lowest tier's is 5 a second with bursts of 20
//!   (the figures nautilus_trader's Deribit adapter also starts from:
//!   `nautilus_deribit::common::consts::DERIBIT_WS_ORDER_QUOTA`). Kept
//!   here as 1,000 credits a request, at most 20,000, refilled at 5,000 a
//!   second; an account of a higher tier configures its own.
//! - A request with no credits left is answered `too_many_requests` (code
//!   10028) and the session is closed: never a retry storm here, the
//!   caller is told when credits are back.
//!
//! Credits are counted in thousandths so that any refill rate a second is
//! an exact whole number per millisecond.

/// One credit pool's settings, in Deribit's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// The most credits the pool holds (a burst).
    pub max: u64,
    /// Credits added back each second.
    pub refill_per_second: u64,
    /// Credits one request costs.
    pub cost: u64,
}

/// The two pools a session keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditLimits {
    /// Matching-engine requests (orders, amends, cancels).
    pub matching: Bucket,
    /// Everything else (login, subscriptions, open orders).
    pub other: Bucket,
}

impl Default for CreditLimits {
    /// Deribit's documented defaults (see the module's docs).
    fn default() -> CreditLimits {
        CreditLimits {
            matching: Bucket {
                max: 20_000,
                refill_per_second: 5_000,
                cost: 1_000,
            },
            other: Bucket {
                max: 50_000,
                refill_per_second: 10_000,
                cost: 500,
            },
        }
    }
}

/// A pool's state: credits (in thousandths) as of a time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Credits {
    bucket: Bucket,
    /// Thousandths of a credit held at `at_ms`.
    milli: u64,
    at_ms: u64,
}

impl Credits {
    /// A full pool.
    pub(crate) fn new(bucket: Bucket) -> Credits {
        Credits {
            bucket,
            milli: bucket.max.saturating_mul(1000),
            at_ms: 0,
        }
    }

    /// Refills up to `now_ms` (a clock that steps back refills nothing).
    fn refill(&mut self, now_ms: u64) {
        if now_ms > self.at_ms {
            let add = (now_ms - self.at_ms).saturating_mul(self.bucket.refill_per_second);
            self.milli = self
                .milli
                .saturating_add(add)
                .min(self.bucket.max.saturating_mul(1000));
            self.at_ms = now_ms;
        }
    }

    /// Whether one request may go now; if not, in how many ms it may
    /// (`u64::MAX`: never, the pool refills nothing or is smaller than a
    /// request).
    pub(crate) fn check(&mut self, now_ms: u64) -> Result<(), u64> {
        self.refill(now_ms);
        let cost = self.bucket.cost.saturating_mul(1000);
        if self.milli >= cost {
            return Ok(());
        }
        if self.bucket.refill_per_second == 0 || self.bucket.cost > self.bucket.max {
            return Err(u64::MAX);
        }
        Err((cost - self.milli).div_ceil(self.bucket.refill_per_second))
    }

    /// Takes one request's credits (checked or not: the session's own
    /// set-up requests are sent whatever the pool holds, and counted).
    pub(crate) fn take(&mut self, now_ms: u64) {
        self.refill(now_ms);
        self.milli = self
            .milli
            .saturating_sub(self.bucket.cost.saturating_mul(1000));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_refill_rate_and_an_exact_wait() {
        let mut c = Credits::new(CreditLimits::default().matching);
        let t0 = 1_000_000;
        for _ in 0..20 {
            assert_eq!(c.check(t0), Ok(()));
            c.take(t0);
        }
        // Empty: one request's 1,000 credits come back in 200 ms at 5,000/s.
        assert_eq!(c.check(t0), Err(200));
        assert_eq!(c.check(t0 + 150), Err(50));
        assert_eq!(c.check(t0 + 200), Ok(()));
        c.take(t0 + 200);
        assert_eq!(c.check(t0 + 200), Err(200));
        // Never more than the maximum, however long the pause.
        assert_eq!(c.check(t0 + 10_000_000), Ok(()));
        for _ in 0..20 {
            c.take(t0 + 10_000_000);
        }
        assert!(c.check(t0 + 10_000_000).is_err());
    }

    #[test]
    fn a_pool_that_cannot_refill_says_never() {
        let mut c = Credits::new(Bucket {
            max: 1,
            refill_per_second: 0,
            cost: 1,
        });
        c.take(5);
        assert_eq!(c.check(10), Err(u64::MAX));
    }
}
