//! The market every simulated venue formats: one random-walk book per
//! instrument, moved one step at a time. A step is venue-neutral (levels
//! changed, a trade, ids); each venue module turns it into its own
//! messages, so every venue's books follow the same market.

use std::collections::BTreeMap;

use rand::Rng;
use rand::rngs::StdRng;
use tickwire_venues::Venue;

/// Price levels `(price, size)`, best first.
pub type Levels = Vec<(i64, i64)>;

/// A simulated instrument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimInstrument {
    /// The symbol as the venue writes it (`BTCUSDT`, `BTC-USDT`, `BTC/USD`).
    pub symbol: String,
    /// Price decimals (the tick is 10^-price_scale).
    pub price_scale: u8,
    /// Size decimals.
    pub size_scale: u8,
    /// The starting mid price, in ticks.
    pub mid: i64,
    /// Price levels a side keeps (the book spans this many ticks each way).
    pub levels: usize,
}

impl SimInstrument {
    /// A BTCUSDT-like instrument around 60 000.00 with 200 levels a side.
    pub fn btcusdt() -> SimInstrument {
        SimInstrument {
            symbol: "BTCUSDT".into(),
            price_scale: 2,
            size_scale: 5,
            mid: 6_000_000,
            levels: 200,
        }
    }

    /// An ETHUSDT-like instrument around 3 000.00 with 200 levels a side.
    pub fn ethusdt() -> SimInstrument {
        SimInstrument {
            symbol: "ETHUSDT".into(),
            price_scale: 2,
            size_scale: 4,
            mid: 300_000,
            levels: 200,
        }
    }

    /// Two instruments of `venue`, named as it names them: a BTC and an ETH
    /// market. Coinbase's BTC book is deep (25 000 levels a side), so that
    /// its `level2` snapshot is several megabytes, as the real one is.
    pub fn pair(venue: Venue) -> Vec<SimInstrument> {
        let (btc, eth) = match venue {
            Venue::BinanceSpot
            | Venue::BinanceSpotSbe
            | Venue::BinanceUsdM
            | Venue::BybitSpot
            | Venue::BybitLinear => ("BTCUSDT", "ETHUSDT"),
            Venue::BinanceCoinM => ("BTCUSD_PERP", "ETHUSD_PERP"),
            Venue::BybitInverse => ("BTCUSD", "ETHUSD"),
            Venue::Okx => ("BTC-USDT", "ETH-USDT"),
            Venue::Kraken => ("BTC/USD", "ETH/USD"),
            Venue::Coinbase => ("BTC-USD", "ETH-USD"),
            Venue::Deribit => ("BTC-PERPETUAL", "ETH-PERPETUAL"),
        };
        let (mut b, mut e) = (SimInstrument::btcusdt(), SimInstrument::ethusdt());
        b.symbol = btc.into();
        e.symbol = eth.into();
        match venue {
            // Contracts: whole numbers.
            Venue::BinanceCoinM | Venue::BybitInverse | Venue::Deribit => {
                b.size_scale = 0;
                e.size_scale = 0;
                // Deribit's BTC tick is 0.5, ETH's 0.05: prices at 1 and 2
                // decimals.
                if venue == Venue::Deribit {
                    b.price_scale = 1;
                    b.mid = 600_000;
                }
            }
            Venue::BinanceUsdM | Venue::BybitLinear => {
                b.price_scale = 1;
                b.mid = 600_000;
                b.size_scale = 3;
                e.size_scale = 3;
            }
            Venue::Coinbase => {
                b.size_scale = 8;
                b.levels = 25_000;
                e.size_scale = 8;
            }
            Venue::Kraken => {
                b.price_scale = 1;
                b.mid = 600_000;
                b.size_scale = 8;
                e.size_scale = 8;
            }
            _ => {}
        }
        vec![b, e]
    }
}

/// A trade a step made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Trade {
    pub(crate) id: u64,
    pub(crate) price: i64,
    pub(crate) size: i64,
    /// The buyer took liquidity.
    pub(crate) buyer_aggressor: bool,
}

/// Faults the next step of an instrument carries (see
/// [`crate::VenueFault`]); every client sees the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StepFaults {
    /// The step's book message is lost: no client gets it.
    pub(crate) drop_book: bool,
    /// The step's book message carries a wrong checksum.
    pub(crate) bad_checksum: bool,
    /// The venue restarted its book service: it resends the book as a
    /// snapshot with its update counter starting again (Bybit `u=1`).
    pub(crate) restart: bool,
}

