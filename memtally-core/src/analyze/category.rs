//! Sorts Linux mappings into the categories that answer "where does the
//! memory go": the seed mail's file-backed / anonymous split, brought up to
//! date with the names modern kernels and allocators give mappings.

use serde::{Deserialize, Serialize};

use crate::model::{Backing, Group, Region, Sizes};

/// A Linux mapping's category. The order is the order of table rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Executable file mappings: program and shared-library code.
    FileCode,
    /// Read-only file mappings never written: constants, fonts, locale data.
    FileRodata,
    /// Relocated read-only data (RELRO): a private file mapping that is
    /// read-only now but was written (it holds anonymous pages). The
    /// dynamic linker writes relocations into a library's GOT and vtables,
    /// then `mprotect`s them read-only: the written pages are private
    /// dirty copies (shared after fork), not file pages the kernel can drop.
    Relro,
    /// Writable file mappings: `.data`/`.bss` pages, writable mapped files.
    FileData,
    /// `[heap]` and unnamed anonymous read-write memory (malloc, mmap).
    Heap,
    /// `[stack]` (the main thread's stack).
    Stack,
    /// Anonymous memory named by its owner (`[anon:NAME]`, `PR_SET_VMA`).
    AnonNamed,
    /// Anonymous memory that is read-only or executable without write.
    AnonOther,
    /// Writable and executable at once (JIT code, old trampolines).
    WritableExec,
    /// No access (`---p`): guard pages and reserved address space.
    Guard,
    /// `/dev/shm`, `memfd:`, SysV and shared anonymous memory.
    SharedMemory,
    /// hugetlbfs pages: files on a hugetlbfs mount, `MAP_HUGETLB` memory,
    /// any mapping the kernel marks `ht` in VmFlags. Not in RSS/PSS: their
    /// bytes are `Shared_Hugetlb` and `Private_Hugetlb`.
    HugePages,
    /// Device mappings: GPU (`/dev/dri`, `/dev/nvidia*`, `/dev/kgsl*`,
    /// `/dev/mali*`) and other device nodes.
    Device,
    /// Pages the kernel maps in: `[vdso]`, `[vvar]`, `[vsyscall]`.
    Kernel,
}

impl Category {
    /// Every category, in table order.
    pub const ALL: [Category; 14] = [
        Category::FileCode,
        Category::FileRodata,
        Category::Relro,
        Category::FileData,
        Category::Heap,
        Category::Stack,
        Category::AnonNamed,
        Category::AnonOther,
        Category::WritableExec,
        Category::Guard,
        Category::SharedMemory,
        Category::HugePages,
        Category::Device,
        Category::Kernel,
    ];

    /// Where the category is in [`Category::ALL`] (the table order).
    pub(crate) fn index(self) -> usize {
        // A fieldless enum whose variants `ALL` lists in declaration order
        // (a test holds the two together).
        self as usize
    }

    /// The stable key used in JSON and CSV.
    pub fn key(self) -> &'static str {
        match self {
            Category::FileCode => "file_code",
            Category::FileRodata => "file_rodata",
            Category::Relro => "relro",
            Category::FileData => "file_data",
            Category::Heap => "heap",
            Category::Stack => "stack",
            Category::AnonNamed => "anon_named",
            Category::AnonOther => "anon_other",
            Category::WritableExec => "writable_exec",
            Category::Guard => "guard",
            Category::SharedMemory => "shared_memory",
            Category::HugePages => "huge_pages",
            Category::Device => "device",
            Category::Kernel => "kernel",
        }
    }

    /// A label for people.
    pub fn label(self) -> &'static str {
        match self {
            Category::FileCode => "file code",
            Category::FileRodata => "file read-only data",
            Category::Relro => "RELRO (relocated ro)",
            Category::FileData => "file writable data",
            Category::Heap => "heap / anon rw",
            Category::Stack => "stack",
            Category::AnonNamed => "named anon",
            Category::AnonOther => "anon read-only/exec",
            Category::WritableExec => "writable+exec (JIT)",
            Category::Guard => "guard / reserved",
            Category::SharedMemory => "shared memory",
            Category::HugePages => "huge pages (hugetlb)",
            Category::Device => "GPU / device",
            Category::Kernel => "kernel",
        }
    }

    /// The category of a stable key (`heap`), if it is one.
    pub fn from_key(key: &str) -> Option<Category> {
        Category::ALL.iter().copied().find(|c| c.key() == key)
    }

    /// What a person reads for `key`: a category's label, else the key
    /// itself (a vmmap region type, a path).
    pub fn label_or_key(key: &str) -> &str {
        Category::from_key(key).map_or(key, |c| c.label())
    }
}

