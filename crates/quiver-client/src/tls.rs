//! TLS for `quiver+quic://`: the rustls client configuration (TLS 1.3, the `ring`
//! provider, ALPN `quiver/1`) and how the server certificate is trusted: pinned by its
//! SHA-256 fingerprint (what a self-signed Quiver server logs), or checked against CA
//! certificates from a PEM file.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::ConnectError;

/// The ALPN protocol of the native protocol, version 1 (the server's `quic::ALPN`).
pub const ALPN: &[u8] = b"quiver/1";

/// Bytes in a SHA-256 fingerprint.
const FINGERPRINT_LEN: usize = 32;

/// How the client trusts the server certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerTrust {
    /// The leaf certificate's SHA-256, hex (colons and case ignored).
    Fingerprint(String),
    /// A PEM file of CA (or self-signed server) certificates; the server name is checked.
    CaFile(std::path::PathBuf),
}

/// A rustls client configuration trusting `trust`.
pub fn client_config(trust: Option<&ServerTrust>) -> Result<rustls::ClientConfig, ConnectError> {
    let mut provider = rustls::crypto::ring::default_provider();
    // AES-128-GCM first, as the server prefers it: every packet is sealed with it, in 10
    // rounds a block where AES-256 takes 14.
    provider
        .cipher_suites
        .sort_by_key(|suite| suite.suite() != rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    let provider = Arc::new(provider);
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|error| tls(error.to_string()))?;
    let mut config = match trust {
        None => {
            return Err(tls(
                "quiver+quic:// needs a way to trust the server: ClientOptions::pin_server_fingerprint or ClientOptions::trust_ca_file".to_owned(),
            ));
        }
        Some(ServerTrust::Fingerprint(hex)) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Pinned {
                fingerprint: parse_fingerprint(hex)?,
                provider,
            }))
            .with_no_client_auth(),
        Some(ServerTrust::CaFile(path)) => builder
            .with_root_certificates(roots(path)?)
            .with_no_client_auth(),
    };
    config.alpn_protocols = vec![ALPN.to_vec()];
    Ok(config)
}

fn tls(reason: String) -> ConnectError {
    ConnectError::Tls { reason }
}

fn parse_fingerprint(hex: &str) -> Result<[u8; FINGERPRINT_LEN], ConnectError> {
    let digits: Vec<u8> = hex.bytes().filter(|byte| *byte != b':').collect();
    let bad = || {
        tls(format!(
            "server fingerprint {hex:?} is not a SHA-256 in hex (64 hex digits, colons allowed)"
        ))
    };
    if digits.len() != FINGERPRINT_LEN * 2 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return Err(bad());
    }
    let mut out = [0u8; FINGERPRINT_LEN];
    for (byte, pair) in out.iter_mut().zip(digits.chunks(2)) {
        let text = std::str::from_utf8(pair).map_err(|_| bad())?;
        *byte = u8::from_str_radix(text, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

fn roots(path: &Path) -> Result<RootCertStore, ConnectError> {
    let bad = |reason: String| tls(format!("CA file {}: {reason}", path.display()));
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|error| bad(error.to_string()))? {
        let cert = cert.map_err(|error| bad(error.to_string()))?;
        roots.add(cert).map_err(|error| bad(error.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no CERTIFICATE block".to_owned()));
    }
    Ok(roots)
}

/// Accepts exactly the server certificate whose SHA-256 is `fingerprint`; the handshake
/// signatures are still checked, so the server must hold the certificate's key.
#[derive(Debug)]
struct Pinned {
    fingerprint: [u8; FINGERPRINT_LEN],
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let digest = ring::digest::digest(&ring::digest::SHA256, end_entity.as_ref());
        if digest.as_ref() == self.fingerprint {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_64_hex_digits_with_optional_colons() {
        let hex = "ab".repeat(32);
        assert_eq!(parse_fingerprint(&hex).ok(), Some([0xab; 32]));
        let colons = vec!["AB"; 32].join(":");
        assert_eq!(parse_fingerprint(&colons).ok(), Some([0xab; 32]));
        assert!(parse_fingerprint("abc").is_err());
        assert!(parse_fingerprint(&"zz".repeat(32)).is_err());
        assert!(parse_fingerprint(&format!("+a{}", "ab".repeat(31))).is_err());
    }
}
