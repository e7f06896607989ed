//! The feed's configuration file (TOML), environment overrides, and the
//! checks that run before anything connects.
//!
//! ```toml
//! poll = "blocking"            # blocking | busy-poll | busy-read
//! connect_deadline_s = 30      # no venue connected by then: `run` exits 3 (0: wait for ever)
//! check_instruments = "best-effort"   # required | best-effort | off: instruments against each
//!                                     # venue's own list before connecting (see `instruments`)
//!
//! [metrics]
//! hlog = "feed.hlog"           # HdrHistogram interval log
//! interval_ms = 1000
//! prometheus_port = 9100       # serve /metrics on 127.0.0.1 (optional)
//!
//! [sinks]
//! jsonl = "events.jsonl"       # or "-" for standard output; docs/jsonl.md
//! jsonl_max_mb = 256           # then events.1.jsonl, events.2.jsonl, ...
//! shm = "/dev/shm/tickwire"    # the shared-memory ring (one feed thread)
//! shm_capacity = 65536         # events, a power of two
//! queue = 65536                # events between the feed and the JSONL writer
//!
//! [sinks.aeron]                # every event on Aeron (feature `aeron`; docs/deployment.md)
//! channel = "aeron:udp?endpoint=10.0.0.2:40456"
//! stream = 1001
//! driver = "embedded"          # embedded (default) | external: a media driver already runs in `dir`
//! dir = "/dev/shm/aeron-feed"  # the media driver's directory (default: Aeron's)
//! books_every_s = 5            # every valid book again this often (default: only after drops)
//!
//! [record]
//! path = "rec/feed"            # <path>.<n>.twrec, rotated
//! max_file_mb = 256
//! sync_ms = 1000               # fdatasync this often, from a thread of its own (optional)
//!
//! [tls]
//! ca_file = "sim-ca.pem"       # trust this CA too (e.g. the simulator's)
//!
//! [[thread]]
//! core = 1                     # pinned; fails loudly if it cannot be
//! priority = 50                # SCHED_FIFO 1-99 (optional)
//! venues = ["binance"]
//!
//! [[venue]]
//! name = "binance"
//! venue = "binance-spot"
//! instruments = ["BTCUSDT", "ETHUSDT:20"]   # SYMBOL[:DEPTH], or SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS[:DEPTH]
//! trades = true
//! quotes = true
//! books = true
//! endpoint = "wss://localhost:9443"   # instead of the venue's host (optional)
//! rest = "https://localhost:9443"     # REST snapshots from here (optional)
//! rest_weight_limit = 6000            # REST weight a minute the venue allows (optional; the feed spends half)
//! standby = true                      # a warm standby line beside each connection (optional)
//! standby_endpoint = "wss://localhost:9444"   # the standby line connects here (optional)
//! connection_lifetime_s = 86400       # the venue ends connections this long after they open (optional;
//!                                     # default the venue's own); each is replaced before, make-before-break
//! # binance-spot-sbe only: where its API key (an Ed25519 key's id) is read, never the key itself
//! api_key_env = "BINANCE_API_KEY"     # this environment variable (the default)
//! api_key_file = "/home/me/.binance"  # or an owner-only file with a `key = ...` line
//! ```
//!
//! Every key can be overridden from the environment:
//! `TICKWIRE_FEED_<SECTION>_<KEY>` for a section's key (`TICKWIRE_FEED_SINKS_JSONL`),
//! `TICKWIRE_FEED_<KEY>` for a top-level one (`TICKWIRE_FEED_POLL`), and
//! `TICKWIRE_FEED_VENUE_<NAME>_<KEY>` for one venue's (`TICKWIRE_FEED_VENUE_BINANCE_ENDPOINT`).
//! Values are read as TOML where they parse (`true`, `42`, `["a"]`), as
//! strings otherwise: a list is written as TOML, brackets and quotes
//! included (`TICKWIRE_FEED_VENUE_BINANCE_INSTRUMENTS='["BTCUSDT"]'`). An
//! error about a value an override set names the variable and its value
//! ([`ConfigError::env`]), not the file. An error about the file says
//! where, as the TOML parser's own spans place the key
//! (``feed.toml:5:9: `sinks.queue`: ...``, [`ConfigError::at`]).
//!
//! [`FeedConfig::preflight`] is what `run` needs of the machine beyond the
//! file (`config/preflight.rs`).

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Deserialize;
use tickwire_net::{Endpoint, PollMode};
use tickwire_venues::InstrumentSpec;
use tickwire_venues::plan::Channels;

