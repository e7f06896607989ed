//! The embeddable feed's front door: a [`FeedBuilder`] from venue names
//! and instruments as the configuration file writes them (or from the
//! file's text itself), to a [`Feed`] that runs on the caller's thread.
//!
//! ```no_run
//! use tickwire_feed::{Feed, Update};
//!
//! let mut feed = Feed::builder()
//!     .venue("binance-spot", &["BTCUSDT:20"])
//!     .build_with(|u: &Update<'_>| {
//!         for (id, book) in u.books() {
//!             if let Some((bid, ask)) = book.and_then(|b| b.top()) {
//!                 println!("{} {}", u.price(id, bid.price), u.price(id, ask.price));
//!             }
//!         }
//!     })?;
//! loop {
//!     feed.poll()?; // snapshots, resubscriptions, reconnects: all inside
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use tickwire_net::{Config as NetConfig, PollMode, TlsConfig};
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::plan::Channels;
use tickwire_venues::{InstrumentSpec, Venue};

use crate::config::{self, ConfigError, FeedConfig};
use crate::id::FeedId;
use crate::instruments::InstrumentCheck;
use crate::live::WireStamps;
use crate::live::{
    Feed, FeedError, FeedStats, LineSetup, NoHandler, OnEvent, SetupError, Sinks, VenueSetup,
};

/// Builds a [`Feed`]: its venues, their instruments, and how it connects.
/// Errors (an unknown venue, a bad instrument) are reported by
/// [`build`](Self::build), naming what was wrong.
pub struct FeedBuilder {
    venues: Vec<VenueSetup>,
    /// The first mistake, reported at build.
    error: Option<SetupError>,
    net: NetConfig,
    /// Set by `busy_poll`, applied at build (after `net`).
    poll_mode: Option<PollMode>,
    /// Set by `standby`, applied at build to every venue.
    standby: Option<bool>,
    ca_file: Option<PathBuf>,
    /// Set by `tls`: the roots to trust instead of the public ones.
    tls: Option<TlsConfig>,
    /// Set by `first_id`.
    first: FeedId,
    /// Set by `send_stamps`.
    send_stamps: Option<(Arc<dyn WireStamps>, Vec<String>)>,
    simulated: bool,
    metrics: Option<Metrics>,
    sinks: Sinks,
    /// Set by `connect_deadline`.
    connect_deadline: Option<Duration>,
    /// What `build` does with the venues' instrument lists.
    check: InstrumentCheck,
    /// Per venue, which instruments were given their decimals.
    scales_given: Vec<Vec<bool>>,
    /// The venues traded, by name (set by `trade`).
    trades: Vec<(String, crate::trading::TradeSetup)>,
}

impl Feed {
    /// A feed of the venues and options the builder is told, on the
    /// caller's thread.
    pub fn builder() -> FeedBuilder {
        FeedBuilder::new()
    }
}

impl std::fmt::Debug for FeedBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedBuilder")
            .field("venues", &self.venues)
            .field("simulated", &self.simulated)
            .finish_non_exhaustive()
    }
}

impl Default for FeedBuilder {
    fn default() -> FeedBuilder {
        FeedBuilder::new()
    }
}

impl FeedBuilder {
    /// No venue yet; the network's defaults; the public certificate roots.
    pub fn new() -> FeedBuilder {
        FeedBuilder {
            venues: Vec::new(),
            error: None,
            net: NetConfig::default(),
            poll_mode: None,
            standby: None,
            ca_file: None,
            tls: None,
            first: FeedId(0),
            send_stamps: None,
            simulated: false,
            metrics: None,
            sinks: Sinks::default(),
            connect_deadline: None,
            check: InstrumentCheck::default(),
            scales_given: Vec::new(),
            trades: Vec::new(),
        }
    }

    /// Trades on venue `venue` (a name given to [`venue`](Self::venue) or
    /// [`setup`](Self::setup)) with `setup`: its order-entry session on
    /// one more connection of the feed, its instruments the venue's. A
    /// handler places, amends and cancels through
    /// [`Update::desk`](crate::Update::desk) and hears back in
    /// [`Update::orders`](crate::Update::orders). A venue with no order
    /// entry built in needs a session of its own
    /// ([`TradeSetup::with_session`](crate::TradeSetup::with_session)).
    pub fn trade(mut self, venue: &str, setup: crate::trading::TradeSetup) -> FeedBuilder {
        self.trades.push((venue.to_owned(), setup));
        self
    }

