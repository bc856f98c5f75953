//! The peak RSS (`status` VmHWM, issue 38 item 3): a figure of `top`'s rows
//! and JSON and a series of the exporter, per process; a process that
//! touched 64 MiB and gave it back shows the peak, not its RSS now.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::support::lone::build;
use crate::support::{run, run_json, Killed};

const MIB: u64 = 1 << 20;

/// Maps, writes and unmaps `argv[1]` MiB, then says so and waits.
const PEAK_C: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t len = (size_t)atol(argv[1]) << 20;
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    memset(p, 1, len);
    munmap(p, len);
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
"#;

#[test]
fn a_process_that_gave_memory_back_shows_its_peak_rss() {
    let (_dir, exe) = build("peak", PEAK_C);
    let mut child = Command::new(&exe).arg("64").stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    let child = Killed(child);
    let pid = child.0.id().to_string();

    let doc = run_json(&["top", "--pid", &pid, "--format", "json"]);
    let p = &doc["processes"][0];
    let peak = p["rss_peak"].as_u64().expect("rss_peak is a number");
    let rss = p["rss"].as_u64().unwrap();
    assert!(peak >= 64 * MIB, "peak {peak} holds the 64 MiB touched");
    assert!(rss < 16 * MIB, "rss {rss} is what is left after the unmap");
    // Per process only: a row of several processes leaves it out.
    assert!(doc["totals"]["rss_peak"].is_null() || doc["processes"].as_array().unwrap().len() == 1);

    let table = run(&["top", "--pid", &pid, "--columns", "rss,rss_peak"]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("PEAK RSS"), "{text}");

    let out = run(&["export", "--pid", &pid]);
    let metrics = String::from_utf8(out.stdout).unwrap();
    let prefix = format!("memtally_process_rss_peak_bytes{{pid=\"{pid}\"");
    let line =
        metrics.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{metrics}"));
    let series: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(series >= 64 * MIB, "{line}");
}
