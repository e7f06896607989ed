//! The tests' stand-in for a path (they run under Miri, which maps no
//! file): a slot holding whichever heap ring was last put there, behind
//! the same [`Find`] and [`Place`] a path implements.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use super::memory::{ReadOnly, Writable};
use super::place::{Find, Place, RingId};
use super::{RingError, check};

/// Whichever heap ring was last put here.
#[derive(Clone, Default)]
pub(super) struct HeapPath(pub(super) Arc<Mutex<Option<Arc<[AtomicU64]>>>>);

impl HeapPath {
    /// The ring here now.
    pub(super) fn words(&self) -> Option<Arc<[AtomicU64]>> {
        self.0.lock().unwrap().clone()
    }
}

/// A heap ring's identity: its address.
fn id(words: &Arc<[AtomicU64]>) -> RingId {
    (0, Arc::as_ptr(words).cast::<AtomicU64>().addr() as u64)
}

impl Find for HeapPath {
    fn open(&self) -> Result<(ReadOnly, Option<RingId>), RingError> {
        let words = self.words().ok_or(RingError::NotARing)?;
        let id = id(&words);
        Ok((ReadOnly::heap(words), Some(id)))
    }

    fn now(&self) -> Option<RingId> {
        self.words().as_ref().map(id)
    }
}

impl Place for HeapPath {
    type Staged = Arc<[AtomicU64]>;

    fn current(&self) -> Option<Writable> {
        let words = self.words()?;
        let file_words = words.len() as u64;
        let header = Writable::heap(words);
        check(header.loads(), file_words).ok().map(|_| header)
    }

    fn stage(
        &self,
        words: usize,
        _generation: u64,
    ) -> Result<(Writable, Option<RingId>, Arc<[AtomicU64]>), RingError> {
        let heap: Arc<[AtomicU64]> = (0..words).map(|_| AtomicU64::new(0)).collect();
        Ok((Writable::heap(heap.clone()), Some(id(&heap)), heap))
    }

    fn install(&self, staged: Arc<[AtomicU64]>) -> Result<(), RingError> {
        *self.0.lock().unwrap() = Some(staged);
        Ok(())
    }
}