    /// Every venue of a configuration (see `examples/feed.toml`): its
    /// venues with their options, its poll mode, extra CA and connect
    /// deadline ([`connect_deadline`](Self::connect_deadline)). Its threads,
    /// sinks and metrics are the binary's and are not used here: this
    /// feed runs all its venues on the thread that polls it.
    pub fn from_config(config: &FeedConfig) -> FeedBuilder {
        let mut b = FeedBuilder::new();
        b.venues = config.venues.clone();
        b.scales_given = config.scales_given.clone();
        b.check = config.check_instruments;
        b.net.poll_mode = config.poll;
        b.ca_file = config.ca_file.clone();
        b.connect_deadline = config.connect_deadline;
        b
    }

    /// [`from_config`](Self::from_config) of a configuration's TOML text
    /// (no `TICKWIRE_FEED_*` overrides: the text alone).
    pub fn from_toml(text: &str) -> Result<FeedBuilder, ConfigError> {
        Ok(FeedBuilder::from_config(&FeedConfig::parse(
            text,
            std::iter::empty(),
        )?))
    }

    /// A venue by its name (`binance-spot`, `okx`, `bybit-linear`,
    /// `kraken`, `coinbase`, `deribit`, ...) with its instruments as the
    /// configuration writes them: `SYMBOL[:BOOK_DEPTH]` or
    /// `SYMBOL:PRICE_DECIMALS:SIZE_DECIMALS[:BOOK_DEPTH]`. Trades, quotes
    /// and books, named after the venue.
    pub fn venue(mut self, venue: &str, instruments: &[&str]) -> FeedBuilder {
        let v: Venue = match venue.parse() {
            Ok(v) => v,
            Err(reason) => {
                return self.fail(SetupError::UnknownVenue {
                    venue: venue.to_owned(),
                    reason,
                });
            }
        };
        let mut specs: Vec<InstrumentSpec> = Vec::new();
        let mut given = Vec::new();
        for text in instruments {
            match config::parse_instrument(text) {
                Ok(arg) => {
                    given.push(arg.scales.is_some());
                    specs.push(arg.spec(v));
                }
                Err(reason) => {
                    return self.fail(SetupError::Instrument {
                        venue: venue.to_owned(),
                        reason,
                    });
                }
            }
        }
        if specs.is_empty() {
            return self.fail(SetupError::NoInstrument {
                venue: venue.to_owned(),
            });
        }
        self.scales_given.push(given);
        self.venues.push(VenueSetup {
            name: v.name().to_owned(),
            venue: v,
            instruments: specs,
            channels: Channels::default(),
            endpoint: None,
            rest: None,
            rest_weight_limit: None,
            lines: LineSetup::default(),
            api_key: None,
        });
        self
    }

    /// A venue set up in full (its own name, channels, endpoints, lines).
    pub fn setup(mut self, setup: VenueSetup) -> FeedBuilder {
        self.scales_given.push(vec![true; setup.instruments.len()]);
        self.venues.push(setup);
        self
    }

    /// A warm standby line beside every venue's connections (those added
    /// before or after this call): the first copy of each message wins,
    /// and a fault on one line costs no gap.
    pub fn standby(mut self, on: bool) -> FeedBuilder {
        self.standby = Some(on);
        self
    }

    /// Spin on the sockets instead of blocking in epoll (lowest latency;
    /// burns the core), whatever [`net`](Self::net) says.
    pub fn busy_poll(mut self, on: bool) -> FeedBuilder {
        self.poll_mode = Some(if on {
            PollMode::BusyRead
        } else {
            PollMode::Blocking
        });
        self
    }

    /// The network's settings in full (timeouts, pings, buffer sizes;
    /// its poll mode unless [`busy_poll`](Self::busy_poll) says).
    pub fn net(mut self, net: NetConfig) -> FeedBuilder {
        self.net = net;
        self
    }

