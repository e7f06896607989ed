//! What a feed counts as it runs: shared atomics a status line, a test or
//! an exporter reads from another thread.
//!
//! Every counter has one writer: each [`Feed`](super::Feed) makes its own
//! [`FeedStats`] (never shared between feeds, so between feed threads)
//! and only its thread, in its handler, changes it;
//! [`Feed::stats`](super::Feed::stats) hands the `Arc` out for reading.
//! A change is therefore a relaxed load and store ([`FeedStats::add`]),
//! not a locked read-modify-write, which would cost the receive path a
//! locked instruction for each counter a message moves.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tickwire_net::Disconnect;
use tickwire_tsc::escape_label;

use super::connectivity::VenueStatus;

/// Counters a status line or a test reads while the feed runs: the whole
/// feed's, and each venue's in [`FeedStats::venues`].
///
/// Single writer: only the thread running the feed that made it changes
/// a counter (with a relaxed load and store, not a locked
/// read-modify-write); everyone else only reads ([`FeedStats::get`]). A
/// second writer would lose counts.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct FeedStats {
    /// Messages received.
    pub messages: AtomicU64,
    /// Events emitted.
    pub events: AtomicU64,
    /// Messages no adapter could decode (counted; the connection stays).
    pub decode_errors: AtomicU64,
    /// Books valid right now.
    pub books_valid: AtomicU64,
    /// Books that gapped (each then resyncs); not those ended by the
    /// feed's own shutdown.
    pub gaps: AtomicU64,
    /// Fresh snapshots asked for to bring a book that was valid back (a
    /// REST fetch, or a resubscription); a book's first snapshot is not
    /// counted.
    pub resyncs: AtomicU64,
    /// Connections that dropped after they had opened, and were
    /// reconnected (an attempt that never opened is a `connect_failures`).
    pub reconnects: AtomicU64,
    /// Stream connection attempts that failed before they opened (refused,
    /// a certificate not trusted, a name not resolved, a timeout); each is
    /// tried again with backoff.
    pub connect_failures: AtomicU64,
    /// Connections closed on purpose once another line carried their
    /// books: before the venue's connection lifetime, make-before-break.
    pub planned_reconnects: AtomicU64,
    /// REST snapshots received.
    pub snapshots: AtomicU64,
    /// REST snapshot fetches that failed (refused, reset, timed out, a bad
    /// response); each is retried with backoff.
    pub fetch_failures: AtomicU64,
    /// Book channels resubscribed to recover a book (venues whose
    /// snapshots come in band).
    pub resubscriptions: AtomicU64,
    /// Requests the venues refused (a subscription to an unknown symbol,
    /// say); each is logged with the venue's own words.
    pub rejections: AtomicU64,
    /// Messages whose send stamp (simulator side channel) was found.
    pub wire_stamped: AtomicU64,
    /// Valid messages of a channel or instrument the adapter does not
    /// normalise (counted, not logged).
    pub ignored: AtomicU64,
    /// Lines logged about undecodable messages (one per venue and kind of
    /// error; the rest are only counted in `decode_errors`).
    pub logged: AtomicU64,
    /// Stream connections lost, by why: the peer closed (with or without a
    /// close frame), TLS failed (a bad record, an alert), the WebSocket
    /// protocol was broken, a deadline passed (pong, stale data, connect,
    /// handshake), a socket error (reset, refused), anything else.
    pub lost: LostBy,
    /// Each venue's own counts, in the order the feed was given them.
    pub venues: Box<[VenueStats]>,
}

