//! Instruments checked against each venue's own list before anything
//! connects: at start (and in `run --check`) the feed fetches every
//! configured venue's instrument list ([`fetch`], the parsers are
//! `tickwire_venues::listing`), refuses a symbol the venue does not list
//! with the closest names it does ([`matching`]), takes price and size
//! decimals from the list where the configuration did not give them, and
//! keeps the lists in the run directory ([`cache`]).
//!
//! What happens when a list cannot be fetched is the configuration's
//! `check_instruments` ([`InstrumentCheck`]): by default the failure is
//! said once, with its cause, and the feed goes on with the configured
//! decimals (or the venue's defaults, which hold every value it sends),
//! as it did before lists were checked; `"required"` refuses to start;
//! `"off"` fetches nothing.

pub mod cache;
pub mod fetch;
pub mod matching;

use std::fmt;
use std::path::Path;
use std::time::Duration;

use tickwire_net::TlsConfig;
use tickwire_venues::Venue;
use tickwire_venues::listing::Listing;

use crate::config::FeedConfig;
use crate::live::VenueSetup;

// The configuration's value, re-exported where the check it governs is.
pub use self::fetch::{Fetched, Origin, origin};
pub use self::matching::{Unknown, closest};
pub use crate::config::InstrumentCheck;

/// How long one venue's list may take to fetch, every page included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// A venue's list as this start got it.
#[derive(Clone, Debug)]
pub struct VenueListing {
    /// The configured venue's name.
    pub name: String,
    /// Where the list came from.
    pub url: String,
    /// The list.
    pub listing: Listing,
    /// Read from a fresh cache rather than fetched.
    pub cached: bool,
}

/// Why the feed does not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// A configured symbol that the venue does not list (exit code 2: a
    /// configuration error).
    Unknown {
        /// The configured venue's name.
        name: String,
        /// The venue.
        venue: Venue,
        /// The symbol and the closest names.
        unknown: Unknown,
    },
    /// A list that could not be fetched while `check_instruments =
    /// "required"` (exit code 1).
    Unfetchable {
        /// The configured venue's name.
        name: String,
        /// The venue.
        venue: Venue,
        /// Why.
        cause: String,
    },
}

impl CheckError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CheckError::Unknown { .. } => 2,
            CheckError::Unfetchable { .. } => 1,
        }
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Unknown {
                name,
                venue,
                unknown,
            } => {
                write!(
                    f,
                    "unknown instrument `{}` on venue {name} ({venue})",
                    unknown.symbol
                )?;
                match &unknown.suggestions[..] {
                    [] => write!(
                        f,
                        "; none of the {} instruments it lists is close (`tickwire-feed \
                         instruments --venue {venue}` lists them)",
                        unknown.listed
                    ),
                    [one] => write!(f, "; did you mean {one}?"),
                    [first @ .., last] => {
                        write!(f, "; did you mean {} or {last}?", first.join(", "))
                    }
                }
            }
            CheckError::Unfetchable { name, venue, cause } => write!(
                f,
                "cannot fetch the instrument list of venue {name} ({venue}): {cause} \
                 (check_instruments = \"required\")"
            ),
        }
    }
}

impl std::error::Error for CheckError {}

/// The trust a fetch uses: the public roots and the configured CA.
fn trust(ca_file: Option<&Path>) -> Result<TlsConfig, String> {
    let mut tls = TlsConfig::webpki_roots();
    if let Some(ca) = ca_file {
        tls.add_ca_file(ca)
            .map_err(|e| format!("tls.ca_file {}: {e}", ca.display()))?;
    }
    Ok(tls)
}

/// `setup`'s list: a fresh cached one under `runs` if there is one,
/// else fetched.
pub fn listing_of(
    setup: &VenueSetup,
    tls: &TlsConfig,
    runs: Option<&Path>,
) -> Result<VenueListing, String> {
    let origin = origin(
        setup.venue,
        setup.rest.as_deref(),
        setup.endpoint.as_deref(),
    );
    let symbols: Vec<&str> = setup
        .instruments
        .iter()
        .map(|i| i.symbol.as_str())
        .collect();
    let first = first_url(setup.venue, &origin, &symbols);
    if let Some(root) = runs
        && let Some(listing) = cache::fresh(root, &setup.name, &first)
    {
        return Ok(VenueListing {
            name: setup.name.clone(),
            url: first,
            listing,
            cached: true,
        });
    }
    let fetched = fetch::fetch(setup.venue, &origin, &symbols, tls, FETCH_TIMEOUT)?;
    Ok(VenueListing {
        name: setup.name.clone(),
        url: fetched.url,
        listing: fetched.listing,
        cached: false,
    })
}

/// The URL of a venue's first page (what a cache is keyed by).
fn first_url(venue: Venue, origin: &Origin, symbols: &[&str]) -> String {
    match tickwire_venues::listing::source(venue, symbols) {
        tickwire_venues::listing::Source::Rest { paths, .. } => {
            format!("{}{}", origin.base, paths[0])
        }
        tickwire_venues::listing::Source::WebSocket { path, .. } => {
            format!("{}{path}", origin.base)
        }
    }
}

