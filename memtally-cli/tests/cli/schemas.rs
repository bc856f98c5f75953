//! The JSON Schemas in docs/schema/ against the types and against real
//! outputs. The committed files are what `memtally schema NAME` builds
//! from the Rust types (`MEMTALLY_BLESS=1` rewrites them when a type
//! changes); every JSON output, on the recorded fixtures and on a live
//! child, validates against its schema; and a planted wrong output (a
//! string where a number is due, a key no schema names, the version
//! missing) does not.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{lone::lone, repo, repo_path, run, shared};

/// docs/schema/NAME.json.
fn file(name: &str) -> PathBuf {
    repo().join("docs/schema").join(format!("{name}.json"))
}

/// The committed schemas' names (docs/schema/NAME.json, sorted); that
/// they are the ones `memtally schema --list` gives is the first test.
fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("docs/schema"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".json").map(String::from))
        .collect();
    names.sort();
    names
}

/// `memtally schema` is a developer's command, in the binary only with
/// the `schema` feature: the tests that build schemas need it
/// (`cargo test --locked --features memtally-cli/schema`, as .ci/run runs).
#[cfg(feature = "schema")]
#[test]
fn committed_schemas_are_the_ones_the_types_give() {
    let bless = std::env::var_os("MEMTALLY_BLESS").is_some_and(|v| v == "1");
    let out = run(&["schema", "--list"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<String> =
        String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
    assert!(names.len() >= 11, "every JSON output has a schema: {names:?}");
    let mut drifted = Vec::new();
    for name in &names {
        let out = run(&["schema", name]);
        assert!(out.status.success(), "schema {name}: {}", String::from_utf8_lossy(&out.stderr));
        let built: Value = serde_json::from_slice(&out.stdout).expect("a schema is JSON");
        assert!(jsonschema::meta::is_valid(&built), "schema {name} is not a valid JSON Schema");
        if bless {
            std::fs::write(file(name), &out.stdout).unwrap();
        } else if std::fs::read(file(name)).ok().as_deref() != Some(&out.stdout[..]) {
            drifted.push(name.clone());
        }
    }
    assert!(
        drifted.is_empty(),
        "docs/schema/ differs from the types for {drifted:?}: run \
         `MEMTALLY_BLESS=1 cargo test -p memtally-cli --features schema --test cli -- schemas::committed` \
         and commit docs/schema/"
    );
    let mut stray: Vec<String> = std::fs::read_dir(repo().join("docs/schema"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| !names.iter().any(|n| *f == format!("{n}.json")))
        .collect();
    stray.sort();
    assert!(stray.is_empty(), "docs/schema/ holds files no output has: {stray:?}");
}

/// Each command that prints JSON (or writes a JSON file), and the schemas
/// of what it prints.
const COMMAND_SCHEMAS: &[(&str, &[&str])] = &[
    ("top", &["top"]),
    ("show", &["show", "show-classic", "show-pages", "show-exact"]),
    ("shared", &["shared"]),
    ("files", &["files"]),
    ("snapshot", &["snapshot"]),
    ("diff", &["diff"]),
    ("watch", &["watch"]),
    ("wss", &["wss"]),
    ("faults", &["faults"]),
    ("vmmap", &["vmmap"]),
    ("gpu", &["gpu"]),
    ("machine", &["machine"]),
    ("cgroup", &["cgroup"]),
];

/// A new command with `--format json` and no schema fails here: every
/// command's `--help` is read, and each that takes `--format` must be
/// in [`COMMAND_SCHEMAS`], whose schemas must exist.
#[test]
fn every_command_that_prints_json_has_a_schema() {
    let pages = run(&["man", "--list"]);
    assert!(pages.status.success());
    let names = names();
    let commands: Vec<String> = String::from_utf8(pages.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("memtally-").map(String::from))
        .collect();
    assert!(commands.len() >= 10, "the commands are listed: {commands:?}");
    for c in &commands {
        let help = run(&[c.as_str(), "--help"]);
        let takes_format = String::from_utf8_lossy(&help.stdout).contains("--format <FORMAT>");
        let schemas = COMMAND_SCHEMAS.iter().find(|(name, _)| name == c).map(|(_, s)| *s);
        assert!(
            !takes_format || schemas.is_some(),
            "`memtally {c}` takes --format and has no schema in docs/schema/ (render/schema.rs)"
        );
        for s in schemas.unwrap_or_default() {
            assert!(names.iter().any(|n| n == s), "`memtally {c}`: no schema {s}");
        }
    }
}

/// Without the feature (the installed binary) there is no such command.
#[cfg(not(feature = "schema"))]
#[test]
fn the_installed_binary_has_no_schema_command() {
    let out = run(&["schema", "--list"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognized subcommand 'schema'"));
    eprintln!(
        "schemas: the committed schemas are not compared with the types here: \
         `cargo test --locked --features memtally-cli/schema` does"
    );
}

#[cfg(feature = "schema")]
#[test]
fn an_unknown_schema_name_is_a_usage_error() {
    let out = run(&["schema", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the schemas are top, show"));
}

/// The committed schema `name`, compiled.
fn validator(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(file(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("schema {name}: {e}"))
}

/// What is wrong with `doc` by the schema `name` (empty when it is valid).
/// Each schema is compiled once a thread: a snapshot file is checked line
/// by line, and compiling the schema for every line took most of the run.
pub(crate) fn errors(name: &str, doc: &Value) -> Vec<String> {
    thread_local! {
        static COMPILED: std::cell::RefCell<std::collections::HashMap<String, jsonschema::Validator>> =
            Default::default();
    }
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        let v = c.entry(name.to_string()).or_insert_with(|| validator(name));
        v.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
    })
}

/// Runs memtally (it must succeed) and checks each JSON document it
/// prints (one, or one a line) against the schema `name`; what fails is
/// added to `bad`.
fn check(name: &str, args: &[&str], bad: &mut Vec<String>) -> Vec<Value> {
    checked(name, args, &run(args), bad)
}

/// [`check`] of a run's output.
fn checked(
    name: &str,
    args: &[&str],
    out: &std::process::Output,
    bad: &mut Vec<String>,
) -> Vec<Value> {
    assert!(out.status.success(), "memtally {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::str::from_utf8(&out.stdout).expect("UTF-8");
    let docs: Vec<Value> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}")))
        .collect();
    assert!(!docs.is_empty(), "memtally {args:?} printed no JSON");
    for d in &docs {
        for e in errors(name, d) {
            bad.push(format!("{name} {args:?}: {e}"));
        }
    }
    docs
}

/// Every (schema, arguments) run, four at a time (each run is mostly a
/// process started and waited for), then [`checked`] in their order.
fn check_all(cases: &[(&str, Vec<String>)], bad: &mut Vec<String>) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outs = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((_, args)) = cases.get(i) else { break };
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let out = run(&args);
                outs.lock().unwrap().push((i, out));
            });
        }
    });
    let mut outs = outs.into_inner().unwrap();
    assert_eq!(outs.len(), cases.len(), "every case ran");
    outs.sort_by_key(|o| o.0);
    for ((name, args), (_, out)) in cases.iter().zip(&outs) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        checked(name, &args, out, bad);
    }
}

