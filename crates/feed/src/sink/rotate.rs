//! JSON Lines files rotated by size: `events.jsonl`, then
//! `events.1.jsonl`, `events.2.jsonl`, ... (the number before the
//! extension, so that `*.jsonl` still finds them all). A file is rotated
//! between lines, never inside one, and each starts with the schema's
//! `header` line, so each reads on its own. A series replaces the one of
//! the same name before it whole (its first file truncated, its later
//! files removed, said), so that `events*.jsonl` is never one run's
//! lines followed by another's; otherwise none is deleted: what a run
//! keeps is bounded by the `runs/` retention (`TICKWIRE_RUNS_KEEP`,
//! `TICKWIRE_RUNS_MAX_MB`), not here.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::Encoder;

/// The path of file `n` of a series whose first file is `base`.
pub fn rotated_path(base: &Path, n: u32) -> PathBuf {
    if n == 0 {
        return base.to_owned();
    }
    let stem = base.file_stem().unwrap_or_default().to_string_lossy();
    let name = match base.extension() {
        Some(ext) => format!("{stem}.{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{n}"),
    };
    base.with_file_name(name)
}

/// The series' files, in order: a file past the size goes on in the next.
pub struct RotatingFile {
    base: PathBuf,
    max_bytes: u64,
    n: u32,
    out: BufWriter<File>,
    /// Bytes in the current file, its header's included.
    written: u64,
    /// The header's length: a file holding no more holds no event.
    header: u64,
}

impl RotatingFile {
    /// Creates the series' first file at `base` (replacing a file there,
    /// and removing the later files of the series it began), rotated once
    /// it holds `max_bytes` (0: never).
    pub fn create(base: PathBuf, max_bytes: u64) -> io::Result<RotatingFile> {
        let (out, header) = open(&base)?;
        let mut removed = 0;
        for n in 1.. {
            match std::fs::remove_file(rotated_path(&base, n)) {
                Ok(()) => removed += 1,
                Err(_) => break,
            }
        }
        if removed > 0 {
            log::info!(
                target: crate::LOG_TARGET,
                "{}: replaced, with the {removed} later file(s) of its earlier series",
                base.display()
            );
        }
        Ok(RotatingFile {
            base,
            max_bytes,
            n: 0,
            out,
            written: header,
            header,
        })
    }

    /// Writes `lines` (whole lines) to the current file, or to a new one
    /// if they would take it past the size and it holds an event already.
    pub fn write_lines(&mut self, lines: &[u8]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let len = lines.len() as u64;
        if self.max_bytes > 0 && self.written > self.header && self.written + len > self.max_bytes {
            self.out.flush()?;
            self.n += 1;
            let (out, header) = open(&rotated_path(&self.base, self.n))?;
            self.out = out;
            self.written = header;
        }
        self.out.write_all(lines)?;
        self.written += len;
        Ok(())
    }

    /// The current file's path.
    pub fn path(&self) -> PathBuf {
        rotated_path(&self.base, self.n)
    }

    /// Flushes the current file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A new file at `path`, its header written; and the header's length.
fn open(path: &Path) -> io::Result<(BufWriter<File>, u64)> {
    let file = File::create(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let mut header = Vec::new();
    Encoder::header(&mut header);
    out.write_all(&header)?;
    Ok((out, header.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new series replaces the earlier one of its name whole: no file
    /// of it is left to be read as this one's.
    #[test]
    fn a_new_series_leaves_none_of_the_earlier_one() {
        let dir = std::env::temp_dir().join(format!("tickwire-reseries-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("events.jsonl");
        for n in 0..4 {
            std::fs::write(rotated_path(&base, n), "earlier\n").unwrap();
        }
        let mut f = RotatingFile::create(base.clone(), 0).unwrap();
        f.write_lines(b"{}\n").unwrap();
        f.flush().unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["events.jsonl"]);
        assert!(!std::fs::read_to_string(&base).unwrap().contains("earlier"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_are_numbered_before_the_extension() {
        let base = Path::new("/r/events.jsonl");
        assert_eq!(rotated_path(base, 0), base);
        assert_eq!(rotated_path(base, 2), Path::new("/r/events.2.jsonl"));
        assert_eq!(rotated_path(Path::new("out"), 1), Path::new("out.1"));
    }

    #[test]
    fn a_file_past_its_size_goes_on_in_the_next_each_with_its_header() {
        let dir = std::env::temp_dir().join(format!("tickwire-rotate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("e.jsonl");
        let mut header = Vec::new();
        Encoder::header(&mut header);
        let max = header.len() as u64 + 25;
        let mut r = RotatingFile::create(base.clone(), max).unwrap();
        // A line longer than the size still goes whole, alone.
        let long = format!("{}\n", "x".repeat(40));
        for line in ["aaaaaaaaa\n", "bbbbbbbbb\n", "ccccccccc\n", &long, "d\n"] {
            r.write_lines(line.as_bytes()).unwrap();
        }
        r.flush().unwrap();
        let read = |n| std::fs::read_to_string(rotated_path(&base, n)).unwrap();
        let h = String::from_utf8(header).unwrap();
        assert_eq!(read(0), format!("{h}aaaaaaaaa\nbbbbbbbbb\n"));
        assert_eq!(read(1), format!("{h}ccccccccc\n"));
        assert_eq!(read(2), format!("{h}{long}"));
        assert_eq!(read(3), format!("{h}d\n"));
        assert!(!rotated_path(&base, 4).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
