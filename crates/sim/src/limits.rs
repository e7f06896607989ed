//! A venue's REST request-weight limit, enforced as Binance documents it
//! ("LIMITS", Spot API docs; "General Info", futures docs):
//!
//! - Each request has a weight; the weights an IP address spends are
//!   counted per minute (`REQUEST_WEIGHT`, interval `MINUTE`, a fixed
//!   window), and every answer says the minute's count in
//!   `X-MBX-USED-WEIGHT-1M`.
//! - A request past the limit is answered 429 with `Retry-After`, "the
//!   number of seconds required to wait ... to prevent a ban".
//! - "Repeatedly violating rate limits and/or failing to back off after
//!   receiving 429s will result in an automated IP ban (HTTP status
//!   418)"; its `Retry-After` says when the ban is over. Here a request
//!   that comes before a 429's `Retry-After` has passed is answered 429
//!   again. Those within [`GRACE`] of the first 429 are the requests a
//!   client had on their way when it came, however many: forgiven. After
//!   that, each is a strike, and the [`STRIKES`]th is banned, for 2
//!   minutes, the shortest ban the docs name ("from 2 minutes to 3
//!   days"): "repeatedly", not once.
//!
//! Every client of the simulator is one IP address: loopback.
//!
//! And a venue's incoming WebSocket message limit ([`MessageRate`]): a
//! connection that sends more messages in any second than the venue takes
//! is closed. Its text messages count, and its ping and pong frames:
//! Binance's "A message is considered: a PING frame, a PONG frame, a
//! JSON controlled message (e.g. subscribe, unsubscribe)" ("WebSocket
//! Limits", Spot WebSocket Streams docs), the only venue here with such a
//! limit (its futures follow the same rule: see `binance/mod.rs`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How long a ban lasts.
pub(crate) const BAN: Duration = Duration::from_secs(120);

/// Requests that did not wait for a 429's `Retry-After` (after the
/// grace) before the ban.
pub(crate) const STRIKES: u32 = 2;

/// How long after a 429 the requests already on their way are forgiven.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// What to answer a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Serve it; the minute's weight, this request's included.
    Serve { used: u32 },
    /// 429: over the limit; wait this many seconds.
    Throttle { retry_after: u64 },
    /// 418: banned for this many more seconds.
    Ban { retry_after: u64 },
}

/// The weight spent in the current minute, and the client's standing.
#[derive(Debug)]
pub(crate) struct RestLimit {
    per_minute: u32,
    window: Instant,
    used: u32,
    /// After a 429: a request before this is a strike.
    back_off_until: Option<Instant>,
    /// When the 429 that set it was given.
    throttled_at: Instant,
    strikes: u32,
    banned_until: Option<Instant>,
}

