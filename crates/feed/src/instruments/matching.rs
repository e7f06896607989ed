//! Matching configured symbols against a venue's list: exactly as the
//! venue spells them (no venue this feed speaks documents its symbols as
//! case-insensitive in the form the feed sends and reads them; see each
//! parser in `tickwire_venues::listing`), with the closest listed names
//! suggested for one that is not listed, and decimals taken from the
//! list where the configuration did not give them.

use tickwire_venues::InstrumentSpec;
use tickwire_venues::listing::{Listed, Listing};

/// Suggestions offered at most.
const SUGGESTIONS: usize = 3;

/// The listed names closest to `symbol`, best first: edit distance (a
/// swap of neighbours counts as one edit, as in `BTCUSTD`) over
/// the names folded to upper case, so `btcusdt` finds `BTCUSDT` (and,
/// when a name differs only in case, only it); none further than a third
/// of the symbol's length (at least 2 edits).
pub fn closest<'a>(symbol: &str, listing: &'a Listing) -> Vec<&'a str> {
    let wanted = symbol.to_ascii_uppercase();
    let limit = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = listing
        .instruments
        .iter()
        .map(|l| {
            let d = strsim::osa_distance(&wanted, &l.symbol.to_ascii_uppercase());
            (d, l.symbol.as_str())
        })
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    // The same name in another case is the answer: nothing further.
    if scored.first().is_some_and(|(d, _)| *d == 0) {
        scored.retain(|(d, _)| *d == 0);
    }
    scored
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, s)| s)
        .collect()
}

/// Why a configured instrument cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown {
    /// The symbol as configured.
    pub symbol: String,
    /// The closest listed names.
    pub suggestions: Vec<String>,
    /// How many instruments the venue lists.
    pub listed: usize,
}

/// What checking one venue's instruments found: the first unknown
/// symbol, or a note per instrument (its decimals and where they came
/// from, and a status that is not trading).
pub fn apply(
    listing: &Listing,
    instruments: &mut [InstrumentSpec],
    scales_given: &[bool],
) -> Result<Vec<String>, Unknown> {
    let mut notes = Vec::new();
    for (n, spec) in instruments.iter_mut().enumerate() {
        let Some(listed) = listing.get(&spec.symbol) else {
            return Err(Unknown {
                symbol: spec.symbol.clone(),
                suggestions: closest(&spec.symbol, listing)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                listed: listing.instruments.len(),
            });
        };
        let given = scales_given.get(n).copied().unwrap_or(false);
        let from = if given {
            "as configured"
        } else {
            take_decimals(spec, listed)
        };
        let mut note = format!(
            "{}: price decimals {}, size decimals {} ({from}; tick {}, lot {})",
            spec.symbol,
            spec.price_scale,
            spec.size_scale,
            listed.tick_size.as_deref().unwrap_or("not given"),
            listed.lot_size.as_deref().unwrap_or("not given"),
        );
        if !listed.trading {
            note.push_str(&format!(
                "; listed with status `{}`, not trading: its book may stay empty",
                listed.status
            ));
        }
        notes.push(note);
    }
    Ok(notes)
}

/// Sets `spec`'s decimals from `listed`, each where the list gives it;
/// says where they came from.
fn take_decimals(spec: &mut InstrumentSpec, listed: &Listed) -> &'static str {
    match (listed.price_decimals, listed.size_decimals) {
        (Some(p), Some(s)) => {
            spec.price_scale = p;
            spec.size_scale = s;
            "from the venue's list"
        }
        (p, s) => {
            if let Some(p) = p {
                spec.price_scale = p;
            }
            if let Some(s) = s {
                spec.size_scale = s;
            }
            "partly from the venue's list, the rest the venue's defaults"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(names: &[&str]) -> Listing {
        Listing {
            instruments: names
                .iter()
                .map(|n| Listed::new(n, "TRADING", true, Some("0.01"), Some("0.00001")))
                .collect(),
        }
    }

    #[test]
    fn the_closest_names_are_suggested_case_insensitively() {
        let l = listing(&["ETHUSDT", "BTCUSDT", "BTCUSDC", "BNBUSDT", "SOLUSDT"]);
        assert_eq!(closest("btcusdt", &l), ["BTCUSDT"]);
        assert_eq!(closest("BTCUSTD", &l)[0], "BTCUSDT");
        assert_eq!(closest("ETHUSD", &l), ["ETHUSDT"]);
        assert!(
            closest("FOOBAR", &l).is_empty(),
            "{:?}",
            closest("FOOBAR", &l)
        );
        assert!(closest("btcusdt", &l).len() <= SUGGESTIONS);
    }

    #[test]
    fn decimals_come_from_the_list_unless_given() {
        let l = listing(&["BTCUSDT", "ETHUSDT"]);
        let mut specs = vec![
            InstrumentSpec::new("BTCUSDT", 8, 8, 20),
            InstrumentSpec::new("ETHUSDT", 3, 3, 20),
        ];
        let notes = apply(&l, &mut specs, &[false, true]).unwrap();
        assert_eq!((specs[0].price_scale, specs[0].size_scale), (2, 5));
        assert_eq!((specs[1].price_scale, specs[1].size_scale), (3, 3));
        assert!(notes[0].contains("from the venue's list"), "{notes:?}");
        assert!(notes[1].contains("as configured"), "{notes:?}");

        let mut wrong = vec![InstrumentSpec::new("btcusdt", 8, 8, 20)];
        let e = apply(&l, &mut wrong, &[false]).unwrap_err();
        assert_eq!(e.suggestions[0], "BTCUSDT");
        assert_eq!(e.listed, 2);
    }
}
