//! `subscribe`: the events a feed publishes, read back in another process
//! (from Aeron, or from the shared-memory ring) as JSON Lines or as a line
//! of statistics a second. Both sources go through the same [`Delivery`],
//! so their `delivered` stages compare.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tickwire_feed::Event;
use tickwire_feed::shm::{Read, Reader, RingInstrument};
use tickwire_feed::sink::{Encoder, Instrument};
use tickwire_tsc::{Calibration, Clock, HistogramConfig, Stage, StageSet};

use crate::cli::SubscribeArgs;
use crate::error::{CliError, CliResult};

/// Runs `subscribe` (refused for Aeron in a build without it).
pub(crate) fn subscribe(args: &SubscribeArgs) -> CliResult {
    match (&args.channel, &args.shm) {
        (Some(_), _) => {
            #[cfg(feature = "aeron")]
            {
                with_aeron::subscribe(args)
            }
            #[cfg(not(feature = "aeron"))]
            {
                Err(CliError::Refused(
                    "tickwire-feed subscribe: this tickwire-feed was built without Aeron: build \
                     it with `cargo build --release --features aeron` (docs/deployment.md)"
                        .into(),
                ))
            }
        }
        (None, Some(path)) => ring(args, path),
        (None, None) => Err(CliError::Refused(
            "tickwire-feed subscribe: give --aeron CHANNEL (with --stream) or --shm PATH".into(),
        )),
    }
}

fn refuse(e: &dyn std::fmt::Display) -> CliError {
    CliError::Refused(format!("tickwire-feed subscribe: {e}"))
}

fn write_failed(e: &io::Error) -> CliError {
    CliError::Failed(format!("tickwire-feed subscribe: writing: {e}"))
}

/// Events held while their publisher's table has not come whole (a
/// subscriber that joined a flowing stream waits up to a second for it);
/// past this the oldest are dropped and said.
const PENDING: usize = 1 << 16;

/// One publisher's JSON Lines writer, once its table is whole.
struct Named {
    publisher: u32,
    encoder: Encoder,
}

/// Where each event read goes, whatever the source: the `delivered`
/// stage (the feed's read to this receive, on the host's TSC), the counts,
/// and the JSON Lines (or nothing, with `--stats`).
struct Delivery {
    calibration: Calibration,
    clock: Clock,
    all: StageSet,
    window: StageSet,
    out: Option<Box<dyn Write>>,
    named: Vec<Named>,
    pending: VecDeque<(u32, Event, u64, Option<u64>)>,
    pending_dropped: u64,
    line: Vec<u8>,
    events: u64,
    failure: Option<io::Error>,
    /// `delivered` on the wall clock (another host's feed) rather than
    /// the TSC both share on one host.
    wall: bool,
    /// Messages that did not read (the first said).
    bad: u64,
}

impl Delivery {
    fn new(args: &SubscribeArgs) -> Result<Delivery, CliError> {
        let out: Option<Box<dyn Write>> = if args.stats {
            None
        } else {
            Some(match &args.out {
                Some(p) => {
                    Box::new(BufWriter::new(File::create(p).map_err(|e| {
                        refuse(&format_args!("--out {}: {e}", p.display()))
                    })?))
                }
                None => Box::new(BufWriter::new(io::stdout().lock())),
            })
        };
        let calibration = tickwire_tsc::calibration();
        let mut d = Delivery {
            calibration,
            clock: calibration.clock(),
            all: StageSet::new(HistogramConfig::default()),
            window: StageSet::new(HistogramConfig::default()),
            out,
            named: Vec::new(),
            pending: VecDeque::new(),
            pending_dropped: 0,
            line: Vec::with_capacity(1 << 12),
            events: 0,
            failure: None,
            wall: args.wall,
            bad: 0,
        };
        if let Some(o) = d.out.as_mut() {
            Encoder::header(&mut d.line);
            o.write_all(&d.line).map_err(|e| write_failed(&e))?;
        }
        Ok(d)
    }

