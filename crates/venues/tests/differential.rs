//! Differential tests against serde_json on every recorded message in
//! `../shared/samples` (skipped, with a line saying so, when absent): what
//! the venue decoders read (through simd-json's tape or the one-pass
//! scanner) is what a reference JSON parser reads, field by field.

use crate::common;

use std::path::Path;

use serde_json::Value as J;
use tickwire_venues::json::{INPUT_PADDING, JsonParser};
use tickwire_venues::{binance, bybit, okx};

/// `obj[key]` as a string, or the text of a number.
fn s(v: &J, key: &str) -> String {
    match &v[key] {
        J::String(x) => x.clone(),
        J::Number(n) => n.to_string(),
        other => panic!("{key}: {other}"),
    }
}

fn u(v: &J, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key}: {}", v[key]))
}

/// `[[price, size, ...], ...]` as pairs of strings.
fn levels(v: &J) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l[0].as_str().unwrap().to_owned(),
                l[1].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn ours(l: &tickwire_venues::json::Levels<'_, '_>) -> Vec<(String, String)> {
    l.iter()
        .map(|r| {
            let (p, q) = r.unwrap();
            (p.to_owned(), q.to_owned())
        })
        .collect()
}

fn lines(path: &Path) -> Vec<Vec<u8>> {
    common::recorded(path)
}

fn padded(line: &[u8]) -> Vec<u8> {
    let mut buf = line.to_vec();
    buf.resize(line.len() + INPUT_PADDING, 0);
    buf
}

#[test]
fn binance_reads_what_serde_json_reads() {
    let Some(dir) = common::samples("binance") else {
        return;
    };
    let files = [
        "spot/original/hftbacktest_spot_btcusdt_20240808.gz",
        "usdm/original/hftbacktest_usdm_btcusdt_20240808.gz",
        "coinm/hftbacktest_cm_btcusd_perp_20240808.first15000.jsonl",
        "spot/cryptofeed_BINANCE.ws.1.0.jsonl",
        "usdm/cryptofeed_BINANCE_FUTURES.ws.1.0.jsonl",
        "coinm/cryptofeed_BINANCE_DELIVERY.ws.1.0.jsonl",
    ];
    let mut decoder = binance::Decoder::new();
    let mut compared = 0;
    for file in files {
        for (n, line) in lines(&dir.join(file)).iter().enumerate() {
            let reference: J = serde_json::from_slice(line).unwrap();
            let data = reference.get("data").unwrap_or(&reference).clone();
            let mut buf = padded(line);
            let at = format!("{file}:{}", n + 1);
            decoder.decode(&mut buf, line.len(), |m| {
                match m.unwrap_or_else(|e| panic!("{at}: {e}")) {
                    binance::Message::Trade(t) | binance::Message::AggTrade(t) => {
                        let id = if data["e"] == "trade" { "t" } else { "a" };
                        assert_eq!(
                            (
                                t.symbol.to_owned(),
                                t.id,
                                t.price.to_owned(),
                                t.qty.to_owned()
                            ),
                            (s(&data, "s"), u(&data, id), s(&data, "p"), s(&data, "q")),
                            "{at}"
                        );
                        assert_eq!(
                            (t.trade_time_ms, t.event_time_ms, t.buyer_is_maker),
                            (u(&data, "T"), u(&data, "E"), data["m"].as_bool().unwrap()),
                            "{at}"
                        );
                    }
                    binance::Message::BookTicker(q) => {
                        assert_eq!(
                            (q.symbol.to_owned(), q.update_id),
                            (s(&data, "s"), u(&data, "u")),
                            "{at}"
                        );
                        assert_eq!(
                            (q.bid.0, q.bid.1, q.ask.0, q.ask.1),
                            (
                                s(&data, "b").as_str(),
                                s(&data, "B").as_str(),
                                s(&data, "a").as_str(),
                                s(&data, "A").as_str()
                            ),
                            "{at}"
                        );
                        assert_eq!(q.event_time_ms, data["E"].as_u64(), "{at}");
                    }
                    binance::Message::Depth(d) => {
                        assert_eq!(
                            (d.symbol.to_owned(), d.first_id, d.last_id, d.event_time_ms),
                            (s(&data, "s"), u(&data, "U"), u(&data, "u"), u(&data, "E")),
                            "{at}"
                        );
                        let pu = data.get("pu").and_then(J::as_u64);
                        assert_eq!(d.prev_last_id, pu, "{at}");
                        assert_eq!(ours(&d.bids), levels(&data["b"]), "{at}");
                        assert_eq!(ours(&d.asks), levels(&data["a"]), "{at}");
                    }
                    binance::Message::Snapshot(snap) => {
                        assert_eq!(snap.last_update_id, u(&data, "lastUpdateId"), "{at}");
                        assert_eq!(ours(&snap.bids), levels(&data["bids"]), "{at}");
                        assert_eq!(ours(&snap.asks), levels(&data["asks"]), "{at}");
                    }
                    binance::Message::Control
                    | binance::Message::Error { .. }
                    | binance::Message::Other(_) => return,
                }
                compared += 1;
            });
        }
    }
    eprintln!("{compared} Binance messages compared field by field");
    assert!(compared > 100_000, "{compared}");
}