/// The category of one Linux mapping.
pub fn categorize(region: &Region) -> Category {
    let perms = region.perms.as_bytes();
    let r = perms.first() == Some(&b'r');
    let w = perms.get(1) == Some(&b'w');
    let x = perms.get(2) == Some(&b'x');
    let path = region.path.as_deref().unwrap_or("");
    if is_hugetlb(region) {
        return Category::HugePages;
    }
    match region.backing {
        Backing::Kernel => return Category::Kernel,
        Backing::Device => return Category::Device,
        Backing::SharedMemory => return Category::SharedMemory,
        _ => {}
    }
    if !r && !w && !x {
        return Category::Guard;
    }
    if w && x {
        return Category::WritableExec;
    }
    match region.backing {
        Backing::File => {
            if x {
                Category::FileCode
            } else if w {
                Category::FileData
            } else if is_relro(region) {
                Category::Relro
            } else {
                Category::FileRodata
            }
        }
        _ => {
            // A shared anonymous mapping (`rw-s`, no name) is shared memory.
            if perms.get(3) == Some(&b's') {
                Category::SharedMemory
            } else if path == "[stack]" || path.starts_with("[stack:") {
                Category::Stack
            } else if path.starts_with("[anon:") {
                Category::AnonNamed
            } else if w {
                Category::Heap
            } else {
                Category::AnonOther
            }
        }
    }
}

/// Whether a read-only file mapping was written: private (`p`), and
/// holding anonymous pages (the copies a write made before the mapping
/// became read-only: RELRO after relocation). A shared file mapping's
/// written pages are file pages, so it never qualifies.
fn is_relro(region: &Region) -> bool {
    region.perms.as_bytes().get(3) == Some(&b'p') && region.sizes.anonymous.is_some_and(|a| a > 0)
}

/// Whether a mapping's resident pages are tmpfs / shared memory pages
/// (`/dev/shm`, `memfd:`, SysV, shared anonymous memory and shared
/// `/dev/zero`, mapped shared): they stay in memory when the process
/// exits, for as long as the file or segment exists (or another process
/// maps it), and only swap can take them out. dma-buf is not tmpfs.
pub(crate) fn is_shmem(region: &Region) -> bool {
    let path = region.path.as_deref().unwrap_or("");
    region.perms.as_bytes().get(3) == Some(&b's')
        && region.backing == Backing::SharedMemory
        && !path.starts_with("/dmabuf:")
        && !path.starts_with("anon_inode:dmabuf")
}

/// Whether a mapping is hugetlbfs memory: by what the source found (a
/// hugetlbfs file or `MAP_HUGETLB`), by the kernel's `ht` VmFlag, or by
/// hugetlb pages counted in it.
fn is_hugetlb(region: &Region) -> bool {
    region.backing == Backing::HugePages
        || region.vm_flags.as_deref().is_some_and(has_ht_flag)
        || region.sizes.shared_hugetlb.is_some_and(|v| v > 0)
        || region.sizes.private_hugetlb.is_some_and(|v| v > 0)
}

/// Whether `ht` is one of the whitespace-separated words of `flags`.
/// The kernel's flags are ASCII, split here byte by byte on the six
/// ASCII characters `char::is_whitespace` takes; `split_whitespace`'s
/// Unicode decoding was 8% of `show --format json`'s instructions
/// (callgrind, 20,000 mappings, two calls a mapping) and stays for text
/// that is not ASCII.
fn has_ht_flag(flags: &str) -> bool {
    // Nearly every mapping's flags have no `h` at all: one search for the
    // byte decides, and no word is split.
    if !flags.as_bytes().contains(&b'h') {
        return false;
    }
    if !flags.is_ascii() {
        return flags.split_whitespace().any(|f| f == "ht");
    }
    let space = |b: &u8| matches!(b, b' ' | b'\t'..=b'\r');
    flags.as_bytes().split(space).any(|word| word == b"ht")
}

/// Regions added up by category, one slot a category in table order (a
/// view and a snapshot list those present so): no key hashed or name
/// made for each region, as a `Grouper` did (docs/benchmarks.md).
#[derive(Debug, Clone, Default)]
pub(crate) struct CategorySums([(usize, Sizes); Category::ALL.len()]);

impl CategorySums {
    pub(crate) fn add(&mut self, category: Category, r: &Region) {
        let (regions, sizes) = &mut self.0[category.index()];
        *regions += 1;
        sizes.add_region(r);
    }

