//! The memory a ring lives in, seen as 64-bit atomic words: the module's
//! only `unsafe`. Two views, one per side:
//!
//! - [`Writable`]: the writer's ring (and the header of the ring it
//!   replaces), mapped read and write; every atomic operation is allowed.
//! - [`ReadOnly`]: a reader's ring, mapped read-only (`PROT_READ`). std
//!   allows only one atomic operation on read-only memory: a `Relaxed`
//!   load no larger than the target's limit (8 bytes on the 64-bit
//!   targets below). [`Loads`] is the only view it gives, and `Loads`
//!   does nothing else; a reader that needs acquire semantics follows its
//!   relaxed load with `fence(Acquire)`, as std says to.
//!
//! In the tests, which Miri runs, the same views are built over a heap
//! slice ([`Writable::heap`], [`ReadOnly::heap`]).

#![allow(unsafe_code)]

#[cfg(test)]
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::MmapRaw;

// What the views rely on, checked when the crate is built: 64-bit atomics,
// and a target where std guarantees that a relaxed 8-byte atomic load works
// on read-only memory. core::sync::atomic's module docs, "Atomic accesses
// to read-only memory": "sufficiently small atomic loads with
// `Ordering::Relaxed` are implemented in a way that works on read-only
// memory", with a size limit of 8 bytes for "`x86_64`, `aarch64`,
// `loongarch64`, `mips64`, `mips64r6`, `powerpc64`, `riscv64`, `sparc64`,
// `s390x`" (4 bytes, too small for these words, on the 32-bit targets).
#[cfg(not(all(
    target_has_atomic = "64",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "loongarch64",
        target_arch = "mips64",
        target_arch = "mips64r6",
        target_arch = "powerpc64",
        target_arch = "riscv64",
        target_arch = "sparc64",
        target_arch = "s390x",
    )
)))]
compile_error!(
    "the shared-memory ring needs 64-bit atomics and relaxed 8-byte atomic loads \
     from read-only memory, which std guarantees only on 64-bit targets"
);

/// Whatever keeps a ring's memory in place, and its words.
trait Words: Send + Sync {
    fn words(&self) -> &[AtomicU64];
}

/// A mapping that starts on an `AtomicU64`'s alignment: [`Mapped::new`]
/// checks it (a mapping starts on a page), and a mapping does not move.
struct Mapped(MmapRaw);

impl Mapped {
    fn new(map: MmapRaw) -> Mapped {
        assert!(
            map.as_ptr().cast::<AtomicU64>().is_aligned(),
            "a mapping starts on a page"
        );
        Mapped(map)
    }

    /// The words, from the mapping's own raw pointer. (Private: a
    /// `ReadOnlyMap`'s words go out only as [`Loads`].)
    fn words(&self) -> &[AtomicU64] {
        let map = &self.0;
        // SAFETY: `from_raw_parts` needs a pointer aligned, non-null,
        // valid for reads of `len * 8` bytes of initialised `AtomicU64`s
        // for the returned lifetime, and memory not mutated through
        // anything but this `UnsafeCell`-holding type meanwhile. The
        // pointer is the mapping's own (`MmapRaw` hands out no reference
        // to its bytes, so no `&[u8]` forbids the other process's writes),
        // aligned (checked in `new`), non-null. `len` is the mapping's
        // length in whole words, and `self` keeps the mapping alive for as
        // long as the slice borrows it; no tickwire process truncates a
        // ring file (the lifecycle in `shm`), so the pages stay backed (a
        // truncation from outside is a SIGBUS, not a read of freed
        // memory). Every bit pattern is a valid `AtomicU64`, which has the
        // size and alignment of a `u64` on the targets gated above. Every
        // process running this module touches these words only through
        // atomics, so nothing is a data race.
        unsafe { std::slice::from_raw_parts(map.as_ptr().cast::<AtomicU64>(), map.len() / 8) }
    }
}

/// A mapping made read and write: the writer's.
struct ReadWriteMap(Mapped);

/// A mapping made read-only: a reader's.
struct ReadOnlyMap(Mapped);

impl Words for ReadWriteMap {
    fn words(&self) -> &[AtomicU64] {
        self.0.words()
    }
}

impl Words for ReadOnlyMap {
    /// (A reference to read-only memory is not itself an access: what
    /// std restricts is the operations, and these words leave this file
    /// only as [`Loads`].)
    fn words(&self) -> &[AtomicU64] {
        self.0.words()
    }
}

#[cfg(test)]
impl Words for Arc<[AtomicU64]> {
    fn words(&self) -> &[AtomicU64] {
        self
    }
}

/// A ring's memory that may be written: the writer's own mapping.
pub(super) struct Writable(Box<dyn Words>);

impl Writable {
    /// `map`, which must have been mapped read and write
    /// (`MmapOptions::map_raw`).
    pub(super) fn map(map: MmapRaw) -> Writable {
        Writable(Box::new(ReadWriteMap(Mapped::new(map))))
    }

    /// A heap slice standing for a mapping, in the tests.
    #[cfg(test)]
    pub(super) fn heap(words: Arc<[AtomicU64]>) -> Writable {
        Writable(Box::new(words))
    }

    /// The words, for any atomic operation.
    #[inline]
    pub(super) fn words(&self) -> &[AtomicU64] {
        self.0.words()
    }

    /// The words, for loads alone.
    #[inline]
    pub(super) fn loads(&self) -> Loads<'_> {
        Loads(self.0.words())
    }
}

/// A ring's memory that is only ever loaded: a reader's read-only
/// mapping. It gives out [`Loads`] alone.
pub(super) struct ReadOnly(Box<dyn Words>);

impl ReadOnly {
    /// `map`, mapped read-only (`MmapOptions::map_raw_read_only`).
    pub(super) fn map(map: MmapRaw) -> ReadOnly {
        ReadOnly(Box::new(ReadOnlyMap(Mapped::new(map))))
    }

    /// A heap slice standing for a read-only mapping, in the tests.
    #[cfg(test)]
    pub(super) fn heap(words: Arc<[AtomicU64]>) -> ReadOnly {
        ReadOnly(Box::new(words))
    }

    /// The words, for relaxed loads.
    #[inline]
    pub(super) fn loads(&self) -> Loads<'_> {
        Loads(self.0.words())
    }
}

/// Words that can only be loaded, `Relaxed`: the one atomic operation std
/// allows on read-only memory ("sufficiently small atomic loads with
/// `Ordering::Relaxed` ... work on read-only memory"; and "If you need to
/// do an acquire load on read-only memory, you can do a relaxed load
/// followed by an acquire fence instead": its callers do that).
#[derive(Clone, Copy)]
pub(super) struct Loads<'a>(&'a [AtomicU64]);

impl<'a> Loads<'a> {
    /// How many words.
    #[inline]
    pub(super) fn len(self) -> usize {
        self.0.len()
    }

    /// Word `i`, loaded `Relaxed`. Panics past the end.
    #[inline]
    pub(super) fn load(self, i: usize) -> u64 {
        self.0[i].load(Ordering::Relaxed)
    }

    /// Words `from..to`. Panics past the end.
    #[inline]
    pub(super) fn range(self, from: usize, to: usize) -> Loads<'a> {
        Loads(&self.0[from..to])
    }
}
