//! `ws://` connections: the engine's behaviour without TLS in the way.

use std::time::{Duration, Instant};

use tickwire_codec::OpCode;
use tickwire_net::{
    CloseCode, Config, Disconnect, Driver, Endpoint, HandshakeError, ProtocolError, SlotSize,
    Timeout, TlsConfig,
};

use crate::util::{Ev, Recorder, TestServer, run_for, run_until, test_config};

fn client(config: Config, recorder: Recorder) -> Driver<Recorder> {
    Driver::new(config, &TlsConfig::empty(), recorder).unwrap()
}

#[test]
fn messages_fragments_pings_and_a_server_close() {
    let server = TestServer::start(None, |peer, _, log| {
        peer.upgrade()?;
        log.send(format!("path {}", peer.path)).unwrap();
        peer.send(OpCode::Text, b"hello")?;
        peer.send(OpCode::Binary, &[1, 2, 3])?;
        peer.write(&crate::util::Peer::frame(OpCode::Text, false, b"frag"))?;
        peer.send(OpCode::Ping, b"are you there")?;
        peer.write(&crate::util::Peer::frame(
            OpCode::Continuation,
            true,
            "mented κ".as_bytes(),
        ))?;
        log.send(format!("{:?}", peer.recv()?)).unwrap(); // the pong
        peer.close(1001, "going away")?;
        log.send(format!("{:?}", peer.recv()?)).unwrap(); // the close echo
        peer.drain_until_eof();
        Ok(())
    });
    let mut driver = client(test_config(), Recorder::once());
    let id = driver
        .connect(Endpoint::parse(&server.url(false, "/feed?x=1")).unwrap())
        .unwrap();
    run_until(&mut driver, "the close", |r| !r.closed.is_empty());
    assert_eq!(server.next_log(), "path /feed?x=1");
    assert_eq!(
        server.next_log(),
        format!("{:?}", Ev::Pong(b"are you there".to_vec()))
    );
    assert_eq!(server.next_log(), format!("{:?}", Ev::Close(Some(1001))));
    let r = driver.handler();
    assert_eq!(r.opened, [id]);
    let got: Vec<&Ev> = r.messages.iter().map(|(_, e)| e).collect();
    assert_eq!(
        got,
        [
            &Ev::Text("hello".into()),
            &Ev::Binary(vec![1, 2, 3]),
            &Ev::Text("fragmented κ".into())
        ]
    );
    assert_eq!(
        r.closed,
        [(
            id,
            Disconnect::Remote {
                code: Some(CloseCode(1001))
            }
        )]
    );
    assert!(r.reconnecting.is_empty());
    assert!(!driver.is_open(id));
}

#[test]
fn our_server_role_and_our_client_talk() {
    let config = test_config();
    let mut server = Driver::new(
        config.clone(),
        &TlsConfig::empty(),
        Recorder {
            echo: true,
            ..Recorder::default()
        },
    )
    .unwrap();
    let addr = server.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let mut client = client(
        config,
        Recorder {
            subscribe: vec!["one".into(), "two".into()],
            ..Recorder::default()
        },
    );
    let id = client
        .connect(Endpoint::parse(&format!("ws://127.0.0.1:{}/", addr.port())).unwrap())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.handler().messages.len() < 2 {
        assert!(Instant::now() < deadline, "no echo");
        server.poll_timeout(Duration::from_millis(1)).unwrap();
        client.poll_timeout(Duration::from_millis(1)).unwrap();
    }
    let echoed: Vec<&Ev> = client.handler().messages.iter().map(|(_, e)| e).collect();
    assert_eq!(echoed, [&Ev::Text("one".into()), &Ev::Text("two".into())]);
    assert_eq!(server.handler().opened.len(), 1);

    assert!(client.is_open(id) && client.is_live(id));
    client.close(id, CloseCode::NORMAL, "done").unwrap();
    // Closing: no longer open, still there until the handshake ends.
    assert!(!client.is_open(id) && client.is_live(id));
    while server.handler().closed.is_empty() || client.handler().closed.is_empty() {
        assert!(Instant::now() < deadline, "no close");
        server.poll_timeout(Duration::from_millis(1)).unwrap();
        client.poll_timeout(Duration::from_millis(1)).unwrap();
    }
    let (_, reason) = &server.handler().closed[0];
    assert_eq!(
        reason,
        &Disconnect::Remote {
            code: Some(CloseCode::NORMAL)
        }
    );
    assert_eq!(
        client.handler().closed,
        [(
            id,
            Disconnect::Local {
                code: CloseCode::NORMAL
            }
        )]
    );
    assert!(
        client.handler().reconnecting.is_empty(),
        "a local close is final"
    );
    assert!(!client.is_live(id));
}

