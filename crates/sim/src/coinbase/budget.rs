//! Coinbase's message budget: 8 a second from one address, every
//! connection's together (`crate::okx::budget`: what the venue documents,
//! and what it does not).

use std::time::Instant;

use super::{Client, Coinbase};
use crate::okx::budget::{COINBASE, RequestBudget};
use crate::server::lock;

impl Coinbase {
    /// Coinbase with `budget` in place of its documented message budget
    /// (the same handle: it may change while the simulator runs).
    pub(crate) fn with_budget(mut self, budget: RequestBudget) -> Coinbase {
        self.budget = budget;
        self
    }

    /// A message from `client` at `now`: whether it is within the
    /// address's budget. One over it marks the client, to be closed;
    /// nothing a marked client sends is counted again.
    pub(super) fn admit(&self, client: &mut Client, now: Instant) -> bool {
        if client.over {
            return false;
        }
        if lock(&self.messages).admit(now, self.budget.limit_or(COINBASE)) {
            return true;
        }
        client.over = true;
        self.budget.breached();
        false
    }
}

/// Coinbase with no message budget: for tests that send more requests
/// at once than the venue takes in a second.
#[cfg(test)]
pub(super) fn unlimited() -> Coinbase {
    let unlimited = RequestBudget::new(u32::MAX, std::time::Duration::from_secs(1));
    Coinbase::new().with_budget(unlimited)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use tickwire_net::CloseCode;

    use super::super::Coinbase;
    use super::super::tests::{connect, market};
    use crate::RequestBudget;
    use crate::protocol::{Out, Protocol, Tick};

    const HEARTBEATS: &str = r#"{"type":"subscribe","channel":"heartbeats"}"#;

    /// Eight messages in a second from two connections are served; the ninth
    /// closes the connection that sent it (and only it), unanswered.
    #[test]
    fn the_ninth_message_in_a_second_from_the_address_closes_its_connection() {
        let cb = Coinbase::new();
        let mut m = market();
        let (mut a, mut b) = (connect(&cb, &m), connect(&cb, &m));
        let mut out = Out::default();
        for k in 0..8 {
            let c = if k % 2 == 0 { &mut a } else { &mut b };
            cb.on_text(c, HEARTBEATS, &mut m, &mut out);
            assert_eq!(out.items.len(), k + 1, "message {k} answered");
        }
        cb.on_text(&mut b, HEARTBEATS, &mut m, &mut out);
        assert_eq!(out.items.len(), 8, "the ninth is not answered");
        let now = Instant::now();
        assert_eq!(
            cb.on_tick(&mut b, now, Duration::ZERO, &mut out),
            Tick::Close(CloseCode::POLICY_VIOLATION, "too many messages")
        );
        assert_eq!(
            cb.on_tick(&mut a, now, Duration::ZERO, &mut out),
            Tick::Keep
        );
        assert_eq!(cb.budget.breaches(), 1);
        // Nothing more from the closed one is read (or counted twice).
        cb.on_text(&mut b, HEARTBEATS, &mut m, &mut out);
        assert_eq!((out.items.len(), cb.budget.breaches()), (8, 1));
    }

    /// The second slides: eight, then one more as soon as the first is a
    /// second old; a budget set in place of Coinbase's (lowered to nothing,
    /// say) holds at once.
    #[test]
    fn the_window_is_any_second_and_a_budget_set_for_a_test_holds_at_once() {
        let budget = RequestBudget::venue();
        let cb = Coinbase::new().with_budget(budget.clone());
        let m = market();
        let mut c = connect(&cb, &m);
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        for k in 0..8 {
            assert!(cb.admit(&mut c, ms(k * 100)), "{k}");
        }
        assert!(cb.admit(&mut c, ms(1000)), "the first is a second old");
        assert!(!cb.admit(&mut c, ms(1050)), "nine in the second to 1050 ms");
        assert!(c.over);
        let mut d = connect(&cb, &m);
        budget.set(Some((0, Duration::from_secs(1))));
        assert!(!cb.admit(&mut d, ms(5000)));
        assert_eq!(budget.breaches(), 2);
    }
}