/// The best `depth` levels of each side of a book kept as price -> size:
/// bids, then asks, best first.
pub(crate) fn best_levels(
    bids: &BTreeMap<i64, i64>,
    asks: &BTreeMap<i64, i64>,
    depth: usize,
) -> (Levels, Levels) {
    (
        bids.iter()
            .rev()
            .take(depth)
            .map(|(p, s)| (*p, *s))
            .collect(),
        asks.iter().take(depth).map(|(p, s)| (*p, *s)).collect(),
    )
}

/// How a book's update ids run from one change to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Ids {
    /// One id a level changed, each step's first right after the last
    /// step's last: Binance spot's `U` = previous `u` + 1, and the
    /// sequence numbers the other venues take from the book.
    #[default]
    Contiguous,
    /// Ids that skip, as Binance's futures do (see `binance/mod.rs`): a gap of
    /// 1 to [`MAX_ID_GAP`] before a step's first id and between its ids,
    /// drawn from the market's seeded generator (a gap of 1 is an id
    /// skipped by none), so that `U > pu + 1` in most steps; a REST
    /// snapshot says an id drawn from the last step's range.
    Jumping,
}

/// The widest gap between two ids of a book whose [`Ids`] jump.
pub(crate) const MAX_ID_GAP: u64 = 50;

impl Ids {
    /// The ids `venue`'s books run on: jumping on Binance USD-M and COIN-M
    /// futures, contiguous elsewhere.
    pub(crate) fn of(venue: Venue) -> Ids {
        match venue {
            Venue::BinanceUsdM | Venue::BinanceCoinM => Ids::Jumping,
            _ => Ids::Contiguous,
        }
    }
}

/// One market step of one instrument, venue-neutral.
#[derive(Clone, Debug, Default)]
pub(crate) struct Step {
    pub(crate) instrument: usize,
    /// Wall time, ms since the Unix epoch.
    pub(crate) time_ms: u64,
    pub(crate) trade: Option<Trade>,
    /// Levels changed (final size, 0: gone), best first.
    pub(crate) bids: Levels,
    /// Levels changed, best first.
    pub(crate) asks: Levels,
    /// The book's last update id before the step (Binance futures' `pu`).
    pub(crate) prev_id: u64,
    /// The update ids the step spans (one per level changed, at least
    /// one, and with [`Ids::Jumping`] the ids skipped between them):
    /// Binance's `U` and `u`.
    pub(crate) first_id: u64,
    pub(crate) last_id: u64,
    /// The book's step counter after this step (+1 a step; Bybit's `u`).
    pub(crate) version: u64,
    /// The best bid and ask after the step, if they changed.
    pub(crate) top: Option<((i64, i64), (i64, i64))>,
    pub(crate) faults: StepFaults,
}

/// One instrument's book and ids.
#[derive(Clone, Debug)]
pub(crate) struct Book {
    pub(crate) bids: BTreeMap<i64, i64>,
    pub(crate) asks: BTreeMap<i64, i64>,
    /// The last update id (one per level changed).
    pub(crate) update_id: u64,
    /// How the update ids run.
    pub(crate) ids: Ids,
    /// The `lastUpdateId` a REST snapshot of the book says now: an id in
    /// the last step's range (its last, unless the ids jump).
    pub(crate) snapshot_id: u64,
    /// Steps so far (Bybit's `u` counts from here).
    pub(crate) version: u64,
    /// Where the step counter last restarted (Bybit `u` is `version -
    /// epoch`).
    pub(crate) epoch: u64,
    pub(crate) trade_id: u64,
    mid: i64,
    /// A sweep ([`SimConfig::sweep`](crate::SimConfig::sweep)): the steps
    /// a leg lasts, the steps of this leg so far, and its direction.
    sweep: Option<(u32, u32, i64)>,
}

