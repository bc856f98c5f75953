//! Every file memtally reads from a recording or a pointed-at directory,
//! spoiled every way an attacker could: a link to a root-only file outside
//! the tree, a link to `/dev/zero` or `/dev/urandom`, a FIFO, a 2 GB sparse
//! file, endless unknown keys, a 300,000-component cgroup path. Each
//! command that reads the file must end within seconds, in bounded memory
//! (1 GiB of address space), with a short error or a marked result, and
//! never show a byte of the outside file. The devices and giants of every
//! file, and the v1 cgroup tree's files that the v2 tree shares, are the
//! `stress_` tests (`scripts/stress/run.sh`).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::hostile::{run_bounded, run_bounded_for, tree};

const SECRET: &str = "SECRET-7f3a-not-in-any-recording";

/// A root-only file outside the tree (mode 0600), holding [`SECRET`] in
/// the shape of every file it stands in for.
fn secret(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("root-only");
    let body = format!(
        "{SECRET}\nName:\t{SECRET}\n00400000-00401000 r-xp 00000000 08:01 1 /{SECRET}\nRss: 4 kB\n0::/{SECRET}\n5\t/dev/dri/{SECRET}\ndrm-driver: {SECRET}\nmemory {SECRET}\nanon 1\n"
    );
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

/// The recorded tree with the files a GPU and cgroup reading need: a
/// cgroup line, a v2 (or v1) cgroup tree, an fd_targets line, an fdinfo,
/// a mounts file and a card's GTT figure.
fn full_tree(v1: bool) -> (tempfile::TempDir, PathBuf, String) {
    let (tmp, root, pid) = tree();
    let p = root.join(&pid);
    let w = |rel: &str, text: &str| {
        let f = root.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    };
    let cg = if v1 { "sys/fs/cgroup/memory/app.slice" } else { "sys/fs/cgroup/app.slice" };
    w(&format!("{pid}/cgroup"), if v1 { "4:memory:/app.slice\n" } else { "0::/app.slice\n" });
    if v1 {
        w("sys/fs/cgroup/memory/memory.usage_in_bytes", "4096\n");
        w(&format!("{cg}/memory.usage_in_bytes"), "4096\n");
        w(&format!("{cg}/memory.limit_in_bytes"), "8192\n");
        w(&format!("{cg}/memory.stat"), "total_rss 4096\n");
    } else {
        w("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
        w(&format!("{cg}/memory.current"), "4096\n");
        w(&format!("{cg}/memory.max"), "max\n");
        w(&format!("{cg}/memory.stat"), "anon 4096\nfile 0\n");
    }
    w(&format!("{pid}/fd_targets"), "5\t/dev/dri/renderD128\n");
    w(
        &format!("{pid}/fdinfo/5"),
        "pos:\t0\ndrm-driver:\ti915\ndrm-client-id:\t3\ndrm-total-system0:\t8 KiB\n",
    );
    w(&format!("{pid}/mounts"), "tmpfs /dev/shm tmpfs rw 0 0\n");
    w("sys/class/drm/card0/device/mem_info_gtt_used", "4096\n");
    w("sys/block/zram0/mm_stat", "4096 1024 8192 0 8192 0 0 0 0\n");
    assert!(p.join("smaps").is_file());
    (tmp, root, pid)
}

#[derive(Debug, Clone, Copy)]
enum Hostile {
    /// A symbolic link to the root-only file, by absolute path.
    Secret,
    /// The same by a relative link climbing out (`../../root-only`).
    SecretRelative,
    Zero,
    Urandom,
    Fifo,
    Sparse,
    /// One mapping line, then unknown keys without end (a few MB here).
    EndlessKeys,
    /// A cgroup line of 300,000 components.
    DeepCgroup,
}

/// The kinds of the default run: links out of the tree, a FIFO, endless
/// keys and a deep cgroup path. Small and quick to refuse: [`THREADS`]
/// trees at once.
const KINDS: &[Hostile] = &[
    Hostile::Secret,
    Hostile::SecretRelative,
    Hostile::Fifo,
    Hostile::EndlessKeys,
    Hostile::DeepCgroup,
];

/// The kinds without end or of 2 GB, in the stress run
/// (`scripts/stress/run.sh`): `capture` copies up to 256 MiB of each, some
/// seconds a file, minutes for every file. `hostile::devices_fifos_and_giants_…`
/// keeps a device and a giant of each reader in the default run.
const GIANT_KINDS: &[Hostile] = &[Hostile::Zero, Hostile::Urandom, Hostile::Sparse];

/// Trees read at once for [`KINDS`]; the giants' 256 MiB captures go two
/// at a time (more would crowd a 2-core machine past their 10 s).
const THREADS: usize = 6;

fn plant(kind: Hostile, target: &Path, secret: &Path) {
    if target.exists() || target.symlink_metadata().is_ok() {
        std::fs::remove_file(target).unwrap();
    }
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    match kind {
        Hostile::Secret => symlink(secret, target).unwrap(),
        Hostile::SecretRelative => {
            // From the file's directory up to the temporary directory.
            let base = secret.parent().unwrap();
            let depth = target.parent().unwrap().strip_prefix(base).unwrap().components().count();
            let up: PathBuf = std::iter::repeat_n("..", depth).collect();
            symlink(up.join("root-only"), target).unwrap();
        }
        Hostile::Zero => symlink("/dev/zero", target).unwrap(),
        Hostile::Urandom => symlink("/dev/urandom", target).unwrap(),
        Hostile::Fifo => {
            let c = std::ffi::CString::new(target.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        Hostile::Sparse => std::fs::File::create(target).unwrap().set_len(2 << 30).unwrap(),
        Hostile::EndlessKeys => {
            // Made once, planted in every tree.
            static KEYS: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
            let t = KEYS.get_or_init(|| {
                let mut t = b"00400000-00401000 r-xp 00000000 08:01 1 /x\n".to_vec();
                while t.len() < 8 << 20 {
                    t.extend_from_slice(format!("Unknown{}: 4 kB\n", t.len() % 1000).as_bytes());
                }
                t
            });
            std::fs::write(target, t).unwrap();
        }
        Hostile::DeepCgroup => {
            let mut t = b"0::".to_vec();
            t.extend(std::iter::repeat_n(&b"/a"[..], 300_000).flatten());
            t.push(b'\n');
            std::fs::write(target, t).unwrap();
        }
    }
}

/// Every file name memtally opens in a tree (v2 and v1 cgroup trees).
fn files(pid: &str, v1: bool) -> Vec<String> {
    let mut v: Vec<String> = [
        "smaps",
        "maps",
        "smaps_rollup",
        "status",
        "statm",
        "stat",
        "cmdline",
        "comm",
        "cgroup",
        "fd_targets",
        "fdinfo/5",
        "memtally-incomplete",
        "mounts",
    ]
    .iter()
    .map(|f| format!("{pid}/{f}"))
    .collect();
    v.push("meminfo".into());
    v.push("sys/class/drm/card0/device/mem_info_gtt_used".into());
    v.push("sys/block/zram0/mm_stat".into());
    if v1 {
        for f in ["memory.usage_in_bytes", "memory.limit_in_bytes", "memory.stat"] {
            v.push(format!("sys/fs/cgroup/memory/app.slice/{f}"));
        }
        v.push("sys/fs/cgroup/memory/memory.usage_in_bytes".into());
    } else {
        for f in ["memory.current", "memory.max", "memory.stat"] {
            v.push(format!("sys/fs/cgroup/app.slice/{f}"));
        }
        v.push("sys/fs/cgroup/cgroup.controllers".into());
    }
    v
}

/// Files below `dir`, read back for the secret.
fn all_bytes(dir: &Path, out: &mut Vec<u8>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let m = e.path().symlink_metadata().unwrap();
        if m.is_dir() {
            all_bytes(&e.path(), out);
        } else if m.is_file() && m.len() < 64 << 20 {
            out.extend(std::fs::read(e.path()).unwrap_or_default());
        }
    }
}

/// What is wrong with one run, if anything.
fn fault(out: &std::process::Output, took: Duration, written: &[u8]) -> Option<String> {
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    if code.is_none() {
        return Some(format!("killed by a signal (memory?): {err}"));
    }
    // Documented exit codes only (memtally-cli/src/exit.rs).
    if !matches!(code, Some(0..=6)) {
        return Some(format!("exit {code:?}: {err}"));
    }
    // A whole smaps read by capture may be 256 MiB (MAX_SMAPS); more is
    // an unbounded read.
    let peak = crate::hostile::PEAK_KIB.with(|p| p.get());
    if peak > 400 << 10 {
        return Some(format!("grew to {} MiB", peak >> 10));
    }
    if took >= Duration::from_secs(10) {
        return Some(format!("took {took:?}"));
    }
    if err.len() >= 2000 {
        return Some(format!("an error of {} bytes", err.len()));
    }
    for (name, bytes) in
        [("stdout", &out.stdout[..]), ("stderr", &out.stderr[..]), ("output", written)]
    {
        if String::from_utf8_lossy(bytes).contains(SECRET) {
            return Some(format!("the outside file's content in {name}"));
        }
    }
    None
}

fn check(what: &str, out: &std::process::Output, took: Duration, written: &[u8]) {
    if let Some(f) = fault(out, took, written) {
        panic!("{what}: {f}");
    }
}

/// The runs of one (file, kind): each in its own fresh tree, the eight
/// commands one after the other. Gives (runs, faults).
fn every_command_on(v1: bool, file: &str, kind: Hostile) -> (usize, Vec<String>) {
    let (tmp, root, pid) = full_tree(v1);
    let secret = secret(tmp.path());
    let file = file.replace("PID", &pid);
    plant(kind, &root.join(&file), &secret);
    let r = root.to_str().unwrap();
    let cap = tmp.path().join("cap");
    let snap = tmp.path().join("snap.json");
    let (c, s) = (cap.to_str().unwrap(), snap.to_str().unwrap());
    let (mut runs, mut faults) = (0, Vec::new());
    for args in [
        vec!["show", &pid],
        vec!["top", "--format", "json"],
        vec!["top", "--by", "cgroup", "--format", "json"],
        vec!["cgroup"],
        vec!["gpu"],
        vec!["export", "--by", "cgroup"],
        vec!["capture", &pid, "-o", c],
        vec!["snapshot", "--pid", &pid, "-o", s],
    ] {
        let mut full = vec!["--proc-root", r];
        full.extend(&args);
        let ran = run_bounded_for(&full, Duration::from_secs(10));
        let mut written = Vec::new();
        all_bytes(&cap, &mut written);
        written.extend(std::fs::read(&snap).unwrap_or_default());
        runs += 1;
        let f = match ran {
            Some((out, took)) => fault(&out, took, &written),
            None => Some("hung for 10 s".to_string()),
        };
        if let Some(f) = f {
            faults.push(format!("{file} as {kind:?}: {args:?}: {f}"));
        }
    }
    (runs, faults)
}

/// The files only a v1 cgroup tree has, and the process's `cgroup` line
/// (a v1 line there): what the v1 sweep reads that the v2 sweep does not.
fn v1_files(pid: &str) -> Vec<String> {
    let v2 = files(pid, false);
    let mut v: Vec<String> = files(pid, true).into_iter().filter(|f| !v2.contains(f)).collect();
    v.push(format!("{pid}/cgroup"));
    v
}

fn every_command_on_every_file(v1: bool, kinds: &[Hostile], threads: usize) {
    every_command_on_these(v1, files("PID", v1), kinds, threads);
}

fn every_command_on_these(v1: bool, files: Vec<String>, kinds: &[Hostile], threads: usize) {
    // Every (file, kind) has its own tree, so several run side by side:
    // a run is mostly the start and end of a process, waited for.
    let todo: Vec<(String, Hostile)> =
        files.into_iter().flat_map(|f| kinds.iter().map(move |&k| (f.clone(), k))).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((file, kind)) = todo.get(i) else { break };
                let result = every_command_on(v1, file, *kind);
                done.lock().unwrap().push((i, *kind, result));
            });
        }
    });
    // Every fault is gathered, then all are told: how many runs of each
    // kind went wrong, and the first few (in the order of `todo`).
    let mut done = done.into_inner().unwrap();
    assert_eq!(done.len(), todo.len(), "every (file, kind) ran");
    done.sort_by_key(|d| d.0);
    let (mut faults, mut runs) = (Vec::new(), 0usize);
    let mut by_kind: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (_, kind, (n, f)) in done {
        let tally = by_kind.entry(format!("{kind:?}")).or_default();
        tally.0 += f.len();
        tally.1 += n;
        runs += n;
        faults.extend(f);
    }
    let first: Vec<&str> = faults.iter().take(10).map(|s| &s[..s.len().min(300)]).collect();
    assert!(
        faults.is_empty(),
        "{} of {runs} runs went wrong; (wrong, runs) by kind: {by_kind:?}; first: {first:#?}",
        faults.len()
    );
}

