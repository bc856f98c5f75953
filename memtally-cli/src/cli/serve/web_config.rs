//! `--web.config.file`: TLS and basic auth in the format of the Prometheus
//! exporter-toolkit, so one file serves node_exporter and memtally alike:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: /etc/memtally/cert.pem
//!   key_file: /etc/memtally/key.pem
//! basic_auth_users:
//!   prometheus: $2y$10$...   # bcrypt, as `htpasswd -nBC 10 prometheus` writes
//! ```
//!
//! Read once at start: a key this file does not know (the toolkit's
//! `client_auth_type`, `http_server_config`, ...) is refused in one line
//! rather than silently ignored, so a file that asks for more than memtally
//! does never serves with less. TLS is rustls, the hashes are checked by
//! bcrypt; memtally writes no crypto of its own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use sha2::{Digest, Sha256};
use yaml_rust2::{Yaml, YamlLoader};

use memtally_core::{Error, Result};

/// Largest web config, certificate or key file read, bytes.
const MAX_FILE: u64 = 1 << 20;

/// What `--web.config.file` asks for.
pub struct WebConfig {
    /// TLS on every connection, when `tls_server_config` is given.
    pub tls: Option<tls::Tls>,
    /// Who may scrape, when `basic_auth_users` is given.
    pub users: Option<Users>,
}

/// `basic_auth_users`: user name → bcrypt hash, and the credentials
/// already checked (a SHA-256 of user and password: a bcrypt check costs
/// tens of milliseconds, and Prometheus sends the same ones every scrape).
pub struct Users {
    hashes: HashMap<String, String>,
    good: Mutex<Vec<[u8; 32]>>,
}

/// How a request's credentials fare.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Checked before, or just now: serve it.
    Allowed,
    /// Missing, malformed, an unknown user or a wrong password: 401.
    Refused,
}

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::Parse { path: path.into(), message: message.into() }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE + 1).read_to_end(&mut out))
        .map_err(|e| Error::io(path, e))?;
    if out.len() as u64 > MAX_FILE {
        return Err(bad(path, "longer than 1 MiB: not a web config, certificate or key"));
    }
    Ok(out)
}

impl WebConfig {
    /// Reads and checks the file at `path`; relative certificate and key
    /// paths are taken from the file's directory, as the toolkit does.
    pub fn load(path: &Path) -> Result<WebConfig> {
        let text = String::from_utf8(read(path)?).map_err(|_| bad(path, "not UTF-8 text"))?;
        let docs = YamlLoader::load_from_str(&text).map_err(|e| bad(path, e.to_string()))?;
        let doc = match docs.as_slice() {
            [] => Yaml::Hash(Default::default()),
            [one] => one.clone(),
            _ => return Err(bad(path, "holds several YAML documents; give one")),
        };
        let Yaml::Hash(top) = doc else {
            return Err(bad(path, "is not a mapping of tls_server_config and basic_auth_users"));
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let (mut tls, mut users) = (None, None);
        for (k, v) in &top {
            match k.as_str() {
                Some("tls_server_config") => tls = Some(tls_config(path, &dir, v)?),
                Some("basic_auth_users") => users = Some(Users::from_yaml(path, v)?),
                Some(other) => {
                    return Err(bad(
                        path,
                        format!("{other}: not supported here (memtally reads tls_server_config cert_file/key_file and basic_auth_users)"),
                    ))
                }
                None => return Err(bad(path, "a key that is not a string")),
            }
        }
        Ok(WebConfig { tls, users })
    }
}

fn tls_config(path: &Path, dir: &Path, v: &Yaml) -> Result<tls::Tls> {
    let Yaml::Hash(h) = v else {
        return Err(bad(path, "tls_server_config is not a mapping of cert_file and key_file"));
    };
    let (mut cert, mut key) = (None, None);
    for (k, v) in h {
        let file = || -> Result<PathBuf> {
            let s = v.as_str().ok_or_else(|| bad(path, "cert_file and key_file are paths"))?;
            Ok(dir.join(s))
        };
        match k.as_str() {
            Some("cert_file") => cert = Some(file()?),
            Some("key_file") => key = Some(file()?),
            Some(other) => {
                return Err(bad(
                    path,
                    format!("tls_server_config: {other}: not supported here (memtally reads cert_file and key_file)"),
                ))
            }
            None => return Err(bad(path, "tls_server_config: a key that is not a string")),
        }
    }
    let (Some(cert), Some(key)) = (cert, key) else {
        return Err(bad(path, "tls_server_config needs both cert_file and key_file"));
    };
    tls::acceptor(path, &cert, &key)
}

/// TLS: rustls on Linux; elsewhere none (ring's C build is not made for
/// macOS from here), and a config asking for it is refused.
pub mod tls {
    #[cfg(target_os = "linux")]
    pub use linux::*;
    #[cfg(not(target_os = "linux"))]
    pub use other::*;

