use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use tickwire_venues::Venue;

use super::*;

pub(super) fn market() -> Market {
    crate::testutil::market(Venue::Coinbase, 1)
}

/// A connection on the venue's path.
pub(super) fn connect(cb: &Coinbase, m: &Market) -> Client {
    match cb.open("/", m) {
        Ok(c) => c,
        Err(r) => panic!("refused: {}", r.status),
    }
}

/// Sends `text`; the frames that come back, parsed.
fn ask(cb: &Coinbase, c: &mut Client, m: &mut Market, text: &str) -> Vec<Value> {
    let mut out = Out::default();
    cb.on_text(c, text, m, &mut out);
    out.items
        .iter()
        .map(|(t, _)| serde_json::from_str(t.text()).unwrap())
        .collect()
}

fn sub(channel: &str, product: &str) -> String {
    format!(r#"{{"type":"subscribe","product_ids":["{product}"],"channel":"{channel}"}}"#)
}

fn subs(frame: &Value) -> &Value {
    assert_eq!(frame["channel"], "subscriptions", "{frame}");
    &frame["events"][0]["subscriptions"]
}

#[test]
fn subscriptions_and_refusals_read_as_the_venue_writes_them() {
    let cb = budget::unlimited();
    let mut m = market();
    assert_eq!(cb.open("/ws", &m).err().map(|r| r.status), Some(404));
    let mut c = connect(&cb, &m);
    let r = ask(
        &cb,
        &mut c,
        &mut m,
        r#"{"type":"subscribe","channel":"heartbeats"}"#,
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["sequence_num"], 0);
    assert!(r[0].get("client_id").is_none(), "live acks have none");
    assert_eq!(subs(&r[0]), &json!({"heartbeats": ["heartbeats"]}));
    // The snapshots first (in the request's order), then the ack
    // restating everything, in order;
    // an unknown product is left out, an alias is its -USD product.
    let r = ask(
        &cb,
        &mut c,
        &mut m,
        r#"{"type":"subscribe","product_ids":["ETH-USD","BTC-USDC","DOGE-USD"],"channel":"level2"}"#,
    );
    assert_eq!(r.len(), 3);
    assert_eq!(
        (
            &r[0]["channel"],
            &r[0]["sequence_num"],
            &r[0]["events"][0]["product_id"]
        ),
        (&json!("l2_data"), &json!(1), &json!("ETH-USD"))
    );
    assert_eq!(r[1]["events"][0]["product_id"], "BTC-USD");
    assert_eq!(r[2]["sequence_num"], 3);
    assert_eq!(
        subs(&r[2]).to_string(),
        r#"{"heartbeats":["heartbeats"],"level2":["BTC-USD","ETH-USD"]}"#
    );
    // Refusals: their own shape, no number taken.
    for (request, reply) in [
        ("not json", SUBSCRIBE_REQUIRED),
        (r#"[1]"#, SUBSCRIBE_REQUIRED),
        (r#"{"type":"ping"}"#, SUBSCRIBE_REQUIRED),
        (
            r#"{"type":"subscribe","channel":"level2","product_ids":"BTC-USD"}"#,
            SUBSCRIBE_REQUIRED,
        ),
        (
            r#"{"type":"subscribe","channel":"level3","product_ids":["BTC-USD"]}"#,
            AUTH_FAILURE,
        ),
        (
            r#"{"type":"subscribe","channels":["level2"],"product_ids":["BTC-USD"]}"#,
            AUTH_FAILURE,
        ),
        (r#"{"type":"subscribe","channel":"user"}"#, AUTH_FAILURE),
    ] {
        let mut out = Out::default();
        cb.on_text(&mut c, request, &mut m, &mut out);
        let texts: Vec<&str> = out.items.iter().map(|(t, _)| t.text()).collect();
        assert_eq!(texts, [reply], "{request}");
    }
    let r = ask(
        &cb,
        &mut c,
        &mut m,
        r#"{"type":"unsubscribe","product_ids":["BTC-USD"],"channel":"level2"}"#,
    );
    assert_eq!((r.len(), &r[0]["sequence_num"]), (1, &json!(4)));
    assert_eq!(
        subs(&r[0]),
        &json!({"heartbeats": ["heartbeats"], "level2": ["ETH-USD"]})
    );
    // No product ids: the whole channel goes.
    let r = ask(
        &cb,
        &mut c,
        &mut m,
        r#"{"type":"unsubscribe","channel":"level2"}"#,
    );
    assert_eq!(subs(&r[0]), &json!({"heartbeats": ["heartbeats"]}));
    // An armed refusal of ETH-USD's book: the venue's words, once.
    m.arm(1, crate::VenueFault::RejectSubscription);
    let sub_eth = &sub("level2", "ETH-USD");
    let mut out = Out::default();
    cb.on_text(&mut c, sub_eth, &mut m, &mut out);
    assert_eq!(out.items[0].0.text(), AUTH_FAILURE);
    let r = ask(&cb, &mut c, &mut m, sub_eth);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["events"][0]["type"], "snapshot");
    assert_eq!(r[1]["sequence_num"], 7);
}

#[test]
fn the_snapshot_is_the_whole_book_in_one_message_of_megabytes() {
    let cb = Coinbase::new();
    let mut m = market();
    let mut c = connect(&cb, &m);
    let mut out = Out::default();
    cb.on_text(&mut c, &sub("level2", "BTC-USD"), &mut m, &mut out);
    let snapshot = out.items[0].0.text();
    assert!(out.items[0].1.is_none(), "a snapshot is not stamped");
    // 25 000 levels a side, as the live BTC-USD book has about 22 000:
    // about 5 MB, within the plan's message limit.
    assert!(snapshot.len() > 4_000_000, "{}", snapshot.len());
    assert!(snapshot.len() < tickwire_venues::plan::coinbase::MAX_MESSAGE);
    let v: Value = serde_json::from_str(snapshot).unwrap();
    assert_eq!(v["client_id"], "");
    let updates = v["events"][0]["updates"].as_array().unwrap();
    assert_eq!(updates.len(), 50_000);
    let first = &updates[0];
    assert_eq!(first["side"], "bid");
    assert_eq!(first["price_level"], "59999.99");
    assert_eq!(first["event_time"], v["timestamp"]);
    assert_eq!(updates[25_000]["side"], "offer");
    assert_eq!(updates[25_000]["price_level"], "60000.01");
    // Trimmed decimals: no trailing zeros anywhere.
    for u in updates {
        let q = u["new_quantity"].as_str().unwrap();
        assert!(!q.contains('.') || !q.ends_with('0'), "{q}");
    }
}

#[test]
fn a_lost_book_message_skips_a_number_and_trades_name_the_maker() {
    let cb = Coinbase::new();
    let mut m = market();
    let mut c = connect(&cb, &m);
    let mut out = Out::default();
    for req in [&sub("level2", "ETH-USD"), &sub("market_trades", "ETH-USD")] {
        cb.on_text(&mut c, req, &mut m, &mut out);
    }
    assert_eq!(c.next_seq, 4, "snapshot, ack, trades snapshot, ack");
    out.items.clear();
    let mut rng = StdRng::seed_from_u64(3);
    let mut step = Step::default();
    m.step(1, &mut rng, true, &mut step);
    step.faults.drop_book = true;
    cb.on_step(&mut c, &step, &m, &mut out);
    let trade = step.trade.unwrap();
    assert_eq!(out.items.len(), 1, "the trade only");
    assert_eq!(out.items[0].1, Some((1, StreamKind::Trade, trade.id)));
    let v: Value = serde_json::from_str(out.items[0].0.text()).unwrap();
    assert_eq!(v["sequence_num"], 4);
    let t = &v["events"][0]["trades"][0];
    assert_eq!(
        t["side"],
        if trade.buyer_aggressor { "SELL" } else { "BUY" }
    );
    assert_eq!(t["trade_id"], trade.id.to_string());
    out.items.clear();
    m.step(1, &mut rng, false, &mut step);
    cb.on_step(&mut c, &step, &m, &mut out);
    let v: Value = serde_json::from_str(out.items[0].0.text()).unwrap();
    assert_eq!(v["sequence_num"], 6, "5 was lost");
    assert_eq!(out.items[0].1, Some((1, StreamKind::Depth, 6)));
    assert_eq!(v["events"][0]["type"], "update");
    // A new subscriber to the trades gets the recent one.
    let mut d = connect(&cb, &m);
    let r = ask(&cb, &mut d, &mut m, &sub("market_trades", "ETH-USD"));
    assert_eq!(r[0]["events"][0]["type"], "snapshot");
    assert_eq!(
        r[0]["events"][0]["trades"][0]["trade_id"],
        trade.id.to_string()
    );
    // And a ticker subscriber the product's ticker.
    let r = ask(&cb, &mut d, &mut m, &sub("ticker", "ETH-USD"));
    assert_eq!(
        r[0]["events"][0]["tickers"][0]["price"],
        wire::number(trade.price, 2)
    );
}

#[test]
fn heartbeats_once_a_second_and_the_venues_deadlines() {
    let cb = Coinbase::new();
    let mut m = market();
    // Silent: closed 5 s after opening, with the venue's words.
    let mut silent = connect(&cb, &m);
    let t0 = silent.opened;
    let mut out = Out::default();
    assert_eq!(
        cb.on_tick(
            &mut silent,
            t0 + Duration::from_secs(4),
            Duration::ZERO,
            &mut out
        ),
        Tick::Keep
    );
    let tick = cb.on_tick(
        &mut silent,
        t0 + Duration::from_secs(6),
        Duration::ZERO,
        &mut out,
    );
    assert_eq!(tick, Tick::Close(CloseCode::POLICY_VIOLATION, ""));
    assert_eq!(out.items[0].0.text(), SUBSCRIBE_REQUIRED);
    // With heartbeats: one a second, numbered, kept open.
    let mut c = connect(&cb, &m);
    ask(
        &cb,
        &mut c,
        &mut m,
        r#"{"type":"subscribe","channel":"heartbeats"}"#,
    );
    let subscribed = c.next_heartbeat.expect("a heartbeat due") - HEARTBEAT_EVERY;
    let mut beats = Vec::new();
    for ms in (0..70_000).step_by(250) {
        let mut out = Out::default();
        let now = subscribed + Duration::from_millis(ms);
        assert_eq!(
            cb.on_tick(&mut c, now, Duration::ZERO, &mut out),
            Tick::Keep,
            "{ms}"
        );
        beats.extend(
            out.items
                .into_iter()
                .map(|(t, _)| serde_json::from_str::<Value>(t.text()).unwrap()),
        );
    }
    // One a second from the subscription on: at 1 s, 2 s, ... 69 s.
    assert_eq!(beats.len(), 69);
    for (k, b) in beats.iter().enumerate() {
        assert_eq!(b["channel"], "heartbeats");
        assert_eq!(b["sequence_num"], k as u64 + 1);
        let e = &b["events"][0];
        let counter = e["heartbeat_counter"].as_u64().expect("a number");
        let time = e["current_time"].as_str().unwrap();
        assert!(time.contains(" +0000 UTC m=+"), "{time}");
        let mono: f64 = time.rsplit("m=+").next().unwrap().parse().unwrap();
        assert_eq!(counter, mono as u64, "{time}");
    }
    // Without heartbeats, nothing sent for 60 s: closed.
    let mut quiet = connect(&cb, &m);
    ask(&cb, &mut quiet, &mut m, &sub("candles", "BTC-USD"));
    let base = quiet.last_sent;
    let mut out = Out::default();
    assert_eq!(
        cb.on_tick(
            &mut quiet,
            base + Duration::from_secs(59),
            Duration::ZERO,
            &mut out
        ),
        Tick::Keep
    );
    assert_eq!(
        cb.on_tick(
            &mut quiet,
            base + Duration::from_secs(61),
            Duration::ZERO,
            &mut out
        ),
        Tick::Close(CloseCode::NORMAL, "")
    );
}
