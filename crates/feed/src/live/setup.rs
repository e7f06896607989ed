//! What a feed is planned and sized from: each venue's connection plans,
//! whether its REST limit can be used, the connection slots its venues
//! need beyond the default ones, and what it all sets aside at start-up.

use tickwire_net::{Config as NetConfig, SlotSize};
use tickwire_venues::plan::{self, Channels, ConnectionPlan, PlanError};
use tickwire_venues::{InstrumentSpec, Venue};

use super::{FeedError, VenueSetup};

/// The connections a venue's instruments need.
pub fn plans(
    venue: Venue,
    instruments: &[InstrumentSpec],
    channels: Channels,
) -> Result<Vec<ConnectionPlan>, PlanError> {
    venue.plans(instruments, channels)
}

/// Why `rest_weight_limit` cannot be used for these books, if it cannot:
/// the budget holds half the limit, which must hold the heaviest request
/// (a lighter limit would let one request alone spend more than half of
/// it, and a minute more than all of it).
pub fn rest_limit_problem(
    venue: Venue,
    instruments: &[InstrumentSpec],
    channels: Channels,
    rest_weight_limit: Option<u32>,
) -> Option<String> {
    let limit = rest_weight_limit?;
    let market = venue.binance_market()?;
    let heaviest = instruments
        .iter()
        .filter(|i| channels.books && i.depth > 0)
        .map(|i| {
            plan::binance::snapshot_weight(market, plan::binance::snapshot_limit(market, i.depth))
        })
        .max()?;
    (limit < 2 * heaviest).then(|| {
        format!(
            "{limit} is too small: at least {} (twice the heaviest snapshot request's \
             weight, {heaviest})",
            2 * heaviest
        )
    })
}

/// The slots a feed's venues need beyond the default ones: a connection
/// whose venue sends larger messages than the default limit, and a REST
/// fetch whose response is larger than the default receive buffer.
fn sized_slots(net: &NetConfig, venues: &[(&VenueSetup, Vec<ConnectionPlan>)]) -> Vec<SlotSize> {
    let mut sizes: Vec<SlotSize> = Vec::new();
    let mut add = |read: usize, message: usize| match sizes
        .iter_mut()
        .find(|s| s.read_buffer_size == read && s.max_message_size == message)
    {
        Some(s) => s.count += 1,
        None => sizes.push(SlotSize {
            count: 1,
            read_buffer_size: read,
            max_message_size: message,
        }),
    };
    for (setup, plans) in venues {
        for p in plans {
            // Two lines each: a standby, or a replacement before the
            // venue's connection lifetime.
            if p.max_message > net.max_message_size {
                add(net.read_buffer_size, p.max_message);
                add(net.read_buffer_size, p.max_message);
            }
        }
        if let Some(market) = setup.venue.binance_market() {
            for i in setup.instruments.iter().filter(|i| i.depth > 0) {
                let body = plan::binance::snapshot_bytes(market, i.depth);
                if setup.channels.books && body > net.read_buffer_size {
                    add(body.next_power_of_two(), net.max_message_size);
                }
            }
        }
    }
    sizes
}

/// What a feed sets aside at start-up: its connection slots' buffers, and
/// its books with their diff buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Budget {
    /// Connection slots (default and sized).
    pub slots: usize,
    /// Their buffers, bytes.
    pub slot_bytes: usize,
    /// Books.
    pub books: usize,
    /// Their levels and buffers, bytes.
    pub book_bytes: usize,
}

impl Budget {
    /// What `venues` on one feed with `net` set aside.
    pub fn of(venues: &[VenueSetup], net: &NetConfig) -> Result<Budget, FeedError> {
        let mut streams = 0;
        let mut books = 0;
        let mut book_bytes = 0;
        for setup in venues {
            let plans = plans(setup.venue, &setup.instruments, setup.channels)
                .map_err(|e| FeedError::Plan(setup.name.clone(), e))?;
            streams += plans.len();
            for i in setup.instruments.iter().filter(|i| i.depth > 0) {
                books += 1;
                book_bytes += setup.venue.sync_config(i.depth).bytes();
            }
        }
        let net = feed_net(net.clone(), venues, streams);
        let slots = net.max_connections + net.sized_slots.iter().map(|s| s.count).sum::<usize>();
        Ok(Budget {
            slots,
            slot_bytes: net.memory(),
            books,
            book_bytes,
        })
    }
}

/// `net` with room for every stream's two lines (a standby, or a
/// replacement before the venue's connection lifetime) and, at once,
/// every book's snapshot, and the sized slots the venues need.
pub(super) fn feed_net(mut net: NetConfig, venues: &[VenueSetup], streams: usize) -> NetConfig {
    let instruments: usize = venues.iter().map(|v| v.instruments.len()).sum();
    net.max_connections = net.max_connections.max(2 * streams + instruments + 1);
    let planned: Vec<(&VenueSetup, Vec<ConnectionPlan>)> = venues
        .iter()
        .filter_map(|setup| {
            Some((
                setup,
                plans(setup.venue, &setup.instruments, setup.channels).ok()?,
            ))
        })
        .collect();
    net.sized_slots = sized_slots(&net, &planned);
    net
}