    #[cfg(target_os = "linux")]
    mod linux {
        use std::path::Path;
        use std::sync::Arc;

        use tokio_rustls::rustls;
        use tokio_rustls::rustls::pki_types::pem::PemObject;
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

        use super::super::{bad, read};
        use memtally_core::Result;

        pub type Tls = tokio_rustls::TlsAcceptor;
        pub type TlsStream = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;

        /// The TLS handshake of a new connection.
        pub async fn accept(
            tls: &Tls,
            stream: tokio::net::TcpStream,
        ) -> std::io::Result<TlsStream> {
            tls.accept(stream).await
        }

        /// A TLS server of the certificate chain in `cert` and the key in `key` (PEM).
        pub fn acceptor(_config: &Path, cert: &Path, key: &Path) -> Result<Tls> {
            let chain = CertificateDer::pem_slice_iter(&read(cert)?)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| bad(cert, format!("not a PEM certificate: {e}")))?;
            if chain.is_empty() {
                return Err(bad(cert, "holds no PEM certificate"));
            }
            let key_der = PrivateKeyDer::from_pem_slice(&read(key)?)
                .map_err(|e| bad(key, format!("not a PEM private key: {e}")))?;
            // ring: rustls 0.23.48 marks its provider deprecated for want of
            // post-quantum key exchange, which aws-lc-rs has; aws-lc-rs is a
            // large C build (and a cmake step on some targets). TLS 1.3 and
            // 1.2 with ring's suites are what exporter-toolkit offers too;
            // move to aws-lc-rs when the static (musl) build takes it.
            #[allow(deprecated)]
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key_der))
                .map_err(|e| {
                    bad(key, format!("the certificate and key do not make a TLS server: {e}"))
                })?;
            Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
        }
    }

    #[cfg(not(target_os = "linux"))]
    mod other {
        use std::path::Path;

        use super::super::bad;
        use memtally_core::Result;

        /// No TLS on this system: no value of it exists.
        #[derive(Clone)]
        pub enum Tls {}
        pub type TlsStream = tokio::net::TcpStream;

        pub async fn accept(tls: &Tls, _: tokio::net::TcpStream) -> std::io::Result<TlsStream> {
            match *tls {}
        }

        pub fn acceptor(config: &Path, _: &Path, _: &Path) -> Result<Tls> {
            Err(bad(config, "tls_server_config: TLS is built on Linux only"))
        }
    }
}

impl Users {
    fn from_yaml(path: &Path, v: &Yaml) -> Result<Users> {
        let Yaml::Hash(h) = v else {
            return Err(bad(path, "basic_auth_users is not a mapping of user name to bcrypt hash"));
        };
        let mut hashes = HashMap::new();
        for (k, v) in h {
            let (Some(user), Some(hash)) = (k.as_str(), v.as_str()) else {
                return Err(bad(path, "basic_auth_users: user names and hashes are strings"));
            };
            // Refused now, not at the first scrape: a plain password or a
            // hash of another kind would lock every scraper out.
            if hash.parse::<bcrypt::HashParts>().is_err() {
                return Err(bad(
                    path,
                    format!("basic_auth_users: {user}: not a bcrypt hash ($2y$...)"),
                ));
            }
            hashes.insert(user.to_string(), hash.to_string());
        }
        Ok(Users { hashes, good: Mutex::new(Vec::new()) })
    }

    /// Checks an `Authorization` header value without bcrypt: `None` when
    /// only a bcrypt check can tell (credentials of a known user not seen
    /// before).
    pub fn check_known(&self, authorization: Option<&[u8]>) -> Option<Verdict> {
        match self.parse(authorization) {
            None => Some(Verdict::Refused),
            Some((_, _, digest)) => {
                let good = self.good.lock().unwrap_or_else(PoisonError::into_inner);
                good.contains(&digest).then_some(Verdict::Allowed)
            }
        }
    }

