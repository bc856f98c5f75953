use super::region_line::parse_region_line;
use super::tokens::{content, parse_size};
use super::*;
use crate::model::vmmap::printed_step;
use crate::model::vmmap::DocumentNote;
use crate::model::Purge;

fn parse_str(text: &str, opts: ParseOptions) -> (Document, Vec<(usize, Region)>) {
    let mut regions = Vec::new();
    let doc = parse(text.as_bytes(), opts, &mut regions).unwrap();
    (doc, regions)
}

#[test]
fn sizes_in_every_unit_truncate_like_the_seed() {
    assert_eq!(parse_size("8K", 1), Some(8192));
    assert_eq!(parse_size("56.0M", 1), Some(56 << 20));
    assert_eq!(parse_size("28.0G", 1), Some(28 << 30));
    assert_eq!(parse_size("1.5T", 1), Some(3 << 39));
    assert_eq!(parse_size("824", 1), Some(824));
    assert_eq!(parse_size("100B", 1), Some(100));
    // int(4.1 * 1024) = 4198 (4198.4 truncated).
    assert_eq!(parse_size("4.1K", 1), Some(4198));
    // Page counts: 0.20 pages of 4096 bytes = 819.2 -> 819.
    assert_eq!(parse_size("0.20", 4096), Some(819));
    assert_eq!(parse_size("2048", 16384), Some(2048 * 16384));
    assert_eq!(parse_size("K", 1), None);
    assert_eq!(parse_size("1.2.3K", 1), None);
    assert_eq!(parse_size("99999999999999999999", 1), None);
    assert_eq!(parse_size("99999999999T", 1), None);
}

#[test]
fn region_line_with_purge_spaces_and_detail() {
    let l = parse_region_line(
        "IOAccelerator (graphics)    10876c000-10877c000    [   64K    64K     0K    64K] rw-/rw- SM=SHM PURGE=N  some detail  here",
    )
    .unwrap();
    assert_eq!(l.region_type, "IOAccelerator (graphics)");
    assert_eq!((l.start, l.end), (Some(0x10876c000), Some(0x10877c000)));
    assert_eq!(l.sizes(), ["64K", "64K", "0K", "64K"]);
    assert_eq!((l.prot, l.max_prot, l.share_mode), ("rw-", Some("rw-"), Some("SHM")));
    assert_eq!(l.purge, Purge::NonVolatile);
    assert_eq!(l.detail, Some("some detail  here"));
    assert!(l.damage.is_none());
}

#[test]
fn placeholder_and_bad_ranges() {
    let l = parse_region_line("kernel stuff   kernel-kernel [ 16K] r--/r-- SM=PRV").unwrap();
    assert_eq!((l.start, l.end), (None, None));
    assert!(parse_region_line("__TEXT  zzz-000 [ 16K] r--/r-- SM=PRV").is_err());
    let l = parse_region_line("__TEXT  2000-1000 [ 16K] r--/r-- SM=PRV").unwrap();
    assert_eq!((l.start, l.end), (None, None));
    assert!(l.damage.unwrap().contains("ends before it starts"));
    // A damaged protection keeps the sizes and says so.
    let l = parse_region_line("__TEXT  1000-2000 [ 16K] rwf/rw- SM=PRV").unwrap();
    assert_eq!((l.prot, l.max_prot, l.share_mode), ("rwf/rw-", None, Some("PRV")));
    assert!(l.damage.is_some());
    let l = parse_region_line("__TEXT  1000-2000 [ 16K] rw-").unwrap();
    assert_eq!((l.max_prot, l.share_mode), (None, None));
    assert!(parse_region_line("__TEXT  1000-2000 [ 16K]").is_err());
    let l = parse_region_line("__TEXT  10000000000000000000-1 [ 16K] r--/r-- SM=PRV").unwrap();
    assert_eq!(l.start, None);
    assert!(l.damage.unwrap().contains("64 bits"));
    assert!(parse_region_line("__TEXT  1000-2000 [ 16K 1K 2K] r--/r-- SM=PRV").is_err());
    assert!(parse_region_line("1000-2000 [ 16K] r--/r-- SM=PRV").is_err());
}

