//! Two lines carrying the same Binance stream into one adapter: every
//! trade, quote and book diff comes twice and is emitted once, the first
//! arrival winning; what has no id comes from the leading line alone; and
//! the lead of the first copy over the second is measured.

use tickwire_venues::binance::{Adapter, Market};
use tickwire_venues::book::{Limit, Side};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{Event, InstrumentId, InstrumentSpec, Kind, Lead, Line, Lines, VenueAdapter};

fn feed(a: &mut dyn VenueAdapter, line: Line, text: &str, tsc: u64) -> Vec<Event> {
    let mut buf = text.as_bytes().to_vec();
    buf.resize(text.len() + INPUT_PADDING, b' ');
    let mut out = Vec::new();
    a.set_line(line);
    a.on_message(&mut buf, text.len(), tsc, &mut |e| out.push(e))
        .unwrap();
    out
}

fn trade(id: u64) -> String {
    format!(r#"{{"e":"trade","E":1,"s":"BTCUSDT","t":{id},"p":"100.0","q":"1.0","T":1,"m":true}}"#)
}

fn quote(id: u64) -> String {
    format!(r#"{{"u":{id},"s":"BTCUSDT","b":"100.0","B":"1.0","a":"101.0","A":"1.0"}}"#)
}

fn depth(first: u64, last: u64, bid: &str) -> String {
    format!(
        r#"{{"e":"depthUpdate","E":1,"s":"BTCUSDT","U":{first},"u":{last},"b":[["{bid}","1.0"]],"a":[]}}"#
    )
}

fn adapter() -> Adapter {
    let mut a = Adapter::new(Market::Spot, &[InstrumentSpec::new("BTCUSDT", 1, 1, 10)]);
    a.lines_changed(&[0], [true, false], 0, &mut |_| {});
    a
}

#[test]
fn trades_and_quotes_that_come_twice_are_emitted_once() {
    let mut a = adapter();
    // One line: everything goes out, as ever.
    assert_eq!(feed(&mut a, Line::Primary, &trade(1), 10).len(), 1);
    assert_eq!(
        feed(&mut a, Line::Primary, &trade(1), 11).len(),
        1,
        "one line never drops"
    );
    a.lines_changed(&[0], [true, true], 12, &mut |_| {});
    assert_eq!(feed(&mut a, Line::Standby, &trade(2), 100).len(), 1);
    assert!(feed(&mut a, Line::Primary, &trade(2), 130).is_empty());
    assert_eq!(
        a.take_lead(),
        Some(Lead {
            winner: Line::Standby,
            ticks: 30
        })
    );
    assert_eq!(a.take_lead(), None);
    assert_eq!(feed(&mut a, Line::Primary, &quote(7), 140).len(), 1);
    assert!(feed(&mut a, Line::Standby, &quote(7), 150).is_empty());
    assert!(
        feed(&mut a, Line::Standby, &quote(6), 150).is_empty(),
        "older than the last"
    );
    assert_eq!(feed(&mut a, Line::Standby, &quote(8), 160).len(), 1);
    // Line 0 brings a trade first and goes down: line 1's copy, still to
    // come, is a copy all the same (it used to be emitted again); what is
    // new on line 1 alone goes out.
    assert_eq!(feed(&mut a, Line::Primary, &trade(3), 165).len(), 1);
    a.lines_changed(&[0], [false, true], 170, &mut |_| {});
    assert!(
        feed(&mut a, Line::Standby, &trade(3), 180).is_empty(),
        "a copy"
    );
    assert_eq!(feed(&mut a, Line::Standby, &trade(4), 190).len(), 1);
    assert_eq!(feed(&mut a, Line::Standby, &quote(9), 195).len(), 1);
    // The copies over, line 1 alone is one line again: ids that start
    // lower (a venue's restarted book service) are new.
    assert_eq!(feed(&mut a, Line::Standby, &quote(1), 200).len(), 1);
    assert_eq!(feed(&mut a, Line::Standby, &trade(1), 210).len(), 1);
}

#[test]
fn book_diffs_that_come_twice_are_applied_once() {
    let mut a = adapter();
    let ev = feed(&mut a, Line::Primary, &depth(10, 10, "99.0"), 1);
    assert!(matches!(ev[0].kind, Kind::Resync));
    let body = r#"{"lastUpdateId":9,"bids":[["100.0","1.0"]],"asks":[["101.0","1.0"]]}"#;
    let mut buf = body.as_bytes().to_vec();
    buf.resize(body.len() + INPUT_PADDING, b' ');
    let mut ev = Vec::new();
    a.on_snapshot_at(
        InstrumentId(0),
        Limit::Whole,
        &mut buf,
        body.len(),
        2,
        &mut |e| ev.push(e),
    )
    .unwrap();
    assert!(matches!(
        ev.last().unwrap().kind,
        Kind::BookValid { update_id: 10 }
    ));
    a.lines_changed(&[0], [true, true], 3, &mut |_| {});
    assert!(
        !a.line_ready(&[0], Line::Standby),
        "line 1 has brought nothing yet"
    );
    let ev = feed(&mut a, Line::Standby, &depth(11, 12, "98.0"), 50);
    assert!(
        matches!(ev[0].kind, Kind::BookDelta { update_id: 12, .. }),
        "{ev:?}"
    );
    assert!(feed(&mut a, Line::Primary, &depth(11, 12, "98.0"), 80).is_empty());
    assert_eq!(
        a.take_lead(),
        Some(Lead {
            winner: Line::Standby,
            ticks: 30
        })
    );
    assert!(a.line_ready(&[0], Line::Primary) && a.line_ready(&[0], Line::Standby));
    // The leader goes down: no gap, line 1 carries on.
    let mut ev = Vec::new();
    a.lines_changed(&[0], [false, true], 90, &mut |e| ev.push(e));
    assert!(ev.is_empty(), "{ev:?}");
    let ev = feed(&mut a, Line::Standby, &depth(13, 13, "97.0"), 100);
    assert!(
        matches!(ev[0].kind, Kind::BookDelta { update_id: 13, .. }),
        "{ev:?}"
    );
    assert_eq!(a.book(InstrumentId(0)).unwrap().levels(Side::Bid).len(), 4);
}

/// A message's trades are each compared with the highest id emitted
/// before the message: a batch out of id order loses none of them.
#[test]
fn a_batch_out_of_id_order_is_emitted_whole() {
    let mut a =
        tickwire_venues::kraken::v2::Adapter::new(&[InstrumentSpec::new("BTC/USD", 1, 8, 0)]);
    a.lines_changed(&[0], [true, true], 0, &mut |_| {});
    let trade = |id: u64| {
        format!(
            r#"{{"symbol":"BTC/USD","side":"buy","price":45283.5,"qty":0.00027625,"ord_type":"limit","trade_id":{id},"timestamp":"2023-10-06T17:35:55.440295Z"}}"#
        )
    };
    let batch = |ids: &[u64]| {
        let data: Vec<String> = ids.iter().map(|&id| trade(id)).collect();
        format!(
            r#"{{"channel":"trade","type":"update","data":[{}]}}"#,
            data.join(",")
        )
    };
    let ids = |events: Vec<Event>| -> Vec<u64> {
        events
            .iter()
            .filter_map(|e| match e.kind {
                Kind::Trade { trade_id, .. } => Some(trade_id),
                _ => None,
            })
            .collect()
    };
    assert_eq!(ids(feed(&mut a, Line::Primary, &batch(&[5, 4]), 1)), [5, 4]);
    // Line 1's copy of the batch: nothing new.
    assert!(ids(feed(&mut a, Line::Standby, &batch(&[5, 4]), 2)).is_empty());
    assert_eq!(ids(feed(&mut a, Line::Standby, &batch(&[7, 6]), 3)), [7, 6]);
}

/// A trade's two copies are paired even with a book diff between them.
#[test]
fn a_diff_between_a_trades_copies_does_not_hide_its_lead() {
    let mut a = adapter();
    feed(&mut a, Line::Primary, &depth(10, 10, "99.0"), 1);
    let body = r#"{"lastUpdateId":9,"bids":[["100.0","1.0"]],"asks":[["101.0","1.0"]]}"#;
    let mut buf = body.as_bytes().to_vec();
    buf.resize(body.len() + INPUT_PADDING, b' ');
    a.on_snapshot_at(
        InstrumentId(0),
        Limit::Whole,
        &mut buf,
        body.len(),
        2,
        &mut |_| {},
    )
    .unwrap();
    a.lines_changed(&[0], [true, true], 3, &mut |_| {});
    feed(&mut a, Line::Standby, &trade(5), 100);
    feed(&mut a, Line::Standby, &depth(11, 11, "98.0"), 110);
    feed(&mut a, Line::Primary, &trade(5), 140);
    assert_eq!(
        a.take_lead(),
        Some(Lead {
            winner: Line::Standby,
            ticks: 40
        })
    );
}

/// A connection that goes down says so for every instrument it carried,
/// not only the first (a consumer reading one symbol's events must see
/// it), whether its lines close or it drops.
#[test]
fn a_lost_connection_is_said_for_each_instrument_it_carried() {
    let specs = [
        InstrumentSpec::new("BTCUSDT", 1, 1, 10),
        InstrumentSpec::new("ETHUSDT", 1, 1, 10),
        InstrumentSpec::new("SOLUSDT", 1, 1, 0),
    ];
    let disconnected = |events: &[Event]| -> Vec<u32> {
        events
            .iter()
            .filter(|e| e.kind == Kind::Disconnected)
            .map(|e| e.instrument.0)
            .collect()
    };
    let mut a = Adapter::new(Market::Spot, &specs);
    a.lines_changed(&[0, 1, 2], [true, false], 0, &mut |_| {});
    let mut out = Vec::new();
    a.lines_changed(&[1, 2], [false, false], 5, &mut |e| out.push(e));
    assert_eq!(disconnected(&out), [1, 2]);
    let mut out = Vec::new();
    a.on_disconnect(6, &mut |e| out.push(e));
    assert_eq!(disconnected(&out), [0, 1, 2]);
}