#[test]
fn okx_and_bybit_read_what_serde_json_reads() {
    let mut compared = 0;
    let mut parser = JsonParser::default();
    let mut okx_decoder = okx::Decoder::new();
    if let Some(dir) = common::samples("okx") {
        for (n, line) in lines(&dir.join("cryptofeed_OKX.ws.1.0.jsonl"))
            .iter()
            .enumerate()
        {
            let reference: J = serde_json::from_slice(line).unwrap();
            let mut buf = padded(line);
            let at = format!("okx:{}", n + 1);
            // The decoder the adapter uses: books in OKX's exact layout
            // (`scan_fixed`), the rest through simd-json.
            okx_decoder.decode(&mut buf, line.len(), |m| match m.unwrap() {
                okx::Message::Book(b) => {
                    let d = &reference["data"][0];
                    assert_eq!(b.inst_id, reference["arg"]["instId"], "{at}");
                    assert_eq!(b.channel, reference["arg"]["channel"], "{at}");
                    let action = match b.action {
                        okx::Action::Snapshot => "snapshot",
                        okx::Action::Update => "update",
                    };
                    assert_eq!(action, reference["action"], "{at}");
                    assert_eq!(b.prev_seq_id, d["prevSeqId"].as_i64(), "{at}");
                    assert_eq!(ours(&b.bids), levels(&d["bids"]), "{at}");
                    assert_eq!(ours(&b.asks), levels(&d["asks"]), "{at}");
                    assert_eq!(b.checksum, d["checksum"].as_i64(), "{at}");
                    assert_eq!(b.seq_id, d["seqId"].as_i64(), "{at}");
                    assert_eq!(b.ts_ms.to_string(), s(d, "ts"), "{at}");
                    compared += 1;
                }
                okx::Message::Trades(t) => {
                    let all: Vec<_> = t.iter().map(Result::unwrap).collect();
                    let want = reference["data"].as_array().unwrap();
                    assert_eq!(all.len(), want.len(), "{at}");
                    for (t, w) in all.iter().zip(want) {
                        assert_eq!(
                            (t.trade_id, t.px, t.sz, t.side),
                            (
                                s(w, "tradeId").as_str(),
                                s(w, "px").as_str(),
                                s(w, "sz").as_str(),
                                s(w, "side").as_str()
                            ),
                            "{at}"
                        );
                    }
                    compared += 1;
                }
                _ => {}
            });
        }
    }
    if let Some(dir) = common::samples("bybit") {
        let file = "nautilus_2024-12-01_XRPUSDT_ob500.data.jsonl";
        for (n, line) in lines(&dir.join(file)).iter().enumerate() {
            let reference: J = serde_json::from_slice(line).unwrap();
            let mut buf = padded(line);
            let at = format!("bybit:{}", n + 1);
            parser
                .parse(&mut buf, line.len(), |doc| {
                    let bybit::Message::Book(b) = bybit::decode(doc).unwrap() else {
                        panic!("{at}")
                    };
                    let d = &reference["data"];
                    assert_eq!(b.symbol, d["s"], "{at}");
                    assert_eq!(b.update_id, u(d, "u"), "{at}");
                    assert_eq!(b.ts_ms, u(&reference, "ts"), "{at}");
                    assert_eq!(ours(&b.bids), levels(&d["b"]), "{at}");
                    assert_eq!(ours(&b.asks), levels(&d["a"]), "{at}");
                    compared += 1;
                })
                .unwrap();
        }
    }
    eprintln!("{compared} OKX and Bybit messages compared field by field");
    if compared > 0 {
        assert!(compared >= 300, "{compared}");
    }
}

/// Deribit sends prices as JSON numbers; the scanner keeps their text. Its
/// text parsed as a float must be the float serde_json reads, and every
/// other field the same.
#[test]
fn deribit_reads_what_serde_json_reads() {
    use tickwire_venues::book::Side;
    use tickwire_venues::deribit;
    let Some(dir) = common::samples("deribit") else {
        return;
    };
    let mut compared = 0;
    for (n, line) in lines(&dir.join("cryptofeed_DERIBIT.ws.1.0.jsonl"))
        .iter()
        .enumerate()
    {
        let at = format!("deribit:{}", n + 1);
        let reference: J = serde_json::from_slice(line).unwrap();
        let text = std::str::from_utf8(line).unwrap();
        let deribit::Message::Book(b) = deribit::decode(text).unwrap() else {
            continue;
        };
        let d = &reference["params"]["data"];
        assert_eq!(b.instrument, d["instrument_name"], "{at}");
        assert_eq!(b.change_id, u(d, "change_id"), "{at}");
        assert_eq!(b.prev_change_id, d["prev_change_id"].as_u64(), "{at}");
        assert_eq!(b.timestamp_ms, u(d, "timestamp"), "{at}");
        for (side, key) in [(Side::Bid, "bids"), (Side::Ask, "asks")] {
            let ours: Vec<_> = b.levels(side).map(Result::unwrap).collect();
            let theirs = d[key].as_array().unwrap();
            assert_eq!(ours.len(), theirs.len(), "{at}");
            for (o, t) in ours.iter().zip(theirs) {
                assert_eq!(o.action, t[0], "{at}");
                assert_eq!(
                    o.price.parse::<f64>().unwrap(),
                    t[1].as_f64().unwrap(),
                    "{at}"
                );
                assert_eq!(
                    o.amount.parse::<f64>().unwrap(),
                    t[2].as_f64().unwrap(),
                    "{at}"
                );
            }
        }
        compared += 1;
    }
    eprintln!("{compared} Deribit book messages compared field by field");
    assert_eq!(compared, 46);
}
