//! Configuration: the driver's sizes and timings, and connection endpoints.

use std::fmt;
use std::time::Duration;

use crate::payload::PAYLOAD_PADDING;
use crate::tls::record::{MAX_PLAINTEXT, MAX_RECORD};

/// How the driver waits for readiness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollMode {
    /// Sleep in `epoll_wait` until an event or the next deadline. Lowest CPU
    /// use; each wake-up pays the scheduler's latency.
    Blocking,
    /// Poll with a zero timeout and return at once, for a thread pinned to
    /// its own core that spins on [`Driver::poll_once`](crate::Driver::poll_once).
    BusyPoll,
    /// Like `BusyPoll`, but each turn first reads every open connection's
    /// socket directly, without waiting for epoll to report it; epoll (with
    /// a zero timeout, every 16th turn) still handles connects, accepts,
    /// writes, closes and timers, so those may wait a few microseconds.
    /// On loopback a `read`-spinning client saw data 0.43 us sooner at the
    /// median than an epoll-spinning one (`loopback` bench, plain TCP rows,
    /// BENCHMARKS.md). Each turn costs one `read` per open connection
    /// (about 0.3 us each), so it suits a thread with a few connections.
    BusyRead,
}

impl PollMode {
    /// Whether the driver returns at once instead of waiting.
    pub fn spins(self) -> bool {
        !matches!(self, PollMode::Blocking)
    }
}

/// Reconnect delays: exponential, capped, with random jitter.
///
/// Attempt `n` (from 1) waits `min(initial * multiplier^(n-1), max)`, then
/// that delay is scaled by a random factor in `[1 - jitter, 1 + jitter]`.
/// The attempt count resets once a connection completes its handshake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// Delay before the first reconnect. Default: 250 ms.
    pub initial: Duration,
    /// The cap. Default: 30 s.
    pub max: Duration,
    /// Growth per attempt. Default: 2.
    pub multiplier: f64,
    /// Relative jitter, 0 to 1. Default: 0.2.
    pub jitter: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(250),
            max: Duration::from_secs(30),
            multiplier: 2.0,
            jitter: 0.2,
        }
    }
}

impl Backoff {
    /// The delay before attempt `attempt` (1-based), given a uniform random
    /// number `unit` in `[0, 1)`.
    pub fn delay(&self, attempt: u32, unit: f64) -> Duration {
        let exp = self
            .multiplier
            .max(1.0)
            .powi(attempt.saturating_sub(1).min(64) as i32);
        let base = (self.initial.as_secs_f64() * exp).min(self.max.as_secs_f64());
        let jitter = self.jitter.clamp(0.0, 1.0);
        let factor = 1.0 - jitter + 2.0 * jitter * unit.clamp(0.0, 1.0);
        Duration::from_secs_f64((base * factor).max(0.0))
    }
}

