//! `report --redact` hides the host name, the names of programs that are
//! not installed system programs (a tool under a home directory), and the
//! names of temporary files and shared memory objects outside home
//! (`/tmp/…`, `memfd:…`), everywhere the page shows them: the title, the
//! treemap, the table, the groups and the embedded snapshot. An installed
//! program (`/usr/lib/chromium/chromium`) keeps its name.

use std::path::Path;

use crate::support::copied_fixture;

/// The recorded chromium beside a copy of it run from a home directory
/// as `secret-tool`, on a host named `ann-laptop`.
fn tree() -> (tempfile::TempDir, String) {
    let (tmp, dir) = copied_fixture("chromium-browser");
    let (from, to) = (dir.join("11672"), dir.join("5000"));
    std::fs::create_dir_all(&to).unwrap();
    for f in std::fs::read_dir(&from).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
    }
    let edit = |name: &str, from: &str, to_: &str| {
        let p = to.join(name);
        let text = std::fs::read_to_string(&p).unwrap().replace(from, to_);
        std::fs::write(p, text).unwrap();
    };
    edit("comm", "chromium", "secret-tool");
    edit("status", "Name:\tchromium", "Name:\tsecret-tool");
    edit("status", "11672", "5000");
    edit("stat", "11672 (chromium)", "5000 (secret-tool)");
    std::fs::write(to.join("cmdline"), "/home/ann/bin/secret-tool\0--token\0s3cret\0").unwrap();
    std::fs::create_dir_all(dir.join("sys/kernel")).unwrap();
    std::fs::write(dir.join("sys/kernel/hostname"), "ann-laptop\n").unwrap();
    (tmp, dir.to_str().unwrap().to_string())
}

fn page(root: &str, dir: &Path, redact: bool) -> (String, serde_json::Value) {
    let mut args = vec!["--proc-root", root];
    if redact {
        args.push("--redact");
    }
    let page = crate::report::report(dir, if redact { "red.html" } else { "plain.html" }, &args);
    (std::fs::read_to_string(&page).unwrap(), crate::report::embedded(&page))
}

#[test]
fn redact_hides_the_host_home_programs_and_temporary_names() {
    let (_tmp, root) = tree();
    let dir = tempfile::tempdir().unwrap();
    let secrets = ["ann-laptop", "secret-tool", "s3cret", "tmp.s39Duac0uT", "shared-memory-region"];
    // Unredacted, each is on the page: the test can fail.
    let (plain, _) = page(&root, dir.path(), false);
    for s in secrets {
        assert!(plain.contains(s), "{s} on the plain page");
    }
    let (red, json) = page(&root, dir.path(), true);
    for s in secrets {
        assert!(!red.contains(s), "{s} left in the redacted page");
    }
    assert_eq!(json["host"], "<host>");
    assert!(red.contains("<title>memtally report: &lt;host&gt;"), "the title names no host");
    let procs = json["processes"].as_array().unwrap();
    let by_pid = |pid: u64| procs.iter().find(|p| p["pid"] == pid).unwrap();
    assert_eq!(by_pid(5000)["comm"], "<prog1>");
    assert_eq!(by_pid(11672)["comm"], "chromium", "an installed program keeps its name");
    // The table, the treemap's process and group boxes.
    assert!(red.contains(r#"data-label="&lt;prog1&gt; (5000)""#), "the process box");
    assert!(red.contains(r#"data-label="&lt;prog1&gt;""#), "the program group");
    assert!(red.contains(r#"data-label="chromium (11672)""#));
    // Mappings in /tmp and memfd: keep their directory, lose their name.
    let paths: Vec<&str> = by_pid(11672)["regions"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["path"].as_str()).collect())
        .unwrap_or_default();
    assert!(paths.iter().any(|p| p.starts_with("/tmp/<path")), "{paths:?}");
    assert!(paths.iter().any(|p| p.starts_with("/memfd:<path") && p.ends_with(" (deleted)")));
    assert!(paths.iter().any(|p| p.starts_with("/usr/lib/chromium/")), "system paths stay");
}
