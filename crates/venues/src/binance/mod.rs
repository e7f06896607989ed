//! Binance spot, USD-M and COIN-M futures market streams: trade, aggTrade,
//! bookTicker and diff depth, raw or wrapped in a combined stream, and the
//! REST depth snapshot. Strings borrow the payload, numbers in strings stay
//! strings until [`crate::decimal`] scales them.
//!
//! Each message is read into one [`Message`], by the first of three paths
//! that takes it ([`Decoder`] tries them in this order):
//!
//! - [`scan_fixed`]: the exact layouts Binance sends, compared byte by byte;
//! - [`scan`]: past those, a one-pass scanner of flat messages;
//! - [`decode`]: the simd-json tape, for everything else.
//!
//! [`Adapter`] turns the messages into normalised events, keeping each
//! book in step with its REST snapshots ([`feed_depth`],
//! [`feed_snapshot_at`]).

pub mod listing;
pub mod plan;

mod sbe;
mod scan;
mod tape;
mod wire;

pub use scan::{scan, scan_fixed};
pub use tape::decode;
pub use wire::*;

use crate::adapter::{Instruments, Outcome, WireQuote, WireTrade, ms_to_ns};
use crate::book::Limit;
use crate::error::DecodeError;
use crate::event::{Aggressor, Event, InstrumentId, InstrumentSpec};

/// The decimal scales of one instrument's prices and quantities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scales {
    /// Decimal places kept in prices.
    pub price: u8,
    /// Decimal places kept in quantities.
    pub qty: u8,
}

impl Scales {
    /// The scales an instrument's values are kept at.
    fn of(spec: &InstrumentSpec) -> Scales {
        Scales {
            price: spec.price_scale,
            qty: spec.size_scale,
        }
    }
}

fn scaled_levels<'a>(
    bids: Levels<'a, 'a>,
    asks: Levels<'a, 'a>,
    scales: Scales,
) -> impl Iterator<Item = crate::sync::LevelResult> + 'a {
    crate::book::scaled_sides(&bids, &asks, scales.price, scales.qty)
}

/// Feeds a diff depth event into `sync` (whose chain must be
/// [`Chain::BinanceSpot`](crate::sync::Chain::BinanceSpot) for spot and
/// [`Chain::BinanceFutures`](crate::sync::Chain::BinanceFutures) for
/// USD-M and COIN-M).
pub fn feed_depth(
    sync: &mut crate::sync::BookSync,
    depth: &Depth<'_, '_>,
    scales: Scales,
    emit: &mut impl FnMut(crate::sync::SyncEvent),
) -> Result<(), DecodeError> {
    let seq = crate::sync::Seq {
        first: depth.first_id,
        last: depth.last_id,
        prev: depth.prev_last_id,
    };
    sync.on_diff(seq, scaled_levels(depth.bids, depth.asks, scales), emit)
}

/// Feeds a REST depth snapshot into `sync`, its `limit` not told: each
/// side ends at its worst level (see [`feed_snapshot_at`]).
pub fn feed_snapshot(
    sync: &mut crate::sync::BookSync,
    snapshot: &Snapshot<'_, '_>,
    scales: Scales,
    emit: &mut impl FnMut(crate::sync::SyncEvent),
) -> Result<(), DecodeError> {
    feed_snapshot_at(sync, snapshot, scales, Limit::Unknown, emit)
}

/// [`feed_snapshot`] of a snapshot fetched with `limit` (the request's
/// `limit=`): a side with fewer levels is the market's whole side, one
/// with as many may go on below (see [`crate::book`]).
pub fn feed_snapshot_at(
    sync: &mut crate::sync::BookSync,
    snapshot: &Snapshot<'_, '_>,
    scales: Scales,
    limit: Limit,
    emit: &mut impl FnMut(crate::sync::SyncEvent),
) -> Result<(), DecodeError> {
    sync.on_snapshot_at(
        snapshot.last_update_id,
        limit,
        scaled_levels(snapshot.bids, snapshot.asks, scales),
        emit,
    )
}

