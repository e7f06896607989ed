//! The order path's workload, shared by the criterion benchmark
//! (`benches/order_path.rs`) and the instruction counter
//! (`examples/order_instructions.rs`): one round is the life of an order as
//! a bot sees it, on one venue's session, warm:
//!
//! 1. the bot places a limit order (the request written);
//! 2. the venue's answer: the order accepted (decoded into events);
//! 3. a partial fill on the private channel (decoded);
//! 4. the bot cancels it (written);
//! 5. the cancel's answer (decoded).
//!
//! The venue's texts are written into a buffer each round (the in-place
//! parser takes the buffer over), the same for tickwire and the peer, and
//! `copy-only` measures that writing alone.
//!
//! The peer, `serde`, is how an order client is commonly written in Rust:
//! requests built as `serde_json::Value`s and serialised to a `String`,
//! answers deserialised into typed structs with owned `String` fields,
//! amounts read as `f64` then scaled. It does the same work: the same
//! requests (fields and values), the same answers, the same events out.

use std::fmt::Write as _;

use serde::Deserialize;
use tickwire_trade::binance::BinanceSession;
use tickwire_trade::deribit::{DeribitOptions, DeribitSession};
use tickwire_trade::{
    ClientOrderId, Credentials, Limit, Now, OrderEvent, Out, Request, Session, SessionConfig, Side,
    State, TimeInForce,
};
use tickwire_venues::json::INPUT_PADDING;
use tickwire_venues::{InstrumentId, InstrumentSpec};

/// The venues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderVenue {
    Deribit,
    Binance,
}

impl OrderVenue {
    pub const ALL: [OrderVenue; 2] = [OrderVenue::Deribit, OrderVenue::Binance];

    pub fn name(self) -> &'static str {
        match self {
            OrderVenue::Deribit => "deribit",
            OrderVenue::Binance => "binance",
        }
    }
}

const T0: u64 = 1_700_000_000_000;

/// The venue's three texts of round `k` (ack, fill, cancel's answer) for
/// requests sent with ids `place` and `cancel`, written into `buf` one at a
/// time by `text(n, ..)`.
fn text(venue: OrderVenue, n: usize, k: u64, id: u64, buf: &mut String) {
    buf.clear();
    let cid = k;
    let r = match (venue, n) {
        (OrderVenue::Deribit, 0) => write!(
            buf,
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"order":{{"price":8900.5,"order_state":"open","order_id":"BTC-{k}","label":"tw-{cid}","filled_amount":0,{DERIBIT_ORDER}}},"trades":[]}},"usIn":1,"usOut":2,"usDiff":1,"testnet":false}}"#
        ),
        (OrderVenue::Deribit, 1) => write!(
            buf,
            r#"{{"jsonrpc":"2.0","method":"subscription","params":{{"channel":"user.trades.BTC-PERPETUAL.raw","data":[{{"trade_id":"BTC-9{k}","trade_seq":{k},"timestamp":1590484156350,"state":"open","price":8900.5,"order_id":"BTC-{k}","liquidity":"M","label":"tw-{cid}","instrument_name":"BTC-PERPETUAL","direction":"buy","amount":4,"fee":0,"fee_currency":"BTC","index_price":8900.1,"mark_price":8900.2,"order_type":"limit","tick_direction":1}}]}}}}"#
        ),
        (OrderVenue::Deribit, _) => write!(
            buf,
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"price":8900.5,"order_state":"cancelled","order_id":"BTC-{k}","label":"tw-{cid}","filled_amount":4,{DERIBIT_ORDER}}},"usIn":1,"usOut":2,"usDiff":1,"testnet":false}}"#
        ),
        (OrderVenue::Binance, 0) => write!(
            buf,
            r#"{{"id":{id},"status":200,"result":{{"symbol":"BTCUSDT","orderId":{k},"orderListId":-1,"clientOrderId":"tw-{cid}","transactTime":1660801715639,"price":"23416.10","origQty":"0.00847","executedQty":"0.00000000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"0.00000000","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY","workingTime":1660801715639,"fills":[],"selfTradePreventionMode":"NONE"}},"rateLimits":[{{"rateLimitType":"ORDERS","interval":"SECOND","intervalNum":10,"limit":50,"count":1}},{{"rateLimitType":"ORDERS","interval":"DAY","intervalNum":1,"limit":160000,"count":{k}}},{{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000,"count":2}}]}}"#
        ),
        (OrderVenue::Binance, 1) => write!(
            buf,
            r#"{{"subscriptionId":0,"event":{{"e":"executionReport","E":1499405658700,"s":"BTCUSDT","c":"tw-{cid}","S":"BUY","o":"LIMIT","f":"GTC","q":"0.00847000","p":"23416.10000000","P":"0.00000000","F":"0.00000000","g":-1,"C":"","x":"TRADE","X":"PARTIALLY_FILLED","r":"NONE","i":{k},"l":"0.00100000","z":"0.00100000","L":"23416.10000000","n":"0","N":"BNB","T":1499405658699,"t":{t},"I":8641990,"w":true,"m":true,"M":true,"O":1499405658657,"Z":"0","Y":"0","Q":"0.00000000","W":1499405658657,"V":"NONE"}}}}"#,
            t = 1_000_000 + k
        ),
        (OrderVenue::Binance, _) => write!(
            buf,
            r#"{{"id":{id},"status":200,"result":{{"symbol":"BTCUSDT","origClientOrderId":"tw-{cid}","orderId":{k},"orderListId":-1,"clientOrderId":"c{k}","transactTime":1684804350068,"price":"23416.10000000","origQty":"0.00847000","executedQty":"0.00100000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"23.41610000","status":"CANCELED","timeInForce":"GTC","type":"LIMIT","side":"BUY","selfTradePreventionMode":"NONE"}},"rateLimits":[{{"rateLimitType":"REQUEST_WEIGHT","interval":"MINUTE","intervalNum":1,"limit":6000,"count":3}}]}}"#
        ),
    };
    r.expect("a String takes any text");
}

