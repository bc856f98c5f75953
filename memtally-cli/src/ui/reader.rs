//! The explorer's reads, off the UI thread: one worker thread owns the
//! `/proc` reads (`top`'s list, `show`'s full smaps of the process looked
//! at) and answers each job with its result, so a key is answered at once
//! however long a read takes (a process with 500,000 mappings takes
//! seconds). One job at a time: the UI sends the next one when the last
//! is answered, so reads never pile up behind a slow one.

use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::time::Instant;

use memtally_core::analyze::category::{categorize, Category};
use memtally_core::analyze::show::ShowReport;
use memtally_core::analyze::top::Top;
use memtally_core::analyze::top::{TopBy, TopSort};
use memtally_core::model::{Figure, Flow, Region, RegionSink};
use memtally_core::source::ProcRoot;
use memtally_core::usecase::show::{show, ShowOptions, ShowView};
use memtally_core::usecase::top::TopReader;
use memtally_core::usecase::Silent;
use memtally_core::Error;

use crate::render::errors::Worded;
use crate::ui::exact::{Measuring, Pin, PinsRead};

/// Mappings kept for the mappings level: beyond this many, counted only.
pub const MAX_MAPPINGS: usize = 20_000;

/// What to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// Every process, grouped and sorted as shown; `cgroups` reads every
    /// process's cgroup too.
    Top { by: TopBy, sort: Figure, cgroups: bool },
    /// One process's full smaps, keeping the mappings of `want`.
    Detail { pid: u32, want: Option<Category> },
    /// The pinned rows' exclusive and working-set figures (`x`).
    Pins(Vec<Pin>),
}

/// A job's answer, with the job it answers (the UI may have moved on).
pub enum Done {
    /// Boxed: a list is large beside the other answer.
    Top {
        job: Job,
        at: Instant,
        /// When the read began (see `pace`).
        started: Instant,
        result: Result<Box<Top>, String>,
    },
    Detail {
        job: Job,
        result: DetailRead,
    },
    Pins {
        pins: Vec<Pin>,
        result: PinsRead,
    },
}

/// One process's full read.
pub enum DetailRead {
    /// Boxed: a report is large beside the other answers.
    Read { report: Box<ShowReport>, mappings: Vec<Region>, more: usize },
    /// The process is gone.
    Gone,
    /// It could not be read; the error as worded for the user.
    Failed(String),
}

/// The worker thread and its two channels.
pub struct Reader {
    jobs: Sender<Job>,
    done: Receiver<Done>,
    /// The job sent and not answered yet.
    pub busy: Option<Job>,
}

impl Reader {
    /// Starts the worker; it ends when the `Reader` is dropped (after the
    /// read it is in, whose answer nobody takes).
    pub fn start(root: ProcRoot) -> Reader {
        let (jobs, job_rx) = channel::<Job>();
        let (done_tx, done) = channel::<Done>();
        std::thread::Builder::new()
            .name("memtally-ui-reads".into())
            .spawn(move || {
                lower_priority();
                let mut reader = TopReader::default();
                let mut measuring = Measuring::default();
                while let Ok(job) = job_rx.recv() {
                    if done_tx.send(run(&root, &mut reader, &mut measuring, job)).is_err() {
                        return;
                    }
                }
            })
            .expect("a thread for the explorer's reads");
        Reader { jobs, done, busy: None }
    }

    /// Sends a job when none is in flight; whether it was sent.
    pub fn send(&mut self, job: Job) -> bool {
        if self.busy.is_some() || self.jobs.send(job.clone()).is_err() {
            return false;
        }
        self.busy = Some(job);
        true
    }

    /// The answer of the job in flight, if it has come.
    pub fn answer(&mut self) -> Option<Done> {
        match self.done.try_recv() {
            Ok(d) => {
                self.busy = None;
                Some(d)
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.busy = None;
                None
            }
        }
    }
}

/// Gives this thread (the reads) a lower priority than the UI thread, so
/// a key is answered first on a busy machine: Linux's nice value belongs
/// to each thread. Best effort; a failure leaves the reads as they were.
/// (Elsewhere the nice value is the whole process's: nothing is done, and
/// the explorer reads Linux's /proc anyway.)
fn lower_priority() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 10);
}

fn run(root: &ProcRoot, reader: &mut TopReader, measuring: &mut Measuring, job: Job) -> Done {
    match job {
        Job::Pins(pins) => {
            let result = crate::ui::exact::read(root, &pins, measuring);
            Done::Pins { pins, result }
        }
        Job::Top { by, sort, cgroups } => {
            let started = Instant::now();
            let result = reader
                .top(root, by, TopSort::Figure(sort), cgroups)
                .map(Box::new)
                .map_err(|e| Worded(&e).to_string());
            Done::Top { job, at: Instant::now(), started, result }
        }
        Job::Detail { pid, want } => {
            let mut kept = CategoryMappings { want, mappings: Vec::new(), more: 0 };
            let view = ShowView::Process(pid);
            let read = show(root, &view, &ShowOptions::default(), &mut kept, &Silent);
            let CategoryMappings { mut mappings, more, .. } = kept;
            let result = match read {
                Ok(shown) => {
                    let Some(report) = shown.into_regions() else {
                        unreachable!("a process's view is its regions")
                    };
                    mappings.sort_by(|a, b| {
                        let key = |r: &Region| (r.sizes.dirty(), r.sizes.rss);
                        key(b).cmp(&key(a))
                    });
                    DetailRead::Read { report: Box::new(report), mappings, more }
                }
                Err(Error::NoSuchProcess { .. }) => DetailRead::Gone,
                Err(e) => DetailRead::Failed(Worded(&e).to_string()),
            };
            Done::Detail { job, result }
        }
    }
}

/// The mappings of one category (`want`; none when `None`), at most
/// [`MAX_MAPPINGS`] of them kept and the rest counted.
struct CategoryMappings {
    want: Option<Category>,
    mappings: Vec<Region>,
    more: usize,
}

impl RegionSink for CategoryMappings {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        if self.want.is_some_and(|c| categorize(region) == c) {
            if self.mappings.len() < MAX_MAPPINGS {
                self.mappings.push(region.clone());
            } else {
                self.more += 1;
            }
        }
        Flow::Continue
    }
}
