//! Keeping a book in step with a venue: buffer diffs, apply a snapshot,
//! bridge it with the buffered diffs, check every diff chains onto the
//! last, and say so explicitly (a `Gap`, then `Valid` again) whenever it
//! does not. Venue rules are data ([`Chain`]); the engine is one.

use crate::book::{Book, Level, Limit, Side, Window};
use crate::error::DecodeError;

pub mod lines;

pub use lines::{Arrival, Line};

/// How a venue chains its book updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Chain {
    /// Binance spot (`U`, `u`): with snapshot `L`, diffs with `u <= L` are
    /// old; the first applied has `U <= L + 1 <= u`; each next has
    /// `U == previous u + 1`.
    BinanceSpot,
    /// Binance USD-M and COIN-M futures (`U`, `u`, `pu`): diffs with
    /// `u < L` are old; the first applied has `U <= L <= u`; each next has
    /// `pu == previous u`.
    BinanceFutures,
    /// OKX v5 books (`seqId`, `prevSeqId`): the snapshot comes in band;
    /// each update has `prevSeqId == previous seqId` (ids are not
    /// consecutive). Recordings from before OKX sent sequence ids have
    /// none: then only the checksum guards the book.
    OkxSeq,
    /// Kraken spot books: the snapshot comes in band, updates carry no
    /// sequence at all; the CRC32 checksum on every update is the only
    /// guard (see [`BookSync::verify`]).
    Kraken,
    /// Bybit v5 `orderbook.N` (`u`): the snapshot comes in band, each delta
    /// has `u == previous u + 1`; a new snapshot (a service restart sends
    /// one with `u` back at 1) replaces the book.
    Bybit,
    /// Coinbase Advanced Trade `level2`: the snapshot comes in band; the
    /// only sequence is the connection's `sequence_num`, checked by
    /// [`ConnectionSeq`], whose gap invalidates every book of the
    /// connection ([`BookSync::invalidate_all`]).
    Coinbase,
    /// Deribit `book.*` (`change_id`, `prev_change_id`): the snapshot comes
    /// in band; each change has `prev_change_id == previous change_id`.
    Deribit,
}

impl Chain {
    /// Whether snapshots come in band (on subscribe, on the socket) rather
    /// than from a REST request that diffs must bridge.
    pub fn in_band_snapshot(self) -> bool {
        matches!(
            self,
            Chain::OkxSeq | Chain::Kraken | Chain::Bybit | Chain::Coinbase | Chain::Deribit
        )
    }
}

/// A diff's sequence fields, in the venue's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seq {
    /// First update id in the diff (Binance `U`).
    pub first: u64,
    /// Last update id in the diff (Binance `u`).
    pub last: u64,
    /// The previous diff's last id, where the venue sends it (Binance `pu`).
    pub prev: Option<u64>,
}

/// Why a book stopped being valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resync {
    /// A diff did not chain onto the previous one.
    Sequence {
        /// The id the chain called for.
        expected: u64,
        /// The id the diff carried.
        got: u64,
    },
    /// No buffered or later diff bridges the snapshot: it is too old.
    SnapshotStale {
        /// The snapshot's last update id.
        snapshot: u64,
        /// The first id of the first diff newer than it.
        first_diff: u64,
    },
    /// Best bid at or above best ask after a diff.
    Crossed,
    /// A level in a diff could not be read; the book may be half-updated.
    BadLevel,
    /// The venue's checksum of its book differs from ours.
    Checksum {
        /// The venue's value.
        expected: i64,
        /// Ours.
        got: i64,
    },
    /// The connection carrying the book went down.
    Disconnected,
    /// Fewer levels than the book shows are known on a side, and the
    /// levels beyond them are not (see [`crate::book`]): the shown depth
    /// can no longer be guaranteed exact.
    DepthExhausted,
}

