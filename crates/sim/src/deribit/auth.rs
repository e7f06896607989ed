//! `public/auth`: who a connection is, for how long, and the credits its
//! account's matching-engine requests draw on. Sources ("D" below):
//! docs.deribit.com, the `public/auth` reference and the "Authentication"
//! article (its "Signature Credentials (WebSocket API)" and "Access scope"
//! sections, mirrored in rosssaunders/coincise
//! `docs/deribit/authentication.md` and `response_formats.md`), the RPC
//! error table (`/articles/errors`; coincise `docs/deribit/error_codes.md`)
//! and the "Rate Limits" article (support.deribit.com 25944617523357).
//!
//! - Three grants: `client_credentials` (`client_id`, `client_secret`),
//!   `client_signature` (`client_id`, `timestamp` in ms, `signature`,
//!   optional `nonce` and `data`) and `refresh_token`. The signature is
//!   `HEX(HMAC-SHA256(ClientSecret, Timestamp + "\n" + Nonce + "\n" +
//!   Data))` (D "Signature Credentials"; the same formula in
//!   icostan/deribit-api-ruby `lib/deribit.rb` `signature` and ccxt's
//!   Deribit WebSocket `authenticate`). "It's valid for 60 seconds since
//!   generation, after that time any request with an old timestamp will
//!   be rejected" (D): older than that is refused, and so (our rule, the
//!   docs say nothing of it) is one more than 60 s ahead of the server.
//! - A wrong key, secret, signature or refresh token, or a stale
//!   timestamp: 13004 `invalid_credentials` ("Invalid credentials have
//!   been used", the error table; what Deribit answered a badly signed
//!   request in ccxt issue 8696). A missing parameter: -32602 "Invalid
//!   params" `{"reason":"value required","param":..}`, an unknown grant
//!   `"wrong format"` (the shape of the other -32602 refusals here).
//! - The answer: `access_token`, `expires_in` (seconds), `refresh_token`,
//!   `scope`, `token_type` `"bearer"`, `enabled_features` `[]`, and
//!   `state` copied when one was sent (D `public/auth` response and
//!   example). Tokens are of the connection scope: "Access is granted for
//!   the duration of the connection (or until expiration) ... Set
//!   automatically by the server when neither connection nor session
//!   scope is specified" (D "Access scope"), and "connection scope can't
//!   be reused for other connections" (13009 in the error table): a
//!   token, and its refresh token, work on the connection that got them
//!   only. The `scope` answered is the documented example's `connection
//!   mainaccount` with the two scopes the simulated methods need
//!   (`trade:read_write` for orders, `account:read_write` for
//!   cancel-on-disconnect: their reference pages). A requested
//!   `expires:NUMBER` sets the lifetime (D "Access scope"); `session:name`
//!   scopes are not simulated (a connection token is given).
//! - Refreshing gives a new pair and retires the old one. After
//!   `expires_in` the connection is no longer authorised: private methods
//!   get 13009 `unauthorized` ("Wrong or expired authorization token"),
//!   as they do before any `public/auth`, and as a request carrying an
//!   `access_token` other than the connection's current one does.
//! - Matching-engine requests (`private/buy`, `sell`, `edit`, `cancel`,
//!   `cancel_all`, `cancel_all_by_instrument`: the list in the Rate Limits
//!   article) draw on their account's credits: each costs a number of
//!   credits, refilled continuously up to a maximum; "If a request arrives
//!   when no credits remain, we immediately send a `too_many_requests`
//!   (`code 10028`) ... and terminate the session" (Rate Limits,
//!   "Credit-Based System"). The default is the lowest tier's 5 requests
//!   a second with a burst of 20 (the article's tier table as
//!   nautilus_trader `DERIBIT_WS_ORDER_QUOTA` quotes it), configurable
//!   ([`OrderCredits`]).

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use ring::hmac;
use serde_json::Value;

use crate::exchange::{Account, KeySecret};
use crate::protocol::Market;

/// How far a `client_signature` timestamp may be from the server's clock:
/// "valid for 60 seconds since generation" (D).
const SIGNATURE_VALIDITY_MS: u64 = 60_000;

