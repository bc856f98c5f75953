//! Prints a diff: what grew and what shrank, largest growth first.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::diff::{Change, Diff, DiffSort, PurgeChange, RegionChange};
use memtally_core::analyze::vmmap::FootprintDiff;
use memtally_core::model::snapshot::SnapRegion;
use memtally_core::model::{Figure, Named, Sizes};

use crate::render::blocks::{write_text, Block};
use crate::render::json;
use crate::render::notes::{word, words};
use crate::render::table::{csv_text, escape_controls, terminal_width, Align, Table};
use crate::render::units::{human, human_opt, human_signed};
use crate::render::Printer;

/// A diff, and how many rows per section its table shows.
pub struct DiffView<'a> {
    pub diff: &'a Diff,
    pub limit: usize,
}

impl Printer for DiffView<'_> {
    fn table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        table(self.diff, self.limit, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut *out, &Document(self.diff))?;
        out.write_all(b"\n")
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        csv(self.diff, out)
    }
}

const COLUMNS: &[(&str, Figure)] = &[
    ("Δ DIRTY", Figure::Dirty),
    ("Δ PSS", Figure::Pss),
    ("Δ RSS", Figure::Rss),
    ("Δ SWAP", Figure::Swap),
    ("Δ VIRTUAL", Figure::Size),
];

fn delta_cell(c: &Change, f: Figure) -> String {
    c.delta(f).map_or_else(|| "-".into(), human_signed)
}

/// One section of changes (processes, categories, paths): its title,
/// its first `limit` rows, and how many more there are.
fn section(title: &str, rows: &[Change], limit: usize, first: &str) -> Vec<Block> {
    if rows.is_empty() {
        return vec![Block::Line(format!("{title}: no change"))];
    }
    let mut headers: Vec<(&str, Align)> = COLUMNS.iter().map(|(h, _)| (*h, Align::Right)).collect();
    headers.push(("DIRTY BEFORE → AFTER", Align::Right));
    headers.push((first, Align::Left));
    let mut t = Table::new(&headers);
    for c in rows.iter().take(limit) {
        let mut cells: Vec<String> = COLUMNS.iter().map(|&(_, f)| delta_cell(c, f)).collect();
        let side = |s: &Option<Sizes>| {
            s.as_ref().map_or_else(|| "·".to_string(), |s| human_opt(s.dirty()))
        };
        cells.push(format!("{} → {}", side(&c.before), side(&c.after)));
        let mark = match c.status() {
            "appeared" => " (new)",
            "vanished" => " (gone)",
            _ => "",
        };
        cells.push(match c.pid {
            Some(pid) => format!("{pid} {}{mark}", c.label),
            None => format!("{}{mark}", c.label),
        });
        t.row(cells);
    }
    let mut blocks = vec![Block::Heading(title.into()), Block::Table(t)];
    if rows.len() > limit {
        blocks
            .push(Block::Line(format!("({} more not shown; --top to change)", rows.len() - limit)));
    }
    blocks
}

fn table(d: &Diff, limit: usize, out: &mut dyn Write) -> std::io::Result<()> {
    write_text(blocks(d, limit), terminal_width(), out)
}

