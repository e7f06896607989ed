//! The simulator's accounts: one API key each, with the secret the venue
//! checks a request's signature against.

use std::fmt;

/// An account: the index of its key in [`SimConfig::keys`](crate::SimConfig::keys).
pub(crate) type Account = usize;

/// What the simulator checks a key's signatures with.
#[derive(Clone, PartialEq, Eq)]
pub enum KeySecret {
    /// A shared secret: signatures are HMAC-SHA256 of the request's
    /// payload under it (Deribit `client_signature`, and its
    /// `client_credentials` compare it as the client secret; Binance HMAC
    /// keys).
    Hmac(String),
    /// An Ed25519 public key (Binance Ed25519 keys, whose private half only
    /// the client holds).
    Ed25519Public([u8; 32]),
}

/// Secrets are never printed: a key's kind only.
impl fmt::Debug for KeySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySecret::Hmac(_) => f.write_str("Hmac(<redacted>)"),
            KeySecret::Ed25519Public(_) => f.write_str("Ed25519Public(..)"),
        }
    }
}

/// An API key the simulator accepts, and its account's secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimKey {
    /// The key's public name (Deribit's `client_id`, Binance's `apiKey`).
    pub key: String,
    /// What its signatures are checked with.
    pub secret: KeySecret,
}

impl SimKey {
    /// An HMAC key.
    pub fn hmac(key: impl Into<String>, secret: impl Into<String>) -> SimKey {
        SimKey {
            key: key.into(),
            secret: KeySecret::Hmac(secret.into()),
        }
    }

    /// An Ed25519 key, by its public half.
    pub fn ed25519(key: impl Into<String>, public: [u8; 32]) -> SimKey {
        SimKey {
            key: key.into(),
            secret: KeySecret::Ed25519Public(public),
        }
    }
}

/// The keys, looked up by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Accounts {
    keys: Vec<SimKey>,
}

impl Accounts {
    pub(crate) fn new(keys: Vec<SimKey>) -> Accounts {
        Accounts { keys }
    }

    /// The account of `key` and its secret.
    pub(crate) fn key(&self, key: &str) -> Option<(Account, &KeySecret)> {
        self.keys
            .iter()
            .enumerate()
            .find(|(_, k)| k.key == key)
            .map(|(n, k)| (n, &k.secret))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_by_name_and_secrets_never_printed() {
        let a = Accounts::new(vec![
            SimKey::hmac("alice", "s3cret-value"),
            SimKey::ed25519("bob", [7; 32]),
        ]);
        assert_eq!(a.key("bob").map(|(n, _)| n), Some(1));
        assert!(matches!(a.key("alice"), Some((0, KeySecret::Hmac(s))) if s == "s3cret-value"));
        assert!(a.key("carol").is_none());
        let printed = format!("{a:?}");
        assert!(!printed.contains("s3cret"), "{printed}");
        assert!(printed.contains("alice"));
    }
}
