//! Coinbase's connection-wide sequence.

use super::Resync;

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
