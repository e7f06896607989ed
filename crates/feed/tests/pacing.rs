//! Subscriptions no faster than the venue takes them. Binance spot closes
//! a connection that sends more than 5 messages in a second; the
//! simulator does too. A feed of 1000 streams (10 `SUBSCRIBE` frames of
//! 100) paces them from its plan and is never closed; the same 10 frames
//! sent back to back are.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use tickwire_feed::live::{Feed, FeedStats, Sinks, VenueSetup};
use tickwire_feed::replay::Venue;
use tickwire_feed::sink;
use tickwire_net::{
    CloseCode, Config as NetConfig, Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload,
    Reconnect, Role, Stamps, TlsConfig,
};
use tickwire_sim::{SimConfig, SimInstrument, Simulator};
use tickwire_tsc::{HistogramConfig, Metrics};
use tickwire_venues::InstrumentSpec;
use tickwire_venues::binance::Market;
use tickwire_venues::plan::{self, Channels, ConnectionPlan};

const INSTRUMENTS: usize = 500;

/// Trades and quotes of `INSTRUMENTS` symbols: 1000 streams, and their
/// one connection's plan.
fn market() -> (Simulator, Vec<InstrumentSpec>, ConnectionPlan) {
    let instruments: Vec<SimInstrument> = (0..INSTRUMENTS)
        .map(|n| SimInstrument {
            symbol: format!("P{n:03}USDT"),
            levels: 20,
            ..SimInstrument::btcusdt()
        })
        .collect();
    let specs: Vec<InstrumentSpec> = instruments
        .iter()
        .map(|i| InstrumentSpec::new(&i.symbol, i.price_scale, i.size_scale, 0))
        .collect();
    let simulator = Simulator::start(SimConfig {
        tls: None,
        rate: 5000,
        instruments,
        ..SimConfig::new(Venue::BinanceSpot)
    })
    .unwrap();
    let mut plans = plan::binance::plan(Market::Spot, &specs, trades_and_quotes()).unwrap();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].subscribe.len(), 10, "1000 streams, 100 a frame");
    (simulator, specs, plans.remove(0))
}

fn trades_and_quotes() -> Channels {
    Channels {
        books: false,
        ..Channels::default()
    }
}

#[test]
fn a_thousand_streams_are_subscribed_without_a_close() {
    let (simulator, specs, _) = market();
    let (queue, events) = sink::queue(1 << 20);
    let mut feed = Feed::builder()
        .check_instruments(false)
        .setup({
            let mut s = VenueSetup::new("binance-spot", Venue::BinanceSpot, specs);
            s.channels = trades_and_quotes();
            s.endpoint = Some(format!("ws://{}", simulator.addr()));
            s
        })
        .net(NetConfig::default())
        .tls(TlsConfig::empty())
        .metrics(Metrics::new(HistogramConfig::default()))
        .sinks(Sinks::default().with_queue(queue))
        .build()
        .unwrap();
    let stats = feed.stats();
    // Every instrument's stream flowing: the last frame was taken too.
    let mut heard = HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while heard.len() < INSTRUMENTS {
        assert!(
            Instant::now() < deadline,
            "{} of {INSTRUMENTS} instruments heard; reconnects {}, the simulator: {:?}",
            heard.len(),
            FeedStats::get(&stats.reconnects),
            simulator.stats()
        );
        feed.poll().unwrap();
        heard.extend(events.try_iter().map(|e| e.instrument));
    }
    assert_eq!(FeedStats::get(&stats.reconnects), 0);
    let sim = simulator.stats();
    assert_eq!((sim.too_fast, sim.kicked_clients, sim.clients), (0, 0, 1));
    drop(feed);
    simulator.stop();
}

/// Sends a plan's frames on open, all at once, and notes how it ended.
struct Hasty {
    frames: Vec<String>,
    closed: Option<Disconnect>,
}

impl Handler for Hasty {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        for f in &self.frames {
            conn.send_text(f).unwrap();
        }
    }

    fn on_message(&mut self, _: &mut Conn<'_>, _: Payload<'_>, _: Stamps) {}

    fn on_close(&mut self, _: ConnId, _: Role, reason: &Disconnect) -> Reconnect {
        self.closed = Some(reason.clone());
        Reconnect::No
    }
}

#[test]
fn the_same_frames_sent_back_to_back_are_closed_as_binance_closes_them() {
    let (simulator, _, plan) = market();
    let hasty = Hasty {
        frames: plan.subscribe,
        closed: None,
    };
    let net = NetConfig {
        send_rate: None,
        ..NetConfig::default()
    };
    let mut driver = Driver::new(net, &TlsConfig::empty(), hasty).unwrap();
    let url = format!("ws://{}/stream", simulator.addr());
    driver.connect(Endpoint::parse(&url).unwrap()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while driver.handler().closed.is_none() {
        assert!(Instant::now() < deadline, "never closed");
        driver.poll_timeout(Duration::from_millis(10)).unwrap();
    }
    // Closed by the venue: its close frame, or (the frames it had not
    // read yet still in its socket) a reset that overtook it.
    let closed = driver.handler().closed.clone().unwrap();
    assert!(
        matches!(
            closed,
            Disconnect::Remote {
                code: Some(CloseCode::POLICY_VIOLATION)
            } | Disconnect::Io(std::io::ErrorKind::ConnectionReset)
        ),
        "{closed:?}"
    );
    assert_eq!(simulator.stats().too_fast, 1);
    simulator.stop();
}
