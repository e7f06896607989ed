//! A fixed byte buffer with a read and a write position: the bottom of the
//! send side, shared by the WebSocket encoder and the TLS record layer,
//! knowing neither.

/// Why a [`Region`] has no room for a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegionError {
    /// More bytes than the whole region holds.
    TooLarge,
    /// Not enough room now; there will be once the region drains.
    Full,
}

/// A byte region with a read and a write position, compacted on demand.
pub(crate) struct Region {
    pub(crate) buf: Box<[u8]>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Region {
    pub(crate) fn new(size: usize) -> Region {
        Region {
            buf: vec![0u8; size].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Room for `n` more bytes at the end, compacting if needed.
    pub(crate) fn reserve(&mut self, n: usize) -> Result<&mut [u8], RegionError> {
        if n > self.buf.len() {
            return Err(RegionError::TooLarge);
        }
        if self.buf.len() - self.end < n {
            if self.buf.len() - (self.end - self.start) < n {
                return Err(RegionError::Full);
            }
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        Ok(&mut self.buf[self.end..self.end + n])
    }

    pub(crate) fn commit(&mut self, n: usize) {
        self.end += n;
    }

    pub(crate) fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.clear();
        }
    }

    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }
}
