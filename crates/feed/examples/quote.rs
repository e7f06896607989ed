//! A bot quoting both sides of Deribit's BTC-PERPETUAL: one bid at the
//! best bid and one ask at the best ask, moved (amended) as the book
//! moves, placed again once done. Ctrl-C (or SIGTERM) stops it through
//! `Feed::run`: the kill switch cancels every order, waits for the
//! answers, then the connections close. Credentials from `DERIBIT_API_KEY` and
//! `DERIBIT_API_SECRET`. `tickwire-feed demo --trade` runs the same
//! strategy against the simulator.
//!
//!     cargo run --release -p tickwire-feed --example quote

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tickwire_feed::{
    ClientOrderId, Credentials, Feed, OrderKind, SessionState, Side, TradeSetup, Update,
};

#[derive(Default)]
struct Quoter {
    /// The working bid and ask, by client id.
    quotes: [Option<ClientOrderId>; 2],
}

impl Quoter {
    fn on_update(&mut self, u: &Update<'_>) {
        for e in u.orders() {
            let side = self.quotes.iter().position(|q| *q == e.cid && q.is_some());
            let done = matches!(
                e.kind,
                OrderKind::Canceled
                    | OrderKind::Rejected { .. }
                    | OrderKind::Filled { leaves: 0, .. }
            );
            if let (true, Some(s)) = (done, side) {
                self.quotes[s] = None;
            }
        }
        let (Some(desk), Some((id, Some(book)))) = (u.desk(), u.books().last()) else {
            return;
        };
        let Some((bid, ask)) = book.top() else { return };
        for (s, (side, price)) in [(Side::Bid, bid.price), (Side::Ask, ask.price)]
            .into_iter()
            .enumerate()
        {
            self.quotes[s] = match self.quotes[s].and_then(|cid| desk.order(cid)) {
                Some(o) if o.price == price => Some(o.cid),
                Some(o) => desk
                    .amend(o.cid, price, o.leaves + o.filled)
                    .ok()
                    .or(Some(o.cid)),
                // Asked for, not yet answered (forgotten if the session was lost).
                None if desk.state() == SessionState::Ready => {
                    self.quotes[s].or_else(|| desk.place(id, side, price, 10).ok())
                }
                None => None,
            };
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trade = TradeSetup::new(Credentials::from_env("DERIBIT")?, "quote");
    let mut quoter = Quoter::default();
    let feed = Feed::builder()
        .venue("deribit", &["BTC-PERPETUAL:10"])
        .trade("deribit", trade)
        .build_with(move |u: &Update<'_>| quoter.on_update(u))?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    feed.run(&stop, Duration::from_secs(2))?;
    Ok(())
}
