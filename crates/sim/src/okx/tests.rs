use rand::SeedableRng;
use rand::rngs::StdRng;
use tickwire_venues::Venue;

use super::*;
use crate::VenueFault;
use crate::market::{Digits, decimal};

pub(super) fn market() -> Market {
    crate::testutil::market(Venue::Okx, 1)
}

pub(super) fn client(okx: &Okx, m: &Market) -> Client {
    match okx.open("/ws/v5/public?brokerId=9999", m) {
        Ok(c) => c,
        Err(r) => panic!("refused: {}", r.status),
    }
}

/// What the venue answers to `text`, each message as a string.
pub(super) fn ask(okx: &Okx, c: &mut Client, m: &mut Market, text: &str) -> Vec<String> {
    let mut out = Out::default();
    okx.on_text(c, text, m, &mut out);
    out.items.into_iter().map(|(t, _)| t.into_text()).collect()
}

pub(super) fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn only_the_public_path_is_served() {
    let (okx, m) = (Okx::new(), market());
    for path in ["/ws/v5/business", "/ws/v5/private", "/ws", "/"] {
        assert_eq!(
            okx.open(path, &m).err().map(|r| r.status),
            Some(404),
            "{path}"
        );
    }
    // Each connection has a connId of its own, 8 hex digits.
    let (a, b) = (client(&okx, &m), client(&okx, &m));
    assert_ne!(a.conn_id, b.conn_id);
    for id in [&a.conn_id, &b.conn_id] {
        assert!(
            id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
    }
}

/// One acknowledgement per argument, echoing `id` when sent, each
/// before its argument's data (D-WS "Subscribe", D-BOOK); the `books`
/// snapshot as documented (with the real checksums OKX sent before
/// June 2026).
#[test]
fn subscriptions_are_answered_like_okx() {
    let (okx, mut m) = (Okx::with_checksums(Checksums::Crc32), market());
    let mut c = client(&okx, &m);
    let conn = c.conn_id.clone();
    let replies = ask(
        &okx,
        &mut c,
        &mut m,
        r#"{"id":"1512","op":"subscribe","args":[{"channel":"trades","instId":"BTC-USDT"},{"channel":"books","instId":"BTC-USDT"},{"channel":"bbo-tbt","instId":"ETH-USDT"}]}"#,
    );
    assert_eq!(replies.len(), 4, "{replies:?}");
    assert_eq!(
        replies[0],
        format!(
            r#"{{"id":"1512","event":"subscribe","arg":{{"channel":"trades","instId":"BTC-USDT"}},"connId":"{conn}"}}"#
        )
    );
    assert!(replies[1].contains(r#""arg":{"channel":"books","instId":"BTC-USDT"}"#));
    // The snapshot: 200 levels a side (the book is shallower than 400),
    // best first, prevSeqId -1, seqId the book's update id, a real
    // checksum.
    let snapshot = json(&replies[2]);
    assert!(
            replies[2].starts_with(
                r#"{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"snapshot","data":[{"asks":[["60000.01","#
            ),
            "{}",
            &replies[2][..200]
        );
    let data = &snapshot["data"][0];
    assert_eq!(data["prevSeqId"], -1);
    assert_eq!(data["seqId"], m.books[0].update_id);
    assert_eq!(data["asks"].as_array().map(Vec::len), Some(200));
    assert_eq!(data["bids"][0][0], "59999.99");
    assert_eq!(data["bids"][0][2], "0");
    assert!(data["ts"].is_string() && data["checksum"].is_i64());
    let (bids, asks) = m.books[0].levels(25);
    assert_eq!(
        data["checksum"].as_i64(),
        Some(i64::from(window::checksum(&bids, &asks, &m.instruments[0])))
    );
    assert!(replies[3].contains(r#""arg":{"channel":"bbo-tbt","instId":"ETH-USDT"}"#));
    assert_eq!(
        c.subs,
        [
            (0, Channel::Trades),
            (0, Channel::Books),
            (1, Channel::BboTbt)
        ]
    );
    // Subscribed again: acknowledged again, nothing sent twice.
    let replies = ask(
        &okx,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":[{"channel":"books","instId":"BTC-USDT"}]}"#,
    );
    assert_eq!(
        replies,
        [format!(
            r#"{{"event":"subscribe","arg":{{"channel":"books","instId":"BTC-USDT"}},"connId":"{conn}"}}"#
        )]
    );
    assert_eq!(c.books.len(), 1);
    // Unsubscribed: acknowledged, and its data stops.
    let replies = ask(
        &okx,
        &mut c,
        &mut m,
        r#"{"op":"unsubscribe","args":[{"channel":"books","instId":"BTC-USDT"},{"channel":"trades","instId":"BTC-USDT"}]}"#,
    );
    assert_eq!(replies.len(), 2);
    assert!(replies[0].starts_with(r#"{"event":"unsubscribe","arg":{"channel":"books""#));
    assert!(c.books.is_empty() && c.subs == [(1, Channel::BboTbt)]);
    let mut rng = StdRng::seed_from_u64(3);
    let mut step = Step::default();
    let mut out = Out::default();
    for _ in 0..20 {
        m.step(0, &mut rng, true, &mut step);
        okx.on_step(&mut c, &step, &m, &mut out);
    }
    assert!(out.items.is_empty());
}

/// The error replies: no `arg`, the instrument named in `msg` only
/// (research note, section 2), `id` echoed.
#[test]
fn bad_requests_get_okx_errors() {
    let (okx, mut m) = (Okx::new(), market());
    let mut c = client(&okx, &m);
    let conn = c.conn_id.clone();
    let mut one = |text: &str| {
        let replies = ask(&okx, &mut c, &mut m, text);
        assert_eq!(replies.len(), 1, "{replies:?}");
        replies.into_iter().next().unwrap_or_default()
    };
    assert_eq!(
        one(r#"{"op":"subscribe","args":[{"channel":"books","instId":"BTC-USDX"}]}"#),
        format!(
            r#"{{"event":"error","msg":"Wrong URL or channel:books,instId:BTC-USDX doesn't exist. Please use the correct URL, channel and parameters referring to API document.","code":"60018","connId":"{conn}"}}"#
        )
    );
    // A channel not served on /public (candles live on /business).
    let e = json(&one(
        r#"{"id":"7","op":"subscribe","args":[{"channel":"candle1m","instId":"BTC-USDT"}]}"#,
    ));
    assert_eq!(
        (&e["id"], &e["event"], &e["code"]),
        (&json(r#""7""#), &json(r#""error""#), &json(r#""60018""#))
    );
    assert!(
        e["msg"]
            .as_str()
            .is_some_and(|m| m.contains("channel:candle1m,instId:BTC-USDT "))
    );
    assert!(e.get("arg").is_none());
    // The documented malformed request: 60012 with the request as sent.
    let text =
        r#"{"op": "subscribe", "argss":[{ "channel" : "books", "instId" : "BTC-USD-191227"}]}"#;
    let e = json(&one(text));
    assert_eq!(e["code"], "60012");
    assert_eq!(
        e["msg"].as_str(),
        Some(format!("Invalid request: {text}").as_str())
    );
    assert_eq!(json(&one("not json"))["code"], "60012");
    assert_eq!(
        json(&one(r#"{"op":"subscribe","args":[]}"#))["code"],
        "60012"
    );
    assert_eq!(
        json(&one(r#"{"id":"has space","op":"subscribe","args":[]}"#))["code"],
        "60012"
    );
    assert_eq!(json(&one(r#"{"op":"login","args":[]}"#))["code"], "60019");
    assert_eq!(
        json(&one(r#"{"op":"subscribe","args":[{"channel":"books"}]}"#))["code"],
        "60013"
    );
    // The text ping.
    assert_eq!(one("ping"), "pong");
    // An armed refusal: the book's next subscription gets 60018 naming
    // it, once; other channels are not refused.
    m.arm(1, VenueFault::RejectSubscription);
    let replies = ask(
        &okx,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":[{"channel":"trades","instId":"ETH-USDT"},{"channel":"books","instId":"ETH-USDT"}]}"#,
    );
    assert_eq!(replies.len(), 2);
    assert!(replies[0].contains(r#""event":"subscribe""#));
    assert!(replies[1].contains(r#""code":"60018""#) && replies[1].contains("instId:ETH-USDT "));
    assert!(c.books.is_empty());
    let replies = ask(
        &okx,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":[{"channel":"books","instId":"ETH-USDT"}]}"#,
    );
    assert_eq!(replies.len(), 2, "acknowledged, then the snapshot");
}

/// Updates chain by `seqId` (the step's last update id); a lost one
/// still moves the chain; with real checksums, each update carries
/// the window's, and a bad checksum is not 0 and not the real one;
/// trades and bbo-tbt as documented.
#[test]
fn steps_read_as_okx_pushes() {
    let (okx, mut m) = (Okx::with_checksums(Checksums::Crc32), market());
    let mut c = client(&okx, &m);
    ask(
        &okx,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":[{"channel":"bbo-tbt","instId":"BTC-USDT"},{"channel":"books","instId":"BTC-USDT"},{"channel":"trades","instId":"BTC-USDT"}]}"#,
    );
    let mut rng = StdRng::seed_from_u64(5);
    let mut step = Step::default();
    let mut last = m.books[0].update_id;
    let (mut trades, mut quotes) = (0, 0);
    for k in 0..300 {
        m.step(0, &mut rng, k % 2 == 0, &mut step);
        step.faults.drop_book = k == 100;
        step.faults.bad_checksum = k == 200;
        let mut out = Out::default();
        okx.on_step(&mut c, &step, &m, &mut out);
        for (frame, key) in &out.items {
            let text = frame.text();
            let v = json(text);
            match v["arg"]["channel"].as_str() {
                Some("trades") => {
                    let t = step.trade.expect("a trade");
                    let d = &v["data"][0];
                    assert_eq!(d["tradeId"], t.id.to_string());
                    assert_eq!(d["side"], if t.buyer_aggressor { "buy" } else { "sell" });
                    assert_eq!(
                        (&d["count"], &d["source"]),
                        (&json(r#""1""#), &json(r#""0""#))
                    );
                    assert_eq!(*key, Some((0, StreamKind::Trade, t.id)));
                    trades += 1;
                }
                Some("bbo-tbt") => {
                    let ((bp, _), (ap, _)) = step.top.expect("the top changed");
                    let d = &v["data"][0];
                    let mut bid = String::new();
                    decimal(&mut bid, bp, 2, Digits::Trimmed);
                    assert_eq!(d["bids"][0][0], bid.as_str());
                    assert_eq!(d["asks"].as_array().map(Vec::len), Some(1));
                    assert!(v.get("action").is_none() && d.get("checksum").is_none());
                    assert!(ap > bp);
                    assert_eq!(d["seqId"], step.last_id);
                    assert_eq!(*key, Some((0, StreamKind::BookTicker, step.last_id)));
                    quotes += 1;
                }
                Some("books") => {
                    assert_ne!(k, 100, "the lost message was sent");
                    let d = &v["data"][0];
                    assert_eq!(v["action"], "update");
                    assert_eq!(d["seqId"], step.last_id);
                    // After the lost one, prevSeqId is the lost seqId.
                    assert_eq!(d["prevSeqId"], last);
                    let real = c.books[0].checksum;
                    assert_eq!(d["checksum"] == real, k != 200, "step {k}");
                    assert_ne!(d["checksum"], 0);
                    assert_eq!(*key, Some((0, StreamKind::Depth, step.last_id)));
                }
                other => panic!("{other:?}: {text}"),
            }
        }
        last = step.last_id;
    }
    assert!(
        trades == 150 && quotes > 10,
        "{trades} trades, {quotes} quotes"
    );
}

/// OKX closes a connection silent for 30 s with 4004; a client that
/// pings is kept. A book with nothing new for 60 s gets an empty
/// update with seqId == prevSeqId (D-BOOK).
#[test]
fn silent_clients_are_closed_and_quiet_books_kept_alive() {
    let (okx, mut m) = (Okx::new(), market());
    let mut c = client(&okx, &m);
    let mut out = Out::default();
    let now = Instant::now();
    assert_eq!(
        okx.on_tick(&mut c, now, Duration::from_secs(30), &mut out),
        Tick::Close(CloseCode(4004), "No data received in 30s")
    );
    // A client pinging every 20 s is never that idle.
    assert_eq!(ask(&okx, &mut c, &mut m, "ping"), ["pong"]);
    assert_eq!(
        okx.on_tick(&mut c, now, Duration::from_secs(20), &mut out),
        Tick::Keep
    );
    assert!(out.items.is_empty());
    ask(
        &okx,
        &mut c,
        &mut m,
        r#"{"op":"subscribe","args":[{"channel":"books","instId":"ETH-USDT"}]}"#,
    );
    // 59 s after the book's snapshot went out: nothing yet.
    let later = c.books[0].pushed + Duration::from_secs(59);
    okx.on_tick(&mut c, later, Duration::from_secs(1), &mut out);
    assert!(out.items.is_empty());
    let later = later + Duration::from_secs(2);
    okx.on_tick(&mut c, later, Duration::from_secs(1), &mut out);
    assert_eq!(out.items.len(), 1);
    let v = json(out.items[0].0.text());
    let seq = m.books[1].update_id;
    assert_eq!(v["action"], "update");
    let d = &v["data"][0];
    assert_eq!(
        (&d["seqId"], &d["prevSeqId"]),
        (&json(&seq.to_string()), &json(&seq.to_string()))
    );
    assert_eq!(d["asks"].as_array().map(Vec::len), Some(0));
    assert_eq!(d["checksum"], c.books[0].checksum);
    // And not again until another 60 s.
    out.items.clear();
    okx.on_tick(
        &mut c,
        later + Duration::from_secs(30),
        Duration::ZERO,
        &mut out,
    );
    assert!(out.items.is_empty());
}
