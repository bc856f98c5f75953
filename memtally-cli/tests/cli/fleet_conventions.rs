//! Issue 38.3, the fleet's side: the rules and the dashboard name no
//! scrape job (annotation discovery makes another one), and the manifest's
//! Namespace admits the pods under Pod Security Admission while a
//! NetworkPolicy admits only the Prometheus namespace.

use yaml_rust2::{Yaml, YamlLoader};

use crate::support::repo;

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn rules_and_dashboard_name_no_scrape_job() {
    let job = regex::Regex::new(r#"\bjob\s*(=|!=|=~|!~)\s*\\?""#).unwrap();
    for rel in [
        "deploy/prometheus/memtally.rules.yml",
        "deploy/prometheus/memtally.alerts.yml",
        "deploy/grafana/memtally.json",
    ] {
        let text = read(rel);
        let hits: Vec<&str> = text.lines().filter(|l| job.is_match(l)).collect();
        assert!(hits.is_empty(), "{rel} names a scrape job: {hits:?}");
    }
    // The down alert reads `up` of memtally's targets, whatever their job,
    // and an absent exporter has an alert of its own.
    let alerts = read("deploy/prometheus/memtally.alerts.yml");
    assert!(
        alerts.contains("up == 0 and on (job, instance) max_over_time(memtally_build_info[1d])")
    );
    assert!(alerts.contains("absent(memtally_build_info)"));
}

fn manifest() -> Vec<Yaml> {
    YamlLoader::load_from_str(&read("deploy/kubernetes/daemonset.yaml")).expect("YAML")
}

#[test]
fn the_namespace_is_privileged_under_pod_security_and_says_why() {
    let docs = manifest();
    let ns = docs.iter().find(|d| d["kind"].as_str() == Some("Namespace")).expect("a Namespace");
    let labels = &ns["metadata"]["labels"];
    assert_eq!(labels["pod-security.kubernetes.io/enforce"].as_str(), Some("privileged"));
    let text = read("deploy/kubernetes/daemonset.yaml");
    let before = &text[..text.find("pod-security.kubernetes.io/enforce:").unwrap()];
    let comment = &before[before.rfind("labels:").unwrap()..];
    for why in ["hostPath", "SYS_PTRACE", "DAC_READ_SEARCH", "Baseline"] {
        assert!(comment.contains(why), "the comment says why ({why}): {comment}");
    }
}

#[test]
fn a_network_policy_admits_only_the_prometheus_namespace() {
    let docs = manifest();
    let ds = docs.iter().find(|d| d["kind"].as_str() == Some("DaemonSet")).unwrap();
    let np = docs.iter().find(|d| d["kind"].as_str() == Some("NetworkPolicy")).expect("a policy");
    assert_eq!(np["metadata"]["namespace"], ds["metadata"]["namespace"]);
    // It selects the DaemonSet's pods.
    let pod_labels = &ds["spec"]["template"]["metadata"]["labels"];
    let selector = np["spec"]["podSelector"]["matchLabels"].as_hash().expect("matchLabels");
    assert!(!selector.is_empty());
    for (k, v) in selector {
        assert_eq!(&pod_labels[k.as_str().unwrap()], v, "{k:?}");
    }
    let types: Vec<&str> =
        np["spec"]["policyTypes"].as_vec().unwrap().iter().filter_map(Yaml::as_str).collect();
    assert!(types.contains(&"Ingress") && types.contains(&"Egress"), "{types:?}");
    assert!(np["spec"]["egress"].as_vec().is_some_and(Vec::is_empty), "no egress");
    // One rule: from one namespace, by its name label, on the metrics port only.
    let ingress = np["spec"]["ingress"].as_vec().unwrap();
    assert_eq!(ingress.len(), 1);
    let from = ingress[0]["from"].as_vec().unwrap();
    assert_eq!(from.len(), 1);
    assert!(from[0]["podSelector"].is_badvalue() && from[0]["ipBlock"].is_badvalue());
    let ns = from[0]["namespaceSelector"]["matchLabels"].as_hash().unwrap();
    assert_eq!(ns.len(), 1);
    assert!(ns.contains_key(&Yaml::String("kubernetes.io/metadata.name".into())));
    let ports = ingress[0]["ports"].as_vec().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0]["port"].as_i64(), Some(9464));
}

/// Issue 38.2: the fleet manifests publish per program by default (no
/// `pid` label to churn), and no dashboard query sums `delta()` over
/// per-process series (a process entering the top N counted as growth).
#[test]
fn fleet_defaults_publish_per_program_and_growth_reads_program_series() {
    let docs = manifest();
    let ds = docs.iter().find(|d| d["kind"].as_str() == Some("DaemonSet")).unwrap();
    let args: Vec<&str> = ds["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    // Per program and per cgroup (issue 38.1: the cgroup rules read the
    // cgroup series); never per process.
    let by: Vec<&str> = args.windows(2).filter(|w| w[0] == "--by").map(|w| w[1]).collect();
    assert_eq!(by, ["program", "cgroup"], "{args:?}");
    let unit = read("deploy/systemd/memtally.service");
    assert!(unit.contains("Environment=\"MEMTALLY_ARGS=--by program --by cgroup\"\n"), "{unit}");
    let default = read("deploy/debian/default");
    let set: Vec<&str> = default.lines().filter(|l| l.starts_with("MEMTALLY_ARGS=")).collect();
    assert_eq!(set.len(), 1, "{default}");
    assert!(set[0].contains("--by program --by cgroup"), "{default}");

    let dashboard: serde_json::Value =
        serde_json::from_str(&read("deploy/grafana/memtally.json")).unwrap();
    let mut exprs = Vec::new();
    for p in dashboard["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    let per_pid_delta = regex::Regex::new(r"(delta|increase|rate)\(memtally_process_").unwrap();
    let bad: Vec<&String> = exprs.iter().filter(|e| per_pid_delta.is_match(e)).collect();
    assert!(bad.is_empty(), "growth summed over per-process series: {bad:?}");
    assert!(
        exprs.iter().any(|e| e.contains("delta(instance_program:memtally_pss_bytes:sum")),
        "growth by program reads the program series"
    );
}
