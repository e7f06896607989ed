//! Writing a recording: rotated files, and what a crash can lose.
//!
//! The feed thread writes records into a buffer of [`FLUSH_BYTES`], handed
//! to the OS (one `write` system call) before a record would overflow it
//! (so what the OS has ends with a whole record), and by
//! [`Writer::flush_due`] once a poll turn when it has held records for
//! [`FLUSH_INTERVAL`]. What the OS has survives the process being killed
//! (SIGKILL, a panic, the OOM killer), so a crash loses at most the
//! records of the last [`FLUSH_INTERVAL`] (and one poll turn), and never
//! more than [`FLUSH_BYTES`] of them; the reader reads everything before
//! the cut. A power loss can lose what the OS had not written to the disk
//! yet: [`Writer::sync_every`] has a thread of its own `fdatasync` the
//! file at an interval, off the receive path.
//!
//! The first write that fails (a full disk) stops the writer for good: a
//! record half written stays the file's last, so the file reads as cut
//! there, never as corrupt in its middle; [`Writer::failure`] says where
//! and why, and every later record is refused without a system call.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::{FILE_HEADER, Header, MAGIC, RECORD_HEADER, Record, RecordingError, VERSION, crc};

/// Records are handed to the OS at the latest when this many bytes of
/// them are waiting: the most a killed process can lose. 64 KiB is a
/// `write` for every ~300 messages of the simulator's Binance streams
/// (~220 bytes a record). It copies the same bytes into the page cache as
/// the 1 MiB buffer it replaced, in stalls of the receive thread ~16 times
/// shorter (a 64 KiB `write` took 35-65 µs, a 1 MiB one 0.3-1.5 ms, on the
/// 2-core development VM: `dd` of 16 MiB).
pub const FLUSH_BYTES: usize = 64 << 10;

/// Records waiting this long are handed to the OS at the next poll turn
/// ([`Writer::flush_due`]): on a quiet stream, the most a killed process
/// can lose is this much of it. At most 20 `write`s a second.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// Writes records to `<base>.<n>.twrec`, starting a new file when the
/// current one would grow past its limit (a record larger than the limit
/// gets a file of its own).
pub struct Writer {
    base: PathBuf,
    max_file_bytes: u64,
    header: Header,
    out: BufWriter<File>,
    /// Bytes in the current file, buffered ones included.
    written: u64,
    /// The current file's number.
    index: u32,
    /// When the buffer was last found empty or emptied by
    /// [`flush_due`](Self::flush_due).
    flushed_at: Instant,
    /// The thread that syncs the files to the disk, if asked for.
    syncer: Option<Syncer>,
    /// Why the writer stopped, once it has.
    failure: Option<String>,
}

