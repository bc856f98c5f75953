//! The parser of `/proc/PID/fdinfo/N` of DRM fds (the kernel's
//! `Documentation/gpu/drm-usage-stats.rst` keys) and of dma-buf fds
//! (`size`, `count`, `exp_name`, `ino`). Bytes in (a few hundred: a line
//! per DRM region), records out; a line that cannot be read becomes a
//! note, never a panic.

use super::ParseError;
use crate::model::gpu::{DmaBuf, DrmClient, DrmMemory};

/// Keys every fdinfo has; not worth keeping as extras.
const GENERIC: &[&str] = &["pos", "flags", "mnt_id", "ino"];

/// What an fdinfo turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FdInfo {
    /// It has a `drm-driver` line.
    Drm(DrmClient),
    /// It has `exp_name` or `size` + `ino` with a dma-buf link target.
    DmaBuf(DmaBuf),
    /// Neither (a `/dev/nvidia*` fd, or a driver without fdinfo stats).
    Other,
}

/// A parsed fdinfo with the lines it could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// What the fdinfo is, with its figures.
    pub info: FdInfo,
    /// One line per key that could not be read (`drm-total-vram: lots`).
    pub problems: Vec<String>,
}

/// `12345`, `400 KiB`, `3 MiB`, `1 GiB` -> bytes. `None` for anything else
/// (or a value too large for 64 bits).
pub(crate) fn parse_size(value: &str) -> Option<u64> {
    let mut parts = value.split_whitespace();
    let n: u64 = parts.next()?.parse().ok()?;
    let mult: u64 = match parts.next() {
        None => 1,
        Some("KiB") => 1 << 10,
        Some("MiB") => 1 << 20,
        Some("GiB") => 1 << 30,
        Some(_) => return None,
    };
    if parts.next().is_some() {
        return None;
    }
    n.checked_mul(mult)
}

/// Which memory figure a key is, and of which region. `drm-total-cycles-*`
/// (engine cycles) is not memory.
fn memory_key(key: &str) -> Option<(&'static str, &str)> {
    const KINDS: &[(&str, &str)] = &[
        ("drm-total-", "total"),
        ("drm-shared-", "shared"),
        ("drm-resident-", "resident"),
        ("drm-purgeable-", "purgeable"),
        ("drm-active-", "active"),
        ("drm-memory-", "memory"),
    ];
    if key.starts_with("drm-total-cycles-") {
        return None;
    }
    KINDS.iter().find_map(|(prefix, kind)| {
        key.strip_prefix(prefix).filter(|r| !r.is_empty()).map(|region| (*kind, region))
    })
}

/// Reads one fdinfo. `fd` and `node` (the link target) are carried into
/// the record; `dmabuf_target` says the fd's link named a dma-buf.
/// Accepts any bytes (UTF-8, read lossily): a line it cannot read is one
/// of [`Parsed::problems`], so it never fails; the `Result` is the one
/// signature of the parsers in this folder.
pub fn parse(
    input: &[u8],
    fd: u32,
    node: Option<&str>,
    dmabuf_target: bool,
) -> Result<Parsed, ParseError> {
    let mut drm = DrmClient { fd, node: node.map(str::to_string), ..Default::default() };
    let mut is_drm = false;
    // The deprecated drm-memory- figures, applied at the end only where
    // the driver printed no drm-resident- for the region.
    let mut legacy: Vec<(String, u64)> = Vec::new();
    let mut buf = DmaBuf { fd, ..Default::default() };
    let (mut has_size, mut has_ino, mut has_exp) = (false, false, false);
    let mut problems = Vec::new();
    for line in input.split(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\n', '\r']);
        let Some((key, value)) = text.split_once(':') else {
            if !text.trim().is_empty() {
                problems.push(format!("not a `key: value` line: {}", clip(text)));
            }
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "drm-driver" => {
                is_drm = true;
                drm.driver = value.to_string();
            }
            "drm-pdev" => drm.pdev = Some(value.to_string()),
            "drm-client-id" => match value.parse() {
                Ok(id) => drm.client_id = Some(id),
                Err(_) => problems.push(format!("drm-client-id: not a number: {}", clip(value))),
            },
            "ino" => match value.parse() {
                Ok(i) => {
                    buf.inode = i;
                    has_ino = true;
                }
                Err(_) => problems.push(format!("ino: not a number: {}", clip(value))),
            },
            "size" => match value.parse() {
                Ok(s) => {
                    buf.size = s;
                    has_size = true;
                }
                Err(_) => problems.push(format!("size: not a number: {}", clip(value))),
            },
            "count" => buf.count = value.parse().ok(),
            "exp_name" => {
                has_exp = true;
                buf.exporter = Some(value.to_string());
            }
            "name" => buf.name = Some(value.to_string()).filter(|n| !n.is_empty()),
            _ => match memory_key(key) {
                Some((kind, region)) => match parse_size(value) {
                    Some(bytes) if kind == "memory" => legacy.push((region.to_string(), bytes)),
                    Some(bytes) => {
                        let m = drm.regions.entry(region.to_string()).or_default();
                        let slot = match kind {
                            "total" => &mut m.total,
                            "shared" => &mut m.shared,
                            "resident" => &mut m.resident,
                            "purgeable" => &mut m.purgeable,
                            _ => &mut m.active,
                        };
                        *slot = Some(bytes);
                    }
                    None => problems.push(format!("{key}: not a size: {}", clip(value))),
                },
                None if GENERIC.contains(&key) => {}
                None => drm.extras.push((key.to_string(), value.to_string())),
            },
        }
    }
    if is_drm {
        for (region, bytes) in legacy {
            let m: &mut DrmMemory = drm.regions.entry(region).or_default();
            if m.resident.is_none() {
                m.resident = Some(bytes);
            }
        }
        return Ok(Parsed { info: FdInfo::Drm(drm), problems });
    }
    if (has_exp || dmabuf_target) && has_size && has_ino {
        return Ok(Parsed { info: FdInfo::DmaBuf(buf), problems });
    }
    if dmabuf_target {
        problems.push("a dma-buf fd without `size` and `ino` lines".into());
    }
    Ok(Parsed { info: FdInfo::Other, problems: if dmabuf_target { problems } else { Vec::new() } })
}

