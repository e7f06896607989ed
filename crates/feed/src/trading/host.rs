//! A venue's session as the feed keeps it ([`Trader`]): the session, the
//! buffers it writes into and decodes into (allocated once), its
//! connection, and what the kill switch owes; and every trading venue's
//! together with the desk's queue ([`Trading`]).

use std::cell::{Cell, RefCell};

use tickwire_net::ConnId;
use tickwire_trade::{ClientOrderId, OrderEvent, OrderKind, Reject, Request, Session, State};

use super::kill::KillSwitch;
use crate::id::FeedId;

/// Room for the messages one call of a session writes (a login and its
/// set-up, a reconciliation's requests, one order's).
const OUT_BYTES: usize = 64 * 1024;
/// At most this many messages from one call.
const OUT_MESSAGES: usize = 256;
/// The most order events one venue message brings (an answer with its
/// fills): the events' vectors are given this room once.
const EVENTS: usize = 256;
/// The desk's queue: requests one handler call may make.
const QUEUE: usize = 256;
/// Requests whose round trip is not yet recorded, a trader (the oldest
/// forgotten past it).
const IN_FLIGHT: usize = 1024;

/// A request a handler made, waiting for the handler to return.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    /// Which trader.
    pub(crate) trader: usize,
    pub(crate) request: Request,
    /// The read stamp of the market message whose handler made it (the
    /// tick-to-trade's start); 0 for the kill switch's own requests.
    pub(crate) recv_tsc: u64,
}

/// One trading venue's session on the feed.
pub(crate) struct Trader {
    /// The market-data venue it trades (its index in the feed).
    pub(crate) venue: usize,
    /// The venue's name, for what is said.
    pub(crate) name: String,
    /// The feed-wide id of the venue's first instrument, and how many it
    /// has: the session's instruments are the venue's, in its order.
    pub(crate) base: u32,
    pub(crate) instruments: u32,
    pub(crate) session: Box<dyn Session>,
    /// What the session writes, until sent.
    pub(crate) out: tickwire_trade::Out,
    /// Messages the driver could not take from another connection's
    /// callback (its queue of such messages was full): kept, in order,
    /// and sent by the feed's chores as the poll returns; never dropped.
    pub(crate) backlog: tickwire_trade::Out,
    /// What the session decodes from one message.
    pub(crate) events: Vec<OrderEvent>,
    /// The trading connection, once opened.
    pub(crate) conn: Option<ConnId>,
    /// Where it connects (for the recording and what is said).
    pub(crate) url: String,
    pub(crate) kill: KillSwitch,
    /// The venue gives an amended order a new client id (Binance's
    /// `order.cancelReplace`); Deribit's `private/edit` keeps it.
    pub(crate) renames: bool,
    /// The next client order id the desk gives.
    pub(crate) next_cid: Cell<u64>,
    /// The kill switch owes a cancel-all: sent once the session is ready
    /// (reconnected and reconciled), and again after its client-side rate
    /// limit's wait if that refused it (the kill switch's own request is
    /// the one the feed does not leave refused).
    pub(crate) kill_owed: bool,
    /// Not before this (ms since the Unix epoch): its rate limit's wait.
    pub(crate) kill_due_ms: u64,
    /// Some book of the venue was valid at the last look (the market-loss
    /// kill switch trips when none is).
    pub(crate) market_up: bool,
    /// The session's refusal was said.
    pub(crate) refused_told: bool,
    /// A failed attempt to connect was said (once until it opens).
    pub(crate) failed_told: bool,
    /// The session's state at the last look.
    pub(crate) state: State,
    /// The stamps (`Now::tsc`) of the requests submitted and not yet
    /// answered: an event carrying one records its round trip and takes
    /// it out, so each request's round trip is recorded once, whatever
    /// number of events (an answer, its fills, a notification before
    /// it) carry its stamp. Emptied when the connection closes (the
    /// session forgets its requests in flight).
    pub(crate) in_flight: Vec<u64>,
    /// A message could not be handed to the driver: the chores close the
    /// connection (the session forgets its requests in flight and reads
    /// its orders again on the next open).
    pub(crate) send_failed: bool,
}

