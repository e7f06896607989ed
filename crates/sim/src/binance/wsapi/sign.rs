//! Signed requests: the payload a signature covers, its check against
//! the account's key (HMAC-SHA256 or Ed25519), the key's format, and the
//! request's time against its `recvWindow`.

use std::fmt::Write as _;

use base64::Engine as _;
use ring::{hmac, signature};
use serde_json::{Map, Value};

use super::{Params, Refusal, mandatory, refuse};
use crate::exchange::KeySecret;

/// The signature payload: "Take all request `params` except `signature`
/// and sort them in alphabetical order by parameter name ... Format
/// parameters as `parameter=value` pairs separated by `&`" ("SIGNED
/// request example (HMAC)", step 1; the same for Ed25519), values as sent
/// ("no percent encoding here!", the docs' Python example).
pub(super) fn payload(params: &Map<String, Value>) -> String {
    let mut names: Vec<&String> = params.keys().filter(|k| *k != "signature").collect();
    names.sort();
    let mut s = String::with_capacity(256);
    for (k, name) in names.into_iter().enumerate() {
        if k > 0 {
            s.push('&');
        }
        s.push_str(name);
        s.push('=');
        match &params[name] {
            Value::String(v) => s.push_str(v),
            v => {
                let _ = write!(s, "{v}");
            }
        }
    }
    s
}

/// Whether `signature` signs `payload` under `secret`. HMAC-SHA256 in hex,
/// "not case-sensitive"; Ed25519 in base64, "case-sensitive" ("Signature
/// Case Sensitivity"), verified with the account's public key.
pub(super) fn verify(secret: &KeySecret, payload: &str, signature: &str) -> bool {
    match secret {
        KeySecret::Hmac(key) => {
            let Some(tag) = hex(signature) else {
                return false;
            };
            let key = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
            hmac::verify(&key, payload.as_bytes(), &tag).is_ok()
        }
        KeySecret::Ed25519Public(public) => {
            let mut sig = [0u8; 64];
            match base64::engine::general_purpose::STANDARD.decode_slice(signature, &mut sig) {
                Ok(64) => signature::UnparsedPublicKey::new(&signature::ED25519, public)
                    .verify(payload.as_bytes(), &sig)
                    .is_ok(),
                _ => false,
            }
        }
    }
}

/// 32 bytes from 64 hex digits of either case.
fn hex(text: &str) -> Option<[u8; 32]> {
    let b = text.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let digit = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (k, pair) in b.chunks(2).enumerate() {
        out[k] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// Whether an API key is written as Binance writes them: letters and
/// digits. Anything else is -2014 "API-key format invalid." (`errors.md`
/// -2014 BAD_API_KEY_FMT); a well-formed key the exchange does not know is
/// -2015.
pub(super) fn key_well_formed(key: &str) -> bool {
    !key.is_empty() && key.len() <= 128 && key.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// -2015 REJECTED_MBX_KEY "Invalid API-key, IP, or permissions for
/// action.", status 401 (as the docs' "Regarding API key revocation"
/// example answers it).
pub(super) fn bad_key() -> Refusal {
    refuse(
        401,
        -2015,
        "Invalid API-key, IP, or permissions for action.",
    )
}

/// "Timing security": `timestamp` in milliseconds or microseconds;
/// `recvWindow` "defaults to 5000 milliseconds", "Maximum `recvWindow` is
/// 60000", up to three decimals; the request is processed only if
/// `timestamp < serverTime + 1 second && serverTime - timestamp <=
/// recvWindow`. The two refusals are -1021's two messages (`errors.md`).
pub(super) fn check_time(p: &Params<'_>, now_ms: u64) -> Result<(), Refusal> {
    let stamp = p.long("timestamp")?.ok_or_else(|| mandatory("timestamp"))?;
    // Microseconds have 16 digits today, milliseconds 13.
    let stamp_us = if stamp >= 100_000_000_000_000 {
        stamp
    } else {
        stamp.saturating_mul(1000)
    };
    let window_us = match p.text("recvWindow") {
        None => 5_000_000,
        Some(w) => {
            let us = parse_decimal(&w, 3)
                .ok()
                .flatten()
                .ok_or_else(|| mandatory("recvWindow"))?;
            if us > 60_000_000 {
                return Err(refuse(
                    400,
                    -1102,
                    "'recvWindow' contains unexpected value. Cannot be greater than 60000.",
                ));
            }
            us as u64
        }
    };
    let now_us = now_ms * 1000;
    if stamp_us >= now_us + 1_000_000 {
        return Err(refuse(
            400,
            -1021,
            "Timestamp for this request was 1000ms ahead of the server's time.",
        ));
    }
    if now_us.saturating_sub(stamp_us) > window_us {
        return Err(refuse(
            400,
            -1021,
            "Timestamp for this request is outside of the recvWindow.",
        ));
    }
    Ok(())
}

/// A decimal written with at most `scale` fraction digits, in units of
/// 10^-scale: `Ok(None)` for one with more (nonzero) digits than that,
/// `Err` for text that is no decimal.
pub(super) fn parse_decimal(text: &str, scale: u8) -> Result<Option<i64>, ()> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(());
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > usize::from(scale) {
        return Ok(None);
    }
    let mut v: i64 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(b - b'0')))
            .ok_or(())?;
    }
    v.checked_mul(10i64.pow(u32::from(scale) - frac.len() as u32))
        .map(Some)
        .ok_or(())
}
