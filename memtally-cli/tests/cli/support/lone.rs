//! Test children that are processes of their own (exec'd C programs, not
//! forks of this harness), so their figures do not move with what the
//! harness writes: a fork shares the harness's heap copy-on-write, whose
//! pages turn private (and its PSS moves) as other tests run.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

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

/// Compiles `src` with the C compiler every Rust build on Linux links
/// with, into a program named `name` in a new temporary directory.
pub fn build(name: &str, src: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.path().join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc).arg("-O1").arg("-o").arg(&exe).arg(&c).status();
    assert!(built.is_ok_and(|s| s.success()), "{cc} builds the test child {name}");
    (dir, exe)
}

pub fn lone(len: usize) -> Lone {
    let (dir, exe) = build("lone", LONE_C);
    let mut child = Command::new(&exe).arg(len.to_string()).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"ready\n");
    Lone { child: crate::support::Killed(child), _dir: dir }
}

/// A C program that, for each byte read, maps and writes `step` more
/// bytes of private anonymous memory and answers with the byte.
const GROWER_C: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t step = argc > 1 ? strtoull(argv[1], 0, 10) : 0;
    char b;
    while (read(0, &b, 1) == 1) {
        char *p = mmap(0, step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 1;
        memset(p, 0x33, step);
        if (write(1, &b, 1) != 1) return 1;
    }
    return 0;
}
"#;

/// A child whose memory grows by `step` bytes each time the test asks.
pub struct Grower {
    pub pid: u32,
    pub step: usize,
    child: Child,
    _dir: tempfile::TempDir,
}

/// Starts a child that grows by `step` bytes of private anonymous memory
/// at each [`Grower::grow`].
pub fn spawn_grower(step: usize) -> Grower {
    let (dir, exe) = build("grower", GROWER_C);
    let child = Command::new(&exe)
        .arg(step.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    Grower { pid: child.id(), step, child, _dir: dir }
}

impl Grower {
    /// Grows by one step and waits until the child has touched it.
    pub fn grow(&mut self) {
        self.child.stdin.as_mut().unwrap().write_all(b"g").unwrap();
        let mut b = [0u8; 1];
        self.child.stdout.as_mut().unwrap().read_exact(&mut b).unwrap();
    }
}

impl Drop for Grower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
