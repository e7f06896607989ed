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
//! venue's message-rate limit.

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
}

/// Every book's recovery, by venue and instrument (allocated at start-up).
pub(crate) struct Recovery {
    books: Vec<Vec<Book>>,
    /// Books with something due.
    waiting: usize,
}

/// The longest wait between two attempts.
const MAX_WAIT: Duration = Duration::from_secs(30);

impl Recovery {
    /// `instruments[v]`: how many instruments venue `v` has.
    pub(crate) fn new(instruments: impl IntoIterator<Item = usize>) -> Recovery {
        Recovery {
            books: instruments
                .into_iter()
                .map(|n| vec![Book::default(); n])
                .collect(),
            waiting: 0,
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

    /// Book `i` of venue `v` is valid: its backoff starts over, and
    /// nothing more is needed.
    pub(crate) fn valid(&mut self, v: usize, i: usize) {
        if let Some(book) = self.books.get_mut(v).and_then(|b| b.get_mut(i)) {
            book.attempts = 0;
            if book.due.take().is_some() {
                self.waiting -= 1;
            }
        }
    }

    /// Whether anything waits (cheap: checked every poll).
    pub(crate) fn waiting(&self) -> bool {
        self.waiting > 0
    }

    /// Takes every need that is due at `now` into `out` (venue, instrument,
    /// need).
    pub(crate) fn take_due(&mut self, now: Instant, out: &mut Vec<(usize, usize, Need)>) {
        for (v, books) in self.books.iter_mut().enumerate() {
            for (i, book) in books.iter_mut().enumerate() {
                if let Some((at, need)) = book.due
                    && at <= now
                {
                    book.due = None;
                    self.waiting -= 1;
                    out.push((v, i, need));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(r: &mut Recovery, now: Instant) -> Vec<(usize, usize, Need)> {
        let mut out = Vec::new();
        r.take_due(now, &mut out);
        out
    }

    #[test]
    fn a_broken_book_is_resubscribed_at_once_then_ever_more_slowly() {
        let mut r = Recovery::new([2]);
        let t0 = Instant::now();
        r.ask(0, 1, Need::Resubscribe, t0);
        assert_eq!(due(&mut r, t0), [(0, 1, Need::Resubscribe)]);
        assert!(!r.waiting());
        // It broke again before it was valid: 500 ms, then 1 s, 2 s...
        let mut at = t0;
        for wait_ms in [500, 1000, 2000, 4000] {
            r.ask(0, 1, Need::Resubscribe, at);
            // Asked twice meanwhile: one request, not two.
            r.ask(0, 1, Need::Resubscribe, at);
            assert!(due(&mut r, at + Duration::from_millis(wait_ms - 1)).is_empty());
            at += Duration::from_millis(wait_ms);
            assert_eq!(due(&mut r, at), [(0, 1, Need::Resubscribe)]);
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
    fn a_refusal_waits_a_second_and_a_valid_book_needs_nothing() {
        let mut r = Recovery::new([1, 1]);
        let t0 = Instant::now();
        r.ask(1, 0, Need::Subscribe, t0);
        assert!(due(&mut r, t0).is_empty());
        assert_eq!(
            due(&mut r, t0 + Duration::from_secs(1)),
            [(1, 0, Need::Subscribe)]
        );
        r.ask(0, 0, Need::Subscribe, t0);
        r.valid(0, 0);
        assert!(!r.waiting());
        assert!(due(&mut r, t0 + Duration::from_secs(60)).is_empty());
        // Out of range: ignored.
        r.ask(5, 5, Need::Resubscribe, t0);
        assert!(!r.waiting());
    }
}
