//! deploy/prometheus/: the recording and alerting rules load in
//! Prometheus (`promtool check rules`), every alert fires on the unit-test
//! series meant to fire it and stays quiet on the ones that must not
//! (`promtool test rules`, each alert tested both ways), every recorded
//! series the alerts and the dashboard read is one the rules record, and
//! every memtally metric the rules read is documented in
//! docs/prometheus.md (the exporter's table, or the list of names the
//! rules assume from exporters still to come).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use crate::support::repo;

const PROMTOOL: &str = "/usr/bin/promtool";

fn rules_dir() -> PathBuf {
    repo().join("deploy/prometheus")
}

pub(crate) fn rule_files() -> [PathBuf; 2] {
    [rules_dir().join("memtally.rules.yml"), rules_dir().join("memtally.alerts.yml")]
}

fn unit_tests() -> PathBuf {
    rules_dir().join("tests/memtally.alerts.test.yml")
}

fn yaml(path: &Path) -> Yaml {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())).remove(0)
}

/// Every rule of a rules file.
pub(crate) fn rules(path: &Path) -> Vec<Yaml> {
    let doc = yaml(path);
    let groups = doc["groups"].as_vec().expect("groups").clone();
    groups.iter().flat_map(|g| g["rules"].as_vec().expect("rules").clone()).collect()
}

/// promtool, or None (with the reason printed) where it is not installed;
/// CI installs it (Debian's prometheus package), so there its absence fails.
fn promtool() -> Option<&'static Path> {
    let p = Path::new(PROMTOOL);
    if p.exists() {
        return Some(p);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{PROMTOOL} is missing: .ci/run installs Debian's prometheus package");
    }
    eprintln!("skipped: promtool is not installed (apt-get install prometheus); CI installs it");
    None
}

fn run_promtool(args: &[&str], files: &[PathBuf]) -> String {
    let Some(promtool) = promtool() else { return String::new() };
    let out = Command::new(promtool).args(args).args(files).output().expect("promtool runs");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool {args:?}: {text}");
    text
}

#[test]
fn rules_load_in_promtool() {
    let out = run_promtool(&["check", "rules"], &rule_files());
    if !out.is_empty() {
        let recorded = rules(&rule_files()[0]).len();
        let alerts = rules(&rule_files()[1]).len();
        assert!(out.contains(&format!("SUCCESS: {recorded} rules found")), "{out}");
        assert!(out.contains(&format!("SUCCESS: {alerts} rules found")), "{out}");
        eprintln!("{out}");
    }
}

#[test]
fn alert_unit_tests_pass_in_promtool() {
    let out = run_promtool(&["test", "rules"], &[unit_tests()]);
    if !out.is_empty() {
        assert!(out.contains("SUCCESS"), "{out}");
    }
}

#[test]
fn every_alert_is_tested_firing_and_not_firing() {
    let alerts: BTreeSet<String> = rules(&rule_files()[1])
        .iter()
        .map(|r| r["alert"].as_str().expect("the alerts file holds alerts only").to_string())
        .collect();
    assert!(alerts.len() >= 8, "{alerts:?}");
    // alert -> (a test where it fires, a test where it does not)
    let mut seen: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    let doc = yaml(&unit_tests());
    for case in doc["tests"].as_vec().expect("tests") {
        for t in case["alert_rule_test"].as_vec().expect("alert_rule_test") {
            let name = t["alertname"].as_str().expect("alertname").to_string();
            let fires = t["exp_alerts"].as_vec().is_some_and(|v| !v.is_empty());
            let e = seen.entry(name).or_default();
            if fires {
                e.0 = true;
            } else {
                e.1 = true;
            }
        }
    }
    for a in &alerts {
        let (fires, quiet) = seen.get(a).copied().unwrap_or_default();
        assert!(fires, "{a} has no unit test where it fires");
        assert!(quiet, "{a} has no unit test where it stays quiet");
    }
    let unknown: Vec<&String> = seen.keys().filter(|k| !alerts.contains(*k)).collect();
    assert!(unknown.is_empty(), "tests of alerts that do not exist: {unknown:?}");
}

