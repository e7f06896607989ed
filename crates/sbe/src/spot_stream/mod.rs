//! Binance spot market data in SBE: schema `spot_stream`, id 1, version 0
//! (`sbe/schemas/stream_1_0.xml` in the venue's binance-spot-api-docs; the
//! streams are described in its `sbe-market-data-streams.md`).
//!
//! One WebSocket binary frame is one message: an 8-byte header, the root
//! block, the groups, then the symbol. Decimals are a mantissa (`i64`)
//! times ten to a signed exponent shared by every price (or every
//! quantity) of the message; times are microseconds since the Unix epoch.
//! The schema gives no offsets: its fields lie end to end, with no padding,
//! so the 64-bit fields after the two exponent bytes are not aligned.
//!
//! ```
//! use tickwire_sbe::spot_stream::{self, DiffHead, Level, Message};
//!
//! let head = DiffHead { event_time_us: 1, first_update_id: 7, last_update_id: 9,
//!                       price_exponent: -2, qty_exponent: -8 };
//! let bids = [Level { price: 6_173_763, qty: 150_000_000 }];
//! let mut frame = [0u8; 128];
//! let n = spot_stream::encode::depth_diff(&mut frame, &head, &bids, &[], b"BTCUSDT")?;
//!
//! let Message::DepthDiff(diff) = spot_stream::decode(&frame[..n])? else { unreachable!() };
//! assert_eq!((diff.first_update_id(), diff.last_update_id()), (7, 9));
//! assert_eq!(diff.bids().next(), Some(bids[0]));
//! assert_eq!(diff.symbol(), b"BTCUSDT");
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

pub mod encode;

use core::slice::ChunksExact;

use crate::DecodeError;
use crate::le::{i8_at, i64_at, u8_at, u16_at, u32_at};

/// The header's `schemaId` for this schema.
pub const SCHEMA_ID: u16 = 1;
/// The header's `version` this decoder reads.
pub const SCHEMA_VERSION: u16 = 0;

/// `messageHeader`: four `uint16`.
pub mod header {
    /// Its length.
    pub const LEN: usize = 8;
    /// `blockLength`: the root block's length.
    pub const BLOCK_LENGTH: usize = 0;
    /// `templateId`: which message.
    pub const TEMPLATE_ID: usize = 2;
    /// `schemaId`.
    pub const SCHEMA_ID: usize = 4;
    /// `version`.
    pub const VERSION: usize = 6;
}

/// `groupSizeEncoding` (the trades group): `uint16` entry length, `uint32` count.
pub mod group32 {
    /// Its length.
    pub const LEN: usize = 6;
    /// `blockLength`.
    pub const BLOCK_LENGTH: usize = 0;
    /// `numInGroup`.
    pub const NUM_IN_GROUP: usize = 2;
}

/// `groupSize16Encoding` (the book groups): `uint16` entry length, `uint16` count.
pub mod group16 {
    /// Its length.
    pub const LEN: usize = 4;
    /// `blockLength`.
    pub const BLOCK_LENGTH: usize = 0;
    /// `numInGroup`.
    pub const NUM_IN_GROUP: usize = 2;
}

/// `TradesStreamEvent` (`<symbol>@trade`): one or more trades.
pub mod trades {
    /// Its template id.
    pub const TEMPLATE_ID: u16 = 10000;
    /// Its root block's length.
    pub const BLOCK_LENGTH: usize = 18;
    /// `eventTime`, µs.
    pub const EVENT_TIME: usize = 0;
    /// `transactTime`, µs.
    pub const TRANSACT_TIME: usize = 8;
    /// `priceExponent`.
    pub const PRICE_EXPONENT: usize = 16;
    /// `qtyExponent`.
    pub const QTY_EXPONENT: usize = 17;
    /// A `trades` entry's length (`isBestMatch` is a constant: no bytes).
    pub const ENTRY_LENGTH: usize = 25;
    /// `id`, the trade id.
    pub const ID: usize = 0;
    /// `price` mantissa.
    pub const PRICE: usize = 8;
    /// `qty` mantissa.
    pub const QTY: usize = 16;
    /// `isBuyerMaker`.
    pub const IS_BUYER_MAKER: usize = 24;
}

