//! macOS's processes through libproc, as `top` reads them there: the
//! process list (`proc_listallpids`), each one's identity (`proc_pidinfo`
//! `PROC_PIDTBSDINFO`: name, real user, parent; `proc_pidpath`: the
//! executable) and memory (`proc_pid_rusage` `RUSAGE_INFO_V4`: Apple's
//! physical footprint, its lifetime peak and the resident size).
//!
//! The calls are in `sys::libproc` (macOS only), which fills plain records
//! ([`BsdInfo`], [`Rusage`]); [`identity`] and [`memory`] turn those into
//! the model: pure functions, compiled and tested on every system.

// Used on macOS; compiled (and tested) everywhere.
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

use crate::model::{ProcInfo, Sizes};
pub(crate) use crate::sys::libproc::{BsdInfo, Rusage};

/// Why a process's memory could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Another user's process, memtally not root (`EPERM`).
    Denied,
    /// It exited between the listing and the read (`ESRCH`).
    Gone,
    /// Anything else, in words.
    Failed(String),
}

/// The text of a NUL-padded C array: up to the first NUL.
fn text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Who a process is, in the model. `comm` is the longer `pbi_name` where
/// there is one; the command is the executable's path (as `ps -o comm`
/// prints it on macOS: arguments are not read), else empty (then shown
/// as `[comm]`); the program is the path's last name, else `comm`.
pub(crate) fn identity(bsd: &BsdInfo) -> ProcInfo {
    let name = text(&bsd.name);
    let comm = if name.is_empty() { text(&bsd.comm) } else { name };
    let cmdline = bsd.path.as_deref().map(text).unwrap_or_default();
    let program = match cmdline.rsplit('/').next() {
        Some(last) if !last.is_empty() => last.to_string(),
        _ => comm.clone(),
    };
    ProcInfo {
        pid: bsd.pid,
        ppid: bsd.ppid,
        uid: Some(bsd.ruid),
        comm,
        cmdline,
        program,
        ..ProcInfo::default()
    }
}

/// A process's figures, in the model: `footprint` is Apple's physical
/// footprint (README, "footprint"), `footprint_peak` its lifetime
/// maximum, `rss` the resident size. libproc gives no proportional or
/// per-mapping figure: those stay unknown, never zero.
pub(crate) fn memory(usage: &Rusage) -> Sizes {
    Sizes {
        footprint: Some(usage.phys_footprint),
        footprint_peak: Some(usage.lifetime_max_phys_footprint),
        rss: Some(usage.resident_size),
        ..Sizes::default()
    }
}

/// Every process's identity: (identities, processes that exited while
/// listed). A process whose identity is refused is left out (it would
/// have no name, user or parent).
#[cfg(target_os = "macos")]
pub(crate) fn identities() -> std::io::Result<(Vec<BsdInfo>, usize)> {
    let mut out = Vec::new();
    let mut gone = 0;
    for pid in crate::sys::libproc::all_pids()? {
        match crate::sys::libproc::bsd_info(pid) {
            Ok(info) => out.push(info),
            Err(_) => gone += 1,
        }
    }
    Ok((out, gone))
}

/// One process's memory, or why it could not be read.
#[cfg(target_os = "macos")]
pub(crate) fn usage(pid: u32) -> Result<Rusage, Unread> {
    crate::sys::libproc::rusage(pid).map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => Unread::Denied,
        Some(libc::ESRCH) => Unread::Gone,
        _ => Unread::Failed(e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // No Mac is on the project's machines: these records were not read
    // from one. They are built by hand in the shapes libproc gives
    // (NUL-padded name arrays, byte counts), with figures of the size a
    // Safari web content process shows in Activity Monitor (a footprint
    // of some hundred MB below its peak, resident above it), to check
    // the copying, not the kernel.
    fn padded(s: &str, len: usize) -> Vec<u8> {
        let mut v = s.as_bytes().to_vec();
        v.resize(len, 0);
        v
    }

    fn web_content() -> BsdInfo {
        BsdInfo {
            pid: 640,
            ppid: 1,
            ruid: 501,
            comm: padded("com.apple.WebKi", 16),
            name: padded("com.apple.WebKit.WebContent", 32),
            path: Some(padded(
                "/System/Library/Frameworks/WebKit.framework/Versions/A/XPCServices/com.apple.WebKit.WebContent.xpc/Contents/MacOS/com.apple.WebKit.WebContent",
                4096,
            )),
        }
    }

    #[test]
    fn identity_takes_the_long_name_the_real_user_and_the_executable() {
        let p = identity(&web_content());
        assert_eq!((p.pid, p.ppid, p.uid), (640, 1, Some(501)));
        assert_eq!(p.comm, "com.apple.WebKit.WebContent");
        assert!(p.cmdline.starts_with("/System/Library/Frameworks/WebKit.framework/"));
        assert!(!p.cmdline.contains('\0'));
        assert_eq!(p.program, "com.apple.WebKit.WebContent");
        assert_eq!(p.cgroup, None);
    }

    #[test]
    fn without_a_long_name_or_a_path_the_short_name_serves() {
        let bsd = BsdInfo {
            pid: 88,
            ppid: 1,
            ruid: 0,
            comm: padded("launchd", 16),
            name: vec![0; 32],
            path: None,
        };
        let p = identity(&bsd);
        assert_eq!(
            (p.comm.as_str(), p.cmdline.as_str(), p.program.as_str()),
            ("launchd", "", "launchd")
        );
        assert_eq!(p.command(), "[launchd]");
        // A name that fills its array has no NUL: all of it is the name.
        let full = BsdInfo { comm: b"0123456789abcdef".to_vec(), ..bsd };
        assert_eq!(identity(&full).comm, "0123456789abcdef");
    }

    #[test]
    fn memory_is_the_footprint_its_peak_and_resident_only() {
        let usage = Rusage {
            phys_footprint: 412_303_360,
            lifetime_max_phys_footprint: 689_963_008,
            resident_size: 524_288_000,
        };
        let s = memory(&usage);
        assert_eq!(s.footprint, Some(412_303_360));
        assert_eq!(s.footprint_peak, Some(689_963_008));
        assert_eq!(s.rss, Some(524_288_000));
        assert_eq!((s.pss, s.private_dirty, s.swap), (None, None, None), "unknown, not 0");
        assert_eq!(s.uss(), None);
    }
}
