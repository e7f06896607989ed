//! The command line: every command, its arguments and their checks (clap).
//! What each command does is in `main.rs`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tickwire_feed::replay::Venue;

#[derive(Parser)]
#[command(name = "tickwire-feed", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the exchange simulator and the feed together, offline, over TLS
    /// on loopback: a status line each second, then the per-stage latency
    /// table, the `.hlog` and its SVG plot. What the binary does when given
    /// no command.
    Demo(DemoArgs),
    /// Run the feed: the venues, instruments, threads, sinks and metrics
    /// of a TOML file (see examples/feed.toml), overridable with
    /// TICKWIRE_FEED_* environment variables. Stops cleanly on SIGINT/SIGTERM.
    /// Exit code 2: the configuration is invalid (nothing was connected);
    /// 3: no venue connected within `connect_deadline_s`.
    Run {
        /// The configuration file.
        #[arg(long)]
        config: PathBuf,
        /// Check the configuration, print the plan, and exit.
        #[arg(long)]
        check: bool,
    },
    /// List a venue's instruments as the venue lists them: symbol,
    /// status, tick and lot size, and the price and size decimals the
    /// feed takes from them.
    Instruments(InstrumentsArgs),
    /// `run`, recording every frame received and sent (and every REST
    /// snapshot) to rotated binary files `<out>.<n>.twrec` for `replay`.
    Record {
        /// The configuration file.
        #[arg(long)]
        config: PathBuf,
        /// The recording's base name (overrides `[record] path`) [default:
        /// `[record] path`, or `rec`]. A relative one goes into the run's
        /// directory (`runs/<time>-record/`), like every relative output
        /// path. Files that exist are never overwritten.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Rotate after this many MiB.
        #[arg(long, default_value_t = 256)]
        max_file_mb: u64,
    },
    /// Serve the exchange simulator: a venue's WebSocket streams (and its
    /// REST snapshots, Binance) over TLS, with a random-walk market, until
    /// SIGINT/SIGTERM. Point a feed at it with `endpoint`, `rest` and
    /// `tls.ca_file` (see examples/sim.toml).
    Sim {
        /// Listen here (several venues: on consecutive ports from here).
        #[arg(long, default_value = "127.0.0.1:9443")]
        listen: std::net::SocketAddr,
        /// The venues to simulate: `all`, or a comma-separated list.
        #[arg(long, value_parser = parse_venues, default_value = "binance-spot")]
        venues: VenueList,
        /// Market steps per second (about 1.6 messages each); 0: unlimited,
        /// as fast as the clients take them.
        #[arg(long, default_value_t = 20_000)]
        rate: u32,
        /// Steps sent back to back at each tick (at least 1).
        #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
        burst: u32,
        /// Write the throw-away CA certificate that clients must trust here
        /// [default: `sim-ca.pem` in a new `runs/<time>-sim/`, also
        /// reachable as `runs/latest-sim/sim-ca.pem`].
        #[arg(long)]
        ca_out: Option<PathBuf>,
        /// Serve plain ws:// and http:// instead of TLS.
        #[arg(long)]
        plain: bool,
        /// The random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Stop after this many seconds (default: at SIGINT/SIGTERM).
        #[arg(long)]
        seconds: Option<u64>,
        /// Serve a recording (a file, or the base name of a rotated series)
        /// instead of a random market: its stream messages to every
        /// client, its REST responses as the snapshots.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// With --replay: at the recording's own pace (default: as fast as
        /// the clients take it).
        #[arg(long, requires = "replay")]
        real_time: bool,
    },
    /// Print the percentile table of a latency log and plot it to SVG.
    ///
    /// The log is an HdrHistogram interval log (`.hlog`) as tickwire's
    /// exporter writes it: one tag per stream and stage. Every tag's
    /// intervals are merged.
    Report {
        /// The `.hlog` file.
        log: PathBuf,
        /// Where to write the SVG percentile plot [default: the log's path
        /// with the extension `svg`].
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Do not write the plot.
        #[arg(long, conflicts_with = "svg")]
        no_svg: bool,
    },
    /// Read the events a feed publishes, in another process: on Aeron
    /// (`[sinks.aeron]`; a build with `--features aeron`) or from the
    /// shared-memory ring (`[sinks] shm`). JSON Lines of docs/jsonl.md's
    /// schema on stdout, or with `--stats` a line a second of rate, what
    /// was lost (gaps in each publisher's sequence, a ring's laps), and the
    /// feed's read to this receive (same host: both on one TSC). Stops on
    /// SIGINT/SIGTERM.
    Subscribe(SubscribeArgs),
    /// Run a recording through a venue's adapter (decoders, books, events)
    /// as fast as possible, or at its own pace, and print what it did.
    Replay {
        /// Recording files, or the base name a recording was written under
        /// (for all its rotated files, in order).
        #[arg(required = true)]
        recordings: Vec<PathBuf>,
        /// The venue the recording is from.
        #[arg(long, value_parser = venue_parser())]
        venue: Venue,
        /// An instrument to keep: SYMBOL[:BOOK_DEPTH], or
        /// SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS[:BOOK_DEPTH] to set its
        /// decimals (default: the venue's, which hold every value it sends;
        /// depth 100). Repeat for each.
        #[arg(long = "instrument", required = true, value_parser = tickwire_feed::config::parse_instrument)]
        instruments: Vec<tickwire_feed::config::InstrumentArg>,
        /// Replay only the connections whose recorded endpoint contains
        /// this text (e.g. `:9443` or `stream.binance.com`). By default:
        /// every connection except those to another venue's public host,
        /// since a feed thread records all its venues together.
        #[arg(long, value_name = "TEXT")]
        connections: Option<String>,
        /// Write every event as JSON Lines to this file (`-`: stdout).
        #[arg(long)]
        jsonl: Option<PathBuf>,
        /// Replay at the recording's own pace instead of as fast as
        /// possible.
        #[arg(long)]
        real_time: bool,
        /// Also publish every event to a shared-memory ring at this path
        /// (e.g. /dev/shm/tickwire), for readers in other processes.
        #[arg(long)]
        shm: Option<PathBuf>,
        /// The ring's capacity in events (a power of two; 128 bytes each).
        #[arg(long, default_value_t = 1 << 16, requires = "shm")]
        shm_capacity: usize,
    },
}