/// The table view as blocks: the totals' change, a section each for
/// processes, categories and paths, the regions that came and went, the
/// purge-state changes, the notes.
fn blocks(d: &Diff, limit: usize) -> Vec<Block> {
    let t = &d.totals;
    let over = d
        .seconds
        .map(|s| {
            format!(
                " over {}",
                humantime::format_duration(std::time::Duration::from_secs(s.max(0.0) as u64))
            )
        })
        .unwrap_or_default();
    let mut blocks = vec![
        Block::Line(format!(
            "total{over}: dirty {}, PSS {}, RSS {}, swap {}",
            delta_cell(t, Figure::Dirty),
            delta_cell(t, Figure::Pss),
            delta_cell(t, Figure::Rss),
            delta_cell(t, Figure::Swap)
        )),
        Block::Blank,
    ];
    for (title, rows, first) in [
        ("processes", &d.processes, "PROCESS"),
        ("categories", &d.categories, "CATEGORY"),
        ("paths", &d.paths, "PATH"),
    ] {
        blocks.extend(section(title, rows, limit, first));
        blocks.push(Block::Blank);
    }
    let (appeared, vanished): (Vec<_>, Vec<_>) = d.regions.iter().partition(|r| r.appeared);
    let sum = |v: &[&RegionChange]| {
        v.iter().filter_map(|r| r.region.sizes.size).fold(0, u64::saturating_add)
    };
    blocks.push(Block::Line(format!(
        "regions: {} appeared ({} virtual), {} vanished ({} virtual)",
        appeared.len(),
        human(sum(&appeared)),
        vanished.len(),
        human(sum(&vanished))
    )));
    for r in d.regions.iter().take(limit) {
        let reg = &r.region;
        blocks.push(Block::Line(format!(
            "  {} pid {} {}{} {} rss {} dirty {} {}",
            if r.appeared { "+" } else { "-" },
            r.pid.map_or_else(|| "?".into(), |p| p.to_string()),
            reg.start.map_or_else(|| "-".into(), |s| format!("{s:x}")),
            reg.end.map_or_else(String::new, |e| format!("-{e:x}")),
            human_opt(reg.sizes.size),
            human_opt(reg.sizes.rss),
            human_opt(reg.sizes.dirty()),
            escape_controls(
                reg.path
                    .clone()
                    .or_else(|| reg.region_type.clone())
                    .unwrap_or("[anonymous]".into())
            ),
        )));
    }
    if d.regions.len() > limit {
        blocks.push(Block::Line(format!(
            "  ({} more not shown; --top to change)",
            d.regions.len() - limit
        )));
    }
    blocks.extend(purge_changes(d, limit));
    blocks.extend(super::diff_footprint::footprint_changes(d, limit));
    blocks.extend(super::diff_exact::exact_changes(d, limit));
    blocks.extend(d.notes.iter().map(|n| Block::Note(escape_controls(word(n)))));
    blocks
}

/// vmmap reports: regions whose purgeable state changed (`N -> V`, ...).
fn purge_changes(d: &Diff, limit: usize) -> Vec<Block> {
    if d.purge_changes.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![
        Block::Blank,
        Block::Heading(format!("purge-state changes: {} region(s)", d.purge_changes.len())),
    ];
    for c in d.purge_changes.iter().take(limit) {
        let (b, a) = c.states();
        let r = &c.after;
        blocks.push(Block::Line(format!(
            "  {} -> {}  {}{} {} {} resident {} -> {}{}",
            b,
            a,
            r.start.map_or_else(|| "-".into(), |s| format!("{s:x}")),
            r.end.map_or_else(String::new, |e| format!("-{e:x}")),
            r.region_type.as_deref().unwrap_or("?"),
            human_opt(r.sizes.size),
            human_opt(c.before.sizes.rss),
            human_opt(r.sizes.rss),
            r.path.as_deref().map(|p| format!("  {p}")).unwrap_or_default(),
        )));
    }
    if d.purge_changes.len() > limit {
        blocks.push(Block::Line(format!(
            "({} more not shown; --top to change)",
            d.purge_changes.len() - limit
        )));
    }
    blocks
}

/// One changed thing (the totals, a process, a category, a path): its
/// key under the name of what it is, both sides and the difference.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ChangeJson<'a> {
    #[serde(flatten)]
    key: KeyJson<'a>,
    label: &'a str,
    status: &'static str,
    before: Option<&'a Sizes>,
    after: Option<&'a Sizes>,
    delta: DeltaJson<'a>,
}

/// The name a change's key goes by.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
enum KeyJson<'a> {
    Key(&'a str),
    Category(&'a str),
    Path(&'a str),
}

impl<'a> ChangeJson<'a> {
    fn of(c: &'a Change, key: fn(&'a str) -> KeyJson<'a>) -> ChangeJson<'a> {
        ChangeJson {
            key: key(&c.key),
            label: &c.label,
            status: c.status(),
            before: c.before.as_ref(),
            after: c.after.as_ref(),
            delta: DeltaJson(c),
        }
    }
}

/// A process's change, with its PID and command line.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ProcessChangeJson<'a> {
    #[serde(flatten)]
    change: ChangeJson<'a>,
    pid: Option<u32>,
    command: &'a str,
}

/// `delta`: every figure either side has, after − before (signed bytes);
/// null where one side of a pair does not know it.
struct DeltaJson<'a>(&'a Change);

