//! Faults injected on purpose (the demo's `--faults`), named on the log
//! lines they cause: while one is under way on a venue, each line the feed
//! says about that venue (`venue NAME: ...`) ends with the fault's name,
//! so a reader can tell an injected failure from a real one.
//!
//! Nothing here runs per message, and nothing is formatted twice unless a
//! fault is under way: the feed logs only failures.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether any fault is under way (a line is then looked at).
static ANY: AtomicBool = AtomicBool::new(false);
/// The faults under way: (venue name, fault name).
static UNDER_WAY: Mutex<Vec<(String, &'static str)>> = Mutex::new(Vec::new());

/// Says that `fault` is under way on the venue named `venue` (`None`:
/// none is any more).
#[cfg_attr(not(feature = "sim"), allow(dead_code))] // The demo's alone.
pub(crate) fn set(venue: &str, fault: Option<&'static str>) {
    let mut all = UNDER_WAY.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|(v, _)| v != venue);
    if let Some(fault) = fault {
        all.push((venue.to_owned(), fault));
    }
    ANY.store(!all.is_empty(), Ordering::Relaxed);
}

/// The fault under way on the venue `line` is about, if any.
pub(crate) fn on_line(line: &std::fmt::Arguments<'_>) -> Option<&'static str> {
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    let text = line.to_string();
    let venue = text.strip_prefix("venue ")?.split(": ").next()?;
    let all = UNDER_WAY.lock().unwrap_or_else(|e| e.into_inner());
    all.iter().find(|(v, _)| v == venue).map(|(_, f)| *f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_about_a_venue_with_a_fault_under_way_names_it() {
        set("okx-test", Some("corrupt"));
        assert_eq!(
            on_line(&format_args!("venue okx-test: wss://x: TLS failed")),
            Some("corrupt")
        );
        assert_eq!(
            on_line(&format_args!("venue kraken-test: wss://x: closed")),
            None
        );
        set("okx-test", None);
        assert_eq!(
            on_line(&format_args!("venue okx-test: wss://x: TLS failed")),
            None
        );
    }
}
