//! `report --faults-input`: a recording `faults --format json` saved,
//! drawn beside the recorded python3 as the page's faults section. Each
//! category and mapping box of the traced process links to the stacks
//! that filled it; the section keeps to its share of the size budget;
//! `--redact` hides its private names as the rest of the page's; a file
//! that is no recording is one error line. (The live `report --faults`,
//! on a C child: tests/cli/report_faults.rs.)

use std::path::Path;

use serde_json::{json, Value};

use super::{repo_path, run};

fn python_root() -> String {
    repo_path("testdata/fixtures/linux/python3-mmap/proc")
}

/// A stack of `frames` (innermost first) that wrote `bytes`.
fn stack(frames: &[&str], bytes: u64) -> Value {
    json!({"frames": frames, "bytes": bytes, "write": bytes, "read": 0, "unknown": 0})
}

/// A recording of the python3 fixture (PID 11364) as `faults --format
/// json` prints it: its heap filled by `list_append` and the interpreter
/// (a frame without a symbol in its binary under /root), a temporary file
/// by `fill_file`; `extra` more heap stacks of 31 frames, their names
/// `frame_len` characters and more.
fn recording(dir: &Path, extra: usize, frame_len: usize) -> String {
    let mut heap_stacks = vec![
        stack(&["list_append", "python3.11+0x1234", "main"], 6 << 20),
        stack(&["PyObject_Malloc", "main"], 2 << 20),
    ];
    for i in 0..extra {
        let names: Vec<String> =
            (0..30).map(|j| format!("f{i}_{j}_{}", "x".repeat(frame_len))).collect();
        let mut frames: Vec<&str> = names.iter().map(String::as_str).collect();
        frames.push("main");
        heap_stacks.push(stack(&frames, 4096));
    }
    let heap_bytes = (8 << 20) + 4096 * extra as u64;
    let total = heap_bytes + (1 << 20);
    let doc = json!({
        "schema": 1, "seconds": 2.0, "sample_period": 1, "page_size": 4096,
        "samples": total / 4096, "lost": 0, "kernel_faults_seen": true,
        "bytes": total, "write": total, "read": 0, "unknown": 0,
        "processes": [{"pid": 11364, "command": "python3",
                       "bytes": total, "write": total, "read": 0, "unknown": 0}],
        "categories": [
            {"category": "heap", "bytes": heap_bytes, "write": heap_bytes, "read": 0, "unknown": 0,
             "stacks": heap_stacks, "stacks_total": heap_stacks.len(),
             "mappings": [{"mapping": "[heap]", "bytes": heap_bytes, "write": heap_bytes,
                           "read": 0, "unknown": 0, "stacks": heap_stacks,
                           "stacks_total": heap_stacks.len()}]},
            {"category": "file_data", "bytes": 1 << 20, "write": 1 << 20, "read": 0, "unknown": 0,
             "stacks": [stack(&["fill_file", "main"], 1 << 20)], "stacks_total": 1,
             "mappings": [{"mapping": "/tmp/pyfix data.bin", "bytes": 1 << 20,
                           "write": 1 << 20, "read": 0, "unknown": 0,
                           "stacks": [stack(&["fill_file", "main"], 1 << 20)],
                           "stacks_total": 1}]}
        ]
    });
    let path = dir.join("faults.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

/// The page of the python3 fixture with the recording, and `args`.
fn page(dir: &Path, faults: &str, args: &[&str]) -> String {
    let root = python_root();
    let mut all = vec!["--proc-root", &root, "report", "--faults-input", faults];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(out.status.success(), "report: {}", String::from_utf8_lossy(&out.stderr));
    let html = String::from_utf8(out.stdout).unwrap();
    std::fs::write(dir.join("page.html"), &html).unwrap();
    html
}

/// The treemap box of `label_start` (its `data-label`'s start), its
/// `data-faults`.
fn box_link<'a>(html: &'a str, label_start: &str) -> Option<&'a str> {
    let at = html.find(&format!(r#"data-label="{label_start}"#))?;
    let open = html[..at].rfind("<rect ")?;
    let rect = &html[open..at];
    let from = rect.find(r#"data-faults=""#)? + r#"data-faults=""#.len();
    Some(&rect[from..from + rect[from..].find('"')?])
}

#[test]
fn each_box_links_to_the_stacks_that_filled_it() {
    let dir = tempfile::tempdir().unwrap();
    let faults = recording(dir.path(), 0, 0);
    let html = page(dir.path(), &faults, &[]);
    assert!(html.contains(r##"<section id="faults">"##), "a faults section");
    assert!(html.contains(r##"<a href="#faults">faults</a>"##), "in the page's menu");
    // The category box and the [heap] mapping box link to their entries.
    assert_eq!(box_link(&html, "heap / anon rw"), Some("faults-heap"));
    assert_eq!(box_link(&html, "[heap] @"), Some("faults-heap-m0"));
    assert_eq!(box_link(&html, "file writable data"), Some("faults-file_data"));
    // A box the recording has no fault in links nowhere.
    assert_eq!(box_link(&html, "[stack] @"), None);
    // The entries: the stacks, innermost first, with their bytes.
    let heap = &html[html.find(r#"<h4 id="faults-heap-m0">"#).expect("the [heap] entry")..];
    let row = &heap[..heap.find("</tr></tbody>").unwrap()];
    assert!(row.contains("list_append &lt; python3.11+0x1234 &lt; main"), "{row}");
    assert!(row.contains(r#"data-v="6291456">6.0M"#), "{row}");
    assert!(html.contains(r#"<h4 id="faults-file_data-m0"><code>/tmp/pyfix data.bin</code>"#));
    // The script the page runs shows the link under the path.
    assert!(html.contains("getAttribute('data-faults')"));
    // The page carries its recording: read back (`--input`, and as
    // `--diff`'s B, whose page it draws) it has the same section.
    let saved = dir.path().join("page.html");
    let saved = saved.to_str().unwrap();
    let again = run(&["report", "--input", saved]);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let again = String::from_utf8(again.stdout).unwrap();
    assert_eq!(section(&again), section(&html), "the section, read back");
    assert_eq!(box_link(&again, "[heap] @"), Some("faults-heap-m0"));
    let diffed = run(&["report", "--diff", saved, saved]);
    assert!(diffed.status.success(), "{}", String::from_utf8_lossy(&diffed.stderr));
    let diffed = String::from_utf8(diffed.stdout).unwrap();
    assert_eq!(section(&diffed), section(&html), "the section of --diff's B");
    // A page without a recording has no section read back.
    let root = python_root();
    let plain = run(&["--proc-root", &root, "report"]);
    let plain_page = dir.path().join("plain.html");
    std::fs::write(&plain_page, &plain.stdout).unwrap();
    let plain = run(&["report", "--input", plain_page.to_str().unwrap()]);
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    assert_eq!(section(&String::from_utf8(plain.stdout).unwrap()), None);
}

/// The page's faults section, if it has one.
fn section(html: &str) -> Option<&str> {
    let at = html.find(r#"<section id="faults">"#)?;
    Some(&html[at..at + html[at..].find("</section>")?])
}

#[test]
fn redact_hides_the_sections_private_names_and_keeps_the_links() {
    let dir = tempfile::tempdir().unwrap();
    let faults = recording(dir.path(), 0, 0);
    let plain = page(dir.path(), &faults, &[]);
    let secrets = ["pyfix data.bin", "/root/.pyenv", "python3.11+0x1234", "python3 (11364)"];
    for s in secrets {
        assert!(plain.contains(s), "{s} on the plain page");
    }
    let red = page(dir.path(), &faults, &["--redact"]);
    for s in secrets {
        assert!(!red.contains(s), "{s} left on the redacted page");
    }
    // The temporary file's placeholder is the snapshot's, the boxes still
    // link to their entries; the binary's frame names its placeholder.
    let file = r#"<h4 id="faults-file_data-m0"><code>"#;
    let at = red.find(file).expect("the file's entry") + file.len();
    let name = &red[at..at + red[at..].find("</code>").unwrap()];
    assert!(name.starts_with("/tmp/&lt;path"), "{name}");
    let embedded = name.replace("&lt;", "\\u003c").replace("&gt;", ">");
    assert!(red.contains(&format!(r#""path":"{embedded}""#)), "{embedded} in the snapshot");
    assert_eq!(box_link(&red, "[heap] @"), Some("faults-heap-m0"));
    assert_eq!(box_link(&red, "file writable data"), Some("faults-file_data"));
    assert!(red.contains("list_append &lt; ~/&lt;path"), "the binary's frame redacted");
    assert!(red.contains("&lt;prog1&gt; (11364)"), "the process's name");
    assert!(red.contains("list_append") && red.contains("fill_file"), "functions stay");
}

#[test]
fn the_section_keeps_to_its_share_of_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    // 400 stacks of 31 frames of 200-character names: some 5 KiB a stack
    // as the section cuts them (24 frames of 160 characters).
    let faults = recording(dir.path(), 400, 200);
    let html = page(dir.path(), &faults, &["--max-size", "400K"]);
    assert!(html.len() <= 400 << 10, "the page is {} bytes", html.len());
    let at = html.find(r#"<section id="faults">"#).expect("a faults section");
    let section = &html[at..at + html[at..].find("</section>").unwrap()];
    assert!(section.len() <= (400 << 10) / 8, "the section is {} bytes", section.len());
    // The largest stacks stay (fewer than the 10 of a large budget, in
    // the category's table and the mapping's); the rest are one row with
    // their count.
    assert!(section.contains("list_append"), "the largest stack");
    let heap = &section[section.find(r#"<h3 id="faults-heap">"#).unwrap()..];
    let heap = &heap[..heap.find("<h4").unwrap()];
    let rows = heap.matches(r#"<td class="stack">"#).count();
    assert!((1..10).contains(&rows), "{rows} stacks a box");
    let other = heap.split(" other stacks</td>").next().expect("the rest folded");
    let count: usize = other.rsplit('>').next().unwrap().parse().unwrap();
    assert_eq!(count, 402 - rows, "every stack shown or counted");
    if rows > 2 {
        assert!(section.contains("… 7 frames more"), "the outer frames counted");
    }
    // The page carries only the stacks it shows (its recording is 2.5 MB):
    // read back, it draws the same section, within the same budget.
    let again = run(&[
        "report",
        "--input",
        dir.path().join("page.html").to_str().unwrap(),
        "--max-size",
        "400K",
    ]);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let again = String::from_utf8(again.stdout).unwrap();
    assert!(again.len() <= 400 << 10, "the page read back is {} bytes", again.len());
    let at = again.find(r#"<section id="faults">"#).expect("its faults section");
    assert_eq!(&again[at..at + again[at..].find("</section>").unwrap()], section);
}

#[test]
fn a_file_that_is_no_recording_is_one_error_line() {
    let root = python_root();
    let snapshot = repo_path("testdata/fixtures/linux/python3-mmap/proc/11364/smaps");
    let out = run(&["--proc-root", &root, "report", "--faults-input", &snapshot]);
    assert_eq!(out.status.code(), Some(5), "bad input");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not a page-fault recording (the JSON document `memtally faults` prints)"),
        "{err}"
    );
}

#[test]
fn recording_faults_takes_a_selection() {
    let out = run(&["report", "--faults", "1s"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("memtally: report --faults records the faults of a PID"), "{err}");
    let out = run(&["report", "--faults", "0s", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