/// `BestBidAskStreamEvent` (`<symbol>@bestBidAsk`). The venue culls these
/// under load (an older one not yet sent is dropped for a newer one), so
/// `bookUpdateId` skips: not a gap.
pub mod best_bid_ask {
    /// Its template id.
    pub const TEMPLATE_ID: u16 = 10001;
    /// Its root block's length.
    pub const BLOCK_LENGTH: usize = 50;
    /// `eventTime`, µs.
    pub const EVENT_TIME: usize = 0;
    /// `bookUpdateId`.
    pub const BOOK_UPDATE_ID: usize = 8;
    /// `priceExponent`.
    pub const PRICE_EXPONENT: usize = 16;
    /// `qtyExponent`.
    pub const QTY_EXPONENT: usize = 17;
    /// `bidPrice` mantissa.
    pub const BID_PRICE: usize = 18;
    /// `bidQty` mantissa.
    pub const BID_QTY: usize = 26;
    /// `askPrice` mantissa.
    pub const ASK_PRICE: usize = 34;
    /// `askQty` mantissa.
    pub const ASK_QTY: usize = 42;
}

/// `DepthSnapshotStreamEvent` (`<symbol>@depth20`): the top 20 levels.
pub mod depth_snapshot {
    /// Its template id.
    pub const TEMPLATE_ID: u16 = 10002;
    /// Its root block's length.
    pub const BLOCK_LENGTH: usize = 18;
    /// `eventTime`, µs.
    pub const EVENT_TIME: usize = 0;
    /// `bookUpdateId`.
    pub const BOOK_UPDATE_ID: usize = 8;
    /// `priceExponent`.
    pub const PRICE_EXPONENT: usize = 16;
    /// `qtyExponent`.
    pub const QTY_EXPONENT: usize = 17;
}

/// `DepthDiffStreamEvent` (`<symbol>@depth`): levels changed from
/// `firstBookUpdateId` to `lastBookUpdateId` (the JSON stream's `U` and
/// `u`, bridged to the REST snapshot's `lastUpdateId` the same way).
pub mod depth_diff {
    /// Its template id.
    pub const TEMPLATE_ID: u16 = 10003;
    /// Its root block's length.
    pub const BLOCK_LENGTH: usize = 26;
    /// `eventTime`, µs.
    pub const EVENT_TIME: usize = 0;
    /// `firstBookUpdateId`.
    pub const FIRST_BOOK_UPDATE_ID: usize = 8;
    /// `lastBookUpdateId`.
    pub const LAST_BOOK_UPDATE_ID: usize = 16;
    /// `priceExponent`.
    pub const PRICE_EXPONENT: usize = 24;
    /// `qtyExponent`.
    pub const QTY_EXPONENT: usize = 25;
}

/// A `bids` or `asks` entry (both book templates): `price`, `qty`.
pub mod level {
    /// An entry's length.
    pub const ENTRY_LENGTH: usize = 16;
    /// `price` mantissa.
    pub const PRICE: usize = 0;
    /// `qty` mantissa (0: the level is gone).
    pub const QTY: usize = 8;
}

/// One decoded message, borrowing the frame.
#[derive(Clone, Debug)]
pub enum Message<'a> {
    /// `TradesStreamEvent`.
    Trades(Trades<'a>),
    /// `BestBidAskStreamEvent`.
    BestBidAsk(BestBidAsk<'a>),
    /// `DepthSnapshotStreamEvent`.
    DepthSnapshot(DepthSnapshot<'a>),
    /// `DepthDiffStreamEvent`.
    DepthDiff(DepthDiff<'a>),
    /// A template this decoder does not know, under this schema's id and
    /// version: skipped, its block unread (the venue's older REST schema,
    /// `spot_1_0`, shares the id and version; a newer release of this one
    /// is refused before its templates are read: see [`decode`]).
    Unknown {
        /// Its template id.
        template_id: u16,
    },
}

/// Two messages are equal when their fields are: the same template, fixed
/// fields, entries and symbol, however long the blocks and entries that
/// carried them (a writer may pad them; padding is not a field).
impl PartialEq for Message<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Message::Trades(a), Message::Trades(b)) => {
                a.head() == b.head() && a.trades().eq(b.trades()) && a.symbol() == b.symbol()
            }
            (Message::BestBidAsk(a), Message::BestBidAsk(b)) => {
                a.head() == b.head() && a.symbol() == b.symbol()
            }
            (Message::DepthSnapshot(a), Message::DepthSnapshot(b)) => {
                a.head() == b.head()
                    && a.bids().eq(b.bids())
                    && a.asks().eq(b.asks())
                    && a.symbol() == b.symbol()
            }
            (Message::DepthDiff(a), Message::DepthDiff(b)) => {
                a.head() == b.head()
                    && a.bids().eq(b.bids())
                    && a.asks().eq(b.asks())
                    && a.symbol() == b.symbol()
            }
            (Message::Unknown { template_id: a }, Message::Unknown { template_id: b }) => a == b,
            _ => false,
        }
    }
}

