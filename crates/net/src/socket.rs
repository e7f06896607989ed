//! A slot's byte stream: a TCP socket, or, for tickwire's own benchmarks and
//! fuzz targets, an in-memory pipe that the caller fills and empties
//! ([`Pipe`]). Everything above the stream (TLS, frames, the handler) is the
//! driver's own code either way; builds without the `internals` feature (or
//! `--cfg fuzzing`) have the TCP variant alone, so the match costs nothing.

use std::io::{self, Read, Write};
use std::net::Shutdown;

use mio::Registry;
use mio::net::TcpStream;

pub(crate) enum Socket {
    Tcp(TcpStream),
    #[cfg(any(fuzzing, feature = "internals"))]
    Memory(Pipe),
}

impl Socket {
    #[inline]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            #[cfg(any(fuzzing, feature = "internals"))]
            Socket::Memory(p) => p.read(buf),
        }
    }

    #[inline]
    pub(crate) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            #[cfg(any(fuzzing, feature = "internals"))]
            Socket::Memory(p) => {
                p.written.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }

    /// The TCP socket, if it is one.
    pub(crate) fn tcp(&mut self) -> Option<&mut TcpStream> {
        match self {
            Socket::Tcp(s) => Some(s),
            #[cfg(any(fuzzing, feature = "internals"))]
            Socket::Memory(_) => None,
        }
    }

    /// Whether this is a TCP socket: one the poll watches, that can be
    /// dialled again (an in-memory stream is neither: the caller plays its
    /// peer and hands it bytes).
    pub(crate) fn is_tcp(&self) -> bool {
        matches!(self, Socket::Tcp(_))
    }

    /// Deregisters from `registry` (a TCP socket) and shuts both directions.
    pub(crate) fn close(mut self, registry: &Registry) {
        if let Some(s) = self.tcp() {
            let _ = registry.deregister(s);
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// The in-memory stream of a benchmark's or fuzz target's connection: the
/// bytes the peer sent, read by the driver as it reads a socket, and the
/// bytes the driver wrote.
#[cfg(any(fuzzing, feature = "internals"))]
#[derive(Default)]
pub(crate) struct Pipe {
    /// What the peer sent; the driver has read `incoming[..read_at]`.
    pub(crate) incoming: Vec<u8>,
    pub(crate) read_at: usize,
    /// The most one read returns (0: as much as it asks for), as a kernel
    /// hands out what it has queued.
    pub(crate) chunk: usize,
    /// What the driver wrote, for the peer to take.
    pub(crate) written: Vec<u8>,
}

#[cfg(any(fuzzing, feature = "internals"))]
impl Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = &self.incoming[self.read_at..];
        if left.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut n = left.len().min(buf.len());
        if self.chunk > 0 {
            n = n.min(self.chunk);
        }
        buf[..n].copy_from_slice(&left[..n]);
        self.read_at += n;
        Ok(n)
    }

    /// Whether the driver has read everything the peer sent.
    pub(crate) fn drained(&self) -> bool {
        self.read_at == self.incoming.len()
    }
}
