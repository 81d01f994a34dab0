//! TLS for the HTTP layer: a ureq connector that wraps connections to `https://` URLs in rustls,
//! with one client configuration per process, built on the first HTTPS connection (plain
//! `http://` never pays for it). It trusts the bundled webpki roots. Certificates named by
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` (a corporate CA, a TLS-inspecting proxy) are trusted on top,
//! but read only when a server's chain does not verify against the bundled roots — once per
//! process, each certificate file once however many links point at it.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, StreamOwned};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
    TransportAdapter,
};

use crate::util::sort;

/// The process's client configuration: the bundled roots, then those of the environment.
pub fn client_config() -> Arc<ClientConfig> {
    static CONFIG: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| config_with(ExtraRoots::from_env()))
        .clone()
}

/// A client configuration trusting the bundled roots and, when needed, those of `extra`.
pub fn config_with(extra: ExtraRoots) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = FallbackVerifier::new(provider.clone(), extra);
    let config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS12, &rustls::version::TLS13])
        .expect("ring supports TLS 1.2 and 1.3")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Arc::new(config)
}

/// Where extra roots may come from (`SSL_CERT_FILE`, and `SSL_CERT_DIR`, which like OpenSSL's
/// may list several directories).
#[derive(Debug, Clone, Default)]
pub struct ExtraRoots {
    pub file: Option<PathBuf>,
    pub dirs: Vec<PathBuf>,
}

impl ExtraRoots {
    fn from_env() -> Self {
        let var = |k| std::env::var_os(k).filter(|v| !v.is_empty());
        ExtraRoots {
            file: var("SSL_CERT_FILE").map(PathBuf::from),
            dirs: var("SSL_CERT_DIR")
                .map(|d| std::env::split_paths(&d).collect())
                .unwrap_or_default(),
        }
    }

    fn is_empty(&self) -> bool {
        self.file.is_none() && self.dirs.is_empty()
    }

    /// Every distinct certificate the sources hold. Each file is read once even when several
    /// names lead to it (`/etc/ssl/certs` holds a link per certificate and a hash link to
    /// that), and a certificate is kept once even when it is also in the bundle.
    pub fn load(&self) -> Vec<CertificateDer<'static>> {
        let mut files: Vec<PathBuf> = self.file.iter().cloned().collect();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            sort::sort(&mut names);
            files.extend(names);
        }
        let mut seen_files = HashSet::new();
        let mut seen_certs = HashSet::new();
        let mut out = Vec::new();
        for path in files {
            let real = std::fs::canonicalize(&path).unwrap_or(path);
            if !real.is_file() || !seen_files.insert(real.clone()) {
                continue;
            }
            for cert in load_pem_file(&real) {
                if seen_certs.insert(cert.as_ref().to_vec()) {
                    out.push(cert);
                }
            }
        }
        out
    }
}

/// The certificates in a PEM file (other sections and text between them are skipped). An
/// unreadable file yields none: a bad `SSL_CERT_FILE` must not break the bundled roots.
pub fn load_pem_file(path: &Path) -> Vec<CertificateDer<'static>> {
    match crate::util::files::read_limited(path, crate::util::files::Limit::CONFIG) {
        Ok(bytes) => parse_pem_certs(&bytes),
        Err(_) => Vec::new(),
    }
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

fn verifier(store: RootCertStore, provider: &Arc<CryptoProvider>) -> Arc<WebPkiServerVerifier> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
        .build()
        .expect("a root store with the bundled roots is never empty")
}

/// Verifies against the bundled roots; a chain they reject is tried again with the extra roots
/// added, which are loaded then, once. The union trusts exactly what one store of both would.
pub struct FallbackVerifier {
    provider: Arc<CryptoProvider>,
    bundled: Arc<WebPkiServerVerifier>,
    sources: ExtraRoots,
    extended: OnceLock<Option<Arc<WebPkiServerVerifier>>>,
}

/// rustls asks a verifier for `Debug`; the derived one would print the root stores, and
/// linking that printing for every certificate type costs more than it ever tells.
impl std::fmt::Debug for FallbackVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FallbackVerifier")
            .field("sources", &self.sources)
            .finish_non_exhaustive()
    }
}

impl FallbackVerifier {
    pub fn new(provider: Arc<CryptoProvider>, sources: ExtraRoots) -> Self {
        FallbackVerifier {
            bundled: verifier(root_store(Vec::new()).0, &provider),
            provider,
            sources,
            extended: OnceLock::new(),
        }
    }

    /// The verifier with the extra roots, if there are any (loaded on first use).
    pub fn extended(&self) -> Option<&Arc<WebPkiServerVerifier>> {
        self.extended
            .get_or_init(|| {
                if self.sources.is_empty() {
                    return None;
                }
                let (store, added) = root_store(self.sources.load());
                (added > 0).then(|| verifier(store, &self.provider))
            })
            .as_ref()
    }
}

impl ServerCertVerifier for FallbackVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verify = |v: &WebPkiServerVerifier| {
            v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        };
        match verify(&self.bundled) {
            Err(e) if self.sources.is_empty() => Err(e),
            Err(e) => self.extended().map_or(Err(e), |v| verify(v)),
            ok => ok,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.bundled.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.bundled.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.bundled.supported_verify_schemes()
    }
}

/// The ureq connector that adds TLS to connections for `https://` URLs (with the process's
/// configuration unless given another).
#[derive(Default)]
pub struct TlsConnector {
    config: Option<Arc<ClientConfig>>,
}

