//! `venues`: decoding one exchange message into borrowed fields, tickwire
//! (simd-json tape reused, in place; and, as "tickwire scan", the fixed
//! layouts and one-pass scanner that `binance::Decoder` and `okx::Decoder`
//! try first) against serde_json and sonic-rs into
//! equivalent borrowed serde structs (`ArrayVec` levels: no allocation on
//! any side), same inputs, same run. Every iteration copies the message
//! into the parser's buffer first (simd-json parses in place; the copy is
//! included for all three), decodes, and reads every field.

use std::hint::black_box;

use arrayvec::ArrayVec;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::{binance, kraken, okx};

// The inputs follow the venues' documented shapes; depth has 20 + 20 levels.
const TRADE: &str = r#"{"e":"trade","E":1723161255208,"s":"BTCUSDT","t":3712345678,"p":"61737.63000000","q":"0.00123000","T":1723161255207,"m":true,"M":true}"#;
const TICKER: &str = r#"{"u":50093324134,"s":"BTCUSDT","b":"61737.63000000","B":"3.78826000","a":"61737.64000000","A":"1.54698000"}"#;

fn depth() -> String {
    depth_of(20)
}

/// A Binance depth update of `n` + `n` levels.
fn depth_of(n: u32) -> String {
    let (b, a) = (
        levels_of(n, 61737.63, -0.01, (8, 8)),
        levels_of(n, 61737.64, 0.01, (8, 8)),
    );
    format!(
        r#"{{"e":"depthUpdate","E":1723161255208,"s":"BTCUSDT","U":50093239189,"u":50093239202,"b":[{b}],"a":[{a}]}}"#,
    )
}

/// A futures depth update of `n` + `n` levels as USD-M sends them in the
/// combined stream's envelope (the layout of the USD-M recording in the
/// samples), bids worst first, prices and quantities at `decimals` (USD-M
/// BTCUSDT: 2 and 3, "61496.50", "0.010"; COIN-M: quantities in whole
/// contracts, 0).
fn futures_depth_of(n: u32, decimals: (usize, usize)) -> String {
    let (b, a) = (
        levels_of(n, 61496.5 - 0.1 * f64::from(n), 0.1, decimals),
        levels_of(n, 61496.6, 0.1, decimals),
    );
    format!(
        r#"{{"stream":"btcusdt@depth@0ms","data":{{"e":"depthUpdate","E":1723161256299,"T":1723161256298,"s":"BTCUSDT","U":5123107832006,"u":5123107837557,"pu":5123107831937,"b":[{b}],"a":[{a}]}}}}"#,
    )
}