#[test]
fn every_file_of_a_recorded_tree_spoiled_every_way_is_refused_or_marked() {
    every_command_on_every_file(false, KINDS, THREADS);
}

/// The v1 tree's own files (its cgroup files and line) in the default
/// run; the files both trees share are swept in the v2 tree above, and
/// in the v1 tree too by the stress run (below).
#[test]
fn every_cgroup_file_of_a_recorded_v1_tree_spoiled_every_way_is_refused_or_marked() {
    every_command_on_these(true, v1_files("PID"), KINDS, THREADS);
}

#[test]
#[ignore = "stress: every file of the v1 tree; scripts/stress/run.sh runs it"]
fn stress_every_file_of_a_recorded_v1_cgroup_tree_spoiled_every_way_is_refused_or_marked() {
    every_command_on_every_file(true, KINDS, THREADS);
}

#[test]
#[ignore = "stress: minutes; scripts/stress/run.sh runs it"]
fn stress_every_file_of_a_recorded_tree_as_a_device_or_giant_is_refused_or_marked() {
    every_command_on_every_file(false, GIANT_KINDS, 2);
}

#[test]
#[ignore = "stress: minutes; scripts/stress/run.sh runs it"]
fn stress_every_file_of_a_recorded_v1_cgroup_tree_as_a_device_or_giant_is_refused_or_marked() {
    every_command_on_every_file(true, GIANT_KINDS, 2);
}

