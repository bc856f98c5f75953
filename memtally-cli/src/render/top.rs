//! Prints the `top` view: ranked rows, totals, the machine picture and the
//! notes that say what the numbers leave out.

use std::io::Write;

use memtally_core::analyze::top::Top;
use memtally_core::analyze::top::{dirty_field, group_key, TopBy, TopReport, TopRow, TopSort};
use memtally_core::model::{Figure, Named, Sizes};

use crate::render::blocks::{write_text, Block};
use crate::render::notes::word;
use crate::render::table::{Align, Cut, Table};
use crate::render::units::{human, human_opt, plural};
use crate::render::Printer;
use crate::render::{width, Screen};

use crate::render::top_json::JSON_FIGURES;

impl Printer for Top {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        table(&self.report, self, screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        crate::render::top_json::print(&self.report, self, &self.notes(), out)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        csv(&self.report, self, None, out)
    }
}

/// Size columns of `top` (header, figure name); the explorer shows the
/// same. Every one adds up across processes but RSS (each process's
/// resident pages in full): SWAP PSS is SwapPss, PSS DIRTY is Pss_Dirty;
/// where the kernel has no Pss_Dirty (before 6.0) the dirty column is
/// PRIV DIRTY instead, and a note says so.
pub(crate) fn figures(totals: &Sizes) -> Vec<(&'static str, Figure)> {
    let dirty = match dirty_field(totals) {
        Figure::PssDirty => ("PSS DIRTY", Figure::PssDirty),
        other => ("PRIV DIRTY", other),
    };
    vec![
        ("USS", Figure::Uss),
        ("PSS", Figure::Pss),
        ("RSS", Figure::Rss),
        // SwapPss and the swapped shared memory it leaves out, once.
        ("SWAP PSS", Figure::SwapCounted),
        dirty,
    ]
}

/// The footprint column, where rows are sorted by one of the two
/// footprints: `FOOTPRINT` (status RssAnon + VmSwap) on process rows
/// only, since it counts shared pages in full; `FOOTPRINT PSS` (Pss_Anon
/// + SwapPss) on any rows, since it adds up. JSON and CSV carry both always.
fn footprint_column(report: &TopReport) -> Option<(&'static str, Figure)> {
    match report.sort.first() {
        Some(TopSort::Figure(Figure::Footprint)) if report.by == TopBy::Process => {
            Some(("FOOTPRINT", Figure::Footprint))
        }
        Some(TopSort::Figure(Figure::FootprintPss)) => {
            Some(("FOOTPRINT PSS", Figure::FootprintPss))
        }
        Some(TopSort::Figure(Figure::FootprintPssShmem)) => {
            Some(("FOOTPRINT PSS+SHM", Figure::FootprintPssShmem))
        }
        _ => None,
    }
}

/// The table, the machine picture and the notes.
fn table(
    report: &TopReport,
    ctx: &Top,
    width: Option<usize>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let plain = Listed { top: ctx, pids: false, percent: false, columns: None };
    write_text(blocks(report, ctx, plain), width, out)
}

/// The table view as blocks: the ranked rows, what was left out, the
/// machine picture, the notes.
fn blocks(report: &TopReport, ctx: &Top, shown: Listed) -> Vec<Block> {
    let mut blocks = vec![Block::Table(rows_table(report, ctx, report.rows.len(), shown))];
    if report.omitted > 0 {
        blocks.push(Block::Line(format!(
            "({} more rows not shown; totals include them. --top N or --all to change.)",
            report.omitted
        )));
    }
    blocks.extend(shmem_swap_note(&report.totals));
    if let Some(m) = &report.machine {
        blocks.push(Block::Blank);
        blocks.extend(crate::render::machine::short(m));
    }
    blocks.extend(ctx.notes().iter().map(|n| Block::Note(word(n))));
    blocks
}

