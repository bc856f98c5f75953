//! A test child that is a process of its own (exec'd, not forked), so
//! its figures do not move with what the test harness writes.

/// A C program that maps and writes exactly `len` bytes of private
/// anonymous memory and calls nothing that allocates: a process of its
/// own, so its heap category is that mapping and little else. (A fork of
/// this test binary would also hold the harness's heap, copy-on-write,
/// whose pages turn private as the harness writes to them.) Built with
/// the C compiler every Rust build on Linux links with; killed on drop.
const LONE_C: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t len = argc > 1 ? strtoull(argv[1], 0, 10) : 0;
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    memset(p, 0x5a, len);
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
"#;

pub struct Lone {
    pub child: crate::support::Killed,
    _dir: tempfile::TempDir,
}

pub fn lone(len: usize) -> Lone {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("lone.c");
    std::fs::write(&src, LONE_C).unwrap();
    let exe = dir.path().join("lone");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = std::process::Command::new(&cc).arg("-O1").arg("-o").arg(&exe).arg(&src).status();
    assert!(built.is_ok_and(|s| s.success()), "{cc} builds the test child");
    let mut child = std::process::Command::new(&exe)
        .arg(len.to_string())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"ready\n");
    Lone { child: crate::support::Killed(child), _dir: dir }
}
