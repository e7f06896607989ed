//! How Coinbase Advanced Trade writes its frames: the envelope, times in
//! Go's formats (the venue's `current_time` is Go's `time.String()`, so
//! its timestamps are taken to be Go's `RFC3339Nano`: fractions with their
//! trailing zeros cut, as in the docs' `"2023-02-09T20:19:35.39625135Z"`),
//! and decimals as trimmed strings (`"21921.3"`, `"0.02"`, `"79944"`,
//! `"0"`: WebSocket Channels docs; a live capture in a public Rust
//! client).

use std::fmt::Write as _;
use std::time::Duration;

use crate::market::{Digits, SimInstrument, decimal};
use crate::protocol::Market;
use crate::time::Utc;

/// The id a product's data is keyed by on the public channels: a `-USDC`
/// product's is its `-USD` one's, but for `USDT-USDC` and `EURC-USDC`.
/// "Subscribing to '-USDC' based products is only available on the user
/// channel. Other channels will return the same data as the corresponding
/// '-USD' based products"; `USDT-USDC` and `EURC-USDC` "are available on
/// all channels" (WebSocket Channels docs; the WebSocket endpoints page
/// says the same). So a market instrument named `BTC-USDC` is the venue's
/// BTC-USD product, and its frames say `BTC-USD`.
pub(super) fn product_id(symbol: &str) -> &str {
    match symbol.strip_suffix("-USDC") {
        Some(base) if !matches!(base, "USDT" | "EURC") => &symbol[..symbol.len() - 1],
        _ => symbol,
    }
}

/// The instrument the venue serves as `product`: the first whose id on
/// the wire is `product`'s (`BTC-USDC` and `BTC-USD` are one product; a
/// market listing both serves its first for both).
pub(super) fn product(market: &Market, product: &str) -> Option<usize> {
    let id = product_id(product);
    (market.instruments.iter()).position(|i| product_id(&i.symbol) == id)
}

/// `.fffffffff` with the trailing zeros cut, nothing for a whole second
/// (Go's `.999999999` layout).
fn fraction(out: &mut String, nanos: u64) {
    if nanos == 0 {
        return;
    }
    let digits = format!("{nanos:09}");
    out.push('.');
    out.push_str(digits.trim_end_matches('0'));
}

/// `ns` as Go's `RFC3339Nano`: `2023-02-09T20:19:35.39625135Z`.
pub(super) fn rfc3339(ns: u64) -> String {
    let t = Utc::from_secs(ns / 1_000_000_000);
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    fraction(&mut out, ns % 1_000_000_000);
    out.push('Z');
    out
}

/// Wall time `ns` and the process's monotonic clock `mono` as Go's
/// `time.String()` prints them, the heartbeat's `current_time`:
/// `2023-06-23 20:31:56.121961769 +0000 UTC m=+91717.525857105`
/// (Heartbeats Channel, WebSocket Channels docs).
pub(super) fn go_time(ns: u64, mono: Duration) -> String {
    let t = Utc::from_secs(ns / 1_000_000_000);
    let mut out = format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    fraction(&mut out, ns % 1_000_000_000);
    let _ = write!(
        out,
        " +0000 UTC m=+{}.{:09}",
        mono.as_secs(),
        mono.subsec_nanos()
    );
    out
}

/// The start of a frame of `channel`, up to its `events` array's opening
/// bracket. Data frames carry `"client_id":""` as the docs print them;
/// `subscriptions` and `heartbeats` frames leave it out, as live ones do
/// (a public Rust client's captures of 2026-09-07).
pub(super) fn envelope(
    channel: &str,
    timestamp: &str,
    sequence_num: u64,
    capacity: usize,
) -> String {
    let mut out = String::with_capacity(capacity + 128);
    let client_id = if matches!(channel, "subscriptions" | "heartbeats") {
        ""
    } else {
        r#""client_id":"","#
    };
    let _ = write!(
        out,
        r#"{{"channel":"{channel}",{client_id}"timestamp":"{timestamp}","sequence_num":{sequence_num},"events":["#
    );
    out
}

/// One level of a `level2` event: `{"side":"bid","event_time":..,
/// "price_level":"21921.73","new_quantity":"0.06317902"}`; the side is
/// `bid` or `offer`, never `ask`.
pub(super) fn level(
    out: &mut String,
    spec: &SimInstrument,
    bid: bool,
    event_time: &str,
    (price, size): (i64, i64),
) {
    let side = if bid { "bid" } else { "offer" };
    let _ = write!(
        out,
        r#"{{"side":"{side}","event_time":"{event_time}","price_level":""#
    );
    decimal(out, price, spec.price_scale, Digits::Trimmed);
    out.push_str(r#"","new_quantity":""#);
    decimal(out, size, spec.size_scale, Digits::Trimmed);
    out.push_str(r#""}"#);
}

/// `value` at `scale`, trimmed.
pub(super) fn number(value: i64, scale: u8) -> String {
    let mut out = String::new();
    decimal(&mut out, value, scale, Digits::Trimmed);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickwire_venues::time::rfc3339_ns;

    #[test]
    fn times_as_go_prints_them() {
        // The docs' own frames.
        assert_eq!(
            rfc3339(1_675_974_770_714_964_855),
            "2023-02-09T20:32:50.714964855Z"
        );
        assert_eq!(
            rfc3339(1_675_973_975_396_251_350),
            "2023-02-09T20:19:35.39625135Z"
        );
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            go_time(
                1_687_552_316_121_961_769,
                Duration::new(91_717, 525_857_105)
            ),
            "2023-06-23 20:31:56.121961769 +0000 UTC m=+91717.525857105"
        );
        assert_eq!(
            go_time(
                1_788_824_242_674_409_000,
                Duration::new(139_651, 272_674_714)
            ),
            "2026-09-07 23:37:22.674409 +0000 UTC m=+139651.272674714"
        );
        // Read back by the adapters' parser, across leap years and ends of
        // months.
        let mut ns = 1u64;
        for _ in 0..2000 {
            ns = ns.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1)
                % 4_102_444_800_000_000_000;
            assert_eq!(rfc3339_ns(&rfc3339(ns)), Some(ns), "{}", rfc3339(ns));
        }
    }

    #[test]
    fn usdc_products_but_two_are_their_usd_ones() {
        for (symbol, id) in [
            ("BTC-USDC", "BTC-USD"),
            ("ETH-USDC", "ETH-USD"),
            ("USDT-USDC", "USDT-USDC"),
            ("EURC-USDC", "EURC-USDC"),
            ("BTC-USD", "BTC-USD"),
            ("USDC-EUR", "USDC-EUR"),
        ] {
            assert_eq!(product_id(symbol), id, "{symbol}");
        }
    }

    #[test]
    fn envelopes_and_levels() {
        let mut e = envelope("l2_data", "T", 4, 0);
        let spec = SimInstrument {
            price_scale: 2,
            size_scale: 8,
            ..SimInstrument::btcusdt()
        };
        level(&mut e, &spec, false, "E", (2_192_130, 2_000_000));
        assert_eq!(
            e,
            r#"{"channel":"l2_data","client_id":"","timestamp":"T","sequence_num":4,"events":[{"side":"offer","event_time":"E","price_level":"21921.3","new_quantity":"0.02"}"#
        );
        assert_eq!(
            envelope("heartbeats", "T", 0, 0),
            r#"{"channel":"heartbeats","timestamp":"T","sequence_num":0,"events":["#
        );
        assert_eq!(number(7_994_400, 2), "79944");
        assert_eq!(number(0, 8), "0");
    }
}