#[derive(clap::Args, Clone, Debug)]
pub(crate) struct InstrumentsArgs {
    /// The venue: binance-spot, binance-spot-sbe, binance-usdm, binance-coinm,
    /// okx, bybit-spot, bybit-linear, bybit-inverse, kraken, coinbase or
    /// deribit.
    #[arg(long)]
    pub(crate) venue: Venue,
    /// Only symbols containing this text (any case).
    #[arg(long, value_name = "TEXT")]
    pub(crate) filter: Option<String>,
    /// The list of an in-process simulator of the venue instead.
    #[arg(long, conflicts_with_all = ["rest", "endpoint", "ca_file"])]
    pub(crate) simulated: bool,
    /// Fetch from here instead of the venue's host (`https://host:port`).
    #[arg(long, value_name = "URL")]
    pub(crate) rest: Option<String>,
    /// Kraken: read its `instrument` channel here instead
    /// (`wss://host:port`); the other venues: fetch from this host when
    /// `--rest` is not given.
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: Option<String>,
    /// Trust this CA too (e.g. a simulator's).
    #[arg(long, value_name = "PEM")]
    pub(crate) ca_file: Option<PathBuf>,
}

#[derive(clap::Args, Clone, Debug)]
pub(crate) struct DemoArgs {
    /// How long to run, in seconds (at least 1).
    #[arg(long, default_value_t = 10, value_parser = at_least_one::<u64>)]
    pub(crate) seconds: u64,
    /// Simulator market steps per second (about 1.6 messages each); 0:
    /// unlimited, as fast as the feed takes them.
    #[arg(long, default_value_t = 20_000)]
    pub(crate) rate: u32,
    /// Simulator steps sent back to back in one write (at least 1).
    #[arg(long, default_value_t = 1, value_parser = at_least_one::<u32>)]
    pub(crate) burst: u32,
    /// Measure the feed's ceiling: make this many market steps ahead of
    /// time and send them as fast as the feed takes them (with --burst
    /// steps to a write), then report messages/s with books valid, and the
    /// feed thread's CPU a message and whether it or the simulator bounded
    /// the rate. The plain demo's market only (not with --venues).
    #[arg(
        long,
        value_name = "STEPS",
        conflicts_with = "venues",
        value_parser = at_least_one::<usize>
    )]
    pub(crate) max: Option<usize>,
    /// With --max: the simulator sends only this many messages of its
    /// market and holds the rest, so the run misses --seconds on any
    /// machine (for tests of a run cut short; not in --help).
    #[arg(long, value_name = "MESSAGES", requires = "max", hide = true)]
    pub(crate) hold_after: Option<usize>,
    /// Pin the feed thread to this core [default: the last one].
    #[arg(long)]
    pub(crate) core: Option<usize>,
    /// Spin on the sockets instead of blocking in epoll (burns the core).
    #[arg(long)]
    pub(crate) busy_poll: bool,
    /// Where to write the latency log (the plot goes next to it, `.svg`)
    /// [default: `demo.hlog` in a new `runs/<time>-demo/`].
    #[arg(long)]
    pub(crate) hlog: Option<PathBuf>,
    /// Simulate these venues, each with its own simulator, all on the
    /// feed's one thread: `all`, or a comma-separated list (binance-spot,
    /// binance-spot-sbe, binance-usdm, binance-coinm, okx, bybit-spot,
    /// bybit-linear, bybit-inverse, kraken, coinbase, deribit). Default:
    /// Binance spot alone.
    #[arg(long, value_parser = parse_venues)]
    pub(crate) venues: Option<VenueList>,
    /// Inject every fault in turn on every venue (network faults through a
    /// proxy, and the venue's own: checksum mismatch, sequence gap,
    /// refused subscription), and say which were recovered from.
    #[arg(long, requires = "venues")]
    pub(crate) faults: bool,
    /// Levels each book shows, with --venues.
    #[arg(long, default_value_t = 20)]
    pub(crate) depth: usize,
    /// The REST request weight a minute the simulated venues allow before
    /// they answer 429 (then 418 to a client that does not wait)
    /// [default: each venue's documented limit].
    #[arg(long, value_name = "N")]
    pub(crate) rest_weight_limit: Option<u32>,
    /// The simulated venues end every connection this long after it
    /// opened (as Binance does at 24 h), e.g. `20s`; the feed replaces
    /// each one before then, make-before-break, with no gap.
    #[arg(long, value_parser = parse_lifetime, value_name = "SECONDS")]
    pub(crate) lifetime: Option<Duration>,
    /// A warm standby line beside every connection, straight to the
    /// simulator (past the --faults proxy): the first copy of each
    /// message wins, and a fault on one line costs no gap.
    #[arg(long, requires = "venues")]
    pub(crate) standby: bool,
    /// The plain demo's market in Binance spot's SBE streams
    /// (binance-spot-sbe: binary frames, the same steps; with --max, its
    /// ceiling; --compare measures it against the JSON one's).
    #[arg(long, conflicts_with = "venues")]
    pub(crate) sbe: bool,
    /// With --max: the plain demo's market in JSON and in SBE, this many
    /// rounds, the two taking turns, then the ratio of their sustained
    /// rates and of the feed thread's CPU a message (medians), each run's
    /// latency log in one run directory.
    #[arg(
        long,
        value_name = "ROUNDS",
        requires = "max",
        conflicts_with_all = ["venues", "sbe", "busy_poll", "hlog"],
        value_parser = at_least_one::<u32>
    )]
    pub(crate) compare: Option<u32>,
    /// Trade: a simulated Deribit that trades (its matching engine behind
    /// its private API, with an API key made for the run), a strategy on
    /// the feed quoting both sides of its book; prints the orders sent,
    /// acknowledged and filled, the tick-to-trade and round-trip
    /// latencies, and checks at the end that the kill switch left no
    /// order open.
    #[arg(long, conflicts_with_all = ["venues", "max", "sbe", "compare"])]
    pub(crate) trade: bool,
}