    /// Give up past `deadline` if no venue has connected by then:
    /// [`Feed::poll`] then returns an error of kind `NotConnected` whose
    /// inner error is a [`NeverConnected`](crate::live::NeverConnected)
    /// naming each venue and its newest failure. Without it (the
    /// default) the feed keeps trying; the handler is told of a venue
    /// unreachable and connected either way
    /// ([`OnEvent::on_connectivity`]).
    pub fn connect_deadline(mut self, deadline: Duration) -> FeedBuilder {
        self.connect_deadline = Some(deadline);
        self
    }

    /// Trust these certificate roots instead of the public ones (a
    /// [`ca_file`](Self::ca_file) is added to them). A
    /// [`simulated`](Self::simulated) feed trusts its simulators' own CA
    /// alone, whatever is given here.
    pub fn tls(mut self, tls: TlsConfig) -> FeedBuilder {
        self.tls = Some(tls);
        self
    }

    /// Number the feed's instruments from `first` on instead of 0: a feed
    /// that is one of several whose events meet in one sink (the binary's
    /// feed threads), each numbering its own instruments after the ones
    /// before it.
    pub fn first_id(mut self, first: FeedId) -> FeedBuilder {
        self.first = first;
        self
    }

    /// Measure wire latency from the send stamps a simulator posts on
    /// `board`, by symbol (or `venue/symbol`) as `symbols` lists them: a
    /// simulator's side channel, never a real venue's.
    #[cfg(feature = "sim")]
    pub fn send_stamps(mut self, board: Arc<dyn WireStamps>, symbols: Vec<String>) -> FeedBuilder {
        self.send_stamps = Some((board, symbols));
        self
    }

    /// Trust this CA (PEM file) too, besides the public roots.
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> FeedBuilder {
        self.ca_file = Some(path.into());
        self
    }

    /// Record each venue's per-stage latency into these metrics (the
    /// binary exports them; by default they are kept and not exported).
    pub fn metrics(mut self, metrics: Metrics) -> FeedBuilder {
        self.metrics = Some(metrics);
        self
    }

    /// Publish events to these sinks too (a JSON Lines queue, the
    /// shared-memory ring, a recording).
    pub fn sinks(mut self, sinks: Sinks) -> FeedBuilder {
        self.sinks = sinks;
        self
    }

    /// With `true`, connect every venue to an exchange simulator started
    /// in this process, over TLS on loopback, speaking that venue's
    /// protocol, instead of the venue itself: no network needed. The
    /// simulators stop with the feed. Needs the crate's `sim` feature (off
    /// by default: `features = ["sim"]`); without it, `build` says so.
    pub fn simulated(mut self, on: bool) -> FeedBuilder {
        self.simulated = on;
        self
    }

    /// With `true`, every instrument is checked against its venue's own
    /// instrument list before anything connects (as `check_instruments =
    /// "required"` in the configuration): a symbol the venue does not list
    /// (with the closest names it does), or a list that cannot be fetched,
    /// fails `build`; instruments given without decimals take the list's
    /// (those of [`setup`](Self::setup) keep theirs). With `false`, no
    /// list is fetched. Without either, [`instrument_check`]'s default
    /// (best effort). With [`simulated`](Self::simulated), the simulators'
    /// lists.
    ///
    /// [`instrument_check`]: Self::instrument_check
    pub fn check_instruments(mut self, on: bool) -> FeedBuilder {
        self.check = if on {
            InstrumentCheck::Required
        } else {
            InstrumentCheck::Off
        };
        self
    }

    /// What `build` does with the venues' instrument lists, as
    /// `check_instruments` in the configuration. The default,
    /// [`InstrumentCheck::BestEffort`]: a symbol a fetched list lacks
    /// fails `build` (with the closest names listed); a list that cannot
    /// be fetched is said once through the `log` facade (target
    /// [`LOG_TARGET`](crate::live::LOG_TARGET)) and the instruments go on
    /// unchecked.
    pub fn instrument_check(mut self, check: InstrumentCheck) -> FeedBuilder {
        self.check = check;
        self
    }

    /// The options that apply to the whole feed, whatever the order they
    /// were given in: `standby` to every venue, `busy_poll` over `net`.
    fn settle(&mut self) {
        if let Some(on) = self.standby {
            for v in &mut self.venues {
                v.lines.standby = on;
            }
        }
        if let Some(mode) = self.poll_mode {
            self.net.poll_mode = mode;
        }
    }

    fn fail(mut self, e: SetupError) -> FeedBuilder {
        self.error.get_or_insert(e);
        self
    }

