//! The venues tickwire speaks to, by name: their connection plans, how a
//! broken book of theirs is recovered, and the scales their numbers need.

use std::fmt;
use std::str::FromStr;

use crate::binance::Market;
use crate::event::InstrumentSpec;
use crate::model::Venue;
use crate::plan::{self, BookShape, BybitCategory, Channels, ConnectionPlan, PlanError};
use crate::sync::{Chain, SyncConfig};

/// The adapter family of a venue: one per exchange protocol, with the
/// market or category where an exchange has several.
#[derive(Clone, Copy)]
enum Family {
    Binance(Market),
    /// Binance spot's SBE streams: spot's books, snapshots and adapter,
    /// its own hosts and stream names.
    BinanceSbe,
    Bybit(BybitCategory),
    Okx,
    Kraken,
    Coinbase,
    Deribit,
}

impl Venue {
    /// Every venue, with the name [`FromStr`] takes.
    pub const ALL: [(&'static str, Venue); 11] = [
        ("binance-spot", Venue::BinanceSpot),
        ("binance-spot-sbe", Venue::BinanceSpotSbe),
        ("binance-usdm", Venue::BinanceUsdM),
        ("binance-coinm", Venue::BinanceCoinM),
        ("okx", Venue::Okx),
        ("bybit-spot", Venue::BybitSpot),
        ("bybit-linear", Venue::BybitLinear),
        ("bybit-inverse", Venue::BybitInverse),
        ("kraken", Venue::Kraken),
        ("coinbase", Venue::Coinbase),
        ("deribit", Venue::Deribit),
    ];

    /// The venue's name, as [`FromStr`] takes it.
    pub fn name(self) -> &'static str {
        Venue::ALL
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("?", |(n, _)| n)
    }

    /// Which adapter family speaks the venue: every venue named, so that
    /// a new one must say which plans, book shape and resubscription are
    /// its own (no venue falls through to another's).
    fn family(self) -> Family {
        match self {
            Venue::BinanceSpot => Family::Binance(Market::Spot),
            Venue::BinanceSpotSbe => Family::BinanceSbe,
            Venue::BinanceUsdM => Family::Binance(Market::UsdM),
            Venue::BinanceCoinM => Family::Binance(Market::CoinM),
            Venue::Okx => Family::Okx,
            Venue::BybitSpot => Family::Bybit(BybitCategory::Spot),
            Venue::BybitLinear => Family::Bybit(BybitCategory::Linear),
            Venue::BybitInverse => Family::Bybit(BybitCategory::Inverse),
            Venue::Kraken => Family::Kraken,
            Venue::Coinbase => Family::Coinbase,
            Venue::Deribit => Family::Deribit,
        }
    }

    /// The Binance market, for the Binance venues (spot for the SBE
    /// streams: its books, REST snapshots and adapter are spot's).
    pub fn binance_market(self) -> Option<Market> {
        match self.family() {
            Family::Binance(market) => Some(market),
            Family::BinanceSbe => Some(Market::Spot),
            Family::Okx
            | Family::Bybit(_)
            | Family::Kraken
            | Family::Coinbase
            | Family::Deribit => None,
        }
    }

    /// The Bybit category, for the Bybit venues.
    pub fn bybit_category(self) -> Option<BybitCategory> {
        match self.family() {
            Family::Bybit(category) => Some(category),
            Family::Binance(_)
            | Family::BinanceSbe
            | Family::Okx
            | Family::Kraken
            | Family::Coinbase
            | Family::Deribit => None,
        }
    }

