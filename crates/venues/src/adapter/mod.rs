//! What every venue adapter shares: the instrument table, and turning the
//! sync engine's verdicts on one message into normalised events.

use std::collections::HashMap;

use crate::DecodeError;
use crate::book::{Book, Level, Side};
use crate::decimal::BadValue;
use crate::event::{Aggressor, Event, InstrumentId, InstrumentSpec, Kind};
use crate::json::Levels;
use crate::model::BookShape;
use crate::sync::{Arrival, BookSync, Chain, Line, Resync, SyncConfig, SyncEvent};

mod lines;
mod symbol;
mod venue;

pub use lines::Lead;
use lines::{Carried, What};
use symbol::names;
pub(crate) use venue::venue_adapter;
pub use venue::{Lines, VenueAdapter};

/// What an adapter made of one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Market data for a known instrument: its events were emitted (none,
    /// if a diff was only buffered while a snapshot is awaited).
    Data,
    /// Not market data: a subscription acknowledgement, a reply, a
    /// heartbeat.
    Control,
    /// Market data of a channel this adapter does not normalise, or for an
    /// instrument not in its table.
    Ignored,
    /// The venue asked for an answer: send this text frame back now (for
    /// Deribit's `test_request` heartbeat, `public/test`).
    Answer(&'static str),
    /// The venue refused a request (a subscription to an unknown symbol or
    /// channel, a malformed request): `Rejected` was emitted for each
    /// instrument it names, and [`VenueAdapter::rejection`] has its words.
    Rejected,
    /// The venue announced that it will soon close the connection this
    /// message came on (Binance `serverShutdown`, OKX notice `64008`):
    /// replace it now, make-before-break, rather than lose it and resync.
    Closing,
}

pub(crate) struct Instrument {
    pub(crate) spec: InstrumentSpec,
    pub(crate) sync: Option<BookSync>,
    /// Its trades' and quotes' lines ([`crate::sync::lines`]).
    lines: Carried,
}

/// The instruments of one adapter, with their books, all allocated when the
/// adapter is made.
pub(crate) struct Instruments {
    list: Vec<Instrument>,
    /// Read on every message (with more than a few instruments): a fast
    /// hasher (the symbols are the venue's, not an attacker's).
    index: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
    /// The venue's own words on the last rejected request (at most
    /// [`REJECTION_TEXT`] bytes, allocated once).
    rejection: String,
    /// The line the message being handled came on.
    from: Line,
    /// Counts the messages whose trades were read (see [`Carried::floor`]).
    message: u64,
    /// The latest second arrival's lead, until taken.
    lead: Option<Lead>,
}

/// How much of a venue's rejection text is kept.
const REJECTION_TEXT: usize = 512;

impl Instruments {
    /// Books use `chain`, shaped by `shape` (the venue's rule for how
    /// many levels to keep below the shown depth, and who keeps them
    /// complete); a venue whose snapshots come in band needs only a small
    /// diff buffer (diffs before the snapshot are dropped anyway).
    pub(crate) fn new(
        specs: &[InstrumentSpec],
        chain: Chain,
        shape: impl Fn(usize) -> BookShape,
    ) -> Instruments {
        let list: Vec<Instrument> = specs
            .iter()
            .map(|spec| Instrument {
                spec: spec.clone(),
                sync: (spec.depth > 0).then(|| {
                    BookSync::new(
                        chain,
                        SyncConfig::for_book(chain, spec.depth, shape(spec.depth)),
                    )
                }),
                lines: Carried::default(),
            })
            .collect();
        let index = specs
            .iter()
            .enumerate()
            .map(|(i, s)| (s.symbol.as_str().into(), i as u32))
            .collect();
        Instruments {
            list,
            index,
            rejection: String::with_capacity(REJECTION_TEXT),
            from: Line::Primary,
            message: 0,
            lead: None,
        }
    }

