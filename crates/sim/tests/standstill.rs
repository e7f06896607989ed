//! The market moves only while some client is subscribed: a client that
//! connects and only pings holds it still, its subscription starts it, and
//! its unsubscription stills it again. Each "still" is read after a ping's
//! pong: the server answered the client in a later turn of its loop, which
//! steps the market (when it moves) before it reads its clients.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus, Request};
use tickwire_codec::{OpCode, encode_frame};
use tickwire_sim::{SimConfig, Simulator, Venue};

/// A blocking WebSocket client over plain TCP, enough for this test.
struct Client {
    tcp: TcpStream,
    input: Vec<u8>,
}

impl Client {
    fn connect(simulator: &Simulator, path: &str) -> Client {
        let mut tcp = TcpStream::connect(simulator.addr()).unwrap();
        tcp.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut handshake = ClientHandshake::new([7; 16]);
        let host = simulator.addr().to_string();
        let mut out = [0u8; 1024];
        let n = handshake
            .write_request(&mut out, &Request::new(&host, path))
            .unwrap();
        tcp.write_all(&out[..n]).unwrap();
        let mut client = Client {
            tcp,
            input: Vec::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            assert!(Instant::now() < deadline, "no upgrade");
            client.fill();
            if let HandshakeStatus::Complete { consumed, .. } =
                handshake.parse_response(&client.input, &[]).unwrap()
            {
                client.input.drain(..consumed);
                return client;
            }
        }
    }

    /// Reads what has come (at most 100 ms of waiting).
    fn fill(&mut self) {
        let mut buf = [0u8; 65536];
        match self.tcp.read(&mut buf) {
            Ok(0) => panic!("the simulator closed the connection"),
            Ok(n) => self.input.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("{e}"),
        }
    }

    fn send(&mut self, text: &str) {
        let mut out = vec![0u8; text.len() + 14];
        let n = encode_frame(
            &mut out,
            OpCode::Text,
            true,
            text.as_bytes(),
            Some([1, 2, 3, 4]),
        )
        .unwrap();
        self.tcp.write_all(&out[..n]).unwrap();
    }

    /// The next whole text message (the server's frames are unmasked and,
    /// here, never fragmented).
    fn next_text(&mut self) -> Option<String> {
        let b = &self.input;
        if b.len() < 2 {
            return None;
        }
        let (len, at) = match b[1] & 0x7f {
            126 if b.len() >= 4 => (u16::from_be_bytes([b[2], b[3]]) as usize, 4),
            127 if b.len() >= 10 => (
                u64::from_be_bytes(b[2..10].try_into().unwrap()) as usize,
                10,
            ),
            126 | 127 => return None,
            n => (n as usize, 2),
        };
        if b.len() < at + len {
            return None;
        }
        assert_eq!(b[0], 0x81, "a whole text frame");
        let text = String::from_utf8(b[at..at + len].to_vec()).unwrap();
        self.input.drain(..at + len);
        Some(text)
    }

    /// Reads messages until one `is` the awaited one (30 s at most).
    fn until(&mut self, what: &str, is: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            while let Some(text) = self.next_text() {
                if is(&text) {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            self.fill();
        }
    }

    /// A ping answered: the server has read this client since.
    fn ping(&mut self) {
        self.send("ping");
        self.until("pong", |t| t == "pong");
    }
}

#[test]
fn the_market_moves_only_while_a_client_is_subscribed() {
    let simulator = Simulator::start(SimConfig {
        tls: None,
        rate: 2000,
        ..SimConfig::new(Venue::Okx)
    })
    .unwrap();
    let mut client = Client::connect(&simulator, "/ws/v5/public");
    // Connected, answered, not subscribed: still.
    client.ping();
    client.ping();
    assert_eq!(simulator.stats().steps, 0);

    let symbol = SimConfig::new(Venue::Okx).instruments[0].symbol.clone();
    let arg = format!(r#"{{"channel":"books","instId":"{symbol}"}}"#);
    client.send(&format!(r#"{{"op":"subscribe","args":[{arg}]}}"#));
    client.until("the book's first update", |t| {
        t.contains(r#""action":"update""#)
    });
    assert!(simulator.stats().steps > 0);

    client.send(&format!(r#"{{"op":"unsubscribe","args":[{arg}]}}"#));
    client.until("the unsubscribe answer", |t| {
        t.contains(r#""event":"unsubscribe""#)
    });
    client.ping();
    let still = simulator.stats().steps;
    client.ping();
    client.ping();
    assert_eq!(simulator.stats().steps, still);
    simulator.stop();
}
