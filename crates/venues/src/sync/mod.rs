//! Keeping a book in step with a venue: buffer diffs, apply a snapshot,
//! bridge it with the buffered diffs, check every diff chains onto the
//! last, and say so explicitly (a `Gap`, then `Valid` again) whenever it
//! does not. Venue rules are data ([`Chain`]); the engine is one.

pub use crate::book::LevelResult;
use crate::book::{Book, Level, Limit, Side};
use crate::error::DecodeError;
pub use crate::model::Resync;

mod config;
mod connection;
pub mod lines;
mod refresh;

pub use config::SyncConfig;
use config::applied_capacity;
pub use connection::ConnectionSeq;

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
    /// `pu == previous u` (the venue's "How to manage a local order book
    /// correctly", USD-M and COIN-M websocket market streams). A first
    /// diff with `pu == L` bridges too: the diff before it ended at `L`,
    /// so the snapshot holds everything up to where it starts (the venue's
    /// rule would refetch for nothing when that diff came before the
    /// subscription).
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
    /// Fetch a snapshot to deepen the book before its kept levels run
    /// out; the book stays valid meanwhile. Said once a side that tracks a
    /// horizon knows fewer than half its kept levels beyond the shown
    /// ones ([`SyncConfig::deepen`]; Binance). The snapshot is brought up
    /// to the book with the diffs applied since, by the venue's bridging
    /// rule, and replaces it only if it shows the same levels.
    RefreshNeeded,
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
    /// Deepening the valid book before its kept levels run out.
    refresh: refresh::Refresh,
}

/// A level a diff set within the shown edges, and the rank best first
/// its price had once set ([`Book::shown_changes_ranked`]'s hint).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Applied {
    pub(crate) side: Side,
    pub(crate) level: Level,
    pub(crate) rank: u32,
}

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
            refresh: refresh::Refresh::new(chain, &config),
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
    /// book ([`Limit::Whole`]; with [`Window::Venue`](crate::book::Window::Venue), a window of `keep`
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
            if !self.refresh.asked() {
                self.unneeded_snapshots += 1;
                return Ok(());
            }
            // The snapshot a refresh asked for: a second book from it.
            self.refresh.shadow_clear();
            for level in levels {
                match level {
                    Ok((side, level)) => self.refresh.shadow_level(side, level),
                    Err(e) => {
                        // The live book is untouched; asked for again.
                        self.refresh.reset();
                        return Err(e);
                    }
                }
            }
            let live = match self.state {
                State::Valid { last } => last,
                _ => 0,
            };
            let said =
                self.refresh
                    .on_snapshot(self.chain, last_update_id, limit, &mut self.book, live);
            self.refresh_said(said, emit);
            return Ok(());
        }
        if self.chain.in_band_snapshot() && self.follower_snapshot() {
            return Ok(());
        }
        self.book.clear();
        for level in levels {
            match level {
                Ok((side, level)) => self.book.set_open(side, level),
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
            self.refresh.reset();
            self.book.clear();
            self.buffer.clear();
            self.lines.end_catch_up();
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
                    // The documented bridge holds `L`; a diff whose `pu`
                    // is `L` starts just after it (its predecessor held `L`
                    // and is in the snapshot), so it bridges too.
                    Chain::BinanceFutures => (
                        seq.last < snapshot,
                        (seq.first <= snapshot && snapshot <= seq.last)
                            || seq.prev == Some(snapshot),
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
                } else if self.duplicate(last, seq) {
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
        let refresh = self.refresh.begin(self.chain, seq);
        for level in levels {
            match level {
                Ok((side, level)) => {
                    self.refresh.level(refresh, side, level);
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
            let said = self.refresh.end(refresh, seq, &mut self.book);
            self.refresh_said(said, emit);
        }
        Ok(())
    }

    /// Says what a refresh asked for: a snapshot to fetch, or (never, by
    /// the tests) a refreshed book that disagreed with this one.
    fn refresh_said(&mut self, said: Option<SyncEvent>, emit: &mut impl FnMut(SyncEvent)) {
        match said {
            Some(SyncEvent::Gap(why)) => self.invalidate(why, emit),
            Some(other) => emit(other),
            None => {}
        }
    }

    /// Books replaced by a deeper, refreshed one without a gap, and
    /// refresh snapshots dropped (bridged by no recorded diff; asked for
    /// again).
    pub fn refreshes(&self) -> (u64, u64) {
        (self.refresh.done, self.refresh.dropped)
    }

    fn invalidate(&mut self, why: Resync, emit: &mut impl FnMut(SyncEvent)) {
        self.refresh.reset();
        // A diff given up half way may have left the refreshed book with a
        // side's gap open (`Book::settle` closes it): cleared, it can never
        // be read so.
        self.refresh.shadow_clear();
        self.book.clear();
        self.buffer.clear();
        // A catch-up was for the book that is gone.
        self.lines.end_catch_up();
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

#[cfg(test)]
mod tests;
