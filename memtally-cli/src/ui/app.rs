//! The explorer's state: where the user is, what was read last, and the
//! refresh that reads it, through the same use cases as `top` and `show`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use memtally_core::analyze::category::Category;
use memtally_core::analyze::top::Top;
use memtally_core::analyze::top::{group_key, TopBy};
use memtally_core::model::Named;
use memtally_core::source::ProcRoot;

pub use crate::ui::detail::Detail;
use crate::ui::exact::{Pin, PinFigures, PinsRead};
use crate::ui::history::History;
use crate::ui::pace::{process_cpu, Pace};
use crate::ui::rates::{Rate, Rates};
use crate::ui::reader::{DetailRead, Done, Job, Reader};
pub use crate::ui::sort_key::SortKey;
use crate::ui::widgets::category_rows::{category_rows, CatRow};
use crate::ui::widgets::process_rows::{
    base_rows, retain_group, retain_matching, Columns, ProcRow,
};

/// What `memtally ui` was started with.
#[derive(Debug, Clone)]
pub struct Options {
    pub interval: Duration,
    pub by: TopBy,
    /// The share of one core the list's reads may take, in percent (0: any).
    pub max_cpu: f64,
}

/// The four levels, from the machine down to one mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Machine,
    Processes,
    Categories,
    Mappings,
}

/// A process row whose process exited; greyed, for a while.
#[derive(Debug)]
pub struct Ghost {
    pub row: ProcRow,
    pub since: Instant,
}

/// How long an exited process stays in the list.
pub const GHOST_TIME: Duration = Duration::from_secs(30);

/// What the process level's rows are built from besides the list read:
/// when none of it changed, the rows built last are the rows. Every frame
/// and most keys ask for the rows, and at 50,000 processes building them
/// (a copy of every row's figures and command, the filter, the ghosts
/// placed) took a frame hundreds of milliseconds.
#[derive(Debug, Clone, PartialEq)]
struct RowsKey {
    /// Counts the lists read (a new list brings new rows, ghosts and rates).
    read: u64,
    ghosts: usize,
    by: TopBy,
    group: Option<(TopBy, String)>,
    filter: String,
    sort: SortKey,
}

pub struct App {
    pub root: ProcRoot,
    pub interval: Duration,
    pub level: Level,
    /// The selected row of each level.
    pub cursor: [usize; 4],
    pub by: TopBy,
    pub sort: SortKey,
    pub filter: String,
    /// `/` was pressed: keys edit the filter.
    pub editing: bool,
    /// Entered from a group row (program, user, cgroup): its processes.
    pub group: Option<(TopBy, String)>,
    pub top: Option<Top>,
    pub top_error: Option<String>,
    pub ghosts: Vec<Ghost>,
    /// Each grouping's row samples, for the sparklines.
    histories: HashMap<&'static str, History>,
    /// The growth rates (every process's samples; the groups' members).
    pub rates: Rates,
    /// The reads, on their own thread (`top`'s reader, command lines
    /// remembered between refreshes, lives there).
    reads: Reader,
    /// A read asked for and not sent yet (one is in flight).
    want_top: bool,
    want_detail: bool,
    /// The read whose answer `detail` holds.
    shown_detail: Option<Job>,
    /// The process being looked at (categories, mappings).
    pub pid: Option<u32>,
    pub category: Option<Category>,
    pub detail: Option<Detail>,
    /// Rows pinned with `x` (see `exact`), and their figures by key.
    pub pins: Vec<Pin>,
    pub pin_figures: HashMap<String, PinFigures>,
    /// Why some of the pinned rows' figures are missing (one line).
    pub pins_note: Option<String>,
    want_pins: bool,
    /// The last read sent was the list's.
    top_last: bool,
    /// How often the list is read (`--max-cpu`).
    pub pace: Pace,
    pub status: String,
    pub help: bool,
    pub quit: bool,
    start: Instant,
    pub refreshes: u64,
    /// Counts the lists applied (see [`RowsKey`]).
    lists_read: u64,
    /// The process rows built last, and what they were built from.
    rows: RefCell<Option<(RowsKey, Rc<Vec<ProcRow>>)>>,
    /// The process level's columns for those rows.
    pub process_columns: RefCell<Option<Rc<Columns>>>,
}