/// A value cut short for a one-line note.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push_str("...");
    }
    out
}

/// Whether an fd's link target is a DRM device node.
pub(crate) fn is_drm_target(target: &str) -> bool {
    target.starts_with("/dev/dri/")
}

/// Whether an fd's link target (or a mapping's path) is a dma-buf:
/// `/dmabuf:NAME` on current kernels, `anon_inode:dmabuf` on older ones.
pub(crate) fn is_dmabuf_target(target: &str) -> bool {
    target.starts_with("/dmabuf:") || target == "anon_inode:dmabuf"
}

/// Whether a mapping's path is a GPU device node.
pub(crate) fn is_gpu_device_path(path: &str) -> bool {
    ["/dev/dri/", "/dev/nvidia", "/dev/kgsl", "/dev/mali"].iter().any(|p| path.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drm(text: &str) -> (DrmClient, Vec<String>) {
        let p = parse(text.as_bytes(), 5, Some("/dev/dri/renderD128"), false).unwrap();
        match p.info {
            FdInfo::Drm(c) => (c, p.problems),
            other => panic!("not drm: {other:?}"),
        }
    }

    #[test]
    fn sizes_take_units() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("12 KiB"), Some(12 * 1024));
        assert_eq!(parse_size("3 MiB"), Some(3 << 20));
        assert_eq!(parse_size("2 GiB"), Some(2 << 30));
        assert_eq!(parse_size("3 MB"), None);
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("1 KiB extra"), None);
        assert_eq!(parse_size("18446744073709551615 MiB"), None);
    }

    #[test]
    fn reads_every_memory_key_and_keeps_the_rest() {
        let (c, problems) = drm("pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1083\n\
            drm-driver:\ti915\ndrm-pdev:\t0000:00:02.0\ndrm-client-id:\t42\n\
            drm-engine-render:\t9288864723 ns\ndrm-total-cycles-render:\t77\n\
            drm-total-system0:\t12 MiB\ndrm-shared-system0:\t1 MiB\n\
            drm-resident-system0:\t11 MiB\ndrm-purgeable-system0:\t2 MiB\n\
            drm-active-system0:\t512 KiB\ndrm-total-stolen-system0:\t0\n");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.driver, "i915");
        assert_eq!(c.pdev.as_deref(), Some("0000:00:02.0"));
        assert_eq!(c.client_id, Some(42));
        let s = &c.regions["system0"];
        assert_eq!(s.total, Some(12 << 20));
        assert_eq!(s.shared, Some(1 << 20));
        assert_eq!(s.resident, Some(11 << 20));
        assert_eq!(s.purgeable, Some(2 << 20));
        assert_eq!(s.active, Some(512 << 10));
        assert_eq!(c.regions["stolen-system0"].total, Some(0));
        assert_eq!(c.regions["stolen-system0"].resident, None);
        assert_eq!(c.regions.len(), 2, "cycles are not a region: {:?}", c.regions);
        assert_eq!(
            c.extras,
            vec![
                ("drm-engine-render".to_string(), "9288864723 ns".to_string()),
                ("drm-total-cycles-render".to_string(), "77".to_string()),
            ]
        );
    }

    #[test]
    fn drm_memory_is_resident_and_never_added_to_it() {
        // amdgpu before the generic keys: only drm-memory-.
        let (old, _) =
            drm("drm-driver: amdgpu\ndrm-memory-vram: 1024 KiB\ndrm-memory-gtt: 2 MiB\n");
        assert_eq!(old.regions["vram"].resident, Some(1 << 20));
        assert_eq!(old.regions["vram"].total, None);
        assert_eq!(old.regions["gtt"].resident, Some(2 << 20));
        // Newer amdgpu prints both: resident wins, the two are not summed,
        // whichever comes first.
        let (both, _) = drm("drm-driver: amdgpu\ndrm-memory-vram: 1024 KiB\n\
            drm-resident-vram: 1024 KiB\ndrm-total-vram: 4 MiB\n");
        assert_eq!(both.regions["vram"].resident, Some(1 << 20));
        let (after, _) =
            drm("drm-driver: amdgpu\ndrm-resident-vram: 8 KiB\ndrm-memory-vram: 16 KiB\n");
        assert_eq!(after.regions["vram"].resident, Some(8 << 10));
    }

    #[test]
    fn bad_values_are_problems_not_panics() {
        let (c, problems) = drm("drm-driver: xe\ndrm-client-id: abc\ndrm-total-vram0: lots\n\
            garbage line\ndrm-total-gtt: 4 KiB\n\u{fffd}\u{0}:\n");
        assert_eq!(c.client_id, None);
        assert_eq!(c.regions["gtt"].total, Some(4096));
        assert!(!c.regions.contains_key("vram0"));
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[1].contains("drm-total-vram0"));
    }

    #[test]
    fn dmabuf_fdinfo() {
        let text = "pos:\t0\nflags:\t02000002\nmnt_id:\t9\nino:\t2190\nsize:\t32768\n\
            count:\t3\nexp_name:\tsystem\nname:\tframe-7\n";
        let p = parse(text.as_bytes(), 9, Some("/dmabuf:frame-7"), true).unwrap();
        assert!(p.problems.is_empty());
        let FdInfo::DmaBuf(b) = p.info else { panic!("not a dma-buf: {:?}", p.info) };
        assert_eq!((b.fd, b.inode, b.size, b.count), (9, 2190, 32768, Some(3)));
        assert_eq!(b.exporter.as_deref(), Some("system"));
        assert_eq!(b.name.as_deref(), Some("frame-7"));
        // A plain file's fdinfo is nothing.
        let p = parse(b"pos:\t0\nflags:\t0100000\nmnt_id:\t2\nino:\t7\n", 3, None, false).unwrap();
        assert_eq!(p.info, FdInfo::Other);
        // A dma-buf link whose fdinfo lacks the lines says so.
        let p = parse(b"pos:\t0\n", 3, Some("anon_inode:dmabuf"), true).unwrap();
        assert_eq!(p.info, FdInfo::Other);
        assert_eq!(p.problems.len(), 1);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A small deterministic generator: bytes drawn mostly from the
        // characters fdinfo uses, so keys and units are often almost right.
        let alphabet = b"drm-totalsheidnpugbcv0123456789: \tKMGiB\n\xff";
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..2000 {
            let mut bytes = Vec::new();
            for _ in 0..(x % 300) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bytes.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            let _ = parse(bytes.as_slice(), 1, None, x.is_multiple_of(2));
            let _ = crate::source::parse::nvidia::parse(&bytes);
            let _ = crate::source::parse::fd_targets::parse(&bytes);
        }
    }

    #[test]
    fn targets() {
        assert!(is_drm_target("/dev/dri/renderD128"));
        assert!(!is_drm_target("/dev/nvidia0"));
        assert!(is_dmabuf_target("/dmabuf:"));
        assert!(is_dmabuf_target("anon_inode:dmabuf"));
        assert!(!is_dmabuf_target("anon_inode:[eventfd]"));
        assert!(is_gpu_device_path("/dev/nvidiactl"));
        assert!(is_gpu_device_path("/dev/mali0"));
    }
}
