//! Where a ring lives: a path, where a new ring is staged beside the old
//! and put in its place, a reader opens it read-only and notices when
//! another file is there. The tests (which run under Miri) put rings in a
//! heap slot instead, through the same two traits (`shm/heap.rs`).

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::PathBuf;

use memmap2::MmapOptions;

use super::memory::{ReadOnly, Writable};
use super::{HEADER_WORDS, RingError, check};

/// A ring's identity at its place (a file's device and inode): another
/// ring there has another one.
pub(super) type RingId = (u64, u64);

/// Where a reader finds its ring, and looks for the one that replaced it.
pub(super) trait Find: Send + Sync {
    /// The ring here, mapped for reading, and its identity if known.
    fn open(&self) -> Result<(ReadOnly, Option<RingId>), RingError>;

    /// The identity of the ring here now, if known (`None`: the reader
    /// opens whatever is here and compares generations).
    fn now(&self) -> Option<RingId>;
}

/// Where a writer puts its ring.
pub(super) trait Place: Find {
    /// A new ring, not yet at its place.
    type Staged;

    /// The header of the ring here, writable, if it is a whole ring of
    /// this version (one a new writer can mark superseded).
    fn current(&self) -> Option<Writable>;

    /// New memory of `words` zero words for a ring of `generation`, not
    /// yet at this place, and its identity.
    fn stage(
        &self,
        words: usize,
        generation: u64,
    ) -> Result<(Writable, Option<RingId>, Self::Staged), RingError>;

    /// Puts `staged` here, in place of whatever was here.
    fn install(&self, staged: Self::Staged) -> Result<(), RingError>;
}

/// A file's identity: a new file at the path has another one.
#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> Option<RingId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// Unknown here: every recheck opens the path and compares generations.
#[cfg(not(unix))]
fn file_id(_: &fs::Metadata) -> Option<RingId> {
    None
}

/// A ring file's path.
pub(super) struct AtPath(pub(super) PathBuf);

impl Find for AtPath {
    fn open(&self) -> Result<(ReadOnly, Option<RingId>), RingError> {
        let file = File::open(&self.0)?;
        let meta = file.metadata()?;
        if meta.len() < (HEADER_WORDS * 8) as u64 || !meta.len().is_multiple_of(8) {
            return Err(RingError::NotARing);
        }
        // `PROT_READ`: a reader cannot write the ring, even by mistake.
        let map = MmapOptions::new().map_raw_read_only(&file)?;
        Ok((ReadOnly::map(map), file_id(&meta)))
    }

    fn now(&self) -> Option<RingId> {
        file_id(&fs::metadata(&self.0).ok()?)
    }
}

impl Place for AtPath {
    /// The temporary file's path.
    type Staged = PathBuf;

    fn current(&self) -> Option<Writable> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.0)
            .ok()?;
        let len = file.metadata().ok()?.len();
        if len < (HEADER_WORDS * 8) as u64 {
            return None;
        }
        // The header alone: the file is at least that long, and no writer
        // ever shortens it.
        let map = MmapOptions::new()
            .len(HEADER_WORDS * 8)
            .map_raw(&file)
            .ok()?;
        let header = Writable::map(map);
        check(header.loads(), len / 8).ok().map(|_| header)
    }

    fn stage(
        &self,
        words: usize,
        generation: u64,
    ) -> Result<(Writable, Option<RingId>, PathBuf), RingError> {
        let path = &self.0;
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
            let map = MmapOptions::new().map_raw(&file)?;
            Ok((Writable::map(map), file_id(&file.metadata()?)))
        })();
        match made {
            Ok((memory, id)) => Ok((memory, id, temp)),
            Err(e) => {
                let _ = fs::remove_file(&temp);
                Err(RingError::Io(e))
            }
        }
    }

    fn install(&self, temp: PathBuf) -> Result<(), RingError> {
        fs::rename(&temp, &self.0).map_err(|e| {
            let _ = fs::remove_file(&temp);
            RingError::Io(e)
        })
    }
}
