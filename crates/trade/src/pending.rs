//! [`Pending`]: requests sent and not yet answered, by request id, in a
//! table allocated once. Both venues answer a request with the `id` it was
//! sent with (JSON-RPC 2.0 on Deribit, the WebSocket API's `id` on
//! Binance): the session numbers its requests from 1 and finds the answer's
//! request here, with what it was about and when it left (the round trip).

use tickwire_venues::InstrumentId;

use crate::order::ClientOrderId;

/// What a request was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    /// A login (or a token refresh).
    Login,
    /// Set-up after the login (cancel-on-disconnect, a subscription).
    Setup,
    /// The venue's open orders (reconciliation), of the instrument with
    /// this index.
    OpenOrders(u32),
    /// Place an order.
    Place(ClientOrderId),
    /// Amend an order (into the second id, where the venue renames it).
    Amend(ClientOrderId, ClientOrderId),
    /// Cancel an order.
    Cancel(ClientOrderId),
    /// Cancel every order (of an instrument index, or all).
    CancelAll(Option<u32>),
    /// Anything else (a keep-alive).
    Other,
}

/// A request in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// The id it was sent with.
    pub id: u64,
    /// What it asked.
    pub asked: Asked,
    /// The TSC stamp it was handed on with.
    pub sent_tsc: u64,
    /// When it left, ms since the Unix epoch.
    pub sent_ms: u64,
    /// The instrument it is about, where the session filed one
    /// ([`Pending::file_about`]): a refused placing names it.
    pub instrument: Option<InstrumentId>,
}

/// Requests in flight, at most the capacity given at creation; ids from 1.
#[derive(Debug)]
pub struct Pending {
    slots: Vec<InFlight>,
    next: u64,
}

impl Pending {
    /// Room for `capacity` requests in flight.
    pub fn new(capacity: usize) -> Pending {
        Pending {
            slots: Vec::with_capacity(capacity),
            next: 1,
        }
    }

    /// Whether another request fits.
    pub fn has_room(&self) -> bool {
        self.slots.len() < self.slots.capacity()
    }

    /// The id the next request will be sent with.
    pub fn peek_id(&self) -> u64 {
        self.next
    }

    /// Files a request and gives its id; `None` when full.
    pub fn file(&mut self, asked: Asked, sent_tsc: u64, sent_ms: u64) -> Option<u64> {
        self.file_about(asked, None, sent_tsc, sent_ms)
    }

    /// Files a request about `instrument` (see [`Pending::file`]).
    pub fn file_about(
        &mut self,
        asked: Asked,
        instrument: Option<InstrumentId>,
        sent_tsc: u64,
        sent_ms: u64,
    ) -> Option<u64> {
        if !self.has_room() {
            return None;
        }
        let id = self.next;
        self.next += 1;
        self.slots.push(InFlight {
            id,
            asked,
            sent_tsc,
            sent_ms,
            instrument,
        });
        Some(id)
    }

    /// The request answered by `id`, taken out of the table.
    pub fn answer(&mut self, id: u64) -> Option<InFlight> {
        let at = self.slots.iter().position(|s| s.id == id)?;
        // Order kept (a few entries): the oldest stays first.
        Some(self.slots.remove(at))
    }

    /// Requests in flight.
    pub fn iter(&self) -> impl Iterator<Item = &InFlight> {
        self.slots.iter()
    }

    /// How many are in flight.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Forgets every request (the connection is gone); ids go on from
    /// where they were, so a late answer on a new connection is never
    /// taken for a new request's.
    pub fn clear(&mut self) {
        self.slots.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_find_their_requests_once_and_ids_never_repeat() {
        let mut p = Pending::new(2);
        let a = p.file(Asked::Login, 10, 1).unwrap();
        let b = p.file(Asked::Place(ClientOrderId(7)), 20, 2).unwrap();
        assert!(p.file(Asked::Other, 0, 0).is_none(), "full");
        assert_eq!(
            p.answer(b).map(|f| (f.asked, f.sent_tsc)),
            Some((Asked::Place(ClientOrderId(7)), 20))
        );
        assert_eq!(p.answer(b), None, "answered once");
        p.clear();
        let c = p.file(Asked::Other, 0, 0).unwrap();
        assert!(c > a && c > b);
        assert_eq!(p.answer(a), None, "a late answer from the old connection");
    }
}
