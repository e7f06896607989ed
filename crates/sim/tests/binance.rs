//! Binance's simulator over the wire, where its documentation is stricter
//! than a lenient server would be:
//!
//! - Pings and pongs count toward the incoming-message limit ("A message
//!   is considered: a PING frame, a PONG frame, a JSON controlled
//!   message", Spot "WebSocket Limits": 5 a second; futures 10, counted
//!   the same way here): a client that pings faster is closed, one that
//!   stays under is kept.
//! - USD-M's and COIN-M's depth ids jump (`U > pu + 1`, `pu` the previous
//!   `u`), and a REST snapshot's `lastUpdateId` falls inside the range of
//!   an event of the stream; spot's ids stay back to back.

use std::time::{Duration, Instant};

use crate::util::wait;
use tickwire_net::{
    CloseCode, Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect,
    ResponseHead, Role, Stamps, TlsConfig,
};
use tickwire_sim::{SimConfig, Simulator, Venue};

/// A client: subscribes, sends `burst` pings at once when it opens, then
/// one every `every` (up to `pings` of them) while messages come, and
/// after its last ping asks for its subscriptions: the answer says the
/// server has read every ping before it.
struct Client {
    subscribe: String,
    burst: u32,
    every: Duration,
    pings: u32,
    sent: u32,
    next: Option<Instant>,
    texts: Vec<String>,
    responses: Vec<String>,
    closed: Option<Disconnect>,
}

impl Client {
    fn new(subscribe: &str) -> Client {
        Client {
            subscribe: subscribe.into(),
            burst: 0,
            every: Duration::ZERO,
            pings: 0,
            sent: 0,
            next: None,
            texts: Vec::new(),
            responses: Vec::new(),
            closed: None,
        }
    }