/// The names in a PromQL expression: recorded series (level:metric:op)
/// and memtally's own metrics.
fn names_in(expr: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let re = regex::Regex::new(r"[a-zA-Z_:][a-zA-Z0-9_:]*").unwrap();
    let (mut recorded, mut metrics) = (BTreeSet::new(), BTreeSet::new());
    // Label values and annotations are quoted; leave strings out.
    let unquoted = regex::Regex::new(r#""(?:[^"\\]|\\.)*""#).unwrap().replace_all(expr, "\"\"");
    for m in re.find_iter(&unquoted) {
        let s = m.as_str();
        if s.matches(':').count() == 2 && s.contains("memtally_") {
            recorded.insert(s.to_string());
        } else if s.starts_with("memtally_") {
            metrics.insert(s.to_string());
        }
    }
    (recorded, metrics)
}

fn recorded_names() -> BTreeSet<String> {
    rules(&rule_files()[0])
        .iter()
        .map(|r| r["record"].as_str().expect("the rules file records only").to_string())
        .collect()
}

#[test]
fn alerts_and_dashboard_read_only_recorded_series_the_rules_record() {
    let recorded = recorded_names();
    let mut exprs: Vec<String> = rule_files()
        .iter()
        .flat_map(|f| rules(f))
        .map(|r| r["expr"].as_str().expect("expr").to_string())
        .collect();
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("deploy/grafana/memtally.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    let mut targets = Vec::new();
    for p in dashboard["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            targets.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    let dashboard_reads: BTreeSet<String> = targets.iter().flat_map(|e| names_in(e).0).collect();
    exprs.extend(targets);
    for e in &exprs {
        for r in names_in(e).0 {
            assert!(recorded.contains(&r), "{r} is read but no rule records it: {e}");
        }
    }
    // The dashboard shows what the alerts watch.
    for r in [
        "instance_program:memtally_footprint_pss_bytes:sum",
        "instance_cgroup:memtally_working_set_bytes:ratio_limit",
        "instance:memtally_unexplained_bytes:ratio_total",
        "instance:memtally_swap_used_bytes:ratio_total",
        "instance_device:memtally_zram_mem_used_bytes:ratio_limit",
    ] {
        assert!(dashboard_reads.contains(r), "the dashboard has no panel for {r}");
    }
}

#[test]
fn every_metric_the_rules_read_is_documented() {
    let doc = std::fs::read_to_string(repo().join("docs/prometheus.md")).unwrap();
    // The doc's table writes families as memtally_cgroup_charge_{usage,limit,...}_bytes.
    let family =
        regex::Regex::new(r"`(memtally_[a-z0-9_]*)\{([a-z0-9_,]+)\}([a-z0-9_]*)`").unwrap();
    let mut documented: BTreeSet<String> = BTreeSet::new();
    for c in family.captures_iter(&doc) {
        for part in c[2].split(',') {
            documented.insert(format!("{}{part}{}", &c[1], &c[3]));
        }
    }
    let plain = regex::Regex::new(r"`(memtally_[a-z0-9_]+)`").unwrap();
    documented.extend(plain.captures_iter(&doc).map(|c| c[1].to_string()));
    // memtally_{process,program,cgroup}_X: the table writes the process
    // figures once and says the program and cgroup rows have the same.
    let grouped: BTreeSet<String> = documented
        .iter()
        .filter_map(|m| m.strip_prefix("memtally_process_"))
        .flat_map(|f| [format!("memtally_program_{f}"), format!("memtally_cgroup_{f}")])
        .collect();
    documented.extend(grouped);
    for f in rule_files() {
        for r in rules(&f) {
            let e = r["expr"].as_str().unwrap();
            for m in names_in(e).1 {
                assert!(
                    documented.contains(&m),
                    "{m} ({}) is not in docs/prometheus.md",
                    f.display()
                );
            }
        }
    }
}