/// A price and a quantity, both mantissas (scaled by the message's
/// exponents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// The price's mantissa.
    pub price: i64,
    /// The quantity's mantissa; 0 in a diff: the level is gone.
    pub qty: i64,
}

/// One trade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trade {
    /// The venue's trade id.
    pub id: i64,
    /// The price's mantissa.
    pub price: i64,
    /// The quantity's mantissa.
    pub qty: i64,
    /// The buyer was the maker: the seller took (hit the bid).
    pub is_buyer_maker: bool,
}

/// The bytes after the header, read front to back, each length checked
/// once against what is left.
struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let have = self.buf.len();
        let need = self.at.saturating_add(n);
        let s = self
            .buf
            .get(self.at..need)
            .ok_or(DecodeError::Truncated { need, have })?;
        self.at = need;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<&'a [u8; N], DecodeError> {
        let s = self.take(N)?;
        s.first_chunk::<N>().ok_or(DecodeError::Truncated {
            need: self.at,
            have: self.buf.len(),
        })
    }

    /// The root block: at least `N` bytes, `block_length` taken.
    fn root<const N: usize>(
        &mut self,
        template: u16,
        block_length: u16,
    ) -> Result<&'a [u8; N], DecodeError> {
        let block = self.take(usize::from(block_length))?;
        block.first_chunk::<N>().ok_or(DecodeError::BlockLength {
            template,
            got: block_length,
        })
    }

    /// A group of `groupSize16Encoding`: its entries, each at least `min` bytes.
    fn group16(&mut self, template: u16, min: usize) -> Result<Entries<'a>, DecodeError> {
        let dim = self.array::<{ group16::LEN }>()?;
        let len = u16_at::<{ group16::BLOCK_LENGTH }, { group16::LEN }>(dim);
        let count = u16_at::<{ group16::NUM_IN_GROUP }, { group16::LEN }>(dim);
        self.entries(template, min, len, usize::from(count))
    }

    /// A group of `groupSizeEncoding`.
    fn group32(&mut self, template: u16, min: usize) -> Result<Entries<'a>, DecodeError> {
        let dim = self.array::<{ group32::LEN }>()?;
        let len = u16_at::<{ group32::BLOCK_LENGTH }, { group32::LEN }>(dim);
        let count = u32_at::<{ group32::NUM_IN_GROUP }, { group32::LEN }>(dim);
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        self.entries(template, min, len, count)
    }

    fn entries(
        &mut self,
        template: u16,
        min: usize,
        len: u16,
        count: usize,
    ) -> Result<Entries<'a>, DecodeError> {
        let stride = usize::from(len);
        if stride < min {
            return Err(DecodeError::EntryLength { template, got: len });
        }
        let bytes = self.take(stride.saturating_mul(count))?;
        Ok(Entries { bytes, stride })
    }

    /// A `varString8`, then the end of the message.
    fn last_string(&mut self, template: u16) -> Result<&'a [u8], DecodeError> {
        let [len] = *self.array::<1>()?;
        let s = self.take(usize::from(len))?;
        match self.buf.len() - self.at {
            0 => Ok(s),
            extra => Err(DecodeError::Trailing { template, extra }),
        }
    }
}

/// A group's entries: `stride` bytes each (at least the schema's).
#[derive(Clone, Copy, Debug)]
struct Entries<'a> {
    bytes: &'a [u8],
    stride: usize,
}