impl Trader {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        venue: usize,
        name: &str,
        (base, instruments): (u32, u32),
        session: Box<dyn Session>,
        url: String,
        kill: KillSwitch,
        renames: bool,
        first_cid: u64,
    ) -> Trader {
        Trader {
            venue,
            name: name.to_owned(),
            base,
            instruments,
            session,
            out: tickwire_trade::Out::new(OUT_BYTES, OUT_MESSAGES),
            backlog: tickwire_trade::Out::new(OUT_BYTES, OUT_MESSAGES),
            events: Vec::with_capacity(EVENTS),
            conn: None,
            url,
            kill,
            renames,
            next_cid: Cell::new(first_cid),
            kill_owed: false,
            kill_due_ms: 0,
            market_up: false,
            refused_told: false,
            failed_told: false,
            state: State::Disconnected,
            send_failed: false,
            in_flight: Vec::with_capacity(IN_FLIGHT),
        }
    }

    /// A request stamped `tsc` was submitted: its round trip is owed.
    pub(crate) fn sent(&mut self, tsc: u64) {
        if self.in_flight.len() == self.in_flight.capacity() {
            self.in_flight.remove(0);
        }
        self.in_flight.push(tsc);
    }

    /// Whether an event stamped `tsc` is the first of its request's
    /// (its round trip then recorded, and the request no longer owed).
    pub(crate) fn answered(&mut self, tsc: u64) -> bool {
        match self.in_flight.iter().position(|&t| t == tsc) {
            Some(i) => {
                self.in_flight.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// A new client order id.
    pub(crate) fn take_cid(&self) -> ClientOrderId {
        let n = self.next_cid.get();
        self.next_cid.set(n + 1);
        ClientOrderId(n)
    }

    /// A session-local event as the feed hands it on: its instrument the
    /// feed-wide id.
    pub(crate) fn feed_event(&self, e: &OrderEvent) -> OrderEvent<FeedId> {
        e.with_instrument(FeedId(self.base + e.instrument.0))
    }

    /// The refusal of a request that never left, as an event for the bot.
    pub(crate) fn refusal(&self, request: &Request, reason: Reject) -> OrderEvent<FeedId> {
        let instrument = match *request {
            Request::Place { order, .. } => FeedId(self.base + order.instrument.0),
            Request::CancelAll {
                instrument: Some(i),
            } => FeedId(self.base + i.0),
            _ => self.order_instrument(request.cid()),
        };
        OrderEvent {
            cid: request.cid(),
            instrument,
            venue_order: Default::default(),
            kind: OrderKind::Rejected { reason },
            venue_time_ns: 0,
            sent_tsc: 0,
        }
    }

    /// The feed id of a working order's instrument (the venue's first
    /// when unknown).
    fn order_instrument(&self, cid: Option<ClientOrderId>) -> FeedId {
        let local = cid
            .and_then(|c| self.session.open_orders().get(c))
            .map_or(0, |o| o.instrument.0);
        FeedId(self.base + local)
    }
}

/// Every trading venue's session, the desk's queue, and the order events
/// of the update being delivered.
pub(crate) struct Trading {
    pub(crate) traders: Vec<Trader>,
    /// The trader of each market-data venue, by its index.
    pub(crate) by_venue: Vec<Option<usize>>,
    /// Requests made by the handler being called (room for `QUEUE`).
    pub(crate) queue: RefCell<Vec<Queued>>,
    /// The order events of the update being delivered.
    pub(crate) orders: Vec<OrderEvent<FeedId>>,
    /// Refusals of a round of queued requests, with their trader, until
    /// each venue's are delivered in an update of its own (room for
    /// `QUEUE`).
    pub(crate) refused: Vec<(usize, OrderEvent<FeedId>)>,
    /// The feed is shutting down: the desk takes no more requests.
    pub(crate) closing: bool,
}

impl Trading {
    /// No trading venue, for `venues` market-data venues.
    pub(crate) fn new(venues: usize) -> Trading {
        Trading {
            traders: Vec::new(),
            by_venue: vec![None; venues],
            queue: RefCell::new(Vec::new()),
            orders: Vec::new(),
            refused: Vec::new(),
            closing: false,
        }
    }

    /// Adds `trader` (its buffers sized now).
    pub(crate) fn add(&mut self, trader: Trader) {
        if let Some(slot) = self.by_venue.get_mut(trader.venue) {
            *slot = Some(self.traders.len());
        }
        self.traders.push(trader);
        self.queue = RefCell::new(Vec::with_capacity(QUEUE));
        self.orders = Vec::with_capacity(EVENTS + QUEUE);
        self.refused = Vec::with_capacity(QUEUE);
    }

    /// Whether any venue trades.
    pub(crate) fn any(&self) -> bool {
        !self.traders.is_empty()
    }

    /// Queues `request` for trader `t`: `Full` when the queue is.
    pub(crate) fn enqueue(
        &self,
        trader: usize,
        request: Request,
        recv_tsc: u64,
    ) -> Result<(), Reject> {
        let mut q = self.queue.borrow_mut();
        if q.len() == q.capacity() {
            return Err(Reject::Full);
        }
        q.push(Queued {
            trader,
            request,
            recv_tsc,
        });
        Ok(())
    }
}
