//! The feed's handler on its driver: every venue's adapter, the sinks, the
//! counters; what each message, response and close does.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tickwire_net::{
    CloseCode, Conn, ConnId, Disconnect, Handler, Payload, Reconnect, ResponseHead, Role, Stamps,
};
use tickwire_tsc::{Calibration, Clock, Counter, Recorder, Stage};
use tickwire_venues::book::Limit;
use tickwire_venues::plan::{self, ConnectionPlan};
use tickwire_venues::{Event, InstrumentId, Kind, Lines, Outcome};

pub(crate) use super::adapter::Adapter;
use super::adapter::Frame;
use super::budget::{Refusal, RestBudget};
use super::emitter::Emitter;
use super::lines::{Line, PlanLines};
use super::links::Links;
use super::log::{BadInput, Failures, Site, tickwire_log};
use super::recovery::Recovery;
use super::requests::Requests;
use super::stats::FeedStats;
use super::update::{NoHandler, OnEvent, Update};
use super::wire::{WireStamps, WireStream};
use super::{Sinks, VenueSetup};
use crate::id::Event as FeedEvent;
use crate::recording::{self, Record};

/// A connection's role in the feed.
#[derive(Clone, Copy)]
pub(crate) enum Link {
    /// A market-data stream: venue, plan, line.
    Stream(usize, usize, Line),
    /// A REST snapshot fetch: venue, instrument.
    Fetch(usize, InstrumentId),
    /// A venue's trading session: its index in `Core::trading`.
    Trade(usize),
}

pub(crate) struct VenueState {
    pub(crate) setup: VenueSetup,
    pub(crate) adapter: Adapter,
    pub(crate) plans: Vec<ConnectionPlan>,
    pub(crate) recorder: Recorder,
    /// The first global instrument id of this venue.
    pub(crate) base: u32,
    /// The simulator's instrument index of each instrument, by symbol.
    pub(crate) sim_index: Vec<Option<usize>>,
    /// Which plan (connection) carries each instrument.
    pub(crate) plan_of: Vec<usize>,
    /// Each plan's lines: its connection, and a replacement or standby.
    pub(crate) lines: Vec<PlanLines<ConnId>>,
    /// Each instrument's frames that make the venue send a fresh snapshot
    /// of its book (unsubscribe, subscribe); empty for REST snapshots.
    pub(crate) resubscribe: Vec<Vec<String>>,
    /// Instruments whose refusal was logged, until they are valid again.
    pub(crate) refused: Vec<bool>,
    /// The requests each connection sent, within the venue's budget.
    pub(crate) requests: Requests,
    /// Where its REST snapshots are fetched (without the query), for
    /// messages; empty if it fetches none.
    pub(crate) rest_url: String,
    /// Books that have been valid at least once.
    pub(crate) was_valid: Vec<bool>,
    /// Books whose REST snapshot is wanted or being fetched: due (after
    /// its backoff, in [`Core::recovery`]), in [`Core::want_snapshot`], or
    /// on a fetch that has not answered yet. Each book has at most one,
    /// so the queue never holds more entries than there are books (and
    /// never grows).
    pub(crate) snapshot_wanted: Vec<bool>,
    /// The handler was told the venue is unreachable (once, before its
    /// first connection: `connectivity`).
    pub(crate) unreachable_told: bool,
}

impl VenueState {
    /// A venue's state before its recorder, ids and simulator indices are
    /// known: its adapter, plans, and what recovery needs.
    pub(crate) fn planned(
        setup: VenueSetup,
        plans: Vec<ConnectionPlan>,
        recorder: Recorder,
    ) -> VenueState {
        let n = setup.instruments.len();
        let mut plan_of = vec![0; n];
        for (p, plan) in plans.iter().enumerate() {
            for &i in &plan.instruments {
                if let Some(slot) = plan_of.get_mut(i) {
                    *slot = p;
                }
            }
        }
        VenueState {
            adapter: Adapter::new(setup.venue, &setup.instruments),
            resubscribe: setup
                .instruments
                .iter()
                .map(|i| setup.venue.resubscribe(i))
                .collect(),
            refused: vec![false; n],
            requests: Requests::new(setup.venue, &plans, Instant::now()),
            rest_url: String::new(),
            was_valid: vec![false; n],
            snapshot_wanted: vec![false; n],
            unreachable_told: false,
            lines: Vec::with_capacity(plans.len()),
            plans,
            plan_of,
            recorder,
            base: 0,
            sim_index: vec![None; n],
            setup,
        }
    }
}

