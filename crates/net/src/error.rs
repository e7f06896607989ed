//! The errors of sending and of asking the driver for a connection: the
//! vocabulary the send side, the handler's callbacks and the driver share.

use std::fmt;

/// Why a send failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendError {
    /// The connection is not open (still connecting, closing, or closed).
    NotOpen,
    /// The frame is larger than the send buffer (or the outbox) can ever hold.
    TooLarge,
    /// The send buffer or the outbox is full; try again after it drains.
    Full,
    /// A Ping payload over 125 bytes, a close reason over 123 bytes, or a
    /// close code that may not be sent.
    InvalidControl,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendError::NotOpen => "connection not open",
            SendError::TooLarge => "message larger than the send buffer",
            SendError::Full => "send buffer full",
            SendError::InvalidControl => "invalid control frame",
        })
    }
}

impl std::error::Error for SendError {}

/// Why [`Driver::connect`](crate::Driver::connect) or a send failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverError {
    /// Every connection slot is in use.
    NoFreeSlot,
    /// No connection has this id (it was closed, or never existed).
    UnknownConnection,
    /// A send failed.
    Send(SendError),
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::NoFreeSlot => f.write_str("every connection slot is in use"),
            DriverError::UnknownConnection => f.write_str("no such connection"),
            DriverError::Send(e) => write!(f, "send failed: {e}"),
        }
    }
}

impl std::error::Error for DriverError {}

impl From<SendError> for DriverError {
    fn from(e: SendError) -> Self {
        DriverError::Send(e)
    }
}
