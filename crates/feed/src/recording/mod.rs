//! The recording format: what came off the wire (and what was sent, and
//! the REST responses books were bridged from), one record per message,
//! with the receive TSC and wall-clock time, so a session can be replayed
//! through the same decoders and books at full speed or at its own pace.
//!
//! A file starts with a 32-byte header, then records, each a 32-byte
//! header and its payload. Every record carries a CRC32 of its header and
//! payload, so a torn write (a crash) or a flipped bit is a typed error at
//! that record, never a wrong message. All integers are little-endian.
//!
//! ```text
//! file header   magic "tickwire" | version u32 | flags u32 (0)
//!               | created, Unix ns u64 | TSC ticks per second, f64 bits
//! record header payload length u32 | CRC32 of the rest u32 | receive TSC u64
//!               | wall clock, Unix ns u64 | connection u32 | kind u8
//!               | flags u8 (bit 0: binary) | reserved u16 (0)
//! ```
//!
//! [`Writer`] rotates to a new file (`<base>.<n>.twrec`) when the current
//! one would pass its size limit; [`files`] lists a series in order. What
//! a crash can lose is bounded: see [`writer`] ([`FLUSH_BYTES`],
//! [`FLUSH_INTERVAL`], [`Writer::sync_every`]).
//! [`Reader`] reads one file with a bounded buffer, reused: a record
//! longer than its limit is refused before anything is allocated for it.
//!
//! A recording cut short reads up to the cut, and the cut is told apart
//! from corruption ([`RecordingError::cut_at`]): a file that ends inside a
//! record ([`RecordingError::Truncated`]: the writer was killed, or its
//! disk filled) or whose last record fails its check and is followed by
//! nothing but zeros ([`RecordingError::ZeroFilled`]: the machine lost
//! power after the file's length reached the disk and before its last
//! blocks did; a header of zeros never checks, as the CRC32 of zeros is
//! not zero). Every record before the cut is whole and checked.

use std::fmt;
use std::io::{self, Read};

pub mod writer;

pub use writer::{FLUSH_BYTES, FLUSH_INTERVAL, Writer, files, follows, series_files};

/// The first eight bytes of every recording.
pub const MAGIC: [u8; 8] = *b"tickwire";
/// The format version this module writes and reads.
pub const VERSION: u32 = 1;
/// The size of the file header.
pub const FILE_HEADER: usize = 32;
/// The size of a record's header.
pub const RECORD_HEADER: usize = 32;
/// The largest payload [`Reader::new`] accepts by default (16 MiB: more
/// than any venue message or REST snapshot).
pub const DEFAULT_MAX_PAYLOAD: usize = 16 << 20;

/// What a record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A message received on a WebSocket connection.
    Received = 0,
    /// A message this side sent (subscriptions, pings answered in text).
    Sent = 1,
    /// A REST response body (a depth snapshot), as handed to the books.
    Response = 2,
    /// A connection opened; the payload is its endpoint.
    Opened = 3,
    /// A connection closed; the payload says why.
    Closed = 4,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            0 => Kind::Received,
            1 => Kind::Sent,
            2 => Kind::Response,
            3 => Kind::Opened,
            4 => Kind::Closed,
            _ => return None,
        })
    }
}

/// One record, its payload borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// What it is.
    pub kind: Kind,
    /// The connection it belongs to (the feed's own numbering).
    pub conn: u32,
    /// The TSC when the bytes were read (or sent).
    pub tsc: u64,
    /// The wall clock at the same moment, Unix ns.
    pub wall_ns: u64,
    /// A binary message (text otherwise).
    pub binary: bool,
    /// The message.
    pub payload: &'a [u8],
}

/// The file header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    /// When the file was started, Unix ns.
    pub created_unix_ns: u64,
    /// The TSC's rate on the recording machine (0 if unknown), to turn
    /// differences of [`Record::tsc`] into time.
    pub ticks_per_second: f64,
}