/// What the engine tells its owner. Nothing about a book's contents is
/// said before its first `Valid`, nor between a `Gap` and the next `Valid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncEvent {
    /// Fetch a snapshot now; diffs are buffered meanwhile.
    SnapshotNeeded,
    /// The book is valid up to this update id.
    Valid {
        /// The last update id applied.
        update_id: u64,
    },
    /// The book is invalid until the next `Valid`.
    Gap(Resync),
    /// A diff was applied to a valid book.
    Updated {
        /// The diff's last update id.
        update_id: u64,
    },
}

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
}

impl Default for SyncConfig {
    fn default() -> SyncConfig {
        SyncConfig {
            depth: 5000,
            keep: 5000,
            window: Window::Client,
            max_buffered_diffs: 1024,
            max_buffered_levels: 64 * 1024,
        }
    }
}

impl SyncConfig {
    /// A book showing `depth` levels on `chain`, kept as `shape` says. A
    /// venue whose snapshots come in band needs only a small diff buffer
    /// (diffs before the snapshot are dropped anyway); one bridging a REST
    /// snapshot buffers the diffs of the whole fetch.
    pub fn for_book(chain: Chain, depth: usize, shape: crate::plan::BookShape) -> SyncConfig {
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
            base
        }
    }

    /// The bytes an engine with this configuration allocates: its book
    /// (each side holds up to twice `keep` while a message is applied),
    /// two diff buffers, and the record of the last diff's levels.
    pub fn bytes(&self) -> usize {
        use core::mem::size_of;
        let level = size_of::<Level>();
        let buffered = size_of::<(Side, Level)>();
        2 * 2 * self.keep.max(self.depth) * level
            + 2 * (self.max_buffered_diffs * size_of::<(Seq, usize, usize)>()
                + self.max_buffered_levels * buffered)
            + applied_capacity(self.depth) * size_of::<Applied>()
    }
}

/// How many levels of a diff within the shown edges are kept to emit as
/// deltas; a diff with more is said as a whole shown snapshot instead.
/// Binance's BTCUSDT diffs, 20 levels shown, set up to about 350 prices
/// within them in one 100 ms diff (its recordings in `tests/events.rs`).
fn applied_capacity(depth: usize) -> usize {
    (4 * depth).clamp(1024, 8192)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for a snapshot, buffering diffs.
    Buffering { asked: bool },
    /// Snapshot applied; waiting for the diff that bridges it.
    Bridging { snapshot: u64 },
    /// In step, up to `last`.
    Valid { last: u64 },
}

/// Buffered diffs: headers and a flat arena of their levels.
struct Buffer {
    diffs: Vec<(Seq, usize, usize)>,
    levels: Vec<(Side, Level)>,
}

impl Buffer {
    fn new(config: &SyncConfig) -> Buffer {
        Buffer {
            diffs: Vec::with_capacity(config.max_buffered_diffs),
            levels: Vec::with_capacity(config.max_buffered_levels),
        }
    }

    fn clear(&mut self) {
        self.diffs.clear();
        self.levels.clear();
    }
}

/// One instrument's book and the state of its synchronisation.
pub struct BookSync {
    chain: Chain,
    config: SyncConfig,
    book: Book,
    state: State,
    buffer: Buffer,
    /// The other half of a double buffer: replaying the buffered diffs may
    /// buffer some again.
    spare: Buffer,
    /// Diffs dropped because the buffer was full.
    pub dropped_diffs: u64,
    /// Diffs ignored as older than the book.
    pub old_diffs: u64,
    /// REST snapshots ignored because the book was valid already (and,
    /// with two lines, the other line's in-band snapshots).
    pub unneeded_snapshots: u64,
    /// Diffs dropped because the book held them already: the later
    /// arrival of a diff both lines carry ([`lines`]).
    pub duplicate_diffs: u64,
    /// Diffs dropped because they were ahead of the book while the other
    /// line was in step ([`lines`]).
    pub ahead_diffs: u64,
    /// The connections carrying the book, when two do ([`lines`]).
    lines: lines::LineState,
    /// The levels the last applied diff set within the shown edges, in
    /// order (up to its capacity, allocated here): what the adapters emit
    /// as deltas, without parsing the message again.
    applied: Vec<Applied>,
    /// The last diff had more levels than `applied` holds.
    applied_overflow: bool,
    /// The shown edge of each side ([`Book::edge`]) before the last diff
    /// applied: what a consumer showed, for [`Book::shown_changes`].
    edges: [Option<i64>; 2],
}