#[test]
fn mangled_protection_is_read_and_marked_damaged() {
    let l = parse_region_line("__DATA_CONST   1033bc000-1035bc000    [ 2048K  2000K     0K     0K] r--/rwSM=COW          /x")
        .unwrap();
    assert_eq!(l.max_prot, None);
    assert_eq!(l.share_mode, Some("COW"));
    assert_eq!(l.detail, Some("/x"));
    assert!(l.damage.is_some());
}

#[test]
fn publisher_prefixes_are_stripped() {
    assert_eq!(content("    // __TEXT  1-2 [ 4K]"), "__TEXT  1-2 [ 4K]");
    assert_eq!(content("\t// vmmap 53799"), "vmmap 53799");
    assert_eq!(content("\t//"), "");
    assert_eq!(content("        Stack  "), "Stack");
    assert_eq!(content("> Process:  x [1]"), "Process:  x [1]");
}

const FULL: &str = "\
$ vmmap -noCoalesce 640
Process:         Finder [640]
OS Version:      macOS 26.5.2 (25F84)
Physical footprint:         135.3M
Physical footprint (peak):  236.3M
----

Virtual Memory Map of process 640 (Finder)
Output report format:  2.4  -- 64-bit process
VM page size:  16384 bytes

==== regions for process 640  (non-writable and writable regions are interleaved)
REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
IOSurface                   100000000-100010000    [   64K    64K    64K     0K] rw-/rw- SM=SHM PURGE=V
MALLOC freed, no zone       100010000-100020000    [   64K    16K    16K     1T] rw-/rw- SM=PRV
IOSurface                   100020000-10002     [   64K    16K    16K     0K] rw-/rw- SM=SHM
IOSurface                   100030000-100040000    [   64K    16K
...

==== Legend
SM=sharing mode:
\tCOW=copy_on_write PRV=private NUL=empty ALI=aliased

==== Summary for process 640
ReadOnly portion of Libraries: Total=1.1G resident=386.2M(33%)

                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION
REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced)
===========                     ======= ========    =====  ======= ========   ======    =====  =======
IOSurface                           64K      64K      64K       0K      64K       0K       0K        1
MALLOC freed, no zone               64K      16K      16K       1T       0K       0K       0K        1         see MALLOC ZONE table below
Memory Tag 22                     64.0M      32K      32K       0K       0K       0K       0K        1
Stack (reserved)                   544K       0K       0K       0K       0K       0K       0K        1         reserved VM address space (unallocated)
IOSurface                           6xK
===========                     ======= ========    =====  ======= ========   ======    =====  =======
TOTAL                              64.2M     112K     112K       1T      64K       0K       0K        4
TOTAL, minus reserved VM space     63.7M     112K     112K       1T      64K       0K       0K        3

                                 VIRTUAL   RESIDENT      DIRTY    SWAPPED ALLOCATION      BYTES DIRTY+SWAP          REGION
MALLOC ZONE                         SIZE       SIZE       SIZE       SIZE      COUNT  ALLOCATED  FRAG SIZE  % FRAG   COUNT
===========                      =======  =========  =========  =========  =========  =========  =========  ======  ======
DefaultMallocZone_0x106d1c000       9.1G       7.9G       7.8G       1.1G     337217       9.0G         0K      0%     150
";