    /// The categories that hold a region, in table order.
    pub(crate) fn into_groups(self) -> Vec<(Category, Group)> {
        Category::ALL
            .iter()
            .zip(self.0)
            .filter(|(_, (regions, _))| *regions > 0)
            .map(|(&c, (regions, sizes))| (c, Group { key: c.key().to_string(), regions, sizes }))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::parse::smaps_header::parse_header;

    #[test]
    fn each_category_is_at_its_index_in_the_table_order() {
        for (i, c) in Category::ALL.iter().enumerate() {
            assert_eq!(c.index(), i, "{c:?}");
        }
    }

    #[test]
    fn the_ht_flag_is_found_as_split_whitespace_finds_it() {
        let cases = [
            "rd wr mr mw me ac sd",
            "rd wr ht",
            "ht",
            "ht rd",
            " rd\tht\x0b",
            "rd\x0bht\x0c",
            "rd\x1fht",
            "rdht wr",
            "hth",
            "rd\u{a0}ht",
            "rd\u{85}ht wr",
            "rd \u{e9}ht",
            "",
        ];
        for flags in cases {
            let want = flags.split_whitespace().any(|f| f == "ht");
            assert_eq!(has_ht_flag(flags), want, "{flags:?}");
        }
        assert!(has_ht_flag("rd wr mr mw me ht de"));
        assert!(!has_ht_flag("rd wr mr mw me de"));
    }

    fn cat(line: &str) -> Category {
        categorize(&parse_header(line.as_bytes()).unwrap())
    }

    #[test]
    fn each_kind_of_mapping_lands_in_its_category() {
        assert_eq!(cat("1000-2000 r-xp 0 fe:00 5 /usr/lib/libc.so.6"), Category::FileCode);
        assert_eq!(cat("1000-2000 r--p 0 fe:00 5 /usr/lib/libc.so.6"), Category::FileRodata);
        assert_eq!(cat("1000-2000 rw-p 0 fe:00 5 /usr/lib/libc.so.6"), Category::FileData);
        let mut relro = parse_header(b"1000-2000 r--p 0 fe:00 5 /usr/lib/libc.so.6").unwrap();
        relro.sizes.anonymous = Some(4096);
        assert_eq!(categorize(&relro), Category::Relro, "read-only now, written before");
        relro.perms = "r--s".into();
        assert_eq!(categorize(&relro), Category::FileRodata, "shared: its writes are the file's");
        assert_eq!(cat("1000-2000 ---p 0 fe:00 5 /usr/lib/libc.so.6"), Category::Guard);
        assert_eq!(cat("1000-2000 rw-p 0 00:00 0 [heap]"), Category::Heap);
        assert_eq!(cat("1000-2000 rw-p 0 00:00 0 "), Category::Heap);
        assert_eq!(cat("1000-2000 rw-p 0 00:00 0 [stack]"), Category::Stack);
        assert_eq!(cat("1000-2000 rw-p 0 00:00 0 [anon:glibc: malloc]"), Category::AnonNamed);
        assert_eq!(cat("1000-2000 r--p 0 00:00 0 "), Category::AnonOther);
        assert_eq!(cat("1000-2000 rwxp 0 00:00 0 "), Category::WritableExec);
        assert_eq!(cat("1000-2000 ---p 0 00:00 0 "), Category::Guard);
        assert_eq!(cat("1000-2000 rw-s 0 00:01 9 /dev/shm/x"), Category::SharedMemory);
        assert_eq!(cat("1000-2000 rw-s 0 00:01 9 /memfd:buf (deleted)"), Category::SharedMemory);
        assert_eq!(cat("1000-2000 rw-s 0 00:01 9 /SYSV00000000 (deleted)"), Category::SharedMemory);
        assert_eq!(cat("1000-2000 rw-s 0 00:05 9 /dev/dri/renderD128"), Category::Device);
        assert_eq!(cat("1000-2000 rw-s 0 00:05 9 /dev/nvidia0"), Category::Device);
        assert_eq!(cat("1000-2000 rw-p 0 00:06 4 /dev/zero"), Category::Heap);
        assert_eq!(cat("1000-2000 rw-s 0 00:01 9 /dev/zero (deleted)"), Category::SharedMemory);
        assert_eq!(cat("1000-2000 rw-s 0 00:0f 9 /anon_hugepage (deleted)"), Category::HugePages);
        assert_eq!(cat("1000-2000 r-xp 0 00:00 0 [vdso]"), Category::Kernel);
        let shmem = |line: &str| is_shmem(&parse_header(line.as_bytes()).unwrap());
        assert!(shmem("1000-2000 rw-s 0 00:01 9 /dev/shm/x"));
        assert!(shmem("1000-2000 rw-s 0 00:01 9 /memfd:buf (deleted)"));
        assert!(shmem("1000-2000 rw-s 0 00:01 9 /dev/zero (deleted)"));
        assert!(!shmem("1000-2000 rw-p 0 00:01 9 /dev/shm/x"), "private: copies are anonymous");
        assert!(!shmem("1000-2000 rw-s 0 00:01 9 /dmabuf:"));
        assert!(!shmem("1000-2000 rw-s 0 fe:00 9 /usr/share/x"));
        assert_eq!(cat("1000-2000 --xp 0 00:00 0 [vsyscall]"), Category::Kernel);
    }
}