/// Decodes one message, checking every length once.
///
/// A message of another version of the schema is refused
/// ([`DecodeError::Version`]), not read by its block lengths as SBE would
/// allow: a newer release may add a group before the symbol, and a symbol
/// read from the wrong place would drop its messages in silence. Refused,
/// the feed says so, once, and an operator updates; bytes after the symbol
/// are refused for the same reason ([`DecodeError::Trailing`]).
// Always inlined: out of line, its `Message` goes back through memory and
// the cursor's helpers stay calls. The compiler stopped inlining it in the
// `sbe` bench when the bench's replay became generic over two event sinks
// (d41d500), and an SBE trade there cost 435 instructions instead of 331
// (callgrind, the simulated market; BENCHMARKS.md, `sbe`).
#[inline(always)]
pub fn decode(frame: &[u8]) -> Result<Message<'_>, DecodeError> {
    let mut c = Cursor { buf: frame, at: 0 };
    let h = c.array::<{ header::LEN }>()?;
    let block_length = u16_at::<{ header::BLOCK_LENGTH }, { header::LEN }>(h);
    let template = u16_at::<{ header::TEMPLATE_ID }, { header::LEN }>(h);
    let schema = u16_at::<{ header::SCHEMA_ID }, { header::LEN }>(h);
    let version = u16_at::<{ header::VERSION }, { header::LEN }>(h);
    if schema != SCHEMA_ID {
        return Err(DecodeError::SchemaId(schema));
    }
    if version != SCHEMA_VERSION {
        return Err(DecodeError::Version(version));
    }
    Ok(match template {
        trades::TEMPLATE_ID => {
            let root = c.root(template, block_length)?;
            let trades = c.group32(template, trades::ENTRY_LENGTH)?;
            // The one field with invalid values: checked here, once, with
            // one branch for the message (0 and 1 or together to at most 1).
            let mut any = 0u8;
            for e in trades.bytes.chunks_exact(trades.stride) {
                any |= e[trades::IS_BUYER_MAKER];
            }
            if any > 1 {
                let bad = trades
                    .bytes
                    .chunks_exact(trades.stride)
                    .map(|e| e[trades::IS_BUYER_MAKER])
                    .find(|&b| b > 1);
                return Err(DecodeError::Bool(bad.unwrap_or(any)));
            }
            let symbol = c.last_string(template)?;
            Message::Trades(Trades {
                root,
                trades,
                symbol,
            })
        }
        best_bid_ask::TEMPLATE_ID => {
            let root = c.root(template, block_length)?;
            let symbol = c.last_string(template)?;
            Message::BestBidAsk(BestBidAsk { root, symbol })
        }
        depth_snapshot::TEMPLATE_ID => {
            let root = c.root(template, block_length)?;
            let bids = c.group16(template, level::ENTRY_LENGTH)?;
            let asks = c.group16(template, level::ENTRY_LENGTH)?;
            let symbol = c.last_string(template)?;
            Message::DepthSnapshot(DepthSnapshot {
                root,
                bids,
                asks,
                symbol,
            })
        }
        depth_diff::TEMPLATE_ID => {
            let root = c.root(template, block_length)?;
            let bids = c.group16(template, level::ENTRY_LENGTH)?;
            let asks = c.group16(template, level::ENTRY_LENGTH)?;
            let symbol = c.last_string(template)?;
            Message::DepthDiff(DepthDiff {
                root,
                bids,
                asks,
                symbol,
            })
        }
        template_id => Message::Unknown { template_id },
    })
}

/// `TradesStreamEvent`, in place.
#[derive(Clone, Copy, Debug)]
pub struct Trades<'a> {
    root: &'a [u8; trades::BLOCK_LENGTH],
    trades: Entries<'a>,
    symbol: &'a [u8],
}

impl<'a> Trades<'a> {
    /// `eventTime`, µs since the epoch.
    pub fn event_time_us(&self) -> i64 {
        i64_at::<{ trades::EVENT_TIME }, { trades::BLOCK_LENGTH }>(self.root)
    }
    /// `transactTime`, µs since the epoch: when the trades happened.
    pub fn transact_time_us(&self) -> i64 {
        i64_at::<{ trades::TRANSACT_TIME }, { trades::BLOCK_LENGTH }>(self.root)
    }
    /// The exponent of every price.
    pub fn price_exponent(&self) -> i8 {
        i8_at::<{ trades::PRICE_EXPONENT }, { trades::BLOCK_LENGTH }>(self.root)
    }
    /// The exponent of every quantity.
    pub fn qty_exponent(&self) -> i8 {
        i8_at::<{ trades::QTY_EXPONENT }, { trades::BLOCK_LENGTH }>(self.root)
    }
    /// The trades, in the venue's order.
    pub fn trades(&self) -> TradeIter<'a> {
        TradeIter(self.trades.bytes.chunks_exact(self.trades.stride))
    }
    /// The symbol (upper case in the examples of those who read these
    /// streams; the venue's documents do not say).
    pub fn symbol(&self) -> &'a [u8] {
        self.symbol
    }
    /// The fixed fields, as [`encode::trades`] takes them.
    pub fn head(&self) -> TradesHead {
        TradesHead {
            event_time_us: self.event_time_us(),
            transact_time_us: self.transact_time_us(),
            price_exponent: self.price_exponent(),
            qty_exponent: self.qty_exponent(),
        }
    }
}

