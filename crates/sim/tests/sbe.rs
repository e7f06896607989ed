//! Binance spot's SBE streams (`binance-spot-sbe`) over the wire:
//!
//! - The upgrade needs an API key in `X-MBX-APIKEY` ("An API Key is
//!   necessary for access", `sbe-market-data-streams.md`): without one it
//!   is refused 400 `No X-MBX-APIKEY header` (what nautilus_trader PR
//!   #4092 saw; Binance does not document the refusal), with any key it
//!   is taken; JSON spot takes an upgrade without.
//! - Requests are answered in JSON text frames and market events come in
//!   binary frames, each one message of the schema (the page), which the
//!   simulator records as sent as it does text.
//! - `serverShutdown` comes as a JSON text frame, then the close.

use std::time::Duration;

use crate::util::wait;
use tickwire_net::{
    CloseCode, Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect,
    Role, Stamps, TlsConfig,
};
use tickwire_sbe::spot_stream::{self, Message};
use tickwire_sim::{Sent, SimConfig, Simulator, Venue, VenueFault};

/// A client that subscribes on open and keeps every message, text and
/// binary apart, in order.
#[derive(Default)]
struct Client {
    subscribe: String,
    opened: bool,
    /// Every message: `Ok` text, `Err` binary.
    messages: Vec<Result<String, Vec<u8>>>,
    closed: Option<Disconnect>,
}

impl Client {
    fn texts(&self) -> impl Iterator<Item = &str> {
        self.messages
            .iter()
            .filter_map(|m| m.as_ref().ok())
            .map(String::as_str)
    }

    fn binaries(&self) -> impl Iterator<Item = &[u8]> {
        self.messages
            .iter()
            .filter_map(|m| m.as_ref().err())
            .map(Vec::as_slice)
    }
}

impl Handler for Client {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        self.opened = true;
        conn.send_text(&self.subscribe).unwrap();
    }

    fn on_message(&mut self, _: &mut Conn<'_>, payload: Payload<'_>, _: Stamps) {
        self.messages.push(match payload.as_str() {
            Some(text) => Ok(text.to_owned()),
            None => Err(payload.as_bytes().to_vec()),
        });
    }

    fn on_close(&mut self, _: ConnId, _: Role, reason: &Disconnect) -> Reconnect {
        self.closed = Some(reason.clone());
        Reconnect::No
    }
}

const SUBSCRIBE: &str = r#"{"method":"SUBSCRIBE","params":["btcusdt@trade","btcusdt@bestBidAsk","btcusdt@depth","btcusdt@depth20"],"id":1}"#;

fn simulator(venue: Venue) -> Simulator {
    Simulator::start(SimConfig {
        rate: 500,
        keep_sent: true,
        shutdown_lead: Duration::from_millis(300),
        ..SimConfig::new(venue)
    })
    .unwrap()
}

/// A driver connecting `client` to `/ws` of `simulator`, with `headers`
/// on the upgrade.
fn connect(simulator: &Simulator, headers: &[(&str, &str)], subscribe: &str) -> Driver<Client> {
    let config = Config {
        send_rate: None,
        ping_interval: None,
        ..Config::default()
    };
    let client = Client {
        subscribe: subscribe.into(),
        ..Client::default()
    };
    let mut driver = Driver::new(config, &TlsConfig::empty(), client).unwrap();
    let mut endpoint = Endpoint::parse(&format!("ws://{}/ws", simulator.addr())).unwrap();
    for (name, value) in headers {
        endpoint = endpoint.header(name, value).unwrap();
    }
    driver.connect(endpoint).unwrap();
    driver
}

