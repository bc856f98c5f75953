//! The layout holds: each layer of the library imports only the layers
//! below it (model <- source, analyze <- usecase; write beside them), the
//! printers never reach into the command line, read the system, call a use
//! case or write a file (they print the results the use cases return, all
//! of which live in `analyze`), the explorer's levels do not import
//! each other and its modules import in no circle, the library depends on
//! no command-line, server or drawing crate nor words a `--flag` of it, and
//! no source file grows past about 500 lines (tests aside) without being
//! split along its seams.

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

/// The modules `text` names right after `prefix` (`memtally_core::`,
/// `crate::ui::`): `prefix X::…` and each item of `prefix {X::…, Y}`.
fn modules_under(text: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        if i > 0 && text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // `other_crate::ui::`, or a path deeper than the prefix
        }
        let rest = &text[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Items at the group's own depth only: `{a::{b, c}, d}` names a and d.
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    _ if item_start && !c.is_whitespace() => {
                        out.insert(ident(&group[j..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// Whether `path` is a test module of its own file (`#[cfg(test)] mod
/// NAME;` in its parent), which may import anything.
fn test_only(path: &Path) -> bool {
    let Some(name) = path.file_stem().and_then(|n| n.to_str()) else { return false };
    let dir = path.parent().unwrap();
    let parents = [dir.join("mod.rs"), dir.with_extension("rs")];
    parents.iter().any(|p| {
        std::fs::read_to_string(p).is_ok_and(|t| t.contains(&format!("#[cfg(test)]\nmod {name};")))
    })
}

/// A circle in `edges` (module -> the modules it imports), if any, as
/// the path around it.
fn circle(edges: &std::collections::BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &std::collections::BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut c = path[at..].to_vec();
            c.push(m.to_string());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

/// The explorer's modules (`ui/NAME.rs` or `ui/NAME/`) and what each
/// imports of the others.
fn ui_imports() -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let ui = repo().join("memtally-cli/src/ui");
    let mut edges = std::collections::BTreeMap::<String, BTreeSet<String>>::new();
    for f in rust_files(&ui) {
        let rel = f.strip_prefix(&ui).unwrap();
        let module = rel.components().next().unwrap().as_os_str().to_string_lossy();
        let module = module.trim_end_matches(".rs").to_string();
        if module == "mod" || test_only(&f) {
            continue; // ui/mod.rs declares them all
        }
        let mut named = modules_under(&code(&f), "crate::ui::");
        named.remove(&module);
        edges.entry(module).or_default().extend(named);
    }
    edges
}

/// The code of Rust source `text` without its comments (doc links are
/// not imports) and with each string literal emptied.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    scan(text, |piece| match piece {
        Piece::Code(code) => out.push_str(code),
        Piece::Literal(_) => out.push_str("\"\""),
    });
    out
}

/// Every path `text` names from `crate::`, `super::` or `self::`, each
/// item of a `{…}` group spelled out whole (`super::{a::X, b}` is
/// `super::a::X` and `super::b`), as its segments.
fn module_paths(text: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], rest: &str, out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        let mut rest = rest;
        loop {
            let rest_t = rest.trim_start();
            if let Some(group) = rest_t.strip_prefix('{') {
                let mut depth = 0;
                let mut start = 0;
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            expand(&path, &group[start..j], out);
                            return;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            expand(&path, &group[start..j], out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            let name: String =
                rest_t.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name.is_empty() {
                break;
            }
            path.push(name.clone());
            match rest_t[name.len()..].strip_prefix("::") {
                Some(next) => rest = next,
                None => break,
            }
        }
        if path.len() > prefix.len() || !prefix.is_empty() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    let b = text.as_bytes();
    for head in ["crate::", "super::", "self::"] {
        for (i, _) in text.match_indices(head) {
            if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b':') {
                continue; // `other_crate::`, or `super::super::` seen from its first word
            }
            let first = head.trim_end_matches(':').to_string();
            expand(&[first], &text[i + head.len()..], &mut out);
        }
    }
    out
}

/// The modules of a crate whose root is `root/lib.rs` or `root/main.rs`:
/// each module's path (`["source", "parse", "smaps"]`) and its file.
fn crate_files(root: &Path) -> std::collections::BTreeMap<Vec<String>, PathBuf> {
    let mut out = std::collections::BTreeMap::new();
    for f in rust_files(root) {
        let rel = f.strip_prefix(root).unwrap();
        let mut path: Vec<String> =
            rel.iter().map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        if matches!(path.last().map(String::as_str), Some("mod" | "lib" | "main")) {
            path.pop();
        }
        out.insert(path, f);
    }
    out
}

/// The file-level imports of the crate at `root`: each file (by module
/// path) and the files whose items it names. A module naming its own
/// descendants (it declares them, and re-exports from them) is no import.
fn file_imports(root: &Path) -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let files = crate_files(root);
    let mut edges = std::collections::BTreeMap::<String, BTreeSet<String>>::new();
    for (module, file) in &files {
        if test_only(file) {
            continue;
        }
        let name = |m: &[String]| if m.is_empty() { "crate".to_string() } else { m.join("/") };
        let entry = edges.entry(name(module)).or_default();
        for path in module_paths(&without_comments(&code(file))) {
            let mut at: Vec<String> = match path[0].as_str() {
                "crate" => Vec::new(),
                _ => module.clone(),
            };
            let mut segments = path[1..].iter().peekable();
            if path[0] == "super" {
                at.pop();
                while segments.peek().is_some_and(|s| *s == "super") {
                    segments.next();
                    at.pop();
                }
            }
            for s in segments {
                let mut deeper = at.clone();
                deeper.push(s.clone());
                if !files.contains_key(&deeper) {
                    break;
                }
                at = deeper;
            }
            if !at.starts_with(module) {
                entry.insert(name(&at));
            }
        }
    }
    edges
}

/// Every circle of `edges`, one path around each (found one at a time:
/// each found circle's last step is dropped before looking again).
fn circles(edges: &std::collections::BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut edges = edges.clone();
    let mut out = Vec::new();
    while let Some(c) = circle(&edges) {
        let (from, to) = (&c[c.len() - 2], &c[c.len() - 1]);
        edges.get_mut(from).unwrap().remove(to);
        out.push(c);
    }
    out
}

/// The explorer's levels, one module each.
const UI_LEVELS: [&str; 4] = ["machine", "processes", "categories", "mappings"];

/// Where a level imports another: (level, the other).
fn levels_importing_levels(
    edges: &std::collections::BTreeMap<String, BTreeSet<String>>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for level in UI_LEVELS {
        for other in edges.get(level).into_iter().flatten() {
            if UI_LEVELS.contains(&other.as_str()) {
                out.push((level.to_string(), other.clone()));
            }
        }
    }
    out
}

/// The string literals of Rust source `text`, comments skipped: each as
/// written between its quotes (escapes left as they are).
fn string_literals(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    scan(text, |piece| {
        if let Piece::Literal(literal) = piece {
            out.push(literal);
        }
    });
    out
}

/// A piece of Rust source as [`scan`] hands it out.
enum Piece<'t> {
    /// A run of code between comments, char literals and string literals
    /// (a lifetime is code).
    Code(&'t str),
    /// A string literal's text between its quotes (escapes left as they
    /// are; raw strings too).
    Literal(&'t str),
}

/// Walks Rust source `text` in pieces, in order; comments and char
/// literals are left out.
fn scan<'t>(text: &'t str, mut on: impl FnMut(Piece<'t>)) {
    let b = text.as_bytes();
    let (mut i, mut start) = (0, 0);
    while i < b.len() {
        let skip_to = match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => text[i..].find('\n').map_or(b.len(), |n| i + n),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2)
            }
            // A char literal ('"', '\''), or a lifetime ('a), not a string.
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                text[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n + 1)
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i + 3,
            // A raw string: r"…", r#"…"#, br"…".
            b'r' if !b[..i].last().is_some_and(|c| c.is_ascii_alphanumeric() && *c != b'b')
                && matches!(b.get(i + 1), Some(b'"' | b'#')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let end = text[open + 1..].find(&close).map_or(b.len(), |n| open + 1 + n);
                on(Piece::Code(&text[start..i]));
                on(Piece::Literal(&text[open + 1..end]));
                i = (end + close.len()).min(b.len());
                start = i;
                continue;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                on(Piece::Code(&text[start..i]));
                on(Piece::Literal(&text[i + 1..j.min(b.len())]));
                i = (j + 1).min(b.len());
                start = i;
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        };
        on(Piece::Code(&text[start..i]));
        i = skip_to.min(b.len());
        start = i;
    }
    on(Piece::Code(&text[start..]));
}

