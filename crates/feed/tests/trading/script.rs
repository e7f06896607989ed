//! The feed's part of trading, whatever a venue's session does.
//!
//! The market data is a simulator's (Deribit's, over TLS on loopback,
//! through a proxy that can cut it); the order entry is a scripted
//! session ([`Script`], a `tickwire_trade::Session`) against a scripted
//! exchange ([`Exchange`], a plain WebSocket server on loopback, through
//! a proxy that can cut it), so that these tests hold the feed's part to
//! account whatever a venue's session does.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tickwire_feed::live::{Feed, VenueSetup};
use tickwire_feed::{KillSwitch, TradeSetup, recording};

use super::bot::Bot;
use tickwire_net::TlsConfig;
use tickwire_net::server::{Incoming, Server};
use tickwire_sim::{SimConfig, SimInstrument, Simulator, Venue};
use tickwire_testkit::proxy::Proxy;
use tickwire_trade::{
    Asked, ClientOrderId, InFlight, Now, OpenOrder, OpenOrders, OrderEvent, OrderKind, Out,
    Pending, Reject, Request, Session, Side, State, VenueOrderId,
};
use tickwire_tsc::{ExportConfig, HistogramConfig, Metrics, Stage};
use tickwire_venues::{InstrumentId, InstrumentSpec};

/// The throw-away secret the script's login carries (never to be found
/// in a recording).
const SECRET: &str = "s3cr3t-d0-not-record";

/// A scripted session: a line protocol with the [`Exchange`].
///
/// `{"login":"KEY","signature":"SECRET"}` → `ok` or `refused`; then
/// `orders?` → `orders CID,CID,…` (reconciliation: `Ready`);
/// `place ID CID INSTR SIDE PRICE SIZE` → `ack ID CID …` or `limit ID CID`;
/// `cancel ID CID` → `canceled ID CID`; `cancelall ID` → `canceled ID CID`
/// for each and `done ID`; `refresh` (every `refresh_ms`) → `refreshed`.
struct Script {
    key: String,
    state: State,
    orders: OpenOrders,
    pending: Pending,
    refresh_ms: Option<u64>,
    next_refresh: u64,
    unreadable: u64,
}

impl Script {
    fn new(key: &str, refresh_ms: Option<u64>) -> Script {
        Script {
            key: key.to_owned(),
            state: State::Disconnected,
            orders: OpenOrders::new(256),
            pending: Pending::new(256),
            refresh_ms,
            next_refresh: 0,
            unreadable: 0,
        }
    }

    fn event(cid: u64, sent: Option<InFlight>, kind: OrderKind) -> OrderEvent {
        OrderEvent {
            cid: Some(ClientOrderId(cid)),
            instrument: InstrumentId(0),
            venue_order: VenueOrderId::new("x"),
            kind,
            venue_time_ns: 0,
            sent_tsc: sent.map_or(0, |s| s.sent_tsc),
        }
    }
}

fn num(w: Option<&str>) -> u64 {
    w.and_then(|w| w.parse().ok()).unwrap_or(0)
}

impl Session for Script {
    fn state(&self) -> State {
        self.state
    }