/// A count that must not be 0: said in words, not as the type's range
/// (`0 is not in 1..18446744073709551615`).
fn at_least_one<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialEq + From<u8>,
    T::Err: std::fmt::Display,
{
    match s.parse::<T>() {
        Ok(n) if n == T::from(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// A venue by the name [`Venue`] takes: `--help` lists exactly the names
/// it accepts, from the one list ([`Venue::ALL`]).
fn venue_parser() -> impl clap::builder::TypedValueParser<Value = Venue> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Venue::ALL.map(|(name, _)| name))
        .try_map(|name| name.parse::<Venue>())
}

/// A lifetime in whole seconds, `20` or `20s`, at least 2.
fn parse_lifetime(s: &str) -> Result<Duration, String> {
    let n: u64 = s
        .strip_suffix('s')
        .unwrap_or(s)
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds (e.g. 20s)"))?;
    if n < 2 {
        return Err("a connection lifetime is at least 2 s".into());
    }
    Ok(Duration::from_secs(n))
}

/// A duration in seconds or minutes: `30`, `30s`, `1.5s`, `5m`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let (n, unit) = match s.strip_suffix('m') {
        Some(n) => (n, 60.0),
        None => (s.strip_suffix('s').unwrap_or(s), 1.0),
    };
    let n: f64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 30s or 5m)"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(format!("{s:?}: a duration above zero"));
    }
    Ok(Duration::from_secs_f64(n * unit))
}