    pub(crate) fn get(&self, id: InstrumentId) -> Option<&Instrument> {
        self.list.get(id.0 as usize)
    }

    /// How many instruments.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn specs(&self) -> impl Iterator<Item = &InstrumentSpec> {
        self.list.iter().map(|i| &i.spec)
    }

    pub(crate) fn book(&self, id: InstrumentId) -> Option<&Book> {
        self.get(id)?.sync.as_ref()?.book()
    }

    /// Emits each trade of a message (each of an instrument in the table):
    /// `Data` if there was one, else `Ignored`. The first trade that
    /// cannot be read stops it, its error naming the instrument where it
    /// is known.
    #[inline]
    pub(crate) fn trades<'i, V: WireValue>(
        &mut self,
        trades: impl IntoIterator<Item = Result<WireTrade<'i, V>, DecodeError>>,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        self.message = self.message.wrapping_add(1);
        let mut outcome = Outcome::Ignored;
        for trade in trades {
            let t = trade?;
            let found = match t.symbol {
                Named::Symbol(symbol) => self.find(symbol),
                Named::Found(id) => Some(id),
            };
            let Some(id) = found else {
                continue;
            };
            let i = id.0 as usize;
            // Against the highest id before this message: a batch need not
            // come in id order.
            let c = &mut self.list[i].lines;
            if c.floor_of != self.message {
                (c.floor, c.floor_of) = (c.trade, self.message);
            }
            let c = *c;
            let fresh = Self::fresh(&c, c.paired[0], self.from, t.trade_id, c.floor);
            if c.both() && t.trade_id != 0 {
                self.arrived(i, What::Trade, t.trade_id, recv_tsc, fresh);
            }
            if !fresh {
                outcome = Outcome::Data;
                continue;
            }
            let c = &mut self.list[i].lines;
            c.trade = c.trade.max(t.trade_id);
            if !c.both() && t.trade_id != 0 {
                c.paired[0] = false;
            }
            let spec = &self.list[i].spec;
            let level = V::level(t.price, t.size, spec.price_scale, spec.size_scale)
                .map_err(|e| DecodeError::from(e).at(id))?;
            emit(Event {
                instrument: id,
                exchange_ns: t.exchange_ns,
                recv_tsc,
                kind: Kind::Trade {
                    price: level.price,
                    size: level.size,
                    aggressor: t.aggressor,
                    trade_id: t.trade_id,
                },
            });
            outcome = Outcome::Data;
        }
        Ok(outcome)
    }

    /// Emits the best bid and ask of `symbol`: `Data`, or `Ignored` when
    /// the symbol is not in the table. A price or size that cannot be read
    /// names the instrument.
    #[inline]
    pub(crate) fn quote<V: WireValue>(
        &mut self,
        symbol: &str,
        quote: WireQuote<V>,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let Some(id) = self.find(symbol) else {
            return Ok(Outcome::Ignored);
        };
        self.quote_at(id, quote, recv_tsc, emit)
    }

    /// [`quote`](Self::quote) of instrument `id`.
    #[inline]
    pub(crate) fn quote_at<V: WireValue>(
        &mut self,
        id: InstrumentId,
        quote: WireQuote<V>,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let from = self.from;
        let Some(instrument) = self.list.get_mut(id.0 as usize) else {
            return Ok(Outcome::Ignored);
        };
        let c = &mut instrument.lines;
        if !Self::fresh(c, c.paired[1], from, quote.update_id, c.quote) {
            return Ok(Outcome::Data);
        }
        c.quote = c.quote.max(quote.update_id);
        if !c.both() && quote.update_id != 0 {
            c.paired[1] = false;
        }
        let (ps, ss) = (instrument.spec.price_scale, instrument.spec.size_scale);
        let (bid, ask) = (
            quote_level(quote.bid, ps, ss, id)?,
            quote_level(quote.ask, ps, ss, id)?,
        );
        emit(Event {
            instrument: id,
            exchange_ns: quote.exchange_ns,
            recv_tsc,
            kind: Kind::Quote {
                bid_price: bid.price,
                bid_size: bid.size,
                ask_price: ask.price,
                ask_size: ask.size,
                update_id: quote.update_id,
            },
        });
        Ok(Outcome::Data)
    }

    /// Runs one book message of `symbol` through its engine: `feed` hands
    /// it over, as in [`feed_book`](Self::feed_book). `Ignored` when the
    /// symbol is unknown or has no book.
    pub(crate) fn book_message(
        &mut self,
        symbol: &str,
        exchange_ns: u64,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
        feed: impl FnOnce(
            &InstrumentSpec,
            &mut BookSync,
            &mut dyn FnMut(SyncEvent),
        ) -> Result<bool, DecodeError>,
    ) -> Result<Outcome, DecodeError> {
        let Some(id) = self.find(symbol) else {
            return Ok(Outcome::Ignored);
        };
        self.feed_book(id, exchange_ns, recv_tsc, emit, feed)
    }

    /// Runs one book message of instrument `id` through its engine: `feed`
    /// hands it over (given the instrument's spec, its engine and the
    /// engine's `emit`) and says whether it was the book's: `false` when
    /// it left the engine alone, a message it skips (`Ignored`). The
    /// engine's verdict is then emitted, stamped with `exchange_ns`. A
    /// price or size that cannot be read names the instrument. `Ignored`
    /// when `id` has no book.
    pub(crate) fn feed_book(
        &mut self,
        id: InstrumentId,
        exchange_ns: u64,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
        feed: impl FnOnce(
            &InstrumentSpec,
            &mut BookSync,
            &mut dyn FnMut(SyncEvent),
        ) -> Result<bool, DecodeError>,
    ) -> Result<Outcome, DecodeError> {
        let Some(Instrument {
            spec,
            sync: Some(sync),
            lines,
        }) = self.list.get_mut(id.0 as usize)
        else {
            return Ok(Outcome::Ignored);
        };
        let both = lines.both();
        sync.set_line(self.from);
        let stamp = Stamp {
            id,
            exchange_ns,
            recv_tsc,
        };
        let mut verdict = Verdict::new(stamp, emit);
        let fed = feed(spec, sync, &mut |e| verdict.on(e)).map_err(|e| e.at(id))?;
        verdict.finish(sync);
        if both {
            match sync.arrival() {
                Arrival::Applied(key) => {
                    self.arrived(id.0 as usize, What::Diff, key, recv_tsc, true)
                }
                Arrival::Duplicate(key) => {
                    self.arrived(id.0 as usize, What::Diff, key, recv_tsc, false)
                }
                Arrival::Other => {}
            }
        }
        Ok(if fed { Outcome::Data } else { Outcome::Ignored })
    }

    /// The venue refused a request (`text`, its own words): `Rejected`
    /// for `instrument` if given, else for every instrument of this
    /// adapter the text names (a symbol standing alone, not inside a
    /// longer word). See [`reject_where`](Self::reject_where).
    pub(crate) fn reject(
        &mut self,
        instrument: Option<InstrumentId>,
        code: i64,
        text: &str,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> bool {
        self.reject_where(code, text, recv_tsc, emit, |id, i| match instrument {
            Some(want) => want == id,
            None => names(text, &i.spec.symbol),
        })
    }

    /// The venue refused a request (`text`, its own words): `Rejected`
    /// for every instrument `concerns` picks (given its id and entry), in
    /// table order. Keeps the text for [`rejection`](Self::rejection)
    /// either way. Returns whether any instrument was picked.
    pub(crate) fn reject_where(
        &mut self,
        code: i64,
        text: &str,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
        mut concerns: impl FnMut(InstrumentId, &Instrument) -> bool,
    ) -> bool {
        self.rejection.clear();
        let mut end = text.len().min(REJECTION_TEXT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.rejection.push_str(&text[..end]);
        let mut named = false;
        for (i, instrument) in self.list.iter().enumerate() {
            let id = InstrumentId(i as u32);
            if concerns(id, instrument) {
                named = true;
                emit(Event {
                    instrument: id,
                    exchange_ns: 0,
                    recv_tsc,
                    kind: Kind::Rejected { code },
                });
            }
        }
        named
    }

    /// The venue's words on the last rejected request.
    pub(crate) fn rejection(&self) -> &str {
        &self.rejection
    }

    /// Something that concerns every book of the connection the message
    /// came on (a gap in its own sequence): `Gap(why)` and `Resync` for
    /// each book that was valid and follows that line; the shadow books
    /// kept from it are dropped ([`BookSync::invalidate_line`]).
    pub(crate) fn invalidate_all(
        &mut self,
        why: Resync,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) {
        let from = self.from;
        self.each_book(recv_tsc, emit, |sync, mut on| {
            sync.invalidate_line(from, why, &mut on)
        });
    }

    /// Runs `f` on every book's sync, its events stamped for that book.
    fn each_book<E: FnMut(Event)>(
        &mut self,
        recv_tsc: u64,
        emit: &mut E,
        mut f: impl FnMut(&mut BookSync, &mut dyn FnMut(SyncEvent)),
    ) {
        for (i, instrument) in self.list.iter_mut().enumerate() {
            if let Some(sync) = instrument.sync.as_mut() {
                book_verdict(i, sync, recv_tsc, emit, &mut f);
            }
        }
    }

    /// The connection went down: `Disconnected` for each instrument it
    /// carried, then for every book that was valid (or bridging)
    /// `Gap(Disconnected)`, and `Resync` at once where the snapshot comes
    /// in band (see [`BookSync::disconnected`]).
    pub(crate) fn disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        for i in 0..self.list.len() {
            emit(Event {
                instrument: InstrumentId(i as u32),
                exchange_ns: 0,
                recv_tsc,
                kind: Kind::Disconnected,
            });
        }
        self.each_book(recv_tsc, emit, |sync, mut on| sync.disconnected(&mut on));
    }
}

