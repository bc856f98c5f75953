//! An smaps (or maps) header line, `start-end perms offset dev inode
//! [path]`, read into the region it opens; split from `smaps.rs`, whose
//! reader calls it once a mapping.

use super::smaps::owned_text;
use super::smaps_size_line::skip_spaces;
use crate::model::{Backing, Region};

/// A header starts with hex digits and a `-` (`7f3a...-7f3b... r-xp`); a
/// key line starts with a name and a colon.
pub(super) fn is_header(line: &[u8]) -> bool {
    let mut saw_hex = false;
    for &b in line {
        match b {
            b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => saw_hex = true,
            b'-' => return saw_hex,
            _ => return false,
        }
    }
    false
}

pub(super) fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

pub(super) fn parse_dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    Some(v)
}

/// Splits off the next space-separated field, skipping leading spaces.
pub(super) fn next_field<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let start = rest.iter().position(|&b| b != b' ')?;
    let s = &rest[start..];
    let end = s.iter().position(|&b| b == b' ').unwrap_or(s.len());
    *rest = &s[end..];
    Some(&s[..end])
}

/// Parses `start-end perms offset dev inode [path]`.
pub(crate) fn parse_header(line: &[u8]) -> Option<Region> {
    let mut rest = line;
    let range = next_field(&mut rest)?;
    let dash = range.iter().position(|&b| b == b'-')?;
    let start = parse_hex(&range[..dash])?;
    let end = parse_hex(&range[dash + 1..])?;
    let perms = next_field(&mut rest)?;
    if perms.len() != 4 {
        return None;
    }
    let offset = parse_hex(next_field(&mut rest)?)?;
    let device = next_field(&mut rest)?;
    if !device.contains(&b':') {
        return None;
    }
    let inode = parse_dec(next_field(&mut rest)?)?;
    // The path is everything after the padding, spaces inside it included.
    // The kernel pads to a column with spaces (some 25 of them): skipped
    // eight at a time, then any tab among them.
    let spaces = skip_spaces(rest, 0);
    let path_start = rest
        .get(spaces..)
        .and_then(|r| r.iter().position(|&b| b != b' ' && b != b'\t'))
        .map(|p| spaces + p);
    let path = path_start.map(|p| owned_text(&rest[p..]));

    let device = owned_text(device);
    let mut backing = classify_backing(path.as_deref(), &device, inode);
    // A private mapping of /dev/zero is anonymous copy-on-write memory
    // (the kernel makes it so); only a shared one is shared memory.
    if backing == Backing::SharedMemory
        && perms.get(3) == Some(&b'p')
        && path.as_deref().is_some_and(|p| p.starts_with("/dev/zero"))
    {
        backing = Backing::Anonymous;
    }
    let mut region = Region::new(backing);
    region.start = Some(start);
    region.end = Some(end);
    region.perms = owned_text(perms);
    region.offset = Some(offset);
    region.device = Some(device);
    region.inode = Some(inode);
    region.path = path;
    region.sizes.size = end.checked_sub(start);
    Some(region)
}

/// Decides what a Linux mapping's pages come from, by its name.
pub(super) fn classify_backing(path: Option<&str>, device: &str, inode: u64) -> Backing {
    let Some(p) = path else {
        return Backing::Anonymous;
    };
    if p.starts_with("[anon_shmem:") {
        return Backing::SharedMemory;
    }
    if p.starts_with('[') {
        return match p {
            "[vdso]" | "[vvar]" | "[vvar_vclock]" | "[vsyscall]" | "[uprobes]" | "[sigpage]"
            | "[vectors]" => Backing::Kernel,
            _ => Backing::Anonymous,
        };
    }
    // MAP_HUGETLB memory: the kernel's own hugetlbfs file.
    if p.starts_with("/anon_hugepage") {
        return Backing::HugePages;
    }
    if p.starts_with("/dev/shm/")
        || p.starts_with("memfd:")
        || p.starts_with("/memfd:")
        || p.starts_with("/SYSV")
        || p.starts_with("/dev/zero")
        || p.starts_with("/dmabuf:")
        || p.starts_with("anon_inode:dmabuf")
    {
        return Backing::SharedMemory;
    }
    if p.starts_with("/dev/") || p.starts_with("anon_inode:") {
        return Backing::Device;
    }
    // A name with no device and no inode is something the kernel made up.
    if device == "00:00" && inode == 0 {
        return Backing::Anonymous;
    }
    Backing::File
}