/// Each row's share of the machine's RAM: PSS / MemTotal, as `%MEM` of
/// smem -p and htop (theirs from RSS; PSS adds up to the total's).
fn percent(pss: Option<u64>, total: Option<u64>) -> String {
    match (pss, total.filter(|&t| t > 0)) {
        (Some(p), Some(t)) => format!("{:.1}", p as f64 * 100.0 / t as f64),
        _ => "-".into(),
    }
}

/// The PIDs of a group's processes, smallest first (`--pids`).
fn group_pids(by: TopBy, row: &TopRow, ctx: &Top) -> String {
    let mut pids: Vec<u32> = ctx
        .scan
        .processes
        .iter()
        .filter(|p| group_key(p, by, &|uid| ctx.users.name(uid)).as_ref() == Some(&row.key))
        .map(|p| p.info.pid)
        .collect();
    pids.sort_unstable();
    pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// The table of the first `shown` rows and the totals of all, with the
/// columns `listed` asks for.
pub(crate) fn rows_table(report: &TopReport, ctx: &Top, shown: usize, listed: Listed) -> Table {
    let pids = listed.pids;
    let per_process = matches!(report.by, TopBy::Process | TopBy::Tree);
    // The GPU column appears when some process has GPU memory.
    let gpu = report.totals.gpu.is_some().then_some(("GPU", Figure::Gpu));
    // Huge pages and KSM: a column each where some row has any. Their
    // totals over several processes are rightly `-` (full counts).
    let nonzero = |f: Figure| {
        let some = |s: &Sizes| s.figure(f).is_some_and(|v| v > 0);
        some(&report.totals) || report.rows.iter().any(|r| some(&r.sizes))
    };
    let huge = [("THP", Figure::Thp), ("HUGETLB", Figure::Hugetlb), ("KSM", Figure::Ksm)]
        .into_iter()
        .filter(|&(_, f)| nonzero(f));
    let figures: Vec<(&str, Figure)> = match listed.columns {
        Some(chosen) => chosen.iter().filter_map(|&c| column(c)).collect(),
        None => figures(&report.totals)
            .into_iter()
            .chain(gpu)
            .chain(huge)
            .chain(footprint_column(report))
            .collect(),
    };
    // A tree row adds up its whole subtree: PROCS says how many.
    let tree = report.by == TopBy::Tree;
    let mut headers: Vec<(&str, Align)> = if per_process {
        let procs = tree.then_some(("PROCS", Align::Right));
        [("PID", Align::Right), ("USER", Align::Left)].into_iter().chain(procs).collect()
    } else {
        vec![(key_header(report.by), Align::Left), ("PROCS", Align::Right)]
    };
    headers.extend(figures.iter().map(|(h, _)| (*h, Align::Right)));
    let exact = ctx.exact.as_ref();
    // Shared memory no outsider maps: a column of its own where there is any.
    let shmem = exact.is_some_and(|e| e.all.shmem > 0);
    if exact.is_some() {
        headers.push(("EXCLUSIVE", Align::Right));
    }
    if shmem {
        headers.push(("EXCL SHMEM", Align::Right));
    }
    // Each row's PSS as a share of RAM, where meminfo says how much.
    let total = ctx.mem_total.filter(|_| listed.percent);
    if total.is_some() {
        headers.push(("%MEM", Align::Right));
    }
    // The OOM score, where it was asked for (per process rows only).
    let oom = per_process && !ctx.oom_scores.is_empty();
    if oom {
        headers.push(("OOM", Align::Right));
    }
    let charge = report.by == TopBy::Cgroup && !ctx.cgroups.is_empty();
    if charge {
        headers.extend([("USAGE", Align::Right), ("LIMIT", Align::Right), ("WSET", Align::Right)]);
    }
    if per_process {
        headers.push(("COMMAND", Align::Left));
    } else if report.by == TopBy::Cgroup {
        headers.rotate_left(1);
    }
    let key_column = headers.len() - 1;
    let pids = pids && !per_process;
    if pids {
        headers.push(("PIDS", Align::Left));
    }
    let mut t = Table::new(&headers);
    if report.by == TopBy::Cgroup {
        // Last but PIDS, cut from the left: the leaf tells the rows apart.
        t.cut_as(key_column, Cut::Leaf);
    }
    // A narrow COMMAND column shows the program and what tells its
    // processes apart first (`chromium --type=renderer ...`).
    let commands: Vec<String> = if per_process {
        report
            .rows
            .iter()
            .map(|r| ctx.process_of(r).map(|p| p.info.command()).unwrap_or_default())
            .collect()
    } else {
        Vec::new()
    };
    let distinguishing = width::distinguishing(&commands);
    for (i, row) in report.rows.iter().enumerate().take(shown) {
        let mut cells = Vec::new();
        let p = ctx.process_of(row);
        if let Some(p) = p.filter(|_| per_process) {
            cells.push(p.info.pid.to_string());
            cells.push(ctx.users.name(p.info.uid));
            if tree {
                cells.push(row.processes.to_string());
            }
        } else {
            cells.push(row.key.clone());
            cells.push(row.processes.to_string());
        }
        for &(_, f) in &figures {
            let mut cell = human_opt(row.sizes.figure(f));
            if row.without_pss > 0 && row.processes > 1 && matches!(f, Figure::Pss | Figure::Uss) {
                cell.push('*');
            }
            cells.push(cell);
        }
        if let Some(e) = exact {
            let ex = e.groups.get(i).copied().flatten();
            cells.push(human_opt(ex.map(|x| x.bytes)));
            if shmem {
                cells.push(human_opt(ex.map(|x| x.shmem)));
            }
        }
        if total.is_some() {
            cells.push(percent(row.sizes.pss, total));
        }
        if oom {
            let score = p.and_then(|p| ctx.oom_scores.get(&p.info.pid));
            cells.push(score.map_or_else(|| "-".into(), u32::to_string));
        }
        if charge {
            let m = ctx.cgroups.get(&row.key);
            cells.push(human_opt(m.and_then(|m| m.usage)));
            cells.push(human_opt(m.and_then(|m| m.limit)));
            cells.push(human_opt(m.and_then(|m| m.working_set())));
        }
        if let Some(p) = p.filter(|_| per_process) {
            let indent = "  ".repeat(row.depth);
            cells.push(format!("{indent}{}", p.info.command()));
            let label = width::command_label(&commands[i], distinguishing[i].as_deref());
            let column = cells.len() - 1;
            t.row_with_compact(cells, column, format!("{indent}{label}"));
            continue;
        } else if report.by == TopBy::Cgroup {
            cells.rotate_left(1);
        }
        if pids {
            cells.push(group_pids(report.by, row, ctx));
        }
        t.row(cells);
    }
    let n = ctx.scan.processes.len();
    let mut footer = if per_process {
        // Under PID, not USER: a user column no wider than its names
        // leaves the command one more column at 80.
        let procs = tree.then(|| n.to_string());
        ["total".to_string(), String::new()].into_iter().chain(procs).collect()
    } else {
        vec!["total".to_string(), n.to_string()]
    };
    footer.extend(figures.iter().map(|(_, f)| human_opt(report.totals.figure(*f))));
    if let Some(e) = exact {
        footer.push(human_opt(Some(e.all.bytes)));
        if shmem {
            footer.push(human_opt(Some(e.all.shmem)));
        }
    }
    if total.is_some() {
        footer.push(percent(report.totals.pss, total));
    }
    if oom {
        footer.push(String::new());
    }
    if charge {
        footer.extend([String::new(), String::new(), String::new()]);
    }
    if per_process {
        footer.push(plural(n, "process", "processes"));
    } else if report.by == TopBy::Cgroup {
        footer.rotate_left(1);
    }
    if pids {
        footer.push(String::new());
    }
    t.footer(footer);
    t
}

/// `top`'s view with what the table shows beside the figures when asked:
/// each group's PIDs (`--list-pids`), each row's share of RAM (`--percent`),
/// the figure columns chosen (`--columns`; `None`: the default ones).
#[derive(Clone, Copy)]
pub struct Listed<'a> {
    pub top: &'a Top,
    pub pids: bool,
    pub percent: bool,
    pub columns: Option<&'a [TopSort]>,
}

