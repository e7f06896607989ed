//! [`Credentials`]: an API key and its secret, from the environment or an
//! owner-only file, and the signatures the venues ask for (HMAC-SHA256 in
//! hex, Ed25519 in base64) computed into stack buffers. A secret is never
//! printed: `Debug` shows the key id alone, and nothing here logs.

use core::fmt;
use std::path::Path;

use base64::Engine as _;
use ring::hmac;
use ring::signature::Ed25519KeyPair;

/// An API key id and its secret.
pub struct Credentials {
    key: String,
    secret: Secret,
}

enum Secret {
    /// A shared secret (Deribit's client secret, Binance's HMAC keys), and
    /// its bytes for a venue that takes the secret itself over TLS
    /// (Deribit's `client_credentials` grant).
    Hmac(hmac::Key, Box<[u8]>),
    /// An Ed25519 private key (Binance's Ed25519 API keys).
    Ed25519(Ed25519KeyPair),
}

/// Why credentials could not be had.
#[derive(Debug)]
#[non_exhaustive]
pub enum CredentialsError {
    /// An environment variable is not set (its name).
    Missing(String),
    /// The file could not be read.
    Io(std::io::Error),
    /// The file may be read by others than its owner (its mode): refused,
    /// as ssh refuses such a key.
    NotOwnerOnly(u32),
    /// The file's text is not `key = ...` and `secret = ...` or
    /// `private_key = ...` lines (what is wrong).
    Format(&'static str),
    /// The private key is not an Ed25519 key in PKCS#8 (PEM or DER).
    BadKey,
}

impl fmt::Display for CredentialsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialsError::Missing(var) => write!(f, "{var} is not set"),
            CredentialsError::Io(e) => write!(f, "cannot read the credentials file: {e}"),
            CredentialsError::NotOwnerOnly(mode) => write!(
                f,
                "the credentials file may be read by others (mode {mode:o}): chmod 600 it"
            ),
            CredentialsError::Format(what) => write!(f, "credentials file: {what}"),
            CredentialsError::BadKey => {
                f.write_str("the private key is not an Ed25519 key in PKCS#8 (PEM or DER)")
            }
        }
    }
}

impl std::error::Error for CredentialsError {}

impl Credentials {
    /// A key id and its shared secret (HMAC-SHA256).
    pub fn hmac(key: &str, secret: &[u8]) -> Credentials {
        Credentials {
            key: key.to_owned(),
            secret: Secret::Hmac(hmac::Key::new(hmac::HMAC_SHA256, secret), secret.into()),
        }
    }

