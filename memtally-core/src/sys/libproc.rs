//! macOS's process information: libproc's process list, identities and
//! memory, and the user database. The records are plain data, the same on
//! every system (the pure conversions to the model, `source::libproc`,
//! are tested on Linux with records built by hand); the calls that fill
//! them are macOS's.

#[cfg(target_os = "macos")]
use std::ffi::{CStr, CString};
#[cfg(target_os = "macos")]
use std::io;

/// A process's identity as libproc gives it (`struct proc_bsdinfo`, the
/// fields memtally uses, and `proc_pidpath`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BsdInfo {
    /// `pbi_pid`.
    pub pid: u32,
    /// `pbi_ppid`.
    pub ppid: u32,
    /// `pbi_ruid`: the real user, as Linux's `status` `Uid:` first field.
    pub ruid: u32,
    /// `pbi_comm`: at most 16 bytes, NUL-padded.
    pub comm: Vec<u8>,
    /// `pbi_name`: at most 32 bytes, NUL-padded; the longer name, empty
    /// for some processes (and for another user's, read as short info).
    pub name: Vec<u8>,
    /// `proc_pidpath`: the executable's path, where it could be read.
    pub path: Option<Vec<u8>>,
}

/// A process's memory as libproc gives it (`struct rusage_info_v4`, the
/// fields memtally uses), in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rusage {
    /// `ri_phys_footprint`: what Activity Monitor's Memory column and
    /// `footprint` show.
    pub phys_footprint: u64,
    /// `ri_lifetime_max_phys_footprint`: the most it has been.
    pub lifetime_max_phys_footprint: u64,
    /// `ri_resident_size`.
    pub resident_size: u64,
}

/// macOS: every process's PID (`proc_listallpids`).
#[cfg(target_os = "macos")]
pub(crate) fn all_pids() -> io::Result<Vec<u32>> {
    // The count first (a null buffer), then room for more that start meanwhile.
    // SAFETY: a null buffer of size 0 only asks for the count.
    let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut pids: Vec<libc::pid_t> = vec![0; n as usize + 64];
    let bytes = (pids.len() * std::mem::size_of::<libc::pid_t>()) as libc::c_int;
    // SAFETY: `pids` is valid for `bytes` bytes of writes.
    let n = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    pids.truncate((n as usize).min(pids.len()));
    Ok(pids.into_iter().filter_map(|p| u32::try_from(p).ok()).collect())
}

/// macOS: a process's identity (`proc_pidinfo` `PROC_PIDTBSDINFO`; for
/// another user's process, which that refuses to all but root,
/// `PROC_PIDT_SHORTBSDINFO`, which has no long name) and executable
/// (`proc_pidpath`, left out where refused).
#[cfg(target_os = "macos")]
pub(crate) fn bsd_info(pid: u32) -> io::Result<BsdInfo> {
    let raw = pid as libc::c_int;
    let bytes = |chars: &[libc::c_char]| chars.iter().map(|&c| c as u8).collect::<Vec<u8>>();
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    let short = std::mem::size_of::<libc::proc_bsdshortinfo>() as libc::c_int;
    let mut path = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    // SAFETY: all-zero proc_bsdinfo and proc_bsdshortinfo are valid
    // values to be overwritten; each buffer is valid for the size given
    // with it.
    let (mut out, path_len) = unsafe {
        let mut info: libc::proc_bsdinfo = std::mem::zeroed();
        let n = libc::proc_pidinfo(raw, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size);
        let out = if n == size {
            BsdInfo {
                pid: info.pbi_pid,
                ppid: info.pbi_ppid,
                ruid: info.pbi_ruid,
                comm: bytes(&info.pbi_comm),
                name: bytes(&info.pbi_name),
                path: None,
            }
        } else {
            let mut info: libc::proc_bsdshortinfo = std::mem::zeroed();
            let flavor = libc::PROC_PIDT_SHORTBSDINFO;
            if libc::proc_pidinfo(raw, flavor, 0, (&raw mut info).cast(), short) != short {
                return Err(io::Error::last_os_error());
            }
            BsdInfo {
                pid: info.pbsi_pid,
                ppid: info.pbsi_ppid,
                ruid: info.pbsi_ruid,
                comm: bytes(&info.pbsi_comm),
                name: Vec::new(),
                path: None,
            }
        };
        (out, libc::proc_pidpath(raw, path.as_mut_ptr().cast(), path.len() as u32))
    };
    if path_len > 0 {
        path.truncate(path_len as usize);
        out.path = Some(path);
    }
    Ok(out)
}

/// macOS: a process's memory (`proc_pid_rusage` `RUSAGE_INFO_V4`).
#[cfg(target_os = "macos")]
pub(crate) fn rusage(pid: u32) -> io::Result<Rusage> {
    // SAFETY: an all-zero rusage_info_v4 is a valid value to be
    // overwritten; the call writes one of that flavour's size.
    let (info, rc) = unsafe {
        let mut info: libc::rusage_info_v4 = std::mem::zeroed();
        let rc = libc::proc_pid_rusage(
            pid as libc::c_int,
            libc::RUSAGE_INFO_V4,
            (&raw mut info).cast::<libc::rusage_info_t>(),
        );
        (info, rc)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Rusage {
        phys_footprint: info.ri_phys_footprint,
        lifetime_max_phys_footprint: info.ri_lifetime_max_phys_footprint,
        resident_size: info.ri_resident_size,
    })
}

/// macOS: the login name of `uid` from the system's user database
/// (Directory Services: `/etc/passwd` holds only the system's own users).
#[cfg(target_os = "macos")]
pub(crate) fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: `pwd` and `buf` are valid for the call; on success `found`
    // points at `pwd`, whose `pw_name` points into `buf` (NUL-terminated).
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found);
        if rc != 0 || found.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        Some(CStr::from_ptr(pwd.pw_name).to_string_lossy().into_owned())
    }
}

/// macOS: the uid of the login name `name` (see [`user_name`]).
#[cfg(target_os = "macos")]
pub(crate) fn uid_of(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: as in `user_name`; only the uid is read.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let rc = libc::getpwnam_r(name.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found);
        (rc == 0 && !found.is_null()).then_some(pwd.pw_uid)
    }
}
