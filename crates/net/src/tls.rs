//! Everything that touches rustls lives in this module.
//!
//! The rest of the crate sees [`TlsConfig`] (trust anchors), [`TlsError`] and
//! the crate-private [`TlsSession`], a thin wrapper over rustls 0.23's
//! buffered `ClientConnection`. That connection copies each received record's
//! plaintext into a freshly allocated `Vec` (`take_received_plaintext`); the
//! in-place TLS 1.3 record layer that removes this allocation replaces the
//! wrapper's internals without changing what the rest of the crate sees.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};

/// The trust anchors and TLS settings for `wss://` connections.
///
/// Certificate and host-name verification are always on; there is no way to
/// turn them off. By default the trust anchors are the Mozilla root program's
/// (from `webpki-roots`); more CA certificates can be added from PEM.
#[derive(Clone)]
pub struct TlsConfig {
    roots: RootCertStore,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("trust_anchors", &self.roots.len())
            .finish()
    }
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig::webpki_roots()
    }
}

impl TlsConfig {
    /// Trusts the Mozilla root program's CAs, as shipped by `webpki-roots`.
    pub fn webpki_roots() -> TlsConfig {
        TlsConfig {
            roots: RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            },
        }
    }

    /// Trusts no CA at all; add some with [`add_ca_pem`](Self::add_ca_pem)
    /// or [`add_ca_file`](Self::add_ca_file). Useful for tests against a
    /// private CA, and for deployments that pin their own.
    pub fn empty() -> TlsConfig {
        TlsConfig {
            roots: RootCertStore::empty(),
        }
    }

    /// Also trusts every CA certificate in `pem` (one or more
    /// `-----BEGIN CERTIFICATE-----` blocks). Returns how many were added.
    pub fn add_ca_pem(&mut self, pem: &[u8]) -> Result<usize, TlsConfigError> {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| TlsConfigError::Pem(e.to_string()))?;
            self.roots
                .add(cert)
                .map_err(|e| TlsConfigError::Certificate(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(TlsConfigError::NoCertificates);
        }
        Ok(added)
    }

    /// Also trusts every CA certificate in the PEM file at `path`.
    pub fn add_ca_file(&mut self, path: impl AsRef<Path>) -> Result<usize, TlsConfigError> {
        let pem = std::fs::read(path.as_ref()).map_err(|e| TlsConfigError::Io(e.kind()))?;
        self.add_ca_pem(&pem)
    }

    /// How many trust anchors there are.
    pub fn trust_anchors(&self) -> usize {
        self.roots.len()
    }

    /// Builds the rustls client configuration: ring provider, TLS 1.3 and
    /// 1.2, ALPN `http/1.1` (so servers that also speak HTTP/2 keep the
    /// WebSocket upgrade on HTTP/1.1).
    pub(crate) fn context(&self) -> Result<TlsContext, TlsConfigError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsConfigError::Certificate(e.to_string()))?
            .with_root_certificates(self.roots.clone())
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsContext(Arc::new(config)))
    }
}

/// A built client configuration, shared by every connection of a driver.
pub(crate) struct TlsContext(Arc<ClientConfig>);

/// Why a [`TlsConfig`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsConfigError {
    /// The PEM file could not be read.
    Io(io::ErrorKind),
    /// The PEM data is malformed.
    Pem(String),
    /// The PEM data holds no certificate.
    NoCertificates,
    /// A certificate is not a usable trust anchor.
    Certificate(String),
}

impl fmt::Display for TlsConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsConfigError::Io(kind) => write!(f, "cannot read CA file: {kind}"),
            TlsConfigError::Pem(e) => write!(f, "malformed PEM: {e}"),
            TlsConfigError::NoCertificates => f.write_str("no certificate in PEM data"),
            TlsConfigError::Certificate(e) => write!(f, "unusable CA certificate: {e}"),
        }
    }
}

impl std::error::Error for TlsConfigError {}

/// A TLS failure on a connection.
#[derive(Clone, Debug, PartialEq)]
pub struct TlsError {
    kind: TlsErrorKind,
    source: Option<rustls::Error>,
}

/// The broad class of a [`TlsError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TlsErrorKind {
    /// The server's certificate did not verify: unknown issuer, wrong host
    /// name, expired, revoked, or malformed.
    Certificate,
    /// The peer sent a fatal alert.
    Alert,
    /// A record failed to decrypt or authenticate.
    Decrypt,
    /// The host name is not a valid DNS name or IP address.
    InvalidName,
    /// Any other TLS protocol failure.
    Protocol,
}

impl TlsError {
    /// The broad class of the failure.
    pub fn kind(&self) -> TlsErrorKind {
        self.kind
    }

    fn from_rustls(e: rustls::Error) -> TlsError {
        let kind = match &e {
            rustls::Error::InvalidCertificate(_) => TlsErrorKind::Certificate,
            rustls::Error::AlertReceived(_) => TlsErrorKind::Alert,
            rustls::Error::DecryptError => TlsErrorKind::Decrypt,
            _ => TlsErrorKind::Protocol,
        };
        TlsError {
            kind,
            source: Some(e),
        }
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(e) => fmt::Display::fmt(e, f),
            None => f.write_str("invalid server name"),
        }
    }
}

impl std::error::Error for TlsError {}

/// One client TLS session over a socket the caller owns.
pub(crate) struct TlsSession {
    conn: ClientConnection,
}

impl TlsSession {
    /// Starts a session that verifies the server as `host` (SNI is sent for
    /// DNS names, not for IP addresses).
    pub(crate) fn new(context: &TlsContext, host: &str) -> Result<TlsSession, TlsError> {
        let name = ServerName::try_from(host.to_owned()).map_err(|_| TlsError {
            kind: TlsErrorKind::InvalidName,
            source: None,
        })?;
        let conn =
            ClientConnection::new(Arc::clone(&context.0), name).map_err(TlsError::from_rustls)?;
        Ok(TlsSession { conn })
    }

    /// Reads ciphertext from `sock` and processes it. `Ok(0)` is the end of
    /// the TCP stream; `WouldBlock` means the socket is drained.
    pub(crate) fn read_tls(&mut self, sock: &mut impl Read) -> Result<usize, TlsIoError> {
        let n = self.conn.read_tls(sock).map_err(TlsIoError::Io)?;
        self.conn
            .process_new_packets()
            .map_err(|e| TlsIoError::Tls(TlsError::from_rustls(e)))?;
        Ok(n)
    }

    /// Copies decrypted plaintext into `buf`. `WouldBlock` means there is
    /// none; `Ok(0)` means the peer sent close_notify.
    pub(crate) fn read_plaintext(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.conn.reader().read(buf)
    }

    /// Hands plaintext to the session; returns how much it took.
    pub(crate) fn write_plaintext(&mut self, data: &[u8]) -> io::Result<usize> {
        self.conn.writer().write(data)
    }

    pub(crate) fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Writes pending ciphertext to `sock`.
    pub(crate) fn write_tls(&mut self, sock: &mut impl Write) -> io::Result<usize> {
        self.conn.write_tls(sock)
    }

    pub(crate) fn send_close_notify(&mut self) {
        self.conn.send_close_notify();
    }
}

/// An error from [`TlsSession::read_tls`]: the socket's, or the session's.
pub(crate) enum TlsIoError {
    Io(io::Error),
    Tls(TlsError),
}
