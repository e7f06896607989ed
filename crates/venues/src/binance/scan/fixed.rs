//! The fixed layouts Binance sends its flat messages in, field after field:
//! read by comparing bytes, without looking keys up. Any difference (a
//! field added, reordered, whitespace, an escape) gives `None` and the
//! general scanner takes over. Each layout is its own straight-line
//! function: a table of layouts walked by one generic loop cost about
//! twice as much per message (BENCHMARKS.md).

use crate::binance::{BookTicker, Depth, Message, Trade};
use crate::scan::{LevelMarks, Reader};

/// Spot trade: e E s t p q T m M.
fn spot_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
    let event_time_ms = c.uint()?;
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    c.key(br#","t":"#)?;
    let id = c.uint()?;
    c.key(br#","p":"#)?;
    let price = c.string()?;
    c.key(br#","q":"#)?;
    let qty = c.string()?;
    c.key(br#","T":"#)?;
    let trade_time_ms = c.uint()?;
    c.key(br#","m":"#)?;
    let buyer_is_maker = c.boolean()?;
    c.key(br#","M":"#)?;
    c.boolean()?;
    Some(Trade {
        event_time_ms,
        symbol,
        id,
        price,
        qty,
        trade_time_ms,
        buyer_is_maker,
    })
}

/// Futures trade: e E T s t p q X m.
fn futures_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
    let event_time_ms = c.uint()?;
    c.key(br#","T":"#)?;
    let trade_time_ms = c.uint()?;
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    c.key(br#","t":"#)?;
    let id = c.uint()?;
    c.key(br#","p":"#)?;
    let price = c.string()?;
    c.key(br#","q":"#)?;
    let qty = c.string()?;
    c.key(br#","X":"#)?;
    c.string()?;
    c.key(br#","m":"#)?;
    let buyer_is_maker = c.boolean()?;
    Some(Trade {
        event_time_ms,
        symbol,
        id,
        price,
        qty,
        trade_time_ms,
        buyer_is_maker,
    })
}

/// Spot aggTrade: e E s a p q f l T m M.
fn spot_agg_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
    let event_time_ms = c.uint()?;
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    c.key(br#","a":"#)?;
    let id = c.uint()?;
    let (price, qty, trade_time_ms, buyer_is_maker) = agg_rest(c)?;
    c.key(br#","M":"#)?;
    c.boolean()?;
    Some(Trade {
        event_time_ms,
        symbol,
        id,
        price,
        qty,
        trade_time_ms,
        buyer_is_maker,
    })
}

/// Futures aggTrade: e E a s p q f l T m.
fn futures_agg_trade<'i>(c: &mut Reader<'i>) -> Option<Trade<'i>> {
    let event_time_ms = c.uint()?;
    c.key(br#","a":"#)?;
    let id = c.uint()?;
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    let (price, qty, trade_time_ms, buyer_is_maker) = agg_rest(c)?;
    Some(Trade {
        event_time_ms,
        symbol,
        id,
        price,
        qty,
        trade_time_ms,
        buyer_is_maker,
    })
}

/// An aggTrade's p q f l T m, as spot and futures both send them.
#[inline(always)]
fn agg_rest<'i>(c: &mut Reader<'i>) -> Option<(&'i str, &'i str, u64, bool)> {
    c.key(br#","p":"#)?;
    let price = c.string()?;
    c.key(br#","q":"#)?;
    let qty = c.string()?;
    c.key(br#","f":"#)?;
    c.uint()?;
    c.key(br#","l":"#)?;
    c.uint()?;
    c.key(br#","T":"#)?;
    let trade_time_ms = c.uint()?;
    c.key(br#","m":"#)?;
    Some((price, qty, trade_time_ms, c.boolean()?))
}

/// A book ticker's b B a A.
#[inline(always)]
fn quotes<'i>(c: &mut Reader<'i>) -> Option<[&'i str; 4]> {
    c.key(br#","b":"#)?;
    let bid = c.string()?;
    c.key(br#","B":"#)?;
    let bid_qty = c.string()?;
    c.key(br#","a":"#)?;
    let ask = c.string()?;
    c.key(br#","A":"#)?;
    Some([bid, bid_qty, ask, c.string()?])
}

/// Spot bookTicker: u s b B a A.
fn spot_ticker<'i>(c: &mut Reader<'i>) -> Option<BookTicker<'i>> {
    let update_id = c.uint()?;
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    let [b, bq, a, aq] = quotes(c)?;
    Some(BookTicker {
        update_id,
        symbol,
        bid: (b, bq),
        ask: (a, aq),
        event_time_ms: None,
    })
}

/// COIN-M bookTicker: u e s ps b B a A T E.
fn coinm_ticker<'i>(c: &mut Reader<'i>) -> Option<BookTicker<'i>> {
    let update_id = c.uint()?;
    c.key(br#","e":"#)?;
    c.is("bookTicker")?;
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    c.key(br#","ps":"#)?;
    c.string()?;
    let [b, bq, a, aq] = quotes(c)?;
    c.key(br#","T":"#)?;
    c.uint()?;
    c.key(br#","E":"#)?;
    let event_time_ms = c.uint()?;
    Some(BookTicker {
        update_id,
        symbol,
        bid: (b, bq),
        ask: (a, aq),
        event_time_ms: Some(event_time_ms),
    })
}

/// USD-M bookTicker: e u s b B a A T E.
fn usdm_ticker<'i>(c: &mut Reader<'i>) -> Option<BookTicker<'i>> {
    let update_id = c.uint()?;
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    let [b, bq, a, aq] = quotes(c)?;
    c.key(br#","T":"#)?;
    c.uint()?;
    c.key(br#","E":"#)?;
    let event_time_ms = c.uint()?;
    Some(BookTicker {
        update_id,
        symbol,
        bid: (b, bq),
        ask: (a, aq),
        event_time_ms: Some(event_time_ms),
    })
}

/// Depth updates: spot `e E s U u b a`, USD-M `e E T s U u pu b a`,
/// COIN-M `e E T s ps U u pu b a`.
fn depth<'t, 'i>(
    c: &mut Reader<'i>,
    partial: bool,
    marks: &mut LevelMarks<'t>,
) -> Option<Depth<'t, 'i>> {
    let event_time_ms = c.uint()?;
    let futures = c.key(br#","T":"#).is_some();
    if futures {
        c.uint()?;
    }
    c.key(br#","s":"#)?;
    let symbol = c.string()?;
    if futures && c.key(br#","ps":"#).is_some() {
        c.string()?;
    }
    c.key(br#","U":"#)?;
    let first_id = c.uint()?;
    c.key(br#","u":"#)?;
    let last_id = c.uint()?;
    let prev_last_id = if futures {
        c.key(br#","pu":"#)?;
        Some(c.uint()?)
    } else {
        None
    };
    c.key(br#","b":"#)?;
    let bids = c.levels_exact_into(marks)?;
    c.key(br#","a":"#)?;
    let asks = c.levels_exact_into(marks)?;
    Some(Depth {
        symbol,
        first_id,
        last_id,
        prev_last_id,
        event_time_ms,
        partial,
        bids,
        asks,
    })
}

/// Reads a raw event occupying `s[i..]` up to its closing brace, which
/// must be at `s.len() - tail`.
fn event<'t, 'i>(
    s: &'i str,
    i: usize,
    tail: usize,
    partial: bool,
    marks: &mut LevelMarks<'t>,
) -> Option<Message<'t, 'i>> {
    let rest = s.as_bytes().get(i..)?;
    // Each layout's first key and value, up to the value of its second
    // key, which is where each reader starts.
    let layout = |prefix: &[u8]| {
        rest.starts_with(prefix).then(|| Reader {
            s,
            at: i + prefix.len(),
        })
    };
    // Byte 2 (`e` or `u`) and byte 6 (the event's first letter) tell
    // the layouts apart.
    let m = match (rest.get(2)?, rest.get(6)?) {
        (b'e', b't') => {
            let start = layout(br#"{"e":"trade","E":"#)?;
            let mut c = Reader { ..start };
            spot_trade(&mut c)
                .or_else(|| {
                    c = Reader { ..start };
                    futures_trade(&mut c)
                })
                .map(|t| (c.at, Message::Trade(t)))
        }
        (b'e', b'a') => {
            let start = layout(br#"{"e":"aggTrade","E":"#)?;
            let mut c = Reader { ..start };
            spot_agg_trade(&mut c)
                .or_else(|| {
                    c = Reader { ..start };
                    futures_agg_trade(&mut c)
                })
                .map(|t| (c.at, Message::AggTrade(t)))
        }
        (b'e', b'd') => {
            let mut c = layout(br#"{"e":"depthUpdate","E":"#)?;
            depth(&mut c, partial, marks).map(|d| (c.at, Message::Depth(d)))
        }
        (b'e', b'b') => {
            let mut c = layout(br#"{"e":"bookTicker","u":"#)?;
            usdm_ticker(&mut c).map(|t| (c.at, Message::BookTicker(t)))
        }
        (b'u', _) => {
            let start = layout(br#"{"u":"#)?;
            let mut c = Reader { ..start };
            spot_ticker(&mut c)
                .or_else(|| {
                    c = Reader { ..start };
                    coinm_ticker(&mut c)
                })
                .map(|t| (c.at, Message::BookTicker(t)))
        }
        _ => None,
    };
    let (at, m) = m?;
    Reader { s, at }.close(tail)?;
    Some(m)
}

/// A raw event, or one wrapped in a combined-stream envelope
/// (`{"stream":"...","data":{...}}`), in a fixed layout. A depth
/// update's level bounds (and values) go to the front of `marks` while
/// they fit.
pub(super) fn read<'t, 'i>(s: &'i str, mut marks: LevelMarks<'t>) -> Option<Message<'t, 'i>> {
    const STREAM: &[u8] = br#"{"stream":""#;
    let b = s.as_bytes();
    if !b.starts_with(STREAM) {
        return event(s, 0, 0, false, &mut marks);
    }
    let mut c = Reader {
        s,
        at: STREAM.len() - 1,
    };
    let stream = c.string()?;
    let partial = crate::binance::partial_depth(stream.as_bytes());
    c.key(br#","data":"#)?;
    // The envelope's closing brace must be the last byte.
    if b.last() != Some(&b'}') {
        return None;
    }
    event(s, c.at, 1, partial, &mut marks)
}
