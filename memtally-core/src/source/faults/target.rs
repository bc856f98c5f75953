//! A traced process as the recorder knows it: its mappings (from smaps,
//! then from the mappings the kernel reports it making), its pagemap to
//! tell a read fault from a write, and the names of its code.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::model::faults::FaultAccess;
use crate::model::{Backing, Region};
use crate::source::faults::record::Mmap;
use crate::source::faults::symbols::Symbols;
use crate::source::parse::smaps_header::parse_header;
use crate::source::proc_root::RegionsFile;
use crate::source::ProcRoot;

/// One mapping of a traced process.
#[derive(Clone)]
pub(crate) struct Mapping {
    start: u64,
    end: u64,
    region: Region,
    writable: bool,
    executable: bool,
    private: bool,
    /// The file and the offset of `start` in it.
    file: Option<(String, u64)>,
}

/// A traced process: its mappings as last read, its pagemap.
pub(crate) struct Target {
    pub command: String,
    mappings: Vec<Mapping>,
    pagemap: Option<File>,
}

impl Mapping {
    fn of(r: &Region) -> Option<Mapping> {
        let perms = r.perms.as_bytes();
        Some(Mapping {
            start: r.start?,
            end: r.end?,
            region: r.clone(),
            writable: perms.get(1) == Some(&b'w'),
            executable: perms.get(2) == Some(&b'x'),
            private: perms.get(3) == Some(&b'p'),
            file: match (r.backing, &r.path) {
                (Backing::File, Some(p)) => Some((p.clone(), r.offset.unwrap_or(0))),
                _ => None,
            },
        })
    }

    /// The mapping as smaps (or the kernel's record of it) gave it.
    pub(crate) fn region(&self) -> &Region {
        &self.region
    }
}

impl Target {
    /// A process forked from `parent`: its mappings, a new pagemap.
    pub(crate) fn forked(root: &ProcRoot, pid: u32, parent: &Target) -> Target {
        let pagemap = File::open(root.pid_file(pid, "pagemap")).ok();
        Target { command: parent.command.clone(), mappings: parent.mappings.clone(), pagemap }
    }

    /// The process exec'd: a new address space, whose mappings the
    /// records that follow report; the pagemap held is the old one's.
    pub(crate) fn exec(&mut self, root: &ProcRoot, pid: u32) {
        self.mappings.clear();
        self.pagemap = File::open(root.pid_file(pid, "pagemap")).ok();
    }

    /// A mapping the process made: it replaces what it overlaps (a part
    /// left either side stays). Categorised as smaps would be, less what
    /// only smaps has (a RELRO mapping's written pages). True when it is
    /// code (the process's unwinder is out of date).
    pub(crate) fn mapped(&mut self, m: &Mmap) -> bool {
        let line = m.maps_line();
        let Some(new) = parse_header(line.as_bytes()).as_ref().and_then(Mapping::of) else {
            return false;
        };
        let code = new.executable;
        let mut kept = Vec::with_capacity(self.mappings.len() + 2);
        for old in self.mappings.drain(..) {
            if old.end <= new.start || old.start >= new.end {
                kept.push(old);
                continue;
            }
            if old.start < new.start {
                kept.push(Mapping { end: new.start, ..old.clone() });
            }
            if old.end > new.end {
                let skip = new.end - old.start;
                let file = old.file.clone().map(|(p, off)| (p, off + skip));
                kept.push(Mapping { start: new.end, file, ..old });
            }
        }
        kept.push(new);
        kept.sort_by_key(|m| m.start);
        self.mappings = kept;
        code
    }

    /// The executable file mappings: start, end, file, offset of start in
    /// the file.
    pub(crate) fn code(&self) -> impl Iterator<Item = (u64, u64, &str, u64)> {
        self.mappings.iter().filter(|m| m.executable).filter_map(|m| {
            let (path, offset) = m.file.as_ref()?;
            Some((m.start, m.end, path.as_str(), *offset))
        })
    }

    pub(crate) fn read(root: &ProcRoot, pid: u32) -> Target {
        let command = root.identity(pid).map(|(comm, _)| comm).unwrap_or_default();
        let pagemap = File::open(root.pid_file(pid, "pagemap")).ok();
        let mut t = Target { command, mappings: Vec::new(), pagemap };
        t.reread(root, pid);
        t
    }

    pub(crate) fn reread(&mut self, root: &ProcRoot, pid: u32) {
        // A process that ended reads as no mapping: keep the last ones known.
        let Ok(regions) = root.read_regions(pid, RegionsFile::Smaps, Vec::new()) else { return };
        if regions.is_empty() {
            return;
        }
        self.mappings = regions.iter().filter_map(Mapping::of).collect();
        self.mappings.sort_by_key(|m| m.start);
    }

    pub(crate) fn find(&self, addr: u64) -> Option<&Mapping> {
        let i = self.mappings.partition_point(|m| m.start <= addr).checked_sub(1)?;
        let m = &self.mappings[i];
        (addr < m.end).then_some(m)
    }

    /// Whether `ip` is in an executable mapping (code can return there).
    pub(crate) fn executable(&self, ip: u64) -> bool {
        self.find(ip).is_some_and(|m| m.executable)
    }

    /// Read or write, from the page at `addr` now (see `FaultAccess`):
    /// pagemap's present (63), file-or-shared (61) and exclusively mapped
    /// (56) bits.
    pub(crate) fn access(&self, m: &Mapping, addr: u64, page: u64) -> FaultAccess {
        if !m.writable {
            return FaultAccess::Read;
        }
        if !m.private {
            return FaultAccess::Unknown;
        }
        let mut entry = [0u8; 8];
        let read = self.pagemap.as_ref().map(|f| f.read_exact_at(&mut entry, addr / page * 8));
        let entry = match read {
            Some(Ok(())) => u64::from_ne_bytes(entry),
            _ => return FaultAccess::Unknown,
        };
        match (entry >> 63 & 1, entry >> 61 & 1, entry >> 56 & 1) {
            (0, _, _) => FaultAccess::Unknown,
            (_, 1, _) => FaultAccess::Read,
            (_, _, 1) => FaultAccess::Write,
            _ => FaultAccess::Read,
        }
    }
}

/// The function names at `ip` (innermost first), else `FILE+0xOFFSET`,
/// else `[unknown]`.
pub(crate) fn frame_names(target: Option<&Target>, symbols: &mut Symbols, ip: u64) -> Vec<String> {
    let Some(m) = target.and_then(|t| t.find(ip)) else { return vec!["[unknown]".into()] };
    let Some((path, offset)) = &m.file else {
        let name = m.region.path.as_deref().unwrap_or("[anon]");
        return vec![format!("{name}+0x{:x}", ip - m.start)];
    };
    let at = ip - m.start + offset;
    let names = symbols.names(path, at);
    if names.is_empty() {
        let base = path.rsplit('/').next().unwrap_or(path);
        return vec![format!("{base}+0x{at:x}")];
    }
    names
}
