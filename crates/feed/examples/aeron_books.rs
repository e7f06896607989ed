//! A bot on another host: keeps every instrument's book from the events a
//! feed publishes on Aeron (`[sinks.aeron]`), and prints each book's top
//! once a second. Books are rebuilt from the events alone
//! (`tickwire_feed::mirror`, the rules in `docs/jsonl.md`): a snapshot,
//! its levels, then `book valid`; a gap in an instrument's book, or in the
//! publisher's own sequence (events lost on the way), makes the books
//! invalid until the next snapshot. A subscriber that joins a flowing
//! stream waits for each book's next snapshot (docs/stream.md).
//!
//! ```text
//! cargo run --release -p tickwire-feed --features aeron --example aeron_books -- \
//!     aeron:udp?endpoint=0.0.0.0:40456 1001 [--embedded-driver] [--dir D] [--seconds N]
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)] // An example prints what it reads.

use std::time::{Duration, Instant};

use tickwire_feed::Side;
use tickwire_feed::aeron::{Client, DriverSetup, Received};
use tickwire_feed::mirror::Mirrors;
use tickwire_feed::stream::Step;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(channel), Some(stream)) = (args.first(), args.get(1).and_then(|s| s.parse().ok()))
    else {
        eprintln!(
            "usage: aeron_books <channel> <stream id> [--embedded-driver] [--dir D] [--seconds N]"
        );
        std::process::exit(2);
    };
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    let dir = value("--dir").map(Into::into);
    let seconds: u64 = value("--seconds").map_or(u64::MAX, |s| s.parse().expect("--seconds N"));
    let driver = if args.iter().any(|a| a == "--embedded-driver") {
        DriverSetup::Embedded { dir }
    } else {
        DriverSetup::External { dir }
    };
    let client = Client::start(&driver).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let mut sub = client.subscriber(channel, stream).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    eprintln!(
        "reading {channel} stream {stream} (media driver in {})",
        client.dir()
    );

    // One publisher's books (a feed thread's): the newest whose table is
    // whole (a restarted feed is a new publisher); another's events are
    // not mixed in.
    let mut books: Option<(u32, Mirrors)> = None;
    // When the followed publisher last sent an event.
    let mut heard = Instant::now();
    let mut names: Vec<String> = Vec::new();
    let mut scales: Vec<u8> = Vec::new();
    let (started, mut shown) = (Instant::now(), Instant::now());
    while started.elapsed() < Duration::from_secs(seconds) {
        let read = sub
            .poll(256, |r| match r {
                Received::Table { source } => {
                    let followed = books.as_ref().map(|b| b.0);
                    // Another publisher is followed once the one followed
                    // has been silent for two seconds.
                    let silent = heard.elapsed() > Duration::from_secs(2);
                    if followed != Some(source.publisher)
                        && (followed.is_none() || silent)
                        && let Some(table) = source.instruments()
                    {
                        if followed.is_some() {
                            eprintln!("a new publisher (the feed restarted?): following it");
                        }
                        names = table
                            .iter()
                            .map(|i| format!("{} {}", i.venue, i.symbol))
                            .collect();
                        scales = table.iter().map(|i| i.price_scale).collect();
                        books = Some((source.publisher, Mirrors::new(table.len())));
                        heard = Instant::now();
                    }
                }
                Received::Event {
                    source,
                    event,
                    step,
                    ..
                } => {
                    let Some((publisher, mirrors)) = books.as_mut() else {
                        return;
                    };
                    if source.publisher != *publisher {
                        return;
                    }
                    heard = Instant::now();
                    if let Step::Gap { lost } = step {
                        eprintln!("{lost} events lost: every book waits for its next snapshot");
                        *mirrors = Mirrors::new(names.len());
                    }
                    mirrors.apply(&event);
                }
                Received::Bad(why) => eprintln!("a message that does not read: {why}"),
            })
            .unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1);
            });
        if read == 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
        if books.is_some() && !sub.is_connected() {
            // The feed is gone: its books are not known any more.
            eprintln!("no publisher connected: books dropped until one is");
            books = None;
        }
        if shown.elapsed() >= Duration::from_secs(1) {
            shown = Instant::now();
            let Some((_, mirrors)) = &books else {
                println!("waiting for a publisher's instrument table");
                continue;
            };
            for (id, name) in names.iter().enumerate() {
                let top = |side| {
                    let level = mirrors.levels(id, side)?.first().copied()?;
                    Some(decimal(level.0, scales[id]))
                };
                match (top(Side::Bid), top(Side::Ask)) {
                    (Some(bid), Some(ask)) => println!("{name}: {bid} / {ask}"),
                    _ => println!("{name}: no valid book yet"),
                }
            }
        }
    }
}

/// `value` with `scale` decimals, as text.
fn decimal(value: i64, scale: u8) -> String {
    let p = 10i64.pow(u32::from(scale));
    if scale == 0 {
        return value.to_string();
    }
    let sign = if value < 0 { "-" } else { "" };
    let v = value.unsigned_abs();
    let p = p as u64;
    format!("{sign}{}.{:0w$}", v / p, v % p, w = usize::from(scale))
}
