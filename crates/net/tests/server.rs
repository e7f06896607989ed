//! The blocking server role (`tickwire_net::server`) against the driver as
//! its client, over TLS on loopback: the upgrade, messages both ways
//! (text and binary), a ping, the close handshake, a plain GET answered
//! as REST, and bad upgrade requests answered 400/426 with a typed error.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use tickwire_codec::handshake::HandshakeError;
use tickwire_net::server::{Incoming, Request, Server, ServerError, ServerTls};
use tickwire_net::{CloseCode, Disconnect, Driver, Endpoint};

use crate::util::{Ev, Recorder, pki, test_config, test_tls};

fn tls_server() -> Server {
    let tls = ServerTls::from_pem(
        pki().server_cert_pem.as_bytes(),
        pki().server_key_pem.as_bytes(),
    )
    .expect("the test certificate");
    Server::bind("127.0.0.1:0".parse().unwrap(), Some(tls)).unwrap()
}

#[test]
fn a_tls_websocket_session_and_a_rest_answer() {
    let server = tls_server();
    let port = server.local_addr().unwrap().port();
    let peer = thread::spawn(move || -> Result<Vec<String>, ServerError> {
        let mut log = Vec::new();
        for _ in 0..2 {
            let mut s = server
                .accept(Duration::from_secs(10))?
                .expect("a client within 10 s");
            match s.read_request(Duration::from_secs(5))? {
                Request::Get { path } => {
                    log.push(format!("GET {path}"));
                    s.respond(200, "application/json", br#"{"lastUpdateId":7}"#)?;
                }
                Request::WebSocket { path, headers } => {
                    log.push(format!("WS {path}"));
                    // The upgrade's own headers, as the client sent them.
                    let has =
                        |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
                    assert!(has("Sec-WebSocket-Key") && has("Host"), "{headers:?}");
                    s.accept_websocket()?;
                    // Polled without waiting until the subscription is in.
                    let deadline = Instant::now() + Duration::from_secs(5);
                    loop {
                        match s.recv(Duration::ZERO)? {
                            Some(Incoming::Text(t)) => break log.push(t),
                            None if Instant::now() < deadline => {
                                thread::sleep(Duration::from_millis(1));
                            }
                            other => panic!("expected the subscription, got {other:?}"),
                        }
                    }
                    // The client (no heartbeats) has nothing more to say.
                    assert_eq!(s.recv(Duration::ZERO)?, None);
                    s.send_ping(b"hb")?;
                    for i in 0..50 {
                        s.send_text(&format!("{{\"n\":{i}}}"))?;
                    }
                    // The rest queued and written in one go.
                    for i in 50..100 {
                        s.queue_text(&format!("{{\"n\":{i}}}"))?;
                    }
                    s.flush()?;
                    s.send_close(CloseCode::NORMAL, "done")?;
                    // The client answers the close.
                    loop {
                        match s.recv(Duration::from_secs(5)) {
                            Ok(Some(Incoming::Closed(code))) => {
                                log.push(format!("closed {code:?}"));
                                break;
                            }
                            Ok(_) => {}
                            Err(ServerError::Eof) => {
                                log.push("eof".into());
                                break;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
        }
        Ok(log)
    });

    let mut recorder = Recorder::once();
    recorder.subscribe = vec![r#"{"method":"SUBSCRIBE","id":1}"#.into()];
    let mut driver = Driver::new(test_config(), &test_tls(), recorder).unwrap();
    driver
        .connect(Endpoint::parse(&format!("wss://localhost:{port}/stream?streams=a")).unwrap())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while driver.handler().closed.is_empty() {
        assert!(Instant::now() < deadline, "stalled");
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
    driver
        .fetch(Endpoint::parse(&format!("https://localhost:{port}/depth?symbol=X")).unwrap())
        .unwrap();
    while driver.handler().responses.is_empty() {
        assert!(Instant::now() < deadline, "stalled");
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
    let log = peer.join().unwrap().expect("the server side");
    let h = driver.handler();
    let texts: Vec<String> = h
        .messages
        .iter()
        .map(|(_, ev)| match ev {
            Ev::Text(t) => t.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let want: Vec<String> = (0..100).map(|i| format!("{{\"n\":{i}}}")).collect();
    assert_eq!(texts, want);
    assert!(
        matches!(
            h.closed[0].1,
            Disconnect::Remote {
                code: Some(CloseCode::NORMAL)
            }
        ),
        "{:?}",
        h.closed
    );
    assert_eq!(
        log[..2],
        [
            "WS /stream?streams=a".to_string(),
            r#"{"method":"SUBSCRIBE","id":1}"#.to_string()
        ]
    );
    assert!(
        log[2] == "closed Some(CloseCode(1000))" || log[2] == "eof",
        "{log:?}"
    );
    assert_eq!(log[3], "GET /depth?symbol=X");
    assert_eq!(h.responses[0].1, 200);
    assert_eq!(h.responses[0].2, br#"{"lastUpdateId":7}"#);
}

/// Binary messages queued between text ones arrive as binary frames,
/// byte for byte and in order: an empty one, short ones, and one past
/// 64 KiB (the frame's 64-bit length form).
#[test]
fn binary_messages_queued_among_text_arrive_whole_and_in_order() {
    let server = tls_server();
    let port = server.local_addr().unwrap().port();
    let big: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let sent = vec![
        Ev::Text("first".into()),
        Ev::Binary(vec![0, 1, 2, 0xff]),
        Ev::Binary(Vec::new()),
        Ev::Text("between".into()),
        Ev::Binary(big),
        Ev::Binary(b"\x80 not UTF-8 \xc3".to_vec()),
        Ev::Text("last".into()),
    ];
    let queued = sent.clone();
    let peer = thread::spawn(move || -> Result<(), ServerError> {
        let mut s = server
            .accept(Duration::from_secs(10))?
            .expect("a client within 10 s");
        assert!(matches!(
            s.read_request(Duration::from_secs(5))?,
            Request::WebSocket { .. }
        ));
        s.accept_websocket()?;
        for ev in &queued {
            match ev {
                Ev::Text(t) => s.queue_text(t)?,
                Ev::Binary(b) => s.queue_binary(b)?,
                other => unreachable!("{other:?}"),
            }
        }
        // Written in one go.
        s.flush()?;
        s.send_close(CloseCode::NORMAL, "done")?;
        loop {
            match s.recv(Duration::from_secs(5)) {
                Ok(Some(Incoming::Closed(_))) | Err(ServerError::Eof) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
    });
    let mut driver = Driver::new(test_config(), &test_tls(), Recorder::once()).unwrap();
    driver
        .connect(Endpoint::parse(&format!("wss://localhost:{port}/ws")).unwrap())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while driver.handler().closed.is_empty() {
        assert!(Instant::now() < deadline, "stalled");
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
    }
    peer.join().unwrap().expect("the server side");
    let got: Vec<Ev> = driver
        .handler()
        .messages
        .iter()
        .map(|(_, ev)| ev.clone())
        .collect();
    assert_eq!(got, sent);
}

/// Sends `request` to a plain server and returns its answer and the
/// session's error.
fn bad_request(request: &str) -> (String, ServerError) {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), None).unwrap();
    let addr: SocketAddr = server.local_addr().unwrap();
    let peer = thread::spawn(move || {
        let mut s = server.accept(Duration::from_secs(10)).unwrap().unwrap();
        s.read_request(Duration::from_secs(5)).unwrap_err()
    });
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    let error = peer.join().unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).unwrap();
    (answer, error)
}

#[test]
fn bad_upgrades_are_answered_and_typed() {
    let (answer, e) = bad_request(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert!(
        matches!(e, ServerError::Handshake(HandshakeError::InvalidKey)),
        "{e:?}"
    );

    let (answer, e) = bad_request(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 426 "), "{answer}");
    assert!(
        matches!(
            e,
            ServerError::Handshake(HandshakeError::UnsupportedVersion)
        ),
        "{e:?}"
    );

    let (answer, e) = bad_request("POST /api HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert!(matches!(e, ServerError::Handshake(_)), "{e:?}");
}

/// A client's pings are answered (a pong with the same payload, in
/// order) and counted, and so are its pongs, whether they come before a
/// text message or after it: a simulator counts them against a venue's
/// limit on incoming messages (Binance: "a PING frame, a PONG frame").
#[test]
fn pings_and_pongs_from_the_client_are_answered_and_counted() {
    use tickwire_codec::{OpCode, encode_frame};
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), None).unwrap();
    let addr: SocketAddr = server.local_addr().unwrap();
    let peer = thread::spawn(move || -> Result<Vec<(String, u64, u64)>, ServerError> {
        let mut s = server
            .accept(Duration::from_secs(10))?
            .expect("a client within 10 s");
        assert!(matches!(
            s.read_request(Duration::from_secs(5))?,
            Request::WebSocket { .. }
        ));
        s.accept_websocket()?;
        assert_eq!((s.pings_received(), s.pongs_received()), (0, 0));
        // Each text, with the counts as it is returned; until the close.
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            assert!(Instant::now() < deadline, "the client's frames within 10 s");
            match s.recv(Duration::from_millis(100))? {
                Some(Incoming::Text(t)) => seen.push((t, s.pings_received(), s.pongs_received())),
                Some(Incoming::Closed(_)) => {
                    seen.push(("closed".into(), s.pings_received(), s.pongs_received()));
                    return Ok(seen);
                }
                Some(other) => panic!("{other:?}"),
                None => {}
            }
        }
    });
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        c.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101 "), "{head:?}");
    // Client frames are masked.
    let frame = |opcode: OpCode, payload: &[u8]| {
        let mut out = vec![0u8; payload.len() + 14];
        let n = encode_frame(&mut out, opcode, true, payload, Some([1, 2, 3, 4])).unwrap();
        out.truncate(n);
        out
    };
    let mut frames = Vec::new();
    for (opcode, payload) in [
        (OpCode::Ping, &b"p1"[..]),
        (OpCode::Pong, b"q1"),
        (OpCode::Ping, b"p2"),
        (OpCode::Text, b"first"),
        (OpCode::Pong, b"q2"),
        (OpCode::Ping, b"p3"),
        (OpCode::Text, b"second"),
        (OpCode::Ping, b"p4"),
    ] {
        frames.extend(frame(opcode, payload));
    }
    c.write_all(&frames).unwrap();
    // The four pings answered, unmasked, in order.
    let mut pongs = [0u8; 16];
    c.read_exact(&mut pongs).unwrap();
    let want: Vec<u8> = ["p1", "p2", "p3", "p4"]
        .iter()
        .flat_map(|p| [&[0x8a, 2][..], p.as_bytes()].concat())
        .collect();
    assert_eq!(pongs[..], want[..]);
    let mut close = [0u8; 16];
    let n = tickwire_codec::encode_close(
        &mut close,
        Some((CloseCode::NORMAL, "")),
        Some([5, 6, 7, 8]),
    )
    .unwrap();
    c.write_all(&close[..n]).unwrap();
    let seen = peer.join().unwrap().expect("the server side");
    assert_eq!(
        seen,
        [
            ("first".to_string(), 2, 1),
            ("second".to_string(), 3, 2),
            ("closed".to_string(), 4, 2),
        ]
    );
}
