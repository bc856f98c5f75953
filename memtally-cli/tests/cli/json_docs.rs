//! The `wss` JSON document of a live child against docs/json.md: its
//! keys are the documented ones and no other. (The documents of the
//! recorded fixtures: memtally-cli/src/tests/json_docs.rs, in process.)

use std::collections::BTreeSet;

#[path = "../../src/tests/json_keys.rs"]
mod json_keys;

use json_keys::{check, documented, keys, listed, none};

use crate::support::run_json;

/// `wss` on a live exec'd child: its document, a process and a category
/// have the documented keys and no other (the size keys beside them).
#[test]
fn wss_keys_are_the_documented_ones() {
    let child = crate::support::lone::toucher(4 << 20, 1 << 20, 0);
    let pid = child.pid().to_string();
    let doc = run_json(&["wss", &pid, "--interval", "50ms", "--format", "json"]);
    let heading = "`memtally wss --format json`";
    check("wss", &documented("json.md", heading, 0), &keys(&doc), &[], &none());
    let process = documented("json.md", heading, 1);
    let sizes = listed("json.md", "### Size keys");
    let p = &doc["processes"][0];
    check("a wss process", &process, &keys(p), &[], &sizes);
    let figures: BTreeSet<String> = ["touched", "working_set", "cold"].map(String::from).into();
    let also: BTreeSet<String> = sizes.union(&figures).cloned().collect();
    let category: BTreeSet<String> = ["category", "label", "regions"].map(String::from).into();
    for c in p["categories"].as_array().unwrap().iter().chain(doc["categories"].as_array().unwrap())
    {
        check("a wss category", &category, &keys(c), &[], &also);
    }
    check("wss total", &figures, &keys(&doc["total"]), &[], &sizes);
}
