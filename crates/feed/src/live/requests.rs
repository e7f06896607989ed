//! The WebSocket request budgets the venues enforce, kept where the feed
//! sends its requests (a connection opening, a resubscription, a retry, a
//! bot's own request between polls), never per received message.
//!
//! - **Per connection (OKX).** "The total number of 'subscribe'/
//!   'unsubscribe'/'login' requests per connection is limited to 480 times
//!   per hour" ([`plan::okx::REQUESTS_PER_CONNECTION`]). Every frame the
//!   feed sends on a connection but its application ping counts as one
//!   request, however many arguments it carries (OKX counts requests, and
//!   a request subscribes "one or more channels"): the subscriptions a
//!   connection sends when it opens, each resubscription (an unsubscribe
//!   and a subscribe: two), each retry of a refused one, and the bot's own
//!   requests. A connection that opens again is a new connection to the
//!   venue, and starts a new count. A request that would go over waits
//!   ([`Requests::admit`] says until when): recovery postpones it, and the
//!   book stays invalid meanwhile.
//!
//!   Counted over a sliding window (a fixed hour never holds more than a
//!   sliding one), each request at the time the connection's paced outbox
//!   will let it go (the feed follows the outbox: one frame a `pace`), and
//!   kept in the count [`SLACK`] longer than the window: the venue reads
//!   a request later than it left, and one that left late (its outbox
//!   behind an application ping, a busy thread) must still be out of the
//!   venue's window before the one that takes its place arrives.
//! - **Per address (Coinbase).** "Advanced Trade API WebSocket
//!   unauthenticated messages are rate-limited at 8 per second per IP
//!   address", over every connection from it: the standby line, a
//!   replacement, every plan, every venue of the feed that is Coinbase.
//!   That budget is not counted here: each Coinbase connection's outbox is
//!   paced at its share ([`plan::coinbase::pace`] for the lines that may
//!   be open at once: two a plan, the main line and a standby or a
//!   replacement), so the sum of their rates stays under the limit
//!   whatever each line sends, with no count shared between them (see
//!   `Feed::share_address_budgets`). Simplest, and it cannot be got
//!   around: every message a connection sends leaves through its outbox.
//!   Other programs (or other feeds) on the same address are not seen.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use tickwire_venues::Venue;
use tickwire_venues::plan::{self, ConnectionPlan};

/// How much longer than the venue's window a request is counted.
pub(crate) const SLACK: Duration = Duration::from_secs(2);

/// At most `requests` requests a connection in any `window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    pub(crate) requests: u32,
    pub(crate) window: Duration,
}

impl Limit {
    /// The venue's own documented limit, if it has one.
    pub(crate) fn of(venue: Venue) -> Option<Limit> {
        match venue {
            Venue::Okx => Some(Limit {
                requests: plan::okx::REQUESTS_PER_CONNECTION,
                window: plan::okx::REQUEST_WINDOW,
            }),
            _ => None,
        }
    }
}

/// One line's (connection's) requests.
#[derive(Debug)]
struct Line {
    /// When each request still counted leaves, oldest first (as many as
    /// the limit: allocated with it).
    times: VecDeque<Instant>,
    /// When the connection's paced outbox lets its next frame go.
    free_at: Instant,
    /// A wait was said; said again only once a request has gone.
    said: bool,
}

impl Line {
    fn new(limit: Option<Limit>, now: Instant) -> Line {
        Line {
            times: VecDeque::with_capacity(limit.map_or(0, |l| l.requests as usize)),
            free_at: now,
            said: false,
        }
    }
}

/// A venue's requests: its limit, and each plan's pace and two lines
/// (allocated at start-up).
#[derive(Debug)]
pub(crate) struct Requests {
    limit: Option<Limit>,
    plans: Vec<(Duration, [Line; 2])>,
}

impl Requests {
    /// `venue`'s connections `plans`, with the venue's own limit.
    pub(crate) fn new(venue: Venue, plans: &[ConnectionPlan], now: Instant) -> Requests {
        let limit = Limit::of(venue);
        Requests {
            limit,
            plans: plans
                .iter()
                .map(|p| (p.pace, [Line::new(limit, now), Line::new(limit, now)]))
                .collect(),
        }
    }

    /// The limit kept.
    pub(crate) fn limit(&self) -> Option<Limit> {
        self.limit
    }