    /// The user's hash, the password and their digest, when the header
    /// names a known user in the Basic scheme.
    fn parse(&self, authorization: Option<&[u8]>) -> Option<(&str, Vec<u8>, [u8; 32])> {
        use base64::Engine;
        let encoded = authorization
            .and_then(|a| std::str::from_utf8(a).ok())
            .and_then(|a| a.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
            .map(|(_, rest)| rest.trim())?;
        let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
        let colon = decoded.iter().position(|&b| b == b':')?;
        let (user, password) = (&decoded[..colon], &decoded[colon + 1..]);
        let hash = std::str::from_utf8(user).ok().and_then(|u| self.hashes.get(u))?;
        let digest: [u8; 32] = Sha256::new()
            .chain_update(hash.as_bytes())
            .chain_update([0])
            .chain_update(password)
            .finalize()
            .into();
        Some((hash.as_str(), password.to_vec(), digest))
    }

    /// Checks an `Authorization` header value (blocking: bcrypt takes tens
    /// of milliseconds for credentials not seen before).
    pub fn check(&self, authorization: Option<&[u8]>) -> Verdict {
        let Some((hash, password, digest)) = self.parse(authorization) else {
            return Verdict::Refused;
        };
        let good = || self.good.lock().unwrap_or_else(PoisonError::into_inner);
        if good().contains(&digest) {
            return Verdict::Allowed;
        }
        if bcrypt::verify(password, hash).unwrap_or(false) {
            // One entry per user at most: only right passwords get in.
            let mut g = good();
            if g.len() < self.hashes.len() * 2 {
                g.push(digest);
            }
            return Verdict::Allowed;
        }
        Verdict::Refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn basic(user: &str, password: &str) -> Vec<u8> {
        let b = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        format!("Basic {b}").into_bytes()
    }

    #[test]
    fn users_are_checked_by_their_bcrypt_hash() {
        let dir = tempfile::tempdir().unwrap();
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let p = file(dir.path(), "web.yml", &format!("basic_auth_users:\n  prom: '{hash}'\n"));
        let c = WebConfig::load(&p).unwrap();
        assert!(c.tls.is_none());
        let u = c.users.unwrap();
        assert_eq!(u.check(Some(&basic("prom", "s3cret"))), Verdict::Allowed);
        // Again, from the cache of checked credentials.
        assert_eq!(u.check(Some(&basic("prom", "s3cret"))), Verdict::Allowed);
        assert_eq!(u.check(Some(&basic("prom", "wrong"))), Verdict::Refused);
        assert_eq!(u.check(Some(&basic("other", "s3cret"))), Verdict::Refused);
        assert_eq!(u.check(Some(b"Bearer abc")), Verdict::Refused);
        assert_eq!(u.check(Some(b"Basic !!!")), Verdict::Refused);
        assert_eq!(u.check(None), Verdict::Refused);
        assert_eq!(u.good.lock().unwrap().len(), 1);
    }

    #[test]
    fn what_the_file_cannot_give_is_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        for (text, says) in [
            ("basic_auth_users:\n  prom: plain\n", "not a bcrypt hash"),
            ("http_server_config:\n  http2: true\n", "http_server_config: not supported"),
            ("tls_server_config:\n  cert_file: c.pem\n", "needs both cert_file and key_file"),
            ("tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  client_auth_type: RequireAndVerifyClientCert\n", "client_auth_type: not supported"),
            ("- a\n- b\n", "is not a mapping"),
            ("tls_server_config:\n  cert_file: nowhere.pem\n  key_file: nowhere.pem\n", "nowhere.pem"),
            ("{", "web.yml"),
        ] {
            let p = file(dir.path(), "web.yml", text);
            let e = WebConfig::load(&p).err().expect(text).to_string();
            assert!(e.contains(says), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // An empty file asks for nothing.
        let p = file(dir.path(), "web.yml", "");
        let c = WebConfig::load(&p).unwrap();
        assert!(c.tls.is_none() && c.users.is_none());
    }
}
