//! Every write memtally makes, against another user (uid 65534, through
//! `setpriv`) who owns the directory written into, or one above it, or
//! shares a sticky directory with it, and swaps names for links while
//! root runs memtally: nothing is ever created, changed or chmod-ed
//! outside what was named (issue 27 items 1, 2, 4, 8). The tests that
//! need root say so and return when they do not have it.

use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{memtally, names, run, spawn, Killed, Mapping, MIB};

const NOBODY: u32 = 65534;

fn root() -> bool {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root (to act as uid {NOBODY} beside it)");
        return false;
    }
    true
}

fn chown(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), uid, uid) }, 0, "chown {}", p.display());
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

/// A scratch directory others may pass through (0755; tempfile makes 0700).
fn scratch() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    chmod(t.path(), 0o755);
    t
}

/// A victim directory (0700) and a victim file in it (0600): what an
/// attacker would have root write into or chmod.
fn victim(at: &Path) -> (PathBuf, PathBuf) {
    let dir = at.join("victim");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("secret");
    std::fs::write(&file, b"keep me\n").unwrap();
    chmod(&file, 0o600);
    chmod(&dir, 0o700);
    (dir, file)
}

fn untouched(dir: &Path, file: &Path) {
    assert_eq!(names(dir), ["secret"], "created in the victim directory");
    assert_eq!(mode(dir), 0o700, "victim directory chmod-ed");
    assert_eq!(mode(file), 0o600, "victim file chmod-ed");
    assert_eq!(std::fs::read(file).unwrap(), b"keep me\n");
}

/// A shell loop run as uid 65534 in `dir` until killed.
fn attacker(dir: &Path, script: &str) -> Killed {
    let child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", script])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("setpriv runs");
    Killed(child)
}

