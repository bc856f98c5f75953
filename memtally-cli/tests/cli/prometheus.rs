//! `memtally export` and `memtally serve`: the exposition equals `top
//! --format json` on the same recorded tree, the textfile is written
//! atomically, and the HTTP server answers, negotiates and holds up
//! against oversized, slow and body-carrying requests. Every socket is on
//! 127.0.0.1; every wait is bounded.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::peer::connect_from;
use crate::support::{memtally, run, run_json, spawn, Mapping, Server, MIB};
use serde_json::Value;

/// Sample lines keyed by (metric, labels sorted), parsed by prometheus-parse;
/// fails if the parser skipped any sample line.
pub fn parse(text: &str) -> BTreeMap<(String, String), f64> {
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("exposition parses");
    let lines = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).count();
    assert_eq!(scrape.samples.len(), lines, "a sample line was not understood:\n{text}");
    scrape
        .samples
        .into_iter()
        .map(|s| {
            let v = match s.value {
                prometheus_parse::Value::Gauge(v) => v,
                // The counters: serve's own CPU seconds, the OOM kills.
                prometheus_parse::Value::Counter(v) if s.metric.ends_with("_total") => v,
                other => panic!("{}: not a gauge: {other:?}", s.metric),
            };
            let mut labels: Vec<String> =
                s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            labels.sort();
            ((s.metric, labels.join(",")), v)
        })
        .collect()
}

fn fixture(name: &str) -> PathBuf {
    crate::support::repo().join("testdata/fixtures/linux").join(name).join("proc")
}