/// What the simulated Deribit's private API is set to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeribitPrivate {
    /// How long an access token lives (`expires_in`, whole seconds on the
    /// wire, at least 1 shown); a test shortens it to exercise refreshing.
    /// Deribit's connection tokens live 900 s.
    pub token_lifetime: Duration,
    /// The matching-engine credits of each account.
    pub order_credits: OrderCredits,
}

impl Default for DeribitPrivate {
    fn default() -> DeribitPrivate {
        DeribitPrivate {
            token_lifetime: Duration::from_secs(900),
            order_credits: OrderCredits::default(),
        }
    }
}

/// A credit pool: `cost` a request, at most `max`, `refill` back a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderCredits {
    /// Credits a matching-engine request takes.
    pub cost: u64,
    /// The pool's size (and what it starts with).
    pub max: u64,
    /// Credits back per second.
    pub refill: u64,
}

impl Default for OrderCredits {
    /// 5 requests a second, bursts of 20 (the lowest tier).
    fn default() -> OrderCredits {
        OrderCredits {
            cost: 1_000,
            max: 20_000,
            refill: 5_000,
        }
    }
}

/// An account's matching-engine credits.
#[derive(Debug)]
pub(super) struct Credits {
    spec: OrderCredits,
    left: u64,
    at: Instant,
}

impl Credits {
    pub(super) fn new(spec: OrderCredits, now: Instant) -> Credits {
        Credits {
            spec,
            left: spec.max,
            at: now,
        }
    }

    /// Takes one request's credits at `now`, the refill since the last
    /// take added first; `false`: none left.
    pub(super) fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at);
        self.at = now;
        let back = u128::from(self.spec.refill) * elapsed.as_micros() / 1_000_000;
        self.left = (u128::from(self.left) + back).min(u128::from(self.spec.max)) as u64;
        let ok = self.left >= self.spec.cost;
        if ok {
            self.left -= self.spec.cost;
        }
        ok
    }
}

/// A connection's login.
#[derive(Debug)]
pub(super) struct Login {
    pub(super) account: Account,
    access: String,
    refresh: String,
    expires: Instant,
}

impl Login {
    /// Whether the login still authorises requests at `now`, and, if the
    /// request carries a token, whether it is this login's.
    pub(super) fn valid(&self, token: Option<&str>, now: Instant) -> bool {
        now < self.expires && token.is_none_or(|t| t == self.access)
    }
}

/// Why `public/auth` was refused.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// 13004 `invalid_credentials`.
    Credentials,
    /// -32602: a parameter missing or malformed (reason, param).
    Params(&'static str, &'static str),
}

/// Where tokens come from: random text behind the time they were made,
/// the shape of the documented ones (`1582628593469.1MbQ-J_4.CBP-...`).
pub(super) struct Tokens {
    rng: StdRng,
}

impl Tokens {
    pub(super) fn new() -> Tokens {
        Tokens {
            rng: StdRng::from_os_rng(),
        }
    }

    fn token(&mut self, now_ms: u64) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut t = format!("{now_ms}.");
        for k in 0..48 {
            if k == 8 {
                t.push('.');
            }
            t.push(char::from(
                ALPHABET[self.rng.random_range(0..ALPHABET.len())],
            ));
        }
        t
    }
}

/// `params`' `key` as text (a string, or a number written as JSON).
fn text<'a>(params: &'a Value, key: &str) -> Option<std::borrow::Cow<'a, str>> {
    match params.get(key)? {
        Value::String(s) => Some(s.as_str().into()),
        Value::Number(n) => Some(n.to_string().into()),
        _ => None,
    }
}

/// What a successful `public/auth` answers, and the login it starts.
pub(super) struct Granted {
    pub(super) login: Login,
    /// The `result` object's JSON.
    pub(super) result: String,
}

