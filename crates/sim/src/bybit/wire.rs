//! How Bybit v5 writes its public messages: book and trade topics, and
//! the replies to `subscribe`, `unsubscribe` and `ping`, per category.
//!
//! Every message whose `ts` changes when it is sent again (a level-1
//! snapshot repeated after 3 s) is built as the text before its `ts`
//! value and the text after it ([`Framed`]).

use std::fmt::Write as _;

use crate::market::{Digits, SimInstrument, Trade, decimal};

/// A message around its `ts` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Framed {
    pub(super) head: String,
    pub(super) tail: String,
}

impl Framed {
    /// The message with `ts`.
    pub(super) fn at(&self, ts: u64) -> String {
        format!("{}{ts}{}", self.head, self.tail)
    }
}

/// The wire format of one category.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Wire {
    /// Spot (`/v5/public/spot`) rather than linear or inverse.
    pub(super) spot: bool,
}

impl Wire {
    /// A price or size as Bybit writes it:
    ///
    /// - spot trims trailing zeros: sizes `"0.07562"` next to `"0.175231"`,
    ///   a price `"77606.8"` at tick 0.1 (spot frames of 2023 recorded by
    ///   tardis-node, a spot capture of 2026; the "Ticker" docs'
    ///   `"lowPrice24h":"20575"`);
    /// - linear and inverse pad to the symbol's decimals (`"16493.50"`,
    ///   `"0.006"`, "Orderbook" examples; every price of the recorded
    ///   XRPUSDT stream has 4 decimals);
    /// - a deleted level is the bare `"0"` on both (every delete of the
    ///   recorded stream).
    pub(super) fn number(self, out: &mut String, value: i64, scale: u8) {
        if self.spot || value == 0 {
            decimal(out, value, scale, Digits::Trimmed);
        } else {
            decimal(out, value, scale, Digits::Fixed(scale));
        }
    }

