//! `wss://` against a rustls server with a test CA made by rcgen.

use std::net::TcpListener;
use std::time::Duration;

use tickwire_codec::OpCode;
use tickwire_net::{
    CloseCode, Config, Disconnect, Driver, Endpoint, PollMode, Timeout, TlsConfig, TlsErrorKind,
};

use crate::util::{Ev, Peer, Recorder, TestServer, pki, run_until, test_config, test_tls};

fn client(config: Config, tls: &TlsConfig, recorder: Recorder) -> Driver<Recorder> {
    Driver::new(config, tls, recorder).unwrap()
}

#[test]
fn a_full_session_over_tls() {
    let server = TestServer::start(Some(pki().server.clone()), |peer, _, log| {
        peer.upgrade()?;
        peer.send(OpCode::Text, br#"{"e":"trade","p":"1.5"}"#)?;
        peer.send(OpCode::Binary, &[0, 255, 7])?;
        peer.write(&Peer::frame(OpCode::Text, false, b"{\"a\":"))?;
        peer.send(OpCode::Ping, b"hb")?;
        peer.write(&Peer::frame(OpCode::Continuation, true, b"1}"))?;
        log.send(format!("{:?}", peer.recv()?)).unwrap();
        let big = "x".repeat(100_000); // larger than one TLS record
        peer.send(OpCode::Text, big.as_bytes())?;
        peer.close(1000, "bye")?;
        log.send(format!("{:?}", peer.recv()?)).unwrap();
        peer.drain_until_eof();
        Ok(())
    });
    let mut driver = client(test_config(), &test_tls(), Recorder::once());
    let id = driver
        .connect(Endpoint::parse(&server.url(true, "/ws")).unwrap())
        .unwrap();
    run_until(&mut driver, "the close", |r| !r.closed.is_empty());
    assert_eq!(server.next_log(), format!("{:?}", Ev::Pong(b"hb".to_vec())));
    assert_eq!(server.next_log(), format!("{:?}", Ev::Close(Some(1000))));
    let r = driver.handler();
    let got: Vec<&Ev> = r.messages.iter().map(|(_, e)| e).collect();
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0], &Ev::Text(r#"{"e":"trade","p":"1.5"}"#.into()));
    assert_eq!(got[1], &Ev::Binary(vec![0, 255, 7]));
    assert_eq!(got[2], &Ev::Text(r#"{"a":1}"#.into()));
    assert_eq!(got[3], &Ev::Text("x".repeat(100_000)));
    assert_eq!(
        r.closed,
        [(
            id,
            Disconnect::Remote {
                code: Some(CloseCode::NORMAL)
            }
        )]
    );
}

#[test]
fn a_server_that_writes_one_byte_at_a_time() {
    let server = TestServer::start(Some(pki().server.clone()), |peer, _, _| {
        let accept = peer.read_request()?;
        let mut response = [0u8; 256];
        let n = tickwire_codec::handshake::write_response(&mut response, &accept, None).unwrap();
        peer.write_bytewise(&response[..n])?;
        let mut frames = Peer::frame(OpCode::Text, true, "one κ".as_bytes());
        frames.extend(Peer::frame(OpCode::Text, false, b"tw"));
        frames.extend(Peer::frame(OpCode::Continuation, true, b"o"));
        peer.write_bytewise(&frames)?;
        peer.drain_until_eof();
        Ok(())
    });
    let mut driver = client(test_config(), &test_tls(), Recorder::default());
    driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "two messages", |r| r.messages.len() == 2);
    let got: Vec<&Ev> = driver.handler().messages.iter().map(|(_, e)| e).collect();
    assert_eq!(got, [&Ev::Text("one κ".into()), &Ev::Text("two".into())]);
}

#[test]
fn a_stalled_server_is_detected_and_subscriptions_are_resent() {
    let server = TestServer::start(Some(pki().server.clone()), |peer, n, log| {
        peer.upgrade()?;
        for _ in 0..2 {
            let ev = peer.recv_data()?;
            log.send(format!("conn {n}: {ev:?}")).unwrap();
        }
        if n == 0 {
            // Stall: the connection stays up but nothing is sent.
            std::thread::sleep(Duration::from_secs(5));
            return Ok(());
        }
        peer.send(OpCode::Text, b"live again")?;
        peer.drain_until_eof();
        Ok(())
    });
    let config = Config {
        stale_timeout: Some(Duration::from_millis(1000)),
        ..test_config()
    };
    let recorder = Recorder {
        subscribe: vec!["sub-a".into(), "sub-b".into()],
        ..Recorder::default()
    };
    let mut driver = client(config, &test_tls(), recorder);
    let id = driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "data after the reconnect", |r| {
        !r.messages.is_empty()
    });
    let r = driver.handler();
    assert_eq!(r.closed, [(id, Disconnect::Timeout(Timeout::Stale))]);
    assert_eq!(r.reconnecting.len(), 1);
    assert_eq!(r.opened, [id, id], "the same id after the reconnect");
    let mut logs: Vec<String> = (0..4).map(|_| server.next_log()).collect();
    logs.sort();
    assert_eq!(
        logs,
        [
            r#"conn 0: Text("sub-a")"#,
            r#"conn 0: Text("sub-b")"#,
            r#"conn 1: Text("sub-a")"#,
            r#"conn 1: Text("sub-b")"#
        ]
    );
}

fn expect_certificate_failure(
    tls: &TlsConfig,
    server_config: std::sync::Arc<rustls::ServerConfig>,
) {
    let server = TestServer::start(Some(server_config), |peer, _, _| peer.upgrade());
    let mut driver = client(test_config(), tls, Recorder::once());
    driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "the failure", |r| !r.closed.is_empty());
    let r = driver.handler();
    assert!(r.opened.is_empty(), "no connection may open");
    match &r.closed[0].1 {
        Disconnect::Tls(e) => {
            assert_eq!(e.kind(), TlsErrorKind::Certificate, "{e}");
            assert!(!e.to_string().is_empty());
        }
        other => panic!("expected a certificate error, got {other:?}"),
    }
}