/// The handler: every venue's state, the sinks and the counters, and the
/// embedding program's handler of events, `user`.
pub(crate) struct Core<H = NoHandler> {
    /// This feed's tag, in every [`VenueId`](crate::VenueId) it hands out.
    pub(crate) feed_tag: u32,
    pub(crate) venues: Vec<VenueState>,
    /// Read on every message: a fast hasher.
    pub(crate) links: Links,
    pub(crate) sinks: Sinks,
    pub(crate) stats: Arc<FeedStats>,
    pub(crate) calibration: Calibration,
    pub(crate) clock: Clock,
    pub(crate) send_stamps: Option<Arc<dyn WireStamps>>,
    /// REST snapshots to fetch: venue, instrument. Each book at most once
    /// ([`VenueState::snapshot_wanted`]): it holds at most one entry per
    /// book, its capacity.
    pub(crate) want_snapshot: Vec<(usize, InstrumentId)>,
    /// Resubscriptions, retries of refused subscriptions, and REST
    /// snapshot fetches, each after its backoff.
    pub(crate) recovery: Recovery,
    /// Instruments named by the message being handled's refusal.
    pub(crate) refused_now: Vec<InstrumentId>,
    /// Books valid now, by instrument id less `first`.
    pub(crate) valid: Vec<bool>,
    /// The first instrument id of this feed.
    pub(crate) first: u32,
    pub(crate) stopping: bool,
    /// A plan's lines want looking at now, not at their next round (a
    /// venue announced a connection's close).
    pub(crate) lines_soon: bool,
    /// A message's copy for the recording.
    pub(crate) scratch: Vec<u8>,
    /// The kinds of undecodable message already logged.
    pub(crate) bad_input: BadInput,
    /// The connection and fetch failures already said.
    pub(crate) failures: Failures,
    /// The REST request budgets, one a REST host.
    pub(crate) rest: Vec<RestBudget>,
    /// Each venue's budget in `rest` (venues fetching from one host share
    /// one).
    pub(crate) rest_of: Vec<usize>,
    /// Records the recording could not write.
    pub(crate) record_errors: u64,
    /// Each stream's URL, and whether it was closed since its last
    /// `Opened` record: a reconnect records `Opened` again, so a recording
    /// read on its own says what every connection was.
    pub(crate) stream_urls: HashMap<ConnId, (String, bool), foldhash::fast::RandomState>,
    /// The embedding program's handler: each message's events, after the
    /// message is applied to the books ([`Core::deliver`]).
    /// Taken out only by `Feed::into_handler`, as the feed ends.
    pub(crate) user: Option<H>,
    /// The events of the message being handled, for `user` (unused when
    /// it wants none); its capacity is kept, so it stops allocating once
    /// it has held the most events one message brings.
    pub(crate) batch: Vec<FeedEvent>,
    /// Set while `user` runs: still set after a poll only if it panicked
    /// (and the caller caught it), which leaves the feed's state part way
    /// through a message: [`Feed::poll`](super::Feed::poll) refuses then.
    pub(crate) in_handler: bool,
    /// The trading venues' sessions and the desk's queue (`trading`).
    pub(crate) trading: crate::trading::Trading,
}

fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn conn_number(id: ConnId) -> u32 {
    id.index() as u32
}

impl<H: OnEvent> Core<H> {
    pub(crate) fn record(&mut self, kind: recording::Kind, id: ConnId, tsc: u64, payload: &[u8]) {
        self.record_frame(kind, id, tsc, payload, false);
    }

    /// [`record`](Self::record) of a payload that came in a binary frame
    /// when `binary` (Binance's SBE streams): replayed as one.
    fn record_frame(
        &mut self,
        kind: recording::Kind,
        id: ConnId,
        tsc: u64,
        payload: &[u8],
        binary: bool,
    ) {
        if let Some(w) = self.sinks.recording.as_mut() {
            let r = Record {
                kind,
                conn: conn_number(id),
                tsc,
                wall_ns: wall_ns(),
                binary,
                payload,
            };
            if w.write(&r).is_err() {
                self.recording_failed();
            }
        }
    }

    /// Hands the recording's buffered records to the OS once they have
    /// waited `recording::FLUSH_INTERVAL`: called once a poll turn.
    pub(crate) fn flush_recording(&mut self, now: Instant) {
        if let Some(w) = self.sinks.recording.as_mut()
            && w.flush_due(now).is_err()
        {
            self.recording_failed();
        }
    }