use crate::live::{ApiKey, LineSetup, VenueSetup, plans, rest_limit_problem};
use crate::replay::Venue;
use raw::{RawConfig, refused};
pub use source::Location;
use source::Source;

/// A configuration that cannot be used: which key, where, and what is
/// wrong. Shown as ``feed.toml:3:9: `sinks.queue`: invalid type: string
/// "x", expected usize``, or, for a value an override set,
/// ``TICKWIRE_FEED_SINKS_QUEUE="x": `sinks.queue`: ...``.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigError {
    /// The key, as a path (`venue[0].instruments[1]`, `sinks.shm`); empty
    /// when the problem is not one key's (a syntax error between keys, a
    /// file that cannot be read).
    pub key: String,
    /// What is wrong with it.
    pub problem: String,
    /// Where the value came from when not from the file: the environment
    /// variable that set it and its value, `NAME="value"`.
    pub env: Option<String>,
    /// Where in the file, from the TOML parser's spans: the value's line
    /// and column (for a key the file leaves out, its table's), when the
    /// file is to blame.
    pub at: Option<Location>,
    /// The file, when the configuration was read from one
    /// ([`FeedConfig::load`]) and the file is to blame.
    pub file: Option<PathBuf>,
}

impl ConfigError {
    /// The same error, about a value `from` set.
    fn blamed_on(mut self, from: &env::Override) -> ConfigError {
        self.env = Some(from.source());
        self.at = None;
        self
    }

    /// The same error, about the file at `path` (unless an override is
    /// to blame).
    pub fn in_file(mut self, path: &Path) -> ConfigError {
        if self.env.is_none() {
            self.file = Some(path.to_owned());
        }
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.env, &self.file, self.at) {
            (Some(env), _, _) => write!(f, "{env}: ")?,
            (None, Some(file), Some(at)) => {
                write!(f, "{}:{}:{}: ", file.display(), at.line, at.column)?;
            }
            (None, Some(file), None) => write!(f, "{}: ", file.display())?,
            (None, None, Some(at)) => write!(f, "line {}, column {}: ", at.line, at.column)?,
            (None, None, None) => {}
        }
        if !self.key.is_empty() {
            write!(f, "`{}`: ", self.key)?;
        }
        f.write_str(&self.problem)
    }
}

impl std::error::Error for ConfigError {}

fn error(key: impl Into<String>, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.into(),
        problem: problem.into(),
        env: None,
        at: None,
        file: None,
    }
}

/// The metrics exporter's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsConfig {
    /// The HdrHistogram interval log.
    pub hlog: Option<PathBuf>,
    /// How often histograms are collected.
    pub interval_ms: u64,
    /// Serve Prometheus text on 127.0.0.1 at this port.
    pub prometheus_port: Option<u16>,
    /// Print a line per stage each interval on stderr.
    pub stderr: bool,
}

/// The sinks' settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinksConfig {
    /// JSON Lines to this file (`-`: standard output).
    pub jsonl: Option<PathBuf>,
    /// Past this size a JSON Lines file goes on in the next
    /// (`events.1.jsonl`, ...).
    pub jsonl_max_bytes: u64,
    /// The shared-memory ring.
    pub shm: Option<PathBuf>,
    /// Its capacity in events.
    pub shm_capacity: usize,
    /// Events queued between the feed threads and the JSONL writer.
    pub queue: usize,
    /// Every event on Aeron (`[sinks.aeron]`; needs the `aeron` feature).
    pub aeron: Option<AeronSinkConfig>,
}

/// `[sinks.aeron]`: where the feed publishes its events on Aeron.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AeronSinkConfig {
    /// An Aeron channel URI.
    pub channel: String,
    /// The stream id.
    pub stream: i32,
    /// Start a media driver in `dir` (true, the default), or use the one
    /// running there.
    pub embedded: bool,
    /// The media driver's directory (Aeron's default when `None`).
    pub dir: Option<PathBuf>,
    /// Every valid book is sent again this often (for subscribers that
    /// join a flowing stream); besides, books go again after events were
    /// dropped.
    pub books_every: Option<std::time::Duration>,
}