impl App {
    pub fn new(root: ProcRoot, opts: &Options) -> App {
        App {
            root: root.clone(),
            interval: opts.interval,
            level: Level::Machine,
            cursor: [0; 4],
            by: opts.by,
            sort: SortKey::Pss,
            filter: String::new(),
            editing: false,
            group: None,
            top: None,
            top_error: None,
            ghosts: Vec::new(),
            histories: HashMap::new(),
            rates: Rates::default(),
            reads: Reader::start(root.clone()),
            want_top: false,
            want_detail: false,
            shown_detail: None,
            pid: None,
            category: None,
            detail: None,
            pins: Vec::new(),
            pin_figures: HashMap::new(),
            pins_note: None,
            want_pins: false,
            top_last: false,
            pace: Pace::new(opts.max_cpu),
            status: String::new(),
            help: false,
            quit: false,
            start: Instant::now(),
            refreshes: 0,
            lists_read: 0,
            rows: RefCell::new(None),
            process_columns: RefCell::new(None),
        }
    }

    pub fn level_index(&self) -> usize {
        self.level as usize
    }

    /// The samples of the current grouping.
    pub fn history(&self) -> Option<&History> {
        self.histories.get(self.by.name())
    }

    /// A row's growth rate: a process's own, or a group's members'.
    pub fn rate(&self, r: &ProcRow) -> Option<Rate> {
        match r.pid {
            Some(pid) => self.rates.process(pid),
            None => self.rates.group(&r.label),
        }
    }

    /// The process level's rows: the group entered, exited processes
    /// greyed where they stood, the `/` filter, the growth order. Built
    /// again only when what they are built from changed.
    pub fn process_rows(&self) -> Rc<Vec<ProcRow>> {
        let key = RowsKey {
            read: self.lists_read,
            ghosts: self.ghosts.len(),
            by: self.by,
            group: self.group.clone(),
            filter: self.filter.clone(),
            sort: self.sort,
        };
        let mut cached = self.rows.borrow_mut();
        if let Some((k, rows)) = cached.as_ref() {
            if *k == key {
                return Rc::clone(rows);
            }
        }
        let rows = Rc::new(self.build_process_rows());
        *cached = Some((key, Rc::clone(&rows)));
        rows
    }