    /// An event of `publisher`, read now; `lost` events were lost just
    /// before it (a `dropped` line first).
    fn event(&mut self, publisher: u32, event: Event, unix_ns: u64, lost: Option<u64>) {
        let now = self.clock.now();
        let ns = if self.wall {
            self.calibration.to_unix_ns(now).saturating_sub(unix_ns)
        } else {
            self.calibration.ns_between(event.recv_tsc, now)
        };
        self.all.record(Stage::Delivered, ns);
        self.window.record(Stage::Delivered, ns);
        self.events += 1;
        let Some(o) = self.out.as_mut() else { return };
        if let Some(n) = self.named.iter_mut().find(|n| n.publisher == publisher) {
            self.line.clear();
            if let Some(lost) = lost {
                Encoder::dropped(lost, &mut self.line);
                // A snapshot being collected lost levels too.
                n.encoder.forget_snapshots();
            }
            n.encoder.encode(&event, unix_ns, &mut self.line);
            if let Err(e) = o.write_all(&self.line) {
                self.failure.get_or_insert(e);
            }
        } else {
            if self.pending.len() == PENDING {
                self.pending.pop_front();
                self.pending_dropped += 1;
            }
            self.pending.push_back((publisher, event, unix_ns, lost));
        }
    }

    /// Whether `publisher`'s table has come whole.
    #[cfg_attr(not(feature = "aeron"), allow(dead_code))]
    fn has_table(&self, publisher: u32) -> bool {
        self.named.iter().any(|n| n.publisher == publisher)
    }

    /// A message that did not read: counted, the first said.
    #[cfg_attr(not(feature = "aeron"), allow(dead_code))]
    fn bad(&mut self, why: &dyn std::fmt::Display) {
        self.bad += 1;
        if self.bad == 1 {
            log::warn!("a message that does not read: {why} (the others like it are counted)");
        }
    }

    /// `publisher`'s whole table: its events held so far are written.
    fn table(&mut self, publisher: u32, table: Vec<RingInstrument>) {
        if self.named.iter().any(|n| n.publisher == publisher) {
            return;
        }
        let names = table
            .into_iter()
            .map(|i| Instrument {
                venue: i.venue,
                symbol: i.symbol,
                price_scale: i.price_scale,
                size_scale: i.size_scale,
            })
            .collect();
        let mut n = Named {
            publisher,
            encoder: Encoder::new(names),
        };
        if let Some(o) = self.out.as_mut() {
            for (_, e, unix_ns, lost) in self.pending.iter().filter(|p| p.0 == publisher) {
                self.line.clear();
                if let Some(lost) = lost {
                    Encoder::dropped(*lost, &mut self.line);
                    n.encoder.forget_snapshots();
                }
                n.encoder.encode(e, *unix_ns, &mut self.line);
                if let Err(e) = o.write_all(&self.line) {
                    self.failure.get_or_insert(e);
                }
            }
            self.pending.retain(|p| p.0 != publisher);
        }
        self.named.push(n);
    }