/// The raw recording's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordConfig {
    /// Base name: `<path>.<n>.twrec`.
    pub path: PathBuf,
    /// Rotate after this many bytes.
    pub max_file_bytes: u64,
    /// `fdatasync` the file being written this often, from a thread of
    /// its own (`recording::Writer::sync_every`): what a power loss can
    /// lose. `None`: the OS writes it back in its own time.
    pub sync_interval: Option<std::time::Duration>,
}

/// A feed thread: its core, its priority, its venues (indices into
/// [`FeedConfig::venues`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadConfig {
    /// The core it is pinned to (`None`: not pinned).
    pub core: Option<usize>,
    /// SCHED_FIFO priority.
    pub priority: Option<u8>,
    /// The venues it runs.
    pub venues: Vec<usize>,
}

/// A checked configuration.
#[derive(Clone, Debug)]
pub struct FeedConfig {
    /// How the feed threads wait for data.
    pub poll: PollMode,
    /// Past this with no venue ever connected, `run` gives up (exit 3);
    /// `None` (`connect_deadline_s = 0`): it keeps trying.
    pub connect_deadline: Option<std::time::Duration>,
    /// Metrics.
    pub metrics: MetricsConfig,
    /// Sinks.
    pub sinks: SinksConfig,
    /// Raw recording.
    pub record: Option<RecordConfig>,
    /// An extra CA to trust.
    pub ca_file: Option<PathBuf>,
    /// The feed threads.
    pub threads: Vec<ThreadConfig>,
    /// The venues.
    pub venues: Vec<VenueSetup>,
    /// Whether instruments are checked against each venue's own list
    /// before anything connects (`check_instruments`).
    pub check_instruments: InstrumentCheck,
    /// For each venue (as [`venues`](Self::venues)), which instruments
    /// were given their decimals (`SYMBOL:PRICE:SIZE`); the others take
    /// the venue's listed ones when its list is fetched.
    pub scales_given: Vec<Vec<bool>>,
    /// The environment overrides that set values, so that a later check
    /// ([`FeedConfig::preflight`]) blames a value on its variable too.
    overrides: Vec<env::Override>,
    /// The file's text, so that a later check locates a key in it too.
    text: String,
}

/// What the feed does with the venues' instrument lists
/// (`check_instruments`). Defined here, below [`crate::instruments`],
/// which checks a [`FeedConfig`] and so depends on this module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InstrumentCheck {
    /// Fetch each list; refuse to start if one cannot be fetched.
    Required,
    /// Fetch each list; if one cannot be fetched, say so once with the
    /// cause and go on with the configured (or default) decimals,
    /// unchecked. Unknown symbols in a list that was fetched are refused.
    #[default]
    BestEffort,
    /// Fetch nothing, check nothing.
    Off,
}

impl InstrumentCheck {
    /// The values the configuration takes.
    pub const NAMES: [(&'static str, InstrumentCheck); 3] = [
        ("required", InstrumentCheck::Required),
        ("best-effort", InstrumentCheck::BestEffort),
        ("off", InstrumentCheck::Off),
    ];
}

impl FromStr for InstrumentCheck {
    type Err = String;

    fn from_str(s: &str) -> Result<InstrumentCheck, String> {
        InstrumentCheck::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, c)| *c)
            .ok_or_else(|| format!("`{s}` is not one of required, best-effort, off"))
    }
}

/// An instrument as written in the configuration or on the command line,
/// before its venue is known: `SYMBOL`, `SYMBOL:DEPTH`,
/// `SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS` or
/// `SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS:DEPTH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstrumentArg {
    /// The symbol as the venue writes it.
    pub symbol: String,
    /// Price and size decimals, when given: they override the venue's
    /// defaults ([`Venue::default_scales`]).
    pub scales: Option<(u8, u8)>,
    /// Book levels shown a side (0: no book).
    pub depth: usize,
}

/// How long `run` waits for a first venue to connect before it gives up
/// (`connect_deadline_s`): long enough for a slow name lookup and a few
/// backoffs, short enough that a wrong CA, port or host ends a run
/// unattended.
pub const DEFAULT_CONNECT_DEADLINE_S: u64 = 30;

/// Book levels shown when an instrument does not say.
pub const DEFAULT_DEPTH: usize = 100;