    fn on_open(&mut self, now: Now, out: &mut Out) {
        self.state = State::LoggingIn;
        let key = &self.key;
        let _ = out.message(|m| write!(m, r#"{{"login":"{key}","signature":"{SECRET}"}}"#));
        self.next_refresh = now.unix_ms + self.refresh_ms.unwrap_or(0);
    }

    fn on_text(
        &mut self,
        buf: &mut [u8],
        len: usize,
        _now: Now,
        out: &mut Out,
        events: &mut Vec<OrderEvent>,
    ) {
        let Ok(text) = std::str::from_utf8(&buf[..len]) else {
            self.unreadable += 1;
            return;
        };
        let mut w = text.split(' ');
        match w.next() {
            Some("ok") => {
                self.state = State::Reconciling;
                self.orders.clear();
                let _ = out.message(|m| m.write_str("orders?"));
            }
            Some("refused") => self.state = State::Refused { code: 13004 },
            Some("orders") => {
                for cid in w.next().unwrap_or("").split(',').filter(|c| !c.is_empty()) {
                    let _ = self.orders.insert(OpenOrder {
                        cid: ClientOrderId(cid.parse().unwrap_or(0)),
                        instrument: InstrumentId(0),
                        venue_order: VenueOrderId::new("x"),
                        side: Side::Bid,
                        price: 1,
                        leaves: 1,
                        filled: 0,
                    });
                }
                self.state = State::Ready;
            }
            Some("ack") => {
                let sent = self.pending.answer(num(w.next()));
                let cid = num(w.next());
                let _instrument = w.next();
                let side = if w.next() == Some("b") {
                    Side::Bid
                } else {
                    Side::Ask
                };
                let (price, size) = (num(w.next()) as i64, num(w.next()) as i64);
                let e = Script::event(cid, sent, OrderKind::Accepted { side, price, size });
                self.orders.apply(&e);
                events.push(e);
            }
            Some("limit") => {
                let sent = self.pending.answer(num(w.next()));
                let reason = Reject::VenueRateLimited { code: 10028 };
                let e = Script::event(num(w.next()), sent, OrderKind::Rejected { reason });
                self.orders.apply(&e);
                events.push(e);
            }
            Some("canceled") => {
                let id = num(w.next());
                // A cancel's one answer; a cancel-all's are many, then `done`.
                let found = self.pending.iter().find(|p| p.id == id).copied();
                let sent = match found {
                    Some(p) if matches!(p.asked, Asked::Cancel(_)) => self.pending.answer(id),
                    found => found,
                };
                let e = Script::event(num(w.next()), sent, OrderKind::Canceled);
                self.orders.apply(&e);
                events.push(e);
            }
            Some("done") => {
                self.pending.answer(num(w.next()));
            }
            Some("refreshed") => {}
            _ => self.unreadable += 1,
        }
    }

    fn submit(&mut self, request: &Request, now: Now, out: &mut Out) -> Result<(), Reject> {
        if self.state != State::Ready {
            return Err(Reject::NotReady);
        }
        if !self.pending.has_room() {
            return Err(Reject::Full);
        }
        let id = self.pending.peek_id();
        let written = match *request {
            Request::Place { cid, order } => {
                if !self.orders.reserve(cid) {
                    return Err(Reject::Duplicate);
                }
                let side = if order.side == Side::Bid { "b" } else { "a" };
                out.message(|m| {
                    write!(
                        m,
                        "place {id} {} {} {side} {} {}",
                        cid.0, order.instrument.0, order.price, order.size
                    )
                })
            }
            Request::Cancel { cid } => {
                if self.orders.get(cid).is_none() {
                    return Err(Reject::UnknownOrder);
                }
                out.message(|m| write!(m, "cancel {id} {}", cid.0))
            }
            Request::CancelAll { .. } => out.message(|m| write!(m, "cancelall {id}")),
            Request::Amend { .. } => return Err(Reject::Venue { code: 0 }),
        };
        if written.is_err() {
            return Err(Reject::Full);
        }
        let asked = match *request {
            Request::Place { cid, .. } => Asked::Place(cid),
            Request::Cancel { cid } => Asked::Cancel(cid),
            _ => Asked::CancelAll(None),
        };
        self.pending.file(asked, now.tsc, now.unix_ms);
        Ok(())
    }

    fn on_timer(&mut self, now: Now, out: &mut Out) {
        if let Some(every) = self.refresh_ms
            && self.state == State::Ready
            && now.unix_ms >= self.next_refresh
        {
            self.next_refresh = now.unix_ms + every;
            let _ = out.message(|m| m.write_str("refresh"));
        }
    }

    fn on_close(&mut self, _now: Now) {
        if !matches!(self.state, State::Refused { .. }) {
            self.state = State::Disconnected;
        }
        self.pending.clear();
    }

    fn open_orders(&self) -> &OpenOrders {
        &self.orders
    }

    fn unreadable(&self) -> u64 {
        self.unreadable
    }
}

/// What the scripted exchange saw and holds.
#[derive(Default)]
struct Book {
    /// Working orders, by client id.
    orders: Vec<u64>,
    /// Every client id ever placed (a duplicate shows twice).
    placed: Vec<u64>,
    logins: u64,
    refreshes: u64,
    cancel_alls: u64,
    /// Places answered `limit` after this many on a connection.
    limit: Option<usize>,
    /// Places taken into the book but not answered (the answer lost with
    /// the connection).
    swallow: bool,
    /// Every message received, as text.
    received: Vec<String>,
}

/// A scripted exchange: a plain WebSocket server on loopback, one thread
/// per connection.
struct Exchange {
    addr: std::net::SocketAddr,
    book: Arc<Mutex<Book>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Exchange {
    fn start() -> Exchange {
        let server = Server::bind("127.0.0.1:0".parse().unwrap(), None).unwrap();
        let addr = server.local_addr().unwrap();
        let book = Arc::new(Mutex::new(Book::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (Arc::clone(&book), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let Ok(Some(mut conn)) = server.accept(Duration::from_millis(50)) else {
                    continue;
                };
                let (b, s) = (Arc::clone(&b), Arc::clone(&s));
                std::thread::spawn(move || {
                    if conn.read_request(Duration::from_secs(5)).is_err()
                        || conn.accept_websocket().is_err()
                    {
                        return;
                    }
                    let mut places = 0;
                    while !s.load(Ordering::Relaxed) {
                        let text = match conn.recv(Duration::from_millis(20)) {
                            Ok(Some(Incoming::Text(t))) => t,
                            Ok(None) => continue,
                            _ => return,
                        };
                        let replies = b.lock().unwrap().answer(&text, &mut places);
                        for r in replies {
                            if conn.send_text(&r).is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        Exchange {
            addr,
            book,
            stop,
            thread: Some(thread),
        }
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap()
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Book {
    fn answer(&mut self, text: &str, places: &mut usize) -> Vec<String> {
        self.received.push(text.to_owned());
        if text.starts_with("{\"login\"") {
            self.logins += 1;
            let good = text.contains("\"login\":\"good\"");
            return vec![if good { "ok" } else { "refused" }.to_owned()];
        }
        let w: Vec<&str> = text.split(' ').collect();
        match w[0] {
            "orders?" => {
                let list: Vec<String> = self.orders.iter().map(u64::to_string).collect();
                vec![format!("orders {}", list.join(","))]
            }
            "place" => {
                *places += 1;
                let cid: u64 = w[2].parse().unwrap();
                self.placed.push(cid);
                if self.limit.is_some_and(|l| *places > l) {
                    return vec![format!("limit {} {cid}", w[1])];
                }
                self.orders.push(cid);
                if self.swallow {
                    return Vec::new();
                }
                vec![format!("ack {}", w[1..].join(" "))]
            }
            "cancel" => {
                let cid: u64 = w[2].parse().unwrap();
                self.orders.retain(|&c| c != cid);
                vec![format!("canceled {} {cid}", w[1])]
            }
            "cancelall" => {
                self.cancel_alls += 1;
                let mut out: Vec<String> = self
                    .orders
                    .drain(..)
                    .map(|c| format!("canceled {} {c}", w[1]))
                    .collect();
                out.push(format!("done {}", w[1]));
                out
            }
            "refresh" => {
                self.refreshes += 1;
                vec!["refreshed".to_owned()]
            }
            _ => Vec::new(),
        }
    }
}

/// The market's simulator, the exchange, their proxies, and the feed.
struct Rig {
    _sim: Simulator,
    market: Proxy,
    exchange: Exchange,
    orders: Proxy,
    feed: Option<Feed<Bot>>,
    metrics: Metrics,
}

struct Options {
    key: &'static str,
    refresh_ms: Option<u64>,
    kill: KillSwitch,
    bot: Bot,
    recording: Option<recording::Writer>,
    /// The exchange's proxy refuses every connection from the start.
    unreachable: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            key: "good",
            refresh_ms: None,
            kill: KillSwitch::default(),
            bot: Bot::default(),
            recording: None,
            unreachable: false,
        }
    }
}

impl Rig {
    fn start(o: Options) -> Rig {
        let (tls, ca) = tickwire_sim::self_signed().unwrap();
        let venue = Venue::Deribit;
        let instrument = SimInstrument::pair(venue).remove(0);
        let sim = Simulator::start(SimConfig {
            tls: Some(tls),
            instruments: vec![instrument.clone()],
            rate: 500,
            ..SimConfig::new(venue)
        })
        .unwrap();
        let market = Proxy::start(sim.addr()).unwrap();
        let exchange = Exchange::start();
        let orders = Proxy::start(exchange.addr).unwrap();
        if o.unreachable {
            orders.refuse_for(Duration::from_secs(600));
        }
        let mut trust = TlsConfig::empty();
        trust.add_ca_pem(ca.as_bytes()).unwrap();
        let (ps, ss) = venue.default_scales();
        let spec = InstrumentSpec::new(
            &instrument.symbol,
            ps.max(instrument.price_scale),
            ss.max(instrument.size_scale),
            10,
        );
        let mut setup = VenueSetup::new("deribit", venue, vec![spec]);
        setup.endpoint = Some(format!("wss://localhost:{}", market.addr().port()));
        let session = Script::new(o.key, o.refresh_ms);
        let trade = TradeSetup::with_session(
            Box::new(session),
            &format!("ws://127.0.0.1:{}/", orders.addr().port()),
        )
        .kill(o.kill);
        let metrics = Metrics::new(HistogramConfig::default());
        let mut sinks = tickwire_feed::live::Sinks::default();
        sinks.recording = o.recording;
        let mut net = tickwire_net::Config::default();
        net.backoff.initial = Duration::from_millis(50);
        net.backoff.max = Duration::from_millis(200);
        let feed = Feed::builder()
            .check_instruments(false)
            .setup(setup)
            .tls(trust)
            .net(net)
            .metrics(metrics.clone())
            .sinks(sinks)
            .trade("deribit", trade)
            .build_with(o.bot)
            .unwrap();
        Rig {
            _sim: sim,
            market,
            exchange,
            orders,
            feed: Some(feed),
            metrics,
        }
    }

    fn feed(&mut self) -> &mut Feed<Bot> {
        self.feed.as_mut().unwrap()
    }

    fn bot(&self) -> &Bot {
        self.feed.as_ref().unwrap().handler()
    }

    fn bot_mut(&mut self) -> &mut Bot {
        self.feed().handler_mut()
    }

    /// Polls until `done`, or fails after a generous deadline.
    fn until(&mut self, what: &str, mut done: impl FnMut(&Rig) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(self) {
            assert!(Instant::now() < deadline, "never: {what}");
            self.feed().poll().unwrap();
        }
    }

    /// Polls for `time` (for what must NOT happen).
    fn run_for(&mut self, time: Duration) {
        let end = Instant::now() + time;
        while Instant::now() < end {
            self.feed().poll().unwrap();
        }
    }
}

#[test]
fn an_order_placed_from_the_handler_is_acknowledged_in_the_update_stream_with_both_stages() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            keep_one: true,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("an order acknowledged", |r| r.bot().acks >= 1);
    let bot = rig.bot();
    let ack = bot
        .orders
        .iter()
        .find(|e| matches!(e.kind, OrderKind::Accepted { .. }))
        .unwrap();
    assert_eq!(
        ack.cid,
        Some(bot.placed[0]),
        "the desk's client id comes back"
    );
    assert_eq!(Some(ack.instrument), bot.book, "under the feed-wide id");
    assert_ne!(ack.sent_tsc, 0, "an answer carries its request's stamp");
    assert_eq!(
        rig.exchange.book().placed.len(),
        1,
        "one order, placed once"
    );
    let feed = rig.feed.take().unwrap();
    let exporter = rig.metrics.export(ExportConfig::default()).unwrap();
    drop(feed.shutdown(Duration::from_secs(2)).unwrap());
    let totals = exporter.finish().unwrap();
    let venue = totals.iter().find(|t| t.name == "deribit").unwrap();
    assert!(
        !venue.stages.get(Stage::TickToTrade).is_empty(),
        "tick to trade"
    );
    assert!(!venue.stages.get(Stage::RoundTrip).is_empty(), "round trip");
}

#[test]
fn no_order_before_the_session_is_ready_and_a_refused_login_is_not_retried() {
    let mut rig = Rig::start(Options {
        key: "wrong",
        bot: Bot {
            keep_one: true,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("the bot refused at once, and the login refused", |r| {
        !r.bot().refused_at_once.is_empty() && r.exchange.book().logins >= 1
    });
    // Long enough for many reconnects at the rig's 50-200 ms backoff.
    rig.run_for(Duration::from_secs(2));
    let bot = rig.bot();
    assert!(bot.placed.is_empty(), "{:?}", bot.placed);
    assert!(bot.refused_at_once.iter().all(|r| *r == Reject::NotReady));
    let book = rig.exchange.book();
    assert_eq!(book.logins, 1, "a refused login is not retried");
    assert!(book.placed.is_empty());
    drop(book);
    let (said, _) = rig.feed().stats().venues[0].last_failure().unwrap();
    assert!(
        said.contains("refused the trading session's credentials (its code 13004)"),
        "{said}"
    );
}

#[test]
fn a_session_refresh_on_its_timer_keeps_orders_flowing() {
    let mut rig = Rig::start(Options {
        refresh_ms: Some(100),
        bot: Bot {
            cycle: true,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("three refreshes and orders after them", |r| {
        r.exchange.book().refreshes >= 3 && r.bot().cancels >= 5
    });
    let acks = rig.bot().acks;
    rig.until("more orders after the refreshes", |r| {
        r.bot().acks >= acks + 3
    });
    assert_eq!(
        rig.exchange.book().logins,
        1,
        "refreshed, not logged in again"
    );
}

#[test]
fn a_reconnect_reconciles_before_any_order_and_places_no_duplicate() {
    let mut rig = Rig::start(Options {
        kill: {
            let mut kill = KillSwitch::default();
            kill.on_session_loss = false;
            kill
        },
        bot: Bot {
            keep_one: true,
            ..Bot::default()
        },
        ..Options::default()
    });
    // The exchange takes the order but its answer is lost with the
    // connection.
    rig.exchange.book().swallow = true;
    rig.until("an order placed", |r| r.exchange.book().placed.len() == 1);
    rig.orders.reset_all();
    rig.until("logged in again", |r| r.exchange.book().logins >= 2);
    rig.exchange.book().swallow = false;
    let cid = rig.exchange.book().placed[0];
    rig.until("the order found by the reconciliation", |r| {
        r.exchange
            .book()
            .received
            .iter()
            .filter(|m| *m == "orders?")
            .count()
            >= 2
    });
    rig.run_for(Duration::from_millis(1500));
    let book = rig.exchange.book();
    assert_eq!(
        book.placed,
        vec![cid],
        "placed once: found again, not placed twice"
    );
    // No order went out between the login and the open orders' answer.
    let second_login = book
        .received
        .iter()
        .enumerate()
        .filter(|(_, m)| m.starts_with("{\"login\""))
        .nth(1)
        .unwrap()
        .0;
    assert_eq!(book.received[second_login + 1], "orders?");
}

#[test]
fn venue_rate_limit_refusals_are_typed_events_and_never_retried() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            burst: 5,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.exchange.book().limit = Some(2);
    rig.until("five answers", |r| {
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
            >= 5
    });
    rig.run_for(Duration::from_millis(500));
    let limited: Vec<_> = rig
        .bot()
        .orders
        .iter()
        .filter(|e| {
            e.kind
                == OrderKind::Rejected {
                    reason: Reject::VenueRateLimited { code: 10028 },
                }
        })
        .collect();
    assert_eq!(limited.len(), 3, "{:?}", rig.bot().orders);
    assert_eq!(rig.exchange.book().placed.len(), 5, "none sent again");
}

#[test]
fn the_kill_switch_cancels_every_order_on_shutdown_and_waits_for_the_answers() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            burst: 3,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("three orders working", |r| r.bot().acks >= 3);
    assert_eq!(rig.exchange.book().orders.len(), 3);
    let feed = rig.feed.take().unwrap();
    let bot = feed.into_handler(Duration::from_secs(2));
    assert_eq!(
        bot.cancels, 3,
        "the cancels reached the handler before the end"
    );
    let book = rig.exchange.book();
    assert_eq!(book.cancel_alls, 1);
    assert!(book.orders.is_empty(), "{:?}", book.orders);
}

#[test]
fn the_kill_switch_cancels_every_order_when_the_session_comes_back_after_a_loss() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            burst: 2,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("two orders working", |r| r.bot().acks >= 2);
    rig.orders.reset_all();
    rig.until("every order cancelled after the reconnect", |r| {
        r.exchange.book().cancel_alls == 1 && r.exchange.book().orders.is_empty()
    });
    assert_eq!(rig.exchange.book().logins, 2);
}

#[test]
fn the_kill_switch_cancels_every_order_when_the_market_data_is_lost() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            burst: 2,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("two orders working", |r| r.bot().acks >= 2);
    assert_eq!(rig.exchange.book().cancel_alls, 0);
    // The market's line goes down, and stays down a while.
    rig.market.refuse_for(Duration::from_secs(30));
    rig.market.reset_all();
    rig.until("every order cancelled", |r| {
        r.exchange.book().cancel_alls == 1 && r.exchange.book().orders.is_empty()
    });
    rig.until("the cancels in the update stream", |r| r.bot().cancels >= 2);
}

#[test]
fn a_recording_keeps_the_trading_connection_with_its_secrets_blanked() {
    let dir = std::env::temp_dir().join(format!("tickwire-trading-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("trading");
    let header = recording::Header {
        created_unix_ns: 1,
        ticks_per_second: 1e9,
    };
    let writer = recording::Writer::create(&base, 1 << 30, header).unwrap();
    let mut rig = Rig::start(Options {
        recording: Some(writer),
        bot: Bot {
            keep_one: true,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("an order acknowledged", |r| r.bot().acks >= 1);
    let feed = rig.feed.take().unwrap();
    let sinks = feed.shutdown(Duration::from_secs(2)).unwrap();
    sinks.recording.unwrap().finish().unwrap();
    let bytes = std::fs::read(dir.join("trading.0.twrec")).unwrap();
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"\"login\":\"good\""), "the login is recorded");
    assert!(has(b"orders?") && has(b"ack "), "and the orders' traffic");
    assert!(!has(SECRET.as_bytes()), "the secret is not");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn placing_and_cancelling_allocates_nothing_on_the_feed_thread_once_warm() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            cycle: true,
            placed: Vec::with_capacity(16),
            refused_at_once: Vec::with_capacity(16),
            orders: Vec::with_capacity(16),
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("warm: 50 orders placed and cancelled", |r| {
        r.bot().cancels >= 50
    });
    let mut disturbed = 0;
    loop {
        let (before, reconnects) = (rig.bot().cancels, rig.exchange.book().logins);
        let (_, allocations) = tickwire_testkit::allocations(|| {
            rig.until("100 more", |r| r.bot().cancels >= before + 100);
        });
        if rig.exchange.book().logins != reconnects {
            disturbed += 1;
            assert!(disturbed < 3, "reconnects in every window");
            continue;
        }
        assert_eq!(allocations, 0, "the order path allocated while warm");
        break;
    }
    let _ = rig.bot_mut();
}

#[test]
fn a_trading_connection_that_never_opens_is_said_and_tried_again() {
    let mut rig = Rig::start(Options {
        unreachable: true,
        ..Options::default()
    });
    rig.until("the failure said", |r| {
        r.feed.as_ref().unwrap().stats().venues[0]
            .last_failure()
            .is_some_and(|(f, _)| f.contains("the trading connection"))
    });
    let (said, _) = rig.feed().stats().venues[0].last_failure().unwrap();
    let port = rig.orders.addr().port();
    assert!(
        said.contains(&format!("ws://127.0.0.1:{port}/ failed (")),
        "{said}"
    );
    rig.until("tried again", |r| r.orders.refused() >= 3);
}

/// a handler that places more than 64 orders in one market
/// update: every one the desk accepted must reach the exchange (or come
/// back refused), none silently lost.
#[test]
fn a_burst_over_the_drivers_queue_reaches_the_exchange_whole() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            burst: 100,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("the burst placed", |r| r.bot().placed.len() == 100);
    rig.run_for(Duration::from_secs(2));
    let placed = rig.exchange.book().placed.len();
    let bot = rig.bot();
    let rejected = bot
        .orders
        .iter()
        .filter(|e| matches!(e.kind, OrderKind::Rejected { .. }))
        .count();
    assert_eq!(
        placed + rejected,
        100,
        "desk gave 100 ids; exchange saw {placed}, refusals {rejected}, acks {}, session open {}",
        bot.acks,
        bot.open
    );
}

/// Each request's round trip is recorded once, however many messages
/// carry its stamp: three places, then the shutdown's cancel-all, whose
/// three cancels come in three messages, then its end: four samples.
#[test]
fn each_requests_round_trip_is_recorded_once() {
    let mut rig = Rig::start(Options {
        bot: Bot {
            burst: 3,
            ..Bot::default()
        },
        ..Options::default()
    });
    rig.until("three orders working", |r| r.bot().acks >= 3);
    let feed = rig.feed.take().unwrap();
    let exporter = rig.metrics.export(ExportConfig::default()).unwrap();
    drop(feed.shutdown(Duration::from_secs(2)).unwrap());
    assert_eq!(rig.exchange.book().cancel_alls, 1);
    let totals = exporter.finish().unwrap();
    let venue = totals.iter().find(|t| t.name == "deribit").unwrap();
    assert_eq!(venue.stages.get(Stage::RoundTrip).len(), 4);
}