/// A level a diff set within the shown edges, and the rank best first
/// its price had once set ([`Book::shown_changes_ranked`]'s hint).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Applied {
    pub(crate) side: Side,
    pub(crate) level: Level,
    pub(crate) rank: u32,
}

/// A level as an adapter hands it over: its side and value, or why it
/// could not be read.
pub type LevelResult = Result<(Side, Level), DecodeError>;

impl BookSync {
    /// An engine for one instrument, with every buffer allocated now.
    pub fn new(chain: Chain, config: SyncConfig) -> BookSync {
        BookSync {
            chain,
            config,
            book: Book::with_window(config.depth, config.keep, config.window),
            state: State::Buffering { asked: false },
            buffer: Buffer::new(&config),
            spare: Buffer::new(&config),
            dropped_diffs: 0,
            old_diffs: 0,
            unneeded_snapshots: 0,
            duplicate_diffs: 0,
            ahead_diffs: 0,
            lines: lines::LineState::default(),
            applied: Vec::with_capacity(applied_capacity(config.depth)),
            applied_overflow: false,
            edges: [None; 2],
        }
    }

    /// The book, only while it is valid.
    pub fn book(&self) -> Option<&Book> {
        matches!(self.state, State::Valid { .. }).then_some(&self.book)
    }

    /// The sizes it was made with.
    pub fn config(&self) -> &SyncConfig {
        &self.config
    }

    /// Whether the book is valid.
    pub fn is_valid(&self) -> bool {
        matches!(self.state, State::Valid { .. })
    }

    /// The levels of the last diff applied within the old shown edges, in
    /// order, unless it had more than are kept for this.
    pub(crate) fn last_applied(&self) -> Option<&[Applied]> {
        (!self.applied_overflow).then_some(&self.applied[..])
    }

    /// The shown edges before the last diff applied.
    pub(crate) fn edges_before(&self) -> [Option<i64>; 2] {
        self.edges
    }

    /// How many diffs wait for a snapshot.
    pub fn buffered(&self) -> usize {
        self.buffer.diffs.len()
    }

    /// Feeds one diff. A level that cannot be read invalidates the book
    /// (`Gap(BadLevel)`) and is returned as the error.
    pub fn on_diff(
        &mut self,
        seq: Seq,
        levels: impl IntoIterator<Item = LevelResult>,
        emit: &mut impl FnMut(SyncEvent),
    ) -> Result<(), DecodeError> {
        self.step(seq, levels, emit)
    }

    /// Feeds a snapshot (its last update id and every level), then replays
    /// the buffered diffs onto it. A REST snapshot that arrives while the
    /// book is valid is not needed and is ignored (counted in
    /// `unneeded_snapshots`): applying it would drop a valid book. To force
    /// a rebuild, [`invalidate_all`](Self::invalidate_all) first. An
    /// in-band snapshot always replaces the book (`Valid` again).
    ///
    /// Where the snapshot comes in band it is taken for the venue's whole
    /// book ([`Limit::Whole`]; with [`Window::Venue`], a window of `keep`
    /// levels): a snapshot of a window of another size says so with
    /// [`on_snapshot_at`](Self::on_snapshot_at) and `Limit::Levels`, as the
    /// OKX and Bybit adapters do. A REST snapshot's `limit` is not told here, so each side
    /// ends at its worst level ([`Limit::Unknown`]): were a side with fewer
    /// levels than `keep` taken for the whole side, a snapshot fetched with
    /// a smaller limit would leave a valid book missing levels once the
    /// market moved through it. Say the limit asked with
    /// [`on_snapshot_at`](Self::on_snapshot_at).
    pub fn on_snapshot(
        &mut self,
        last_update_id: u64,
        levels: impl IntoIterator<Item = LevelResult>,
        emit: &mut impl FnMut(SyncEvent),
    ) -> Result<(), DecodeError> {
        let limit = if self.chain.in_band_snapshot() {
            Limit::Whole
        } else {
            Limit::Unknown
        };
        self.on_snapshot_at(last_update_id, limit, levels, emit)
    }

