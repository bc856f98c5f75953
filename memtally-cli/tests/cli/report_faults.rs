//! `report PID --faults DURATION` on a live C child (faults.rs's): the
//! page's faults section names the function that filled the child's heap
//! under its heap box, and the box links there.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use crate::support::{memtally, Killed};

/// The `data-faults` of the treemap box whose label starts `label_start`
/// (the page is of the child alone).
fn box_link(html: &str, label_start: &str) -> Option<String> {
    html.split("<rect ").find_map(|rect| {
        let rect = &rect[..rect.find('>')?];
        if !rect.contains(&format!(r#"data-label="{label_start}"#)) {
            return None;
        }
        let attr = r#"data-faults=""#;
        let at = rect.find(attr)? + attr.len();
        Some(rect[at..at + rect[at..].find('"')?].to_string())
    })
}

#[test]
fn the_faults_section_names_the_function_under_the_heap_box() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("grow.c");
    std::fs::write(&src, crate::faults::CHILD_C).unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, vec![0u8; 8 << 20]).unwrap();
    let exe = dir.path().join("grow");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args(["-O2", "-g", "-fno-omit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(&src)
        .status();
    assert!(built.is_ok_and(|s| s.success()), "{cc} builds the test child");
    let mut child =
        Command::new(&exe).arg(&file).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let child = Killed(child);
    let pid = child.0.id();
    let mut ready = [0u8; 6];
    out.read_exact(&mut ready).unwrap();
    let page = dir.path().join("page.html");
    let mut rec = memtally()
        .args(["report", &pid.to_string(), "--faults", "60s", "-o"])
        .arg(&page)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(rec.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    if !line.starts_with("recording") {
        let status = rec.wait().unwrap();
        assert_eq!(status.code(), Some(4), "only a refusal skips: {line}");
        eprintln!("skipped: page faults cannot be sampled here: {line}");
        return;
    }
    // Processes started meanwhile beside it (not by it) are not traced.
    for _ in 0..20 {
        let _ = Command::new("sh").args(["-c", "true"]).status();
    }
    stdin.write_all(b"x").unwrap();
    let mut done = [0u8; 5];
    out.read_exact(&mut done).unwrap();
    assert_eq!(&done, b"done\n");
    // Every fault is in once the child says so: Ctrl-C ends the recording
    // there (a fixed window ended before a loaded machine's child did).
    assert_eq!(unsafe { libc::kill(rec.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = rec.wait().unwrap();
    assert_eq!(status.code(), Some(130), "report --faults, ended by SIGINT: {line}{rest}");
    drop(child);
    let html = std::fs::read_to_string(&page).unwrap();
    // The recording is of the child alone.
    let summary = &html[html.find(r#"<p id="faults-summary">"#).expect("the summary")..];
    let who = &summary[..summary.find(" over ").unwrap()];
    assert!(who.ends_with(&format!("of grow ({pid})")), "{who}");
    assert_eq!(who.matches(" (").count(), 1, "one process: {who}");
    // The heap box of the child links to the heap's entry, and there the
    // largest stack is touch_heap's (48 MiB written), innermost first.
    assert_eq!(box_link(&html, "heap / anon rw").as_deref(), Some("faults-heap"), "{html}");
    let at = html.find(r#"<h3 id="faults-heap">"#).expect("the heap's entry");
    let heap = &html[at..];
    let first = &heap[heap.find(r#"<td class="stack"><code>"#).unwrap()..];
    assert!(
        first.starts_with(r#"<td class="stack"><code>touch_heap &lt; main"#),
        "{}",
        &first[..200]
    );
    // Its largest mapping (the 48 MiB malloc took with mmap) has an entry,
    // and it is touch_heap's too.
    let m0 = &html[html.find(r#"<h4 id="faults-heap-m0">"#).expect("the mapping's entry")..];
    let first = &m0[m0.find(r#"<td class="stack"><code>"#).unwrap()..];
    assert!(first.starts_with(r#"<td class="stack"><code>touch_heap"#), "{}", &first[..200]);
    assert!(html.contains("touch_anon") && html.contains("write_file"), "the other two");
}
