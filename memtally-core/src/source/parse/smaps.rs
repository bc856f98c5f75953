//! Streaming parser for `/proc/PID/smaps` and `/proc/PID/maps`.
//!
//! One pass, line by line: a line that lies whole in the input's buffer is
//! found with `memchr` and parsed where it is (only a line cut by a buffer
//! refill is gathered into the reader's own), so there is no whole-file
//! string and no copy or allocation per key line. The key line the kernel
//! prints next in its usual `Key:   N kB` shape is read by one masked
//! comparison, a space skip eight bytes a step and one digit loop, to its
//! newline (so no memchr for it: reading the line finds its end); every
//! other line takes the general path, which gives the same result. These
//! are hand-written because no crate finds the first byte unlike a given
//! one or reads a line of a known shape; the figures are in
//! `docs/benchmarks.md` (show --format json). A header line (`start-end perms offset dev
//! inode [path]`) opens a region; `Key: N kB` lines fill its sizes by exact
//! key; keys this build does not know are kept (`Sizes::extra` for sizes,
//! `Region::attributes` for the rest). `maps` is the same format without
//! key lines, so the same parser reads both.
//!
//! Written by hand rather than with the `procfs` crate: see
//! `docs/benchmarks.md` for the measurement behind that choice.

use std::io::{BufRead, Read};

pub(crate) use super::smaps_fields::MAX_LINE;
use super::smaps_fields::{parse_dec, trim};
use super::smaps_header::{is_header, read_header, Spare};
use super::smaps_size_line::size_line;
use super::ParseError;
use crate::model::sizes::smaps_key_index;
use crate::model::{snake_case, Backing, Region};

/// How much of a bad line an error quotes.
pub(crate) const QUOTE_MAX: usize = 200;

/// `bytes` quoted for an error message: at most [`QUOTE_MAX`] bytes of
/// it, then `...` and how long it was.
pub(crate) fn quote(bytes: &[u8]) -> String {
    if bytes.len() <= QUOTE_MAX {
        return format!("{:?}", String::from_utf8_lossy(bytes));
    }
    let head = String::from_utf8_lossy(&bytes[..QUOTE_MAX]);
    format!("{:?}... ({} bytes)", head, bytes.len())
}

/// Reads regions one at a time from smaps or maps text: each is read
/// into one of two regions the reader keeps and lent out as it is done
/// ([`next_located`](Self::next_located)), so reading a mapping moves no
/// region and allocates nothing once the strings it needs have room.
pub struct SmapsReader<R> {
    input: R,
    /// A line that did not fit in what `input` had buffered, gathered here
    /// (once per buffer refill; every other line is parsed in place).
    buf: Vec<u8>,
    done: bool,
    lines: LineState,
}

/// What a [`SmapsReader`] leaves for the next one: memory, no figures
/// (each mapping is read over whatever the one before left in it).
#[derive(Debug)]
pub(crate) struct ReaderMemory {
    buf: Vec<u8>,
    slots: [Region; 2],
    spare: Spare,
    names: Vec<(Vec<u8>, String)>,
}

impl Default for ReaderMemory {
    fn default() -> Self {
        ReaderMemory {
            buf: Vec::with_capacity(256),
            slots: [Region::new(Backing::Unknown), Region::new(Backing::Unknown)],
            spare: Spare::default(),
            names: Vec::new(),
        }
    }
}

/// What the reader knows between lines: kept apart from the input so a
/// line borrowed from the input's buffer can be parsed in place.
struct LineState {
    line_no: usize,
    /// The mapping being read (`slots[filling]`, when `pending`) and the
    /// one lent out last, its header line read into the other.
    slots: [Region; 2],
    filling: usize,
    pending: bool,
    spare: Spare,
    /// Where in `KNOWN_KEYS` the next key line most likely is.
    hint: usize,
    /// snake_case names of the non-size keys seen so far (smaps repeats
    /// the same few for every mapping).
    names: Vec<(Vec<u8>, String)>,
    /// Field lines read for the mapping being read, the most any earlier
    /// mapping had, and the line its header was on: a file that ends with
    /// fewer fields than the others had was cut short.
    fields_now: usize,
    fields_most: usize,
    header_line: usize,
}

