//! Venues' own instrument lists: the documented answer of each venue's
//! instrument endpoint, parsed into a [`Listing`] of [`Listed`]
//! instruments (the symbol as the venue spells it, its trading status,
//! tick and lot size, and the price and size decimals those increments
//! need). Pure parsing: which requests to make ([`Source`]) is said here,
//! making them is the caller's (only `tickwire-net` does I/O).
//!
//! This runs once at start-up, never on the receive path: it allocates
//! freely and parses with `serde_json`. Increments are kept as the text
//! the venue wrote and decimals are derived from that text
//! ([`increment_decimals`]), never through a float.
//!
//! One module per venue family, each citing the documentation it follows:
//! [`binance`], [`okx`], [`bybit`], [`coinbase`], [`deribit`], [`kraken`].

use crate::Venue;
pub use crate::listed::{
    BadIncrement, Listed, Listing, ListingError, Page, Source, increment_decimals,
};

pub use crate::binance::listing as binance;
pub use crate::bybit::listing as bybit;
pub use crate::coinbase::listing as coinbase;
pub use crate::deribit::listing as deribit;
pub use crate::kraken::listing as kraken;
pub use crate::okx::listing as okx;

#[cfg(test)]
mod tests;

/// Where `venue`'s list comes from. `symbols` are the configured ones:
/// OKX lists options only per instrument family, so each option family
/// they name adds a page.
pub fn source(venue: Venue, symbols: &[&str]) -> Source {
    match venue {
        // The SBE streams' symbols are spot's: its `exchangeInfo`.
        Venue::BinanceSpot | Venue::BinanceSpotSbe | Venue::BinanceUsdM | Venue::BinanceCoinM => {
            let (host, path) = binance::request(venue);
            Source::Rest {
                host,
                paths: vec![path.to_owned()],
            }
        }
        Venue::Okx => Source::Rest {
            host: okx::HOST,
            paths: okx::paths(symbols),
        },
        Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => Source::Rest {
            host: bybit::HOST,
            paths: vec![bybit::path(venue, None)],
        },
        Venue::Coinbase => Source::Rest {
            host: coinbase::HOST,
            paths: vec![coinbase::PATH.to_owned()],
        },
        Venue::Deribit => Source::Rest {
            host: deribit::HOST,
            paths: vec![deribit::PATH.to_owned()],
        },
        Venue::Kraken => Source::WebSocket {
            host: kraken::HOST,
            path: kraken::PATH,
            subscribe: kraken::SUBSCRIBE,
        },
    }
}

/// One REST answer of `venue` (fetched from `path`, which a paginating
/// venue's next page is built from).
pub fn parse_page(venue: Venue, path: &str, body: &str) -> Result<Page, ListingError> {
    match venue {
        Venue::BinanceSpot | Venue::BinanceSpotSbe | Venue::BinanceUsdM | Venue::BinanceCoinM => {
            binance::parse(body).map(Page::whole)
        }
        Venue::Okx => okx::parse(body).map(Page::whole),
        Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => {
            bybit::parse(body).map(|(instruments, cursor)| Page {
                instruments,
                next: cursor.map(|c| bybit::path(venue, Some(&c))),
            })
        }
        Venue::Coinbase => coinbase::parse(body).map(Page::whole),
        Venue::Deribit => deribit::parse(body).map(Page::whole),
        Venue::Kraken => {
            let _ = path;
            kraken::parse_message(body)?
                .map(Page::whole)
                .ok_or_else(|| ListingError::Shape("not an `instrument` snapshot".into()))
        }
    }
}