/// Sizes and timings of a [`Driver`](crate::Driver). Everything sized here
/// is allocated once, in [`Driver::new`](crate::Driver::new).
///
/// Build one with struct update syntax:
///
/// ```
/// use std::time::Duration;
/// use tickwire_net::Config;
///
/// let config = Config {
///     max_connections: 64,
///     ping_interval: Some(Duration::from_secs(10)),
///     ..Config::default()
/// };
/// # assert_eq!(config.max_connections, 64);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Connection slots, client and server together. Default: 16.
    pub max_connections: usize,
    /// Per-connection receive buffer (plaintext). A message that arrives in
    /// one frame that fits here is handed to the handler without a copy.
    /// Default: 256 KiB.
    pub read_buffer_size: usize,
    /// The most one read system call asks for. Smaller reads keep what was
    /// read in the CPU's cache until it has been decrypted and framed (a
    /// 256 KiB read runs the ciphertext, then the plaintext, out of L1
    /// before they are used); each read is a system call. Default: 32 KiB
    /// (the `loopback` bench, BENCHMARKS.md: 8-9 % more messages a second
    /// than 256 KiB reads); at least 4 KiB.
    pub max_read: usize,
    /// Per-connection message buffer for fragmented messages and frames
    /// larger than the receive buffer; also the largest message accepted.
    /// Default: 1 MiB.
    pub max_message_size: usize,
    /// Most frames one fragmented message may use. Default: 1024.
    pub max_fragments: u32,
    /// Per-connection send buffer: frames waiting for the socket. Default: 64 KiB.
    pub write_buffer_size: usize,
    /// Per-connection queue of paced application messages. Default: 64 KiB.
    pub outbox_size: usize,
    /// Application messages per second per connection (subscriptions and
    /// any other sends), `None` for no pacing. Protocol replies (pong,
    /// close) are never paced. Default: 5 per second.
    pub send_rate: Option<f64>,
    /// Messages that may go out back to back before pacing starts. Default: 5.
    pub send_burst: u32,
    /// Name resolution plus TCP connect. Default: 10 s.
    pub connect_timeout: Duration,
    /// TLS and WebSocket handshakes. Default: 10 s.
    pub handshake_timeout: Duration,
    /// Send a Ping this often on an open connection; `None` disables.
    /// Default: 15 s.
    pub ping_interval: Option<Duration>,
    /// Reconnect when a Ping gets no Pong within this time. Default: 10 s.
    pub pong_timeout: Duration,
    /// Reconnect when no byte arrives for this long; `None` disables.
    /// Default: 60 s.
    pub stale_timeout: Option<Duration>,
    /// How long to wait for the peer to finish a close handshake. Default: 2 s.
    pub close_timeout: Duration,
    /// Reconnect delays.
    pub backoff: Backoff,
    /// Blocking or busy polling. Default: blocking.
    pub poll_mode: PollMode,
    /// Readiness events fetched per poll. Default: 256.
    pub events_capacity: usize,
    /// More slots, beyond `max_connections`, with buffers of their own
    /// size: for connections whose venue sends larger messages than the
    /// others (a Coinbase `level2` snapshot of several megabytes) and for
    /// fetches of larger responses (a deep REST snapshot). Opened with
    /// [`Driver::connect_sized`](crate::Driver::connect_sized) and
    /// [`Driver::fetch_sized`](crate::Driver::fetch_sized). Default: none.
    pub sized_slots: Vec<SlotSize>,
    /// Reads of one socket per turn of the poll loop before the others get
    /// theirs: a connection that never drains (a firehose, or a peer
    /// faster than this thread) cannot starve the other connections or the
    /// timers. The rest is read on the next turn, which then does not wait
    /// in `epoll_wait`. Default: 32 (with the default `max_read`, 1 MiB).
    pub max_reads_per_turn: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_connections: 16,
            read_buffer_size: 256 * 1024,
            max_read: 32 * 1024,
            max_message_size: 1024 * 1024,
            max_fragments: 1024,
            write_buffer_size: 64 * 1024,
            outbox_size: 64 * 1024,
            send_rate: Some(5.0),
            send_burst: 5,
            connect_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(10),
            ping_interval: Some(Duration::from_secs(15)),
            pong_timeout: Duration::from_secs(10),
            stale_timeout: Some(Duration::from_secs(60)),
            close_timeout: Duration::from_secs(2),
            backoff: Backoff::default(),
            poll_mode: PollMode::Blocking,
            events_capacity: 256,
            sized_slots: Vec::new(),
            max_reads_per_turn: 32,
        }
    }
}

/// Slots with buffers of their own size (see [`Config::sized_slots`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSize {
    /// How many such slots.
    pub count: usize,
    /// Their receive buffer (a fetch's whole response lands here).
    pub read_buffer_size: usize,
    /// Their message buffer: the largest message they accept.
    pub max_message_size: usize,
}

/// A slot's TLS output: a handshake flight, or the send buffer's worth of
/// records (each record's header, tag and padding on top of its text).
pub(crate) fn tls_out_size(write_buffer_size: usize) -> usize {
    write_buffer_size
        + (write_buffer_size / MAX_PLAINTEXT + 1) * (MAX_RECORD - MAX_PLAINTEXT)
        + 16 * 1024
}

impl Config {
    /// The bytes one slot with these receive sizes sets aside: its receive
    /// and message buffers, its send buffer, outbox and TLS output.
    pub fn slot_bytes(&self, read_buffer_size: usize, max_message_size: usize) -> usize {
        read_buffer_size
            + max_message_size
            + 2 * PAYLOAD_PADDING
            + self.write_buffer_size
            + self.outbox_size
            + tls_out_size(self.write_buffer_size)
    }

    /// The bytes every slot of the driver sets aside at start-up.
    pub fn memory(&self) -> usize {
        self.max_connections * self.slot_bytes(self.read_buffer_size, self.max_message_size)
            + self
                .sized_slots
                .iter()
                .map(|s| s.count * self.slot_bytes(s.read_buffer_size, s.max_message_size))
                .sum::<usize>()
    }
}

/// Subprotocols an endpoint may offer.
pub const MAX_PROTOCOLS: usize = 8;
/// Extra request headers an endpoint may carry.
pub const MAX_HEADERS: usize = 16;