impl<R: BufRead> SmapsReader<R> {
    /// A reader of smaps or maps text from `input`.
    pub fn new(input: R) -> Self {
        Self::with_memory(input, ReaderMemory::default())
    }

    /// A reader of `input` in the memory an earlier reader left
    /// ([`into_memory`](Self::into_memory)): its regions' strings, its
    /// line buffer and key names, so reading process after process
    /// allocates (and fragments the heap) only for what is new.
    pub(crate) fn with_memory(input: R, memory: ReaderMemory) -> Self {
        let ReaderMemory { mut buf, slots, spare, names } = memory;
        buf.clear();
        SmapsReader {
            input,
            buf,
            done: false,
            lines: LineState {
                line_no: 0,
                slots,
                filling: 0,
                pending: false,
                spare,
                hint: 0,
                names,
                fields_now: 0,
                fields_most: 0,
                header_line: 0,
            },
        }
    }

    /// The memory this reader holds, for the next one.
    pub(crate) fn into_memory(self) -> ReaderMemory {
        let LineState { slots, spare, names, .. } = self.lines;
        ReaderMemory { buf: self.buf, slots, spare, names }
    }

    /// The next complete region, `Ok(None)` at the end of input: an owned
    /// copy of what [`next_located`](Self::next_located) lends.
    pub fn next_region(&mut self) -> Result<Option<Region>, ParseError> {
        Ok(self.next_located()?.map(|(_, r)| r.clone()))
    }

    /// The next complete region with the number of its header line, lent
    /// until the next call (a reader of many mappings reads each into the
    /// same memory; the caller may change it, as the enrichers do).
    pub fn next_located(&mut self) -> Result<Option<(usize, &mut Region)>, ParseError> {
        let done = self.next_done()?;
        let lines = &mut self.lines;
        Ok(done.map(move |(line, slot)| (line, &mut lines.slots[slot])))
    }

    /// The next complete region: its header line and its slot.
    fn next_done(&mut self) -> Result<Option<(usize, usize)>, ParseError> {
        loop {
            if self.done {
                let lines = &mut self.lines;
                let pending = std::mem::take(&mut lines.pending);
                return Ok(pending.then_some((lines.header_line, lines.filling)));
            }
            // Every whole line in what the input has buffered is parsed
            // where it lies: no copy, one `fill_buf` and `consume` for all
            // of them, and one memchr per line instead of read_until's
            // per-call bookkeeping (docs/benchmarks.md).
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.lines.read_error(e)),
            };
            let mut used = 0;
            let mut found = None;
            while let Some(rest) = available.get(used..) {
                // Nearly every line is a size line in the kernel's own
                // shape: read to its end without a search for it.
                if let Some(n) = self.lines.size_line_at(rest) {
                    used += n;
                    continue;
                }
                let Some(i) = memchr::memchr(b'\n', rest) else { break };
                if i > MAX_LINE {
                    found = Some(Err(self.lines.too_long(&rest[..=MAX_LINE])));
                    break;
                }
                let done = self.lines.line(&rest[..i]);
                used += i + 1;
                match done {
                    Ok(None) => {}
                    done => {
                        found = Some(done);
                        break;
                    }
                }
            }
            self.input.consume(used);
            match found {
                Some(done) => match done? {
                    Some(region) => return Ok(Some(region)),
                    None => continue,
                },
                // What is left starts a line cut by the buffer's end.
                None if used > 0 => continue,
                None => {}
            }
            // The line runs past the buffer (or the file ends without a
            // newline): gather it, at most MAX_LINE bytes, so memory stays
            // bounded whatever the file holds (a device, a sparse file).
            self.buf.clear();
            let limit = MAX_LINE as u64 + 1;
            let n = (&mut self.input)
                .take(limit)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| self.lines.read_error(e))?;
            if n > MAX_LINE && self.buf.last() != Some(&b'\n') {
                return Err(self.lines.too_long(&self.buf));
            }
            if n == 0 {
                self.done = true;
                self.lines.at_end()?;
                continue;
            }
            let mut line = self.buf.as_slice();
            if let [rest @ .., b'\n'] = line {
                line = rest;
            }
            if let Some(region) = self.lines.line(line)? {
                return Ok(Some(region));
            }
        }
    }

    /// Reads every region.
    pub fn read_all(mut self) -> Result<Vec<Region>, ParseError> {
        let mut out = Vec::new();
        while let Some(r) = self.next_region()? {
            out.push(r);
        }
        Ok(out)
    }
}