    /// Keeps `limit` from now on (what was counted stays counted).
    pub(crate) fn set_limit(&mut self, limit: Option<Limit>) {
        self.limit = limit;
        let room = limit.map_or(0, |l| l.requests as usize);
        for (_, lines) in &mut self.plans {
            for line in lines {
                line.times.reserve(room.saturating_sub(line.times.len()));
            }
        }
    }

    /// Plan `p`'s lines send a frame every `pace` at most (their outbox).
    pub(crate) fn set_pace(&mut self, p: usize, pace: Duration) {
        if let Some(plan) = self.plans.get_mut(p) {
            plan.0 = pace;
        }
    }

    fn line(&mut self, p: usize, line: tickwire_venues::Line) -> Option<(Duration, &mut Line)> {
        let (pace, lines) = self.plans.get_mut(p)?;
        Some((*pace, lines.get_mut(line.index())?))
    }

    /// Line `line` of plan `p` opened at `now`: a new connection, a new
    /// count, an empty outbox.
    pub(crate) fn opened(&mut self, p: usize, line: tickwire_venues::Line, now: Instant) {
        if let Some((_, l)) = self.line(p, line) {
            l.times.clear();
            l.free_at = now;
            l.said = false;
        }
    }

    /// Whether `n` more requests may go on line `line` of plan `p` at
    /// `now`, and if not, from when.
    pub(crate) fn admit(
        &mut self,
        p: usize,
        line: tickwire_venues::Line,
        n: usize,
        now: Instant,
    ) -> Result<(), Instant> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let Some((_, l)) = self.line(p, line) else {
            return Ok(());
        };
        let counted = limit.window + SLACK;
        // The first of them leaves then: what is older is out of its
        // window.
        let start = now.max(l.free_at);
        while l
            .times
            .front()
            .is_some_and(|&t| start.saturating_duration_since(t) >= counted)
        {
            l.times.pop_front();
        }
        let over = (l.times.len() + n).saturating_sub(limit.requests as usize);
        match over {
            0 => Ok(()),
            // The `over`th oldest must leave the count first (more than the
            // whole limit at once: once every one has).
            k => Err(l
                .times
                .get(k - 1)
                .or(l.times.back())
                .map_or(now, |&t| t + counted)),
        }
    }

    /// `n` requests went on line `line` of plan `p` at `now` (into its
    /// outbox): counted at the times the outbox lets them go. Returns when
    /// the last of them leaves.
    pub(crate) fn spend(
        &mut self,
        p: usize,
        line: tickwire_venues::Line,
        n: usize,
        now: Instant,
    ) -> Instant {
        let limit = self.limit;
        let Some((pace, l)) = self.line(p, line) else {
            return now;
        };
        let mut last = now;
        for _ in 0..n {
            last = now.max(l.free_at);
            l.free_at = last + pace;
            // Within the capacity but for requests that went without
            // asking (a connection's subscriptions, at most a few).
            if limit.is_some() {
                l.times.push_back(last);
            }
        }
        if n > 0 {
            l.said = false;
        }
        last
    }

    /// Requests line `line` of plan `p` has counted.
    pub(crate) fn counted(&self, p: usize, line: tickwire_venues::Line) -> usize {
        self.plans
            .get(p)
            .and_then(|(_, lines)| lines.get(line.index()))
            .map_or(0, |l| l.times.len())
    }

    /// A request of line `line` of plan `p` waits: true the first time
    /// since one went (the time to say so).
    pub(crate) fn waits(&mut self, p: usize, line: tickwire_venues::Line) -> bool {
        self.line(p, line)
            .is_some_and(|(_, l)| !std::mem::replace(&mut l.said, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn okx(plans: usize, now: Instant) -> Requests {
        let plan = ConnectionPlan {
            host: String::new(),
            port: 0,
            path: String::new(),
            subscribe: Vec::new(),
            pace: Duration::from_millis(350),
            ping: None,
            max_silence: Duration::from_secs(30),
            max_lifetime: None,
            instruments: Vec::new(),
            max_message: 0,
            api_key_header: None,
        };
        Requests::new(Venue::Okx, &vec![plan; plans], now)
    }

    /// As fast as the budget admits them, resubscriptions (two requests
    /// each) over three hours: in no hour does the venue count more than
    /// 480 on the connection, even reading each request as late as
    /// [`SLACK`] allows; and the budget is used: close to 480 an hour.
    #[test]
    fn no_hour_holds_more_than_480_requests_and_the_budget_is_used() {
        let t0 = Instant::now();
        let mut r = okx(1, t0);
        assert_eq!(r.limit().map(|l| l.requests), Some(480));
        r.opened(0, tickwire_venues::Line::Primary, t0);
        // The connection's subscriptions, on opening.
        let mut sent = vec![r.spend(0, tickwire_venues::Line::Primary, 2, t0)];
        sent.insert(0, t0);
        let mut now = t0;
        let end = t0 + Duration::from_secs(3 * 3600);
        let mut waits = 0;
        while now < end {
            match r.admit(0, tickwire_venues::Line::Primary, 2, now) {
                Ok(()) => {
                    let last = r.spend(0, tickwire_venues::Line::Primary, 2, now);
                    sent.push(last - Duration::from_millis(350));
                    sent.push(last);
                    now += Duration::from_millis(100);
                }
                Err(at) => {
                    assert!(at > now, "a wait in the past");
                    if r.waits(0, tickwire_venues::Line::Primary) {
                        waits += 1;
                    }
                    assert!(!r.waits(0, tickwire_venues::Line::Primary), "said once");
                    now = at;
                }
            }
        }
        assert!(waits >= 2, "{waits}");
        sent.sort();
        // Each request read by the venue up to SLACK late, the first of a
        // pair at once: no window of an hour holds more than 480.
        for (k, &t) in sent.iter().enumerate() {
            let within = sent[k..]
                .iter()
                .take_while(|&&u| u < t + Duration::from_secs(3600) + SLACK)
                .count();
            assert!(within <= 480, "{within} in the hour from request {k}");
        }
        let last_hour = sent
            .iter()
            .filter(|&&t| t >= end - Duration::from_secs(3600))
            .count();
        assert!(
            (470..=480).contains(&last_hour),
            "{last_hour} in the last hour"
        );
    }

    #[test]
    fn the_outbox_paces_what_is_counted_and_a_new_connection_starts_over() {
        let t0 = Instant::now();
        let mut r = okx(2, t0);
        r.set_limit(Some(Limit {
            requests: 4,
            window: Duration::from_secs(10),
        }));
        // Four at once leave 350 ms apart.
        let last = r.spend(1, tickwire_venues::Line::Standby, 4, t0);
        assert_eq!(last, t0 + Duration::from_millis(1050));
        assert_eq!(r.counted(1, tickwire_venues::Line::Standby), 4);
        // The next may go once the first left the window (and SLACK).
        assert_eq!(
            r.admit(1, tickwire_venues::Line::Standby, 1, t0),
            Err(t0 + Duration::from_secs(12))
        );
        // Two need the second out too.
        assert_eq!(
            r.admit(1, tickwire_venues::Line::Standby, 2, t0),
            Err(t0 + Duration::from_millis(12_350))
        );
        assert_eq!(
            r.admit(
                1,
                tickwire_venues::Line::Standby,
                1,
                t0 + Duration::from_secs(12)
            ),
            Ok(())
        );
        // The other line, and the other plan, count apart.
        assert_eq!(r.admit(1, tickwire_venues::Line::Primary, 4, t0), Ok(()));
        assert_eq!(r.admit(0, tickwire_venues::Line::Standby, 4, t0), Ok(()));
        // Reopened: a new connection, an empty outbox.
        r.opened(
            1,
            tickwire_venues::Line::Standby,
            t0 + Duration::from_secs(1),
        );
        assert_eq!(r.counted(1, tickwire_venues::Line::Standby), 0);
        assert_eq!(
            r.spend(
                1,
                tickwire_venues::Line::Standby,
                1,
                t0 + Duration::from_secs(1)
            ),
            t0 + Duration::from_secs(1)
        );
        // No limit: nothing counted, the outbox followed all the same.
        r.set_limit(None);
        assert_eq!(r.admit(0, tickwire_venues::Line::Primary, 1000, t0), Ok(()));
        assert_eq!(
            r.spend(0, tickwire_venues::Line::Primary, 3, t0),
            t0 + Duration::from_millis(700)
        );
        assert_eq!(r.counted(0, tickwire_venues::Line::Primary), 0);
        // Out of range: admitted, nothing counted.
        assert_eq!(r.admit(5, tickwire_venues::Line::Primary, 1, t0), Ok(()));
        assert_eq!(r.spend(5, tickwire_venues::Line::Primary, 1, t0), t0);
    }
}
