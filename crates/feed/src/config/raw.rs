//! The file's own layer: the TOML tables as serde reads them, before
//! any value is checked, and whom a value serde refused is blamed on: the
//! file (where its parser's spans put the value) or an environment
//! override.

use std::path::PathBuf;

use serde::Deserialize;

use super::source::Source;
use super::{ConfigError, env, error};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a configuration file")]
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
#[serde(deny_unknown_fields, expecting = "the [metrics] table")]
pub(super) struct RawMetrics {
    pub(super) hlog: Option<PathBuf>,
    pub(super) interval_ms: Option<u64>,
    pub(super) prometheus_port: Option<u16>,
    #[serde(default)]
    pub(super) stderr: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "the [sinks] table")]
pub(super) struct RawSinks {
    pub(super) jsonl: Option<PathBuf>,
    pub(super) jsonl_max_mb: Option<u64>,
    pub(super) shm: Option<PathBuf>,
    pub(super) shm_capacity: Option<usize>,
    pub(super) queue: Option<usize>,
    pub(super) aeron: Option<RawAeron>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "the [sinks.aeron] table")]
pub(super) struct RawAeron {
    pub(super) channel: String,
    pub(super) stream: i32,
    pub(super) driver: Option<String>,
    pub(super) dir: Option<PathBuf>,
    pub(super) books_every_s: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "the [record] table")]
pub(super) struct RawRecord {
    pub(super) path: Option<PathBuf>,
    pub(super) max_file_mb: Option<u64>,
    pub(super) sync_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "the [tls] table")]
pub(super) struct RawTls {
    pub(super) ca_file: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a [[thread]] table")]
pub(super) struct RawThread {
    pub(super) core: Option<usize>,
    pub(super) priority: Option<u8>,
    #[serde(default)]
    pub(super) venues: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a [[venue]] table")]
pub(super) struct RawVenue {
    pub(super) name: Option<String>,
    pub(super) venue: Option<String>,
    pub(super) instruments: Option<Vec<String>>,
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
    pub(super) api_key_env: Option<String>,
    pub(super) api_key_file: Option<PathBuf>,
}

/// Why the file with its overrides (`file`, then `overrides`) does not
/// read as a [`RawConfig`] (`merged` is serde's error for the whole):
/// the file's own mistake at a key no override replaced, located by the
/// parser's spans; else the first override that is wrong on its own,
/// blamed; else serde's words for the whole.
pub(super) fn refused(
    source: &Source<'_>,
    file: &toml::Table,
    overrides: &[env::Override],
    merged: &toml::de::Error,
) -> ConfigError {
    if let Err(e) = toml::from_str::<RawConfig>(source.text()) {
        let own = source.refusal(&e);
        if !overrides.iter().any(|o| o.covers(&own.key)) {
            return own;
        }
    }
    match culprit(file, overrides) {
        Some((o, problem)) => error(&o.key, problem).blamed_on(o),
        None => error(
            "",
            format!(
                "{} (after the TICKWIRE_FEED_* overrides)",
                merged.message().trim()
            ),
        ),
    }
}

/// The first override that, applied alone to the file's table, makes a
/// value of the wrong type, and serde's words for it.
fn culprit<'a>(
    file: &toml::Table,
    overrides: &'a [env::Override],
) -> Option<(&'a env::Override, String)> {
    overrides.iter().find_map(|o| {
        let mut table = file.clone();
        env::apply_env(&mut table, [(o.var.clone(), o.raw.clone())]).ok()?;
        let e = RawConfig::deserialize(toml::Value::Table(table)).err()?;
        let mut problem = e.message().trim().to_owned();
        // The README's rule, where it was missed: a list is TOML. Said
        // where the value, written as a one-element list, would be taken.
        let listed = format!("[{}]", toml::Value::String(o.raw.clone()));
        let mut table = file.clone();
        if env::apply_env(&mut table, [(o.var.clone(), listed)]).is_ok()
            && RawConfig::deserialize(toml::Value::Table(table)).is_ok()
        {
            problem.push_str(&format!(
                " (a list is written as TOML: {}='[\"A\", \"B\"]')",
                o.var
            ));
        }
        Some((o, problem))
    })
}