/// A directory of the tree as a link out of it: nothing beneath is read.
#[test]
fn a_linked_pid_or_cgroup_directory_is_not_followed() {
    let (tmp, root, pid) = full_tree(false);
    let secret_dir = tmp.path().join("elsewhere");
    crate::hostile::copy_dir(&root.join(&pid), &secret_dir);
    std::fs::write(secret_dir.join("cmdline"), format!("{SECRET}\0")).unwrap();
    std::fs::write(secret_dir.join("comm"), format!("{SECRET}\n")).unwrap();
    std::fs::remove_dir_all(root.join(&pid)).unwrap();
    symlink(&secret_dir, root.join(&pid)).unwrap();
    let r = root.to_str().unwrap();
    for args in [vec!["show", &pid], vec!["top", "--format", "json"]] {
        let mut full = vec!["--proc-root", r];
        full.extend(&args);
        let (out, took) = run_bounded(&full);
        check(&format!("linked pid dir: {args:?}"), &out, took, &[]);
        let peak = crate::hostile::PEAK_KIB.with(|p| p.get());
        assert!(peak > 1024, "the child's peak memory is measured: {peak} KiB");
    }
}

/// `diff` and `plot` on a device, a FIFO without a writer and a sparse
/// giant: refused at once, in bounded memory; a snapshot in a pipe
/// (`diff <(memtally snapshot) b.json`) still works.
#[test]
fn diff_and_plot_refuse_devices_fifos_and_giants_and_read_pipes() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.json");
    let me = std::process::id().to_string();
    let (out, _) = run_bounded(&["snapshot", "--pid", &me, "-o", good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fifo = tmp.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let sparse = tmp.path().join("sparse.json");
    std::fs::File::create(&sparse).unwrap().set_len(2 << 30).unwrap();
    let svg = tmp.path().join("out.svg");
    let g = good.to_str().unwrap();
    for bad in ["/dev/zero", "/dev/urandom", fifo.to_str().unwrap(), sparse.to_str().unwrap()] {
        for args in [
            vec!["diff", bad, g],
            vec!["diff", g, bad],
            vec!["plot", bad, "-o", svg.to_str().unwrap()],
        ] {
            let (out, took) = run_bounded(&args);
            let what = format!("{args:?}");
            check(&what, &out, took, &[]);
            assert_eq!(
                out.status.code(),
                Some(5),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
            assert!(err.contains(bad), "{what}: names the file: {err}");
        }
    }
    // A pipe: process substitution hands memtally /dev/fd/N.
    let bin = crate::support::memtally().get_program().to_owned();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("\"$0\" diff <(cat \"$1\") \"$1\"")
        .arg(bin)
        .arg(g)
        .output()
        .unwrap();
    assert!(out.status.success(), "diff from a pipe: {}", String::from_utf8_lossy(&out.stderr));
}