/// Binance messages in, normalised [`Event`]s out, for one connection's
/// instruments: trades and aggregate trades, book tickers as quotes, and
/// diff depth kept in step with REST snapshots.
///
/// The owner fetches a depth snapshot whenever a
/// [`Kind::Resync`](crate::Kind::Resync) event names a book, and hands the response to
/// [`Adapter::on_snapshot`]; diffs arriving meanwhile are buffered (the
/// one that bridges the snapshot usually arrives before the snapshot
/// does). Nothing allocates once the decoder has seen the largest message.
pub struct Adapter {
    market: Market,
    decoder: Decoder,
    instruments: Instruments,
}

impl Adapter {
    /// An adapter for `instruments` (symbols as Binance sends them in `s`:
    /// upper case, `BTCUSDT`; COIN-M `BTCUSD_PERP`), with their books.
    pub fn new(market: Market, instruments: &[InstrumentSpec]) -> Adapter {
        Adapter {
            market,
            decoder: Decoder::new(),
            instruments: Instruments::new(instruments, market.chain(), move |depth| {
                plan::book_shape(market, depth)
            }),
        }
    }

    /// The market.
    pub fn market(&self) -> Market {
        self.market
    }

    /// The instruments, in [`InstrumentId`] order.
    pub fn instruments(&self) -> impl Iterator<Item = &InstrumentSpec> {
        self.instruments.specs()
    }

    /// Decodes one stream message, `buf[..len]` followed by
    /// [`INPUT_PADDING`](crate::json::INPUT_PADDING) writable bytes (it is
    /// parsed in place), and emits its events. A message that cannot be
    /// read is an error and emits nothing, except that a depth diff whose
    /// levels cannot be read invalidates its book (`Gap`, `Resync`).
    pub fn on_message(
        &mut self,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        self.on_input((buf, len), recv_tsc, emit)
    }

    /// [`on_message`](Self::on_message) of a message as its transport
    /// hands it over ([`Input`](crate::Input)): a text the
    /// transport has checked is UTF-8 (a WebSocket text frame) is not
    /// checked again.
    pub fn on_input<'a>(
        &mut self,
        input: impl crate::adapter::Input<'a>,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let instruments = &mut self.instruments;
        self.decoder.decode_input(input, |message| {
            on_decoded(instruments, message, recv_tsc, emit)
        })
    }

    /// Applies a REST depth snapshot (the body of `GET .../depth?symbol=..`,
    /// with the same padding as [`on_message`](Self::on_message)) to the
    /// book of `id`, replays the diffs buffered meanwhile, and emits the
    /// book (`BookSnapshot`, its levels, `BookValid`) if they bridge it.
    /// The request's `limit` is not told, so each side of the book ends
    /// at its worst level ([`Limit::Unknown`]): never wrong, but a side
    /// with fewer levels than the book shows cannot be known whole, so a
    /// thin market's book gaps (`DepthExhausted`) at once. A snapshot
    /// fetched as [`plan::binance::snapshot_path`](plan::snapshot_path)
    /// asks goes to [`on_snapshot_at`](Self::on_snapshot_at) with
    /// `Limit::Levels(plan::binance::snapshot_limit(market, depth))`: a side
    /// with fewer levels is then the market's whole side.
    pub fn on_snapshot(
        &mut self,
        id: InstrumentId,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        self.on_snapshot_at(id, Limit::Unknown, buf, len, recv_tsc, emit)
    }

    /// [`on_snapshot`](Self::on_snapshot) of a snapshot fetched with
    /// `limit` (the request's `limit=`, as [`plan::binance::snapshot_path`](plan::snapshot_path)
    /// asks): a side with fewer levels is the market's whole side. A limit
    /// above the market's deepest snapshot counts as that deepest (spot
    /// truncates `limit` to 5000), so a full 5000-level side is never
    /// taken for whole.
    pub fn on_snapshot_at(
        &mut self,
        id: InstrumentId,
        limit: Limit,
        buf: &mut [u8],
        len: usize,
        recv_tsc: u64,
        emit: &mut impl FnMut(Event),
    ) -> Result<Outcome, DecodeError> {
        let limit = match limit {
            Limit::Levels(n) => Limit::Levels(n.min(plan::max_limit(self.market))),
            other => other,
        };
        let Adapter {
            decoder,
            instruments,
            ..
        } = self;
        // The body is read only for a book this adapter keeps.
        instruments.feed_book(id, 0, recv_tsc, emit, |spec, sync, emit| {
            decoder.decode(buf, len, |message| {
                let Message::Snapshot(s) = message? else {
                    return Err(DecodeError::Missing("lastUpdateId"));
                };
                feed_snapshot_at(sync, &s, Scales::of(spec), limit, &mut { emit })?;
                Ok(true)
            })
        })
    }

    /// The connection went down: emits `Disconnected`, then `Gap` for every
    /// book that was valid; its `Resync` (fetch the snapshot now) comes
    /// with the first diff of the new connection. A book not valid yet
    /// keeps its buffered diffs: update ids carry across connections, so
    /// they may yet bridge.
    pub fn on_disconnect(&mut self, recv_tsc: u64, emit: &mut impl FnMut(Event)) {
        self.instruments.disconnect(recv_tsc, emit);
    }
}

