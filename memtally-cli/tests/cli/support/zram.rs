//! A zram swap device a test makes for itself (hot_add, disksize, mkswap,
//! swapon) and removes on drop, even when the test fails (swapoff, reset,
//! hot_remove); and an exec'd C child that writes pages that do not
//! compress, then pushes them out to swap with `MADV_PAGEOUT` when asked.
//! Only the device this made is touched.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A zram device used as swap; swapped off and removed on drop.
pub struct ZramSwap {
    pub id: u32,
    swapped_on: bool,
}

impl ZramSwap {
    pub fn name(&self) -> String {
        format!("zram{}", self.id)
    }

    pub fn dev(&self) -> PathBuf {
        PathBuf::from(format!("/dev/zram{}", self.id))
    }

    /// This device's mm_stat: mem_used_total (the third field).
    pub fn mem_used_total(&self) -> u64 {
        mem_used_total(&self.name())
    }

    /// Makes a zram device of `disksize` bytes and swaps on it; `Err` says
    /// why it cannot (no zram-control, not root, a tool missing).
    pub fn create(disksize: u64) -> Result<ZramSwap, String> {
        let control = Path::new("/sys/class/zram-control/hot_add");
        if !control.exists() {
            return Err("no /sys/class/zram-control (zram module not loaded)".into());
        }
        if unsafe { libc::geteuid() } != 0 {
            return Err("making a zram swap device needs root".into());
        }
        let id: u32 = std::fs::read_to_string(control)
            .map_err(|e| format!("hot_add: {e}"))?
            .trim()
            .parse()
            .map_err(|e| format!("hot_add: {e}"))?;
        // From here on the device is ours: drop removes it.
        let mut z = ZramSwap { id, swapped_on: false };
        let sys = format!("/sys/block/zram{id}");
        std::fs::write(format!("{sys}/disksize"), disksize.to_string())
            .map_err(|e| format!("{sys}/disksize: {e}"))?;
        // devtmpfs makes the node; wait a little for it (bounded).
        for _ in 0..50 {
            if z.dev().exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let ok = |cmd: &str, args: &[&str]| -> Result<(), String> {
            let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!("{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr).trim()))
            }
        };
        let dev = z.dev().display().to_string();
        ok("mkswap", &[&dev])?;
        ok("swapon", &[&dev])?;
        z.swapped_on = true;
        Ok(z)
    }
}

impl Drop for ZramSwap {
    fn drop(&mut self) {
        if self.swapped_on {
            // Brings the pages back into RAM (the child is killed first).
            let _ = Command::new("swapoff").arg(self.dev()).status();
        }
        let _ = std::fs::write(format!("/sys/block/zram{}/reset", self.id), "1");
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", self.id.to_string());
    }
}

/// A device's mm_stat mem_used_total; 0 when unreadable.
pub fn mem_used_total(name: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/block/{name}/mm_stat"))
        .ok()
        .and_then(|s| s.split_ascii_whitespace().nth(2).and_then(|f| f.parse().ok()))
        .unwrap_or(0)
}

/// Maps `len` bytes, fills them with xorshift noise (pages that do not
/// compress, so zram stores them whole), says `ready`; then for each byte
/// read, `MADV_PAGEOUT`s the mapping and answers with the byte.
const PAGER_C: &str = r#"
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
int main(int argc, char **argv) {
    size_t len = argc > 1 ? strtoull(argv[1], 0, 10) : 0;
    uint64_t *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < len / 8; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        p[i] = x;
    }
    if (write(1, "ready\n", 6) != 6) return 1;
    char b;
    while (read(0, &b, 1) == 1) {
        if (madvise(p, len, MADV_PAGEOUT) != 0) b = '!';
        if (write(1, &b, 1) != 1) return 1;
    }
    return 0;
}
"#;

/// The pager child; killed on drop.
pub struct Pager {
    pub pid: u32,
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

pub fn spawn_pager(len: usize) -> Pager {
    let (dir, exe) = crate::support::lone::build("pager", PAGER_C);
    let mut child = Command::new(&exe)
        .arg(len.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"ready\n");
    Pager { pid: child.id(), child, _dir: dir }
}

impl Pager {
    /// Pushes the mapping out to swap; `false` when madvise refused.
    pub fn page_out(&mut self) -> bool {
        self.child.stdin.as_mut().unwrap().write_all(b"p").unwrap();
        let mut b = [0u8; 1];
        self.child.stdout.as_mut().unwrap().read_exact(&mut b).unwrap();
        b[0] == b'p'
    }

    /// The child's VmSwap, bytes.
    pub fn vm_swap(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmSwap:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    }
}

impl Drop for Pager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
