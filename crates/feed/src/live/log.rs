//! What the feed says (through the `log` facade): every failure an operator needs
//! to see, once, with its cause, and repeats only counted (a venue that is
//! down would otherwise fill the log, and the writes would slow the feed).
//!
//! Nothing here runs per message: only when a message cannot be decoded,
//! a connection fails, or a fetch is answered with an error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tickwire_net::{Disconnect, Endpoint, Excerpt, TlsErrorKind};
use tickwire_venues::{DecodeError, InstrumentSpec};

use super::stats::{FeedStats, VenueStats};

pub use crate::LOG_TARGET;

/// One warning through the [`log`] facade (target [`LOG_TARGET`]), ending
/// with the fault injected on its venue if one is under way
/// ([`super::injected`]): the embedding program's logger says it where it
/// wants; the `tickwire-feed` binary's prints it on standard error,
/// prefixed with its name. Nothing is printed by the library itself.
pub(crate) fn tickwire_log(line: std::fmt::Arguments<'_>) {
    match super::injected::on_line(&line) {
        Some(fault) => ::log::warn!(target: LOG_TARGET, "{line} [injected fault: {fault}]"),
        None => ::log::warn!(target: LOG_TARGET, "{line}"),
    }
}

/// Undecodable messages are counted, and logged once per venue and kind of
/// error (a venue that changed a field would otherwise flood the log, and
/// the log's writes would slow the feed down further).
pub(crate) struct BadInput {
    /// (venue, kind, field) triples logged: preallocated, and at most
    /// `KINDS` long.
    seen: Vec<(usize, &'static str, &'static str)>,
    stats: Arc<FeedStats>,
}

impl BadInput {
    const KINDS: usize = 64;

    pub(crate) fn new(stats: Arc<FeedStats>) -> BadInput {
        BadInput {
            seen: Vec::with_capacity(Self::KINDS),
            stats,
        }
    }

    /// Venue `venue` (its `name` and `instruments`) could not decode a
    /// message of `len` bytes.
    pub(crate) fn note(
        &mut self,
        name: &str,
        instruments: &[InstrumentSpec],
        venue: usize,
        e: DecodeError,
        len: usize,
    ) {
        use tickwire_venues::DecodeError as E;
        let kind = match e {
            E::Json(_) => ("json", ""),
            E::Utf8 => ("utf8", ""),
            E::Missing(k) => ("missing", k),
            E::Type(k) => ("type", k),
            E::Decimal(d) => ("decimal", d.field),
            _ => ("other", ""),
        };
        let key = (venue, kind.0, kind.1);
        if self.seen.contains(&key) || self.seen.len() >= Self::KINDS {
            return;
        }
        self.seen.push(key);
        FeedStats::add(&self.stats.logged, 1);
        match e {
            // A value the instrument's scale cannot hold: which instrument,
            // which value, which scale, and what to do.
            E::Decimal(d) => {
                let symbol = d
                    .instrument
                    .and_then(|id| instruments.get(id.0 as usize))
                    .map_or("?", |i| i.symbol.as_str());
                tickwire_log(format_args!(
                    "venue {name}: instrument {symbol}: {} {:?} is refused: {} ({} decimals); \
                     give the instrument more decimals ({symbol}:PRICE_DECIMALS:SIZE_DECIMALS) \
                     or leave them to the venue's defaults; more of this kind are counted, not logged",
                    d.field, d.value, d.error, d.scale
                ));
            }
            _ => tickwire_log(format_args!(
                "venue {name}: an undecodable message ({len} bytes): {e}; \
                 more of this kind are counted, not logged"
            )),
        }
    }
}

/// A failure's kind: the first of each kind on each endpoint is said at
/// once; repeats are counted and said at most once per
/// [`Failures::REPEAT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Certificate,
    Tls,
    Resolve,
    Socket(std::io::ErrorKind),
    Refused(u16),
    Handshake,
    Timeout(tickwire_net::Timeout),
    Closed,
    Protocol,
    RestStatus(u16),
    Fetch,
    Other,
}

