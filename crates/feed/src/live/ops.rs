//! What the feed sends between polls, each request within its venue's
//! budget ([`super::requests`]): resubscriptions and retries that are due
//! ([`recovery`](super::recovery)), a connection replaced when they go
//! unanswered, and a bot's own requests ([`Feed::send`]). A request the
//! budget does not admit yet waits (said once, with its cause); nothing
//! is dropped.

use std::time::{Duration, Instant};

use tickwire_venues::plan;
use tickwire_venues::{InstrumentId, Venue};

use super::log::tickwire_log;
use super::recovery::{self, Due, Need};
use super::requests::Limit;
use super::{Feed, FeedError, FeedStats, OnEvent, SetupError};
use crate::id::VenueId;
use crate::recording;

/// A window as a log line says it: "an hour", "10 s".
fn window(w: Duration) -> String {
    if w == Duration::from_secs(3600) {
        "an hour".into()
    } else {
        format!("{} s", w.as_secs_f64())
    }
}

impl<H: OnEvent> Feed<H> {
    /// Sends `text` on every open connection of venue `venue`,
    /// both lines of a plan alike, between polls: a request of the bot's
    /// own (a channel the plan does not subscribe, a venue-specific
    /// command). It is not sent again after a reconnect: the plan's own
    /// subscriptions are. It counts against the venue's request budget
    /// (OKX: 480 a connection an hour): a connection whose budget is spent
    /// does not send it (said once). Returns the connections it went out
    /// on.
    pub fn send(&mut self, venue: VenueId, text: &str) -> Result<usize, FeedError> {
        let v = self.venue_slot(venue)?;
        let now = Instant::now();
        let mut sent = 0;
        for p in 0..self.driver.handler().venues[v].lines.len() {
            for line in tickwire_venues::Line::BOTH {
                let state = &mut self.driver.handler_mut().venues[v];
                let lines = &state.lines[p];
                let Some(id) = lines.ids[line.index()].filter(|_| lines.open[line.index()]) else {
                    continue;
                };
                if let Err(at) = state.requests.admit(p, line, 1, now) {
                    if state.requests.waits(p, line) {
                        tickwire_log(format_args!(
                            "venue {}: a request of the bot's own is not sent on connection \
                             {p} (line {line}): it has sent all the requests the venue takes \
                             in {}; the next may go in {} s",
                            state.setup.name,
                            window(state.requests.limit().map_or(Duration::ZERO, |l| l.window)),
                            at.saturating_duration_since(now).as_secs()
                        ));
                    }
                    continue;
                }
                if self.driver.send_text(id, text).is_ok() {
                    sent += 1;
                    let core = self.driver.handler_mut();
                    core.venues[v].requests.spend(p, line, 1, now);
                    let tsc = core.clock.now();
                    core.record(recording::Kind::Sent, id, tsc, text.as_bytes());
                }
            }
        }
        Ok(sent)
    }

    /// Keeps venue `venue`'s requests to at most `requests` a
    /// connection in any `window` (every frame but the application ping
    /// is one), in place of the venue's own limit (OKX: 480 an hour; the
    /// other venues: none): a stricter limit, or a simulator's lowered
    /// one. What was counted stays counted. Fails for a venue the feed
    /// does not have, and for a limit that cannot hold a connection's
    /// subscriptions and one resubscription.
    pub fn limit_requests(
        &mut self,
        venue: VenueId,
        requests: u32,
        window: Duration,
    ) -> Result<(), FeedError> {
        let v = self.venue_slot(venue)?;
        let state = &mut self.driver.handler_mut().venues[v];
        let subscriptions = state.plans.iter().map(|p| p.subscribe.len()).max();
        let resubscription = state.resubscribe.iter().map(Vec::len).max();
        let least = subscriptions.unwrap_or(0) + resubscription.unwrap_or(0);
        if (requests as usize) < least.max(1) || window.is_zero() {
            return Err(FeedError::Setup(SetupError::RequestLimit {
                venue: state.setup.name.clone(),
                requests,
                window,
                least,
            }));
        }
        state.requests.set_limit(Some(Limit { requests, window }));
        Ok(())
    }

    /// The handle of the venue named `name` (`binance-spot`, or the name
    /// it was given), for the methods about one venue; `None` if the feed
    /// has no venue of that name.
    pub fn venue(&self, name: &str) -> Option<VenueId> {
        self.driver
            .handler()
            .venues
            .iter()
            .position(|s| s.setup.name == name)
            .map(|v| VenueId::new(self.driver.handler().feed_tag, v))
    }

