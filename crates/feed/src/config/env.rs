//! `TICKWIRE_FEED_*` environment overrides: which key each variable sets,
//! and, when a value is wrong, which variable (and value) it came from, so
//! an error blames the variable and not the file.
//!
//! A value is read as a TOML value where it parses as one (`true`, `42`,
//! `["BTCUSDT", "ETHUSDT:20"]`, `"text"`), and as a string otherwise
//! (`busy-read`, `wss://localhost:9443`). A list is therefore written as
//! TOML writes it, brackets and quotes included:
//! `TICKWIRE_FEED_VENUE_BINANCE_INSTRUMENTS='["BTCUSDT", "ETHUSDT:20"]'`.

use super::{ConfigError, error};

/// One override applied to the file's table: the variable, its value as
/// given, and the key it set (`metrics.interval_ms`, `venue[1].endpoint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Override {
    pub(super) var: String,
    pub(super) raw: String,
    pub(super) key: String,
}

impl Override {
    /// `NAME="value"`, as an error names where a value came from; the
    /// value not shown for a key that may hold a secret (`api_key`, a
    /// `secret`, a `token`, a `password`, wanted or not: a key set where
    /// only its source belongs must not reach a log).
    pub(super) fn source(&self) -> String {
        let name = self.key.rsplit('.').next().unwrap_or(&self.key);
        if ["key", "secret", "token", "password"]
            .iter()
            .any(|w| name.contains(w))
        {
            format!("{}=(not shown)", self.var)
        } else {
            format!("{}={:?}", self.var, self.raw)
        }
    }

    /// Whether an error about `key` is about the value this override set
    /// (the key itself, or an element of it: `venue[0].instruments[1]`).
    pub(super) fn covers(&self, key: &str) -> bool {
        key == self.key
            || key
                .strip_prefix(self.key.as_str())
                .is_some_and(|rest| rest.starts_with(['[', '.']))
    }
}

/// An environment variable's value as TOML: the value where it parses as
/// one, a string otherwise.
fn env_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.into())),
        Err(_) => toml::Value::String(raw.into()),
    }
}

const SECTIONS: [&str; 4] = ["metrics", "sinks", "record", "tls"];

/// Applies `TICKWIRE_FEED_*` overrides to the parsed file; returns what
/// each one set, in the order they were applied.
pub(super) fn apply_env(
    table: &mut toml::Table,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<Override>, ConfigError> {
    let mut applied = Vec::new();
    for (name, raw) in vars {
        let Some(rest) = name.strip_prefix("TICKWIRE_FEED_") else {
            continue;
        };
        let lower = rest.to_ascii_lowercase();
        let value = env_value(&raw);
        let from = |key: &str| Override {
            var: name.clone(),
            raw: raw.clone(),
            key: key.to_owned(),
        };
        if let Some(venue_key) = lower.strip_prefix("venue_") {
            // TICKWIRE_FEED_VENUE_<NAME>_<KEY>: the longest venue name that
            // fits, and only it (`BN_2_ENDPOINT` is venue `bn-2`'s
            // endpoint, not a key `2_endpoint` of venue `bn`).
            let venues = table
                .get_mut("venue")
                .and_then(|v| v.as_array_mut())
                .ok_or_else(|| {
                    error(&name, "there is no [[venue]] to override").blamed_on(&from(""))
                })?;
            let env_name = |t: &toml::Table| {
                t.get("name")
                    .or_else(|| t.get("venue"))
                    .and_then(|n| n.as_str())
                    .unwrap_or_default()
                    .to_ascii_lowercase()
                    .replace('-', "_")
            };
            let key_of = |vname: &str| {
                venue_key
                    .strip_prefix(vname)
                    .and_then(|k| k.strip_prefix('_'))
                    .filter(|k| !k.is_empty())
                    .map(str::to_owned)
            };
            let longest = venues
                .iter()
                .filter_map(|v| v.as_table())
                .map(env_name)
                .filter(|vname| key_of(vname).is_some())
                .max_by_key(String::len);
            let Some(vname) = longest else {
                return Err(error(
                    &name,
                    "names no [[venue]] (TICKWIRE_FEED_VENUE_<NAME>_<KEY>)",
                )
                .blamed_on(&from("")));
            };
            let key = key_of(&vname).unwrap_or_default();
            for (n, t) in venues
                .iter_mut()
                .enumerate()
                .filter_map(|(n, v)| Some((n, v.as_table_mut()?)))
            {
                if env_name(t) == vname {
                    t.insert(key.clone(), value.clone());
                    applied.push(from(&format!("venue[{n}].{key}")));
                }
            }
            continue;
        }
        let section = SECTIONS
            .iter()
            .find(|s| lower.starts_with(&format!("{s}_")));
        match section {
            Some(s) => {
                let key = &lower[s.len() + 1..];
                let entry = table
                    .entry(s.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                let Some(t) = entry.as_table_mut() else {
                    return Err(error(*s, "is not a table").blamed_on(&from(s)));
                };
                t.insert(key.to_owned(), value);
                applied.push(from(&format!("{s}.{key}")));
            }
            None => {
                applied.push(from(&lower));
                table.insert(lower, value);
            }
        }
    }
    Ok(applied)
}
