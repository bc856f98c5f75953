//! Exec'd C children for the page-level tests: each writes known bytes in
//! a known way, prints the PIDs of the processes it made, and waits until
//! killed (its children die with it: PR_SET_PDEATHSIG).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::support::lone::build;
use crate::support::Killed;

/// Modes: `family SHARED OWN` writes SHARED bytes, forks two children that
/// each write OWN bytes of their own; `thp LEN` writes LEN bytes of a
/// 2 MiB-aligned MADV_HUGEPAGE mapping; `ksm LEN` writes LEN bytes of
/// identical pages marked MADV_MERGEABLE; `reserve LEN` reserves 1.4 TB
/// PROT_NONE and writes LEN bytes elsewhere; `churn LEN` forks, without
/// end, children that write LEN bytes and exit at once.
const PAGES_C: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
static char *anon(size_t len) {
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) _exit(1);
    return p;
}
static void say(const char *line) {
    size_t n = strlen(line);
    if (write(1, line, n) != (ssize_t)n) _exit(1);
}
int main(int argc, char **argv) {
    const char *mode = argv[1];
    size_t len = strtoull(argv[2], 0, 10);
    char line[64];
    if (!strcmp(mode, "family")) {
        size_t own = strtoull(argv[3], 0, 10);
        memset(anon(len), 0x11, len);
        int ready[2];
        if (pipe(ready)) return 1;
        pid_t kids[2];
        for (int i = 0; i < 2; i++) {
            kids[i] = fork();
            if (kids[i] == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                memset(anon(own), 0x22 + i, own);
                if (write(ready[1], "r", 1) != 1) _exit(1);
                for (;;) pause();
            }
        }
        char b;
        for (int i = 0; i < 2; i++)
            if (read(ready[0], &b, 1) != 1) return 1;
        snprintf(line, sizeof line, "%d %d %d\n", (int)getpid(), (int)kids[0], (int)kids[1]);
    } else if (!strcmp(mode, "thp")) {
        size_t huge = 2 << 20;
        char *p = anon(len + huge);
        p = (char *)(((unsigned long)p + huge - 1) & ~(huge - 1));
        if (madvise(p, len, MADV_HUGEPAGE)) return 2;
        memset(p, 0x33, len);
        snprintf(line, sizeof line, "%d\n", (int)getpid());
    } else if (!strcmp(mode, "ksm")) {
        char *p = anon(len);
        if (madvise(p, len, MADV_MERGEABLE)) return 2;
        memset(p, 0x44, len);
        snprintf(line, sizeof line, "%d\n", (int)getpid());
    } else if (!strcmp(mode, "reserve")) {
        size_t huge = 1400ULL << 30;
        if (mmap(0, huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED)
            return 2;
        memset(anon(len), 0x55, len);
        snprintf(line, sizeof line, "%d\n", (int)getpid());
    } else if (!strcmp(mode, "churn")) {
        snprintf(line, sizeof line, "%d\n", (int)getpid());
        say(line);
        for (;;) {
            pid_t k = fork();
            if (k == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                memset(anon(len), 0x66, len);
                _exit(0);
            }
            waitpid(k, 0, 0);
        }
    } else {
        return 3;
    }
    say(line);
    for (;;) pause();
}
"#;

/// A running child: the PIDs it printed (itself first); killed on drop.
pub struct PageChild {
    pub pids: Vec<u32>,
    _child: Killed,
    _dir: tempfile::TempDir,
}

/// Starts the child in `mode` with `args`; `None` (with the reason
/// printed) where the kernel refused what the mode needs (exit 2).
pub fn page_child(mode: &str, args: &[usize]) -> Option<PageChild> {
    let (dir, exe) = build("pages", PAGES_C);
    let mut child = Command::new(&exe)
        .arg(mode)
        .args(args.iter().map(usize::to_string))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    if line.is_empty() {
        let status = child.wait().unwrap();
        eprintln!("skipped: the {mode} child could not set up its memory ({status})");
        return None;
    }
    let pids = line.split_whitespace().map(|p| p.parse().unwrap()).collect();
    Some(PageChild { pids, _child: Killed(child), _dir: dir })
}