const DERIBIT_ORDER: &str = r#""time_in_force":"good_til_cancelled","reduce_only":false,"post_only":false,"order_type":"limit","max_show":10,"last_update_timestamp":1590483719521,"is_liquidation":false,"instrument_name":"BTC-PERPETUAL","direction":"buy","creation_timestamp":1590483719521,"average_price":0,"api":true,"amount":10"#;

/// The order each round places: a bid at the instrument's scales.
fn order(venue: OrderVenue) -> Limit {
    let (price, size) = match venue {
        OrderVenue::Deribit => (89_005, 10),
        OrderVenue::Binance => (2_341_610, 847),
    };
    Limit {
        instrument: InstrumentId(0),
        side: Side::Bid,
        price,
        size,
        tif: TimeInForce::GoodTillCancel,
        post_only: false,
    }
}

/// The `id` of the last message in `out`.
fn last_id(out: &Out) -> u64 {
    let m = out.iter().last().expect("a request");
    let at = m.find("\"id\":").expect("an id") + 5;
    m[at..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0, |n, d| n * 10 + u64::from(d - b'0'))
}

/// What one round does besides the work measured: the texts written.
pub struct Texts {
    venue: OrderVenue,
    text: String,
    buf: Vec<u8>,
}

impl Texts {
    fn new(venue: OrderVenue) -> Texts {
        Texts {
            venue,
            text: String::with_capacity(4096),
            buf: Vec::with_capacity(4096 + INPUT_PADDING),
        }
    }

    /// Writes text `n` of round `k` answering request `id`; its length.
    fn write(&mut self, n: usize, k: u64, id: u64) -> usize {
        text(self.venue, n, k, id, &mut self.text);
        self.buf.clear();
        self.buf.extend_from_slice(self.text.as_bytes());
        self.buf.resize(self.text.len() + INPUT_PADDING, b' ');
        self.text.len()
    }
}

/// The round's writing alone (`copy-only`): what every implementation's
/// round starts each decode with.
pub struct CopyOnly {
    texts: Texts,
    k: u64,
}

impl CopyOnly {
    pub fn new(venue: OrderVenue) -> CopyOnly {
        CopyOnly {
            texts: Texts::new(venue),
            k: 0,
        }
    }

    pub fn round(&mut self) -> usize {
        self.k += 1;
        (0..3).map(|n| self.texts.write(n, self.k, self.k)).sum()
    }
}

/// tickwire's session, logged in and reconciled.
pub struct Tickwire {
    session: Box<dyn Session>,
    out: Out,
    events: Vec<OrderEvent>,
    texts: Texts,
    venue: OrderVenue,
    k: u64,
}

