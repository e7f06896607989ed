//! A recording written with `recording::Writer` and replayed, through the
//! library and through the `tickwire-feed replay` command: a Binance spot
//! book bridged from a REST snapshot fetched mid-stream, a trade, and a
//! dropped connection; the events as JSON lines and through the
//! shared-memory ring.

use std::path::{Path, PathBuf};
use std::process::Command;

use tickwire_feed::Event;
use tickwire_feed::recording::{Header, Kind as Rec, Record, Writer};
use tickwire_feed::replay::{self, Connections, Pace, Venue};
use tickwire_venues::book::Side;
use tickwire_venues::sync::Resync;
use tickwire_venues::{Aggressor, InstrumentSpec, Kind};

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("replay-{name}"))
}

const STREAM: u32 = 1;
const FETCH: u32 = 2;
/// An OKX connection recorded by the same feed thread.
const OKX: u32 = 3;

/// The session: three diffs around a snapshot fetched after the second
/// (the first is older than the snapshot, the second bridges it), a trade,
/// then the stream drops.
fn write_session(base: &Path, max_file_bytes: u64) {
    write_session_with(base, max_file_bytes, false);
}

/// The session, and with `okx` an OKX connection's records between its
/// records: it opens, sends a trade, drops, and (reconnected without a new
/// `Opened`, as older recordings do) sends another.
fn write_session_with(base: &Path, max_file_bytes: u64, okx: bool) {
    let mut w = Writer::create(
        base,
        max_file_bytes,
        Header {
            created_unix_ns: 1,
            ticks_per_second: 1e9,
        },
    )
    .unwrap();
    let mut t = 0;
    let mut put = |kind, conn, payload: &str| {
        t += 1000;
        w.write(&Record {
            kind,
            conn,
            tsc: t,
            wall_ns: t,
            binary: false,
            payload: payload.as_bytes(),
        })
        .unwrap();
    };
    let okx_trade = r#"{"arg":{"channel":"trades","instId":"BTC-USDT"},"data":[{"instId":"BTC-USDT","tradeId":"1","px":"100.5","sz":"0.1","side":"buy","ts":"1"}]}"#;
    put(Rec::Opened, STREAM, "wss://stream.binance.com:9443/ws");
    if okx {
        put(Rec::Opened, OKX, "wss://ws.okx.com:8443/ws/v5/public");
        put(Rec::Received, OKX, okx_trade);
    }
    put(
        Rec::Sent,
        STREAM,
        r#"{"method":"SUBSCRIBE","params":["btcusdt@depth@100ms","btcusdt@trade"],"id":1}"#,
    );
    put(Rec::Received, STREAM, r#"{"result":null,"id":1}"#);
    put(
        Rec::Received,
        STREAM,
        r#"{"e":"depthUpdate","E":1,"s":"BTCUSDT","U":95,"u":100,"b":[["100.00","1.0"]],"a":[]}"#,
    );
    put(
        Rec::Received,
        STREAM,
        r#"{"e":"depthUpdate","E":2,"s":"BTCUSDT","U":101,"u":105,"b":[["99.00","0"]],"a":[["101.00","2.5"]]}"#,
    );
    put(
        Rec::Opened,
        FETCH,
        "https://api.binance.com/api/v3/depth?symbol=BTCUSDT&limit=5000",
    );
    put(
        Rec::Response,
        FETCH,
        r#"{"lastUpdateId":102,"bids":[["100.00","1.5"],["99.00","3.0"]],"asks":[["101.00","2.0"]]}"#,
    );
    put(Rec::Closed, FETCH, "fetched");
    if okx {
        put(Rec::Closed, OKX, "1006");
        put(Rec::Received, OKX, okx_trade);
    }
    put(
        Rec::Received,
        STREAM,
        r#"{"e":"depthUpdate","E":3,"s":"BTCUSDT","U":106,"u":110,"b":[["100.50","0.7"]],"a":[]}"#,
    );
    put(
        Rec::Received,
        STREAM,
        r#"{"e":"trade","E":4,"s":"BTCUSDT","t":7,"p":"100.50","q":"0.10","T":4,"m":true,"M":true}"#,
    );
    put(Rec::Received, STREAM, "not json");
    put(Rec::Closed, STREAM, "1006");
    w.finish().unwrap();
}

fn instruments() -> Vec<InstrumentSpec> {
    vec![InstrumentSpec::new("BTCUSDT", 2, 8, 100)]
}

#[test]
fn a_recorded_session_replays_into_a_bridged_book_and_its_events() {
    let dir = temp_dir("lib");
    let base = dir.join("session");
    // A small limit: the session spans several rotated files.
    write_session(&base, 400);
    let files = replay::files_for(&base);
    assert!(files.len() > 2, "{files:?}");
    let mut events: Vec<Event> = Vec::new();
    let stats = replay::replay(
        &files,
        Venue::BinanceSpot,
        &instruments(),
        &Connections::OfVenue,
        Pace::Max,
        |e| events.push(e),
    )
    .unwrap();
    assert_eq!(
        (
            stats.records,
            stats.messages,
            stats.responses,
            stats.decode_errors
        ),
        (12, 6, 1, 1)
    );
    assert_eq!(stats.events, events.len() as u64);
    let kinds: Vec<Kind> = events.iter().map(|e| e.kind).collect();
    // Valid once, at the bridging diff's last id, and never a gap until
    // the stream drops.
    let valid: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| matches!(k, Kind::BookValid { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(valid.len(), 1, "{kinds:?}");
    assert_eq!(kinds[valid[0]], Kind::BookValid { update_id: 105 });
    // The book as announced: the snapshot with the bridging diff applied
    // (99.00 removed, the ask at 2.5), then the next diff as a delta.
    let Kind::BookSnapshot { bids, asks, .. } = kinds[valid[0] - 3] else {
        panic!("{kinds:?}")
    };
    assert_eq!((bids, asks), (1, 1));
    assert!(kinds.contains(&Kind::BookDelta {
        side: Side::Bid,
        price: 10_050,
        size: 70_000_000,
        update_id: 110,
        last: true,
    }));
    assert!(kinds.contains(&Kind::Trade {
        price: 10_050,
        size: 10_000_000,
        aggressor: Aggressor::Sell,
        trade_id: 7,
    }));
    // The stream drops at the end: the snapshot is asked for again only
    // when a new stream's first diff comes, and none does.
    assert_eq!(
        kinds[kinds.len() - 2..],
        [
            Kind::Disconnected,
            Kind::Gap {
                why: Resync::Disconnected
            }
        ]
    );
    // The fetch's connection closing is not a drop: one `Disconnected`.
    assert_eq!(
        kinds.iter().filter(|k| **k == Kind::Disconnected).count(),
        1
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_replay_command_writes_every_event_as_json_lines() {
    let dir = temp_dir("cli");
    let base = dir.join("session");
    write_session(&base, u64::MAX);
    let out = dir.join("events.jsonl");
    let ring = dir.join("ring");
    let run = Command::new(env!("CARGO_BIN_EXE_tickwire-feed"))
        .args([
            "replay",
            "--venue",
            "binance-spot",
            "--instrument",
            "BTCUSDT:2:8:100",
            "--jsonl",
        ])
        .arg(&out)
        .arg("--shm")
        .arg(&ring)
        .args(["--shm-capacity", "64"])
        .arg(&base)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("6 messages, 1 REST responses"), "{stderr}");
    let mut expected = 0;
    replay::replay(
        &replay::files_for(&base),
        Venue::BinanceSpot,
        &instruments(),
        &Connections::OfVenue,
        Pace::Max,
        |_| expected += 1,
    )
    .unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The header, then a line an event but the snapshot's levels (in the
    // snapshot's line).
    assert_eq!(lines[0]["type"], "header");
    let levels: usize = lines
        .iter()
        .filter(|l| l["type"] == "book_snapshot")
        .map(|l| l["bids"].as_array().unwrap().len() + l["asks"].as_array().unwrap().len())
        .sum();
    assert_eq!(lines.len(), 1 + expected - levels);
    // Receive times are the recording's wall clock (Unix ns).
    assert!(
        lines[1..]
            .iter()
            .all(|l| l["recv_ns"].as_u64().is_some_and(|t| t > 0))
    );
    let trade = lines.iter().find(|l| l["type"] == "trade").unwrap();
    assert_eq!(
        (
            &trade["venue"],
            &trade["symbol"],
            &trade["price"],
            &trade["size"]
        ),
        (
            &"binance-spot".into(),
            &"BTCUSDT".into(),
            &"100.50".into(),
            &"0.10000000".into()
        )
    );
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "book_valid").count(),
        1
    );
    // The same events went to the shared-memory ring, in order.
    let mut reader = tickwire_feed::shm::Reader::open(&ring).unwrap();
    reader.rewind();
    let table = reader.instruments();
    assert_eq!(table.len(), 1);
    assert_eq!(
        (
            table[0].venue.as_str(),
            table[0].symbol.as_str(),
            table[0].price_scale,
            table[0].size_scale
        ),
        ("binance-spot", "BTCUSDT", 2, 8)
    );
    let name = tickwire_feed::sink::Instrument {
        venue: "binance-spot".into(),
        symbol: "BTCUSDT".into(),
        price_scale: 2,
        size_scale: 8,
    };
    let mut encoder = tickwire_feed::sink::Encoder::new(vec![name]);
    let mut from_ring = Vec::new();
    tickwire_feed::sink::Encoder::header(&mut from_ring);
    let mut n = 0;
    while let tickwire_feed::shm::Read::Event(e) = reader.read() {
        // The ring carries the TSC stamp; the replay's lines the wall
        // time the write_session recorded with it (equal there).
        encoder.encode(&e, e.recv_tsc, &mut from_ring);
        n += 1;
    }
    assert_eq!(n, expected);
    assert_eq!(String::from_utf8(from_ring).unwrap(), text);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_replay_mostly_undecodable_fails_with_a_hint() {
    let dir = temp_dir("undecodable");
    let base = dir.join("session");
    write_session(&base, u64::MAX);
    // Whole numbers cannot hold the recording's prices and sizes.
    let run = Command::new(env!("CARGO_BIN_EXE_tickwire-feed"))
        .args([
            "replay",
            "--venue",
            "binance-spot",
            "--instrument",
            "BTCUSDT:0:0:100",
        ])
        .arg(&base)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("could not be decoded: is --venue"),
        "{stderr}"
    );
    assert!(stderr.contains("PRICE_DECIMALS"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_name_the_problem_and_exit_2() {
    let feed = env!("CARGO_BIN_EXE_tickwire-feed");
    let run = |args: &[&str]| Command::new(feed).args(args).output().unwrap();
    let out = run(&[
        "replay",
        "--venue",
        "binance",
        "--instrument",
        "BTCUSDT:2:8",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("binance-spot"));
    let out = run(&[
        "replay",
        "--venue",
        "okx",
        "--instrument",
        "BTC-USDT:2:99",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("size decimals must be 0 to 18, not `99`")
    );
    let out = run(&[
        "replay",
        "--venue",
        "okx",
        "--instrument",
        "BTC-USDT:1:8",
        "/nonexistent/rec",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such recording"));
}

#[test]
fn another_venues_connections_in_the_recording_are_left_out() {
    let dir = temp_dir("mixed");
    let alone = dir.join("alone");
    let mixed = dir.join("mixed");
    write_session(&alone, 1 << 20);
    write_session_with(&mixed, 1 << 20, true);
    let run = |base: &Path, connections: &Connections| {
        let mut events = Vec::new();
        let stats = replay::replay(
            &replay::files_for(base),
            Venue::BinanceSpot,
            &instruments(),
            connections,
            Pace::Max,
            |e| events.push(e),
        )
        .unwrap();
        (stats, events)
    };
    let (alone_stats, alone_events) = run(&alone, &Connections::OfVenue);
    let (stats, events) = run(&mixed, &Connections::OfVenue);
    // The OKX trade is not fed to Binance's decoder, and OKX dropping does
    // not drop the Binance book: the same events (their receive stamps
    // aside: the OKX records took stamps in between).
    let kinds = |events: &[Event]| -> Vec<(u32, u64, Kind)> {
        events
            .iter()
            .map(|e| (e.instrument.0, e.exchange_ns, e.kind))
            .collect()
    };
    assert_eq!(kinds(&events), kinds(&alone_events));
    assert_eq!(stats.skipped_connections, 1);
    assert_eq!(
        (stats.messages, stats.decode_errors, stats.responses),
        (
            alone_stats.messages,
            alone_stats.decode_errors,
            alone_stats.responses
        )
    );
    // Chosen by endpoint: the Binance stream alone (no snapshot: the
    // fetch's endpoint does not match), so the book never becomes valid.
    let (stats, events) = run(&mixed, &Connections::Matching("stream.binance".into()));
    assert_eq!(stats.skipped_connections, 2);
    assert_eq!(stats.responses, 0);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, Kind::BookValid { .. }))
    );
    assert!(events.iter().any(|e| matches!(e.kind, Kind::Trade { .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}
