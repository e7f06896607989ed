//! A bot that holds Binance's BTCUSDT book and prints its best bid and ask
//! on every update. By default against an exchange simulator it starts in
//! this process (no network); `--real` connects to Binance itself.
//!
//!     cargo run --release -p tickwire-feed --example book_top [-- --real]
//!
//! Snapshots, resubscriptions and reconnects happen inside `poll`; the
//! handler sees each message's book, never a stale or a broken one.

#![allow(clippy::print_stdout)] // It prints: that is what it is for.

use tickwire_feed::{Feed, Update};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let real = std::env::args().any(|a| a == "--real");
    let mut feed = Feed::builder()
        .venue("binance-spot", &["BTCUSDT:20"])
        .simulated(!real)
        .build_with(|u: &Update<'_>| {
            for (id, book) in u.books() {
                if let Some((bid, ask)) = book.and_then(|b| b.top()) {
                    let (venue, symbol) = (u.venue(), u.symbol(id));
                    let bid = format!("{} x {}", u.price(id, bid.price), u.size(id, bid.size));
                    let ask = format!("{} x {}", u.price(id, ask.price), u.size(id, ask.size));
                    println!("{venue} {symbol}  bid {bid}  ask {ask}");
                }
            }
        })?;
    loop {
        feed.poll()?;
    }
}
