//! How Kraken v2 writes things: numbers at a pair's precision, RFC 3339
//! times, its replies to requests, and the `instrument` snapshot.

use std::fmt::Write as _;

use tickwire_venues::Venue;

use crate::catalogue::Listing;
use crate::market::{Digits, SimInstrument, decimal};
use crate::time::{Utc, now_us};

/// `us` (since the Unix epoch) as Kraken writes times: RFC 3339, UTC,
/// six fractional digits (`2023-10-06T17:35:55.440295Z`; "Book",
/// "timestamp", and every `time_in`/`time_out`).
pub(super) fn rfc3339(us: u64) -> String {
    let t = Utc::from_secs(us / 1_000_000);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        t.year,
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second,
        us % 1_000_000
    )
}

/// A price or quantity as a JSON number with exactly `precision` decimals,
/// trailing zeros kept (`62807.0`, `0.00000000`): the live book carries
/// every value at the pair's precision (measured over 8 172 levels; the
/// docs' examples, re-serialised, drop the zeros).
pub(super) fn number(out: &mut String, value: i64, precision: u8) {
    decimal(out, value, precision, Digits::Fixed(precision));
}

/// An increment of `10^-precision` as Kraken's `instrument` channel writes
/// it: a float's shortest form, in exponent notation below 10^-4 (`0.1`,
/// `0.0001`, `1e-05`, `1e-08`; "Instrument" example, and live
/// `"qty_min":5e-05`).
pub(super) fn increment(precision: u8) -> String {
    match precision {
        0 => "1.0".to_owned(),
        1..=4 => format!("0.{}1", "0".repeat(usize::from(precision) - 1)),
        _ => format!("1e-{precision:02}"),
    }
}

/// The `time_in`/`time_out` tail every reply ends with.
fn times(out: &mut String, time_in: u64) {
    let _ = write!(
        out,
        r#""time_in":"{}","time_out":"{}"}}"#,
        rfc3339(time_in),
        rfc3339(now_us().max(time_in))
    );
}

/// A request's `method` and `req_id`, and when it arrived: what every
/// reply echoes. Keys in alphabetical order, as every reply Kraken
/// documents and every live one quoted has them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Request<'a> {
    pub(super) method: &'a str,
    pub(super) req_id: Option<u64>,
    pub(super) time_in: u64,
}