/// The recorded /proc trees, each with the PIDs it holds.
fn proc_roots() -> Vec<(String, Vec<String>)> {
    let mut dirs: Vec<PathBuf> =
        ["chromium-browser", "chromium-renderer", "gst-launch-audiotestsrc", "python3-mmap"]
            .iter()
            .map(|f| repo().join("testdata/fixtures/linux").join(f).join("proc"))
            .collect();
    dirs.push(repo().join("testdata/fixtures/linux-variants/hugetlb/proc"));
    match shared() {
        Some(s) => dirs.push(s.join("fixtures/linux/gst-launch/proc")),
        None => eprintln!("skipping ../shared/fixtures/linux: no ../shared beside the repository"),
    }
    dirs.iter()
        .map(|d| {
            let mut pids: Vec<String> = std::fs::read_dir(d)
                .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
                .collect();
            pids.sort();
            (d.display().to_string(), pids)
        })
        .collect()
}

#[test]
fn recorded_outputs_match_their_schemas() {
    let mut bad = Vec::new();
    let owned = |args: &[&str]| -> Vec<String> { args.iter().map(|s| s.to_string()).collect() };
    // Snapshots of different trees, diffed: regions that appear and vanish.
    let snaps = tempfile::tempdir().unwrap();
    let mut taken_snaps = Vec::new();
    let mut cases = Vec::new();
    for (root, pids) in proc_roots() {
        let r = |rest: &[&str]| -> Vec<String> {
            ["--proc-root", root.as_str()].iter().chain(rest).map(|s| s.to_string()).collect()
        };
        cases.extend([
            ("top", r(&["top", "--format", "json"])),
            ("top", r(&["top", "--all", "--format", "json"])),
            ("top", r(&["top", "--sort", "rss,pss_dirty", "--format", "json"])),
            ("machine", r(&["machine", "--format", "json"])),
        ]);
        for by in ["program", "user", "cgroup", "tree"] {
            cases.push(("top", r(&["top", "--by", by, "--format", "json"])));
        }
        for pid in &pids {
            cases.push(("show", r(&["show", pid, "--format", "json"])));
            cases.push(("show", r(&["show", pid, "--by", "path", "--format", "json"])));
            cases.push(("show-classic", r(&["show", pid, "--classic", "--format", "json"])));
            cases.push(("show", r(&["show", pid, "--regions", "--format", "json"])));
            cases.push(("show", r(&["show", "--tree", pid, "--format", "json"])));
        }
        let mut several = r(&["show", "--pid"]);
        several.extend(pids.iter().cloned());
        several.extend(["--format".into(), "json".into()]);
        cases.push(("show", several));
        let mut watch = r(&["watch", "--pid", &pids[0], "--count", "2", "--interval", "10ms"]);
        watch.extend(["--format".into(), "json".into()]);
        cases.push(("watch", watch));
        // A snapshot of every process, and the diff of it with itself.
        let snap = snaps.path().join(format!("{}.json", taken_snaps.len()));
        let mut take = vec!["--proc-root", root.as_str(), "snapshot"];
        take.extend(pids.iter().map(String::as_str));
        take.extend(["-o", snap.to_str().unwrap()]);
        let taken = run(&take);
        assert!(taken.status.success(), "{take:?}: {}", String::from_utf8_lossy(&taken.stderr));
        snapshot_file(&snap, &mut bad);
        let s = snap.to_str().unwrap();
        cases.push(("diff", owned(&["diff", s, s, "--format", "json"])));
        taken_snaps.push(s.to_string());
    }
    for pair in taken_snaps.windows(2) {
        cases.push(("diff", owned(&["diff", &pair[0], &pair[1], "--format", "json"])));
    }
    let gpu = repo_path("testdata/fixtures/gpu/machine");
    cases.push(("gpu", owned(&["--proc-root", &gpu, "gpu", "--format", "json"])));
    let chromium = repo_path("testdata/fixtures/linux/chromium-browser/proc");
    cases.push(("files", owned(&["--proc-root", &chromium, "files", "--format", "json"])));
    let v1 = repo_path("testdata/fixtures/cgroup-v1-root");
    cases.push(("cgroup", owned(&["--proc-root", &v1, "cgroup", "--format", "json"])));
    let vmmap = vmmap_files();
    // Two vmmap reports diffed (the `vmmap` footprint key, purge changes).
    for pair in vmmap.windows(2) {
        let (a, b) = (pair[0].to_str().unwrap(), pair[1].to_str().unwrap());
        cases.push(("diff", owned(&["diff", a, b, "--format", "json"])));
    }
    for f in vmmap {
        let f = f.to_str().unwrap();
        cases.push(("vmmap", owned(&["vmmap", f, "--format", "json"])));
        cases.push(("vmmap", owned(&["vmmap", f, "--by", "type", "--format", "json"])));
        cases.push(("vmmap", owned(&["vmmap", f, "--regions", "--format", "json"])));
    }
    check_all(&cases, &mut bad);
    assert!(bad.is_empty(), "outputs that do not match their schema:\n{}", bad.join("\n"));
}

