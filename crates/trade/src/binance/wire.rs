//! The Binance spot WebSocket API's text, both ways: requests written in
//! place with their signature, and the fields of answers and events read
//! off simd-json's tape. Sources (all in
//! <https://github.com/binance/binance-spot-api-docs>): `web-socket-api.md`
//! ("Request format", "Response format", "Request security", "SIGNED
//! request example (HMAC)" and "(Ed25519)"), `errors.md`.

use core::fmt::{self, Write as _};

use simd_json::prelude::{ValueAsScalar, ValueIntoString};
use simd_json::tape::Value;

use crate::credentials::Credentials;
use crate::order::Reject;
use crate::out::Message;

/// How a request proves who sends it.
///
/// - `Ed25519Logon`: `session.logon` itself: `apiKey`, `timestamp` and an
///   Ed25519 signature in base64 (the docs: "Only Ed25519 keys are
///   supported for this feature").
/// - `Session`: after a logon, SIGNED requests carry `timestamp` alone
///   ("Once authenticated, you no longer have to specify `apiKey` and
///   `signature` ... You still have to specify the `timestamp`").
/// - `Hmac`: a shared-secret key cannot log on, so every SIGNED request
///   carries `apiKey`, `timestamp` and an HMAC-SHA256 signature in hex.
///
/// The signature payload, per the docs' step 1: every parameter but
/// `signature`, sorted by name, written `name=value` joined by `&`, values
/// in UTF-8 without percent-encoding. Requests here add their parameters
/// already in that order (byte order of the names, which is the docs'
/// order: `apiKey`, `price`, `quantity`, `recvWindow`, `side`, `symbol`,
/// `timeInForce`, `timestamp`, `type`), so the payload is built while the
/// JSON is written, in one pass, and the JSON and the signed text can
/// never differ.
#[derive(Clone, Copy)]
pub enum Auth<'c> {
    /// `session.logon`: `apiKey`, `timestamp`, Ed25519 signature.
    Ed25519Logon(&'c Credentials),
    /// A logged-on session: `timestamp` only.
    Session,
    /// Each request signed: `apiKey`, `timestamp`, HMAC-SHA256 signature.
    Hmac(&'c Credentials),
}

/// The signature payload, built in a stack buffer (the longest request's
/// parameters take under 400 bytes).
pub struct Payload {
    bytes: [u8; 768],
    len: usize,
}

impl Payload {
    /// An empty payload.
    pub fn new() -> Payload {
        Payload {
            bytes: [0; 768],
            len: 0,
        }
    }

    /// The text so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl Default for Payload {
    fn default() -> Payload {
        Payload::new()
    }
}

impl fmt::Write for Payload {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A request's parameters, written into its JSON message and its
/// signature payload at once. Add them in name order ([`Auth`]).
pub struct Params<'x, 'a> {
    json: &'x mut Message<'a>,
    payload: Payload,
    /// The last name added (to check the order in debug builds).
    last: &'static str,
}

/// Writes `v` at `scale` decimals exactly, trailing fraction zeros dropped
/// (as [`Message::decimal`]), into any writer.
pub fn decimal(w: &mut impl fmt::Write, v: i64, scale: u8) -> fmt::Result {
    let scale = scale.min(18);
    let unit = 10u64.pow(u32::from(scale));
    let abs = v.unsigned_abs();
    let (int, mut frac) = (abs / unit, abs % unit);
    if v < 0 {
        w.write_str("-")?;
    }
    write!(w, "{int}")?;
    if frac == 0 {
        return Ok(());
    }
    let mut digits = usize::from(scale);
    while frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    write!(w, ".{frac:0digits$}")
}

impl<'x, 'a> Params<'x, 'a> {
    /// Opens request `id` of `method` and its `params`, with the
    /// credentials `auth` asks for (`apiKey` first: it sorts first).
    pub fn open(
        json: &'x mut Message<'a>,
        id: u64,
        method: &str,
        auth: Auth<'_>,
    ) -> Result<Params<'x, 'a>, fmt::Error> {
        write!(json, "{{\"id\":{id},\"method\":\"{method}\",\"params\":{{")?;
        let mut p = Params {
            json,
            payload: Payload::new(),
            last: "",
        };
        match auth {
            Auth::Ed25519Logon(c) | Auth::Hmac(c) => p.text("apiKey", c.key())?,
            Auth::Session => {}
        }
        Ok(p)
    }

    /// `,"name":` and `&name=` (or neither separator, first).
    fn name(&mut self, name: &'static str) -> fmt::Result {
        debug_assert!(self.last < name, "{} then {name}", self.last);
        if !self.last.is_empty() {
            self.json.write_str(",")?;
            self.payload.write_str("&")?;
        }
        self.last = name;
        write!(self.json, "\"{name}\":")?;
        write!(self.payload, "{name}=")
    }

    /// A string parameter.
    pub fn text(&mut self, name: &'static str, value: &str) -> fmt::Result {
        self.name(name)?;
        self.json.write_str("\"")?;
        self.json.escaped(value)?;
        self.json.write_str("\"")?;
        self.payload.write_str(value)
    }

    /// An integer parameter (a JSON number).
    pub fn number(&mut self, name: &'static str, value: u64) -> fmt::Result {
        self.name(name)?;
        write!(self.json, "{value}")?;
        write!(self.payload, "{value}")
    }

    /// A decimal parameter, `value` at `scale` decimals, as a string
    /// (the docs' examples send prices and quantities as strings).
    pub fn decimal(&mut self, name: &'static str, value: i64, scale: u8) -> fmt::Result {
        self.name(name)?;
        self.json.write_str("\"")?;
        decimal(self.json, value, scale)?;
        self.json.write_str("\"")?;
        decimal(&mut self.payload, value, scale)
    }

    /// A client order id: `prefix`, `-`, then the number in decimal
    /// (the separator keeps another bot's longer prefix apart: `bot1-5`
    /// is not `bot`'s; `-` is in the allowed set of `newClientOrderId`,
    /// `^[a-zA-Z0-9-_]{1,36}$` in `fix-api.md`, and a 12-character prefix,
    /// `-` and a `u64`'s 20 digits make 33).
    pub fn cid(&mut self, name: &'static str, prefix: &str, cid: u64) -> fmt::Result {
        self.name(name)?;
        write!(self.json, "\"{prefix}-{cid}\"")?;
        write!(self.payload, "{prefix}-{cid}")
    }

    /// The signature `auth` asks for and the closing braces (the caller
    /// added `timestamp` in its place among the names).
    pub fn close(self, auth: Auth<'_>) -> fmt::Result {
        match auth {
            Auth::Session => {}
            Auth::Hmac(c) => {
                let mut hex = [0u8; 64];
                let sig = c
                    .hmac_hex(&[self.payload.as_bytes()], &mut hex)
                    .ok_or(fmt::Error)?;
                write!(self.json, ",\"signature\":\"{sig}\"")?;
            }
            Auth::Ed25519Logon(c) => {
                let mut b64 = [0u8; 88];
                let sig = c
                    .ed25519_base64(self.payload.as_bytes(), &mut b64)
                    .ok_or(fmt::Error)?;
                write!(self.json, ",\"signature\":\"{sig}\"")?;
            }
        }
        self.json.write_str("}}")
    }

    /// The signature payload so far (tests).
    #[cfg(test)]
    pub fn payload(&self) -> &[u8] {
        self.payload.as_bytes()
    }
}

/// A request without parameters: `{"id":N,"method":"..."}`.
pub fn bare(json: &mut Message<'_>, id: u64, method: &str) -> fmt::Result {
    write!(json, "{{\"id\":{id},\"method\":\"{method}\"}}")
}

/// The string field `key` of an object.
pub fn text<'i>(v: &Value<'_, 'i>, key: &str) -> Option<&'i str> {
    v.get(key)?.into_string()
}

/// The non-negative integer field `key`.
pub fn number(v: &Value<'_, '_>, key: &str) -> Option<u64> {
    v.get(key)?.as_u64()
}

/// The integer field `key` (negative allowed: error codes, `-1` ids).
pub fn integer(v: &Value<'_, '_>, key: &str) -> Option<i64> {
    v.get(key)?.as_i64()
}

/// The boolean field `key`.
pub fn flag(v: &Value<'_, '_>, key: &str) -> Option<bool> {
    v.get(key)?.as_bool()
}

/// The venue's refusal as a [`Reject`], from its HTTP-like `status`, its
/// error `code` and message (`errors.md`; `web-socket-api.md`, "Status
/// codes" and "Rate limits"):
///
/// - status 429 (rate limit exceeded) or 418 (IP banned), or codes -1003
///   `TOO_MANY_REQUESTS` and -1015 `TOO_MANY_ORDERS`: the venue's rate
///   limit.
/// - -1022 `INVALID_SIGNATURE`, -2014 `BAD_API_KEY_FMT`, -2015
///   `REJECTED_MBX_KEY`, -1002 `UNAUTHORIZED`: the credentials.
/// - -2010 `NEW_ORDER_REJECTED` / -2011 `CANCEL_REJECTED` carry the
///   matching engine's message ("Messages for -1010 ..., -2010 ...,
///   -2011 ..."): "Order would immediately match and take." (a post-only
///   order), "Account has insufficient balance for requested action.",
///   "Duplicate order sent.", "Unknown order sent."; -2013
///   `NO_SUCH_ORDER` too.
/// - Anything else: the code as it is.
pub fn reject(status: u64, code: i64, msg: &str) -> Reject {
    match code {
        -1003 | -1015 => return Reject::VenueRateLimited { code },
        -1022 | -2014 | -2015 | -1002 => return Reject::Auth { code },
        -2013 => return Reject::UnknownOrder,
        _ => {}
    }
    if status == 429 || status == 418 {
        return Reject::VenueRateLimited { code };
    }
    match msg {
        "Order would immediately match and take." => Reject::WouldTake,
        "Account has insufficient balance for requested action." => Reject::InsufficientFunds,
        "Duplicate order sent." => Reject::Duplicate,
        "Unknown order sent." => Reject::UnknownOrder,
        _ => Reject::Venue { code },
    }
}

/// Whether a login's refusal is the credentials' (then not retried).
pub fn is_auth(code: i64) -> bool {
    matches!(code, -1022 | -2014 | -2015 | -1002)
}
