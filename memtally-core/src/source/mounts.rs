//! tmpfs mounts and what each holds (statvfs), to split the machine's
//! Shmem by mount. Live only: a recorded tree has no file systems to ask.

use crate::source::ProcRoot;

/// (mount point, bytes used) of every tmpfs/devtmpfs mount with something
/// in it, largest first, each mount point once. Empty for a recording.
pub fn tmpfs_usage(root: &ProcRoot) -> Vec<(String, u64)> {
    if !root.is_live() {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(root.path().join("mounts")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, u64)> = Vec::new();
    for (point, fstype) in parse(&text) {
        if !matches!(fstype.as_str(), "tmpfs" | "devtmpfs") || out.iter().any(|(p, _)| *p == point)
        {
            continue;
        }
        if let Some(used) = used(&point).filter(|&u| u > 0) {
            out.push((point, used));
        }
    }
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// (mount point, file system type) of each line of a mounts file, with
/// the octal escapes (`\040` for a space) undone.
pub fn parse(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let (_dev, point, fstype) = (f.next()?, f.next()?, f.next()?);
            Some((unescape(point), fstype.to_string()))
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Bytes in use on the file system at `point` (blocks − free blocks).
fn used(point: &str) -> Option<u64> {
    let c = std::ffi::CString::new(point).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; the path is a valid C string.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some((s.f_blocks as u64).saturating_sub(s.f_bfree as u64).saturating_mul(s.f_frsize as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn mounts_are_split_and_unescaped() {
        let m = super::parse("tmpfs /dev/shm tmpfs rw 0 0\nx /a\\040b ext4 rw 0 0\nshort\n");
        assert_eq!(m, [("/dev/shm".into(), "tmpfs".into()), ("/a b".into(), "ext4".into())]);
    }

    #[test]
    fn live_dev_shm_file_is_counted() {
        let root = crate::source::ProcRoot::default();
        if !super::parse(&std::fs::read_to_string("/proc/mounts").unwrap_or_default())
            .iter()
            .any(|(p, t)| p == "/dev/shm" && t == "tmpfs")
        {
            println!("skipped: no tmpfs on /dev/shm");
            return;
        }
        let path = format!("/dev/shm/memtally-mounts-test-{}", std::process::id());
        std::fs::write(&path, vec![7u8; 3 << 20]).unwrap();
        let got = super::tmpfs_usage(&root);
        std::fs::remove_file(&path).unwrap();
        let shm = got.iter().find(|(p, _)| p == "/dev/shm").map(|(_, b)| *b).unwrap_or(0);
        assert!(shm >= 3 << 20, "{got:?}");
    }
}
