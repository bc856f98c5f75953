//! A swap device and a memory cgroup a test makes for itself, to push a
//! child's pages into swap: a zram device (hot_add, mkswap, swapon at the
//! highest priority) and a v1 memory cgroup with a low limit below this
//! process's own. Both are removed on drop, even after a failed
//! assertion: the cgroup (once its processes are gone), then swapoff and
//! hot_remove. Where a facility is missing, `make` says why, so the test
//! can skip with that reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A zram swap device, swapped off and removed on drop.
pub struct ZramSwap {
    id: String,
    on: bool,
}

impl ZramSwap {
    /// A swap device of `size` bytes on a new zram device.
    pub fn make(size: u64) -> Result<ZramSwap, String> {
        let control = Path::new("/sys/class/zram-control/hot_add");
        let id = std::fs::read_to_string(control)
            .map_err(|e| format!("no zram device to add ({}: {e})", control.display()))?
            .trim()
            .to_string();
        let mut z = ZramSwap { id, on: false };
        std::fs::write(format!("/sys/block/zram{}/disksize", z.id), size.to_string())
            .map_err(|e| format!("zram{} disksize: {e}", z.id))?;
        let dev = z.device();
        run("mkswap", &[dev.as_str()])?;
        run("swapon", &["-p", "32767", dev.as_str()])?;
        z.on = true;
        Ok(z)
    }

    pub fn device(&self) -> String {
        format!("/dev/zram{}", self.id)
    }
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl Drop for ZramSwap {
    fn drop(&mut self) {
        if self.on {
            let _ = run("swapoff", &[self.device().as_str()]);
        }
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.id);
    }
}

/// A v1 memory cgroup below this process's own, removed on drop (after
/// the processes put in it are gone: drop them first).
pub struct MemCgroup {
    pub dir: PathBuf,
}

impl MemCgroup {
    /// A cgroup named `name` with a memory limit of `limit` bytes.
    pub fn make(name: &str, limit: u64) -> Result<MemCgroup, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let path = own
            .lines()
            .find_map(|l| {
                let mut p = l.splitn(3, ':');
                let (_, c, path) = (p.next()?, p.next()?, p.next()?);
                c.split(',').any(|c| c == "memory").then(|| path.to_string())
            })
            .ok_or("no v1 memory controller in /proc/self/cgroup")?;
        let base = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
        let dir = base.join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cg = MemCgroup { dir };
        std::fs::write(cg.dir.join("memory.limit_in_bytes"), limit.to_string())
            .map_err(|e| format!("memory.limit_in_bytes: {e}"))?;
        // Swap shared memory as readily as anything else.
        let _ = std::fs::write(cg.dir.join("memory.swappiness"), "100");
        Ok(cg)
    }

    /// Moves process `pid` into the cgroup.
    pub fn add(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // Its processes were killed just before: rmdir waits for none, so
        // try again briefly while the kernel finishes taking them out.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// A file the test made under /dev/shm, removed on drop.
pub struct ShmFile(pub PathBuf);

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
