//! The one-pass path, without simd-json: Binance's fixed layouts
//! ([`scan_fixed`]), then a general scanner of flat messages.

mod fixed;

use super::{BookTicker, Message, Trade};
use crate::scan::{self, LevelMarks, Numbers, Val};

/// The first thing [`scan`] tries: trades, aggregate trades, book tickers
/// and depth updates in the exact layouts Binance sends them (spot, USD-M
/// and COIN-M, raw or in a combined stream), read by comparing bytes in
/// order; a depth update's levels are checked in the same pass and read
/// from the text later ([`Levels`](super::Levels)). `None` for anything
/// else, however valid.
pub fn scan_fixed(text: &str) -> Option<Message<'_, '_>> {
    fixed::read(
        text,
        LevelMarks {
            bounds: &mut [],
            values: &mut [],
        },
    )
}

/// [`scan_fixed`], keeping the bounds of a depth update's levels in the
/// front of `bounds` while they fit, and their values in `values` when
/// they have Binance's shape (see [`Levels`](super::Levels)).
pub(super) fn scan_fixed_marked<'t, 'i>(
    text: &'i str,
    bounds: &'t mut [[u32; 4]],
    values: &'t mut [crate::json::ReadLevel],
) -> Option<Message<'t, 'i>> {
    fixed::read(text, LevelMarks { bounds, values })
}

/// The one-pass path, without simd-json: first [`scan_fixed`] (Binance's
/// exact layouts, depth updates included), then a general scanner for
/// other flat messages (trade, aggTrade, bookTicker, replies, other
/// events; no string escapes), read exactly as [`decode`](super::decode)
/// reads them; `None` means "use simd-json" ([`Decoder`](super::Decoder)
/// does both). REST snapshots, and depth updates in any other layout,
/// always get `None`: the general scanner reads level arrays slower than
/// simd-json. Checked against [`decode`](super::decode) on every recorded
/// message and by the fuzzer.
pub fn scan<'i>(text_in: &'i str) -> Option<Message<'i, 'i>> {
    scan_fixed(text_in).or_else(|| scan_general(text_in))
}

/// [`scan`] past the fixed layouts.
pub(super) fn scan_general(text_in: &str) -> Option<Message<'_, '_>> {
    let mut f = Fields::of(text_in)?;
    if let (Some(data), Some(stream)) = (f.data, f.stream) {
        // A combined-stream envelope: the event is inside.
        let (Val::Object(inner), Val::Str(_)) = (data, stream) else {
            return None;
        };
        f = Fields::of(inner)?;
    }
    if f.last_update_id.is_some() {
        // Level arrays: simd-json's vectorised pass reads them faster than
        // this scanner validates and walks them (BENCHMARKS.md).
        return None;
    }
    let event = match f.e {
        Some(e) => text(Some(e))?,
        None if f.u.is_some() && f.b.is_some() => "bookTicker",
        // An error goes to `decode`: its fields are nested.
        None if f.result && !f.code => return Some(Message::Control),
        None => return None,
    };
    let bool_of = |v: Option<Val<'_>>| match v? {
        Val::Bool(b) => Some(b),
        _ => None,
    };
    Some(match event {
        "trade" | "aggTrade" => {
            let trade = Trade {
                symbol: text(f.s)?,
                id: if event == "trade" { f.t } else { f.a }?.as_u64()?,
                price: text(f.p)?,
                qty: text(f.q)?,
                trade_time_ms: f.big_t?.as_u64()?,
                event_time_ms: f.big_e?.as_u64()?,
                buyer_is_maker: bool_of(f.m)?,
            };
            if event == "trade" {
                Message::Trade(trade)
            } else {
                Message::AggTrade(trade)
            }
        }
        "bookTicker" => Message::BookTicker(BookTicker {
            symbol: text(f.s)?,
            update_id: f.u?.as_u64()?,
            bid: (text(f.b)?, text(f.big_b)?),
            ask: (text(f.a)?, text(f.big_a)?),
            // The tape path reads `E` leniently; only a clean one here.
            event_time_ms: match f.big_e {
                None => None,
                Some(v) => Some(v.as_u64()?),
            },
        }),
        "depthUpdate" => return None,
        _ => Message::Other(event),
    })
}

/// The fields a Binance message can have, first occurrence of each.
#[derive(Default)]
struct Fields<'i> {
    e: Option<Val<'i>>,
    big_e: Option<Val<'i>>,
    s: Option<Val<'i>>,
    t: Option<Val<'i>>,
    a: Option<Val<'i>>,
    p: Option<Val<'i>>,
    q: Option<Val<'i>>,
    big_t: Option<Val<'i>>,
    m: Option<Val<'i>>,
    big_u: Option<Val<'i>>,
    u: Option<Val<'i>>,
    pu: Option<Val<'i>>,
    b: Option<Val<'i>>,
    big_b: Option<Val<'i>>,
    big_a: Option<Val<'i>>,
    last_update_id: Option<Val<'i>>,
    bids: Option<Val<'i>>,
    asks: Option<Val<'i>>,
    result: bool,
    code: bool,
    stream: Option<Val<'i>>,
    data: Option<Val<'i>>,
    /// A repeated key or nested JSON that is not valid: give up.
    bad: bool,
}

impl<'i> Fields<'i> {
    fn of(text: &'i str) -> Option<Fields<'i>> {
        let mut f = Fields::default();
        scan::object(text, Numbers::Integers, |key, v| {
            if matches!(v, Val::Array(_) | Val::Object(_)) && !scan::valid(v, Numbers::Integers, 0)
            {
                f.bad = true;
            }
            let slot = match key {
                "e" => &mut f.e,
                "E" => &mut f.big_e,
                "s" => &mut f.s,
                "t" => &mut f.t,
                "a" => &mut f.a,
                "p" => &mut f.p,
                "q" => &mut f.q,
                "T" => &mut f.big_t,
                "m" => &mut f.m,
                "U" => &mut f.big_u,
                "u" => &mut f.u,
                "pu" => &mut f.pu,
                "b" => &mut f.b,
                "B" => &mut f.big_b,
                "A" => &mut f.big_a,
                "lastUpdateId" => &mut f.last_update_id,
                "bids" => &mut f.bids,
                "asks" => &mut f.asks,
                "stream" => &mut f.stream,
                "data" => &mut f.data,
                "result" => {
                    f.bad |= f.result;
                    f.result = true;
                    return;
                }
                "code" => {
                    f.bad |= f.code;
                    f.code = true;
                    return;
                }
                _ => return,
            };
            if slot.is_some() {
                f.bad = true;
            }
            *slot = Some(v);
        })?;
        (!f.bad).then_some(f)
    }
}

fn text(v: Option<Val<'_>>) -> Option<&str> {
    match v? {
        Val::Str(s) => Some(s),
        _ => None,
    }
}
