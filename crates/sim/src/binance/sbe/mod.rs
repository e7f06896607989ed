//! Binance spot's market data in Simple Binary Encoding
//! ([`Venue::BinanceSpotSbe`](tickwire_venues::Venue::BinanceSpotSbe),
//! `stream-sbe.binance.com`): the upgrade's API key, and a market step
//! written as the binary messages of the schema `spot_stream` 1:0 with
//! [`tickwire_sbe::spot_stream::encode`]. Everything else (paths, requests
//! and their JSON replies, limits, REST) is spot's, in `mod.rs`.
//!
//! The venue's rules relied on, from binance-spot-api-docs
//! `sbe-market-data-streams.md` (the page) and `sbe/schemas/stream_1_0.xml`
//! (the schema):
//! - "An API Key is necessary for access. Only Ed25519 keys are allowed.
//!   Please put your API Key in the X-MBX-APIKEY header when opening the
//!   connection. Timestamp and signature are not necessary." (the page),
//!   and no permission is needed. The simulator keeps no register of
//!   stream keys: any non-empty key is taken. What the venue answers an
//!   upgrade without one the page does not say; `400 Bad Request` with
//!   the text `No X-MBX-APIKEY header` is what a third party saw
//!   (nautilus_trader PR #4092), not Binance's word.
//! - Streams `<symbol>@trade` (`TradesStreamEvent`, template 10000),
//!   `<symbol>@bestBidAsk` (`BestBidAskStreamEvent`, 10001),
//!   `<symbol>@depth20` (`DepthSnapshotStreamEvent`, 10002) and
//!   `<symbol>@depth` (`DepthDiffStreamEvent`, 10003), the symbol in lower
//!   case (the page). Each event is one binary frame; requests, their
//!   replies and `serverShutdown` are JSON text frames (the page). Whether
//!   a combined connection (`/stream?streams=`) wraps an event the page
//!   does not say; a binary frame has no room for the JSON streams'
//!   `{"stream":..,"data":..}`, and the third-party clients of `/stream`
//!   we found read the schema's header at its first byte: bare here too
//!   (an inference, not verified on the wire).
//! - Every time (`eventTime`, `transactTime`) is `utcTimestampUs`:
//!   microseconds since the epoch (the schema; "All time and timestamp
//!   fields are in microseconds.", the page). The simulator's market keeps
//!   milliseconds: a JSON stream's `E` of `1700000000123` is `eventTime`
//!   `1700000000123000` here.
//! - A decimal is a mantissa with the exponent of its kind, one
//!   `priceExponent` and one `qtyExponent` a message (the schema's
//!   `mbx:exponent`): here minus the instrument's price and size scales,
//!   or one or two decimals finer, by the step (its last update id modulo
//!   3; the mantissas then the market's integers times 10 or 100). The
//!   exponents are fields of each message, not of the symbol: a client
//!   that assumes them fixed, or divides without checking what it drops,
//!   reads wrong values here, end to end rather than in unit tests only.
//! - A trade's `id` is the JSON stream's `t` and `isBuyerMaker` its `m`;
//!   `bookUpdateId` of `bestBidAsk` the update id the JSON `bookTicker`
//!   says in `u`; the diff's `firstBookUpdateId` and `lastBookUpdateId`
//!   the JSON diff's `U` and `u`, its levels those the JSON diff carries
//!   (size 0: the level is gone), best first, so that a book is kept
//!   from them as from the JSON diffs (the page sends its readers to the
//!   JSON streams' "How to manage a local order book correctly"). These
//!   correspondences are read from the field names and those pointers;
//!   neither the page nor the schema states them.
//! - `depth20` is the top 20 levels a side, whole, sent every 50 ms
//!   (the page); here one with the state of each step a client is written
//!   while the book is still at that step (see [`Frames::depth20`]), its
//!   `bookUpdateId` the step's last id. It carries no sequence to break:
//!   a lost book message ([`VenueFault::SequenceGap`](crate::VenueFault))
//!   is the diff's.
//! - The symbol, the last field of every message, is upper case as the
//!   venue writes symbols in its JSON messages (`"s":"BTCUSDT"`): the
//!   schema and the page do not say; nautilus_trader's decoders and their
//!   tests read `BTCUSDT`.

