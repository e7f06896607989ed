//! What every client does with a message (the same handler for all), and
//! what it reports: rate, and in latency runs the stamp -> handler and
//! read -> handler histograms.

use std::time::Instant;

use hdrhistogram::Histogram;
use tickwire_net::{Conn, Handler, Payload, Stamps};
use tickwire_tsc::Calibration;

/// Where the 20-digit TSC stamp sits in a latency message.
const STAMP_AT: usize = 40;

/// Writes the send TSC into a latency message, as 20 decimal digits.
pub(crate) fn stamp(msg: &mut [u8], mut stamp: u64) {
    for d in msg[STAMP_AT..STAMP_AT + 20].iter_mut().rev() {
        *d = b'0' + (stamp % 10) as u8;
        stamp /= 10;
    }
}

fn stamp_of(payload: &[u8]) -> u64 {
    payload[STAMP_AT..STAMP_AT + 20]
        .iter()
        .fold(0, |a, &d| a * 10 + u64::from(d - b'0'))
}

/// What a client measured.
pub(crate) struct Report {
    pub(crate) per_second: f64,
    pub(crate) latency: Histogram<u64>,
    pub(crate) library: Histogram<u64>,
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap()
}

pub(crate) struct Measure {
    pub(crate) clock: Calibration,
    pub(crate) want: usize,
    pub(crate) got: usize,
    first: Option<Instant>,
    last: Instant,
    latency: Histogram<u64>,
    /// Read return -> handler: the client library's own share.
    library: Histogram<u64>,
    /// When the socket read that brought the current message returned.
    pub(crate) read_stamp: u64,
    stamped: bool,
}

impl Measure {
    pub(crate) fn new(clock: Calibration, want: usize, stamped: bool) -> Measure {
        Measure {
            clock,
            want,
            got: 0,
            first: None,
            last: Instant::now(),
            latency: new_histogram(),
            library: new_histogram(),
            read_stamp: 0,
            stamped,
        }
    }

    /// The handler's work, the same for every client: read every payload
    /// byte (a word-wise checksum), and the stamp in latency runs. The wall
    /// clock is read only at the first and the last message.
    pub(crate) fn message(&mut self, payload: &[u8]) {
        if self.stamped {
            let now = self.clock.clock().now();
            let ns = self.clock.ns_between(stamp_of(payload), now);
            self.latency.saturating_record(ns.max(1));
            let ns = self.clock.ns_between(self.read_stamp, now);
            self.library.saturating_record(ns.max(1));
        }
        let (words, tail) = payload.as_chunks::<8>();
        let sum = words.iter().fold(0u64, |a, w| a ^ u64::from_le_bytes(*w));
        std::hint::black_box(tail.iter().fold(sum, |a, &b| a ^ u64::from(b)));
        self.got += 1;
        if self.got == 1 {
            self.first = Some(Instant::now());
        }
        if self.got == self.want {
            self.last = Instant::now();
        }
    }

    pub(crate) fn report(self) -> Report {
        let span = self.last - self.first.unwrap_or(self.last);
        Report {
            per_second: (self.got.saturating_sub(1)) as f64 / span.as_secs_f64().max(1e-9),
            latency: self.latency,
            library: self.library,
        }
    }
}

impl Handler for Measure {
    fn on_message(&mut self, _conn: &mut Conn<'_>, payload: Payload<'_>, stamps: Stamps) {
        self.read_stamp = stamps.read_end;
        self.message(payload.as_bytes());
    }
}
