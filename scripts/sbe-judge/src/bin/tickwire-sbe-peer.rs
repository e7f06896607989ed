//! A peer for the `sbe` bench: the same simulated Binance SBE market
//! through nautilus_trader's own pipeline for it (`nautilus-binance`'s
//! `decode_market_data`, then `parse_depth_diff`, `parse_trades_event` and
//! `parse_bbo_event` into its model's exact fixed-point types, each diff's
//! deltas applied to its `OrderBook`, L2 by price), timed the way the
//! bench times tickwire's adapter. Run by `benches/sbe_peer.sh`, which
//! writes the market with `sbe RUNS STEPS dump FILE` (the bench's
//! `common/peer_dump.rs` gives the file's layout) and sets the two side by
//! side.
//!
//! `tickwire-sbe-peer FILE RUNS`
//!
//! Before it times anything, one replay of the whole market must leave
//! each book's best bid and ask (price and size) exactly as tickwire's
//! adapter left them, with no diff out of sequence and no delta the book
//! refused: a replay that did less work would be timed as cheap. Then, per
//! set (the bench's: whole, the depth diffs with the REST snapshots, the
//! trades, the best bid/ask), RUNS timed replays after one warm-up (more,
//! up to 400, until a fifth of a second has been timed), each
//! with new books, each message first copied into one receive buffer as
//! the bench does; the median and least ns a message.
//!
//! What it does as nautilus_trader's live client does, and what it leaves
//! out: the decode, the symbol's lookup and the parse into its model's
//! types are the client's own functions; the book is its model's
//! `OrderBook`; the REST snapshot is read with `serde_json` into its
//! `Price` and `Quantity` (its HTTP client reads the venue's REST depth in
//! its own way); the diffs before it are kept until it comes, and each
//! diff bridges to the book's last update id as the venue's docs say
//! (dropped at or below it, a gap counted above the next one). Its data engine's message bus and its event loop are left out:
//! what is timed is the per-message work alone, as on tickwire's side.

use std::hint::black_box;
use std::time::Instant;

use nautilus_binance::spot::sbe::stream::DepthDiffStreamEvent;
use nautilus_binance::spot::websocket::streams::parse::{
    MarketDataMessage, decode_market_data, parse_bbo_event, parse_depth_diff, parse_trades_event,
};
use nautilus_core::UnixNanos;
use nautilus_model::data::BookOrder;
use nautilus_model::enums::{BookType, OrderSide};
use nautilus_model::identifiers::{InstrumentId, Symbol};
use nautilus_model::instruments::{CurrencyPair, Instrument, InstrumentAny};
use nautilus_model::orderbook::OrderBook;
use nautilus_model::types::{Currency, Price, Quantity};

/// One record of the bench's file.
struct Record {
    tag: u8,
    instrument: usize,
    bytes: Vec<u8>,
}

/// The template ids of the stream schema's four messages (`stream_1_0`).
const TRADES: u16 = 10000;
const BEST_BID_ASK: u16 = 10001;
const DEPTH_DIFF: u16 = 10003;

/// Whether a set replays a record.
type Of = fn(&Record) -> bool;

/// The bench's sets, by name: which records each replays.
const SETS: [(&str, Of); 4] = [
    ("whole", |_| true),
    ("depth diffs (and the snapshots)", |r| {
        r.tag == b'R' || template(r) == Some(DEPTH_DIFF)
    }),
    ("trades", |r| template(r) == Some(TRADES)),
    ("best bid/ask", |r| template(r) == Some(BEST_BID_ASK)),
];

fn template(r: &Record) -> Option<u16> {
    (r.tag == b'S' && r.bytes.len() >= 4).then(|| u16::from_le_bytes([r.bytes[2], r.bytes[3]]))
}

fn read(path: &str) -> Vec<Record> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut records = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let head = data.get(at..at + 6).expect("a record's head");
        let len = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
        let bytes = data.get(at + 6..at + 6 + len).expect("a record's bytes");
        records.push(Record {
            tag: head[0],
            instrument: usize::from(head[1]),
            bytes: bytes.to_vec(),
        });
        at += 6 + len;
    }
    records
}

