//! `memtally gpu`, `show` and `top` GPU figures on the hand-written
//! recorded tree in testdata/fixtures/gpu/machine (see its README) and a
//! live DRM device where one exists (nvidia-smi: `gpu_nvidia.rs`).

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

pub(crate) const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

fn fixture() -> PathBuf {
    crate::support::repo().join("testdata/fixtures/gpu/machine")
}

fn memtally(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memtally")).args(args).output().expect("run memtally")
}

pub(crate) fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn recorded(args: &[&str]) -> Value {
    let root = fixture();
    let mut all = vec!["--proc-root", root.to_str().unwrap()];
    all.extend(args);
    json_of(&memtally(&all))
}

pub(crate) fn process(doc: &Value, pid: u64) -> &Value {
    doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == pid)
        .unwrap_or_else(|| panic!("pid {pid} not in {doc}"))
}

pub(crate) fn entry<'a>(p: &'a Value, driver: &str, region: &str) -> &'a Value {
    p["gpu"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["driver"] == driver && e["region"] == region)
        .unwrap_or_else(|| panic!("no {driver} {region} in {p}"))
}

/// (total, shared, resident, purgeable, active); `None` is JSON null.
pub(crate) fn figures(e: &Value) -> [Option<u64>; 5] {
    ["total", "shared", "resident", "purgeable", "active"].map(|k| {
        assert!(e.get(k).is_some(), "{k} missing (should be null when unknown) in {e}");
        e[k].as_u64()
    })
}

#[test]
fn i915_client_dupd_and_inherited_counts_once() {
    let doc = recorded(&["gpu", "--format", "json"]);
    for pid in [100, 101] {
        let p = process(&doc, pid);
        let e = entry(p, "i915", "system0");
        assert_eq!(e["pdev"], "0000:00:02.0");
        assert_eq!(
            figures(e),
            [Some(24 * MIB), Some(4 * MIB), Some(20 * MIB), Some(2 * MIB), Some(MIB)]
        );
        // fds 5 and 6 of pid 100 are one client; pid 101 inherited it.
        assert_eq!(e["clients"], 1);
        assert_eq!(e["shared_clients"], 1);
        assert_eq!(e["proportional"], 10 * MIB);
        assert_eq!(figures(entry(p, "i915", "stolen-system0")), [Some(0); 5]);
        assert_eq!(p["drm_clients"], 1);
        let client = &p["clients"][0];
        assert_eq!(client["client_id"], 11);
        assert_eq!(client["extras"]["drm-engine-render"], "9288864723 ns");
        assert_eq!(client["shared_with"], serde_json::json!([if pid == 100 { 101 } else { 100 }]));
    }
    assert_eq!(process(&doc, 100)["clients"][0]["fds"], serde_json::json!([5, 6]));
    assert_eq!(process(&doc, 101)["clients"][0]["fds"], serde_json::json!([5]));
    let amd = &process(&doc, 300)["clients"][0]["extras"];
    assert_eq!(amd["amd-evicted-vram"], "0 KiB");
    assert!(amd.get("drm-memory-vram").is_none(), "memory keys are figures, not extras");
    let totals = doc["totals"].as_array().unwrap();
    let i915 = totals.iter().find(|e| e["driver"] == "i915" && e["region"] == "system0").unwrap();
    assert_eq!(i915["total"], 24 * MIB, "the machine counts the client once");
    assert_eq!(i915["clients"], 1);
}

#[test]
fn xe_regions_and_reclaimable() {
    let doc = recorded(&["gpu", "--format", "json"]);
    let p = process(&doc, 200);
    assert_eq!(p["command"], "/usr/bin/xe-app");
    assert_eq!(
        figures(entry(p, "xe", "vram0")),
        [Some(256 * MIB), Some(16 * MIB), Some(200 * MIB), Some(32 * MIB), Some(64 * MIB)]
    );
    assert_eq!(
        figures(entry(p, "xe", "gtt")),
        [Some(2048 * KIB), Some(2048 * KIB), Some(2048 * KIB), None, None]
    );
    assert_eq!(
        figures(entry(p, "xe", "system")),
        [Some(8 * MIB), Some(0), Some(8 * MIB), Some(0), Some(0)]
    );
    // drm-cycles-*/drm-total-cycles-* are engine figures, not regions.
    assert_eq!(p["gpu"].as_array().unwrap().len(), 3);
    assert_eq!(p["purgeable"], 32 * MIB);
    // LazyFree 64 kB from smaps + drm-purgeable.
    assert_eq!(p["reclaimable"], 32 * MIB + 64 * KIB);
    // The renderD128 mapping (256 kB resident) and the dma-buf mapping (1024 kB).
    assert_eq!(p["mapped"], 1280 * KIB);
    // 8 + 2 + 200 MiB resident, + 1 MiB: a third of the system-heap buffer.
    // The amdgpu-exported buffer it maps is already in amdgpu's figures.
    assert_eq!(p["proportional"], 211 * MIB);
}

