//! The send-stamp side channel: the TSC at which each message was handed
//! to its socket, by (instrument, stream kind, id), so that a feed in the
//! same process can measure a message's wire latency end to end.

use std::sync::atomic::{AtomicU64, Ordering};

/// The kinds of market-data stream: what a message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// Trades; stamped by trade id.
    Trade = 0,
    /// Best bid and offer; stamped by the book's update id as the feed's
    /// adapter reports it (`Quote::update_id`).
    BookTicker = 1,
    /// Book updates; stamped by their update id as the adapter reports it
    /// (`BookDelta::update_id`).
    Depth = 2,
}

const KINDS: usize = 3;
const STAMP_SLOTS: usize = 4096;

/// Send TSCs by (instrument, stream kind, id): the trade id for trades,
/// the update id `u` for diffs and book tickers. A slot holds the newest
/// message whose id maps to it; a lookup of an older id finds nothing.
pub struct SendStamps {
    /// `[instrument][kind][slot] = (id, tsc)`.
    slots: Vec<[(AtomicU64, AtomicU64); STAMP_SLOTS]>,
}

impl std::fmt::Debug for SendStamps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendStamps")
            .field("instruments", &(self.slots.len() / KINDS))
            .finish()
    }
}

impl SendStamps {
    pub(crate) fn new(instruments: usize) -> SendStamps {
        SendStamps {
            slots: (0..instruments * KINDS)
                .map(|_| std::array::from_fn(|_| (AtomicU64::new(u64::MAX), AtomicU64::new(0))))
                .collect(),
        }
    }

    pub(crate) fn put(&self, instrument: usize, kind: StreamKind, id: u64, tsc: u64) {
        let Some(ring) = self.slots.get(instrument * KINDS + kind as usize) else {
            return;
        };
        let (sid, stsc) = &ring[id as usize % STAMP_SLOTS];
        // Mark the slot busy, write the stamp, then publish the id.
        sid.store(u64::MAX, Ordering::Relaxed);
        stsc.store(tsc, Ordering::Release);
        sid.store(id, Ordering::Release);
    }

    /// The TSC at which the message (`instrument` in the simulator's
    /// order, `kind`, `id`) was handed to the socket, if still known.
    #[inline]
    pub fn get(&self, instrument: usize, kind: StreamKind, id: u64) -> Option<u64> {
        let ring = self.slots.get(instrument * KINDS + kind as usize)?;
        let (sid, stsc) = &ring[id as usize % STAMP_SLOTS];
        if sid.load(Ordering::Acquire) != id {
            return None;
        }
        let tsc = stsc.load(Ordering::Acquire);
        // Overwritten meanwhile: not this message's stamp.
        (sid.load(Ordering::Acquire) == id).then_some(tsc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_found_by_id_until_overwritten() {
        let stamps = SendStamps::new(2);
        stamps.put(1, StreamKind::Depth, 77, 123);
        assert_eq!(stamps.get(1, StreamKind::Depth, 77), Some(123));
        assert_eq!(stamps.get(1, StreamKind::Trade, 77), None);
        assert_eq!(stamps.get(0, StreamKind::Depth, 77), None);
        stamps.put(1, StreamKind::Depth, 77 + STAMP_SLOTS as u64, 456);
        assert_eq!(stamps.get(1, StreamKind::Depth, 77), None);
        assert_eq!(stamps.get(5, StreamKind::Depth, 77), None);
    }
}
