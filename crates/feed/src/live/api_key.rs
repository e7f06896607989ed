//! Where a venue's API key comes from, for streams that need one
//! (Binance's SBE market data: the key's id in the upgrade's
//! `X-MBX-APIKEY` header, no signature). The key is read when the
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
    /// never the key). A key is visible ASCII (Binance's are 64 letters
    /// and digits): anything else is refused here rather than sent, for the
    /// venue to refuse the upgrade again and again.
    pub(crate) fn read(&self) -> Result<String, String> {
        let key = match self {
            ApiKey::Env(var) => match std::env::var(var) {
                Ok(key) => key,
                Err(std::env::VarError::NotPresent) => return Err("not set".to_owned()),
                Err(std::env::VarError::NotUnicode(_)) => {
                    return Err("not UTF-8 (no API key is)".to_owned());
                }
            },
            ApiKey::File(path) => {
                tickwire_trade::credentials::key_from_file(path).map_err(|e| e.to_string())?
            }
            ApiKey::Given(key) => key.clone(),
        };
        let key = key.trim();
        if key.is_empty() {
            return Err("empty".to_owned());
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(
                "holds characters no API key has (only visible ASCII; the key is not shown)"
                    .to_owned(),
            );
        }
        Ok(key.to_owned())
    }
}

/// Whether `name` reads as an environment variable's name (capitals,
/// digits and `_`, not starting with a digit): a key written where its
/// variable's name belongs (`api_key_env = "<the key>"`) does not, and is
/// then never repeated in a message (Binance's keys mix cases).
pub(crate) fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `path` reads as a path (it has a `/` or a `.`): a key written
/// where the file's path belongs does not (Binance's keys are letters and
/// digits), and is then never repeated in a message.
fn looks_like_a_path(path: &std::path::Path) -> bool {
    path.to_str()
        .is_none_or(|p| p.contains('/') || p.contains('.'))
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiKey::Env(var) if is_variable_name(var) => {
                write!(f, "the environment variable {var}")
            }
            ApiKey::Env(_) => f.write_str(
                "an environment variable whose name is no variable's (perhaps the key itself; \
                 not shown)",
            ),
            ApiKey::File(path) if looks_like_a_path(path) => {
                write!(f, "the file {}", path.display())
            }
            ApiKey::File(_) => {
                f.write_str("a file whose name is no path (perhaps the key itself; not shown)")
            }
            ApiKey::Given(_) => f.write_str("the key given"),
        }
    }
}

/// The upgrade header that must carry an API key on the venue's streams
/// for these instruments, if they need one (the plans say).
pub(crate) fn header(
    venue: tickwire_venues::Venue,
    instruments: &[tickwire_venues::InstrumentSpec],
    channels: tickwire_venues::plan::Channels,
) -> Option<&'static str> {
    venue
        .plans(instruments, channels)
        .ok()?
        .iter()
        .find_map(|p| p.api_key_header)
}

/// Whether the venue's streams for these instruments need an API key.
pub(crate) fn needed(
    venue: tickwire_venues::Venue,
    instruments: &[tickwire_venues::InstrumentSpec],
    channels: tickwire_venues::plan::Channels,
) -> bool {
    header(venue, instruments, channels).is_some()
}

/// The key to send in `header`, read from `source` (`None`:
/// [`ApiKey::DEFAULT_ENV`]), or why it cannot be had, said the same way by
/// the build and by `run --check`: where it was looked for, how to say
/// where it is, never the key.
pub(crate) fn read_for(source: Option<&ApiKey>, header: &str) -> Result<String, String> {
    let default = ApiKey::Env(ApiKey::DEFAULT_ENV.to_owned());
    let source = source.unwrap_or(&default);
    source.read().map_err(|problem| {
        format!(
            "its streams need an API key (an Ed25519 key's id, sent in the {header} header), \
             read from {source:?}: {problem} (set it, or say where the key is: api_key_env or \
             api_key_file in the venue's configuration, VenueSetup::api_key in a program)"
        )
    })
}

/// Whether `host` (as a URL writes it) is this machine: `localhost` or a
/// loopback address, the only place a key may go over plain `ws://`.
pub(crate) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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
        let e = ApiKey::Given("k\u{0}ey".into()).read().unwrap_err();
        assert!(
            e.contains("visible ASCII") && !e.contains("k\u{0}ey"),
            "{e}"
        );
    }

    /// A key written where a variable's name or a file's path belongs is
    /// never repeated: a message says where the key was looked for.
    #[test]
    fn a_key_in_the_place_of_a_name_is_not_shown() {
        let key = "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A";
        for source in [ApiKey::Env(key.into()), ApiKey::File(key.into())] {
            let text = format!("{source:?}");
            assert!(!text.contains(key), "{text}");
            assert!(text.contains("not shown"), "{text}");
        }
        assert_eq!(
            format!("{:?}", ApiKey::Env("BINANCE_API_KEY".into())),
            "the environment variable BINANCE_API_KEY"
        );
        assert_eq!(
            format!("{:?}", ApiKey::File("/home/me/.binance".into())),
            "the file /home/me/.binance"
        );
        assert!(is_variable_name("MY_KEY_2") && !is_variable_name("2X") && !is_variable_name(key));
    }

    #[test]
    fn only_this_machine_is_loopback() {
        for host in ["localhost", "127.0.0.1", "127.5.6.7", "[::1]", "::1"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "127.example.com",
            "192.0.2.1",
            "[2001:db8::1]",
            "stream-sbe.binance.com",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}
