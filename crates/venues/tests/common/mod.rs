//! Reading `../shared/samples` from the venue tests.

use std::path::PathBuf;

use tickwire_venues::json::INPUT_PADDING;

/// `../shared/samples/<venue>`, or `None` (after saying so) when the
/// samples are absent: a clone of the project alone does not have them.
pub(crate) fn samples(venue: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/samples")
        .join(venue);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: ../shared/samples is absent");
        None
    }
}

/// The non-empty lines of `text`, numbered from 1, each copied into a
/// buffer with the padding the parser needs: `(line, buffer, length)`.
#[allow(dead_code)] // not every test binary reads lines
pub(crate) fn padded_lines(text: &[u8]) -> impl Iterator<Item = (usize, Vec<u8>, usize)> + '_ {
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, line)| {
            let mut buf = line.to_vec();
            buf.resize(line.len() + INPUT_PADDING, 0);
            (i + 1, buf, line.len())
        })
}