/// Whether a literal names a command-line option: `--` and a letter, at
/// its start or after a space.
fn names_a_flag(literal: &str) -> bool {
    let flag_at = |i: usize| {
        literal[i..].starts_with("--")
            && literal[i + 2..].chars().next().is_some_and(|c| c.is_ascii_alphabetic())
    };
    flag_at(0) || literal.match_indices(' ').any(|(i, _)| flag_at(i + 1))
}

/// Literals that name another program's options, which the library runs
/// itself: (file under memtally-core/src, literal).
const OTHER_PROGRAMS_OPTIONS: &[(&str, &str)] = &[];

#[test]
fn the_rule_checkers_see_a_planted_violation() {
    // A literal naming a flag is seen; one in a comment, a char literal,
    // a permission string or a lifetime is not.
    let planted = r##"
        // --pid in a comment
        /* and --tree in a block */
        let q = '"'; let e = '\''; fn f<'a>(x: &'a str) {}
        let perms = "r--p";
        let bad = "a large process can take longer: raise --timeout";
        let raw = r#"--name "x""#;
        let fine = "vmmap -noCoalesce 5 - -x";
    "##;
    let flagged: Vec<&str> =
        string_literals(planted).into_iter().filter(|l| names_a_flag(l)).collect();
    assert_eq!(flagged, ["a large process can take longer: raise --timeout", "--name \"x\""]);
    assert_eq!(string_literals(r#"x("a\"b", "c")"#), [r#"a\"b"#, "c"]);

    let names = |t: &str, p: &str| modules_under(t, p).into_iter().collect::<Vec<_>>();
    // Every way an import can be written is seen.
    assert_eq!(names("use memtally_core::source::ProcRoot;", "memtally_core::"), ["source"]);
    assert_eq!(
        names("let h = memtally_core::source::access::read_hint();", "memtally_core::"),
        ["source"]
    );
    assert_eq!(
        names(
            "use memtally_core::{model::Sizes, source::{self, ProcRoot}, Error};",
            "memtally_core::"
        ),
        ["Error", "model", "source"]
    );
    assert_eq!(
        names(
            "use crate::ui::{app::App, categories::cells};\nuse crate::ui::widgets::x;",
            "crate::ui::"
        ),
        ["app", "categories", "widgets"]
    );
    assert!(names("use crate::render::ui::x; my_crate::ui::y", "crate::ui::").is_empty());
    // A level importing a level, and a circle, are found.
    let planted: std::collections::BTreeMap<String, BTreeSet<String>> = [
        ("mappings", &["app", "categories"][..]),
        ("app", &["widgets"][..]),
        ("widgets", &["draw"][..]),
        ("draw", &["app", "mappings"][..]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(levels_importing_levels(&planted), [("mappings".into(), "categories".into())]);
    assert_eq!(circle(&planted).unwrap(), ["app", "widgets", "draw", "app"]);
    let mut fixed = planted.clone();
    fixed.get_mut("widgets").unwrap().remove("draw");
    assert_eq!(circle(&fixed), None);
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
fn printers_do_not_read_the_system() {
    let mut checked = 0;
    for f in rust_files(&repo().join("memtally-cli/src/render")) {
        if test_only(&f) {
            continue; // tests build their inputs from recordings
        }
        let core = modules_under(&code(&f), "memtally_core::");
        assert!(
            !core.contains("source"),
            "{} imports memtally_core::source: a printer prints what a use case returns",
            f.strip_prefix(repo()).unwrap().display()
        );
        checked += 1;
    }
    assert!(checked > 20, "only {checked} printers checked");
}

/// The names the library's front door (`lib.rs`) takes from `modules`:
/// `pub use usecase::show::{show, Shown};` gives `show` and `Shown`.
fn front_door_names(modules: &[&str]) -> BTreeSet<String> {
    let lib = std::fs::read_to_string(repo().join("memtally-core/src/lib.rs")).unwrap();
    let mut out = BTreeSet::new();
    for line in lib.lines() {
        let Some(path) = line.strip_prefix("pub use ") else { continue };
        if !modules.iter().any(|m| path.starts_with(&format!("{m}::"))) {
            continue;
        }
        let items = path.trim_end_matches(';');
        let items = match items.find('{') {
            Some(i) => items[i + 1..].trim_end_matches('}'),
            None => items.rsplit("::").next().unwrap(),
        };
        for item in items.split(',') {
            let name = item.rsplit(" as ").next().unwrap().trim();
            if !name.is_empty() {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// Every result a printer prints lives in one home, `analyze` (the use
/// cases build and return them), so a printer imports no use case, and
/// never the file writer: it writes to the stream it is given.
#[test]
fn printers_import_no_use_case_nor_the_file_writer() {
    let door = front_door_names(&["usecase", "write"]);
    assert!(door.contains("show") && door.contains("TopOptions"), "front door not read: {door:?}");
    let mut found = Vec::new();
    let mut checked = 0;
    for f in rust_files(&repo().join("memtally-cli/src/render")) {
        if test_only(&f) {
            continue; // tests may build their inputs with a use case
        }
        let rel = f.strip_prefix(repo()).unwrap().display().to_string();
        let named = modules_under(&without_comments(&code(&f)), "memtally_core::");
        for name in named {
            if name == "usecase" || name == "write" || door.contains(&name) {
                found.push(format!("{rel}: memtally_core::{name}"));
            }
        }
        checked += 1;
    }
    assert!(checked > 20, "only {checked} printers checked");
    assert!(found.is_empty(), "printers that import a use case or the writer: {found:#?}");
}

#[test]
fn explorer_levels_do_not_import_each_other_nor_any_module_in_a_circle() {
    let edges = ui_imports();
    assert!(UI_LEVELS.iter().all(|l| edges.contains_key(*l)), "levels moved: {edges:?}");
    assert_eq!(
        levels_importing_levels(&edges),
        [],
        "a level imports another: share it in ui/widgets"
    );
    assert_eq!(circle(&edges), None, "ui modules import in a circle");
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

/// The library does not know the command line: no user-facing string of
/// memtally-core names a `--flag` (the CLI words remedies that name one).
#[test]
fn the_library_names_no_command_line_flag() {
    let src = repo().join("memtally-core/src");
    let mut found = Vec::new();
    let mut checked = 0;
    for f in rust_files(&src) {
        if test_only(&f) {
            continue;
        }
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = code(&f);
        for literal in string_literals(&text) {
            let allowed = OTHER_PROGRAMS_OPTIONS.contains(&(rel.as_str(), literal));
            if names_a_flag(literal) && !allowed {
                found.push(format!("{rel}: {literal:?}"));
            }
        }
        checked += 1;
    }
    assert!(checked > 40, "only {checked} files checked");
    assert!(found.is_empty(), "flags named in the library (word them in the CLI): {found:#?}");
}

/// A file that imports another that imports it back is one job in two
/// files: share a leaf both import, or make them one (DESIGN.md, "seams,
/// not size caps"). Checked file by file in the library and the printers.
#[test]
fn no_files_import_in_a_circle_in_the_library_or_the_printers() {
    let core = file_imports(&repo().join("memtally-core/src"));
    assert!(core.len() > 100, "only {} library files read", core.len());
    assert!(core["usecase/show"].contains("analyze/show"), "imports not seen: {core:?}");
    let cli = file_imports(&repo().join("memtally-cli/src"));
    let render: std::collections::BTreeMap<_, _> =
        cli.into_iter().filter(|(m, _)| m.starts_with("render")).collect();
    assert!(render.len() > 30, "only {} printer files read", render.len());
    let found: Vec<(&str, Vec<Vec<String>>)> =
        [("memtally-core/src", &core), ("memtally-cli/src/render", &render)]
            .into_iter()
            .map(|(what, edges)| (what, circles(edges)))
            .filter(|(_, c)| !c.is_empty())
            .collect();
    assert!(found.is_empty(), "files that import in a circle: {found:#?}");
}

#[test]
fn the_file_circle_checker_sees_every_way_of_naming_a_module() {
    let paths = |t: &str| {
        module_paths(&without_comments(t)).into_iter().map(|p| p.join("::")).collect::<Vec<_>>()
    };
    assert_eq!(
        paths("use super::{a::X, b::{c, d::E}};\nlet x = crate::model::Sizes::default();"),
        ["crate::model::Sizes::default", "super::a::X", "super::b::c", "super::b::d::E"]
    );
    assert_eq!(paths("use super::super::x::Y; use self::z;"), ["super::super::x::Y", "self::z"]);
    assert!(paths("// see crate::a\n/// [`X`](crate::b::X)\nlet s = \"crate::c\";").is_empty());
    assert!(paths("use memtally_core::model::Sizes; other_crate::x();").is_empty());
}
