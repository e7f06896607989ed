//! Why a feed could not start, or a call on it failed: what went wrong as
//! data (typed causes, the venue and the value at fault), the words in
//! `Display`.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use tickwire_net::{DriverError, TlsConfigError};
use tickwire_venues::plan::PlanError;

use crate::id::VenueId;

/// Why a feed could not start, or a call on it failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum FeedError {
    /// A venue's instruments cannot be planned.
    Plan(String, PlanError),
    /// An endpoint (a venue's override, or a URL made from one) is not a
    /// usable URL.
    Url(BadUrl),
    /// The feed could not be set up.
    Setup(SetupError),
    /// A socket or poll call failed.
    Io(std::io::Error),
    /// The venue handle is not one of this feed's (another feed's).
    NoVenue(VenueId),
}

impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeedError::Plan(v, e) => write!(f, "venue {v}: {e}"),
            FeedError::Url(e) => e.fmt(f),
            FeedError::Setup(e) => write!(f, "cannot start: {e}"),
            FeedError::Io(e) => write!(f, "{e}"),
            FeedError::NoVenue(v) => write!(f, "no venue {} in this feed", v.index()),
        }
    }
}

impl std::error::Error for FeedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FeedError::Io(e) => Some(e),
            FeedError::Plan(_, e) => Some(e),
            FeedError::Url(e) => e.source(),
            FeedError::Setup(e) => e.source(),
            FeedError::NoVenue(_) => None,
        }
    }
}

/// A URL the feed cannot use, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BadUrl {
    /// The URL as given (or as made from an override).
    pub url: String,
    /// What is wrong with it.
    pub problem: UrlProblem,
}

impl std::error::Error for BadUrl {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.problem.source()
    }
}

impl fmt::Display for BadUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.problem)
    }
}

/// What is wrong with a [`BadUrl`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlProblem {
    /// No `scheme://` before the host.
    NoScheme,
    /// Nothing between `scheme://` and the path.
    NoHost,
    /// The connection engine's reading of it.
    Endpoint(tickwire_net::UrlError),
}

impl std::error::Error for UrlProblem {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UrlProblem::Endpoint(e) => Some(e),
            UrlProblem::NoScheme | UrlProblem::NoHost => None,
        }
    }
}

impl fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlProblem::NoScheme => f.write_str("expected scheme://host:port"),
            UrlProblem::NoHost => f.write_str("no host"),
            UrlProblem::Endpoint(e) => e.fmt(f),
        }
    }
}

