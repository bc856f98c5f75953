//! The exporter conventions (issue 38.3) against real clients: curl asks
//! for gzip as Prometheus does and gets it, the body unzips to the plain
//! answer's figures; `memtally_build_info` and the exporter's own
//! `process_*` figures are there, and they are serve's own process.

use std::process::Command;

use crate::support::Server;

/// curl's answer to `args` (headers on stdout with `-D -`).
fn curl(args: &[&str]) -> Vec<u8> {
    let out = Command::new("curl").args(["-sS", "--max-time", "10"]).args(args).output().unwrap();
    assert!(out.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn curl_present() -> bool {
    let found = Command::new("curl").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: curl is not installed");
    }
    found
}

/// The names of the samples of a text exposition (labels cut off).
fn names(text: &str) -> Vec<String> {
    let mut n: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
        .collect();
    n.dedup();
    n
}

#[test]
fn serve_answers_gzip_to_those_who_ask_and_publishes_build_and_process_figures() {
    if !curl_present() {
        return;
    }
    let serve = Server::start(&["--listen", "127.0.0.1:0", "--min-interval", "1m"]);
    let url = format!("http://{}/metrics", serve.addr);

    let plain = String::from_utf8(curl(&[&url])).unwrap();
    let head = String::from_utf8(curl(&[
        "-D",
        "-",
        "-o",
        "/dev/null",
        "-H",
        "Accept-Encoding: gzip",
        &url,
    ]))
    .unwrap()
    .to_ascii_lowercase();
    assert!(head.contains("content-encoding: gzip\r\n"), "{head}");
    assert!(head.contains("vary: accept-encoding\r\n"), "{head}");
    let zipped = curl(&["-H", "Accept-Encoding: gzip", &url]);
    assert_eq!(&zipped[..2], b"\x1f\x8b", "a gzip stream");
    assert!(zipped.len() * 4 < plain.len(), "{} gzipped vs {} plain", zipped.len(), plain.len());
    // curl unzips it: the same scan (--min-interval 1m), byte for byte.
    let unzipped = String::from_utf8(curl(&["--compressed", &url])).unwrap();
    assert_eq!(unzipped, plain);
    // No Accept-Encoding: plain, no content-encoding.
    let head = String::from_utf8(curl(&["-D", "-", "-o", "/dev/null", &url]))
        .unwrap()
        .to_ascii_lowercase();
    assert!(!head.contains("content-encoding"), "{head}");

    // The revision is the commit `--version` names (built in this checkout).
    let version_line = crate::support::run(&["--version"]).stdout;
    let version_line = String::from_utf8(version_line).unwrap();
    let commit = version_line.trim().rsplit_once('(').map(|(_, c)| c.trim_end_matches(')'));
    let commit = commit.expect("--version names the commit in a git checkout");
    let version = env!("CARGO_PKG_VERSION");
    let info = format!("memtally_build_info{{version=\"{version}\",revision=\"{commit}\"}} 1");
    assert!(plain.contains(&info), "{info} in {plain}");
    let names = names(&plain);
    for name in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_virtual_memory_bytes",
        "process_open_fds",
        "process_max_fds",
        "process_start_time_seconds",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
    }
    let value = |name: &str| -> f64 {
        plain
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("{name}"))
    };
    // serve's own: its resident bytes are within its VmRSS now, give or take.
    let status = std::fs::read_to_string(format!("/proc/{}/status", serve.pid())).unwrap();
    let vmrss_kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap();
    let rss = value("process_resident_memory_bytes");
    assert!(rss > 1e6 && (rss - vmrss_kb * 1024.0).abs() < 16e6, "{rss} vs VmRSS {vmrss_kb} kB");
    let fds = std::fs::read_dir(format!("/proc/{}/fd", serve.pid())).unwrap().count() as f64;
    assert!((value("process_open_fds") - fds).abs() <= 4.0, "{fds}");
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let started = value("process_start_time_seconds");
    assert!(started <= now && now - started < 120.0, "{started} vs {now}");
    assert!(value("process_cpu_seconds_total") > 0.0);
}

#[test]
fn export_publishes_the_build_but_not_a_process_that_is_gone() {
    let run = crate::support::memtally()
        .args(["export", "--pid", &std::process::id().to_string()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(text.contains("memtally_build_info{version=\""), "{text}");
    assert!(!text.contains("process_cpu_seconds_total"), "{text}");
}