    /// The public hosts the feed connects to for this venue: its streams
    /// and, for Binance, its REST snapshots (the plans' hosts; a test keeps
    /// them equal).
    pub fn hosts(self) -> &'static [&'static str] {
        match self {
            Venue::BinanceSpot => &["stream.binance.com", "api.binance.com"],
            Venue::BinanceSpotSbe => &["stream-sbe.binance.com", "api.binance.com"],
            Venue::BinanceUsdM => &["fstream.binance.com", "fapi.binance.com"],
            Venue::BinanceCoinM => &["dstream.binance.com", "dapi.binance.com"],
            Venue::Okx => &["ws.okx.com"],
            Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => &["stream.bybit.com"],
            Venue::Kraken => &["ws.kraken.com"],
            Venue::Coinbase => &["advanced-trade-ws.coinbase.com"],
            Venue::Deribit => &["www.deribit.com"],
        }
    }

    /// The connections `instruments` need on this venue.
    pub fn plans(
        self,
        instruments: &[InstrumentSpec],
        channels: Channels,
    ) -> Result<Vec<ConnectionPlan>, PlanError> {
        match self.family() {
            Family::Binance(market) => plan::binance::plan(market, instruments, channels),
            Family::BinanceSbe => plan::binance::plan_sbe(instruments, channels),
            Family::Bybit(category) => plan::bybit::plan(category, instruments, channels),
            Family::Okx => plan::okx::plan(instruments, channels),
            Family::Kraken => plan::kraken::plan(instruments, channels),
            Family::Coinbase => plan::coinbase::plan(instruments, channels),
            Family::Deribit => plan::deribit::plan(instruments, channels),
        }
    }

    /// How a book showing `depth` levels is kept on this venue.
    pub fn book_shape(self, depth: usize) -> BookShape {
        match self.family() {
            Family::Binance(market) => plan::binance::book_shape(market, depth),
            Family::BinanceSbe => plan::binance::book_shape(Market::Spot, depth),
            Family::Bybit(_) => plan::bybit::book_shape(depth),
            Family::Okx => plan::okx::book_shape(depth),
            Family::Kraken => plan::kraken::book_shape(depth),
            Family::Coinbase => plan::coinbase::book_shape(depth),
            Family::Deribit => plan::deribit::book_shape(depth),
        }
    }

    /// How the venue chains its book updates.
    pub fn chain(self) -> Chain {
        match self {
            Venue::BinanceSpot | Venue::BinanceSpotSbe => Chain::BinanceSpot,
            Venue::BinanceUsdM | Venue::BinanceCoinM => Chain::BinanceFutures,
            Venue::Okx => Chain::OkxSeq,
            Venue::Kraken => Chain::Kraken,
            Venue::Coinbase => Chain::Coinbase,
            Venue::Deribit => Chain::Deribit,
            Venue::BybitSpot | Venue::BybitLinear | Venue::BybitInverse => Chain::Bybit,
        }
    }

    /// The sync engine's configuration for a book showing `depth` levels
    /// (what its adapter allocates).
    pub fn sync_config(self, depth: usize) -> SyncConfig {
        SyncConfig::for_book(self.chain(), depth, self.book_shape(depth))
    }

    /// Whether a broken book is recovered with a REST snapshot (Binance)
    /// rather than by resubscribing its channel.
    pub fn rest_snapshots(self) -> bool {
        self.binance_market().is_some()
    }

    /// The text frames that make the venue send a fresh snapshot of one
    /// instrument's book on the connection that carries it (unsubscribe,
    /// then subscribe); empty where books are recovered from REST
    /// snapshots.
    pub fn resubscribe(self, instrument: &InstrumentSpec) -> Vec<String> {
        match self.family() {
            Family::Binance(_) | Family::BinanceSbe => Vec::new(),
            Family::Bybit(_) => plan::bybit::resubscribe(instrument),
            Family::Okx => plan::okx::resubscribe(instrument),
            Family::Kraken => plan::kraken::resubscribe(instrument),
            Family::Coinbase => plan::coinbase::resubscribe(instrument),
            Family::Deribit => plan::deribit::resubscribe(instrument),
        }
    }

    /// Price and size decimals that hold every value the venue puts on the
    /// wire, for instruments whose scales are not given: no valid message
    /// is refused for precision. An `i64` then holds sizes up to about
    /// 9.2e18 / 10^size decimals.
    ///
    /// - Binance: every price and quantity has exactly 8 decimals on spot
    ///   (`"191.38900600"`, more than the symbol's step size may say, as
    ///   levels placed before a step change keep theirs), and futures
    ///   never more ("pricePrecision", "quantityPrecision" at most 8).
    /// - OKX, Bybit, Coinbase: decimal strings at the instrument's tick
    ///   and lot precision, which no listed instrument takes past 8
    ///   decimals for sizes; prices of the smallest coins reach 10.
    /// - Kraken v2: numbers at the pair's `price_precision` and
    ///   `qty_precision` (up to 10 and 8).
    /// - Deribit: prices at the tick (options 4 decimals), amounts in
    ///   contracts or coins (up to 8 decimals).
    pub fn default_scales(self) -> (u8, u8) {
        match self.family() {
            Family::Binance(_) | Family::BinanceSbe | Family::Deribit => (8, 8),
            Family::Okx | Family::Bybit(_) | Family::Kraken | Family::Coinbase => (10, 8),
        }
    }
}

impl fmt::Display for Venue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Venue {
    type Err = String;

    fn from_str(s: &str) -> Result<Venue, String> {
        if s == "bybit" {
            return Err(
                "`bybit`: say which market: bybit-spot, bybit-linear or bybit-inverse".to_owned(),
            );
        }
        Venue::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                let names: Vec<&str> = Venue::ALL.iter().map(|(n, _)| *n).collect();
                format!("`{s}` is not a venue (one of {})", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symbol each venue lists.
    fn symbol(venue: Venue) -> &'static str {
        match venue {
            Venue::Okx => "BTC-USDT",
            Venue::Coinbase => "BTC-USD",
            Venue::Kraken => "BTC/USD",
            Venue::Deribit => "BTC-PERPETUAL",
            Venue::BinanceCoinM => "BTCUSD_PERP",
            Venue::BybitInverse => "BTCUSD",
            Venue::BinanceSpot
            | Venue::BinanceSpotSbe
            | Venue::BinanceUsdM
            | Venue::BybitSpot
            | Venue::BybitLinear => "BTCUSDT",
        }
    }

    #[test]
    fn each_venues_hosts_are_the_hosts_its_plans_connect_to() {
        for (name, venue) in Venue::ALL {
            let spec = InstrumentSpec::new(symbol(venue), 1, 8, 20);
            let plans = venue.plans(&[spec], Channels::default()).unwrap();
            let mut hosts: Vec<&str> = plans.iter().map(|p| p.host.as_str()).collect();
            if let Some(m) = venue.binance_market() {
                hosts.push(plan::snapshot_path(m, symbol(venue), 20).0);
            }
            hosts.sort_unstable();
            hosts.dedup();
            let mut expected = venue.hosts().to_vec();
            expected.sort_unstable();
            assert_eq!(hosts, expected, "{name}");
        }
    }

    #[test]
    fn names_round_trip_and_bybit_needs_its_market() {
        for (name, venue) in Venue::ALL {
            assert_eq!(name.parse::<Venue>(), Ok(venue));
            assert_eq!(venue.to_string(), name);
        }
        let e = "bybit".parse::<Venue>().unwrap_err();
        assert!(e.contains("bybit-linear"), "{e}");
        assert!("binance".parse::<Venue>().is_err());
    }
}
