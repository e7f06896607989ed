//! Each venue with order entry end to end (Deribit's JSON-RPC session,
//! Binance spot's WebSocket API session) on the feed, against its
//! simulator's private API (the matching engine behind it): market data
//! and orders from the same simulator, each through a proxy of its own
//! that can cut it.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use tickwire_feed::live::{Feed, VenueSetup};
use tickwire_feed::{KillSwitch, TradeSetup};
use tickwire_net::TlsConfig;
use tickwire_sim::{
    DeribitPrivate, OrderCredits, SimConfig, SimInstrument, SimKey, Simulator, Venue,
};
use tickwire_testkit::proxy::Proxy;
use tickwire_trade::{Credentials, OrderKind, Reject, State};
use tickwire_venues::InstrumentSpec;

use super::bot::Bot;

/// A throw-away secret, new to each test.
fn throw_away() -> String {
    let r = RandomState::new();
    format!("{:016x}{:016x}", r.hash_one(1u8), r.hash_one(2u8))
}

struct Rig {
    sim: Simulator,
    /// The API key's secret the simulator was given.
    secret: String,
    market: Proxy,
    orders: Proxy,
    feed: Option<Feed<Bot>>,
}

struct Options {
    venue: Venue,
    /// Log in with the simulator's secret (else another).
    good_secret: bool,
    kill: KillSwitch,
    bot: Bot,
    private: DeribitPrivate,
    recording: Option<tickwire_feed::recording::Writer>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            venue: Venue::Deribit,
            good_secret: true,
            kill: KillSwitch::default(),
            bot: Bot::default(),
            private: DeribitPrivate::default(),
            recording: None,
        }
    }
}

impl Rig {
    fn start(o: Options) -> Rig {
        let (tls, ca) = tickwire_sim::self_signed().unwrap();
        let venue = o.venue;
        let instrument = SimInstrument::pair(venue).remove(0);
        let secret = throw_away();
        let sim = Simulator::start(SimConfig {
            tls: Some(tls),
            instruments: vec![instrument.clone()],
            rate: 300,
            keys: vec![SimKey::hmac("bot", secret.clone())],
            deribit: o.private,
            ..SimConfig::new(venue)
        })
        .unwrap();
        let market = Proxy::start(sim.addr()).unwrap();
        let orders = Proxy::start(sim.addr()).unwrap();
        let mut trust = TlsConfig::empty();
        trust.add_ca_pem(ca.as_bytes()).unwrap();
        let (ps, ss) = venue.default_scales();
        let spec = InstrumentSpec::new(
            &instrument.symbol,
            ps.max(instrument.price_scale),
            ss.max(instrument.size_scale),
            10,
        );
        let size_unit = 10i64.pow(u32::from(spec.size_scale));
        let mut setup = VenueSetup::new(venue.name(), venue, vec![spec]);
        setup.endpoint = Some(format!("wss://localhost:{}", market.addr().port()));
        setup.rest = Some(format!("https://localhost:{}", market.addr().port()));
        let secret_kept = secret.clone();
        let used = if o.good_secret { secret } else { throw_away() };
        let trade = TradeSetup::new(Credentials::hmac("bot", used.as_bytes()), "tw1")
            .endpoint(&format!("wss://localhost:{}", orders.addr().port()))
            .kill(o.kill);
        let mut net = tickwire_net::Config::default();
        net.backoff.initial = Duration::from_millis(50);
        net.backoff.max = Duration::from_millis(200);
        let bot = Bot {
            size: match venue {
                // BTC-PERPETUAL trades in 10 USD contracts.
                Venue::Deribit => 10 * size_unit,
                // 0.001 BTC.
                _ => size_unit / 1000,
            },
            away: 1000,
            ..o.bot
        };
        let mut sinks = tickwire_feed::live::Sinks::default();
        sinks.recording = o.recording;
        let feed = Feed::builder()
            .check_instruments(false)
            .sinks(sinks)
            .setup(setup)
            .tls(trust)
            .net(net)
            .trade(venue.name(), trade)
            .build_with(bot)
            .unwrap();
        Rig {
            sim,
            secret: secret_kept,
            market,
            orders,
            feed: Some(feed),
        }
    }

    fn feed(&mut self) -> &mut Feed<Bot> {
        self.feed.as_mut().unwrap()
    }

    fn bot(&self) -> &Bot {
        self.feed.as_ref().unwrap().handler()
    }