    /// A record the recording could not take: counted, and the writer's
    /// failure (file, byte, cause) said once.
    fn recording_failed(&mut self) {
        self.record_errors += 1;
        if self.record_errors == 1
            && let Some(why) = self.sinks.recording.as_ref().and_then(|w| w.failure())
        {
            tickwire_log(format_args!(
                "{why}; the records after it are not written (the run goes on)"
            ));
        }
    }
}

impl<H: OnEvent> Core<H> {
    /// Venue `v`'s adapter, and an emitter for its events.
    fn split(&mut self, v: usize) -> (&mut Adapter, Emitter<'_>) {
        let Core {
            venues,
            sinks,
            batch,
            stats,
            valid,
            recovery,
            refused_now,
            first,
            stopping,
            ..
        } = self;
        let VenueState {
            adapter,
            refused,
            was_valid,
            snapshot_wanted,
            setup,
            base,
            ..
        } = &mut venues[v];
        let emitter = Emitter {
            logged_refusals: refused,
            was_valid,
            snapshot_wanted,
            sinks,
            batch: H::EVENTS.then_some(batch),
            stats,
            venue_stats: &stats.venues[v],
            valid,
            recovery,
            refused: refused_now,
            venue: v,
            rest: setup.venue.rest_snapshots(),
            base: *base,
            first: *first,
            stopping: *stopping,
        };
        (adapter, emitter)
    }

    /// Hands the stamps of the messages handled since the last call to
    /// each venue's collector (`Recorder::flush`): once a driver turn.
    pub(super) fn flush_recorders(&mut self) {
        for state in &mut self.venues {
            state.recorder.flush();
        }
    }

    /// Hands the events venue `v`'s adapter just emitted (one message's,
    /// or a snapshot's, or a line's going down) to the embedding
    /// program's handler, with the venue's books as they are now.
    /// With them, the order events of the venue's trading session
    /// (`Core::trading`'s), and its desk.
    fn deliver(&mut self, v: usize, recv_tsc: u64) {
        if !H::EVENTS || (self.batch.is_empty() && self.trading.orders.is_empty()) {
            return;
        }
        let Core {
            feed_tag,
            venues,
            user,
            batch,
            in_handler,
            trading,
            ..
        } = self;
        // A handler that panicked is not called again (its state is not
        // whole): the feed only winds down after it (the kill switch and
        // the closes).
        if let (false, Some(user)) = (*in_handler, user.as_mut()) {
            let state = &venues[v];
            let adapter = state.adapter.adapter_ref();
            let venue = crate::VenueId::new(*feed_tag, v);
            let update = Update::new(batch, &state.setup, adapter, state.base, (venue, recv_tsc))
                .with_trading(trading, v);
            *in_handler = true;
            user.on_update(&update);
            *in_handler = false;
        }
        batch.clear();
        trading.orders.clear();
    }

    /// The venue refused a request on connection (plan) `p`: said once per
    /// instrument (until it is valid again) with the venue's own words;
    /// counted always.
    /// The venue announced it will close line `line` of plan `p` soon:
    /// the leader is replaced, make-before-break (its books follow the new
    /// connection with no gap); a line that does not lead is closed now (a
    /// standby line opens again at once). Said once per notice.
    fn closing(&mut self, v: usize, p: usize, line: Line, conn: &mut Conn<'_>) {
        let state = &mut self.venues[v];
        let lines = &mut state.lines[p];
        if lines.leader == line {
            lines.replace(Instant::now());
            self.lines_soon = true;
        } else {
            lines.retire(line);
            let _ = conn.close(CloseCode::NORMAL, "the venue announced its close");
        }
        tickwire_log(format_args!(
            "venue {}: the venue announced the close of connection {p} (line {line}); \
             replacing it before it closes",
            state.setup.name
        ));
    }