impl LineState {
    /// Takes one line (its newline cut off); the region it completes (its
    /// header line and slot), if it is the header of the next.
    fn line(&mut self, line: &[u8]) -> Result<Option<(usize, usize)>, ParseError> {
        self.line_no += 1;
        if line.is_empty() {
            return Ok(None);
        }
        if is_header(line) {
            // The next mapping goes into the other slot; the one it
            // completes stays where it was read, to be lent out.
            let done = self.pending.then_some(self.filling);
            let next = done.map_or(self.filling, |d| 1 - d);
            read_header(line, &mut self.slots[next], &mut self.spare).ok_or_else(|| {
                ParseError {
                    line: self.line_no,
                    message: format!("not a mapping line: {}", quote(line)),
                    os_error: None,
                }
            })?;
            (self.filling, self.pending) = (next, true);
            self.fields_most = self.fields_most.max(self.fields_now);
            self.fields_now = 0;
            let prev_line = std::mem::replace(&mut self.header_line, self.line_no);
            return Ok(done.map(|slot| (prev_line, slot)));
        }
        if !self.pending {
            return Err(ParseError {
                line: self.line_no,
                message: format!("a field before any mapping line: {}", quote(line)),
                os_error: None,
            });
        }
        self.fields_now += 1;
        let region = &mut self.slots[self.filling];
        apply_key_line(region, line, &mut self.hint, &mut self.names, &mut self.spare)
            .map_err(|message| ParseError { line: self.line_no, message, os_error: None })?;
        Ok(None)
    }

    /// The size line `buf` starts with, when it is the key expected next
    /// in the kernel's usual shape and ends, newline and all, inside
    /// `buf`: applied to the region being read, as [`line`](Self::line)
    /// would apply it, and its length with the newline returned. `None`
    /// (nothing applied) sends the line down the general path.
    // Its one caller is the reader's loop over every line: inlined
    // always, as the compiler left it to itself did not always do
    // (docs/benchmarks.md, show --format json).
    #[inline(always)]
    fn size_line_at(&mut self, buf: &[u8]) -> Option<usize> {
        let region = self.pending.then_some(&mut self.slots[self.filling])?;
        let (i, bytes, len) = size_line(buf, self.hint)?;
        *region.sizes.slot_at(i)? = Some(bytes);
        self.hint = i + 1;
        self.line_no += 1;
        self.fields_now += 1;
        Some(len)
    }

    /// The end of input: an error when the last mapping was cut short.
    fn at_end(&self) -> Result<(), ParseError> {
        if self.pending && self.fields_now < self.fields_most {
            return Err(ParseError {
                line: self.line_no,
                message: format!(
                    "the file ends inside the mapping that starts at line {} ({} of the {} fields the others have): it was cut short",
                    self.header_line, self.fields_now, self.fields_most
                ),
                os_error: None,
            });
        }
        Ok(())
    }