/// One decoded stream message's events (see [`Adapter::on_message`]).
fn on_decoded(
    instruments: &mut Instruments,
    message: Result<Message<'_, '_>, DecodeError>,
    recv_tsc: u64,
    emit: &mut impl FnMut(Event),
) -> Result<Outcome, DecodeError> {
    match message? {
        Message::Trade(t) | Message::AggTrade(t) => {
            let trade = WireTrade {
                symbol: t.symbol.into(),
                price: t.price,
                size: t.qty,
                aggressor: if t.buyer_is_maker {
                    Aggressor::Sell
                } else {
                    Aggressor::Buy
                },
                trade_id: t.id,
                exchange_ns: ms_to_ns(t.trade_time_ms),
            };
            instruments.trades([Ok(trade)], recv_tsc, emit)
        }
        Message::BookTicker(q) => {
            let quote = WireQuote {
                bid: q.bid,
                ask: q.ask,
                update_id: q.update_id,
                exchange_ns: q.event_time_ms.map_or(0, ms_to_ns),
            };
            instruments.quote(q.symbol, quote, recv_tsc, emit)
        }
        Message::Depth(d) if !d.partial => instruments.book_message(
            d.symbol,
            ms_to_ns(d.event_time_ms),
            recv_tsc,
            emit,
            |spec, sync, emit| {
                feed_depth(sync, &d, Scales::of(spec), &mut { emit })?;
                Ok(true)
            },
        ),
        // "sent when the server is about to shut down, resulting in
        // disconnection. Please establish a new connection as soon as
        // possible" (Spot "WebSocket Streams", `serverShutdown`, raw
        // `{"e":"serverShutdown","E":..}` or combined under
        // `"stream":"!serverShutdown"`; added 2026-05-06, its "10 minutes
        // before" struck out 2026-06-09, so no lead time is assumed). The
        // futures streams document none; the same event is read there too.
        Message::Other("serverShutdown") => Ok(Outcome::Closing),
        // Partial depth (`@depth5`...) is the top of the book, whole:
        // not normalised into book events.
        Message::Depth(_) | Message::Other(_) => Ok(Outcome::Ignored),
        // A REST snapshot goes to `on_snapshot`, which knows its symbol.
        Message::Snapshot(_) => Err(DecodeError::Type("snapshot on the stream")),
        Message::Control => Ok(Outcome::Control),
        Message::Error { code, msg } => {
            // The reply names the request by its id only, not the
            // streams: the refusal concerns the connection.
            instruments.reject(None, code, msg, recv_tsc, emit);
            Ok(Outcome::Rejected)
        }
    }
}

