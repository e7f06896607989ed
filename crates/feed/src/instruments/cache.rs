//! The instrument lists a run fetched, kept in its run directory as
//! `instruments-<venue name>.tsv` (a header line naming the URL and the
//! time, then one instrument a line), and read back by the next start
//! when fresh: a restart within [`FRESH`] asks the venue nothing.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tickwire_venues::listing::{Listed, Listing};

/// How long a fetched list is reused.
pub const FRESH: Duration = Duration::from_secs(3600);

/// The run directories whose lists a start may reuse: the latest run's
/// and the latest recording's.
const LATEST: [&str; 2] = ["latest-run", "latest-record"];

/// The cache file of the venue named `name` in `dir`.
pub fn file(dir: &Path, name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("instruments-{safe}.tsv"))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Writes `listing` (fetched from `url`) as the venue `name`'s cache in `dir`.
pub fn save(dir: &Path, name: &str, url: &str, listing: &Listing) -> io::Result<PathBuf> {
    let mut text = format!(
        "# tickwire instrument list from {url} fetched {}\n\
         # symbol\tstatus\ttrading\ttick_size\tlot_size\tprice_decimals\tsize_decimals\n",
        now_secs()
    );
    let opt = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
    let dec = |d: Option<u8>| d.map_or("-".into(), |d| d.to_string());
    for l in &listing.instruments {
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            l.symbol,
            l.status,
            l.trading,
            opt(&l.tick_size),
            opt(&l.lot_size),
            dec(l.price_decimals),
            dec(l.size_decimals)
        ));
    }
    // Whole or not at all: a reader never sees half a list.
    let path = file(dir, name);
    let part = path.with_extension("tsv.part");
    std::fs::write(&part, text)?;
    std::fs::rename(&part, &path)?;
    Ok(path)
}

/// The list cached in `path`, if it came from `url` and is younger than
/// `fresh`.
pub fn read(path: &Path, url: &str, fresh: Duration) -> Option<Listing> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let head = lines.next()?;
    let rest = head.strip_prefix("# tickwire instrument list from ")?;
    let (from, at) = rest.rsplit_once(" fetched ")?;
    let at: u64 = at.trim().parse().ok()?;
    if from != url || now_secs().saturating_sub(at) > fresh.as_secs() {
        return None;
    }
    let mut instruments = Vec::new();
    for line in lines.filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        let [symbol, status, trading, tick, lot, p, s] = f[..] else {
            return None;
        };
        let opt = |v: &str| (v != "-").then(|| v.to_owned());
        let dec = |v: &str| {
            if v == "-" {
                Some(None)
            } else {
                v.parse().ok().map(Some)
            }
        };
        instruments.push(Listed {
            symbol: symbol.to_owned(),
            status: status.to_owned(),
            trading: trading == "true",
            tick_size: opt(tick),
            lot_size: opt(lot),
            price_decimals: dec(p)?,
            size_decimals: dec(s)?,
        });
    }
    Some(Listing { instruments })
}

/// A fresh cached list of the venue `name` from `url` under `root` (the
/// runs directory), if one of the latest runs kept it.
pub fn fresh(root: &Path, name: &str, url: &str) -> Option<Listing> {
    LATEST
        .iter()
        .find_map(|l| read(&file(&root.join(l), name), url, FRESH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_list_reads_back_while_fresh_and_from_the_same_url() {
        let dir = std::env::temp_dir().join(format!("tickwire-listcache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let listing = Listing {
            instruments: vec![
                Listed::new("BTCUSDT", "TRADING", true, Some("0.01"), Some("0.00001")),
                Listed::new("LUNAUSDT", "BREAK", false, Some("0"), None),
            ],
        };
        let path = save(&dir, "my venue", "https://h/x", &listing).unwrap();
        assert!(path.ends_with("instruments-my_venue.tsv"));
        assert_eq!(read(&path, "https://h/x", FRESH), Some(listing));
        assert_eq!(read(&path, "https://other/x", FRESH), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
