//! [`Client`]: a blocking WebSocket client over plain TCP, for tests that
//! talk to a simulator as a bare client would (no driver, no TLS): the
//! upgrade, masked text frames out, whole unfragmented text frames in.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use tickwire_codec::handshake::{ClientHandshake, HandshakeStatus, Request};
use tickwire_codec::{OpCode, encode_frame};

/// A connected client. Every wait is on a condition with a deadline (30 s).
pub struct Client {
    tcp: TcpStream,
    input: Vec<u8>,
}

impl Client {
    /// Connects to `addr` and upgrades `path` (panics if it cannot within
    /// 30 s).
    pub fn connect(addr: SocketAddr, path: &str) -> Client {
        let mut tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut handshake = ClientHandshake::new([7; 16]);
        let host = addr.to_string();
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
    pub fn fill(&mut self) {
        let mut buf = [0u8; 65536];
        match self.tcp.read(&mut buf) {
            Ok(0) => panic!("the server closed the connection"),
            Ok(n) => self.input.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("{e}"),
        }
    }

    /// Sends `text` in one masked text frame.
    pub fn send(&mut self, text: &str) {
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

    /// The next whole text message, if it has come (the server's frames are
    /// unmasked and, for these tests, never fragmented).
    pub fn next_text(&mut self) -> Option<String> {
        let b = &self.input;
        if b.len() < 2 {
            return None;
        }
        let (len, at) = match b[1] & 0x7f {
            126 if b.len() >= 4 => (usize::from(u16::from_be_bytes([b[2], b[3]])), 4),
            127 if b.len() >= 10 => (
                u64::from_be_bytes(b[2..10].try_into().unwrap()) as usize,
                10,
            ),
            126 | 127 => return None,
            n => (usize::from(n), 2),
        };
        if b.len() < at + len {
            return None;
        }
        assert_eq!(b[0], 0x81, "a whole text frame");
        let text = String::from_utf8(b[at..at + len].to_vec()).unwrap();
        self.input.drain(..at + len);
        Some(text)
    }

    /// Messages up to the first that `is` what is awaited (30 s at most),
    /// that one included.
    pub fn until(&mut self, what: &str, is: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        loop {
            while let Some(text) = self.next_text() {
                let done = is(&text);
                seen.push(text);
                if done {
                    return seen;
                }
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            self.fill();
        }
    }
}
