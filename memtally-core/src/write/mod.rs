//! Every file memtally writes goes through here, so every one is created
//! the same safe way:
//!
//! - the directory it goes in is walked to one component at a time and
//!   held open ([`Dir`]): a symbolic link on the way is followed only
//!   when root or memtally's own user owns it, and every later step is
//!   relative to the descriptor, so no component swapped for a link
//!   meanwhile redirects a write;
//! - a file is made in a directory only when no other user could replace
//!   it there ([`Dir::check`]: owned by root or memtally's user, and not
//!   writable by group or others without the sticky bit);
//! - written to a new file with a random name in the target's directory,
//!   created exclusively (`O_EXCL | O_NOFOLLOW`), then synced and renamed
//!   over the target: a reader sees the old file or the new one, never
//!   half of one, and a symlink planted at the target is replaced, not
//!   followed;
//! - a replaced file's permission bits are kept only when it is memtally's
//!   own user's, and never its setuid, setgid or sticky bits;
//! - removed on every failure (a full disk leaves nothing behind), and
//!   never named in an error: errors name the target;
//! - a target that is not a regular file (a device such as `/dev/null`, a
//!   pipe) is written through, never replaced, and one of memtally's own
//!   descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) is
//!   written through a copy of it, as the shell set it up (`>` or `>>`).

mod dir;
mod file;
mod name;
mod remove;
mod staged;
mod target;
mod unfinished;
mod walk;

use std::io::Write;
use std::path::Path;

pub use dir::Dir;
pub use file::NewFile;
pub use staged::Staged;
pub use unfinished::remove_all as remove_unfinished;

/// Who may read what memtally writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// As any program's new file: 0666 less the umask (a capture's
    /// process directory 0755); a replaced file of memtally's own user
    /// keeps its bits.
    Umask,
    /// memtally's user alone (0600, a directory 0700), from the moment
    /// the file exists: for what holds what only that user may read (the
    /// mapping addresses of another user's or root's process, which the
    /// kernel hides from everyone else to protect ASLR).
    Private,
}

impl Access {
    /// For a file holding the mapping addresses of processes read from
    /// the live system (`live`) or from a recording: private when memtally
    /// runs as root and reads the live system.
    pub(crate) fn for_addresses(live: bool) -> Access {
        match live && crate::sys::euid() == 0 {
            true => Access::Private,
            false => Access::Umask,
        }
    }
}

use crate::error::{Error, Result};

