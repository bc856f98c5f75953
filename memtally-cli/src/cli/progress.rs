//! A progress bar on stderr for scans that take more than a moment, and
//! only when stderr is a terminal: piped or redirected, nothing is drawn.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How long a scan may run before a bar is worth drawing.
const QUIET_FOR: Duration = Duration::from_millis(400);

/// Runs `work`, which counts its progress in the given counter out of
/// `total`, drawing a bar meanwhile when it is slow and stderr is a terminal.
pub fn with_progress<T>(total: usize, label: &str, work: impl FnOnce(&AtomicUsize) -> T) -> T {
    let done = AtomicUsize::new(0);
    if !std::io::stderr().is_terminal() {
        return work(&done);
    }
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let start = Instant::now();
            let mut bar: Option<ProgressBar> = None;
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                if bar.is_none() && start.elapsed() >= QUIET_FOR {
                    let b = ProgressBar::new(total as u64).with_message(label.to_string());
                    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
                    {
                        b.set_style(style.progress_chars("=> "));
                    }
                    bar = Some(b);
                }
                if let Some(b) = &bar {
                    b.set_position(done.load(Ordering::Relaxed) as u64);
                }
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
        });
        let result = work(&done);
        finished.store(true, Ordering::Relaxed);
        let _ = watcher.join();
        result
    })
}
