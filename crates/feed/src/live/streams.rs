//! Opening a plan's stream connections, and the chores of its lines
//! ([`super::lines`]): a replacement opened before the venue's connection
//! lifetime, the old line retired once the new one is in step, a standby
//! line opened again after its planned replacement.

use std::time::{Duration, Instant};

use tickwire_net::{CloseCode, ConnId, Endpoint};
use tickwire_venues::plan::ConnectionPlan;

use super::core::Link;
use super::lines::{self, Line};
use super::log::tickwire_log;
use super::{Feed, FeedError, OnEvent, SetupError, VenueSetup, bad_url, split_base};
use crate::recording;

/// How often the lines are looked at: a replacement is opened or retired
/// at most this late.
const LINES_EVERY: Duration = Duration::from_millis(50);

/// An application ping a connection owes its venue.
pub(super) struct PingTimer {
    pub(super) id: ConnId,
    pub(super) text: String,
    pub(super) every: Duration,
    pub(super) next: Instant,
}

/// Where a plan's lines connect, and how, prepared at start-up.
pub(super) struct StreamTarget {
    /// The main line's URL (and every line's without standby).
    url: String,
    /// The standby line's URL, with standby.
    pub(super) standby: Option<String>,
    /// The venue's connection lifetime, if it has one.
    pub(super) lifetime: Option<Duration>,
    max_message: usize,
    /// The least time between two of its frames (its outbox's pace).
    pub(super) pace: Duration,
    ping: Option<(String, Duration)>,
    /// The upgrade's API key header and the key, where the venue's streams
    /// need one (read once, here; never printed: `Endpoint`'s Debug shows
    /// header names only, and lines are logged and recorded by URL).
    key: Option<(&'static str, String)>,
}

impl StreamTarget {
    pub(super) fn new(setup: &VenueSetup, plan: &ConnectionPlan) -> Result<Self, FeedError> {
        let at = |base: &Option<String>| -> Result<String, FeedError> {
            Ok(match base {
                Some(base) => {
                    let (scheme, authority) = split_base(base)?;
                    format!("{scheme}://{authority}{}", plan.path)
                }
                None => format!("wss://{}:{}{}", plan.host, plan.port, plan.path),
            })
        };
        let url = at(&setup.endpoint)?;
        let standby = match (setup.lines.standby, &setup.lines.standby_endpoint) {
            (false, _) => None,
            (true, None) => Some(url.clone()),
            (true, other) => Some(at(other)?),
        };
        let key = match (plan.api_key_header, &setup.api_key) {
            (Some(header), source) => {
                let key = super::api_key::read_for(source.as_ref(), header).map_err(|problem| {
                    SetupError::ApiKey {
                        venue: setup.name.clone(),
                        problem,
                    }
                })?;
                Some((header, key))
            }
            (None, Some(_)) => {
                return Err(SetupError::ApiKey {
                    venue: setup.name.clone(),
                    problem: format!("{}'s streams take no API key", setup.venue),
                }
                .into());
            }
            (None, None) => None,
        };
        for u in std::iter::once(&url).chain(&standby) {
            let endpoint = Endpoint::parse(u).map_err(|e| bad_url(u, e))?;
            if let Some((header, value)) = &key {
                // In the clear only to this host (a simulator, a test's
                // proxy): elsewhere a key on a plain ws:// line would cross
                // the network readable.
                if !endpoint.is_tls() && !super::api_key::is_loopback(endpoint.host()) {
                    return Err(SetupError::ApiKey {
                        venue: setup.name.clone(),
                        problem: format!(
                            "its API key would cross the network in the clear to {}: use wss://",
                            endpoint.host()
                        ),
                    }
                    .into());
                }
                endpoint.header(header, value).map_err(|_| SetupError::ApiKey {
                    venue: setup.name.clone(),
                    problem: format!("the API key cannot be sent in the {header} header (not a header's characters)"),
                })?;
            }
        }
        Ok(StreamTarget {
            url,
            standby,
            lifetime: setup.lines.max_lifetime.or(plan.max_lifetime),
            max_message: plan.max_message,
            pace: plan.pace,
            ping: plan.ping.as_ref().map(|p| (p.text.clone(), p.every)),
            key,
        })
    }
}

impl<H: OnEvent> Feed<H> {
    /// Connects line `line` of venue `v`'s plan `p`: its subscriptions are
    /// sent when it opens, paced as the plan says (the venue's limit on
    /// incoming messages), with its application pings.
    pub(super) fn open_line(
        &mut self,
        v: usize,
        p: usize,
        line: Line,
    ) -> Result<ConnId, FeedError> {
        let target = &self.targets[v][p];
        let url = match (&target.standby, line) {
            (Some(standby), Line::Standby) => standby.clone(),
            _ => target.url.clone(),
        };
        let mut endpoint = Endpoint::parse(&url).map_err(|e| bad_url(&url, e))?;
        if let Some((header, key)) = &target.key {
            // Checked when the target was made.
            endpoint = endpoint.header(header, key).map_err(|e| bad_url(&url, e))?;
        }
        let (max_message, pace) = (target.max_message, target.pace);
        let ping = target.ping.clone();
        let id = self
            .driver
            .connect_sized(endpoint, max_message)
            .map_err(SetupError::Connection)?;
        // Subscriptions (and pings) no faster than the venue takes them:
        // its incoming-message limit, from the plan.
        self.driver.pace(id, pace).map_err(SetupError::Connection)?;
        let core = self.driver.handler_mut();
        core.links.insert(id, Link::Stream(v, p, line));
        let tsc = core.clock.now();
        core.record(recording::Kind::Opened, id, tsc, url.as_bytes());
        core.stream_urls.insert(id, (url, false));
        if let Some((text, every)) = ping {
            self.pings.push(PingTimer {
                id,
                text,
                every,
                next: Instant::now() + every,
            });
        }
        Ok(id)
    }

