//! What each simulated venue lists: a handful of instruments per venue,
//! named as the venue writes them, with the tick and lot the market model
//! moves in.
//!
//! A simulator serves (and so lists) exactly its
//! [`SimConfig::instruments`](crate::SimConfig::instruments); the
//! catalogue ([`SimInstrument::listed`]) is where a feed, a demo or a test
//! picks them from. An instrument outside it (a test's own) is listed too
//! when a simulator serves it: its [`Listing`] is read from its symbol.
//!
//! Every listing is consistent with the market model: the book moves one
//! price unit (10^-`price_scale`) at a time and its sizes are whole size
//! units (10^-`size_scale`), so the tick a list endpoint serves is one
//! price unit and the lot one size unit. The scales are chosen to be the
//! venue's own where the model allows it (Binance spot BTCUSDT tick 0.01,
//! step 0.00001; USD-M BTCUSDT 0.1 and 0.001; Kraken BTC/USD 1 price and
//! 8 size decimals, ...). Where the venue's tick is not a power of ten the
//! model cannot follow it: Deribit's BTC-PERPETUAL ticks by 0.5 and
//! Bybit's inverse BTCUSD by 0.5; here they tick by 0.1 and 0.01.
//! [`SimInstrument::pair`] is the first two of each venue's catalogue,
//! unchanged.

use tickwire_venues::Venue;

use crate::market::SimInstrument;

/// What kind of contract an instrument is, as the list endpoints say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Contract {
    /// A spot pair: sizes in the base asset.
    Spot,
    /// A perpetual swap margined and settled in the quote asset (USD-M,
    /// Bybit linear, OKX `-USDT-SWAP`): sizes in the base asset (OKX:
    /// contracts of `value` base units, in 10^-`value_scale`).
    Linear {
        /// One contract's value in the base asset, in units of
        /// 10^-`value_scale` (OKX `ctVal`; 1 and 0 where sizes are in the
        /// base asset itself).
        value: i64,
        /// The decimals of `value`.
        value_scale: u8,
    },
    /// A perpetual swap margined and settled in the base asset, sized in
    /// contracts worth `usd` of the quote each (COIN-M `contractSize`,
    /// Bybit inverse, Deribit `contract_size`).
    Inverse {
        /// One contract's value in the quote currency.
        usd: u32,
    },
}

/// One listed instrument: the market model's instrument and what a venue's
/// instrument list says of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The instrument (its symbol as the venue writes it, its scales).
    pub instrument: SimInstrument,
    /// The base asset (`BTC`), as the venue's list names it.
    pub base: String,
    /// The quote asset (`USDT`, `USD`).
    pub quote: String,
    /// Spot, linear or inverse.
    pub contract: Contract,
    /// The smallest order size, in size units (10^-`size_scale`).
    pub min_size: i64,
}

impl Listing {
    /// The tick: one price unit, as a decimal string (`"0.01"`).
    pub fn tick_size(&self) -> String {
        unit(self.instrument.price_scale)
    }

    /// The lot (size step): one size unit, as a decimal string.
    pub fn lot_size(&self) -> String {
        unit(self.instrument.size_scale)
    }

    /// How `venue` lists `instrument`: its catalogue entry if it has one of
    /// that symbol, else read from the symbol (`BTC-USDT`, `BTC/USD`,
    /// `BTCUSDT`, `BTCUSD_PERP`, `BTC-PERPETUAL`), a spot pair unless the
    /// symbol or venue says a perpetual, the smallest size one size unit.
    pub fn of(venue: Venue, instrument: &SimInstrument) -> Listing {
        let listed = entries(venue)
            .into_iter()
            .find(|e| e.symbol == instrument.symbol);
        let (base, quote) = split_symbol(venue, &instrument.symbol);
        let contract = listed
            .as_ref()
            .map_or_else(|| contract_of(venue, &instrument.symbol), |e| e.contract);
        let min_size = listed.map_or(1, |e| e.min_size);
        Listing {
            instrument: instrument.clone(),
            base,
            quote,
            contract,
            min_size,
        }
    }
}