    /// A key id and its Ed25519 private key, PKCS#8 in PEM
    /// (`-----BEGIN PRIVATE KEY-----`, as `openssl genpkey -algorithm
    /// ed25519` writes it) or DER.
    pub fn ed25519(key: &str, private_key: &[u8]) -> Result<Credentials, CredentialsError> {
        let der = match std::str::from_utf8(private_key) {
            Ok(text) if text.contains("-----BEGIN") => pem_body(text)?,
            _ => private_key.to_vec(),
        };
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der)
            .map_err(|_| CredentialsError::BadKey)?;
        Ok(Credentials {
            key: key.to_owned(),
            secret: Secret::Ed25519(pair),
        })
    }

    /// From `{prefix}_API_KEY` and either `{prefix}_API_SECRET` (a shared
    /// secret) or `{prefix}_PRIVATE_KEY_FILE` (an owner-only file holding
    /// an Ed25519 private key).
    pub fn from_env(prefix: &str) -> Result<Credentials, CredentialsError> {
        let var = |name: &str| {
            let name = format!("{prefix}_{name}");
            std::env::var(&name).map_err(|_| CredentialsError::Missing(name))
        };
        let key = var("API_KEY")?;
        if let Ok(secret) = var("API_SECRET") {
            return Ok(Credentials::hmac(&key, secret.as_bytes()));
        }
        let file = var("PRIVATE_KEY_FILE")?;
        let pem = read_owner_only(Path::new(&file))?;
        Credentials::ed25519(&key, &pem)
    }

    /// From an owner-only file of `key = ...` and `secret = ...` lines, or
    /// `key = ...` and `private_key = <path of an owner-only PEM file>`
    /// (a `#` at a line's start or after whitespace starts a comment to
    /// the line's end; any other `#` is part of the value, so a secret
    /// may hold one: `secret = ab#cd # note` is the secret `ab#cd`).
    pub fn from_file(path: &Path) -> Result<Credentials, CredentialsError> {
        let text = read_owner_only(path)?;
        let (key, secret, private) = file_values(&text)?;
        let key = key.ok_or(CredentialsError::Format("no `key`"))?;
        match (secret, private) {
            (Some(s), None) => Ok(Credentials::hmac(key, s.as_bytes())),
            (None, Some(p)) => {
                let pem = read_owner_only(Path::new(p))?;
                Credentials::ed25519(key, &pem)
            }
            _ => Err(CredentialsError::Format("one of `secret` or `private_key`")),
        }
    }

    /// The key id (sent in the clear: Deribit's `client_id`, Binance's
    /// `apiKey`).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the secret is an Ed25519 key.
    pub fn is_ed25519(&self) -> bool {
        matches!(self.secret, Secret::Ed25519(_))
    }

    /// The shared secret itself, for a venue that takes it in its login
    /// over TLS (Deribit's `client_credentials` grant); `None` for an
    /// Ed25519 key. Never print or record it.
    pub fn shared_secret(&self) -> Option<&[u8]> {
        match &self.secret {
            Secret::Hmac(_, bytes) => Some(bytes),
            Secret::Ed25519(_) => None,
        }
    }

    /// HMAC-SHA256 of the concatenated `parts`, in lower-case hex, into
    /// `out`; `None` for an Ed25519 key.
    pub fn hmac_hex<'o>(&self, parts: &[&[u8]], out: &'o mut [u8; 64]) -> Option<&'o str> {
        let Secret::Hmac(key, _) = &self.secret else {
            return None;
        };
        let mut ctx = hmac::Context::with_key(key);
        for p in parts {
            ctx.update(p);
        }
        let tag = ctx.sign();
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for (i, b) in tag.as_ref().iter().enumerate() {
            out[2 * i] = HEX[usize::from(b >> 4)];
            out[2 * i + 1] = HEX[usize::from(b & 15)];
        }
        std::str::from_utf8(&out[..]).ok()
    }

    /// The Ed25519 signature of `message`, in standard base64 (88
    /// characters), into `out`; `None` for a shared secret.
    pub fn ed25519_base64<'o>(&self, message: &[u8], out: &'o mut [u8; 88]) -> Option<&'o str> {
        let Secret::Ed25519(pair) = &self.secret else {
            return None;
        };
        let sig = pair.sign(message);
        let n = base64::engine::general_purpose::STANDARD
            .encode_slice(sig.as_ref(), &mut out[..])
            .ok()?;
        std::str::from_utf8(&out[..n]).ok()
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("key", &self.key)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// The key id alone from an owner-only credentials file (the `key = ...`
/// line of [`Credentials::from_file`]'s format; a `secret` or
/// `private_key` line beside it is allowed and not read): for streams that
/// need the key's id and no signature (Binance's SBE market data).
pub fn key_from_file(path: &Path) -> Result<String, CredentialsError> {
    let text = read_owner_only(path)?;
    match file_values(&text)?.0 {
        Some(k) if !k.is_empty() => Ok(k.to_owned()),
        _ => Err(CredentialsError::Format("no `key`")),
    }
}

/// The `key`, `secret` and `private_key` values of a credentials file
/// (the format [`Credentials::from_file`] describes), each if given.
type FileValues<'t> = (Option<&'t str>, Option<&'t str>, Option<&'t str>);