/// Each line of the snapshot file at `path` against the snapshot schema.
fn snapshot_file(path: &Path, bad: &mut Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.lines().count() > 2, "a head, records and an end: {}", path.display());
    for (i, line) in text.lines().enumerate() {
        let doc: Value = serde_json::from_str(line).expect("one JSON object a line");
        for e in errors("snapshot", &doc) {
            bad.push(format!("snapshot {} line {}: {e}", path.display(), i + 1));
        }
    }
}

/// The recorded vmmap outputs: the repository's, and the published ones
/// in ../shared where this checkout has them.
fn vmmap_files() -> Vec<PathBuf> {
    let mut dirs = vec![repo().join("testdata/fixtures/vmmap")];
    match shared() {
        Some(s) => dirs.push(s.join("fixtures/vmmap")),
        None => eprintln!("skipping ../shared/fixtures/vmmap: no ../shared beside the repository"),
    }
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with("mem_usage"))
        .filter(|p| run(&["vmmap", p.to_str().unwrap(), "--format", "json"]).status.success())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the vmmap fixtures are there: {files:?}");
    files
}

#[test]
fn live_outputs_match_their_schemas() {
    let child = lone(8 << 20);
    let pid = child.child.0.id().to_string();
    let mut bad = Vec::new();
    check("show", &["show", &pid, "--format", "json"], &mut bad);
    check("show-classic", &["show", &pid, "--classic", "--format", "json"], &mut bad);
    check("top", &["top", "--format", "json"], &mut bad);
    check("top", &["top", "--by", "program", "--format", "json"], &mut bad);
    check("machine", &["machine", "--format", "json"], &mut bad);
    check("cgroup", &["cgroup", "--format", "json"], &mut bad);
    check("gpu", &["gpu", "--format", "json"], &mut bad);
    check("wss", &["wss", &pid, "--interval", "50ms", "--format", "json"], &mut bad);
    check("faults", &["faults", &pid, "--for", "100ms", "--format", "json"], &mut bad);
    // The page-level documents (root: page frame numbers).
    check("show-pages", &["show", &pid, "--pages", "--format", "json"], &mut bad);
    check("show-exact", &["show", "--pid", &pid, "--exact", "--format", "json"], &mut bad);
    check("top", &["top", "--pid", &pid, "--exact", "--format", "json"], &mut bad);
    check("shared", &["shared", "--pid", &pid, "--format", "json"], &mut bad);
    let lines = check(
        "watch",
        &["watch", "--pid", &pid, "--count", "2", "--interval", "50ms", "--format", "json"],
        &mut bad,
    );
    assert_eq!(lines.len(), 3, "two samples and the summary");
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("live.json");
    let taken = run(&["snapshot", &pid, "-o", snap.to_str().unwrap()]);
    assert!(taken.status.success(), "{}", String::from_utf8_lossy(&taken.stderr));
    snapshot_file(&snap, &mut bad);
    let s = snap.to_str().unwrap();
    check("diff", &["diff", s, s, "--format", "json"], &mut bad);
    assert!(bad.is_empty(), "outputs that do not match their schema:\n{}", bad.join("\n"));
}

