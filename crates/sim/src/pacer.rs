//! When the market's next steps are due.

use std::time::{Duration, Instant};

/// When the market thread's next burst of steps is due: `rate` steps a
/// second, `burst` at a time, on a schedule counted from an anchor. A burst
/// that goes out late (a slow write) is made up for by the next ones going
/// out sooner, so the rate holds on average; time in which the market
/// stood still (no clients, paused) is not: [`restart`](Pacer::restart)
/// anchors the schedule again, and the steps resume at the rate rather
/// than in one run of every step the pause would have had.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pacer {
    /// Between two bursts (`None`: no pacing, as fast as the clients take
    /// them).
    interval: Option<Duration>,
    /// When burst 0 was due.
    anchor: Instant,
    /// Bursts sent since the anchor.
    sent: u64,
}

impl Pacer {
    pub(crate) fn new(rate: u32, burst: u32, now: Instant) -> Pacer {
        Pacer {
            interval: (rate > 0)
                .then(|| Duration::from_secs_f64(f64::from(burst) / f64::from(rate))),
            anchor: now,
            sent: 0,
        }
    }

    /// How long until the next burst is due; `None`: it is due at `now`.
    pub(crate) fn wait(&self, now: Instant) -> Option<Duration> {
        let due = self.anchor + self.interval?.mul_f64(self.sent as f64);
        (due > now).then(|| due - now)
    }

    /// The burst that was due went out.
    pub(crate) fn sent(&mut self) {
        self.sent += 1;
    }

    /// The market stood still until `now`: the next burst is due at once,
    /// the one after a whole interval later.
    pub(crate) fn restart(&mut self, now: Instant) {
        self.anchor = now;
        self.sent = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The market thread's pacing, as `generate` decides it, in time that
    /// moves only as the loop says: `phases` of (the market moves, for how
    /// long). A burst takes no time to send, a standstill's poll 1 ms. The
    /// instants at which bursts went out, phase by phase.
    fn run(pacer: &mut Pacer, mut now: Instant, phases: &[(bool, Duration)]) -> Vec<Vec<Instant>> {
        let mut all = Vec::new();
        for &(moving, length) in phases {
            let end = now + length;
            let mut sent = Vec::new();
            while now < end {
                if let Some(wait) = pacer.wait(now) {
                    now += wait;
                    continue;
                }
                if !moving {
                    now += Duration::from_millis(1);
                    pacer.restart(now);
                    continue;
                }
                pacer.sent();
                sent.push(now);
            }
            all.push(sent);
        }
        all
    }

    const MS: Duration = Duration::from_millis(1);

    /// At 10 000 steps a second, a second without clients and then a
    /// second paused: each time the market moves again, its next 10 ms
    /// carry 100 steps, one at a time, not the thousands the standstill
    /// would have owed.
    #[test]
    fn the_rate_resumes_after_an_idle_start_and_a_pause() {
        let t0 = Instant::now();
        let mut pacer = Pacer::new(10_000, 1, t0);
        let phases = [
            (false, 1000 * MS),
            (true, 10 * MS),
            (false, 1000 * MS),
            (true, 10 * MS),
        ];
        let sent = run(&mut pacer, t0, &phases);
        for moving in [&sent[1], &sent[3]] {
            assert!((100..=101).contains(&moving.len()), "{}", moving.len());
            assert!(
                moving.windows(2).all(|w| w[1] > w[0]),
                "no two bursts at once"
            );
        }
        assert!(sent[0].is_empty() && sent[2].is_empty());
    }

    /// While the market moves, a burst sent late (a slow client's write)
    /// is made up for: the bursts owed go out at once, and the schedule
    /// goes on from where it was, so the rate holds on average.
    #[test]
    fn a_late_burst_is_made_up_while_the_market_moves() {
        let t0 = Instant::now();
        let mut pacer = Pacer::new(10_000, 5, t0);
        let interval = pacer.interval.expect("paced");
        assert_eq!(pacer.wait(t0), None);
        pacer.sent();
        // The write took 5 ms: the 10 bursts due by then go out at once.
        let now = t0 + 5 * MS;
        for k in 1..=10 {
            assert_eq!(pacer.wait(now), None, "burst {k}");
            pacer.sent();
        }
        assert_eq!(pacer.wait(now), Some(t0 + interval.mul_f64(11.0) - now));
        // Unpaced: always due.
        let mut free = Pacer::new(0, 1, t0);
        free.sent();
        assert_eq!(free.wait(t0), None);
    }
}
