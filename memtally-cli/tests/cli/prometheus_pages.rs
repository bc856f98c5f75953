//! `export --pages` (and `serve`, which shares its options): each
//! published row's exclusive bytes on live exec'd C children of known
//! bytes (a process's is its USS within 64 KiB; a forked family's program
//! row holds the pages its processes share, which no one process's
//! does); the guard leaving a process past `--max-mappings` or
//! `--read-budget` unread and counted; without CAP_SYS_ADMIN, or on a
//! recording, one stderr line and no exclusive series; every metric
//! `--pages` adds is in docs/prometheus.md's table.

use std::collections::BTreeMap;

use crate::pages::frames_readable;
use crate::support::lone::{family, spawn_grower, spawn_mapper};
use crate::support::{python_root_path, repo, run, Server, MIB};

/// The samples of a text exposition: `name{labels}` → value.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

/// `memtally export ARGS --pages`, checked to succeed: its samples and stderr.
fn export(args: &[&str]) -> (BTreeMap<String, f64>, String) {
    let mut all = vec!["export", "--pages"];
    all.extend_from_slice(args);
    let out = run(&all);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (samples(&String::from_utf8_lossy(&out.stdout)), err)
}

/// The value of the one sample of `metric` whose labels contain `label`.
fn one(s: &BTreeMap<String, f64>, metric: &str, label: &str) -> Option<u64> {
    let hits: Vec<f64> = s
        .iter()
        .filter(|(k, _)| k.starts_with(&format!("{metric}{{")) && k.contains(label))
        .map(|(_, v)| *v)
        .collect();
    assert!(hits.len() <= 1, "{metric} {label}: {hits:?}");
    hits.first().map(|v| *v as u64)
}

#[test]
fn a_childs_exclusive_bytes_are_its_uss() {
    if !frames_readable() {
        return;
    }
    let mut child = spawn_grower(16 * MIB);
    child.grow();
    child.grow();
    let pid = format!("pid=\"{}\"", child.pid);
    let (s, err) = export(&["--pid", &child.pid.to_string()]);
    assert!(err.is_empty(), "nothing said when the read runs: {err}");
    let uss = one(&s, "memtally_process_uss_bytes", &pid).expect("a USS series");
    let ex = one(&s, "memtally_process_exclusive_bytes", &pid).expect("an exclusive series");
    // Its USS, and the few file pages only memtally shared with it (its
    // own mappings come off the counts): tests/cli/pages.rs says why.
    assert!(ex >= uss && ex <= uss + 64 * 1024, "exclusive {ex} vs USS {uss}");
    assert!(ex >= 32 * MIB as u64, "{ex}");
    assert_eq!(s["memtally_pages_processes_read"], 1.0);
    assert_eq!(s["memtally_pages_processes_unread"], 0.0);
    assert_eq!(one(&s, "memtally_pages_limited", "mappings"), Some(0));
    assert_eq!(one(&s, "memtally_pages_limited", "read_budget"), Some(0));
    assert!(s["memtally_pages_duration_seconds"] <= s["memtally_scrape_duration_seconds"]);

    // Without --pages: none of it.
    let out = run(&["export", "--pid", &child.pid.to_string()]);
    let plain = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && !plain.contains("exclusive") && !plain.contains("pages_"));
}

#[test]
fn a_groups_exclusive_bytes_are_its_own_not_a_sum_of_its_processes() {
    if !frames_readable() {
        return;
    }
    // The parent wrote 24 MiB and forked two children: those pages are
    // shared by the three (no one process's), and the family's alone.
    let len = 24 * MIB as u64;
    let fam = family(len as usize, 2);
    let parent = fam.pids()[0].to_string();
    let (procs, _) = export(&["--tree", &parent]);
    let each: Vec<u64> = fam
        .pids()
        .iter()
        .map(|p| {
            let label = format!("pid=\"{p}\"");
            one(&procs, "memtally_process_exclusive_bytes", &label).expect("each process's")
        })
        .collect();
    let sum: u64 = each.iter().sum();
    assert!(each.iter().all(|&e| e < len), "the shared pages are in no process's: {each:?}");
    let (groups, _) = export(&["--tree", &parent, "--by", "program"]);
    let (key, program) = groups
        .iter()
        .find(|(k, _)| k.starts_with("memtally_program_exclusive_bytes{"))
        .expect("the program's series");
    assert_eq!(groups.keys().filter(|k| k.starts_with("memtally_program_exclusive")).count(), 1);
    let program = *program as u64;
    // The shared pages, each process's own, and the few file pages (the
    // program's text) only the family maps.
    assert!(
        program >= len + sum && program <= len + sum + 256 * 1024,
        "{key} {program} vs {each:?}"
    );
}

