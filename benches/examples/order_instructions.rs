//! Runs `<impl>` (`copy-only`, `tickwire` or `serde_json`) of the order
//! path's round (`src/orders.rs`) on `<venue>` (`deribit`, `binance`) a
//! given number of times, so that `benches/order_instructions.sh` can count
//! its instructions with callgrind (N and 2N rounds; the difference over N
//! is a round's cost without the set-up).
//!
//! `cargo run --profile bench -p tickwire-benches --example order_instructions -- tickwire deribit 1000`

use std::process::ExitCode;

use tickwire_benches::orders::{CopyOnly, OrderVenue, Serde, Tickwire};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, venue, rounds] = &args[..] else {
        eprintln!("usage: order_instructions <impl> <venue> <rounds>");
        return ExitCode::FAILURE;
    };
    let rounds: usize = rounds.parse().expect("rounds is a number");
    let Some(venue) = OrderVenue::ALL.into_iter().find(|v| v.name() == venue) else {
        eprintln!("venues: deribit, binance");
        return ExitCode::FAILURE;
    };
    let mut round: Box<dyn FnMut() -> usize> = match name.as_str() {
        "copy-only" => {
            let mut r = CopyOnly::new(venue);
            Box::new(move || r.round())
        }
        "tickwire" => {
            let mut r = Tickwire::new(venue);
            Box::new(move || r.round())
        }
        "serde_json" => {
            let mut r = Serde::new(venue);
            Box::new(move || r.round())
        }
        _ => {
            eprintln!("impls: copy-only, tickwire, serde_json");
            return ExitCode::FAILURE;
        }
    };
    let mut total = 0;
    for _ in 0..rounds {
        total += round();
    }
    std::hint::black_box(total);
    ExitCode::SUCCESS
}