impl Kind {
    fn of(reason: &Disconnect) -> Kind {
        match reason {
            Disconnect::Tls(e) if e.kind() == TlsErrorKind::Certificate => Kind::Certificate,
            Disconnect::Tls(_) => Kind::Tls,
            Disconnect::Resolve(_) => Kind::Resolve,
            Disconnect::Io(kind) => Kind::Socket(*kind),
            Disconnect::Refused { status, .. } => Kind::Refused(*status),
            Disconnect::Handshake(_) => Kind::Handshake,
            Disconnect::Timeout(t) => Kind::Timeout(*t),
            Disconnect::Remote { .. } | Disconnect::Eof => Kind::Closed,
            Disconnect::Protocol(_) => Kind::Protocol,
            Disconnect::Fetch(_) => Kind::Fetch,
            _ => Kind::Other,
        }
    }
}

/// Where a failure happened: the venue (its counters, its position) and
/// the URL of the connection or request.
#[derive(Clone, Copy)]
pub(crate) struct Site<'a> {
    pub(crate) stats: &'a VenueStats,
    pub(crate) venue: usize,
    pub(crate) url: &'a str,
}

/// A kind of failure already said on an endpoint.
struct Said {
    venue: usize,
    endpoint: String,
    kind: Kind,
    /// When it was last said.
    at: Instant,
    /// How many more since.
    repeats: u64,
}

/// Connection and fetch failures, said once per kind and endpoint with
/// their cause; the venue's [`VenueStats::last_failure`] always holds the
/// newest.
pub(crate) struct Failures {
    /// The trust anchors certificates are checked against, in words.
    trust: String,
    said: Vec<Said>,
}

impl Failures {
    /// How often a repeated failure is said again (with its count).
    pub(crate) const REPEAT: Duration = Duration::from_secs(60);

    /// `trust` names the trust anchors, for certificate failures.
    pub(crate) fn new(trust: String) -> Failures {
        Failures {
            trust,
            said: Vec::new(),
        }
    }

    /// A connection of venue `venue` to `url` ended for `reason`; what
    /// follows is `then` (`reconnecting with backoff`, say).
    pub(crate) fn connection(
        &mut self,
        at: Site<'_>,
        reason: &Disconnect,
        then: &str,
        now: Instant,
    ) {
        let kind = Kind::of(reason);
        let cause = reason.to_string();
        if kind == Kind::Certificate {
            // What was checked, against what, and what to do.
            let host = Endpoint::parse(at.url).map_or(String::new(), |e| e.host().to_owned());
            let then = format!(
                "the certificate was checked for the name \"{host}\" against {}; \
                 set tls.ca_file to trust a private CA; {then}",
                self.trust
            );
            self.report(at, kind, &cause, &then, now);
        } else {
            self.report(at, kind, &cause, then, now);
        }
    }

    /// A REST request of venue `venue` to `url` was answered `status`,
    /// with `body`.
    pub(crate) fn rest_status(
        &mut self,
        at: Site<'_>,
        status: u16,
        body: &[u8],
        then: &str,
        now: Instant,
    ) {
        let body = Excerpt::new(body);
        let cause = if body.is_empty() {
            format!("answered HTTP {status}")
        } else {
            format!("answered HTTP {status}: {body}")
        };
        self.report(at, Kind::RestStatus(status), &cause, then, now);
    }

    /// Whether a failure of `kind` on `url` is to be said now, and with
    /// how many repeats since it was last said; counts it either way.
    fn due(&mut self, venue: usize, url: &str, kind: Kind, now: Instant) -> Option<Option<u64>> {
        // REST requests differ by path (one per book): one endpoint.
        let endpoint = match kind {
            Kind::RestStatus(_) | Kind::Fetch => url.split('?').next().unwrap_or(url),
            _ => url,
        };
        match self
            .said
            .iter_mut()
            .find(|s| s.venue == venue && s.kind == kind && s.endpoint == endpoint)
        {
            None => {
                self.said.push(Said {
                    venue,
                    endpoint: endpoint.to_owned(),
                    kind,
                    at: now,
                    repeats: 0,
                });
                Some(None)
            }
            Some(s) => {
                s.repeats += 1;
                if now.duration_since(s.at) < Self::REPEAT {
                    return None;
                }
                let repeats = s.repeats;
                s.repeats = 0;
                s.at = now;
                Some(Some(repeats))
            }
        }
    }

