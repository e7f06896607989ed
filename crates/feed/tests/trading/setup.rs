//! What a user gets for a trading setup the feed cannot run: a
//! `SetupError::Trade` naming the venue and what is wrong (with what would
//! do), at build time, before anything connects.

use tickwire_feed::live::VenueSetup;
use tickwire_feed::{Credentials, Feed, FeedError, SetupError, TradeSetup, Update};
use tickwire_venues::{InstrumentSpec, Venue};

/// A feed's venue: its name, the venue, a symbol.
type Listed<'a> = (&'a str, Venue, &'a str);

/// A venue to trade, by name, and the client id prefix.
type Traded<'a> = (&'a str, &'a str);

/// Builds a feed of `venues` trading `trades`: its refusal (the venue it
/// names, and what it says).
fn refusal(venues: &[Listed<'_>], trades: &[Traded<'_>]) -> (String, String) {
    let mut builder = Feed::builder().check_instruments(false);
    for &(name, venue, symbol) in venues {
        builder = builder.setup(VenueSetup::new(
            name,
            venue,
            vec![InstrumentSpec::new(symbol, 2, 4, 10)],
        ));
    }
    for &(name, prefix) in trades {
        // A throw-away secret: nothing connects.
        let credentials = Credentials::hmac("key", b"throw-away");
        builder = builder.trade(name, TradeSetup::new(credentials, prefix));
    }
    match builder.build_with(|_: &Update<'_>| {}) {
        Err(FeedError::Setup(e @ SetupError::Trade { .. })) => {
            let SetupError::Trade { venue, .. } = &e else {
                unreachable!()
            };
            (venue.clone(), e.to_string())
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("built: {venues:?} trading {trades:?}"),
    }
}

#[test]
fn a_trading_setup_that_cannot_run_is_refused_with_what_is_wrong() {
    let deribit = ("deribit", Venue::Deribit, "BTC-PERPETUAL");
    let okx = ("okx", Venue::Okx, "BTC-USDT");
    let cases: [(&[Listed<'_>], &[Traded<'_>], &str, &str); 4] = [
        (
            &[deribit, okx],
            &[("deribti", "bot")],
            "deribti",
            "trading venue `deribti`: not one of the feed's venues (deribit, okx)",
        ),
        (
            &[deribit, okx],
            &[("okx", "bot")],
            "okx",
            "trading venue `okx`: order entry for okx is not built in (it is for deribit and binance-spot)",
        ),
        (
            &[deribit],
            &[("deribit", "my-bot")],
            "deribit",
            "trading venue `deribit`: the client order id prefix \"my-bot\" is not 1 to 12 letters and digits",
        ),
        (
            &[deribit],
            &[("deribit", "bot"), ("deribit", "bot2")],
            "deribit",
            "trading venue `deribit`: traded twice",
        ),
    ];
    for (venues, trades, venue, said) in cases {
        assert_eq!(refusal(venues, trades), (venue.to_owned(), said.to_owned()));
    }
}
