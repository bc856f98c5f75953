//! `/proc/PID/status`: identity and the kernel's resident totals.

use super::ParseError;

/// The fields of `status` memtally uses. Sizes are bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// The command name (`comm`, at most 15 bytes).
    pub name: Option<String>,
    /// The state letter: `R`, `S`, `D`, `Z` (zombie), `X` (dead), ...
    pub state: Option<char>,
    /// Parent process id.
    pub ppid: Option<u32>,
    /// Effective user id (the second of the four `Uid:` numbers): the user
    /// `ps` and `top` show, and the owner of /proc/PID for a dumpable process.
    pub uid: Option<u32>,
    /// `Kthread: 1` (kernels since 6.x); older kernels leave it out.
    pub kthread: Option<bool>,
    /// `VmSize`: virtual size.
    pub vm_size: Option<u64>,
    /// `VmRSS`: resident, the three kinds below together.
    pub vm_rss: Option<u64>,
    /// `RssAnon`: resident anonymous memory.
    pub rss_anon: Option<u64>,
    /// `RssFile`: resident file-backed memory.
    pub rss_file: Option<u64>,
    /// `RssShmem`: resident shared memory (tmpfs, SysV, shared anonymous).
    pub rss_shmem: Option<u64>,
    /// `VmSwap`: swapped out anonymous memory.
    pub vm_swap: Option<u64>,
    /// `VmHWM`: the most resident the process has been (its RSS high-water mark).
    pub vm_hwm: Option<u64>,
}

impl Status {
    /// Chromium's Linux "private memory footprint": RssAnon + VmSwap;
    /// `None` when the kernel prints neither.
    pub fn footprint(&self) -> Option<u64> {
        match (self.rss_anon, self.vm_swap) {
            (None, None) => None,
            (a, s) => Some(a.unwrap_or(0).saturating_add(s.unwrap_or(0))),
        }
    }

    /// A process that has exited: a zombie its parent has not reaped yet,
    /// or one being torn down. Its memory is gone.
    pub fn exited(&self) -> bool {
        matches!(self.state, Some('Z') | Some('X'))
    }
}

/// Parses the text of a `status` file. Accepts any bytes (read as UTF-8,
/// lossily): a line that is not `Key: value`, an unknown key or a value
/// that does not read leaves that field `None`, so it never fails; the
/// `Result` is the one signature of the parsers in this folder.
pub fn parse(input: &[u8]) -> Result<Status, ParseError> {
    let text = String::from_utf8_lossy(input);
    let mut s = Status::default();
    for line in text.lines() {
        let Some((key, raw)) = line.split_once(':') else { continue };
        let value = raw.trim();
        match key {
            "Name" => s.name = Some(name(raw)),
            "State" => s.state = value.chars().next(),
            "PPid" => s.ppid = value.parse().ok(),
            "Uid" => s.uid = value.split_whitespace().nth(1).and_then(|v| v.parse().ok()),
            "Kthread" => s.kthread = Some(value == "1"),
            "VmSize" => s.vm_size = kb(value),
            "VmRSS" => s.vm_rss = kb(value),
            "RssAnon" => s.rss_anon = kb(value),
            "RssFile" => s.rss_file = kb(value),
            "RssShmem" => s.rss_shmem = kb(value),
            "VmSwap" => s.vm_swap = kb(value),
            "VmHWM" => s.vm_hwm = kb(value),
            _ => {}
        }
    }
    Ok(s)
}

/// The command name as the task holds it: the kernel prints it after a
/// tab with only a newline and a backslash escaped (`\n`, `\\`), where
/// `stat` and `comm` print it raw (spaces, a trailing one included, are
/// the name's). A value without the tab (a hand-made file) is trimmed.
fn name(raw: &str) -> String {
    let Some(value) = raw.strip_prefix('\t') else { return raw.trim().to_string() };
    if !value.contains('\\') {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn kb(value: &str) -> Option<u64> {
    value.strip_suffix(" kB")?.trim().parse::<u64>().ok()?.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_unescaped_as_the_kernel_escaped_it() {
        let s = parse(b"Name:\ta\\\\b\\nc \nPPid:\t1\n").unwrap();
        assert_eq!(s.name.as_deref(), Some("a\\b\nc "));
        let plain = parse(b"Name:\tsleep\n").unwrap();
        assert_eq!(plain.name.as_deref(), Some("sleep"));
        assert_eq!(parse(b"Name: made by hand \n").unwrap().name.as_deref(), Some("made by hand"));
    }

    /// A setuid program runs as its owner: the user shown is the effective
    /// one, as ps(1) shows it, not the real user who started it.
    #[test]
    fn the_user_is_the_effective_one() {
        let s = parse(b"Name:\tsu\nUid:\t1000\t0\t0\t0\n").unwrap();
        assert_eq!(s.uid, Some(0));
    }

    #[test]
    fn reads_the_fields_it_needs() {
        let s = parse(b"Name:\tgst-launch-1.0\nState:\tZ (zombie)\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\nKthread:\t0\nVmHWM:\t   10240 kB\nVmRSS:\t    8524 kB\n").unwrap();
        assert_eq!(s.name.as_deref(), Some("gst-launch-1.0"));
        assert_eq!(s.ppid, Some(1));
        assert_eq!(s.state, Some('Z'));
        assert_eq!(s.uid, Some(1000));
        assert_eq!(s.kthread, Some(false));
        assert_eq!(s.vm_rss, Some(8524 * 1024));
        assert_eq!(s.vm_hwm, Some(10240 * 1024));
        assert_eq!(s.vm_swap, None);
    }
}
