//! [`OpenOrders`]: the orders a session knows to be working, by client id,
//! in a table allocated once. A session adds an order when the venue
//! accepts it (or when reconciliation finds it), changes it on an amend or
//! a fill, and drops it when it is done; a request for a client id already
//! here is refused as a duplicate before it leaves. Looked up by a scan:
//! a bot keeps tens of orders working, not thousands, and a scan of a few
//! cache lines beats hashing at that size.

use tickwire_venues::InstrumentId;

use crate::order::{ClientOrderId, OrderEvent, OrderKind, Side, VenueOrderId};

/// One working order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenOrder {
    /// Its client id.
    pub cid: ClientOrderId,
    /// The venue-local instrument.
    pub instrument: InstrumentId,
    /// The venue's id.
    pub venue_order: VenueOrderId,
    /// Buy (`Bid`) or sell.
    pub side: Side,
    /// Limit price, in ticks.
    pub price: i64,
    /// Still working (not yet filled).
    pub leaves: i64,
    /// Filled so far.
    pub filled: i64,
}

/// The working orders, at most the capacity given at creation.
#[derive(Debug)]
pub struct OpenOrders {
    orders: Vec<OpenOrder>,
    /// Client ids asked for and not yet answered (placed, or amended into):
    /// a second request for one is a duplicate too.
    pending: Vec<ClientOrderId>,
}

impl OpenOrders {
    /// Room for `capacity` working orders and as many in flight.
    pub fn new(capacity: usize) -> OpenOrders {
        OpenOrders {
            orders: Vec::with_capacity(capacity),
            pending: Vec::with_capacity(capacity),
        }
    }

    /// The working orders.
    pub fn iter(&self) -> impl Iterator<Item = &OpenOrder> {
        self.orders.iter()
    }

    /// How many work.
    pub fn len(&self) -> usize {
        self.orders.len()
    }

    /// Whether none works.
    pub fn is_empty(&self) -> bool {
        self.orders.is_empty()
    }

    /// A working order by its client id.
    pub fn get(&self, cid: ClientOrderId) -> Option<&OpenOrder> {
        self.orders.iter().find(|o| o.cid == cid)
    }

    /// Whether `cid` is working or asked for.
    pub fn known(&self, cid: ClientOrderId) -> bool {
        self.get(cid).is_some() || self.pending.contains(&cid)
    }

    /// Marks `cid` asked for; `false` (nothing kept) when it is known
    /// already or the table is full.
    pub fn reserve(&mut self, cid: ClientOrderId) -> bool {
        if self.known(cid)
            || self.pending.len() == self.pending.capacity()
            || self.orders.len() + self.pending.len() >= self.orders.capacity()
        {
            return false;
        }
        self.pending.push(cid);
        true
    }

    /// `cid` no longer asked for (answered, or its request refused).
    pub fn unreserve(&mut self, cid: ClientOrderId) {
        if let Some(at) = self.pending.iter().position(|&c| c == cid) {
            self.pending.swap_remove(at);
        }
    }

    /// An order found working (accepted, or read back when reconciling);
    /// replaces one of the same client id. `false` when full.
    pub fn insert(&mut self, order: OpenOrder) -> bool {
        self.unreserve(order.cid);
        if let Some(o) = self.orders.iter_mut().find(|o| o.cid == order.cid) {
            *o = order;
            return true;
        }
        if self.orders.len() == self.orders.capacity() {
            return false;
        }
        self.orders.push(order);
        true
    }

    /// The order is done (filled, cancelled): forgotten.
    pub fn remove(&mut self, cid: ClientOrderId) -> Option<OpenOrder> {
        self.unreserve(cid);
        let at = self.orders.iter().position(|o| o.cid == cid)?;
        Some(self.orders.swap_remove(at))
    }

    /// Forgets every order and request (before a reconciliation reads them
    /// back).
    pub fn clear(&mut self) {
        self.orders.clear();
        self.pending.clear();
    }