/// Why a feed could not be set up (after `cannot start: ` in
/// [`FeedError`]'s words).
#[derive(Debug)]
#[non_exhaustive]
pub enum SetupError {
    /// The builder was given no venue.
    NoVenue,
    /// A venue name the feed does not know.
    UnknownVenue {
        /// The name given.
        venue: String,
        /// Why it is not a venue (the names it could be).
        reason: String,
    },
    /// An instrument as the builder was given it cannot be read.
    Instrument {
        /// The venue's name as given.
        venue: String,
        /// What is wrong with the instrument's text.
        reason: String,
    },
    /// A venue was given no instrument.
    NoInstrument {
        /// The venue's name as given.
        venue: String,
    },
    /// A CA file cannot be read or holds no certificate.
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why.
        error: TlsConfigError,
    },
    /// The simulators' own CA could not be trusted.
    SimulatorCa(TlsConfigError),
    /// A venue to trade (`FeedBuilder::trade`) cannot be: not one of the
    /// feed's venues, no order entry for it, a bad prefix or no
    /// credentials.
    Trade {
        /// The venue's name.
        venue: String,
        /// What is wrong.
        problem: String,
    },
    /// This build has no simulator (the `sim` feature), and the builder
    /// was asked for one.
    NoSimulator,
    /// A simulator could not start (`venue`: `None` for what all of them
    /// share, their certificate).
    Simulator {
        /// The venue it was to serve.
        venue: Option<String>,
        /// Why.
        reason: String,
    },
    /// The check of the venues' instrument lists failed: an
    /// `instruments::CheckError` (downcast it for the venue and the
    /// symbols at fault).
    InstrumentCheck(Box<dyn std::error::Error + Send + Sync>),
    /// A venue's `rest_weight_limit` cannot carry its books' snapshots.
    RestWeightLimit {
        /// The venue's name.
        venue: String,
        /// Why (the limit, what it must carry).
        problem: String,
    },
    /// A request limit that cannot hold a connection's subscriptions and
    /// one resubscription ([`Feed::limit_requests`](super::Feed::limit_requests)).
    RequestLimit {
        /// The venue's name.
        venue: String,
        /// The requests allowed in `window`.
        requests: u32,
        /// The window.
        window: Duration,
        /// The fewest requests a connection needs.
        least: usize,
    },
    /// A venue's API key cannot be had, or was given to a venue whose
    /// streams take none.
    ApiKey {
        /// The venue's name.
        venue: String,
        /// Why (where the key was looked for; never the key).
        problem: String,
    },
    /// The connection engine could not be set up.
    Driver(tickwire_net::SetupError),
    /// The connection engine refused a connection or its pacing.
    Connection(DriverError),
    /// The feed's thread ended before the feed was built.
    ThreadEnded,
    /// The instruments' feed-wide ids, from the first the builder was
    /// given (`first_id`), run past `u32::MAX`.
    IdsExhausted {
        /// The first id.
        first: u32,
        /// How many instruments.
        count: usize,
    },
}

impl std::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SetupError::CaFile { error, .. } | SetupError::SimulatorCa(error) => Some(error),
            SetupError::InstrumentCheck(e) => Some(e.as_ref()),
            SetupError::Driver(e) => Some(e),
            SetupError::Connection(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::NoVenue => f.write_str("no venue: add one with `venue`"),
            SetupError::UnknownVenue { venue, reason } => write!(f, "venue `{venue}`: {reason}"),
            SetupError::Instrument { venue, reason } => {
                write!(f, "venue `{venue}`: instrument {reason}")
            }
            SetupError::NoInstrument { venue } => write!(f, "venue `{venue}`: no instrument"),
            SetupError::IdsExhausted { first, count } => write!(
                f,
                "{count} instruments numbered from {first} run past the largest id, {}",
                u32::MAX
            ),
            SetupError::CaFile { path, error } => write!(f, "CA file {}: {error}", path.display()),
            SetupError::SimulatorCa(e) => e.fmt(f),
            SetupError::Trade { venue, problem } => {
                write!(f, "trading venue `{venue}`: {problem}")
            }
            SetupError::NoSimulator => f.write_str(
                "simulated: this build of tickwire-feed has no simulator (its `sim` feature)",
            ),
            SetupError::Simulator {
                venue: Some(v),
                reason,
            } => write!(f, "simulator of {v}: {reason}"),
            SetupError::Simulator {
                venue: None,
                reason,
            } => f.write_str(reason),
            SetupError::InstrumentCheck(e) => e.fmt(f),
            SetupError::RestWeightLimit { venue, problem } => {
                write!(f, "venue {venue}: rest_weight_limit {problem}")
            }
            SetupError::RequestLimit {
                venue,
                requests,
                window,
                least,
            } => write!(
                f,
                "venue {venue}: {requests} requests in {window:?} cannot hold a connection's \
                 subscriptions and a resubscription ({least})"
            ),
            SetupError::ApiKey { venue, problem } => write!(f, "venue {venue}: {problem}"),
            SetupError::Driver(e) => e.fmt(f),
            SetupError::Connection(e) => e.fmt(f),
            SetupError::ThreadEnded => f.write_str("the feed thread ended"),
        }
    }
}

impl From<SetupError> for FeedError {
    fn from(e: SetupError) -> FeedError {
        FeedError::Setup(e)
    }
}