#[cfg(test)]
mod tests;

use tickwire_sbe::EncodeError;
use tickwire_sbe::spot_stream::{
    BestBidAskHead, DiffHead, Level, SnapshotHead, Trade, TradesHead, encode,
};

use super::Kind;
use crate::market::{Book, SimInstrument, Step};
use crate::protocol::Response;

/// The upgrade's header that carries the API key (the page).
pub(super) const API_KEY_HEADER: &str = "X-MBX-APIKEY";

/// The refusal of an upgrade without the key, as nautilus_trader PR #4092
/// saw it (Binance does not document it).
pub(super) const NO_API_KEY: &str = "No X-MBX-APIKEY header";

/// The levels a side of `<symbol>@depth20`.
pub(super) const DEPTH20: usize = 20;

/// Whether the upgrade's `headers` carry an API key: an `X-MBX-APIKEY`
/// field (its name in any case) with a value that is not blank. Any such
/// key is taken; without one the upgrade is refused with 400 and
/// [`NO_API_KEY`].
pub(super) fn admit(headers: &[(String, String)]) -> Result<(), Response> {
    let keyed = headers
        .iter()
        .any(|(name, value)| name.eq_ignore_ascii_case(API_KEY_HEADER) && !value.trim().is_empty());
    if keyed {
        Ok(())
    } else {
        Err(Response::text(400, NO_API_KEY))
    }
}

/// One step of one instrument as the SBE streams write it.
pub(super) struct Frames<'a> {
    step: &'a Step,
    spec: &'a SimInstrument,
    /// The instrument's book as the client is written the step.
    book: &'a Book,
}

/// A written message: its stream, the id its send stamp is filed under
/// (the JSON stream's for the same event), its bytes.
pub(super) type Written = (Kind, u64, Vec<u8>);

impl<'a> Frames<'a> {
    pub(super) fn new(step: &'a Step, spec: &'a SimInstrument, book: &'a Book) -> Frames<'a> {
        Frames { step, spec, book }
    }

    /// The step's messages of the streams `wanted` says, in the order the
    /// JSON streams write them (trade, diff, best bid/ask; then depth20).
    /// An instrument whose symbol is longer than the schema's 255 bytes
    /// gets none (Binance's are at most 20: `listing.rs`).
    pub(super) fn write(&self, wanted: impl Fn(Kind) -> bool, out: &mut Vec<Written>) {
        if wanted(Kind::Trade) {
            out.extend(self.trade());
        }
        if wanted(Kind::Depth) {
            out.extend(self.diff());
        }
        if wanted(Kind::BestBidAsk) {
            out.extend(self.best_bid_ask());
        }
        if wanted(Kind::Depth20) {
            out.extend(self.depth20());
        }
    }

    fn symbol(&self) -> &'a [u8] {
        self.spec.symbol.as_bytes()
    }

    /// How many decimals finer than the instrument's scales this step's
    /// messages are written (see the module's notes): 0, 1 or 2.
    fn finer(&self) -> u8 {
        (self.step.last_id % 3) as u8
    }

    /// `priceExponent` and `qtyExponent`: the instrument's scales, made
    /// [`finer`](Self::finer).
    fn exponents(&self) -> (i8, i8) {
        let exponent =
            |scale: u8| -i8::try_from(scale.saturating_add(self.finer())).unwrap_or(i8::MAX);
        (
            exponent(self.spec.price_scale),
            exponent(self.spec.size_scale),
        )
    }

    /// A market integer (at the instrument's scale) as the mantissa at
    /// this step's exponent.
    fn m(&self, v: i64) -> i64 {
        v.saturating_mul(10i64.pow(u32::from(self.finer())))
    }

    fn levels(&self, levels: &[(i64, i64)]) -> Vec<Level> {
        levels
            .iter()
            .map(|&(price, qty)| Level {
                price: self.m(price),
                qty: self.m(qty),
            })
            .collect()
    }

    /// The step's time, µs since the epoch.
    fn time_us(&self) -> i64 {
        signed(self.step.time_ms).saturating_mul(1_000)
    }

