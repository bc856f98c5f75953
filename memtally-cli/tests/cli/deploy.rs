//! What `deploy/` ships works with this build of memtally:
//! - the Grafana dashboard is importable JSON, and every metric its
//!   queries use is one `memtally serve` really exposes (scraped from a
//!   server on the live /proc, for the machine picture, and one on the
//!   recorded GPU machine, for the GPU series); promtool parses every
//!   query where it is installed (CI installs it);
//! - the Kubernetes DaemonSet parses as YAML, its container's arguments
//!   are accepted by `memtally serve` (a misspelled one exits 2), and run
//!   as written against a host /proc seen through another path, as the
//!   pod sees the node's, they serve live figures; the node's cgroup tree
//!   is mounted read-only where `--cgroup-root` reads it (cgroup_ns.rs
//!   runs the arguments for the cgroup series the rules read).
//!
//! Every socket is on 127.0.0.1; every wait is bounded.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use crate::support::{memtally, repo, spawn, Mapping, Server, MIB};

pub(crate) fn scrape(addr: SocketAddr) -> String {
    let agent: ureq::Agent =
        ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(30))).build().into();
    let mut resp = agent.get(format!("http://{addr}/metrics")).call().expect("/metrics answers");
    resp.body_mut().read_to_string().unwrap()
}

/// The metric names of a text exposition (every sample line understood).
pub(crate) fn exposed(text: &str) -> BTreeSet<String> {
    crate::prometheus::parse(text).into_keys().map(|(name, _)| name).collect()
}

/// Every `expr` in the dashboard (panels, rows, any depth) and the
/// template variables' queries.
pub(crate) fn queries(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr" | "definition", Value::String(s)) => out.push(s.clone()),
                    _ => queries(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| queries(v, out)),
        _ => {}
    }
}

/// The metrics an expression reads from the exporter itself: a recorded
/// series (`level:memtally_figure:operation`, from deploy/prometheus/) is
/// not one; prom_rules.rs checks those against the recording rules.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"[a-zA-Z_:][a-zA-Z0-9_:]*").unwrap();
    re.find_iter(expr)
        .map(|m| m.as_str())
        .filter(|s| s.starts_with("memtally_") && !s.contains(':'))
        .map(str::to_string)
        .collect()
}