impl InstrumentArg {
    /// The instrument on `venue`: the given decimals, or the venue's
    /// defaults, which hold every value the venue sends.
    pub fn spec(&self, venue: Venue) -> InstrumentSpec {
        let (price, size) = self.scales.unwrap_or_else(|| venue.default_scales());
        InstrumentSpec::new(&self.symbol, price, size, self.depth)
    }
}

/// Reads an instrument (see [`InstrumentArg`]).
pub fn parse_instrument(s: &str) -> Result<InstrumentArg, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let (symbol, scales, depth) = match parts[..] {
        [symbol] => (symbol, None, None),
        [symbol, depth] => (symbol, None, Some(depth)),
        [symbol, price, size] => (symbol, Some((price, size)), None),
        [symbol, price, size, depth] => (symbol, Some((price, size)), Some(depth)),
        _ => {
            return Err(format!(
                "`{s}`: expected SYMBOL[:DEPTH] or SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS[:DEPTH]"
            ));
        }
    };
    let decimals = |what: &str, v: &str| -> Result<u8, String> {
        v.parse::<u8>()
            .ok()
            .filter(|d| *d <= 18)
            .ok_or_else(|| format!("`{s}`: {what} decimals must be 0 to 18, not `{v}`"))
    };
    let depth = match depth {
        None => DEFAULT_DEPTH,
        Some(d) => d
            .parse::<usize>()
            .ok()
            .filter(|d| *d <= 100_000)
            .ok_or_else(|| format!("`{s}`: book depth must be 0 to 100000, not `{d}`"))?,
    };
    if symbol.is_empty() {
        return Err(format!("`{s}`: the symbol is empty"));
    }
    let scales = match scales {
        None => None,
        Some((p, q)) => Some((decimals("price", p)?, decimals("size", q)?)),
    };
    Ok(InstrumentArg {
        symbol: symbol.to_owned(),
        scales,
        depth,
    })
}

impl FeedConfig {
    /// The output files this configuration names by a relative path: the
    /// latency log, the JSON lines (not `-`), the recording.
    fn outputs_mut(&mut self) -> impl Iterator<Item = &mut PathBuf> {
        let jsonl = self.sinks.jsonl.as_mut().filter(|p| p.as_os_str() != "-");
        [
            self.metrics.hlog.as_mut(),
            jsonl,
            self.record.as_mut().map(|r| &mut r.path),
        ]
        .into_iter()
        .flatten()
        .filter(|p| p.is_relative())
    }

    /// Whether any output file is named by a relative path (the binary
    /// puts those in a new run directory under [`crate::RUNS_ROOT`]).
    pub fn relative_outputs(&mut self) -> bool {
        self.outputs_mut().next().is_some()
    }

    /// Puts every output named by a relative path under `dir`.
    pub fn place_outputs(&mut self, dir: &Path) {
        for path in self.outputs_mut() {
            *path = dir.join(&*path);
        }
    }