impl Tickwire {
    pub fn new(venue: OrderVenue) -> Tickwire {
        let config = SessionConfig {
            instruments: vec![match venue {
                OrderVenue::Deribit => InstrumentSpec::new("BTC-PERPETUAL", 1, 0, 0),
                OrderVenue::Binance => InstrumentSpec::new("BTCUSDT", 2, 5, 0),
            }],
            prefix: "tw".into(),
            cancel_on_disconnect: true,
            max_open_orders: 64,
        };
        // A throw-away key for each run.
        let session: Box<dyn Session> = match venue {
            OrderVenue::Deribit => {
                let secret = format!("bench-{}", std::process::id());
                Box::new(
                    DeribitSession::new(
                        config,
                        Credentials::hmac("bench", secret.as_bytes()),
                        DeribitOptions::default(),
                    )
                    .expect("a valid session"),
                )
            }
            OrderVenue::Binance => {
                let rng = ring::rand::SystemRandom::new();
                let pkcs8 =
                    ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).expect("a new key");
                let credentials =
                    Credentials::ed25519("bench", pkcs8.as_ref()).expect("a valid key");
                Box::new(BinanceSession::new(config, credentials).expect("a valid session"))
            }
        };
        let mut rig = Tickwire {
            session,
            out: Out::new(1 << 16, 64),
            events: Vec::with_capacity(64),
            texts: Texts::new(venue),
            venue,
            k: 0,
        };
        rig.log_in();
        rig
    }

    /// The login and set-up, each request answered as the venue would.
    fn log_in(&mut self) {
        let mut now = self.now();
        self.session.on_open(now, &mut self.out);
        let mut answers = String::new();
        for _ in 0..4 {
            let sent: Vec<String> = self.out.iter().map(str::to_owned).collect();
            self.out.clear();
            for m in sent {
                let id = m
                    .split("\"id\":")
                    .nth(1)
                    .and_then(|s| s.split([',', '}']).next())
                    .and_then(|s| s.parse::<u64>().ok())
                    .expect("an id");
                answers.clear();
                match self.venue {
                    OrderVenue::Deribit => {
                        let result = if m.contains("public/auth") {
                            r#"{"access_token":"a","expires_in":900000,"refresh_token":"r","scope":"connection","token_type":"bearer"}"#
                        } else if m.contains("get_open_orders") {
                            "[]"
                        } else if m.contains("private/subscribe") {
                            r#"["user.orders.BTC-PERPETUAL.raw","user.trades.BTC-PERPETUAL.raw"]"#
                        } else {
                            "\"ok\""
                        };
                        let _ = write!(
                            answers,
                            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
                        );
                    }
                    OrderVenue::Binance => {
                        let result = if m.contains("session.logon") {
                            r#"{"apiKey":"bench","authorizedSince":1,"connectedSince":1,"returnRateLimits":false,"serverTime":1,"userDataStream":false}"#
                        } else if m.contains("userDataStream") {
                            r#"{"subscriptionId":0}"#
                        } else {
                            "[]"
                        };
                        let _ = write!(answers, r#"{{"id":{id},"status":200,"result":{result}}}"#);
                    }
                }
                let mut buf = answers.as_bytes().to_vec();
                buf.resize(answers.len() + INPUT_PADDING, b' ');
                now.unix_ms += 1;
                self.session.on_text(
                    &mut buf,
                    answers.len(),
                    now,
                    &mut self.out,
                    &mut self.events,
                );
            }
            if self.session.state() == State::Ready {
                self.out.clear();
                self.events.clear();
                return;
            }
        }
        panic!("the {} session did not get ready", self.venue.name());
    }

    /// A round a second: under both venues' order limits (Deribit's
    /// lowest tier, 5 matching requests a second; Binance's 50 orders in
    /// 10 s), which the sessions keep client-side.
    fn now(&self) -> Now {
        Now {
            unix_ms: T0 + self.k * 1000,
            tsc: self.k,
        }
    }

    /// One order's life (see the module docs): the events it brought.
    pub fn round(&mut self) -> usize {
        self.k += 1;
        let k = self.k;
        let now = self.now();
        let place = Request::Place {
            cid: ClientOrderId(k),
            order: order(self.venue),
        };
        self.session
            .submit(&place, now, &mut self.out)
            .expect("the place is taken");
        let place_id = last_id(&self.out);
        self.out.clear();
        self.events.clear();
        let len = self.texts.write(0, k, place_id);
        self.session.on_text(
            &mut self.texts.buf,
            len,
            now,
            &mut self.out,
            &mut self.events,
        );
        let len = self.texts.write(1, k, 0);
        self.session.on_text(
            &mut self.texts.buf,
            len,
            now,
            &mut self.out,
            &mut self.events,
        );
        self.session
            .submit(
                &Request::Cancel {
                    cid: ClientOrderId(k),
                },
                now,
                &mut self.out,
            )
            .expect("the cancel is taken");
        let cancel_id = last_id(&self.out);
        self.out.clear();
        let len = self.texts.write(2, k, cancel_id);
        self.session.on_text(
            &mut self.texts.buf,
            len,
            now,
            &mut self.out,
            &mut self.events,
        );
        self.events.len()
    }
}