    /// [`on_snapshot`](Self::on_snapshot) of a snapshot asked for at most
    /// `limit` levels a side: a side with fewer is the venue's whole side.
    pub fn on_snapshot_at(
        &mut self,
        last_update_id: u64,
        limit: Limit,
        levels: impl IntoIterator<Item = LevelResult>,
        emit: &mut impl FnMut(SyncEvent),
    ) -> Result<(), DecodeError> {
        self.lines.start();
        if !self.chain.in_band_snapshot() && self.is_valid() {
            self.unneeded_snapshots += 1;
            return Ok(());
        }
        if self.chain.in_band_snapshot() && self.follower_snapshot() {
            return Ok(());
        }
        self.book.clear();
        for level in levels {
            match level {
                Ok((side, level)) => self.book.set_level(side, level),
                Err(e) => {
                    self.book.clear();
                    self.state = State::Buffering { asked: true };
                    emit(SyncEvent::Gap(Resync::BadLevel));
                    emit(SyncEvent::SnapshotNeeded);
                    return Err(e);
                }
            }
        }
        self.book.snapshot_done(limit);
        if self.chain.in_band_snapshot() {
            // The snapshot starts the chain; diffs buffered before it
            // belong to an older one.
            self.old_diffs += self.buffer.diffs.len() as u64;
            self.buffer.clear();
            if self.book.is_crossed() {
                self.invalidate(Resync::Crossed, emit);
                return Ok(());
            }
            if !self.book.is_exact() {
                self.invalidate(Resync::DepthExhausted, emit);
                return Ok(());
            }
            self.state = State::Valid {
                last: last_update_id,
            };
            self.in_step(Arrival::Other);
            emit(SyncEvent::Valid {
                update_id: last_update_id,
            });
            return Ok(());
        }
        // A REST snapshot recovers the book on its leading line, and the
        // diffs buffered for it came on that line.
        self.lines.on_leader();
        self.state = State::Bridging {
            snapshot: last_update_id,
        };
        std::mem::swap(&mut self.buffer, &mut self.spare);
        let replay = std::mem::replace(
            &mut self.spare,
            Buffer {
                diffs: Vec::new(),
                levels: Vec::new(),
            },
        );
        for &(seq, start, end) in &replay.diffs {
            let levels = replay.levels[start..end].iter().map(|&l| Ok(l));
            // Buffered levels were read once already: they cannot fail.
            let _ = self.step(seq, levels, emit);
        }
        self.spare = replay;
        self.spare.clear();
        Ok(())
    }

    /// Feeds a snapshot or an update from a venue whose book messages
    /// carry no sequence (Kraken, Coinbase): only checksums, or the
    /// connection's own sequence, guard them, so nothing is chained here.
    /// `update_id` is what the book is said to be valid up to: the number
    /// of the message where the venue numbers them (Coinbase's
    /// `sequence_num`), else 0 (Kraken).
    pub fn on_unsequenced(
        &mut self,
        snapshot: bool,
        update_id: u64,
        levels: impl IntoIterator<Item = LevelResult>,
        emit: &mut impl FnMut(SyncEvent),
    ) -> Result<(), DecodeError> {
        let mut levels = levels.into_iter();
        if self.fed_shadow(snapshot, update_id, &mut levels)? {
            return Ok(());
        }
        if snapshot {
            self.on_snapshot(update_id, levels, emit)
        } else {
            let seq = Seq {
                first: update_id,
                last: update_id,
                prev: None,
            };
            self.on_diff(seq, levels, emit)
        }
    }

