//! The Aeron sink's chore on the feed thread: every valid book sent again
//! when a subscriber needs them (`aeron::Publisher::books_due`).

use tickwire_venues::InstrumentId;

use super::{Feed, OnEvent};
use crate::id::FeedId;

impl<H: OnEvent> Feed<H> {
    /// The Aeron sink's books, when due (a subscriber lost events, or the
    /// interval passed): every valid book, from the adapters' own.
    pub(super) fn aeron_books(&mut self) {
        let core = self.driver.handler_mut();
        let Some(aeron) = core.sinks.aeron.as_mut() else {
            return;
        };
        let now = core.clock.now();
        if !aeron.books_due(now) {
            return;
        }
        let books = core.venues.iter().flat_map(|s| {
            (0..s.setup.instruments.len()).filter_map(move |i| {
                let book = s.adapter.adapter_ref().book(InstrumentId(i as u32))?;
                Some((FeedId(s.base + i as u32), book))
            })
        });
        aeron.publish_books(now, books);
    }
}
