//! A peer for the `sbe` bench: one of its markets (written by the bench,
//! `sbe RUNS STEPS dump FILE [MARKET]`; `common/peer_dump.rs` gives the
//! file's layout) through nautilus_trader's Binance SBE code: its spot
//! client's per-frame path for the `@trade`, `@bestBidAsk` and `@depth`
//! streams, each diff's deltas then applied to its model's `OrderBook` (L2
//! by price), timed the way the bench times tickwire's adapter. Run by
//! `benches/sbe_peer.sh`, which sets the two side by side.
//!
//! `tickwire-sbe-peer FILE RUNS`, or `tickwire-sbe-peer FILE count N SET`
//! (N replays of one set, untimed, for `benches/sbe_peer.sh count` to
//! count instructions)
//!
//! Before it times anything, one replay of the whole market must leave
//! each book's levels exactly as tickwire's adapter left them (every level
//! tickwire's book shows at depth 500, price and size, best first on both
//! sides), with no diff out of sequence: a replay that did less work would
//! be timed as cheap. Then, per set (the bench's: whole, the depth diffs
//! with the REST snapshots, the trades, the best bid/ask), RUNS timed
//! replays after one warm-up (more, up to 400, until a fifth of a second
//! has been timed), each with new books, each frame first copied into one
//! receive buffer, the frames packed one after another, as the bench
//! does; the median and least ns a message.
//!
//! Per frame, as nautilus-binance 0.57.0's spot client does it
//! (`spot/websocket/streams/handler.rs`, `handle_binary_frame`;
//! `spot/data.rs`, `handle_ws_message`): `decode_market_data` into a
//! one-message `Vec`; the symbol interned again (`Ustr::from`) and the
//! instrument looked up by it in a hash map; `parse_trades_event`,
//! `parse_bbo_event` or `parse_depth_diff` into its model's exact
//! fixed-point types (64-bit: the judge builds nautilus without its
//! default `high-precision`, the faster of the two); a diff's deltas boxed
//! as the client sends them (`OrderBookDeltas_API`). Left out: its channel
//! send, its data engine and message bus. Added, as its spot client keeps
//! no book from the diff stream (it subscribes the `@depth20` snapshots
//! for books; its futures client bridges diffs to a REST snapshot): the
//! book, and this program's own bridging of each diff to it as the venue's
//! docs say (see [`Book::diff`]), the diffs before the REST snapshot kept
//! until it comes. The REST snapshot is read before the clock starts (its
//! HTTP client reads the venue's REST depth in SBE, not in JSON as here),
//! and its levels added to the book in the timed replay; tickwire's side
//! reads its JSON within the timed replay.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use nautilus_binance::spot::sbe::stream::DepthDiffStreamEvent;
use nautilus_binance::spot::websocket::streams::parse::{
    MarketDataMessage, decode_market_data, parse_bbo_event, parse_depth_diff, parse_trades_event,
};
use nautilus_core::UnixNanos;
use nautilus_model::data::{BookOrder, OrderBookDeltas_API};
use nautilus_model::enums::{BookType, OrderSide};
use nautilus_model::identifiers::{InstrumentId, Symbol};
use nautilus_model::instruments::{CurrencyPair, Instrument, InstrumentAny};
use nautilus_model::orderbook::OrderBook;
use nautilus_model::types::{Currency, Price, Quantity};
use ustr::Ustr;

/// One record of the bench's file, its bytes at `at` in [`Market::bytes`].
struct Record {
    tag: u8,
    instrument: usize,
    at: (usize, usize),
}

/// The file read: its records, their bytes packed one after another.
struct Market {
    records: Vec<Record>,
    bytes: Vec<u8>,
}