/// Why a recording could not be read.
#[derive(Debug)]
pub enum RecordingError {
    /// The file does not start with [`MAGIC`].
    NotARecording,
    /// A version this build does not read.
    Version(u32),
    /// The file ends inside a record (a write that did not finish: the
    /// writer was killed, or its disk filled), at this byte offset. Every
    /// record before it is whole.
    Truncated {
        /// Where the unfinished record starts.
        at: u64,
    },
    /// The record at this byte offset does not check and nothing but
    /// zeros follow its last byte: what a power loss leaves (the file's
    /// length reached the disk, its last blocks did not). Every record
    /// before it is whole.
    ZeroFilled {
        /// Where the record that does not check starts.
        at: u64,
    },
    /// A record whose CRC does not match, or whose kind or reserved bits
    /// are unknown, at this byte offset.
    Corrupt {
        /// Where the record starts.
        at: u64,
    },
    /// A record longer than the reader's limit, at this byte offset.
    TooLarge {
        /// Where the record starts.
        at: u64,
        /// Its payload length.
        len: u32,
    },
    /// Reading or writing failed.
    Io(io::Error),
    /// A [`Writer`] that stopped at an earlier failure
    /// ([`Writer::failure`] says where and why) refuses every record.
    Stopped,
}

impl RecordingError {
    /// Where the recording was cut short, if this is a cut (a write that
    /// never finished, or a power loss's zeros) rather than corruption:
    /// the byte offset of the first record not read.
    pub fn cut_at(&self) -> Option<u64> {
        match self {
            RecordingError::Truncated { at } | RecordingError::ZeroFilled { at } => Some(*at),
            _ => None,
        }
    }
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordingError::NotARecording => write!(f, "not a tickwire recording"),
            RecordingError::Version(v) => {
                write!(
                    f,
                    "recording format version {v}; this build reads {VERSION}"
                )
            }
            RecordingError::Truncated { at } => write!(
                f,
                "the recording is cut inside the record at byte {at} (a write that did not \
                 finish: the recorder was killed or its disk filled)"
            ),
            RecordingError::ZeroFilled { at } => write!(
                f,
                "the recording is cut at byte {at}: zeros from there on (what a power loss \
                 leaves)"
            ),
            RecordingError::Corrupt { at } => write!(f, "corrupt record at byte {at}"),
            RecordingError::TooLarge { at, len } => {
                write!(
                    f,
                    "record at byte {at} claims {len} bytes, more than allowed"
                )
            }
            RecordingError::Io(e) => write!(f, "{e}"),
            RecordingError::Stopped => write!(f, "the recording stopped at an earlier error"),
        }
    }
}

impl std::error::Error for RecordingError {}

impl From<io::Error> for RecordingError {
    fn from(e: io::Error) -> RecordingError {
        RecordingError::Io(e)
    }
}

/// The CRC of a record: its header after the CRC field, then its payload.
pub(crate) fn crc(header_rest: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(header_rest);
    h.update(payload);
    h.finalize()
}

/// Reads a recording, one record at a time, into one reused buffer.
pub struct Reader<R> {
    input: R,
    header: Header,
    buf: Vec<u8>,
    max_payload: usize,
    /// The byte offset of the next record.
    at: u64,
}

impl<R: Read> Reader<R> {
    /// Reads the file header; payloads up to [`DEFAULT_MAX_PAYLOAD`].
    pub fn new(input: R) -> Result<Reader<R>, RecordingError> {
        Reader::with_limit(input, DEFAULT_MAX_PAYLOAD)
    }

    /// Reads the file header; payloads up to `max_payload` bytes.
    pub fn with_limit(mut input: R, max_payload: usize) -> Result<Reader<R>, RecordingError> {
        let mut h = [0u8; FILE_HEADER];
        let n = read_full(&mut input, &mut h)?;
        if n < FILE_HEADER {
            // A file started and cut before its header was whole: a cut
            // at byte 0, not a foreign file.
            return Err(if h[..n.min(8)] == MAGIC[..n.min(8)] {
                RecordingError::Truncated { at: 0 }
            } else {
                RecordingError::NotARecording
            });
        }
        // The magic's beginning (or nothing) then zeros to the end: the
        // header's block lost with the power.
        let data = h.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        if data <= MAGIC.len() && h[..data] == MAGIC[..data] && rest_is_zero(&mut input)? {
            return Err(RecordingError::ZeroFilled { at: 0 });
        }
        if h[..8] != MAGIC {
            return Err(RecordingError::NotARecording);
        }
        let version = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
        let flags = u32::from_le_bytes(h[12..16].try_into().expect("4 bytes"));
        if version != VERSION || flags != 0 {
            return Err(RecordingError::Version(version));
        }
        let header = Header {
            created_unix_ns: u64::from_le_bytes(h[16..24].try_into().expect("8 bytes")),
            ticks_per_second: f64::from_bits(u64::from_le_bytes(
                h[24..32].try_into().expect("8 bytes"),
            )),
        };
        Ok(Reader {
            input,
            header,
            buf: Vec::new(),
            max_payload,
            at: FILE_HEADER as u64,
        })
    }