/// Runs `f` on book `i`'s engine outside any message (a disconnect, a
/// line change): what it says is emitted stamped for that book, and a book
/// that became valid is said whole ([`Verdict::finish`]).
fn book_verdict<E: FnMut(Event)>(
    i: usize,
    sync: &mut BookSync,
    recv_tsc: u64,
    emit: &mut E,
    f: impl FnOnce(&mut BookSync, &mut dyn FnMut(SyncEvent)),
) {
    let stamp = Stamp {
        id: InstrumentId(i as u32),
        exchange_ns: 0,
        recv_tsc,
    };
    let mut verdict = Verdict::new(stamp, emit);
    f(sync, &mut |e| verdict.on(e));
    verdict.finish(sync);
}

/// A price or a size as a venue sends it: decimal text (JSON), or a
/// mantissa and an exponent (SBE).
pub(crate) trait WireValue: Copy {
    /// The level of `price` and `size`, exact at the scales.
    fn level(price: Self, size: Self, price_scale: u8, size_scale: u8) -> Result<Level, BadValue>;
}

impl WireValue for &str {
    #[inline(always)]
    fn level(price: Self, size: Self, price_scale: u8, size_scale: u8) -> Result<Level, BadValue> {
        crate::decimal::level(price, size, price_scale, size_scale)
    }
}

