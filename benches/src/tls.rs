//! TLS set-up shared by the TLS benchmarks: a throw-away CA, a rustls
//! server restricted to one suite, and the frames servers send.

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{
    ClientConfig, ClientConnection, ServerConfig, ServerConnection, SupportedCipherSuite,
};
use tickwire_codec::{OpCode, encode_frame};

/// The 200-byte trade message every TLS benchmark sends.
pub const MESSAGE: &[u8] = br#"{"e":"trade","E":1723075200123,"s":"BTCUSDT","t":3712345678,"p":"61234.56000000","q":"0.00123000","T":1723075200122,"m":true,"M":true,"x":"padding-to-200-bytes-of-json-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#;

pub struct Pki {
    pub ca_pem: String,
    pub ca_der: CertificateDer<'static>,
    pub cert: CertificateDer<'static>,
    pub key_der: Vec<u8>,
}

/// A test CA and a `localhost` certificate it issued.
pub fn pki() -> Pki {
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    Pki {
        ca_pem: ca_cert.pem(),
        ca_der: ca_cert.der().clone(),
        cert: cert.der().clone(),
        key_der: key.serialize_der(),
    }
}

/// A rustls TLS 1.3 server connection restricted to `suite`.
pub fn server(pki: &Pki, suite: SupportedCipherSuite) -> ServerConnection {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites = vec![suite];
    let config = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.cert.clone()],
            PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
        )
        .unwrap();
    let mut conn = ServerConnection::new(Arc::new(config)).unwrap();
    conn.set_buffer_limit(None);
    conn
}

/// A rustls TLS 1.3 client connection to `localhost` that trusts `pki`'s
/// CA: the peer client (under tungstenite) of the TLS benchmarks.
pub fn client(pki: &Pki) -> ClientConnection {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_der.clone()).unwrap();
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap()
}

/// `n` text frames of a ~200-byte trade message, as a server sends them.
pub fn frames(n: usize) -> Vec<u8> {
    let mut one = [0u8; 256];
    let len = encode_frame(&mut one, OpCode::Text, true, MESSAGE, None).unwrap();
    one[..len].repeat(n)
}
