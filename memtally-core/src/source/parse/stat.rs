//! `/proc/PID/stat`: the figures that tell one process's life apart
//! (see `source::stamp` for how they are used).

use super::ParseError;

/// `PF_KTHREAD` in `/proc/PID/stat`'s flags field.
const PF_KTHREAD: u64 = 0x0020_0000;

/// The figures of `/proc/PID/stat` that tell one process's life apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The state letter (field 3).
    pub state: char,
    /// The kernel's `PF_*` flags (field 9).
    pub flags: u64,
    /// Start time after boot, in clock ticks (field 22): one life's mark.
    pub start_time: u64,
    /// Virtual size in bytes (field 23); 0 once the address space is gone.
    pub vsize: u64,
    /// Fields 26-28 and 45-51: the layout addresses chosen at exec.
    pub layout: Vec<u64>,
}

/// What a second stamp says about the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The same process, still running.
    Same,
    /// It exited (or is exiting), or its PID now names another process.
    Gone,
    /// It exec'd: what was read may be cut short.
    Execed,
}

/// Parses `/proc/PID/stat`: `pid (comm) state ppid ...`, fields counted
/// from the last `)` (the name may hold any bytes, `)` too). Fails when
/// there is no `)`, the rest is not UTF-8, or the state, flags (field 9)
/// or start time (field 22) are missing or not numbers; a missing vsize
/// or layout address reads as 0 (kernel threads have none).
pub fn parse(input: &[u8]) -> Result<Stamp, ParseError> {
    let bad = |what: &str| ParseError::at(1, format!("not a stat line: {what}"));
    let close =
        input.iter().rposition(|&b| b == b')').ok_or_else(|| bad("no `)` after the name"))?;
    let rest = std::str::from_utf8(&input[close + 1..]).map_err(|_| bad("not UTF-8"))?;
    // fields[0] is field 3 (state).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let num = |field: usize| fields.get(field - 3).and_then(|v| v.parse::<u64>().ok());
    let state = fields.first().and_then(|f| f.chars().next()).ok_or_else(|| bad("no state"))?;
    let mut layout = Vec::new();
    for field in [26, 27, 28, 45, 46, 47, 48, 49, 50, 51] {
        layout.push(num(field).unwrap_or(0));
    }
    Ok(Stamp {
        state,
        flags: num(9).ok_or_else(|| bad("no flags (field 9)"))?,
        start_time: num(22).ok_or_else(|| bad("no start time (field 22)"))?,
        vsize: num(23).unwrap_or(0),
        layout,
    })
}

impl Stamp {
    /// Set for a kernel thread (`PF_KTHREAD` in the flags).
    pub(crate) fn kernel_thread(&self) -> bool {
        self.flags & PF_KTHREAD != 0
    }

    /// Exited, being torn down, or without an address space any more.
    pub fn exited(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x') || (self.vsize == 0 && !self.kernel_thread())
    }

    /// An address space that an exec is still building: it exists
    /// (`vsize` above 0) but its start of code (field 26) is 0. The kernel
    /// sets that last, once the program, its interpreter and the vDSO are
    /// mapped, and shows 1, never 0, to a reader it hides it from; so a
    /// map read meanwhile lacks mappings, and two stamps taken inside the
    /// window agree with each other.
    pub fn under_construction(&self) -> bool {
        !self.kernel_thread() && self.vsize > 0 && self.layout.first() == Some(&0)
    }

    /// What `after` says about the process this stamp was taken of.
    pub fn compare(&self, after: &Stamp) -> Change {
        if after.start_time != self.start_time || after.exited() {
            Change::Gone
        } else if after.layout != self.layout
            || self.under_construction()
            || after.under_construction()
        {
            Change::Execed
        } else {
            Change::Same
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(state: char, start: u64, vsize: u64, stack: u64) -> Vec<u8> {
        // 52 fields; the name holds a space and a parenthesis.
        let mut f: Vec<String> = (0..52).map(|i| i.to_string()).collect();
        f[0] = "42".into();
        f[1] = "(a b) c)".into();
        f[2] = state.to_string();
        f[8] = "4194560".into();
        f[21] = start.to_string();
        f[22] = vsize.to_string();
        f[27] = stack.to_string();
        f.join(" ").into_bytes()
    }

    #[test]
    fn tells_exit_exec_and_reuse_apart() {
        let before = parse(&stat('S', 100, 4096, 7)).unwrap();
        assert_eq!(before.start_time, 100);
        assert_eq!(before.vsize, 4096);
        assert!(!before.kernel_thread());
        let same = parse(&stat('R', 100, 8192, 7)).unwrap();
        assert_eq!(before.compare(&same), Change::Same);
        for gone in [stat('Z', 100, 4096, 7), stat('S', 100, 0, 0), stat('S', 101, 4096, 7)] {
            assert_eq!(before.compare(&parse(&gone).unwrap()), Change::Gone);
        }
        assert_eq!(before.compare(&parse(&stat('S', 100, 4096, 9)).unwrap()), Change::Execed);
    }

    /// Two stamps taken while an exec builds the new address space agree
    /// with each other, yet what was read between them lacks mappings:
    /// a start of code of 0 beside a virtual size says so.
    #[test]
    fn an_address_space_an_exec_is_building_is_not_the_same() {
        // Field 26 (start of code) is the one after field 25's value "24".
        let whole = String::from_utf8(stat('S', 100, 4096, 7)).unwrap();
        let building = whole.replacen(" 24 25 ", " 24 0 ", 1);
        assert_ne!(building, whole);
        let s = parse(building.as_bytes()).unwrap();
        assert!(s.under_construction());
        assert_eq!(s.compare(&s.clone()), Change::Execed);
        let whole = parse(&stat('S', 100, 4096, 7)).unwrap();
        assert!(!whole.under_construction());
        assert_eq!(whole.compare(&whole.clone()), Change::Same);
    }

    #[test]
    fn a_line_without_the_fields_it_needs_is_an_error() {
        assert!(parse(b"42 no parenthesis S 1").is_err());
        // State there, flags (field 9) not.
        assert!(parse(b"42 (x) S 1 2").is_err());
        assert!(parse(b"42 (x) \xff").is_err());
    }
}
