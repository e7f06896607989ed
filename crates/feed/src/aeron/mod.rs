//! Events past one machine: every event the feed emits, published on an
//! Aeron publication in the [stream layout](crate::stream), and the
//! subscriber that reads them back (feature `aeron`, off by default: the
//! Aeron C client and media driver build from source with CMake).
//!
//! - [`Client`] connects to a media driver: one it starts in this process
//!   (embedded, the default) or one already running in a directory
//!   (external: a standalone driver shared by the host's processes).
//! - [`Publisher`] is the feed's sink: [`Publisher::publish`] offers an
//!   event on an exclusive publication from the feed thread and never
//!   waits. Aeron's own answers decide what happens to an event it cannot
//!   take now: back pressure (a subscriber behind by the publication window, half a
//!   term by default) and "not
//!   connected" (no subscriber) are drops, counted in [`PublishStats`],
//!   exactly as the JSON Lines queue drops when full; the event's sequence
//!   number is spent all the same, so a subscriber sees the drop as a gap.
//! - [`Subscriber`] polls a subscription, decodes each message in place,
//!   keeps each publisher's instrument table and checks its sequence.
//!
//! Aeron facts relied on (the Aeron C client's `aeronc.h` and the Aeron
//! wiki's "Client Concurrency Model" and "Channel Configuration" pages):
//! an exclusive publication's `offer` is wait-free for its one thread and
//! returns a new position or a negative code, `-1` not connected, `-2`
//! back pressured, `-3` admin action (retry at once), `-4` closed, `-5`
//! max position exceeded; a fragment handler is called synchronously from
//! `poll` with the message's bytes in the log buffer, borrowed for the
//! call; a subscriber that joins a stream starts at the publication's
//! current position (nothing before it is delivered to it).

use std::ffi::CString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusteron_client::{Aeron, AeronContext};

mod counters;
mod driver;
mod publish;
mod subscribe;
#[cfg(test)]
mod tests;

pub use driver::EmbeddedDriver;
pub use publish::{PublishStats, Publisher};
pub use subscribe::{Received, Source, Subscriber};

/// Which media driver the client uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverSetup {
    /// Start one in this process, in `dir` (Aeron's default directory,
    /// `/dev/shm/aeron-<user>`, when `None`); it stops when the
    /// [`Client`] is dropped, and removes its directory.
    Embedded {
        /// Its directory.
        dir: Option<PathBuf>,
    },
    /// Use the one running in `dir` (Aeron's default when `None`).
    External {
        /// Its directory.
        dir: Option<PathBuf>,
    },
}

impl Default for DriverSetup {
    fn default() -> DriverSetup {
        DriverSetup::Embedded { dir: None }
    }
}

/// Where the feed publishes: `[sinks.aeron]` in the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AeronSetup {
    /// An Aeron channel URI (`aeron:ipc`, `aeron:udp?endpoint=host:port`).
    pub channel: String,
    /// The stream id.
    pub stream: i32,
    /// The media driver.
    pub driver: DriverSetup,
}

/// What went wrong setting Aeron up (the hot path has no errors: it
/// counts).
#[derive(Debug)]
pub enum AeronError {
    /// The embedded media driver did not start.
    Driver(String),
    /// No client could connect to the media driver in `dir`.
    Connect {
        /// The driver's directory.
        dir: String,
        /// Aeron's reason.
        why: String,
    },
    /// A publication or subscription could not be added.
    Channel {
        /// The channel URI.
        channel: String,
        /// The stream id.
        stream: i32,
        /// Aeron's reason.
        why: String,
    },
    /// An instrument's name is too long for the stream's table.
    Name(crate::stream::NameTooLong),
}

impl fmt::Display for AeronError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AeronError::Driver(why) => write!(f, "the embedded Aeron media driver: {why}"),
            AeronError::Connect { dir, why } => write!(
                f,
                "no Aeron media driver to connect to in {dir} (start one, or use the embedded driver): {why}"
            ),
            AeronError::Channel {
                channel,
                stream,
                why,
            } => write!(f, "Aeron channel {channel} stream {stream}: {why}"),
            AeronError::Name(e) => write!(f, "the Aeron stream's instrument table: {e}"),
        }
    }
}

impl std::error::Error for AeronError {}

/// How long adding a publication or subscription, or connecting to a
/// driver, may take before it is an error.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

fn c_string(text: &str, what: &str) -> Result<CString, String> {
    CString::new(text).map_err(|_| format!("{what} holds a NUL byte"))
}