    /// Checks the venue's checksum of the book just updated: on a mismatch
    /// the book is invalid (`Gap(Checksum)`, then `SnapshotNeeded`). Does
    /// nothing (and returns false) while the book is not valid. A message
    /// that went to the other line's shadow book ([`lines`]) is checked
    /// against the shadow, which a mismatch drops, silently; one the book
    /// did not take (the other line's copy of a diff it holds, a diff
    /// ahead of it, the other line's snapshot) describes another state of
    /// the book and is not checked (true).
    pub fn verify(
        &mut self,
        expected: i64,
        compute: impl FnOnce(&Book) -> i64,
        emit: &mut impl FnMut(SyncEvent),
    ) -> bool {
        if self.lines.took_shadow() {
            return self.verify_shadow(expected, compute);
        }
        if self.lines.took_skip() {
            return true;
        }
        if !self.is_valid() {
            return false;
        }
        let got = compute(&self.book);
        if got != expected {
            self.invalidate(Resync::Checksum { expected, got }, emit);
            return false;
        }
        true
    }

    /// Asks for a snapshot for a book waiting for one that has not asked
    /// yet: `SnapshotNeeded`, once, as its first diff would have, with
    /// nothing buffered. A book already asking, bridging a snapshot or
    /// valid is left alone (no snapshot is needed): to drop a valid book,
    /// [`invalidate_all`](Self::invalidate_all) says why.
    pub fn request_snapshot(&mut self, emit: &mut impl FnMut(SyncEvent)) {
        if self.state == (State::Buffering { asked: false }) {
            self.state = State::Buffering { asked: true };
            emit(SyncEvent::SnapshotNeeded);
        }
    }

    /// Invalidates the book from outside (for example a connection-level
    /// sequence gap): `Gap(why)`, then `SnapshotNeeded`. Nothing is said if
    /// it was not valid.
    pub fn invalidate_all(&mut self, why: Resync, emit: &mut impl FnMut(SyncEvent)) {
        if self.is_valid() || matches!(self.state, State::Bridging { .. }) {
            self.invalidate(why, emit);
        }
    }

    /// The connection carrying this book's diffs went down: if the book
    /// was valid (or bridging a snapshot), `Gap(Disconnected)`. Where
    /// snapshots come in band the venue sends one again on resubscription:
    /// `SnapshotNeeded` at once. A REST snapshot is asked for at the first
    /// diff of the new connection instead: fetched now, it would predate
    /// the stream it has to bridge to and be refused as stale, a wasted
    /// request. Otherwise (no snapshot yet) nothing changes: a snapshot
    /// asked for already stays asked for, its answer awaited (a fetch that
    /// fails is the caller's to ask again), and one older than the new
    /// stream is refused as stale when it comes.
    pub fn disconnected(&mut self, emit: &mut impl FnMut(SyncEvent)) {
        if self.chain.in_band_snapshot() {
            return self.invalidate_all(Resync::Disconnected, emit);
        }
        if self.is_valid() || matches!(self.state, State::Bridging { .. }) {
            self.book.clear();
            self.buffer.clear();
            self.state = State::Buffering { asked: false };
            emit(SyncEvent::Gap(Resync::Disconnected));
        }
    }

