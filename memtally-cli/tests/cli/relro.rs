//! Relocated read-only data (issue 21, item 7): a private file mapping
//! that is read-only now but was written (it holds anonymous pages) is its
//! own category, `relro`, not "file read-only data"; the seed's classic
//! table is unchanged (classic_parity.rs).

use serde_json::Value;

use crate::support::lone::lone;
use crate::support::{repo_path, run, run_json};

fn category<'a>(doc: &'a Value, key: &str) -> Option<&'a Value> {
    doc["categories"].as_array().unwrap().iter().find(|c| c["category"] == key)
}

/// Every region in `relro` is a read-only private file mapping holding
/// anonymous pages, and no `file_rodata` region holds any.
fn relro_is_what_was_written(doc: &Value) {
    for r in doc["regions"].as_array().unwrap() {
        let anon = r["anonymous"].as_u64().unwrap_or(0);
        match r["category"].as_str().unwrap() {
            "relro" => {
                assert_eq!(r["perms"], "r--p", "{r}");
                assert!(r["inode"].as_u64().unwrap() > 0 && anon > 0, "{r}");
            }
            "file_rodata" => assert_eq!(anon, 0, "written read-only data is relro: {r}"),
            _ => {}
        }
    }
}

#[test]
fn chromium_renderer_relro_is_its_own_category() {
    let root = repo_path("testdata/fixtures/linux/chromium-renderer/proc");
    let doc = run_json(&["--proc-root", &root, "show", "11755", "--format", "json"]);
    relro_is_what_was_written(&doc);
    let relro = category(&doc, "relro").expect("a relro category");
    assert_eq!(relro["label"], "RELRO (relocated ro)");
    assert_eq!(relro["regions"], 110);
    // 12.5M of the renderer's 20.2M dirty (shared + private) is RELRO;
    // main put it all under file read-only data.
    let dirty =
        |c: &Value| c["shared_dirty"].as_u64().unwrap() + c["private_dirty"].as_u64().unwrap();
    assert_eq!(dirty(relro), 13_090_816);
    let rodata = category(&doc, "file_rodata").unwrap();
    assert_eq!(dirty(rodata), 0, "what stays read-only data is clean");
    let out = run(&["--proc-root", &root, "show", "11755"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("RELRO (relocated ro) ")), "{text}");
}

#[test]
fn a_live_dynamically_linked_child_has_relro_pages() {
    // The dynamic linker writes the C library's and the program's
    // relocations, then mprotects them read-only.
    let child = lone(1 << 20);
    let pid = child.child.0.id().to_string();
    let doc = run_json(&["show", &pid, "--format", "json"]);
    relro_is_what_was_written(&doc);
    let relro = category(&doc, "relro").expect("a relro category");
    assert!(relro["anonymous"].as_u64().unwrap() > 0, "{relro}");
    let libc = doc["regions"].as_array().unwrap().iter().any(|r| {
        r["category"] == "relro" && r["path"].as_str().is_some_and(|p| p.contains("libc"))
    });
    assert!(libc, "the C library's RELRO");
}

#[test]
fn show_help_lists_the_categories_with_relro() {
    let out = run(&["show", "--help"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("RELRO (relocated ro) [relro]"), "{text}");
}
