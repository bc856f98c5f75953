//! A page of a machine with GPU memory (the hand-written GPU tree of
//! testdata/fixtures/gpu, with a recorded meminfo): the GPU memory is a
//! line of the machine, split by where the drivers say it lives, and a
//! group of boxes in the treemap (a box per process and place), with the
//! figures `memtally gpu` gives; not only a table at the bottom.

use std::collections::HashMap;

use regex::Regex;

use crate::support::{repo_path, run_json};

fn tree() -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proc");
    let cp = std::process::Command::new("cp")
        .arg("-r")
        .arg(repo_path("testdata/fixtures/gpu/machine"))
        .arg(&dir)
        .status()
        .unwrap();
    assert!(cp.success());
    std::fs::copy(
        repo_path("testdata/fixtures/linux/chromium-browser/proc/meminfo"),
        dir.join("meminfo"),
    )
    .unwrap();
    (tmp, dir.to_str().unwrap().to_string())
}

#[test]
fn gpu_memory_is_a_machine_line_and_treemap_boxes_where_it_lives() {
    let (_tmp, root) = tree();
    let dir = tempfile::tempdir().unwrap();
    let page = crate::report::report(dir.path(), "gpu.html", &["--proc-root", &root]);
    let html = std::fs::read_to_string(&page).unwrap();
    let gpu = run_json(&["gpu", "--proc-root", &root, "--format", "json"]);
    let total = gpu["proportional"].as_u64().unwrap();
    assert!(total > 0);
    // The machine line: the total, device memory (vram) and system RAM.
    let machine = html.split(r#"<section id="machine">"#).nth(1).unwrap();
    let line = Regex::new(r#"<p id="gpu-machine">(.*?)</p>"#)
        .unwrap()
        .captures(machine)
        .expect("a GPU line in the machine section")[1]
        .to_string();
    assert!(line.contains(&format!(r#"<b data-v="{total}">"#)), "{line}");
    let region = |pred: &dyn Fn(&str) -> bool| -> u64 {
        gpu["totals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| pred(t["region"].as_str().unwrap()))
            .map(|t| t["proportional"].as_u64().unwrap_or(0))
            .sum()
    };
    let device = region(&|r| r.starts_with("vram") || r.starts_with("stolen"));
    let ram = region(&|r| ["system", "system0", "gtt", "cpu", "memory"].contains(&r));
    assert!(device > 1 << 30 && ram > 0, "{device} {ram}");
    assert!(line.contains(&format!(r#"<span data-v="{device}">"#)), "device {device}: {line}");
    assert!(line.contains("in device memory (outside MemTotal"), "{line}");
    assert!(line.contains(&format!(r#"<span data-v="{ram}">"#)), "system RAM {ram}: {line}");
    // The treemap: a "GPU memory" group of the total, its boxes per
    // process and place adding up to each process's GPU figure.
    let group = Regex::new(
        r#"<rect id="(n\d+)" class="k-group"[^>]*data-v="(\d+)" data-label="GPU memory""#,
    )
    .unwrap()
    .captures(&html)
    .expect("a GPU memory box");
    assert_eq!(group[2].parse::<u64>().unwrap(), total);
    let boxes = Regex::new(r#"class="k-gpu" data-parent="(n\d+)"[^>]*data-v="(\d+)" data-pid="(\d+)" data-label="([^"]*)""#).unwrap();
    let mut per_pid: HashMap<u64, u64> = HashMap::new();
    for c in boxes.captures_iter(&html) {
        assert_eq!(&c[1], &group[1]);
        *per_pid.entry(c[3].parse().unwrap()).or_default() += c[2].parse::<u64>().unwrap();
    }
    for p in gpu["processes"].as_array().unwrap() {
        let pid = p["pid"].as_u64().unwrap();
        assert_eq!(per_pid.get(&pid).copied(), p["proportional"].as_u64(), "pid {pid}");
    }
    assert!(html.contains(r#"data-label="radv-game (300) device memory""#));
    assert!(html.contains(r#"data-label="panthor-app (400) system RAM""#));
    // The headline says it too.
    assert!(html.contains(" · GPU memory 1.3G · "), "the headline");
}
