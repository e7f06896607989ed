//! Bringing books back where the venue sends snapshots in band (OKX,
//! Bybit, Kraken, Coinbase, Deribit), and trying refused subscriptions
//! again: per book, an attempt count and a due time, paced by a backoff so
//! that a book that keeps breaking, or a symbol the venue keeps refusing,
//! costs the venue a request now and then, never a storm.
//!
//! A broken book is recovered by unsubscribing and subscribing its channel
//! again on the connection that carries it: the venue then sends a fresh
//! snapshot (see each venue's `resubscribe` in `tickwire_venues::plan`).
//! The first attempt goes out at once; if the book breaks again before it
//! was valid, the next waits 500 ms, then twice as long each time, up to
//! 30 s. A refused subscription is tried again (subscribe only) after
//! 1 s, then the same doubling. A book that becomes valid starts over.
//! Requests leave through the connection's paced outbox, under the
//! venue's message-rate limit, and within its request budget
//! (`super::requests`: OKX's 480 a connection an hour): so a book that
//! keeps breaking, valid a moment each time, cannot spend more than the
//! venue takes. A request over the budget is postponed until the budget
//! admits it ([`Recovery::postpone`]), as many attempts as before.
//!
//! A book whose REST snapshot (Binance) failed, or proved too old for its
//! buffered diffs, or whose stream broke again before it was valid, is
//! fetched again on the same schedule: the first fetch at once, the next
//! after 500 ms, doubling up to 30 s, until the book is valid; each wait
//! is up to a fifth longer at random, so that the books that failed
//! together (a reconnect, a venue's 429) ask again apart. A venue
//! answering errors, or a snapshot that can never bridge (a stream that
//! outruns its fetches), costs a fetch now and then, not one a round
//! trip: Binance bans an address that keeps asking past its request
//! weight limit ("Limits" in its REST API docs: 429, then 418).
//!
//! A resubscription is followed up: a venue may ignore it (a Bybit
//! "already subscribed" reply names no instrument; Coinbase does not say
//! what a second subscription of a channel does), and a book waiting for a
//! snapshot that never comes would stay invalid until its connection
//! happened to drop. So a book resubscribed, or subscribed again on a
//! connection that reopened while it waited, that is not valid
//! [`SNAPSHOT_WAIT`] later is resubscribed again, on the same backoff;
//! after [`REPLACE_AFTER`] such silences its connection is replaced
//! (make-before-break: a second line opens and subscribes everything, and
//! the old one closes once the new one carries the plan's books).
//!
//! A refusal that names no instrument (Binance's names only its request's
//! id) is the connection's: it has a slot of its own, apart from the
//! books', and is retried by sending the connection's subscriptions again,
//! with the same backoff as a refused book. No book's validity cancels it:
//! only sending the subscriptions again does (the retry, or the
//! connection's reopening), and its backoff starts over only once a round
//! of them is accepted, every reply of the round.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

/// What a book needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// A fresh snapshot: unsubscribe and subscribe its book channel.
    Resubscribe,
    /// Its subscription was refused: subscribe again.
    Subscribe,
}

#[derive(Clone, Copy, Debug, Default)]
struct Book {
    /// Attempts since the book was last valid.
    attempts: u32,
    due: Option<(Instant, Need)>,
    /// REST snapshot fetches since the book was last valid.
    fetches: u32,
    /// When its next fetch may go.
    fetch_due: Option<Instant>,
    /// A (re)subscription went out: the book should be valid by then.
    answer_by: Option<Instant>,
    /// Resubscriptions that went unanswered since the book was last valid
    /// or its connection replaced.
    unanswered: u32,
    /// The venue refused its subscription since it was last valid: the
    /// venue answers, so nothing is followed up as unanswered.
    refused: bool,
}