/// `n` levels from `base`, `step` apart, prices and quantities at
/// `decimals` (a quantity in whole numbers at 0).
fn levels_of(n: u32, base: f64, step: f64, (price, qty): (usize, usize)) -> String {
    (0..n)
        .map(|i| {
            let size = if qty == 0 { 1.0 } else { 0.001 } * f64::from(i + 1);
            format!(
                r#"["{:.price$}","{:.qty$}"]"#,
                base + step * f64::from(i),
                size
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn okx_update() -> String {
    let side = |base: f64, step: f64| {
        (0..10)
            .map(|i| {
                format!(
                    r#"["{:.1}","{}","0","{}"]"#,
                    base + step * f64::from(i),
                    3 * i + 1,
                    i + 1
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        r#"{{"arg":{{"channel":"books","instId":"BTC-USDT"}},"action":"update","data":[{{"asks":[{}],"bids":[{}],"ts":"1652459225464","checksum":-914047754,"prevSeqId":123456,"seqId":123470}}]}}"#,
        side(30238.8, 0.1),
        side(30238.7, -0.1)
    )
}

const KRAKEN: &str = r#"[1920,{"a":[["0.042990","364630.28272081","1618678145.920470"],["0.043010","1000.00000000","1618678145.920471"]]},{"b":[["0.042980","0.00000000","1618678145.920708"],["0.042970","2.50000000","1618678145.920709"]],"c":"4105471083"},"book-1000","SC/EUR"]"#;

#[derive(Deserialize)]
#[allow(dead_code, non_snake_case)]
struct Trade<'a> {
    e: &'a str,
    E: u64,
    s: &'a str,
    t: u64,
    p: &'a str,
    q: &'a str,
    T: u64,
    m: bool,
}

#[derive(Deserialize)]
#[allow(dead_code, non_snake_case)]
struct Ticker<'a> {
    u: u64,
    s: &'a str,
    b: &'a str,
    B: &'a str,
    a: &'a str,
    A: &'a str,
}

#[derive(Deserialize)]
#[allow(dead_code, non_snake_case)]
struct Depth<'a> {
    e: &'a str,
    E: u64,
    s: &'a str,
    U: u64,
    u: u64,
    #[serde(borrow)]
    b: ArrayVec<[&'a str; 2], 64>,
    #[serde(borrow)]
    a: ArrayVec<[&'a str; 2], 64>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OkxArg<'a> {
    channel: &'a str,
    #[serde(rename = "instId")]
    inst_id: &'a str,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OkxBook<'a> {
    #[serde(borrow)]
    asks: ArrayVec<[&'a str; 4], 64>,
    #[serde(borrow)]
    bids: ArrayVec<[&'a str; 4], 64>,
    ts: &'a str,
    checksum: i64,
    #[serde(rename = "prevSeqId")]
    prev_seq_id: i64,
    #[serde(rename = "seqId")]
    seq_id: i64,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct OkxMsg<'a> {
    #[serde(borrow)]
    arg: OkxArg<'a>,
    action: &'a str,
    #[serde(borrow)]
    data: ArrayVec<OkxBook<'a>, 1>,
}

#[derive(Deserialize)]
struct KrakenAsks<'a> {
    #[serde(borrow)]
    a: ArrayVec<[&'a str; 3], 64>,
}

#[derive(Deserialize)]
struct KrakenBids<'a> {
    #[serde(borrow)]
    b: ArrayVec<[&'a str; 3], 64>,
    c: &'a str,
}

/// A two-part Kraken v1 book update, as a tuple.
type KrakenUpdate<'a> = (u64, KrakenAsks<'a>, KrakenBids<'a>, &'a str, &'a str);

fn decode(c: &mut Criterion) {
    let depth = depth();
    let okx_text = okx_update();
    let mut group = c.benchmark_group("venue_decode");
    let mut buf = vec![0u8; 64 * 1024];
    let mut parser = JsonParser::new(64 * 1024);

    let cases: [(&str, &str); 5] = [
        ("binance trade", TRADE),
        ("binance bookTicker", TICKER),
        ("binance depth 20+20", &depth),
        ("okx books update 10+10", &okx_text),
        ("kraken book update", KRAKEN),
    ];
    for (name, text) in cases {
        let len = text.len();
        group.bench_function(BenchmarkId::new("tickwire", name), |b| {
            b.iter(|| {
                buf[..len].copy_from_slice(text.as_bytes());
                let n = parser
                    .parse(&mut buf[..len + INPUT_PADDING], len, |doc| match name {
                        "binance trade" | "binance bookTicker" | "binance depth 20+20" => {
                            match binance::decode(doc).unwrap() {
                                binance::Message::Trade(t) => {
                                    t.price.len() + t.qty.len() + t.id as usize
                                }
                                binance::Message::BookTicker(t) => t.bid.0.len() + t.ask.1.len(),
                                binance::Message::Depth(d) => d
                                    .bids
                                    .iter()
                                    .chain(d.asks.iter())
                                    .map(|l| l.unwrap().0.len())
                                    .sum(),
                                _ => 0,
                            }
                        }
                        "okx books update 10+10" => match okx::decode(doc).unwrap() {
                            okx::Message::Book(b) => b
                                .bids
                                .iter()
                                .chain(b.asks.iter())
                                .map(|l| l.unwrap().1.len())
                                .sum(),
                            _ => 0,
                        },
                        _ => match kraken::decode(doc).unwrap() {
                            kraken::Message::Book(b) => b
                                .bids
                                .into_iter()
                                .chain(b.asks)
                                .flat_map(|l| l.iter())
                                .map(|l| l.unwrap().1.len())
                                .sum(),
                            _ => 0,
                        },
                    })
                    .unwrap();
                black_box(n)
            })
        });
        if name.starts_with("binance") {
            // `binance::Decoder`, as the adapter uses it: UTF-8 checked,
            // then the fixed layouts and the one-pass scanner, simd-json
            // only for what they do not take.
            let mut decoder = binance::Decoder::new();
            group.bench_function(BenchmarkId::new("tickwire scan", name), |b| {
                b.iter(|| {
                    buf[..len].copy_from_slice(text.as_bytes());
                    let n: usize = decoder.decode(&mut buf, len, |m| match m.unwrap() {
                        binance::Message::Trade(t) => t.price.len() + t.qty.len() + t.id as usize,
                        binance::Message::BookTicker(t) => t.bid.0.len() + t.ask.1.len(),
                        binance::Message::Depth(d) => d
                            .bids
                            .iter()
                            .chain(d.asks.iter())
                            .map(|l| l.unwrap().0.len())
                            .sum(),
                        _ => 0,
                    });
                    black_box(n)
                })
            });
        }
        if name.starts_with("okx") {
            // `okx::Decoder`, as the adapter uses it: UTF-8 checked, then
            // the fixed book layout, simd-json for what it does not take.
            let mut decoder = okx::Decoder::new();
            group.bench_function(BenchmarkId::new("tickwire scan", name), |b| {
                b.iter(|| {
                    buf[..len].copy_from_slice(text.as_bytes());
                    let n: usize = decoder.decode(&mut buf, len, |m| match m.unwrap() {
                        okx::Message::Book(b) => b
                            .bids
                            .iter()
                            .chain(b.asks.iter())
                            .map(|l| l.unwrap().1.len())
                            .sum(),
                        _ => 0,
                    });
                    black_box(n)
                })
            });
        }
        for peer in ["serde_json", "sonic-rs"] {
            group.bench_function(BenchmarkId::new(peer, name), |b| {
                b.iter(|| {
                    buf[..len].copy_from_slice(text.as_bytes());
                    let input = &buf[..len];
                    macro_rules! de {
                        ($t:ty) => {
                            if peer == "serde_json" {
                                serde_json::from_slice::<$t>(input).unwrap()
                            } else {
                                sonic_rs::from_slice::<$t>(input).unwrap()
                            }
                        };
                    }
                    let n: usize = match name {
                        "binance trade" => {
                            let t = de!(Trade<'_>);
                            t.p.len() + t.q.len() + t.t as usize
                        }
                        "binance bookTicker" => {
                            let t = de!(Ticker<'_>);
                            t.b.len() + t.A.len()
                        }
                        "binance depth 20+20" => {
                            let d = de!(Depth<'_>);
                            d.b.iter().chain(d.a.iter()).map(|l| l[0].len()).sum()
                        }
                        "okx books update 10+10" => {
                            let m = de!(OkxMsg<'_>);
                            m.data[0]
                                .bids
                                .iter()
                                .chain(m.data[0].asks.iter())
                                .map(|l| l[1].len())
                                .sum()
                        }
                        _ => {
                            let (_, a, b, _, _) = de!(KrakenUpdate<'_>);
                            a.a.iter()
                                .chain(b.b.iter())
                                .map(|l| l[1].len())
                                .sum::<usize>()
                                + b.c.len()
                        }
                    };
                    black_box(n)
                })
            });
        }
    }
    group.finish();
}

/// What checking a message's UTF-8 costs, the core library's check against
/// simdutf8's (the codec's), on the shapes the decoders see: a book ticker,
/// a trade, a one-level depth update as the demo's simulator sends it, and
/// the 20 + 20-level one above.
fn utf8(c: &mut Criterion) {
    const SHORT_DEPTH: &str = r#"{"stream":"btcusdt@depth@100ms","data":{"e":"depthUpdate","E":1723161255208,"s":"BTCUSDT","U":50093239189,"u":50093239202,"b":[["61737.63","0.00123"]],"a":[]}}"#;
    let deep = depth();
    let mut group = c.benchmark_group("utf8 check");
    for (name, text) in [
        ("ticker", TICKER),
        ("trade", TRADE),
        ("depth, 1 level", SHORT_DEPTH),
        ("depth, 20 + 20 levels", deep.as_str()),
    ] {
        let name = format!("{name} ({} B)", text.len());
        group.bench_function(BenchmarkId::new("core", &name), |b| {
            b.iter(|| core::str::from_utf8(black_box(text.as_bytes())).is_ok())
        });
        group.bench_function(BenchmarkId::new("simdutf8", &name), |b| {
            b.iter(|| simdutf8::basic::from_utf8(black_box(text.as_bytes())).is_ok())
        });
    }
    group.finish();
}

/// A depth update's levels read exactly into the instrument's scale (8
/// and 8, BTCUSDT's in the replays), as the adapter reads them: decoded by
/// `binance::Decoder` and read by `book::scaled_levels` (in Binance's
/// shape, the values read with the levels' bounds, in one pass).
/// At 20 + 20 and 100 + 100 levels (spot's 8 decimals; USD-M's 2 and 3,
/// and whole-number quantities, in the futures envelope), so that the
/// difference over the 160
/// levels between them is the cost of a level, apart from the message's
/// fixed cost; and the parse alone over the 40 levels' strings, read out
/// beforehand.
fn levels_exact(c: &mut Criterion) {
    use tickwire_venues::book::{Side, scaled_levels};
    use tickwire_venues::decimal;
    let mut group = c.benchmark_group("depth levels exact");
    let mut buf = vec![0u8; 64 * 1024];
    let mut decoder = binance::Decoder::new();
    for (n, shape) in [(20u32, 0), (100, 0), (20, 1), (100, 1), (20, 2), (100, 2)] {
        let (text, shape) = match shape {
            0 => (depth_of(n), ""),
            1 => (futures_depth_of(n, (2, 3)), " (USD-M: 2 and 3 decimals)"),
            _ => (
                futures_depth_of(n, (1, 0)),
                " (futures: 1 decimal, whole quantities)",
            ),
        };
        let len = text.len();
        // Read as a depth update of n + n levels, in one pass.
        buf[..len].copy_from_slice(text.as_bytes());
        let levels = decoder.decode(&mut buf, len, |m| match m.unwrap() {
            binance::Message::Depth(d) => d.bids.len() + d.asks.len(),
            _ => 0,
        });
        assert_eq!(levels, 2 * n as usize, "{text}");
        group.bench_function(format!("decode and parse, {n} + {n} levels{shape}"), |b| {
            b.iter(|| {
                buf[..len].copy_from_slice(text.as_bytes());
                // As the adapter reads them: `scaled_levels`, exact at
                // BTCUSDT's scales.
                let sum: i64 = decoder.decode(&mut buf, len, |m| match m.unwrap() {
                    binance::Message::Depth(d) => scaled_levels(&d.bids, Side::Bid, 8, 8)
                        .chain(scaled_levels(&d.asks, Side::Ask, 8, 8))
                        .map(|l| {
                            let (_, l) = l.unwrap();
                            l.price ^ l.size
                        })
                        .fold(0, |a, x| a ^ x),
                    _ => 0,
                });
                black_box(sum)
            })
        });
    }
    // The strings of the 20 + 20 levels, then only their parse.
    let text = depth_of(20);
    let mut owned = text.clone().into_bytes();
    owned.resize(text.len() + INPUT_PADDING, 0);
    let pairs: Vec<(String, String)> =
        decoder.decode(&mut owned, text.len(), |m| match m.unwrap() {
            binance::Message::Depth(d) => d
                .bids
                .iter()
                .chain(d.asks.iter())
                .map(|l| {
                    let (p, q) = l.unwrap();
                    (p.to_string(), q.to_string())
                })
                .collect(),
            _ => Vec::new(),
        });
    assert_eq!(pairs.len(), 40);
    group.bench_function("parse alone, 40 levels", |b| {
        b.iter(|| {
            pairs
                .iter()
                .map(|(p, q)| {
                    let l = decimal::level(black_box(p), black_box(q), 8, 8).unwrap();
                    l.price ^ l.size
                })
                .fold(0, |a, x| a ^ x)
        })
    });
    group.finish();
}

criterion_group!(benches, decode, utf8, levels_exact);
criterion_main!(benches);
