//! A PID is the process that was selected (issue 35, item 6), on a real
//! reuse: in a PID namespace of its own, a `sleep` of nobody's is PID 100
//! when `wss`, `capture` and `snapshot --user nobody` select it; strace
//! holds memtally at the open that follows the selection (3 s) while the
//! test kills it and starts a root `sleep` as PID 100 (through
//! `/proc/sys/kernel/ns_last_pid`): same PID, same name, another owner and
//! start time. Each command must refuse the impostor; the same run without
//! the swap (held at the same open, 0.3 s: nothing happens meanwhile)
//! processes the genuine one.

use std::path::Path;
use std::process::Command;

/// Run inside the namespace as its PID 1. Environment: `M` (memtally),
/// `CMD` (its arguments), `PATHS` (the paths strace counts opens of),
/// `WHEN` (which counted open is held), `HOLD` (for how many
/// microseconds), `SWAP` (1: the impostor takes
/// PID 100 meanwhile), `OUTF` and `ERRF` (memtally's output). Prints
/// `rc=N` (memtally's exit) or `SETUP:` and why the race was not staged.
const SCRIPT: &str = r#"
set -u
echo 99 > /proc/sys/kernel/ns_last_pid
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000 &
victim=$!
[ "$victim" = 100 ] || { echo "SETUP: the victim is pid $victim"; exit 90; }
trace=$(mktemp)
P=(); for p in $PATHS; do P+=(-P "$p"); done
strace -f -qq -o "$trace" -e trace=openat "${P[@]}" \
    -e inject=openat:delay_enter=$HOLD:when=$WHEN $M $CMD > "$OUTF" 2> "$ERRF" &
mt=$!
if [ "$SWAP" = 1 ]; then
    # Once the selection has read the victim (the opens before the held one).
    for i in $(seq 1 400); do [ "$(wc -l < "$trace")" -ge $((WHEN - 1)) ] && break; sleep 0.05; done
    kill -9 $victim; wait $victim 2>/dev/null
    echo 99 > /proc/sys/kernel/ns_last_pid
    sleep 1000 &
    [ "$!" = 100 ] || { echo "SETUP: the impostor is pid $!"; exit 91; }
    kill -0 $mt 2>/dev/null || { echo "SETUP: memtally ended before the swap"; exit 92; }
fi
wait $mt
echo "rc=$?"
grep -q DELAYED "$trace" || echo "SETUP: no open was held"
rm -f "$trace"
"#;

/// Whether the tools are here (else the reason is printed).
fn tools() -> bool {
    for tool in ["unshare", "strace", "setpriv"] {
        let found = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
        if !found {
            eprintln!("skipped: no {tool} to stage a PID reuse");
            return false;
        }
    }
    if !Path::new("/proc/sys/kernel/ns_last_pid").exists() {
        eprintln!("skipped: no /proc/sys/kernel/ns_last_pid");
        return false;
    }
    true
}

/// Runs memtally with `args` in a new PID namespace, the impostor
/// swapped in when `swap`: its exit code, standard output and error.
fn staged(
    dir: &Path,
    args: &str,
    paths: &str,
    when: u32,
    swap: bool,
) -> Option<(i32, String, String)> {
    let script = dir.join("stage.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let (outf, errf) = (dir.join("out"), dir.join("err"));
    let run = Command::new("unshare")
        .args(["-p", "-f", "--mount-proc", "bash"])
        .arg(&script)
        .env("M", env!("CARGO_BIN_EXE_memtally"))
        .env("CMD", args)
        .env("PATHS", paths)
        .env("WHEN", when.to_string())
        .env("HOLD", if swap { "3000000" } else { "300000" })
        .env("SWAP", if swap { "1" } else { "0" })
        .env("OUTF", &outf)
        .env("ERRF", &errf)
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout).to_string();
    if !run.status.success() && said.is_empty() {
        let err = String::from_utf8_lossy(&run.stderr);
        eprintln!("skipped: cannot make a PID namespace (needs root): {err}");
        return None;
    }
    assert!(!said.contains("SETUP:"), "the race was not staged: {said}");
    let code = said
        .lines()
        .find_map(|l| l.strip_prefix("rc="))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no exit code: {said}"));
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Some((code, read(&outf), read(&errf)))
}

#[test]
fn capture_refuses_a_root_process_that_took_the_selected_pid() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rec");
    let args = format!("capture --user nobody -o {}", out.display());
    // Selection reads stat and status; the third open (stat) is held.
    let paths = "/proc/100/status /proc/100/stat";
    let Some((code, _, err)) = staged(tmp.path(), &args, paths, 3, true) else { return };
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("process 100 (sleep) has exited"), "{err}");
    assert!(!out.join("100").exists(), "the impostor was recorded");
    let (code, said, err) = staged(tmp.path(), &args, paths, 3, false).unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(said.contains("recorded 11 files of pid 100"), "{said}");
    let status = std::fs::read_to_string(out.join("100/status")).unwrap();
    assert!(status.lines().any(|l| l.starts_with("Uid:\t65534\t")), "{status}");
}

#[test]
fn snapshot_files_no_root_regions_under_nobody() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("snap.jsonl");
    let args = format!("snapshot --user nobody -o {}", out.display());
    let paths = "/proc/100/status /proc/100/stat";
    let Some((code, _, err)) = staged(tmp.path(), &args, paths, 3, true) else { return };
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no selected process could be read (1 exited"), "{err}");
    assert!(!out.exists(), "a snapshot of the impostor was written");
    let (code, _, err) = staged(tmp.path(), &args, paths, 3, false).unwrap();
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains(r#""pid":100"#) && text.contains(r#""user":"nobody""#), "{text}");
    assert!(text.lines().count() > 10, "its regions: {text}");
}

#[test]
fn wss_resets_no_bits_of_a_root_process_that_took_the_selected_pid() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let args = "wss --user nobody --interval 0.2s --method referenced --format json";
    // Selection reads status; the second open (/proc, to hold 100) is held.
    let paths = "/proc/100/status /proc";
    let Some((code, said, err)) = staged(tmp.path(), args, paths, 2, true) else { return };
    assert_eq!(code, 3, "{said}{err}");
    assert!(
        err.contains("no selected process could be measured (1 exited before it was reset)"),
        "{err}"
    );
    let (code, said, err) = staged(tmp.path(), args, paths, 2, false).unwrap();
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&said).unwrap();
    let p = &doc["processes"][0];
    assert_eq!(p["pid"], 100, "{said}");
    assert_eq!(p["command"], "sleep 1000", "{said}");
    assert!(p["working_set"].as_u64().is_some_and(|w| w > 0), "{said}");
}