    /// The feed, connecting, with no handler: read its books between polls
    /// ([`Feed::book_of`]), or its sinks.
    pub fn build(self) -> Result<Feed, FeedError> {
        self.build_with(NoHandler)
    }

    /// The feed, connecting; `handler` gets each message's events on the
    /// polling thread, after the books took them.
    pub fn build_with<H: OnEvent>(mut self, handler: H) -> Result<Feed<H>, FeedError> {
        if let Some(e) = self.error.take() {
            return Err(FeedError::Setup(e));
        }
        if self.venues.is_empty() {
            return Err(FeedError::Setup(SetupError::NoVenue));
        }
        self.settle();
        let mut tls = self.tls.take().unwrap_or_else(TlsConfig::webpki_roots);
        if let Some(ca) = &self.ca_file {
            tls.add_ca_file(ca).map_err(|error| SetupError::CaFile {
                path: ca.clone(),
                error,
            })?;
        }
        // The simulators, when asked for (none without the `sim` feature).
        #[cfg_attr(not(feature = "sim"), allow(unused_mut))]
        let mut keep: Vec<Box<dyn std::any::Any + Send>> = Vec::new();
        if self.simulated {
            #[cfg(feature = "sim")]
            {
                // The simulators' CA is the one to trust (and `ca_file`,
                // if given, too).
                let (sims, ca) =
                    crate::simulated::start(&mut self.venues, self.check != InstrumentCheck::Off)?;
                tls = TlsConfig::empty();
                tls.add_ca_pem(ca.as_bytes())
                    .map_err(SetupError::SimulatorCa)?;
                if let Some(file) = &self.ca_file {
                    tls.add_ca_file(file).map_err(|error| SetupError::CaFile {
                        path: file.clone(),
                        error,
                    })?;
                }
                keep.extend(sims);
            }
            #[cfg(not(feature = "sim"))]
            return Err(FeedError::Setup(SetupError::NoSimulator));
        }
        if self.check != InstrumentCheck::Off {
            crate::instruments::check_venues(
                &mut self.venues,
                &self.scales_given,
                self.check,
                &Ok(tls.clone()),
                None,
                |level, line| log::log!(target: crate::live::LOG_TARGET, level, "{line}"),
            )
            .map_err(|e| SetupError::InstrumentCheck(Box::new(e)))?;
        }
        let metrics = self
            .metrics
            .unwrap_or_else(|| Metrics::new(HistogramConfig::default()));
        let mut feed = Feed::with_handler(
            self.venues,
            self.net,
            &tls,
            &metrics,
            self.sinks,
            self.send_stamps,
            self.first.0,
            self.trades,
            handler,
        )?;
        feed.keep = keep;
        feed.connect_deadline = self
            .connect_deadline
            .map(|d| (std::time::Instant::now() + d, d));
        Ok(feed)
    }
}

impl FeedBuilder {
    /// The feed on a thread of its own, pinned to `core` (`None`: not
    /// pinned), polling until [`Running::stop`]; `handler` gets every
    /// update there. Returns once the feed is built (or could not be).
    pub fn spawn<H: OnEvent + Send + 'static>(
        self,
        core: Option<usize>,
        handler: H,
    ) -> Result<Running<H>, FeedError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (built, is_built) = mpsc::channel::<Result<Arc<FeedStats>, FeedError>>();
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("tickwire-feed".into())
                .spawn(move || -> std::io::Result<H> {
                    if let Some(core) = core {
                        crate::threads::pin(core)?;
                    }
                    let mut feed = match self.build_with(handler) {
                        Ok(feed) => feed,
                        Err(e) => {
                            let _ = built.send(Err(e));
                            return Err(std::io::Error::other("the feed could not be built"));
                        }
                    };
                    let _ = built.send(Ok(feed.stats()));
                    // A poll's error or a handler's panic winds the feed
                    // down first (the kill switch, the closes).
                    feed.poll_until(&stop, Duration::from_secs(1))?;
                    Ok(feed.into_handler(Duration::from_secs(1)))
                })
                .map_err(FeedError::Io)?
        };
        match is_built.recv() {
            Ok(Ok(stats)) => Ok(Running {
                stop,
                thread: Some(thread),
                stats,
            }),
            Ok(Err(e)) => Err(e),
            // The thread ended before it said: pinning failed.
            Err(_) => Err(match thread.join() {
                Ok(Err(e)) => FeedError::Io(e),
                _ => FeedError::Setup(SetupError::ThreadEnded),
            }),
        }
    }
}

