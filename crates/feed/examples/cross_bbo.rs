//! The best bid and offer for BTC across four venues at once, on one
//! thread: each venue's book held by the feed, the cross-venue best
//! recomputed on every update, and said whenever it changes (or crosses:
//! one venue's bid above another's ask, an arbitrage on paper).
//!
//!     cargo run --release -p tickwire-feed --example cross_bbo [-- --real] [--seconds N]
//!
//! By default against exchange simulators started in this process.

#![allow(clippy::print_stdout)] // It prints: that is what it is for.

use std::time::{Duration, Instant};

use tickwire_feed::{Feed, Fixed, Update};

/// The venues and how each writes BTC against dollars.
const VENUES: [(&str, &str); 4] = [
    ("binance-spot", "BTCUSDT:5"),
    ("okx", "BTC-USDT:5"),
    ("kraken", "BTC/USD:10"),
    ("coinbase", "BTC-USD:5"),
];

/// Each venue's best bid and ask, as exact decimals.
type Tops = [Option<(Fixed, Fixed)>; VENUES.len()];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let real = args.iter().any(|a| a == "--real");
    let seconds = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1)?.parse().ok());
    let mut builder = Feed::builder().simulated(!real);
    for (venue, instrument) in VENUES {
        builder = builder.venue(venue, &[instrument]);
    }
    let mut tops: Tops = [None; VENUES.len()];
    let mut last = String::new();
    let mut feed = builder.build_with(move |u: &Update<'_>| {
        for (id, book) in u.books() {
            // None: the venue's book is not valid now, so it has no top.
            tops[u.venue_id().index()] = book
                .and_then(|b| b.top())
                .map(|(bid, ask)| (u.price(id, bid.price), u.price(id, ask.price)));
        }
        let line = best(&tops);
        if line != last {
            println!("{line}");
            last = line;
        }
    })?;
    let end = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    while end.is_none_or(|end| Instant::now() < end) {
        feed.poll()?;
    }
    Ok(())
}

/// The best bid and ask across venues, and where each is.
fn best(tops: &Tops) -> String {
    let held = || {
        tops.iter()
            .enumerate()
            .filter_map(|(v, t)| Some((v, (*t)?)))
    };
    let bid = held().max_by(|a, b| a.1.0.to_f64().total_cmp(&b.1.0.to_f64()));
    let ask = held().min_by(|a, b| a.1.1.to_f64().total_cmp(&b.1.1.to_f64()));
    match (bid, ask) {
        (Some((bv, (bid, _))), Some((av, (_, ask)))) => format!(
            "best bid {bid} on {}, best ask {ask} on {}{}",
            VENUES[bv].0,
            VENUES[av].0,
            if bid.to_f64() >= ask.to_f64() {
                "  CROSSED"
            } else {
                ""
            }
        ),
        _ => "no book valid yet".into(),
    }
}
