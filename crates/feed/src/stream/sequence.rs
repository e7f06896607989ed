//! A subscriber's own check of a publisher's sequence numbers: the first
//! event it sees sets where it joined; after that every number is the one
//! before plus one, or the events between were lost.

/// What one event's sequence number says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The first event seen of this publisher: where the subscriber joined.
    Joined,
    /// The next one.
    Next,
    /// `lost` events were skipped before this one.
    Gap {
        /// How many numbers were skipped.
        lost: u64,
    },
    /// A number already seen (or older): a duplicate, not counted again.
    Old,
}

/// One publisher's numbering as seen so far, and what it lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sequence {
    last: Option<u64>,
    /// Events received in order (the first included).
    pub received: u64,
    /// Gaps seen.
    pub gaps: u64,
    /// Events the gaps skipped.
    pub lost: u64,
    /// Duplicate or out-of-order numbers seen (and skipped).
    pub old: u64,
}

impl Sequence {
    /// A numbering not yet joined.
    pub fn new() -> Sequence {
        Sequence::default()
    }

    /// Takes the next sequence number.
    pub fn observe(&mut self, sequence: u64) -> Step {
        let step = match self.last {
            None => Step::Joined,
            Some(last) if sequence <= last => {
                self.old += 1;
                return Step::Old;
            }
            Some(last) if sequence == last + 1 => Step::Next,
            Some(last) => {
                let lost = sequence - last - 1;
                self.gaps += 1;
                self.lost += lost;
                Step::Gap { lost }
            }
        };
        self.last = Some(sequence);
        self.received += 1;
        step
    }

    /// The last number taken.
    pub fn last(&self) -> Option<u64> {
        self.last
    }
}
