//! The text of every message the simulated OKX writes: replies to
//! requests, `books`, `bbo-tbt` and `trades` pushes. Shapes from the OKX
//! API v5 docs (D-WS "Subscribe", D-BOOK "Order book channel", D-TRD
//! "Trades channel", D-ERR "Error Code") and live captures quoted in the
//! research note on OKX.

use std::fmt::Write as _;

use crate::market::{Digits, SimInstrument, Trade, decimal};

use super::window::write_levels;

/// A reply's opening: `id` first when the client sent one (D-WS:
/// "Provided by client. It will be returned in response message").
fn open_event(id: Option<&str>) -> String {
    let mut s = String::with_capacity(160);
    s.push('{');
    if let Some(id) = id {
        let _ = write!(s, r#""id":{},"#, json_string(id));
    }
    s
}

/// `s` as a JSON string, quoted and escaped.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// `{"event":"subscribe","arg":{"channel":..,"instId":..},"connId":..}`
/// (D-WS "Subscribe", D-BOOK: one per argument, before that argument's
/// data; `unsubscribe` alike).
pub(super) fn ack(
    conn_id: &str,
    id: Option<&str>,
    op: &str,
    channel: &str,
    inst_id: &str,
) -> String {
    let mut s = open_event(id);
    let _ = write!(
        s,
        r#""event":"{op}","arg":{{"channel":"{channel}","instId":"{inst_id}"}},"connId":"{conn_id}"}}"#
    );
    s
}

/// An error event, with no `arg`. Live OKX writes `msg` before `code`
/// (`{"event":"error","msg":"…","code":"60018","connId":"e1f69f02"}`, peer
/// captures); the docs' example has `code` first. JSON readers cannot
/// tell; the live order is kept.
pub(super) fn error(conn_id: &str, id: Option<&str>, code: &str, msg: &str) -> String {
    let mut s = open_event(id);
    let _ = write!(
        s,
        r#""event":"error","msg":{},"code":"{code}","connId":"{conn_id}"}}"#,
        json_string(msg)
    );
    s
}

/// 60018, "Wrong URL or {0} doesn't exist. Please use the correct URL,
/// channel and parameters referring to API document." (D-ERR), with `{0}`
/// as live OKX fills it: `channel:tickers,instId:NMR-USDT` (peer test
/// fixtures, 2026). The instrument is named in the text only.
pub(super) fn not_found(conn_id: &str, id: Option<&str>, channel: &str, inst_id: &str) -> String {
    error(
        conn_id,
        id,
        "60018",
        &format!(
            "Wrong URL or channel:{channel},instId:{inst_id} doesn't exist. Please use the correct URL, channel and parameters referring to API document."
        ),
    )
}

/// A `books` message: a snapshot (`prevSeqId` -1) or an update.
pub(super) struct BookMessage<'a> {
    pub(super) snapshot: bool,
    /// Levels to send, best first.
    pub(super) bids: &'a [(i64, i64)],
    pub(super) asks: &'a [(i64, i64)],
    /// Milliseconds since the Unix epoch.
    pub(super) ts: u64,
    pub(super) checksum: i32,
    pub(super) prev_seq_id: i64,
    pub(super) seq_id: u64,
}

impl BookMessage<'_> {
    /// As OKX writes it: `action`, then `data` with one element, `asks`
    /// before `bids`, `ts` a string, `checksum`, `prevSeqId` and `seqId`
    /// JSON integers (D-BOOK, and all 290 book messages of the 2022
    /// recording).
    pub(super) fn text(&self, spec: &SimInstrument) -> String {
        let mut s = String::with_capacity(160 + 40 * (self.bids.len() + self.asks.len()));
        let _ = write!(
            s,
            r#"{{"arg":{{"channel":"books","instId":"{}"}},"action":"{}","data":[{{"asks":"#,
            spec.symbol,
            if self.snapshot { "snapshot" } else { "update" }
        );
        write_levels(&mut s, spec, self.asks);
        s.push_str(r#","bids":"#);
        write_levels(&mut s, spec, self.bids);
        let _ = write!(
            s,
            r#","ts":"{}","checksum":{},"prevSeqId":{},"seqId":{}}}]}}"#,
            self.ts, self.checksum, self.prev_seq_id, self.seq_id
        );
        s
    }
}

/// A `trades` push of one trade (D-TRD): `count` 1 ("only one message per
/// taker order, filled price, source"; one trade is one taker order
/// here), `side` the taker's, `source` "0" (not ELP), numbers as strings
/// but `seqId`, a JSON integer.
pub(super) fn trade(spec: &SimInstrument, t: &Trade, ts: u64, seq_id: u64) -> String {
    let mut px = String::new();
    decimal(&mut px, t.price, spec.price_scale, Digits::Trimmed);
    let mut sz = String::new();
    decimal(&mut sz, t.size, spec.size_scale, Digits::Trimmed);
    format!(
        r#"{{"arg":{{"channel":"trades","instId":"{sym}"}},"data":[{{"instId":"{sym}","tradeId":"{id}","px":"{px}","sz":"{sz}","side":"{side}","ts":"{ts}","count":"1","source":"0","seqId":{seq_id}}}]}}"#,
        sym = spec.symbol,
        id = t.id,
        side = if t.buyer_aggressor { "buy" } else { "sell" },
    )
}

/// A `bbo-tbt` push: a one-level snapshot, with no `action`, `checksum`
/// nor `prevSeqId`, `seqId` the book's (D-BOOK example).
pub(super) fn bbo(
    spec: &SimInstrument,
    bid: (i64, i64),
    ask: (i64, i64),
    ts: u64,
    seq_id: u64,
) -> String {
    let mut s = format!(
        r#"{{"arg":{{"channel":"bbo-tbt","instId":"{}"}},"data":[{{"asks":"#,
        spec.symbol
    );
    write_levels(&mut s, spec, &[ask]);
    s.push_str(r#","bids":"#);
    write_levels(&mut s, spec, &[bid]);
    let _ = write!(s, r#","ts":"{ts}","seqId":{seq_id}}}]}}"#);
    s
}

/// The notice of a service upgrade, `64008` ("Notification" in the API v5
/// docs' WebSocket overview: pushed to public and private connections
/// before an upgrade, "60 seconds" ahead in the current English docs, 30
/// in older and Chinese versions; the client is to connect anew):
/// `{"event":"notice","code":"64008","msg":"..","connId":".."}`.
pub(super) fn upgrade_notice(conn_id: &str) -> String {
    format!(
        r#"{{"event":"notice","code":"64008","msg":"The connection will soon be closed for a service upgrade. Please reconnect.","connId":"{conn_id}"}}"#
    )
}
