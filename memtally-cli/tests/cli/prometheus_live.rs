//! Against the real thing: Debian's `prometheus` scrapes a `memtally
//! serve` this test started, and its HTTP API reports the PSS of a child
//! with a known allocation; `promtool check metrics` lints the text
//! format. `.ci/run` installs the package; without it these tests fail
//! under CI and print a skip only when `CI` is unset. Every socket is on
//! 127.0.0.1, every wait is bounded.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{memtally, Killed, Server, MIB};

/// The tool's path, or `None` (with a printed skip) when it is missing and
/// this is not CI.
fn tool(name: &str) -> Option<&'static str> {
    let path = match name {
        "prometheus" => "/usr/bin/prometheus",
        _ => "/usr/bin/promtool",
    };
    if Path::new(path).exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{path} is missing: .ci/run installs Debian's prometheus package");
    }
    eprintln!("skipped: {path} is not installed (apt-get install prometheus); CI installs it");
    None
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// The value of an instant query's single result, if it has one yet.
fn query(prom: SocketAddr, q: &str) -> Option<f64> {
    let mut resp =
        agent().get(format!("http://{prom}/api/v1/query")).query("query", q).call().ok()?;
    let v: serde_json::Value =
        serde_json::from_str(&resp.body_mut().read_to_string().ok()?).ok()?;
    assert_eq!(v["status"], "success", "{v}");
    let result = v["data"]["result"].as_array()?;
    assert!(result.len() <= 1, "{q}: {v}");
    result.first()?["value"][1].as_str()?.parse().ok()
}

fn pss_now(pid: u32) -> u64 {
    crate::support::rollup(Path::new(&format!("/proc/{pid}/smaps_rollup")))["pss"]
}

#[test]
fn prometheus_scrapes_the_pss_of_a_known_child() {
    let Some(prometheus) = tool("prometheus") else { return };
    // A process of its own (exec'd): a fork of this harness would share
    // its heap copy-on-write, and its PSS would move as other tests write.
    let child = crate::support::lone::lone(32 * MIB);
    let child_pid = child.child.0.id();
    // The whole tree of this test: the harness, the child, memtally serve
    // and prometheus itself, with the default --top and --min-interval.
    let me = std::process::id().to_string();
    let serve = Server::start(&["--listen", "127.0.0.1:0", "--tree", &me]);
    let serve_addr = serve.addr;

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::File::create(&config)
        .unwrap()
        .write_all(
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: memtally\n    static_configs:\n      - targets: ['{serve_addr}']\n"
            )
            .as_bytes(),
        )
        .unwrap();
    let prom_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let _prom = Killed(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address={prom_addr}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("prometheus starts"),
    );

    // Wait (bounded) for a scrape that has the child, sampling the child's
    // own rollup meanwhile: the scrape happened inside this window.
    let q = format!("memtally_process_pss_bytes{{job=\"memtally\",pid=\"{}\"}}", child_pid);
    let (mut lo, mut hi) = (pss_now(child_pid), pss_now(child_pid));
    let deadline = Instant::now() + Duration::from_secs(60);
    let got = loop {
        if let Some(v) = query(prom_addr, &q) {
            break v;
        }
        let now = pss_now(child_pid);
        (lo, hi) = (lo.min(now), hi.max(now));
        if Instant::now() > deadline {
            let log =
                std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default();
            panic!("no scrape of {q} within 60 s; prometheus log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    let now = pss_now(child_pid);
    (lo, hi) = (lo.min(now), hi.max(now));
    // The scraped value lies within what the rollup showed over the
    // window, give or take what moves between two of its samples 250 ms
    // apart: the C library's pages the child shares with memtally and
    // prometheus (a clean CI run saw the scrape 1 KiB above the highest).
    const SLACK: u64 = 256 << 10;
    let (lo, hi) = (lo.saturating_sub(SLACK), hi + SLACK);
    assert!(
        (lo as f64) <= got && got <= hi as f64,
        "scraped {got} outside the rollup's {lo}..={hi} over the window (with {SLACK} bytes of slack)"
    );
    assert!(got >= (32 * MIB) as f64, "{got} < the 32 MiB the child touched");
    // The scrape itself is healthy and the collector's own figures arrived.
    assert_eq!(query(prom_addr, "up{job=\"memtally\"}"), Some(1.0));
    assert!(query(prom_addr, "memtally_processes_scanned{job=\"memtally\"}").unwrap() >= 3.0);
    let scraped = query(prom_addr, "scrape_samples_scraped{job=\"memtally\"}").unwrap();
    assert!(scraped >= 20.0, "{scraped} samples");
    eprintln!("prometheus scraped pss {got} for pid {}; rollup {lo}..={hi}", child_pid);
}

#[test]
fn promtool_accepts_the_text_format() {
    let Some(promtool) = tool("promtool") else { return };
    // A recorded tree whose process names need escaping, and the live machine.
    let src = crate::support::repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let dir = tempfile::tempdir().unwrap();
    let pid_dir = dir.path().join("11364");
    std::fs::create_dir_all(&pid_dir).unwrap();
    for f in std::fs::read_dir(src.join("11364")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), pid_dir.join(f.file_name())).unwrap();
    }
    std::fs::copy(src.join("meminfo"), dir.path().join("meminfo")).unwrap();
    std::fs::write(pid_dir.join("comm"), "we\"ird\\ name\n").unwrap();
    let status = std::fs::read_to_string(pid_dir.join("status")).unwrap();
    // status escapes a backslash in the name as the kernel does (`\\`).
    let status = status.replace("Name:\tpython3\n", "Name:\twe\"ird\\\\ name\n");
    std::fs::write(pid_dir.join("status"), status).unwrap();
    std::fs::write(pid_dir.join("cmdline"), b"/usr/bin/a=\"b\"\\c\0--x\0").unwrap();
    let root = dir.path().to_str().unwrap();
    for args in [
        vec!["--proc-root", root, "export"],
        vec!["export", "--top", "20"],
        vec!["export", "--by", "cgroup"],
    ] {
        let out = memtally().args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let mut check = Command::new(promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        check.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        let res = check.wait_with_output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&res.stdout),
            String::from_utf8_lossy(&res.stderr)
        );
        assert!(res.status.success() && said.trim().is_empty(), "promtool on {args:?}: {said}");
        if args[0] == "--proc-root" {
            assert!(
                text.contains(r#"{pid="11364",comm="we\"ird\\ name",program="a=\"b\"\\c"}"#),
                "{text}"
            );
        }
    }
}