fn file_values(text: &[u8]) -> Result<FileValues<'_>, CredentialsError> {
    let text = std::str::from_utf8(text).map_err(|_| CredentialsError::Format("not UTF-8"))?;
    let (mut key, mut secret, mut private) = (None, None, None);
    for line in text.lines() {
        let line = uncommented(line).trim();
        if line.is_empty() {
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .ok_or(CredentialsError::Format("a line is not `name = value`"))?;
        let value = value.trim().trim_matches('"');
        match name.trim() {
            "key" => key = Some(value),
            "secret" => secret = Some(value),
            "private_key" => private = Some(value),
            _ => {
                return Err(CredentialsError::Format(
                    "unknown name (key, secret, private_key)",
                ));
            }
        }
    }
    Ok((key, secret, private))
}

/// A file's bytes, if only its owner may read or write it.
fn read_owner_only(path: &Path) -> Result<Vec<u8>, CredentialsError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(CredentialsError::Io)?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(CredentialsError::NotOwnerOnly(mode & 0o777));
        }
    }
    std::fs::read(path).map_err(CredentialsError::Io)
}

/// The DER inside a PEM's armour.
fn pem_body(text: &str) -> Result<Vec<u8>, CredentialsError> {
    let body: String = text
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .map(str::trim)
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| CredentialsError::BadKey)
}

/// `line` without its comment: from a `#` that starts the line or follows
/// whitespace ([`Credentials::from_file`]).
fn uncommented(line: &str) -> &str {
    let mut after_space = true;
    for (at, c) in line.char_indices() {
        if c == '#' && after_space {
            return &line[..at];
        }
        after_space = c.is_whitespace();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?".
        let c = Credentials::hmac("id", b"Jefe");
        let mut out = [0u8; 64];
        let hex = c
            .hmac_hex(&[b"what do ya want ", b"for nothing?"], &mut out)
            .unwrap();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(c.ed25519_base64(b"x", &mut [0; 88]).is_none());
    }

    #[test]
    fn ed25519_signs_verifiably_and_secrets_are_never_shown() {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
        );
        let c = Credentials::ed25519("k", pem.as_bytes()).unwrap();
        let mut out = [0u8; 88];
        let sig = c.ed25519_base64(b"apiKey=k&timestamp=1", &mut out).unwrap();
        let sig = base64::engine::general_purpose::STANDARD
            .decode(sig)
            .unwrap();
        let public = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        use ring::signature::KeyPair;
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::ED25519,
            public.public_key().as_ref(),
        )
        .verify(b"apiKey=k&timestamp=1", &sig)
        .unwrap();
        let shown = format!("{c:?}");
        assert!(shown.contains("redacted") && !shown.contains("PRIVATE"));
        assert!(matches!(
            Credentials::ed25519("k", b"not a key"),
            Err(CredentialsError::BadKey)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn files_others_may_read_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tw-cred-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys");
        std::fs::write(&path, "key = abc\nsecret = s3cret # a comment\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            Credentials::from_file(&path),
            Err(CredentialsError::NotOwnerOnly(0o644))
        ));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let c = Credentials::from_file(&path).unwrap();
        assert_eq!(c.key(), "abc");
        assert!(!format!("{c:?}").contains("s3cret"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_hash_inside_a_secret_is_kept_and_a_spaced_one_starts_a_comment() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tw-cred-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys");
        std::fs::write(
            &path,
            "# the bot's keys\nkey = abc\t# the id\nsecret = ab#cd # a comment\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let c = Credentials::from_file(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.key(), "abc");
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        let want = Credentials::hmac("abc", b"ab#cd");
        assert_eq!(
            c.hmac_hex(&[b"payload"], &mut a),
            want.hmac_hex(&[b"payload"], &mut b),
            "the secret was cut at its '#'"
        );
    }

    #[test]
    fn a_key_id_alone_is_read_from_an_owner_only_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tickwire-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("key");
        std::fs::write(
            &file,
            "# the stream key\nkey = \"abc123\"\nprivate_key = /elsewhere.pem\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(key_from_file(&file).unwrap(), "abc123");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            key_from_file(&file),
            Err(CredentialsError::NotOwnerOnly(0o644))
        ));
        std::fs::write(&file, "secret = x\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(matches!(
            key_from_file(&file),
            Err(CredentialsError::Format("no `key`"))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
