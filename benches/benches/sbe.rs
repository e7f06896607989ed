//! `sbe`: one recorded Binance spot market (`../shared/samples`, the replay
//! bench's BTCUSDT day-slice) through the whole adapter twice: as recorded,
//! in JSON (`on_message`, combined-stream wrapper and all), and written
//! into the venue's SBE stream schema message for message (`on_binary`:
//! depth diffs, trades, best bid/ask; the same REST snapshot in JSON for
//! both). Same adapter, same books, same events (checked: the two replays'
//! event counts and gaps must agree), so the difference is the encoding.
//! Prices go into SBE at exponent -2 and quantities at -5 (BTCUSDT's tick
//! and lot; -8 in a message with a finer value), the instrument keeps 8
//! decimals of each as the replay bench does: every value read costs the
//! SBE side its multiplication by a power of ten. Per message kind (a
//! replay of that kind alone: the diffs with their snapshot, the trades,
//! the tickers) and whole, at book depths 20 and 500; `aggTrade` has no SBE
//! stream and is left out of both.
//!
//! Then the same sets on the simulated market the issue that asked for
//! SBE named: the plain demo's (two instruments, 200 levels a side), its
//! first 40,000 steps as `tickwire_sim` writes them in each encoding
//! ([`simulated`]); before it is timed, the SBE side must say what the
//! JSON side says, event for event, and neither a gap ([`same_events`]).
//! It needs no samples.
//!
//! Every set of the recorded day stops before the message at which the book first gaps: the
//! recording holds one REST snapshot, and a while into the day the market
//! has moved past the levels it gave (the book's known levels run out,
//! `DepthExhausted`); a feed would fetch a refresh then, a replay has none
//! to give, and the diffs after it would only be buffered, a cheaper path
//! than applying them (it was 29 % of the diffs, and made them look
//! cheaper than they are).
//!
//! How it is timed: every replay through a new adapter, made before the
//! clock starts; each encoding's messages packed one after the other, and
//! each copied from there into one receive buffer before its call, as a
//! socket's bytes would be (timed on both sides); JSON and SBE
//! replays taking turns, round by round, until each side has at least
//! `RUNS` rounds and a fifth of a second timed; the median and the least
//! of the rounds said for each.
//!
//! `cargo bench -p tickwire-benches --bench sbe [-- RUNS STEPS [SET [MARKET]]]`
//! (STEPS: the simulated market's, 0 for 40,000; SET: whole, depth, trades,
//! best or all; MARKET: recorded or simulated; all of them when left out).
//! `sbe RUNS STEPS dump FILE [MARKET]`: a market (the simulated one when
//! left out) written to FILE for a peer to replay (`benches/sbe_peer.sh`;
//! [`peer_dump`] says how).
//! `sbe RUNS STEPS SET json|sbe [MARKET]`: that side's replays alone, RUNS
//! of them at depth 20, untimed, for `benches/sbe_instructions.sh` to
//! count (MARKET: the recorded day when left out). A word it does not know
//! is refused.

#![allow(clippy::print_stdout)] // A benchmark reports its results.

#[path = "common/peer_dump.rs"]
mod peer_dump;
#[path = "common/recording.rs"]
mod recording;

use std::hint::black_box;
use std::time::Instant;

use serde_json::Value;
use tickwire_sbe::spot_stream::{BestBidAskHead, DiffHead, Level, Trade, TradesHead, encode};
use tickwire_venues::binance::{Adapter, Market};
use tickwire_venues::book::Limit;
use tickwire_venues::decimal::parse_scaled;
use tickwire_venues::{InstrumentId, InstrumentSpec, Kind};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum What {
    Snapshot,
    Diff,
    Trade,
    Ticker,
}

/// One message both ways: the JSON as recorded (padded), its length, and
/// the SBE frame (empty for the REST snapshot, which stays JSON).
struct Both {
    what: What,
    /// The instrument, the adapter's id (a snapshot's, told by the REST
    /// request rather than the body).
    instrument: u32,
    json: Vec<u8>,
    len: usize,
    sbe: Vec<u8>,
    levels: usize,
}

