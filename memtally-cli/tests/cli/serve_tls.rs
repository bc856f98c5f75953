//! `serve --web.config.file` (issue 38.3): TLS and basic auth in the
//! exporter-toolkit format, against real clients: a self-signed
//! certificate made by the openssl command, curl verifying it, users
//! hashed with bcrypt. Skips (with the reason printed) where curl or
//! openssl is missing.

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{memtally, Killed};

fn tools() -> bool {
    for tool in ["curl", "openssl"] {
        if Command::new(tool).arg("--version").output().is_err()
            && Command::new(tool).arg("version").output().is_err()
        {
            eprintln!("skipped: {tool} is not installed");
            return false;
        }
    }
    true
}

/// A self-signed certificate for 127.0.0.1 and its key, in `dir`.
fn certificate(dir: &Path) {
    let out = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"])
        .args(["-nodes", "-days", "2", "-subj", "/CN=memtally-test"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .output()
        .unwrap();
    assert!(out.status.success(), "openssl: {}", String::from_utf8_lossy(&out.stderr));
}

/// `memtally serve` with `args`, and the URL it says it serves.
fn start(args: &[&str]) -> (Killed, String) {
    let mut child = memtally()
        .arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("memtally: serving ").expect(&line).to_string();
    (Killed(child), url)
}

/// curl's status code and body for `url`.
fn curl(args: &[&str], url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "-w", "\n%{http_code}"])
        .args(args)
        .arg(url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.to_string(), body.to_string())
}

#[test]
fn tls_and_basic_auth_serve_the_user_who_knows_the_password_only() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    certificate(dir.path());
    let hash = bcrypt::hash("right horse", 6).unwrap();
    let config = dir.path().join("web.yml");
    // Relative paths: from the config file's directory.
    std::fs::write(
        &config,
        format!("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  prometheus: {hash}\n"),
    )
    .unwrap();
    let (_serve, url) = start(&["--web.config.file", config.to_str().unwrap()]);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let cacert = dir.path().join("cert.pem");
    let tls = ["--cacert", cacert.to_str().unwrap()];

    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = tls.to_vec();
        a.extend_from_slice(extra);
        curl(&a, &url)
    };
    let (code, body) = with(&["-u", "prometheus:right horse", "--compressed"]);
    assert_eq!(code, "200", "{body}");
    assert!(body.contains("memtally_build_info{"), "{body}");
    // Again: the checked credentials are remembered.
    assert_eq!(with(&["-u", "prometheus:right horse"]).0, "200");
    for wrong in [&["-u", "prometheus:wrong"][..], &["-u", "other:right horse"], &[]] {
        let (code, body) = with(wrong);
        assert_eq!(code, "401", "{wrong:?}: {body}");
    }
    let head = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-D", "-"])
        .args(tls)
        .arg(&url)
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&head.stdout).to_ascii_lowercase();
    assert!(head.contains("www-authenticate: basic"), "{head}");
    // Plain HTTP to the TLS port gets no answer; TLS unverified by the
    // client's trust store fails: the certificate is the one given.
    let plain = url.replace("https://", "http://");
    assert_ne!(curl(&["-u", "prometheus:right horse"], &plain).0, "200");
    assert_eq!(curl(&["-u", "prometheus:right horse"], &url).0, "000");
}

#[test]
fn basic_auth_without_tls_and_a_bad_config_refused_at_start() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hash = bcrypt::hash("pw", 4).unwrap();
    let config = dir.path().join("web.yml");
    std::fs::write(&config, format!("basic_auth_users:\n  scraper: \"{hash}\"\n")).unwrap();
    let (_serve, url) = start(&["--web.config.file", config.to_str().unwrap()]);
    assert!(url.starts_with("http://"), "{url}");
    assert_eq!(curl(&["-u", "scraper:pw"], &url).0, "200");
    assert_eq!(curl(&[], &url).0, "401");
    // The index page too: nothing is answered without the password.
    assert_eq!(curl(&[], &url.replace("/metrics", "/")).0, "401");

    for (text, says) in [
        ("basic_auth_users:\n  scraper: hunter2\n", "not a bcrypt hash"),
        ("tls_server_config:\n  cert_file: none.pem\n  key_file: none.pem\n", "none.pem"),
        ("http_server_config:\n  http2: false\n", "not supported"),
    ] {
        std::fs::write(&config, text).unwrap();
        let out = memtally()
            .args(["serve", "--listen", "127.0.0.1:0", "--web.config.file"])
            .arg(&config)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text}");
        assert_ne!(out.status.code(), Some(101), "no panic: {err}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{text}: {err}");
        assert!(out.stdout.is_empty(), "nothing served: {}", String::from_utf8_lossy(&out.stdout));
    }
}