/// A connection's retry of subscriptions refused without naming an
/// instrument.
#[derive(Clone, Copy, Debug, Default)]
struct Link {
    /// Retries since a round of the connection's subscriptions was last
    /// accepted whole.
    attempts: u32,
    due: Option<Instant>,
    /// Replies the venue still owes the subscriptions last sent.
    owed: u32,
    /// One of those replies was a refusal.
    refused: bool,
}

/// What is due: a book's need, or a connection's retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// Book (instrument) `i` needs this.
    Book(usize, Need),
    /// Book (instrument) `i`'s REST snapshot is to be fetched.
    Fetch(usize),
    /// Connection (plan) `p`'s subscriptions are to be sent again.
    Link(usize),
    /// Book (instrument) `i`'s resubscriptions went unanswered
    /// [`REPLACE_AFTER`] times: its connection is to be replaced.
    Replace(usize),
}

/// Every book's recovery, by venue and instrument, and every connection's
/// retry, by venue and plan (allocated at start-up).
pub(crate) struct Recovery {
    books: Vec<Vec<Book>>,
    links: Vec<Vec<Link>>,
    /// Books and connections with something due.
    waiting: usize,
    /// Keys the spread of each snapshot fetch's wait (random per feed).
    jitter: RandomState,
}

/// The longest wait between two attempts (before a fetch's jitter).
const MAX_WAIT: Duration = Duration::from_secs(30);

/// How long a book resubscribed may take to be valid again before it is
/// asked again. Venues answer a subscription with its snapshot within
/// milliseconds; this leaves a loaded machine (or venue) room.
pub(crate) const SNAPSHOT_WAIT: Duration = Duration::from_secs(5);

/// Unanswered resubscriptions after which a book's connection is replaced.
pub(crate) const REPLACE_AFTER: u32 = 3;

/// A snapshot fetch waits up to this much longer than its backoff, so
/// that books which failed together (a reconnect, a venue's 429) do not
/// ask again together.
const FETCH_JITTER: f64 = 0.2;

impl Recovery {
    /// `venues[v]`: how many instruments and connections (plans) venue `v`
    /// has.
    pub(crate) fn new(venues: impl IntoIterator<Item = (usize, usize)>) -> Recovery {
        let (books, links) = venues
            .into_iter()
            .map(|(instruments, plans)| {
                (
                    vec![Book::default(); instruments],
                    vec![Link::default(); plans],
                )
            })
            .unzip();
        Recovery {
            books,
            links,
            waiting: 0,
            jitter: RandomState::new(),
        }
    }

    /// The wait before attempt `n` (1-based) of `need`.
    fn wait(need: Need, n: u32) -> Duration {
        let first = match need {
            Need::Resubscribe if n <= 1 => return Duration::ZERO,
            Need::Resubscribe => Duration::from_millis(500),
            Need::Subscribe => Duration::from_secs(1),
        };
        let doublings = n.saturating_sub(if need == Need::Resubscribe { 2 } else { 1 });
        first
            .checked_mul(1 << doublings.min(16))
            .unwrap_or(MAX_WAIT)
            .min(MAX_WAIT)
    }

    /// Book `i` of venue `v` needs `need`, from `now`: scheduled after the
    /// backoff, unless something is due for it already.
    pub(crate) fn ask(&mut self, v: usize, i: usize, need: Need, now: Instant) {
        let Some(book) = self.books.get_mut(v).and_then(|b| b.get_mut(i)) else {
            return;
        };
        if need == Need::Subscribe {
            // The venue answered, with a refusal: no deadline for an
            // answer runs, and no silence is counted.
            book.refused = true;
            book.unanswered = 0;
            if book.answer_by.take().is_some() {
                self.waiting -= 1;
            }
        }
        match book.due {
            // A refusal outranks a resubscription already waiting.
            Some((at, Need::Resubscribe)) if need == Need::Subscribe => {
                book.due = Some((at, need));
            }
            Some(_) => {}
            None => {
                book.attempts = book.attempts.saturating_add(1);
                book.due = Some((now + Self::wait(need, book.attempts), need));
                self.waiting += 1;
            }
        }
    }

