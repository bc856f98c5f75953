//! An smaps (or maps) header line, `start-end perms offset dev inode
//! [path]`, read into the region it opens; split from `smaps.rs`, whose
//! reader calls it once a mapping.

use super::smaps_fields::{
    clear_opt_text, parse_dec, parse_hex, set_opt_text, set_text, skip_spaces,
};
use crate::model::{Backing, Purge, Region, Sizes};

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

/// Splits off the next space-separated field, skipping leading spaces.
fn next_field<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let start = rest.iter().position(|&b| b != b' ')?;
    let s = &rest[start..];
    let end = s.iter().position(|&b| b == b' ').unwrap_or(s.len());
    *rest = &s[end..];
    Some(&s[..end])
}

/// What the reader keeps of the mappings before, so that reading the
/// next into the same region allocates nothing: a string for each field
/// a mapping has now and then, and the previous mapping's attribute
/// pairs.
#[derive(Debug, Default)]
pub(super) struct Spare {
    path: String,
    vm_flags: String,
    pub(super) attributes: Vec<(String, String)>,
}

impl Spare {
    /// `value` as `region`'s `VmFlags`, in a string it keeps.
    pub(super) fn set_vm_flags(&mut self, region: &mut Region, value: &[u8]) {
        set_opt_text(&mut region.vm_flags, value, &mut self.vm_flags);
    }

    /// A `(name, value)` attribute pair, in strings a mapping before had.
    pub(super) fn attribute(&mut self, name: &str, value: &[u8]) -> (String, String) {
        let (mut k, mut v) = self.attributes.pop().unwrap_or_default();
        if k != name {
            k.clear();
            k.push_str(name);
        }
        set_text(&mut v, value);
        (k, v)
    }
}

/// Reads `start-end perms offset dev inode [path]` into `region`, which
/// it empties first (what the mapping before left, its strings kept for
/// this one); `None` when the line is not a mapping line (the region is
/// then left half read).
pub(super) fn read_header(line: &[u8], region: &mut Region, spare: &mut Spare) -> Option<()> {
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
    match path_start {
        Some(p) => set_opt_text(&mut region.path, &rest[p..], &mut spare.path),
        None => clear_opt_text(&mut region.path, &mut spare.path),
    }
    set_opt_text(&mut region.device, device, &mut String::new());
    set_text(&mut region.perms, perms);
    clear_opt_text(&mut region.vm_flags, &mut spare.vm_flags);
    // Last first: the next mapping takes them back in their order.
    spare.attributes.extend(region.attributes.drain(..).rev());
    let mut extra = std::mem::take(&mut region.sizes.extra);
    extra.clear();
    region.sizes = Sizes { size: end.checked_sub(start), extra, ..Sizes::default() };
    let device = region.device.as_deref().unwrap_or_default();
    let mut backing = classify_backing(region.path.as_deref(), device, inode);
    // A private mapping of /dev/zero is anonymous copy-on-write memory
    // (the kernel makes it so); only a shared one is shared memory.
    if backing == Backing::SharedMemory
        && perms.get(3) == Some(&b'p')
        && region.path.as_deref().is_some_and(|p| p.starts_with("/dev/zero"))
    {
        backing = Backing::Anonymous;
    }
    region.backing = backing;
    region.start = Some(start);
    region.end = Some(end);
    region.offset = Some(offset);
    region.inode = Some(inode);
    (region.max_perms, region.region_type, region.share_mode) = (None, None, None);
    region.purge = Purge::Unmarked;
    Some(())
}

/// A header line (a `maps` line) read into a region of its own.
#[cfg(any(test, target_os = "linux"))]
pub(crate) fn parse_header(line: &[u8]) -> Option<Region> {
    let mut region = Region::new(Backing::Unknown);
    read_header(line, &mut region, &mut Spare::default()).map(|()| region)
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
