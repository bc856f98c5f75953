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

/// A C program that opens the file `argv[2]` (when given: a GPU device
/// node, so the exporter reads its GPU files) and makes `argv[1]`
/// one-page anonymous mappings, alternately read-write and read-only so
/// the kernel cannot merge them: that many more lines in its maps.
const MAPPER_C: &str = r#"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    if (argc > 2 && open(argv[2], O_RDWR) < 0) return 2;
    for (long i = 0; i < n; i++) {
        char *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 1;
        p[0] = 1;
        if (i % 2 && mprotect(p, 4096, PROT_READ) != 0) return 1;
    }
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
"#;

/// A child with `mappings` more mappings, holding `open` open if given.
pub fn spawn_mapper(mappings: usize, open: Option<&std::path::Path>) -> Lone {
    let (dir, exe) = build("mapper", MAPPER_C);
    let mut cmd = Command::new(&exe);
    cmd.arg(mappings.to_string());
    if let Some(p) = open {
        cmd.arg(p);
    }
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"ready\n");
    Lone { child: crate::support::Killed(child), _dir: dir }
}

/// A C program that maps and writes `len` bytes of private anonymous
/// memory, then forks `children` children that only wait: every page is
/// then dirty and shared copy-on-write by all of them, so each process's
/// Shared_Dirty holds the `len` bytes in full while its Pss_Dirty holds
/// `len / (children + 1)`. The children die with the parent
/// (PR_SET_PDEATHSIG). Prints `ready PID...` (the children) once all are forked.
const FAMILY_C: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t len = argc > 1 ? strtoull(argv[1], 0, 10) : 0;
    int n = argc > 2 ? atoi(argv[2]) : 0;
    pid_t parent = getpid();
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    memset(p, 0x6b, len);
    char line[4096];
    int at = snprintf(line, sizeof line, "ready");
    for (int i = 0; i < n; i++) {
        pid_t c = fork();
        if (c < 0) return 1;
        if (c == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(0);
            for (;;) pause();
        }
        at += snprintf(line + at, sizeof line - at, " %d", (int)c);
    }
    at += snprintf(line + at, sizeof line - at, "\n");
    if (write(1, line, at) != at) return 1;
    for (;;) pause();
}
"#;

/// A forked family sharing written pages: the parent and its children's PIDs.
pub struct Family {
    pub child: crate::support::Killed,
    pub children: Vec<u32>,
    _dir: tempfile::TempDir,
}

impl Family {
    /// The parent's PID, then the children's.
    pub fn pids(&self) -> Vec<u32> {
        std::iter::once(self.child.0.id()).chain(self.children.iter().copied()).collect()
    }
}

/// Starts a parent that writes `len` bytes and forks `children` children
/// sharing them copy-on-write (see [`FAMILY_C`]); killed on drop, the
/// children with it.
pub fn family(len: usize, n: usize) -> Family {
    let (dir, exe) = build("cow_family", FAMILY_C);
    let mut child = Command::new(&exe)
        .arg(len.to_string())
        .arg(n.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = Vec::new();
    let out = child.stdout.as_mut().unwrap();
    let mut b = [0u8; 1];
    while out.read_exact(&mut b).is_ok() && b[0] != b'\n' {
        line.push(b[0]);
    }
    let child = crate::support::Killed(child);
    let line = String::from_utf8(line).unwrap();
    let mut words = line.split_whitespace();
    assert_eq!(words.next(), Some("ready"), "{line}");
    let children: Vec<u32> = words.map(|w| w.parse().unwrap()).collect();
    assert_eq!(children.len(), n, "{line}");
    Family { child, children, _dir: dir }
}

/// A C program that, on a byte on stdin, maps the file `path` (made
/// `len` bytes long) shared, writes every page of it when the third
/// argument is `touch`, and answers `ready`: a /dev/shm file's pages
/// then belong to the cgroup the program was moved into before the byte.
const SHM_C: &str = r#"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t len = strtoull(argv[2], 0, 10);
    int touch = argc > 3 && strcmp(argv[3], "touch") == 0;
    char b;
    if (read(0, &b, 1) != 1) return 1;
    int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, len) != 0) return 1;
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return 1;
    if (touch) memset(p, 0x5a, len);
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
"#;