/// A feed running on its own thread ([`FeedBuilder::spawn`]).
pub struct Running<H> {
    stop: Arc<AtomicBool>,
    /// Taken by `stop` (or by the drop).
    thread: Option<std::thread::JoinHandle<std::io::Result<H>>>,
    stats: Arc<FeedStats>,
}

impl<H> Running<H> {
    /// Its counters, live.
    pub fn stats(&self) -> &FeedStats {
        &self.stats
    }

    /// Stops it: its connections closed (1000), its handler handed back.
    pub fn stop(mut self) -> std::io::Result<H> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the feed thread panicked"))),
            None => Err(std::io::Error::other("the feed was stopped already")),
        }
    }
}

/// Dropped without [`Running::stop`]: stopped all the same (its
/// connections closed, its thread joined), its handler dropped.
impl<H> Drop for Running<H> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl<H> std::fmt::Debug for Running<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistakes_are_reported_at_build_naming_them() {
        let e = Feed::builder()
            .venue("binance-spot", &["BTCUSDT:x"])
            .build()
            .unwrap_err()
            .to_string();
        assert!(e.contains("BTCUSDT:x"), "{e}");
        let e = Feed::builder()
            .venue("nasdaq", &["AAPL"])
            .build()
            .unwrap_err()
            .to_string();
        assert!(e.contains("nasdaq"), "{e}");
        let e = Feed::builder().build().unwrap_err().to_string();
        assert!(e.contains("no venue"), "{e}");
    }

    #[test]
    fn whole_feed_options_hold_whatever_their_order() {
        let mut b = FeedBuilder::new()
            .standby(true)
            .busy_poll(true)
            .venue("okx", &["BTC-USDT"])
            .net(NetConfig::default())
            .venue("kraken", &["BTC/USD"]);
        b.settle();
        assert!(b.venues.iter().all(|v| v.lines.standby));
        assert_eq!(b.net.poll_mode, PollMode::BusyRead);
    }

    #[test]
    fn a_toml_text_gives_its_venues() {
        let b = FeedBuilder::from_toml(
            "poll = \"busy-read\"\n[[venue]]\nvenue = \"okx\"\ninstruments = [\"BTC-USDT:5\"]\n",
        )
        .unwrap();
        assert_eq!(b.venues.len(), 1);
        assert_eq!(b.venues[0].venue, Venue::Okx);
        assert_eq!(b.venues[0].instruments[0].depth, 5);
        assert_eq!(b.net.poll_mode, PollMode::BusyRead);
        let e = FeedBuilder::from_toml("[[venue]]\nvenue = 3\n").unwrap_err();
        assert!(e.to_string().contains("venue"), "{e}");
    }

    #[test]
    fn setup_errors_are_typed_and_keep_their_words() {
        let e = FeedBuilder::new().build().unwrap_err();
        assert!(matches!(e, FeedError::Setup(SetupError::NoVenue)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "cannot start: no venue: add one with `venue`"
        );
        let e = FeedBuilder::new()
            .venue("nasdaq", &["AAPL"])
            .build()
            .unwrap_err();
        match &e {
            FeedError::Setup(SetupError::UnknownVenue { venue, .. }) => assert_eq!(venue, "nasdaq"),
            other => panic!("{other:?}"),
        }
        assert!(
            e.to_string().starts_with("cannot start: venue `nasdaq`: "),
            "{e}"
        );
        let e = FeedBuilder::new().venue("okx", &[]).build().unwrap_err();
        assert!(
            matches!(&e, FeedError::Setup(SetupError::NoInstrument { venue }) if venue == "okx"),
            "{e:?}"
        );
        let e = FeedBuilder::new()
            .venue("okx", &["BTC-USDT"])
            .ca_file("/nonexistent/ca.pem")
            .build()
            .unwrap_err();
        assert!(
            matches!(&e, FeedError::Setup(SetupError::CaFile { path, .. }) if path.ends_with("ca.pem")),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with("cannot start: CA file /nonexistent/ca.pem: "),
            "{e}"
        );
    }

    /// The SBE streams need a key, read when the feed is built: without
    /// one the build says where it looked, never connecting; a key on a
    /// venue whose streams take none is refused too.
    #[test]
    fn a_venue_that_needs_an_api_key_is_refused_without_one() {
        use crate::live::ApiKey;
        let setup = |venue, key: Option<ApiKey>| {
            let mut s = VenueSetup::new("v", venue, vec![InstrumentSpec::new("BTCUSDT", 2, 8, 5)]);
            s.endpoint = Some("ws://127.0.0.1:9".into());
            s.api_key = key;
            s
        };
        let missing = ApiKey::Env("TICKWIRE_TEST_UNSET_KEY".into());
        let e = FeedBuilder::new()
            .check_instruments(false)
            .setup(setup(Venue::BinanceSpotSbe, Some(missing)))
            .build()
            .unwrap_err();
        assert!(
            matches!(&e, FeedError::Setup(SetupError::ApiKey { venue, .. }) if venue == "v"),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            text.contains("X-MBX-APIKEY")
                && text.contains("the environment variable TICKWIRE_TEST_UNSET_KEY: not set"),
            "{text}"
        );
        let secret = "k3y-that-must-not-show";
        let given = || Some(ApiKey::Given(secret.into()));
        let feed = FeedBuilder::new()
            .check_instruments(false)
            .setup(setup(Venue::BinanceSpotSbe, given()))
            .build()
            .unwrap();
        assert!(!format!("{:?}", setup(Venue::BinanceSpotSbe, given())).contains(secret));
        drop(feed);
        // Plain ws:// to another host would show the key to the network.
        let mut far = setup(Venue::BinanceSpotSbe, given());
        far.endpoint = Some("ws://192.0.2.1:9".into());
        let e = FeedBuilder::new()
            .check_instruments(false)
            .setup(far)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("in the clear to 192.0.2.1"), "{e}");
        let e = FeedBuilder::new()
            .check_instruments(false)
            .setup(setup(Venue::BinanceSpot, given()))
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("take no API key"), "{e}");
    }

    #[test]
    fn a_bad_endpoint_is_a_typed_url_error() {
        use crate::live::{BadUrl, UrlProblem};
        let mut setup = VenueSetup {
            name: "okx".into(),
            venue: Venue::Okx,
            instruments: vec![InstrumentSpec::new("BTC-USDT", 1, 8, 5)],
            channels: Channels::default(),
            endpoint: Some("localhost:9".into()),
            rest: None,
            rest_weight_limit: None,
            lines: LineSetup::default(),
            api_key: None,
        };
        let e = FeedBuilder::new().setup(setup.clone()).build().unwrap_err();
        match &e {
            FeedError::Url(BadUrl { url, problem }) => {
                assert_eq!(url, "localhost:9");
                assert_eq!(*problem, UrlProblem::NoScheme);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(e.to_string(), "localhost:9: expected scheme://host:port");
        setup.endpoint = Some("ftp://localhost:9/x".into());
        let e = FeedBuilder::new().setup(setup.clone()).build().unwrap_err();
        // The engine's own reading is the error's source, and each typed
        // error goes into a boxed one with `?`.
        let FeedError::Url(bad) = &e else {
            panic!("{e:?}")
        };
        assert!(matches!(bad.problem, UrlProblem::Endpoint(_)), "{bad:?}");
        let source = std::error::Error::source(&e).expect("a source");
        assert_eq!(source.to_string(), bad.problem.to_string());
        let boxed = |e: &FeedError| -> Result<(), Box<dyn std::error::Error>> {
            match e {
                FeedError::Url(b) => Err(b.clone())?,
                _ => Ok(()),
            }
        };
        assert!(boxed(&e).is_err());
        let setup_error: Box<dyn std::error::Error> = Box::new(SetupError::NoVenue);
        assert_eq!(setup_error.to_string(), "no venue: add one with `venue`");
        setup.endpoint = Some("wss:///x".into());
        let e = FeedBuilder::new().setup(setup).build().unwrap_err();
        assert!(
            matches!(
                &e,
                FeedError::Url(BadUrl {
                    problem: UrlProblem::NoHost,
                    ..
                })
            ),
            "{e:?}"
        );
    }
}
