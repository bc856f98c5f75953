//! A sample's user stack copy unwound with the binaries' DWARF
//! call-frame information (framehop): the return addresses of code built
//! without frame pointers, which the kernel's frame-pointer walk loses.
//! Each executable file mapping of a process is a framehop module; its
//! `.eh_frame`, `.eh_frame_hdr` and `.debug_frame` are read from the file
//! (object) once a path. Code with no unwind information falls back to
//! its frame pointer, inside framehop.

use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;

use framehop::{
    CacheNative, ExplicitModuleSectionInfo, MayAllocateDuringUnwind, Module, UnwindRegsNative,
    Unwinder, UnwinderNative,
};
use object::{Object, ObjectSection, ReadCache};

use crate::source::faults::record::UserStack;
use crate::source::faults::symbols::{file_address, segments};
use crate::source::faults::target::Target;

type Data = Arc<[u8]>;

/// A process's unwinder: its modules, as its mappings were when built.
type ProcessUnwinder = UnwinderNative<Data, MayAllocateDuringUnwind>;

/// Frames an unwind stops at (the kernel's own chain stops at 127).
const MAX_FRAMES: usize = 128;

/// One binary's unwind sections and layout.
struct UnwindFile {
    /// (file offset, file size, address) of its loadable segments.
    segments: Vec<(u64, u64, u64)>,
    info: ExplicitModuleSectionInfo<Data>,
}

impl UnwindFile {
    fn open(path: &str) -> Option<UnwindFile> {
        let cache = ReadCache::new(File::open(path).ok()?);
        let obj = object::File::parse(&cache).ok()?;
        let section = |name: &str| {
            let s = obj.section_by_name(name)?;
            let data: Data = Arc::from(s.data().ok()?);
            Some((s.address()..s.address() + s.size(), data))
        };
        let (eh_frame_svma, eh_frame) = section(".eh_frame").unzip();
        let (eh_frame_hdr_svma, eh_frame_hdr) = section(".eh_frame_hdr").unzip();
        let debug_frame = section(".debug_frame").map(|s| s.1);
        if eh_frame.is_none() && debug_frame.is_none() {
            return None;
        }
        let got_svma = obj.section_by_name(".got").map(|s| s.address()..s.address() + s.size());
        let text_svma = obj.section_by_name(".text").map(|s| s.address()..s.address() + s.size());
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma,
            got_svma,
            eh_frame_svma,
            eh_frame,
            eh_frame_hdr_svma,
            eh_frame_hdr,
            debug_frame,
            ..ExplicitModuleSectionInfo::default()
        };
        Some(UnwindFile { segments: segments(&obj), info })
    }
}

/// What the recorder keeps to unwind: the binaries read, each process's
/// unwinder (built when first needed after its code mappings changed),
/// framehop's cache of unwind rules.
#[derive(Default)]
pub(crate) struct Unwinding {
    files: HashMap<String, Option<UnwindFile>>,
    processes: HashMap<u32, ProcessUnwinder>,
    cache: CacheNative<MayAllocateDuringUnwind>,
}

impl Unwinding {
    /// Process `pid`'s code mappings changed (an exec, a library mapped).
    pub(crate) fn forget(&mut self, pid: u32) {
        self.processes.remove(&pid);
    }

    /// The return addresses of `user`'s stack in process `pid` (the
    /// faulting instruction first) into `out`; true when the unwind
    /// reached the stack's root, false when it stopped short (the copy
    /// ended, no rule, a bad read). `target` gives its code mappings.
    pub(crate) fn unwind(
        &mut self,
        pid: u32,
        target: &Target,
        user: &UserStack<'_>,
        out: &mut Vec<u64>,
    ) -> bool {
        let files = &mut self.files;
        let unwinder = self.processes.entry(pid).or_insert_with(|| modules(files, target));
        let (pc, sp, regs) = registers(&user.regs);
        let bytes = user.bytes;
        let mut read = |addr: u64| -> Result<u64, ()> {
            let at = usize::try_from(addr.checked_sub(sp).ok_or(())?).map_err(|_| ())?;
            let word = bytes.get(at..at.checked_add(8).ok_or(())?).ok_or(())?;
            Ok(u64::from_ne_bytes(word.try_into().map_err(|_| ())?))
        };
        let mut frames = unwinder.iter_frames(pc, regs, &mut self.cache, &mut read);
        while out.len() < MAX_FRAMES {
            match frames.next() {
                Ok(Some(frame)) => out.push(frame.address()),
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
        false
    }
}

/// An unwinder of `target`'s executable file mappings.
fn modules(files: &mut HashMap<String, Option<UnwindFile>>, target: &Target) -> ProcessUnwinder {
    let mut unwinder = ProcessUnwinder::new();
    for (start, end, path, offset) in target.code() {
        let file = files.entry(path.to_string()).or_insert_with(|| UnwindFile::open(path));
        let Some(file) = file else { continue };
        // The address the ELF's address 0 is mapped at.
        let Some(at) = file_address(&file.segments, offset) else { continue };
        let base = start.wrapping_sub(at);
        unwinder.add_module(Module::new(path.to_string(), start..end, base, file.info.clone()));
    }
    unwinder
}

/// The instruction, the stack pointer and framehop's registers, from
/// `record::REGS_USER`'s bp, sp, ip.
#[cfg(target_arch = "x86_64")]
fn registers(r: &[u64; crate::source::faults::record::REGS]) -> (u64, u64, UnwindRegsNative) {
    let [bp, sp, ip] = *r;
    (ip, sp, UnwindRegsNative::new(ip, sp, bp))
}

/// The same from aarch64's fp, lr, sp, pc.
#[cfg(target_arch = "aarch64")]
fn registers(r: &[u64; crate::source::faults::record::REGS]) -> (u64, u64, UnwindRegsNative) {
    let [fp, lr, sp, pc] = *r;
    (pc, sp, UnwindRegsNative::new(lr, sp, fp))
}