fn refused(out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains(what), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The owner of the directory above `-o DIR` swaps DIR for a link to the
/// victim, for a directory of its own, and the staging directories inside
/// that one for links, in a loop, while root captures into DIR again and
/// again: nothing is ever written into the victim or chmod-ed there.
#[test]
fn capture_beside_an_attacker_swapping_its_directories_writes_nothing_outside() {
    if !root() {
        return;
    }
    let child = spawn(Mapping::Anonymous(MIB));
    let pid = child.pid.to_string();
    let tmp = scratch();
    let (v, secret) = victim(tmp.path());
    let att = tmp.path().join("att");
    std::fs::create_dir(&att).unwrap();
    chown(&att, NOBODY);
    let script = format!(
        "V={v}; while :; do \
           for d in out/.memtally-capture-* out/{pid}; do \
             [ -d \"$d\" ] && mv -T \"$d\" \"$d.x\" 2>/dev/null && ln -s \"$V\" \"$d\" 2>/dev/null; \
           done; \
           if [ -L out ]; then rm -f out; mkdir out 2>/dev/null; chmod 777 out 2>/dev/null; \
           else mv -T out out.$$ 2>/dev/null; ln -s \"$V\" out; fi; \
         done",
        v = v.display()
    );
    let _a = attacker(&att, &script);
    let (runs, wrote) = captures_beside(&pid, &att.join("out"), (&v, &secret), || {});
    eprintln!("{runs} captures beside the attacker, {wrote} recorded, none outside");
}

/// Runs `capture PID -o OUT` again and again (50 runs or 20 s) beside an
/// attacker, `before` each run, checking after each that the victim is
/// untouched: (runs, runs that recorded).
fn captures_beside(
    pid: &str,
    out: &Path,
    (v, secret): (&Path, &Path),
    before: impl Fn(),
) -> (u32, u32) {
    let (mut runs, mut wrote) = (0, 0);
    let start = Instant::now();
    while runs < 50 && start.elapsed() < Duration::from_secs(20) {
        before();
        let r = run(&["capture", pid, "-o", out.to_str().unwrap()]);
        runs += 1;
        wrote += r.status.success() as u32;
        untouched(v, secret);
    }
    (runs, wrote)
}

/// In a sticky directory shared with another user (as /tmp), links
/// planted where a capture writes its cgroup files (`DIR/sys`), the
/// process (`DIR/PID`) and the machine files (`DIR/meminfo`): never
/// followed, whether planted before the capture or raced against it.
#[test]
fn capture_into_a_sticky_directory_never_follows_planted_links() {
    if !root() {
        return;
    }
    let child = spawn(Mapping::Anonymous(MIB));
    let pid = child.pid.to_string();
    let tmp = scratch();
    let (v, secret) = victim(tmp.path());
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    // Planted before: followed by the old build every time.
    symlink(&v, shared.join("sys")).unwrap();
    chown(&shared.join("sys"), NOBODY);
    let first = run(&["capture", &pid, "-o", shared.to_str().unwrap()]);
    untouched(&v, &secret);
    refused(&first, "sys: a symbolic link where memtally writes a directory, not followed");
    let script = format!(
        "V={v}; while :; do ln -s \"$V\" sys 2>/dev/null; ln -s \"$V\" {pid} 2>/dev/null; \
         ln -s \"$V/secret\" meminfo 2>/dev/null; done",
        v = v.display()
    );
    let _a = attacker(&shared, &script);
    let (runs, wrote) = captures_beside(&pid, &shared, (&v, &secret), || {
        // Root's own directories from the last run go, so the race is run again.
        let _ = std::fs::remove_dir_all(shared.join("sys"));
        let _ = std::fs::remove_file(shared.join("sys"));
    });
    eprintln!("{runs} captures beside the attacker, {wrote} whole, none outside");
}

/// `-o DIR` (or its parent) a link another user planted: refused, one
/// line, exit 4, nothing written where it points. The same for
/// `snapshot -o` and `export --textfile`.
#[test]
fn a_link_planted_at_or_above_the_output_is_refused() {
    if !root() {
        return;
    }
    let tmp = scratch();
    let (v, secret) = victim(tmp.path());
    let att = tmp.path().join("att");
    std::fs::create_dir(&att).unwrap();
    chown(&att, NOBODY);
    let link = att.join("link");
    symlink(&v, &link).unwrap();
    chown(&link, NOBODY);
    let me = std::process::id().to_string();
    let why = "a symbolic link owned by uid 65534, not followed";
    let snap = link.join("s.json");
    refused(&run(&["snapshot", "--pid", &me, "-o", snap.to_str().unwrap()]), why);
    refused(&run(&["export", "--textfile", link.to_str().unwrap(), "--pid", &me]), why);
    let child = spawn(Mapping::Anonymous(MIB));
    refused(&run(&["capture", &child.pid.to_string(), "-o", link.to_str().unwrap()]), why);
    let deeper = link.join("a/b");
    refused(&run(&["capture", &child.pid.to_string(), "-o", deeper.to_str().unwrap()]), why);
    untouched(&v, &secret);
}

/// An output directory another user owns, or one everyone may write
/// without the sticky bit: refused with what is wrong and what to do.
/// A sticky one (as /tmp) is written.
#[test]
fn a_directory_others_could_replace_files_in_is_refused() {
    if !root() {
        return;
    }
    let tmp = scratch();
    let me = std::process::id().to_string();
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown(&theirs, NOBODY);
    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    let sticky = tmp.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    let child = spawn(Mapping::Anonymous(MIB));
    let pid = child.pid.to_string();
    for (dir, why) in [
        (
            &theirs,
            "the directory belongs to uid 65534, who could replace what memtally writes there",
        ),
        (&open, "writable by everyone (mode 777) without the sticky bit"),
    ] {
        let s = dir.join("s.json");
        refused(&run(&["snapshot", "--pid", &me, "-o", s.to_str().unwrap()]), why);
        refused(&run(&["export", "--textfile", dir.to_str().unwrap(), "--pid", &me]), why);
        refused(&run(&["capture", &pid, "-o", dir.to_str().unwrap()]), why);
        assert!(names(dir).is_empty(), "written into {}: {:?}", dir.display(), names(dir));
    }
    ok(&run(&["snapshot", "--pid", &me, "-o", sticky.join("s.json").to_str().unwrap()]));
    ok(&run(&["capture", &pid, "-o", sticky.to_str().unwrap()]));
    assert!(sticky.join(&pid).join("smaps").is_file());
}

/// A file planted 6777 and replaced by `snapshot -o`: the new file has no
/// setuid or setgid bit; it keeps the permission bits only of memtally's
/// own user's file, never those another user chose.
#[test]
fn a_replaced_setuid_file_does_not_stay_setuid() {
    if !root() {
        return;
    }
    let tmp = scratch();
    let me = std::process::id().to_string();
    let own = tmp.path().join("own.json");
    std::fs::write(&own, b"").unwrap();
    chmod(&own, 0o6777);
    ok(&run(&["snapshot", "--pid", &me, "-o", own.to_str().unwrap()]));
    // Its owner's bits only: a snapshot of a root process read as root
    // holds addresses only root may read (issue 35 item 7).
    assert_eq!(mode(&own), 0o700, "root's own file: its owner's bits, not setuid/setgid");

    let planted = tmp.path().join("planted.json");
    std::fs::write(&planted, b"").unwrap();
    chown(&planted, NOBODY);
    chmod(&planted, 0o6777);
    ok(&run(&["snapshot", "--pid", &me, "-o", planted.to_str().unwrap()]));
    let m = std::fs::metadata(&planted).unwrap();
    assert_eq!(m.uid(), 0);
    assert_eq!(m.mode() & 0o7111, 0, "another user's mode kept: {:o}", m.mode() & 0o7777);
}

/// `-o` a link to this process's standard output, with the output
/// redirected to a file (`>` and `>>`): the file gets the output and the
/// link stays a link. A private link to `/proc/self/fd/1` stands for
/// `/dev/stdout`, so a failure never breaks the machine's; `/dev/fd/1`
/// and `/proc/self/fd/1` are named as they are.
#[test]
fn output_to_a_link_to_standard_output_writes_the_redirected_file() {
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("stdout");
    symlink("/proc/self/fd/1", &link).unwrap();
    let me = std::process::id().to_string();
    let file = tmp.path().join("out.json");
    for name in [link.to_str().unwrap(), "/dev/fd/1", "/proc/self/fd/1"] {
        // `>`: truncated, written from the start.
        std::fs::write(&file, b"old contents, longer than nothing\n").unwrap();
        let f = std::fs::File::create(&file).unwrap();
        let out =
            memtally().args(["snapshot", "--pid", &me, "-o", name]).stdout(f).output().unwrap();
        ok(&out);
        let text = std::fs::read(&file).unwrap();
        let v = crate::support::snapshot_value(&text);
        assert!(v.is_object(), "-o {name} >: {:?}", String::from_utf8_lossy(&text));
        // `>>`: appended after what was there.
        std::fs::write(&file, b"before\n").unwrap();
        let f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
        ok(&memtally().args(["snapshot", "--pid", &me, "-o", name]).stdout(f).output().unwrap());
        let text = std::fs::read(&file).unwrap();
        assert!(
            text.starts_with(b"before\n{"),
            "-o {name} >>: {:?}",
            String::from_utf8_lossy(&text)
        );
        crate::support::snapshot_value(&text[7..]);
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }
    assert_eq!(names(tmp.path()), ["out.json", "stdout"]);
}