/// The table column (header, figure shown) of a `--columns` name; `None`
/// for the names whose columns are there anyway or added otherwise (pid,
/// processes: the identity columns; oom: the OOM column, which it turns on).
fn column(c: TopSort) -> Option<(&'static str, Figure)> {
    let f = match c {
        TopSort::Figure(f) => f,
        TopSort::Pid | TopSort::Processes | TopSort::Oom => return None,
    };
    match f {
        // As the default column: SwapPss and swapped shared memory once.
        Figure::SwapPss => Some(("SWAP PSS", Figure::SwapCounted)),
        f => Some((header(f), f)),
    }
}

/// The column header of a figure, in `top`'s words (every figure has one:
/// `--columns` may name any).
pub(crate) fn header(f: Figure) -> &'static str {
    match f {
        Figure::Size => "VSIZE",
        Figure::KernelPageSize => "KPAGESIZE",
        Figure::MmuPageSize => "MMUPAGESIZE",
        Figure::Rss => "RSS",
        Figure::Pss => "PSS",
        Figure::PssDirty => "PSS DIRTY",
        Figure::PssAnon => "PSS ANON",
        Figure::PssFile => "PSS FILE",
        Figure::PssShmem => "PSS SHMEM",
        Figure::SharedClean => "SHR CLEAN",
        Figure::SharedDirty => "SHR DIRTY",
        Figure::PrivateClean => "PRIV CLEAN",
        Figure::PrivateDirty => "PRIV DIRTY",
        Figure::Referenced => "REFERENCED",
        Figure::Anonymous => "ANON",
        Figure::Ksm => "KSM",
        Figure::LazyFree => "LAZYFREE",
        Figure::AnonHugePages => "ANON THP",
        Figure::ShmemPmdMapped => "SHMEM THP",
        Figure::FilePmdMapped => "FILE THP",
        Figure::SharedHugetlb => "SHR HUGETLB",
        Figure::PrivateHugetlb => "PRIV HUGETLB",
        Figure::Swap => "SWAP",
        Figure::SwapPss => "SWAP PSS",
        Figure::Locked => "LOCKED",
        Figure::Dirty => "DIRTY",
        Figure::Gpu => "GPU",
        Figure::ShmemSwap => "SHMEM SWAP",
        Figure::Footprint => "FOOTPRINT",
        Figure::FootprintPeak => "PEAK FOOTPRINT",
        Figure::RssPeak => "PEAK RSS",
        Figure::Touched => "TOUCHED",
        Figure::WorkingSet => "WORKING SET",
        Figure::Cold => "COLD",
        Figure::Clean => "CLEAN",
        Figure::Uss => "USS",
        Figure::Thp => "THP",
        Figure::Hugetlb => "HUGETLB",
        Figure::FootprintPss => "FOOTPRINT PSS",
        Figure::FootprintPssShmem => "FOOTPRINT PSS+SHM",
        Figure::SwapCounted => "SWAP PSS",
    }
}

