//! The recorded Binance day-slices in `../shared/samples` (the replay and
//! SBE benches read the same files).

use std::io::Read;
use std::path::PathBuf;

use tickwire_venues::json::INPUT_PADDING;

/// Each message of a gzipped `<ns> <json>` recording under
/// `shared/samples/binance`: its bytes (padded), its length, and whether it
/// is the REST snapshot. `None` when the samples are absent.
pub(crate) fn binance(file: &str) -> Option<Vec<(Vec<u8>, usize, bool)>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/samples/binance")
        .join(file);
    let raw = std::fs::read(&path).ok()?;
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_end(&mut text)
        .ok()?;
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let msg = &l[l.iter().position(|&b| b == b' ')? + 1..];
            let buf = padded(msg);
            let snapshot = msg.windows(14).any(|w| w == b"\"lastUpdateId\"");
            Some((buf, msg.len(), snapshot))
        })
        .collect()
}

/// `bytes` followed by the zeros the adapters' in-place parser reads past
/// a message's end.
pub(crate) fn padded(bytes: &[u8]) -> Vec<u8> {
    let mut buf = bytes.to_vec();
    buf.resize(bytes.len() + INPUT_PADDING, 0);
    buf
}

/// The median.
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