/// Checks a `public/auth` request's `params` at `now` (`now_ms` on the
/// wall clock) against the simulator's keys and, for `refresh_token`, the
/// connection's current login.
pub(super) fn auth(
    params: &Value,
    current: Option<&Login>,
    market: &Market,
    config: &DeribitPrivate,
    tokens: &mut Tokens,
    now: Instant,
    now_ms: u64,
) -> Result<Granted, Refused> {
    let required =
        |key: &'static str| text(params, key).ok_or(Refused::Params("value required", key));
    let grant = required("grant_type")?;
    let account = match grant.as_ref() {
        "client_credentials" => {
            let id = required("client_id")?;
            let secret = required("client_secret")?;
            match market.key(&id) {
                // Compared in constant time, as a venue would.
                Some((account, KeySecret::Hmac(s)))
                    if hmac_equal(s.as_bytes(), secret.as_bytes()) =>
                {
                    account
                }
                _ => return Err(Refused::Credentials),
            }
        }
        "client_signature" => {
            let id = required("client_id")?;
            let timestamp = required("timestamp")?;
            let signature = required("signature")?;
            let nonce = text(params, "nonce").unwrap_or_default();
            let data = text(params, "data").unwrap_or_default();
            let Ok(ts) = timestamp.parse::<u64>() else {
                return Err(Refused::Params("wrong format", "timestamp"));
            };
            if now_ms.abs_diff(ts) > SIGNATURE_VALIDITY_MS {
                return Err(Refused::Credentials);
            }
            let Some((account, KeySecret::Hmac(secret))) = market.key(&id) else {
                return Err(Refused::Credentials);
            };
            let signed = format!("{timestamp}\n{nonce}\n{data}");
            if !signature_ok(secret.as_bytes(), signed.as_bytes(), &signature) {
                return Err(Refused::Credentials);
            }
            account
        }
        "refresh_token" => {
            let refresh = required("refresh_token")?;
            match current {
                Some(login) if login.refresh == *refresh => login.account,
                _ => return Err(Refused::Credentials),
            }
        }
        _ => return Err(Refused::Params("wrong format", "grant_type")),
    };
    // `expires:NUMBER` in a requested scope sets the lifetime (D).
    let lifetime = text(params, "scope")
        .and_then(|s| {
            s.split(' ')
                .find_map(|p| p.strip_prefix("expires:")?.parse::<u64>().ok())
        })
        .map_or(config.token_lifetime, Duration::from_secs);
    let login = Login {
        account,
        access: tokens.token(now_ms),
        refresh: tokens.token(now_ms),
        expires: now + lifetime,
    };
    let mut result = serde_json::json!({
        "access_token": login.access,
        "expires_in": lifetime.as_secs().max(1),
        "refresh_token": login.refresh,
        "scope": "account:read_write connection mainaccount trade:read_write",
        "enabled_features": [],
        "token_type": "bearer",
    });
    if let Some(state) = text(params, "state") {
        result["state"] = Value::String(state.into_owned());
    }
    Ok(Granted {
        login,
        result: result.to_string(),
    })
}

/// Whether `a` and `b` are equal, in time independent of where they
/// differ (their HMACs under a fixed key are compared with ring's
/// constant-time `verify`).
fn hmac_equal(a: &[u8], b: &[u8]) -> bool {
    let key = hmac::Key::new(hmac::HMAC_SHA256, b"tickwire-sim");
    hmac::verify(&key, a, hmac::sign(&key, b).as_ref()).is_ok()
}

/// Whether `signature` (hex, either case) is HMAC-SHA256 of `signed` under
/// `secret`.
fn signature_ok(secret: &[u8], signed: &[u8], signature: &str) -> bool {
    let hex = signature.as_bytes();
    if hex.len() != 64 {
        return false;
    }
    let mut tag = [0u8; 32];
    for (k, pair) in hex.chunks(2).enumerate() {
        let digit = |b: u8| char::from(b).to_digit(16);
        match (digit(pair[0]), digit(pair[1])) {
            (Some(hi), Some(lo)) => tag[k] = (hi * 16 + lo) as u8,
            _ => return false,
        }
    }
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    hmac::verify(&key, signed, &tag).is_ok()
}
