//! Writes the schema's messages (the simulator's frames, the tests' and the
//! fuzz targets' seeds): the buffer's room is checked once, then every field
//! is stored at its offset. Each function returns the message's length.

use super::{
    BestBidAskHead, DiffHead, Level, SCHEMA_ID, SCHEMA_VERSION, SnapshotHead, Trade, TradesHead,
    best_bid_ask, depth_diff, depth_snapshot, group16, group32, header, level, trades,
};
use crate::EncodeError;
use crate::le::put;

/// The header, at 0.
fn head(out: &mut [u8], template: u16, block_length: usize) -> usize {
    // Every root block is under 64 KiB (50 bytes at most).
    let block = block_length as u16;
    let mut at = put(out, 0, &block.to_le_bytes());
    at = put(out, at, &template.to_le_bytes());
    at = put(out, at, &SCHEMA_ID.to_le_bytes());
    put(out, at, &SCHEMA_VERSION.to_le_bytes())
}

/// Checks the room and the symbol; the message's length.
fn room(out: &[u8], body: usize, symbol: &[u8]) -> Result<usize, EncodeError> {
    if symbol.len() > usize::from(u8::MAX) {
        return Err(EncodeError::SymbolTooLong(symbol.len()));
    }
    let need = header::LEN + body + 1 + symbol.len();
    if out.len() < need {
        return Err(EncodeError::BufferTooSmall { need });
    }
    Ok(need)
}

fn symbol_at(out: &mut [u8], at: usize, symbol: &[u8]) -> usize {
    // `room` checked the length fits a u8.
    let at = put(out, at, &[symbol.len() as u8]);
    put(out, at, symbol)
}

fn levels16(out: &mut [u8], mut at: usize, levels: &[Level]) -> usize {
    // `depth_*` checked the count fits a u16.
    at = put(out, at, &(level::ENTRY_LENGTH as u16).to_le_bytes());
    at = put(out, at, &(levels.len() as u16).to_le_bytes());
    for l in levels {
        debug_assert_eq!(level::PRICE, 0);
        at = put(out, at, &l.price.to_le_bytes());
        at = put(out, at, &l.qty.to_le_bytes());
    }
    at
}

fn book_counts(bids: &[Level], asks: &[Level]) -> Result<usize, EncodeError> {
    for side in [bids, asks] {
        if side.len() > usize::from(u16::MAX) {
            return Err(EncodeError::TooManyEntries(side.len()));
        }
    }
    Ok(2 * group16::LEN + (bids.len() + asks.len()) * level::ENTRY_LENGTH)
}

/// `TradesStreamEvent`.
pub fn trades(
    out: &mut [u8],
    h: &TradesHead,
    list: &[Trade],
    symbol: &[u8],
) -> Result<usize, EncodeError> {
    if u32::try_from(list.len()).is_err() {
        return Err(EncodeError::TooManyEntries(list.len()));
    }
    let body = trades::BLOCK_LENGTH + group32::LEN + list.len() * trades::ENTRY_LENGTH;
    let need = room(out, body, symbol)?;
    let mut at = head(out, trades::TEMPLATE_ID, trades::BLOCK_LENGTH);
    at = put(out, at, &h.event_time_us.to_le_bytes());
    at = put(out, at, &h.transact_time_us.to_le_bytes());
    at = put(out, at, &h.price_exponent.to_le_bytes());
    at = put(out, at, &h.qty_exponent.to_le_bytes());
    at = put(out, at, &(trades::ENTRY_LENGTH as u16).to_le_bytes());
    at = put(out, at, &(list.len() as u32).to_le_bytes());
    for t in list {
        at = put(out, at, &t.id.to_le_bytes());
        at = put(out, at, &t.price.to_le_bytes());
        at = put(out, at, &t.qty.to_le_bytes());
        at = put(out, at, &[u8::from(t.is_buyer_maker)]);
    }
    let at = symbol_at(out, at, symbol);
    debug_assert_eq!(at, need);
    Ok(need)
}

/// `BestBidAskStreamEvent`.
pub fn best_bid_ask(
    out: &mut [u8],
    h: &BestBidAskHead,
    symbol: &[u8],
) -> Result<usize, EncodeError> {
    let need = room(out, best_bid_ask::BLOCK_LENGTH, symbol)?;
    let mut at = head(out, best_bid_ask::TEMPLATE_ID, best_bid_ask::BLOCK_LENGTH);
    at = put(out, at, &h.event_time_us.to_le_bytes());
    at = put(out, at, &h.book_update_id.to_le_bytes());
    at = put(out, at, &h.price_exponent.to_le_bytes());
    at = put(out, at, &h.qty_exponent.to_le_bytes());
    for v in [h.bid.price, h.bid.qty, h.ask.price, h.ask.qty] {
        at = put(out, at, &v.to_le_bytes());
    }
    let at = symbol_at(out, at, symbol);
    debug_assert_eq!(at, need);
    Ok(need)
}

/// A book message: the header, the root block `root` writes (its fixed
/// fields, in order), both sides, the symbol.
fn book(
    out: &mut [u8],
    template: u16,
    block_length: usize,
    root: impl FnOnce(&mut [u8], usize) -> usize,
    (bids, asks): (&[Level], &[Level]),
    symbol: &[u8],
) -> Result<usize, EncodeError> {
    let need = room(out, block_length + book_counts(bids, asks)?, symbol)?;
    let mut at = head(out, template, block_length);
    at = root(out, at);
    at = levels16(out, at, bids);
    at = levels16(out, at, asks);
    let at = symbol_at(out, at, symbol);
    debug_assert_eq!(at, need);
    Ok(need)
}

/// `DepthSnapshotStreamEvent`.
pub fn depth_snapshot(
    out: &mut [u8],
    h: &SnapshotHead,
    bids: &[Level],
    asks: &[Level],
    symbol: &[u8],
) -> Result<usize, EncodeError> {
    let root = |out: &mut [u8], mut at| {
        at = put(out, at, &h.event_time_us.to_le_bytes());
        at = put(out, at, &h.book_update_id.to_le_bytes());
        at = put(out, at, &h.price_exponent.to_le_bytes());
        put(out, at, &h.qty_exponent.to_le_bytes())
    };
    let (template, block) = (depth_snapshot::TEMPLATE_ID, depth_snapshot::BLOCK_LENGTH);
    book(out, template, block, root, (bids, asks), symbol)
}

/// `DepthDiffStreamEvent`.
pub fn depth_diff(
    out: &mut [u8],
    h: &DiffHead,
    bids: &[Level],
    asks: &[Level],
    symbol: &[u8],
) -> Result<usize, EncodeError> {
    let root = |out: &mut [u8], mut at| {
        at = put(out, at, &h.event_time_us.to_le_bytes());
        at = put(out, at, &h.first_update_id.to_le_bytes());
        at = put(out, at, &h.last_update_id.to_le_bytes());
        at = put(out, at, &h.price_exponent.to_le_bytes());
        put(out, at, &h.qty_exponent.to_le_bytes())
    };
    let (template, block) = (depth_diff::TEMPLATE_ID, depth_diff::BLOCK_LENGTH);
    book(out, template, block, root, (bids, asks), symbol)
}
