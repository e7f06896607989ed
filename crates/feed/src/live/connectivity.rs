//! Whether each venue is connected, and what an embedding program is told
//! of it: a venue whose first connection fails is *unreachable*, with the
//! cause (a certificate its trust anchors do not vouch for, a refused port,
//! a name that does not resolve), not "reconnecting"; its first connection
//! that opens makes it *connected*.
//!
//! Counted in [`VenueStats`] (`connections`,
//! `connect_failures`, `lines_open`; [`VenueStats::status`] reads them)
//! and told to the handler
//! ([`OnEvent::on_connectivity`]). All of
//! it happens on connection events, never per message.

use std::fmt;
use std::time::{Duration, Instant};

use tickwire_net::{ConnId, Disconnect};

use super::Feed;
use super::core::Core;
use super::log::tickwire_log;
use super::stats::{FeedStats, VenueStats};
use super::update::OnEvent;
use crate::id::VenueId;

/// A venue's connection news, told to the feed's handler on its thread
/// ([`OnEvent::on_connectivity`]).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Connectivity<'a> {
    /// The venue's first connection opened (its handshakes done, its
    /// subscriptions sent). Told once per venue.
    Connected {
        /// The venue's name in the feed.
        venue: &'a str,
        /// Its handle in the feed.
        venue_id: VenueId,
        /// Where the connection went.
        url: &'a str,
    },
    /// A connection of a venue that has never connected failed: the
    /// venue is unreachable, for `cause`. Told once per venue, at its
    /// first failure; the feed keeps trying with backoff, and tells
    /// [`Connected`](Self::Connected) if an attempt succeeds. The cause is
    /// typed: `Disconnect::Tls(e)` with `e.kind()` being
    /// `TlsErrorKind::Certificate` (an unknown issuer, a wrong name),
    /// `Disconnect::Io(ErrorKind::ConnectionRefused)`,
    /// `Disconnect::Resolve(_)` (the name did not resolve),
    /// `Disconnect::Timeout(_)`, `Disconnect::Refused { status, .. }` (the
    /// upgrade answered with another status than 101).
    Unreachable {
        /// The venue's name in the feed.
        venue: &'a str,
        /// Its handle in the feed.
        venue_id: VenueId,
        /// Where the connection went.
        url: &'a str,
        /// Why it failed.
        cause: &'a Disconnect,
    },
}

impl Connectivity<'_> {
    /// The venue's name.
    pub fn venue(&self) -> &str {
        match self {
            Connectivity::Connected { venue, .. } | Connectivity::Unreachable { venue, .. } => {
                venue
            }
        }
    }
}

impl fmt::Display for Connectivity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Connectivity::Connected { venue, url, .. } => {
                write!(f, "venue {venue}: connected to {url}")
            }
            Connectivity::Unreachable {
                venue, url, cause, ..
            } => write!(f, "venue {venue}: unreachable: {url}: {cause}"),
        }
    }
}

/// Where a venue's connections stand ([`VenueStats::status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VenueStatus {
    /// No connection of the venue has ever opened (every attempt failed,
    /// or the first is under way).
    NeverConnected,
    /// At least one of its connections is open.
    Connected,
    /// It was connected, and none of its connections is open now (they
    /// are being reconnected).
    Disconnected,
}

impl VenueStatus {
    /// In words, for status lines.
    pub fn as_str(self) -> &'static str {
        match self {
            VenueStatus::NeverConnected => "never connected",
            VenueStatus::Connected => "connected",
            VenueStatus::Disconnected => "disconnected",
        }
    }
}

/// Why no venue of a feed connected before its deadline: every venue
/// that never did, with its newest failure. The error inside the
/// `std::io::Error` (kind `NotConnected`) that
/// [`Feed::poll`](super::Feed::poll) returns past
/// [`FeedBuilder::connect_deadline`](crate::FeedBuilder::connect_deadline).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NeverConnected {
    /// How long the feed waited.
    pub waited: Duration,
    /// Each venue that never connected, with its newest failure's cause
    /// (empty if none was seen: its first attempt is still under way).
    pub venues: Vec<(String, String)>,
}

impl NeverConnected {
    /// Of the venues in `stats` that never connected.
    pub fn of<'a>(stats: impl IntoIterator<Item = &'a VenueStats>, waited: Duration) -> Self {
        NeverConnected {
            waited,
            venues: stats
                .into_iter()
                .filter(|v| v.status() == VenueStatus::NeverConnected)
                .map(|v| {
                    let cause = v.last_failure().map(|(c, _)| c).unwrap_or_default();
                    (v.name.clone(), cause)
                })
                .collect(),
        }
    }
}