crate::adapter::venue_adapter!(Adapter);

#[cfg(test)]
mod adapter_tests {
    use super::*;
    use crate::book::Side;
    use crate::event::Kind;
    use crate::json::INPUT_PADDING;
    use crate::sync::Resync;

    fn adapter() -> Adapter {
        Adapter::new(
            Market::Spot,
            &[
                InstrumentSpec::new("BNBBTC", 8, 8, 100),
                InstrumentSpec::new("ETHBTC", 6, 4, 0),
            ],
        )
    }

    fn feed(a: &mut Adapter, text: &str, tsc: u64) -> (Result<Outcome, DecodeError>, Vec<Event>) {
        crate::adapter::testutil::feed(a, text, tsc)
    }

    fn snapshot(a: &mut Adapter, text: &str) -> Vec<Event> {
        let mut buf = text.as_bytes().to_vec();
        buf.resize(text.len() + INPUT_PADDING, b' ');
        let mut events = Vec::new();
        let id = a.instrument("BNBBTC").unwrap();
        // The market's whole book: a side shorter than the shown depth is
        // all there is.
        a.on_snapshot_at(id, Limit::Whole, &mut buf, text.len(), 9, &mut |e| {
            events.push(e)
        })
        .unwrap();
        events
    }

    fn kinds(events: &[Event]) -> Vec<Kind> {
        events.iter().map(|e| e.kind).collect()
    }