impl WireValue for crate::mantissa::Mantissa {
    #[inline(always)]
    fn level(price: Self, size: Self, price_scale: u8, size_scale: u8) -> Result<Level, BadValue> {
        crate::mantissa::level(price, size, price_scale, size_scale)
    }
}

/// One side of a quote at the instrument's scales. Inlined where the
/// quote's event is made, which takes only its price and size: as a
/// closure called twice it was not, and each side came back through
/// memory, its digit counts written a byte at a time and read back as one
/// word, a load that waited on stores it could not be forwarded from
/// (`perf`: two thirds of the closure's own samples).
#[inline(always)]
fn quote_level<V: WireValue>(
    (price, size): (V, V),
    price_scale: u8,
    size_scale: u8,
    id: InstrumentId,
) -> Result<Level, DecodeError> {
    V::level(price, size, price_scale, size_scale).map_err(|e| DecodeError::from(e).at(id))
}

/// One trade as a venue sends it, for [`Instruments::trades`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct WireTrade<'i, V = &'i str> {
    /// The venue's symbol, or the instrument already found by it.
    pub(crate) symbol: Named<'i>,
    /// The price, as sent.
    pub(crate) price: V,
    /// The size, as sent.
    pub(crate) size: V,
    /// Who took liquidity.
    pub(crate) aggressor: Aggressor,
    /// The venue's trade id (0 when it is not a number).
    pub(crate) trade_id: u64,
    /// The venue's time of the trade (0: none).
    pub(crate) exchange_ns: u64,
}