/// An instrument as nautilus_trader's Binance client makes it from the
/// venue's listing: a spot pair at the listing's decimals.
fn instrument(symbol: &str, price_scale: u8, size_scale: u8) -> InstrumentAny {
    let base = symbol.strip_suffix("USDT").expect("a USDT pair");
    let tick = |scale: u8| format!("{:.*}", usize::from(scale), 10f64.powi(-i32::from(scale)));
    InstrumentAny::CurrencyPair(CurrencyPair::new(
        InstrumentId::from(format!("{symbol}.BINANCE").as_str()),
        Symbol::from(symbol),
        Currency::from(base),
        Currency::USDT(),
        price_scale,
        size_scale,
        Price::from(tick(price_scale).as_str()),
        Quantity::from(tick(size_scale).as_str()),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        UnixNanos::default(),
        UnixNanos::default(),
    ))
}

/// One instrument's state in a replay.
struct Book {
    symbol: String,
    instrument: InstrumentAny,
    book: OrderBook,
    /// The last update id applied (the REST snapshot's, then each diff's).
    last: u64,
    /// Diffs before the REST snapshot, kept until it comes (`None` once
    /// it has).
    pending: Option<Vec<DepthDiffStreamEvent>>,
}

impl Book {
    /// A diff bridged to the book's last update id as the venue's docs
    /// say (Binance spot, WebSocket Streams, "How to manage a local order
    /// book correctly": an event whose `u` is below the book's id is
    /// ignored, one whose `U` is above it plus one means a gap; the book's
    /// id is then `u`): dropped at or below it, a gap counted if it starts
    /// above the next one, its deltas applied.
    fn diff(&mut self, ev: &DepthDiffStreamEvent, counts: &mut Counts) {
        if let Some(pending) = &mut self.pending {
            pending.push(ev.clone());
            return;
        }
        let (first, last) = (
            ev.first_book_update_id as u64,
            ev.last_book_update_id as u64,
        );
        if last <= self.last {
            return;
        }
        if first > self.last + 1 {
            counts.gaps += 1;
        }
        self.last = last;
        if let Some(deltas) = parse_depth_diff(ev, &self.instrument)
            && self.book.apply_deltas(&deltas).is_err()
        {
            counts.refused += 1;
        }
    }
}

#[derive(Default)]
struct Counts {
    gaps: u64,
    refused: u64,
    unknown: u64,
}

/// A REST depth body (`lastUpdateId`, `bids`, `asks` as text pairs).
#[derive(serde::Deserialize)]
struct Snapshot {
    #[serde(rename = "lastUpdateId")]
    last_update_id: u64,
    bids: Vec<[String; 2]>,
    asks: Vec<[String; 2]>,
}

fn new_books(instruments: &[(String, u8, u8)]) -> Vec<Book> {
    instruments
        .iter()
        .map(|(symbol, ps, ss)| {
            let instrument = instrument(symbol, *ps, *ss);
            let book = OrderBook::new(instrument.id(), BookType::L2_MBP);
            Book {
                symbol: symbol.clone(),
                instrument,
                book,
                last: 0,
                pending: Some(Vec::new()),
            }
        })
        .collect()
}