    fn step(
        &mut self,
        seq: Seq,
        levels: impl IntoIterator<Item = LevelResult>,
        emit: &mut impl FnMut(SyncEvent),
    ) -> Result<(), DecodeError> {
        self.lines.start();
        if self.follower_ignored() {
            return Ok(());
        }
        match self.state {
            State::Buffering { asked } => {
                if !asked {
                    emit(SyncEvent::SnapshotNeeded);
                    self.state = State::Buffering { asked: true };
                }
                self.push(seq, levels)
            }
            State::Bridging { snapshot } => {
                let (old, bridges) = match self.chain {
                    // Never reached: in-band snapshots are valid at once.
                    Chain::OkxSeq
                    | Chain::Kraken
                    | Chain::Bybit
                    | Chain::Coinbase
                    | Chain::Deribit => (false, true),
                    // `snapshot < seq.last` first: `snapshot + 1` then
                    // exists. A snapshot at `u64::MAX` is bridged by no
                    // diff (none is newer): it is stale, not waited on.
                    Chain::BinanceSpot if snapshot == u64::MAX => (false, false),
                    Chain::BinanceSpot => (
                        seq.last <= snapshot,
                        snapshot < seq.last && seq.first <= snapshot + 1,
                    ),
                    Chain::BinanceFutures => (
                        seq.last < snapshot,
                        seq.first <= snapshot && snapshot <= seq.last,
                    ),
                };
                if old {
                    self.old_diffs += 1;
                    Ok(())
                } else if bridges {
                    self.apply(seq, levels, emit)?;
                    if self.is_valid() {
                        self.in_step(Arrival::Applied(seq.last));
                        emit(SyncEvent::Valid {
                            update_id: seq.last,
                        });
                    }
                    Ok(())
                } else {
                    self.invalidate(
                        Resync::SnapshotStale {
                            snapshot,
                            first_diff: seq.first,
                        },
                        emit,
                    );
                    self.push(seq, levels)
                }
            }
            // Ids that count up by one end at `u64::MAX`: nothing chains
            // onto it, so any diff but a copy of the last is a gap (read
            // as old, it would leave the book valid and dropping them all).
            State::Valid { last }
                if last == u64::MAX
                    && matches!(self.chain, Chain::BinanceSpot | Chain::Bybit)
                    && seq.last != last =>
            {
                let got = if self.chain == Chain::Bybit {
                    seq.last
                } else {
                    seq.first
                };
                self.invalidate(
                    Resync::Sequence {
                        expected: last,
                        got,
                    },
                    emit,
                );
                self.push(seq, levels)
            }
            State::Valid { last } => {
                // No overflow: `last` is below `u64::MAX` where it counts up
                // (the arm above), and where it does not, nothing is added.
                let next = last.saturating_add(1);
                let (old, chained, expected, got) = match self.chain {
                    Chain::BinanceSpot => (seq.last <= last, seq.first == next, next, seq.first),
                    Chain::BinanceFutures => {
                        (false, seq.prev == Some(last), last, seq.prev.unwrap_or(0))
                    }
                    Chain::OkxSeq | Chain::Deribit => match seq.prev {
                        Some(prev) => (false, prev == last, last, prev),
                        None => (false, true, last, 0),
                    },
                    Chain::Kraken | Chain::Coinbase => (false, true, last, 0),
                    Chain::Bybit => (seq.last <= last, seq.last == next, next, seq.last),
                };
                // Chained first: a venue's reset of its ids (OKX's
                // `seqId` below `prevSeqId` in maintenance) chains, and is
                // no copy.
                if chained && !old {
                    self.apply(seq, levels, emit)?;
                    if self.is_valid() {
                        self.in_step(Arrival::Applied(seq.last));
                        emit(SyncEvent::Updated {
                            update_id: seq.last,
                        });
                    }
                    Ok(())
                } else if self.duplicate(last, seq.last) {
                    Ok(())
                } else if self.stuck() {
                    self.invalidate(Resync::Sequence { expected, got }, emit);
                    self.push(seq, levels)
                } else if old {
                    self.old_diffs += 1;
                    Ok(())
                } else if self.ahead() {
                    Ok(())
                } else {
                    self.invalidate(Resync::Sequence { expected, got }, emit);
                    self.push(seq, levels)
                }
            }
        }
    }

