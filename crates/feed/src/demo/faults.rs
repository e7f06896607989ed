//! `demo --faults`: every venue gets the faults networks and venues cause,
//! one after another, each waited out until the venue's books are valid
//! again (recovered) or a deadline passes (not recovered). Network faults
//! go through a proxy in front of the venue's simulator; venue faults are
//! armed in the simulator.

use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use tickwire_sim::{Simulator, Venue, VenueFault};
use tickwire_testkit::proxy::{Fault as NetFault, Proxy};

use crate::live::{FeedStats, VenueStats, injected};

/// A fault the demo injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The connection closes without a close frame.
    Close,
    /// The connection is reset mid-record.
    Reset,
    /// A byte is corrupted (TLS catches it).
    Corrupt,
    /// A range of bytes is lost.
    Drop,
    /// A range of bytes arrives twice.
    Duplicate,
    /// Nothing arrives, the connection stays open (half-open).
    Stall,
    /// Every byte in a segment of its own for a second.
    Split,
    /// A book message with a wrong checksum.
    Checksum,
    /// A book message lost.
    SequenceGap,
    /// A subscription refused (then accepted when tried again).
    Rejected,
    /// The venue's book service restarts (Bybit's `u=1` snapshot).
    Restart,
    /// A book message lost, and the resubscription that follows answered
    /// with nothing (the feed asks again).
    SilentResubscription,
    /// The venue announces a service restart and closes its connections
    /// a few seconds later (the feed replaces them first).
    ShutdownNotice,
    /// The venue's request budget (OKX's requests a connection, Coinbase's
    /// messages an address) lowered to nothing for a moment, and a book
    /// message lost: the resubscription that follows is over it, and the
    /// venue closes the connection (the feed keeps the venue's documented
    /// budget, not one lowered under it: another program on the address,
    /// or a venue that changed its limit).
    BudgetBreach,
}

impl Fault {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Fault::Close => "close",
            Fault::Reset => "reset",
            Fault::Corrupt => "corrupt",
            Fault::Drop => "drop",
            Fault::Duplicate => "duplicate",
            Fault::Stall => "stall",
            Fault::Split => "split",
            Fault::Checksum => "checksum mismatch",
            Fault::SequenceGap => "sequence gap",
            Fault::Rejected => "rejected subscription",
            Fault::Restart => "restart",
            Fault::SilentResubscription => "silent resubscription",
            Fault::ShutdownNotice => "shutdown notice",
            Fault::BudgetBreach => "budget breach",
        }
    }

    /// What it does, in a few words, for the line that says it was
    /// injected.
    pub(crate) fn effect(self) -> &'static str {
        match self {
            Fault::Close => "the connection closes without a close frame",
            Fault::Reset => "the connection is reset",
            Fault::Corrupt => "a byte is corrupted: TLS fails",
            Fault::Drop => "bytes are lost: TLS fails",
            Fault::Duplicate => "bytes arrive twice: TLS fails",
            Fault::Stall => "nothing arrives on an open connection",
            Fault::Split => "every byte in a segment of its own for a second",
            Fault::Checksum => "a book message with a wrong checksum",
            Fault::SequenceGap => "a book message lost",
            Fault::Rejected => "a subscription refused, then accepted when tried again",
            Fault::Restart => "the venue's book service restarts",
            Fault::SilentResubscription => {
                "a book message lost, and the resubscription answered with nothing"
            }
            Fault::ShutdownNotice => "the venue announces a restart, then closes",
            Fault::BudgetBreach => "the venue's request budget lowered to nothing for a moment",
        }
    }

    /// Whether the venue causes it (on every connection alike), rather
    /// than the network (on one).
    pub(crate) fn of_the_venue(self) -> bool {
        matches!(
            self,
            Fault::Checksum
                | Fault::SequenceGap
                | Fault::Rejected
                | Fault::Restart
                | Fault::SilentResubscription
                | Fault::ShutdownNotice
                | Fault::BudgetBreach
        )
    }

    /// The faults `venue` can have, in the order they are injected.
    pub(crate) fn all(venue: Venue) -> Vec<Fault> {
        let mut all = vec![
            Fault::SequenceGap,
            Fault::Close,
            Fault::Corrupt,
            Fault::Rejected,
            Fault::Reset,
            Fault::Split,
            Fault::Drop,
            Fault::Stall,
            Fault::Duplicate,
        ];
        if matches!(venue, Venue::Okx | Venue::Kraken) {
            all.insert(1, Fault::Checksum);
        }
        if matches!(
            venue,
            Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse
        ) {
            all.insert(1, Fault::Restart);
        }
        if !venue.rest_snapshots() {
            all.push(Fault::SilentResubscription);
        }
        // The venues that announce a restart (Binance spot's
        // `serverShutdown`, a text frame on its SBE streams too; OKX's
        // notice 64008).
        if matches!(
            venue,
            Venue::BinanceSpot | Venue::BinanceSpotSbe | Venue::Okx
        ) {
            all.push(Fault::ShutdownNotice);
        }
        // The venues whose WebSocket request budget the simulator enforces.
        if matches!(venue, Venue::Okx | Venue::Coinbase) {
            all.push(Fault::BudgetBreach);
        }
        all
    }
}

