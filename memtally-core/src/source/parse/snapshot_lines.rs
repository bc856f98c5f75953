//! Reads a snapshot file (format 2: JSON Lines, `model::snap_lines`) one
//! line at a time: each line is cut at its newline and parsed by serde_json
//! from its own bytes into its typed record, so memory holds one line and
//! nothing here frames JSON. The records' order is checked here (regions
//! before their process line, a `dropped` line taking back exactly the
//! regions before it, the `end` line last, counting the process lines);
//! what a reader keeps of the records is the [`Records`] it hands them to.

use std::io::{self, BufRead};

use crate::model::snap_lines::{SnapEnd, SnapHead, SnapLine, SnapProcessLine, LINES_VERSION};
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{SnapProcess, Snapshot};
use crate::source::parse::snapshot_feed::LinesFeed;

/// What a reader keeps of a snapshot file's records, handed in file order.
pub(crate) trait Records {
    /// A region of the process whose line comes next; its line begins at
    /// byte `at` of the file.
    fn region(&mut self, region: RegionRef<'_>, at: u64);
    /// The regions handed since the last process are no process's.
    fn dropped(&mut self);
    /// A process, after its regions.
    fn process(&mut self, process: SnapProcessLine);
}

/// Why a snapshot file could not be read.
#[derive(Debug)]
pub(crate) enum LinesError {
    /// The file could not be read.
    Io(io::Error),
    /// Line `line` (1-based) is not JSON, or not a record of the format.
    Line { line: u64, error: serde_json::Error },
    /// The records are not as a snapshot has them: at line `line`, `what`.
    Order { line: u64, what: &'static str },
    /// The first line says another format.
    Version(u32),
}

impl From<io::Error> for LinesError {
    fn from(e: io::Error) -> LinesError {
        LinesError::Io(e)
    }
}

/// Reads the snapshot file from `r`, handing its records to `to`: its
/// first and last lines.
pub(crate) fn read(
    mut r: impl BufRead,
    to: &mut impl Records,
) -> Result<(SnapHead, SnapEnd), LinesError> {
    let mut buf = Vec::with_capacity(4096);
    let mut at = r.read_until(b'\n', &mut buf)? as u64;
    let head: SnapHead = parse(&buf).map_err(|error| LinesError::Line { line: 1, error })?;
    if head.memtally_snapshot != LINES_VERSION {
        return Err(LinesError::Version(head.memtally_snapshot));
    }
    let mut order = Order { line: 1, pending: 0, processes: 0 };
    loop {
        // A line whole in the reader's buffer is parsed where it lies;
        // one across its end (about one in a hundred) is copied out first.
        let chunk = r.fill_buf()?;
        let (n, end) = match memchr::memchr(b'\n', chunk) {
            Some(i) => {
                let end = order.line(&chunk[..=i], at, to)?;
                (i + 1, end)
            }
            None => {
                buf.clear();
                let n = r.read_until(b'\n', &mut buf)?;
                if n == 0 {
                    let what = "an end line (the file is cut short)";
                    return Err(LinesError::Order { line: order.line + 1, what });
                }
                (0, order.line(&buf, at, to)?)
            }
        };
        r.consume(n);
        at += match n {
            0 => buf.len() as u64,
            n => n as u64,
        };
        if let Some(end) = end {
            return order.rest(r, head, end);
        }
    }
}

/// A line's bytes as `T`: their UTF-8 checked once, a SIMD pass, so the
/// parser takes each string as it is (no second check a key or value).
fn parse<'a, T: serde::Deserialize<'a>>(line: &'a [u8]) -> Result<T, serde_json::Error> {
    match simdutf8::basic::from_utf8(line) {
        Ok(text) => serde_json::from_str(text),
        // Not UTF-8: serde_json says where.
        Err(_) => serde_json::from_slice(line),
    }
}

/// Where the records stand: which line, and what came since the last process.
struct Order {
    line: u64,
    /// Region lines since the last process line.
    pending: u64,
    /// Process lines so far.
    processes: u64,
}

impl Order {
    /// Hands the record of `bytes` (the line at byte `at`) to `to`; the
    /// end line is returned.
    fn line(
        &mut self,
        bytes: &[u8],
        at: u64,
        to: &mut impl Records,
    ) -> Result<Option<SnapEnd>, LinesError> {
        self.line += 1;
        let line = self.line;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let record: SnapLine<RegionRef<'_>> =
            parse(bytes).map_err(|error| LinesError::Line { line, error })?;
        match record {
            SnapLine::Region(region) => {
                self.pending += 1;
                to.region(region, at);
            }
            SnapLine::Process(process) => {
                (self.pending, self.processes) = (0, self.processes + 1);
                to.process(process);
            }
            SnapLine::Dropped(d) if d.regions == self.pending => {
                self.pending = 0;
                to.dropped();
            }
            SnapLine::Dropped(_) => {
                let what = "a dropped line that takes back the regions since the last process";
                return Err(LinesError::Order { line, what });
            }
            SnapLine::End(_) if self.pending > 0 => {
                let what = "a process line after the last regions, before the end line";
                return Err(LinesError::Order { line, what });
            }
            SnapLine::End(end) if end.processes != self.processes => {
                let what = "an end line that counts the process lines before it";
                return Err(LinesError::Order { line, what });
            }
            SnapLine::End(end) => return Ok(Some(end)),
        }
        Ok(None)
    }