/// A client of a media driver (and the driver, when embedded). Make one
/// per process; [`Client::publisher`] and [`Client::subscriber`] make the
/// rest. Dropping it closes the client, then stops an embedded driver.
pub struct Client {
    // Dropped first: the client closes before its driver stops.
    aeron: Aeron,
    driver: Option<EmbeddedDriver>,
    dir: String,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("dir", &self.dir)
            .field("embedded", &self.driver.is_some())
            .finish()
    }
}

impl Client {
    /// Starts or finds the media driver `setup` names, and connects.
    pub fn start(setup: &DriverSetup) -> Result<Client, AeronError> {
        let (driver, dir) = match setup {
            DriverSetup::Embedded { dir } => {
                let d = EmbeddedDriver::start(dir.as_deref())?;
                let dir = d.dir().to_owned();
                (Some(d), dir)
            }
            DriverSetup::External { dir } => {
                let dir = dir_or_default(dir.as_deref())?;
                // Said at once, rather than after the client's driver
                // timeout: a driver's directory holds its `cnc.dat`.
                if !Path::new(&dir).join("cnc.dat").exists() {
                    return Err(AeronError::Connect {
                        dir,
                        why: "no cnc.dat there: no media driver runs in it".into(),
                    });
                }
                (None, dir)
            }
        };
        let connect = |why: String| AeronError::Connect {
            dir: dir.clone(),
            why,
        };
        let ctx = AeronContext::new().map_err(|e| connect(e.to_string()))?;
        ctx.set_dir(&c_string(&dir, "the driver's directory").map_err(connect)?)
            .map_err(|e| connect(e.to_string()))?;
        ctx.set_driver_timeout_ms(SETUP_TIMEOUT.as_millis() as u64)
            .map_err(|e| connect(e.to_string()))?;
        // Errors the client's conductor meets later (a driver gone) are said
        // where an operator reads them.
        ctx.set_error_handler(Some(|code: i32, msg: &str| {
            log::warn!("aeron: {msg} (code {code})");
        }))
        .map_err(|e| connect(e.to_string()))?;
        let aeron = Aeron::new(&ctx).map_err(|e| connect(e.to_string()))?;
        aeron.start().map_err(|e| connect(e.to_string()))?;
        Ok(Client { aeron, driver, dir })
    }

    /// The media driver's directory.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// An exclusive publication on `channel` and `stream` for one feed
    /// thread, with the feed's instrument table.
    pub fn publisher(
        &self,
        channel: &str,
        stream: i32,
        instruments: &[crate::sink::Instrument],
    ) -> Result<Publisher, AeronError> {
        let bad = |why: String| AeronError::Channel {
            channel: channel.to_owned(),
            stream,
            why,
        };
        let uri = c_string(channel, "the channel").map_err(bad)?;
        let publication = self
            .aeron
            .async_add_exclusive_publication(&uri, stream)
            .and_then(|p| p.poll_blocking(SETUP_TIMEOUT))
            .map_err(|e| bad(e.to_string()))?;
        Publisher::new(self.aeron.clone(), publication, instruments).map_err(AeronError::Name)
    }

    /// A subscription to `channel` and `stream`.
    pub fn subscriber(&self, channel: &str, stream: i32) -> Result<Subscriber, AeronError> {
        let bad = |why: String| AeronError::Channel {
            channel: channel.to_owned(),
            stream,
            why,
        };
        let uri = c_string(channel, "the channel").map_err(bad)?;
        let subscription = self
            .aeron
            .async_add_subscription(
                &uri,
                stream,
                rusteron_client::Handlers::NONE,
                rusteron_client::Handlers::NONE,
            )
            .and_then(|s| s.poll_blocking(SETUP_TIMEOUT))
            .map_err(|e| bad(e.to_string()))?;
        Ok(Subscriber::new(subscription, channel, stream))
    }
}

/// `dir`, or Aeron's default directory.
fn dir_or_default(dir: Option<&Path>) -> Result<String, AeronError> {
    match dir {
        Some(d) => d
            .to_str()
            .map(str::to_owned)
            .ok_or_else(|| AeronError::Driver(format!("{} is not UTF-8", d.display()))),
        None => {
            let ctx = rusteron_media_driver::AeronDriverContext::new()
                .map_err(|e| AeronError::Driver(e.to_string()))?;
            Ok(ctx.get_dir().to_owned())
        }
    }
}