/// Checks every published process row and the rest against `top --format json`.
fn assert_matches_top(root: &Path, top: usize) {
    let root_s = root.to_str().unwrap();
    let json = run_json(&["--proc-root", root_s, "top", "--format", "json", "--all"]);
    let out = run(&["--proc-root", root_s, "export", "--top", &top.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let samples = parse(&String::from_utf8(out.stdout).unwrap());
    let procs = json["processes"].as_array().unwrap();
    assert!(!procs.is_empty());
    let mut ranked: Vec<&Value> = procs.iter().collect();
    ranked.sort_by_key(|p| std::cmp::Reverse(p["pss"].as_u64()));
    let figures = ["pss", "uss", "rss", "swap", "swap_pss", "private_dirty"];
    let mut rest: BTreeMap<&str, u64> = BTreeMap::new();
    for (i, p) in ranked.iter().enumerate() {
        let labels = format!(
            "comm={},pid={},program={}",
            p["comm"].as_str().unwrap(),
            p["pid"],
            p["program"].as_str().unwrap()
        );
        for f in figures {
            let got = samples.get(&(format!("memtally_process_{f}_bytes"), labels.clone()));
            if i < top {
                assert_eq!(got.copied(), p[f].as_u64().map(|v| v as f64), "{f} of {labels}");
            } else {
                assert!(got.is_none(), "{f} of {labels} is past --top {top}");
                *rest.entry(f).or_default() += p[f].as_u64().unwrap_or(0);
            }
        }
    }
    let single = |m: &str| samples.get(&(m.to_string(), String::new())).copied();
    // The rest of several processes is a sum: only what adds up (model::summable).
    let several = ranked.len().saturating_sub(top) > 1;
    for f in figures {
        let summable = !matches!(f, "rss" | "swap");
        let expected = rest.get(f).filter(|_| summable || !several).map(|&v| v as f64);
        assert_eq!(single(&format!("memtally_other_processes_{f}_bytes")), expected, "rest {f}");
    }
    assert_eq!(single("memtally_other_processes"), Some(ranked.len().saturating_sub(top) as f64));
    assert_eq!(single("memtally_processes_scanned"), Some(procs.len() as f64));
    let machine = &json["machine"];
    for f in [
        "total",
        "available",
        "free",
        "used",
        "buff_cache",
        "processes_pss",
        "kernel",
        "kernel_reclaimable",
        "cache_unmapped",
    ] {
        assert_eq!(
            single(&format!("memtally_machine_{f}_bytes")),
            machine[f].as_u64().map(|v| v as f64),
            "machine {f}"
        );
    }
    assert_eq!(
        single("memtally_machine_unattributed_bytes"),
        machine["unattributed"].as_i64().map(|v| v as f64)
    );
    // The waterfall: one sample per line, the same bytes, adding up to MemTotal.
    if let Some(lines) = machine["lines"].as_array() {
        let mut sum = 0.0;
        for l in lines {
            let labels = format!("group={},line={}", l["group"], l["name"]).replace('"', "");
            let got =
                samples.get(&("memtally_machine_waterfall_bytes".to_string(), labels.clone()));
            assert_eq!(got.copied(), l["bytes"].as_i64().map(|v| v as f64), "{labels}");
            sum += got.unwrap();
        }
        assert_eq!(Some(sum), single("memtally_machine_total_bytes"));
    }
}

#[test]
fn export_equals_top_json_on_recorded_trees() {
    for name in ["python3-mmap", "chromium-browser", "gst-launch-audiotestsrc"] {
        assert_matches_top(&fixture(name), 50);
    }
}

#[test]
fn export_equals_top_json_on_a_fresh_capture_with_the_rest_summed() {
    let a = spawn(Mapping::Anonymous(32 * MIB));
    let b = spawn(Mapping::Shared(8 * MIB, 2));
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let me = std::process::id().to_string();
    let out = run(&["capture", "--tree", &me, "-o", rec.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The test, its two children and their two children: 2 rows, 3 summed.
    assert_matches_top(&rec, 2);
    drop((a, b));
}

#[test]
fn export_textfile_is_written_whole_and_alone() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture("python3-mmap");
    let out = run(&[
        "--proc-root",
        root.to_str().unwrap(),
        "export",
        "--textfile",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    let names: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("memtally.prom")]);
    let text = std::fs::read_to_string(dir.path().join("memtally.prom")).unwrap();
    let s = parse(&text);
    assert_eq!(
        s.get(&(
            "memtally_process_pss_bytes".into(),
            "comm=python3,pid=11364,program=python3".into()
        )),
        Some(&18682880.0)
    );
    let bad = run(&["export", "--textfile", dir.path().join("missing").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(3), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn export_by_program_and_cgroup_add_processes_up() {
    let root = fixture("chromium-browser");
    let r = root.to_str().unwrap();
    let json = run_json(&["--proc-root", r, "top", "--format", "json", "--by", "program"]);
    let row = &json["rows"][0];
    let text =
        String::from_utf8(run(&["--proc-root", r, "export", "--by", "program"]).stdout).unwrap();
    let s = parse(&text);
    let key = format!("program={}", row["key"].as_str().unwrap());
    assert_eq!(
        s.get(&("memtally_program_pss_bytes".into(), key.clone())).copied(),
        row["pss"].as_f64()
    );
    assert_eq!(s.get(&("memtally_program_processes".into(), key)).copied(), Some(1.0));
    assert!(!text.contains("memtally_process_pss_bytes"));
    let text =
        String::from_utf8(run(&["--proc-root", r, "export", "--by", "cgroup"]).stdout).unwrap();
    assert!(parse(&text).keys().any(|(m, _)| m == "memtally_cgroup_pss_bytes"), "{text}");
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(20)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// GET with optional Accept; (status, content type, body).
fn get(addr: SocketAddr, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let mut req = agent().get(format!("http://{addr}{path}"));
    if let Some(a) = accept {
        req = req.header("Accept", a);
    }
    let mut resp = req.call().expect("request answered");
    let ct = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string());
    let body = resp.body_mut().read_to_string().unwrap();
    (resp.status().as_u16(), ct.unwrap_or_default(), body)
}

/// Sends raw bytes, returns the status line the server answers with.
fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The server may answer and close before reading everything.
    let _ = s.write_all(request);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).lines().next().unwrap_or_default().to_string()
}

#[test]
fn serve_answers_paths_methods_and_formats() {
    let root = fixture("python3-mmap");
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let (status, ct, body) = get(srv.addr, "/metrics", None);
    assert_eq!((status, ct.as_str()), (200, "text/plain; version=0.0.4; charset=utf-8"));
    let s = parse(&body);
    assert_eq!(
        s.get(&(
            "memtally_process_pss_bytes".into(),
            "comm=python3,pid=11364,program=python3".into()
        )),
        Some(&18682880.0)
    );
    // What Prometheus 2.x asks for.
    let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let (status, ct, om) = get(srv.addr, "/metrics?x=1", Some(prom));
    assert_eq!(status, 200);
    assert!(ct.starts_with("application/openmetrics-text; version=1.0.0"), "{ct}");
    assert!(om.ends_with("# EOF\n") && om.contains("# UNIT memtally_process_pss_bytes bytes"));
    let (status, ct, page) = get(srv.addr, "/", None);
    assert_eq!((status, ct.as_str()), (200, "text/html; charset=utf-8"));
    assert!(page.contains("<a href=\"/metrics\">"));
    assert_eq!(get(srv.addr, "/nope", None).0, 404);
    assert_eq!(get(srv.addr, "/metrics/", None).0, 404);
    let post = agent().post(format!("http://{}/metrics", srv.addr)).send("x").unwrap();
    assert_eq!(post.status().as_u16(), 405);
    assert_eq!(post.headers().get("allow").unwrap(), "GET, HEAD");
    let head = agent().head(format!("http://{}/metrics", srv.addr)).call().unwrap();
    assert_eq!(head.status().as_u16(), 200);
    // A GET that announces a body is refused without reading it.
    let line =
        raw(srv.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc");
    assert!(line.starts_with("HTTP/1.1 413"), "{line}");
    let line =
        raw(srv.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert!(line.starts_with("HTTP/1.1 413"), "{line}");
    // Malformed requests get an error, and the server goes on.
    let line = raw(srv.addr, b"\x00\x01garbage\r\n\r\n");
    assert!(line.starts_with("HTTP/1.1 400") || line.is_empty(), "{line}");
    assert_eq!(get(srv.addr, "/metrics", None).0, 200);
}

#[test]
fn serve_rejects_oversized_and_too_many_headers() {
    let root = fixture("python3-mmap");
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let mut big = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', 64 * 1024));
    big.extend_from_slice(b"\r\n\r\n");
    let line = raw(srv.addr, &big);
    assert!(line.starts_with("HTTP/1.1 431"), "{line}");
    let mut many = b"GET /metrics HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..200 {
        many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let line = raw(srv.addr, &many);
    assert!(line.starts_with("HTTP/1.1 431"), "{line}");
    // Within the limits is fine.
    let line = raw(srv.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
}

#[test]
fn a_silent_or_slow_client_does_not_block_a_scrape() {
    let me = std::process::id().to_string();
    let srv = Server::start(&["--listen", "127.0.0.1:0", "--pid", &me]);
    // Clients that connect and send nothing, or half a request line (from
    // other addresses than the scrape's: one address holds at most 4).
    let from = |d| std::net::Ipv4Addr::new(127, 0, 0, d);
    let silent: Vec<TcpStream> =
        (0..8).map(|i| connect_from(from(10 + i / 4), srv.addr).unwrap()).collect();
    let mut half = connect_from(from(20), srv.addr).unwrap();
    half.write_all(b"GET /metr").unwrap();
    let t = Instant::now();
    let (status, _, body) = get(srv.addr, "/metrics", None);
    let took = t.elapsed();
    assert_eq!(status, 200);
    assert!(body.contains(&format!("pid=\"{me}\"")));
    // Well under the 5 s the stalled clients are given to send their head.
    assert!(took < Duration::from_secs(3), "scrape took {took:?} next to stalled clients");
    // And the stalled connections are closed by the server, not left open.
    half.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let t = Instant::now();
    let mut buf = Vec::new();
    let _ = half.read_to_end(&mut buf);
    assert!(t.elapsed() < Duration::from_secs(14), "a stalled client was never closed");
    drop(silent);
    // No process was started by the server (it never runs a shell).
    let task_dir = format!("/proc/{}/task", srv.pid());
    for t in std::fs::read_dir(task_dir).unwrap() {
        let kids = std::fs::read_to_string(t.unwrap().path().join("children")).unwrap_or_default();
        assert!(kids.trim().is_empty(), "serve started processes: {kids}");
    }
}

#[test]
fn serve_reuses_a_recent_scan_and_rescans_after_min_interval() {
    let me = std::process::id().to_string();
    let stamp = |addr| {
        let (_, _, body) = get(addr, "/metrics", None);
        parse(&body)[&("memtally_scan_timestamp_seconds".to_string(), String::new())]
    };
    let srv = Server::start(&["--listen", "127.0.0.1:0", "--pid", &me, "--min-interval", "1h"]);
    let first = stamp(srv.addr);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(stamp(srv.addr), first);
    drop(srv);
    let srv = Server::start(&["--listen", "127.0.0.1:0", "--pid", &me, "--min-interval", "1s"]);
    let first = stamp(srv.addr);
    std::thread::sleep(Duration::from_millis(1100));
    assert!(stamp(srv.addr) > first);
}

#[test]
fn serve_listens_on_loopback_by_default() {
    // (The parsed defaults are checked in the binary's unit tests; here
    // the running server binds exactly that, or says the port is taken.)
    let me = std::process::id().to_string();
    let mut child = memtally()
        .args(["serve", "--pid", &me])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    if line.is_empty() {
        let _ = child.wait();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(err.contains("127.0.0.1:9464") && err.contains("in use"), "{err}");
    } else {
        assert_eq!(line.trim(), "memtally: serving http://127.0.0.1:9464/metrics");
        // /proc/net/tcp: the listening socket (state 0A) is on 127.0.0.1:9464, not 0.0.0.0.
        let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let listening: Vec<&str> = tcp
            .lines()
            .filter(|l| l.split_whitespace().nth(3) == Some("0A"))
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter(|a| a.ends_with(":24F8"))
            .collect();
        assert_eq!(listening, vec!["0100007F:24F8"]);
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// 64 sockets that begin a request head and never finish it hold every
/// connection slot: a real scrape beyond them must get an answer (503,
/// or 200 once a slot frees), never a connection closed without a word.
/// (Sockets that send nothing at all take no slot: `serve_load`.)
#[test]
fn scrapes_beyond_the_connection_cap_get_503_not_silence() {
    let root = fixture("python3-mmap");
    let server = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(b"GET /metr").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (mut busy, mut served) = (0, 0);
    for i in 0..20 {
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        if answer.starts_with("HTTP/1.1 503") {
            assert!(answer.contains("retry-after"), "{answer}");
            busy += 1;
        } else {
            assert!(answer.starts_with("HTTP/1.1 200"), "scrape {i}: {answer:?}");
            served += 1;
        }
    }
    drop(idle);
    eprintln!("beyond 64 idle sockets: {busy} scrapes got 503, {served} got 200, none silence");
    assert!(busy > 0, "the cap was never reached");
}

/// Listening on every address (bound here, never connected to from
/// outside) warns on stderr; loopback does not.
#[test]
fn serve_beyond_loopback_warns_on_stderr() {
    for (listen, warns) in [("0.0.0.0:0", true), ("127.0.0.1:0", false)] {
        let mut child = memtally()
            .args(["--proc-root", fixture("python3-mmap").to_str().unwrap()])
            .args(["serve", "--listen", listen])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert!(line.starts_with("memtally: serving"), "{line}");
        std::thread::sleep(Duration::from_millis(200));
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.contains("warning: listening on"), warns, "{listen}: {err}");
    }
}