    /// After the end line: nothing but blank lines.
    fn rest(
        mut self,
        mut r: impl BufRead,
        head: SnapHead,
        end: SnapEnd,
    ) -> Result<(SnapHead, SnapEnd), LinesError> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            self.line += 1;
            match r.read_until(b'\n', &mut buf)? {
                0 => return Ok((head, end)),
                _ if buf.iter().all(u8::is_ascii_whitespace) => {}
                _ => {
                    return Err(LinesError::Order {
                        line: self.line,
                        what: "nothing after the end line",
                    })
                }
            }
        }
    }
}

/// A snapshot file's records handed to a feed, its process lines kept.
struct Feeding<'f, F> {
    feed: &'f mut F,
    processes: Vec<SnapProcess>,
    /// Whether the lines' offsets are the file's (handed to `feed`).
    offsets: bool,
}

impl<F: LinesFeed> Records for Feeding<'_, F> {
    fn region(&mut self, region: RegionRef<'_>, at: u64) {
        if self.offsets {
            self.feed.at(at);
        }
        self.feed.region(region);
    }
    fn dropped(&mut self) {
        self.feed.dropped();
    }
    fn process(&mut self, process: SnapProcessLine) {
        let mut p = process.into_process(Vec::new());
        self.feed.line(&mut p);
        self.feed.process();
        self.processes.push(p);
    }
}

/// The snapshot in the file `r` reads, its regions handed to `feed` (the
/// snapshot returned has none), with their lines' offsets where `offsets`
/// (`r` is the file from its start).
pub(crate) fn read_feeding(
    r: impl BufRead,
    feed: &mut impl LinesFeed,
    offsets: bool,
) -> Result<Snapshot, LinesError> {
    let mut feeding = Feeding { feed, processes: Vec::new(), offsets };
    let (head, end) = read(r, &mut feeding)?;
    end.snapshot(head, feeding.processes).ok_or(LinesError::Order {
        line: 0,
        what: "an end line with a figure for each process line",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"{"memtally_snapshot":2,"kind":"linux","time":null,"unix_time":null,"host":null,"kernel":null,"proc_root":null,"machine":null}"#;
    const REGION: &str = r#"{"region":{"start":4096,"end":8192,"perms":"rw-p","path":"/a \"b\"","category":"heap","rss":4096}}"#;
    const PROCESS: &str = r#"{"process":{"pid":7,"ppid":1,"user":"root","comm":"x","command":"x","source":"smaps","totals":{"rss":4096},"categories":[]}}"#;

    fn end(processes: u64) -> String {
        let shares = vec!["0"; processes as usize].join(",");
        format!(
            r#"{{"end":{{"processes":{processes},"totals":{{"rss":4096}},"categories":[],"notes":[],"shmem_swap":[{shares}]}}}}"#
        )
    }

    fn read_text(text: &str) -> Result<Snapshot, LinesError> {
        let mut kept = crate::source::parse::snapshot_feed::Kept::default();
        read_feeding(text.as_bytes(), &mut kept, false).map(|snap| kept.into_snapshot(snap))
    }

    #[test]
    fn records_make_the_snapshot_and_dropped_regions_are_no_process_s() {
        let text = [HEAD, REGION, r#"{"dropped":{"regions":1}}"#, REGION, REGION, PROCESS, &end(1)]
            .join("\n");
        let snap = read_text(&text).unwrap();
        assert_eq!(snap.processes.len(), 1);
        let p = &snap.processes[0];
        assert_eq!((p.pid, p.regions.len(), p.totals.shmem_swap), (Some(7), 2, Some(0)));
        assert_eq!(p.regions[0].path.as_deref(), Some("/a \"b\""));
        assert_eq!(snap.memtally_snapshot, 1, "in memory: the one-object document");
        // A trailing newline and blank lines are fine.
        assert!(read_text(&format!("{text}\n\n")).is_ok());
    }

    #[test]
    fn what_no_snapshot_has_is_refused_at_its_line() {
        let order = |text: &[&str]| match read_text(&text.join("\n")) {
            Err(LinesError::Order { line, .. }) => line,
            other => panic!("{other:?}"),
        };
        assert_eq!(order(&[HEAD, REGION, PROCESS]), 4, "cut short: no end line");
        assert_eq!(order(&[HEAD, REGION, PROCESS, REGION, &end(1)]), 5, "regions of no process");
        assert_eq!(order(&[HEAD, REGION, r#"{"dropped":{"regions":2}}"#]), 3);
        assert_eq!(order(&[HEAD, PROCESS, &end(2)]), 3, "the end counts the processes");
        assert_eq!(order(&[HEAD, PROCESS, &end(1), REGION]), 4, "nothing after the end");
        match read_text(&[HEAD, PROCESS, r#"{"region":{"start":1}}"#].join("\n")) {
            Err(LinesError::Line { line: 3, .. }) => {}
            other => panic!("a region without its category: {other:?}"),
        }
        match read_text(&[HEAD, PROCESS, r#"{"other":{}}"#].join("\n")) {
            Err(LinesError::Line { line: 3, .. }) => {}
            other => panic!("an unknown record: {other:?}"),
        }
        let v3 = HEAD.replace(":2,", ":3,");
        assert!(matches!(read_text(&v3), Err(LinesError::Version(3))));
    }
}
