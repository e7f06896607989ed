//! The simulator's TLS: a throw-away certificate authority made fresh at
//! each start.

use tickwire_net::server::ServerTls;

/// A throw-away certificate authority and a server certificate it issued
/// for `localhost` and `127.0.0.1`: the simulator's TLS, and the CA (PEM)
/// a client must trust to reach it. Made fresh each time; nothing secret
/// is ever written to the repository.
pub fn self_signed() -> Result<(ServerTls, String), String> {
    let e = |e: rcgen::Error| e.to_string();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "tickwire simulator CA");
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = rcgen::KeyPair::generate().map_err(e)?;
    let ca_cert = ca.self_signed(&ca_key).map_err(e)?;
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let mut leaf =
        rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(e)?;
    leaf.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = rcgen::KeyPair::generate().map_err(e)?;
    let cert = leaf.signed_by(&key, &issuer).map_err(e)?;
    let tls = ServerTls::from_pem(cert.pem().as_bytes(), key.serialize_pem().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok((tls, ca_cert.pem()))
}