#[test]
fn whole_report_header_regions_summary_and_malloc_zones() {
    let (doc, regions) = parse_str(FULL, ParseOptions::default());
    let h = &doc.header;
    assert_eq!(h.process.as_deref(), Some("Finder"));
    assert_eq!(h.pid, Some(640));
    assert_eq!(h.os_version.as_deref(), Some("macOS 26.5.2 (25F84)"));
    assert_eq!(h.physical_footprint, Some((135.3f64 * 1048576.0) as u64));
    assert_eq!(h.physical_footprint_peak, Some((236.3f64 * 1048576.0) as u64));
    assert_eq!(h.page_size, Some(16384));
    assert_eq!(h.report_format.as_deref(), Some("2.4"));
    assert_eq!(h.command.as_deref(), Some("vmmap -noCoalesce 640"));
    assert!(!h.pages);

    assert_eq!(regions.len(), 3);
    assert_eq!(regions[0].0, 14);
    assert_eq!(regions[0].1.purge, Purge::Volatile);
    assert_eq!(regions[1].1.region_type.as_deref(), Some("MALLOC freed, no zone"));
    assert_eq!(regions[1].1.sizes.swap, Some(1 << 40));
    assert_eq!(regions[1].1.purge, Purge::Unmarked);

    // Line 16: the end address is below the start: sizes read, addresses unknown.
    assert_eq!(regions[2].0, 16);
    assert_eq!((regions[2].1.start, regions[2].1.end), (None, None));
    assert_eq!(regions[2].1.sizes.size, Some(65536));
    let d = &doc.diagnostics;
    assert_eq!(d.damaged_samples[0].line, 16);
    assert!(d.damaged_samples[0].reason.contains("ends before it starts"));
    // Line 17: cut short; line 34: a bad figure.
    let bad: Vec<usize> = d.unreadable_samples.iter().map(|p| p.line).collect();
    assert_eq!(bad, vec![17, 34], "{:?}", d.unreadable_samples);
    assert_eq!(d.elisions, 1);

    assert_eq!(doc.summary.len(), 4);
    let mt = &doc.summary[2];
    assert_eq!(mt.region_type, "Memory Tag 22");
    assert_eq!(mt.virtual_size, Some(64 << 20));
    assert_eq!(mt.count, Some(1));
    assert_eq!(doc.summary[1].note.as_deref(), Some("see MALLOC ZONE table below"));
    assert_eq!(doc.summary[1].swapped, Some(1 << 40));
    assert_eq!(doc.summary[3].region_type, "Stack (reserved)");
    assert_eq!(doc.summary_totals.len(), 2);
    assert_eq!(doc.summary_totals[1].region_type, "TOTAL, minus reserved VM space");
    assert_eq!(doc.summary_totals[1].count, Some(3));
    assert_eq!(doc.malloc_zones.len(), 1);
    assert_eq!(doc.malloc_zones[0].zone, "DefaultMallocZone_0x106d1c000");
    assert_eq!(doc.malloc_zones[0].values.len(), 9);
    assert_eq!(doc.malloc_zone_columns[0], "VIRTUAL");
    assert!(doc.facts_have("ReadOnly portion of Libraries"));
}

impl Document {
    fn facts_have(&self, key: &str) -> bool {
        self.header.facts.iter().any(|f| f.key == key)
    }
}