    /// Applies a diff; the book becomes (or stays) valid up to `seq.last`
    /// unless a level is bad or the book crosses.
    fn apply(
        &mut self,
        seq: Seq,
        levels: impl IntoIterator<Item = LevelResult>,
        emit: &mut impl FnMut(SyncEvent),
    ) -> Result<(), DecodeError> {
        self.applied.clear();
        self.applied_overflow = false;
        self.edges = [self.book.edge(Side::Bid), self.book.edge(Side::Ask)];
        for level in levels {
            match level {
                Ok((side, level)) => {
                    let rank = self.book.set_ranked(side, level);
                    // Only levels within what was shown can change what is
                    // shown but through the ladder (`Book::shown_changes`
                    // walks it for the levels pulled up): a diff deep in
                    // the book then never overflows the list.
                    let edge = self.edges[side as usize];
                    if edge.is_some_and(|e| side.better(e, level.price)) {
                        continue;
                    }
                    if self.applied.len() < self.applied.capacity() {
                        self.applied.push(Applied {
                            side,
                            level,
                            rank: u32::try_from(rank).unwrap_or(u32::MAX),
                        });
                    } else {
                        self.applied_overflow = true;
                    }
                }
                Err(e) => {
                    self.invalidate(Resync::BadLevel, emit);
                    return Err(e);
                }
            }
        }
        self.book.settle();
        if self.book.is_crossed() {
            self.invalidate(Resync::Crossed, emit);
        } else if !self.book.is_exact() {
            self.invalidate(Resync::DepthExhausted, emit);
        } else {
            self.state = State::Valid { last: seq.last };
        }
        Ok(())
    }

    fn invalidate(&mut self, why: Resync, emit: &mut impl FnMut(SyncEvent)) {
        self.book.clear();
        self.buffer.clear();
        self.state = State::Buffering { asked: true };
        emit(SyncEvent::Gap(why));
        emit(SyncEvent::SnapshotNeeded);
    }

    /// Buffers a diff. When it does not fit, what is buffered is dropped
    /// (and the diff too, if its levels alone overflow): safe, because the
    /// bridge check refuses a snapshot that the remaining diffs do not
    /// chain onto, and asks for a newer one.
    fn push(
        &mut self,
        seq: Seq,
        levels: impl IntoIterator<Item = LevelResult>,
    ) -> Result<(), DecodeError> {
        if self.buffer.diffs.len() == self.config.max_buffered_diffs {
            self.dropped_diffs += self.buffer.diffs.len() as u64;
            self.buffer.clear();
        }
        let start = self.buffer.levels.len();
        let mut overflow = false;
        for level in levels {
            let level = match level {
                Ok(l) => l,
                Err(e) => {
                    self.dropped_diffs += self.buffer.diffs.len() as u64 + 1;
                    self.buffer.clear();
                    return Err(e);
                }
            };
            if self.buffer.levels.len() == self.config.max_buffered_levels {
                overflow = true;
                continue; // read the rest for errors, keep nothing
            }
            self.buffer.levels.push(level);
        }
        if overflow {
            self.dropped_diffs += self.buffer.diffs.len() as u64 + 1;
            self.buffer.clear();
            return Ok(());
        }
        let end = self.buffer.levels.len();
        self.buffer.diffs.push((seq, start, end));
        Ok(())
    }
}

/// A connection-wide sequence that must grow by exactly one per message
/// (Coinbase Advanced Trade's `sequence_num`, which counts every message
/// on the socket, all channels together).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionSeq {
    last: Option<u64>,
}

impl ConnectionSeq {
    /// Checks the next number: `Err(Resync::Sequence)` on a gap (or a step
    /// back), after which the next number starts a new chain.
    pub fn check(&mut self, n: u64) -> Result<(), Resync> {
        let last = self.last.replace(n);
        match last {
            // Nothing follows `u64::MAX`: a gap, whatever comes.
            Some(last) if last.checked_add(1) != Some(n) => Err(Resync::Sequence {
                expected: last.saturating_add(1),
                got: n,
            }),
            _ => Ok(()),
        }
    }

    /// Forgets the chain (a new connection starts at 0 again).
    pub fn reset(&mut self) {
        self.last = None;
    }
}

#[cfg(test)]
mod tests;
