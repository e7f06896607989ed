//! A bot's side of the shared-memory ring: reads the feed's events from
//! another process, without a system call per event, and prints them,
//! named through the ring's instrument table with decimal prices
//! (`binance-spot BTCUSDT trade 61737.63 x 0.00123000 buy #42`), or, with
//! `--count`, only how many of each kind arrived for each instrument and
//! how many were lost because this reader fell a lap behind. When the feed
//! restarts, its new ring replaces the old at the path: the reader reads
//! what the old one still holds, then moves over, and says so.
//!
//! ```text
//! cargo run --release -p tickwire-feed --example shm_reader -- /dev/shm/tickwire [--count] [--seconds 10] [--from-oldest]
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)] // An example prints what it reads.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tickwire_feed::shm::{Read, Reader};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: shm_reader <ring path> [--count] [--seconds N] [--from-oldest]");
        std::process::exit(2);
    };
    let count_only = args.iter().any(|a| a == "--count");
    let seconds = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .map_or(10, |s| s.parse().expect("--seconds takes a number"));
    let mut reader = match Reader::open(path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    if args.iter().any(|a| a == "--from-oldest") {
        reader.rewind();
    }
    print_table(&reader);
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut lost = 0;
    let mut reattached = 0;
    while Instant::now() < until {
        match reader.read() {
            Read::Event(e) if count_only => {
                let kind = format!("{:?}", e.kind);
                let kind = kind.split([' ', '{', '(']).next().unwrap_or("?");
                let name = match reader.instrument(e.instrument) {
                    Some(i) => format!("{} {} {kind}", i.venue, i.symbol),
                    None => format!("instrument {} {kind}", e.instrument.0),
                };
                *kinds.entry(name).or_default() += 1;
            }
            Read::Event(e) => match reader.instrument(e.instrument) {
                Some(i) => println!("{}", i.describe(&e)),
                // Not in the table: a writer that does not name it.
                None => println!("{e:?}"),
            },
            Read::Lost(n) => lost += n,
            Read::Reattached { generation } => {
                reattached += 1;
                println!(
                    "reattached: the feed restarted; reading its new ring \
                     (generation {generation:016x}) from its first event"
                );
                print_table(&reader);
            }
            // A bot would spin here on its own core; an example naps.
            Read::Empty => std::thread::sleep(Duration::from_micros(50)),
        }
    }
    if count_only {
        for (kind, n) in &kinds {
            println!("{kind:>40} {n}");
        }
    }
    println!("lost (lapped by the writer): {lost}");
    println!(
        "reattached (the feed restarted): {reattached}; the ring now: generation {:016x}, {:?}",
        reader.generation(),
        reader.state()
    );
}

/// The ring's instruments: what its events' ids name.
fn print_table(reader: &Reader) {
    for i in reader.instruments() {
        println!(
            "instrument {}: {} {} (prices {} decimals, sizes {})",
            i.id.0, i.venue, i.symbol, i.price_scale, i.size_scale
        );
    }
}
