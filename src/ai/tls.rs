//! Trusted TLS roots. By default ureq's own configuration is used (the bundled webpki roots).
//! When `SSL_CERT_FILE` and/or `SSL_CERT_DIR` name PEM certificates — a corporate CA, a TLS
//! inspecting proxy — a rustls configuration with the webpki roots *plus* those certificates is
//! built once per process and shared by every agent.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::RootCertStore;

/// The shared configuration with extra roots, or `None` when the environment names none.
pub fn custom_config() -> Option<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<Option<Arc<rustls::ClientConfig>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let file = std::env::var_os("SSL_CERT_FILE").filter(|v| !v.is_empty());
            let dir = std::env::var_os("SSL_CERT_DIR").filter(|v| !v.is_empty());
            if file.is_none() && dir.is_none() {
                return None;
            }
            let mut extra = Vec::new();
            if let Some(f) = file {
                extra.extend(load_pem_file(Path::new(&f)));
            }
            if let Some(d) = dir {
                // Like OpenSSL, SSL_CERT_DIR may list several directories.
                for one in std::env::split_paths(&d) {
                    extra.extend(load_pem_dir(&one));
                }
            }
            let (store, _) = root_store(extra);
            build_config(store)
        })
        .clone()
}

/// The certificates in a PEM file (other sections and text between them are skipped). An
/// unreadable file yields none: a bad `SSL_CERT_FILE` must not break the bundled roots.
pub fn load_pem_file(path: &Path) -> Vec<CertificateDer<'static>> {
    match std::fs::read(path) {
        Ok(bytes) => parse_pem_certs(&bytes),
        Err(_) => Vec::new(),
    }
}

/// The certificates of every readable file in a directory (`*.pem`, `*.crt`, hash links).
pub fn load_pem_dir(dir: &Path) -> Vec<CertificateDer<'static>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    paths
        .iter()
        .filter(|p| p.is_file())
        .flat_map(|p| load_pem_file(p))
        .collect()
}

/// Every `CERTIFICATE` section of a PEM buffer.
pub fn parse_pem_certs(bytes: &[u8]) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(bytes)
        .filter_map(Result::ok)
        .collect()
}

/// The webpki roots plus `extra`; also returns how many of `extra` were accepted.
pub fn root_store(extra: Vec<CertificateDer<'static>>) -> (RootCertStore, usize) {
    let mut store = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let (added, _ignored) = store.add_parsable_certificates(extra);
    (store, added)
}

fn build_config(store: RootCertStore) -> Option<Arc<rustls::ClientConfig>> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS12, &rustls::version::TLS13])
    .ok()?
    .with_root_certificates(store)
    .with_no_client_auth();
    Some(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls/bundle.pem")
    }

    #[test]
    fn pem_bundle_adds_its_certificates_to_the_webpki_roots() {
        let certs = load_pem_file(&bundle());
        assert_eq!(certs.len(), 2);
        let (store, added) = root_store(certs);
        assert_eq!(added, 2);
        assert_eq!(store.len(), webpki_roots::TLS_SERVER_ROOTS.len() + 2);
        assert!(build_config(store).is_some());
    }

    #[test]
    fn directories_and_bad_input_never_fail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(bundle(), dir.path().join("corp.crt")).unwrap();
        std::fs::write(dir.path().join("junk.pem"), "not a certificate").unwrap();
        assert_eq!(load_pem_dir(dir.path()).len(), 2);
        assert!(load_pem_file(&dir.path().join("missing.pem")).is_empty());
        assert!(load_pem_dir(&dir.path().join("missing")).is_empty());
        assert!(
            parse_pem_certs(b"-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n")
                .is_empty()
        );
    }
}