#[test]
fn the_guard_leaves_a_process_past_its_bounds_unread_and_counts_it() {
    if !frames_readable() {
        return;
    }
    let many = spawn_mapper(5000, None);
    let pid = many.child.0.id().to_string();
    let label = format!("pid=\"{pid}\"");
    let (s, _) = export(&["--pid", &pid, "--max-mappings", "4000"]);
    assert_eq!(one(&s, "memtally_process_exclusive_bytes", &label), None, "no figure, never 0");
    assert!(one(&s, "memtally_process_pss_bytes", &label).is_some(), "the cheap tier still is");
    assert_eq!(one(&s, "memtally_pages_limited", "mappings"), Some(1));
    assert_eq!(s["memtally_pages_processes_read"], 0.0);
    let (s, _) = export(&["--pid", &pid, "--max-mappings", "100000"]);
    assert!(one(&s, "memtally_process_exclusive_bytes", &label).is_some());
    assert_eq!(one(&s, "memtally_pages_limited", "mappings"), Some(0));

    // 32 MiB resident at 80 ms per GiB is 2.5 ms: past a 1 ms budget.
    let mut grower = spawn_grower(32 * MIB);
    grower.grow();
    let pid = grower.pid.to_string();
    let label = format!("pid=\"{pid}\"");
    let (s, _) = export(&["--pid", &pid, "--read-budget", "1ms"]);
    assert_eq!(one(&s, "memtally_process_exclusive_bytes", &label), None);
    assert_eq!(one(&s, "memtally_pages_limited", "read_budget"), Some(1));
    let (s, _) = export(&["--pid", &pid, "--read-budget", "1s"]);
    assert!(one(&s, "memtally_process_exclusive_bytes", &label).is_some());
}

#[test]
fn without_cap_sys_admin_one_line_and_no_exclusive_series() {
    if !frames_readable() {
        return;
    }
    let child = spawn_grower(MIB);
    let out = std::process::Command::new("setpriv")
        .args(["--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"])
        .args([env!("CARGO_BIN_EXE_memtally"), "export", "--pages", "--pid"])
        .arg(child.pid.to_string())
        .output();
    let Ok(out) = out else { return eprintln!("skipped: no setpriv") };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the other figures are published: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("--pages") && err.contains("CAP_SYS_ADMIN"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("memtally_process_pss_bytes{"), "{text}");
    assert!(!text.contains("exclusive") && !text.contains("memtally_pages_"), "never zeros");
}

#[test]
fn a_recording_has_no_page_figures_and_says_so_once() {
    let root = python_root_path();
    let out = run(&["--proc-root", &root, "export", "--pages"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--pages") && err.contains("recorded tree"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("exclusive"));
}

#[test]
fn every_metric_pages_adds_is_in_the_docs_table() {
    if !frames_readable() {
        return;
    }
    let child = spawn_grower(MIB);
    let doc = std::fs::read_to_string(repo().join("docs/prometheus.md")).unwrap();
    let table: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `memtally_")).collect();
    let pid = child.pid.to_string();
    for by in ["process", "program", "cgroup"] {
        let (with, _) = export(&["--pid", &pid, "--by", by]);
        let names = |s: &BTreeMap<String, f64>| -> std::collections::BTreeSet<String> {
            s.keys().map(|k| k.split('{').next().unwrap().to_string()).collect()
        };
        let out = run(&["export", "--pid", &pid, "--by", by]);
        let without = names(&samples(&String::from_utf8_lossy(&out.stdout)));
        let added: Vec<String> = names(&with).difference(&without).cloned().collect();
        assert!(added.iter().any(|m| m.ends_with("_exclusive_bytes")), "{by}: {added:?}");
        for m in added {
            assert!(
                table.iter().any(|l| l.contains(&format!("`{m}`"))),
                "{m} (--pages --by {by}) is not in docs/prometheus.md's table"
            );
        }
    }
}

#[test]
fn serve_publishes_them_at_each_scrape() {
    use std::io::{Read, Write};
    if !frames_readable() {
        return;
    }
    let mut child = spawn_grower(16 * MIB);
    child.grow();
    let pid = child.pid.to_string();
    let srv = Server::start(&["--listen", "127.0.0.1:0", "--pages", "--pid", &pid]);
    let mut conn = std::net::TcpStream::connect(srv.addr).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut reply = String::new();
    conn.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{head}");
    let s = samples(body);
    let label = format!("pid=\"{pid}\"");
    let uss = one(&s, "memtally_process_uss_bytes", &label).unwrap();
    let ex = one(&s, "memtally_process_exclusive_bytes", &label).expect("an exclusive series");
    assert!(ex >= uss && ex <= uss + 64 * 1024, "exclusive {ex} vs USS {uss}");
}