impl Book {
    pub(crate) fn new(i: &SimInstrument, rng: &mut StdRng) -> Book {
        let mut book = Book {
            bids: BTreeMap::new(),
            asks: BTreeMap::new(),
            update_id: 1_000_000,
            ids: Ids::Contiguous,
            snapshot_id: 1_000_000,
            version: 1,
            epoch: 0,
            trade_id: 5_000_000,
            mid: i.mid,
            sweep: None,
        };
        let unit = 10i64.pow(u32::from(i.size_scale));
        for off in 1..=i.levels as i64 {
            book.bids
                .insert(i.mid - off, rng.random_range(1..=50 * unit));
            book.asks
                .insert(i.mid + off, rng.random_range(1..=50 * unit));
        }
        book
    }

    /// The book with its update ids running as `ids` says.
    pub(crate) fn with_ids(mut self, ids: Ids) -> Book {
        self.ids = ids;
        self
    }

    pub(crate) fn top(&self) -> ((i64, i64), (i64, i64)) {
        let bid = self
            .bids
            .iter()
            .next_back()
            .map_or((0, 0), |(p, s)| (*p, *s));
        let ask = self.asks.iter().next().map_or((0, 0), |(p, s)| (*p, *s));
        (bid, ask)
    }

    /// The best `depth` levels a side: bids, then asks, best first.
    pub(crate) fn levels(&self, depth: usize) -> (Levels, Levels) {
        best_levels(&self.bids, &self.asks, depth)
    }

    /// Makes the mid sweep: a tick up every step for `leg` steps, then
    /// down as long, and so on.
    pub(crate) fn sweep(&mut self, leg: u32) {
        self.sweep = Some((leg.max(1), 0, 1));
    }

    /// Bybit's update counter: +1 a step, from 1 after a restart.
    pub(crate) fn u(&self) -> u64 {
        self.version - self.epoch
    }
}

/// One market step for `book`: maybe a trade (it takes part of the best
/// level of one side), the mid wandering a tick at a time, levels out of
/// range dropped, and a few levels changing size (half of them within 20
/// ticks of the mid, so the top moves). `out` is overwritten.
pub(crate) fn step(
    n: usize,
    spec: &SimInstrument,
    book: &mut Book,
    rng: &mut StdRng,
    trade: bool,
    out: &mut Step,
) {
    step_around(n, spec, book, rng, trade, out, None);
}

/// Orders resting in a book (the exchange's), which a random step must
/// respect: see [`step_around`].
pub(crate) trait Resting {
    /// A random trade of `size` took from the level at `price` of the bids
    /// (`bid`) or asks, which held `level` before it: the orders resting
    /// there fill after the crowd queued ahead of them.
    fn traded(&mut self, bid: bool, price: i64, level: i64, size: i64, trade: &Trade, time_ms: u64);
    /// The size resting at `price` on that side (0: none).
    fn floor(&self, bid: bool, price: i64) -> i64;
    /// The best resting bid and ask prices.
    fn inside(&self) -> (Option<i64>, Option<i64>);
    /// The level at `price` now holds `size` (at least [`floor`](Resting::floor)):
    /// the crowd ahead of the orders there is at most what is not theirs.
    fn resized(&mut self, bid: bool, price: i64, size: i64);
}