    /// The file header.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The next record, `None` at a clean end of file.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, RecordingError> {
        let at = self.at;
        let mut h = [0u8; RECORD_HEADER];
        match read_full(&mut self.input, &mut h)? {
            0 => return Ok(None),
            RECORD_HEADER => {}
            _ => return Err(RecordingError::Truncated { at }),
        }
        let field = |r: std::ops::Range<usize>| -> u64 {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(&h[r]);
            u64::from_le_bytes(b)
        };
        let len = field(0..4) as u32;
        if len as usize > self.max_payload {
            return Err(RecordingError::TooLarge { at, len });
        }
        let len = len as usize;
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        if read_full(&mut self.input, &mut self.buf[..len])? != len {
            return Err(RecordingError::Truncated { at });
        }
        let payload = &self.buf[..len];
        let (kind, flags, reserved) = (h[28], h[29], field(30..32));
        let kind = Kind::from_u8(kind);
        let checks = field(4..8) as u32 == crc(&h[8..], payload) && flags <= 1 && reserved == 0;
        let (true, Some(kind)) = (checks, kind) else {
            // Its last byte zero, and only zeros after it: a power loss's
            // tail, not a flipped bit.
            let last = if len > 0 { self.buf[len - 1] } else { h[31] };
            if last == 0 && rest_is_zero(&mut self.input)? {
                return Err(RecordingError::ZeroFilled { at });
            }
            return Err(RecordingError::Corrupt { at });
        };
        let payload = &self.buf[..len];
        self.at += (RECORD_HEADER + len) as u64;
        Ok(Some(Record {
            kind,
            conn: field(24..28) as u32,
            tsc: field(8..16),
            wall_ns: field(16..24),
            binary: flags == 1,
            payload,
        }))
    }
}

/// Whether everything left in `input` is zeros (read through a small
/// buffer on the stack, to the end).
fn rest_is_zero(input: &mut impl Read) -> io::Result<bool> {
    let mut chunk = [0u8; 4096];
    loop {
        let n = read_full(input, &mut chunk)?;
        if chunk[..n].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        if n < chunk.len() {
            return Ok(true);
        }
    }
}