    fn refused(&mut self, v: usize, p: usize) {
        FeedStats::add(&self.stats.rejections, 1);
        FeedStats::add(&self.stats.venues[v].rejections, 1);
        let state = &mut self.venues[v];
        let text = state.adapter.adapter_ref().rejection();
        self.stats.venues[v].set_last_failure(
            format_args!("a request was refused: {text}"),
            Instant::now(),
        );
        if state.setup.venue.rest_snapshots() {
            // A Binance refusal names no instrument (the reply carries only
            // the request's id): the connection's own retry, which sends
            // its subscriptions again; said once until a round of them is
            // accepted.
            if self.recovery.refused(v, p, Instant::now()) {
                tickwire_log(format_args!(
                    "venue {}: a subscription request on connection {p} was refused: {text}; \
                     its subscriptions are tried again with backoff",
                    state.setup.name
                ));
            }
        } else if self.refused_now.is_empty() {
            // Named no instrument of ours: the whole request.
            tickwire_log(format_args!(
                "venue {}: a request was refused: {text}",
                state.setup.name
            ));
        }
        for id in self.refused_now.drain(..) {
            let i = id.0 as usize;
            if state.refused.get(i).copied() == Some(false) {
                state.refused[i] = true;
                tickwire_log(format_args!(
                    "venue {}: subscription of {} refused: {text}; tried again with backoff",
                    state.setup.name, state.setup.instruments[i].symbol
                ));
            }
        }
    }

    /// Tells venue `v`'s adapter which of plan `p`'s lines are open now:
    /// a line that opens makes messages come twice; one that goes down
    /// leaves its books to the other, or, alone, disconnects them.
    fn lines_changed(&mut self, v: usize, p: usize, tsc: u64) {
        let open = self.venues[v].lines[p].open;
        // Taken out while the adapter reads it, then put back: no copy.
        let instruments = std::mem::take(&mut self.venues[v].plans[p].instruments);
        let (adapter, mut out) = self.split(v);
        adapter
            .adapter()
            .lines_changed(&instruments, open, tsc, &mut |e| out.emit(e));
        self.venues[v].plans[p].instruments = instruments;
        self.deliver(v, tsc);
        self.watch_market(v);
    }

    /// The fetch of book `instrument`'s snapshot answered, with one (`ok`)
    /// or with an error: the book may want another from here on (the
    /// snapshot may prove too old for its buffered diffs). An error wants
    /// one again after the book's backoff ([`Recovery::fetch`]); the fetch
    /// ends `Fetched`, which the driver neither retries nor backs off. A
    /// fetch whose connection failed is no different: every attempt goes
    /// through the book's backoff and its venue's REST budget (`budget`).
    fn fetch_answered(&mut self, v: usize, instrument: InstrumentId, ok: bool) {
        let Some(w) = self.venues[v]
            .snapshot_wanted
            .get_mut(instrument.0 as usize)
        else {
            return;
        };
        *w = !ok;
        if !ok {
            self.recovery
                .fetch(v, instrument.0 as usize, Instant::now());
        }
    }
}

/// The send stamp board's key of a message's first event.
fn stamp_key(e: &Event) -> Option<(WireStream, u64)> {
    match e.kind {
        Kind::Trade { trade_id, .. } => Some((WireStream::Trade, trade_id)),
        Kind::Quote { update_id, .. } => Some((WireStream::Quote, update_id)),
        Kind::BookDelta { update_id, .. } => Some((WireStream::Depth, update_id)),
        _ => None,
    }
}