    fn check(&mut self) -> Result<(), CliError> {
        match self.failure.take() {
            Some(e) => Err(write_failed(&e)),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> Result<(), CliError> {
        self.check()?;
        if let Some(o) = self.out.as_mut() {
            o.flush().map_err(|e| write_failed(&e))?;
        }
        Ok(())
    }

    /// Events held for want of a table, or dropped from that hold (a
    /// ring's table comes with it: Aeron's alone).
    #[cfg_attr(not(feature = "aeron"), allow(dead_code))]
    fn unnamed(&self) -> u64 {
        self.pending.len() as u64 + self.pending_dropped
    }
}

/// The `delivered` stage's p50/p99/p99.9/max, in microseconds.
fn percentiles(s: &StageSet) -> String {
    let h = s.get(Stage::Delivered);
    if h.is_empty() {
        return "-".into();
    }
    let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    format!(
        "p50 {:.1} us  p99 {:.1} us  p99.9 {:.1} us  max {:.1} us",
        us(0.5),
        us(0.99),
        us(0.999),
        h.max() as f64 / 1000.0
    )
}

/// The loop both sources share: stop conditions, idling, the stats line.
struct Pace {
    started: Instant,
    last_event: Option<Instant>,
    last_line: (Instant, u64),
    idle_polls: u32,
}

impl Pace {
    fn new() -> Pace {
        Pace {
            started: Instant::now(),
            last_event: None,
            last_line: (Instant::now(), 0),
            idle_polls: 0,
        }
    }

    /// How many more events to read in one go: `--count`'s rest, at most
    /// 256.
    fn budget(args: &SubscribeArgs, events: u64) -> usize {
        args.count
            .map_or(256, |c| c.saturating_sub(events).min(256) as usize)
    }

    fn done(
        &self,
        args: &SubscribeArgs,
        stop: &std::sync::atomic::AtomicBool,
        events: u64,
    ) -> bool {
        stop.load(Ordering::Relaxed)
            || args.count.is_some_and(|c| events >= c)
            || args.duration.is_some_and(|d| self.started.elapsed() >= d)
            || args
                .idle
                .zip(self.last_event)
                .is_some_and(|(d, at)| at.elapsed() >= d)
    }

    /// After a poll that read `read` messages.
    fn after(&mut self, args: &SubscribeArgs, read: usize) {
        if read > 0 {
            self.idle_polls = 0;
            self.last_event = Some(Instant::now());
        } else if args.busy {
            std::hint::spin_loop();
        } else {
            self.idle_polls = self.idle_polls.saturating_add(1);
            if self.idle_polls < 1000 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    /// The stats line, once a second (with `--stats`).
    fn line(&mut self, args: &SubscribeArgs, d: &mut Delivery, counts: impl FnOnce() -> String) {
        if !args.stats || self.last_line.0.elapsed() < Duration::from_secs(1) {
            return;
        }
        let counts = counts();
        let rate = (d.events - self.last_line.1) as f64 / self.last_line.0.elapsed().as_secs_f64();
        eprintln!(
            "{:>7.1}s {:>10.0} events/s {:>11} events  {counts}  delivered {}",
            self.started.elapsed().as_secs_f64(),
            rate,
            d.events,
            percentiles(&d.window)
        );
        d.window.reset();
        self.last_line = (Instant::now(), d.events);
    }
}

/// `--shm PATH`: the ring's events, as a ring reader reads them (a lap
/// lost is said as a `dropped` line, and counted).
fn ring(args: &SubscribeArgs, path: &std::path::Path) -> CliResult {
    let mut reader =
        Reader::open(path).map_err(|e| refuse(&format_args!("--shm {}: {e}", path.display())))?;
    let stop = crate::stop_on_signals().map_err(|e| refuse(&e))?;
    let mut d = Delivery::new(args)?;
    eprintln!("tickwire-feed subscribe: the ring at {}", path.display());
    let mut generation = reader.generation() as u32;
    d.table(generation, reader.instruments().to_vec());
    let (mut lost, mut laps, mut reattached) = (None::<u64>, 0u64, 0u64);
    let mut pace = Pace::new();
    while !pace.done(args, &stop, d.events) {
        let mut read = 0;
        for _ in 0..Pace::budget(args, d.events) {
            match reader.read() {
                Read::Event(e) => {
                    let unix_ns = d.calibration.to_unix_ns(e.recv_tsc);
                    d.event(generation, e, unix_ns, lost.take());
                    read += 1;
                }
                Read::Lost(n) => {
                    laps += 1;
                    *lost.get_or_insert(0) += n;
                }
                Read::Reattached { generation: g } => {
                    reattached += 1;
                    generation = g as u32;
                    d.table(generation, reader.instruments().to_vec());
                }
                Read::Empty => break,
            }
        }
        d.check()?;
        pace.after(args, read);
        pace.line(args, &mut d, || {
            format!("laps lost {laps}  reattached {reattached}")
        });
    }
    d.finish()?;
    eprintln!(
        "tickwire-feed subscribe: {} events in {:.1} s, laps lost {laps}, reattached {reattached}; delivered (feed read to this receive) {}",
        d.events,
        pace.started.elapsed().as_secs_f64(),
        percentiles(&d.all)
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "aeron")]
mod with_aeron {
    use std::process::ExitCode;

    use tickwire_feed::aeron::{Client, DriverSetup, Received, Subscriber};
    use tickwire_feed::stream::Step;

    use super::{CliError, CliResult, Delivery, Pace, SubscribeArgs, percentiles, refuse};

    /// How long a subscriber waits for a publisher before saying so.
    const LONELY: std::time::Duration = std::time::Duration::from_secs(5);

    pub(super) fn subscribe(args: &SubscribeArgs) -> CliResult {
        let channel = args.channel.as_deref().unwrap_or_default();
        let Some(stream) = args.stream else {
            return Err(refuse(&"--aeron needs --stream"));
        };
        let driver = if args.embedded_driver {
            DriverSetup::Embedded {
                dir: args.dir.clone(),
            }
        } else {
            DriverSetup::External {
                dir: args.dir.clone(),
            }
        };
        let client = Client::start(&driver).map_err(|e| refuse(&e))?;
        let mut sub = client.subscriber(channel, stream).map_err(|e| refuse(&e))?;
        let stop = crate::stop_on_signals().map_err(|e| refuse(&e))?;
        let mut d = Delivery::new(args)?;
        // Said once the subscription is in place: a test (or a script)
        // starts the feed after this line.
        eprintln!(
            "tickwire-feed subscribe: {channel} stream {stream}, media driver in {}",
            client.dir()
        );
        let mut pace = Pace::new();
        // A wrong channel, stream id or driver directory reads nothing:
        // said once, after a few seconds without a publisher.
        let mut said_alone = false;
        while !pace.done(args, &stop, d.events) {
            if !said_alone && pace.started.elapsed() > LONELY && !sub.is_connected() {
                said_alone = true;
                eprintln!(
                    "tickwire-feed subscribe: no publisher on {channel} stream {stream} after {} s \
                     (is a feed running with [sinks.aeron] on this channel and stream, through the \
                     media driver in {}?); waiting",
                    LONELY.as_secs(),
                    client.dir()
                );
            }
            let read = sub
                .poll(Pace::budget(args, d.events), |r| match r {
                    Received::Event {
                        source,
                        event,
                        step,
                        unix_ns,
                        ..
                    } => {
                        let lost = match step {
                            Step::Gap { lost } => Some(lost),
                            _ => None,
                        };
                        d.event(source.publisher, event, unix_ns, lost);
                    }
                    Received::Table { source } => {
                        if !d.has_table(source.publisher)
                            && let Some(table) = source.instruments()
                        {
                            d.table(source.publisher, table);
                        }
                    }
                    Received::Bad(why) => d.bad(&why),
                })
                .map_err(|e| CliError::Failed(format!("tickwire-feed subscribe: {e}")))?;
            d.check()?;
            pace.after(args, read);
            pace.line(args, &mut d, || sequence_line(&sub));
        }
        d.finish()?;
        // This process's own driver: what it did on the wire (a NAK is a
        // gap it saw in the stream and asked the sender to repair).
        let driver_line = if args.embedded_driver {
            let c = |label| client.system_counter(label).unwrap_or(-1);
            format!(
                "; driver: NAKs sent {}, bytes received {}",
                c("NAKs sent"),
                c("Bytes received")
            )
        } else {
            String::new()
        };
        eprintln!(
            "tickwire-feed subscribe: {} events in {:.1} s, {}, {} unnamed dropped; delivered (feed read to this receive) {}{driver_line}",
            d.events,
            pace.started.elapsed().as_secs_f64(),
            sequence_line(&sub),
            d.unnamed(),
            percentiles(&d.all)
        );
        Ok(ExitCode::SUCCESS)
    }

    /// Publishers, gaps and lost events, and messages that did not read.
    fn sequence_line(sub: &Subscriber) -> String {
        let (mut gaps, mut lost) = (0, 0);
        for s in sub.sources() {
            gaps += s.sequence.gaps;
            lost += s.sequence.lost;
        }
        format!(
            "publishers {}  gaps {gaps}  lost {lost}  bad {}",
            sub.sources().len(),
            sub.bad()
        )
    }
}
