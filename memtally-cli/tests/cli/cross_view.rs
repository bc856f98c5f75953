//! Issue 37: one word, one figure, in every view. One process of a
//! recorded tree (the chromium browser, with 64 KiB swapped of which its
//! SwapPss is 32 KiB) is read by `top` (JSON and table), `show`, `diff`
//! (two snapshots of it), `report` (the page's embedded snapshot and its
//! process table), the exporter (`export`) and the explorer (`ui`, in
//! tmux), and each figure is compared by its name: PSS, PSS DIRTY, SWAP
//! PSS, FOOTPRINT PSS. A view that renames a figure, or prints another
//! figure under the name, fails here. `wss` reads live processes only (a
//! recorded tree is refused): its sums follow the same rule
//! (render::wss's tests).

use std::path::Path;

use serde_json::Value;

use crate::support::{repo, run, run_json};

const PID: &str = "11672";
const KIB: u64 = 1024;

/// The recorded browser, its first mapping given 64 KiB of swap (32 KiB
/// its share), in smaps and smaps_rollup alike.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = repo().join("testdata/fixtures/linux/chromium-browser/proc");
    std::fs::copy(from.join("meminfo"), dir.path().join("meminfo")).unwrap();
    let p = dir.path().join(PID);
    std::fs::create_dir_all(&p).unwrap();
    for e in std::fs::read_dir(from.join(PID)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), p.join(e.file_name())).unwrap();
    }
    let zero = "Swap:                  0 kB\nSwapPss:               0 kB\n";
    let some = "Swap:                 64 kB\nSwapPss:              32 kB\n";
    for f in ["smaps", "smaps_rollup"] {
        let text = std::fs::read_to_string(p.join(f)).unwrap();
        assert!(text.contains(zero), "{f}");
        std::fs::write(p.join(f), text.replacen(zero, some, 1)).unwrap();
    }
    dir
}

/// The figures by the name the views print them under, from `top`'s JSON.
struct Figures {
    pss: u64,
    pss_dirty: u64,
    swap_pss: u64,
    footprint_pss: u64,
}

