//! Everything that touches rustls lives in this module.
//!
//! rustls 0.23 does the handshake, as an `UnbufferedClientConnection` over
//! the connection's own buffers. When TLS 1.3 is negotiated the session then
//! becomes a `KernelConnection` (rustls keeps the key schedule and the
//! session tickets) and [`record::RecordLayer`] encrypts and decrypts in
//! place, so receiving allocates nothing and copies nothing. A server that
//! only speaks TLS 1.2 still works, through rustls's unbuffered traffic
//! path, which allocates and copies once per received record.

pub(crate) mod record;
#[cfg(test)]
mod tests;

use std::fmt;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rustls::client::{ClientConnectionData, UnbufferedClientConnection};
use rustls::kernel::KernelConnection;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::unbuffered::{ConnectionState, EncodeError, EncryptError, UnbufferedStatus};
use rustls::{ClientConfig, ConnectionTrafficSecrets, ProtocolVersion, RootCertStore};

use self::record::{KeySchedule, Opened, RecordError, RecordLayer, Suite, TrafficKey};
use crate::region::Region;

/// The trust anchors and TLS settings for `wss://` connections.
///
/// Certificate and host-name verification are always on; there is no way to
/// turn them off. By default the trust anchors are the Mozilla root program's
/// (from `webpki-roots`); more CA certificates can be added from PEM.
#[derive(Clone)]
pub struct TlsConfig {
    roots: RootCertStore,
    /// Where the anchors came from, with how many each gave, in order.
    sources: Vec<(String, usize)>,
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
            sources: vec![(
                "the Mozilla roots of webpki-roots".into(),
                webpki_roots::TLS_SERVER_ROOTS.len(),
            )],
        }
    }

    /// Trusts no CA at all; add some with [`add_ca_pem`](Self::add_ca_pem)
    /// or [`add_ca_file`](Self::add_ca_file). Useful for tests against a
    /// private CA, and for deployments that pin their own.
    pub fn empty() -> TlsConfig {
        TlsConfig {
            roots: RootCertStore::empty(),
            sources: Vec::new(),
        }
    }

    /// Also trusts every CA certificate in `pem` (one or more
    /// `-----BEGIN CERTIFICATE-----` blocks). Returns how many were added.
    pub fn add_ca_pem(&mut self, pem: &[u8]) -> Result<usize, TlsConfigError> {
        let added = self.add_pem(pem)?;
        self.sources.push(("PEM data".into(), added));
        Ok(added)
    }

    fn add_pem(&mut self, pem: &[u8]) -> Result<usize, TlsConfigError> {
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
        let added = self.add_pem(&pem)?;
        self.sources
            .push((path.as_ref().display().to_string(), added));
        Ok(added)
    }

    /// The trust anchors in words, for a certificate failure's message:
    /// `146 trust anchors (146 from the Mozilla roots of webpki-roots, 1
    /// from ca.pem)`.
    pub fn describe(&self) -> String {
        let from: Vec<String> = self
            .sources
            .iter()
            .map(|(source, n)| format!("{n} from {source}"))
            .collect();
        match self.roots.len() {
            0 => "no trust anchor at all".into(),
            n if from.is_empty() => format!("{n} trust anchors"),
            n => format!("{n} trust anchors ({})", from.join(", ")),
        }
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
        // The in-place record layer takes the traffic secrets over after
        // the handshake (through rustls's KernelConnection).
        config.enable_secret_extraction = true;
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
    /// A record was too long, or the peer exceeded a sequence-number limit.
    Limit,
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

impl TlsError {
    fn from_record(e: RecordError) -> TlsError {
        let (kind, error) = match e {
            RecordError::BadRecordMac => (TlsErrorKind::Decrypt, rustls::Error::DecryptError),
            RecordError::Alert(code) => (
                TlsErrorKind::Alert,
                rustls::Error::AlertReceived(rustls::AlertDescription::from(code)),
            ),
            RecordError::RecordOverflow => {
                (TlsErrorKind::Limit, rustls::Error::PeerSentOversizedRecord)
            }
            RecordError::SequenceExhausted => (TlsErrorKind::Limit, rustls::Error::EncryptError),
            RecordError::UnexpectedMessage => (
                TlsErrorKind::Protocol,
                rustls::Error::General("unexpected TLS message after the handshake".into()),
            ),
            RecordError::InterleavedHandshake => (
                TlsErrorKind::Protocol,
                rustls::Error::PeerMisbehaved(
                    rustls::PeerMisbehaved::MessageInterleavedWithHandshakeMessage,
                ),
            ),
            RecordError::DecodeError => (
                TlsErrorKind::Protocol,
                rustls::Error::General("malformed TLS record content".into()),
            ),
            RecordError::KeySchedule => (
                TlsErrorKind::Protocol,
                rustls::Error::General("key update or session ticket refused".into()),
            ),
            RecordError::NoRoom => (
                TlsErrorKind::Protocol,
                rustls::Error::General("no room for a TLS record in the send buffer".into()),
            ),
        };
        TlsError {
            kind,
            source: Some(error),
        }
    }

    fn general(kind: TlsErrorKind, what: &str) -> TlsError {
        TlsError {
            kind,
            source: Some(rustls::Error::General(what.into())),
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

/// Which TLS version carries the session, for observability and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Handshaking,
    /// TLS 1.3 through the in-place record layer.
    InPlace,
    /// TLS 1.2 through rustls's unbuffered traffic path.
    Rustls12,
}

// The in-place layer is the hot path and lives inline; the rustls
// connections, used once per handshake or on the slow TLS 1.2 path, are boxed.
#[allow(clippy::large_enum_variant)]
enum State {
    Handshaking(Box<UnbufferedClientConnection>),
    Tls13 {
        records: RecordLayer,
        /// rustls's key schedule ([`Kernel`]), or under `internals` a
        /// stand-in one a test's peer shares.
        keys: Box<dyn KeySchedule + Send>,
    },
    Tls12(Box<UnbufferedClientConnection>),
    /// After a failure or a conversion gone wrong; every call errs.
    Failed,
}

/// One client TLS session over buffers and a socket the caller owns.
pub(crate) struct TlsSession {
    state: State,
    /// TLS 1.2 only: a record's plaintext on its way to the receive buffer.
    scratch: Vec<u8>,
    /// The traffic keys taken over from rustls, kept for the fuzz targets.
    #[cfg(any(fuzzing, feature = "internals"))]
    pub(crate) secrets: Option<(TrafficKey, u64, TrafficKey, u64)>,
}

impl TlsSession {
    /// Starts a session that verifies the server as `host` (SNI is sent for
    /// DNS names, not for IP addresses).
    pub(crate) fn new(context: &TlsContext, host: &str) -> Result<TlsSession, TlsError> {
        let name = ServerName::try_from(host.to_owned()).map_err(|_| TlsError {
            kind: TlsErrorKind::InvalidName,
            source: None,
        })?;
        let conn = UnbufferedClientConnection::new(Arc::clone(&context.0), name)
            .map_err(TlsError::from_rustls)?;
        Ok(TlsSession {
            state: State::Handshaking(Box::new(conn)),
            scratch: Vec::new(),
            #[cfg(any(fuzzing, feature = "internals"))]
            secrets: None,
        })
    }

    pub(crate) fn mode(&self) -> Mode {
        match self.state {
            State::Handshaking(_) | State::Failed => Mode::Handshaking,
            State::Tls13 { .. } => Mode::InPlace,
            State::Tls12(_) => Mode::Rustls12,
        }
    }

    /// Record counters of the in-place layer (zero on other paths).
    pub(crate) fn stats(&self) -> record::RecordStats {
        match &self.state {
            State::Tls13 { records, .. } => records.stats,
            _ => record::RecordStats::default(),
        }
    }

    /// Runs the handshake over received bytes; handshake records to send go
    /// into `out`. Returns how many bytes of `incoming` were used up, and
    /// whether the handshake is complete (the session is then ready for
    /// [`open`](Self::open) and [`seal`](Self::seal)).
    pub(crate) fn handshake(
        &mut self,
        incoming: &mut [u8],
        out: &mut Region,
    ) -> Result<(usize, bool), TlsError> {
        let State::Handshaking(conn) = &mut self.state else {
            return Ok((0, true));
        };
        let mut used = 0;
        loop {
            let UnbufferedStatus { discard, state } =
                conn.process_tls_records(&mut incoming[used..]);
            let done = match state.map_err(TlsError::from_rustls)? {
                ConnectionState::EncodeTlsData(mut data) => {
                    let room = out.buf.len() - (out.end - out.start);
                    let space = out.reserve(room).map_err(|_| no_room())?;
                    match data.encode(space) {
                        Ok(n) => out.commit(n),
                        Err(EncodeError::InsufficientSize(_)) => return Err(no_room()),
                        Err(e) => {
                            return Err(TlsError::general(TlsErrorKind::Protocol, &e.to_string()));
                        }
                    }
                    false
                }
                // The records are in `out`; the caller sends them.
                ConnectionState::TransmitTlsData(data) => {
                    data.done();
                    false
                }
                ConnectionState::BlockedHandshake => {
                    used += discard;
                    return Ok((used, false));
                }
                ConnectionState::WriteTraffic(_) => true,
                ConnectionState::PeerClosed | ConnectionState::Closed => {
                    return Err(TlsError::general(
                        TlsErrorKind::Protocol,
                        "the peer closed TLS during the handshake",
                    ));
                }
                // Application data before our request (a WebSocket server
                // never sends any), or early data: not expected here.
                _ => {
                    return Err(TlsError::general(
                        TlsErrorKind::Protocol,
                        "unexpected application data during the handshake",
                    ));
                }
            };
            used += discard;
            if done {
                break;
            }
        }
        self.established()?;
        Ok((used, true))
    }

    /// The handshake is done: TLS 1.3 moves to the in-place record layer.
    fn established(&mut self) -> Result<(), TlsError> {
        let State::Handshaking(conn) = std::mem::replace(&mut self.state, State::Failed) else {
            return Ok(());
        };
        if conn.protocol_version() != Some(ProtocolVersion::TLSv1_3) {
            self.scratch = Vec::with_capacity(record::MAX_PLAINTEXT);
            self.state = State::Tls12(conn);
            return Ok(());
        }
        let (secrets, kernel) = conn
            .dangerous_into_kernel_connection()
            .map_err(TlsError::from_rustls)?;
        let (rx_seq, rx) = secrets.rx;
        let (tx_seq, tx) = secrets.tx;
        let (rx, tx) = (traffic_key(rx)?, traffic_key(tx)?);
        #[cfg(any(fuzzing, feature = "internals"))]
        {
            self.secrets = Some((rx.clone(), rx_seq, tx.clone(), tx_seq));
        }
        let records = RecordLayer::new(&rx, rx_seq, &tx, tx_seq).map_err(TlsError::from_record)?;
        self.state = State::Tls13 {
            records,
            keys: Box::new(Kernel(kernel)),
        };
        Ok(())
    }

    /// A TLS 1.3 session already established with these traffic keys, and
    /// `keys` for what follows (key updates): for the fuzz targets, whose
    /// peer seals records with keys both ends derive alike.
    #[cfg(any(fuzzing, feature = "internals"))]
    pub(crate) fn established_with(
        (rx, rx_seq, tx, tx_seq): (TrafficKey, u64, TrafficKey, u64),
        keys: Box<dyn KeySchedule + Send>,
    ) -> TlsSession {
        let records = RecordLayer::new(&rx, rx_seq, &tx, tx_seq).expect("valid keys");
        TlsSession {
            state: State::Tls13 { records, keys },
            scratch: Vec::new(),
            secrets: Some((rx, rx_seq, tx, tx_seq)),
        }
    }

    /// Decrypts the complete records in `buf[cipher]`, appending their
    /// plaintext at `buf[plain_end..]` (`plain_end <= cipher.start`).
    /// Records to send in reply (a KeyUpdate) go into `out`.
    pub(crate) fn open(
        &mut self,
        buf: &mut [u8],
        plain_end: usize,
        cipher: Range<usize>,
        out: &mut Region,
    ) -> Result<Opened, TlsError> {
        match &mut self.state {
            State::Tls13 { records, keys } => records
                .open(buf, plain_end, cipher, keys.as_mut(), out)
                .map_err(TlsError::from_record),
            State::Tls12(conn) => open_tls12(conn, &mut self.scratch, buf, plain_end, cipher, out),
            State::Handshaking(_) | State::Failed => Err(TlsError::general(
                TlsErrorKind::Protocol,
                "TLS session not established",
            )),
        }
    }

    /// Encrypts `plaintext` into `out`; returns how much of it was taken.
    pub(crate) fn seal(&mut self, plaintext: &[u8], out: &mut Region) -> Result<usize, TlsError> {
        match &mut self.state {
            State::Tls13 { records, keys } => records
                .seal(plaintext, keys.as_mut(), out)
                .map_err(TlsError::from_record),
            State::Tls12(conn) => seal_tls12(conn, plaintext, out),
            State::Handshaking(_) | State::Failed => Ok(0),
        }
    }

    /// Queues a close_notify alert into `out`, if there is room.
    pub(crate) fn close_notify(&mut self, out: &mut Region) {
        match &mut self.state {
            State::Tls13 { records, .. } => {
                let _ = records.seal_close_notify(out);
            }
            State::Tls12(conn) => {
                if let Ok(ConnectionState::WriteTraffic(mut w)) =
                    conn.process_tls_records(&mut []).state
                {
                    let room = out.buf.len() - (out.end - out.start);
                    if let Ok(space) = out.reserve(room)
                        && let Ok(n) = w.queue_close_notify(space)
                    {
                        out.commit(n);
                    }
                }
            }
            State::Handshaking(_) | State::Failed => {}
        }
    }
}

fn no_room() -> TlsError {
    TlsError::from_record(RecordError::NoRoom)
}

/// rustls's key schedule, as the record layer needs it.
struct Kernel(KernelConnection<ClientConnectionData>);

impl KeySchedule for Kernel {
    fn next_rx_key(&mut self) -> Result<TrafficKey, RecordError> {
        let (_, secrets) = self
            .0
            .update_rx_secret()
            .map_err(|_| RecordError::KeySchedule)?;
        traffic_key(secrets).map_err(|_| RecordError::KeySchedule)
    }

    fn next_tx_key(&mut self) -> Result<TrafficKey, RecordError> {
        let (_, secrets) = self
            .0
            .update_tx_secret()
            .map_err(|_| RecordError::KeySchedule)?;
        traffic_key(secrets).map_err(|_| RecordError::KeySchedule)
    }

    fn new_session_ticket(&mut self, body: &[u8]) -> Result<(), RecordError> {
        self.0
            .handle_new_session_ticket(body)
            .map_err(|_| RecordError::KeySchedule)
    }
}

fn traffic_key(secrets: ConnectionTrafficSecrets) -> Result<TrafficKey, TlsError> {
    let (suite, key, iv) = match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (Suite::Aes128Gcm, key, iv),
        ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (Suite::Aes256Gcm, key, iv),
        ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
            (Suite::Chacha20Poly1305, key, iv)
        }
        _ => {
            return Err(TlsError::general(
                TlsErrorKind::Protocol,
                "negotiated an AEAD the record layer does not implement",
            ));
        }
    };
    let mut k = [0u8; 32];
    let bytes = key.as_ref();
    let iv: [u8; 12] = iv
        .as_ref()
        .try_into()
        .map_err(|_| TlsError::general(TlsErrorKind::Protocol, "unexpected IV length"))?;
    if bytes.len() > k.len() {
        return Err(TlsError::general(
            TlsErrorKind::Protocol,
            "unexpected key length",
        ));
    }
    k[..bytes.len()].copy_from_slice(bytes);
    Ok(TrafficKey { suite, key: k, iv })
}

/// TLS 1.2: rustls decrypts (and copies each record into a new `Vec`); the
/// plaintext goes through `scratch` into the receive buffer.
///
/// The incoming bytes passed to `process_tls_records` are `buf[pos..]`, so
/// discarding from their front is advancing `pos`. rustls 0.23 documents
/// two amounts: `UnbufferedStatus::discard` ("`discard` bytes must be removed
/// from the *front* of the `incoming_tls` buffer ... *before*
/// `process_tls_records` is called again") and, for each record read in a
/// `ReadTraffic` state, `AppDataRecord::discard` ("This number MUST be added
/// to the value of `UnbufferedStatus::discard` *prior* to the discard
/// operation"). Both are honoured. (rustls 0.23.46 copies a record's
/// plaintext out, counts the record's bytes in `UnbufferedStatus::discard`
/// and always reports 0 in `AppDataRecord::discard`; that field is for the
/// in-place decryption rustls notes as future work, which would count the
/// record's bytes there instead.)
fn open_tls12(
    conn: &mut UnbufferedClientConnection,
    scratch: &mut Vec<u8>,
    buf: &mut [u8],
    mut plain_end: usize,
    cipher: Range<usize>,
    out: &mut Region,
) -> Result<Opened, TlsError> {
    let mut pos = cipher.start;
    let close_notify = loop {
        scratch.clear();
        let UnbufferedStatus { mut discard, state } =
            conn.process_tls_records(&mut buf[pos..cipher.end]);
        let mut stop = false;
        let mut closed = false;
        match state.map_err(TlsError::from_rustls)? {
            ConnectionState::ReadTraffic(mut traffic) => {
                // One record at a time, so that its plaintext can be moved
                // into `buf` once rustls no longer borrows it.
                if let Some(record) = traffic.next_record() {
                    let record = record.map_err(TlsError::from_rustls)?;
                    scratch.extend_from_slice(record.payload);
                    discard += record.discard;
                }
            }
            ConnectionState::EncodeTlsData(mut data) => {
                let room = out.buf.len() - (out.end - out.start);
                let space = out.reserve(room).map_err(|_| no_room())?;
                let n = data.encode(space).map_err(|_| no_room())?;
                out.commit(n);
            }
            ConnectionState::TransmitTlsData(data) => data.done(),
            ConnectionState::PeerClosed | ConnectionState::Closed => closed = true,
            _ => stop = true,
        }
        pos += discard;
        // Plaintext is never longer than the records it came from, so it
        // lands in bytes already consumed.
        buf[plain_end..plain_end + scratch.len()].copy_from_slice(scratch);
        plain_end += scratch.len();
        if closed {
            break true;
        }
        if stop && scratch.is_empty() {
            break false;
        }
    };
    Ok(Opened {
        plain_end,
        cipher_start: pos,
        close_notify,
    })
}

/// TLS 1.2: rustls encrypts (allocating once per record).
fn seal_tls12(
    conn: &mut UnbufferedClientConnection,
    plaintext: &[u8],
    out: &mut Region,
) -> Result<usize, TlsError> {
    let mut sealed = 0;
    for chunk in plaintext.chunks(record::MAX_PLAINTEXT) {
        let UnbufferedStatus { state, .. } = conn.process_tls_records(&mut []);
        let ConnectionState::WriteTraffic(mut traffic) = state.map_err(TlsError::from_rustls)?
        else {
            break;
        };
        let room = out.buf.len() - (out.end - out.start);
        let Ok(space) = out.reserve(room) else { break };
        match traffic.encrypt(chunk, space) {
            Ok(n) => {
                out.commit(n);
                sealed += chunk.len();
            }
            Err(EncryptError::InsufficientSize(_)) => break,
            Err(e) => return Err(TlsError::general(TlsErrorKind::Protocol, &e.to_string())),
        }
    }
    Ok(sealed)
}