impl Serialize for DeltaJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        let signed = |d: Option<i128>| d.map(|d| d as i64);
        let mut m: BTreeMap<&str, Option<i64>> = BTreeMap::new();
        for s in [&c.before, &c.after].into_iter().flatten() {
            for &f in Figure::ALL.iter().filter(|&&f| s.field(f).is_some()) {
                m.insert(f.name(), signed(c.delta(f)));
            }
            for (n, _) in &s.extra {
                m.insert(n, signed(c.delta_extra(n)));
            }
        }
        for derived in [Figure::Dirty, Figure::Uss] {
            m.insert(derived.name(), signed(c.delta(derived)));
        }
        serializer.collect_map(m)
    }
}

/// The schema of that map: each figure signed bytes or null, and a size
/// key this build does not know ([`Sizes::extra`](memtally_core::model::Sizes)) the same.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for DeltaJson<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Delta".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let signed = || serde_json::json!({ "type": ["integer", "null"] });
        let properties: serde_json::Map<String, serde_json::Value> =
            Figure::ALL.iter().map(|f| (f.name().to_string(), signed())).collect();
        schemars::json_schema!({
            "type": "object",
            "properties": properties,
            "additionalProperties": signed(),
        })
    }
}

/// The JSON document without its regions (see [`Document`]).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct DiffHead<'a> {
    seconds: Option<f64>,
    totals: ChangeJson<'a>,
    processes: Vec<ProcessChangeJson<'a>>,
    categories: Vec<ChangeJson<'a>>,
    paths: Vec<ChangeJson<'a>>,
    purge_changes: Vec<PurgeJson<'a>>,
    /// Only for two vmmap reports: their footprints (docs/json.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    vmmap: Option<&'a FootprintDiff>,
    /// Only when both snapshots were taken with `--exact` (docs/json.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    exact: Option<super::diff_exact::ExactDiffJson<'a>>,
    /// Only when there are some: the document of two sound snapshots
    /// stays as it was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

fn json_head(d: &Diff) -> DiffHead<'_> {
    DiffHead {
        seconds: d.seconds,
        totals: ChangeJson::of(&d.totals, KeyJson::Key),
        processes: d
            .processes
            .iter()
            .map(|c| ProcessChangeJson {
                change: ChangeJson::of(c, KeyJson::Key),
                pid: c.pid,
                command: &c.label,
            })
            .collect(),
        categories: d.categories.iter().map(|c| ChangeJson::of(c, KeyJson::Category)).collect(),
        paths: d.paths.iter().map(|c| ChangeJson::of(c, KeyJson::Path)).collect(),
        purge_changes: d.purge_changes.iter().map(PurgeJson::of).collect(),
        vmmap: d.vmmap.as_ref(),
        exact: d.exact.as_ref().map(super::diff_exact::ExactDiffJson::of),
        notes: words(&d.notes),
    }
}

/// A region whose purgeable state changed.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct PurgeJson<'a> {
    pid: Option<u32>,
    start: Option<u64>,
    end: Option<u64>,
    region_type: Option<&'a str>,
    path: Option<&'a str>,
    purge_before: &'static str,
    purge_after: &'static str,
    before: &'a Sizes,
    after: &'a Sizes,
}

impl PurgeJson<'_> {
    fn of(c: &PurgeChange) -> PurgeJson<'_> {
        let (before, after) = c.states();
        PurgeJson {
            pid: c.pid,
            start: c.after.start,
            end: c.after.end,
            region_type: c.after.region_type.as_deref(),
            path: c.after.path.as_deref(),
            purge_before: before,
            purge_after: after,
            before: &c.before.sizes,
            after: &c.after.sizes,
        }
    }
}

/// A region that appeared or vanished: the snapshot's region and whose.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct RegionChangeJson<'a> {
    #[serde(flatten)]
    region: &'a SnapRegion,
    pid: Option<u32>,
    status: &'static str,
}

/// The whole diff as JSON: the head as one JSON tree, the regions (there
/// can be hundreds of thousands) one at a time, never as one tree (so
/// it is written straight, not through [`json::line`]). Keys in sorted
/// order, as a JSON tree of it all would print them.
struct Document<'a>(&'a Diff);