#[test]
fn a_planted_wrong_output_fails_its_schema() {
    let python = repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let mut bad = Vec::new();
    let top =
        check("top", &["--proc-root", &python, "top", "--format", "json"], &mut bad).remove(0);
    let show =
        check("show", &["--proc-root", &python, "show", "11364", "--format", "json"], &mut bad)
            .remove(0);
    assert!(bad.is_empty(), "the real outputs are valid: {bad:?}");
    let planted = |doc: &Value, change: &dyn Fn(&mut Value)| {
        let mut d = doc.clone();
        change(&mut d);
        d
    };
    let wrong: Vec<(&str, &str, Value)> = vec![
        ("top", "a PID as a string", planted(&top, &|d| d["processes"][0]["pid"] = "11364".into())),
        ("top", "a key no schema names", planted(&top, &|d| d["undocumented"] = 1.into())),
        (
            "top",
            "no schema version",
            planted(&top, &|d| {
                d.as_object_mut().unwrap().remove("schema");
            }),
        ),
        ("top", "another schema version", planted(&top, &|d| d["schema"] = 2.into())),
        ("show", "a size as a string", planted(&show, &|d| d["totals"]["pss"] = "4096".into())),
        ("show", "a negative size", planted(&show, &|d| d["regions"][0]["rss"] = (-1).into())),
        (
            "show",
            "an unknown category key",
            planted(&show, &|d| d["categories"][0]["colour"] = "red".into()),
        ),
        (
            "show",
            "a region's start as a string",
            planted(&show, &|d| d["regions"][0]["start"] = "0x400000".into()),
        ),
    ];
    for (name, what, doc) in wrong {
        assert!(!errors(name, &doc).is_empty(), "{name} with {what} passes its schema");
    }
}