/// Checks every venue of `config` against its list (see the module
/// docs), taking decimals from the lists; `say` gets each line worth
/// telling with its level (`Info`: one per instrument checked; `Warn`: a
/// list that could not be fetched).
/// `runs`: the runs directory whose latest lists may be reused. Returns
/// the lists, to be kept in the run directory ([`save`]).
pub fn check(
    config: &mut FeedConfig,
    runs: Option<&Path>,
    say: impl FnMut(log::Level, &str),
) -> Result<Vec<VenueListing>, CheckError> {
    let tls = trust(config.ca_file.as_deref());
    check_venues(
        &mut config.venues,
        &config.scales_given,
        config.check_instruments,
        &tls,
        runs,
        say,
    )
}

/// [`check`] for `venues` (with `scales_given` as
/// [`FeedConfig::scales_given`]), fetching with `tls` (or failing with
/// its error).
pub fn check_venues(
    venues: &mut [VenueSetup],
    scales_given: &[Vec<bool>],
    mode: InstrumentCheck,
    tls: &Result<TlsConfig, String>,
    runs: Option<&Path>,
    mut say: impl FnMut(log::Level, &str),
) -> Result<Vec<VenueListing>, CheckError> {
    let mut lists = Vec::new();
    if mode == InstrumentCheck::Off {
        return Ok(lists);
    }
    for (n, setup) in venues.iter_mut().enumerate() {
        let got = tls
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|tls| listing_of(setup, tls, runs));
        let mut list = match got {
            Ok(l) => l,
            Err(cause) => {
                if mode == InstrumentCheck::Required {
                    return Err(CheckError::Unfetchable {
                        name: setup.name.clone(),
                        venue: setup.venue,
                        cause,
                    });
                }
                say(
                    log::Level::Warn,
                    &format!(
                        "venue {} ({}): instruments not checked, its list could not be fetched: \
                     {cause}; going on with the configured decimals (set check_instruments = \
                     \"required\" to refuse instead)",
                        setup.name, setup.venue
                    ),
                );
                continue;
            }
        };
        let given = scales_given.get(n).cloned().unwrap_or_default();
        let mut outcome = matching::apply(&list.listing, &mut setup.instruments, &given);
        // A cached list may predate a listing: ask the venue before refusing.
        if outcome.is_err()
            && list.cached
            && let Ok(tls) = tls
            && let Ok(fresh) = listing_of(setup, tls, None)
        {
            list = fresh;
            outcome = matching::apply(&list.listing, &mut setup.instruments, &given);
        }
        match outcome {
            Ok(notes) => {
                let how = if list.cached {
                    "a cached list, fetched within the hour"
                } else {
                    "the venue's list"
                };
                say(
                    log::Level::Info,
                    &format!(
                        "venue {} ({}): {} instruments checked against {how} ({} listed, {})",
                        setup.name,
                        setup.venue,
                        setup.instruments.len(),
                        list.listing.instruments.len(),
                        list.url
                    ),
                );
                for note in notes {
                    say(log::Level::Info, &format!("  {note}"));
                }
            }
            Err(unknown) => {
                return Err(CheckError::Unknown {
                    name: setup.name.clone(),
                    venue: setup.venue,
                    unknown,
                });
            }
        }
        lists.push(list);
    }
    Ok(lists)
}

/// Keeps the fetched lists in the run directory `dir`.
pub fn save(dir: &Path, lists: &[VenueListing]) -> std::io::Result<()> {
    for l in lists {
        cache::save(dir, &l.name, &l.url, &l.listing)?;
    }
    Ok(())
}

/// A list for the `instruments` command: `venue`'s, from its own host or
/// `rest`/`endpoint`, trusting `ca_file` too.
pub fn fetch_for(
    venue: Venue,
    rest: Option<&str>,
    endpoint: Option<&str>,
    ca_file: Option<&Path>,
    tls: Option<TlsConfig>,
) -> Result<Fetched, String> {
    let tls = match tls {
        Some(t) => t,
        None => trust(ca_file)?,
    };
    fetch::fetch(
        venue,
        &origin(venue, rest, endpoint),
        &[],
        &tls,
        FETCH_TIMEOUT,
    )
}

/// The list of an in-process simulator of `venue` (serving its whole
/// catalogue, as a simulated feed that checks its instruments does),
/// fetched from it as from the venue, and where it came from.
#[cfg(feature = "sim")]
pub fn simulated(venue: Venue) -> Result<(Listing, String), String> {
    use tickwire_sim::{SimConfig, SimInstrument, Simulator};

    let (tls, ca) = tickwire_sim::self_signed()?;
    let sim = Simulator::start(SimConfig {
        venue,
        tls: Some(tls),
        instruments: SimInstrument::listed(venue),
        rate: 1,
        ..SimConfig::default()
    })
    .map_err(|e| format!("the simulator: {e}"))?;
    let port = sim.addr().port();
    let mut trust = TlsConfig::empty();
    trust
        .add_ca_pem(ca.as_bytes())
        .map_err(|e| format!("the simulator's CA: {e}"))?;
    let rest = format!("https://localhost:{port}");
    let endpoint = format!("wss://localhost:{port}");
    let f = fetch_for(venue, Some(&rest), Some(&endpoint), None, Some(trust))?;
    Ok((f.listing, format!("the simulator, {}", f.url)))
}