#[test]
fn handshake_rejection_reports_the_status() {
    let server = TestServer::start(None, |peer, _, _| {
        peer.read_request()?;
        peer.write(
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 25\r\n\r\n\
              {\"msg\":\"slow\tdown\"}\r\n\r\n",
        )
    });
    let mut driver = client(test_config(), Recorder::once());
    driver
        .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "the rejection", |r| !r.closed.is_empty());
    // The status and the body's start, control characters shown as
    // spaces, surrounding whitespace dropped.
    let reason = &driver.handler().closed[0].1;
    let Disconnect::Refused { status, body } = reason else {
        panic!("not a refusal: {reason:?}");
    };
    assert_eq!(*status, 429);
    assert_eq!(body.as_str(), "{\"msg\":\"slow down\"}");
    assert_eq!(
        reason.to_string(),
        "upgrade refused with HTTP 429: {\"msg\":\"slow down\"}"
    );
    assert!(driver.handler().opened.is_empty());
}

#[test]
fn protocol_errors_fail_with_the_right_close_code() {
    let server = TestServer::start(None, |peer, _, log| {
        peer.upgrade()?;
        peer.write(&[0x83, 0x00])?; // a reserved opcode
        log.send(format!("{:?}", peer.recv()?)).unwrap();
        Ok(())
    });
    let mut driver = client(test_config(), Recorder::once());
    driver
        .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "the failure", |r| !r.closed.is_empty());
    assert_eq!(server.next_log(), format!("{:?}", Ev::Close(Some(1002))));
    assert_eq!(
        driver.handler().closed[0].1,
        Disconnect::Protocol(ProtocolError::ReservedOpcode(3))
    );
}

#[test]
fn unanswered_pings_reconnect_and_answered_ones_do_not() {
    // Connection 0 never answers pings; connection 1 does.
    let server = TestServer::start(None, |peer, n, log| {
        peer.upgrade()?;
        loop {
            match peer.recv()? {
                Ev::Ping(p) if n > 0 => {
                    peer.send(OpCode::Pong, &p)?;
                    log.send("pong".into()).unwrap();
                }
                _ => {}
            }
        }
    });
    // Generous timeouts: a loaded machine must not turn a late pong into a
    // missing one.
    let config = Config {
        ping_interval: Some(Duration::from_millis(100)),
        pong_timeout: Duration::from_millis(1000),
        ..test_config()
    };
    let mut driver = client(config, Recorder::default());
    driver
        .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "a second connection", |r| r.opened.len() == 2);
    assert_eq!(
        driver.handler().closed[0].1,
        Disconnect::Timeout(Timeout::Pong)
    );
    // Several ping intervals on the answering connection: no more closes.
    let mut pongs = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while pongs < 3 {
        assert!(Instant::now() < deadline, "pings were not answered");
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
        match server.log.try_recv() {
            Ok(line) if line == "pong" => pongs += 1,
            // Connection 0's script ends when the client drops it.
            Ok(line) => assert!(line.starts_with("script 0 ended"), "{line}"),
            Err(_) => {}
        }
    }
    run_for(&mut driver, Duration::from_millis(300));
    assert_eq!(driver.handler().closed.len(), 1);
}

#[test]
fn subscriptions_are_paced() {
    let server = TestServer::start(None, |peer, _, log| {
        peer.upgrade()?;
        let start = Instant::now();
        for _ in 0..5 {
            let ev = peer.recv_data()?;
            log.send(format!("{} {ev:?}", start.elapsed().as_millis()))
                .unwrap();
        }
        peer.drain_until_eof();
        Ok(())
    });
    let config = Config {
        send_rate: Some(20.0),
        send_burst: 2,
        ..test_config()
    };
    let subscribe = (0..5).map(|i| format!("sub-{i}")).collect();
    let mut driver = client(
        config,
        Recorder {
            subscribe,
            ..Recorder::default()
        },
    );
    driver
        .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
        .unwrap();
    let mut arrivals = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while arrivals.len() < 5 {
        assert!(
            Instant::now() < deadline,
            "subscriptions did not all arrive"
        );
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
        if let Ok(line) = server.log.try_recv() {
            let (ms, ev) = line.split_once(' ').unwrap();
            arrivals.push((ms.parse::<u64>().unwrap(), ev.to_string()));
        }
    }
    let order: Vec<&str> = arrivals.iter().map(|(_, e)| e.as_str()).collect();
    assert_eq!(
        order,
        (0..5)
            .map(|i| format!("Text(\"sub-{i}\")"))
            .collect::<Vec<_>>()
    );
    // A burst of 2, then one every 50 ms: the fifth cannot arrive before
    // 3 x 50 ms after the first (a lower bound; a slow machine only adds).
    assert!(arrivals[4].0 - arrivals[0].0 >= 140, "{arrivals:?}");
}

