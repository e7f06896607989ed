//! A fault-injecting TCP proxy for tests, on loopback only: it sits
//! between a client and a server (the exchange simulator) and does to the
//! server's bytes, on their way to the client, what networks and venues do
//! to feeds: split them into 1-byte segments, delay them, stall, reset the
//! connection in the middle of a frame or TLS record, drop it without a
//! WebSocket close, corrupt a byte, duplicate or drop a range of bytes; and
//! it can refuse new connections for a while.
//!
//! A fault is set with [`Proxy::set`] and applies to every connection from
//! then on; byte offsets count from the moment it was set, over the server
//! to client direction. A range fault (corrupt, duplicate, drop) happens on
//! one connection: the one that carries its first byte. If that connection
//! ends in the middle of the range (the client saw the damage and hung up),
//! the rest of the range is not applied to the reconnect. The client to server direction is forwarded as is
//! (or, while stalled, not at all).

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What the proxy does to the server's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Forward everything as it comes.
    None,
    /// Forward one byte per write, with `TCP_NODELAY`: every frame and
    /// record arrives in pieces.
    Split,
    /// Hold every chunk this long before forwarding it.
    Delay(Duration),
    /// Accept bytes in both directions and forward none: the connection
    /// looks alive to the kernel and dead to the application (half-open).
    Stall,
    /// After this many more bytes, reset the connection (RST): mid-frame,
    /// mid-record. Once: the fault is then cleared.
    ResetAfter(u64),
    /// After this many more bytes, close the connection (FIN) without a
    /// WebSocket close frame or a TLS close_notify. Once, too.
    CloseAfter(u64),
    /// Flip every bit of the byte at this offset.
    CorruptAt(u64),
    /// Send the bytes `[start, start + len)` twice.
    Duplicate {
        /// Offset of the first byte.
        start: u64,
        /// How many bytes.
        len: u64,
    },
    /// Never send the bytes `[start, start + len)`.
    Drop {
        /// Offset of the first byte.
        start: u64,
        /// How many bytes.
        len: u64,
    },
}

impl Fault {
    /// A range fault's first offset.
    fn range(self) -> Option<u64> {
        match self {
            Fault::CorruptAt(k) => Some(k),
            Fault::Duplicate { start, .. } | Fault::Drop { start, .. } => Some(start),
            _ => None,
        }
    }
}

struct State {
    fault: Fault,
    /// Server-to-client bytes seen (over every connection) when the fault
    /// was set.
    origin: u64,
    /// Refuse (accept and at once reset) new connections until then.
    refuse_until: Option<Instant>,
    /// The connection a range fault started on.
    owner: Option<u64>,
}

struct Shared {
    upstream: SocketAddr,
    state: Mutex<State>,
    /// Server-to-client bytes seen, over every connection.
    downstream: AtomicU64,
    accepted: AtomicU64,
    refused: AtomicU64,
    stop: AtomicBool,
    /// Every live connection's control, to reset them all at once.
    live: Mutex<Vec<Arc<Conn>>>,
    /// Connection ids.
    next_id: AtomicU64,
}

/// One proxied connection's control. The pumps own the sockets (no other
/// descriptor may keep them open, or a reset would not be sent); they read
/// with a timeout and look here in between.
#[derive(Default)]
struct Conn {
    id: u64,
    /// Reset the client side and end.
    reset: AtomicBool,
    /// One pump ended: the other ends too.
    done: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running proxy. Dropping it stops accepting and resets every live
/// connection.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on 127.0.0.1 (a free port) and forwards to `upstream`.
    pub fn start(upstream: SocketAddr) -> io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream,
            state: Mutex::new(State {
                fault: Fault::None,
                origin: 0,
                refuse_until: None,
                owner: None,
            }),
            downstream: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            live: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("proxy-accept".into())
                .spawn(move || accept_loop(&listener, &shared))?
        };
        Ok(Proxy {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sets the fault for every connection, from now on.
    pub fn set(&self, fault: Fault) {
        let mut state = lock(&self.shared.state);
        state.fault = fault;
        state.origin = self.shared.downstream.load(Ordering::SeqCst);
        state.owner = None;
    }

    /// Refuses new connections (accepted, then reset at once) for `time`.
    pub fn refuse_for(&self, time: Duration) {
        lock(&self.shared.state).refuse_until = Some(Instant::now() + time);
    }

    /// Resets every live connection (within the pumps' 20 ms read timeout).
    pub fn reset_all(&self) {
        for conn in lock(&self.shared.live).drain(..) {
            conn.reset.store(true, Ordering::SeqCst);
        }
    }

    /// Connections accepted and forwarded so far.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Connections refused so far.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::SeqCst)
    }

    /// Server-to-client bytes that passed through so far.
    pub fn downstream_bytes(&self) -> u64 {
        self.shared.downstream.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
        self.reset_all();
    }
}