    /// Book `i` of venue `v` wants its REST snapshot, from `now`: fetched
    /// after the backoff (at once the first time since it was valid) and
    /// up to [`FETCH_JITTER`] more, unless a fetch is already due.
    pub(crate) fn fetch(&mut self, v: usize, i: usize, now: Instant) {
        let Some(book) = self.books.get_mut(v).and_then(|b| b.get_mut(i)) else {
            return;
        };
        if book.fetch_due.is_none() {
            book.fetches = book.fetches.saturating_add(1);
            let wait = Self::wait(Need::Resubscribe, book.fetches);
            // 0 to FETCH_JITTER more, as this book's attempt hashes.
            let unit = self.jitter.hash_one((v, i, book.fetches)) as f64 / u64::MAX as f64;
            book.fetch_due = Some(now + wait.mul_f64(1.0 + FETCH_JITTER * unit));
            self.waiting += 1;
        }
    }

    /// Book `i` of venue `v` was resubscribed (or subscribed again on a
    /// connection that reopened while it waited) at `now`: if it is not
    /// valid [`SNAPSHOT_WAIT`] later, it is asked again.
    pub(crate) fn resubscribed(&mut self, v: usize, i: usize, now: Instant) {
        if let Some(book) = self.books.get_mut(v).and_then(|b| b.get_mut(i)) {
            if book.answer_by.is_none() {
                self.waiting += 1;
            }
            book.answer_by = Some(now + SNAPSHOT_WAIT);
        }
    }

    /// What was due (`what`: book `i`'s resubscription or subscription,
    /// connection `p`'s retry) of venue `v` cannot go before `at` (its
    /// connection's request budget): due then, without counting as one
    /// more attempt, so the backoff is not made longer by the wait.
    pub(crate) fn postpone(&mut self, v: usize, what: Due, at: Instant) {
        let due = match what {
            Due::Book(i, need) => self
                .books
                .get_mut(v)
                .and_then(|b| b.get_mut(i))
                .map(|b| (&mut b.due, Some(need))),
            Due::Fetch(_) | Due::Replace(_) => None,
            Due::Link(p) => {
                if let Some(link) = self.links.get_mut(v).and_then(|l| l.get_mut(p)) {
                    if link.due.is_none() {
                        self.waiting += 1;
                    }
                    link.due = Some(link.due.map_or(at, |d| d.max(at)));
                }
                None
            }
        };
        if let Some((due, Some(need))) = due {
            match due {
                None => {
                    *due = Some((at, need));
                    self.waiting += 1;
                }
                // Asked for again meanwhile: the later time; a refusal
                // outranks a resubscription.
                Some((when, n)) => {
                    *when = (*when).max(at);
                    if need == Need::Subscribe {
                        *n = need;
                    }
                }
            }
        }
    }

    /// Whether book `i` of venue `v` has been asked for since it was last
    /// valid (a resubscription due or sent, a fetch): it waits for a
    /// snapshot.
    pub(crate) fn recovering(&self, v: usize, i: usize) -> bool {
        self.books
            .get(v)
            .and_then(|b| b.get(i))
            .is_some_and(|b| b.attempts > 0 && !b.refused)
    }

    /// Book `i` of venue `v` is valid: its backoff starts over, and
    /// nothing more is needed.
    pub(crate) fn valid(&mut self, v: usize, i: usize) {
        if let Some(book) = self.books.get_mut(v).and_then(|b| b.get_mut(i)) {
            book.attempts = 0;
            book.fetches = 0;
            book.unanswered = 0;
            book.refused = false;
            if book.answer_by.take().is_some() {
                self.waiting -= 1;
            }
            if book.due.take().is_some() {
                self.waiting -= 1;
            }
            if book.fetch_due.take().is_some() {
                self.waiting -= 1;
            }
        }
    }