/// One venue's counts (see [`FeedStats::venues`]).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct VenueStats {
    /// The venue's name in the configuration.
    pub name: String,
    /// Its books (instruments with a book).
    pub books: u64,
    /// Books valid right now.
    pub books_valid: AtomicU64,
    /// Books that gapped (not at the feed's own shutdown).
    pub gaps: AtomicU64,
    /// The newest gap's cause (the engine's [`Resync`](tickwire_venues::sync::Resync)),
    /// written into the text kept from the last: said in [`line`](Self::line).
    pub(crate) last_gap: Mutex<String>,
    /// Fresh snapshots asked for to bring a book back.
    pub resyncs: AtomicU64,
    /// Snapshots asked for to deepen a valid book before its kept levels
    /// ran out (Binance; the book stays valid).
    pub refreshes: AtomicU64,
    /// Stream connections that dropped after they had opened, and were
    /// reconnected.
    pub reconnects: AtomicU64,
    /// Stream connections that opened (their handshakes done), the first
    /// and every reconnection: 0 while the venue has never connected.
    pub connections: AtomicU64,
    /// Stream connection attempts that failed before they opened; each is
    /// tried again with backoff. While `connections` is 0, every attempt
    /// so far failed: the venue has never connected ([`VenueStats::status`]).
    pub connect_failures: AtomicU64,
    /// Its stream connections open now.
    pub lines_open: AtomicU64,
    /// Stream connections replaced on purpose, make-before-break.
    pub planned_reconnects: AtomicU64,
    /// Messages that came on both lines, by the line whose copy came
    /// first (line 0 is the main line).
    pub line_wins: [AtomicU64; 2],
    /// Requests the venue refused.
    pub rejections: AtomicU64,
    /// Messages received.
    pub messages: AtomicU64,
    /// Messages its adapter could not decode.
    pub decode_errors: AtomicU64,
    /// REST requests sent (snapshot fetches).
    pub rest_requests: AtomicU64,
    /// Their request weight, as the venue counts it.
    pub rest_weight: AtomicU64,
    /// REST requests answered 429: over the venue's limit.
    pub rest_throttled: AtomicU64,
    /// REST requests answered 418 or 403: the address is banned.
    pub rest_bans: AtomicU64,
    /// The newest failure's cause, and when (written only when something
    /// fails: never on the receive path).
    pub(crate) failure: Mutex<Option<(String, Instant)>>,
}

/// Stream connections lost, by why (see [`FeedStats::lost`]).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct LostBy {
    /// The peer closed: a close frame, or the end of the stream without one.
    pub closed: AtomicU64,
    /// TLS failed.
    pub tls: AtomicU64,
    /// The WebSocket protocol or handshake was broken.
    pub protocol: AtomicU64,
    /// The server answered the upgrade with another status than 101.
    pub refused: AtomicU64,
    /// A deadline passed (pong, stale data, connect, handshake).
    pub timeout: AtomicU64,
    /// A socket error (reset, refused, name resolution).
    pub socket: AtomicU64,
    /// Anything else.
    pub other: AtomicU64,
}

impl LostBy {
    pub(crate) fn count(&self, reason: &Disconnect) {
        let c = match reason {
            Disconnect::Remote { .. } | Disconnect::Eof => &self.closed,
            Disconnect::Tls(_) => &self.tls,
            Disconnect::Protocol(_) | Disconnect::Handshake(_) => &self.protocol,
            Disconnect::Refused { .. } => &self.refused,
            Disconnect::Timeout(_) => &self.timeout,
            Disconnect::Io(_) | Disconnect::Resolve(_) => &self.socket,
            _ => &self.other,
        };
        FeedStats::add(c, 1);
    }
}