    fn until(&mut self, what: &str, mut done: impl FnMut(&Rig) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(self) {
            if Instant::now() >= deadline {
                let b = self.bot();
                let failure = self.feed.as_ref().unwrap().stats().venues[0].last_failure();
                panic!(
                    "never: {what} (acks {} cancels {} state {:?} open {} connections {} \
                     simulator's orders {:?} failure {failure:?})",
                    b.acks,
                    b.cancels,
                    b.state,
                    b.open,
                    self.orders.accepted(),
                    self.sim.open_orders(),
                );
            }
            self.feed().poll().unwrap();
        }
    }

    fn run_for(&mut self, time: Duration) {
        let end = Instant::now() + time;
        while Instant::now() < end {
            self.feed().poll().unwrap();
        }
    }
}

/// The venues whose order entry is built in.
const VENUES: [Venue; 2] = [Venue::Deribit, Venue::BinanceSpot];

#[test]
fn orders_rest_in_the_simulator_and_the_kill_switch_cancels_them_at_shutdown() {
    for venue in VENUES {
        let mut rig = Rig::start(Options {
            venue,
            bot: Bot {
                burst: 3,
                ..Bot::default()
            },
            ..Options::default()
        });
        rig.until("three orders acknowledged", |r| r.bot().acks >= 3);
        let acks: Vec<_> = rig
            .bot()
            .orders
            .iter()
            .filter(|e| matches!(e.kind, OrderKind::Accepted { .. }))
            .collect();
        assert!(
            acks.iter().all(|e| e.sent_tsc != 0 && e.cid.is_some()),
            "{venue}"
        );
        assert_eq!(rig.sim.open_orders().len(), 3, "{venue}");
        let bot = rig
            .feed
            .take()
            .unwrap()
            .into_handler(Duration::from_secs(3));
        assert!(
            bot.cancels >= 3,
            "{venue}: the cancels reached the bot: {}",
            bot.cancels
        );
        assert!(
            rig.sim.open_orders().is_empty(),
            "{venue}: {:?}",
            rig.sim.open_orders()
        );
    }
}

#[test]
fn a_login_refused_is_said_with_the_venues_code_and_not_retried() {
    for (venue, code) in [(Venue::Deribit, "13004"), (Venue::BinanceSpot, "-10")] {
        let mut rig = Rig::start(Options {
            venue,
            good_secret: false,
            bot: Bot {
                keep_one: true,
                ..Bot::default()
            },
            ..Options::default()
        });
        rig.until("refused", |r| {
            r.feed.as_ref().unwrap().stats().venues[0]
                .last_failure()
                .is_some_and(|(f, _)| f.contains("refused the trading session"))
        });
        rig.run_for(Duration::from_secs(2));
        let (said, _) = rig.feed().stats().venues[0].last_failure().unwrap();
        assert!(
            said.contains(&format!("its code {code}")),
            "{venue}: {said}"
        );
        assert_eq!(
            rig.orders.accepted(),
            1,
            "{venue}: one connection, not retried"
        );
        assert!(rig.bot().placed.is_empty(), "{venue}");
        assert!(
            rig.bot()
                .refused_at_once
                .iter()
                .all(|r| *r == Reject::NotReady),
            "{venue}"
        );
    }
}

#[test]
fn deribit_cancels_on_disconnect_and_the_session_comes_back() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            burst: 2,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("two orders working", |r| r.bot().acks >= 2);
    assert_eq!(rig.sim.open_orders().len(), 2);
    // The trading connection is cut and kept down: the venue's
    // cancel-on-disconnect cancels them, with no word from the feed.
    rig.orders.refuse_for(Duration::from_secs(1));
    rig.orders.reset_all();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !rig.sim.open_orders().is_empty() {
        assert!(Instant::now() < deadline, "the simulator never cancelled");
        rig.feed().poll().unwrap();
    }
    rig.until("ready again", |r| {
        r.orders.accepted() >= 2 && r.bot().state == Some(State::Ready)
    });
}