#[test]
fn amdgpu_drm_memory_is_resident_never_added() {
    let doc = recorded(&["gpu", "--format", "json"]);
    let old = process(&doc, 300);
    assert_eq!(figures(entry(old, "amdgpu", "vram")), [None, None, Some(1024 * MIB), None, None]);
    assert_eq!(figures(entry(old, "amdgpu", "gtt")), [None, None, Some(20 * MIB), None, None]);
    assert_eq!(figures(entry(old, "amdgpu", "cpu")), [None, None, Some(0), None, None]);
    let both = process(&doc, 301);
    assert_eq!(
        figures(entry(both, "amdgpu", "vram")),
        [Some(128 * MIB), Some(0), Some(64 * MIB), Some(0), None],
        "drm-memory-vram and drm-resident-vram are the same bytes"
    );
    assert_eq!(both["reclaimable"], MIB, "1 MiB purgeable gtt, no LazyFree");
    let vram = doc["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["driver"] == "amdgpu" && e["region"] == "vram")
        .unwrap();
    assert_eq!(vram["resident"], 1088 * MIB);
    assert_eq!(vram["clients"], 2);
}

#[test]
fn panthor_platform_device_is_keyed_by_node() {
    let doc = recorded(&["gpu", "--format", "json"]);
    let p = process(&doc, 400);
    let e = entry(p, "panthor", "memory");
    assert_eq!(e["pdev"], Value::Null);
    assert_eq!(e["device"], "/dev/dri/renderD129");
    assert_eq!(figures(e), [Some(16 * MIB), Some(0), Some(12 * MIB), Some(2 * MIB), Some(4 * MIB)]);
    // Same drm-client-id as the i915 client, different device: its own client.
    assert_eq!(e["clients"], 1);
    assert_eq!(e["shared_clients"], 0);
    assert_eq!(p["proportional"], 12 * MIB);
    // panthor-resident-memory is a driver extra, not a region.
    assert_eq!(p["gpu"].as_array().unwrap().len(), 1);
}

#[test]
fn dmabuf_shared_by_three_processes() {
    let doc = recorded(&["gpu", "--format", "json"]);
    let share = |pid| process(&doc, pid)["dmabuf"].clone();
    let d = |count: u64, size: u64, pss: u64| serde_json::json!({"count": count, "size": size, "pss": pss});
    assert_eq!(share(100), d(1, 3 * MIB, MIB));
    assert_eq!(share(101), d(1, 3 * MIB, MIB));
    // Two fds to the same buffer, and a mapping of another.
    assert_eq!(share(200), d(2, 4 * MIB, MIB + MIB / 2));
    assert_eq!(share(300), d(1, MIB, MIB / 2));
    assert_eq!(doc["dmabuf"], d(2, 4 * MIB, 4 * MIB));
    // bash holds no GPU fd: not listed.
    assert!(doc["processes"].as_array().unwrap().iter().all(|p| p["pid"] != 500));
    // The proportional figures add up to the machine's.
    let sum: u64 = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["proportional"].as_u64().unwrap())
        .sum();
    assert_eq!(doc["proportional"], sum);
    assert_eq!(sum, 20 * MIB + 210 * MIB + 3 * MIB + 1044 * MIB + 68 * MIB + 12 * MIB);
    assert_eq!(doc["partial"], false);
    assert_eq!(doc["notes"], serde_json::json!([]));
}

#[test]
fn selection_keeps_machine_wide_shares() {
    let doc = recorded(&["gpu", "101", "--format", "json"]);
    assert_eq!(doc["processes"].as_array().unwrap().len(), 1);
    let p = process(&doc, 101);
    assert_eq!(p["dmabuf"]["pss"], MIB, "divided among all three holders");
    assert_eq!(entry(p, "i915", "system0")["proportional"], 10 * MIB);
    let missing = memtally(&["--proc-root", fixture().to_str().unwrap(), "gpu", "4242"]);
    assert_eq!(missing.status.code(), Some(3));
}