impl SimInstrument {
    /// Every instrument `venue`'s simulator can list, named as the venue
    /// names them ([`SimInstrument::pair`] first): pick from it for
    /// [`SimConfig::instruments`](crate::SimConfig::instruments).
    pub fn listed(venue: Venue) -> Vec<SimInstrument> {
        entries(venue).into_iter().map(Entry::instrument).collect()
    }

    /// The catalogue's instrument `symbol` of `venue`, written exactly as
    /// the venue writes it (no case folding: `btcusdt` is not listed).
    pub fn find_listed(venue: Venue, symbol: &str) -> Option<SimInstrument> {
        SimInstrument::listed(venue)
            .into_iter()
            .find(|i| i.symbol == symbol)
    }
}

/// A catalogue entry.
struct Entry {
    symbol: String,
    price_scale: u8,
    size_scale: u8,
    /// The starting mid, in price units.
    mid: i64,
    /// Levels a side.
    levels: usize,
    contract: Contract,
    min_size: i64,
}

impl Entry {
    fn instrument(self) -> SimInstrument {
        SimInstrument {
            symbol: self.symbol,
            price_scale: self.price_scale,
            size_scale: self.size_scale,
            mid: self.mid,
            levels: self.levels,
        }
    }
}

const SPOT: Contract = Contract::Spot;
const LINEAR: Contract = Contract::Linear {
    value: 1,
    value_scale: 0,
};

/// The entry for `symbol`: `price_scale` and `size_scale` decimals, a mid
/// of `mid` price units, 200 levels a side, the smallest size one unit.
fn e(symbol: &str, price_scale: u8, size_scale: u8, mid: i64, c: Contract) -> Entry {
    Entry {
        symbol: symbol.into(),
        price_scale,
        size_scale,
        mid,
        levels: 200,
        contract: c,
        min_size: 1,
    }
}