/// Where a venue is in its run of faults.
enum Phase {
    /// Waiting until `at` to inject the next.
    Settling { at: Instant },
    /// Injected: waiting for it to take effect, then for the books.
    Injected {
        fault: Fault,
        since: Instant,
        /// The venue's counters when it was injected.
        before: Counts,
        /// It took effect (a reconnect, a gap, a refusal).
        took: bool,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    reconnects: u64,
    planned: u64,
    gaps: u64,
    rejections: u64,
}

impl Counts {
    fn of(s: &VenueStats) -> Counts {
        let g = |c: &AtomicU64| FeedStats::get(c);
        Counts {
            reconnects: g(&s.reconnects),
            planned: g(&s.planned_reconnects),
            gaps: g(&s.gaps),
            rejections: g(&s.rejections),
        }
    }
}

/// One venue's run of faults.
pub(crate) struct Schedule {
    /// The venue's name, as the feed's log lines name it.
    venue: &'static str,
    faults: Vec<Fault>,
    next: usize,
    phase: Phase,
    /// Faults injected, and recovered from.
    pub(crate) injected: u64,
    pub(crate) recovered: u64,
    /// The faults not recovered from, for the summary.
    pub(crate) failed: Vec<&'static str>,
}

/// How long a fault may take to take effect, and the books to be valid
/// again after it did.
const DEADLINE: Duration = Duration::from_secs(30);
/// Quiet time between two faults of a venue.
const SETTLE: Duration = Duration::from_secs(2);

impl Schedule {
    /// `venue`'s faults, from `start`. With a standby line, only the
    /// network's, on the main line: a fault of the venue's own reaches
    /// every connection alike, and no second line can bring back what the
    /// venue lost.
    pub(crate) fn new(venue: Venue, start: Instant, standby: bool) -> Schedule {
        let mut faults = Fault::all(venue);
        if standby {
            faults.retain(|f| !f.of_the_venue());
        }
        Schedule {
            venue: venue.name(),
            faults,
            next: 0,
            phase: Phase::Settling { at: start + SETTLE },
            injected: 0,
            recovered: 0,
            failed: Vec::new(),
        }
    }

    /// Whether a fault is under way.
    pub(crate) fn busy(&self) -> bool {
        matches!(self.phase, Phase::Injected { .. })
    }