pub(crate) fn dashboard() -> Value {
    let path = repo().join("deploy/grafana/memtally.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("the dashboard is JSON")
}

#[test]
fn dashboard_is_importable_and_uses_only_metrics_that_serve_exposes() {
    let d = dashboard();
    assert!(d["schemaVersion"].as_u64().unwrap() >= 36, "a current dashboard schema");
    assert_eq!(d["__inputs"][0]["name"], "DS_PROMETHEUS", "import asks for the data source");
    assert_eq!(d["__inputs"][0]["pluginId"], "prometheus");
    let panels = d["panels"].as_array().unwrap();
    let mut ids = BTreeSet::new();
    for p in panels {
        assert!(ids.insert(p["id"].as_u64().unwrap()), "panel ids are unique: {}", p["id"]);
        assert!(p["gridPos"]["w"].as_u64().unwrap() > 0, "{} has a place", p["title"]);
        if p["type"] != "row" {
            assert_eq!(p["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
            let targets = p["targets"].as_array().expect("a panel has queries");
            assert!(!targets.is_empty());
            for t in targets {
                assert_eq!(t["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
            }
        }
    }

    let mut exprs = Vec::new();
    queries(&d, &mut exprs);
    let used: BTreeSet<String> = exprs.iter().flat_map(|e| metric_names(e)).collect();
    // The four views the dashboard is for.
    for want in [
        "memtally_process_pss_bytes",
        "memtally_machine_kernel_bytes",
        "memtally_process_gpu_resident_bytes",
    ] {
        assert!(used.contains(want), "the dashboard shows {want}: {used:?}");
    }
    assert!(exprs.iter().any(|e| e.contains("deriv(memtally_process_pss_bytes")), "growth");

    // The live machine: the machine picture and the rest past --top.
    let live = Server::start(&["--listen", "127.0.0.1:0", "--top", "3", "--min-interval", "1s"]);
    let mut served = exposed(&scrape(live.addr));
    // The recorded GPU machine: per-process and other processes' GPU series.
    let gpu = repo().join("testdata/fixtures/gpu/machine");
    let gpu_args = ["--proc-root", gpu.to_str().unwrap(), "--listen", "127.0.0.1:0", "--top", "2"];
    let gpu_server = Server::start(&gpu_args);
    served.extend(exposed(&scrape(gpu_server.addr)));
    let missing: Vec<&String> = used.difference(&served).collect();
    assert!(missing.is_empty(), "the dashboard queries metrics serve does not expose: {missing:?}");
    eprintln!("dashboard: {} queries, {} metrics, all exposed", exprs.len(), used.len());
}

#[test]
fn dashboard_queries_parse_as_promql() {
    let promtool = Path::new("/usr/bin/promtool");
    if !promtool.exists() {
        if std::env::var_os("CI").is_some() {
            panic!("/usr/bin/promtool is missing: .ci/run installs Debian's prometheus package");
        }
        eprintln!(
            "skipped: promtool is not installed (apt-get install prometheus); CI installs it"
        );
        return;
    }
    let mut exprs = Vec::new();
    queries(&dashboard(), &mut exprs);
    // Each query as a recording rule; Grafana's variables as what they expand to.
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, e) in exprs.iter().enumerate() {
        let e = e.replace("$instance", ".*");
        let e =
            if e.starts_with("label_values(") { "memtally_processes_scanned".into() } else { e };
        rules.push_str(&format!(
            "      - record: dashboard:query{i}\n        expr: {}\n",
            serde_json::to_string(&e).unwrap()
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.yml");
    std::fs::write(&file, rules).unwrap();
    let out = Command::new(promtool).args(["check", "rules"]).arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn manifest() -> Vec<Yaml> {
    let path = repo().join("deploy/kubernetes/daemonset.yaml");
    YamlLoader::load_from_str(&std::fs::read_to_string(path).unwrap())
        .expect("the manifest is YAML")
}

/// The DaemonSet's pod spec and its memtally container's arguments.
pub(crate) fn daemonset() -> (Yaml, Vec<String>) {
    let docs = manifest();
    let ds = docs.iter().find(|d| d["kind"].as_str() == Some("DaemonSet")).expect("a DaemonSet");
    let pod = ds["spec"]["template"]["spec"].clone();
    let args = pod["containers"][0]["args"]
        .as_vec()
        .expect("container args")
        .iter()
        .map(|a| a.as_str().expect("every argument is a string").to_string())
        .collect();
    (pod, args)
}

fn value_of<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{flag} in {args:?}"));
    &args[i + 1]
}

#[test]
fn daemonset_reads_the_host_proc_without_host_pid() {
    let docs = manifest();
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["Namespace", "DaemonSet", "Service", "NetworkPolicy"]);
    let (pod, args) = daemonset();
    assert_ne!(pod["hostPID"].as_bool(), Some(true), "no host PID namespace");
    let c = &pod["containers"][0];
    let proc_root = value_of(&args, "--proc-root");
    let mount = c["volumeMounts"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"].as_str() == Some(proc_root))
        .expect("--proc-root is where a volume is mounted");
    assert_eq!(mount["readOnly"].as_bool(), Some(true));
    let volume = pod["volumes"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("the mount's volume");
    assert_eq!(volume["hostPath"]["path"].as_str(), Some("/proc"), "the node's /proc");
    // And the node's cgroup tree, where --cgroup-root reads it (issue 38.1).
    let cgroup_root = value_of(&args, "--cgroup-root");
    let mount = c["volumeMounts"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"].as_str() == Some(cgroup_root))
        .expect("--cgroup-root is where a volume is mounted");
    assert_eq!(mount["readOnly"].as_bool(), Some(true));
    let volume = pod["volumes"].as_vec().unwrap().iter().find(|v| v["name"] == mount["name"]);
    let host = volume.expect("the mount's volume")["hostPath"]["path"].as_str();
    assert_eq!(host, Some("/sys/fs/cgroup"), "the node's cgroup tree");
    let sc = &c["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"].as_bool(), Some(true));
    assert_eq!(sc["allowPrivilegeEscalation"].as_bool(), Some(false));
    assert_ne!(sc["privileged"].as_bool(), Some(true));
    let add: Vec<&str> =
        sc["capabilities"]["add"].as_vec().unwrap().iter().filter_map(Yaml::as_str).collect();
    assert_eq!(add, ["SYS_PTRACE", "DAC_READ_SEARCH"]);
    let drop: Vec<&str> =
        sc["capabilities"]["drop"].as_vec().unwrap().iter().filter_map(Yaml::as_str).collect();
    assert_eq!(drop, ["ALL"]);
    // The port memtally listens on is the one declared and annotated.
    let port: i64 = value_of(&args, "--listen").rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(c["ports"][0]["containerPort"].as_i64(), Some(port));
    let annotations = &docs[1]["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/port"].as_str(), Some(port.to_string().as_str()));
    assert_eq!(annotations["prometheus.io/scrape"].as_str(), Some("true"));
}

#[test]
fn daemonset_arguments_are_accepted_by_serve() {
    let (_, args) = daemonset();
    assert_eq!(args[0], "serve");
    let ok = memtally().args(&args).arg("--help").output().unwrap();
    assert!(
        ok.status.success(),
        "memtally {args:?} --help: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("--min-interval"));
    // The check can fail: a misspelled option or a bad value is refused.
    let mut bad = args.clone();
    bad[1] = bad[1].replace("proc-root", "proc-rot");
    let refused = memtally().args(&bad).arg("--help").output().unwrap();
    assert_eq!(refused.status.code(), Some(2), "{bad:?} is refused");
    let mut bad = args.clone();
    let i = bad.iter().position(|a| a == "--min-interval").unwrap();
    bad[i + 1] = "15 parsecs".into();
    assert_eq!(memtally().args(&bad).arg("--help").output().unwrap().status.code(), Some(2));
}

/// The manifest's arguments run as written, but with the node's /proc at
/// a path of the test's (the pod's /host/proc) and a free loopback port:
/// the figures are live ones, the machine picture is there, and a child
/// with a known allocation is found with its PSS.
#[test]
fn daemonset_arguments_serve_a_host_proc_mounted_elsewhere() {
    let (_, args) = daemonset();
    let dir = tempfile::tempdir().unwrap();
    let host_proc = dir.path().join("host/proc");
    std::fs::create_dir_all(host_proc.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/proc", &host_proc).unwrap();
    let child = spawn(Mapping::Anonymous(24 * MIB));
    let mut run_args: Vec<String> = args[1..].to_vec();
    let i = run_args.iter().position(|a| a == "--proc-root").unwrap();
    run_args[i + 1] = host_proc.display().to_string();
    let i = run_args.iter().position(|a| a == "--cgroup-root").unwrap();
    run_args[i + 1] = "/sys/fs/cgroup".into();
    let i = run_args.iter().position(|a| a == "--listen").unwrap();
    run_args[i + 1] = "127.0.0.1:0".into();
    // Publish every process, so the child is one of the rows.
    let i = run_args.iter().position(|a| a == "--top").unwrap();
    run_args[i + 1] = "100000".into();
    let refs: Vec<&str> = run_args.iter().map(String::as_str).collect();
    let server = Server::start(&refs);
    let text = scrape(server.addr);
    let samples = crate::prometheus::parse(&text);
    let names: BTreeSet<&str> = samples.keys().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains("memtally_machine_total_bytes"), "the machine picture: {names:?}");
    // Per program (issue 38.2): the child's program row holds its 24 MiB
    // (and whatever else runs the same program).
    assert_eq!(value_of(&args, "--by"), "program");
    let argv0 = std::fs::read(format!("/proc/{}/cmdline", child.pid)).unwrap();
    let argv0 = String::from_utf8_lossy(argv0.split(|&b| b == 0).next().unwrap()).to_string();
    let program = Path::new(&argv0).file_name().unwrap().to_string_lossy().to_string();
    let pss = samples
        .iter()
        .find(|((n, l), _)| n == "memtally_program_pss_bytes" && *l == format!("program={program}"))
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("program {program} in the exposition:\n{text}"));
    assert!(pss >= (24 * MIB) as f64, "the child's 24 MiB: {pss}");
    assert!(!names.contains("memtally_process_pss_bytes"), "no per-process series by default");
    let scanned = samples.get(&("memtally_processes_scanned".to_string(), String::new()));
    assert!(scanned.is_some_and(|&n| n > 1.0), "every process of the host: {scanned:?}");
}

/// The capabilities a systemd line grants (`CAP_SYS_PTRACE ...`), as
/// setpriv's lower-case names.
fn unit_caps(key: &str) -> BTreeSet<String> {
    let unit = std::fs::read_to_string(repo().join("deploy/systemd/memtally.service")).unwrap();
    let lines: Vec<&str> =
        unit.lines().filter_map(|l| l.strip_prefix(&format!("{key}="))).collect();
    assert_eq!(lines.len(), 1, "one {key}= line");
    lines[0].split_whitespace().map(|c| c.trim_start_matches("CAP_").to_lowercase()).collect()
}

fn daemonset_caps() -> (BTreeSet<String>, BTreeSet<String>) {
    let (pod, _) = daemonset();
    let caps = &pod["containers"][0]["securityContext"]["capabilities"];
    let names = |k: &str| -> BTreeSet<String> {
        caps[k].as_vec().unwrap().iter().map(|c| c.as_str().unwrap().to_lowercase()).collect()
    };
    (names("add"), names("drop"))
}

/// `memtally export` as uid 65534 with exactly `caps`: the figures its
/// start line says are left out.
fn left_out_with(caps: &BTreeSet<String>) -> Option<BTreeSet<&'static str>> {
    let caps: Vec<&str> = caps.iter().map(String::as_str).collect();
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and setpriv to run as uid 65534 with chosen capabilities");
        return None;
    }
    let out = crate::privileges::memtally_with(&caps, &["export"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8_lossy(&out.stderr).into_owned();
    Some(
        [
            ("detail", "PSS, USS, swap, dirty"),
            ("gpu", "GPU memory"),
            ("frames", "page frame numbers"),
        ]
        .into_iter()
        .filter(|(_, words)| line.contains(words))
        .map(|(k, _)| k)
        .collect(),
    )
}

/// serve publishes rollup figures and GPU memory, never page frames (its
/// start line never names them): a set of capabilities is right for it
/// when that line says nothing is left out, and each of its capabilities
/// is needed when dropping it leaves out a figure serve publishes.
fn grants_only_what_serve_needs(caps: &BTreeSet<String>, what: &str) {
    let Some(left_out) = left_out_with(caps) else { return };
    assert!(
        left_out.is_empty(),
        "{what}: {caps:?} gives every figure serve publishes: {left_out:?}"
    );
    for c in caps {
        let mut fewer = caps.clone();
        fewer.remove(c);
        let lost = left_out_with(&fewer).unwrap();
        assert!(
            lost.contains("detail") || lost.contains("gpu"),
            "{what}: {c} is granted but nothing serve publishes needs it ({lost:?})"
        );
    }
}

#[test]
fn systemd_unit_grants_only_the_capabilities_serve_needs() {
    let ambient = unit_caps("AmbientCapabilities");
    assert_eq!(ambient, unit_caps("CapabilityBoundingSet"), "bounding set = ambient set");
    let unit = std::fs::read_to_string(repo().join("deploy/systemd/memtally.service")).unwrap();
    assert!(unit.contains("\nDynamicUser=yes\n"), "not root");
    assert!(unit.contains("\nNoNewPrivileges=yes\n"));
    grants_only_what_serve_needs(&ambient, "deploy/systemd/memtally.service");
}

#[test]
fn daemonset_grants_only_the_capabilities_serve_needs() {
    let (add, drop) = daemonset_caps();
    assert_eq!(drop, BTreeSet::from(["all".to_string()]), "everything else dropped");
    let (pod, _) = daemonset();
    let sc = &pod["containers"][0]["securityContext"];
    assert_eq!(sc["privileged"].as_bool(), Some(false));
    assert_eq!(sc["allowPrivilegeEscalation"].as_bool(), Some(false));
    grants_only_what_serve_needs(&add, "deploy/kubernetes/daemonset.yaml");
}