/// [`step`], around the orders `resting` in the book, if any: a trade
/// fills them after the crowd ahead ([`Resting::traded`]), the mid never
/// moves past the best resting bid or ask (so no level of the other side
/// ever crosses one: the walk goes through a resting order only once the
/// random trades have filled it), and no change takes a level below what
/// rests there. The random draws are the same with and without; without,
/// the step is [`step`]'s.
pub(crate) fn step_around(
    n: usize,
    spec: &SimInstrument,
    book: &mut Book,
    rng: &mut StdRng,
    trade: bool,
    out: &mut Step,
    mut resting: Option<&mut dyn Resting>,
) {
    let unit = 10i64.pow(u32::from(spec.size_scale));
    let before = book.top();
    out.instrument = n;
    out.time_ms = crate::time::now_ms();
    out.trade = None;
    out.bids.clear();
    out.asks.clear();
    out.top = None;
    let mut changes: Vec<(bool, i64, i64)> = Vec::with_capacity(8);
    if trade {
        let buyer = rng.random_bool(0.5);
        let level = if buyer {
            book.asks.iter().next().map(|(p, s)| (*p, *s))
        } else {
            book.bids.iter().next_back().map(|(p, s)| (*p, *s))
        };
        if let Some((price, size)) = level {
            let qty = rng.random_range(1..=size);
            book.trade_id += 1;
            out.trade = Some(Trade {
                id: book.trade_id,
                price,
                size: qty,
                buyer_aggressor: buyer,
            });
            changes.push((!buyer, price, size - qty));
            if let (Some(r), Some(t)) = (resting.as_deref_mut(), out.trade.as_ref()) {
                r.traded(!buyer, price, size, qty, t, out.time_ms);
            }
        }
    }
    let moved = match &mut book.sweep {
        Some((leg, done, dir)) => {
            if *done == *leg {
                *done = 0;
                *dir = -*dir;
            }
            *done += 1;
            *dir
        }
        None => match rng.random_range(0..10) {
            0 => -1,
            1 => 1,
            _ => 0,
        },
    };
    book.mid += moved;
    if let Some(r) = resting.as_deref() {
        // Held between the resting orders: bids at or above the mid go,
        // asks at or below it go, so neither side ever crosses one.
        let (bid, ask) = r.inside();
        if let Some(b) = bid {
            book.mid = book.mid.max(b);
        }
        if let Some(a) = ask {
            book.mid = book.mid.min(a);
        }
    }
    let mid = book.mid;
    let levels = spec.levels as i64;
    for (&p, _) in book.bids.range(mid..) {
        changes.push((true, p, 0));
    }
    for (&p, _) in book.asks.range(..=mid) {
        changes.push((false, p, 0));
    }
    for (&p, _) in book.bids.range(..mid - levels) {
        changes.push((true, p, 0));
    }
    for (&p, _) in book.asks.range(mid + levels + 1..) {
        changes.push((false, p, 0));
    }
    for _ in 0..rng.random_range(1..=3) {
        let bid = rng.random_bool(0.5);
        let off = if rng.random_bool(0.5) {
            rng.random_range(1..=levels.min(20))
        } else {
            rng.random_range(1..=levels)
        };
        let size = if rng.random_range(0..5) == 0 {
            0
        } else {
            rng.random_range(1..=50 * unit)
        };
        changes.push((bid, if bid { mid - off } else { mid + off }, size));
    }
    // The last change of each level, bids and asks apart.
    let mut bids: BTreeMap<i64, i64> = BTreeMap::new();
    let mut asks: BTreeMap<i64, i64> = BTreeMap::new();
    for (bid, price, size) in changes {
        if bid {
            bids.insert(price, size);
        } else {
            asks.insert(price, size);
        }
    }
    if let Some(r) = resting {
        for (bid, side) in [(true, &mut bids), (false, &mut asks)] {
            for (p, s) in side.iter_mut() {
                *s = (*s).max(r.floor(bid, *p));
                r.resized(bid, *p, *s);
            }
        }
    }
    for (p, s) in &bids {
        if *s == 0 {
            book.bids.remove(p);
        } else {
            book.bids.insert(*p, *s);
        }
    }
    for (p, s) in &asks {
        if *s == 0 {
            book.asks.remove(p);
        } else {
            book.asks.insert(*p, *s);
        }
    }
    out.bids.extend(bids.iter().rev().map(|(p, s)| (*p, *s)));
    out.asks.extend(asks.iter().map(|(p, s)| (*p, *s)));
    let changed = (bids.len() + asks.len()).max(1) as u64;
    advance(book, changed, rng, out);
    let after = book.top();
    if after != before {
        out.top = Some(after);
    }
}

/// Moves `book`'s update ids on by a step that changed `changed` levels
/// (at least one id), as its [`Ids`] run, into `out`; and its step
/// counter.
fn advance(book: &mut Book, changed: u64, rng: &mut StdRng, out: &mut Step) {
    out.prev_id = book.update_id;
    match book.ids {
        Ids::Contiguous => {
            out.first_id = book.update_id + 1;
            book.update_id += changed;
            book.snapshot_id = book.update_id;
        }
        Ids::Jumping => {
            out.first_id = book.update_id + rng.random_range(1..=MAX_ID_GAP);
            book.update_id = out.first_id;
            for _ in 1..changed {
                book.update_id += rng.random_range(1..=MAX_ID_GAP);
            }
            book.snapshot_id = rng.random_range(out.first_id..=book.update_id);
        }
    }
    out.last_id = book.update_id;
    book.version += 1;
    out.version = book.version;
}