#[test]
fn pages_use_the_stated_page_size_or_an_override() {
    let text = "\
VM page size:  16384 bytes
REGION TYPE                      START - END             [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
__DATA                 00007fff99943000-00007fff9994a8e0 [    7.55     4        0        2.55] rw-/rwx SM=COW          /usr/lib/libc++.1.dylib
Stack                  00007ffee4f4f000-00007ffee574f000 [  2048      1      1      3] rw-/rwx SM=PRV          thread 0
";
    let (doc, regions) = parse_str(text, ParseOptions::default());
    assert!(doc.header.pages);
    assert!(!doc.header.page_size_assumed);
    let r = &regions[0].1.sizes;
    assert_eq!(r.size, Some((7.55f64 * 16384.0) as u64));
    assert_eq!(r.rss, Some(4 * 16384));
    assert_eq!(r.swap, Some((2.55f64 * 16384.0) as u64));
    assert_eq!(regions[1].1.sizes.size, Some(2048 * 16384));
    let (_, regions) = parse_str(text, ParseOptions { page_size: Some(1) });
    assert_eq!(regions[0].1.sizes.size, Some(7));
    // No stated size: assumed and said so.
    let (doc, regions) = parse_str(&text[text.find('\n').unwrap() + 1..], ParseOptions::default());
    assert!(doc.header.page_size_assumed);
    assert_eq!(regions[1].1.sizes.size, Some(2048 * 4096));
    assert_eq!(doc.diagnostics.notes, [DocumentNote::PageSizeAssumed { bytes: 4096 }]);
}

#[test]
fn single_column_and_crash_report_summaries() {
    let text = "\
VM Region Summary:
ReadOnly portion of Libraries: Total=1.9G resident=0K(0%)

                                VIRTUAL   REGION 
REGION TYPE                        SIZE    COUNT (non-coalesced) 
===========                     =======  ======= 
IOSurface                         4096K        1 
__FONT_DATA                        2352        1 
===========                     =======  ======= 
TOTAL                              8.4G     5288 
";
    let (doc, _) = parse_str(text, ParseOptions::default());
    assert!(doc.header.crash_report);
    assert_eq!(doc.summary_columns, vec!["virtual", "count"]);
    assert_eq!(doc.summary.len(), 2);
    assert_eq!(doc.summary[1].virtual_size, Some(2352));
    assert_eq!(doc.summary[1].resident, None);
    assert_eq!(doc.summary_totals[0].count, Some(5288));
    assert_eq!(doc.diagnostics.unreadable, 0);

    let old = "\
    REGION TYPE                      VIRTUAL
    ===========                      =======
    MALLOC freed, no zone              13.9M
    IOKit (reserved)                      8K        reserved VM address space (unallocated)
";
    let (doc, _) = parse_str(old, ParseOptions::default());
    assert_eq!(doc.summary.len(), 2);
    assert_eq!(doc.summary[0].virtual_size, Some((13.9f64 * 1048576.0) as u64));
    assert_eq!(doc.summary[1].note.as_deref(), Some("reserved VM address space (unallocated)"));
}

/// Issue 37, item 12: an AppKit crash report's backtrace (`-[NSApplication
/// run]` frames, image and address parted by a tab) is prose, not three
/// unreadable lines that mark the report PARTIAL.
#[test]
fn a_crash_reports_appkit_backtrace_is_prose() {
    let text = "\
Process:               TextEdit [4242]
Thread 0 Crashed::  Dispatch queue: com.apple.main-thread
0   libsystem_kernel.dylib        \t0x000000018a2b2a60 __pthread_kill + 8
1   AppKit                        \t0x000000018e2f1c2c -[NSApplication run] + 480
2   AppKit                        \t0x000000018e2c8d2c NSApplicationMain + 880
3   AppKit                        \t0x000000018e51a2a0 +[NSWindow _windowWithNumber:] + 40

VM Region Summary:
                                VIRTUAL   REGION 
REGION TYPE                        SIZE    COUNT (non-coalesced) 
===========                     =======  ======= 
IOSurface                         4096K        1 
===========                     =======  ======= 
TOTAL                             4096K        1 
";
    let (doc, regions) = parse_str(text, ParseOptions::default());
    assert!(doc.header.crash_report);
    assert_eq!(doc.diagnostics.unreadable, 0, "{:?}", doc.diagnostics.unreadable_samples);
    assert!(regions.is_empty());
    assert_eq!(doc.summary.len(), 1);
    // A region line whose type is a number stays a region line.
    let (_, r) = parse_str(
        "12  7f0000000000-7f0000001000 [ 4K 4K 0K 0K ] rw-/rwx SM=PRV\n",
        ParseOptions::default(),
    );
    assert_eq!(r.len(), 1);
}

/// Issue 37, item 12: two reports in one input are read as one, and a
/// note says so (where the second begins, and whose it is).
#[test]
fn a_second_report_in_one_input_is_said() {
    let one = "Process:         a [1]\nPhysical footprint:         1K\n\n";
    let two = "Process:         b [2]\nPhysical footprint:         2K\n";
    let (doc, _) = parse_str(&format!("{one}{two}"), ParseOptions::default());
    assert_eq!(doc.header.process.as_deref(), Some("a"));
    assert_eq!(doc.header.physical_footprint, Some(1024), "the first header kept");
    assert!(
        doc.diagnostics
            .notes
            .contains(&DocumentNote::SeveralReports { line: 4, process: "b [2]".into() }),
        "{:?}",
        doc.diagnostics.notes
    );
    let (doc, _) = parse_str(one, ParseOptions::default());
    assert!(doc.diagnostics.notes.is_empty());
}

#[test]
fn garbage_never_panics() {
    let junk = [
        "[",
        "]",
        "a [",
        "a b-c [ ] ",
        "x 1-2 [ 4K ] ",
        "x 1-2 [ 4K ] /",
        "x 1-2 [ 4K ] r--/",
        "x 1-2 [ 4K ] r--/r-- SM=",
        "x 1-2 [ 4K ] r--/r-- SM=PRV PURGE=",
        "x 1-2 [ 4K ] r--/r-- SM=PRV PURGE=Q",
        "REGION TYPE",
        "REGION TYPE  SIZE",
        "VIRTUAL",
        "TOTAL",
        "MALLOC ZONE",
        "====",
        "Process: [",
        "Process: ]x[",
        "Virtual Memory Map of process (",
        "Virtual Memory Map of process )(",
        "\u{fffd}\u{fffd} 1-2 [ 4K ] r--/r--",
        "é 1-2 [ 4é ] r--/r--",
    ];
    let text = junk.join("\n");
    let _ = parse_str(&text, ParseOptions::default());
    // Each line alone, in and out of a summary table.
    for j in junk {
        let _ = parse_str(j, ParseOptions::default());
        let _ = parse_str(&format!("REGION TYPE  SIZE COUNT\n{j}\n"), ParseOptions::default());
        let _ =
            parse_str(&format!("VIRTUAL ALLOCATION\nMALLOC ZONE\n{j}\n"), ParseOptions::default());
    }
}

#[test]
fn invalid_utf8_and_crlf_are_read() {
    let mut bytes =
        b"IOSurface  100000000-100010000 [ 64K 64K 64K 0K] rw-/rw- SM=SHM  /x\xff\r\n".to_vec();
    bytes.extend_from_slice(b"IOSurface  100010000-100020000 [ 64K 64K 64K 0K] rw-/rw- SM=SHM\r\n");
    let (doc, regions) = parse_all(&bytes[..], ParseOptions::default()).unwrap();
    assert_eq!(doc.regions, 2);
    assert_eq!(regions[0].path.as_deref(), Some("/x\u{fffd}"));
    assert_eq!(regions[1].path, None);
}

/// Hands out at most `n` bytes per read, to cross every buffer boundary.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.1.min(buf.len()).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn lines_are_the_same_whatever_the_read_sizes() {
    let whole = parse_str(FULL, ParseOptions::default());
    for n in [1, 2, 7, 64, 4096] {
        let mut regions: Vec<(usize, Region)> = Vec::new();
        let doc =
            parse(Trickle(FULL.as_bytes(), n), ParseOptions::default(), &mut regions).unwrap();
        assert_eq!(doc, whole.0, "reads of {n}");
        assert_eq!(regions, whole.1, "reads of {n}");
    }
}