    /// The venue's place in the feed's tables, if the handle is this
    /// feed's.
    pub(super) fn venue_slot(&self, venue: VenueId) -> Result<usize, FeedError> {
        let core = self.driver.handler();
        match venue.index_in(core.feed_tag) {
            Some(v) if v < core.venues.len() => Ok(v),
            _ => Err(FeedError::NoVenue(venue)),
        }
    }

    /// Paces each Coinbase connection at its share of the address's 8
    /// messages a second ([`plan::coinbase::pace`]): every line that may
    /// be open at once (two a plan: the main line and a standby or a
    /// replacement) of every Coinbase venue of the feed. A static share:
    /// no count to keep between connections, nothing a line sends can go
    /// around it (every message leaves through its outbox), and Coinbase
    /// needs few messages (three a connection, two a resubscription).
    pub(super) fn share_address_budgets(&mut self) {
        let Feed {
            driver, targets, ..
        } = self;
        let coinbase = |venue: Venue| venue == Venue::Coinbase;
        let core = driver.handler_mut();
        let lines: usize = core
            .venues
            .iter()
            .filter(|s| coinbase(s.setup.venue))
            .map(|s| 2 * s.plans.len())
            .sum();
        let share = plan::coinbase::pace(lines);
        for (v, state) in core.venues.iter_mut().enumerate() {
            if !coinbase(state.setup.venue) {
                continue;
            }
            for (p, target) in targets[v].iter_mut().enumerate() {
                let pace = share.max(state.plans[p].pace);
                target.pace = pace;
                state.requests.set_pace(p, pace);
            }
        }
    }

    /// Sends the resubscriptions and retries that are due, on the
    /// connections that carry their books, if open (a connection that is
    /// down subscribes everything again when it is back), each once its
    /// connection's request budget admits it.
    pub(super) fn recover(&mut self, now: Instant) {
        let mut due = std::mem::take(&mut self.due);
        self.driver.handler_mut().recovery.take_due(now, &mut due);
        for (v, what) in due.drain(..) {
            if let Due::Fetch(i) = what {
                // Queued for the fetches below (one per book: it is
                // wanted until it answers).
                let book = (v, InstrumentId(i as u32));
                self.driver.handler_mut().want_snapshot.push(book);
                // Its venue's budget may admit it now.
                self.fetch_wait = None;
                continue;
            }
            if let Due::Replace(i) = what {
                self.replace_connection(v, i, now);
                continue;
            }
            let core = self.driver.handler();
            let state = &core.venues[v];
            // A connection's retry (after a refusal that named no book,
            // Binance's) sends all its subscriptions again (Binance
            // acknowledges a stream subscribed twice); a book's need
            // resubscribes (or, refused, subscribes) that book alone. A
            // REST venue's books have no frames of their own: a refusal
            // naming one is its connection's retry too.
            let rest = state.setup.venue.rest_snapshots();
            let (p, need) = match what {
                Due::Link(p) => (p, Need::Subscribe),
                Due::Book(i, need) => (state.plan_of[i], need),
                Due::Fetch(_) | Due::Replace(_) => continue,
            };
            let line = state.lines[p].leader;
            let Some(id) = state.lines[p].leader_id() else {
                continue;
            };
            if !self.driver.is_open(id) {
                continue;
            }
            let whole = rest || matches!(what, Due::Link(_));
            let (all, from) = match what {
                Due::Book(i, need) if !rest => {
                    let n = state.resubscribe[i].len();
                    let from = match need {
                        Need::Resubscribe => 0,
                        Need::Subscribe => n.saturating_sub(1),
                    };
                    (n, from)
                }
                _ => (state.plans[p].subscribe.len(), 0),
            };
            let count = all - from;
            let state = &mut self.driver.handler_mut().venues[v];
            if let Err(at) = state.requests.admit(p, line, count, now) {
                self.wait(v, p, line, what, at, now);
                continue;
            }
            // The frames are taken out of the state while the driver
            // sends them, then put back: nothing is copied.
            let frames = match what {
                Due::Book(i, _) if !rest => std::mem::take(&mut state.resubscribe[i]),
                _ => std::mem::take(&mut state.plans[p].subscribe),
            };
            let mut sent = 0;
            for text in &frames[from..] {
                if self.driver.send_text(id, text).is_ok() {
                    sent += 1;
                    let core = self.driver.handler_mut();
                    let tsc = core.clock.now();
                    core.record(recording::Kind::Sent, id, tsc, text.as_bytes());
                }
            }
            let core = self.driver.handler_mut();
            let state = &mut core.venues[v];
            let left = state.requests.spend(p, line, sent, now);
            match what {
                Due::Book(i, _) if !rest => state.resubscribe[i] = frames,
                _ => state.plans[p].subscribe = frames,
            }
            if need == Need::Resubscribe && sent > 0 {
                FeedStats::add(&core.stats.resubscriptions, 1);
            }
            if let Due::Book(i, Need::Resubscribe) = what
                && !rest
                && sent > 0
            {
                // Followed up: asked again if no snapshot comes once the
                // requests have left. (A refused subscription tried again
                // is not: the venue answers it, with a refusal or a
                // snapshot.)
                core.recovery.resubscribed(v, i, left);
            }
            if whole {
                // The connection's subscriptions, sent again: the replies
                // to come are this round's.
                core.recovery.sent(v, p, count);
            }
        }
        self.due = due;
    }

