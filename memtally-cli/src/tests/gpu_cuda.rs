//! A recorded CUDA process (testdata/fixtures/gpu/cuda-h100: python3
//! holding 4 GiB in torch on an H100, with 640 MiB of pinned host memory):
//! its mappings of the NVIDIA device files are the GPU / device category,
//! and the pinned host memory (shared `/dev/zero` mappings CUDA makes) is
//! shared memory, each to the byte of the recorded smaps.

use super::{repo_path, run_json};

/// (Rss kB, mappings) of the recorded smaps' mappings whose line `keep` accepts.
fn smaps_sum(smaps: &str, keep: &dyn Fn(&str, &str) -> bool) -> (u64, u64) {
    let (mut rss, mut count, mut kept) = (0, 0, false);
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first().is_some_and(|f| f.contains('-') && !f.ends_with(':')) {
            let path = fields.get(5..).map(|p| p.join(" ")).unwrap_or_default();
            kept = keep(fields[1], &path);
            count += u64::from(kept);
        } else if kept && fields.first() == Some(&"Rss:") {
            rss += fields[1].parse::<u64>().unwrap();
        }
    }
    (rss, count)
}

#[test]
fn a_cuda_process_keeps_device_files_and_pinned_memory_apart() {
    let root = repo_path("testdata/fixtures/gpu/cuda-h100");
    let smaps = std::fs::read_to_string(format!("{root}/2747/smaps")).unwrap();
    let doc = run_json(&["--proc-root", &root, "show", "2747", "--format", "json"]);
    let category = |name: &str| {
        let c = doc["categories"].as_array().unwrap().iter().find(|c| c["category"] == name);
        let c = c.unwrap_or_else(|| panic!("no {name} in {doc}"));
        (c["rss"].as_u64().unwrap() / 1024, c["regions"].as_u64().unwrap())
    };
    let nvidia = smaps_sum(&smaps, &|_, path| path.starts_with("/dev/nvidia"));
    assert_eq!(nvidia, (73_728, 31), "the recording's own sums");
    assert_eq!(category("device"), nvidia);
    let pinned =
        smaps_sum(&smaps, &|perms, path| perms.ends_with('s') && path == "/dev/zero (deleted)");
    assert_eq!(pinned, (665_600, 10));
    assert_eq!(category("shared_memory"), pinned);
}
