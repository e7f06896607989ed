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

/// The messages of a recording, one per non-empty line. `.gz` files are
/// hftbacktest's originals, `<recv_ns> <text>` per line: the text alone.
pub(crate) fn recorded(path: &std::path::Path) -> Vec<Vec<u8>> {
    use std::io::Read;
    let raw = std::fs::read(path).unwrap();
    let gz = path.extension().is_some_and(|e| e == "gz");
    let text = if gz {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    };
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| match l.iter().position(|&b| b == b' ') {
            Some(space) if gz => l[space + 1..].to_vec(),
            _ => l.to_vec(),
        })
        .collect()
}

/// [`recorded`], each message followed by the parser's padding:
/// `(buffer, length)`.
pub(crate) fn recorded_padded(path: &std::path::Path) -> Vec<(Vec<u8>, usize)> {
    recorded(path)
        .into_iter()
        .map(|mut m| {
            let len = m.len();
            m.resize(len + INPUT_PADDING, 0);
            (m, len)
        })
        .collect()
}