#[test]
fn a_line_longer_than_the_buffer_is_counted_and_skipped() {
    let mut text =
        String::from("IOSurface  100000000-100010000 [ 64K 64K 64K 0K] rw-/rw- SM=SHM\n");
    text.push_str(&"x".repeat(READ_BUFFER * 2 + 5));
    text.push('\n');
    // The last line has no newline.
    text.push_str("IOSurface  100010000-100020000 [ 64K 64K 64K 0K] rw-/rw- SM=SHM PURGE=E");
    let (doc, regions) = parse_str(&text, ParseOptions::default());
    assert_eq!(doc.diagnostics.lines, 3);
    assert_eq!(doc.diagnostics.unreadable, 1);
    assert_eq!(doc.diagnostics.unreadable_samples[0].line, 2);
    assert_eq!(regions.len(), 2);
    assert_eq!(regions[1].0, 3);
    assert_eq!(regions[1].1.purge, Purge::Empty);
}

#[test]
fn the_step_of_a_printed_size_is_its_last_digit() {
    assert_eq!(printed_step("15.8G", 1), (1u64 << 30) / 10);
    assert_eq!(printed_step("2437K", 1), 1024);
    assert_eq!(printed_step("824", 1), 1);
    assert_eq!(printed_step("0.20", 4096), 40);
    assert_eq!(printed_step("2048", 16384), 16384);
    assert_eq!(printed_step("1.25T", 1), (1u64 << 40) / 100);
}