impl Writer {
    /// Starts `<base>.0.twrec`; an error if it exists (a recording is never
    /// overwritten).
    pub fn create(
        base: impl Into<PathBuf>,
        max_file_bytes: u64,
        header: Header,
    ) -> Result<Writer, RecordingError> {
        let base = base.into();
        // No file of another series under this name either: a rotation
        // would meet it later.
        if let Some(taken) = series_files(&base).into_iter().next() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists: a recording is never overwritten (choose another name)",
                    taken.display()
                ),
            )
            .into());
        }
        let out = start_file(&file_name(&base, 0), header)?;
        Ok(Writer {
            base,
            max_file_bytes,
            header,
            out,
            written: FILE_HEADER as u64,
            index: 0,
            flushed_at: Instant::now(),
            syncer: None,
            failure: None,
        })
    }

    /// Has a thread of its own `fdatasync` the file being written every
    /// `interval` (and the directory once a file is started), so a power
    /// loss loses at most about `interval` plus [`FLUSH_INTERVAL`] of the
    /// recording. The feed thread never calls it (though a sync under way
    /// may delay a concurrent `write` on some file systems). `None` (the
    /// default): the OS writes the files back in its own time (Linux:
    /// within about 30 s); [`finish`](Self::finish) syncs either way.
    pub fn sync_every(&mut self, interval: Option<Duration>) -> io::Result<()> {
        if let Some(s) = self.syncer.take() {
            s.finish();
        }
        if let Some(interval) = interval {
            let syncer = Syncer::start(interval)?;
            syncer.follow(&self.out, &self.current_file());
            self.syncer = Some(syncer);
        }
        Ok(())
    }

    /// Appends one record (buffered: see the module's docs). After a
    /// failed write every record is refused ([`RecordingError::Stopped`]),
    /// without a system call.
    pub fn write(&mut self, record: &Record<'_>) -> Result<(), RecordingError> {
        if self.failure.is_some() {
            return Err(RecordingError::Stopped);
        }
        let len = u32::try_from(record.payload.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "payload over 4 GiB"))?;
        let size = (RECORD_HEADER + record.payload.len()) as u64;
        if self.written > FILE_HEADER as u64 && self.written + size > self.max_file_bytes {
            let rotated = self
                .out
                .flush()
                .map_err(RecordingError::from)
                .and_then(|()| {
                    // The number moves on only once its file is started.
                    start_file(&file_name(&self.base, self.index + 1), self.header)
                });
            match rotated {
                Ok(out) => {
                    self.out = out;
                    self.index += 1;
                    self.written = FILE_HEADER as u64;
                    if let Some(s) = &self.syncer {
                        s.follow(&self.out, &self.current_file());
                    }
                }
                Err(e) => return Err(self.fail(e)),
            }
        }
        // A record that fits the buffer goes into it whole: the buffer is
        // handed on first if it would not hold it, so the file ends with
        // a whole record after every flush (a larger record is written
        // straight through).
        let buffered = self.out.buffer().len();
        if buffered > 0
            && buffered + size as usize > self.out.capacity()
            && let Err(e) = self.out.flush()
        {
            return Err(self.fail(e.into()));
        }
        let mut h = [0u8; RECORD_HEADER];
        h[0..4].copy_from_slice(&len.to_le_bytes());
        h[8..16].copy_from_slice(&record.tsc.to_le_bytes());
        h[16..24].copy_from_slice(&record.wall_ns.to_le_bytes());
        h[24..28].copy_from_slice(&record.conn.to_le_bytes());
        h[28] = record.kind as u8;
        h[29] = u8::from(record.binary);
        let sum = crc(&h[8..], record.payload);
        h[4..8].copy_from_slice(&sum.to_le_bytes());
        let wrote = self
            .out
            .write_all(&h)
            .and_then(|()| self.out.write_all(record.payload));
        if let Err(e) = wrote {
            return Err(self.fail(e.into()));
        }
        self.written += size;
        Ok(())
    }

    /// Hands the buffered records to the OS if they have waited
    /// [`FLUSH_INTERVAL`] (counted from when the buffer was last found
    /// empty); the feed calls it once a poll turn. `now` is the caller's
    /// clock.
    pub fn flush_due(&mut self, now: Instant) -> Result<(), RecordingError> {
        if self.out.buffer().is_empty() || self.failure.is_some() {
            self.flushed_at = now;
            return Ok(());
        }
        if now.saturating_duration_since(self.flushed_at) < FLUSH_INTERVAL {
            return Ok(());
        }
        self.flushed_at = now;
        self.flush()
    }

    /// Hands every buffered record to the OS now.
    pub fn flush(&mut self) -> Result<(), RecordingError> {
        if self.failure.is_some() {
            return Err(RecordingError::Stopped);
        }
        if let Err(e) = self.out.flush() {
            return Err(self.fail(e.into()));
        }
        Ok(())
    }

    /// Bytes written to the recording, buffered ones included: the current
    /// file's length once flushed.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Records waiting in the buffer, in bytes.
    pub fn buffered(&self) -> usize {
        self.out.buffer().len()
    }

    /// The file being written.
    pub fn current_file(&self) -> PathBuf {
        file_name(&self.base, self.index)
    }

    /// Why the writer stopped (the file, the byte and the cause), if it has.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Flushes and syncs the current file, and ends the sync thread. An
    /// error if the writer stopped early, saying where and why.
    pub fn finish(mut self) -> Result<(), RecordingError> {
        let synced = match &self.failure {
            Some(f) => Err(io::Error::other(f.clone()).into()),
            None => self
                .out
                .flush()
                .and_then(|()| self.out.get_ref().sync_data())
                .map_err(RecordingError::from),
        };
        let thread = match self.syncer.take() {
            Some(s) => s.finish(),
            None => None,
        };
        synced?;
        match thread {
            Some(e) => Err(io::Error::other(e).into()),
            None => Ok(()),
        }
    }

    /// Stops the writer at `e`, keeping a sentence that says where and why.
    fn fail(&mut self, e: RecordingError) -> RecordingError {
        self.failure = Some(format!(
            "the recording stopped at {} byte {}: {e}",
            self.current_file().display(),
            self.written
        ));
        e
    }
}

/// The thread that `fdatasync`s the file being written, and the channel
/// that tells it which file that is.
struct Syncer {
    files: mpsc::Sender<(File, PathBuf)>,
    thread: thread::JoinHandle<()>,
    /// The first sync that failed, said by [`Writer::finish`].
    error: Arc<Mutex<Option<String>>>,
}

