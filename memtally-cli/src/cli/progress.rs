//! A progress bar on stderr for reads that take more than a moment, and
//! only when stderr is a terminal: piped or redirected, nothing is drawn.
//! A signal clears it at once, so a command ended for it leaves no half
//! drawn bar on the terminal.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use memtally_core::usecase::{Progress, Silent};

/// How long a read may run before a bar is worth drawing.
const QUIET_FOR: Duration = Duration::from_millis(400);

/// What the use case reports; a watcher thread draws it.
#[derive(Default)]
struct Counter {
    total: AtomicUsize,
    done: AtomicUsize,
    label: Mutex<String>,
}

impl Progress for Counter {
    fn start(&self, what: &str, total: usize) {
        if let Ok(mut l) = self.label.lock() {
            *l = what.to_string();
        }
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    fn step(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs `work` with a [`Progress`] that draws a bar meanwhile when the
/// work is slow and stderr is a terminal.
pub fn with_progress<T>(work: impl FnOnce(&dyn Progress) -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return work(&Silent);
    }
    let counter = Counter::default();
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let start = Instant::now();
            let mut bar: Option<ProgressBar> = None;
            while !finished.load(Ordering::Relaxed) && crate::signal::received().is_none() {
                std::thread::sleep(crate::signal::STEP);
                let total = counter.total.load(Ordering::Relaxed);
                if bar.is_none() && total > 0 && start.elapsed() >= QUIET_FOR {
                    let label = counter.label.lock().map(|l| l.clone()).unwrap_or_default();
                    let b = ProgressBar::new(total as u64).with_message(label);
                    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
                    {
                        b.set_style(style.progress_chars("=> "));
                    }
                    bar = Some(b);
                }
                if let Some(b) = &bar {
                    b.set_length(total as u64);
                    b.set_position(counter.done.load(Ordering::Relaxed) as u64);
                }
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
        });
        let result = work(&counter);
        finished.store(true, Ordering::Relaxed);
        let _ = watcher.join();
        result
    })
}
