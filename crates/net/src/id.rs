//! The ids a handler and the driver name connections by.

use std::fmt;

/// Identifies one logical connection: the same id across its reconnects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId {
    pub(crate) index: u32,
    pub(crate) serial: u32,
}

impl ConnId {
    /// The slot this connection occupies (0-based, below `max_connections`).
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// An id for slot `index`, its `serial`th connection there, without a
    /// driver: for tests of the tables an application keys by slot. Not
    /// part of the API (the `internals` feature).
    #[cfg(any(fuzzing, feature = "internals"))]
    #[doc(hidden)]
    pub fn from_parts(index: u32, serial: u32) -> ConnId {
        ConnId { index, serial }
    }
}

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "conn {}.{}", self.index, self.serial)
    }
}