/// Which instrument a trade is of: its symbol as sent (text), or the
/// instrument an adapter has found by it already (an SBE message's, by
/// its symbol's bytes: [`Instruments::find_bytes`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Named<'i> {
    Symbol(&'i str),
    Found(InstrumentId),
}

impl<'i> From<&'i str> for Named<'i> {
    #[inline]
    fn from(symbol: &'i str) -> Named<'i> {
        Named::Symbol(symbol)
    }
}

/// A best bid and ask as a venue sends them, for [`Instruments::quote`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct WireQuote<V> {
    /// Best bid price and size, as sent.
    pub(crate) bid: (V, V),
    /// Best ask price and size, as sent.
    pub(crate) ask: (V, V),
    /// The venue's update id (0: none).
    pub(crate) update_id: u64,
    /// The venue's time (0: none).
    pub(crate) exchange_ns: u64,
}

/// A side's best level as sent, or `("0", "0")` when the side is empty
/// (an empty side of a quote: price and size 0).
pub(crate) fn best<'i>(levels: &Levels<'_, 'i>) -> Result<(&'i str, &'i str), DecodeError> {
    Ok(levels.iter().next().transpose()?.unwrap_or(("0", "0")))
}

/// Whom an event is about and when.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    pub(crate) id: InstrumentId,
    pub(crate) exchange_ns: u64,
    pub(crate) recv_tsc: u64,
}

impl Stamp {
    #[inline]
    pub(crate) fn event(self, kind: Kind) -> Event {
        Event {
            instrument: self.id,
            exchange_ns: self.exchange_ns,
            recv_tsc: self.recv_tsc,
            kind,
        }
    }
}

/// A message as its transport hands it over, for an adapter that reads
/// text first ([`binance::Adapter::on_input`](crate::binance::Adapter::on_input)):
/// its text where the transport has already checked it is UTF-8, so that
/// it is not checked twice (a WebSocket text frame: tickwire-net's codec
/// checks every one, as RFC 6455 asks), and its bytes, padded, for a
/// parser that works in place.
pub trait Input<'a> {
    /// The message as text, if it is known to be UTF-8; `None`: the
    /// adapter checks it.
    fn text(&self) -> Option<&str>;

    /// The message followed by [`INPUT_PADDING`](crate::json::INPUT_PADDING)
    /// writable bytes, and its length.
    fn into_padded(self) -> (&'a mut [u8], usize);
}

/// A padded buffer as an [`Input`] whose text is not known to be UTF-8.
impl<'a> Input<'a> for (&'a mut [u8], usize) {
    fn text(&self) -> Option<&str> {
        None
    }

    fn into_padded(self) -> (&'a mut [u8], usize) {
        self
    }
}

