//! A connection's life ends where the venue says: with `max_lifetime`
//! set, the simulator closes a client that long after its upgrade (close
//! code 1001), and not before; without it, the connection lives on.

use std::time::{Duration, Instant};

use tickwire_net::{
    CloseCode, Config, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect,
    Role, Stamps, TlsConfig,
};
use tickwire_sim::{SimConfig, Simulator, Venue};

/// Notes when the connection opened and how it ended.
#[derive(Default)]
struct Watch {
    opened: Option<Instant>,
    closed: Option<(Instant, Disconnect)>,
}

impl Handler for Watch {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        self.opened = Some(Instant::now());
        conn.send_text(r#"{"method":"SUBSCRIBE","params":["btcusdt@trade"],"id":1}"#)
            .unwrap();
    }

    fn on_message(&mut self, _: &mut Conn<'_>, _: Payload<'_>, _: Stamps) {}

    fn on_close(&mut self, _: ConnId, _: Role, reason: &Disconnect) -> Reconnect {
        self.closed = Some((Instant::now(), reason.clone()));
        Reconnect::No
    }
}

fn watch(simulator: &Simulator, until: impl Fn(&Watch) -> bool) -> Driver<Watch> {
    let mut driver = Driver::new(Config::default(), &TlsConfig::empty(), Watch::default()).unwrap();
    let url = format!("ws://{}/stream", simulator.addr());
    driver.connect(Endpoint::parse(&url).unwrap()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !until(driver.handler()) {
        assert!(Instant::now() < deadline, "not within 60 s");
        driver.poll_timeout(Duration::from_millis(10)).unwrap();
    }
    driver
}

#[test]
fn a_client_is_closed_at_the_end_of_its_life_and_not_before() {
    let life = Duration::from_millis(1500);
    let simulator = Simulator::start(SimConfig {
        rate: 100,
        max_lifetime: Some(life),
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let driver = watch(&simulator, |w| w.closed.is_some());
    let w = driver.handler();
    let (closed, reason) = w.closed.clone().unwrap();
    assert_eq!(
        reason,
        Disconnect::Remote {
            code: Some(CloseCode::GOING_AWAY)
        }
    );
    // The upgrade came before the client saw it open: its life, counted
    // from the upgrade, ends no sooner than `life` after the open.
    let lived = closed - w.opened.unwrap();
    assert!(lived >= life - Duration::from_millis(100), "{lived:?}");
    assert_eq!(simulator.stats().expired_clients, 1);
    simulator.stop();
}

#[test]
fn without_a_lifetime_a_client_lives_on() {
    let simulator = Simulator::start(SimConfig {
        rate: 100,
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    // Open for three times the other test's lifetime: still open.
    let mut driver = watch(&simulator, |w| w.opened.is_some());
    let until = Instant::now() + Duration::from_millis(4500);
    while Instant::now() < until {
        driver.poll_timeout(Duration::from_millis(10)).unwrap();
    }
    assert!(driver.handler().closed.is_none());
    assert_eq!(simulator.stats().expired_clients, 0);
    simulator.stop();
}
