//! A venue's adapter as the feed holds it (Binance apart: only it takes
//! REST snapshots), and a received frame as an adapter's input.

use tickwire_net::Payload;
use tickwire_venues::binance::Market;
use tickwire_venues::{
    Input, InstrumentSpec, Venue, VenueAdapter, binance, bybit, coinbase, deribit, kraken, okx,
};

/// A venue adapter, with Binance apart: only it takes REST snapshots.
pub(crate) enum Adapter {
    Binance(Box<binance::Adapter>),
    Other(Box<dyn VenueAdapter>),
}

impl Adapter {
    /// The adapter that speaks `venue`. Every venue is named: a new one
    /// must say which adapter is its own.
    pub(crate) fn new(venue: Venue, instruments: &[InstrumentSpec]) -> Adapter {
        let binance =
            |market| Adapter::Binance(Box::new(binance::Adapter::new(market, instruments)));
        Adapter::Other(match venue {
            // The SBE streams' adapter is spot's: it reads their binary
            // frames (`on_binary`) and their JSON replies alike.
            Venue::BinanceSpot | Venue::BinanceSpotSbe => return binance(Market::Spot),
            Venue::BinanceUsdM => return binance(Market::UsdM),
            Venue::BinanceCoinM => return binance(Market::CoinM),
            Venue::Okx => Box::new(okx::Adapter::new(instruments)),
            Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => {
                Box::new(bybit::Adapter::new(instruments))
            }
            Venue::Kraken => Box::new(kraken::v2::Adapter::new(instruments)),
            Venue::Coinbase => Box::new(coinbase::Adapter::new(instruments)),
            Venue::Deribit => Box::new(deribit::Adapter::new(instruments)),
        })
    }

    pub(crate) fn adapter(&mut self) -> &mut dyn VenueAdapter {
        match self {
            Adapter::Binance(a) => a.as_mut(),
            Adapter::Other(a) => a.as_mut(),
        }
    }

    pub(crate) fn adapter_ref(&self) -> &dyn VenueAdapter {
        match self {
            Adapter::Binance(a) => a.as_ref(),
            Adapter::Other(a) => a.as_ref(),
        }
    }
}

/// A received message as an adapter's [`Input`]: a text frame's text, which
/// the codec checked is UTF-8, and its padded bytes.
pub(crate) struct Frame<'a>(pub(crate) Payload<'a>);

impl<'a> Input<'a> for Frame<'a> {
    fn text(&self) -> Option<&str> {
        self.0.as_str()
    }

    fn into_padded(self) -> (&'a mut [u8], usize) {
        self.0.into_padded()
    }
}