/// `buf[..len]` as text, for the adapters that read it with the scanner
/// (no simd-json, so nobody else checks the UTF-8).
#[inline]
pub(crate) fn text(buf: &[u8], len: usize) -> Result<&str, DecodeError> {
    let bytes = buf.get(..len).ok_or(DecodeError::Missing("message"))?;
    utf8(bytes).ok_or(DecodeError::Utf8)
}

/// Below this many bytes the standard library's UTF-8 check (an ASCII fast
/// path, no dispatch) beats simdutf8's vector kernel: 9.8 against 15.4 ns
/// for a 150-byte trade, 47 against 23 ns for a 1.4 KB depth update.
const SHORT_TEXT: usize = 256;

/// `bytes` as text, with whichever UTF-8 check is faster at its length.
#[inline]
pub(crate) fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.len() < SHORT_TEXT {
        core::str::from_utf8(bytes).ok()
    } else {
        simdutf8::basic::from_utf8(bytes).ok()
    }
}

/// The taker's side as venues spell it (`buy`, `Buy`, `sell`, `Sell`).
#[inline]
pub(crate) fn taker(side: &str) -> Aggressor {
    match side {
        "buy" | "Buy" => Aggressor::Buy,
        "sell" | "Sell" => Aggressor::Sell,
        _ => Aggressor::Unknown,
    }
}

/// Milliseconds since the epoch to nanoseconds (0 stays "none").
#[inline]
pub(crate) fn ms_to_ns(ms: u64) -> u64 {
    ms.saturating_mul(1_000_000)
}

/// Collects what the sync engine says about one message: `Gap` and
/// `Resync` go out at once; the snapshot (when the book became valid) or
/// the message's deltas wait for [`Verdict::finish`], after every check.
pub(crate) struct Verdict<'e, E> {
    stamp: Stamp,
    emit: &'e mut E,
    valid: Option<u64>,
    updated: Option<u64>,
}

impl<'e, E: FnMut(Event)> Verdict<'e, E> {
    pub(crate) fn new(stamp: Stamp, emit: &'e mut E) -> Verdict<'e, E> {
        Verdict {
            stamp,
            emit,
            valid: None,
            updated: None,
        }
    }

    /// Hand this to the engine as its `emit`.
    #[inline]
    pub(crate) fn on(&mut self, event: SyncEvent) {
        match event {
            // A refresh is a snapshot asked for too; the book stays valid
            // (no `Gap` before it).
            SyncEvent::SnapshotNeeded | SyncEvent::RefreshNeeded => {
                (self.emit)(self.stamp.event(Kind::Resync))
            }
            SyncEvent::Gap(why) => {
                self.valid = None;
                self.updated = None;
                (self.emit)(self.stamp.event(Kind::Gap { why }));
            }
            SyncEvent::Valid { update_id } => {
                self.valid = Some(update_id);
                self.updated = None;
            }
            SyncEvent::Updated { update_id } => self.updated = Some(update_id),
        }
    }

    /// The message was fed (and its checksum verified): if the book became
    /// valid, the levels it shows as a snapshot and `BookValid`; if a
    /// valid book was updated, what changed in the levels it shows
    /// ([`Book::shown_changes`]).
    pub(crate) fn finish(self, sync: &BookSync) {
        let Verdict {
            stamp,
            emit,
            valid,
            updated,
        } = self;
        let Some(book) = sync.book() else { return };
        if let Some(valid) = valid {
            shown_snapshot(stamp, emit, book, updated.unwrap_or(valid));
        } else if let Some(update_id) = updated {
            let Some(applied) = sync.last_applied() else {
                // More levels than the engine keeps a record of: say the
                // whole book again.
                return shown_snapshot(stamp, emit, book, update_id);
            };
            // One delta held back, to mark the message's last.
            let mut held: Option<(Side, Level)> = None;
            let mut out = |side: Side, level: Level, last: bool| {
                emit(stamp.event(Kind::BookDelta {
                    side,
                    price: level.price,
                    size: level.size,
                    update_id,
                    last,
                }))
            };
            let at = |k: usize| {
                let a = applied[k];
                (a.side, a.level, a.rank as usize)
            };
            book.shown_changes_ranked(applied.len(), at, sync.edges_before(), |side, level| {
                if let Some((s, l)) = held.replace((side, level)) {
                    out(s, l, false);
                }
            });
            if let Some((s, l)) = held {
                out(s, l, true);
            }
        }
    }
}

/// The levels `book` shows, as `BookSnapshot`, a delta per level (bids
/// best first, then asks) and `BookValid`.
fn shown_snapshot<E: FnMut(Event)>(stamp: Stamp, emit: &mut E, book: &Book, update_id: u64) {
    let (bids, asks) = (book.levels(Side::Bid), book.levels(Side::Ask));
    emit(stamp.event(Kind::BookSnapshot {
        update_id,
        bids: bids.len() as u32,
        asks: asks.len() as u32,
        depth: book.depth() as u32,
    }));
    let total = bids.len() + asks.len();
    let all = bids
        .iter()
        .map(|l| (Side::Bid, l))
        .chain(asks.iter().map(|l| (Side::Ask, l)));
    for (n, (side, level)) in all.enumerate() {
        emit(stamp.event(Kind::BookDelta {
            side,
            price: level.price,
            size: level.size,
            update_id,
            last: n + 1 == total,
        }));
    }
    emit(stamp.event(Kind::BookValid { update_id }));
}

/// What the adapters' unit tests share.
#[cfg(test)]
pub(crate) mod testutil {
    use super::{Outcome, VenueAdapter};
    use crate::DecodeError;
    use crate::event::Event;
    use crate::json::INPUT_PADDING;