impl Request<'_> {
    fn req_id(&self, out: &mut String) {
        if let Some(id) = self.req_id {
            let _ = write!(out, r#""req_id":{id},"#);
        }
    }

    /// A success: `{"method":..,"req_id":..,"result":{result},"success":true,..}`
    /// ("Book", acknowledgement: one per symbol).
    pub(super) fn ack(&self, result: &str) -> String {
        let mut s = String::with_capacity(160 + result.len());
        let _ = write!(s, r#"{{"method":"{}","#, self.method);
        self.req_id(&mut s);
        let _ = write!(s, r#""result":{result},"success":true,"#);
        times(&mut s, self.time_in);
        s
    }

    /// A refusal: `{"error":..,"method":..,"req_id":..,"success":false,
    /// "symbol":..,..}`, `symbol` when one symbol of a subscription is
    /// refused (live: "Currency pair not supported XBT/USD", "Already
    /// subscribed"), none for the whole request ("Subscription depth not
    /// supported").
    pub(super) fn error(&self, error: &str, symbol: Option<&str>) -> String {
        let mut s = String::with_capacity(200);
        let _ = write!(s, r#"{{"error":"{error}","method":"{}","#, self.method);
        self.req_id(&mut s);
        s.push_str(r#""success":false,"#);
        if let Some(symbol) = symbol {
            let _ = write!(s, r#""symbol":"{symbol}","#);
        }
        times(&mut s, self.time_in);
        s
    }

    /// The answer to `ping` ("Ping": `{"method":"pong","req_id":101,
    /// "time_in":..,"time_out":..}`).
    pub(super) fn pong(&self) -> String {
        let mut s = String::from(r#"{"method":"pong","#);
        self.req_id(&mut s);
        times(&mut s, self.time_in);
        s
    }
}

/// What Kraken sends first on a connection ("Status": "automatically
/// generated on successful websocket connection"; the live frame comes
/// before any reply). `connection_id` exceeds 2^53.
pub(super) fn status(connection_id: u64) -> String {
    format!(
        r#"{{"channel":"status","data":[{{"api_version":"v2","connection_id":{connection_id},"system":"online","version":"2.0.10"}}],"type":"update"}}"#
    )
}

/// The heartbeat ("Heartbeat": the channel name alone).
pub(super) const HEARTBEAT: &str = r#"{"channel":"heartbeat"}"#;

/// Made-up pairs listed after the simulated ones, so that the snapshot has
/// the live one's size: about 1 450 pairs and 850 assets (REST counts
/// quoted by peers), some 0.8 MB in one frame.
const FILLER_BASES: usize = 720;
const FILLER_QUOTES: [&str; 2] = ["USD", "EUR"];

/// The `instrument` snapshot ("Instrument": `data` is an object of
/// `assets` and `pairs`; one schema for snapshot and update): every
/// simulated pair with its precisions (the simulated instrument's scales),
/// `online`, then filler pairs, `delisted`.
pub(super) fn instrument_snapshot(instruments: &[SimInstrument]) -> String {
    let mut assets: Vec<String> = Vec::new();
    for i in instruments {
        for a in i.symbol.split('/') {
            if !assets.iter().any(|x| x == a) {
                assets.push(a.to_owned());
            }
        }
    }
    let filler = |k: usize| format!("SIM{k:03}");
    let mut s = String::with_capacity(900 * 1024);
    s.push_str(r#"{"channel":"instrument","type":"snapshot","data":{"assets":["#);
    let all_assets = assets.iter().cloned().chain((0..FILLER_BASES).map(filler));
    for (k, id) in all_assets.enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            r#"{{"id":"{id}","status":"enabled","precision":10,"precision_display":5,"borrowable":true,"collateral_value":1.0,"margin_rate":0.02}}"#
        );
    }
    s.push_str(r#"],"pairs":["#);
    let ours = instruments.iter().map(|i| {
        let min = Listing::of(Venue::Kraken, i).min_size;
        let mut qty_min = String::new();
        decimal(&mut qty_min, min, i.size_scale, Digits::Trimmed);
        (
            i.symbol.clone(),
            i.price_scale,
            i.size_scale,
            qty_min,
            "online",
        )
    });
    // The filler pairs have no book: they are listed `delisted`, so that a
    // client reading the list knows a subscription of one is refused
    // ("Currency pair not supported"), as it is.
    let made_up = (0..FILLER_BASES).flat_map(|k| {
        FILLER_QUOTES.iter().map(move |q| {
            (
                format!("{}/{q}", filler(k)),
                5,
                8,
                "0.0001".to_owned(),
                "delisted",
            )
        })
    });
    for (k, (symbol, price, qty, qty_min, status)) in ours.chain(made_up).enumerate() {
        if k > 0 {
            s.push(',');
        }
        let (base, quote) = symbol.split_once('/').unwrap_or((&symbol, ""));
        let _ = write!(
            s,
            r#"{{"symbol":"{symbol}","base":"{base}","quote":"{quote}","status":"{status}","qty_precision":{qty},"qty_increment":{},"price_precision":{price},"cost_precision":5,"marginable":true,"has_index":true,"cost_min":0.5,"margin_initial":0.2,"position_limit_long":250,"position_limit_short":200,"tick_size":{tick},"price_increment":{tick},"qty_min":{qty_min}}}"#,
            increment(qty),
            tick = increment(price),
        );
    }
    s.push_str("]}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_increments_as_kraken_writes_them() {
        assert_eq!(
            rfc3339(1_696_613_755_440_295),
            "2023-10-06T17:35:55.440295Z"
        );
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000Z");
        // A leap day and the turn of a century.
        assert_eq!(rfc3339(951_782_400_000_001), "2000-02-29T00:00:00.000001Z");
        assert_eq!(
            rfc3339(4_107_542_399_999_999),
            "2100-02-28T23:59:59.999999Z"
        );
        let inc: Vec<String> = [0, 1, 4, 5, 8, 10].into_iter().map(increment).collect();
        assert_eq!(inc, ["1.0", "0.1", "0.0001", "1e-05", "1e-08", "1e-10"]);
        let mut s = String::new();
        number(&mut s, 628_070, 1);
        s.push(' ');
        number(&mut s, 0, 8);
        assert_eq!(s, "62807.0 0.00000000");
    }

    #[test]
    fn replies_in_kraken_key_order() {
        let r = Request {
            method: "subscribe",
            req_id: Some(7),
            time_in: 1_696_613_755_219_022,
        };
        let e = r.error("Already subscribed", Some("BTC/USD"));
        assert!(
            e.starts_with(r#"{"error":"Already subscribed","method":"subscribe","req_id":7,"success":false,"symbol":"BTC/USD","time_in":"2023-10-06T17:35:55.219022Z","time_out":""#),
            "{e}"
        );
        let r = Request { req_id: None, ..r };
        let a = r.ack(r#"{"channel":"book","depth":10,"snapshot":true,"symbol":"ALGO/USD"}"#);
        assert!(a.starts_with(r#"{"method":"subscribe","result":{"channel":"book","depth":10,"snapshot":true,"symbol":"ALGO/USD"},"success":true,"time_in":"2023-10-06T17:35:55.219022Z","time_out":"#), "{a}");
        let v: serde_json::Value = serde_json::from_str(&a).unwrap();
        assert!(v["time_out"].as_str().unwrap() >= v["time_in"].as_str().unwrap());
        assert!(
            status(13_834_774_380_200_032_777).contains(r#""connection_id":13834774380200032777"#)
        );
    }

    #[test]
    fn the_instrument_snapshot_is_as_large_as_the_live_one() {
        let s = instrument_snapshot(&SimInstrument::pair(Venue::Kraken));
        assert!((500_000..1_000_000).contains(&s.len()), "{}", s.len());
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        let pairs = v["data"]["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 2 + 2 * FILLER_BASES);
        assert_eq!(pairs[0]["symbol"], "BTC/USD");
        assert_eq!(pairs[0]["price_precision"], 1);
        assert_eq!(pairs[1]["price_precision"], 2);
        assert_eq!(pairs[0]["status"], "online");
        assert_eq!(pairs[0]["qty_min"], 0.0001);
        assert!(pairs[2..].iter().all(|p| p["status"] == "delisted"));
        assert!(s.contains(r#""qty_increment":1e-08"#));
        assert_eq!(
            v["data"]["assets"].as_array().unwrap().len(),
            3 + FILLER_BASES
        );
    }
}
