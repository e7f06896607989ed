//! An embedding bot hears, typed, that a venue it asked for is
//! unreachable and why (a port where nothing listens, a certificate its
//! trust anchors do not vouch for), or that it connected; a venue that
//! never connected is not counted as reconnecting; and past a deadline
//! with nothing connected, `poll` says so with an error naming each venue.
//! Every server is on loopback, started by the test.

use std::time::{Duration, Instant};

use tickwire_feed::live::{Disconnect, TlsErrorKind, VenueStats};
use tickwire_feed::{
    Connectivity, Feed, FeedBuilder, NeverConnected, OnEvent, Update, VenueStatus,
};
use tickwire_sim::{self as sim, SimConfig, SimInstrument, Simulator};
use tickwire_venues::Venue;

/// Why a venue was unreachable, as a bot would sort it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Refused,
    Certificate,
    Other,
}

/// What the bot was told, in order.
#[derive(Debug, PartialEq, Eq)]
enum Told {
    Connected {
        venue: String,
    },
    Unreachable {
        venue: String,
        url: String,
        why: Why,
        cause: String,
    },
}

#[derive(Default)]
struct Bot {
    told: Vec<Told>,
}

impl OnEvent for Bot {
    fn on_update(&mut self, _update: &Update<'_>) {}

    fn on_connectivity(&mut self, news: &Connectivity<'_>) {
        self.told.push(match *news {
            Connectivity::Connected { venue, .. } => Told::Connected {
                venue: venue.into(),
            },
            Connectivity::Unreachable {
                venue, url, cause, ..
            } => Told::Unreachable {
                venue: venue.into(),
                url: url.into(),
                why: match cause {
                    Disconnect::Io(std::io::ErrorKind::ConnectionRefused) => Why::Refused,
                    Disconnect::Tls(e) if e.kind() == TlsErrorKind::Certificate => Why::Certificate,
                    _ => Why::Other,
                },
                cause: cause.to_string(),
            },
            _ => return,
        });
    }
}

/// Polls until `done` (a generous deadline only, so a broken feed fails
/// the test rather than hang it).
fn poll_until(feed: &mut Feed<Bot>, what: &str, mut done: impl FnMut(&Feed<Bot>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(feed) {
        assert!(
            Instant::now() < deadline,
            "never: {what}; told {:?}",
            feed.handler().told
        );
        feed.poll().unwrap();
    }
}

/// A loopback port nothing listens on (it was free a moment ago).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn closed_port_feed(port: u16) -> FeedBuilder {
    FeedBuilder::from_toml(&format!(
        "[[venue]]\nname = \"closed\"\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n\
         endpoint = \"ws://127.0.0.1:{port}\"\n"
    ))
    .unwrap()
}

/// What `of` reads of the feed's one venue's stats.
fn of_venue<T>(feed: &Feed<Bot>, of: impl Fn(&VenueStats) -> T) -> T {
    of(&feed.stats().venues[0])
}

/// A counter of the feed's one venue.
fn count(feed: &Feed<Bot>, of: fn(&VenueStats) -> &std::sync::atomic::AtomicU64) -> u64 {
    tickwire_feed::live::FeedStats::get(of(&feed.stats().venues[0]))
}

#[test]
fn a_port_where_nothing_listens_is_told_unreachable_once_and_never_counted_a_reconnect() {
    let port = closed_port();
    let mut feed = closed_port_feed(port).build_with(Bot::default()).unwrap();
    // Three refused attempts: the first is told, the others only counted.
    poll_until(&mut feed, "three refused attempts", |f| {
        count(f, |v| &v.connect_failures) >= 3
    });
    let told = &feed.handler().told;
    assert_eq!(told.len(), 1, "{told:?}");
    let Told::Unreachable {
        venue,
        url,
        why,
        cause,
    } = &told[0]
    else {
        panic!("{told:?}");
    };
    assert_eq!((venue.as_str(), *why), ("closed", Why::Refused), "{cause}");
    assert!(url.starts_with(&format!("ws://127.0.0.1:{port}/")), "{url}");
    assert_eq!(cause, "socket error: connection refused");
    // Not one reconnect: nothing ever connected.
    assert_eq!(count(&feed, |v| &v.reconnects), 0);
    assert_eq!(count(&feed, |v| &v.connections), 0);
    assert_eq!(
        of_venue(&feed, VenueStats::status),
        VenueStatus::NeverConnected
    );
    let line = of_venue(&feed, VenueStats::line);
    assert!(
        line.contains("NEVER CONNECTED (") && !line.contains("reconnects"),
        "{line}"
    );
}

#[test]
fn a_certificate_the_trust_anchors_do_not_vouch_for_is_told_with_its_typed_cause() {
    let (tls, _ca) = sim::self_signed().unwrap();
    let simulator = Simulator::start(SimConfig {
        tls: Some(tls),
        ..SimConfig::default()
    })
    .unwrap();
    let port = simulator.addr().port();
    // No CA file: the simulator's private CA is not trusted.
    let mut feed = FeedBuilder::from_toml(&format!(
        "[[venue]]\nname = \"sim\"\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT:2:5:100\"]\n\
         endpoint = \"wss://localhost:{port}\"\nrest = \"https://localhost:{port}\"\n"
    ))
    .unwrap()
    .build_with(Bot::default())
    .unwrap();
    poll_until(&mut feed, "the certificate failure told", |f| {
        !f.handler().told.is_empty()
    });
    let told = &feed.handler().told;
    match &told[0] {
        Told::Unreachable {
            venue, why, cause, ..
        } => {
            assert_eq!((venue.as_str(), *why), ("sim", Why::Certificate), "{cause}");
            assert!(cause.contains("invalid peer certificate"), "{cause}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        of_venue(&feed, VenueStats::status),
        VenueStatus::NeverConnected
    );
    assert_eq!(count(&feed, |v| &v.reconnects), 0);
    drop(feed);
    simulator.stop();
}

#[test]
fn a_venue_that_connects_is_told_connected_once() {
    let symbol = SimInstrument::pair(Venue::Okx)[0].symbol.clone();
    let mut feed = Feed::builder()
        .simulated(true)
        .venue("okx", &[&format!("{symbol}:10")])
        .build_with(Bot::default())
        .unwrap();
    poll_until(&mut feed, "the venue's book valid", |f| {
        tickwire_feed::live::FeedStats::get(&f.stats().books_valid) == 1
    });
    assert_eq!(
        feed.handler().told,
        vec![Told::Connected {
            venue: "okx".into()
        }]
    );
    assert_eq!(of_venue(&feed, VenueStats::status), VenueStatus::Connected);
    assert_eq!(count(&feed, |v| &v.connections), 1);
    assert_eq!(count(&feed, |v| &v.connect_failures), 0);
}

#[test]
fn past_its_connect_deadline_with_nothing_connected_poll_says_which_venue_and_why() {
    let port = closed_port();
    let mut feed = closed_port_feed(port)
        .connect_deadline(Duration::from_millis(500))
        .build_with(Bot::default())
        .unwrap();
    // The feed's own deadline is the event; this one only stops a broken
    // feed from hanging the test.
    let deadline = Instant::now() + Duration::from_secs(60);
    let e = loop {
        assert!(Instant::now() < deadline, "poll never failed");
        if let Err(e) = feed.poll() {
            break e;
        }
    };
    assert_eq!(e.kind(), std::io::ErrorKind::NotConnected, "{e}");
    let never = e
        .get_ref()
        .and_then(|e| e.downcast_ref::<NeverConnected>())
        .unwrap_or_else(|| panic!("not a NeverConnected: {e}"));
    assert_eq!(never.waited, Duration::from_millis(500));
    assert_eq!(never.venues.len(), 1, "{never:?}");
    assert_eq!(never.venues[0].0, "closed");
    // The newest failure, whatever the attempts had reached by then.
    let last = of_venue(&feed, |v| {
        v.last_failure().map(|(c, _)| c).unwrap_or_default()
    });
    assert_eq!(never.venues[0].1, last);
    assert!(
        e.to_string()
            .starts_with("no venue connected in 0.5 s: venue closed never connected"),
        "{e}"
    );
}