#[test]
fn table_and_csv() {
    let root = fixture();
    let out = memtally(&["--proc-root", root.to_str().unwrap(), "gpu"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("machine (each client counted once)"), "{text}");
    let line = text.lines().find(|l| l.contains("/usr/bin/xe-app")).unwrap();
    assert!(line.contains("211M"), "{line}");
    let out = memtally(&["--proc-root", root.to_str().unwrap(), "gpu", "--format", "csv"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("pid,kind,driver,device,pdev,region,total,"), "{text}");
    assert!(text.contains(&format!("200,drm,xe,0000:03:00.0,0000:03:00.0,vram0,{},", 256 * MIB)));
    assert!(text.contains(&format!("200,dmabuf,,,,,{},,,,,2,{},", 4 * MIB, 3 * MIB / 2)));
}

#[test]
fn live_drm_device_shows_the_process() {
    let nodes: Vec<PathBuf> = std::fs::read_dir("/dev/dri")
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("renderD"))
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(node) = nodes.first() else {
        println!("skipped: no /dev/dri/renderD* on this machine");
        return;
    };
    let _held = match std::fs::File::open(node) {
        Ok(f) => f,
        Err(e) => {
            println!("skipped: cannot open {}: {e}", node.display());
            return;
        }
    };
    let me = std::process::id();
    let doc = json_of(&memtally(&["gpu", "--pid", &me.to_string(), "--format", "json"]));
    let p = process(&doc, u64::from(me));
    assert!(p["drm_clients"].as_u64().unwrap() >= 1, "{p}");
}

// ---- capture and recorded trees ----

#[test]
fn capture_records_gpu_fds_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture();
    let out = memtally(&[
        "--proc-root",
        root.to_str().unwrap(),
        "capture",
        "--pid",
        "200",
        "300",
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let targets = std::fs::read_to_string(dir.path().join("200/fd_targets")).unwrap();
    assert_eq!(targets, "3\t/dev/dri/renderD128\n4\t/dmabuf:\n10\t/dmabuf:\n");
    for fd in [3, 4, 10] {
        assert_eq!(
            std::fs::read(dir.path().join(format!("200/fdinfo/{fd}"))).unwrap(),
            std::fs::read(root.join(format!("200/fdinfo/{fd}"))).unwrap()
        );
    }
    let doc = json_of(&memtally(&[
        "--proc-root",
        dir.path().to_str().unwrap(),
        "gpu",
        "--format",
        "json",
    ]));
    let p = process(&doc, 200);
    assert_eq!(
        figures(entry(p, "xe", "vram0")),
        [Some(256 * MIB), Some(16 * MIB), Some(200 * MIB), Some(32 * MIB), Some(64 * MIB)]
    );
    // Only 200 holds the system buffer in this capture; 300 and 200 share the amdgpu one.
    assert_eq!(
        p["dmabuf"],
        serde_json::json!({"count": 2, "size": 4 * MIB, "pss": 3 * MIB + MIB / 2})
    );
    assert_eq!(
        figures(entry(process(&doc, 300), "amdgpu", "vram")),
        [None, None, Some(1024 * MIB), None, None]
    );
}

#[test]
fn live_capture_writes_fd_targets() {
    // This test process holds no GPU fd: the record says so with an empty list.
    let me = std::process::id().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = memtally(&["capture", &me, "-o", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let targets = std::fs::read_to_string(dir.path().join(&me).join("fd_targets")).unwrap();
    assert!(targets.lines().all(|l| l.contains("/dev/dri/") || l.contains("dmabuf")), "{targets}");
}

#[test]
fn recorded_fd_symlinks_and_old_captures() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture().join("400");
    let pid = dir.path().join("400");
    std::fs::create_dir_all(pid.join("fd")).unwrap();
    std::fs::create_dir_all(pid.join("fdinfo")).unwrap();
    for f in ["status", "comm", "cmdline", "maps", "smaps", "smaps_rollup"] {
        std::fs::copy(src.join(f), pid.join(f)).unwrap();
    }
    std::fs::copy(src.join("fdinfo/6"), pid.join("fdinfo/6")).unwrap();
    // A copy that kept the fd/ symlinks (dangling here: no such device).
    std::os::unix::fs::symlink("/dev/dri/renderD129", pid.join("fd/6")).unwrap();
    let root = dir.path().to_str().unwrap();
    let doc = json_of(&memtally(&["--proc-root", root, "gpu", "--format", "json"]));
    assert_eq!(entry(process(&doc, 400), "panthor", "memory")["resident"], 12 * MIB);
    // Without fd/ or fd_targets: recorded before GPU support, and said so.
    std::fs::remove_dir_all(pid.join("fd")).unwrap();
    let doc = json_of(&memtally(&["--proc-root", root, "gpu", "--format", "json"]));
    assert!(doc["processes"].as_array().unwrap().is_empty());
    assert!(doc["notes"].to_string().contains("no record of open files"), "{doc}");
}

#[test]
fn bad_fdinfo_is_a_note_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture().join("301");
    let pid = dir.path().join("301");
    std::fs::create_dir_all(pid.join("fdinfo")).unwrap();
    for f in ["status", "comm", "cmdline", "maps", "smaps", "smaps_rollup", "fd_targets"] {
        std::fs::copy(src.join(f), pid.join(f)).unwrap();
    }
    std::fs::write(
        pid.join("fdinfo/4"),
        b"drm-driver:\tamdgpu\ndrm-client-id:\t53\ndrm-total-vram:\t12 PiB\n\xff\xfe\nno colon here\ndrm-resident-vram:\t4 KiB\n",
    )
    .unwrap();
    let doc = json_of(&memtally(&[
        "--proc-root",
        dir.path().to_str().unwrap(),
        "gpu",
        "--format",
        "json",
    ]));
    let e = entry(process(&doc, 301), "amdgpu", "vram");
    assert_eq!(figures(e), [None, None, Some(4096), None, None]);
    let notes = doc["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].as_str().unwrap().contains("fdinfo/4: drm-total-vram: not a size: 12 PiB"));
}

#[test]
fn show_and_top_carry_gpu_figures() {
    let doc = recorded(&["show", "200", "--format", "json"]);
    let gpu = &doc["gpu"];
    let vram = gpu["entries"].as_array().unwrap().iter().find(|e| e["region"] == "vram0").unwrap();
    assert_eq!(
        figures(vram),
        [Some(256 * MIB), Some(16 * MIB), Some(200 * MIB), Some(32 * MIB), Some(64 * MIB)]
    );
    assert_eq!(gpu["dmabuf"], serde_json::json!({"count": 2, "size": 4 * MIB, "pss": 3 * MIB / 2}));
    assert_eq!(gpu["reclaimable"], 32 * MIB + 64 * KIB);
    // Two processes sharing one client: its purgeable bytes count once.
    let both = recorded(&["show", "--pid", "100", "101", "--format", "json"]);
    let sys = both["gpu"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["region"] == "system0")
        .unwrap();
    assert_eq!(sys["resident"], 20 * MIB);
    assert_eq!(sys["proportional"], 20 * MIB);
    assert_eq!(both["gpu"]["reclaimable"], 2 * MIB);
    let root = fixture();
    let text =
        String::from_utf8(memtally(&["--proc-root", root.to_str().unwrap(), "show", "200"]).stdout)
            .unwrap();
    let vram = text.lines().find(|l| l.starts_with("GPU xe 0000:03:00.0 vram0")).unwrap();
    assert!(vram.contains("200M") && vram.contains("256M"), "{vram}");

    let csv = String::from_utf8(
        memtally(&["--proc-root", root.to_str().unwrap(), "show", "200", "--format", "csv"]).stdout,
    )
    .unwrap();
    let after_total: Vec<&str> =
        csv.lines().skip_while(|l| !l.starts_with("total,")).skip(1).collect();
    assert_eq!(after_total.len(), 4, "{csv}");
    assert!(after_total[2].starts_with("GPU xe 0000:03:00.0 vram0,,"), "{csv}");
    assert!(after_total[2].contains(&(200 * MIB).to_string()), "{csv}");
    assert!(after_total[3].starts_with("GPU dma-buf (2),,"), "{csv}");

    let top = recorded(&["top", "--format", "json", "--sort", "gpu"]);
    let rows = top["rows"].as_array().unwrap();
    let order: Vec<u64> = rows.iter().map(|r| r["pid"].as_u64().unwrap()).collect();
    assert_eq!(order, vec![300, 200, 301, 400, 100, 101, 500]);
    assert_eq!(rows[1]["gpu"], 211 * MIB);
    assert_eq!(rows[6]["gpu"], 0);
    assert_eq!(top["totals"]["gpu"], 1357 * MIB);
    let text = String::from_utf8(memtally(&["--proc-root", root.to_str().unwrap(), "top"]).stdout)
        .unwrap();
    assert!(text.lines().next().unwrap().contains("GPU"), "{text}");
    // Without GPU memory (the recorded trees of testdata/fixtures/linux) there is no column.
    let plain = crate::support::repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let text = String::from_utf8(memtally(&["--proc-root", plain.to_str().unwrap(), "top"]).stdout)
        .unwrap();
    assert!(!text.lines().next().unwrap().contains("GPU"), "{text}");
}
