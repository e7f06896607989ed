//! The in-place TLS 1.3 record layer against TLS implementations nobody here
//! wrote: rustls's server (every suite, key updates, tickets) and OpenSSL's
//! `s_server` (a key update it starts from its console). Also the TLS 1.2
//! fallback, and the writable padding after payloads.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tickwire_codec::OpCode;
use tickwire_net::{
    Config, Conn, Disconnect, Driver, Endpoint, Handler, PAYLOAD_PADDING, Payload, Stamps,
};

use crate::util::{Ev, Peer, Recorder, TestServer, pki, run_until, test_config, test_tls};

#[test]
fn tls13_runs_in_place_with_every_suite() {
    for (name, config) in &pki().tls13_suites {
        let server = TestServer::start(Some(config.clone()), |peer, _, log| {
            peer.upgrade()?;
            log.send(format!("{:?}", peer.tls_version())).unwrap();
            for i in 0..50 {
                peer.send(OpCode::Text, format!("message {i}").as_bytes())?;
            }
            peer.send(OpCode::Binary, &vec![7u8; 40_000])?; // spans three records
            peer.drain_until_eof();
            Ok(())
        });
        let mut driver = Driver::new(test_config(), &test_tls(), Recorder::default()).unwrap();
        let id = driver
            .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
            .unwrap();
        run_until(&mut driver, name, |r| r.messages.len() == 51);
        assert_eq!(server.next_log(), "Some(TLSv1_3)", "{name}");
        let info = driver.tls_info(id).expect("TLS is up");
        assert!(info.in_place, "{name}: TLS 1.3 must use the in-place layer");
        assert!(info.records_in >= 4, "{name}: {info:?}");
        assert!(
            info.records_out >= 1,
            "{name}: the upgrade request was sealed here"
        );
        let r = driver.handler();
        assert_eq!(r.messages[49].1, Ev::Text("message 49".into()));
        assert_eq!(r.messages[50].1, Ev::Binary(vec![7u8; 40_000]));
    }
}

#[test]
fn server_key_updates_and_session_tickets() {
    let server = TestServer::start(Some(pki().server.clone()), |peer, _, log| {
        peer.upgrade()?;
        peer.send(OpCode::Text, b"before")?;
        // Asks for our key update too: the echo of "after" is sealed under
        // the client's new key, so reading it proves the client rotated.
        peer.key_update()?;
        peer.send(OpCode::Text, b"after")?;
        for _ in 0..2 {
            log.send(format!("{:?}", peer.recv_data()?)).unwrap();
        }
        peer.key_update()?;
        peer.send(OpCode::Text, b"again")?;
        log.send(format!("{:?}", peer.recv_data()?)).unwrap();
        peer.drain_until_eof();
        Ok(())
    });
    let recorder = Recorder {
        echo: true,
        ..Recorder::default()
    };
    let mut driver = Driver::new(test_config(), &test_tls(), recorder).unwrap();
    let id = driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "three messages", |r| r.messages.len() == 3);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut echoes = Vec::new();
    while echoes.len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the server did not read the echoes"
        );
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
        if let Ok(line) = server.log.try_recv() {
            echoes.push(line);
        }
    }
    assert_eq!(
        echoes,
        [r#"Text("before")"#, r#"Text("after")"#, r#"Text("again")"#]
    );
    let info = driver.tls_info(id).unwrap();
    assert_eq!(
        (info.key_updates_in, info.key_updates_out),
        (2, 2),
        "{info:?}"
    );
    assert_eq!(
        info.tickets, 2,
        "rustls sends two tickets after the handshake: {info:?}"
    );
    assert!(driver.handler().closed.is_empty());
}

#[test]
fn a_tls12_server_works_through_rustls() {
    let server = TestServer::start(Some(pki().tls12_only.clone()), |peer, _, log| {
        peer.upgrade()?;
        log.send(format!("{:?}", peer.tls_version())).unwrap();
        peer.send(OpCode::Text, b"over TLS 1.2")?;
        log.send(format!("{:?}", peer.recv_data()?)).unwrap();
        peer.drain_until_eof();
        Ok(())
    });
    let recorder = Recorder {
        subscribe: vec!["subscribe".into()],
        ..Recorder::default()
    };
    let mut driver = Driver::new(test_config(), &test_tls(), recorder).unwrap();
    let id = driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "the message", |r| !r.messages.is_empty());
    assert_eq!(server.next_log(), "Some(TLSv1_2)");
    assert_eq!(server.next_log(), r#"Text("subscribe")"#);
    assert_eq!(
        driver.handler().messages[0].1,
        Ev::Text("over TLS 1.2".into())
    );
    assert!(!driver.tls_info(id).unwrap().in_place);
}