impl Printer for Listed<'_> {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let blocks = blocks(&self.top.report, self.top, *self);
        write_text(blocks, screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.top.json(out)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        csv(&self.top.report, self.top, self.columns, out)
    }
}

/// What SWAP PSS holds beside the kernel's SwapPss, where there is any.
pub(crate) fn shmem_swap_note(totals: &Sizes) -> Option<Block> {
    let bytes = totals.shmem_swap.filter(|&v| v > 0)?;
    Some(Block::Note(format!(
        "SWAP PSS includes {} of swapped shared memory (shmem_swap: tmpfs, /dev/shm, memfd and SysV pages in swap, which the kernel's SwapPss leaves out), each object counted once and split among the processes that map it.",
        human(bytes)
    )))
}

/// The key column's header of a grouping (`top`'s table and the
/// explorer's process level).
pub fn key_header(by: TopBy) -> &'static str {
    match by {
        TopBy::Program => "PROGRAM",
        TopBy::User => "USER",
        TopBy::Cgroup => "CGROUP",
        TopBy::Process | TopBy::Tree => "PID",
    }
}

/// One CSV line per row, exact bytes, empty cells where unknown; the
/// figure columns `columns` chooses (`--columns`), else every one.
/// Figures the CSV gained after its header was first documented: they
/// follow every earlier column, `command` included, so a reader by
/// position keeps its columns (CHANGELOG, "Compatibility").
const CSV_ADDED: &[Figure] = &[Figure::RssPeak];