    /// Makes `cause` the venue's last failure, and says it if it is due.
    fn report(&mut self, at: Site<'_>, kind: Kind, cause: &str, then: &str, now: Instant) {
        at.stats.set_last_failure(cause, now);
        let Some(repeats) = self.due(at.venue, at.url, kind, now) else {
            return;
        };
        let (name, url) = (&at.stats.name, at.url);
        match repeats {
            None => tickwire_log(format_args!(
                "venue {name}: {url}: {cause}; {then} (repeats are counted, and said at most \
                 once a minute)"
            )),
            Some(n) => tickwire_log(format_args!(
                "venue {name}: {url}: {cause}; {then} ({n} times in the last {} s)",
                Self::REPEAT.as_secs()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_a_kind_is_said_and_repeats_once_a_minute_with_their_count() {
        let mut f = Failures::new("no anchors".into());
        let t0 = Instant::now();
        let url = "wss://127.0.0.1:1/ws";
        let refused = Kind::Socket(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(f.due(0, url, refused, t0), Some(None));
        // Another kind, venue or endpoint is its own first.
        assert_eq!(f.due(0, url, Kind::Resolve, t0), Some(None));
        assert_eq!(f.due(1, url, refused, t0), Some(None));
        assert_eq!(f.due(0, "wss://127.0.0.1:2/ws", refused, t0), Some(None));
        // Repeats within the minute: counted, not said.
        for s in 1..=5 {
            assert_eq!(f.due(0, url, refused, t0 + Duration::from_secs(s)), None);
        }
        // The next after a minute says how many there were.
        let later = t0 + Failures::REPEAT;
        assert_eq!(f.due(0, url, refused, later), Some(Some(6)));
        assert_eq!(f.due(0, url, refused, later), None);
        // REST requests are one endpoint, whatever their query.
        let rest = Kind::RestStatus(429);
        assert_eq!(f.due(0, "https://h/depth?symbol=A", rest, t0), Some(None));
        assert_eq!(f.due(0, "https://h/depth?symbol=B", rest, t0), None);
    }

    /// A logger that keeps the records of the feed's target.
    struct Kept(std::sync::Mutex<Vec<(::log::Level, String)>>);

    impl ::log::Log for Kept {
        fn enabled(&self, metadata: &::log::Metadata<'_>) -> bool {
            metadata.target() == "tickwire_feed"
        }

        fn log(&self, record: &::log::Record<'_>) {
            if self.enabled(record.metadata()) {
                let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
                kept.push((record.level(), record.args().to_string()));
            }
        }

        fn flush(&self) {}
    }

    static KEPT: Kept = Kept(std::sync::Mutex::new(Vec::new()));

    #[test]
    fn a_failure_is_said_through_the_log_facade_to_the_programs_logger() {
        // The only test of this binary that installs a logger.
        ::log::set_logger(&KEPT).unwrap();
        ::log::set_max_level(::log::LevelFilter::Info);
        let mut f = Failures::new("no anchors".into());
        let stats = VenueStats {
            name: "logged".into(),
            ..VenueStats::default()
        };
        let at = Site {
            stats: &stats,
            venue: 0,
            url: "wss://127.0.0.1:1/logged",
        };
        let refused = Disconnect::Io(std::io::ErrorKind::ConnectionRefused);
        f.connection(at, &refused, "trying again", Instant::now());
        let kept = KEPT.0.lock().unwrap();
        let said: Vec<_> = kept
            .iter()
            .filter(|(_, line)| line.contains("wss://127.0.0.1:1/logged"))
            .collect();
        assert_eq!(said.len(), 1, "{kept:?}");
        let (level, line) = said[0];
        assert_eq!(*level, ::log::Level::Warn);
        // The logger adds the program's name; the library does not.
        assert!(
            line.starts_with(
                "venue logged: wss://127.0.0.1:1/logged: socket error: connection refused"
            ),
            "{line}"
        );
    }

    #[test]
    fn the_newest_cause_is_the_venues_last_failure() {
        let mut f = Failures::new("the test CA".into());
        let stats = VenueStats {
            name: "v".into(),
            ..VenueStats::default()
        };
        let now = Instant::now();
        let url = "wss://example.test:9443/ws";
        let at = |url| Site {
            stats: &stats,
            venue: 0,
            url,
        };
        let refused = Disconnect::Io(std::io::ErrorKind::ConnectionRefused);
        f.connection(at(url), &refused, "reconnecting", now);
        let (cause, _) = stats.last_failure().expect("a failure");
        assert_eq!(cause, "socket error: connection refused");
        // Repeated within the minute: not said, but still the newest.
        f.rest_status(at("https://h/x"), 418, b" banned \n", "stopped", now);
        f.rest_status(at("https://h/x"), 418, b"still banned", "stopped", now);
        assert_eq!(
            stats.last_failure().unwrap().0,
            "answered HTTP 418: still banned"
        );
    }
}