/// Many TLS 1.2 records in one TCP write (so in one read, or a few): each
/// holds several frames or part of one, and every message must come out of
/// rustls's traffic path whole and in order (each record's bytes consumed
/// exactly once, as rustls's `discard` counts say).
#[test]
fn tls12_records_in_one_write_arrive_whole_and_in_order() {
    fn message(i: usize) -> String {
        format!("message {i} {}", "x".repeat(i * 37 % 600))
    }
    let server = TestServer::start(Some(pki().tls12_only.clone()), |peer, _, log| {
        peer.upgrade()?;
        log.send(format!("{:?}", peer.tls_version())).unwrap();
        let stream: Vec<u8> = (0..100)
            .flat_map(|i| Peer::frame(OpCode::Text, true, message(i).as_bytes()))
            .collect();
        // Cut at uneven points: records of one byte to a few thousand.
        let mut records = Vec::new();
        let mut rest = &stream[..];
        for size in [1, 5, 70, 300, 1_200, 40, 9, 5_000].into_iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (record, after) = rest.split_at(size.min(rest.len()));
            records.push(record);
            rest = after;
        }
        log.send(records.len().to_string()).unwrap();
        peer.write_records(&records)?;
        peer.drain_until_eof();
        Ok(())
    });
    let mut driver = Driver::new(test_config(), &test_tls(), Recorder::default()).unwrap();
    let id = driver
        .connect(Endpoint::parse(&server.url(true, "/")).unwrap())
        .unwrap();
    run_until(&mut driver, "100 messages", |r| r.messages.len() >= 100);
    assert_eq!(server.next_log(), "Some(TLSv1_2)");
    let records: usize = server.next_log().parse().unwrap();
    assert!(records > 30, "{records} records");
    assert!(!driver.tls_info(id).unwrap().in_place);
    let got: Vec<&Ev> = driver.handler().messages.iter().map(|(_, ev)| ev).collect();
    let want: Vec<Ev> = (0..100).map(|i| Ev::Text(message(i))).collect();
    assert_eq!(got, want.iter().collect::<Vec<_>>());
    assert!(driver.handler().closed.is_empty());
}

/// Scribbles over the padding after every payload, as simd-json may.
#[derive(Default)]
struct Scribbler {
    seen: Vec<String>,
}

impl Handler for Scribbler {
    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        let text = payload.as_str().expect("text").to_owned();
        let (padded, len) = payload.into_padded();
        assert!(padded.len() >= len + PAYLOAD_PADDING);
        padded[len..].fill(0xff);
        padded[..len].fill(b'#'); // the payload itself is writable too
        self.seen.push(text);
    }
}

