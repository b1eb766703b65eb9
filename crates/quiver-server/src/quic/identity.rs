//! The QUIC server's TLS identity: a certificate chain and key from configured PEM files,
//! or a self-signed certificate for `localhost`/`127.0.0.1` generated once into the data
//! directory and reused afterwards, so that clients can keep pinning its fingerprint.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::QuicError;

/// File name of the generated certificate in the data directory.
pub const GENERATED_CERT_FILE: &str = "quic-cert.pem";
/// File name of the generated private key in the data directory (mode 0600).
pub const GENERATED_KEY_FILE: &str = "quic-key.pem";

/// Names the generated certificate is valid for: the loopback defaults of `quic.addr`.
const GENERATED_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];

/// Where an identity came from, said in its errors.
const CONFIGURED: &str = "quic.cert and quic.key must be a PEM certificate chain and its key";
const GENERATED: &str = "the certificate generated into the data directory: delete quic-cert.pem and quic-key.pem there to generate a new pair";
const IN_MEMORY: &str = "a certificate generated in memory";

/// A certificate chain (leaf first) and its private key.
#[derive(Debug)]
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    /// Where it came from, for errors.
    pub origin: &'static str,
}

impl Clone for Identity {
    fn clone(&self) -> Identity {
        Identity {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
            origin: self.origin,
        }
    }
}

impl Identity {
    /// A fresh self-signed certificate for `localhost` and `127.0.0.1`, in memory.
    pub fn generate() -> Result<Identity, QuicError> {
        Identity::generate_pem().map(|(identity, _, _)| identity)
    }

    /// [`Identity::generate`], with the certificate and key also as PEM text.
    fn generate_pem() -> Result<(Identity, String, String), QuicError> {
        let names = GENERATED_NAMES.map(str::to_owned).to_vec();
        let generated = rcgen::generate_simple_self_signed(names)
            .map_err(|error| QuicError::Generate(error.to_string()))?;
        let key = PrivateKeyDer::try_from(generated.signing_key.serialize_der())
            .map_err(|error| QuicError::Generate(error.to_owned()))?;
        let identity = Identity {
            chain: vec![generated.cert.der().clone()],
            key,
            origin: IN_MEMORY,
        };
        let cert_pem = generated.cert.pem();
        let key_pem = generated.signing_key.serialize_pem();
        Ok((identity, cert_pem, key_pem))
    }

    /// Reads a PEM certificate chain and a PEM private key (`quic.cert`, `quic.key`).
    pub fn load(cert: &Path, key: &Path) -> Result<Identity, QuicError> {
        Identity::load_from(cert, key, CONFIGURED)
    }

    fn load_from(cert: &Path, key: &Path, origin: &'static str) -> Result<Identity, QuicError> {
        let pem_error = |path: &Path, error: &dyn std::fmt::Display| QuicError::Pem {
            path: path.to_owned(),
            reason: error.to_string(),
            origin,
        };
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|error| pem_error(cert, &error))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| pem_error(cert, &error))?;
        if chain.is_empty() {
            return Err(pem_error(cert, &"no CERTIFICATE block"));
        }
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|error| pem_error(key, &error))?;
        Ok(Identity {
            chain,
            key: key_der,
            origin,
        })
    }

    /// The identity kept in `data_dir`: loaded when both files exist, generated and written
    /// (key with mode 0600) when neither does.
    pub fn load_or_generate(data_dir: &Path) -> Result<Identity, QuicError> {
        let cert = data_dir.join(GENERATED_CERT_FILE);
        let key = data_dir.join(GENERATED_KEY_FILE);
        match (cert.exists(), key.exists()) {
            (true, true) => return Identity::load_from(&cert, &key, GENERATED),
            (false, false) => {}
            _ => {
                return Err(QuicError::HalfIdentity {
                    cert,
                    key,
                    reason: "only one of the two generated files exists; delete it to generate a new pair",
                });
            }
        }
        let (identity, cert_pem, key_pem) = Identity::generate_pem()?;
        write_new(&key, key_pem.as_bytes(), 0o600)?;
        write_new(&cert, cert_pem.as_bytes(), 0o644)?;
        Ok(Identity {
            origin: GENERATED,
            ..identity
        })
    }

    /// The leaf certificate (DER).
    pub fn leaf(&self) -> &[u8] {
        self.chain.first().map_or(&[], |cert| cert.as_ref())
    }

    /// SHA-256 of the leaf certificate's DER, lowercase hex: what clients pin.
    pub fn fingerprint(&self) -> String {
        fingerprint(self.leaf())
    }
}

/// SHA-256 of `der`, lowercase hex without separators.
pub fn fingerprint(der: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, der);
    digest
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn write_new(path: &PathBuf, bytes: &[u8], mode: u32) -> Result<(), QuicError> {
    let io = |error| QuicError::Write {
        path: path.clone(),
        error,
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    if let Some(dir) = path.parent()
        && let Ok(dir) = fs::File::open(dir)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_identity_is_kept_and_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Identity::load_or_generate(dir.path()).expect("generate");
        let again = Identity::load_or_generate(dir.path()).expect("reuse");
        assert_eq!(first.fingerprint(), again.fingerprint());
        assert_eq!(first.fingerprint().len(), 64);
        assert_eq!(first.key.secret_der(), again.key.secret_der());
        let mode = fs::metadata(dir.path().join(GENERATED_KEY_FILE))
            .expect("key file")
            .permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }
}