/// `venue`'s catalogue. The first two are [`SimInstrument::pair`]'s (their
/// scales and mids are the pair's, which many tests rely on); the rest
/// follow the venue's own ticks and steps where they are powers of ten
/// (Binance "Exchange Information" filters, OKX "Get instruments", Bybit
/// "Get Instruments Info", Kraken "Instrument", Coinbase "Get Public
/// Product", Deribit `public/get_instruments`, as of 2026).
fn entries(venue: Venue) -> Vec<Entry> {
    let pair = SimInstrument::pair(venue);
    let (btc_contract, eth_contract) = match venue {
        Venue::BinanceCoinM => (
            Contract::Inverse { usd: 100 },
            Contract::Inverse { usd: 10 },
        ),
        Venue::BybitInverse => (Contract::Inverse { usd: 1 }, Contract::Inverse { usd: 1 }),
        Venue::Deribit => (Contract::Inverse { usd: 10 }, Contract::Inverse { usd: 1 }),
        Venue::BinanceUsdM | Venue::BybitLinear => (LINEAR, LINEAR),
        _ => (SPOT, SPOT),
    };
    let mut out: Vec<Entry> = pair
        .into_iter()
        .zip([btc_contract, eth_contract])
        .map(|(i, contract)| Entry {
            symbol: i.symbol.clone(),
            price_scale: i.price_scale,
            size_scale: i.size_scale,
            mid: i.mid,
            levels: i.levels,
            contract,
            // Deribit's BTC-PERPETUAL trades in 10 USD (`min_trade_amount`
            // 10 with `contract_size` 10); the rest in one unit.
            min_size: if venue == Venue::Deribit && i.symbol.starts_with("BTC") {
                10
            } else {
                1
            },
        })
        .collect();
    let okx_swap = |ct: i64| Contract::Linear {
        value: ct,
        value_scale: 2,
    };
    out.extend(match venue {
        // The SBE streams serve spot's symbols.
        Venue::BinanceSpot | Venue::BinanceSpotSbe => vec![
            e("SOLUSDT", 2, 3, 15_000, SPOT),
            e("BNBUSDT", 2, 3, 60_000, SPOT),
            e("ETHBTC", 5, 4, 5_000, SPOT),
        ],
        Venue::BinanceUsdM => vec![
            e("SOLUSDT", 2, 0, 15_000, LINEAR),
            e("BNBUSDT", 2, 2, 60_000, LINEAR),
        ],
        Venue::BinanceCoinM => vec![e(
            "SOLUSD_PERP",
            2,
            0,
            15_000,
            Contract::Inverse { usd: 10 },
        )],
        Venue::Okx => vec![
            // ctVal 0.01 BTC and 0.1 ETH a contract, lots of 0.01
            // contracts.
            e("BTC-USDT-SWAP", 1, 2, 600_000, okx_swap(1)),
            e("ETH-USDT-SWAP", 2, 2, 300_000, okx_swap(10)),
            e("SOL-USDT", 2, 6, 15_000, SPOT),
        ],
        Venue::BybitSpot => vec![e("SOLUSDT", 2, 3, 15_000, SPOT)],
        Venue::BybitLinear => vec![e("SOLUSDT", 2, 1, 15_000, LINEAR)],
        Venue::BybitInverse => vec![e("XRPUSD", 4, 0, 6_000, Contract::Inverse { usd: 1 })],
        Venue::Kraken => vec![
            e("SOL/USD", 2, 8, 15_000, SPOT),
            e("BTC/EUR", 1, 8, 550_000, SPOT),
        ],
        Venue::Coinbase => vec![
            e("SOL-USD", 2, 8, 15_000, SPOT),
            e("BTC-EUR", 2, 8, 5_500_000, SPOT),
        ],
        Venue::Deribit => vec![e("SOL_USDC-PERPETUAL", 2, 1, 15_000, LINEAR)],
    });
    if venue == Venue::Kraken {
        // Kraken's `qty_min` is 0.0001 of the base on its BTC, ETH and SOL
        // pairs ("Instrument" channel; REST `ordermin`).
        for e in &mut out {
            e.min_size = 10i64.pow(u32::from(e.size_scale.saturating_sub(4)));
        }
    }
    out
}

/// One unit at `scale` decimals: `"1"`, `"0.1"`, `"0.00001"`.
pub(crate) fn unit(scale: u8) -> String {
    if scale == 0 {
        "1".into()
    } else {
        format!("0.{}1", "0".repeat(usize::from(scale) - 1))
    }
}

/// Quote assets a concatenated symbol (`BTCUSDT`) may end with, longest
/// first.
const QUOTES: [&str; 8] = ["FDUSD", "USDT", "USDC", "BUSD", "USD", "EUR", "BTC", "ETH"];

/// The base and quote assets of `symbol` as `venue` writes it.
fn split_symbol(venue: Venue, symbol: &str) -> (String, String) {
    let owned = |(b, q): (&str, &str)| (b.to_owned(), q.to_owned());
    match venue {
        Venue::Kraken => symbol.split_once('/').map(owned),
        Venue::Okx | Venue::Coinbase => {
            let mut parts = symbol.split('-');
            parts.next().zip(parts.next()).map(owned)
        }
        Venue::Deribit => {
            // `BTC-PERPETUAL` (USD), `SOL_USDC-PERPETUAL`.
            let head = symbol.split('-').next().unwrap_or(symbol);
            Some(owned(head.split_once('_').unwrap_or((head, "USD"))))
        }
        _ => {
            let head = symbol.split('_').next().unwrap_or(symbol);
            QUOTES
                .iter()
                .find_map(|q| {
                    head.strip_suffix(q)
                        .filter(|b| !b.is_empty())
                        .map(|b| (b, *q))
                })
                .map(owned)
        }
    }
    .unwrap_or_else(|| (symbol.to_owned(), String::new()))
}