/// Where a client connects: a `ws://` or `wss://` URL, plus optional
/// subprotocols and extra request headers.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    tls: bool,
    host: String,
    port: u16,
    host_header: String,
    path: String,
    protocols: Vec<String>,
    headers: Vec<(String, String)>,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may hold credentials: show the names only.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Endpoint")
            .field("url", &format_args!("{self}"))
            .field("protocols", &self.protocols)
            .field("headers", &names)
            .finish()
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "wss" } else { "ws" };
        write!(f, "{scheme}://{}{}", self.host_header, self.path)
    }
}

/// Why a URL was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UrlError {
    /// The scheme is not `ws` or `wss`.
    UnsupportedScheme,
    /// There is no host.
    MissingHost,
    /// The port is not a number from 1 to 65535.
    InvalidPort,
    /// User information (`user@`) and fragments (`#...`) are not supported.
    Unsupported,
    /// A character that may not appear in a request line or header.
    InvalidCharacter,
    /// More than [`MAX_PROTOCOLS`] subprotocols or [`MAX_HEADERS`] headers.
    TooMany,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::UnsupportedScheme => "the scheme must be ws://, wss://, http:// or https://",
            UrlError::MissingHost => "the URL has no host",
            UrlError::InvalidPort => "the port is not a number from 1 to 65535",
            UrlError::Unsupported => "user info and fragments are not supported",
            UrlError::InvalidCharacter => "the URL holds a character not allowed in HTTP",
            UrlError::TooMany => "too many subprotocols or headers",
        })
    }
}

impl std::error::Error for UrlError {}