    /// Reads `path`, applies the process's `TICKWIRE_FEED_*` variables,
    /// checks. An error the file is to blame for names it
    /// ([`ConfigError::in_file`]).
    pub fn load(path: &Path) -> Result<FeedConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| error("", format!("cannot read: {e}")).in_file(path))?;
        FeedConfig::parse(&text, std::env::vars()).map_err(|e| e.in_file(path))
    }

    /// Parses and checks `text` with the overrides `env`.
    pub fn parse(
        text: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<FeedConfig, ConfigError> {
        // Every error about the file is located from the parser's own
        // spans (`config/source.rs`), never from its wording.
        let source = Source::parse(text)?;
        let mut table: toml::Table = toml::from_str(text).map_err(|e| source.refusal(&e))?;
        let file = table.clone();
        let overrides = env::apply_env(&mut table, env)?;
        let raw = RawConfig::deserialize(toml::Value::Table(table))
            .map_err(|e| refused(&source, &file, &overrides, &e))?;
        // A value an override set is blamed on the override.
        let mut config =
            FeedConfig::check(raw).map_err(|e| source.located(blame(&overrides, e)))?;
        config.overrides = overrides;
        config.text = text.to_owned();
        Ok(config)
    }

    fn check(raw: RawConfig) -> Result<FeedConfig, ConfigError> {
        let poll = match raw.poll.as_deref() {
            None | Some("blocking") => PollMode::Blocking,
            Some("busy-poll") => PollMode::BusyPoll,
            Some("busy-read") => PollMode::BusyRead,
            Some(other) => {
                return Err(error(
                    "poll",
                    format!("`{other}` is not one of blocking, busy-poll, busy-read"),
                ));
            }
        };
        let connect_deadline_s = raw.connect_deadline_s.unwrap_or(DEFAULT_CONNECT_DEADLINE_S);
        if connect_deadline_s > 86_400 {
            return Err(error(
                "connect_deadline_s",
                format!("{connect_deadline_s} is not between 0 (no deadline) and 86400"),
            ));
        }
        let check_instruments = match raw.check_instruments.as_deref() {
            None => InstrumentCheck::default(),
            Some(s) => s.parse().map_err(|e| error("check_instruments", e))?,
        };
        let interval_ms = raw.metrics.interval_ms.unwrap_or(1000);
        if !(10..=3_600_000).contains(&interval_ms) {
            return Err(error(
                "metrics.interval_ms",
                format!("{interval_ms} is not between 10 and 3600000"),
            ));
        }
        let shm_capacity = raw.sinks.shm_capacity.unwrap_or(1 << 16);
        if !shm_capacity.is_power_of_two() || !(64..=1 << 24).contains(&shm_capacity) {
            return Err(error(
                "sinks.shm_capacity",
                format!("{shm_capacity} must be a power of two from 64 to 16777216"),
            ));
        }
        let queue = raw.sinks.queue.unwrap_or(1 << 16);
        if !(16..=1 << 24).contains(&queue) {
            return Err(error(
                "sinks.queue",
                format!("{queue} must be between 16 and 16777216"),
            ));
        }
        let jsonl_mb = raw.sinks.jsonl_max_mb.unwrap_or(256);
        if !(1..=1 << 20).contains(&jsonl_mb) {
            return Err(error(
                "sinks.jsonl_max_mb",
                format!("{jsonl_mb} must be between 1 and 1048576"),
            ));
        }
        let record = match raw.record {
            None => None,
            Some(r) => {
                let mb = r.max_file_mb.unwrap_or(256);
                if !(1..=1 << 20).contains(&mb) {
                    return Err(error(
                        "record.max_file_mb",
                        format!("{mb} must be between 1 and 1048576"),
                    ));
                }
                if let Some(ms) = r.sync_ms
                    && !(1..=3_600_000).contains(&ms)
                {
                    return Err(error(
                        "record.sync_ms",
                        format!("{ms} must be between 1 and 3600000"),
                    ));
                }
                let Some(path) = r.path else {
                    return Err(error(
                        "record.path",
                        "missing: the recording's base name (`path = \"rec/feed\"`)",
                    ));
                };
                Some(RecordConfig {
                    path,
                    max_file_bytes: mb << 20,
                    sync_interval: r.sync_ms.map(std::time::Duration::from_millis),
                })
            }
        };
        if let Some(ca) = &raw.tls.ca_file
            && !ca.is_file()
        {
            return Err(error(
                "tls.ca_file",
                format!("{}: no such file", ca.display()),
            ));
        }
        if raw.venue.is_empty() {
            return Err(error("venue", "no [[venue]]: nothing to connect to"));
        }
        let mut venues = Vec::new();
        let mut scales_given = Vec::new();
        let mut names = BTreeSet::new();
        for (n, v) in raw.venue.iter().enumerate() {
            let key = |k: &str| format!("venue[{n}].{k}");
            let Some(venue_name) = &v.venue else {
                return Err(error(
                    key("venue"),
                    "missing: which venue this is (`venue = \"binance-spot\"`)",
                ));
            };
            let venue: Venue = venue_name
                .parse()
                .map_err(|e: String| error(key("venue"), e))?;
            let name = v.name.clone().unwrap_or_else(|| venue_name.clone());
            if !names.insert(name.clone()) {
                return Err(error(
                    key("name"),
                    format!("`{name}` names two venues; give each a distinct `name`"),
                ));
            }
            let v_instruments = match &v.instruments {
                None => {
                    return Err(error(
                        key("instruments"),
                        "missing: the venue's instruments (`instruments = [\"BTCUSDT\"]`)",
                    ));
                }
                Some(list) if list.is_empty() => {
                    return Err(error(key("instruments"), "is empty"));
                }
                Some(list) => list,
            };
            let mut instruments = Vec::new();
            let mut given = Vec::new();
            for (k, s) in v_instruments.iter().enumerate() {
                let arg = parse_instrument(s)
                    .map_err(|e| error(format!("venue[{n}].instruments[{k}]"), e))?;
                given.push(arg.scales.is_some());
                let spec = arg.spec(venue);
                if instruments
                    .iter()
                    .any(|i: &InstrumentSpec| i.symbol == spec.symbol)
                {
                    return Err(error(
                        format!("venue[{n}].instruments[{k}]"),
                        format!("{} is listed twice", spec.symbol),
                    ));
                }
                instruments.push(spec);
            }
            let channels = Channels {
                trades: v.trades.unwrap_or(true),
                aggregate: v.aggregate.unwrap_or(false),
                quotes: v.quotes.unwrap_or(true),
                books: v.books.unwrap_or(true),
            };
            if !(channels.trades || channels.quotes || channels.books) {
                return Err(error(key("trades"), "trades, quotes and books are all off"));
            }
            let standby = v.standby.unwrap_or(false);
            if v.standby_endpoint.is_some() && !standby {
                return Err(error(
                    key("standby_endpoint"),
                    "a standby endpoint without `standby = true`",
                ));
            }
            if v.connection_lifetime_s.is_some_and(|s| s < 2) {
                return Err(error(
                    key("connection_lifetime_s"),
                    "at least 2 (seconds): a replacement needs time to come in step",
                ));
            }
            for (k, url) in [
                ("endpoint", &v.endpoint),
                ("rest", &v.rest),
                ("standby_endpoint", &v.standby_endpoint),
            ] {
                if let Some(url) = url {
                    let stream = k != "rest";
                    let scheme_ok = if stream {
                        url.starts_with("wss://") || url.starts_with("ws://")
                    } else {
                        url.starts_with("https://") || url.starts_with("http://")
                    };
                    let probe = url
                        .replacen("https://", "wss://", 1)
                        .replacen("http://", "ws://", 1);
                    if !scheme_ok {
                        return Err(error(
                            key(k),
                            format!(
                                "`{url}`: expected {}",
                                if stream {
                                    "wss:// or ws://"
                                } else {
                                    "https:// or http://"
                                }
                            ),
                        ));
                    }
                    Endpoint::parse(&probe).map_err(|e| error(key(k), format!("`{url}`: {e}")))?;
                }
            }
            plans(venue, &instruments, channels)
                .map_err(|e| error(key("instruments"), e.to_string()))?;
            if let Some(problem) =
                rest_limit_problem(venue, &instruments, channels, v.rest_weight_limit)
            {
                return Err(error(key("rest_weight_limit"), problem));
            }
            let api_key = match (&v.api_key_env, &v.api_key_file) {
                (Some(_), Some(_)) => {
                    return Err(error(
                        key("api_key_file"),
                        "either api_key_env or api_key_file, not both",
                    ));
                }
                (Some(var), None) if !crate::live::api_key::is_variable_name(var) => {
                    return Err(error(
                        key("api_key_env"),
                        "names the environment variable that holds the key (capitals, digits \
                         and _), never the key itself (the value is not shown)",
                    ));
                }
                (Some(var), None) => Some(ApiKey::Env(var.clone())),
                (None, Some(path)) => Some(ApiKey::File(path.clone())),
                (None, None) => None,
            };
            if api_key.is_some() && !crate::live::api_key::needed(venue, &instruments, channels) {
                let k = if v.api_key_env.is_some() {
                    "api_key_env"
                } else {
                    "api_key_file"
                };
                return Err(error(key(k), format!("{venue}'s streams take no API key")));
            }
            scales_given.push(given);
            venues.push(VenueSetup {
                name,
                venue,
                instruments,
                channels,
                endpoint: v.endpoint.clone(),
                rest: v.rest.clone(),
                rest_weight_limit: v.rest_weight_limit,
                lines: LineSetup {
                    standby,
                    standby_endpoint: v.standby_endpoint.clone(),
                    max_lifetime: v.connection_lifetime_s.map(std::time::Duration::from_secs),
                },
                api_key,
            });
        }
        let mut threads = Vec::new();
        let mut placed = vec![false; venues.len()];
        let cores = crate::threads::cores();
        for (n, t) in raw.thread.iter().enumerate() {
            if let Some(core) = t.core
                && !cores.contains(&core)
            {
                return Err(error(
                    format!("thread[{n}].core"),
                    format!("core {core} is not available (this process may use {cores:?})"),
                ));
            }
            if let Some(p) = t.priority
                && !(1..=99).contains(&p)
            {
                return Err(error(
                    format!("thread[{n}].priority"),
                    format!("{p} is not a SCHED_FIFO priority (1 to 99)"),
                ));
            }
            let mut list = Vec::new();
            for (k, name) in t.venues.iter().enumerate() {
                let key = format!("thread[{n}].venues[{k}]");
                let v = venues
                    .iter()
                    .position(|v| v.name == *name)
                    .ok_or_else(|| error(&key, format!("no [[venue]] is named `{name}`")))?;
                if placed[v] {
                    return Err(error(&key, format!("`{name}` is on two threads")));
                }
                placed[v] = true;
                list.push(v);
            }
            if list.is_empty() {
                return Err(error(format!("thread[{n}].venues"), "is empty"));
            }
            threads.push(ThreadConfig {
                core: t.core,
                priority: t.priority,
                venues: list,
            });
        }
        if threads.is_empty() {
            threads.push(ThreadConfig {
                core: crate::threads::last_core(),
                priority: None,
                venues: (0..venues.len()).collect(),
            });
        } else if let Some(v) = placed.iter().position(|p| !p) {
            return Err(error(
                "thread",
                format!("venue `{}` is on no [[thread]]", venues[v].name),
            ));
        }
        let aeron = match raw.sinks.aeron {
            None => None,
            Some(a) => {
                if cfg!(not(feature = "aeron")) {
                    return Err(error(
                        "sinks.aeron",
                        "this tickwire-feed was built without Aeron: build it with `--features aeron` (docs/deployment.md)",
                    ));
                }
                if !a.channel.starts_with("aeron:") {
                    return Err(error(
                        "sinks.aeron.channel",
                        format!(
                            "`{}` is not an Aeron channel URI (aeron:ipc, aeron:udp?endpoint=host:port)",
                            a.channel
                        ),
                    ));
                }
                let embedded = match a.driver.as_deref() {
                    None | Some("embedded") => true,
                    Some("external") => false,
                    Some(other) => {
                        return Err(error(
                            "sinks.aeron.driver",
                            format!("`{other}`: embedded or external"),
                        ));
                    }
                };
                if a.books_every_s == Some(0) {
                    return Err(error(
                        "sinks.aeron.books_every_s",
                        "0: leave it out to send books only after drops",
                    ));
                }
                Some(AeronSinkConfig {
                    channel: a.channel,
                    stream: a.stream,
                    embedded,
                    dir: a.dir,
                    books_every: a.books_every_s.map(std::time::Duration::from_secs),
                })
            }
        };
        if raw.sinks.shm.is_some() && threads.len() > 1 {
            return Err(error(
                "sinks.shm",
                "the ring has a single writer: use one [[thread]] with it",
            ));
        }
        Ok(FeedConfig {
            poll,
            connect_deadline: (connect_deadline_s > 0)
                .then(|| std::time::Duration::from_secs(connect_deadline_s)),
            metrics: MetricsConfig {
                hlog: raw.metrics.hlog,
                interval_ms,
                prometheus_port: raw.metrics.prometheus_port,
                stderr: raw.metrics.stderr,
            },
            sinks: SinksConfig {
                jsonl: raw.sinks.jsonl,
                jsonl_max_bytes: jsonl_mb << 20,
                shm: raw.sinks.shm,
                shm_capacity,
                queue,
                aeron,
            },
            record,
            ca_file: raw.tls.ca_file,
            threads,
            venues,
            check_instruments,
            scales_given,
            overrides: Vec::new(),
            text: String::new(),
        })
    }
}

/// `e`, located in `text` (a configuration's that parsed) unless an
/// override is to blame.
fn located(text: &str, e: ConfigError) -> ConfigError {
    match Source::parse(text) {
        Ok(source) => source.located(e),
        Err(_) => e,
    }
}

/// `e`, blamed on the override that set the value it is about (the last
/// one that did), if one did.
fn blame(overrides: &[env::Override], e: ConfigError) -> ConfigError {
    match overrides.iter().rev().find(|o| o.covers(&e.key)) {
        Some(o) => e.blamed_on(o),
        None => e,
    }
}

mod env;
mod preflight;
mod raw;
mod source;
#[cfg(test)]
mod tests;
