//! Bad bytes: file names with newlines, spaces and bytes that are not
//! UTF-8, deleted files, files cut short, and files that are not what
//! they claim to be. A clear error naming the file and line, or the right
//! figures; never a panic.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::support::run;

/// A child maps a file whose name holds a newline, a space and a byte
/// that is not UTF-8, and the file is then deleted: the kernel prints the
/// newline as `\012` and appends ` (deleted)`; memtally keeps every
/// mapping, shows the name with U+FFFD for the bad byte, and one mapping
/// stays one line in the table.
#[test]
fn hostile_file_names_stay_one_mapping_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut name = dir.path().as_os_str().as_bytes().to_vec();
    name.extend_from_slice(b"/we ird\nname\xff.bin");
    let path = std::path::PathBuf::from(OsStr::from_bytes(&name));
    std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let c_path = std::ffi::CString::new(name.clone()).unwrap();
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        unsafe {
            let fd = libc::open(c_path.as_ptr(), libc::O_RDONLY);
            let p = libc::mmap(
                std::ptr::null_mut(),
                3 * 4096,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                fd,
                0,
            );
            if fd < 0 || p == libc::MAP_FAILED {
                libc::_exit(1);
            }
            let _ = std::ptr::read_volatile(p as *const u8);
            libc::write(fds[1], b"k".as_ptr().cast(), 1);
            loop {
                libc::pause();
            }
        }
    }
    let mut b = [0u8; 1];
    assert_eq!(unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) }, 1);
    std::fs::remove_file(&path).unwrap();
    let kill = scopeguard(pid);

    let pid_s = pid.to_string();
    let doc: serde_json::Value =
        serde_json::from_slice(&run(&["show", &pid_s, "--format", "json"]).stdout).unwrap();
    let shown = format!("{}/we ird\\012name\u{fffd}.bin (deleted)", dir.path().display());
    let r = doc["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"].as_str() == Some(shown.as_str()))
        .unwrap_or_else(|| panic!("a region named {shown:?}"));
    assert_eq!(r["size"], 3 * 4096);
    assert_eq!(r["category"], "file_rodata");
    let maps_lines = std::fs::read(format!("/proc/{pid}/maps"))
        .unwrap()
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(doc["regions"].as_array().unwrap().len(), maps_lines);
    let table = String::from_utf8(run(&["show", &pid_s, "--regions"]).stdout).unwrap();
    // The rounding row (when smaps' kB rounding left any) and the line
    // saying where the total comes from are not mappings.
    let lines = table.lines().filter(|l| !l.starts_with("rounding ") && !l.starts_with("total: "));
    assert_eq!(lines.count(), maps_lines + 3, "heading, header, one line per mapping, total");
    let by_path = String::from_utf8(run(&["show", &pid_s, "--by", "path"]).stdout).unwrap();
    assert!(by_path.contains("we ird\\012name\u{fffd}.bin (deleted)"), "{by_path}");
    let classic = run(&["show", &pid_s, "--classic"]);
    assert!(classic.status.success());
    drop(kill);
}

/// Kills and reaps a forked child when dropped.
fn scopeguard(pid: i32) -> impl Drop {
    struct Kill(i32);
    impl Drop for Kill {
        fn drop(&mut self) {
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
                libc::waitpid(self.0, std::ptr::null_mut(), 0);
            }
        }
    }
    Kill(pid)
}

/// A recorded smaps cut short inside a mapping: an error naming the file
/// and the line, not a silently shorter list.
#[test]
fn a_truncated_capture_is_refused_with_file_and_line() {
    let src = crate::support::repo().join("testdata/fixtures/linux/gst-launch-audiotestsrc/proc");
    let pid = std::fs::read_dir(&src)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .next()
        .unwrap();
    let text = std::fs::read_to_string(src.join(pid.to_string()).join("smaps")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(pid.to_string());
    std::fs::create_dir(&p).unwrap();
    for f in ["comm", "cmdline", "status"] {
        std::fs::copy(src.join(pid.to_string()).join(f), p.join(f)).unwrap();
    }
    // Cut after the 10th line of the 40th mapping, at a line boundary.
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(" r") || l.contains(" -"))
        .filter(|(_, l)| {
            l.split_whitespace().next().is_some_and(|w| {
                w.contains('-') && w.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
            })
        })
        .nth(39)
        .unwrap()
        .0;
    let cut = lines[..header + 10].join("\n") + "\n";
    std::fs::write(p.join("smaps"), &cut).unwrap();
    let out = run(&["--proc-root", dir.path().to_str().unwrap(), "show", &pid.to_string()]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{pid}/smaps")) && err.contains(&format!("line {}", header + 10)),
        "{err}"
    );
    assert!(err.contains("cut short"), "{err}");
    // Cut in the middle of a line: the half line is the error.
    std::fs::write(p.join("smaps"), &cut[..cut.len() - 5]).unwrap();
    let out = run(&["--proc-root", dir.path().to_str().unwrap(), "show", &pid.to_string()]);
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Files that are not vmmap output: a PNG, a Linux smaps.
#[test]
fn not_vmmap_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("shot.png");
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend((0..4000u32).map(|i| (i * 7919 % 251) as u8));
    std::fs::write(&png, &bytes).unwrap();
    let smaps = crate::support::repo()
        .join("testdata/fixtures/linux/gst-launch-audiotestsrc/proc")
        .read_dir()
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_str().is_some_and(|n| n.parse::<u32>().is_ok()))
        .unwrap()
        .path()
        .join("smaps");
    for f in [png.as_path(), smaps.as_path()] {
        let out = run(&["vmmap", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(5), "{}", f.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(f.to_str().unwrap()) && err.contains("vmmap"), "{err}");
    }
}
