//! Why a message was refused, or could not be written.

use core::fmt;

/// Why bytes did not decode as a message of the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Shorter than its header, blocks, groups or var data say it is:
    /// `need` bytes at least, `have` given.
    Truncated {
        /// The length the message's own counts call for (so far).
        need: usize,
        /// The bytes there were.
        have: usize,
    },
    /// Another schema's message (the header's `schemaId`).
    SchemaId(u16),
    /// A version of the schema this decoder was not written for: a newer
    /// one may put groups where this one expects the var data.
    Version(u16),
    /// A root block shorter than the template's.
    BlockLength {
        /// The message's template id.
        template: u16,
        /// The header's `blockLength`.
        got: u16,
    },
    /// A group whose entries are shorter than the template's.
    EntryLength {
        /// The message's template id.
        template: u16,
        /// The group's `blockLength`.
        got: u16,
    },
    /// Bytes after the message's last var data: the frame holds more than
    /// one message, or the layout is not what the version says.
    Trailing {
        /// The message's template id.
        template: u16,
        /// How many bytes were left over.
        extra: usize,
    },
    /// A `boolEnum` byte other than 0 (`False`) or 1 (`True`).
    Bool(u8),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::Truncated { need, have } => {
                write!(
                    f,
                    "SBE message of {have} bytes where its counts call for {need}"
                )
            }
            DecodeError::SchemaId(id) => write!(f, "SBE schema id {id}, not this schema's"),
            DecodeError::Version(v) => {
                write!(f, "SBE schema version {v}, not one this decoder reads")
            }
            DecodeError::BlockLength { template, got } => {
                write!(
                    f,
                    "SBE template {template} with a root block of {got} bytes, shorter than its fields"
                )
            }
            DecodeError::EntryLength { template, got } => {
                write!(
                    f,
                    "SBE template {template} with group entries of {got} bytes, shorter than their fields"
                )
            }
            DecodeError::Trailing { template, extra } => {
                write!(f, "SBE template {template} followed by {extra} bytes")
            }
            DecodeError::Bool(b) => write!(f, "SBE boolean byte {b}, neither 0 nor 1"),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why a message could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The buffer is shorter than the message: `need` bytes.
    BufferTooSmall {
        /// The message's length.
        need: usize,
    },
    /// A symbol longer than a `varString8` holds (255 bytes).
    SymbolTooLong(usize),
    /// More entries than the group's count field holds.
    TooManyEntries(usize),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EncodeError::BufferTooSmall { need } => {
                write!(f, "buffer too small: {need} bytes needed")
            }
            EncodeError::SymbolTooLong(n) => write!(f, "symbol of {n} bytes, more than 255"),
            EncodeError::TooManyEntries(n) => {
                write!(f, "{n} group entries, more than the count field holds")
            }
        }
    }
}

impl core::error::Error for EncodeError {}