/// Whole seconds from `now` to `until`, rounded up.
fn secs(now: Instant, until: Instant) -> u64 {
    let d = until.saturating_duration_since(now);
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

impl RestLimit {
    pub(crate) fn new(per_minute: u32, now: Instant) -> RestLimit {
        RestLimit {
            per_minute,
            window: now,
            used: 0,
            back_off_until: None,
            throttled_at: now,
            strikes: 0,
            banned_until: None,
        }
    }

    /// A request of `weight` at `now`.
    pub(crate) fn check(&mut self, weight: u32, now: Instant) -> Verdict {
        const MINUTE: Duration = Duration::from_secs(60);
        while now.duration_since(self.window) >= MINUTE {
            self.window += MINUTE;
            self.used = 0;
        }
        if let Some(until) = self.banned_until {
            if now < until {
                return Verdict::Ban {
                    retry_after: secs(now, until),
                };
            }
            self.banned_until = None;
        }
        match self.back_off_until {
            Some(until) if now < until => {
                if now.duration_since(self.throttled_at) >= GRACE {
                    self.strikes += 1;
                }
                if self.strikes < STRIKES {
                    return Verdict::Throttle {
                        retry_after: secs(now, until).max(1),
                    };
                }
                self.back_off_until = None;
                self.strikes = 0;
                let until = now + BAN;
                self.banned_until = Some(until);
                return Verdict::Ban {
                    retry_after: secs(now, until),
                };
            }
            Some(_) => {
                self.back_off_until = None;
                self.strikes = 0;
            }
            None => {}
        }
        if self.used.saturating_add(weight) > self.per_minute {
            let until = self.window + MINUTE;
            self.back_off_until = Some(until);
            self.throttled_at = now;
            return Verdict::Throttle {
                retry_after: secs(now, until).max(1),
            };
        }
        self.used += weight;
        Verdict::Serve { used: self.used }
    }
}

/// The messages one connection sent in the last second, against the
/// venue's limit.
#[derive(Debug, Default)]
pub(crate) struct MessageRate {
    recent: VecDeque<Instant>,
    /// The connection's pings and pongs counted so far.
    control: u64,
}

impl MessageRate {
    /// The connection has sent `total` pings and pongs so far (its
    /// session's count): those not counted yet came at `at`. Whether the
    /// connection has now sent more than `limit` messages in the last
    /// second.
    pub(crate) fn control_frames(&mut self, at: Instant, total: u64, limit: usize) -> bool {
        let new = total.saturating_sub(self.control);
        self.control = total;
        // Past the limit after at most `limit + 1` of them, however many.
        (0..new.min(limit as u64 + 1)).any(|_| self.too_fast(at, limit))
    }

    /// A message came at `at`; whether the connection has now sent more
    /// than `limit` in the last second.
    pub(crate) fn too_fast(&mut self, at: Instant, limit: usize) -> bool {
        while self
            .recent
            .front()
            .is_some_and(|&t| at.saturating_duration_since(t) >= Duration::from_secs(1))
        {
            self.recent.pop_front();
        }
        self.recent.push_back(at);
        self.recent.len() > limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_messages_in_a_second_than_the_limit_are_too_fast() {
        let t0 = Instant::now();
        let mut rate = MessageRate::default();
        let ms = |n| t0 + Duration::from_millis(n);
        // 5 in a second: fine; 3 a second for long: fine.
        for n in 0..5 {
            assert!(!rate.too_fast(ms(n * 10), 5));
        }
        for n in 0..30 {
            assert!(!rate.too_fast(ms(1100 + n * 340), 5));
        }
        // A sixth within a second of five others: too fast.
        let mut rate = MessageRate::default();
        for n in 0..5 {
            assert!(!rate.too_fast(ms(n * 100), 5));
        }
        assert!(rate.too_fast(ms(900), 5));
    }

    /// Pings and pongs are messages like any other: read from the
    /// session's running count, each new one counted once.
    #[test]
    fn pings_and_pongs_count_toward_the_limit() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut rate = MessageRate::default();
        // Two pings, a text, two pongs in a second: 5, fine.
        assert!(!rate.control_frames(ms(0), 2, 5));
        assert!(!rate.too_fast(ms(10), 5));
        assert!(!rate.control_frames(ms(20), 4, 5));
        // The same count again is nothing new.
        assert!(!rate.control_frames(ms(30), 4, 5));
        // A sixth message within the second: too fast.
        assert!(rate.control_frames(ms(40), 5, 5));
        // A second later, one at a time is fine again; a burst of
        // thousands is too fast.
        let mut rate = MessageRate::default();
        assert!(!rate.control_frames(ms(0), 5, 5));
        assert!(!rate.control_frames(ms(1000), 6, 5));
        assert!(rate.control_frames(ms(1100), 10_000, 5));
    }

    #[test]
    fn past_the_limit_429_until_the_minute_ends_and_418_for_not_waiting() {
        let t0 = Instant::now();
        let mut limit = RestLimit::new(100, t0);
        assert_eq!(limit.check(50, t0), Verdict::Serve { used: 50 });
        assert_eq!(limit.check(50, t0), Verdict::Serve { used: 100 });
        // Over: wait until the minute ends.
        let at = t0 + Duration::from_secs(20);
        assert_eq!(limit.check(5, at), Verdict::Throttle { retry_after: 40 });
        // Waited as told: the new minute serves.
        let later = t0 + Duration::from_secs(60);
        assert_eq!(limit.check(5, later), Verdict::Serve { used: 5 });
        // Throttled again, and asked again too soon: 429 while the
        // strikes last, then banned two minutes.
        assert_eq!(
            limit.check(100, later),
            Verdict::Throttle { retry_after: 60 }
        );
        // Requests on their way when it came: forgiven, however many.
        for _ in 0..10 {
            let in_flight = later + GRACE / 2;
            assert!(matches!(
                limit.check(1, in_flight),
                Verdict::Throttle { .. }
            ));
        }
        let soon = later + Duration::from_secs(1);
        for _ in 1..STRIKES {
            assert_eq!(limit.check(1, soon), Verdict::Throttle { retry_after: 59 });
        }
        assert_eq!(limit.check(1, soon), Verdict::Ban { retry_after: 120 });
        let during = soon + Duration::from_secs(100);
        assert_eq!(limit.check(1, during), Verdict::Ban { retry_after: 20 });
        // Over: served again.
        assert_eq!(limit.check(1, soon + BAN), Verdict::Serve { used: 1 });
    }
}