#[test]
fn the_upgrade_is_refused_without_an_api_key_and_taken_with_one() {
    let sbe = simulator(Venue::BinanceSpotSbe);
    for headers in [&[][..], &[("X-MBX-APIKEY", "")][..]] {
        let mut driver = connect(&sbe, headers, SUBSCRIBE);
        wait(&mut driver, "the refusal", |c| c.closed.is_some());
        let c = driver.handler();
        assert!(!c.opened, "{headers:?}");
        match &c.closed {
            Some(Disconnect::Refused { status, body }) => {
                assert_eq!(
                    (*status, body.as_str()),
                    (400, "No X-MBX-APIKEY header"),
                    "{headers:?}"
                );
            }
            other => panic!("{headers:?}: {other:?}"),
        }
    }
    assert_eq!(sbe.stats().clients, 0, "no client was accepted");

    // Any key, its header's name in any case: open, answered in text,
    // events in binary.
    let mut driver = connect(&sbe, &[("x-mbx-apikey", "any-ed25519-key-id")], SUBSCRIBE);
    wait(&mut driver, "SBE events", |c| {
        c.closed.is_some() || c.binaries().count() >= 50
    });
    let c = driver.handler();
    assert!(c.opened && c.closed.is_none(), "{:?}", c.closed);
    assert_eq!(
        c.texts().collect::<Vec<_>>(),
        [r#"{"result":null,"id":1}"#],
        "the reply alone is text"
    );
    let mut templates = [0usize; 4];
    for frame in c.binaries() {
        let message = spot_stream::decode(frame).unwrap();
        let t = match message {
            Message::Trades(m) => {
                assert_eq!(m.symbol(), b"BTCUSDT");
                0
            }
            Message::BestBidAsk(_) => 1,
            Message::DepthSnapshot(_) => 2,
            Message::DepthDiff(_) => 3,
            Message::Unknown { template_id } => panic!("template {template_id}"),
        };
        templates[t] += 1;
    }
    assert!(templates.iter().all(|&n| n > 0), "{templates:?}");
    sbe.stop();

    // JSON spot: no key, no refusal, text events.
    let json = simulator(Venue::BinanceSpot);
    let mut driver = connect(
        &json,
        &[],
        r#"{"method":"SUBSCRIBE","params":["btcusdt@depth"],"id":1}"#,
    );
    wait(&mut driver, "JSON events", |c| {
        c.closed.is_some() || c.messages.len() >= 20
    });
    let c = driver.handler();
    assert!(c.opened && c.closed.is_none(), "{:?}", c.closed);
    assert_eq!(c.binaries().count(), 0);
    assert!(
        c.texts()
            .skip(1)
            .all(|t| t.contains(r#""e":"depthUpdate""#))
    );
    json.stop();
}

/// What a trade's mantissas would be recorded as, for each way the
/// simulator may have written them (at the instrument's scales, or 1 or 2
/// decimals finer: divided by 1, 10 or 100, where that is exact). A trade
/// does not carry the update id that decides it; the unit tests beside the
/// writer check each step's exponents exactly.
fn finer<T>(price: i64, qty: i64, sent: impl Fn(i64) -> T) -> impl Iterator<Item = T> {
    [1, 10, 100]
        .into_iter()
        .filter(move |f| price % f == 0 && qty % f == 0)
        .map(sent)
}

/// What went out in binary frames is recorded as sent, as text is: every
/// trade and best bid/ask the client decoded is in [`Simulator::sent`],
/// and the bytes counted cover the frames' payloads.
#[test]
fn binary_events_are_recorded_and_counted_as_sent() {
    let sbe = simulator(Venue::BinanceSpotSbe);
    let mut driver = connect(&sbe, &[("X-MBX-APIKEY", "k")], SUBSCRIBE);
    wait(&mut driver, "trades and quotes", |c| {
        let decoded: Vec<Message<'_>> = c
            .binaries()
            .map(|b| spot_stream::decode(b).unwrap())
            .collect();
        c.closed.is_some()
            || (decoded
                .iter()
                .filter(|m| matches!(m, Message::Trades(_)))
                .count()
                >= 10
                && decoded
                    .iter()
                    .filter(|m| matches!(m, Message::BestBidAsk(_)))
                    .count()
                    >= 10)
    });
    // Once paused, everything recorded has been written; what the client
    // has read was written, so recorded.
    sbe.pause(true);
    let sent = sbe.sent();
    let c = driver.handler();
    assert!(c.closed.is_none(), "{:?}", c.closed);
    let (mut trades, mut quotes, mut bytes) = (0, 0, 0);
    for frame in c.binaries() {
        bytes += frame.len() as u64;
        match spot_stream::decode(frame).unwrap() {
            Message::Trades(m) => {
                for t in m.trades() {
                    // Written 0, 1 or 2 decimals finer than the market's
                    // integers (the simulator's exponents vary by step).
                    let found = finer(t.price, t.qty, |f| Sent::Trade {
                        instrument: 0,
                        id: t.id as u64,
                        price: t.price / f,
                        size: t.qty / f,
                        buyer_aggressor: !t.is_buyer_maker,
                    })
                    .any(|want| sent.contains(&want));
                    assert!(found, "{t:?}");
                    trades += 1;
                }
            }
            Message::BestBidAsk(m) => {
                let h = m.head();
                // The simulator's rule (its `Frames::finer`): decimals finer
                // by the update id modulo 3; the exponents say so too.
                let f = 10i64.pow((h.book_update_id % 3) as u32);
                let values = [h.bid.price, h.bid.qty, h.ask.price, h.ask.qty];
                assert!(values.iter().all(|v| v % f == 0), "{h:?}");
                let want = Sent::Quote {
                    instrument: 0,
                    update_id: h.book_update_id as u64,
                    bid: (h.bid.price / f, h.bid.qty / f),
                    ask: (h.ask.price / f, h.ask.qty / f),
                };
                assert!(sent.contains(&want), "{want:?}");
                quotes += 1;
            }
            _ => {}
        }
    }
    assert!(trades >= 10 && quotes >= 10);
    let stats = sbe.stats();
    assert!(
        stats.bytes >= bytes,
        "{} counted, {bytes} received",
        stats.bytes
    );
    assert!(stats.messages >= c.messages.len() as u64);
    sbe.stop();
}

/// `serverShutdown` reaches an SBE client as a JSON text frame among the
/// binary events (the bare event: the SBE page shows no other form), and
/// the close (1001) follows.
#[test]
fn the_shutdown_notice_arrives_as_text() {
    let sbe = simulator(Venue::BinanceSpotSbe);
    let mut driver = connect(&sbe, &[("X-MBX-APIKEY", "k")], SUBSCRIBE);
    wait(&mut driver, "SBE events", |c| {
        c.closed.is_some() || c.binaries().count() >= 10
    });
    assert!(sbe.fault(0, VenueFault::ShutdownNotice));
    wait(&mut driver, "the close", |c| c.closed.is_some());
    let c = driver.handler();
    let notices: Vec<&str> = c.texts().filter(|t| t.contains("serverShutdown")).collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    let v: serde_json::Value = serde_json::from_str(notices[0]).unwrap();
    assert_eq!(v["e"], "serverShutdown");
    assert!(v["E"].is_u64() && v.as_object().unwrap().len() == 2, "{v}");
    assert_eq!(
        c.closed,
        Some(Disconnect::Remote {
            code: Some(CloseCode::GOING_AWAY)
        })
    );
    sbe.stop();
}
