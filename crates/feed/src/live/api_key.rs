//! Where a venue's API key comes from, for streams that need one
//! (Binance's SBE market data: the key's id in the upgrade's
//! `X-MBX-APIKEY` header, no signature). The key is read once, when the
//! feed is built, and never printed, logged or recorded: it goes into the
//! upgrade request's header and nowhere else (a recording keeps the URL).

use std::fmt;
use std::path::PathBuf;

/// Where a venue's API key comes from ([`VenueSetup::api_key`](super::VenueSetup::api_key)).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApiKey {
    /// The environment variable of this name.
    Env(String),
    /// An owner-only file with a `key = ...` line (the format of the
    /// trading credentials' file, whose `secret` or `private_key` line may
    /// stand beside it and is not read).
    File(PathBuf),
    /// The key itself: a bot that holds it already, a test's throw-away
    /// key.
    Given(String),
}

impl ApiKey {
    /// Where the key is looked for when none is said:
    /// `BINANCE_API_KEY`, as the trading credentials' `BINANCE` prefix
    /// reads it (`Credentials::from_env`).
    pub const DEFAULT_ENV: &'static str = "BINANCE_API_KEY";

    /// The key, or why it cannot be had (naming where it was looked for,
    /// never the key).
    pub(crate) fn read(&self) -> Result<String, String> {
        let key = match self {
            ApiKey::Env(var) => std::env::var(var).map_err(|_| "not set".to_owned())?,
            ApiKey::File(path) => {
                tickwire_trade::credentials::key_from_file(path).map_err(|e| e.to_string())?
            }
            ApiKey::Given(key) => key.clone(),
        };
        let key = key.trim().to_owned();
        if key.is_empty() {
            return Err("empty".to_owned());
        }
        Ok(key)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiKey::Env(var) => write!(f, "the environment variable {var}"),
            ApiKey::File(path) => write!(f, "the file {}", path.display()),
            ApiKey::Given(_) => f.write_str("the key given"),
        }
    }
}

/// Whether the venue's streams for these instruments need an API key.
pub(crate) fn needed(
    venue: tickwire_venues::Venue,
    instruments: &[tickwire_venues::InstrumentSpec],
    channels: tickwire_venues::plan::Channels,
) -> bool {
    venue
        .plans(instruments, channels)
        .is_ok_and(|p| p.iter().any(|p| p.api_key_header.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_key_is_never_shown_and_an_empty_one_refused() {
        let key = ApiKey::Given("s3cr3t-key".into());
        assert_eq!(key.read().unwrap(), "s3cr3t-key");
        assert!(!format!("{key:?}").contains("s3cr3t"));
        let e = ApiKey::Given("  ".into()).read().unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = ApiKey::Env("TICKWIRE_TEST_NO_SUCH_KEY_VAR".into())
            .read()
            .unwrap_err();
        assert_eq!(e, "not set");
    }
}
