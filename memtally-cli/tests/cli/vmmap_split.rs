//! `memtally vmmap FILE` parses a large regular file in parts on every
//! core; the table and the JSON it prints must be the ones the sequential
//! parse of the same bytes on standard input prints. (The library's own split-versus-sequential
//! checks, at every cut point, are in memtally-core's tests.)

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::{memtally, repo};

#[test]
fn cli_table_from_a_large_file_equals_the_one_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("large.txt");
    // About 10 MB: past the size where the two-thread parse starts.
    let made = Command::new("python3")
        .arg(repo().join("bench/vmmap/gen.py"))
        .args(["--lines", "100000", "--gpu-share", "0.5"])
        .arg(&file)
        .status()
        .expect("python3 runs bench/vmmap/gen.py");
    assert!(made.success());
    assert!(std::fs::metadata(&file).unwrap().len() >= 8 << 20);
    let name = file.to_str().unwrap();
    for extra in [
        &[][..],
        &["--types", "IOAccelerator,IOSurface"][..],
        &["--pow2"][..],
        &["--format", "json"][..],
        &["--format", "json", "--types", "IOSurface"][..],
    ] {
        let from_file = memtally().arg("vmmap").arg(name).args(extra).output().unwrap();
        assert!(from_file.status.success(), "{}", String::from_utf8_lossy(&from_file.stderr));
        let mut child = memtally()
            .args(["vmmap", "-"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let bytes = std::fs::read(&file).unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&bytes));
        let from_stdin = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(from_stdin.status.success());
        let a = String::from_utf8(from_file.stdout).unwrap().replace(name, "SOURCE");
        let b = String::from_utf8(from_stdin.stdout).unwrap().replace("standard input", "SOURCE");
        assert_eq!(a, b, "vmmap {extra:?}");
    }
}