    /// Applies an event of one of this session's orders: an acceptance
    /// adds it, an amend changes it, a fill reduces it (a fill that leaves
    /// nothing ends it), a cancel ends it, a refusal of its placing
    /// forgets the request.
    pub fn apply(&mut self, e: &OrderEvent) {
        let Some(cid) = e.cid else {
            return;
        };
        match e.kind {
            OrderKind::Accepted { side, price, size } => {
                let filled = self.get(cid).map_or(0, |o| o.filled);
                let _ = self.insert(OpenOrder {
                    cid,
                    instrument: e.instrument,
                    venue_order: e.venue_order,
                    side,
                    price,
                    leaves: size.saturating_sub(filled).max(0),
                    filled,
                });
            }
            OrderKind::Amended { price, size } => {
                if let Some(o) = self.orders.iter_mut().find(|o| o.cid == cid) {
                    o.price = price;
                    o.leaves = size.saturating_sub(o.filled).max(0);
                }
            }
            OrderKind::Filled { size, leaves, .. } => {
                if leaves <= 0 {
                    self.remove(cid);
                } else if let Some(o) = self.orders.iter_mut().find(|o| o.cid == cid) {
                    o.filled = o.filled.saturating_add(size);
                    o.leaves = leaves;
                }
            }
            OrderKind::Canceled => {
                self.remove(cid);
            }
            OrderKind::Rejected { .. } => self.unreserve(cid),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::Reject;

    fn event(cid: u64, kind: OrderKind) -> OrderEvent {
        OrderEvent {
            cid: Some(ClientOrderId(cid)),
            instrument: InstrumentId(0),
            venue_order: VenueOrderId::new("1"),
            kind,
            venue_time_ns: 0,
            sent_tsc: 0,
        }
    }

    #[test]
    fn an_order_lives_from_acceptance_to_its_last_fill() {
        let mut t = OpenOrders::new(4);
        assert!(t.reserve(ClientOrderId(1)));
        assert!(!t.reserve(ClientOrderId(1)), "in flight: a duplicate");
        t.apply(&event(
            1,
            OrderKind::Accepted {
                side: Side::Bid,
                price: 100,
                size: 10,
            },
        ));
        assert!(!t.reserve(ClientOrderId(1)), "working: a duplicate");
        let fill = |size, leaves| OrderKind::Filled {
            price: 100,
            size,
            leaves,
            trade_id: 1,
            maker: true,
        };
        t.apply(&event(1, fill(4, 6)));
        let o = t.get(ClientOrderId(1)).unwrap();
        assert_eq!((o.filled, o.leaves), (4, 6));
        t.apply(&event(1, OrderKind::Amended { price: 99, size: 8 }));
        let o = t.get(ClientOrderId(1)).unwrap();
        assert_eq!((o.price, o.leaves), (99, 4));
        t.apply(&event(1, fill(4, 0)));
        assert!(t.is_empty());
    }

    #[test]
    fn huge_sizes_saturate_instead_of_overflowing() {
        let mut t = OpenOrders::new(2);
        t.apply(&event(
            1,
            OrderKind::Accepted {
                side: Side::Bid,
                price: 1,
                size: i64::MAX,
            },
        ));
        let fill = |size| OrderKind::Filled {
            price: 1,
            size,
            leaves: 1,
            trade_id: 1,
            maker: true,
        };
        t.apply(&event(1, fill(i64::MAX - 1)));
        t.apply(&event(1, fill(i64::MAX - 1)));
        assert_eq!(t.get(ClientOrderId(1)).unwrap().filled, i64::MAX);
        t.apply(&event(
            1,
            OrderKind::Amended {
                price: 1,
                size: i64::MIN,
            },
        ));
        t.apply(&event(
            1,
            OrderKind::Accepted {
                side: Side::Bid,
                price: 1,
                size: i64::MIN,
            },
        ));
        assert_eq!(t.get(ClientOrderId(1)).unwrap().leaves, 0);
    }

    #[test]
    fn refusals_and_cancels_free_the_id_and_the_table_has_a_bound() {
        let mut t = OpenOrders::new(2);
        assert!(t.reserve(ClientOrderId(1)));
        t.apply(&event(
            1,
            OrderKind::Rejected {
                reason: Reject::WouldTake,
            },
        ));
        assert!(!t.known(ClientOrderId(1)));
        assert!(t.reserve(ClientOrderId(2)));
        assert!(t.reserve(ClientOrderId(3)));
        assert!(!t.reserve(ClientOrderId(4)), "full");
        t.apply(&event(2, OrderKind::Canceled));
        assert!(t.reserve(ClientOrderId(4)));
    }
}