/// A market's instruments: symbol, price scale and size scale, in the
/// adapter's order.
type Instruments = [(&'static str, u8, u8)];

/// The recorded day's one instrument, kept at 8 decimals of each.
const RECORDED: &Instruments = &[("BTCUSDT", 8, 8)];

fn specs(instruments: &Instruments, depth: usize) -> Vec<InstrumentSpec> {
    instruments
        .iter()
        .map(|&(symbol, ps, ss)| InstrumentSpec::new(symbol, ps, ss, depth))
        .collect()
}

/// The exponents the SBE side is written at: BTCUSDT's tick and lot, or
/// the recording's eight decimals for a message with a value finer than
/// them (the venue's exponents are per message).
const PRICE_EXPONENT: i8 = -2;
const QTY_EXPONENT: i8 = -5;

fn text(v: &Value) -> &[u8] {
    v.as_str().expect("a decimal string").as_bytes()
}

/// The exponent that holds every value of `values` exactly: `preferred`,
/// or -8.
fn exponent<'v>(values: impl Iterator<Item = &'v Value>, preferred: i8) -> i8 {
    let mut values = values;
    if values.all(|v| parse_scaled(text(v), preferred.unsigned_abs()).is_ok()) {
        preferred
    } else {
        -8
    }
}

fn mantissa(v: &Value, exponent: i8) -> i64 {
    parse_scaled(text(v), exponent.unsigned_abs()).expect("exact at 8 decimals")
}

fn levels(v: &Value, pe: i8, qe: i8) -> Vec<Level> {
    v.as_array()
        .expect("levels")
        .iter()
        .map(|l| Level {
            price: mantissa(&l[0], pe),
            qty: mantissa(&l[1], qe),
        })
        .collect()
}

/// The recording's message in SBE, or `None` for a stream SBE lacks.
fn to_sbe(json: &[u8], out: &mut [u8]) -> Option<(What, Vec<u8>, usize)> {
    let v: Value = serde_json::from_slice(json).ok()?;
    if v.get("lastUpdateId").is_some() {
        return Some((What::Snapshot, Vec::new(), 0));
    }
    let d = v.get("data").unwrap_or(&v);
    let symbol = d["s"].as_str()?.as_bytes();
    let us = |k: &str| d[k].as_i64().unwrap_or(0) * 1000;
    let (what, n, levels) = match d.get("e").and_then(Value::as_str) {
        Some("depthUpdate") => {
            let all = || {
                let (b, a) = (d["b"].as_array().into_iter(), d["a"].as_array().into_iter());
                b.chain(a).flatten()
            };
            let pe = exponent(all().map(|l| &l[0]), PRICE_EXPONENT);
            let qe = exponent(all().map(|l| &l[1]), QTY_EXPONENT);
            let h = DiffHead {
                event_time_us: us("E"),
                first_update_id: d["U"].as_i64()?,
                last_update_id: d["u"].as_i64()?,
                price_exponent: pe,
                qty_exponent: qe,
            };
            let (b, a) = (levels(&d["b"], pe, qe), levels(&d["a"], pe, qe));
            let n = encode::depth_diff(out, &h, &b, &a, symbol).ok()?;
            (What::Diff, n, b.len() + a.len())
        }
        Some("trade") => {
            let (pe, qe) = (
                exponent([&d["p"]].into_iter(), PRICE_EXPONENT),
                exponent([&d["q"]].into_iter(), QTY_EXPONENT),
            );
            let h = TradesHead {
                event_time_us: us("E"),
                transact_time_us: us("T"),
                price_exponent: pe,
                qty_exponent: qe,
            };
            let t = Trade {
                id: d["t"].as_i64()?,
                price: mantissa(&d["p"], pe),
                qty: mantissa(&d["q"], qe),
                is_buyer_maker: d["m"].as_bool()?,
            };
            (What::Trade, encode::trades(out, &h, &[t], symbol).ok()?, 0)
        }
        None if d.get("u").is_some() => {
            let pe = exponent([&d["b"], &d["a"]].into_iter(), PRICE_EXPONENT);
            let qe = exponent([&d["B"], &d["A"]].into_iter(), QTY_EXPONENT);
            let h = BestBidAskHead {
                event_time_us: 0,
                book_update_id: d["u"].as_i64()?,
                price_exponent: pe,
                qty_exponent: qe,
                bid: Level {
                    price: mantissa(&d["b"], pe),
                    qty: mantissa(&d["B"], qe),
                },
                ask: Level {
                    price: mantissa(&d["a"], pe),
                    qty: mantissa(&d["A"], qe),
                },
            };
            (What::Ticker, encode::best_bid_ask(out, &h, symbol).ok()?, 0)
        }
        _ => return None,
    };
    // Its own allocation, as long as the frame: a 64 KiB scratch kept as
    // each message's buffer put every frame 64 KiB from the last, on a
    // page and in cache sets of its own, and the SBE side's time went
    // mostly to the misses of reading them (a third of the run in the copy).
    Some((what, out[..n].to_vec(), levels))
}

/// The messages of one replay, each encoding's bytes packed one after the
/// other in replay order (as a socket's stream would be read, not scattered
/// over the heap in 41,249 allocations), with each message's kind and
/// range in them.
struct Set {
    what: Vec<What>,
    instrument: Vec<u32>,
    json: Vec<u8>,
    json_at: Vec<(usize, usize)>,
    sbe: Vec<u8>,
    sbe_at: Vec<(usize, usize)>,
}

impl Set {
    fn of(msgs: &[&Both]) -> Set {
        let mut set = Set {
            what: Vec::new(),
            instrument: Vec::new(),
            json: Vec::new(),
            json_at: Vec::new(),
            sbe: Vec::new(),
            sbe_at: Vec::new(),
        };
        for m in msgs {
            set.what.push(m.what);
            set.instrument.push(m.instrument);
            let at = set.json.len();
            set.json.extend_from_slice(&m.json[..m.len]);
            set.json_at.push((at, set.json.len()));
            let at = set.sbe.len();
            set.sbe.extend_from_slice(&m.sbe);
            set.sbe_at.push((at, set.sbe.len()));
        }
        set
    }
}

/// One replay through a new adapter (made, and its JSON decoder warmed,
/// before timing): its ns/message, events and gaps. Each message is first
/// copied into `rx`, one receive buffer, as the socket's bytes would be
/// (the copy is timed on both sides): the adapter reads bytes just written,
/// as in a feed, and a JSON message parsed in place leaves the recording
/// as it was.
fn replay(
    set: &Set,
    instruments: &Instruments,
    depth: usize,
    sbe: bool,
    rx: &mut [u8],
) -> (f64, u64, u64) {
    let (mut e, mut g) = (0u64, 0u64);
    let ns = replay_into(
        set,
        instruments,
        depth,
        sbe,
        rx,
        |ev: tickwire_venues::Event| {
            e += 1;
            g += u64::from(matches!(ev.kind, Kind::Gap { .. }));
        },
    );
    (ns, e, g)
}

/// [`replay`], each event handed to `sink`: its ns/message.
fn replay_into(
    set: &Set,
    instruments: &Instruments,
    depth: usize,
    sbe: bool,
    rx: &mut [u8],
    sink: impl FnMut(tickwire_venues::Event),
) -> f64 {
    let mut adapter = adapter_for(set, instruments, depth);
    let t = Instant::now();
    feed(set, &mut adapter, sbe, rx, sink);
    t.elapsed().as_nanos() as f64 / set.what.len() as f64
}

/// A new adapter for `set`'s replay, its JSON decoder warmed.
fn adapter_for(set: &Set, instruments: &Instruments, depth: usize) -> Adapter {
    let mut adapter = Adapter::new(Market::Spot, &specs(instruments, depth));
    if let Some(i) = set.what.iter().position(|&w| w == What::Snapshot) {
        // The stream refuses a REST snapshot without a change.
        let (a, b) = set.json_at[i];
        let mut warm = recording::padded(&set.json[a..b]);
        black_box(
            adapter
                .on_message(&mut warm, b - a, 0, &mut |_| ())
                .is_err(),
        );
    }
    adapter
}

/// `set`'s messages through `adapter`, in JSON or in SBE, each copied
/// into `rx` first, each event handed to `sink`.
#[inline(always)]
fn feed(
    set: &Set,
    adapter: &mut Adapter,
    sbe: bool,
    rx: &mut [u8],
    mut sink: impl FnMut(tickwire_venues::Event),
) {
    for (i, &what) in set.what.iter().enumerate() {
        let r = match (what, sbe) {
            (What::Snapshot, _) => {
                // A REST body, not the socket's: JSON on both sides.
                let (a, b) = set.json_at[i];
                rx[..b - a].copy_from_slice(&set.json[a..b]);
                let (id, limit) = (InstrumentId(set.instrument[i]), Limit::Levels(1000));
                adapter.on_snapshot_at(id, limit, rx, b - a, 0, &mut sink)
            }
            (_, false) => {
                let (a, b) = set.json_at[i];
                rx[..b - a].copy_from_slice(&set.json[a..b]);
                adapter.on_message(rx, b - a, 0, &mut sink)
            }
            (_, true) => {
                let (a, b) = set.sbe_at[i];
                rx[..b - a].copy_from_slice(&set.sbe[a..b]);
                adapter.on_binary(&rx[..b - a], 0, &mut sink)
            }
        };
        black_box(r.is_ok());
    }
}

/// The index of the message at which a replay of `set` (JSON, untimed)
/// first says a gap, if it does.
fn first_gap(set: &Set, instruments: &Instruments, depth: usize, rx: &mut [u8]) -> Option<usize> {
    let mut adapter = Adapter::new(Market::Spot, &specs(instruments, depth));
    let mut gap = false;
    for (i, &what) in set.what.iter().enumerate() {
        let (a, b) = set.json_at[i];
        rx[..b - a].copy_from_slice(&set.json[a..b]);
        let mut count = |ev: tickwire_venues::Event| gap |= matches!(ev.kind, Kind::Gap { .. });
        let r = if what == What::Snapshot {
            let (id, limit) = (InstrumentId(set.instrument[i]), Limit::Levels(1000));
            adapter.on_snapshot_at(id, limit, rx, b - a, 0, &mut count)
        } else {
            adapter.on_message(rx, b - a, 0, &mut count)
        };
        black_box(r.is_ok());
        if gap {
            return Some(i);
        }
    }
    None
}

/// The replays of one set of messages, JSON and SBE taking turns (each
/// round in the other order), so that what the machine does meanwhile
/// falls on both alike: at least `runs` timed rounds after one warm-up,
/// and more (up to 400) until each side has been timed for a fifth of a
/// second, so that a set of small messages (a replay of the trades alone
/// takes about a millisecond) is not read from a few short windows. Each
/// side's median and least ns/message, and its events and gaps (which
/// must agree between the sides).
struct Timed {
    json: (f64, f64),
    sbe: (f64, f64),
    rounds: usize,
    events: u64,
    gaps: u64,
}

fn timed(set: &Set, instruments: &Instruments, depth: usize, runs: usize, rx: &mut [u8]) -> Timed {
    let (mut json, mut sbe) = (Vec::new(), Vec::new());
    let mut counts = None;
    let floor = if runs > 1 { 0.2e9 } else { 0.0 };
    let mut round = 0;
    loop {
        let timed_ns = |v: &Vec<f64>| v.iter().sum::<f64>() * set.what.len() as f64;
        if round > runs && ((timed_ns(&json) >= floor && timed_ns(&sbe) >= floor) || round > 400) {
            break;
        }
        for sbe_side in [round % 2 == 1, round % 2 == 0] {
            let (ns, e, g) = replay(set, instruments, depth, sbe_side, rx);
            let side = if sbe_side { &mut sbe } else { &mut json };
            // The first round is a warm-up.
            if round > 0 {
                side.push(ns);
            }
            match counts {
                None => counts = Some((e, g)),
                Some(c) => assert_eq!(c, (e, g), "the replays' events and gaps differ"),
            }
        }
        round += 1;
    }
    let least = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (events, gaps) = counts.unwrap_or_default();
    Timed {
        json: (least(&json), recording::median(json)),
        sbe: (least(&sbe), recording::median(sbe)),
        rounds: round - 1,
        events,
        gaps,
    }
}

/// The recorded day's messages with an SBE stream, cut before the book's
/// first gap at either depth (see the top); `None` without the samples.
fn recorded(rx: &mut Vec<u8>, runs: usize) -> Option<Vec<Both>> {
    let file = "spot/original/hftbacktest_spot_btcusdt_20240808.gz";
    let recorded = recording::binance(file)?;
    // One scratch to write each frame into (64 KiB: the largest diff).
    let mut scratch = vec![0u8; 1 << 16];
    let mut all: Vec<Both> = recorded
        .into_iter()
        .filter_map(|(json, len, _)| {
            let (what, sbe, levels) = to_sbe(&json[..len], &mut scratch)?;
            Some(Both {
                what,
                instrument: 0,
                json,
                len,
                sbe,
                levels,
            })
        })
        .collect();
    let diffs = all.iter().filter(|m| m.what == What::Diff).count();
    fit(rx, &all);
    let whole = Set::of(&all.iter().collect::<Vec<_>>());
    let cut = [20, 500]
        .iter()
        .filter_map(|&depth| first_gap(&whole, RECORDED, depth, rx))
        .min();
    let recorded_diffs = diffs;
    if let Some(cut) = cut {
        all.truncate(cut);
    }
    let diffs = all.iter().filter(|m| m.what == What::Diff).count();
    let levels: usize = all.iter().map(|m| m.levels).sum();
    println!(
        "{file}: {} messages with an SBE stream, the first {} of them (the book valid throughout; {}), {diffs} diffs of {:.1} levels on average; at least {runs} timed rounds each",
        whole.what.len(),
        all.len(),
        match cut {
            Some(_) => format!(
                "its known levels run out at diff {} of {recorded_diffs}",
                diffs + 1
            ),
            None => "it never gaps".to_string(),
        },
        levels as f64 / diffs.max(1) as f64
    );
    Some(all)
}

/// Steps of the simulated market (the second argument, when not 0).
const SIMULATED_STEPS: usize = 40_000;

/// The plain demo's market (`tickwire_sim`'s BTCUSDT and ETHUSDT, 200
/// levels a side, seed 1, a trade every third step), made ahead of time as
/// `demo --max` makes it, once as Binance spot's JSON streams and once as
/// its SBE streams: the same steps, paired message for message by their
/// send-stamp keys (instrument, stream, update or trade id); each
/// instrument's REST snapshot first, in JSON on both sides. The
/// simulator's SBE exponents change by the step (its instrument's scales,
/// or one or two decimals finer), so the SBE side also divides some
/// mantissas down to the instrument's scale.
fn simulated(steps: usize) -> (Vec<Both>, &'static Instruments) {
    use std::collections::HashMap;
    use tickwire_sim::{Frame, SimInstrument, StreamKind, Venue, pregenerate};
    const SIM: &Instruments = &[("BTCUSDT", 2, 5), ("ETHUSDT", 2, 4)];
    let instruments = [SimInstrument::btcusdt(), SimInstrument::ethusdt()];
    for (&(symbol, ps, ss), i) in SIM.iter().zip(&instruments) {
        assert_eq!(
            (symbol, ps, ss),
            (i.symbol.as_str(), i.price_scale, i.size_scale)
        );
    }
    let made = |venue| pregenerate(venue, &instruments, steps, 1, 3);
    let (json, sbe) = (made(Venue::BinanceSpot), made(Venue::BinanceSpotSbe));
    // Every SBE message a binary frame with a key of its own, and every
    // JSON message one with a partner among them: the two sides even.
    let count = sbe.messages.len();
    let frames: HashMap<_, _> = sbe
        .messages
        .into_iter()
        .map(|(key, _, frame)| match (key, frame) {
            (Some(key), Frame::Binary(bytes)) => (key, bytes),
            _ => panic!("an SBE message not a keyed binary frame"),
        })
        .collect();
    assert_eq!(frames.len(), count, "two SBE messages with one key");
    assert_eq!(
        json.messages.len(),
        count,
        "JSON and SBE messages differ in number"
    );
    let mut frames = frames;
    let mut all = Vec::new();
    for (n, i) in instruments.iter().enumerate() {
        let body = json.snapshots[&i.symbol].as_bytes();
        all.push(Both {
            what: What::Snapshot,
            instrument: n as u32,
            json: recording::padded(body),
            len: body.len(),
            sbe: Vec::new(),
            levels: 0,
        });
    }
    for (key, _, frame) in json.messages {
        let (Some(key), Frame::Text(text)) = (key, frame) else {
            panic!("a JSON message not a keyed text frame");
        };
        let sbe = frames
            .remove(&key)
            .expect("a JSON message without its SBE partner");
        let (what, levels) = match key.1 {
            StreamKind::Trade => (What::Trade, 0),
            StreamKind::BookTicker => (What::Ticker, 0),
            StreamKind::Depth => {
                let v: Value = serde_json::from_str(&text).expect("a JSON diff");
                let count = |side: &str| v["data"][side].as_array().map_or(0, Vec::len);
                (What::Diff, count("b") + count("a"))
            }
        };
        all.push(Both {
            what,
            instrument: key.0 as u32,
            json: recording::padded(text.as_bytes()),
            len: text.len(),
            sbe,
            levels,
        });
    }
    (all, SIM)
}

/// `rx` grown to the largest message of `all` (padded).
fn fit(rx: &mut Vec<u8>, all: &[Both]) {
    let most = all.iter().map(|m| m.json.len().max(m.sbe.len())).max();
    rx.resize(rx.len().max(most.unwrap_or(0)), 0);
}

/// The sets a market is timed in, by name.
const SETS: [(&str, &[What]); 4] = [
    (
        "whole",
        &[What::Snapshot, What::Diff, What::Trade, What::Ticker],
    ),
    (
        "depth diffs (and the snapshot)",
        &[What::Snapshot, What::Diff],
    ),
    ("trades", &[What::Trade]),
    ("best bid/ask", &[What::Ticker]),
];

/// What the words after `RUNS STEPS` ask for: `[SET [SIDE] [MARKET]]`.
struct Ask<'a> {
    /// A set's name or its start (`all`, or none: every set).
    set: Option<&'a str>,
    /// `json` or `sbe`: that side's replays alone, untimed, for an
    /// instruction count (`benches/sbe_instructions.sh`).
    sbe: Option<bool>,
    /// `recorded` or `simulated` (none: both, or the recorded day for a
    /// count).
    market: Option<&'a str>,
}