impl Syncer {
    fn start(interval: Duration) -> io::Result<Syncer> {
        let (files, rx) = mpsc::channel::<(File, PathBuf)>();
        let error = Arc::new(Mutex::new(None));
        let failed = Arc::clone(&error);
        let note = move |what: &Path, e: io::Error| {
            if let Ok(mut f) = failed.lock() {
                f.get_or_insert_with(|| format!("syncing {}: {e}", what.display()));
            }
        };
        let thread = thread::Builder::new()
            .name("tickwire-rec-sync".into())
            .spawn(move || {
                let mut current: Option<(File, PathBuf)> = None;
                loop {
                    match rx.recv_timeout(interval) {
                        Ok((file, path)) => {
                            // The last of the file before, and the new
                            // file's directory entry.
                            if let Some((old, p)) = current.take()
                                && let Err(e) = old.sync_data()
                            {
                                note(&p, e);
                            }
                            if let Some(dir) = path.parent() {
                                let dir = if dir.as_os_str().is_empty() {
                                    Path::new(".")
                                } else {
                                    dir
                                };
                                if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
                                    note(dir, e);
                                }
                            }
                            current = Some((file, path));
                        }
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            if let Some((f, p)) = &current
                                && let Err(e) = f.sync_data()
                            {
                                note(p, e);
                            }
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })?;
        Ok(Syncer {
            files,
            thread,
            error,
        })
    }

    /// Syncs `out`'s file from now on (a second handle to it).
    fn follow(&self, out: &BufWriter<File>, path: &Path) {
        if let Ok(file) = out.get_ref().try_clone() {
            let _ = self.files.send((file, path.to_path_buf()));
        }
    }

    /// Ends the thread; the first error it met.
    fn finish(self) -> Option<String> {
        drop(self.files);
        let _ = self.thread.join();
        self.error.lock().ok().and_then(|mut e| e.take())
    }
}

/// Every `<base>.<n>.twrec` in `base`'s directory, whatever `n`.
pub fn series_files(base: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (base.parent(), base.file_name()) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let stem = stem.to_string_lossy();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let name = e.ok()?.file_name();
            let n = name.to_str()?.strip_prefix(&*stem)?.strip_prefix('.')?;
            let n = n.strip_suffix(".twrec")?;
            n.parse::<u32>().ok()?;
            Some(dir.join(&name))
        })
        .collect()
}

pub(super) fn file_name(base: &Path, index: u32) -> PathBuf {
    let mut name = base.as_os_str().to_owned();
    name.push(format!(".{index}.twrec"));
    PathBuf::from(name)
}

/// Creates `path` with the file header written through at once (not
/// buffered): a recording killed before its first flush is a header and
/// nothing, which reads as empty, not as a foreign file.
fn start_file(path: &Path, header: Header) -> Result<BufWriter<File>, RecordingError> {
    // A recording is never overwritten: a file that exists is an error
    // that names it.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => io::Error::new(
                e.kind(),
                format!(
                    "{} exists: a recording is never overwritten (choose another name)",
                    path.display()
                ),
            ),
            _ => e,
        })?;
    let mut h = [0u8; FILE_HEADER];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&header.created_unix_ns.to_le_bytes());
    h[24..32].copy_from_slice(&header.ticks_per_second.to_bits().to_le_bytes());
    file.write_all(&h)?;
    Ok(BufWriter::with_capacity(FLUSH_BYTES, file))
}

/// The files of the series a [`Writer`] with this `base` wrote, in order
/// (`<base>.0.twrec`, `<base>.1.twrec`, ... up to the first one missing).
pub fn files(base: &Path) -> Vec<PathBuf> {
    (0..)
        .map(|i| file_name(base, i))
        .take_while(|p| p.exists())
        .collect()
}

/// Whether `next` is the file after `file` in the same series
/// (`<base>.<n>.twrec`, then `<base>.<n+1>.twrec`).
pub fn follows(file: &Path, next: &Path) -> bool {
    fn split(p: &Path) -> Option<(&str, u32)> {
        let s = p.to_str()?.strip_suffix(".twrec")?;
        let (base, n) = s.rsplit_once('.')?;
        Some((base, n.parse().ok()?))
    }
    matches!((split(file), split(next)), (Some((a, i)), Some((b, j))) if a == b && Some(j) == i.checked_add(1))
}

#[cfg(test)]
mod tests {
    use super::super::{Kind, Reader};
    use super::*;