    /// Hands `text` to `a` as a feed does: in a buffer with the parser's
    /// padding after it, received at `recv_tsc`. The outcome, and the
    /// events it emitted.
    pub(crate) fn feed(
        a: &mut dyn VenueAdapter,
        text: &str,
        recv_tsc: u64,
    ) -> (Result<Outcome, DecodeError>, Vec<Event>) {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        let mut events = Vec::new();
        let outcome = a.on_message(&mut buf, text.len(), recv_tsc, &mut |e| events.push(e));
        (outcome, events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few instruments are found by comparing symbols, more through the
    /// hashed index: the same answers, the last of a symbol listed twice.
    #[test]
    fn symbols_are_found_in_small_and_large_tables() {
        let symbols = [
            "BTCUSDT",
            "ETHUSDT",
            "BTCUSDT",
            "A",
            "BTC-USD-SWAP",
            "XBT/USD",
            "ETH-PERPETUAL",
            "",
        ];
        for n in 1..=symbols.len() {
            let specs: Vec<InstrumentSpec> = symbols[..n]
                .iter()
                .map(|s| InstrumentSpec::new(s, 2, 8, 0))
                .collect();
            let table = Instruments::new(&specs, Chain::BinanceSpot, |_| BookShape {
                keep: 0,
                window: crate::book::Window::Client,
            });
            for (i, s) in symbols[..n].iter().enumerate() {
                let last = symbols[..n].iter().rposition(|t| t == s).unwrap();
                assert_eq!(
                    table.find(s),
                    Some(InstrumentId(last as u32)),
                    "{n}: {s} ({i})"
                );
            }
            for absent in ["BTCUSD", "BTCUSDT ", "btcusdt", "ETH-PERPETUAL2"] {
                assert_eq!(table.find(absent), None, "{n}: {absent}");
                assert_eq!(table.find_bytes(absent.as_bytes()), None, "{n}: {absent}");
            }
            for s in &symbols[..n] {
                assert_eq!(table.find_bytes(s.as_bytes()), table.find(s), "{n}: {s}");
            }
            assert_eq!(table.find_bytes(b"BTC\xffUSD"), None, "{n}");
        }
    }
}