    fn read_error(&self, e: std::io::Error) -> ParseError {
        ParseError {
            line: self.line_no + 1,
            message: format!("read failed: {e}"),
            os_error: Some(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    /// A line past [`MAX_LINE`]; `start` is its first `MAX_LINE + 1` bytes.
    fn too_long(&self, start: &[u8]) -> ParseError {
        ParseError {
            line: self.line_no + 1,
            message: format!(
                "a line longer than {} KiB, starting {}: not smaps or maps text",
                MAX_LINE / 1024,
                quote(start)
            ),
            os_error: None,
        }
    }
}

/// Applies one `Key: value [kB]` line to the region being read. `hint` is
/// where the next known size key is expected; `names` caches the
/// snake_case names of keys that are kept as they come.
fn apply_key_line(
    region: &mut Region,
    line: &[u8],
    hint: &mut usize,
    names: &mut Vec<(Vec<u8>, String)>,
    spare: &mut Spare,
) -> Result<(), String> {
    // The last line of every mapping.
    if let Some(value) = line.strip_prefix(b"VmFlags:") {
        spare.set_vm_flags(region, trim(value));
        return Ok(());
    }
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or_else(|| format!("not a `Key: value` line: {}", quote(line)))?;
    let key = &line[..colon];
    let value = trim(&line[colon + 1..]);
    let size = value.strip_suffix(b" kB").map(trim).and_then(parse_dec);
    // A key already kept as it comes is no known key (`names` holds only
    // those): smaps repeats two or three such keys a mapping, and each
    // was a comparison with every known key.
    let cached = names.iter().position(|(k, _)| k.as_slice() == key);
    let index = match cached {
        Some(_) => None,
        None => smaps_key_index(key, *hint),
    };
    if let Some(i) = index {
        *hint = i + 1;
    }
    match (size, index.and_then(|i| region.sizes.slot_at(i))) {
        (Some(kb), Some(slot)) => {
            // `Size` is already known from the header; the kernel's own
            // figure wins (they agree unless the range is not page-aligned).
            *slot = Some(kb.checked_mul(1024).ok_or("size overflows 64 bits")?);
        }
        (Some(kb), None) => {
            unknown_room(region)?;
            let name = cached_name(names, cached, key)?.to_string();
            let bytes = kb.checked_mul(1024).ok_or("size overflows 64 bits")?;
            region.sizes.extra.push((name, bytes));
        }
        (None, Some(_)) => {
            return Err(format!(
                "{} has no size in kB: {}",
                String::from_utf8_lossy(&key[..key.len().min(QUOTE_MAX)]),
                quote(value)
            ))
        }
        (None, None) => {
            unknown_room(region)?;
            let name = cached_name(names, cached, key)?;
            region.attributes.push(spare.attribute(name, value))
        }
    }
    Ok(())
}

/// The most fields this build does not know one mapping may have (size
/// keys and others together), and the most distinct such keys one file
/// may have. The kernel prints about 25 keys per mapping and adds one or
/// two per release; a file past either bound is crafted, and refused,
/// so memory stays bounded (one mapping followed by 40 million unknown
/// lines grew without end) and sums stay whole (see `Sizes::add`).
pub(crate) const MAX_UNKNOWN: usize = crate::model::sizes::MAX_EXTRA;

/// Whether the region being read can take one more unknown field.
fn unknown_room(region: &Region) -> Result<(), String> {
    if region.sizes.extra.len() + region.attributes.len() >= MAX_UNKNOWN {
        return Err(format!(
            "a mapping with more than {MAX_UNKNOWN} fields this memtally does not know: not smaps text"
        ));
    }
    Ok(())
}

/// The snake_case name of a smaps key, computed once per distinct key;
/// `cached` is where `key` is in `names`, when it is.
fn cached_name<'n>(
    names: &'n mut Vec<(Vec<u8>, String)>,
    cached: Option<usize>,
    key: &[u8],
) -> Result<&'n str, String> {
    let at = match cached {
        Some(at) => at,
        None if names.len() >= MAX_UNKNOWN => {
            return Err(format!(
                "more than {MAX_UNKNOWN} distinct keys this memtally does not know (the next is {}): not smaps text",
                quote(key)
            ));
        }
        None => {
            names.push((key.to_vec(), snake_case(&String::from_utf8_lossy(key))));
            names.len() - 1
        }
    };
    Ok(&names[at].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::parse::smaps_header::parse_header;
    use std::fs::File;

    fn parse(text: &str) -> Vec<Region> {
        SmapsReader::new(text.as_bytes()).read_all().unwrap()
    }

    /// Unknown keys are kept up to a bound, then refused: one mapping
    /// with millions of unknown lines, and 80,000 mappings each with its
    /// own unknown key, end in an error after the bound, in bounded memory.
    #[test]
    fn endless_and_distinct_unknown_keys_are_refused() {
        struct Endless(u64);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let line: &[u8] = if self.0 == 0 {
                    b"00400000-00401000 r-xp 00000000 08:01 1 /x\n"
                } else {
                    b"Unknown_Key:      4 kB\n"
                };
                self.0 += 1;
                let n = line.len().min(buf.len());
                buf[..n].copy_from_slice(&line[..n]);
                Ok(n)
            }
        }
        // 40 million lines would be an hour; the reader stops at the bound.
        let mut r = SmapsReader::new(std::io::BufReader::new(Endless(0).take(40_000_000 * 23)));
        let e = r.next_region().unwrap_err();
        assert!(e.message.contains("more than 64 fields"), "{e}");
        assert!(e.line <= MAX_UNKNOWN + 2, "{e}");

        let mut text = String::new();
        for i in 0..80_000 {
            text.push_str(&format!(
                "{:x}-{:x} rw-p 0 00:00 0\nRss: 4 kB\nKey{i}: 4 kB\n",
                i * 4096,
                i * 4096 + 4096
            ));
        }
        let e = SmapsReader::new(text.as_bytes()).read_all().unwrap_err();
        assert!(e.message.contains("more than 64 distinct keys"), "{e}");
        assert!(e.message.contains("Key64"), "{e}");
    }