    /// Opens the lines due and retires those whose books another line
    /// carries in step ([`lines::PlanLines::due`]).
    pub(super) fn lines_due(&mut self, now: Instant) {
        self.next_lines = Some(now + LINES_EVERY);
        for v in 0..self.targets.len() {
            for p in 0..self.targets[v].len() {
                let due = {
                    let state = &self.driver.handler().venues[v];
                    let adapter = state.adapter.adapter_ref();
                    let instruments = &state.plans[p].instruments;
                    state.lines[p].due(
                        now,
                        |l| adapter.line_ready(instruments, l),
                        |l| adapter.line_broken(instruments, l),
                    )
                };
                match due {
                    Some(lines::Due::Open(line)) => match self.open_line(v, p, line) {
                        Ok(id) => {
                            self.driver.handler_mut().venues[v].lines[p].set_id(line, id);
                        }
                        Err(e) => {
                            // No free slot: looked at again shortly.
                            let name = &self.driver.handler().venues[v].setup.name;
                            tickwire_log(format_args!(
                                "venue {name}: cannot open a second line for connection {p}: {e}"
                            ));
                        }
                    },
                    Some(lines::Due::Retire(line)) => {
                        let lines = &mut self.driver.handler_mut().venues[v].lines[p];
                        if let Some(id) = lines.ids[line.index()] {
                            lines.retire(line);
                            let _ = self.driver.close(
                                id,
                                CloseCode::NORMAL,
                                "replaced before the venue's connection lifetime",
                            );
                        }
                    }
                    None => {}
                }
            }
        }
        // A line closed for good (retired, or a failed replacement) takes
        // its pings with it.
        let core = self.driver.handler();
        let live = |id: &ConnId| {
            core.links.contains_key(id)
                && core.venues.iter().any(|v| {
                    v.lines
                        .iter()
                        .any(|l| l.line_of(*id).is_some_and(|n| !l.retiring[n as usize]))
                })
        };
        if self.pings.iter().any(|t| !live(&t.id)) {
            self.pings.retain(|t| live(&t.id));
        }
    }
}