impl Serialize for Document<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let head = match json::sorted(&json_head(self.0)).map_err(S::Error::custom)? {
            serde_json::Value::Object(mut head) => {
                json::with_schema(&mut head);
                head
            }
            _ => return Err(S::Error::custom("the diff's head is not a JSON object")),
        };
        let mut m = s.serialize_map(Some(head.len() + 1))?;
        let mut regions_done = false;
        for (k, v) in &head {
            if !regions_done && k.as_str() > "regions" {
                m.serialize_entry("regions", &Regions(&self.0.regions))?;
                regions_done = true;
            }
            m.serialize_entry(k, v)?;
        }
        if !regions_done {
            m.serialize_entry("regions", &Regions(&self.0.regions))?;
        }
        m.end()
    }
}

struct Regions<'a>(&'a [RegionChange]);

impl Serialize for Regions<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for r in self.0 {
            let region = RegionChangeJson {
                region: &r.region,
                pid: r.pid,
                status: if r.appeared { "appeared" } else { "vanished" },
            };
            seq.serialize_element(&json::sorted(&region).map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

/// The CSV's figures: the ones `diff` compares.
fn csv_figures() -> impl Iterator<Item = Figure> {
    DiffSort::ALL.iter().map(|s| s.0)
}

/// One line per changed process, category and path: scope, key, status,
/// then before, after and delta of each figure.
fn csv(d: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec!["scope".to_string(), "key".into(), "label".into(), "status".into()];
    for f in csv_figures().map(Figure::name) {
        header.push(format!("{f}_before"));
        header.push(format!("{f}_after"));
        header.push(format!("{f}_delta"));
    }
    let figure_cells = header.len() - 4;
    header.extend(super::diff_footprint::csv_header(d));
    w.write_record(&header)?;
    let scopes: [(&str, &[Change]); 4] = [
        ("total", std::slice::from_ref(&d.totals)),
        ("process", &d.processes),
        ("category", &d.categories),
        ("path", &d.paths),
    ];
    for (scope, rows) in scopes {
        for c in rows {
            let mut rec = vec![
                scope.to_string(),
                csv_text(c.key.clone()),
                csv_text(c.label.clone()),
                c.status().to_string(),
            ];
            let cell = |s: &Option<Sizes>, f: Figure| {
                s.as_ref().and_then(|s| s.figure(f)).map_or(String::new(), |v| v.to_string())
            };
            for f in csv_figures() {
                rec.push(cell(&c.before, f));
                rec.push(cell(&c.after, f));
                rec.push(c.delta(f).map_or(String::new(), |v| v.to_string()));
            }
            rec.resize(header.len(), String::new());
            w.write_record(&rec)?;
        }
    }
    // vmmap: one `purge` line per region whose purge state changed; the
    // key is its address range, the label its type and `BEFORE -> AFTER`.
    let purge: Vec<Change> = d
        .purge_changes
        .iter()
        .map(|p| {
            let (b, a) = p.states();
            let r = &p.after;
            let hex = |v: Option<u64>| v.map_or_else(|| "-".into(), |v| format!("{v:x}"));
            Change {
                key: format!("{}-{}", hex(r.start), hex(r.end)),
                label: format!("{} {b} -> {a}", r.region_type.as_deref().unwrap_or("?")),
                pid: p.pid,
                before: Some(p.before.sizes.clone()),
                after: Some(r.sizes.clone()),
            }
        })
        .collect();
    for c in &purge {
        let mut rec = vec![
            "purge".to_string(),
            c.key.clone(),
            escape_controls(c.label.clone()),
            c.status().to_string(),
        ];
        for f in csv_figures() {
            let cell = |s: &Option<Sizes>| {
                s.as_ref().and_then(|s| s.figure(f)).map_or(String::new(), |v| v.to_string())
            };
            rec.push(cell(&c.before));
            rec.push(cell(&c.after));
            rec.push(c.delta(f).map_or(String::new(), |v| v.to_string()));
        }
        rec.resize(header.len(), String::new());
        w.write_record(&rec)?;
    }
    for rec in super::diff_footprint::csv_rows(d, figure_cells) {
        w.write_record(&rec)?;
    }
    w.flush()
}

/// The schemas of the document's parts: its head (every key but the
/// regions) and one region (docs/schema/, [`crate::render::schema`]).
#[cfg(feature = "schema")]
pub(crate) fn schemas(g: &mut schemars::SchemaGenerator) -> [schemars::Schema; 2] {
    [
        <DiffHead as schemars::JsonSchema>::json_schema(g),
        <RegionChangeJson as schemars::JsonSchema>::json_schema(g),
    ]
}