/// Makes the socket's close a TCP reset (SO_LINGER 0): the reset goes out
/// when its last descriptor is dropped.
fn reset(s: &TcpStream) {
    let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
}

/// How long a pump's read waits before it looks at its connection's control.
const TICK: Duration = Duration::from_millis(20);

/// Reads with the pump's timeout: `Ok(None)` when nothing came.
fn read_some(s: &mut TcpStream, buf: &mut [u8]) -> io::Result<Option<usize>> {
    match s.read(buf) {
        Ok(n) => Ok(Some(n)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        let client = match listener.accept() {
            Ok((c, _)) => c,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(1));
                continue;
            }
            Err(_) => continue,
        };
        let refuse = lock(&shared.state)
            .refuse_until
            .is_some_and(|t| Instant::now() < t);
        if refuse {
            shared.refused.fetch_add(1, Ordering::SeqCst);
            reset(&client);
            continue;
        }
        let Ok(server) = TcpStream::connect(shared.upstream) else {
            reset(&client);
            continue;
        };
        let _ = client.set_nonblocking(false);
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let _ = client.set_read_timeout(Some(TICK));
        let _ = server.set_read_timeout(Some(TICK));
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
            continue;
        };
        let conn = Arc::new(Conn {
            id: shared.next_id.fetch_add(1, Ordering::SeqCst),
            ..Conn::default()
        });
        lock(&shared.live).push(Arc::clone(&conn));
        let (up, up_conn) = (Arc::clone(shared), Arc::clone(&conn));
        let _ = thread::Builder::new()
            .name("proxy-up".into())
            .spawn(move || upstream_pump(c2, s2, &up, &up_conn));
        let down = Arc::clone(shared);
        let _ = thread::Builder::new()
            .name("proxy-down".into())
            .spawn(move || downstream_pump(server, client, &down, &conn));
    }
}

/// Client to server, as is (held back while stalled).
fn upstream_pump(mut client: TcpStream, mut server: TcpStream, shared: &Shared, conn: &Conn) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        if conn.done.load(Ordering::SeqCst) || conn.reset.load(Ordering::SeqCst) {
            return;
        }
        let n = match read_some(&mut client, &mut buf) {
            Ok(None) => continue,
            Ok(Some(0)) | Err(_) => {
                let _ = server.shutdown(Shutdown::Write);
                return;
            }
            Ok(Some(n)) => n,
        };
        if lock(&shared.state).fault == Fault::Stall {
            continue;
        }
        if server.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// Server to client, through the fault. Ends the connection for both
/// pumps when it returns.
fn downstream_pump(server: TcpStream, client: TcpStream, shared: &Shared, conn: &Conn) {
    downstream(server, client, shared, conn);
    conn.done.store(true, Ordering::SeqCst);
}

