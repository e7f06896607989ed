//! Name resolution off the driver's thread.
//!
//! `getaddrinfo` blocks, sometimes for seconds; the driver must keep serving
//! its other connections meanwhile. Lookups go to one helper thread, and the
//! results come back through a channel and wake the poll with a `mio::Waker`.
//! A lookup that outlives its connection's deadline is ignored when it
//! returns (its slot generation no longer matches).

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

use mio::Waker;

/// A lookup for the slot at `index`, socket generation `generation`.
pub(crate) struct Lookup {
    pub(crate) index: usize,
    pub(crate) generation: u16,
    pub(crate) host: String,
    pub(crate) port: u16,
}

/// The answer to a [`Lookup`].
pub(crate) struct Resolved {
    pub(crate) index: usize,
    pub(crate) generation: u16,
    pub(crate) result: Result<SocketAddr, ResolveError>,
}

/// Why a host name did not resolve: the error's kind, and the resolver's
/// own words (`Name or service not known`, say).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveError {
    kind: io::ErrorKind,
    message: String,
}

impl ResolveError {
    pub(crate) fn new(kind: io::ErrorKind, message: impl Into<String>) -> ResolveError {
        ResolveError {
            kind,
            message: message.into(),
        }
    }

    /// The error's kind.
    pub fn kind(&self) -> io::ErrorKind {
        self.kind
    }
}

impl std::fmt::Display for ResolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ResolveError {}

pub(crate) struct Resolver {
    lookups: Sender<Lookup>,
    results: Receiver<Resolved>,
}

impl Resolver {
    /// Starts the helper thread; it exits when the resolver is dropped.
    pub(crate) fn start(waker: Arc<Waker>) -> io::Result<Resolver> {
        let (lookups, requests) = mpsc::channel::<Lookup>();
        let (answers, results) = mpsc::channel::<Resolved>();
        thread::Builder::new()
            .name("tickwire-resolve".into())
            .spawn(move || {
                for Lookup {
                    index,
                    generation,
                    host,
                    port,
                } in requests
                {
                    let result = (host.as_str(), port)
                        .to_socket_addrs()
                        .map_err(|e| ResolveError::new(e.kind(), e.to_string()))
                        .and_then(|mut addrs| {
                            addrs.next().ok_or_else(|| {
                                ResolveError::new(io::ErrorKind::NotFound, "no address")
                            })
                        });
                    if answers
                        .send(Resolved {
                            index,
                            generation,
                            result,
                        })
                        .is_err()
                    {
                        return;
                    }
                    // A failed wake means the driver is gone; nothing to do.
                    let _ = waker.wake();
                }
            })?;
        Ok(Resolver { lookups, results })
    }

    pub(crate) fn lookup(&self, lookup: Lookup) -> Result<(), io::ErrorKind> {
        self.lookups
            .send(lookup)
            .map_err(|_| io::ErrorKind::BrokenPipe)
    }

    /// The next finished lookup, if any.
    pub(crate) fn next(&self) -> Option<Resolved> {
        self.results.try_recv().ok()
    }
}