/// The trades of a [`Trades`] message.
#[derive(Clone, Debug)]
pub struct TradeIter<'a>(ChunksExact<'a, u8>);

impl Iterator for TradeIter<'_> {
    type Item = Trade;

    #[inline]
    fn next(&mut self) -> Option<Trade> {
        let e = self.0.next()?.first_chunk::<{ trades::ENTRY_LENGTH }>()?;
        const N: usize = trades::ENTRY_LENGTH;
        Some(Trade {
            id: i64_at::<{ trades::ID }, N>(e),
            price: i64_at::<{ trades::PRICE }, N>(e),
            qty: i64_at::<{ trades::QTY }, N>(e),
            is_buyer_maker: u8_at::<{ trades::IS_BUYER_MAKER }, N>(e) == 1,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for TradeIter<'_> {}

/// `BestBidAskStreamEvent`, in place.
#[derive(Clone, Copy, Debug)]
pub struct BestBidAsk<'a> {
    root: &'a [u8; best_bid_ask::BLOCK_LENGTH],
    symbol: &'a [u8],
}

impl<'a> BestBidAsk<'a> {
    /// Every fixed field.
    pub fn head(&self) -> BestBidAskHead {
        const N: usize = best_bid_ask::BLOCK_LENGTH;
        use best_bid_ask as b;
        let r = self.root;
        BestBidAskHead {
            event_time_us: i64_at::<{ b::EVENT_TIME }, N>(r),
            book_update_id: i64_at::<{ b::BOOK_UPDATE_ID }, N>(r),
            price_exponent: i8_at::<{ b::PRICE_EXPONENT }, N>(r),
            qty_exponent: i8_at::<{ b::QTY_EXPONENT }, N>(r),
            bid: Level {
                price: i64_at::<{ b::BID_PRICE }, N>(r),
                qty: i64_at::<{ b::BID_QTY }, N>(r),
            },
            ask: Level {
                price: i64_at::<{ b::ASK_PRICE }, N>(r),
                qty: i64_at::<{ b::ASK_QTY }, N>(r),
            },
        }
    }
    /// The symbol.
    pub fn symbol(&self) -> &'a [u8] {
        self.symbol
    }
}

/// `DepthSnapshotStreamEvent`, in place.
#[derive(Clone, Copy, Debug)]
pub struct DepthSnapshot<'a> {
    root: &'a [u8; depth_snapshot::BLOCK_LENGTH],
    bids: Entries<'a>,
    asks: Entries<'a>,
    symbol: &'a [u8],
}

impl<'a> DepthSnapshot<'a> {
    /// `bookUpdateId`: the book as of this update.
    pub fn book_update_id(&self) -> i64 {
        i64_at::<{ depth_snapshot::BOOK_UPDATE_ID }, { depth_snapshot::BLOCK_LENGTH }>(self.root)
    }
    /// Every fixed field.
    pub fn head(&self) -> SnapshotHead {
        const N: usize = depth_snapshot::BLOCK_LENGTH;
        use depth_snapshot as d;
        SnapshotHead {
            event_time_us: i64_at::<{ d::EVENT_TIME }, N>(self.root),
            book_update_id: self.book_update_id(),
            price_exponent: i8_at::<{ d::PRICE_EXPONENT }, N>(self.root),
            qty_exponent: i8_at::<{ d::QTY_EXPONENT }, N>(self.root),
        }
    }
    /// The bids (best first in the examples of those who read these
    /// streams; the schema does not say).
    pub fn bids(&self) -> Levels<'a> {
        Levels::of(self.bids)
    }
    /// The asks (as the bids).
    pub fn asks(&self) -> Levels<'a> {
        Levels::of(self.asks)
    }
    /// The symbol.
    pub fn symbol(&self) -> &'a [u8] {
        self.symbol
    }
}

/// `DepthDiffStreamEvent`, in place.
#[derive(Clone, Copy, Debug)]
pub struct DepthDiff<'a> {
    root: &'a [u8; depth_diff::BLOCK_LENGTH],
    bids: Entries<'a>,
    asks: Entries<'a>,
    symbol: &'a [u8],
}