#[test]
fn binance_has_no_cancel_on_disconnect_so_the_kill_switch_cancels_after_the_reconnect() {
    let mut rig = Rig::start(Options {
        venue: Venue::BinanceSpot,
        bot: Bot {
            burst: 2,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("two orders working", |r| r.bot().acks >= 2);
    rig.orders.reset_all();
    rig.until("reconnected and every order cancelled", |r| {
        r.orders.accepted() >= 2 && r.sim.open_orders().is_empty()
    });
}

#[test]
fn after_a_reconnect_the_order_is_found_not_placed_again() {
    for venue in VENUES {
        let mut kill = KillSwitch::default();
        kill.on_session_loss = false;
        let mut rig = Rig::start(Options {
            venue,
            kill,
            bot: Bot {
                keep_one: true,
                ..Bot::default()
            },
            ..Options::default()
        });
        rig.until("one order working", |r| r.bot().acks >= 1);
        rig.orders.reset_all();
        rig.until("reconnected and ready", |r| {
            r.orders.accepted() >= 2 && r.bot().state == Some(State::Ready)
        });
        rig.run_for(Duration::from_secs(1));
        let open = rig.sim.open_orders();
        assert_eq!(open.len(), 1, "{venue}: {open:?}");
        assert_eq!(
            rig.bot().placed.len(),
            1,
            "{venue}: placed once: {:?}",
            rig.bot().placed
        );
        assert_eq!(rig.bot().open, 1, "{venue}: the session found it");
    }
}

#[test]
fn a_deribit_token_refresh_keeps_orders_flowing() {
    let private = DeribitPrivate {
        token_lifetime: Duration::from_secs(2),
        // Room above the session's own credit limit: this test is about
        // the refresh (the simulator counts credits on its own clock, when
        // it reads a request, and may lag the session's count by one).
        order_credits: OrderCredits {
            max: 40_000,
            refill: 10_000,
            ..OrderCredits::default()
        },
    };
    let mut rig = Rig::start(Options {
        private,
        bot: Bot {
            cycle: true,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("an order cycled", |r| r.bot().cancels >= 1);
    // Past two lifetimes of the first token.
    rig.run_for(Duration::from_secs(5));
    let cancels = rig.bot().cancels;
    rig.until("orders after the refreshes", |r| {
        r.bot().cancels >= cancels + 2
    });
    let failure = rig.feed().stats().venues[0].last_failure();
    assert_eq!(
        rig.orders.accepted(),
        1,
        "refreshed on the same connection: {failure:?}"
    );
}

#[test]
fn rate_limit_pushback_is_a_typed_event() {
    // Past Deribit's 20-order burst, and Binance's 50 orders in 10 s.
    for (venue, burst) in [(Venue::Deribit, 40), (Venue::BinanceSpot, 60)] {
        let mut rig = Rig::start(Options {
            venue,
            bot: Bot {
                burst,
                ..Bot::default()
            },
            ..Options::default()
        });
        rig.until("every order answered", |r| {
            r.bot()
                .orders
                .iter()
                .filter(|e| {
                    matches!(
                        e.kind,
                        OrderKind::Accepted { .. } | OrderKind::Rejected { .. }
                    )
                })
                .count()
                >= burst
        });
        let limited = rig
            .bot()
            .orders
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    OrderKind::Rejected {
                        reason: Reject::RateLimited { .. } | Reject::VenueRateLimited { .. }
                    }
                )
            })
            .count();
        assert!(limited > 0, "{venue}: {:?}", rig.bot().orders);
        assert_eq!(
            rig.sim.open_orders().len() + limited,
            burst,
            "{venue}: every order either rests or was refused, once"
        );
    }
}

#[test]
fn the_order_path_allocates_nothing_once_warm() {
    for venue in VENUES {
        let mut rig = Rig::start(Options {
            venue,
            bot: Bot {
                cycle: true,
                placed: Vec::with_capacity(16),
                refused_at_once: Vec::with_capacity(16),
                orders: Vec::with_capacity(16),
                ..Bot::default()
            },
            ..Options::default()
        });
        rig.until("warm: 10 orders placed and cancelled", |r| {
            r.bot().cancels >= 10
        });
        let mut disturbed = 0;
        loop {
            let (before, connections) = (rig.bot().cancels, rig.orders.accepted());
            let (_, allocations) = tickwire_testkit::allocations(|| {
                rig.until("10 more", |r| r.bot().cancels >= before + 10);
            });
            if rig.orders.accepted() != connections {
                disturbed += 1;
                assert!(disturbed < 3, "{venue}: reconnects in every window");
                continue;
            }
            assert_eq!(
                allocations, 0,
                "{venue}: the order path allocated while warm"
            );
            break;
        }
    }
}

#[test]
fn losing_the_market_data_cancels_every_order() {
    for venue in VENUES {
        let mut kill = KillSwitch::default();
        // The market's loss alone (the trading connection stays up).
        kill.on_session_loss = false;
        let mut rig = Rig::start(Options {
            venue,
            kill,
            bot: Bot {
                burst: 2,
                ..Bot::default()
            },
            ..Options::default()
        });
        rig.until("two orders working", |r| r.bot().acks >= 2);
        assert_eq!(rig.sim.open_orders().len(), 2, "{venue}");
        rig.market.refuse_for(Duration::from_secs(30));
        rig.market.reset_all();
        rig.until("the cancels in the update stream", |r| r.bot().cancels >= 2);
        assert!(rig.sim.open_orders().is_empty(), "{venue}");
    }
}

#[test]
fn a_recording_of_the_trading_connection_keeps_no_secret() {
    for venue in VENUES {
        let dir = std::env::temp_dir().join(format!(
            "tickwire-trading-rec-{venue}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let header = tickwire_feed::recording::Header {
            created_unix_ns: 1,
            ticks_per_second: 1e9,
        };
        let base = dir.join("rec");
        let writer = tickwire_feed::recording::Writer::create(&base, 1 << 30, header).unwrap();
        let mut rig = Rig::start(Options {
            venue,
            recording: Some(writer),
            bot: Bot {
                burst: 1,
                ..Bot::default()
            },
            ..Options::default()
        });
        rig.until("an order acknowledged", |r| r.bot().acks >= 1);
        let sinks = rig
            .feed
            .take()
            .unwrap()
            .shutdown(Duration::from_secs(2))
            .unwrap();
        sinks.recording.unwrap().finish().unwrap();
        let bytes = std::fs::read(dir.join("rec.0.twrec")).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(&rig.secret),
            "{venue}: the secret is recorded"
        );
        // Every secret field there is, blanked whole.
        let mut fields = 0;
        for field in [
            "signature",
            "access_token",
            "refresh_token",
            "apiKey",
            "client_secret",
        ] {
            let key = format!("\"{field}\":\"");
            for (at, _) in text.match_indices(&key) {
                let value = &text[at + key.len()..];
                let value = &value[..value.find('"').unwrap()];
                assert!(value.bytes().all(|b| b == b'*'), "{venue}: {field} {value}");
                fields += 1;
            }
        }
        assert!(fields > 0, "{venue}: no login in the recording");
        assert!(
            text.contains("BTC"),
            "{venue}: the orders' traffic is recorded"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// a bot whose handler panics while `Feed::run` runs: the feed
/// ends (dropped while unwinding) and the kill switch's shutdown cause
/// ("the end of `Feed::run`") must leave nothing working on a venue
/// without cancel-on-disconnect.
#[test]
fn a_panic_ending_run_leaves_no_binance_order_working() {
    let mut rig = Rig::start(Options {
        venue: Venue::BinanceSpot,
        bot: Bot {
            burst: 2,
            panic_at_acks: 2,
            ..Bot::default()
        },
        ..Options::default()
    });
    let feed = rig.feed.take().unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        feed.run(&stop, Duration::from_secs(2))
    }));
    assert!(ended.is_err(), "the handler panicked");
    // The kill switch's cancel-all was answered before `run` went on
    // unwinding; a deadline only, generous for a busy machine.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !rig.sim.open_orders().is_empty() && Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert!(
        rig.sim.open_orders().is_empty(),
        "left working after the feed ended: {:?}",
        rig.sim.open_orders()
    );
}

/// A shutdown while the trading session reconnects (Binance: no
/// cancel-on-disconnect; the session-loss kill switch off): the shutdown
/// kill switch waits for the session to be ready again and cancels then.
#[test]
fn a_shutdown_during_a_reconnect_cancels_once_the_session_is_ready_again() {
    let mut kill = KillSwitch::default();
    kill.on_session_loss = false;
    kill.shutdown_wait = Duration::from_secs(20);
    let mut rig = Rig::start(Options {
        venue: Venue::BinanceSpot,
        kill,
        bot: Bot {
            burst: 2,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("two orders working", |r| r.bot().acks >= 2);
    rig.orders.refuse_for(Duration::from_millis(500));
    rig.orders.reset_all();
    rig.until("the session lost", |r| {
        r.bot().state.is_some_and(|s| s != State::Ready)
    });
    assert_eq!(rig.sim.open_orders().len(), 2);
    let _bot = rig
        .feed
        .take()
        .unwrap()
        .into_handler(Duration::from_secs(3));
    assert!(
        rig.sim.open_orders().is_empty(),
        "left working: {:?}",
        rig.sim.open_orders()
    );
}

/// A feed that trades dropped without `shutdown` or `into_handler`
/// (Binance: no cancel-on-disconnect): the drop runs the kill switch.
#[test]
fn a_trading_feed_dropped_without_shutdown_leaves_no_binance_order_working() {
    let mut rig = Rig::start(Options {
        venue: Venue::BinanceSpot,
        bot: Bot {
            burst: 2,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("two orders working", |r| r.bot().acks >= 2);
    assert_eq!(rig.sim.open_orders().len(), 2);
    drop(rig.feed.take());
    assert!(
        rig.sim.open_orders().is_empty(),
        "left working: {:?}",
        rig.sim.open_orders()
    );
}