impl FeedStats {
    /// Adds `n` to a counter of this feed's (its thread is the only
    /// writer: see [`FeedStats`]): a relaxed load and store, no locked
    /// read-modify-write.
    pub(crate) fn add(c: &AtomicU64, n: u64) {
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// Takes `n` from a counter of this feed's (single writer, as
    /// [`add`](Self::add)).
    pub(crate) fn sub(c: &AtomicU64, n: u64) {
        c.store(c.load(Ordering::Relaxed).wrapping_sub(n), Ordering::Relaxed);
    }

    /// A counter's value.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

impl FeedStats {
    /// Appends the counters of `feeds` (one per feed thread) to a
    /// Prometheus page, in the text format: per venue (label `venue`) its
    /// books, books valid, gaps, resyncs and rejections; over all venues
    /// the events, REST snapshots and failed fetches, resubscriptions,
    /// ignored messages and lost connections by cause. Messages, bytes,
    /// undecodable messages and reconnects per venue are the recorders'
    /// (`tickwire_messages_total{stream="<venue>"}` and so on). With
    /// `sink_dropped`, the events the JSON Lines sink dropped for being
    /// behind ([`Publisher::drop_counter`](crate::sink::Publisher::drop_counter)).
    pub fn prometheus(
        feeds: &[Arc<FeedStats>],
        sink_dropped: Option<&AtomicU64>,
        out: &mut String,
    ) {
        let g = FeedStats::get;
        let venues = || feeds.iter().flat_map(|f| f.venues.iter());
        type Of = fn(&VenueStats) -> u64;
        let per_venue: [(&str, &str, &str, Of); 15] = [
            (
                "connections_total",
                "counter",
                "Stream connections that opened (0: the venue never connected).",
                |v| FeedStats::get(&v.connections),
            ),
            (
                "connect_failures_total",
                "counter",
                "Stream connection attempts that failed before they opened.",
                |v| FeedStats::get(&v.connect_failures),
            ),
            (
                "connected",
                "gauge",
                "1 while at least one of the venue's stream connections is open.",
                |v| u64::from(v.status() == VenueStatus::Connected),
            ),
            (
                "never_connected",
                "gauge",
                "1 while no stream connection of the venue has ever opened.",
                |v| u64::from(v.status() == VenueStatus::NeverConnected),
            ),
            (
                "rest_requests_total",
                "counter",
                "REST requests sent.",
                |v| FeedStats::get(&v.rest_requests),
            ),
            (
                "rest_weight_total",
                "counter",
                "REST request weight spent, as the venue counts it.",
                |v| FeedStats::get(&v.rest_weight),
            ),
            (
                "rest_throttled_total",
                "counter",
                "REST requests answered 429.",
                |v| FeedStats::get(&v.rest_throttled),
            ),
            (
                "rest_bans_total",
                "counter",
                "REST requests answered 418 or 403 (banned).",
                |v| FeedStats::get(&v.rest_bans),
            ),
            ("books", "gauge", "Books subscribed.", |v| v.books),
            ("books_valid", "gauge", "Books valid now.", |v| {
                FeedStats::get(&v.books_valid)
            }),
            ("gaps_total", "counter", "Books that gapped.", |v| {
                FeedStats::get(&v.gaps)
            }),
            (
                "resyncs_total",
                "counter",
                "Fresh snapshots asked for to bring a book back.",
                |v| FeedStats::get(&v.resyncs),
            ),
            (
                "refreshes_total",
                "counter",
                "Snapshots asked for to deepen a valid book.",
                |v| FeedStats::get(&v.refreshes),
            ),
            (
                "rejections_total",
                "counter",
                "Requests the venue refused.",
                |v| FeedStats::get(&v.rejections),
            ),
            (
                "planned_reconnects_total",
                "counter",
                "Connections replaced on purpose, make-before-break.",
                |v| FeedStats::get(&v.planned_reconnects),
            ),
        ];
        for (name, kind, help, of) in per_venue {
            let _ = write!(
                out,
                "# HELP tickwire_{name} {help}\n# TYPE tickwire_{name} {kind}\n"
            );
            for v in venues() {
                let _ = writeln!(
                    out,
                    "tickwire_{name}{{venue=\"{}\"}} {}",
                    escape_label(&v.name),
                    of(v)
                );
            }
        }
        out.push_str(
            "# HELP tickwire_line_wins_total Messages that came on both lines, by the line \
             whose copy came first (0: the main line, 1: the standby or replacement).\n\
             # TYPE tickwire_line_wins_total counter\n",
        );
        for v in venues() {
            for (line, wins) in v.line_wins.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "tickwire_line_wins_total{{venue=\"{}\",line=\"{line}\"}} {}",
                    escape_label(&v.name),
                    FeedStats::get(wins)
                );
            }
        }
        let sum = |c: fn(&FeedStats) -> &AtomicU64| feeds.iter().map(|f| g(c(f))).sum::<u64>();
        type Total = fn(&FeedStats) -> &AtomicU64;
        let totals: [(&str, &str, Total); 5] = [
            ("events_total", "Events emitted.", |f| &f.events),
            ("snapshots_total", "REST snapshots received.", |f| {
                &f.snapshots
            }),
            (
                "snapshot_failures_total",
                "REST snapshot fetches that failed or were refused.",
                |f| &f.fetch_failures,
            ),
            (
                "resubscriptions_total",
                "Book channels resubscribed to recover a book.",
                |f| &f.resubscriptions,
            ),
            (
                "ignored_total",
                "Valid messages of channels not normalised.",
                |f| &f.ignored,
            ),
        ];
        for (name, help, c) in totals {
            let _ = write!(
                out,
                "# HELP tickwire_{name} {help}\n# TYPE tickwire_{name} counter\n\
                 tickwire_{name} {}\n",
                sum(c)
            );
        }
        out.push_str(
            "# HELP tickwire_connections_lost_total Stream connections lost, by cause.\n\
             # TYPE tickwire_connections_lost_total counter\n",
        );
        type Lost = fn(&LostBy) -> &AtomicU64;
        let causes: [(&str, Lost); 7] = [
            ("closed", |l| &l.closed),
            ("tls", |l| &l.tls),
            ("protocol", |l| &l.protocol),
            ("refused", |l| &l.refused),
            ("timeout", |l| &l.timeout),
            ("socket", |l| &l.socket),
            ("other", |l| &l.other),
        ];
        for (cause, c) in causes {
            let n: u64 = feeds.iter().map(|f| g(c(&f.lost))).sum();
            let _ = writeln!(
                out,
                "tickwire_connections_lost_total{{cause=\"{cause}\"}} {n}"
            );
        }
        if let Some(dropped) = sink_dropped {
            let _ = write!(
                out,
                "# HELP tickwire_sink_dropped_total Events the JSON Lines sink dropped \
                 for being behind.\n# TYPE tickwire_sink_dropped_total counter\n\
                 tickwire_sink_dropped_total {}\n",
                g(dropped)
            );
        }
    }
}