impl<'a> DepthDiff<'a> {
    /// `firstBookUpdateId` (JSON's `U`).
    pub fn first_update_id(&self) -> i64 {
        i64_at::<{ depth_diff::FIRST_BOOK_UPDATE_ID }, { depth_diff::BLOCK_LENGTH }>(self.root)
    }
    /// `lastBookUpdateId` (JSON's `u`).
    pub fn last_update_id(&self) -> i64 {
        i64_at::<{ depth_diff::LAST_BOOK_UPDATE_ID }, { depth_diff::BLOCK_LENGTH }>(self.root)
    }
    /// The exponent of every price.
    pub fn price_exponent(&self) -> i8 {
        i8_at::<{ depth_diff::PRICE_EXPONENT }, { depth_diff::BLOCK_LENGTH }>(self.root)
    }
    /// The exponent of every quantity.
    pub fn qty_exponent(&self) -> i8 {
        i8_at::<{ depth_diff::QTY_EXPONENT }, { depth_diff::BLOCK_LENGTH }>(self.root)
    }
    /// `eventTime`, µs since the epoch.
    pub fn event_time_us(&self) -> i64 {
        i64_at::<{ depth_diff::EVENT_TIME }, { depth_diff::BLOCK_LENGTH }>(self.root)
    }
    /// Every fixed field.
    pub fn head(&self) -> DiffHead {
        DiffHead {
            event_time_us: self.event_time_us(),
            first_update_id: self.first_update_id(),
            last_update_id: self.last_update_id(),
            price_exponent: self.price_exponent(),
            qty_exponent: self.qty_exponent(),
        }
    }
    /// The bid levels changed.
    pub fn bids(&self) -> Levels<'a> {
        Levels::of(self.bids)
    }
    /// The ask levels changed.
    pub fn asks(&self) -> Levels<'a> {
        Levels::of(self.asks)
    }
    /// The symbol.
    pub fn symbol(&self) -> &'a [u8] {
        self.symbol
    }
}

/// The levels of a book group.
#[derive(Clone, Debug)]
pub struct Levels<'a>(ChunksExact<'a, u8>);

impl<'a> Levels<'a> {
    fn of(e: Entries<'a>) -> Self {
        Levels(e.bytes.chunks_exact(e.stride))
    }
}

impl Iterator for Levels<'_> {
    type Item = Level;

    #[inline]
    fn next(&mut self) -> Option<Level> {
        const N: usize = level::ENTRY_LENGTH;
        let e = self.0.next()?.first_chunk::<N>()?;
        Some(Level {
            price: i64_at::<{ level::PRICE }, N>(e),
            qty: i64_at::<{ level::QTY }, N>(e),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for Levels<'_> {}

/// The fixed fields of `TradesStreamEvent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TradesHead {
    /// `eventTime`, µs.
    pub event_time_us: i64,
    /// `transactTime`, µs.
    pub transact_time_us: i64,
    /// `priceExponent`.
    pub price_exponent: i8,
    /// `qtyExponent`.
    pub qty_exponent: i8,
}

/// The fields of `BestBidAskStreamEvent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BestBidAskHead {
    /// `eventTime`, µs.
    pub event_time_us: i64,
    /// `bookUpdateId`.
    pub book_update_id: i64,
    /// `priceExponent`.
    pub price_exponent: i8,
    /// `qtyExponent`.
    pub qty_exponent: i8,
    /// `bidPrice`, `bidQty`.
    pub bid: Level,
    /// `askPrice`, `askQty`.
    pub ask: Level,
}

/// The fixed fields of `DepthSnapshotStreamEvent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SnapshotHead {
    /// `eventTime`, µs.
    pub event_time_us: i64,
    /// `bookUpdateId`.
    pub book_update_id: i64,
    /// `priceExponent`.
    pub price_exponent: i8,
    /// `qtyExponent`.
    pub qty_exponent: i8,
}

/// The fixed fields of `DepthDiffStreamEvent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DiffHead {
    /// `eventTime`, µs.
    pub event_time_us: i64,
    /// `firstBookUpdateId`.
    pub first_update_id: i64,
    /// `lastBookUpdateId`.
    pub last_update_id: i64,
    /// `priceExponent`.
    pub price_exponent: i8,
    /// `qtyExponent`.
    pub qty_exponent: i8,
}
