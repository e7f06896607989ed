//! `subscribe`: the events a feed publishes on Aeron, read back as JSON
//! Lines or as a line of statistics a second.

use crate::cli::SubscribeArgs;
use crate::error::{CliError, CliResult};

/// Runs `subscribe` (refused in a build without Aeron).
pub(crate) fn subscribe(args: &SubscribeArgs) -> CliResult {
    #[cfg(feature = "aeron")]
    {
        with_aeron::subscribe(args)
    }
    #[cfg(not(feature = "aeron"))]
    {
        let _ = args;
        Err(CliError::Refused(
            "tickwire-feed subscribe: this tickwire-feed was built without Aeron: build it with \
             `cargo build --release --features aeron` (docs/deployment.md)"
                .into(),
        ))
    }
}

#[cfg(feature = "aeron")]
mod with_aeron {
    use std::collections::VecDeque;
    use std::fs::File;
    use std::io::{self, BufWriter, Write};
    use std::process::ExitCode;
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use tickwire_feed::Event;
    use tickwire_feed::aeron::{Client, DriverSetup, Received, Subscriber};
    use tickwire_feed::sink::{Encoder, Instrument};
    use tickwire_feed::stream::Step;
    use tickwire_tsc::{HistogramConfig, Stage, StageSet};

    use super::{CliError, CliResult, SubscribeArgs};

    /// Events held while their publisher's table has not come whole (a
    /// subscriber that joined a flowing stream waits up to a second for
    /// it); past this the oldest are dropped and said.
    const PENDING: usize = 1 << 16;

    /// One publisher's JSON Lines writer, once its table is whole.
    struct Named {
        publisher: u32,
        encoder: Encoder,
    }

    pub(super) fn subscribe(args: &SubscribeArgs) -> CliResult {
        let refuse =
            |e: &dyn std::fmt::Display| CliError::Refused(format!("tickwire-feed subscribe: {e}"));
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
        let mut sub = client
            .subscriber(&args.channel, args.stream)
            .map_err(|e| refuse(&e))?;
        let stop = crate::stop_on_signals().map_err(|e| refuse(&e))?;
        let mut out: Option<Box<dyn Write>> = if args.stats {
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
        // Said once the subscription is in place: a test (or a script)
        // starts the feed after this line.
        eprintln!(
            "tickwire-feed subscribe: {} stream {}, media driver in {}",
            args.channel,
            args.stream,
            client.dir()
        );
        let calibration = tickwire_tsc::calibration();
        let clock = calibration.clock();
        let mut stages = StageSet::new(HistogramConfig::default());
        let mut window = StageSet::new(HistogramConfig::default());
        let mut named: Vec<Named> = Vec::new();
        let mut pending: VecDeque<(u32, Event, u64, Option<u64>)> = VecDeque::new();
        let mut pending_dropped = 0u64;
        let mut line = Vec::with_capacity(1 << 12);
        if let Some(o) = out.as_mut() {
            Encoder::header(&mut line);
            o.write_all(&line).map_err(|e| write_failed(&e))?;
        }
        let started = Instant::now();
        let (mut events, mut last_event) = (0u64, None::<Instant>);
        let mut last_line = (Instant::now(), 0u64);
        let mut idle_polls = 0u32;
        let mut failure: Option<io::Error> = None;
        loop {
            if stop.load(Ordering::Relaxed)
                || args.count.is_some_and(|c| events >= c)
                || args.duration.is_some_and(|d| started.elapsed() >= d)
                || args
                    .idle
                    .zip(last_event)
                    .is_some_and(|(d, at)| at.elapsed() >= d)
            {
                break;
            }
            let read = sub
                .poll(256, |r| match r {
                    Received::Event {
                        source,
                        event,
                        step,
                        unix_ns,
                        ..
                    } => {
                        let now = clock.now();
                        let ns = calibration.ns_between(event.recv_tsc, now);
                        stages.record(Stage::Delivered, ns);
                        window.record(Stage::Delivered, ns);
                        events += 1;
                        let lost = match step {
                            Step::Gap { lost } => Some(lost),
                            _ => None,
                        };
                        let Some(o) = out.as_mut() else { return };
                        if let Some(n) = named.iter_mut().find(|n| n.publisher == source.publisher)
                        {
                            line.clear();
                            if let Some(lost) = lost {
                                Encoder::dropped(lost, &mut line);
                            }
                            n.encoder.encode(&event, unix_ns, &mut line);
                            if let Err(e) = o.write_all(&line) {
                                failure.get_or_insert(e);
                            }
                        } else {
                            if pending.len() == PENDING {
                                pending.pop_front();
                                pending_dropped += 1;
                            }
                            pending.push_back((source.publisher, event, unix_ns, lost));
                        }
                    }
                    Received::Table { source } => {
                        let Some(table) = source.instruments() else {
                            return;
                        };
                        if named.iter().any(|n| n.publisher == source.publisher) {
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
                            publisher: source.publisher,
                            encoder: Encoder::new(names),
                        };
                        // Its events that came before the table, in order.
                        if let Some(o) = out.as_mut() {
                            for (_, e, unix_ns, lost) in
                                pending.iter().filter(|p| p.0 == source.publisher)
                            {
                                line.clear();
                                if let Some(lost) = lost {
                                    Encoder::dropped(*lost, &mut line);
                                }
                                n.encoder.encode(e, *unix_ns, &mut line);
                                if let Err(e) = o.write_all(&line) {
                                    failure.get_or_insert(e);
                                }
                            }
                            pending.retain(|p| p.0 != source.publisher);
                        }
                        named.push(n);
                    }
                    Received::Bad(why) => {
                        log::warn!("a message that does not read: {why}");
                    }
                })
                .map_err(|e| CliError::Failed(format!("tickwire-feed subscribe: {e}")))?;
            if let Some(e) = failure.take() {
                return Err(write_failed(&e));
            }
            if read > 0 {
                idle_polls = 0;
                last_event = Some(Instant::now());
            } else if args.busy {
                std::hint::spin_loop();
            } else {
                idle_polls = idle_polls.saturating_add(1);
                if idle_polls < 1000 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
            if args.stats && last_line.0.elapsed() >= Duration::from_secs(1) {
                let rate = (events - last_line.1) as f64 / last_line.0.elapsed().as_secs_f64();
                eprintln!(
                    "{:>7.1}s {:>10.0} events/s {:>11} events  {}  delivered {}",
                    started.elapsed().as_secs_f64(),
                    rate,
                    events,
                    sequence_line(&sub),
                    percentiles(&window)
                );
                window.reset();
                last_line = (Instant::now(), events);
            }
        }
        if let Some(o) = out.as_mut() {
            o.flush().map_err(|e| write_failed(&e))?;
        }
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
            "tickwire-feed subscribe: {events} events in {:.1} s, {}, {} unnamed dropped; delivered (feed read to this receive) {}{driver_line}",
            started.elapsed().as_secs_f64(),
            sequence_line(&sub),
            pending.len() as u64 + pending_dropped,
            percentiles(&stages)
        );
        Ok(ExitCode::SUCCESS)
    }

    fn write_failed(e: &io::Error) -> CliError {
        CliError::Failed(format!("tickwire-feed subscribe: writing: {e}"))
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

    /// The delivered stage's p50/p99/p99.9/max, in microseconds.
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
}