    /// Connection `p` of venue `v` sent `n` subscriptions (when it opened,
    /// or as a retry): a retry waiting for it is done, and the next `n`
    /// replies on it are this round's.
    pub(crate) fn sent(&mut self, v: usize, p: usize, n: usize) {
        if let Some(link) = self.links.get_mut(v).and_then(|l| l.get_mut(p)) {
            if link.due.take().is_some() {
                self.waiting -= 1;
            }
            link.owed = u32::try_from(n).unwrap_or(u32::MAX);
            link.refused = false;
        }
    }

    /// The venue refused a request on connection `p` of venue `v`, naming
    /// no instrument: its subscriptions are sent again after the backoff,
    /// unless a retry waits already. True for the first refusal since a
    /// round was last accepted (the one to log).
    pub(crate) fn refused(&mut self, v: usize, p: usize, now: Instant) -> bool {
        let Some(link) = self.links.get_mut(v).and_then(|l| l.get_mut(p)) else {
            return false;
        };
        link.owed = link.owed.saturating_sub(1);
        link.refused = true;
        let first = link.attempts == 0;
        if link.due.is_none() {
            link.attempts = link.attempts.saturating_add(1);
            link.due = Some(now + Self::wait(Need::Subscribe, link.attempts));
            self.waiting += 1;
        }
        first
    }

    /// The venue accepted a request on connection `p` of venue `v`: once
    /// every reply of the round came without a refusal, the connection's
    /// backoff starts over. Cancels nothing: a refusal's retry waits for
    /// the subscriptions to be sent again.
    pub(crate) fn accepted(&mut self, v: usize, p: usize) {
        if let Some(link) = self.links.get_mut(v).and_then(|l| l.get_mut(p))
            && link.owed > 0
        {
            link.owed -= 1;
            if link.owed == 0 && !link.refused {
                link.attempts = 0;
            }
        }
    }

    /// Whether anything waits (cheap: checked every poll).
    pub(crate) fn waiting(&self) -> bool {
        self.waiting > 0
    }