#[test]
fn an_unknown_ca_is_refused() {
    let mut tls = TlsConfig::empty();
    tls.add_ca_pem(pki().other_ca_pem.as_bytes()).unwrap();
    expect_certificate_failure(&tls, pki().server.clone());
    // The public roots alone do not know the test CA either.
    expect_certificate_failure(&TlsConfig::webpki_roots(), pki().server.clone());
}

#[test]
fn a_wrong_host_name_is_refused() {
    expect_certificate_failure(&test_tls(), pki().wrong_name.clone());
}

#[test]
fn extra_cas_come_from_a_pem_file_next_to_the_public_roots() {
    let dir = std::env::temp_dir().join(format!("tickwire-ca-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ca.pem");
    std::fs::write(&path, &pki().ca_pem).unwrap();
    let mut tls = TlsConfig::webpki_roots();
    let public = tls.trust_anchors();
    assert_eq!(tls.add_ca_file(&path), Ok(1));
    assert_eq!(tls.trust_anchors(), public + 1);
    assert_eq!(
        TlsConfig::empty().add_ca_pem(b"not a certificate"),
        Err(tickwire_net::TlsConfigError::NoCertificates)
    );
    let server = TestServer::start(Some(pki().server.clone()), |peer, _, _| {
        peer.upgrade()?;
        peer.send(OpCode::Text, b"trusted")?;
        peer.drain_until_eof();
        Ok(())
    });
    let mut driver = client(test_config(), &tls, Recorder::default());
    driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "the message", |r| !r.messages.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refused_then_accepted_with_growing_backoff() {
    // Reserve a port, then free it so that connecting is refused.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut driver = client(test_config(), &test_tls(), Recorder::default());
    driver
        .connect(Endpoint::parse(&format!("wss://localhost:{port}/")).unwrap())
        .unwrap();
    run_until(&mut driver, "three refusals", |r| r.reconnecting.len() >= 3);
    {
        let r = driver.handler();
        for (_, reason) in &r.closed {
            assert_eq!(
                reason,
                &Disconnect::Io(std::io::ErrorKind::ConnectionRefused)
            );
        }
        let attempts: Vec<u32> = r.reconnecting.iter().map(|(_, a, _)| *a).collect();
        assert_eq!(attempts[..3], [1, 2, 3]);
        // 20 ms, 40 ms, 80 ms, each within the 10 % jitter.
        for (i, (_, _, delay)) in r.reconnecting.iter().take(3).enumerate() {
            let base = 20.0 * 2f64.powi(i as i32);
            let ms = delay.as_secs_f64() * 1000.0;
            assert!(
                ms >= base * 0.9 - 0.01 && ms <= base * 1.1 + 0.01,
                "attempt {i}: {ms} ms"
            );
        }
    }
    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
    let _server = TestServer::serve(listener, Some(pki().server.clone()), |peer, _, _| {
        peer.upgrade()?;
        peer.send(OpCode::Text, b"finally")?;
        peer.drain_until_eof();
        Ok(())
    });
    run_until(&mut driver, "the connection", |r| !r.messages.is_empty());
    let r = driver.handler();
    assert_eq!(r.opened.len(), 1);
    assert_eq!(r.messages[0].1, Ev::Text("finally".into()));
}

/// Both spinning modes: messages in order, the subscription sent on open
/// reaches the server, a ping is answered, and a server close ends the
/// connection with the server's code. In busy-read mode the driver reads
/// open sockets without waiting for epoll, and skips the read epoll then
/// asks for; nothing may be lost or stranded either way.
#[test]
fn spinning_modes_deliver_the_same() {
    for mode in [PollMode::BusyPoll, PollMode::BusyRead] {
        assert!(mode.spins());
        let server = TestServer::start(Some(pki().server.clone()), |peer, _, log| {
            peer.upgrade()?;
            let _ = log.send(format!("{:?}", peer.recv_data()?));
            for i in 0..100 {
                peer.send(OpCode::Text, format!("m{i}").as_bytes())?;
            }
            peer.send(OpCode::Ping, b"are you there")?;
            let _ = log.send(format!("{:?}", peer.recv()?));
            peer.close(4000, "bye")?;
            peer.drain_until_eof();
            Ok(())
        });
        let config = Config {
            poll_mode: mode,
            ..test_config()
        };
        let recorder = Recorder {
            subscribe: vec!["sub".into()],
            no_reconnect: true,
            ..Recorder::once()
        };
        let mut driver = client(config, &test_tls(), recorder);
        driver
            .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while driver.handler().closed.is_empty() {
            assert!(std::time::Instant::now() < deadline, "{mode:?} stalled");
            driver.poll_once().unwrap(); // returns at once when spinning
        }
        assert_eq!(server.next_log(), "Text(\"sub\")", "{mode:?}");
        assert_eq!(
            server.next_log(),
            "Pong([97, 114, 101, 32, 121, 111, 117, 32, 116, 104, 101, 114, 101])",
            "{mode:?}"
        );
        let got: Vec<String> = driver
            .handler()
            .messages
            .iter()
            .map(|(_, e)| format!("{e:?}"))
            .filter(|e| e.starts_with("Text"))
            .collect();
        let want: Vec<String> = (0..100).map(|i| format!("Text(\"m{i}\")")).collect();
        assert_eq!(got, want, "{mode:?}");
        let (_, reason) = &driver.handler().closed[0];
        assert!(
            format!("{reason:?}").contains("4000"),
            "{mode:?}: closed with {reason:?}"
        );
    }
}
