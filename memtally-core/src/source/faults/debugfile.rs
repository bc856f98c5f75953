//! A binary's separate debug file (its DWARF and full symbol table, which
//! distributions ship apart from the stripped binary), found on this
//! machine only, never over the network, in GDB's order: by build-id,
//! `DEBUG_ROOT/.build-id/xx/rest.debug`; else by the `.gnu_debuglink`
//! name next to the binary, in its `.debug/` directory, and under
//! `DEBUG_ROOT` followed by the binary's directory, the file's CRC32
//! checked against the link's.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use object::Object;

/// Where distributions install debug files.
pub(crate) const DEBUG_ROOT: &str = "/usr/lib/debug";

/// The debug file of `binary` (parsed as `obj`), looked up under `root`
/// (`DEBUG_ROOT`; another in tests); `None` when none is installed.
pub(crate) fn debug_file<'d, R: object::ReadRef<'d>>(
    binary: &Path,
    obj: &object::File<'d, R>,
    root: &Path,
) -> Option<PathBuf> {
    if let Ok(Some(id)) = obj.build_id() {
        if id.len() > 1 {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            let path = root.join(".build-id").join(&hex[..2]).join(format!("{}.debug", &hex[2..]));
            if path.is_file() {
                return Some(path);
            }
        }
    }
    let (name, crc) = obj.gnu_debuglink().ok()??;
    // A file name, never a path elsewhere.
    if name.is_empty() || name.contains(&b'/') {
        return None;
    }
    let name = Path::new(OsStr::from_bytes(name));
    let dir = binary.parent()?;
    let under_root = root.join(dir.strip_prefix("/").unwrap_or(dir));
    [dir.join(name), dir.join(".debug").join(name), under_root.join(name)]
        .into_iter()
        .find(|path| path != binary && crc32(path) == Some(crc))
}

/// The CRC32 (the zlib one `.gnu_debuglink` holds) of a file's bytes.
fn crc32(path: &Path) -> Option<u32> {
    let mut file = File::open(path).ok()?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Some(hasher.finalize()),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Builds a C program with `-g`, moves its DWARF to `NAME.debug`
    /// (objcopy --only-keep-debug), strips it and links the two
    /// (--add-gnu-debuglink); `None` (said why) without cc and binutils.
    fn split(dir: &Path) -> Option<(PathBuf, PathBuf)> {
        let src = dir.join("p.c");
        std::fs::write(
            &src,
            "int helper(int x) { return x * 3; }\nint main(void) { return helper(1); }\n",
        )
        .unwrap();
        let exe = dir.join("p");
        let debug = dir.join("p.debug");
        let run = |cmd: &mut Command| cmd.status().is_ok_and(|s| s.success());
        let ok = run(Command::new("cc").args(["-g", "-o"]).arg(&exe).arg(&src))
            && run(Command::new("objcopy").arg("--only-keep-debug").arg(&exe).arg(&debug))
            && run(Command::new("strip").arg("--strip-all").arg(&exe))
            && run(Command::new("objcopy")
                .arg(format!("--add-gnu-debuglink={}", debug.display()))
                .arg(&exe));
        if !ok {
            eprintln!("skipped: needs cc, objcopy and strip");
            return None;
        }
        Some((exe, debug))
    }

    fn find(exe: &Path, root: &Path) -> Option<PathBuf> {
        let data = std::fs::read(exe).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        debug_file(exe, &obj, root)
    }

    #[test]
    fn a_debuglink_is_found_beside_in_dot_debug_and_under_the_root_crc_checked() {
        let dir = tempfile::tempdir().unwrap();
        let Some((exe, debug)) = split(dir.path()) else { return };
        let nowhere = dir.path().join("no-root");
        assert_eq!(find(&exe, &nowhere), Some(debug.clone()), "next to the binary");
        std::fs::create_dir(dir.path().join(".debug")).unwrap();
        let dotted = dir.path().join(".debug/p.debug");
        std::fs::rename(&debug, &dotted).unwrap();
        assert_eq!(find(&exe, &nowhere), Some(dotted.clone()), "in .debug/");
        let root = dir.path().join("root");
        let under = root.join(dir.path().strip_prefix("/").unwrap()).join("p.debug");
        std::fs::create_dir_all(under.parent().unwrap()).unwrap();
        std::fs::rename(&dotted, &under).unwrap();
        assert_eq!(find(&exe, &root), Some(under.clone()), "under the debug root");
        // Another file of the same name: its CRC differs, it is not used.
        std::fs::write(&under, b"not the debug file").unwrap();
        assert_eq!(find(&exe, &root), None);
    }

    #[test]
    fn a_build_id_file_is_found_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let Some((exe, debug)) = split(dir.path()) else { return };
        let data = std::fs::read(&exe).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let Ok(Some(id)) = obj.build_id() else {
            eprintln!("skipped: this cc gives no build-id");
            return;
        };
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let root = dir.path().join("root");
        let by_id = root.join(".build-id").join(&hex[..2]).join(format!("{}.debug", &hex[2..]));
        std::fs::create_dir_all(by_id.parent().unwrap()).unwrap();
        std::fs::rename(&debug, &by_id).unwrap();
        assert_eq!(debug_file(&exe, &obj, &root), Some(by_id));
    }
}