    /// `what` (due on line `line` of venue `v`'s plan `p`) is over the
    /// connection's request budget until `at`: postponed until then, and
    /// said once until a request goes again.
    fn wait(
        &mut self,
        v: usize,
        p: usize,
        line: tickwire_venues::Line,
        what: Due,
        at: Instant,
        now: Instant,
    ) {
        let core = self.driver.handler_mut();
        core.recovery.postpone(v, what, at);
        let state = &mut core.venues[v];
        if !state.requests.waits(p, line) {
            return;
        }
        let symbol = |i: usize| {
            state
                .setup
                .instruments
                .get(i)
                .map_or("?", |s| s.symbol.as_str())
        };
        let (whom, books) = match what {
            Due::Book(i, Need::Resubscribe) => {
                (format!("{}'s resubscription", symbol(i)), "its book stays")
            }
            Due::Book(i, Need::Subscribe) => {
                (format!("{}'s subscription", symbol(i)), "its book stays")
            }
            _ => ("its subscriptions' retry".into(), "its books stay"),
        };
        let (requests, within) = state
            .requests
            .limit()
            .map_or((0, Duration::ZERO), |l| (l.requests, l.window));
        tickwire_log(format_args!(
            "venue {}: connection {p} (line {line}) has sent {} of the {requests} requests the \
             venue takes on a connection in {}: {whom} waits {} s; {books} invalid until then",
            state.setup.name,
            state.requests.counted(p, line),
            window(within),
            at.saturating_duration_since(now).as_secs()
        ));
    }

