//! The file's own layer: the TOML tables as serde reads them, before
//! any value is checked, and where in the text (or which environment
//! override) a value serde refused came from.

use std::path::PathBuf;

use serde::Deserialize;

use super::env;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    #[serde(default)]
    pub(super) poll: Option<String>,
    #[serde(default)]
    pub(super) connect_deadline_s: Option<u64>,
    #[serde(default)]
    pub(super) check_instruments: Option<String>,
    #[serde(default)]
    pub(super) metrics: RawMetrics,
    #[serde(default)]
    pub(super) sinks: RawSinks,
    #[serde(default)]
    pub(super) record: Option<RawRecord>,
    #[serde(default)]
    pub(super) tls: RawTls,
    #[serde(default)]
    pub(super) thread: Vec<RawThread>,
    #[serde(default)]
    pub(super) venue: Vec<RawVenue>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMetrics {
    pub(super) hlog: Option<PathBuf>,
    pub(super) interval_ms: Option<u64>,
    pub(super) prometheus_port: Option<u16>,
    #[serde(default)]
    pub(super) stderr: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSinks {
    pub(super) jsonl: Option<PathBuf>,
    pub(super) jsonl_max_mb: Option<u64>,
    pub(super) shm: Option<PathBuf>,
    pub(super) shm_capacity: Option<usize>,
    pub(super) queue: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRecord {
    pub(super) path: PathBuf,
    pub(super) max_file_mb: Option<u64>,
    pub(super) sync_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTls {
    pub(super) ca_file: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThread {
    pub(super) core: Option<usize>,
    pub(super) priority: Option<u8>,
    #[serde(default)]
    pub(super) venues: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVenue {
    pub(super) name: Option<String>,
    pub(super) venue: String,
    pub(super) instruments: Vec<String>,
    pub(super) trades: Option<bool>,
    pub(super) aggregate: Option<bool>,
    pub(super) quotes: Option<bool>,
    pub(super) books: Option<bool>,
    pub(super) endpoint: Option<String>,
    pub(super) rest: Option<String>,
    pub(super) rest_weight_limit: Option<u32>,
    pub(super) standby: Option<bool>,
    pub(super) standby_endpoint: Option<String>,
    pub(super) connection_lifetime_s: Option<u64>,
}

/// The dotted key (`sinks.queue`, `venue.standby`) whose value is at byte
/// `at` of `text`, and its line (1-based): the key before the `=` on that
/// line, under the nearest table header above it.
pub(super) fn key_at(text: &str, at: usize) -> (String, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |n| n + 1);
    let this = text[start..].lines().next().unwrap_or_default();
    let Some((key, _)) = this.split_once('=') else {
        return (String::new(), line);
    };
    let key = key.trim().trim_matches('"');
    let above = &before[..start];
    let header = above.lines().rev().map(str::trim).find(|l| is_header(l));
    let key = match header {
        // An array of tables, `[[venue]]`: which one, as `venue[1]`.
        Some(h) if h.starts_with("[[") => {
            let n = above.lines().filter(|l| l.trim() == h).count();
            format!("{}[{}].{key}", h.trim_matches(['[', ']']).trim(), n - 1)
        }
        Some(h) => format!("{}.{key}", h.trim_matches(['[', ']']).trim()),
        None => key.to_owned(),
    };
    (key, line)
}

/// Whether a (trimmed) line is a table header, `[name]` or `[[name]]`
/// (maybe with a comment), not a line of a multi-line array.
pub(super) fn is_header(line: &str) -> bool {
    let line = line.split('#').next().unwrap_or_default().trim_end();
    let name = line
        .strip_prefix("[[")
        .and_then(|l| l.strip_suffix("]]"))
        .or_else(|| line.strip_prefix('[').and_then(|l| l.strip_suffix(']')));
    name.is_some_and(|n| {
        !n.trim().is_empty()
            && n.trim()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"'))
    })
}

/// The key a serde error is about, from its message.
pub(super) fn key_of_serde(e: &toml::de::Error) -> String {
    let msg = e.message();
    if let Some(start) = msg.find('`')
        && let Some(len) = msg[start + 1..].find('`')
    {
        return msg[start + 1..start + 1 + len].to_owned();
    }
    "file".into()
}

/// The first override that, applied alone to the file's table, makes a
/// value of the wrong type, and serde's words for it.
pub(super) fn culprit<'a>(
    file: &toml::Table,
    overrides: &'a [env::Override],
) -> Option<(&'a env::Override, String)> {
    overrides.iter().find_map(|o| {
        let mut table = file.clone();
        env::apply_env(&mut table, [(o.var.clone(), o.raw.clone())]).ok()?;
        RawConfig::deserialize(toml::Value::Table(table))
            .err()
            .map(|e| {
                let mut problem = e.message().trim().to_owned();
                // The README's rule, where it was missed: a list is TOML.
                if problem.contains("expected a sequence") {
                    problem.push_str(&format!(
                        " (a list is written as TOML: {}='[\"A\", \"B\"]')",
                        o.var
                    ));
                }
                (o, problem)
            })
    })
}