#[test]
fn many_connections_on_one_driver() {
    const N: usize = 64;
    const MESSAGES: usize = 50;
    let server = TestServer::start(None, |peer, n, _| {
        peer.upgrade()?;
        for i in 0..MESSAGES {
            peer.send(OpCode::Text, format!("{n}:{i}").as_bytes())?;
        }
        peer.drain_until_eof();
        Ok(())
    });
    let config = Config {
        max_connections: N,
        read_buffer_size: 32 * 1024,
        max_message_size: 4096,
        write_buffer_size: 4096,
        outbox_size: 1024,
        ..test_config()
    };
    let mut driver = client(config, Recorder::default());
    let ids: Vec<_> = (0..N)
        .map(|_| {
            driver
                .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
                .unwrap()
        })
        .collect();
    assert_eq!(
        driver.connect(Endpoint::parse(&server.url(false, "/")).unwrap()),
        Err(tickwire_net::DriverError::NoFreeSlot)
    );
    run_until(&mut driver, "every message", |r| {
        r.messages.len() == N * MESSAGES
    });
    let r = driver.handler();
    assert_eq!(r.opened.len(), N);
    for id in ids {
        // Each connection's messages arrive in order.
        let mine: Vec<usize> = r
            .messages
            .iter()
            .filter(|(c, _)| *c == id)
            .map(|(_, e)| match e {
                Ev::Text(t) => t.split_once(':').unwrap().1.parse().unwrap(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(mine, (0..MESSAGES).collect::<Vec<_>>());
    }
    assert!(r.closed.is_empty());
}

/// A peer that writes faster than it is read never lets its socket drain:
/// without a read budget, one turn of the poll loop would read it for as
/// long as it keeps writing, and every other connection and timer would
/// wait. With `max_reads_per_turn`, each turn (one `Stamps::poll`) reads at
/// most that many reads' worth of it (`max_read`, or the buffer if smaller).
#[test]
fn a_socket_that_never_drains_is_read_a_budget_per_turn() {
    use std::collections::BTreeMap;
    use tickwire_net::{Conn, Handler, Payload, Stamps};

    const MESSAGES: usize = 8192;
    let frame = crate::util::Peer::frame(OpCode::Text, true, &[b'x'; 1024]);
    let flood = frame.repeat(MESSAGES);
    let server = TestServer::start(None, move |peer, _, log| {
        peer.upgrade()?;
        log.send("upgraded".into()).unwrap();
        peer.write(&flood)?;
        peer.drain_until_eof();
        Ok(())
    });

    /// Payload bytes completed in each turn, by its poll stamp.
    #[derive(Default)]
    struct Turns {
        bytes: BTreeMap<u64, usize>,
        messages: usize,
    }
    impl Handler for Turns {
        fn on_message(&mut self, _: &mut Conn<'_>, payload: Payload<'_>, stamps: Stamps) {
            *self.bytes.entry(stamps.poll).or_default() += payload.len();
            self.messages += 1;
        }
    }

    let config = Config {
        max_reads_per_turn: 2,
        ..test_config()
    };
    // One read takes at most this much.
    let read_buffer = config.read_buffer_size.min(config.max_read);
    let mut driver = Driver::new(config, &TlsConfig::empty(), Turns::default()).unwrap();
    driver
        .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
        .unwrap();
    // Let the upgrade through, then let megabytes pile up unread.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.log.try_recv().is_err() {
        assert!(Instant::now() < deadline, "no upgrade");
        driver.poll_timeout(Duration::from_millis(1)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    run_until(&mut driver, "every message", |t| t.messages == MESSAGES);
    let turns = &driver.handler().bytes;
    let most = turns.values().copied().max().unwrap();
    // Two reads a turn, plus a frame begun in the turn before.
    assert!(
        most <= 2 * read_buffer + 1024,
        "{most} bytes in one turn (reads of {read_buffer})"
    );
    assert!(
        turns.len() >= MESSAGES * 1024 / (2 * read_buffer + 1024),
        "{} turns",
        turns.len()
    );
}

/// Bad input from a server, each with its typed outcome: the frame errors
/// are answered with the close code RFC 6455 names (1009, 1007, 1002) and
/// end the connection as `Disconnect::Protocol`; bad handshake answers end
/// it as `Disconnect::Handshake` before `on_open`. (The codec's own tests
/// cover every rule byte by byte; these check the connection's outcome.)
#[test]
fn bad_input_ends_the_connection_with_its_typed_reason_and_close_code() {
    use tickwire_net::ProtocolError;

    enum Script {
        /// Upgrade, then write these bytes; the close code sent back.
        AfterUpgrade(Vec<u8>, u16),
        /// Answer the upgrade request with this text.
        Handshake(String),
    }
    let good_101 = |accept: &str, extra: &str| {
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{extra}\r\n"
        )
    };
    let cases: Vec<(&str, Script, Disconnect)> = vec![
        (
            "a frame larger than the message limit (1 MiB here)",
            Script::AfterUpgrade(vec![0x82, 127, 0, 0, 0, 0, 0, 0x20, 0, 0], 1009),
            Disconnect::Protocol(ProtocolError::FrameTooLarge),
        ),
        (
            "text that is not UTF-8",
            Script::AfterUpgrade(vec![0x81, 0x02, 0xc3, 0x28], 1007),
            Disconnect::Protocol(ProtocolError::InvalidUtf8),
        ),
        (
            "a masked frame from a server",
            Script::AfterUpgrade(vec![0x81, 0x82, 1, 2, 3, 4, b'h' ^ 1, b'i' ^ 2], 1002),
            Disconnect::Protocol(ProtocolError::MaskedFrame),
        ),
        (
            "reserved bits without an extension",
            Script::AfterUpgrade(vec![0xc1, 0x00], 1002),
            Disconnect::Protocol(ProtocolError::ReservedBits),
        ),
        (
            "a wrong Sec-WebSocket-Accept",
            Script::Handshake(good_101("dGhlIHNhbXBsZSBub25jZQ==AAAA", "")),
            Disconnect::Handshake(HandshakeError::InvalidAccept),
        ),
        (
            "an extension that was not offered",
            Script::Handshake(String::new()),
            Disconnect::Handshake(HandshakeError::UnexpectedExtension),
        ),
    ];
    for (what, script, want) in cases {
        let close_code = match &script {
            Script::AfterUpgrade(_, code) => Some(*code),
            Script::Handshake(_) => None,
        };
        let server = TestServer::start(None, move |peer, _, log| match &script {
            Script::AfterUpgrade(bytes, _) => {
                peer.upgrade()?;
                peer.write(bytes)?;
                log.send(format!("{:?}", peer.recv()?)).unwrap();
                peer.drain_until_eof();
                Ok(())
            }
            Script::Handshake(text) if text.is_empty() => {
                let accept = peer.read_request()?;
                let accept = std::str::from_utf8(&accept).unwrap().to_owned();
                peer.write(
                    format!(
                        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
                    )
                    .as_bytes(),
                )?;
                peer.drain_until_eof();
                Ok(())
            }
            Script::Handshake(text) => {
                peer.read_request()?;
                peer.write(text.as_bytes())?;
                peer.drain_until_eof();
                Ok(())
            }
        });
        let mut driver = client(test_config(), Recorder::once());
        driver
            .connect(Endpoint::parse(&server.url(false, "/")).unwrap())
            .unwrap();
        run_until(&mut driver, what, |r| !r.closed.is_empty());
        let r = driver.handler();
        assert_eq!(r.closed[0].1, want, "{what}");
        assert!(r.messages.is_empty(), "{what}: {:?}", r.messages);
        if let Disconnect::Handshake(_) = want {
            assert!(r.opened.is_empty(), "{what}");
        }
        if let Some(code) = close_code {
            assert_eq!(
                server.next_log(),
                format!("{:?}", Ev::Close(Some(code))),
                "{what}"
            );
        }
    }
}

/// A connection whose venue sends larger messages than the others gets a
/// slot sized for them; the same message in a default slot is refused
/// with 1009, as every message over the limit is.
#[test]
fn a_sized_slot_takes_a_message_a_default_one_refuses() {
    const BIG: usize = 3 << 20;
    let server = TestServer::start(None, |peer, n, log| {
        peer.upgrade()?;
        peer.send(OpCode::Text, &vec![b'x'; BIG])?;
        log.send(format!("{n}: {:?}", peer.recv()?)).unwrap();
        peer.drain_until_eof();
        Ok(())
    });
    let config = Config {
        max_connections: 2,
        sized_slots: vec![SlotSize {
            count: 1,
            read_buffer_size: 64 * 1024,
            max_message_size: 4 << 20,
        }],
        ..test_config()
    };
    assert!(config.memory() > (4 << 20) + 2 * (1 << 20));
    let mut driver = client(config, Recorder::once());
    let url = Endpoint::parse(&server.url(false, "/")).unwrap();
    let big = driver.connect_sized(url.clone(), BIG).unwrap();
    assert_eq!(big.index(), 2, "the sized slot, after the two default ones");
    run_until(&mut driver, "the big message", |r| !r.messages.is_empty());
    assert!(matches!(&driver.handler().messages[0].1, Ev::Text(t) if t.len() == BIG));
    // No other slot holds it.
    assert!(driver.connect_sized(url.clone(), BIG).is_err());
    // A default slot: the same message is too big.
    let small = driver.connect(url).unwrap();
    assert!(small.index() < 2);
    run_until(&mut driver, "the small slot's close", |r| {
        r.closed.iter().any(|(id, _)| *id == small)
    });
    let (_, why) = driver
        .handler()
        .closed
        .iter()
        .find(|(id, _)| *id == small)
        .unwrap();
    assert!(
        matches!(
            why,
            Disconnect::Protocol(ProtocolError::FrameTooLarge | ProtocolError::MessageTooLarge)
        ),
        "{why:?}"
    );
    // The server (its second connection, the default slot's) was told so:
    // a close frame with 1009. The sized slot's connection is still open,
    // its script waiting: it says nothing.
    assert_eq!(
        server.next_log(),
        format!("1: {:?}", Ev::Close(Some(CloseCode::MESSAGE_TOO_BIG.0)))
    );
}

/// A server connection takes the smallest free slot, as a client's does:
/// a default one, even when a sized slot was freed last.
#[test]
fn a_server_connection_takes_a_default_slot_before_a_sized_one() {
    let config = Config {
        max_connections: 2,
        sized_slots: vec![SlotSize {
            count: 1,
            read_buffer_size: 64 * 1024,
            max_message_size: 4 << 20,
        }],
        ..test_config()
    };
    let mut server = Driver::new(config.clone(), &TlsConfig::empty(), Recorder::once()).unwrap();
    // The sized slot, used and freed: the last slot freed. (A peer that
    // closes at once: the handshake fails, and is not tried again.)
    let gone = TestServer::start(None, |_, _, _| Ok(()));
    let sized = server
        .connect_sized(Endpoint::parse(&gone.url(false, "/")).unwrap(), 4 << 20)
        .unwrap();
    assert_eq!(sized.index(), 2);
    run_until(&mut server, "the sized slot's end", |r| {
        !r.closed.is_empty()
    });
    assert!(!server.is_live(sized));
    let addr = server.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let mut client = client(config, Recorder::once());
    client
        .connect(Endpoint::parse(&format!("ws://127.0.0.1:{}/", addr.port())).unwrap())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.handler().opened.is_empty() || client.handler().opened.is_empty() {
        assert!(Instant::now() < deadline, "the server never accepted");
        server.poll_timeout(Duration::from_millis(1)).unwrap();
        client.poll_timeout(Duration::from_millis(1)).unwrap();
    }
    let accepted = server.handler().opened[0];
    assert!(accepted.index() < 2, "a default slot: {}", accepted.index());
}

/// Sizes the driver cannot work with are refused when it is made, by name.
#[test]
fn a_config_out_of_range_is_refused_by_name() {
    let refused = |config: Config, name: &str| {
        let Err(e) = Driver::new(config, &TlsConfig::empty(), Recorder::default()) else {
            panic!("{name}: accepted");
        };
        assert!(e.to_string().contains(name), "{name}: {e}");
    };
    refused(
        Config {
            max_read: 4 * 1024 - 1,
            ..test_config()
        },
        "max_read",
    );
    refused(
        Config {
            read_buffer_size: 16 * 1024,
            ..test_config()
        },
        "read_buffer_size",
    );
    refused(
        Config {
            max_connections: 0,
            ..test_config()
        },
        "max_connections",
    );
    assert!(
        Driver::new(
            Config {
                max_read: 4 * 1024,
                ..test_config()
            },
            &TlsConfig::empty(),
            Recorder::default(),
        )
        .is_ok()
    );
}
