//! `memtally completions SHELL` and `memtally man`: the scripts parse in
//! their shells and complete real subcommands and options, and every
//! manual page renders through man(1) without a warning. bash and man-db
//! are on every Debian machine; `.ci/run` installs zsh and fish, and
//! without them these tests fail under CI and print a skip only when `CI`
//! is unset.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::run;

/// The shell's path, or `None` (with a printed skip) outside CI when it is missing.
fn tool(name: &str) -> Option<String> {
    for dir in ["/usr/bin", "/bin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return Some(p.display().to_string());
        }
    }
    if std::env::var_os("CI").is_some() {
        panic!("{name} is missing: .ci/run installs it");
    }
    eprintln!("skipped: {name} is not installed (apt-get install {name}); CI installs it");
    None
}

/// The script for `shell`, saved in `dir`.
fn script(shell: &str, dir: &Path) -> std::path::PathBuf {
    let out = run(&["completions", shell]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.is_empty());
    let path = dir.join(format!("memtally.{shell}"));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What the bash completion function offers for the words typed so far.
fn bash_complete(bash: &str, script: &Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        "source {script}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; \
         COMP_POINT={point}; _memtally memtally '{last}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script = script.display(),
        words = words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" "),
        cword = words.len() - 1,
        point = line.len(),
        last = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = ok(Command::new(bash).args(["--norc", "-c", &program]).output().unwrap(), "bash");
    out.lines().map(str::to_string).filter(|l| !l.is_empty()).collect()
}

#[test]
fn bash_script_parses_and_completes_commands_and_options() {
    let bash = tool("bash").expect("bash is on every machine");
    let dir = tempfile::tempdir().unwrap();
    let path = script("bash", dir.path());
    ok(Command::new(&bash).arg("-n").arg(&path).output().unwrap(), "bash -n");
    let commands = bash_complete(&bash, &path, &["memtally", "s"]);
    for c in ["show", "snapshot", "serve"] {
        assert!(commands.iter().any(|w| w == c), "`memtally s<TAB>` offers {c}: {commands:?}");
    }
    let options = bash_complete(&bash, &path, &["memtally", "serve", "--li"]);
    assert_eq!(options, ["--listen"], "`memtally serve --li<TAB>`");
}

#[test]
fn zsh_script_parses() {
    let Some(zsh) = tool("zsh") else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = script("zsh", dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("#compdef memtally"), "a zsh completion function file");
    assert!(text.contains("--min-interval"), "serve's options are in it");
    ok(Command::new(zsh).arg("-n").arg(&path).output().unwrap(), "zsh -n");
}

#[test]
fn fish_script_parses_and_completes() {
    let Some(fish) = tool("fish") else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = script("fish", dir.path());
    ok(Command::new(&fish).arg("--no-execute").arg(&path).output().unwrap(), "fish --no-execute");
    let program = format!(
        "source {}; complete -C 'memtally se'; complete -C 'memtally serve --min-'",
        path.display()
    );
    let out =
        ok(Command::new(&fish).args(["--no-config", "-c", &program]).output().unwrap(), "fish -c");
    let words: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(words, ["serve", "--min-interval"], "{out}");
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
}

/// Renders a page with man(1), warnings on; returns the text.
fn render(page: &Path) -> String {
    let out = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(page)
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "")
        .output()
        .expect("man(1) runs (.ci/run installs man-db)");
    let text = ok(out.clone(), "man -l");
    assert!(out.stderr.is_empty(), "man -l warned: {}", String::from_utf8_lossy(&out.stderr));
    text
}

#[test]
fn every_manual_page_renders_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let list = ok(run(&["man", "--list"]), "man --list");
    let names: Vec<&str> = list.lines().collect();
    assert_eq!(names[0], "memtally");
    for c in ["memtally-top", "memtally-show", "memtally-serve", "memtally-completions"] {
        assert!(names.contains(&c), "{c} has a page: {names:?}");
    }
    assert!(!names.contains(&"memtally-man"), "the packagers' command has no page");
    for name in &names {
        let args: Vec<&str> = match name.strip_prefix("memtally-") {
            Some(sub) => vec!["man", sub],
            None => vec!["man"],
        };
        let roff = ok(run(&args), "memtally man");
        let page = dir.path().join(format!("{name}.1"));
        std::fs::write(&page, roff).unwrap();
        let text = render(&page);
        assert!(text.contains("NAME") && text.contains("SYNOPSIS"), "{name}: {text}");
    }
    let main = render(&dir.path().join("memtally.1"));
    for part in ["memtally-serve(1)", "EXAMPLES", "memtally top --by program", "CAP_SYS_PTRACE"] {
        assert!(main.contains(part), "memtally(1) has {part:?}:\n{main}");
    }
    let serve = render(&dir.path().join("memtally-serve.1"));
    assert!(serve.contains("--listen") && serve.contains("--min-interval"), "{serve}");
}

#[test]
fn man_for_an_unknown_command_is_a_usage_error() {
    let out = run(&["man", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no manual page for `nope`"));
}