    const HEADER: Header = Header {
        created_unix_ns: 1,
        ticks_per_second: 1e9,
    };

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tickwire-rec-writer-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn record(payload: &[u8]) -> Record<'_> {
        Record {
            kind: Kind::Received,
            conn: 1,
            tsc: 2,
            wall_ns: 3,
            binary: false,
            payload,
        }
    }

    fn on_disk(w: &Writer) -> u64 {
        std::fs::metadata(w.current_file()).unwrap().len()
    }

    #[test]
    fn no_more_than_flush_bytes_ever_wait_in_the_buffer() {
        let dir = temp_dir("bytes");
        let mut w = Writer::create(dir.join("r"), u64::MAX, HEADER).unwrap();
        // The header is on the disk before any record.
        assert_eq!(on_disk(&w), FILE_HEADER as u64);
        let payload = vec![b'x'; 3000];
        let mut written = FILE_HEADER as u64;
        // Records of every size up to 3000 bytes, over 2 MiB in all.
        for i in 0..1500 {
            let len = (i * 7919) % payload.len();
            w.write(&record(&payload[..len])).unwrap();
            written += (RECORD_HEADER + len) as u64;
            assert_eq!(w.written(), written);
            let disk = on_disk(&w);
            assert!(
                written - disk <= FLUSH_BYTES as u64,
                "record {i}: {written} written, {disk} on the disk"
            );
            // What is on the disk ends with a whole record.
            if i % 100 == 0 {
                let bytes = std::fs::read(w.current_file()).unwrap();
                let mut r = Reader::new(&bytes[..]).unwrap();
                while r.next_record().unwrap().is_some() {}
            }
        }
        w.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn records_reach_the_os_once_they_have_waited_the_flush_interval() {
        let dir = temp_dir("interval");
        let mut w = Writer::create(dir.join("r"), u64::MAX, HEADER).unwrap();
        let t = Instant::now();
        // The buffer found empty: the interval counts from here.
        w.flush_due(t).unwrap();
        w.write(&record(b"quiet")).unwrap();
        w.flush_due(t + FLUSH_INTERVAL - Duration::from_millis(1))
            .unwrap();
        assert_eq!(on_disk(&w), FILE_HEADER as u64);
        w.flush_due(t + FLUSH_INTERVAL).unwrap();
        assert_eq!(on_disk(&w), w.written());
        assert_eq!(w.buffered(), 0);
        // Found empty later: the next record waits a whole interval again.
        let later = t + 10 * FLUSH_INTERVAL;
        w.flush_due(later).unwrap();
        w.write(&record(b"again")).unwrap();
        w.flush_due(later + FLUSH_INTERVAL / 2).unwrap();
        assert!(w.buffered() > 0);
        w.flush_due(later + FLUSH_INTERVAL).unwrap();
        assert_eq!(on_disk(&w), w.written());
        w.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_stops_the_writer_and_says_where_and_why() {
        let dir = temp_dir("fail");
        let base = dir.join("r");
        let mut w = Writer::create(&base, 200, HEADER).unwrap();
        // The file a rotation would start is taken.
        std::fs::write(file_name(&base, 1), b"someone else's").unwrap();
        let payload = [b'y'; 50];
        w.write(&record(&payload)).unwrap();
        w.write(&record(&payload)).unwrap();
        let e = w.write(&record(&payload)).unwrap_err();
        assert!(e.to_string().contains("never overwritten"), "{e}");
        let why = w.failure().unwrap().to_owned();
        assert!(
            why.contains("r.0.twrec byte 196") && why.contains("never overwritten"),
            "{why}"
        );
        // Refused from then on, the file left as it was, and said again
        // at the end.
        assert!(matches!(
            w.write(&record(&payload)),
            Err(RecordingError::Stopped)
        ));
        let finished = w.finish().unwrap_err().to_string();
        assert!(finished.contains("byte 196"), "{finished}");
        let bytes = std::fs::read(file_name(&base, 0)).unwrap();
        let mut r = Reader::new(&bytes[..]).unwrap();
        assert!(r.next_record().unwrap().is_some());
        assert!(r.next_record().unwrap().is_some());
        assert!(r.next_record().unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_synced_recording_rotates_and_reads_back_whole() {
        let dir = temp_dir("sync");
        let base = dir.join("r");
        let mut w = Writer::create(&base, 300, HEADER).unwrap();
        w.sync_every(Some(Duration::from_millis(1))).unwrap();
        for i in 0..20u8 {
            w.write(&record(&[i; 100])).unwrap();
        }
        w.finish().unwrap();
        let paths = files(&base);
        assert_eq!(paths.len(), 10);
        let mut n = 0;
        for p in &paths {
            let bytes = std::fs::read(p).unwrap();
            let mut r = Reader::new(&bytes[..]).unwrap();
            while let Some(rec) = r.next_record().unwrap() {
                assert_eq!(rec.payload, [n; 100]);
                n += 1;
            }
        }
        assert_eq!(n, 20);
        assert!(follows(&paths[0], &paths[1]) && !follows(&paths[1], &paths[0]));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