impl Market {
    fn read(path: &str) -> Market {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut records = Vec::new();
        let mut at = 0;
        while at < data.len() {
            let head = data.get(at..at + 6).expect("a record's head");
            let len = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
            assert!(at + 6 + len <= data.len(), "a record's bytes cut short");
            records.push(Record {
                tag: head[0],
                instrument: usize::from(head[1]),
                at: (at + 6, at + 6 + len),
            });
            at += 6 + len;
        }
        Market {
            records,
            bytes: data,
        }
    }

    fn of(&self, r: &Record) -> &[u8] {
        &self.bytes[r.at.0..r.at.1]
    }

    fn text(&self, r: &Record) -> String {
        String::from_utf8_lossy(self.of(r)).into_owned()
    }
}

/// The template ids of the stream schema's messages (`stream_1_0`).
const TRADES: u16 = 10000;
const BEST_BID_ASK: u16 = 10001;
const DEPTH_DIFF: u16 = 10003;

/// Whether a set replays a record.
type Of = fn(&Market, &Record) -> bool;

/// The bench's sets, by name: which records each replays.
const SETS: [(&str, Of); 4] = [
    ("whole", |_, _| true),
    ("depth diffs (and the snapshots)", |m, r| {
        r.tag == b'R' || template(m, r) == Some(DEPTH_DIFF)
    }),
    ("trades", |m, r| template(m, r) == Some(TRADES)),
    ("best bid/ask", |m, r| template(m, r) == Some(BEST_BID_ASK)),
];

fn template(m: &Market, r: &Record) -> Option<u16> {
    let b = m.of(r);
    (r.tag == b'S' && b.len() >= 4).then(|| u16::from_le_bytes([b[2], b[3]]))
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

/// A REST depth body (`lastUpdateId`, `bids`, `asks` as text pairs).
#[derive(serde::Deserialize)]
struct Snapshot {
    #[serde(rename = "lastUpdateId")]
    last_update_id: u64,
    bids: Vec<[String; 2]>,
    asks: Vec<[String; 2]>,
}

/// A REST snapshot read before the clock starts: its last update id and
/// its levels as the book's orders, bids then asks.
struct Rest {
    last_update_id: u64,
    orders: Vec<BookOrder>,
}

fn rest(body: &[u8], instrument: &InstrumentAny) -> Rest {
    let s: Snapshot = serde_json::from_slice(body).expect("a REST depth body");
    let (ps, ss) = (instrument.price_precision(), instrument.size_precision());
    let mut orders = Vec::new();
    for (side, levels) in [(OrderSide::Buy, &s.bids), (OrderSide::Sell, &s.asks)] {
        for [p, q] in levels {
            let price: Price = p.parse().expect("a price");
            let size: Quantity = q.parse().expect("a size");
            orders.push(BookOrder::new(
                side,
                Price::from_raw(price.raw, ps),
                Quantity::from_raw(size.raw, ss),
                0,
            ));
        }
    }
    Rest {
        last_update_id: s.last_update_id,
        orders,
    }
}

/// One instrument's state in a replay.
struct Book {
    instrument: InstrumentAny,
    book: OrderBook,
    /// The last update id applied (the REST snapshot's, then each diff's).
    last: u64,
    /// Diffs before the REST snapshot, kept until it comes (`None` once
    /// it has).
    pending: Option<Vec<DepthDiffStreamEvent>>,
}

impl Book {
    fn new(instrument: &InstrumentAny) -> Book {
        Book {
            instrument: instrument.clone(),
            book: OrderBook::new(instrument.id(), BookType::L2_MBP),
            last: 0,
            pending: Some(Vec::new()),
        }
    }

    /// The REST snapshot: the book cleared and refilled, then the diffs
    /// kept for it applied.
    fn snapshot(&mut self, rest: &Rest, gaps: &mut u64) {
        self.book.clear(rest.last_update_id, UnixNanos::default());
        for order in &rest.orders {
            self.book
                .add(*order, 0, rest.last_update_id, UnixNanos::default());
        }
        self.last = rest.last_update_id;
        for ev in self.pending.take().unwrap_or_default() {
            self.diff(&ev, gaps);
        }
    }

    /// A diff bridged to the book's last update id as the venue's docs
    /// say (Binance spot, WebSocket Streams, "How to manage a local order
    /// book correctly": an event whose `u` is below the book's id is
    /// ignored, one whose `U` is above it plus one means a gap; the book's
    /// id is then `u`): dropped at or below it, a gap counted if it starts
    /// above the next one, its deltas boxed as the client sends them and
    /// applied.
    fn diff(&mut self, ev: &DepthDiffStreamEvent, gaps: &mut u64) {
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
            *gaps += 1;
        }
        self.last = last;
        if let Some(deltas) = parse_depth_diff(ev, &self.instrument) {
            let deltas = OrderBookDeltas_API::new(deltas);
            self.book
                .apply_deltas(&deltas)
                .expect("the deltas of the book's instrument");
        }
    }

    /// The book's best `bids` and `asks` levels, as the bench's `T`
    /// record writes tickwire's.
    fn lines(&self, bids: usize, asks: usize) -> String {
        let (ps, ss) = (
            self.instrument.price_precision(),
            self.instrument.size_precision(),
        );
        let mut out = String::new();
        let bids = self.book.bids(Some(bids)).map(|l| ("B", l));
        let asks = self.book.asks(Some(asks)).map(|l| ("A", l));
        for (tag, l) in bids.chain(asks) {
            let price = Price::from_raw(l.price.value.raw, ps);
            let size = Quantity::from_raw(l.size_raw(), ss);
            out.push_str(&format!("{tag} {price} {size}\n"));
        }
        out
    }
}

