//! Secrets blanked out of a trading connection's message, in place,
//! before a recording keeps it: the value of every JSON string field
//! named in [`SECRET_FIELDS`] becomes `*`s of its length (the message
//! keeps its shape and length; nothing is allocated).

/// The fields whose values are secret on the venues' order-entry APIs:
/// Deribit's `public/auth` (`client_secret`, `signature`) and its answer
/// (`access_token`, `refresh_token`)
/// (<https://docs.deribit.com/#public-auth>); Binance's WebSocket API
/// `session.logon` and signed requests (`apiKey`, `signature`)
/// (<https://developers.binance.com/docs/binance-spot-api-docs/web-socket-api/request-security>).
pub(crate) const SECRET_FIELDS: [&[u8]; 5] = [
    b"access_token",
    b"refresh_token",
    b"client_secret",
    b"signature",
    b"apiKey",
];

/// Blanks out the secret fields' string values in `msg`.
pub(crate) fn redact(msg: &mut [u8]) {
    for field in SECRET_FIELDS {
        let mut from = 0;
        while let Some(at) = find_key(&msg[from..], field) {
            let after = from + at + field.len() + 2;
            from = blank_value(msg, after);
        }
    }
}

/// Where `"field"` starts in `hay`.
fn find_key(hay: &[u8], field: &[u8]) -> Option<usize> {
    let n = field.len() + 2;
    if hay.len() < n {
        return None;
    }
    (0..=hay.len() - n)
        .find(|&i| hay[i] == b'"' && hay[i + n - 1] == b'"' && &hay[i + 1..i + n - 1] == field)
}

/// After a key ending at `at`: past `:` and blanks, a string value's
/// characters become `*`; returns where to look on from.
fn blank_value(msg: &mut [u8], mut at: usize) -> usize {
    while at < msg.len() && matches!(msg[at], b' ' | b'\t' | b'\r' | b'\n') {
        at += 1;
    }
    if msg.get(at) != Some(&b':') {
        return at;
    }
    at += 1;
    while at < msg.len() && matches!(msg[at], b' ' | b'\t' | b'\r' | b'\n') {
        at += 1;
    }
    if msg.get(at) != Some(&b'"') {
        return at;
    }
    at += 1;
    let mut escaped = false;
    while at < msg.len() {
        let b = msg[at];
        if !escaped && b == b'"' {
            return at + 1;
        }
        escaped = !escaped && b == b'\\';
        msg[at] = b'*';
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::redact;

    fn redacted(s: &str) -> String {
        let mut b = s.as_bytes().to_vec();
        redact(&mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn secret_values_are_blanked_and_the_rest_kept() {
        let auth = r#"{"method":"public/auth","params":{"grant_type":"client_signature","client_id":"k1","signature" : "ab\"cd","nonce":"n"}}"#;
        let out = redacted(auth);
        assert!(!out.contains("ab\\\"cd"), "{out}");
        assert!(out.contains(r#""signature" : "******""#), "{out}");
        assert!(out.contains(r#""client_id":"k1""#));
        assert_eq!(out.len(), auth.len());
        let answer = r#"{"result":{"access_token":"AT1","refresh_token":"RT2","expires_in":900}}"#;
        assert_eq!(
            redacted(answer),
            r#"{"result":{"access_token":"***","refresh_token":"***","expires_in":900}}"#
        );
        let logon =
            r#"{"method":"session.logon","params":{"apiKey":"K","signature":"S","timestamp":1}}"#;
        let out = redacted(logon);
        assert!(!out.contains("\"K\"") && !out.contains("\"S\""), "{out}");
        assert_eq!(redacted("\"signature\""), "\"signature\"");
        assert_eq!(redacted("{\"apiKey\":5}"), "{\"apiKey\":5}");
    }
}