impl VenueStats {
    /// Where its connections stand: never connected, connected (one open
    /// at least), or disconnected (it was connected; none is open now).
    pub fn status(&self) -> VenueStatus {
        if FeedStats::get(&self.connections) == 0 {
            VenueStatus::NeverConnected
        } else if FeedStats::get(&self.lines_open) > 0 {
            VenueStatus::Connected
        } else {
            VenueStatus::Disconnected
        }
    }

    /// The newest failure's cause (a connection lost, a request refused),
    /// and how long ago it was; `None` before any.
    pub fn last_failure(&self) -> Option<(String, Duration)> {
        let failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure
            .as_ref()
            .map(|(cause, at)| (cause.clone(), at.elapsed()))
    }

    /// Makes `cause` the newest failure: written into the text kept from
    /// the last (no allocation once it has grown to the longest).
    pub(crate) fn set_last_failure(&self, cause: impl std::fmt::Display, at: Instant) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        let (text, when) = failure.get_or_insert_with(|| (String::new(), at));
        text.clear();
        let _ = write!(text, "{cause}");
        *when = at;
    }

    /// `books valid X/Y, N gaps, N resyncs, reconnects N, rejections N`
    /// (`NEVER CONNECTED (N failed attempts)` in place of the reconnects
    /// while no connection of the venue has opened; `failed connection
    /// attempts N` after them once some did), and for a venue that fetched REST snapshots `REST requests N
    /// (weight W), 429s N, bans N`: the figures every venue's status and
    /// summary line starts with.
    pub fn line(&self) -> String {
        let g = FeedStats::get;
        let connected = match self.status() {
            VenueStatus::NeverConnected => format!(
                "NEVER CONNECTED ({} failed attempts)",
                g(&self.connect_failures)
            ),
            _ => format!("reconnects {}", g(&self.reconnects)),
        };
        let mut line = format!(
            "books valid {}/{}, {} gaps, {} resyncs, {connected}, rejections {}",
            g(&self.books_valid),
            self.books,
            g(&self.gaps),
            g(&self.resyncs),
            g(&self.rejections),
        );
        if self.status() != VenueStatus::NeverConnected && g(&self.connect_failures) > 0 {
            let _ = write!(
                line,
                ", failed connection attempts {}",
                g(&self.connect_failures)
            );
        }
        if g(&self.gaps) > 0 {
            let last = self.last_gap.lock().unwrap_or_else(|e| e.into_inner());
            let _ = write!(line, ", last gap: {last}");
        }
        if g(&self.planned_reconnects) > 0 {
            let _ = write!(line, ", planned reconnects {}", g(&self.planned_reconnects));
        }
        if g(&self.refreshes) > 0 {
            let _ = write!(line, ", books deepened {}", g(&self.refreshes));
        }
        let wins = [g(&self.line_wins[0]), g(&self.line_wins[1])];
        if wins != [0, 0] {
            let _ = write!(line, ", first copies by line {}/{}", wins[0], wins[1]);
        }
        if g(&self.rest_requests) > 0 {
            let _ = write!(
                line,
                ", REST requests {} (weight {}), 429s {}, bans {}",
                g(&self.rest_requests),
                g(&self.rest_weight),
                g(&self.rest_throttled),
                g(&self.rest_bans),
            );
        }
        line
    }
}