/// A step that is not the random walk's (the exchange's: an order resting,
/// cancelled, or taking a level): `bids` and `asks` are the levels it
/// changed (final size, 0: gone), applied to `book`; the ids move on as
/// [`step`] moves them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn change(
    n: usize,
    book: &mut Book,
    rng: &mut StdRng,
    time_ms: u64,
    trade: Option<Trade>,
    bids: &[(i64, i64)],
    asks: &[(i64, i64)],
) -> Step {
    let before = book.top();
    for (side, levels) in [(&mut book.bids, bids), (&mut book.asks, asks)] {
        for &(p, s) in levels {
            if s == 0 {
                side.remove(&p);
            } else {
                side.insert(p, s);
            }
        }
    }
    let mut out = Step {
        instrument: n,
        time_ms,
        trade,
        bids: bids.to_vec(),
        asks: asks.to_vec(),
        ..Step::default()
    };
    let changed = (bids.len() + asks.len()).max(1) as u64;
    advance(book, changed, rng, &mut out);
    let after = book.top();
    if after != before {
        out.top = Some(after);
    }
    out
}

/// How a venue writes the decimals of a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Digits {
    /// Exactly this many (trailing zeros kept): Binance spot's 8.
    Fixed(u8),
    /// Only those that are not trailing zeros, and no point for a whole
    /// number (`"8477"`, `"0.5"`).
    Trimmed,
    /// Trimmed, but at least one (`"2960.0"`): Deribit's JSON numbers.
    AtLeastOne,
}

