//! The feed's own names for what it serves, beneath every other module:
//! an instrument's feed-wide id and a venue's handle, and the event a bot
//! and the sinks are handed.
//!
//! A venue adapter numbers its instruments from 0 in its own table
//! ([`tickwire_venues::InstrumentId`], local to that adapter); a feed runs
//! several adapters and numbers all their instruments in one sequence
//! ([`FeedId`]). The two are different types, so that one cannot be
//! passed where the other is meant: the adapter's id stays inside the
//! feed, and everything the feed hands out carries the feed-wide one.

use std::fmt;

/// An instrument's feed-wide id: its place in the feed's
/// `Feed::instruments` (the venues' instruments
/// in the order the venues and their instruments were given), the id every
/// [`Event`] the feed hands on carries, the shared-memory ring's and the
/// JSON Lines sink's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FeedId(pub u32);

impl fmt::Display for FeedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An event as the feed hands it on: about the instrument its [`FeedId`]
/// names.
pub type Event = tickwire_venues::Event<FeedId>;

/// A venue of one feed, as its `Feed::venue` names it: every method that
/// is about one venue takes this handle (obtained once, by name), and
/// `Update::venue_id` says which venue a message came from. A handle
/// means nothing to another feed: it carries its feed's tag, and another
/// feed refuses it (`FeedError::NoVenue`, or `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VenueId {
    /// Which feed: a number no other feed of the process has.
    feed: u32,
    /// The venue's place among its feed's venues.
    index: u32,
}

impl VenueId {
    /// Venue `index` of the feed tagged `feed`.
    pub(crate) fn new(feed: u32, index: usize) -> VenueId {
        VenueId {
            feed,
            index: index as u32,
        }
    }

    /// The venue's place among the feed's venues (in the order they were
    /// given), e.g. to index a table of one's own.
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// Its place among the venues of the feed tagged `feed`, if it is
    /// that feed's.
    pub(crate) fn index_in(self, feed: u32) -> Option<usize> {
        (self.feed == feed).then_some(self.index as usize)
    }
}

/// A new feed's tag for its [`VenueId`]s: no two feeds of a process share
/// one (a `u32` of feeds built is more than any process builds).
pub(crate) fn next_feed_tag() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static TAGS: AtomicU32 = AtomicU32::new(0);
    TAGS.fetch_add(1, Ordering::Relaxed)
}