#[test]
fn writing_into_the_padding_leaves_later_messages_intact() {
    for tls in [false, true] {
        let config = tls.then(|| pki().server.clone());
        let server = TestServer::start(config, |peer, _, _| {
            peer.upgrade()?;
            // Many short frames in one write: each payload's padding covers
            // the frames after it.
            let mut burst = Vec::new();
            for i in 0..200 {
                burst.extend(Peer::frame(OpCode::Text, true, format!("m{i}").as_bytes()));
            }
            peer.write(&burst)?;
            peer.drain_until_eof();
            Ok(())
        });
        let mut driver = Driver::new(test_config(), &test_tls(), Scribbler::default()).unwrap();
        driver
            .connect(Endpoint::parse(&server.url(tls, "/")).unwrap())
            .unwrap();
        run_until(&mut driver, "200 messages", |s| s.seen.len() == 200);
        let want: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
        assert_eq!(driver.handler().seen, want, "tls {tls}");
    }
}

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// OpenSSL's test server speaks TLS 1.3; the test types the WebSocket side
/// into its console and asks it, from there, for key updates.
#[test]
fn openssl_s_server_with_key_updates() {
    if Command::new("openssl").arg("version").output().is_err() {
        eprintln!("skipped: no openssl command");
        return;
    }
    let dir = std::env::temp_dir().join(format!("tickwire-openssl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, &pki().server_cert_pem).unwrap();
    std::fs::write(&key, &pki().server_key_pem).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Kill(
        Command::new("openssl")
            .args(["s_server", "-tls1_3", "-ign_eof", "-naccept", "1"])
            .arg("-accept")
            .arg(format!("127.0.0.1:{port}"))
            .arg("-cert")
            .arg(&cert)
            .arg("-key")
            .arg(&key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl starts"),
    );
    let mut console = server.0.stdin.take().unwrap();
    // Everything s_server prints (including what the client sends) as lines.
    let (tx, lines) = mpsc::channel::<String>();
    let stdout = server.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut raw = Vec::new();
        while reader.read_until(b'\n', &mut raw).is_ok_and(|n| n > 0) {
            let _ = tx.send(String::from_utf8_lossy(&raw).into_owned());
            raw.clear();
        }
    });
    let wait_for = |what: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("s_server never printed {what}"));
            if line.contains(what) {
                return line;
            }
        }
    };
    wait_for("ACCEPT");

    let recorder = Recorder {
        echo: true,
        ..Recorder::default()
    };
    let config = Config {
        ping_interval: None,
        ..test_config()
    };
    let mut driver = Driver::new(config, &test_tls(), recorder).unwrap();
    let id = driver
        .connect(Endpoint::parse(&format!("wss://localhost:{port}/")).unwrap())
        .unwrap();
    // The client's upgrade request shows up on s_server's console.
    let deadline = Instant::now() + Duration::from_secs(10);
    let key_line = loop {
        assert!(
            Instant::now() < deadline,
            "no upgrade request reached s_server"
        );
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
        if let Ok(line) = lines.try_recv()
            && line.starts_with("Sec-WebSocket-Key:")
        {
            break line;
        }
    };
    let client_key = key_line.trim_start_matches("Sec-WebSocket-Key:").trim();
    let accept = tickwire_codec::handshake::accept_key(client_key.as_bytes());
    let mut send = |bytes: &[u8], driver: &mut Driver<Recorder>| {
        console.write_all(bytes).unwrap();
        console.flush().unwrap();
        // Let s_server read this on its own, apart from the next write.
        let until = Instant::now() + Duration::from_millis(150);
        while Instant::now() < until {
            driver.poll_timeout(Duration::from_millis(5)).unwrap();
        }
    };
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        std::str::from_utf8(&accept).unwrap()
    );
    send(response.as_bytes(), &mut driver);
    send(
        &Peer::frame(OpCode::Text, true, b"from openssl"),
        &mut driver,
    );
    send(b"K\n", &mut driver); // key update, requesting ours
    send(
        &Peer::frame(OpCode::Text, true, b"after a key update"),
        &mut driver,
    );
    send(b"k\n", &mut driver); // key update, not requesting ours
    send(&Peer::frame(OpCode::Binary, true, &[1, 2, 3]), &mut driver);
    run_until(&mut driver, "three messages", |r| r.messages.len() == 3);

    let r = driver.handler();
    let got: Vec<&Ev> = r.messages.iter().map(|(_, e)| e).collect();
    assert_eq!(
        got,
        [
            &Ev::Text("from openssl".into()),
            &Ev::Text("after a key update".into()),
            &Ev::Binary(vec![1, 2, 3])
        ]
    );
    assert!(r.closed.is_empty(), "{:?}", r.closed);
    let info = driver.tls_info(id).unwrap();
    assert!(info.in_place);
    assert_eq!(
        (info.key_updates_in, info.key_updates_out),
        (2, 1),
        "{info:?}"
    );
    // The echoes went out under the rotated key; s_server decrypted them
    // (it prints what it reads, and an error would end the connection).
    driver.poll_timeout(Duration::from_millis(100)).unwrap();
    assert!(driver.handler().closed.is_empty());
    let mut rest = String::new();
    while let Ok(line) = lines.try_recv() {
        rest.push_str(&line);
    }
    assert!(!rest.contains("error"), "{rest}");
    let _ = server.0.stdout.as_mut().map(|o| o.read(&mut [0u8; 1]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_record_that_fails_to_authenticate_ends_the_connection() {
    // A TLS server whose application data is tampered with: a plain TCP
    // proxy in front of rustls flips one ciphertext byte after the handshake.
    let upstream = TestServer::start(Some(pki().server.clone()), |peer, _, _| {
        peer.upgrade()?;
        std::thread::sleep(Duration::from_millis(100));
        peer.send(OpCode::Text, b"this record gets corrupted")?;
        peer.drain_until_eof();
        Ok(())
    });
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = proxy.local_addr().unwrap().port();
    let upstream_port = upstream.port;
    std::thread::spawn(move || {
        let (mut client, _) = proxy.accept().unwrap();
        let mut server = std::net::TcpStream::connect(("127.0.0.1", upstream_port)).unwrap();
        let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::spawn(move || std::io::copy(&mut c2, &mut s2));
        let mut buf = [0u8; 65536];
        let mut first: Option<Instant> = None;
        let mut corrupted = false;
        loop {
            let n = match server.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            // The handshake and the 101 response take a few milliseconds on
            // loopback; the message comes 100 ms after them. Flip a byte in
            // the middle of the first read that late.
            let since = first.get_or_insert_with(Instant::now).elapsed();
            if !corrupted && since > Duration::from_millis(60) {
                buf[n / 2] ^= 0x40;
                corrupted = true;
            }
            if client.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let mut driver = Driver::new(test_config(), &test_tls(), Recorder::once()).unwrap();
    driver
        .connect(Endpoint::parse(&format!("wss://localhost:{proxy_port}/")).unwrap())
        .unwrap();
    run_until(&mut driver, "the failure", |r| !r.closed.is_empty());
    let r = driver.handler();
    assert_eq!(r.opened.len(), 1);
    assert!(r.messages.is_empty());
    match &r.closed[0].1 {
        Disconnect::Tls(e) => assert_eq!(e.kind(), tickwire_net::TlsErrorKind::Decrypt, "{e}"),
        other => panic!("expected a decryption failure, got {other:?}"),
    }
}