    const TWO: &str = "\
55bf2d4d3000-55bf2d4d6000 r--p 00000000 fe:00 10199044                   /usr/bin/gst launch (deleted)
Size:                 12 kB
Rss:                  12 kB
Private_Dirty:         4 kB
Shared_Dirty:          0 kB
NewKernelKey:          8 kB
THPeligible:           0
VmFlags: rd mr mw me 
7ffd5b4cc000-7ffd5b4ed000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
Rss:                   8 kB
Private_Dirty:         8 kB
Shared_Dirty:          0 kB
NewKernelKey:          0 kB
THPeligible:           0
VmFlags: rd wr mr mw me gd ac 
";

    #[test]
    fn reads_exact_keys_and_keeps_unknown_ones() {
        let r = parse(TWO);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].path.as_deref(), Some("/usr/bin/gst launch (deleted)"));
        assert_eq!(r[0].backing, Backing::File);
        assert_eq!(r[0].sizes.rss, Some(12 * 1024));
        assert_eq!(r[0].sizes.private_dirty, Some(4096));
        assert_eq!(r[0].sizes.pss, None, "absent key stays absent");
        assert_eq!(r[0].sizes.extra, vec![("new_kernel_key".to_string(), 8192)]);
        assert_eq!(r[0].attributes, vec![("thp_eligible".to_string(), "0".to_string())]);
        assert_eq!(r[0].vm_flags.as_deref(), Some("rd mr mw me"));
        assert_eq!(r[1].start, Some(0x7ffd5b4cc000));
        assert_eq!(r[1].sizes.size, Some(132 * 1024));
        assert_eq!(r[1].backing, Backing::Anonymous);
    }

    /// A reader in an earlier reader's memory reads what a new one reads:
    /// nothing of the files read before shows through (smaps after maps,
    /// maps after smaps, a file cut short in between).
    #[test]
    fn a_reader_in_reused_memory_reads_as_a_new_one() {
        let maps = "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n7f00-7f01 rw-p 00000000 00:00 0 \n";
        let cut = &TWO[..TWO.len() / 2];
        let texts = [TWO, maps, cut, TWO, maps, &synthetic_smaps(40), maps];
        let mut memory = ReaderMemory::default();
        for text in texts {
            let mut reader = SmapsReader::with_memory(text.as_bytes(), memory);
            let mut reused = Vec::new();
            let mut end = Ok(());
            loop {
                match reader.next_located() {
                    Ok(Some((_, r))) => reused.push(r.clone()),
                    Ok(None) => break,
                    Err(e) => {
                        end = Err(e.to_string());
                        break;
                    }
                }
            }
            memory = reader.into_memory();
            let fresh = SmapsReader::new(text.as_bytes()).read_all().map_err(|e| e.to_string());
            match fresh {
                Ok(fresh) => {
                    assert_eq!(end, Ok(()));
                    assert_eq!(reused, fresh);
                }
                Err(fresh) => assert_eq!(end, Err(fresh)),
            }
        }
    }

    #[test]
    fn maps_lines_give_virtual_sizes_only() {
        let r = parse("00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n7f00-7f01 rw-p 00000000 00:00 0 \n");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].sizes.size, Some(0x52000));
        assert_eq!(r[0].sizes.rss, None);
        assert_eq!(r[1].path, None);
    }

    #[test]
    fn names_of_every_kind_get_their_backing() {
        let cases = [
            ("[anon:glibc: malloc arena]", Backing::Anonymous),
            ("[anon:v8]", Backing::Anonymous),
            ("[heap]", Backing::Anonymous),
            ("[vdso]", Backing::Kernel),
            ("/dev/shm/pulse-shm-1", Backing::SharedMemory),
            ("/memfd:wayland (deleted)", Backing::SharedMemory),
            ("/dev/dri/renderD128", Backing::Device),
            ("/usr/lib/x86_64-linux-gnu/libc.so.6", Backing::File),
        ];
        for (path, want) in cases {
            let line = format!("1000-2000 rw-s 00000000 00:05 7 {path}");
            let r = parse_header(line.as_bytes()).unwrap();
            assert_eq!(r.backing, want, "{path}");
            assert_eq!(r.path.as_deref(), Some(path));
        }
    }

    #[test]
    fn non_utf8_path_is_kept_lossily() {
        let mut line = b"1000-2000 r--p 00000000 08:01 5 /tmp/caf".to_vec();
        line.push(0xe9);
        line.extend_from_slice(b"\nSize: 4 kB\n");
        let r = SmapsReader::new(&line[..]).read_all().unwrap();
        assert_eq!(r[0].path.as_deref(), Some("/tmp/caf\u{fffd}"));
    }

    /// smaps text of `n` mappings with every key a 6.x kernel prints.
    fn synthetic_smaps(n: usize) -> String {
        let mut text = String::new();
        for i in 0..n {
            let start = 0x7f00_0000_0000u64 + (i as u64) * 0x2000;
            let path = match i % 4 {
                0 => "",
                1 => "/usr/lib/x86_64-linux-gnu/lib with space.so",
                2 => "[anon:glibc: malloc arena]",
                _ => "[stack]",
            };
            text.push_str(&format!(
                "{start:x}-{:x} rw-p 00000000 00:00 0                          {path}\n",
                start + 0x2000
            ));
            for (k, v) in [
                ("Size", 8),
                ("KernelPageSize", 4),
                ("MMUPageSize", 4),
                ("Rss", i % 9),
                ("Pss", i % 7),
                ("Pss_Dirty", i % 5),
                ("Shared_Clean", 0),
                ("Shared_Dirty", 0),
                ("Private_Clean", 4),
                ("Private_Dirty", i % 3),
                ("Referenced", 8),
                ("Anonymous", 4),
                ("KSM", 0),
                ("LazyFree", 0),
                ("AnonHugePages", 0),
                ("ShmemPmdMapped", 0),
                ("FilePmdMapped", 0),
                ("Shared_Hugetlb", 0),
                ("Private_Hugetlb", 0),
                ("Swap", i % 2),
                ("SwapPss", 0),
                ("Locked", 0),
            ] {
                text.push_str(&format!("{k}:{:>width$} kB\n", v, width = 24 - k.len()));
            }
            text.push_str("THPeligible:           0\nProtectionKey:         0\n");
            text.push_str("VmFlags: rd wr mr mw me ac sd \n");
        }
        text
    }

    #[test]
    fn prefetching_a_file_reads_the_same_as_reading_it_in_one_go() {
        // Several chunks' worth, so regions straddle chunk boundaries.
        let text = synthetic_smaps(3000);
        assert!(text.len() > 8 * crate::source::prefetch::CHUNK);
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
        std::io::Seek::rewind(&mut file).unwrap();
        let threaded = SmapsReader::new(crate::source::prefetch::PrefetchReader::new(file))
            .read_all()
            .unwrap();
        let direct = parse(&text);
        assert_eq!(threaded.len(), 3000);
        assert_eq!(threaded, direct);
        assert_eq!(direct[5].sizes.rss, Some(5 * 1024));
        assert_eq!(direct[5].sizes.swap, Some(1024));
        assert_eq!(direct[1].path.as_deref(), Some("/usr/lib/x86_64-linux-gnu/lib with space.so"));
        assert_eq!(
            direct[7].attributes,
            vec![
                ("thp_eligible".to_string(), "0".to_string()),
                ("protection_key".to_string(), "0".to_string())
            ]
        );
        // An empty file is no regions, through either path.
        let empty = tempfile::tempfile().unwrap();
        assert!(SmapsReader::new(crate::source::prefetch::PrefetchReader::new(empty))
            .read_all()
            .unwrap()
            .is_empty());
    }

    #[test]
    fn prefetching_reports_a_read_error_after_the_data_before_it() {
        // A directory opens but fails to read (EISDIR).
        let dir = tempfile::tempdir().unwrap();
        let f = File::open(dir.path()).unwrap();
        let e = SmapsReader::new(crate::source::prefetch::PrefetchReader::new(f))
            .read_all()
            .unwrap_err();
        assert_eq!(e.os_error, Some(libc::EISDIR));
    }

    /// Lines cut across the input's buffer (a 7-byte BufReader splits
    /// nearly every one) read the same as lines parsed in place.
    #[test]
    fn lines_split_across_buffer_refills_read_the_same() {
        // The last line has no newline: it is read to the end of input.
        let mut text = synthetic_smaps(40);
        text.insert_str(0, "1000-2000 r--p 0 08:01 5 /first\n");
        text.pop();
        let small = SmapsReader::new(std::io::BufReader::with_capacity(7, text.as_bytes()))
            .read_all()
            .unwrap();
        let whole = parse(&text);
        assert_eq!(small.len(), 41);
        assert_eq!(small, whole);
        assert_eq!(whole[0].path.as_deref(), Some("/first"));
        assert_eq!(whole[40].vm_flags.as_deref(), Some("rd wr mr mw me ac sd"));
    }

    /// The usual `Key:   N kB` shape is read by a shortcut; every other
    /// shape of the same keys (tabs, spaces before `kB`, trailing
    /// spaces, a key that is another's prefix, a figure past 64 bits)
    /// reads as before or fails as before.
    #[test]
    fn size_lines_of_any_shape_read_alike() {
        let r = parse(
            "1000-3000 rw-p 0 00:00 0\nSize:\t8 kB\nRss:    8  kB\nPss: 2 kB  \nPss_Dirty: 1 kB\n\
             Swap: 3 kB\nSwapPss: 1 kB\nSwapPss_Odd: 5 kB\nShared_Clean:4 kB\n",
        );
        let s = &r[0].sizes;
        assert_eq!(
            (s.size, s.rss, s.pss, s.pss_dirty),
            (Some(8192), Some(8192), Some(2048), Some(1024))
        );
        assert_eq!((s.swap, s.swap_pss, s.shared_clean), (Some(3072), Some(1024), Some(4096)));
        assert_eq!(s.extra, vec![("swap_pss_odd".to_string(), 5120)]);
        let e = SmapsReader::new(
            "1000-2000 r--p 0 08:01 5 /x\nRss: 99999999999999999999 kB\n".as_bytes(),
        )
        .read_all()
        .unwrap_err();
        assert!(e.message.contains("Rss has no size"), "{e}");
        let e =
            SmapsReader::new("1000-2000 r--p 0 08:01 5 /x\nRss: 99999999999999999 kB\n".as_bytes())
                .read_all()
                .unwrap_err();
        assert!(e.message.contains("overflows"), "{e}");
    }

    /// Size lines read where they lie in the buffer, without a search
    /// for their newline, read as the general path reads them (a 7-byte
    /// buffer sends every line there), odd shapes and errors included.
    #[test]
    fn size_lines_read_in_place_read_as_the_general_path_does() {
        let head = "1000-3000 rw-p 0 00:00 0\n";
        let shapes = [
            "Size:                  8 kB\nRss:                   4 kB\n",
            "Size:8 kB\nRss:0 kB\nPss:  007 kB\n",
            "Size: 8 kB\nRss:  kB\n",
            "Size: 8 kB \nRss: 8 kB\n",
            "Size: 8 kB\nRss: 18446744073709551616 kB\n",
            "Size: 8 kB\nRss: 18014398509481984 kB\n",
            "Size: 8 kB\nRss: 0000000000000000004 kB\nPss: 00000000000000000004 kB\n",
            "Size: 8 kB\nRss: 9999999999999999999 kB\n",
            "Size: 8 kB\nRss: 18446744073709551615 kB\n",
            "Size: 8 kB\nRss: 4 kB\nPss_Dirty: 4 kB\nSwap: 1 kB\nLocked: 2 kB\n",
            "Size: 8 kB\nRss: 4 kB",
            "Size: 8 kB\nRss: 4 kb\nSizeX: 4 kB\nSize: 12 kB\n",
            "Size: 8 kB\nRs",
        ];
        for shape in shapes {
            let text = format!("{head}{shape}");
            let whole = SmapsReader::new(text.as_bytes()).read_all();
            let small =
                SmapsReader::new(std::io::BufReader::with_capacity(7, text.as_bytes())).read_all();
            assert_eq!(whole, small, "{shape:?}");
        }
        let r = parse(&format!("{head}{}", shapes[1]));
        assert_eq!((r[0].sizes.rss, r[0].sizes.pss), (Some(0), Some(7 * 1024)));
        let r = parse(&format!(
            "{head}Size: 8 kB\nRss: 4 kB\nPss_Dirty: 4 kB\nSwap: 1 kB\nLocked: 2 kB\n"
        ));
        assert_eq!((r[0].sizes.swap, r[0].sizes.locked), (Some(1024), Some(2048)));
    }

    /// A line past the bound is refused whether it lies whole in the
    /// input's buffer (a byte slice) or arrives in pieces.
    #[test]
    fn an_overlong_line_is_refused_either_way() {
        let mut text = b"1000-2000 r--p 0 08:01 5 /".to_vec();
        text.resize(MAX_LINE + 10, b'x');
        text.push(b'\n');
        let whole = SmapsReader::new(&text[..]).read_all().unwrap_err();
        let pieces = SmapsReader::new(std::io::BufReader::with_capacity(4096, &text[..]))
            .read_all()
            .unwrap_err();
        assert_eq!(whole, pieces);
        assert!(whole.message.contains("longer than 1024 KiB"), "{whole}");
        assert_eq!(whole.line, 1);
    }

    #[test]
    fn keys_in_an_unexpected_order_still_land_in_their_fields() {
        let r = parse(
            "1000-3000 rw-p 0 00:00 0\nRss: 8 kB\nLocked: 4 kB\nSize: 8 kB\nOdd_Key: 4 kB\nPss: 2 kB\n\
             3000-4000 rw-p 0 00:00 0\nPss: 1 kB\nSize: 4 kB\nRss: 4 kB\nLocked: 0 kB\nOdd_Key: 0 kB\n",
        );
        assert_eq!(r[0].sizes.rss, Some(8192));
        assert_eq!(r[0].sizes.locked, Some(4096));
        assert_eq!(r[0].sizes.size, Some(8192));
        assert_eq!(r[0].sizes.pss, Some(2048));
        assert_eq!(r[0].sizes.extra, vec![("odd_key".to_string(), 4096)]);
        assert_eq!(
            (r[1].sizes.pss, r[1].sizes.size, r[1].sizes.rss),
            (Some(1024), Some(4096), Some(4096))
        );
    }

    #[test]
    fn each_region_comes_with_its_header_line() {
        let text = "1000-2000 r--p 0 08:01 5 /x\nRss: 4 kB\n\n2000-3000 r--p 0 08:01 5 /x\nRss: 4 kB\n3000-4000 r--p 0 08:01 5 /x\nRss: 4 kB\n";
        let mut reader = SmapsReader::new(text.as_bytes());
        let mut lines = Vec::new();
        while let Some((line, r)) = reader.next_located().unwrap() {
            lines.push((line, r.start));
        }
        assert_eq!(lines, [(1, Some(0x1000)), (4, Some(0x2000)), (6, Some(0x3000))]);
    }

    #[test]
    fn a_file_cut_inside_a_mapping_is_an_error_not_a_shorter_list() {
        let cut = "1000-2000 r--p 0 08:01 5 /x\nSize: 4 kB\nRss: 4 kB\n2000-3000 r--p 0 08:01 5 /x\nSize: 4 kB\n";
        let e = SmapsReader::new(cut.as_bytes()).read_all().unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("cut short") && e.message.contains("line 4"), "{}", e.message);
        // maps has no fields: nothing to compare, nothing to refuse.
        let maps = "1000-2000 r--p 0 08:01 5 /x\n2000-3000 r--p 0 08:01 5 /x\n";
        assert_eq!(SmapsReader::new(maps.as_bytes()).read_all().unwrap().len(), 2);
    }

    #[test]
    fn bad_lines_are_errors_with_line_numbers() {
        let e = SmapsReader::new("Rss: 4 kB\n".as_bytes()).read_all().unwrap_err();
        assert_eq!(e.line, 1);
        let e = SmapsReader::new("1000-2000 r--p 0 08:01 5 /x\nRss: lots\n".as_bytes())
            .read_all()
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("Rss"), "{}", e.message);
        let e = SmapsReader::new("1000-zz r--p 0 08:01 5 /x\n".as_bytes()).read_all().unwrap_err();
        assert_eq!(e.line, 1);
    }
}