/// Reads the words; a word it does not know is refused, not guessed at.
fn ask(words: &[String]) -> Ask<'_> {
    let mut words = words.iter().map(String::as_str);
    let set = words.next().filter(|&s| s != "all");
    if let Some(set) = set
        && !SETS.iter().any(|(name, _)| name.starts_with(set))
    {
        panic!("no set {set}: whole, depth, trades, best or all");
    }
    let mut ask = Ask {
        set,
        sbe: None,
        market: None,
    };
    for word in words {
        match word {
            "json" | "sbe" if ask.sbe.is_none() && ask.market.is_none() => {
                ask.sbe = Some(word == "sbe");
            }
            "recorded" | "simulated" if ask.market.is_none() => ask.market = Some(word),
            other => panic!("{other}: after the set, json or sbe, then recorded or simulated"),
        }
    }
    ask
}

fn main() {
    // Run once each as a test (`cargo test --benches`): a shorter market.
    let (runs, steps, words) = tickwire_benches::harness_args((7, 0), (1, 2_000));
    let steps = if steps == 0 { SIMULATED_STEPS } else { steps };
    // One receive buffer, as large as the largest message (padded).
    let mut rx = Vec::new();
    // `sbe RUNS STEPS dump FILE [MARKET]` (`benches/sbe_peer.sh`): a
    // market written out for a peer, untimed.
    if let [dump, path, market @ ..] = &words[..]
        && dump == "dump"
    {
        let (all, instruments) = match market {
            [] => simulated(steps),
            [m] if m == "simulated" => simulated(steps),
            [m] if m == "recorded" => match recorded(&mut rx, runs) {
                Some(all) => (all, RECORDED),
                None => {
                    eprintln!("sbe: skipped, ../shared/samples is absent");
                    return;
                }
            },
            _ => panic!("dump FILE, then recorded or simulated"),
        };
        fit(&mut rx, &all);
        peer_dump::dump(path, &all, instruments, &mut rx);
        println!("{} messages written to {path}", all.len());
        return;
    }
    let ask = ask(&words);
    // `sbe RUNS STEPS SET SIDE [MARKET]` (`benches/sbe_instructions.sh`):
    // that set's replays of the recorded day (or the simulated market) on
    // that side alone, RUNS of them at depth 20, untimed, for an
    // instruction count.
    if let Some(sbe) = ask.sbe {
        let (all, instruments) = if ask.market == Some("simulated") {
            let (all, instruments) = simulated(steps);
            fit(&mut rx, &all);
            (all, instruments)
        } else {
            let Some(all) = recorded(&mut rx, runs) else {
                eprintln!("sbe: skipped, ../shared/samples is absent");
                return;
            };
            (all, RECORDED)
        };
        let set = ask.set.unwrap_or("whole");
        let Some((_, kinds)) = SETS.iter().find(|(name, _)| name.starts_with(set)) else {
            unreachable!("the set was checked");
        };
        let msgs: Vec<&Both> = all.iter().filter(|m| kinds.contains(&m.what)).collect();
        let set = Set::of(&msgs);
        let (mut events, mut gaps) = (0, 0);
        for _ in 0..runs {
            let (_, e, g) = replay(&set, instruments, 20, sbe, &mut rx);
            (events, gaps) = (events + e, gaps + g);
        }
        println!(
            "{} messages, {runs} replays: {events} events, {gaps} gaps",
            msgs.len()
        );
        return;
    }
    // `sbe RUNS STEPS [SET [MARKET]]`: that set alone, timed (to set two
    // builds side by side), of both markets or of one.
    let market = |name: &str| ask.market.is_none_or(|m| m == name);
    if market("recorded") {
        match recorded(&mut rx, runs) {
            Some(all) => tables(&all, RECORDED, ask.set, runs, &mut rx),
            None => eprintln!("sbe: the recorded day skipped, ../shared/samples is absent"),
        }
    }
    if market("simulated") {
        let (all, instruments) = simulated(steps);
        fit(&mut rx, &all);
        let diffs = all.iter().filter(|m| m.what == What::Diff).count();
        let levels: usize = all.iter().map(|m| m.levels).sum();
        println!(
            "the simulated market (the plain demo's, its first {steps} steps): {} messages with an SBE stream, {diffs} diffs of {:.1} levels on average; at least {runs} timed rounds each",
            all.len(),
            levels as f64 / diffs.max(1) as f64
        );
        same_events(&all, instruments, &mut rx);
        tables(&all, instruments, ask.set, runs, &mut rx);
    }
}