/// The contract an uncatalogued `symbol` of `venue` is: what the venue's
/// market or the symbol says.
fn contract_of(venue: Venue, symbol: &str) -> Contract {
    match venue {
        Venue::BinanceUsdM | Venue::BybitLinear => LINEAR,
        Venue::BinanceCoinM | Venue::BybitInverse => Contract::Inverse { usd: 10 },
        Venue::Okx if symbol.ends_with("-SWAP") => Contract::Linear {
            value: 1,
            value_scale: 0,
        },
        Venue::Deribit if symbol.contains('_') => LINEAR,
        Venue::Deribit => Contract::Inverse { usd: 10 },
        _ => SPOT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VENUES: [Venue; 11] = [
        Venue::BinanceSpot,
        Venue::BinanceSpotSbe,
        Venue::BinanceUsdM,
        Venue::BinanceCoinM,
        Venue::Okx,
        Venue::BybitSpot,
        Venue::BybitLinear,
        Venue::BybitInverse,
        Venue::Kraken,
        Venue::Coinbase,
        Venue::Deribit,
    ];

    /// Every venue lists its pair first, unchanged, then at least one more;
    /// no symbol twice; each is found by its exact spelling only.
    #[test]
    fn every_catalogue_starts_with_the_pair_and_names_each_once() {
        for venue in VENUES {
            let listed = SimInstrument::listed(venue);
            assert_eq!(listed[..2], SimInstrument::pair(venue)[..], "{venue:?}");
            assert!(listed.len() >= 3, "{venue:?}");
            for (k, i) in listed.iter().enumerate() {
                assert!(
                    listed[k + 1..].iter().all(|o| o.symbol != i.symbol),
                    "{venue:?} {}",
                    i.symbol
                );
                assert_eq!(
                    SimInstrument::find_listed(venue, &i.symbol).as_ref(),
                    Some(i)
                );
                let lower = i.symbol.to_ascii_lowercase();
                assert_eq!(SimInstrument::find_listed(venue, &lower), None);
                let l = Listing::of(venue, i);
                assert!(!l.base.is_empty() && !l.quote.is_empty(), "{venue:?} {l:?}");
                assert!(
                    i.mid > i.levels as i64,
                    "{venue:?} {}: prices stay positive",
                    i.symbol
                );
            }
        }
    }

    /// The tick and lot served are one unit of the model's scales; the
    /// assets are read from each venue's spelling.
    #[test]
    fn listings_follow_the_model_and_the_venues_spelling() {
        let l = |v, s: &str| Listing::of(v, &SimInstrument::find_listed(v, s).unwrap());
        let btc = l(Venue::BinanceSpot, "BTCUSDT");
        assert_eq!(
            (btc.tick_size(), btc.lot_size()),
            ("0.01".into(), "0.00001".into())
        );
        assert_eq!((btc.base.as_str(), btc.quote.as_str()), ("BTC", "USDT"));
        let perp = l(Venue::BinanceCoinM, "BTCUSD_PERP");
        assert_eq!((perp.base.as_str(), perp.quote.as_str()), ("BTC", "USD"));
        assert_eq!(perp.contract, Contract::Inverse { usd: 100 });
        let d = l(Venue::Deribit, "SOL_USDC-PERPETUAL");
        assert_eq!((d.base.as_str(), d.quote.as_str()), ("SOL", "USDC"));
        let k = l(Venue::Kraken, "BTC/EUR");
        assert_eq!(
            (k.base.as_str(), k.quote.as_str(), k.tick_size()),
            ("BTC", "EUR", "0.1".into())
        );
        let o = l(Venue::Okx, "BTC-USDT-SWAP");
        assert_eq!((o.base.as_str(), o.quote.as_str()), ("BTC", "USDT"));
        // A test's own instrument is read from its symbol.
        let own = SimInstrument {
            symbol: "DOGEUSDT".into(),
            ..SimInstrument::btcusdt()
        };
        let own = Listing::of(Venue::BinanceSpot, &own);
        assert_eq!(
            (own.base.as_str(), own.quote.as_str(), own.min_size),
            ("DOGE", "USDT", 1)
        );
        assert_eq!(unit(0), "1");
        assert_eq!(unit(3), "0.001");
    }
}