/// Venues named on the command line.
#[derive(Clone, Debug)]
pub(crate) struct VenueList(pub(crate) Vec<Venue>);

/// `all`, or venue names separated by commas.
pub(crate) fn parse_venues(s: &str) -> Result<VenueList, String> {
    if s == "all" {
        return Ok(VenueList(Venue::ALL.iter().map(|(_, v)| *v).collect()));
    }
    let mut venues = Vec::new();
    for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let v: Venue = name.parse()?;
        if !venues.contains(&v) {
            venues.push(v);
        }
    }
    if venues.is_empty() {
        return Err("no venue named".into());
    }
    Ok(VenueList(venues))
}

impl Default for DemoArgs {
    fn default() -> DemoArgs {
        DemoArgs {
            seconds: 10,
            rate: 20_000,
            burst: 1,
            max: None,
            hold_after: None,
            core: None,
            busy_poll: false,
            hlog: None,
            venues: None,
            faults: false,
            depth: 20,
            rest_weight_limit: None,
            lifetime: None,
            standby: false,
            sbe: false,
            compare: None,
            trade: false,
        }
    }
}

/// `subscribe`'s arguments.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["channel", "shm"])))]
pub(crate) struct SubscribeArgs {
    /// The Aeron channel URI the feed publishes on (`aeron:ipc`,
    /// `aeron:udp?endpoint=host:port`).
    #[arg(
        long = "aeron",
        value_name = "CHANNEL",
        requires = "stream",
        conflicts_with = "shm"
    )]
    pub(crate) channel: Option<String>,
    /// The Aeron stream id.
    #[arg(long)]
    pub(crate) stream: Option<i32>,
    /// The shared-memory ring the feed writes (`[sinks] shm`), instead of
    /// Aeron.
    #[arg(long, value_name = "PATH")]
    pub(crate) shm: Option<PathBuf>,
    /// The media driver's directory [default: Aeron's, /dev/shm/aeron-<user>].
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// Start a media driver in this process (in `--dir`) rather than use
    /// the one running there.
    #[arg(long)]
    pub(crate) embedded_driver: bool,
    /// A line a second of statistics on stderr instead of JSON Lines.
    #[arg(long)]
    pub(crate) stats: bool,
    /// Measure `delivered` on the wall clock (the feed's stamp against
    /// this host's clock: for a feed on another host, as good as the two
    /// clocks' synchronisation) rather than on the TSC one host shares.
    #[arg(long)]
    pub(crate) wall: bool,
    /// Write the JSON Lines here instead of stdout.
    #[arg(long, conflicts_with = "stats")]
    pub(crate) out: Option<PathBuf>,
    /// Stop after this many events.
    #[arg(long)]
    pub(crate) count: Option<u64>,
    /// Stop after this long (`30s`, `5m`).
    #[arg(long, value_parser = parse_duration)]
    pub(crate) duration: Option<Duration>,
    /// Poll without ever sleeping (a core spins: the lowest latency, for
    /// measuring it).
    #[arg(long)]
    pub(crate) busy: bool,
    /// Stop once no event has come for this long after the first
    /// (`2s`): the end of a feed's run.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) idle: Option<Duration>,
}