fn csv(
    report: &TopReport,
    ctx: &Top,
    columns: Option<&[TopSort]>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let chosen: Vec<Figure>;
    let figures: &[Figure] = match columns {
        Some(c) => {
            chosen = c
                .iter()
                .filter_map(|c| match c {
                    TopSort::Figure(f) => Some(*f),
                    _ => None,
                })
                .collect();
            &chosen
        }
        None => {
            chosen = JSON_FIGURES.iter().copied().filter(|f| !CSV_ADDED.contains(f)).collect();
            &chosen
        }
    };
    let added = if columns.is_none() { CSV_ADDED } else { &[] };
    let mut w = csv::Writer::from_writer(out);
    let per_process = matches!(report.by, TopBy::Process | TopBy::Tree);
    let tree = report.by == TopBy::Tree;
    let mut header: Vec<&str> = if per_process {
        vec!["pid", "ppid", "user", "source", "depth", "processes"]
    } else {
        vec![report.by.name(), "processes"]
    };
    // `--by tree`: a column that says the figures are the subtree's.
    if tree {
        header.push("subtree");
    }
    header.extend(figures.iter().map(|f| f.name()));
    if ctx.exact.is_some() {
        header.extend(["exclusive", "exclusive_anon", "exclusive_swap", "exclusive_shmem"]);
    }
    if per_process {
        header.push("command");
    }
    header.extend(added.iter().map(|f| f.name()));
    w.write_record(&header)?;
    for (i, row) in report.rows.iter().enumerate() {
        let mut rec: Vec<String> = match ctx.process_of(row).filter(|_| per_process) {
            Some(p) => vec![
                p.info.pid.to_string(),
                p.info.ppid.to_string(),
                ctx.users.name(p.info.uid),
                serde_json::to_value(p.source)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                row.depth.to_string(),
                row.processes.to_string(),
            ],
            None => {
                vec![crate::render::table::csv_text(row.key.clone()), row.processes.to_string()]
            }
        };
        if tree {
            rec.push("true".into());
        }
        rec.extend(
            figures.iter().map(|&f| row.sizes.figure(f).map_or(String::new(), |v| v.to_string())),
        );
        if let Some(e) = &ctx.exact {
            let x = e.groups.get(i).copied().flatten();
            let cell = |f: fn(&memtally_core::model::pages::Exclusive) -> u64| {
                x.as_ref().map_or(String::new(), |x| f(x).to_string())
            };
            rec.extend([cell(|x| x.bytes), cell(|x| x.anon), cell(|x| x.swap), cell(|x| x.shmem)]);
        }
        if let Some(p) = ctx.process_of(row).filter(|_| per_process) {
            rec.push(crate::render::table::csv_text(p.info.command()));
        }
        rec.extend(
            added.iter().map(|&f| row.sizes.figure(f).map_or(String::new(), |v| v.to_string())),
        );
        w.write_record(&rec)?;
    }
    w.flush()
}