fn downstream(mut server: TcpStream, mut client: TcpStream, shared: &Shared, conn: &Conn) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        if conn.reset.load(Ordering::SeqCst) {
            reset(&client);
            return;
        }
        let n = match read_some(&mut server, &mut buf) {
            Ok(None) => continue,
            Ok(Some(0)) | Err(_) => {
                let _ = client.shutdown(Shutdown::Write);
                return;
            }
            Ok(Some(n)) => n,
        };
        // This chunk's offsets, counted from when the fault was set.
        let at = shared.downstream.fetch_add(n as u64, Ordering::SeqCst);
        let (fault, start) = {
            let mut s = lock(&shared.state);
            let start = at.saturating_sub(s.origin);
            let fault = match s.fault.range() {
                // The range is reached: this connection owns it.
                Some(first) if start + n as u64 > first => match s.owner {
                    None => {
                        s.owner = Some(conn.id);
                        s.fault
                    }
                    Some(id) if id == conn.id => s.fault,
                    Some(_) => Fault::None,
                },
                _ => s.fault,
            };
            (fault, start)
        };
        let chunk = &mut buf[..n];
        let end = start + n as u64;
        let local = |offset: u64| (offset.saturating_sub(start)) as usize;
        let result = match fault {
            Fault::None => client.write_all(chunk),
            Fault::Split => chunk.iter().try_for_each(|b| client.write_all(&[*b])),
            Fault::Delay(d) => {
                thread::sleep(d);
                client.write_all(chunk)
            }
            Fault::Stall => Ok(()),
            Fault::ResetAfter(k) | Fault::CloseAfter(k) if end > k => {
                let keep = local(k).min(n);
                let _ = client.write_all(&chunk[..keep]);
                if matches!(fault, Fault::ResetAfter(_)) {
                    // Sent when the upstream pump lets go of its copy too.
                    reset(&client);
                } else {
                    let _ = client.shutdown(Shutdown::Both);
                }
                // Once: the client's next connection goes through.
                let mut state = lock(&shared.state);
                if state.fault == fault {
                    state.fault = Fault::None;
                }
                let _ = server.shutdown(Shutdown::Both);
                return;
            }
            Fault::ResetAfter(_) | Fault::CloseAfter(_) => client.write_all(chunk),
            Fault::CorruptAt(k) => {
                if (start..end).contains(&k) {
                    chunk[local(k)] ^= 0xff;
                }
                client.write_all(chunk)
            }
            Fault::Duplicate { start: a, len } => {
                let (lo, hi) = (a.max(start), (a + len).min(end));
                if lo < hi {
                    let (lo, hi) = (local(lo), local(hi));
                    client
                        .write_all(&chunk[..hi])
                        .and_then(|()| client.write_all(&chunk[lo..]))
                } else {
                    client.write_all(chunk)
                }
            }
            Fault::Drop { start: a, len } => {
                let (lo, hi) = (a.max(start), (a + len).min(end));
                if lo < hi {
                    let (lo, hi) = (local(lo), local(hi));
                    client
                        .write_all(&chunk[..lo])
                        .and_then(|()| client.write_all(&chunk[hi..]))
                } else {
                    client.write_all(chunk)
                }
            }
        };
        if result.is_err() {
            let _ = server.shutdown(Shutdown::Both);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An upstream that sends `0, 1, 2, ...` (mod 256) forever, slowly
    /// enough for each fault to be set between chunks.
    fn counting_server() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                thread::spawn(move || {
                    let mut n: u8 = 0;
                    loop {
                        let chunk: Vec<u8> = (0..100)
                            .map(|_| {
                                n = n.wrapping_add(1);
                                n
                            })
                            .collect();
                        if s.write_all(&chunk).is_err() {
                            return;
                        }
                        thread::sleep(Duration::from_millis(2));
                    }
                });
            }
        });
        addr
    }

    fn read_exact(s: &mut TcpStream, n: usize) -> Vec<u8> {
        let mut v = vec![0; n];
        s.read_exact(&mut v).unwrap();
        v
    }

    #[test]
    fn bytes_pass_through_and_each_fault_does_what_it_says() {
        let proxy = Proxy::start(counting_server()).unwrap();
        let mut c = TcpStream::connect(proxy.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let first = read_exact(&mut c, 300);
        for w in first.windows(2) {
            assert_eq!(w[1], w[0].wrapping_add(1));
        }
        // Corrupt: exactly one byte differs from the sequence.
        proxy.set(Fault::CorruptAt(150));
        let got = read_exact(&mut c, 1000);
        let breaks = got
            .windows(2)
            .filter(|w| w[1] != w[0].wrapping_add(1))
            .count();
        assert!((1..=2).contains(&breaks), "{breaks} breaks");
        // Drop and duplicate: the sequence skips or repeats.
        proxy.set(Fault::Drop { start: 50, len: 10 });
        let got = read_exact(&mut c, 400);
        assert!(got.windows(2).any(|w| w[1] == w[0].wrapping_add(11)));
        proxy.set(Fault::Duplicate { start: 50, len: 10 });
        let got = read_exact(&mut c, 400);
        assert!(got.windows(2).any(|w| w[1] != w[0].wrapping_add(1)));
        // Close after 10 bytes: then end of stream.
        proxy.set(Fault::CloseAfter(10));
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        assert!(rest.len() < 10 + 16 * 1024, "{}", rest.len());

        // Refusing: the connection is reset at once.
        proxy.set(Fault::None);
        proxy.refuse_for(Duration::from_secs(60));
        let mut c = TcpStream::connect(proxy.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 1];
        assert!(matches!(c.read(&mut b), Ok(0) | Err(_)));
        assert_eq!(proxy.refused(), 1);
    }

    #[test]
    fn a_range_fault_stays_on_the_connection_it_started_on() {
        let proxy = Proxy::start(counting_server()).unwrap();
        let mut c = TcpStream::connect(proxy.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        read_exact(&mut c, 100);
        // A long range: the first connection hangs up inside it.
        proxy.set(Fault::Drop {
            start: 50,
            len: 1_000_000,
        });
        read_exact(&mut c, 50);
        thread::sleep(Duration::from_millis(50));
        drop(c);
        // The reconnect gets every byte.
        let mut c = TcpStream::connect(proxy.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let got = read_exact(&mut c, 2000);
        for w in got.windows(2) {
            assert_eq!(w[1], w[0].wrapping_add(1));
        }
    }

    #[test]
    fn a_reset_mid_stream_is_a_reset() {
        let proxy = Proxy::start(counting_server()).unwrap();
        let mut c = TcpStream::connect(proxy.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        read_exact(&mut c, 100);
        proxy.set(Fault::ResetAfter(33));
        let mut buf = vec![0; 1 << 16];
        let mut total = 0;
        let e = loop {
            match c.read(&mut buf) {
                Ok(0) => panic!("a FIN, not a reset"),
                Ok(n) => total += n,
                Err(e) => break e,
            }
        };
        assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
        assert!(total <= 33 + 16 * 1024);
    }
}