    /// Takes everything due at `now` into `out` (venue, what).
    pub(crate) fn take_due(&mut self, now: Instant, out: &mut Vec<(usize, Due)>) {
        for (v, books) in self.books.iter_mut().enumerate() {
            for (i, book) in books.iter_mut().enumerate() {
                if let Some((at, need)) = book.due
                    && at <= now
                {
                    book.due = None;
                    self.waiting -= 1;
                    out.push((v, Due::Book(i, need)));
                }
                if let Some(at) = book.fetch_due
                    && at <= now
                {
                    book.fetch_due = None;
                    self.waiting -= 1;
                    out.push((v, Due::Fetch(i)));
                }
                if let Some(at) = book.answer_by
                    && at <= now
                {
                    // No snapshot came: ask again after the backoff, or,
                    // after the last of them, replace the connection.
                    book.answer_by = None;
                    self.waiting -= 1;
                    book.unanswered = book.unanswered.saturating_add(1);
                    if book.unanswered >= REPLACE_AFTER {
                        book.unanswered = 0;
                        out.push((v, Due::Replace(i)));
                    } else if book.due.is_none() {
                        book.attempts = book.attempts.saturating_add(1);
                        let wait = Self::wait(Need::Resubscribe, book.attempts);
                        book.due = Some((now + wait, Need::Resubscribe));
                        self.waiting += 1;
                    }
                }
            }
        }
        for (v, links) in self.links.iter_mut().enumerate() {
            for (p, link) in links.iter_mut().enumerate() {
                if let Some(at) = link.due
                    && at <= now
                {
                    link.due = None;
                    self.waiting -= 1;
                    out.push((v, Due::Link(p)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(r: &mut Recovery, now: Instant) -> Vec<(usize, Due)> {
        let mut out = Vec::new();
        r.take_due(now, &mut out);
        out
    }

    #[test]
    fn a_broken_book_is_resubscribed_at_once_then_ever_more_slowly() {
        let mut r = Recovery::new([(2, 1)]);
        let t0 = Instant::now();
        r.ask(0, 1, Need::Resubscribe, t0);
        assert_eq!(due(&mut r, t0), [(0, Due::Book(1, Need::Resubscribe))]);
        assert!(!r.waiting());
        // It broke again before it was valid: 500 ms, then 1 s, 2 s...
        let mut at = t0;
        for wait_ms in [500, 1000, 2000, 4000] {
            r.ask(0, 1, Need::Resubscribe, at);
            // Asked twice meanwhile: one request, not two.
            r.ask(0, 1, Need::Resubscribe, at);
            assert!(due(&mut r, at + Duration::from_millis(wait_ms - 1)).is_empty());
            at += Duration::from_millis(wait_ms);
            assert_eq!(due(&mut r, at), [(0, Due::Book(1, Need::Resubscribe))]);
        }
        // Never longer than 30 s.
        for _ in 0..20 {
            r.ask(0, 1, Need::Resubscribe, at);
            at += MAX_WAIT;
            assert_eq!(due(&mut r, at).len(), 1);
        }
        // Valid again: the next break is resubscribed at once.
        r.valid(0, 1);
        r.ask(0, 1, Need::Resubscribe, at);
        assert_eq!(due(&mut r, at).len(), 1);
    }

    #[test]
    fn a_snapshot_is_fetched_at_once_then_ever_more_slowly_until_the_book_is_valid() {
        let mut r = Recovery::new([(2, 1)]);
        let t0 = Instant::now();
        r.fetch(0, 0, t0);
        // Asked again before it went: one fetch.
        r.fetch(0, 0, t0);
        assert_eq!(due(&mut r, t0), [(0, Due::Fetch(0))]);
        assert!(!r.waiting());
        // Failed, or too old: 500 ms, then 1 s, 2 s... and up to a fifth
        // more (the jitter), never less.
        let most = |wait: Duration| wait.mul_f64(1.0 + FETCH_JITTER);
        let mut at = t0;
        for wait_ms in [500, 1000, 2000, 4000] {
            let wait = Duration::from_millis(wait_ms);
            r.fetch(0, 0, at);
            assert!(due(&mut r, at + wait - Duration::from_millis(1)).is_empty());
            at += most(wait);
            assert_eq!(due(&mut r, at), [(0, Due::Fetch(0))]);
        }
        // Fetch 6 on: doubling until it stays at MAX_WAIT.
        for n in 6..26 {
            let wait = Recovery::wait(Need::Resubscribe, n);
            r.fetch(0, 0, at);
            assert!(due(&mut r, at + wait - Duration::from_millis(1)).is_empty());
            at += most(wait);
            assert_eq!(due(&mut r, at), [(0, Due::Fetch(0))]);
        }
        assert_eq!(Recovery::wait(Need::Resubscribe, 25), MAX_WAIT);
        // Two books failing together are asked again apart.
        let mut two = Recovery::new([(2, 1)]);
        for i in 0..2 {
            two.fetch(0, i, t0);
        }
        assert_eq!(due(&mut two, t0).len(), 2);
        for i in 0..2 {
            two.fetch(0, i, t0);
        }
        let [a, b] = [0, 1].map(|i| two.books[0][i].fetch_due.unwrap());
        assert_ne!(a, b, "the same wait for both");
        // A resubscription of the same book keeps its own schedule.
        r.fetch(0, 0, at);
        r.ask(0, 0, Need::Subscribe, at);
        assert_eq!(
            due(&mut r, at + Duration::from_secs(1)),
            [(0, Due::Book(0, Need::Subscribe))]
        );
        assert_eq!(due(&mut r, at + most(MAX_WAIT)), [(0, Due::Fetch(0))]);
        // Valid: what waits is dropped, and the next fetch goes at once.
        r.fetch(0, 0, at);
        r.valid(0, 0);
        assert!(!r.waiting());
        r.fetch(0, 0, at);
        assert_eq!(due(&mut r, at), [(0, Due::Fetch(0))]);
        // Out of range: ignored.
        r.fetch(3, 0, at);
        assert!(!r.waiting());
    }

    #[test]
    fn an_unanswered_resubscription_is_asked_again_then_the_connection_replaced() {
        let mut r = Recovery::new([(2, 1)]);
        let t0 = Instant::now();
        r.ask(0, 1, Need::Resubscribe, t0);
        assert_eq!(due(&mut r, t0), [(0, Due::Book(1, Need::Resubscribe))]);
        r.resubscribed(0, 1, t0);
        assert!(r.recovering(0, 1));
        assert!(!r.recovering(0, 0));
        // Nothing came: asked again after the wait and the backoff.
        let mut at = t0;
        for backoff_ms in [500, 1000] {
            let silent = at + SNAPSHOT_WAIT;
            assert!(due(&mut r, silent - Duration::from_millis(1)).is_empty());
            assert!(due(&mut r, silent).is_empty(), "the backoff first");
            at = silent + Duration::from_millis(backoff_ms);
            assert_eq!(due(&mut r, at), [(0, Due::Book(1, Need::Resubscribe))]);
            r.resubscribed(0, 1, at);
        }
        // The third silence: the connection is replaced, and the book waits
        // for the new connection's snapshot.
        at += SNAPSHOT_WAIT;
        assert_eq!(due(&mut r, at), [(0, Due::Replace(1))]);
        assert!(!r.waiting());
        // A snapshot that comes in time ends it all.
        r.resubscribed(0, 1, at);
        r.valid(0, 1);
        assert!(!r.waiting());
        assert!(!r.recovering(0, 1));
        assert!(due(&mut r, at + MAX_WAIT).is_empty());
    }

    #[test]
    fn a_postponed_resubscription_is_due_when_the_budget_admits_it_with_its_backoff_unchanged() {
        let mut r = Recovery::new([(2, 2)]);
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(600);
        r.ask(0, 1, Need::Resubscribe, t0);
        assert_eq!(due(&mut r, t0), [(0, Due::Book(1, Need::Resubscribe))]);
        // Over the connection's budget: due again at `later`.
        r.postpone(0, Due::Book(1, Need::Resubscribe), later);
        assert!(r.waiting());
        assert!(due(&mut r, later - Duration::from_millis(1)).is_empty());
        assert_eq!(due(&mut r, later), [(0, Due::Book(1, Need::Resubscribe))]);
        // Still the first attempt: broken again before valid, the next
        // waits 500 ms, not more.
        r.ask(0, 1, Need::Resubscribe, later);
        assert_eq!(
            due(&mut r, later + Duration::from_millis(500)),
            [(0, Due::Book(1, Need::Resubscribe))]
        );
        // A connection's retry too; a valid book ends a postponed need.
        r.postpone(0, Due::Link(1), later);
        r.postpone(0, Due::Book(0, Need::Subscribe), later);
        r.valid(0, 0);
        assert_eq!(due(&mut r, later), [(0, Due::Link(1))]);
        assert!(!r.waiting());
    }

    /// A venue that refuses a subscription answers it: the book is not
    /// counted as unanswered, and its connection is never replaced for it.
    #[test]
    fn a_refused_book_is_tried_again_and_never_replaces_its_connection() {
        let mut r = Recovery::new([(1, 1)]);
        let t0 = Instant::now();
        r.ask(0, 0, Need::Resubscribe, t0);
        assert_eq!(due(&mut r, t0), [(0, Due::Book(0, Need::Resubscribe))]);
        r.resubscribed(0, 0, t0);
        // Refused, again and again, for an hour.
        let mut at = t0;
        for _ in 0..120 {
            r.ask(0, 0, Need::Subscribe, at);
            assert!(!r.recovering(0, 0), "a reopened line does not follow it up");
            at += MAX_WAIT;
            for (_, what) in due(&mut r, at) {
                assert_eq!(what, Due::Book(0, Need::Subscribe));
            }
        }
        // Valid: the next break is followed up again.
        r.valid(0, 0);
        r.ask(0, 0, Need::Resubscribe, at);
        assert!(r.recovering(0, 0));
    }

    #[test]
    fn a_refusal_waits_a_second_and_a_valid_book_needs_nothing() {
        let mut r = Recovery::new([(1, 1), (1, 1)]);
        let t0 = Instant::now();
        r.ask(1, 0, Need::Subscribe, t0);
        assert!(due(&mut r, t0).is_empty());
        assert_eq!(
            due(&mut r, t0 + Duration::from_secs(1)),
            [(1, Due::Book(0, Need::Subscribe))]
        );
        r.ask(0, 0, Need::Subscribe, t0);
        r.valid(0, 0);
        assert!(!r.waiting());
        assert!(due(&mut r, t0 + Duration::from_secs(60)).is_empty());
        // Out of range: ignored.
        r.ask(5, 5, Need::Resubscribe, t0);
        assert!(!r.waiting());
    }

    #[test]
    fn a_refusal_naming_no_instrument_is_the_connections_and_no_valid_book_cancels_it() {
        // Venue 0: two books, two connections.
        let mut r = Recovery::new([(2, 2)]);
        let t0 = Instant::now();
        r.sent(0, 1, 2);
        // Connection 1's first request is refused: logged, retried in 1 s.
        assert!(r.refused(0, 1, t0));
        r.accepted(0, 1);
        // Book 0 (and book 1) becoming valid is no answer to it.
        r.valid(0, 0);
        r.valid(0, 1);
        assert!(r.waiting());
        assert!(due(&mut r, t0 + Duration::from_millis(999)).is_empty());
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(due(&mut r, t1), [(0, Due::Link(1))]);
        assert!(!r.waiting());
        // The retry is refused again: not logged again, and twice as long.
        r.sent(0, 1, 2);
        assert!(!r.refused(0, 1, t1));
        r.valid(0, 0);
        assert!(due(&mut r, t1 + Duration::from_millis(1999)).is_empty());
        let t2 = t1 + Duration::from_secs(2);
        assert_eq!(due(&mut r, t2), [(0, Due::Link(1))]);
        // This round is accepted whole: the next refusal is a first one,
        // retried after 1 s again.
        r.sent(0, 1, 2);
        r.accepted(0, 1);
        r.accepted(0, 1);
        assert!(r.refused(0, 1, t2));
        assert_eq!(
            due(&mut r, t2 + Duration::from_secs(1)),
            [(0, Due::Link(1))]
        );
    }

    #[test]
    fn sending_the_subscriptions_again_is_the_retry_and_a_partly_refused_round_keeps_the_backoff() {
        let mut r = Recovery::new([(1, 1)]);
        let t0 = Instant::now();
        r.sent(0, 0, 2);
        assert!(r.refused(0, 0, t0));
        // The connection reopened and subscribed everything again: the
        // retry waiting is done.
        r.sent(0, 0, 2);
        assert!(!r.waiting());
        assert!(due(&mut r, t0 + MAX_WAIT).is_empty());
        // One reply accepted, the other refused: the backoff goes on (2 s).
        r.accepted(0, 0);
        assert!(!r.refused(0, 0, t0));
        assert!(due(&mut r, t0 + Duration::from_millis(1999)).is_empty());
        assert_eq!(
            due(&mut r, t0 + Duration::from_secs(2)),
            [(0, Due::Link(0))]
        );
        // Replies beyond the round's change nothing; out of range: ignored.
        r.accepted(0, 0);
        r.sent(3, 3, 1);
        assert!(!r.refused(3, 3, t0));
        r.accepted(3, 3);
        assert!(!r.waiting());
    }
}