/// Writes `bytes` to `path` (see the module docs), readable as `access` says.
pub fn write_file_as(path: &Path, access: Access, bytes: &[u8]) -> Result<()> {
    let mut f = NewFile::create_as(path, access)?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::Permissions;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A write the system (or memtally's own check) refused for lack of
    /// permission.
    fn refused(e: &Error) -> bool {
        matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied)
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.prom");
        write_file_as(&p, Access::Umask, b"a 1\n").unwrap();
        write_file_as(&p, Access::Umask, b"a 2\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"a 2\n");
        assert_eq!(names(dir.path()), ["m.prom"]);
    }

    #[test]
    fn a_planted_symlink_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        let link = dir.path().join("out.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        write_file_as(&link, Access::Umask, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_file());
        assert_eq!(std::fs::read(&link).unwrap(), b"new");
    }

    #[test]
    fn a_device_is_written_through_not_replaced() {
        write_file_as(Path::new("/dev/null"), Access::Umask, b"discarded").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    #[test]
    fn a_failure_leaves_nothing_and_names_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_file_as(Path::new("/dev/full"), Access::Umask, b"x").unwrap_err();
        assert!(e.to_string().starts_with("/dev/full"), "{e}");
        let e = write_file_as(dir.path(), Access::Umask, b"x").unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_file_dropped_before_commit_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("series.csv");
        let mut f = NewFile::create(&p).unwrap();
        f.write_all(b"elapsed_s\n").unwrap();
        f.flush().unwrap();
        assert!(!p.exists(), "the name is taken only at commit");
        drop(f);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_replaced_file_keeps_its_permission_bits_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"").unwrap();
        std::fs::set_permissions(&p, Permissions::from_mode(0o6755)).unwrap();
        write_file_as(&p, Access::Umask, b"x").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777, 0o755);
    }

    #[test]
    fn an_open_descriptor_named_in_proc_is_written_through_a_copy() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("appended");
        std::fs::write(&p, b"before\n").unwrap();
        let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        let named = format!("/proc/self/fd/{}", f.as_raw_fd());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&named, &link).unwrap();
        write_file_as(Path::new(&named), Access::Umask, b"one\n").unwrap();
        write_file_as(&link, Access::Umask, b"two\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"before\none\ntwo\n");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(names(dir.path()), ["appended", "link"]);
    }

    #[test]
    fn a_directory_everyone_may_write_without_the_sticky_bit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, Permissions::from_mode(0o777)).unwrap();
        let e = write_file_as(&open.join("f"), Access::Umask, b"x").unwrap_err();
        assert!(refused(&e), "{e}");
        assert!(e.to_string().contains("writable by everyone (mode 777)"), "{e}");
        std::fs::set_permissions(&open, Permissions::from_mode(0o1777)).unwrap();
        write_file_as(&open.join("f"), Access::Umask, b"x").unwrap();
    }

    #[test]
    fn dir_create_makes_parents_and_beneath_never_climbs_or_follows() {
        let dir = tempfile::tempdir().unwrap();
        let d = Dir::create(&dir.path().join("a/b/c")).unwrap();
        assert!(dir.path().join("a/b/c").is_dir());
        let e = d.beneath(Path::new("../x")).err().unwrap();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("a/b/c/sys")).unwrap();
        let e = d.beneath(Path::new("sys/fs")).err().unwrap();
        assert!(refused(&e), "{e}");
        assert!(names(&elsewhere).is_empty());
        // An own link to a directory on the way is followed.
        std::os::unix::fs::symlink(dir.path().join("a/b"), dir.path().join("ab")).unwrap();
        write_file_as(&dir.path().join("ab/f"), Access::Umask, b"x").unwrap();
        assert_eq!(std::fs::read(dir.path().join("a/b/f")).unwrap(), b"x");
    }

    #[test]
    fn a_staged_directory_replaces_a_link_and_an_old_tree_without_following() {
        let dir = tempfile::tempdir().unwrap();
        let out = Dir::create(&dir.path().join("out")).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("keep"), b"k").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("out/7")).unwrap();
        for round in 0..2 {
            let s = Staged::new(&out, dir.path().join("out/7")).unwrap();
            s.dir().write_file("smaps".as_ref(), b"s").unwrap();
            let fdinfo = s.dir().beneath(Path::new("fdinfo")).unwrap();
            fdinfo.write_file("3".as_ref(), b"f").unwrap();
            if round == 1 {
                // The old tree holds a link out: removed, not followed.
                std::os::unix::fs::symlink(&elsewhere, dir.path().join("out/7/fdinfo/out"))
                    .unwrap();
            }
            s.install("7", Access::Umask).unwrap();
            assert_eq!(names(&dir.path().join("out")), ["7"], "round {round}");
            assert_eq!(names(&elsewhere), ["keep"]);
        }
        let m = std::fs::symlink_metadata(dir.path().join("out/7")).unwrap();
        assert!(m.is_dir() && m.permissions().mode() & 0o777 == 0o755);
        // Dropped before install: nothing is left.
        let s = Staged::new(&out, dir.path().join("out/8")).unwrap();
        s.dir().write_file("smaps".as_ref(), b"s").unwrap();
        drop(s);
        assert_eq!(names(&dir.path().join("out")), ["7"]);
    }

    #[test]
    fn a_held_directory_is_named_where_it_is_after_its_path_was_swapped() {
        let tmp = tempfile::tempdir().unwrap();
        let given = tmp.path().join("out");
        let d = Dir::create(&given).unwrap();
        assert_eq!(d.written_path(), given);
        // The path now leads to another directory: the writes went to the
        // held one, which is named where it is.
        let moved = tmp.path().join("moved");
        std::fs::rename(&given, &moved).unwrap();
        std::fs::create_dir(&given).unwrap();
        d.write_file("f".as_ref(), b"x").unwrap();
        assert_eq!(std::fs::read(moved.join("f")).unwrap(), b"x");
        assert_eq!(d.written_path(), moved.canonicalize().unwrap());
        // Removed only while empty and still at its path.
        let e = Dir::create(&tmp.path().join("empty")).unwrap();
        assert!(e.remove_if_empty());
        assert!(!tmp.path().join("empty").exists());
        // Its path leads to another (empty) directory: neither is removed.
        assert!(!d.remove_if_empty());
        assert!(given.is_dir() && moved.join("f").exists());
    }

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"").unwrap();
        std::fs::set_permissions(&p, Permissions::from_mode(0o640)).unwrap();
        write_file_as(&p, Access::Umask, b"x").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
    }
}
