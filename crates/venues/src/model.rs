//! The vocabulary every layer of the crate shares: book sides and levels,
//! who keeps a book's window complete, the book's shape as planned, and
//! why a book stopped being valid. Depends on nothing else in the crate;
//! each item is re-exported where it was first named (`book::Side`,
//! `sync::Resync`, `plan::BookShape`, ...).

/// A side of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Buy orders: best is the highest price.
    Bid,
    /// Sell orders: best is the lowest price.
    Ask,
}

impl Side {
    /// Whether `a` is a better price than `b` on this side.
    #[inline]
    pub fn better(self, a: i64, b: i64) -> bool {
        match self {
            Side::Bid => a > b,
            Side::Ask => a < b,
        }
    }
}

/// One price level: price and size, as integers at the instrument's scales,
/// and how many fractional digits each had on the wire (so that checksums
/// over the venue's own strings can be computed from the book).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Level {
    /// Price, in `10^-price_scale` units.
    pub price: i64,
    /// Size, in `10^-size_scale` units.
    pub size: i64,
    /// Fractional digits of the price as sent (0: no decimal point).
    pub price_digits: u8,
    /// Fractional digits of the size as sent.
    pub size_digits: u8,
}

impl Level {
    /// A level with no wire digits recorded.
    pub fn new(price: i64, size: i64) -> Level {
        Level {
            price,
            size,
            ..Level::default()
        }
    }
}

/// Who keeps the book's kept levels complete (see [`crate::book`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// The venue sends every level that enters its window of top levels
    /// (as many as the snapshot says, or `keep`).
    Venue,
    /// The venue sends every change of its whole book; the book knows what
    /// its snapshot and the changes since told it.
    Client,
}

/// How a venue's book is kept: how many levels below the shown depth, and
/// who keeps them complete (see [`crate::book`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookShape {
    /// Levels kept per side (at least the shown depth).
    pub keep: usize,
    /// Who keeps them complete.
    pub window: Window,
}

/// Why a book stopped being valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resync {
    /// A diff did not chain onto the previous one.
    Sequence {
        /// The id the chain called for.
        expected: u64,
        /// The id the diff carried.
        got: u64,
    },
    /// No buffered or later diff bridges the snapshot: it is too old.
    SnapshotStale {
        /// The snapshot's last update id.
        snapshot: u64,
        /// The first id of the first diff newer than it.
        first_diff: u64,
    },
    /// Best bid at or above best ask after a diff.
    Crossed,
    /// A level in a diff could not be read; the book may be half-updated.
    BadLevel,
    /// The venue's checksum of its book differs from ours.
    Checksum {
        /// The venue's value.
        expected: i64,
        /// Ours.
        got: i64,
    },
    /// The connection carrying the book went down.
    Disconnected,
    /// Fewer levels than the book shows are known on a side, and the
    /// levels beyond them are not (see [`crate::book`]): the shown depth
    /// can no longer be guaranteed exact.
    DepthExhausted,
}

/// A venue (and market) tickwire has an adapter for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Venue {
    /// Binance spot.
    BinanceSpot,
    /// Binance spot's market data in Simple Binary Encoding
    /// (`stream-sbe.binance.com`): the same books, trades and quotes as
    /// [`Venue::BinanceSpot`], binary, with an API key.
    BinanceSpotSbe,
    /// Binance USD-M futures.
    BinanceUsdM,
    /// Binance COIN-M futures.
    BinanceCoinM,
    /// OKX v5.
    Okx,
    /// Bybit v5 spot.
    BybitSpot,
    /// Bybit v5 USDT and USDC contracts.
    BybitLinear,
    /// Bybit v5 inverse contracts.
    BybitInverse,
    /// Kraken spot v2.
    Kraken,
    /// Coinbase Advanced Trade.
    Coinbase,
    /// Deribit.
    Deribit,
}

/// One of the two connections that can carry the same streams: the one a
/// plan opens first, and the one opened beside it (a planned reconnect's
/// replacement, or a warm standby). Either may lead a book (see
/// [`crate::sync::lines`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Line {
    /// The line a plan opens first.
    #[default]
    Primary,
    /// The line opened beside it.
    Standby,
}

impl Line {
    /// Both lines, in index order.
    pub const BOTH: [Line; 2] = [Line::Primary, Line::Standby];

    /// The line's place in a two-element array (`Primary` 0, `Standby` 1).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The other line.
    #[inline]
    pub const fn other(self) -> Line {
        match self {
            Line::Primary => Line::Standby,
            Line::Standby => Line::Primary,
        }
    }
}

/// The line's index, as logs have always named it.
impl core::fmt::Display for Line {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.index(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::Line;

    #[test]
    fn a_line_indexes_its_pair_and_knows_the_other() {
        for (i, line) in Line::BOTH.into_iter().enumerate() {
            assert_eq!(line.index(), i);
            assert_eq!(Line::BOTH[line.other().index()], line.other());
            assert_ne!(line.other(), line);
            assert_eq!(line.other().other(), line);
        }
    }
}
