//! A printer whose output goes away stops the read: `memtally show PID
//! --format json | head -c 100` on a process with tens of thousands of
//! mappings exits moments after the pipe closes, instead of parsing the
//! rest of its smaps for nobody (docs/benchmarks.md#early-stop).

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{fork_ready, memtally, pause_forever, Forked};

/// Mappings in the child: as many as the default `vm.max_map_count`
/// (65,530) leaves room for beside the program's own.
const MAPPINGS: usize = 60_000;

/// A child with `MAPPINGS` one-page anonymous mappings side by side, of
/// alternating protections so the kernel cannot merge them, every fourth
/// page written (resident and dirty).
fn many_mappings() -> Forked {
    let (child, ready) = fork_ready(|ready| {
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        let none = libc::PROT_NONE;
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                MAPPINGS * page,
                none,
                flags | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            unsafe { libc::_exit(1) };
        }
        for i in 0..MAPPINGS {
            let p = unsafe { base.cast::<u8>().add(i * page) };
            let rw = libc::PROT_READ | libc::PROT_WRITE;
            let prot = if i % 2 == 0 { rw } else { libc::PROT_READ };
            let got = unsafe { libc::mmap(p.cast(), page, prot, flags | libc::MAP_FIXED, -1, 0) };
            if got == libc::MAP_FAILED {
                unsafe { libc::_exit(1) };
            }
            if i % 4 == 0 {
                unsafe { p.write(i as u8) };
            }
        }
        ready.signal();
        pause_forever()
    });
    assert!(ready, "the child could not map {MAPPINGS} pages");
    child
}

#[test]
fn show_json_stops_reading_smaps_when_its_output_closes() {
    let child = many_mappings();
    let pid = child.pid.to_string();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    assert!(maps.lines().count() >= MAPPINGS, "{} mappings", maps.lines().count());
    let show = || {
        let mut c = memtally();
        c.args(["show", &pid, "--format", "json"]).stderr(Stdio::piped());
        c
    };

    // The whole read, for scale: every region printed to a sink that
    // never closes.
    let start = Instant::now();
    let whole = show().stdout(Stdio::null()).output().unwrap();
    let whole_time = start.elapsed();
    assert!(whole.status.success(), "{}", String::from_utf8_lossy(&whole.stderr));

    // Read the document's first 100 bytes, then close the pipe.
    let mut run = show().stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = run.stdout.take().unwrap();
    let mut head = [0u8; 100];
    stdout.read_exact(&mut head).unwrap();
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("{\"comm\":"), "{head}");
    let closed = Instant::now();
    drop(stdout);
    let deadline = closed + whole_time.max(Duration::from_secs(5)) * 4;
    let status = loop {
        if let Some(s) = run.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "memtally still runs long after its output closed");
        std::thread::sleep(Duration::from_micros(200));
    };
    let stop_time = closed.elapsed();
    let mut stderr = String::new();
    run.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    // A closed pipe is how `| head` ends a command: not an error.
    assert!(status.success() && stderr.is_empty(), "{status}: {stderr}");
    println!(
        "{MAPPINGS} mappings: whole read {:.1} ms, exit {:.1} ms after the pipe closed",
        whole_time.as_secs_f64() * 1e3,
        stop_time.as_secs_f64() * 1e3
    );
    // Parsing the rest of the smaps would take nearly the whole read.
    assert!(
        stop_time * 4 < whole_time,
        "exit {stop_time:?} after the pipe closed; the whole read takes {whole_time:?}"
    );
}
