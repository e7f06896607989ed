//! Where a ring lives: a path or, in the tests (which run under Miri),
//! a heap slot that stands for one; how a new ring is staged beside it
//! and put in its place, and how a reader opens it and finds a newer one.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::PathBuf;
#[cfg(test)]
use std::sync::atomic::AtomicU64;
#[cfg(test)]
use std::sync::{Arc, Mutex};

use memmap2::MmapOptions;

use super::{HEADER_WORDS, Region, Ring, RingError, SLOT_WORDS, init};

/// A file's identity: a new file at the path has another one.
#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// Unknown here: every recheck opens the path and compares generations.
#[cfg(not(unix))]
fn file_id(_: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Where a ring lives: a path or, in the tests, a heap slot that stands
/// for one.
pub(super) enum Place {
    Path(PathBuf),
    #[cfg(test)]
    Heap(HeapPath),
}

/// A test's stand-in for a path: whichever heap ring was last put there.
#[cfg(test)]
#[derive(Clone, Default)]
pub(super) struct HeapPath(pub(super) Arc<Mutex<Option<Arc<[AtomicU64]>>>>);

/// A new ring, not yet at its place.
pub(super) enum Staged {
    Temp(PathBuf),
    #[cfg(test)]
    Heap(Arc<[AtomicU64]>),
}

impl Place {
    /// The header of the ring at this place, writable, if it is a whole
    /// ring of this version (one a new writer can mark superseded).
    pub(super) fn current(&self) -> Option<Region> {
        match self {
            Place::Path(path) => {
                let file = OpenOptions::new().read(true).write(true).open(path).ok()?;
                let len = file.metadata().ok()?.len();
                if len < (HEADER_WORDS * 8) as u64 {
                    return None;
                }
                // The header alone: the file is at least that long, and
                // no writer ever shortens it.
                let map = MmapOptions::new()
                    .len(HEADER_WORDS * 8)
                    .map_raw(&file)
                    .ok()?;
                let header = Region::map(map);
                header.check(len / 8).ok().map(|_| header)
            }
            #[cfg(test)]
            Place::Heap(h) => {
                let words = h.0.lock().unwrap().clone()?;
                let file_words = words.len() as u64;
                let header = Region::heap(words);
                header.check(file_words).ok().map(|_| header)
            }
        }
    }

    /// A new ring of `capacity` slots, its header and instrument table
    /// (`instruments`, its words) written, not yet at this place.
    pub(super) fn stage(
        &self,
        capacity: usize,
        generation: u64,
        instruments: &[u64],
    ) -> Result<(Ring, Staged), RingError> {
        let words = capacity
            .checked_mul(SLOT_WORDS)
            .and_then(|w| w.checked_add(HEADER_WORDS + instruments.len()))
            .filter(|w| w.checked_mul(8).is_some())
            .ok_or(RingError::Capacity(capacity))?;
        match self {
            Place::Path(path) => {
                let mut name = OsString::from(".");
                name.push(path.file_name().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "a ring's path names a file")
                })?);
                name.push(format!(".{generation:016x}.tmp"));
                let temp = path.with_file_name(name);
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&temp)?;
                let made = (|| {
                    // Whoever could read the ring replaced can read this one.
                    if let Ok(old) = fs::metadata(path) {
                        let _ = file.set_permissions(old.permissions());
                    }
                    // A new file, which no one else maps yet.
                    file.set_len((words * 8) as u64)?;
                    let region = Region::map(MmapOptions::new().map_raw(&file)?);
                    init(region.words(), capacity as u64, generation, instruments);
                    Ring::attach(region, file_id(&file.metadata()?))
                })();
                match made {
                    Ok(ring) => Ok((ring, Staged::Temp(temp))),
                    Err(e) => {
                        let _ = fs::remove_file(&temp);
                        Err(e)
                    }
                }
            }
            #[cfg(test)]
            Place::Heap(_) => {
                let heap: Arc<[AtomicU64]> = (0..words).map(|_| AtomicU64::new(0)).collect();
                let region = Region::heap(heap.clone());
                init(region.words(), capacity as u64, generation, instruments);
                let id = Some((0, Arc::as_ptr(&heap).cast::<AtomicU64>().addr() as u64));
                Ok((Ring::attach(region, id)?, Staged::Heap(heap)))
            }
        }
    }

    /// Puts `staged` at this place, in place of whatever was there.
    pub(super) fn install(&self, staged: Staged) -> Result<(), RingError> {
        match (self, staged) {
            (Place::Path(path), Staged::Temp(temp)) => fs::rename(&temp, path).map_err(|e| {
                let _ = fs::remove_file(&temp);
                RingError::Io(e)
            }),
            #[cfg(test)]
            (Place::Heap(h), Staged::Heap(words)) => {
                *h.0.lock().unwrap() = Some(words);
                Ok(())
            }
            #[cfg(test)]
            _ => unreachable!("staged elsewhere"),
        }
    }

    /// The ring at this place, for reading.
    pub(super) fn open(&self) -> Result<Ring, RingError> {
        match self {
            Place::Path(path) => {
                let file = File::open(path)?;
                let meta = file.metadata()?;
                if meta.len() < (HEADER_WORDS * 8) as u64 || !meta.len().is_multiple_of(8) {
                    return Err(RingError::NotARing);
                }
                Ring::attach(
                    Region::map(MmapOptions::new().map_raw_read_only(&file)?),
                    file_id(&meta),
                )
            }
            #[cfg(test)]
            Place::Heap(h) => {
                let words = h.0.lock().unwrap().clone().ok_or(RingError::NotARing)?;
                let id = Some((0, Arc::as_ptr(&words).cast::<AtomicU64>().addr() as u64));
                Ring::attach(Region::heap(words), id)
            }
        }
    }

    /// The ring at this place, if it is another than `than` (a newer
    /// writer's).
    pub(super) fn newer(&self, than: &Ring) -> Option<Ring> {
        let now = match self {
            Place::Path(path) => file_id(&fs::metadata(path).ok()?),
            #[cfg(test)]
            Place::Heap(h) => {
                let words = h.0.lock().unwrap();
                Some((
                    0,
                    Arc::as_ptr(words.as_ref()?).cast::<AtomicU64>().addr() as u64,
                ))
            }
        };
        if now.is_some() && now == than.id {
            return None;
        }
        let ring = self.open().ok()?;
        (ring.generation() != than.generation()).then_some(ring)
    }
}