    #[test]
    fn a_refused_request_is_a_rejection_with_binances_words() {
        let mut a = adapter();
        let (r, ev) = feed(
            &mut a,
            r#"{"error":{"code":2,"msg":"Invalid request: invalid stream"},"id":3}"#,
            1,
        );
        assert_eq!(r, Ok(Outcome::Rejected));
        // The reply names no stream: nothing is said of a book.
        assert!(ev.is_empty(), "{ev:?}");
        assert_eq!(
            crate::VenueAdapter::rejection(&a),
            "Invalid request: invalid stream"
        );
        let (r, _) = feed(&mut a, r#"{"result":null,"id":4}"#, 2);
        assert_eq!(r, Ok(Outcome::Control));
    }

    #[test]
    fn a_shutdown_notice_asks_for_the_connection_to_be_replaced() {
        let mut a = adapter();
        for (n, text) in [
            r#"{"e":"serverShutdown","E":1770123456789}"#,
            r#"{"stream":"!serverShutdown","data":{"e":"serverShutdown","E":1770123456789}}"#,
        ]
        .into_iter()
        .enumerate()
        {
            let (r, ev) = feed(&mut a, text, n as u64);
            assert_eq!((r, ev.len()), (Ok(Outcome::Closing), 0), "{text}");
        }
    }

    #[test]
    fn trades_and_quotes_are_exact_integers_with_both_stamps() {
        let mut a = adapter();
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"trade","E":1672515782136,"s":"BNBBTC","t":12345,"p":"0.001","q":"100","T":1672515782135,"m":true,"M":true}"#,
            77,
        );
        assert_eq!(r, Ok(Outcome::Data));
        assert_eq!(
            ev,
            [Event {
                instrument: InstrumentId(0),
                exchange_ns: 1_672_515_782_135_000_000,
                recv_tsc: 77,
                kind: Kind::Trade {
                    price: 100_000,
                    size: 10_000_000_000,
                    aggressor: Aggressor::Sell,
                    trade_id: 12345,
                },
            }]
        );
        let (_, ev) = feed(
            &mut a,
            r#"{"u":400900217,"s":"ETHBTC","b":"0.051","B":"31.2","a":"0.052","A":"40.66"}"#,
            78,
        );
        assert_eq!(ev[0].instrument, InstrumentId(1));
        assert_eq!(ev[0].exchange_ns, 0, "spot bookTicker has no time");
        assert_eq!(
            ev[0].kind,
            Kind::Quote {
                bid_price: 51_000,
                bid_size: 312_000,
                ask_price: 52_000,
                ask_size: 406_600,
                update_id: 400900217,
            }
        );
        // More digits than the instrument's scale: a typed error, nothing
        // emitted.
        let (r, ev) = feed(
            &mut a,
            r#"{"u":1,"s":"ETHBTC","b":"0.0510001","B":"1","a":"0.052","A":"1"}"#,
            79,
        );
        assert!(
            matches!(
                r,
                Err(DecodeError::Decimal(crate::BadDecimal {
                    field: "price",
                    ..
                }))
            ),
            "{r:?}"
        );
        assert!(ev.is_empty());
        let Err(DecodeError::Decimal(bad)) = r else {
            unreachable!()
        };
        assert_eq!(bad.instrument, Some(InstrumentId(1)), "named");
        // A trade's too: the error says which instrument it concerns.
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"trade","E":1,"s":"BNBBTC","t":1,"p":"0.000000001","q":"1","T":1,"m":false}"#,
            80,
        );
        let Err(DecodeError::Decimal(bad)) = r else {
            panic!("{r:?}")
        };
        assert_eq!(
            (bad.field, bad.value.as_str(), bad.scale, bad.instrument),
            ("price", "0.000000001", 8, Some(InstrumentId(0)))
        );
        assert!(ev.is_empty());
        // Unknown symbols, other channels and replies are told apart.
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"trade","E":1,"s":"XRPBTC","t":1,"p":"1","q":"1","T":1,"m":false}"#,
            0,
        );
        assert_eq!((r, ev.len()), (Ok(Outcome::Ignored), 0));
        let (r, _) = feed(&mut a, r#"{"result":null,"id":1}"#, 0);
        assert_eq!(r, Ok(Outcome::Control));
        let (r, _) = feed(&mut a, r#"{"e":"kline","E":1,"s":"BNBBTC","k":{}}"#, 0);
        assert_eq!(r, Ok(Outcome::Ignored));
    }

    #[test]
    fn the_book_is_silent_until_the_snapshot_is_bridged_then_speaks_in_deltas() {
        let mut a = adapter();
        // Before any snapshot: a request for one, nothing about the book.
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1000,"s":"BNBBTC","U":157,"u":160,"b":[["0.0024","10"]],"a":[["0.0026","100"]]}"#,
            1,
        );
        assert_eq!(kinds(&ev), [Kind::Resync]);
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1001,"s":"BNBBTC","U":161,"u":165,"b":[["0.0024","0"],["0.0023","5"]],"a":[]}"#,
            2,
        );
        assert!(ev.is_empty(), "{ev:?}");
        // The snapshot (at 158) is bridged by the buffered 157..160, and
        // 161..165 applies on top: the book is emitted once, whole.
        let ev = snapshot(
            &mut a,
            r#"{"lastUpdateId":158,"bids":[["0.0024","1"],["0.0022","2"]],"asks":[["0.0026","3"],["0.0030","4"]]}"#,
        );
        let d = |side, price, size, last| Kind::BookDelta {
            side,
            price,
            size,
            update_id: 165,
            last,
        };
        assert_eq!(
            kinds(&ev),
            [
                Kind::BookSnapshot {
                    update_id: 165,
                    bids: 2,
                    asks: 2,
                    depth: 100,
                },
                d(Side::Bid, 230_000, 500_000_000, false),
                d(Side::Bid, 220_000, 200_000_000, false),
                d(Side::Ask, 260_000, 10_000_000_000, false),
                d(Side::Ask, 300_000, 400_000_000, true),
                Kind::BookValid { update_id: 165 },
            ]
        );
        assert!(ev.iter().all(|e| e.recv_tsc == 9));
        // A chained diff: its levels, the last one marked.
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1002,"s":"BNBBTC","U":166,"u":166,"b":[["0.0022","0"]],"a":[["0.0027","1"]]}"#,
            3,
        );
        assert_eq!(
            kinds(&ev),
            [
                Kind::BookDelta {
                    side: Side::Bid,
                    price: 220_000,
                    size: 0,
                    update_id: 166,
                    last: false
                },
                Kind::BookDelta {
                    side: Side::Ask,
                    price: 270_000,
                    size: 100_000_000,
                    update_id: 166,
                    last: true
                },
            ]
        );
        assert_eq!(ev[0].exchange_ns, 1_002_000_000);
        // A gap: said once, a snapshot asked for, then silence.
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1003,"s":"BNBBTC","U":170,"u":171,"b":[],"a":[]}"#,
            4,
        );
        assert_eq!(
            kinds(&ev),
            [
                Kind::Gap {
                    why: Resync::Sequence {
                        expected: 167,
                        got: 170
                    }
                },
                Kind::Resync
            ]
        );
        assert!(a.book(InstrumentId(0)).is_none());
        let (_, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1004,"s":"BNBBTC","U":172,"u":172,"b":[],"a":[]}"#,
            5,
        );
        assert!(ev.is_empty());
    }

    #[test]
    fn a_crossing_diff_is_a_gap_and_its_levels_are_never_emitted() {
        let mut a = adapter();
        let (r, _) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1,"s":"BNBBTC","U":10,"u":11,"b":[],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        snapshot(
            &mut a,
            r#"{"lastUpdateId":10,"bids":[["1.0","1"]],"asks":[["2.0","1"]]}"#,
        );
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":2,"s":"BNBBTC","U":12,"u":12,"b":[["3.0","1"]],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        assert_eq!(
            kinds(&ev),
            [
                Kind::Gap {
                    why: Resync::Crossed
                },
                Kind::Resync
            ]
        );
    }

    #[test]
    fn a_disconnect_gaps_every_valid_book_once() {
        let mut a = adapter();
        let (r, _) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":1,"s":"BNBBTC","U":10,"u":11,"b":[],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        snapshot(
            &mut a,
            r#"{"lastUpdateId":10,"bids":[["1.0","1"]],"asks":[["2.0","1"]]}"#,
        );
        let mut ev = Vec::new();
        a.on_disconnect(42, &mut |e| ev.push(e));
        // Said for both instruments of the connection; one book gaps.
        assert_eq!(
            kinds(&ev),
            [
                Kind::Disconnected,
                Kind::Disconnected,
                Kind::Gap {
                    why: Resync::Disconnected
                }
            ]
        );
        assert_eq!(
            ev.iter().map(|e| e.instrument.0).collect::<Vec<_>>(),
            [0, 1, 0]
        );
        assert!(ev.iter().all(|e| e.recv_tsc == 42));
        ev.clear();
        a.on_disconnect(43, &mut |e| ev.push(e));
        assert_eq!(kinds(&ev), [Kind::Disconnected, Kind::Disconnected]);
        // The new connection's first diff asks for the snapshot, which
        // then bridges to it.
        let (r, ev) = feed(
            &mut a,
            r#"{"e":"depthUpdate","E":2,"s":"BNBBTC","U":20,"u":21,"b":[],"a":[]}"#,
            0,
        );
        assert_eq!(r, Ok(Outcome::Data));
        assert_eq!(kinds(&ev), [Kind::Resync]);
        let ev = snapshot(
            &mut a,
            r#"{"lastUpdateId":20,"bids":[["1.0","1"]],"asks":[["2.0","1"]]}"#,
        );
        assert!(
            matches!(
                kinds(&ev)[..],
                [
                    Kind::BookSnapshot { .. },
                    ..,
                    Kind::BookValid { update_id: 21 }
                ]
            ),
            "{:?}",
            kinds(&ev)
        );
    }
}
