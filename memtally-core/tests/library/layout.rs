//! The layout holds: each layer of the library imports only the layers
//! below it (model <- source, analyze <- usecase; write beside them), the
//! printers never reach into the command line, the library depends on no
//! command-line, server or drawing crate, and no source file grows past
//! about 500 lines (tests aside) without being split along its seams.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::repo;

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The file's text before its `#[cfg(test)]` module (tests may use any layer).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The top-level modules of the crate that `text` names as `crate::X`.
fn crate_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        if i > 0 && text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `memtally_core::` etc.
        }
        let rest = &text[i + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

#[test]
fn library_layers_point_only_down() {
    let src = repo().join("memtally-core/src");
    // What each layer may import, besides itself.
    let allowed: &[(&str, &[&str])] = &[
        ("model", &[]),
        ("error", &[]),
        // The `*at` system calls beneath both readers and writer.
        ("sys", &[]),
        ("source", &["model", "error", "sys"]),
        ("analyze", &["model", "error"]),
        ("write", &["error", "sys"]),
        ("usecase", &["model", "error", "source", "analyze", "write"]),
    ];
    let mut checked = 0;
    for (layer, may) in allowed {
        let dir = src.join(layer);
        let files =
            if dir.is_dir() { rust_files(&dir) } else { vec![src.join(format!("{layer}.rs"))] };
        for f in files {
            for m in crate_modules(&code(&f)) {
                assert!(
                    m == *layer || may.contains(&m.as_str()),
                    "{} ({layer}) imports crate::{m}: layers only point down",
                    f.strip_prefix(repo()).unwrap().display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} files checked");
}

/// `source::parse` holds the pure parsers: nothing of the system readers
/// (no `ProcRoot`, no bounded reader, no scans or runners, no threads or
/// file opens), so each can be fuzzed and used on bytes from anywhere.
#[test]
fn parsers_import_nothing_of_the_system_readers() {
    let dir = repo().join("memtally-core/src/source/parse");
    let files = rust_files(&dir);
    assert!(files.len() >= 12, "only {} parser files", files.len());
    for f in files {
        let text = code(&f);
        for (i, _) in text.match_indices("crate::source::") {
            let rest = &text[i + "crate::source::".len()..];
            assert!(
                rest.starts_with("parse::"),
                "{} imports crate::source::{}: parsers stay apart from the readers",
                f.strip_prefix(repo()).unwrap().display(),
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>()
            );
        }
        for system in ["std::fs", "std::thread", "std::process", "std::net", "unsafe"] {
            assert!(
                !text.contains(system),
                "{} uses {system}: a parser reads only the bytes it is given",
                f.strip_prefix(repo()).unwrap().display()
            );
        }
    }
}

#[test]
fn printers_do_not_reach_into_the_command_line() {
    for f in rust_files(&repo().join("memtally-cli/src/render")) {
        let mods = crate_modules(&code(&f));
        assert!(!mods.contains("cli"), "{} imports crate::cli", f.display());
    }
}

#[test]
fn the_library_has_no_command_line_server_or_drawing_dependency() {
    let manifest = std::fs::read_to_string(repo().join("memtally-core/Cargo.toml")).unwrap();
    let deps = manifest
        .split("\n[")
        .find(|s| s.starts_with("dependencies]"))
        .expect("a [dependencies] table");
    for name in ["clap", "tokio", "hyper", "plotters", "indicatif", "ctrlc", "prometheus-client"] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(name)),
            "memtally-core depends on {name}"
        );
    }
}

#[test]
fn no_source_file_is_past_its_seams() {
    for dir in ["memtally-core/src", "memtally-cli/src"] {
        for f in rust_files(&repo().join(dir)) {
            let lines = code(&f).lines().count();
            assert!(lines <= 520, "{}: {lines} lines; split it along its seams", f.display());
        }
    }
}
