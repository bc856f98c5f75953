//! Names from a process (mapping paths, command lines) reach no text view
//! raw (issue 35 item 8): ESC, NUL and the line separator U+2028 are
//! escaped as the table escapes them, in `show --by path` (table and
//! CSV), `top`, and the series file of `watch -o`; and `wss` refuses a
//! bad `-o` before it says it will reset anything.

use crate::support::{copied_fixture, run, spawn, Mapping, MIB};

const PID: &str = "11364";
const HOSTILE_PATH: &str = "/usr/lib/li\x1b[31mRED\0nul\u{2028}ls";
const ESCAPED_PATH: &str = "/usr/lib/li?[31mRED?nul?ls";

/// A copy of the python3-mmap recording whose libz mapping and command
/// line carry ESC, NUL and U+2028.
fn hostile_tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = copied_fixture("python3-mmap");
    let pid = dir.join(PID);
    for f in ["smaps", "maps"] {
        let text = std::fs::read_to_string(pid.join(f)).unwrap();
        let edited = text.replace("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", HOSTILE_PATH);
        assert_ne!(text, edited, "{f} names libz");
        std::fs::write(pid.join(f), edited).unwrap();
    }
    std::fs::write(pid.join("cmdline"), "py\x1b]0;title\x07thon\u{2028}3\0-c\0x\0").unwrap();
    (tmp, dir)
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for bad in ['\x1b', '\0', '\x07', '\u{2028}'] {
        assert!(!text.contains(bad), "{what}: raw {bad:?} in\n{text}");
    }
}

#[test]
fn esc_nul_and_line_separators_in_names_are_escaped_in_text_views() {
    let (_tmp, dir) = hostile_tree();
    let root = dir.to_str().unwrap();
    for args in [
        &["show", PID, "--by", "path"][..],
        &["show", PID, "--by", "path", "--format", "csv"],
        &["show", PID],
        &["top"],
        &["top", "--format", "csv"],
    ] {
        let mut all = vec!["--proc-root", root];
        all.extend_from_slice(args);
        let out = run(&all);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_clean(&format!("{args:?}"), &out.stdout);
        if args.contains(&"path") {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains(ESCAPED_PATH), "{args:?}:\n{text}");
        }
    }
    // The series file of a watch: its labels are command lines.
    let series = dir.parent().unwrap().join("series.csv");
    let out = run(&[
        "--proc-root",
        root,
        "watch",
        PID,
        "--count",
        "2",
        "--interval",
        "10ms",
        "-o",
        series.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read(&series).unwrap();
    assert_clean("watch -o", &written);
    let text = String::from_utf8_lossy(&written);
    assert!(text.contains("py?]0;title?thon?3 -c x"), "{text}");
}

#[test]
fn wss_refuses_a_directory_for_its_series_before_its_notice() {
    let child = spawn(Mapping::Anonymous(MIB));
    let tmp = tempfile::tempdir().unwrap();
    let pid = child.pid.to_string();
    let out = run(&["wss", &pid, "--interval", "10ms", "-o", tmp.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("referenced bits") && !stderr.contains("idle"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // A file there: the notice, then the figures and the file.
    let file = tmp.path().join("wss.csv");
    let out = run(&["wss", &pid, "--interval", "10ms", "-o", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.starts_with("memtally: wss "), "{stderr}");
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("elapsed_s,"));
}