impl<H: OnEvent> Handler for Core<H> {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        let (v, p, line) = match self.links.get(&conn.id()) {
            Some(&Link::Stream(v, p, line)) => (v, p, line),
            Some(&Link::Trade(t)) => return self.trade_open(t, conn),
            _ => return,
        };
        let tsc = self.clock.now();
        let now = Instant::now();
        self.venues[v].lines[p].opened(line, now);
        self.lines_changed(v, p, tsc);
        self.stream_opened(v, conn.id());
        // A reconnect (not on the receive path): `Opened` again.
        if let Some((url, closed)) = self.stream_urls.get_mut(&conn.id())
            && std::mem::take(closed)
        {
            let url = url.clone();
            self.record(recording::Kind::Opened, conn.id(), tsc, url.as_bytes());
        }
        let frames = self.venues[v].plans[p].subscribe.len();
        for n in 0..frames {
            let text = self.venues[v].plans[p].subscribe[n].clone();
            // The outbox holds 64 KiB of subscriptions: a plan never
            // comes near it.
            let _ = conn.send_text(&text);
            self.record(recording::Kind::Sent, conn.id(), tsc, text.as_bytes());
        }
        // A new connection to the venue: its request count starts over
        // with these (`requests`).
        let requests = &mut self.venues[v].requests;
        requests.opened(p, line, now);
        let left = requests.spend(p, line, frames, now);
        // Every subscription sent again: a retry of refused ones is done
        // (the retries are the leader's: another line opening leaves them).
        if self.venues[v].lines[p].leader == line {
            self.recovery.sent(v, p, frames);
        }
        // A book that waited for a snapshot when the line went down asks
        // for it again now: followed up like a resubscription, once its
        // subscriptions have left.
        let state = &self.venues[v];
        if !state.setup.venue.rest_snapshots() {
            for &i in &state.plans[p].instruments {
                if self.recovery.recovering(v, i) {
                    self.recovery.resubscribed(v, i, left);
                }
            }
        }
        self.submit_queued(Some(conn));
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, mut stamps: Stamps) {
        // The frame was decoded just now: the driver leaves this stamp to
        // the handlers that use it.
        stamps.decoded = self.clock.now();
        let (v, p, line) = match self.links.get(&conn.id()) {
            Some(&Link::Stream(v, p, line)) => (v, p, line),
            Some(&Link::Trade(t)) => return self.trade_message(t, conn, payload, stamps),
            _ => return,
        };
        FeedStats::add(&self.stats.messages, 1);
        FeedStats::add(&self.stats.venues[v].messages, 1);
        if self.sinks.recording.is_some() {
            // Copied into a buffer kept across messages: no allocation
            // once it has grown to the largest message.
            let mut bytes = std::mem::take(&mut self.scratch);
            bytes.clear();
            bytes.extend_from_slice(payload.as_bytes());
            self.record_frame(
                recording::Kind::Received,
                conn.id(),
                stamps.read_end,
                &bytes,
                !payload.is_text(),
            );
            self.scratch = bytes;
        }
        let mut first: Option<Event> = None;
        let len = payload.len();
        let (adapter, mut out) = self.split(v);
        let mut emit = |e: Event| {
            if first.is_none() {
                first = Some(e);
            }
            out.emit(e);
        };
        let result = match adapter {
            // Binance reads its text first: the codec's UTF-8 check of the
            // text frame stands (5-8 ns a message not spent again: the
            // `venues` bench's `utf8 check`).
            // Binary frames are its SBE streams' market data (the JSON text
            // frames there are replies and `serverShutdown`).
            Adapter::Binance(a) if !payload.is_text() => {
                a.set_line(line);
                a.on_binary(payload.as_bytes(), stamps.read_end, &mut emit)
            }
            Adapter::Binance(a) => {
                a.set_line(line);
                a.on_input(Frame(payload), stamps.read_end, &mut emit)
            }
            Adapter::Other(a) => {
                let (buf, len) = payload.into_padded();
                a.set_line(line);
                a.on_message(buf, len, stamps.read_end, &mut emit)
            }
        };
        if H::EVENTS {
            stamps.parsed = self.clock.now();
        }
        match result {
            Ok(Outcome::Answer(text)) => {
                let _ = conn.send_text(text);
            }
            Ok(Outcome::Ignored) => FeedStats::add(&self.stats.ignored, 1),
            Ok(Outcome::Rejected)
                if self.venues[v].lines[p].both() && self.venues[v].lines[p].leader != line =>
            {
                // The other line's subscription was refused: its retries
                // would go on the leader, so the line is closed instead,
                // and opened again (standby) or replaced later.
                FeedStats::add(&self.stats.rejections, 1);
                FeedStats::add(&self.stats.venues[v].rejections, 1);
                let _ = conn.close(CloseCode::POLICY_VIOLATION, "a subscription was refused");
            }
            Ok(Outcome::Rejected) => self.refused(v, p),
            Ok(Outcome::Closing) => self.closing(v, p, line, conn),
            // A reply to a request (Binance's `{"result":null,"id":N}`):
            // one of the connection's subscriptions was accepted.
            Ok(Outcome::Control) if self.venues[v].setup.venue.rest_snapshots() => {
                self.recovery.accepted(v, p);
            }
            Ok(_) => {}
            Err(e) => {
                FeedStats::add(&self.stats.decode_errors, 1);
                FeedStats::add(&self.stats.venues[v].decode_errors, 1);
                self.venues[v].recorder.add(Counter::Errors, 1);
                let setup = &self.venues[v].setup;
                self.bad_input
                    .note(&setup.name, &setup.instruments, v, e, len);
            }
        }
        let Core {
            venues,
            stats,
            send_stamps,
            calibration,
            ..
        } = self;
        let state = &mut venues[v];
        if let (Some(board), Some(e)) = (send_stamps.as_ref(), first)
            && let Some((kind, id)) = stamp_key(&e)
            // `first` still has the adapter's own (local) instrument id.
            && let Some(Some(n)) = state.sim_index.get(e.instrument.0 as usize)
            && let Some(sent) = board.sent(*n, kind, id)
        {
            stamps.exchange_unix_ns = calibration.to_unix_ns(sent);
            FeedStats::add(&stats.wire_stamped, 1);
        } else if let Some(e) = first
            && e.exchange_ns != 0
            // A sender in this process stamps its sends: the exchange
            // stage is the wire, measured on the TSC, or not measured (a
            // venue's own event time is another clock, and a pregenerated
            // market's is when it was made).
            && send_stamps.is_none()
        {
            stamps.exchange_unix_ns = e.exchange_ns;
        }
        state.recorder.count_message(len);
        let lead = if state.lines[p].both() {
            state.adapter.adapter().take_lead()
        } else {
            None
        };
        if let Some(lead) = lead {
            // Which line's copy came first, and by how much.
            let venue = &stats.venues[v];
            FeedStats::add(&venue.line_wins[lead.winner as usize & 1], 1);
            state
                .recorder
                .record_ns(Stage::Lead, calibration.to_ns(lead.ticks));
        }
        self.deliver(v, stamps.read_end);
        // Handled once the embedding program's handler has had the events
        // (the sinks had them as they were decoded: `parsed` covers them).
        stamps.handled = self.clock.now();
        if !H::EVENTS {
            // No handler: its stage is 0, and the clock is read once less
            // (rdtsc costs about 9 ns, an estimated 2-3 % of a message at
            // full rate); the json stage ends here, a few ns of counting
            // after the adapter.
            stamps.parsed = stamps.handled;
        }
        // Recorded with the rest of the turn's messages (`flush_recorders`).
        self.venues[v].recorder.record_deferred(&stamps);
        if self.trading.any() {
            // The orders the handler placed leave as it returns.
            self.watch_market(v);
            self.submit_queued(Some(conn));
        }
    }

    fn on_response(&mut self, id: ConnId, head: ResponseHead, body: &mut [u8], len: usize) {
        let status = head.status;
        let Some(&Link::Fetch(v, instrument)) = self.links.get(&id) else {
            return;
        };
        let tsc = self.clock.now();
        if self.sinks.recording.is_some() {
            let bytes = body[..len].to_vec();
            self.record(recording::Kind::Response, id, tsc, &bytes);
        }
        self.fetch_answered(v, instrument, status == 200);
        if status != 200 {
            FeedStats::add(&self.stats.fetch_failures, 1);
            let now = Instant::now();
            let venue = &self.stats.venues[v];
            let refusal = self.rest[self.rest_of[v]].refused(status, head.retry_after, now);
            let said = if head.retry_after.is_some() {
                " (its Retry-After)"
            } else {
                ""
            };
            let then = match refusal {
                Refusal::Banned(wait) => {
                    FeedStats::add(&venue.rest_bans, 1);
                    format!(
                        "THE VENUE HAS BANNED THIS ADDRESS: snapshot fetches stop for {} s{said}; \
                         books stay invalid meanwhile; find what else spends this address's \
                         request weight",
                        wait.as_secs()
                    )
                }
                Refusal::Throttled(wait) | Refusal::Held(wait) => {
                    if matches!(refusal, Refusal::Throttled(_)) {
                        FeedStats::add(&venue.rest_throttled, 1);
                    }
                    format!(
                        "every snapshot fetch of the venue waits {} s{said}",
                        wait.as_secs()
                    )
                }
                Refusal::Failed => "the book's snapshot is fetched again after a backoff".into(),
            };
            let at = Site {
                stats: venue,
                venue: v,
                url: &self.venues[v].rest_url,
            };
            self.failures
                .rest_status(at, status, &body[..len], &then, now);
            return;
        }
        FeedStats::add(&self.stats.snapshots, 1);
        let setup = &self.venues[v].setup;
        // The limit the fetch asked for: a side with fewer levels is the
        // market's whole side.
        let limit = match (
            setup.venue.binance_market(),
            setup.instruments.get(instrument.0 as usize),
        ) {
            (Some(m), Some(spec)) => Limit::Levels(plan::binance::snapshot_limit(m, spec.depth)),
            _ => Limit::Unknown,
        };
        let (adapter, mut out) = self.split(v);
        if let Adapter::Binance(a) = adapter {
            let r = a.on_snapshot_at(instrument, limit, body, len, tsc, &mut |e| out.emit(e));
            if let Err(e) = r {
                FeedStats::add(&self.stats.decode_errors, 1);
                FeedStats::add(&self.stats.venues[v].decode_errors, 1);
                self.venues[v].recorder.add(Counter::Errors, 1);
                let setup = &self.venues[v].setup;
                self.bad_input
                    .note(&setup.name, &setup.instruments, v, e, len);
            }
        }
        self.deliver(v, tsc);
        self.submit_queued(None);
    }

    fn on_close(&mut self, id: ConnId, _role: Role, reason: &Disconnect) -> Reconnect {
        let tsc = self.clock.now();
        let link = self.links.get(&id).copied();
        if self.sinks.recording.is_some() {
            let text = reason.to_string();
            self.record(recording::Kind::Closed, id, tsc, text.as_bytes());
            if let Some((_, closed)) = self.stream_urls.get_mut(&id) {
                *closed = true;
            }
        }
        match link {
            Some(Link::Stream(v, p, line)) => {
                let planned = self.venues[v].lines[p].retiring[line.index()];
                let was_open = self.venues[v].lines[p].open[line.index()];
                let again = self.venues[v].lines[p].closed(line, Instant::now());
                self.lines_changed(v, p, tsc);
                self.submit_queued(None);
                // Counted as a failed attempt (and the handler told, the
                // venue's first) if it never opened.
                let never = self.stream_ended(v, id, was_open, reason);
                if self.stopping {
                    Reconnect::No
                } else if planned {
                    // Closed on purpose: another line carries its books.
                    self.links.remove(&id);
                    self.stream_urls.remove(&id);
                    FeedStats::add(&self.stats.planned_reconnects, 1);
                    FeedStats::add(&self.stats.venues[v].planned_reconnects, 1);
                    Reconnect::No
                } else {
                    self.stats.lost.count(reason);
                    let at = Site {
                        stats: &self.stats.venues[v],
                        venue: v,
                        url: self.stream_urls.get(&id).map_or("", |(url, _)| url),
                    };
                    let then = if never {
                        "the venue has never connected; trying again with backoff"
                    } else if again && !was_open {
                        "trying again with backoff"
                    } else if again {
                        "reconnecting with backoff"
                    } else {
                        "its other line carries its books"
                    };
                    self.failures.connection(at, reason, then, Instant::now());
                    if again {
                        // A reconnect is of a connection that had opened;
                        // a failed attempt is counted apart
                        // (`stream_ended`).
                        if was_open {
                            FeedStats::add(&self.stats.reconnects, 1);
                            FeedStats::add(&self.stats.venues[v].reconnects, 1);
                            self.venues[v].recorder.add(Counter::Reconnects, 1);
                        }
                        Reconnect::Yes
                    } else {
                        self.links.remove(&id);
                        self.stream_urls.remove(&id);
                        Reconnect::No
                    }
                }
            }
            Some(Link::Fetch(v, instrument)) => {
                if matches!(reason, Disconnect::Fetched) || self.stopping {
                    self.links.remove(&id);
                    // `Fetched` follows the answer, which said whether the
                    // book wants another; a fetch ended by the shutdown
                    // gave none.
                    if !matches!(reason, Disconnect::Fetched)
                        && let Some(w) = self.venues[v]
                            .snapshot_wanted
                            .get_mut(instrument.0 as usize)
                    {
                        *w = false;
                    }
                    Reconnect::No
                } else {
                    // Asked again after the book's backoff, through the
                    // venue's REST budget like every fetch (a retry by the
                    // driver would go around both, and around a ban); the
                    // book keeps buffering diffs meanwhile.
                    self.links.remove(&id);
                    FeedStats::add(&self.stats.fetch_failures, 1);
                    let at = Site {
                        stats: &self.stats.venues[v],
                        venue: v,
                        url: &self.venues[v].rest_url,
                    };
                    let then = "fetching again after a backoff";
                    self.failures.connection(at, reason, then, Instant::now());
                    self.fetch_answered(v, instrument, false);
                    Reconnect::No
                }
            }
            Some(Link::Trade(t)) => self.trade_close(t, id, reason),
            None => Reconnect::No,
        }
    }
}

#[cfg(test)]
mod tests;
mod trading;
