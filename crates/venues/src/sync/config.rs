//! How big a book's engine is: every buffer it allocates when created.

#[cfg(doc)]
use super::SyncEvent;
use super::refresh;
use super::{Applied, Chain, Seq};
use crate::book::{Level, Side, Window};

/// Sizes, all allocated when the engine is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncConfig {
    /// Levels shown per side.
    pub depth: usize,
    /// Levels kept per side (at least `depth`): the levels below the shown
    /// ones keep the shown depth exact as the market moves ([`crate::book`]).
    pub keep: usize,
    /// Whether the venue keeps the kept levels complete, or the book must
    /// track what it knows.
    pub window: Window,
    /// Diffs buffered while a snapshot is fetched. When more arrive, the
    /// oldest are dropped (the bridge check then asks for a newer snapshot
    /// if it needs them).
    pub max_buffered_diffs: usize,
    /// Price levels across all buffered diffs.
    pub max_buffered_levels: usize,
    /// Deepen the book from a fresh REST snapshot while it is valid,
    /// before its kept levels run out (a book that tracks a horizon on a
    /// venue with REST snapshots: [`SyncEvent::RefreshNeeded`]): a second
    /// book and a third diff buffer are set aside for it.
    pub deepen: bool,
}

impl Default for SyncConfig {
    fn default() -> SyncConfig {
        SyncConfig {
            depth: 5000,
            keep: 5000,
            window: Window::Client,
            max_buffered_diffs: 1024,
            max_buffered_levels: 64 * 1024,
            deepen: false,
        }
    }
}

impl SyncConfig {
    /// A book showing `depth` levels on `chain`, kept as `shape` says. A
    /// venue whose snapshots come in band needs only a small diff buffer
    /// (diffs before the snapshot are dropped anyway); one bridging a REST
    /// snapshot buffers the diffs of the whole fetch.
    pub fn for_book(chain: Chain, depth: usize, shape: crate::model::BookShape) -> SyncConfig {
        let base = SyncConfig {
            depth,
            keep: shape.keep,
            window: shape.window,
            ..SyncConfig::default()
        };
        if chain.in_band_snapshot() {
            SyncConfig {
                max_buffered_diffs: 16,
                max_buffered_levels: 4096,
                ..base
            }
        } else {
            SyncConfig {
                deepen: shape.window == Window::Client && shape.keep > depth,
                ..base
            }
        }
    }

    /// The bytes an engine with this configuration allocates: its book
    /// (each side holds up to twice `keep` while a message is applied),
    /// two diff buffers, the record of the last diff's levels, and, to
    /// [`deepen`](Self::deepen) it, a second book and a third buffer.
    pub fn bytes(&self) -> usize {
        use core::mem::size_of;
        let level = size_of::<Level>();
        let buffered = size_of::<(Side, Level)>();
        2 * 2 * self.keep.max(self.depth) * level
            + 2 * (self.max_buffered_diffs * size_of::<(Seq, usize, usize)>()
                + self.max_buffered_levels * buffered)
            + applied_capacity(self.depth) * size_of::<Applied>()
            + refresh::Refresh::bytes(self)
    }
}

/// How many levels of a diff within the shown edges are kept to emit as
/// deltas; a diff with more is said as a whole shown snapshot instead.
/// Binance's BTCUSDT diffs, 20 levels shown, set up to about 350 prices
/// within them in one 100 ms diff (its recordings in `tests/events.rs`).
pub(super) fn applied_capacity(depth: usize) -> usize {
    (4 * depth).clamp(1024, 8192)
}