    /// `TradesStreamEvent` with the step's trade, if it made one.
    fn trade(&self) -> Option<Written> {
        let t = self.step.trade?;
        let (price_exponent, qty_exponent) = self.exponents();
        let head = TradesHead {
            event_time_us: self.time_us(),
            transact_time_us: self.time_us(),
            price_exponent,
            qty_exponent,
        };
        let trade = Trade {
            id: signed(t.id),
            price: self.m(t.price),
            qty: self.m(t.size),
            is_buyer_maker: !t.buyer_aggressor,
        };
        let bytes = frame(0, self.symbol(), |buf| {
            encode::trades(buf, &head, &[trade], self.symbol())
        })?;
        Some((Kind::Trade, t.id, bytes))
    }

    /// `DepthDiffStreamEvent` of the levels the step changed, unless the
    /// step's book message is lost.
    fn diff(&self) -> Option<Written> {
        let s = self.step;
        if s.faults.drop_book {
            return None;
        }
        let (price_exponent, qty_exponent) = self.exponents();
        let head = DiffHead {
            event_time_us: self.time_us(),
            first_update_id: signed(s.first_id),
            last_update_id: signed(s.last_id),
            price_exponent,
            qty_exponent,
        };
        let (bids, asks) = (self.levels(&s.bids), self.levels(&s.asks));
        let bytes = frame(bids.len() + asks.len(), self.symbol(), |buf| {
            encode::depth_diff(buf, &head, &bids, &asks, self.symbol())
        })?;
        Some((Kind::Depth, s.last_id, bytes))
    }

    /// `BestBidAskStreamEvent`, if the step moved the best bid or ask.
    fn best_bid_ask(&self) -> Option<Written> {
        let s = self.step;
        let ((bid_price, bid_qty), (ask_price, ask_qty)) = s.top?;
        let (price_exponent, qty_exponent) = self.exponents();
        let head = BestBidAskHead {
            event_time_us: self.time_us(),
            book_update_id: signed(s.last_id),
            price_exponent,
            qty_exponent,
            bid: Level {
                price: self.m(bid_price),
                qty: self.m(bid_qty),
            },
            ask: Level {
                price: self.m(ask_price),
                qty: self.m(ask_qty),
            },
        };
        let bytes = frame(0, self.symbol(), |buf| {
            encode::best_bid_ask(buf, &head, self.symbol())
        })?;
        Some((Kind::BestBidAsk, s.last_id, bytes))
    }

    /// `DepthSnapshotStreamEvent`: the best [`DEPTH20`] levels a side as
    /// of the step. Only while the book is still at the step (its update
    /// id the step's last): a step written after a later one of the same
    /// instrument (a burst, the server makes its steps before it writes
    /// them) would show that later state under this one's id, so the
    /// later step's snapshot alone is written.
    fn depth20(&self) -> Option<Written> {
        let s = self.step;
        if self.book.update_id != s.last_id {
            return None;
        }
        let (price_exponent, qty_exponent) = self.exponents();
        let head = SnapshotHead {
            event_time_us: self.time_us(),
            book_update_id: signed(s.last_id),
            price_exponent,
            qty_exponent,
        };
        let (bids, asks) = self.book.levels(DEPTH20);
        let (bids, asks) = (self.levels(&bids), self.levels(&asks));
        let bytes = frame(bids.len() + asks.len(), self.symbol(), |buf| {
            encode::depth_snapshot(buf, &head, &bids, &asks, self.symbol())
        })?;
        Some((Kind::Depth20, s.last_id, bytes))
    }
}

/// The model's ids and times (ms since the epoch), far below `i64::MAX`,
/// as the schema's `int64`.
fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A message of `entries` group entries at most, written by `write` into
/// a buffer with room for any template's: its bytes, or `None` if the
/// schema cannot hold it (a symbol over 255 bytes, over 65 535 levels).
fn frame(
    entries: usize,
    symbol: &[u8],
    write: impl FnOnce(&mut [u8]) -> Result<usize, EncodeError>,
) -> Option<Vec<u8>> {
    // Header, the longest root block (50), two group headers (6 at most
    // each), the entries (25 at most), the symbol and its length.
    let room = 8 + 50 + 2 * 6 + 25 * entries.max(1) + 1 + symbol.len();
    let mut buf = vec![0u8; room];
    let n = write(&mut buf).ok()?;
    buf.truncate(n);
    Some(buf)
}
