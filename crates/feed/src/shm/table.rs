//! The ring's instrument table: what a reader needs to name an event's
//! instrument and read its prices (venue, symbol, decimals), written once
//! by the writer before the ring is published at its path and never
//! changed after.
//!
//! Each entry is 16 words (128 bytes, a slot's size, so the slots after
//! the table stay on 128-byte boundaries):
//!
//! ```text
//! 0       id (bits 0..32) | price decimals (32..40) | size decimals (40..48)
//!         | venue length (48..56) | symbol length (56..64)
//! 1..5    the venue's name, UTF-8, zero-padded (at most 32 bytes)
//! 5..16   the symbol, UTF-8, zero-padded (at most 88 bytes)
//! ```
//!
//! Bytes go into words little-endian (byte `i` of a name is byte `i % 8`
//! of word `i / 8`, counted from the least significant), so the table
//! reads as the plain bytes on the machines the ring runs on.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::id::FeedId;

use super::RingError;
use super::memory::Loads;
use crate::sink::Instrument;

/// Words per table entry.
pub(super) const ENTRY_WORDS: usize = 16;
const VENUE_WORDS: usize = 4;
const SYMBOL_WORDS: usize = ENTRY_WORDS - 1 - VENUE_WORDS;
/// The longest venue name a table holds, in bytes.
pub const MAX_VENUE: usize = VENUE_WORDS * 8;
/// The longest symbol a table holds, in bytes.
pub const MAX_SYMBOL: usize = SYMBOL_WORDS * 8;

/// One entry of a ring's instrument table, as a reader gets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingInstrument {
    /// The id the ring's events carry for it ([`Event::instrument`](tickwire_venues::event::Event::instrument)).
    pub id: FeedId,
    /// The venue's name, as the feed's configuration names it.
    pub venue: String,
    /// The venue's symbol.
    pub symbol: String,
    /// Decimal places of its prices: a price `p` is `p / 10^price_scale`.
    pub price_scale: u8,
    /// Decimal places of its sizes.
    pub size_scale: u8,
}

/// `bytes` into `words`, little-endian, zero-padded.
fn pack(bytes: &[u8], words: &mut [u64]) {
    for (i, &b) in bytes.iter().enumerate() {
        words[i / 8] |= u64::from(b) << (8 * (i % 8));
    }
}

/// The first `len` bytes packed into `words`.
fn unpack(words: &[u64], len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (words[i / 8] >> (8 * (i % 8))) as u8)
        .collect()
}

/// The table's words for `instruments`, instrument `i` with id `i` (the
/// ids the feed gives its events). A name too long for its field is
/// refused, never cut.
pub(super) fn encode_table(instruments: &[Instrument]) -> Result<Vec<u64>, RingError> {
    let mut words = vec![0u64; instruments.len() * ENTRY_WORDS];
    for (i, (entry, instrument)) in words
        .chunks_exact_mut(ENTRY_WORDS)
        .zip(instruments)
        .enumerate()
    {
        let (venue, symbol) = (instrument.venue.as_bytes(), instrument.symbol.as_bytes());
        if venue.len() > MAX_VENUE || symbol.len() > MAX_SYMBOL || i > u32::MAX as usize {
            return Err(RingError::Name(format!(
                "{} {}",
                instrument.venue, instrument.symbol
            )));
        }
        entry[0] = i as u64
            | u64::from(instrument.price_scale) << 32
            | u64::from(instrument.size_scale) << 40
            | (venue.len() as u64) << 48
            | (symbol.len() as u64) << 56;
        pack(venue, &mut entry[1..1 + VENUE_WORDS]);
        pack(symbol, &mut entry[1 + VENUE_WORDS..]);
    }
    Ok(words)
}

/// Stores a table's words into a new ring's (relaxed: the header's magic,
/// stored after them with release, publishes them).
pub(super) fn store(table: &[u64], into: &[AtomicU64]) {
    for (word, &v) in into.iter().zip(table) {
        word.store(v, Ordering::Relaxed);
    }
}

/// Reads a table (loaded after the header's magic, which was fenced: an
/// acquire load). An entry out of order, or a name that is not UTF-8 or
/// longer than its field, is not a table this module wrote.
pub(super) fn decode_table(words: Loads<'_>) -> Result<Vec<RingInstrument>, RingError> {
    let entries = words.len() / ENTRY_WORDS;
    let mut out = Vec::with_capacity(entries);
    for i in 0..entries {
        let w: Vec<u64> = (0..ENTRY_WORDS)
            .map(|k| words.load(i * ENTRY_WORDS + k))
            .collect();
        let (venue_len, symbol_len) = ((w[0] >> 48) as u8 as usize, (w[0] >> 56) as usize);
        if w[0] as u32 as usize != i || venue_len > MAX_VENUE || symbol_len > MAX_SYMBOL {
            return Err(RingError::NotARing);
        }
        let text = |bytes| String::from_utf8(bytes).map_err(|_| RingError::NotARing);
        out.push(RingInstrument {
            id: FeedId(i as u32),
            venue: text(unpack(&w[1..1 + VENUE_WORDS], venue_len))?,
            symbol: text(unpack(&w[1 + VENUE_WORDS..], symbol_len))?,
            price_scale: (w[0] >> 32) as u8,
            size_scale: (w[0] >> 40) as u8,
        });
    }
    Ok(out)
}
