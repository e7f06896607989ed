//! Wall-clock time for the venues' messages: now, since the Unix epoch, and
//! the UTC calendar date and time of day of an instant. One reading of the
//! clock and one calendar for every venue module (each writes the fields
//! its own way: Kraken's RFC 3339 with six digits, Coinbase's Go formats,
//! the integers of Binance, OKX, Bybit and Deribit).

use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch, now (0 for a clock set before it).
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Microseconds since the Unix epoch, now.
pub(crate) fn now_us() -> u64 {
    now_ns() / 1_000
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    now_ns() / 1_000_000
}

/// The calendar of an instant, shared with the venues' parsers.
pub(crate) use tickwire_venues::time::Utc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_reads_unix_time() {
        let now = now_ns();
        assert!(now > 1_600_000_000_000_000_000, "{now}");
        assert!(now_ms() >= now / 1_000_000);
    }
}