    /// Moves the schedule on: injects the next fault when it is time,
    /// notices it took effect and that the venue's books are back. Returns
    /// a line to say when it injected one or saw one end: the fault named,
    /// as the feed's own lines about the venue name it meanwhile.
    pub(crate) fn step(
        &mut self,
        now: Instant,
        sim: &Simulator,
        proxy: &Proxy,
        stats: &VenueStats,
        instruments: usize,
    ) -> Option<String> {
        match self.phase {
            Phase::Settling { at } => {
                if now < at {
                    return None;
                }
                let fault = self.faults[self.next % self.faults.len()];
                self.next += 1;
                let before = Counts::of(stats);
                injected::set(self.venue, Some(fault.name()));
                inject(fault, sim, proxy, self.next as u64, instruments);
                self.injected += 1;
                self.phase = Phase::Injected {
                    fault,
                    since: now,
                    before,
                    took: false,
                };
                Some(format!(
                    "venue {}: injected fault: {} ({})",
                    self.venue,
                    fault.name(),
                    fault.effect()
                ))
            }
            Phase::Injected {
                fault,
                since,
                before,
                mut took,
            } => {
                let counts = Counts::of(stats);
                if !took {
                    took = match fault {
                        Fault::Split => now.duration_since(since) >= Duration::from_secs(1),
                        Fault::Restart => now.duration_since(since) >= Duration::from_millis(500),
                        Fault::Checksum | Fault::SequenceGap | Fault::SilentResubscription => {
                            counts.gaps > before.gaps
                        }
                        Fault::Rejected => counts.rejections > before.rejections,
                        // Replaced before the close: no gap, no reconnect.
                        Fault::ShutdownNotice => counts.planned > before.planned,
                        _ => counts.reconnects > before.reconnects,
                    };
                    if took {
                        // Connections through the proxy flow again, and
                        // the venue takes its whole budget again.
                        proxy.set(NetFault::None);
                        sim.request_budget().set(None);
                    }
                }
                let valid = FeedStats::get(&stats.books_valid) == stats.books;
                let done = took && valid;
                let late = now.duration_since(since) > DEADLINE;
                if done || late {
                    proxy.set(NetFault::None);
                    sim.request_budget().set(None);
                    injected::set(self.venue, None);
                    let took_s = now.duration_since(since).as_secs_f64();
                    self.phase = Phase::Settling { at: now + SETTLE };
                    if done {
                        self.recovered += 1;
                        Some(format!(
                            "venue {}: injected fault: {}: recovered in {took_s:.1} s (books valid)",
                            self.venue,
                            fault.name()
                        ))
                    } else {
                        self.failed.push(fault.name());
                        Some(format!(
                            "venue {}: injected fault: {}: not recovered within {} s ({})",
                            self.venue,
                            fault.name(),
                            DEADLINE.as_secs(),
                            if took {
                                "books not valid again"
                            } else {
                                "it never took effect"
                            }
                        ))
                    }
                } else {
                    self.phase = Phase::Injected {
                        fault,
                        since,
                        before,
                        took,
                    };
                    None
                }
            }
        }
    }
}

/// Injects `fault`; `n` varies the instrument and the byte offsets.
fn inject(fault: Fault, sim: &Simulator, proxy: &Proxy, n: u64, instruments: usize) {
    let instrument = (n as usize) % instruments.max(1);
    // A few kilobytes in: inside the stream, past any frame boundary.
    let at = 2000 + (n * 337) % 3000;
    match fault {
        Fault::Close => proxy.set(NetFault::CloseAfter(at)),
        Fault::Reset => proxy.set(NetFault::ResetAfter(at)),
        Fault::Corrupt => proxy.set(NetFault::CorruptAt(at)),
        Fault::Drop => proxy.set(NetFault::Drop { start: at, len: 50 }),
        Fault::Duplicate => proxy.set(NetFault::Duplicate { start: at, len: 70 }),
        Fault::Stall => proxy.set(NetFault::Stall),
        Fault::Split => proxy.set(NetFault::Split),
        Fault::Checksum => {
            sim.fault(instrument, VenueFault::BadChecksum);
        }
        Fault::SequenceGap => {
            sim.fault(instrument, VenueFault::SequenceGap);
        }
        Fault::Restart => {
            sim.fault(instrument, VenueFault::Restart);
        }
        Fault::ShutdownNotice => {
            sim.fault(instrument, VenueFault::ShutdownNotice);
        }
        Fault::SilentResubscription => {
            sim.fault(instrument, VenueFault::IgnoreSubscription);
            sim.fault(instrument, VenueFault::SequenceGap);
        }
        Fault::BudgetBreach => {
            // Taken back once the venue closed the connection (`took`).
            sim.request_budget().set(Some((0, Duration::from_secs(1))));
            sim.fault(instrument, VenueFault::SequenceGap);
        }
        Fault::Rejected => {
            sim.fault(instrument, VenueFault::RejectSubscription);
            if sim.venue().rest_snapshots() {
                // Binance subscribes on connecting only: drop the
                // connection, the reconnect's subscription is refused.
                proxy.set(NetFault::CloseAfter(0));
            } else {
                // A lost message: the book's resubscription is refused.
                sim.fault(instrument, VenueFault::SequenceGap);
            }
        }
    }
}