    /// The answer to the request sent after the last ping has come.
    fn answered(&self) -> bool {
        self.texts.iter().any(|t| t.contains(r#""id":99"#))
    }
}

impl Handler for Client {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        conn.send_text(&self.subscribe).unwrap();
        for _ in 0..self.burst {
            conn.send_ping(b"burst").unwrap();
        }
        self.next = Some(Instant::now() + self.every);
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, _: Stamps) {
        self.texts
            .push(payload.as_str().unwrap_or_default().to_owned());
        let now = Instant::now();
        if self.sent < self.pings && self.next.is_some_and(|at| now >= at) {
            conn.send_ping(b"k").unwrap();
            self.sent += 1;
            self.next = Some(now + self.every);
            if self.sent == self.pings {
                conn.send_text(r#"{"method":"LIST_SUBSCRIPTIONS","id":99}"#)
                    .unwrap();
            }
        }
    }

    fn on_response(&mut self, _: ConnId, _: ResponseHead, body: &mut [u8], len: usize) {
        self.responses
            .push(String::from_utf8_lossy(&body[..len]).into_owned());
    }

    fn on_close(&mut self, _: ConnId, _: Role, reason: &Disconnect) -> Reconnect {
        if !matches!(reason, Disconnect::Fetched) {
            self.closed = Some(reason.clone());
        }
        Reconnect::No
    }
}

/// A plain driver for `client` on `path` of `simulator`: unpaced, and
/// sending no pings of its own.
fn connect(simulator: &Simulator, path: &str, client: Client) -> Driver<Client> {
    let config = Config {
        send_rate: None,
        ping_interval: None,
        ..Config::default()
    };
    let mut driver = Driver::new(config, &TlsConfig::empty(), client).unwrap();
    let url = format!("ws://{}{path}", simulator.addr());
    driver.connect(Endpoint::parse(&url).unwrap()).unwrap();
    driver
}

fn simulator(venue: Venue) -> Simulator {
    Simulator::start(SimConfig {
        rate: 200,
        ..SimConfig::new(venue)
    })
    .unwrap()
}

/// The path a client of `venue` gets its streams on.
fn path(venue: Venue) -> &'static str {
    if venue == Venue::BinanceUsdM {
        "/public/ws"
    } else {
        "/ws"
    }
}

fn subscribe(venue: Venue, stream: &str) -> String {
    let symbol = if venue == Venue::BinanceCoinM {
        "btcusd_perp"
    } else {
        "btcusdt"
    };
    format!(r#"{{"method":"SUBSCRIBE","params":["{symbol}@{stream}"],"id":1}}"#)
}

#[test]
fn a_client_that_pings_past_the_limit_is_closed_and_one_under_it_is_kept() {
    for (venue, limit) in [
        (Venue::BinanceSpot, 5),
        (Venue::BinanceUsdM, 10),
        (Venue::BinanceCoinM, 10),
    ] {
        let simulator = simulator(venue);
        // Past it: the subscription and `limit` pings at once.
        let mut client = Client::new(&subscribe(venue, "trade"));
        client.burst = limit;
        let mut driver = connect(&simulator, path(venue), client);
        wait(&mut driver, "the pinging client closed", |c| {
            c.closed.is_some()
        });
        assert_eq!(
            driver.handler().closed,
            Some(Disconnect::Remote {
                code: Some(CloseCode::POLICY_VIOLATION)
            }),
            "{venue}"
        );
        assert_eq!(simulator.stats().too_fast, 1, "{venue}");
        // Under it: the subscription, then a ping every 600 ms (2 and a
        // request in any second; the simulator, which counts them as it
        // reads them, would have to stall for over 2.4 s to see 5) for
        // 4.8 s, and a request after the last.
        let mut client = Client::new(&subscribe(venue, "trade"));
        client.pings = 8;
        client.every = Duration::from_millis(600);
        let mut driver = connect(&simulator, path(venue), client);
        wait(&mut driver, "the answer after the last ping", |c| {
            c.answered() || c.closed.is_some()
        });
        assert_eq!(driver.handler().closed, None, "{venue}");
        assert_eq!(driver.handler().sent, 8, "{venue}");
        assert_eq!(simulator.stats().too_fast, 1, "{venue}: one, the first's");
        simulator.stop();
    }
}

/// `U`, `u` and `pu` (0: none) of a depth event.
fn ids(text: &str) -> Option<(u64, u64, u64)> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    (v["e"] == "depthUpdate").then(|| {
        let id = |k: &str| v[k].as_u64().unwrap_or(0);
        (id("U"), id("u"), id("pu"))
    })
}

#[test]
fn futures_depth_ids_jump_and_a_snapshot_falls_inside_an_event() {
    for venue in [Venue::BinanceUsdM, Venue::BinanceCoinM, Venue::BinanceSpot] {
        let simulator = simulator(venue);
        let client = Client::new(&subscribe(venue, "depth@100ms"));
        let mut driver = connect(&simulator, path(venue), client);
        let depth = |c: &Client| c.texts.iter().filter_map(|t| ids(t)).count();
        wait(&mut driver, "depth events", |c| depth(c) >= 100);
        let rest = match venue {
            Venue::BinanceSpot => "/api/v3/depth?symbol=BTCUSDT&limit=5",
            Venue::BinanceUsdM => "/fapi/v1/depth?symbol=BTCUSDT&limit=5",
            _ => "/dapi/v1/depth?symbol=BTCUSD_PERP&limit=5",
        };
        let url = format!("http://{}{rest}", simulator.addr());
        driver.fetch(Endpoint::parse(&url).unwrap()).unwrap();
        wait(&mut driver, "the snapshot", |c| !c.responses.is_empty());
        let snapshot: serde_json::Value =
            serde_json::from_str(&driver.handler().responses[0]).unwrap();
        let last_update_id = snapshot["lastUpdateId"].as_u64().unwrap();
        // The event that carries the snapshot's state has come before it,
        // or comes after.
        wait(&mut driver, "an event past the snapshot", |c| {
            c.texts
                .iter()
                .filter_map(|t| ids(t))
                .any(|(_, u, _)| u >= last_update_id)
        });
        let events: Vec<(u64, u64, u64)> = driver
            .handler()
            .texts
            .iter()
            .filter_map(|t| ids(t))
            .collect();
        let mut jumps = 0;
        for pair in events.windows(2) {
            let ((_, u, _), (first, last, pu)) = (pair[0], pair[1]);
            assert!(first <= last, "{venue}: {pair:?}");
            if venue == Venue::BinanceSpot {
                assert_eq!((first, pu), (u + 1, 0), "{venue}: {pair:?}");
            } else {
                assert_eq!(pu, u, "{venue}: {pair:?}");
                jumps += usize::from(first > pu + 1);
            }
        }
        if venue != Venue::BinanceSpot {
            assert!(
                jumps * 10 >= (events.len() - 1) * 9,
                "{venue}: {jumps} of {} events jumped",
                events.len() - 1
            );
        }
        assert!(
            events
                .iter()
                .any(|&(first, last, _)| (first..=last).contains(&last_update_id)),
            "{venue}: lastUpdateId {last_update_id} in no event's range"
        );
        simulator.stop();
    }
}