/// Writes `value` (in units of 10^-scale) as a decimal, for any scale (a
/// scale beyond `i64`'s 19 digits is all fraction: `0.000…`).
///
/// Deliberately not built on `tickwire_venues::decimal` (`format_wire`,
/// `format_scaled`): the simulator writes what the venue would, and the
/// adapter's parser and its checksum strings are tested against that; the
/// adapter's own formatter on both sides would hide a bug they share. Its
/// tests check the two agree instead.
pub(crate) fn decimal(out: &mut String, value: i64, scale: u8, digits: Digits) {
    if value < 0 {
        out.push('-');
    }
    // The digits of |value| (at most 20), right-aligned.
    let mut text = [b'0'; 20];
    let mut len = 0;
    let mut rest = value.unsigned_abs();
    loop {
        len += 1;
        text[text.len() - len] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let all = &text[text.len() - len..];
    let scale = usize::from(scale);
    // The integer part, and the fraction's last digits: `lead` zeros come
    // before them.
    let (int, tail) = all.split_at(len.saturating_sub(scale));
    let lead = scale - tail.len();
    if int.is_empty() {
        out.push('0');
    }
    out.extend(int.iter().map(|&b| char::from(b)));
    let significant = tail
        .iter()
        .rposition(|&b| b != b'0')
        .map_or(0, |last| lead + last + 1);
    let want = match digits {
        Digits::Fixed(d) => usize::from(d),
        Digits::Trimmed => significant,
        Digits::AtLeastOne => significant.max(1),
    };
    if want == 0 {
        return;
    }
    out.push('.');
    // The fraction's digit `k`: zeros before the tail and past the scale.
    let digit = |k: usize| match k.checked_sub(lead) {
        Some(t) if t < tail.len() => char::from(tail[t]),
        _ => '0',
    };
    out.extend((0..want).map(digit));
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn decimals_as_venues_write_them() {
        let cases = [
            (6_000_012, 2, Digits::Fixed(8), "60000.12000000"),
            (5, 5, Digits::Fixed(8), "0.00005000"),
            (7, 0, Digits::Fixed(8), "7.00000000"),
            (847_700, 2, Digits::Trimmed, "8477"),
            (847_698, 2, Digits::Trimmed, "8476.98"),
            (50, 2, Digits::Trimmed, "0.5"),
            (29_600, 1, Digits::AtLeastOne, "2960.0"),
            (0, 8, Digits::Fixed(8), "0.00000000"),
            (0, 3, Digits::Trimmed, "0"),
            (618_002, 1, Digits::Fixed(2), "61800.20"),
        ];
        for (v, scale, digits, want) in cases {
            let mut s = String::new();
            decimal(&mut s, v, scale, digits);
            assert_eq!(s, want, "{v} {scale} {digits:?}");
        }
    }

    /// Any value at any scale is written, `i64`'s extremes and scales past
    /// its 19 digits included.
    #[test]
    fn every_scale_is_written() {
        let text = |v: i64, scale: u8, digits: Digits| {
            let mut s = String::new();
            decimal(&mut s, v, scale, digits);
            s
        };
        assert_eq!(text(i64::MIN, 0, Digits::Trimmed), "-9223372036854775808");
        assert_eq!(text(i64::MAX, 18, Digits::Trimmed), "9.223372036854775807");
        assert_eq!(
            text(i64::MIN, 19, Digits::Trimmed),
            "-0.9223372036854775808"
        );
        assert_eq!(text(5, 20, Digits::Fixed(20)), "0.00000000000000000005");
        assert_eq!(text(-50, 21, Digits::Trimmed), "-0.00000000000000000005");
        assert_eq!(text(0, 30, Digits::AtLeastOne), "0.0");
        assert_eq!(text(1, 255, Digits::Trimmed).len(), 2 + 255);
        assert_eq!(text(7, 1, Digits::Fixed(255)).len(), 2 + 255);
        assert_eq!(
            text(123_456, 4, Digits::Fixed(2)),
            "12.34",
            "cut, as before"
        );
    }

    /// The simulator's numbers read back exactly by the adapters' parser,
    /// and at the full scale they are what `format_scaled` writes.
    #[test]
    fn decimals_agree_with_the_adapters() {
        use tickwire_venues::decimal::{format_scaled, parse_scaled};
        let mut rng = StdRng::seed_from_u64(4);
        for k in 0..20_000 {
            let scale = (k % 19) as u8;
            let v = match k % 4 {
                0 => rng.random_range(-1_000..1_000),
                1 => rng.random_range(-10i64.pow(12)..10i64.pow(12)),
                2 => rng.random::<i64>() / 10,
                _ => rng.random::<i64>(),
            };
            for digits in [Digits::Trimmed, Digits::AtLeastOne, Digits::Fixed(scale)] {
                let mut s = String::new();
                decimal(&mut s, v, scale, digits);
                assert_eq!(parse_scaled(s.as_bytes(), scale), Ok(v), "{s} {digits:?}");
            }
            let (mut ours, mut theirs) = (String::new(), String::new());
            decimal(&mut ours, v, scale, Digits::Fixed(scale));
            format_scaled(v, scale, &mut theirs);
            assert_eq!(ours, theirs, "{v} at {scale}");
        }
    }

    #[test]
    fn the_market_is_never_crossed_and_ids_chain() {
        let spec = SimInstrument {
            levels: 20,
            ..SimInstrument::btcusdt()
        };
        for ids in [Ids::Contiguous, Ids::Jumping] {
            let mut rng = StdRng::seed_from_u64(9);
            let mut book = Book::new(&spec, &mut rng).with_ids(ids);
            let mut out = Step::default();
            let mut last = book.update_id;
            let mut jumps = 0;
            for i in 0..20_000 {
                step(0, &spec, &mut book, &mut rng, i % 3 == 0, &mut out);
                let ((bid, _), (ask, _)) = book.top();
                assert!(bid < ask, "crossed at step {i}: {bid} >= {ask}");
                assert!(book.bids.len() <= spec.levels + 1 && book.asks.len() <= spec.levels + 1);
                assert_eq!(out.prev_id, last);
                let changed = (out.bids.len() + out.asks.len()).max(1) as u64;
                let span = out.last_id - out.first_id + 1;
                match ids {
                    Ids::Contiguous => {
                        assert_eq!(out.first_id, last + 1);
                        assert_eq!(span, changed);
                        assert_eq!(book.snapshot_id, out.last_id);
                    }
                    Ids::Jumping => {
                        assert!((last + 1..=last + MAX_ID_GAP).contains(&out.first_id));
                        assert!(span >= changed && span <= (changed - 1) * MAX_ID_GAP + 1);
                        assert!((out.first_id..=out.last_id).contains(&book.snapshot_id));
                        jumps += u32::from(out.first_id > last + 1);
                    }
                }
                assert_eq!(book.update_id, out.last_id);
                last = out.last_id;
                assert_eq!(out.version, book.version);
            }
            if ids == Ids::Jumping {
                assert!(jumps > 19_000, "{jumps} of 20000 steps jumped");
            }
        }
    }
}