    fn build_process_rows(&self) -> Vec<ProcRow> {
        let Some(top) = &self.top else { return Vec::new() };
        let mut rows = base_rows(top);
        match &self.group {
            Some((by, key)) => retain_group(&mut rows, top, *by, key),
            None => {
                for g in &self.ghosts {
                    let v = self.sort_value(&g.row);
                    let at = rows.iter().position(|r| self.sort_value(r) < v).unwrap_or(rows.len());
                    rows.insert(at, g.row.clone());
                }
            }
        }
        retain_matching(&mut rows, &self.filter);
        if self.sort == SortKey::Growth && self.by != TopBy::Tree {
            rows.sort_by(|a, b| {
                self.sort_value(b)
                    .partial_cmp(&self.sort_value(a))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        rows
    }

    /// The figure a process row sorts by (growth per minute for growth).
    fn sort_value(&self, r: &ProcRow) -> Option<f64> {
        match self.sort {
            SortKey::Growth => self.rate(r).map(|t| t.per_minute),
            k => r.sizes.figure(k.top_field()).map(|v| v as f64),
        }
    }

    /// The categories level's rows, of the process looked at.
    pub fn category_rows(&self) -> Vec<CatRow> {
        self.detail.as_ref().and_then(|d| d.report.as_ref()).map(category_rows).unwrap_or_default()
    }

    /// Asks for everything the current level shows to be read again.
    pub fn refresh(&mut self) {
        if self.pace.due(Instant::now()) {
            self.refresh_top();
        }
        if matches!(self.level, Level::Categories | Level::Mappings) {
            self.refresh_detail();
        }
        self.refresh_pins();
        self.refreshes += 1;
    }

    /// Asks for the process list: `top`'s reads over every process
    /// (smaps_rollup only), on the reads' thread.
    pub fn refresh_top(&mut self) {
        self.want_top = true;
        self.dispatch();
    }

    /// Asks for the pinned rows' figures (none asked when none is pinned).
    pub fn refresh_pins(&mut self) {
        self.want_pins = !self.pins.is_empty();
        self.dispatch();
    }

    /// Asks for one process's categories from its full smaps (`show`'s use
    /// case), and the mappings of the chosen category at the mappings level.
    pub fn refresh_detail(&mut self) {
        self.want_detail = true;
        self.dispatch();
    }

    /// Whether the level looked at waits for the read of its process
    /// (just entered, or the mappings of a category just chosen).
    pub fn detail_pending(&self) -> bool {
        self.detail_job().is_some() && self.shown_detail != self.detail_job()
    }

    /// Whether a read is in flight.
    pub fn reading(&self) -> bool {
        self.reads.busy.is_some()
    }

    /// The read the screen waits for, as it is now.
    fn top_job(&self) -> Job {
        // A cgroup's processes need every process's cgroup.
        let cgroups = matches!(self.group, Some((TopBy::Cgroup, _)));
        Job::Top { by: self.by, sort: self.sort.top_field(), cgroups }
    }

    fn detail_job(&self) -> Option<Job> {
        let pid = self.pid.filter(|_| matches!(self.level, Level::Categories | Level::Mappings))?;
        let want = self.category.filter(|_| self.level == Level::Mappings);
        Some(Job::Detail { pid, want })
    }

    /// Sends the next read asked for, when none is in flight: the process
    /// looked at first.
    pub fn dispatch(&mut self) {
        if self.reading() {
            return;
        }
        if self.want_detail {
            match self.detail_job() {
                Some(job) => {
                    if self.reads.send(job) {
                        self.want_detail = false;
                    }
                    return;
                }
                None => self.want_detail = false,
            }
        }
        // The pinned rows' turn after a list's: when the list takes
        // longer than the interval, it is asked again before it is in.
        let pins = self.want_pins && !self.pins.is_empty();
        if self.want_top && !(pins && self.top_last) {
            if self.reads.send(self.top_job()) {
                self.want_top = false;
                self.top_last = true;
            }
            return;
        }
        if pins && self.reads.send(Job::Pins(self.pins.clone())) {
            self.want_pins = false;
            self.top_last = false;
        }
    }

    /// Takes the answer of the read in flight, if it came, and sends the
    /// next; whether the screen changed. An answer to a question the user
    /// has moved away from (another grouping, another process) is dropped
    /// and the current one asked.
    pub fn collect(&mut self) -> bool {
        let Some(done) = self.reads.answer() else { return false };
        let changed = match done {
            Done::Top { job, at, started, result } => {
                self.pace.record(started, process_cpu(), self.interval);
                if job == self.top_job() {
                    self.apply_top(at, result);
                    true
                } else {
                    self.want_top = true;
                    false
                }
            }
            Done::Detail { job, result } => {
                if self.detail_job().as_ref() == Some(&job) {
                    self.shown_detail = Some(job);
                    self.apply_detail(result);
                    true
                } else {
                    self.want_detail |= self.detail_job().is_some();
                    false
                }
            }
            Done::Pins { pins, result } => {
                if pins == self.pins {
                    self.apply_pins(result);
                    true
                } else {
                    self.want_pins = !self.pins.is_empty();
                    false
                }
            }
        };
        self.dispatch();
        changed
    }

    fn apply_top(&mut self, at: Instant, result: Result<Box<Top>, String>) {
        let before: Vec<ProcRow> = if matches!(self.by, TopBy::Process | TopBy::Tree) {
            self.top.as_ref().map(base_rows).unwrap_or_default()
        } else {
            Vec::new()
        };
        match result {
            Ok(now) => {
                let t = at.saturating_duration_since(self.start).as_secs_f64();
                let history = self.histories.entry(self.by.name()).or_default();
                history.record(
                    t,
                    now.report
                        .rows
                        .iter()
                        .filter_map(|r| r.sizes.pss.or(r.sizes.rss).map(|v| (r.key.as_str(), v))),
                );
                let by = now.report.by;
                let members: Vec<(String, u32)> = now
                    .scan
                    .processes
                    .iter()
                    .filter_map(|p| Some((group_key(p, by, &|u| now.users.name(u))?, p.info.pid)))
                    .collect();
                self.rates.record(
                    t,
                    now.scan
                        .processes
                        .iter()
                        .filter_map(|p| p.sizes.pss.or(p.sizes.rss).map(|v| (p.info.pid, v))),
                    members.iter().map(|(k, pid)| (k.as_str(), *pid)),
                );
                let alive: std::collections::HashSet<u32> =
                    now.scan.processes.iter().map(|p| p.info.pid).collect();
                self.ghosts.retain(|g| g.since.elapsed() < GHOST_TIME);
                for mut row in before {
                    if row.pid.is_some_and(|pid| !alive.contains(&pid)) {
                        row.gone = true;
                        self.ghosts.push(Ghost { row, since: Instant::now() });
                    }
                }
                self.ghosts.retain(|g| g.row.pid.is_some_and(|pid| !alive.contains(&pid)));
                self.top = Some(*now);
                self.lists_read += 1;
                self.top_error = None;
            }
            Err(e) => self.top_error = Some(e),
        }
    }

    fn apply_pins(&mut self, read: PinsRead) {
        self.pin_figures = self.pins.iter().map(|p| p.key.clone()).zip(read.figures).collect();
        self.pins_note = read.exclusive_error.or(read.wss_error);
        if let Some(n) = read.reset_first {
            // Once per new set of pinned processes, as `wss` says it on stderr.
            self.status = crate::ui::exact::reset_warning(n);
        }
    }

    fn apply_detail(&mut self, read: DetailRead) {
        crate::ui::detail::apply(&mut self.detail, read);
    }

    /// Goes one level down from the selected row.
    pub fn enter(&mut self) {
        match self.level {
            Level::Machine => self.level = Level::Processes,
            Level::Processes => {
                let rows = self.process_rows();
                let Some(row) = rows.get(self.cursor[1]) else { return };
                match row.pid {
                    Some(pid) => {
                        self.pid = Some(pid);
                        self.detail = None;
                        self.level = Level::Categories;
                        self.cursor[2] = 0;
                        self.refresh_detail();
                    }
                    None => {
                        // A group: its processes, one row each.
                        self.group = Some((self.by, row.label.clone()));
                        self.by = TopBy::Process;
                        self.cursor[1] = 0;
                        self.refresh_top();
                    }
                }
            }
            Level::Categories => {
                let rows = self.category_rows();
                let Some(cat) = rows.get(self.cursor[2]).and_then(|r| r.category) else {
                    return;
                };
                self.category = Some(cat);
                self.level = Level::Mappings;
                self.cursor[3] = 0;
                self.refresh_detail();
            }
            Level::Mappings => {}
        }
    }

    /// Goes one level up.
    pub fn back(&mut self) {
        match self.level {
            Level::Machine => {}
            Level::Processes => {
                if let Some((by, _)) = self.group.take() {
                    self.by = by;
                    self.cursor[1] = 0;
                    self.refresh_top();
                } else {
                    self.level = Level::Machine;
                }
            }
            Level::Categories => {
                self.level = Level::Processes;
                self.pid = None;
                self.detail = None;
            }
            Level::Mappings => {
                self.level = Level::Categories;
                self.category = None;
                self.refresh_detail();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An explorer on a recorded tree, its first list read applied
    /// (`None` in a published crate, which has no recordings).
    fn explorer_with_a_list() -> Option<App> {
        let tree = crate::testdata::testdata("fixtures/linux/chromium-browser/proc")?;
        let opts = Options { interval: Duration::from_secs(1), by: TopBy::Process, max_cpu: 0.0 };
        let mut app = App::new(ProcRoot::new(tree), &opts);
        app.refresh_top();
        let deadline = Instant::now() + Duration::from_secs(30);
        while app.top.is_none() {
            assert!(Instant::now() < deadline, "no list read in 30 s");
            app.collect();
            std::thread::sleep(Duration::from_millis(5));
        }
        Some(app)
    }

    /// The rows are built once for what they are built from, and again
    /// whenever any of it changes: never the rows of a filter, grouping
    /// or list that is gone.
    #[test]
    fn process_rows_are_kept_until_what_they_show_changes() {
        let Some(mut app) = explorer_with_a_list() else { return };
        let all = app.process_rows();
        assert!(!all.is_empty());
        assert!(Rc::ptr_eq(&all, &app.process_rows()), "the same rows are built again");

        app.filter = "no such process".into();
        let none = app.process_rows();
        assert!(none.is_empty(), "the filter is not applied: {} rows", none.len());
        app.filter.clear();
        assert_eq!(app.process_rows().len(), all.len());

        app.sort = app.sort.next();
        assert!(!Rc::ptr_eq(&all, &app.process_rows()), "a new sort keeps the old rows");

        let ghost = ProcRow { gone: true, ..all[0].clone() };
        app.ghosts.push(Ghost { row: ghost, since: Instant::now() });
        let with_ghost = app.process_rows();
        assert_eq!(with_ghost.len(), all.len() + 1);
        assert_eq!(with_ghost.iter().filter(|r| r.gone).count(), 1);

        // A new list read: new rows, though every figure is the same.
        let before = app.process_rows();
        app.refresh_top();
        let read = app.lists_read;
        let deadline = Instant::now() + Duration::from_secs(30);
        while app.lists_read == read {
            assert!(Instant::now() < deadline, "no second list read in 30 s");
            app.collect();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!Rc::ptr_eq(&before, &app.process_rows()), "a new list keeps the old rows");
    }
}
