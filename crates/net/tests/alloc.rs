//! The receive path allocates nothing after start-up (plain `ws://`; the
//! TLS layer's own per-record allocation is removed separately).

use std::time::{Duration, Instant};

use tickwire_codec::OpCode;
use tickwire_net::{Config, Conn, Driver, Endpoint, Handler, Payload, Stamps, TlsConfig};
use tickwire_testkit::allocations_so_far;

use crate::util::{TestServer, test_config};

/// Touches every payload byte, like a parser would, and counts.
#[derive(Default)]
struct Touch {
    messages: usize,
    checksum: u64,
    opened: bool,
}

impl Handler for Touch {
    fn on_open(&mut self, _conn: &mut Conn<'_>) {
        self.opened = true;
    }

    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        self.messages += 1;
        self.checksum = payload.as_bytes().iter().fold(self.checksum, |a, &b| {
            a.wrapping_mul(31).wrapping_add(u64::from(b))
        });
    }
}

#[test]
fn receiving_allocates_nothing_after_start_up() {
    const MESSAGES: usize = 20_000;
    let server = TestServer::start(None, |peer, _, _| {
        peer.upgrade()?;
        // Wait for the go-ahead so the warm-up is over before the flood.
        peer.recv_data()?;
        let msg = br#"{"e":"trade","E":1723075200123,"s":"BTCUSDT","t":3712345678,"p":"61234.56000000","q":"0.00123000","T":1723075200122,"m":true,"M":true,"x":"pad-to-200-bytes-xxxxxxxxxxxxxx"}"#;
        let mut batch = Vec::new();
        for i in 0..MESSAGES {
            batch.extend(crate::util::Peer::frame(OpCode::Text, true, msg));
            if i % 500 == 499 {
                peer.write(&batch)?;
                batch.clear();
            }
            if i == MESSAGES / 2 {
                peer.send(OpCode::Ping, b"mid-stream")?; // a pong goes out too
            }
        }
        peer.write(&batch)?;
        peer.drain_until_eof();
        Ok(())
    });
    let config = Config {
        ping_interval: Some(Duration::from_secs(3600)),
        stale_timeout: Some(Duration::from_secs(3600)),
        ..test_config()
    };
    let mut driver = Driver::new(config, &TlsConfig::empty(), Touch::default()).unwrap();
    let id = driver
        .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !driver.handler().opened {
        assert!(Instant::now() < deadline);
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
    driver.send_text(id, "go").unwrap();
    let before = allocations_so_far();
    while driver.handler().messages < MESSAGES {
        assert!(
            Instant::now() < deadline,
            "only {} messages",
            driver.handler().messages
        );
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
    let allocated = allocations_so_far() - before;
    assert_eq!(
        allocated, 0,
        "{allocated} allocations while receiving {MESSAGES} messages"
    );
    assert_ne!(driver.handler().checksum, 0);
}

/// Touches every payload and, every 100,000 messages, sends one (as a
/// subscription change would).
#[derive(Default)]
struct TouchAndSend {
    messages: usize,
    checksum: u64,
    opened: bool,
}

impl Handler for TouchAndSend {
    fn on_open(&mut self, _conn: &mut Conn<'_>) {
        self.opened = true;
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        self.messages += 1;
        self.checksum = payload.as_bytes().iter().fold(self.checksum, |a, &b| {
            a.wrapping_mul(31).wrapping_add(u64::from(b))
        });
        if self.messages.is_multiple_of(100_000) {
            conn.send_text(r#"{"op":"subscribe","args":["books.BTCUSDT"]}"#)
                .expect("queued");
        }
    }
}

/// The in-place TLS 1.3 path: a million ~200-byte messages from a rustls
/// server, with pings (answered with pongs) and sends along the way, and
/// not one allocation on the receiving thread after the warm-up.
#[test]
fn a_million_tls_messages_allocate_nothing() {
    const MESSAGES: usize = 1_000_000;
    let server = TestServer::start(Some(crate::util::pki().server.clone()), |peer, _, log| {
        peer.upgrade()?;
        peer.recv_data()?; // the go-ahead: the client is warmed up
        let msg = br#"{"e":"trade","E":1723075200123,"s":"BTCUSDT","t":3712345678,"p":"61234.56000000","q":"0.00123000","T":1723075200122,"m":true,"M":true,"x":"pad-to-200-bytes-xxxxxxxxxxxxxx"}"#;
        let frame = crate::util::Peer::frame(OpCode::Text, true, msg);
        let mut batch = Vec::with_capacity(64 * 1024);
        for i in 0..MESSAGES {
            batch.extend_from_slice(&frame);
            if batch.len() > 60_000 {
                peer.write(&batch)?;
                batch.clear();
            }
            if i.is_multiple_of(250_000) {
                peer.send(OpCode::Ping, b"heartbeat")?;
            }
        }
        peer.write(&batch)?;
        let mut sends = 0;
        while sends < MESSAGES / 100_000 {
            if let crate::util::Ev::Text(_) = peer.recv_data()? {
                sends += 1;
            }
        }
        log.send(format!("{sends} sends")).unwrap();
        peer.drain_until_eof();
        Ok(())
    });
    let config = Config {
        ping_interval: Some(Duration::from_secs(3600)),
        stale_timeout: Some(Duration::from_secs(3600)),
        send_rate: Some(1000.0),
        ..test_config()
    };
    let tls = crate::util::test_tls();
    let mut driver = Driver::new(config, &tls, TouchAndSend::default()).unwrap();
    let id = driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !driver.handler().opened {
        assert!(Instant::now() < deadline);
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
    driver.send_text(id, "go").unwrap();
    // Warm-up over (handshake, tickets, first sends); count from here on.
    let before = allocations_so_far();
    while driver.handler().messages < MESSAGES {
        assert!(
            Instant::now() < deadline,
            "only {} messages",
            driver.handler().messages
        );
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
    for _ in 0..20 {
        driver.poll_timeout(Duration::from_millis(5)).unwrap(); // release the last sends
    }
    let allocated = allocations_so_far() - before;
    assert_eq!(
        allocated, 0,
        "{allocated} allocations while receiving {MESSAGES} TLS messages"
    );
    assert!(driver.tls_info(id).unwrap().in_place);
    assert_ne!(driver.handler().checksum, 0);
    assert_eq!(server.next_log(), "10 sends");
}

/// What `Config::memory` says a driver sets aside (the budget `run --check`
/// prints) is what creating one asks the allocator for, within the
/// bookkeeping around the slots' buffers.
#[test]
fn a_driver_sets_aside_what_its_config_says() {
    use tickwire_net::SlotSize;
    for config in [
        test_config(),
        Config {
            max_connections: 3,
            sized_slots: vec![SlotSize {
                count: 2,
                read_buffer_size: 256 * 1024,
                max_message_size: 8 << 20,
            }],
            ..test_config()
        },
    ] {
        let budget = config.memory() as u64;
        let (driver, bytes) = tickwire_testkit::allocated_bytes(|| {
            Driver::new(config.clone(), &TlsConfig::empty(), Touch::default()).unwrap()
        });
        drop(driver);
        assert!(
            bytes >= budget && bytes - budget <= budget / 20 + (64 << 10),
            "a driver asked for {bytes} bytes, its config says {budget}"
        );
    }
}