    /// Book `i` of venue `v` went without a snapshot through every
    /// resubscription: its connection is replaced, make-before-break (said
    /// once per replacement, with the book's name).
    fn replace_connection(&mut self, v: usize, i: usize, now: Instant) {
        let state = &mut self.driver.handler_mut().venues[v];
        let p = state.plan_of[i];
        state.lines[p].replace(now);
        let name = &state.setup.name;
        let symbol = state
            .setup
            .instruments
            .get(i)
            .map_or("?", |s| s.symbol.as_str());
        tickwire_log(format_args!(
            "venue {name}: {symbol}: no snapshot after {} resubscriptions; \
             replacing its connection",
            recovery::REPLACE_AFTER
        ));
        self.next_lines = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use tickwire_venues::{InstrumentSpec, Venue};

    use crate::id::{FeedId, VenueId};
    use crate::live::{Feed, FeedError, VenueSetup};

    /// A feed of OKX (two instruments) and Kraken (one), numbered from
    /// 10, pointed at a loopback port nothing listens on: built, never
    /// connected.
    fn feed() -> Feed {
        let setup = |name: &str, venue, symbols: &[&str]| {
            let specs = symbols
                .iter()
                .map(|s| InstrumentSpec::new(s, 2, 8, 5))
                .collect();
            let mut s = VenueSetup::new(name, venue, specs);
            s.endpoint = Some("ws://127.0.0.1:9".into());
            s
        };
        Feed::builder()
            .check_instruments(false)
            .setup(setup("okx", Venue::Okx, &["BTC-USDT", "ETH-USDT"]))
            .setup(setup("kraken", Venue::Kraken, &["BTC/USD"]))
            .first_id(FeedId(10))
            .build()
            .unwrap()
    }

    /// Venues fetching snapshots from one REST host spend one budget (the
    /// venue counts weight by address), at the least limit they say;
    /// another host has its own.
    #[test]
    fn venues_on_one_rest_host_share_its_budget() {
        let setup = |name: &str, venue, rest: &str, limit| {
            let mut s = VenueSetup::new(name, venue, vec![InstrumentSpec::new("BTCUSDT", 2, 8, 5)]);
            s.endpoint = Some("ws://127.0.0.1:9".into());
            s.rest = Some(rest.into());
            s.rest_weight_limit = limit;
            s.api_key = Some(crate::live::ApiKey::Given("k".into()));
            if venue != Venue::BinanceSpotSbe {
                s.api_key = None;
            }
            s
        };
        let feed = Feed::builder()
            .check_instruments(false)
            .setup(setup(
                "json",
                Venue::BinanceSpot,
                "http://127.0.0.1:9",
                Some(1000),
            ))
            .setup(setup(
                "sbe",
                Venue::BinanceSpotSbe,
                "http://127.0.0.1:9",
                None,
            ))
            .setup(setup(
                "usdm",
                Venue::BinanceUsdM,
                "http://127.0.0.1:10",
                None,
            ))
            .setup(setup("okx", Venue::Okx, "http://127.0.0.1:9", None))
            .build()
            .unwrap();
        let core = feed.driver.handler();
        assert_eq!(core.rest_of, [0, 0, 1, 2], "spot twice on one host");
        assert_eq!(core.rest.len(), 3);
        // The shared one holds half the least limit (1000, not 6000).
        assert_eq!(core.rest[0].capacity(), 500.0);
        assert_eq!(core.rest[1].capacity(), 1200.0);
    }

    /// Ids numbered from near the top: the last fits, one more is refused.
    #[test]
    fn feed_wide_ids_never_run_past_u32_max() {
        let build = |first: u32| {
            let spec = InstrumentSpec::new("BTC-USDT", 2, 8, 5);
            let mut s = VenueSetup::new("okx", Venue::Okx, vec![spec.clone(), spec]);
            s.instruments[1].symbol = "ETH-USDT".into();
            s.endpoint = Some("ws://127.0.0.1:9".into());
            Feed::builder()
                .check_instruments(false)
                .setup(s)
                .first_id(FeedId(first))
                .build()
        };
        let feed = build(u32::MAX - 1).unwrap();
        let okx = feed.venue("okx").unwrap();
        assert_eq!(feed.instrument(okx, "ETH-USDT"), Some(FeedId(u32::MAX)));
        let Err(e) = build(u32::MAX) else {
            panic!("ids past u32::MAX accepted")
        };
        assert!(
            matches!(
                e,
                FeedError::Setup(crate::live::SetupError::IdsExhausted { count: 2, .. })
            ),
            "{e:?}"
        );
    }

    #[test]
    fn venues_are_named_once_and_instruments_have_feed_wide_ids() {
        let mut feed = feed();
        let okx = feed.venue("okx").unwrap();
        let kraken = feed.venue("kraken").unwrap();
        assert_eq!((okx.index(), kraken.index()), (0, 1));
        assert_eq!(feed.venue("nowhere"), None);
        // Each venue's instruments after the ones before it, from 10.
        assert_eq!(feed.instrument(okx, "BTC-USDT"), Some(FeedId(10)));
        assert_eq!(feed.instrument(okx, "ETH-USDT"), Some(FeedId(11)));
        assert_eq!(feed.instrument(kraken, "BTC/USD"), Some(FeedId(12)));
        assert_eq!(feed.instrument(kraken, "ETH-USDT"), None);
        assert_eq!(feed.instruments().len(), 3);
        assert_eq!(feed.instruments()[2].symbol, "BTC/USD");
        // Nothing valid yet, by either way of naming a book.
        assert!(feed.book(FeedId(12)).is_none());
        assert!(feed.book_of(kraken, "BTC/USD").is_none());
        assert_eq!(feed.rejection(okx), "");
        // Nothing open to send on; a handle that is not this feed's fails.
        assert_eq!(feed.send(okx, "{}").unwrap(), 0);
        let beyond = VenueId::new(0, 2);
        assert!(matches!(
            feed.send(beyond, "{}"),
            Err(FeedError::NoVenue(v)) if v == beyond
        ));
        // Another feed's handle, at a place this feed has too: refused
        // by every method, never taken for this feed's venue there.
        let other = self::feed();
        let foreign = other.venue("okx").unwrap();
        assert_eq!(foreign.index(), okx.index());
        assert_ne!(foreign, okx);
        assert!(matches!(
            feed.send(foreign, "{}"),
            Err(FeedError::NoVenue(v)) if v == foreign
        ));
        assert!(
            feed.limit_requests(foreign, 100, std::time::Duration::from_secs(1))
                .is_err()
        );
        assert_eq!(feed.rejection(foreign), "");
        assert!(feed.book_of(foreign, "BTC-USDT").is_none());
        assert_eq!(feed.instrument(foreign, "BTC-USDT"), None);
        assert_eq!(other.instrument(foreign, "BTC-USDT"), Some(FeedId(10)));
    }
}