/// Reads until `buf` is full or the input ends; how many bytes were read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::fs::File;
    use std::path::PathBuf;

    const HEADER: Header = Header {
        created_unix_ns: 1_700_000_000_000_000_000,
        ticks_per_second: 2.5e9,
    };

    fn kinds() -> impl Strategy<Value = Kind> {
        prop_oneof![
            Just(Kind::Received),
            Just(Kind::Sent),
            Just(Kind::Response),
            Just(Kind::Opened),
            Just(Kind::Closed),
        ]
    }

    type Owned = (Kind, u32, u64, u64, bool, Vec<u8>);

    fn owned(r: Record<'_>) -> Owned {
        (
            r.kind,
            r.conn,
            r.tsc,
            r.wall_ns,
            r.binary,
            r.payload.to_vec(),
        )
    }

    fn read_all(paths: &[PathBuf]) -> Vec<Owned> {
        let mut all = Vec::new();
        for p in paths {
            let mut r = Reader::new(File::open(p).unwrap()).unwrap();
            assert_eq!(r.header(), HEADER);
            while let Some(rec) = r.next_record().unwrap() {
                all.push(owned(rec));
            }
        }
        all
    }

    proptest! {
        /// What is written reads back the same, in order, across rotated
        /// files, none of which passes the limit unless one record alone
        /// does.
        #[test]
        fn records_round_trip_across_rotation(
            records in proptest::collection::vec(
                (kinds(), any::<u32>(), any::<u64>(), any::<u64>(), any::<bool>(),
                 proptest::collection::vec(any::<u8>(), 0..300)),
                0..40,
            ),
            limit in 100u64..2000,
        ) {
            let dir = std::env::temp_dir().join(format!(
                "tickwire-rec-{}-{}", std::process::id(), rand_suffix()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let base = dir.join("feed");
            let mut w = Writer::create(&base, limit, HEADER).unwrap();
            for (kind, conn, tsc, wall_ns, binary, payload) in &records {
                w.write(&Record {
                    kind: *kind, conn: *conn, tsc: *tsc, wall_ns: *wall_ns,
                    binary: *binary, payload,
                }).unwrap();
            }
            w.finish().unwrap();
            let paths = files(&base);
            for p in &paths {
                let size = std::fs::metadata(p).unwrap().len();
                let records_in = read_all(std::slice::from_ref(p)).len();
                prop_assert!(size <= limit || records_in == 1, "{}: {size}", p.display());
            }
            prop_assert_eq!(read_all(&paths), records);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    fn rand_suffix() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }

    fn sample() -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!(
            "tickwire-rec-sample-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("s");
        let mut w = Writer::create(&base, u64::MAX, HEADER).unwrap();
        for (i, payload) in [&b"{\"a\":1}"[..], b"second", b""].iter().enumerate() {
            w.write(&Record {
                kind: Kind::Received,
                conn: 7,
                tsc: 1000 + i as u64,
                wall_ns: 5000 + i as u64,
                binary: false,
                payload,
            })
            .unwrap();
        }
        w.finish().unwrap();
        let bytes = std::fs::read(files(&base)[0].clone()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        bytes
    }

    fn read_bytes(bytes: &[u8]) -> Result<Vec<Owned>, RecordingError> {
        let mut r = Reader::new(bytes)?;
        let mut all = Vec::new();
        while let Some(rec) = r.next_record()? {
            all.push(owned(rec));
        }
        Ok(all)
    }

    #[test]
    fn a_torn_write_is_truncated_at_the_record_that_did_not_finish() {
        let bytes = sample();
        assert_eq!(read_bytes(&bytes).unwrap().len(), 3);
        // Cut inside the second record's payload: the first reads, then
        // the error names where the second starts.
        let second = FILE_HEADER + RECORD_HEADER + 7;
        let cut = &bytes[..second + RECORD_HEADER + 2];
        let mut r = Reader::new(cut).unwrap();
        assert!(r.next_record().unwrap().is_some());
        assert!(matches!(
            r.next_record(),
            Err(RecordingError::Truncated { at }) if at == second as u64
        ));
        // Cut inside a record header.
        let cut = &bytes[..second + 5];
        let mut r = Reader::new(cut).unwrap();
        r.next_record().unwrap();
        assert!(matches!(
            r.next_record(),
            Err(RecordingError::Truncated { .. })
        ));
    }

    #[test]
    fn every_flipped_bit_in_a_record_is_caught() {
        let bytes = sample();
        // Every bit of the first record (header and payload) except the
        // length field, whose change shows up as a different error.
        for byte in FILE_HEADER + 4..FILE_HEADER + RECORD_HEADER + 7 {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[byte] ^= 1 << bit;
                let got = read_bytes(&b);
                assert!(
                    matches!(got, Err(RecordingError::Corrupt { at: 32 })),
                    "byte {byte} bit {bit}: {got:?}"
                );
            }
        }
    }

    #[test]
    fn foreign_files_and_huge_lengths_are_refused_before_allocating() {
        assert!(matches!(
            read_bytes(b"not a recording at all, 32 bytes+"),
            Err(RecordingError::NotARecording)
        ));
        assert!(matches!(
            read_bytes(b"tack"),
            Err(RecordingError::NotARecording)
        ));
        // The magic's beginning: a recording cut in its header.
        assert!(matches!(
            read_bytes(b"tick"),
            Err(RecordingError::Truncated { at: 0 })
        ));
        let mut bytes = sample();
        bytes[8] = 2;
        assert!(matches!(
            read_bytes(&bytes),
            Err(RecordingError::Version(2))
        ));
        let mut bytes = sample();
        bytes[FILE_HEADER..FILE_HEADER + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            read_bytes(&bytes),
            Err(RecordingError::TooLarge {
                at: 32,
                len: u32::MAX
            })
        ));
    }

    /// Where each record of `bytes` (a whole recording) starts and ends.
    fn extents(bytes: &[u8]) -> Vec<(usize, usize)> {
        let mut at = FILE_HEADER;
        let mut all = Vec::new();
        while at < bytes.len() {
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            all.push((at, at + RECORD_HEADER + len));
            at += RECORD_HEADER + len;
        }
        all
    }

    /// The records read, and how the reading ended: `Ok` at a clean end,
    /// else the error.
    fn read_until_end(bytes: &[u8]) -> (usize, Result<(), RecordingError>) {
        let mut reader = match Reader::new(bytes) {
            Ok(r) => r,
            Err(e) => return (0, Err(e)),
        };
        let mut n = 0;
        loop {
            match reader.next_record() {
                Ok(Some(_)) => n += 1,
                Ok(None) => return (n, Ok(())),
                Err(e) => return (n, Err(e)),
            }
        }
    }

    #[test]
    fn a_recording_cut_at_any_byte_reads_every_whole_record_and_says_where() {
        let bytes = sample();
        let records = extents(&bytes);
        for cut in 0..=bytes.len() {
            let (n, end) = read_until_end(&bytes[..cut]);
            let whole = records.iter().filter(|&&(_, end)| end <= cut).count();
            assert_eq!(n, whole, "cut at {cut}: {end:?}");
            match records
                .iter()
                .find(|&&(start, end)| start < cut && cut < end)
            {
                // Inside a record: a cut where it starts.
                Some(&(start, _)) => assert!(
                    matches!(end, Err(RecordingError::Truncated { at }) if at == start as u64),
                    "cut at {cut}: {end:?}"
                ),
                // Inside the file header (a file started and killed): a
                // cut at byte 0, not a foreign file.
                None if cut < FILE_HEADER => assert!(
                    matches!(end, Err(RecordingError::Truncated { at: 0 })),
                    "cut at {cut}: {end:?}"
                ),
                None => assert!(end.is_ok(), "cut at {cut}: {end:?}"),
            }
        }
    }

    #[test]
    fn a_zero_filled_tail_reads_as_a_cut_not_as_corruption() {
        // A header of zeros never checks.
        assert_ne!(crc(&[0; RECORD_HEADER - 8], &[]), 0);
        let bytes = sample();
        let records = extents(&bytes);
        // What a power loss leaves: the file's length on the disk, its
        // blocks from some byte on zeros (and a block more of them).
        for from in (0..=MAGIC.len()).chain(FILE_HEADER..=bytes.len()) {
            let mut lost = bytes.clone();
            lost[from..].fill(0);
            lost.resize(bytes.len() + 4096, 0);
            let (n, end) = read_until_end(&lost);
            // The records no zero reached read whole (one zeroed only
            // where it held zeros anyway is whole too); the cut is where
            // the first other one starts.
            let whole = records
                .iter()
                .take_while(|&&(start, end)| lost[start..end] == bytes[start..end])
                .count();
            let at = records.get(whole).map_or(bytes.len(), |&(start, _)| start);
            let at = if from < FILE_HEADER { 0 } else { at };
            let whole = if from < FILE_HEADER { 0 } else { whole };
            assert_eq!(n, whole, "zeros from {from}: {end:?}");
            assert!(
                matches!(end, Err(RecordingError::ZeroFilled { at: a }) if a == at as u64),
                "zeros from {from}: {end:?}"
            );
        }
        // Zeros that do not run to the end are corruption.
        let mut hole = bytes.clone();
        let (start, end) = records[1];
        hole[start..end].fill(0);
        assert!(matches!(
            read_until_end(&hole),
            (1, Err(RecordingError::Corrupt { at })) if at == start as u64
        ));
    }
}