impl fmt::Display for NeverConnected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let waited = self.waited;
        if waited.subsec_millis() == 0 {
            write!(f, "no venue connected in {} s:", waited.as_secs())?;
        } else {
            write!(f, "no venue connected in {:.1} s:", waited.as_secs_f64())?;
        }
        for (n, (venue, cause)) in self.venues.iter().enumerate() {
            let sep = if n == 0 { " " } else { "; " };
            if cause.is_empty() {
                write!(
                    f,
                    "{sep}venue {venue} never connected (no attempt ended yet)"
                )?;
            } else {
                write!(f, "{sep}venue {venue} never connected: {cause}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for NeverConnected {}

impl<H: OnEvent> Core<H> {
    /// Stream connection `id` of venue `v` opened: counted, and the
    /// venue's first tells the handler it is connected.
    pub(super) fn stream_opened(&mut self, v: usize, id: ConnId) {
        let stats = &self.stats.venues[v];
        let first = FeedStats::get(&stats.connections) == 0;
        FeedStats::add(&stats.connections, 1);
        FeedStats::add(&stats.lines_open, 1);
        if !first {
            return;
        }
        let url = self.stream_urls.get(&id).map_or("", |(url, _)| url);
        let failed = FeedStats::get(&stats.connect_failures);
        if failed > 0 {
            tickwire_log(format_args!(
                "venue {}: connected to {url} after {failed} failed attempt(s)",
                stats.name
            ));
        }
        let news = Connectivity::Connected {
            venue: &self.venues[v].setup.name,
            venue_id: VenueId::new(self.feed_tag, v),
            url,
        };
        tell(self.user.as_mut(), &mut self.in_handler, &news);
    }

    /// Stream connection `id` of venue `v` ended for `reason`; `was_open`
    /// if it had opened. Returns whether the venue has never connected. A
    /// failed attempt is counted as such (not as a reconnect), and a
    /// venue's first tells the handler it is unreachable, with the cause.
    pub(super) fn stream_ended(
        &mut self,
        v: usize,
        id: ConnId,
        was_open: bool,
        reason: &Disconnect,
    ) -> bool {
        let stats = &self.stats.venues[v];
        if was_open {
            FeedStats::sub(&stats.lines_open, 1);
            return false;
        }
        let never = stats.status() == VenueStatus::NeverConnected;
        if self.stopping {
            return never;
        }
        FeedStats::add(&stats.connect_failures, 1);
        FeedStats::add(&self.stats.connect_failures, 1);
        if !never || std::mem::replace(&mut self.venues[v].unreachable_told, true) {
            return never;
        }
        let news = Connectivity::Unreachable {
            venue: &self.venues[v].setup.name,
            venue_id: VenueId::new(self.feed_tag, v),
            url: self.stream_urls.get(&id).map_or("", |(url, _)| url),
            cause: reason,
        };
        tell(self.user.as_mut(), &mut self.in_handler, &news);
        true
    }
}

/// Tells `user` the news. Not on the receive path; a handler that panics
/// here leaves the feed as one that panics on an update does: refused
/// from the next poll on (`in_handler` stays set).
fn tell<H: OnEvent>(user: Option<&mut H>, in_handler: &mut bool, news: &Connectivity<'_>) {
    let (false, Some(user)) = (*in_handler, user) else {
        // It panicked before: not called again.
        return;
    };
    *in_handler = true;
    user.on_connectivity(news);
    *in_handler = false;
}

impl<H: OnEvent> Feed<H> {
    /// Past the connect deadline with no venue ever connected: the error
    /// `poll` returns. Once a venue connected, the deadline is dropped
    /// (and this is not called again).
    pub(super) fn check_connected(&mut self) -> std::io::Result<()> {
        let Some((at, waited)) = self.connect_deadline else {
            return Ok(());
        };
        let stats = &self.driver.handler().stats.venues;
        if stats
            .iter()
            .any(|v| v.status() != VenueStatus::NeverConnected)
        {
            self.connect_deadline = None;
            return Ok(());
        }
        if Instant::now() < at {
            return Ok(());
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            NeverConnected::of(stats.iter(), waited),
        ))
    }
}