/// The peer: `serde_json` values out, typed structs with owned strings in.
pub struct Serde {
    texts: Texts,
    venue: OrderVenue,
    k: u64,
    next_id: u64,
    /// The events decoded (kept as the session keeps them).
    pub events: Vec<OrderEvent>,
}

#[derive(Deserialize)]
#[allow(dead_code)] // Read as a client reads them: every field it uses.
struct RpcAnswer {
    id: Option<u64>,
    result: Option<serde_json::Value>,
    method: Option<String>,
    params: Option<RpcParams>,
}

#[derive(Deserialize)]
struct RpcParams {
    data: Vec<DeribitTrade>,
}

#[derive(Deserialize)]
struct DeribitOrder {
    order_id: String,
    order_state: String,
    label: String,
    price: f64,
    amount: f64,
    filled_amount: f64,
}

#[derive(Deserialize)]
struct DeribitTrade {
    trade_id: String,
    order_id: String,
    label: String,
    price: f64,
    amount: f64,
    liquidity: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BinanceAnswer {
    id: Option<u64>,
    status: Option<u16>,
    result: Option<BinanceOrder>,
    #[serde(rename = "rateLimits")]
    rate_limits: Option<Vec<BinanceLimit>>,
    event: Option<BinanceReport>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BinanceLimit {
    #[serde(rename = "rateLimitType")]
    kind: String,
    interval: String,
    #[serde(rename = "intervalNum")]
    interval_num: u32,
    limit: u64,
    count: u64,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BinanceOrder {
    #[serde(rename = "orderId")]
    order_id: u64,
    #[serde(rename = "clientOrderId")]
    client_order_id: String,
    #[serde(rename = "origClientOrderId")]
    orig_client_order_id: Option<String>,
    price: String,
    #[serde(rename = "origQty")]
    orig_qty: String,
    #[serde(rename = "executedQty")]
    executed_qty: String,
    status: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BinanceReport {
    c: String,
    x: String,
    i: u64,
    l: String,
    #[serde(rename = "L")]
    last_price: String,
    z: String,
    q: String,
    t: i64,
    m: bool,
}

impl Serde {
    pub fn new(venue: OrderVenue) -> Serde {
        Serde {
            texts: Texts::new(venue),
            venue,
            k: 0,
            next_id: 1,
            events: Vec::with_capacity(64),
        }
    }

    fn request(&mut self, cancel: bool, k: u64) -> String {
        let id = self.next_id;
        self.next_id += 1;
        let v = match (self.venue, cancel) {
            (OrderVenue::Deribit, false) => serde_json::json!({
                "jsonrpc": "2.0", "id": id, "method": "private/buy",
                "params": {"instrument_name": "BTC-PERPETUAL", "amount": 10, "type": "limit",
                    "price": 8900.5, "label": format!("tw-{k}"), "time_in_force": "good_til_cancelled"}
            }),
            (OrderVenue::Deribit, true) => serde_json::json!({
                "jsonrpc": "2.0", "id": id, "method": "private/cancel",
                "params": {"order_id": format!("BTC-{k}")}
            }),
            (OrderVenue::Binance, false) => serde_json::json!({
                "id": id, "method": "order.place",
                "params": {"symbol": "BTCUSDT", "side": "BUY", "type": "LIMIT", "timeInForce": "GTC",
                    "price": "23416.1", "quantity": "0.00847", "newClientOrderId": format!("tw-{k}"),
                    "newOrderRespType": "FULL", "timestamp": T0 + k}
            }),
            (OrderVenue::Binance, true) => serde_json::json!({
                "id": id, "method": "order.cancel",
                "params": {"symbol": "BTCUSDT", "origClientOrderId": format!("tw-{k}"), "timestamp": T0 + k}
            }),
        };
        serde_json::to_string(&v).expect("a value serialises")
    }

    /// `x` at `scale` decimals, as a float-reading client scales it.
    fn scaled(x: f64, scale: i32) -> i64 {
        (x * 10f64.powi(scale)).round() as i64
    }

    fn decode(&mut self, len: usize) {
        let text = &self.texts.buf[..len];
        let event = |kind| OrderEvent {
            cid: None,
            instrument: InstrumentId(0),
            venue_order: tickwire_trade::VenueOrderId::default(),
            kind,
            venue_time_ns: 0,
            sent_tsc: 0,
        };
        use tickwire_trade::OrderKind;
        match self.venue {
            OrderVenue::Deribit => {
                let a: RpcAnswer = serde_json::from_slice(text).expect("valid JSON");
                if let Some(result) = a.result {
                    let order: DeribitOrder = match result.get("order") {
                        Some(o) => serde_json::from_value(o.clone()),
                        None => serde_json::from_value(result),
                    }
                    .expect("an order");
                    let kind = match order.order_state.as_str() {
                        "open" => OrderKind::Accepted {
                            side: Side::Bid,
                            price: Self::scaled(order.price, 1),
                            size: order.amount as i64,
                        },
                        _ => OrderKind::Canceled,
                    };
                    let mut e = event(kind);
                    e.cid = order
                        .label
                        .strip_prefix("tw-")
                        .and_then(|n| n.parse().ok())
                        .map(ClientOrderId);
                    e.venue_order = tickwire_trade::VenueOrderId::new(&order.order_id);
                    let _ = order.filled_amount;
                    self.events.push(e);
                } else if let Some(p) = a.params {
                    for t in p.data {
                        let mut e = event(OrderKind::Filled {
                            price: Self::scaled(t.price, 1),
                            size: t.amount as i64,
                            leaves: 10 - t.amount as i64,
                            trade_id: t.trade_id.len() as u64,
                            maker: t.liquidity == "M",
                        });
                        e.cid = t
                            .label
                            .strip_prefix("tw-")
                            .and_then(|n| n.parse().ok())
                            .map(ClientOrderId);
                        e.venue_order = tickwire_trade::VenueOrderId::new(&t.order_id);
                        self.events.push(e);
                    }
                }
            }
            OrderVenue::Binance => {
                let a: BinanceAnswer = serde_json::from_slice(text).expect("valid JSON");
                let f = |s: &str, scale| Self::scaled(s.parse::<f64>().unwrap_or(0.0), scale);
                if let Some(o) = a.result {
                    let kind = match o.status.as_str() {
                        "NEW" => OrderKind::Accepted {
                            side: Side::Bid,
                            price: f(&o.price, 2),
                            size: f(&o.orig_qty, 5),
                        },
                        _ => OrderKind::Canceled,
                    };
                    let mut e = event(kind);
                    let cid = o
                        .orig_client_order_id
                        .as_deref()
                        .unwrap_or(&o.client_order_id);
                    e.cid = cid
                        .strip_prefix("tw-")
                        .and_then(|n| n.parse().ok())
                        .map(ClientOrderId);
                    e.venue_order = tickwire_trade::VenueOrderId::new(&o.order_id.to_string());
                    self.events.push(e);
                } else if let Some(r) = a.event {
                    let mut e = event(OrderKind::Filled {
                        price: f(&r.last_price, 2),
                        size: f(&r.l, 5),
                        leaves: f(&r.q, 5) - f(&r.z, 5),
                        trade_id: r.t as u64,
                        maker: r.m,
                    });
                    e.cid =
                        r.c.strip_prefix("tw-")
                            .and_then(|n| n.parse().ok())
                            .map(ClientOrderId);
                    e.venue_order = tickwire_trade::VenueOrderId::new(&r.i.to_string());
                    self.events.push(e);
                }
            }
        }
    }

    /// The same round as [`Tickwire::round`].
    pub fn round(&mut self) -> usize {
        self.k += 1;
        let k = self.k;
        self.events.clear();
        let place = self.request(false, k);
        let place_id = self.next_id - 1;
        let len = self.texts.write(0, k, place_id);
        self.decode(len);
        let len = self.texts.write(1, k, 0);
        self.decode(len);
        let cancel = self.request(true, k);
        let cancel_id = self.next_id - 1;
        let len = self.texts.write(2, k, cancel_id);
        self.decode(len);
        std::hint::black_box((place, cancel));
        self.events.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both do the round's work: three events a round (accepted, filled,
    /// cancelled), for the same order.
    #[test]
    fn tickwire_and_the_peer_tell_the_same_events() {
        for venue in OrderVenue::ALL {
            let mut t = Tickwire::new(venue);
            let mut s = Serde::new(venue);
            for _ in 0..50 {
                assert_eq!(t.round(), 3, "{venue:?}");
                assert_eq!(s.round(), 3, "{venue:?}");
                let kinds = |e: &[OrderEvent]| {
                    e.iter()
                        .map(|e| std::mem::discriminant(&e.kind))
                        .collect::<Vec<_>>()
                };
                assert_eq!(kinds(&t.events), kinds(&s.events), "{venue:?}");
                assert_eq!(
                    t.events.iter().map(|e| e.cid).collect::<Vec<_>>(),
                    s.events.iter().map(|e| e.cid).collect::<Vec<_>>()
                );
            }
        }
    }
}