/// `records` through the pipeline into `books`, each first copied into
/// `rx`.
fn replay(records: &[&Record], books: &mut [Book], rx: &mut [u8], counts: &mut Counts) {
    for r in records {
        let rx = &mut rx[..r.bytes.len()];
        rx.copy_from_slice(&r.bytes);
        if r.tag == b'R' {
            let b = &mut books[r.instrument];
            let s: Snapshot = serde_json::from_slice(rx).expect("a REST depth body");
            let (ps, ss) = (
                b.instrument.price_precision(),
                b.instrument.size_precision(),
            );
            b.book.clear(s.last_update_id, UnixNanos::default());
            for (side, levels) in [(OrderSide::Buy, &s.bids), (OrderSide::Sell, &s.asks)] {
                for [p, q] in levels {
                    let price: Price = p.parse().expect("a price");
                    let size: Quantity = q.parse().expect("a size");
                    let order = BookOrder::new(
                        side,
                        Price::from_raw(price.raw, ps),
                        Quantity::from_raw(size.raw, ss),
                        0,
                    );
                    b.book.add(order, 0, s.last_update_id, UnixNanos::default());
                }
            }
            b.last = s.last_update_id;
            for ev in b.pending.take().unwrap_or_default() {
                b.diff(&ev, counts);
            }
            continue;
        }
        let Ok(message) = decode_market_data(rx) else {
            counts.unknown += 1;
            continue;
        };
        let find = |books: &mut [Book], symbol: &str| {
            let at = books.iter().position(|b| b.symbol == symbol);
            at.expect("a symbol of the market")
        };
        match message {
            MarketDataMessage::DepthDiff(ev) => {
                books[find(books, ev.symbol.as_str())].diff(&ev, counts);
            }
            MarketDataMessage::Trades(ev) => {
                let b = &books[find(books, ev.symbol.as_str())];
                black_box(parse_trades_event(&ev, &b.instrument));
            }
            MarketDataMessage::BestBidAsk(ev) => {
                let b = &books[find(books, ev.symbol.as_str())];
                black_box(parse_bbo_event(&ev, &b.instrument));
            }
            MarketDataMessage::DepthSnapshot(_) => counts.unknown += 1,
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, runs] = &args[..] else {
        eprintln!("usage: tickwire-sbe-peer FILE RUNS");
        std::process::exit(2);
    };
    let runs: usize = runs.parse().expect("RUNS");
    let records = read(path);
    let instruments: Vec<(String, u8, u8)> = records
        .iter()
        .filter(|r| r.tag == b'I')
        .map(|r| {
            let text = String::from_utf8_lossy(&r.bytes);
            let w: Vec<&str> = text.split(' ').collect();
            (
                w[0].to_owned(),
                w[1].parse().unwrap(),
                w[2].parse().unwrap(),
            )
        })
        .collect();
    let market: Vec<&Record> = records
        .iter()
        .filter(|r| r.tag == b'R' || r.tag == b'S')
        .collect();
    let mut rx = vec![0u8; market.iter().map(|r| r.bytes.len()).max().unwrap_or(0)];
    // The check: the whole market once, each book's top as tickwire's.
    let mut books = new_books(&instruments);
    let mut counts = Counts::default();
    replay(&market, &mut books, &mut rx, &mut counts);
    assert_eq!(
        (counts.gaps, counts.refused, counts.unknown),
        (0, 0, 0),
        "gaps, refused deltas, undecoded frames"
    );
    for r in records.iter().filter(|r| r.tag == b'T') {
        let b = &books[r.instrument];
        let top = format!(
            "{} {} {} {}",
            b.book.best_bid_price().expect("a bid"),
            b.book.best_bid_size().expect("a bid's size"),
            b.book.best_ask_price().expect("an ask"),
            b.book.best_ask_size().expect("an ask's size"),
        );
        let want = String::from_utf8_lossy(&r.bytes);
        assert_eq!(
            top, want,
            "{}: the book's top differs from tickwire's",
            b.symbol
        );
    }
    println!(
        "nautilus_trader (nautilus-binance 0.57.0): {} messages, each book's best bid and ask as tickwire's at the end",
        market.len()
    );
    for (name, of) in SETS {
        let set: Vec<&Record> = market.iter().copied().filter(|r| of(r)).collect();
        // At least RUNS rounds and a fifth of a second timed (up to 400
        // rounds), as the bench does.
        let mut ns = Vec::new();
        let mut round = 0;
        let timed = |ns: &Vec<f64>| ns.iter().sum::<f64>() * set.len() as f64;
        while round <= runs || (timed(&ns) < 0.2e9 && round <= 400) {
            let mut books = new_books(&instruments);
            let mut counts = Counts::default();
            let t = Instant::now();
            replay(&set, &mut books, &mut rx, &mut counts);
            let elapsed = t.elapsed().as_nanos() as f64 / set.len() as f64;
            black_box(&books);
            assert_eq!((counts.gaps, counts.refused, counts.unknown), (0, 0, 0));
            // The first round is a warm-up.
            if round > 0 {
                ns.push(elapsed);
            }
            round += 1;
        }
        let least = ns.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "{name}: {} messages; {} rounds, ns/message median (least): nautilus_trader {:.0} ({least:.0})",
            set.len(),
            ns.len(),
            median(ns)
        );
    }
}
