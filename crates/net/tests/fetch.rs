//! `Driver::fetch`: one HTTP GET over TLS on the driver's own poll, for REST
//! snapshots: the body arrives whole and in place (chunked or not), the
//! streams on other connections keep flowing while it is awaited, and a
//! response that cannot be read is a typed error.

use std::time::{Duration, Instant};

use tickwire_codec::OpCode;
use tickwire_net::{Config, Disconnect, Driver, Endpoint, FetchError, TlsConfig};

use crate::util::{Ev, Recorder, TestServer, pki, run_until, test_config, test_tls};

fn client(config: Config, tls: &TlsConfig, recorder: Recorder) -> Driver<Recorder> {
    Driver::new(config, tls, recorder).expect("driver")
}

fn https(server: &TestServer, path: &str) -> Endpoint {
    Endpoint::parse(&format!("https://localhost:{}{path}", server.port)).unwrap()
}

/// A depth-snapshot-like JSON body of about `n` bytes.
fn body(n: usize) -> Vec<u8> {
    let mut b = br#"{"lastUpdateId":1027024,"bids":["#.to_vec();
    let mut i = 0;
    while b.len() < n {
        if i > 0 {
            b.push(b',');
        }
        b.extend_from_slice(format!(r#"["{}.00000000","{}.5"]"#, 60000 - i, i).as_bytes());
        i += 1;
    }
    b.extend_from_slice(br#"],"asks":[]}"#);
    b
}

#[test]
fn a_chunked_body_arrives_whole_in_place_and_the_slot_is_freed() {
    let payload = body(40_000);
    let expected = payload.clone();
    let server = TestServer::start(Some(pki().server.clone()), move |peer, n, log| {
        let head = peer.read_http_head()?;
        let _ = log.send(head.lines().next().unwrap_or_default().to_owned());
        let host = head
            .lines()
            .find(|l| l.starts_with("Host: "))
            .unwrap_or_default();
        let _ = log.send(host.to_owned());
        peer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")?;
        // Three chunks, written in pieces with pauses: the client sees the
        // response arrive over many reads and TLS records.
        for part in payload.chunks(payload.len() / 3 + 1) {
            let mut chunk = format!("{:x}\r\n", part.len()).into_bytes();
            chunk.extend_from_slice(part);
            chunk.extend_from_slice(b"\r\n");
            for piece in chunk.chunks(7000) {
                peer.write(piece)?;
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        peer.write(b"0\r\n\r\n")?;
        let _ = log.send(format!("served {n}"));
        peer.drain_until_eof();
        Ok(())
    });
    let mut driver = client(test_config(), &test_tls(), Recorder::default());
    for round in 0..2 {
        let id = driver
            .fetch(https(&server, "/api/v3/depth?symbol=BTCUSDT&limit=1000"))
            .unwrap();
        run_until(&mut driver, "the response", |h| h.closed.len() > round);
        assert_eq!(
            server.next_log(),
            "GET /api/v3/depth?symbol=BTCUSDT&limit=1000 HTTP/1.1"
        );
        assert_eq!(
            server.next_log(),
            format!("Host: localhost:{}", server.port)
        );
        assert_eq!(server.next_log(), format!("served {round}"));
        let h = driver.handler();
        let (rid, status, got) = &h.responses[round];
        assert_eq!((*rid, *status), (id, 200));
        assert_eq!(got.len(), expected.len());
        assert!(*got == expected, "the body differs");
        assert_eq!(h.closed[round], (id, Disconnect::Fetched));
        assert!(
            h.reconnecting.is_empty(),
            "a completed fetch is not retried"
        );
        assert!(!driver.is_open(id));
    }
}

#[test]
fn streams_keep_flowing_while_a_fetch_waits() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    // A stream that sends a message every millisecond for 2 s.
    let stream = TestServer::start(Some(pki().server.clone()), |peer, _, _| {
        peer.upgrade()?;
        for i in 0..2000 {
            peer.send(OpCode::Text, format!("m{i}").as_bytes())?;
            std::thread::sleep(Duration::from_millis(1));
        }
        peer.close(1000, "")?;
        peer.drain_until_eof();
        Ok(())
    });
    // A REST server that answers only when told to: the test holds the
    // response back until the stream has demonstrably kept flowing.
    let answer = Arc::new(AtomicBool::new(false));
    let go = Arc::clone(&answer);
    let rest = TestServer::start(Some(pki().server.clone()), move |peer, _, log| {
        peer.read_http_head()?;
        let _ = log.send("request read".to_owned());
        while !go.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        peer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")?;
        peer.drain_until_eof();
        Ok(())
    });
    let mut driver = client(test_config(), &test_tls(), Recorder::once());
    driver
        .connect(Endpoint::parse(&stream.url(true, "/ws")).unwrap())
        .unwrap();
    run_until(&mut driver, "the stream", |h| !h.messages.is_empty());
    let fetch = driver.fetch(https(&rest, "/depth")).unwrap();
    let before = driver.handler().messages.len();
    // The request reaches the server, then 50 stream messages are handled
    // while the fetch is still waiting for its response.
    run_until(&mut driver, "the request", |_| {
        rest.log.try_recv().is_ok_and(|l| l == "request read")
    });
    run_until(&mut driver, "50 messages during the fetch", |h| {
        h.messages.len() >= before + 50
    });
    assert!(
        driver.handler().responses.is_empty(),
        "the fetch is pending"
    );
    answer.store(true, Ordering::Release);
    run_until(&mut driver, "the response", |h| !h.responses.is_empty());
    assert_eq!(driver.handler().responses[0].1, 200);
    assert_eq!(driver.handler().responses[0].2, b"{}");
    assert!(
        driver
            .handler()
            .messages
            .iter()
            .all(|(_, e)| matches!(e, Ev::Text(_)))
    );
    assert!(
        driver
            .handler()
            .closed
            .iter()
            .any(|(id, r)| *id == fetch && *r == Disconnect::Fetched)
    );
}

#[test]
fn unreadable_responses_are_typed_errors() {
    let server = TestServer::start(Some(pki().server.clone()), |peer, n, _| {
        peer.read_http_head()?;
        match n {
            // The connection ends 3 bytes short of Content-Length.
            0 => peer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n1234567")?,
            // A chunk size that is not hex.
            1 => peer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")?,
            // More than the receive buffer holds.
            _ => {
                peer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")?;
                peer.write(&vec![b'x'; 200_000])?;
            }
        }
        Ok(())
    });
    let mut driver = client(test_config(), &test_tls(), Recorder::once());
    let want = [
        FetchError::Truncated,
        FetchError::BadLength,
        FetchError::TooLarge,
    ];
    for (round, want) in want.into_iter().enumerate() {
        let id = driver.fetch(https(&server, "/")).unwrap();
        run_until(&mut driver, "the failure", |h| h.closed.len() > round);
        assert_eq!(
            driver.handler().closed[round],
            (id, Disconnect::Fetch(want))
        );
    }
    assert!(driver.handler().responses.is_empty());
}

/// What issue #6 asks of the REST snapshot: fetched over tickwire's own
/// TLS on the same driver, while the diff stream keeps flowing, and the
/// book bridged from it. A Binance-shaped stream sends 120 diffs, one every
/// 2 ms; the first makes the adapter ask for a snapshot; the handler's
/// owner fetches it from a second server, which answers (chunked, as a CDN
/// would) only once five more diffs were handled with the request
/// outstanding; the book becomes valid once, never gaps, and ends equal to
/// the snapshot with every later diff applied.
#[test]
fn a_binance_book_is_bridged_from_a_fetched_snapshot() {
    use tickwire_net::{Conn, Handler, Payload, Stamps};
    use tickwire_venues::binance::{Adapter, Market};
    use tickwire_venues::book::{Limit, Side};
    use tickwire_venues::{Event, InstrumentId, InstrumentSpec, Kind};

    const SNAPSHOT_ID: u64 = 130;
    // Diff i covers update ids 100 + 2i ..= 101 + 2i and sets one bid and
    // one ask level.
    let diff = |i: u64| {
        format!(
            r#"{{"stream":"btcusdt@depth@100ms","data":{{"e":"depthUpdate","E":{},"s":"BTCUSDT","U":{},"u":{},"b":[["{}.00","{}"]],"a":[["{}.00","{}"]]}}}}"#,
            1_700_000_000_000 + i,
            100 + 2 * i,
            101 + 2 * i,
            90 + i % 7,
            i % 3,
            110 + i % 5,
            i + 1
        )
    };
    let snapshot = format!(
        r#"{{"lastUpdateId":{SNAPSHOT_ID},"bids":[["99.00","5"],["90.00","1"]],"asks":[["110.00","2"],["120.00","3"]]}}"#
    );
    // The expected book: the snapshot, then every diff with u > 130.
    let mut bids = std::collections::BTreeMap::new();
    let mut asks = std::collections::BTreeMap::new();
    bids.extend([(9900i64, 5i64), (9000, 1)]);
    asks.extend([(11000i64, 2i64), (12000, 3)]);
    for i in 0..120u64 {
        if 101 + 2 * i > SNAPSHOT_ID {
            for (side, price, size) in [
                (&mut bids, (90 + i % 7) as i64 * 100, (i % 3) as i64),
                (&mut asks, (110 + i % 5) as i64 * 100, (i + 1) as i64),
            ] {
                if size == 0 {
                    side.remove(&price);
                } else {
                    side.insert(price, size);
                }
            }
        }
    }

    let diffs: Vec<String> = (0..120).map(diff).collect();
    let stream = TestServer::start(Some(pki().server.clone()), move |peer, _, _| {
        peer.upgrade()?;
        for d in &diffs {
            peer.send(OpCode::Text, d.as_bytes())?;
            std::thread::sleep(Duration::from_millis(2));
        }
        peer.close(1000, "")?;
        peer.drain_until_eof();
        Ok(())
    });
    let body = snapshot.clone();
    // The REST server answers only when told to: after the client has
    // handled more diffs with the request outstanding.
    let answer = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let go = std::sync::Arc::clone(&answer);
    let rest = TestServer::start(Some(pki().server.clone()), move |peer, _, log| {
        let head = peer.read_http_head()?;
        let _ = log.send(head.lines().next().unwrap_or_default().to_owned());
        while !go.load(std::sync::atomic::Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (a, b) = body.split_at(body.len() / 2);
        peer.write(
            format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                a.len(),
                b.len()
            )
            .as_bytes(),
        )?;
        peer.drain_until_eof();
        Ok(())
    });

    struct Feed {
        adapter: Adapter,
        events: Vec<Event>,
        wants_snapshot: bool,
        messages: usize,
        /// Diffs handled when the book became valid.
        valid_after: Option<usize>,
        closed: usize,
    }
    impl Feed {
        fn note_valid(&mut self) {
            if self.valid_after.is_none()
                && self
                    .events
                    .iter()
                    .any(|e| matches!(e.kind, Kind::BookValid { .. }))
            {
                self.valid_after = Some(self.messages);
            }
        }
    }
    impl Handler for Feed {
        fn on_message(&mut self, _: &mut Conn<'_>, payload: Payload<'_>, stamps: Stamps) {
            self.messages += 1;
            let (buf, len) = payload.into_padded();
            let events = &mut self.events;
            let wants = &mut self.wants_snapshot;
            self.adapter
                .on_message(buf, len, stamps.read_end, &mut |e| {
                    *wants |= e.kind == Kind::Resync;
                    events.push(e);
                })
                .expect("a valid diff");
            self.note_valid();
        }
        fn on_response(
            &mut self,
            _: tickwire_net::ConnId,
            head: tickwire_net::ResponseHead,
            body: &mut [u8],
            len: usize,
        ) {
            assert_eq!(head.status, 200);
            let events = &mut self.events;
            // Fetched with `limit=1000`: a side with fewer levels is the
            // market's whole side.
            self.adapter
                .on_snapshot_at(
                    InstrumentId(0),
                    Limit::Levels(1000),
                    body,
                    len,
                    0,
                    &mut |e| events.push(e),
                )
                .expect("a valid snapshot");
            self.note_valid();
        }
        fn on_close(
            &mut self,
            _: tickwire_net::ConnId,
            _: tickwire_net::Role,
            _: &Disconnect,
        ) -> tickwire_net::Reconnect {
            self.closed += 1;
            tickwire_net::Reconnect::No
        }
    }
    let feed = Feed {
        adapter: Adapter::new(Market::Spot, &[InstrumentSpec::new("BTCUSDT", 2, 0, 100)]),
        events: Vec::new(),
        wants_snapshot: false,
        messages: 0,
        valid_after: None,
        closed: 0,
    };
    let mut driver = Driver::new(test_config(), &test_tls(), feed).unwrap();
    driver
        .connect(Endpoint::parse(&stream.url(true, "/stream")).unwrap())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut fetched_at = None;
    while driver.handler().closed < 2 {
        assert!(Instant::now() < deadline, "stalled");
        driver.poll_timeout(Duration::from_millis(5)).unwrap();
        if std::mem::take(&mut driver.handler_mut().wants_snapshot) {
            driver
                .fetch(https(&rest, "/api/v3/depth?symbol=BTCUSDT&limit=1000"))
                .unwrap();
            fetched_at = Some(driver.handler().messages);
        }
        if fetched_at.is_some_and(|at| driver.handler().messages >= at + 5) {
            answer.store(true, std::sync::atomic::Ordering::Release);
        }
    }
    assert_eq!(
        rest.next_log(),
        "GET /api/v3/depth?symbol=BTCUSDT&limit=1000 HTTP/1.1"
    );
    let h = driver.handler();
    assert_eq!(h.messages, 120);
    let kinds: Vec<Kind> = h.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == Kind::Resync).count(),
        1,
        "{kinds:?}"
    );
    assert!(
        !kinds.iter().any(|k| matches!(k, Kind::Gap { .. })),
        "{kinds:?}"
    );
    let valid = kinds
        .iter()
        .filter(|k| matches!(k, Kind::BookValid { .. }))
        .count();
    assert_eq!(valid, 1);
    // Diffs kept arriving (and were buffered) while the snapshot was
    // fetched: at least the five the response was held back for.
    let asked = fetched_at.expect("a snapshot was fetched");
    let valid_after = h.valid_after.expect("valid");
    assert!(
        valid_after >= asked + 5,
        "asked after {asked} diffs, valid after {valid_after}"
    );
    let book = h.adapter.book(InstrumentId(0)).expect("valid at the end");
    let ours = |side| -> Vec<(i64, i64)> {
        book.levels(side)
            .iter()
            .map(|l| (l.price, l.size))
            .collect()
    };
    let want_bids: Vec<_> = bids.iter().rev().map(|(&p, &s)| (p, s)).collect();
    let want_asks: Vec<_> = asks.iter().map(|(&p, &s)| (p, s)).collect();
    assert_eq!(ours(Side::Bid), want_bids);
    assert_eq!(ours(Side::Ask), want_asks);
}
