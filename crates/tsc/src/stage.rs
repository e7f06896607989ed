//! A message's way through the stack: the points where it is stamped, and
//! the stages between them that get a histogram each.

use std::fmt;

use crate::clock::Ticks;

/// The clock readings taken for one message on its way in. `Copy`, 64
/// bytes, handed to the handler with the payload. A zero field was not
/// stamped (a plain `ws://` connection has no TLS stage; a handler that
/// decodes no JSON leaves `parsed` at zero), and the stages next to it are
/// not recorded.
///
/// tickwire-net fills `poll` to `decrypted`, once per read; `decoded` and
/// the rest are the handler's: a handler that measures the frame stage
/// reads its clock as it starts (tickwire-feed does), the moment the
/// frame was decoded. The driver does not read the clock per message: on
/// the machine measured a read costs ~10 ns, and leaving it out gained
/// ~3 % of the messages a second over TLS on loopback (BENCHMARKS.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stamps {
    /// The poll call that reported the socket ready returned.
    pub poll: Ticks,
    /// The read that brought the message's last bytes was issued.
    pub read_start: Ticks,
    /// That read returned.
    pub read_end: Ticks,
    /// The TLS record(s) holding it were decrypted.
    pub decrypted: Ticks,
    /// Its WebSocket frame(s) were decoded, just before the handler ran
    /// (stamped by the handler, as it starts: see above).
    pub decoded: Ticks,
    /// Its JSON was decoded into an event.
    pub parsed: Ticks,
    /// The handler finished with it.
    pub handled: Ticks,
    /// The exchange's own timestamp of the event, ns since the Unix epoch
    /// (zero if the message carries none).
    pub exchange_unix_ns: u64,
}

/// A stage of the receive path, with its histogram. All but
/// [`Stage::Exchange`] are measured on the local clock between two
/// [`Stamps`] fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// `poll` -> `read_start`: from the wake-up to the read.
    Wake,
    /// `read_start` -> `read_end`: the read system call.
    Read,
    /// `read_end` -> `decrypted`: TLS.
    Tls,
    /// `decrypted` (or `read_end` without TLS) -> `decoded`: WebSocket frames.
    Frame,
    /// `decoded` -> `parsed`: JSON to event.
    Json,
    /// `parsed` (or `decoded`) -> `handled`: the application's handler.
    Handler,
    /// `read_end` -> `handled`: everything in this process after the read.
    Total,
    /// Exchange event time -> `read_end`, on the wall clock: the venue's own
    /// latency plus the network (and any clock skew between the two).
    Exchange,
    /// Where two lines carry the same stream (a standby line, a planned
    /// reconnect's replacement): how long before the second copy of a
    /// message its first copy arrived. Recorded by the application
    #[cfg_attr(
        feature = "metrics",
        doc = "([`Recorder::record_ns`](crate::Recorder::record_ns)), not from"
    )]
    #[cfg_attr(
        not(feature = "metrics"),
        doc = "(`Recorder::record_ns`, with the `metrics` feature), not from"
    )]
    /// stamps.
    Lead,
    /// Tick to trade: a market message's read (`read_end`) to the bytes of
    /// an order its handler placed handed to the trading connection's send.
    /// Recorded by the application, as `Lead` is.
    TickToTrade,
    /// An order request's round trip: handed to the trading connection's
    /// send to its answer's read (`read_end`). Recorded by the application,
    /// as `Lead` is.
    RoundTrip,
    /// An event published on Aeron: the feed's read (`read_end`) to a
    /// subscriber's receive of it, on one host's clock. Recorded by the
    /// subscriber, as `Lead` is.
    Delivered,
}

impl Stage {
    /// Every stage, in path order.
    pub const ALL: [Stage; 12] = [
        Stage::Wake,
        Stage::Read,
        Stage::Tls,
        Stage::Frame,
        Stage::Json,
        Stage::Handler,
        Stage::Total,
        Stage::Exchange,
        Stage::Lead,
        Stage::TickToTrade,
        Stage::RoundTrip,
        Stage::Delivered,
    ];

    /// The stage's name: the tag in `.hlog` files and the `stage` label in
    /// Prometheus output.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Wake => "wake",
            Stage::Read => "read",
            Stage::Tls => "tls",
            Stage::Frame => "frame",
            Stage::Json => "json",
            Stage::Handler => "handler",
            Stage::Total => "total",
            Stage::Exchange => "exchange",
            Stage::Lead => "lead",
            Stage::TickToTrade => "tick_to_trade",
            Stage::RoundTrip => "round_trip",
            Stage::Delivered => "delivered",
        }
    }

    /// The stage whose name is `name`.
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Its index in [`Stage::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The two local stamps the stage lies between, if both were taken.
    /// (`Exchange` is not local; `Lead`, `TickToTrade`, `RoundTrip` and `Delivered` are
    /// not from stamps: `None`.)
    #[inline]
    pub fn span(self, s: &Stamps) -> Option<(Ticks, Ticks)> {
        let or = |a: Ticks, b: Ticks| if a != 0 { a } else { b };
        let (from, to) = match self {
            Stage::Wake => (s.poll, s.read_start),
            Stage::Read => (s.read_start, s.read_end),
            Stage::Tls => (s.read_end, s.decrypted),
            Stage::Frame => (or(s.decrypted, s.read_end), s.decoded),
            Stage::Json => (s.decoded, s.parsed),
            Stage::Handler => (or(s.parsed, s.decoded), s.handled),
            Stage::Total => (s.read_end, s.handled),
            Stage::Exchange
            | Stage::Lead
            | Stage::TickToTrade
            | Stage::RoundTrip
            | Stage::Delivered => {
                return None;
            }
        };
        (from != 0 && to != 0).then_some((from, to))
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_indices_match() {
        for (i, s) in Stage::ALL.into_iter().enumerate() {
            assert_eq!(Stage::from_name(s.name()), Some(s));
            assert_eq!(s.index(), i);
        }
        assert_eq!(Stage::from_name("nope"), None);
    }

    #[test]
    fn missing_stamps_skip_their_stages() {
        let plain = Stamps {
            poll: 10,
            read_start: 11,
            read_end: 20,
            decoded: 25,
            handled: 40,
            ..Stamps::default()
        };
        assert_eq!(Stage::Tls.span(&plain), None);
        assert_eq!(Stage::Frame.span(&plain), Some((20, 25)));
        assert_eq!(Stage::Json.span(&plain), None);
        assert_eq!(Stage::Handler.span(&plain), Some((25, 40)));
        assert_eq!(Stage::Total.span(&plain), Some((20, 40)));
        assert_eq!(Stage::Exchange.span(&plain), None);
        assert_eq!(size_of::<Stamps>(), 64);
    }
}