fn human(bytes: u64) -> String {
    // As the tables print it (render::units::human).
    let units = ["B", "K", "M", "G", "T"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    match (bytes, u) {
        (0, _) => "0".into(),
        (_, 0) => format!("{bytes}B"),
        _ if v >= 100.0 => format!("{v:.0}{}", units[u]),
        _ => format!("{v:.1}{}", units[u]),
    }
}

/// The cell of a right-aligned column named `name` in `row`, below `head`.
fn cell(head: &str, row: &str, name: &str) -> String {
    let at = head
        .find(&format!(" {name} "))
        .or_else(|| head.ends_with(&format!(" {name}")).then(|| head.len() - name.len() - 1));
    let end = at.unwrap_or_else(|| panic!("no {name} column: {head}")) + 1 + name.len();
    let row: Vec<char> = row.chars().collect();
    let head_chars = head[..end].chars().count();
    let upto: String = row[..head_chars.min(row.len())].iter().collect();
    upto.split_whitespace().last().unwrap_or("").to_string()
}

#[test]
fn one_process_has_the_same_figures_in_every_view() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let top = run_json(&["top", "--proc-root", root, "--format", "json"]);
    let row = &top["rows"][0];
    assert_eq!(row["key"], PID);
    let n = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("{row}"));
    let f = Figures {
        pss: n(&row["pss"]),
        pss_dirty: n(&row["pss_dirty"]),
        swap_pss: n(&row["swap_pss"]) + n(&row["shmem_swap"]),
        footprint_pss: n(&row["footprint_pss"]),
    };
    assert_eq!(n(&row["swap_pss"]), 32 * KIB, "the tree's swap is read");

    // top's table: the same figures under the same headers.
    let out = run(&["top", "--proc-root", root]);
    let text = String::from_utf8(out.stdout).unwrap();
    let head = text.lines().find(|l| l.trim_start().starts_with("PID")).unwrap();
    let line = text.lines().find(|l| l.trim_start().starts_with(PID)).unwrap();
    for (name, v) in [("PSS", f.pss), ("PSS DIRTY", f.pss_dirty), ("SWAP PSS", f.swap_pss)] {
        assert_eq!(cell(head, line, name), human(v), "top {name}: {text}");
    }

    // show: its totals.
    let show = run_json(&["show", PID, "--proc-root", root, "--format", "json"]);
    let t = &show["totals"];
    assert_eq!(n(&t["pss"]), f.pss, "show pss");
    assert_eq!(n(&t["pss_dirty"]), f.pss_dirty, "show pss_dirty");
    assert_eq!(n(&t["swap_pss"]), 32 * KIB, "show swap_pss");

    // diff of two snapshots of it: both sides' totals.
    let a = dir.path().join("a.json");
    let snap = run(&["snapshot", "--proc-root", root, "-o", a.to_str().unwrap()]);
    assert!(snap.status.success(), "{}", String::from_utf8_lossy(&snap.stderr));
    let a = a.to_str().unwrap();
    let diff = run_json(&["diff", a, a, "--format", "json"]);
    for side in ["before", "after"] {
        let s = &diff["totals"][side];
        assert_eq!(n(&s["pss"]), f.pss, "diff {side} pss");
        assert_eq!(n(&s["pss_dirty"]), f.pss_dirty, "diff {side} pss_dirty");
        assert_eq!(n(&s["swap_pss"]), 32 * KIB, "diff {side} swap_pss");
    }

    // report: the embedded snapshot and the process table's cells.
    let page = dir.path().join("page.html");
    let out = run(&["report", "--proc-root", root, "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let open = r#"<script type="application/json" id="memtally-snapshot">"#;
    let start = html.find(open).expect("an embedded snapshot") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let embedded: Value = serde_json::from_str(&html[start..end]).unwrap();
    let totals = &embedded["processes"][0]["totals"];
    assert_eq!(n(&totals["pss"]), f.pss, "report's snapshot pss");
    assert_eq!(n(&totals["pss_dirty"]), f.pss_dirty, "report's snapshot pss_dirty");
    assert_eq!(n(&totals["swap_pss"]), 32 * KIB, "report's snapshot swap_pss");
    let table = &html[html.find(r#"<table id="procs""#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let thead = &table[..table.find("</thead>").unwrap()];
    let heads: Vec<&str> =
        thead.split("</th>").filter_map(|h| h.rsplit_once('>').map(|(_, t)| t)).collect();
    let tr = &table[table.find(&format!(r#"data-pid="{PID}""#)).unwrap()..];
    let tr = &tr[..tr.find("</tr>").unwrap()];
    let tds: Vec<&str> = tr.split("<td").skip(1).collect();
    let dom = |name: &str| -> u64 {
        let i =
            heads.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {heads:?}"));
        let v = tds[i].split("data-v=\"").nth(1).unwrap_or_else(|| panic!("{}", tds[i]));
        v[..v.find('"').unwrap()].parse().unwrap()
    };
    assert_eq!(dom("PSS"), f.pss, "report PSS");
    // The table names its columns as `top` does (issue 37 item 4).
    assert_eq!(dom("PSS DIRTY"), f.pss_dirty, "report PSS DIRTY");
    assert_eq!(dom("SWAP PSS"), f.swap_pss, "report SWAP PSS (SwapPss + shmem_swap)");
    assert_eq!(dom("FOOTPRINT PSS"), f.footprint_pss, "report FOOTPRINT PSS (Pss_Anon + SwapPss)");

    // The exporter: its series by the figure's name.
    let out = run(&["export", "--proc-root", root]);
    let metrics = String::from_utf8(out.stdout).unwrap();
    let series = |name: &str| -> u64 {
        let prefix = format!("memtally_process_{name}_bytes{{pid=\"{PID}\"");
        let line = metrics.lines().find(|l| l.starts_with(&prefix)).expect(&prefix);
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(series("pss"), f.pss);
    assert_eq!(series("pss_dirty"), f.pss_dirty);
    assert_eq!(series("swap_pss") + series("shmem_swap"), f.swap_pss);
    assert_eq!(series("footprint_pss"), f.footprint_pss);

    explorer(Path::new(root), &f);
}

/// The explorer's process level, at 200 columns: the same cells as top's.
fn explorer(root: &Path, f: &Figures) {
    use crate::support::tmux::Tmux;
    if !Tmux::available() {
        eprintln!("skipped the explorer: tmux is not installed");
        return;
    }
    let t = Tmux::start(200, 30, &repo());
    let bin = env!("CARGO_BIN_EXE_memtally");
    t.line(&format!("{bin} --proc-root {} ui --interval 1h", root.display()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    let s = t.wait_text("PID USER");
    let head = s.lines().find(|l| l.contains("PID USER")).unwrap();
    let row = s.lines().find(|l| l.trim_start().starts_with(PID)).expect(&s);
    for (name, v) in [("PSS", f.pss), ("PSS DIRTY", f.pss_dirty), ("SWAP PSS", f.swap_pss)] {
        assert_eq!(cell(head, row, name), human(v), "explorer {name}: {s}");
    }
    t.keys(&["q"]);
}