/// What a replay reads: the market, each REST record's snapshot read
/// ahead (by record index), the instruments and their index by symbol.
struct Replay<'m> {
    market: &'m Market,
    rests: HashMap<usize, Rest>,
    instruments: Vec<InstrumentAny>,
    by_symbol: HashMap<Ustr, usize>,
}

impl Replay<'_> {
    fn books(&self) -> Vec<Book> {
        self.instruments.iter().map(Book::new).collect()
    }

    /// The records `set` (indices into the market's) through the client's
    /// path into `books`, each frame first copied into `rx`; the gaps.
    fn run(&self, set: &[usize], books: &mut [Book], rx: &mut [u8]) -> u64 {
        let mut gaps = 0;
        for &k in set {
            let r = &self.market.records[k];
            if r.tag == b'R' {
                books[r.instrument].snapshot(&self.rests[&k], &mut gaps);
                continue;
            }
            let frame = self.market.of(r);
            let rx = &mut rx[..frame.len()];
            rx.copy_from_slice(frame);
            // The handler's `Vec` a frame.
            let messages = match decode_market_data(rx) {
                Ok(m) => vec![m],
                Err(e) => panic!("a frame nautilus-binance does not decode: {e}"),
            };
            for message in messages {
                match message {
                    MarketDataMessage::DepthDiff(ev) => {
                        let symbol = Ustr::from(ev.symbol.as_str());
                        if let Some(&i) = self.by_symbol.get(&symbol) {
                            books[i].diff(&ev, &mut gaps);
                        }
                    }
                    MarketDataMessage::Trades(ev) => {
                        let symbol = Ustr::from(ev.symbol.as_str());
                        if let Some(&i) = self.by_symbol.get(&symbol) {
                            black_box(parse_trades_event(&ev, &self.instruments[i]));
                        }
                    }
                    MarketDataMessage::BestBidAsk(ev) => {
                        let symbol = Ustr::from(ev.symbol.as_str());
                        if let Some(&i) = self.by_symbol.get(&symbol) {
                            black_box(parse_bbo_event(&ev, &self.instruments[i]));
                        }
                    }
                    MarketDataMessage::DepthSnapshot(_) => panic!("no @depth20 in the market"),
                }
            }
        }
        gaps
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `FILE RUNS`, or `FILE count N SET`: N replays of one set, untimed,
    // for an instruction count.
    let (path, runs, count) = match &args[..] {
        [_, path, runs] => (path, runs.parse().expect("RUNS"), None),
        [_, path, count, n, set] if count == "count" => (
            path,
            0,
            Some((n.parse::<usize>().expect("N"), set.as_str())),
        ),
        _ => {
            eprintln!("usage: tickwire-sbe-peer FILE RUNS, or FILE count N SET");
            std::process::exit(2);
        }
    };
    let market = Market::read(path);
    let mut instruments = Vec::new();
    let mut by_symbol = HashMap::new();
    for r in market.records.iter().filter(|r| r.tag == b'I') {
        let text = market.text(r);
        let w: Vec<&str> = text.split(' ').collect();
        let [symbol, ps, ss] = w[..] else {
            panic!("an instrument record: {text}");
        };
        by_symbol.insert(Ustr::from(symbol), instruments.len());
        instruments.push(instrument(symbol, ps.parse().unwrap(), ss.parse().unwrap()));
    }
    let rests = market
        .records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.tag == b'R')
        .map(|(k, r)| (k, rest(market.of(r), &instruments[r.instrument])))
        .collect();
    let replay = Replay {
        market: &market,
        rests,
        instruments,
        by_symbol,
    };
    let all: Vec<usize> = (0..market.records.len())
        .filter(|&k| matches!(market.records[k].tag, b'R' | b'S'))
        .collect();
    let most = all.iter().map(|&k| market.of(&market.records[k]).len());
    let mut rx = vec![0u8; most.max().unwrap_or(0)];
    // The check: the whole market once, each book's levels as tickwire's.
    let mut books = replay.books();
    assert_eq!(replay.run(&all, &mut books, &mut rx), 0, "gaps");
    for r in market.records.iter().filter(|r| r.tag == b'T') {
        let want = market.text(r);
        let count = |tag: &str| want.lines().filter(|l| l.starts_with(tag)).count();
        let got = books[r.instrument].lines(count("B "), count("A "));
        assert!(
            got == want,
            "instrument {}: the book differs from tickwire's",
            r.instrument
        );
    }
    let levels = market
        .records
        .iter()
        .filter(|r| r.tag == b'T')
        .map(|r| market.text(r).lines().count())
        .sum::<usize>();
    println!(
        "nautilus_trader (nautilus-binance 0.57.0): {} messages, the books' {levels} levels tickwire's showed at the end the same",
        all.len()
    );
    let set_of = |of: Of| -> Vec<usize> {
        let of = |&k: &usize| of(&market, &market.records[k]);
        all.iter().copied().filter(of).collect()
    };
    if let Some((n, name)) = count {
        let Some((_, of)) = SETS.iter().find(|(set, _)| set.starts_with(name)) else {
            panic!("no set {name}: whole, depth, trades or best");
        };
        let set = set_of(*of);
        for _ in 0..n {
            let mut books = replay.books();
            assert_eq!(replay.run(&set, &mut books, &mut rx), 0);
            black_box(&books);
        }
        println!("{} messages, {n} replays", set.len());
        return;
    }
    for (name, of) in SETS {
        let set = set_of(of);
        // At least RUNS rounds and a fifth of a second timed (up to 400
        // rounds), as the bench does.
        let mut ns = Vec::new();
        let mut round = 0;
        let timed = |ns: &Vec<f64>| ns.iter().sum::<f64>() * set.len() as f64;
        while round <= runs || (timed(&ns) < 0.2e9 && round <= 400) {
            let mut books = replay.books();
            let t = Instant::now();
            let gaps = replay.run(&set, &mut books, &mut rx);
            let elapsed = t.elapsed().as_nanos() as f64 / set.len() as f64;
            black_box(&books);
            assert_eq!(gaps, 0);
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
