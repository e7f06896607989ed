//! Close status codes (RFC 6455 section 7.4).

use core::fmt;

/// A close status code, as carried in the first two bytes of a Close frame.
///
/// Any `u16` can be represented; [`CloseCode::is_valid_on_wire`] tells whether a
/// peer may send it. The decoder rejects Close frames whose code fails that test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// 1000: the purpose for which the connection was established has been fulfilled.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: the endpoint is going away (server shutdown, page navigation).
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: the endpoint is terminating the connection due to a protocol error.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: the endpoint received a type of data it cannot accept.
    pub const UNSUPPORTED_DATA: CloseCode = CloseCode(1003);
    /// 1005: reserved; means "no status code was present". Never sent on the wire.
    pub const NO_STATUS: CloseCode = CloseCode(1005);
    /// 1006: reserved; means "closed without a Close frame". Never sent on the wire.
    pub const ABNORMAL: CloseCode = CloseCode(1006);
    /// 1007: a message's data was not consistent with its type (invalid UTF-8 in a text message).
    pub const INVALID_PAYLOAD: CloseCode = CloseCode(1007);
    /// 1008: a message violates the endpoint's policy.
    pub const POLICY_VIOLATION: CloseCode = CloseCode(1008);
    /// 1009: a message is too big to process.
    pub const MESSAGE_TOO_BIG: CloseCode = CloseCode(1009);
    /// 1010: the client expected the server to negotiate an extension.
    pub const MANDATORY_EXTENSION: CloseCode = CloseCode(1010);
    /// 1011: the server met an unexpected condition.
    pub const INTERNAL_ERROR: CloseCode = CloseCode(1011);

    /// Whether a peer may put this code in a Close frame.
    ///
    /// Valid codes are 1000-1003, 1007-1011 (defined by RFC 6455) and 3000-4999
    /// (registered and private use). Everything else, including the reserved
    /// 1004-1006 and 1015 and the unassigned rest of 1000-2999, is a protocol error.
    #[inline]
    pub const fn is_valid_on_wire(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1011 | 3000..=4999)
    }
}

impl From<u16> for CloseCode {
    fn from(code: u16) -> Self {
        CloseCode(code)
    }
}

impl From<CloseCode> for u16 {
    fn from(code: CloseCode) -> Self {
        code.0
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::CloseCode;

    #[test]
    fn validity_matches_rfc_ranges_exhaustively() {
        for code in 0..=u16::MAX {
            let expected = (1000..=1003).contains(&code)
                || (1007..=1011).contains(&code)
                || (3000..=4999).contains(&code);
            assert_eq!(CloseCode(code).is_valid_on_wire(), expected, "code {code}");
        }
    }
}