/// The whole simulated market, untimed, at both depths: the SBE side must
/// say exactly what the JSON side says, event for event, but for the
/// venue's times (the pairing, and
/// the SBE side's exponents read into the instruments' scales), and
/// neither may say a gap (a book that broke would be timed as cheap).
fn same_events(all: &[Both], instruments: &Instruments, rx: &mut [u8]) {
    let set = Set::of(&all.iter().collect::<Vec<_>>());
    for depth in [20, 500] {
        // Less the venue's times: the simulator stamps each market with
        // the wall clock as it makes it, and the two were made apart.
        let [json, sbe] = [false, true].map(|side| {
            let mut events = Vec::new();
            replay_into(&set, instruments, depth, side, rx, |e| {
                events.push((e.instrument, e.kind));
            });
            events
        });
        assert!(
            !json.iter().any(|e| matches!(e.1, Kind::Gap { .. })),
            "the simulated market's book gapped at depth {depth}"
        );
        if let Some(k) = (0..json.len().max(sbe.len())).find(|&k| json.get(k) != sbe.get(k)) {
            panic!(
                "depth {depth}: event {k} differs: JSON {:?}, SBE {:?}",
                json.get(k),
                sbe.get(k)
            );
        }
    }
}

/// Each set of `all` (or `set` alone) at depths 20 and 500, timed.
fn tables(all: &[Both], instruments: &Instruments, set: Option<&str>, runs: usize, rx: &mut [u8]) {
    let one = |name: &str| set.is_none_or(|set| name.starts_with(set));
    for depth in [20, 500] {
        for (name, kinds) in SETS.into_iter().filter(|(name, _)| one(name)) {
            let msgs: Vec<&Both> = all.iter().filter(|m| kinds.contains(&m.what)).collect();
            let t = timed(&Set::of(&msgs), instruments, depth, runs, rx);
            let n = msgs.len() as f64;
            println!(
                "book depth {depth}, {name}: {} messages, {:.2} events each, {} gaps a replay; {} rounds, ns/message median (least): JSON {:.0} ({:.0}), SBE {:.0} ({:.0}); JSON / SBE {:.1}x",
                msgs.len(),
                t.events as f64 / n,
                t.gaps,
                t.rounds,
                t.json.1,
                t.json.0,
                t.sbe.1,
                t.sbe.0,
                t.json.1 / t.sbe.1
            );
        }
    }
}