impl Endpoint {
    /// Parses `ws://host[:port][/path][?query]` or the `wss://` form
    /// (`http://` and `https://` are accepted as the same, for
    /// [`Driver::fetch`](crate::Driver::fetch)). IPv6 literals go in
    /// brackets: `ws://[::1]:9001/`.
    pub fn parse(url: &str) -> Result<Endpoint, UrlError> {
        // `https://` and `http://` name the same transports, for
        // `Driver::fetch`.
        let (tls, rest) = if let Some(r) = strip_prefix_ignore_case(url, "wss://")
            .or_else(|| strip_prefix_ignore_case(url, "https://"))
        {
            (true, r)
        } else if let Some(r) = strip_prefix_ignore_case(url, "ws://")
            .or_else(|| strip_prefix_ignore_case(url, "http://"))
        {
            (false, r)
        } else {
            return Err(UrlError::UnsupportedScheme);
        };
        if !url.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(UrlError::InvalidCharacter);
        }
        if rest.contains('#') {
            return Err(UrlError::Unsupported);
        }
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(split);
        if authority.contains('@') {
            return Err(UrlError::Unsupported);
        }
        let (host, port) = split_host_port(authority)?;
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or(UrlError::InvalidPort)?,
            None if tls => 443,
            None => 80,
        };
        if host.is_empty() {
            return Err(UrlError::MissingHost);
        }
        let default_port = if tls { 443 } else { 80 };
        let bracketed = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_owned()
        };
        let host_header = if port == default_port {
            bracketed
        } else {
            format!("{bracketed}:{port}")
        };
        let path = match target {
            "" => "/".to_owned(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_owned(),
        };
        Ok(Endpoint {
            tls,
            host: host.to_owned(),
            port,
            host_header,
            path,
            protocols: Vec::new(),
            headers: Vec::new(),
        })
    }

    /// Offers a subprotocol in `Sec-WebSocket-Protocol` (in order of preference).
    pub fn protocol(mut self, name: &str) -> Result<Endpoint, UrlError> {
        if self.protocols.len() == MAX_PROTOCOLS {
            return Err(UrlError::TooMany);
        }
        self.protocols.push(name.to_owned());
        Ok(self)
    }

    /// Adds a request header (for example an API key or `Origin`).
    pub fn header(mut self, name: &str, value: &str) -> Result<Endpoint, UrlError> {
        if self.headers.len() == MAX_HEADERS {
            return Err(UrlError::TooMany);
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(UrlError::InvalidCharacter);
        }
        self.headers.push((name.to_owned(), value.to_owned()));
        Ok(self)
    }

    /// Whether this is a `wss://` endpoint.
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The host name or IP address (without brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The request target: path and query.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The `Host` header value: host, plus the port when it is not the default.
    pub fn host_header(&self) -> &str {
        &self.host_header
    }

    /// Calls `f` with the codec's view of the upgrade request.
    pub(crate) fn with_request<R>(
        &self,
        f: impl FnOnce(&tickwire_codec::handshake::Request<'_>) -> R,
    ) -> R {
        let mut protocols = [""; MAX_PROTOCOLS];
        for (slot, p) in protocols.iter_mut().zip(&self.protocols) {
            *slot = p;
        }
        let mut headers = [("", ""); MAX_HEADERS];
        for (slot, (n, v)) in headers.iter_mut().zip(&self.headers) {
            *slot = (n, v);
        }
        f(&tickwire_codec::handshake::Request {
            host: &self.host_header,
            path: &self.path,
            protocols: &protocols[..self.protocols.len()],
            headers: &headers[..self.headers.len()],
        })
    }

    /// Calls `f` with the offered subprotocols as `&[&str]`.
    pub(crate) fn with_protocols<R>(&self, f: impl FnOnce(&[&str]) -> R) -> R {
        let mut protocols = [""; MAX_PROTOCOLS];
        for (slot, p) in protocols.iter_mut().zip(&self.protocols) {
            *slot = p;
        }
        f(&protocols[..self.protocols.len()])
    }
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Splits `host[:port]` or `[v6][:port]`.
fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), UrlError> {
    if let Some(rest) = authority.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return Err(UrlError::MissingHost);
        };
        let host = &rest[..end];
        match &rest[end + 1..] {
            "" => Ok((host, None)),
            p => p
                .strip_prefix(':')
                .map(|p| (host, Some(p)))
                .ok_or(UrlError::InvalidPort),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => Ok((host, Some(port))),
            None => Ok((authority, None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Backoff, Endpoint, UrlError};

    #[test]
    fn urls_parse_into_their_parts() {
        let e = Endpoint::parse("wss://stream.binance.com:9443/ws/btcusdt@trade").unwrap();
        assert!(e.is_tls());
        assert_eq!((e.host(), e.port()), ("stream.binance.com", 9443));
        assert_eq!(e.host_header(), "stream.binance.com:9443");
        assert_eq!(e.path(), "/ws/btcusdt@trade");
        assert_eq!(
            e.to_string(),
            "wss://stream.binance.com:9443/ws/btcusdt@trade"
        );

        let e = Endpoint::parse("WS://example.com?stream=a").unwrap();
        assert!(!e.is_tls());
        assert_eq!(
            (e.port(), e.host_header(), e.path()),
            (80, "example.com", "/?stream=a")
        );

        let e = Endpoint::parse("wss://[::1]:9001").unwrap();
        assert_eq!(
            (e.host(), e.port(), e.host_header()),
            ("::1", 9001, "[::1]:9001")
        );
        let e = Endpoint::parse("wss://[::1]/x").unwrap();
        assert_eq!((e.port(), e.host_header()), (443, "[::1]"));
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        for (url, err) in [
            ("ftp://example.com/", UrlError::UnsupportedScheme),
            ("ws:///path", UrlError::MissingHost),
            ("ws://example.com:0/", UrlError::InvalidPort),
            ("ws://example.com:99999/", UrlError::InvalidPort),
            ("ws://example.com:x/", UrlError::InvalidPort),
            ("ws://user@example.com/", UrlError::Unsupported),
            ("ws://example.com/#frag", UrlError::Unsupported),
            ("ws://example.com/a b", UrlError::InvalidCharacter),
            ("ws://[::1/", UrlError::MissingHost),
        ] {
            assert_eq!(Endpoint::parse(url), Err(err), "{url}");
        }
        // http(s):// name the same transports as ws(s):// (for fetch).
        let e = Endpoint::parse("https://api.example.com/v1?x=1").unwrap();
        assert_eq!((e.is_tls(), e.port(), e.path()), (true, 443, "/v1?x=1"));
        assert!(!Endpoint::parse("http://h/").unwrap().is_tls());
        let e = Endpoint::parse("ws://h/").unwrap();
        assert_eq!(
            e.header("X", "a\r\nb").err(),
            Some(UrlError::InvalidCharacter)
        );
    }

    #[test]
    fn debug_output_hides_header_values() {
        let e = Endpoint::parse("wss://h/")
            .unwrap()
            .header("X-Api-Key", "secret")
            .unwrap();
        let shown = format!("{e:?}");
        assert!(
            shown.contains("X-Api-Key") && !shown.contains("secret"),
            "{shown}"
        );
    }

    #[test]
    fn backoff_grows_caps_and_jitters_within_bounds() {
        let b = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
            multiplier: 2.0,
            jitter: 0.25,
        };
        assert_eq!(b.delay(1, 0.5), Duration::from_millis(100));
        assert_eq!(b.delay(3, 0.5), Duration::from_millis(400));
        assert_eq!(b.delay(10, 0.5), Duration::from_secs(1));
        assert_eq!(b.delay(1, 0.0), Duration::from_millis(75));
        assert_eq!(b.delay(1, 1.0), Duration::from_millis(125));
        assert_eq!(b.delay(u32::MAX, 0.5), Duration::from_secs(1));
    }
}
