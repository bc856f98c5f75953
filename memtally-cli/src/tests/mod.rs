//! Commands run in this process on recorded inputs: the argument parsing,
//! the command and its printer write into a buffer, as `memtally ARGS`
//! would print into a pipe (no `COLUMNS`), without starting the binary for
//! each case. What only the binary can show (live children, signals, a
//! terminal, a server) is tested through it in tests/cli.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Output};

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{self, Cli};

// Recorded Linux trees: the Linux commands (refused elsewhere).
#[cfg(target_os = "linux")]
mod gpu_cuda;
#[cfg(target_os = "linux")]
mod interop;
#[cfg(target_os = "linux")]
mod json_docs;
#[cfg(target_os = "linux")]
mod json_keys;
#[cfg(target_os = "linux")]
mod report_faults;
mod report_input;
mod vmmap_csv;
mod vmmap_footprint;
mod vmmap_over_time;
mod vmmap_parity;
mod vmmap_view;
mod vmmap_warnings;
// Recorded Linux trees beside the vmmap files.
#[cfg(target_os = "linux")]
mod width;

/// `memtally ARGS` run here: its exit status, standard output, and the
/// error line `main` prints on standard error; printed as into a pipe
/// without `COLUMNS` (no width, no screen height).
pub fn run(args: &[&str]) -> Output {
    run_on(crate::render::Screen::default(), args)
}

/// [`run`] with the output `columns` wide, as `COLUMNS=N memtally ARGS`
/// (`None`: unfitted, as piped without `COLUMNS`). The width tests read
/// recorded Linux trees, as the Linux commands do.
#[cfg(target_os = "linux")]
pub fn run_at_width(columns: Option<usize>, args: &[&str]) -> Output {
    run_on(crate::render::Screen { width: columns, height: None }, args)
}

/// [`run`] with the output fitted to `screen`.
fn run_on(screen: crate::render::Screen, args: &[&str]) -> Output {
    let parsed = Cli::command()
        .try_get_matches_from(std::iter::once("memtally").chain(args.iter().copied()))
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return output(e.exit_code(), Vec::new(), e.to_string()),
    };
    if let Some(line) = cli::platform::refusal(cli::platform::System::current(), &cli) {
        return output(crate::exit::USAGE, Vec::new(), format!("memtally: {line}\n"));
    }
    let mut out = Vec::new();
    match cli::run(cli, screen, &mut out) {
        Ok(()) => output(crate::exit::OK, out, String::new()),
        Err(e) => {
            let line = format!("memtally: {}\n", crate::render::errors::Worded(&e));
            output(crate::exit::exit_code(&e), out, line)
        }
    }
}

fn output(code: i32, stdout: Vec<u8>, stderr: String) -> Output {
    Output { status: ExitStatus::from_raw(code << 8), stdout, stderr: stderr.into_bytes() }
}

/// [`run`], which must succeed, its output parsed as JSON.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "memtally {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// A `memtally snapshot` file's bytes (JSON Lines, format 2) read back by
/// the library, as the one document a report page embeds (the snapshot's
/// keys, each process with its `regions`).
#[cfg(target_os = "linux")]
pub fn snapshot_value(bytes: &[u8]) -> serde_json::Value {
    assert!(bytes.starts_with(b"{\"memtally_snapshot\":2,"), "a snapshot file of format 2");
    let snap = memtally_core::source::parse::snapshot::parse(bytes).expect("a whole snapshot");
    serde_json::to_value(snap).unwrap()
}

/// The data an SVG of `memtally plot` carries in its `<desc>`, after
/// checking that the file is well-formed XML.
pub fn svg_data(path: &Path) -> (String, serde_json::Value) {
    let svg = std::fs::read_to_string(path).unwrap();
    let xml = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let desc = xml.descendants().find(|n| n.has_tag_name("desc")).expect("a <desc>");
    let data = serde_json::from_str(desc.text().unwrap()).expect("JSON in <desc>");
    (svg.clone(), data)
}

#[path = "../../tests/cli/support/paths.rs"]
mod paths;
pub use paths::{repo, repo_path, shared};

#[test]
fn a_run_in_process_gives_the_exit_status_and_the_error_line() {
    let out = run(&["vmmap", "/nonexistent/saved.txt"]);
    assert_eq!(out.status.code(), Some(crate::exit::NOT_FOUND));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("memtally: ") && err.contains("/nonexistent/saved.txt"), "{err}");
    let usage = run(&["vmmap", "--no-such-flag"]);
    assert_eq!(usage.status.code(), Some(crate::exit::USAGE));
}