/// A child waiting to map a shared file (see [`SHM_C`]); killed on drop.
pub struct ShmMapper {
    pub child: crate::support::Killed,
    _dir: tempfile::TempDir,
}

impl ShmMapper {
    /// Starts the program; it maps nothing until [`ShmMapper::map`].
    pub fn start(path: &std::path::Path, len: usize, touch: bool) -> ShmMapper {
        let (dir, exe) = build("shm_mapper", SHM_C);
        let child = Command::new(&exe)
            .arg(path)
            .arg(len.to_string())
            .arg(if touch { "touch" } else { "map" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        ShmMapper { child: crate::support::Killed(child), _dir: dir }
    }

    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// Maps (and writes, if asked) the file, and waits until it has.
    pub fn map(&mut self) {
        self.child.0.stdin.as_mut().unwrap().write_all(b"m").unwrap();
        let mut ready = [0u8; 6];
        self.child.0.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
        assert_eq!(&ready, b"ready\n");
    }
}

/// A C program that maps and writes `total` bytes of private anonymous
/// memory (no transparent huge pages, so every page is its own), then
/// touches one byte of each page of the first `hot` bytes every
/// millisecond; after `life_ms` milliseconds (0: never) it exits. With a
/// fourth argument `1` the memory is 2 MiB aligned and asks for huge
/// pages (`MADV_HUGEPAGE`), and one byte of each 2 MiB is touched.
const TOUCHER_C: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int main(int argc, char **argv) {
    size_t total = strtoull(argv[1], 0, 10), hot = strtoull(argv[2], 0, 10);
    double life = argc > 3 ? strtod(argv[3], 0) : 0;
    int huge = argc > 4 && argv[4][0] == '1';
    size_t align = 2 << 20, step = huge ? align : 4096;
    char *m = mmap(0, total + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 1;
    char *p = (char *)(((unsigned long)m + align - 1) & ~(align - 1));
    madvise(p, total, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(p, 0x5a, total);
    if (write(1, "ready\n", 6) != 6) return 1;
    double start = now_ms();
    struct timespec ms = {0, 1000000};
    for (;;) {
        for (size_t i = 0; i < hot; i += step) p[i]++;
        if (life > 0 && now_ms() - start >= life) return 0;
        nanosleep(&ms, 0);
    }
}
"#;

/// A child that keeps touching `hot` bytes of its `total` resident ones
/// (see `TOUCHER_C`), killed on drop.
pub struct Toucher {
    pub child: crate::support::Killed,
    _dir: tempfile::TempDir,
}

impl Toucher {
    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }
}

/// Starts a [`Toucher`] and waits until its memory is written; it exits
/// by itself after `life_ms` milliseconds unless that is 0.
pub fn toucher(total: usize, hot: usize, life_ms: u64) -> Toucher {
    toucher_with(total, hot, life_ms, false)
}

/// A [`Toucher`] whose memory asks for transparent huge pages and which
/// touches one byte of each 2 MiB of its first `hot` bytes.
pub fn huge_toucher(total: usize, hot: usize) -> Toucher {
    toucher_with(total, hot, 0, true)
}

fn toucher_with(total: usize, hot: usize, life_ms: u64, huge: bool) -> Toucher {
    let (dir, exe) = build("toucher", TOUCHER_C);
    let huge = if huge { "1" } else { "0" };
    let mut child = Command::new(&exe)
        .args([total.to_string(), hot.to_string(), life_ms.to_string(), huge.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"ready\n");
    Toucher { child: crate::support::Killed(child), _dir: dir }
}