    fn levels(self, out: &mut String, spec: &SimInstrument, levels: &[(i64, i64)]) {
        out.push('[');
        for (k, &(p, q)) in levels.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str("[\"");
            self.number(out, p, spec.price_scale);
            out.push_str("\",\"");
            self.number(out, q, spec.size_scale);
            out.push_str("\"]");
        }
        out.push(']');
    }

    /// An `orderbook.{depth}.{symbol}` message ("Orderbook": `topic`,
    /// `type`, `ts`, `data` {`s`, `b`, `a`, `u`, `seq`}, `cts`). "Spot (all
    /// levels) & Futures (Level 1): the "ts" field appears before the
    /// "type" field ... Futures (all other levels): the "ts" field appears
    /// after the "type" field" (the page's reminder of 2026-03).
    #[allow(clippy::too_many_arguments)] // one call per message kind, all named
    pub(super) fn book(
        self,
        spec: &SimInstrument,
        depth: usize,
        snapshot: bool,
        u: u64,
        seq: u64,
        cts: u64,
        bids: &[(i64, i64)],
        asks: &[(i64, i64)],
    ) -> Framed {
        let kind = if snapshot { "snapshot" } else { "delta" };
        let sym = &spec.symbol;
        let mut head = String::with_capacity(64);
        let mut tail = String::with_capacity(96 + 32 * (bids.len() + asks.len()));
        let _ = write!(head, r#"{{"topic":"orderbook.{depth}.{sym}","#);
        if self.spot || depth == 1 {
            head.push_str(r#""ts":"#);
            let _ = write!(tail, r#","type":"{kind}""#);
        } else {
            let _ = write!(head, r#""type":"{kind}","ts":"#);
        }
        let _ = write!(tail, r#","data":{{"s":"{sym}","b":"#);
        self.levels(&mut tail, spec, bids);
        tail.push_str(r#","a":"#);
        self.levels(&mut tail, spec, asks);
        let _ = write!(tail, r#","u":{u},"seq":{seq}}},"cts":{cts}}}"#);
        Framed { head, tail }
    }

    /// A `publicTrade.{symbol}` message of one trade ("Trade": `type` is
    /// always `snapshot`; each trade `T`, `s`, `S` the taker's side, `v`,
    /// `p`, `L` the tick direction (perpetuals and futures only), `i`,
    /// `BT`, `RPI`, `seq`).
    ///
    /// - Spot puts `ts` before `type` and writes the trade's keys as
    ///   `i,T,p,v,S,seq,s,BT,RPI` (a live spot capture of 2026; research
    ///   note §5).
    /// - The id `i` is the simulator's trade id in digits on every
    ///   category, as on spot (`"2290000001202469355"`): linear and
    ///   inverse send a UUID there, for which tickwire's adapter reports
    ///   0, and the feed could not match the message to its send stamp.
    pub(super) fn trade(
        self,
        spec: &SimInstrument,
        trade: &Trade,
        tick: &str,
        seq: u64,
        time_ms: u64,
    ) -> String {
        let sym = &spec.symbol;
        let side = if trade.buyer_aggressor { "Buy" } else { "Sell" };
        let (mut p, mut v) = (String::new(), String::new());
        self.number(&mut p, trade.price, spec.price_scale);
        self.number(&mut v, trade.size, spec.size_scale);
        let id = trade.id;
        if self.spot {
            format!(
                r#"{{"topic":"publicTrade.{sym}","ts":{time_ms},"type":"snapshot","data":[{{"i":"{id}","T":{time_ms},"p":"{p}","v":"{v}","S":"{side}","seq":{seq},"s":"{sym}","BT":false,"RPI":false}}]}}"#
            )
        } else {
            format!(
                r#"{{"topic":"publicTrade.{sym}","type":"snapshot","ts":{time_ms},"data":[{{"T":{time_ms},"s":"{sym}","S":"{side}","v":"{v}","p":"{p}","L":"{tick}","i":"{id}","BT":false,"RPI":false,"seq":{seq}}}]}}"#
            )
        }
    }

    /// The reply to an operation, one per request ("Connect",
    /// "Understanding the Subscription Response"):
    ///
    /// - spot: `{"success":true,"ret_msg":"subscribe","conn_id":..,"req_id":..,"op":"subscribe"}`,
    ///   `req_id` only when the request had one (a spot capture of
    ///   2026-09-02 without one has no `req_id` key);
    /// - linear and inverse: `{"success":true,"ret_msg":"","conn_id":..,"req_id":"","op":"subscribe"}`,
    ///   `req_id` always (`""` without one).
    ///
    /// `ret_msg` and `req_id` are written as Go's encoding/json writes
    /// strings, `<`, `>` and `&` escaped (`"args size \u003e10"` on the
    /// wire, kept by third-party tests of 2026).
    pub(super) fn reply(
        self,
        conn_id: &str,
        success: bool,
        ret_msg: &str,
        req_id: Option<&str>,
        op: &str,
    ) -> String {
        let mut out = format!(
            r#"{{"success":{success},"ret_msg":{},"conn_id":"{conn_id}""#,
            go_string(ret_msg)
        );
        match (req_id, self.spot) {
            (Some(r), _) => {
                let _ = write!(out, r#","req_id":{}"#, go_string(r));
            }
            (None, false) => out.push_str(r#","req_id":"""#),
            (None, true) => {}
        }
        let _ = write!(out, r#","op":{}}}"#, go_string(op));
        out
    }

    /// `ret_msg` of a successful `op`: spot repeats the operation
    /// (`"subscribe"`, `"unsubscribe"`: a spot capture of 2026-09-02),
    /// linear and inverse leave it empty; a ping is `"pong"` on all
    /// ("Connect").
    pub(super) fn done(self, op: &str) -> &'static str {
        match op {
            "ping" => "pong",
            "subscribe" if self.spot => "subscribe",
            "unsubscribe" if self.spot => "unsubscribe",
            _ => "",
        }
    }

    /// Why a topic is refused: an unknown symbol, depth or channel.
    /// Linear and inverse: `error:handler not found,topic:<topic>`
    /// (third-party captures of 2026 for unknown symbols, for
    /// `orderbook.30` and `orderbook.500`, for a lowercase symbol). Spot:
    /// `Invalid symbol :[<topic>]` (several projects' captures, for
    /// unknown symbols; the text for an unknown depth is unconfirmed and
    /// taken to be the same).
    pub(super) fn unknown(self, topic: &str) -> String {
        if self.spot {
            format!("Invalid symbol :[{topic}]")
        } else {
            format!("error:handler not found,topic:{topic}")
        }
    }
}

/// `s` as a JSON string the way Go's encoding/json writes it (HTML
/// characters escaped).
fn go_string(s: &str) -> String {
    let json = serde_json::Value::String(s.to_owned()).to_string();
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPOT: Wire = Wire { spot: true };
    const LINEAR: Wire = Wire { spot: false };

    fn spec(price_scale: u8, size_scale: u8) -> SimInstrument {
        SimInstrument {
            price_scale,
            size_scale,
            ..SimInstrument::btcusdt()
        }
    }

    /// The documented shapes ("Orderbook" response example), with the
    /// decimals of each category.
    #[test]
    fn book_messages_as_documented() {
        let s = spec(2, 3);
        let m = LINEAR.book(
            &s,
            50,
            false,
            177_400_507,
            66_544_703_342,
            1_687_940_967_464,
            &[(3_024_720, 30_028), (3_024_000, 0)],
            &[(3_024_870, 0), (3_024_930, 892)],
        );
        assert_eq!(
            m.at(1_687_940_967_466),
            r#"{"topic":"orderbook.50.BTCUSDT","type":"delta","ts":1687940967466,"data":{"s":"BTCUSDT","b":[["30247.20","30.028"],["30240.00","0"]],"a":[["30248.70","0"],["30249.30","0.892"]],"u":177400507,"seq":66544703342},"cts":1687940967464}"#
        );
        // Level 1 (and spot): `ts` before `type`.
        let m = LINEAR.book(&s, 1, true, 9, 10, 11, &[(3_024_720, 30_028)], &[]);
        assert_eq!(
            m.at(12),
            r#"{"topic":"orderbook.1.BTCUSDT","ts":12,"type":"snapshot","data":{"s":"BTCUSDT","b":[["30247.20","30.028"]],"a":[],"u":9,"seq":10},"cts":11}"#
        );
        let m = SPOT.book(
            &spec(1, 6),
            200,
            true,
            1,
            2,
            3,
            &[(776_068, 75_620)],
            &[(776_070, 1_000_000)],
        );
        assert_eq!(
            m.at(4),
            r#"{"topic":"orderbook.200.BTCUSDT","ts":4,"type":"snapshot","data":{"s":"BTCUSDT","b":[["77606.8","0.07562"]],"a":[["77607","1"]],"u":1,"seq":2},"cts":3}"#
        );
    }

    #[test]
    fn trades_as_documented() {
        let t = Trade {
            id: 2_290_000_001_202_469_355,
            price: 1_657_850,
            size: 1,
            buyer_aggressor: true,
        };
        assert_eq!(
            LINEAR.trade(
                &spec(2, 3),
                &t,
                "PlusTick",
                1_783_284_617,
                1_672_304_486_865
            ),
            r#"{"topic":"publicTrade.BTCUSDT","type":"snapshot","ts":1672304486865,"data":[{"T":1672304486865,"s":"BTCUSDT","S":"Buy","v":"0.001","p":"16578.50","L":"PlusTick","i":"2290000001202469355","BT":false,"RPI":false,"seq":1783284617}]}"#
        );
        let t = Trade {
            buyer_aggressor: false,
            ..t
        };
        assert_eq!(
            SPOT.trade(&spec(2, 3), &t, "PlusTick", 7, 8),
            r#"{"topic":"publicTrade.BTCUSDT","ts":8,"type":"snapshot","data":[{"i":"2290000001202469355","T":8,"p":"16578.5","v":"0.001","S":"Sell","seq":7,"s":"BTCUSDT","BT":false,"RPI":false}]}"#
        );
    }

    /// "Understanding the Subscription Response" and the pongs of
    /// "Connect", per category.
    #[test]
    fn replies_as_documented() {
        let id = "2324d924-aa4d-45b0-a858-7b8be29ab52b";
        assert_eq!(
            SPOT.reply(id, true, SPOT.done("subscribe"), Some("10001"), "subscribe"),
            r#"{"success":true,"ret_msg":"subscribe","conn_id":"2324d924-aa4d-45b0-a858-7b8be29ab52b","req_id":"10001","op":"subscribe"}"#
        );
        assert_eq!(
            LINEAR.reply(id, true, LINEAR.done("subscribe"), None, "subscribe"),
            r#"{"success":true,"ret_msg":"","conn_id":"2324d924-aa4d-45b0-a858-7b8be29ab52b","req_id":"","op":"subscribe"}"#
        );
        assert_eq!(
            SPOT.reply(id, true, SPOT.done("ping"), None, "ping"),
            r#"{"success":true,"ret_msg":"pong","conn_id":"2324d924-aa4d-45b0-a858-7b8be29ab52b","op":"ping"}"#
        );
        assert_eq!(
            LINEAR.reply(id, true, LINEAR.done("ping"), None, "ping"),
            r#"{"success":true,"ret_msg":"pong","conn_id":"2324d924-aa4d-45b0-a858-7b8be29ab52b","req_id":"","op":"ping"}"#
        );
        assert_eq!(SPOT.done("unsubscribe"), "unsubscribe");
        assert_eq!(LINEAR.done("unsubscribe"), "");
        assert_eq!(
            SPOT.reply("c", false, "args size >10", None, "subscribe"),
            r#"{"success":false,"ret_msg":"args size \u003e10","conn_id":"c","op":"subscribe"}"#
        );
        assert_eq!(
            LINEAR.unknown("orderbook.500.BTCUSDT"),
            "error:handler not found,topic:orderbook.500.BTCUSDT"
        );
        assert_eq!(
            SPOT.unknown("publicTrade.NOPEUSDT"),
            "Invalid symbol :[publicTrade.NOPEUSDT]"
        );
    }
}