/// ureq asks a connector for `Debug`; printing the whole rustls configuration would link a
/// printer for each of its parts.
impl std::fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConnector")
            .field("own_config", &self.config.is_some())
            .finish()
    }
}

impl TlsConnector {
    pub fn with_config(config: Arc<ClientConfig>) -> Self {
        TlsConnector {
            config: Some(config),
        }
    }
}

impl<In: Transport> Connector<In> for TlsConnector {
    type Out = Either<In, TlsTransport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        let host = details.uri.host().unwrap_or("");
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| ureq::Error::Tls("the host is not a valid TLS server name"))?;
        let config = self.config.clone().unwrap_or_else(client_config);
        let mut conn =
            ClientConnection::new(config, name).map_err(|e| ureq::Error::Other(Box::new(e)))?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(details.timeout);
        conn.complete_io(&mut sock)?;
        let buffers = LazyBuffers::new(
            details.config.input_buffer_size(),
            details.config.output_buffer_size(),
        );
        Ok(Some(Either::B(TlsTransport {
            buffers,
            stream: StreamOwned { conn, sock },
        })))
    }
}

/// A connection after the TLS handshake.
pub struct TlsTransport {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl std::fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTransport")
            .field("chained", &self.stream.sock.inner())
            .finish()
    }
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let amount = self.stream.read(input)?;
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls/bundle.pem")
    }

    #[test]
    fn pem_bundle_adds_its_certificates_to_the_webpki_roots() {
        let certs = load_pem_file(&bundle());
        assert_eq!(certs.len(), 2);
        let (store, added) = root_store(certs);
        assert_eq!(added, 2);
        assert_eq!(store.len(), webpki_roots::TLS_SERVER_ROOTS.len() + 2);
    }

    #[test]
    fn directories_and_bad_input_never_fail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(bundle(), dir.path().join("corp.crt")).unwrap();
        std::fs::write(dir.path().join("junk.pem"), "not a certificate").unwrap();
        let sources = ExtraRoots {
            file: None,
            dirs: vec![dir.path().to_path_buf(), dir.path().join("missing")],
        };
        assert_eq!(sources.load().len(), 2);
        assert!(load_pem_file(&dir.path().join("missing.pem")).is_empty());
        assert!(
            parse_pem_certs(b"-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n")
                .is_empty()
        );
    }

    #[test]
    fn each_certificate_is_read_once_however_many_names_lead_to_it() {
        // The shape of /etc/ssl/certs: the bundle, a link per certificate, a hash link to that.
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("share");
        std::fs::create_dir(&store).unwrap();
        let pem = std::fs::read_to_string(bundle()).unwrap();
        let one = pem
            .split_inclusive("-----END CERTIFICATE-----\n")
            .next()
            .unwrap();
        std::fs::write(store.join("corp.crt"), one).unwrap();
        let certs = dir.path().join("certs");
        std::fs::create_dir(&certs).unwrap();
        std::fs::copy(bundle(), certs.join("ca-certificates.crt")).unwrap();
        std::os::unix::fs::symlink(store.join("corp.crt"), certs.join("corp.pem")).unwrap();
        std::os::unix::fs::symlink(certs.join("corp.pem"), certs.join("1a2b3c4d.0")).unwrap();
        let sources = ExtraRoots {
            file: Some(certs.join("ca-certificates.crt")),
            dirs: vec![certs.clone()],
        };
        assert_eq!(sources.load().len(), 2, "two distinct certificates");
    }

    /// Serves one HTTPS request as `localhost` with a certificate from the test corporate CA.
    fn serve_once() -> (u16, std::thread::JoinHandle<()>) {
        use rustls::pki_types::PrivateKeyDer;
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
        let certs = load_pem_file(&dir.join("localhost.pem"));
        let key = PrivateKeyDer::from_pem_file(dir.join("localhost.key")).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = Arc::new(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(certs, key)
                .unwrap(),
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (tcp, _) = listener.accept().unwrap();
            tcp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
            let conn = rustls::ServerConnection::new(config).unwrap();
            let mut tls = StreamOwned::new(conn, tcp);
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") {
                match tls.read(&mut byte) {
                    Ok(1) => request.push(byte[0]),
                    _ => return, // the client refused the certificate
                }
            }
            let _ = tls
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
            let _ = tls.flush();
            tls.conn.send_close_notify();
            let _ = tls.flush();
        });
        (port, server)
    }

    fn get(port: u16, extra: ExtraRoots) -> Result<String, ureq::Error> {
        use ureq::unversioned::resolver::DefaultResolver;
        use ureq::unversioned::transport::TcpConnector;
        let config = ureq::Agent::config_builder()
            .proxy(None)
            .timeout_global(Some(std::time::Duration::from_secs(10)))
            .build();
        let connector =
            ().chain(TcpConnector::default())
                .chain(TlsConnector::with_config(config_with(extra)));
        let agent = ureq::Agent::with_parts(config, connector, DefaultResolver::default());
        let mut resp = agent.get(format!("https://localhost:{port}/")).call()?;
        resp.body_mut().read_to_string()
    }

    #[test]
    fn a_corporate_ca_from_the_environment_is_trusted_in_a_real_handshake() {
        let ca = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls/corp-ca.pem");
        let (port, server) = serve_once();
        let body = get(
            port,
            ExtraRoots {
                file: Some(ca),
                dirs: vec![],
            },
        );
        server.join().unwrap();
        assert_eq!(body.unwrap(), "ok");
        let (port, server) = serve_once();
        let err = get(port, ExtraRoots::default()).unwrap_err();
        server.join().unwrap();
        assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    }

    #[test]
    fn extra_roots_are_read_only_when_the_bundled_ones_fail() {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let none = FallbackVerifier::new(provider.clone(), ExtraRoots::default());
        assert!(none.extended().is_none());
        let missing = FallbackVerifier::new(
            provider.clone(),
            ExtraRoots {
                file: Some("/nonexistent/bundle.pem".into()),
                dirs: vec![],
            },
        );
        assert!(
            missing.extended().is_none(),
            "no extra roots, no second store"
        );
        let corp = FallbackVerifier::new(
            provider,
            ExtraRoots {
                file: Some(bundle()),
                dirs: vec![],
            },
        );
        assert!(corp.extended.get().is_none(), "nothing is read up front");
        assert!(corp.extended().is_some());
    }
}
