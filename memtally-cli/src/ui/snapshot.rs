//! The snapshot key: what is shown, as `memtally snapshot` writes it
//! (the same use case and file writer), into a new file here.

use std::path::PathBuf;

use memtally_core::analyze::select::Selection;
use memtally_core::usecase::snapshot_stream::{take_into, Extras, Output};
use memtally_core::usecase::Silent;
use memtally_core::{Error, Result};

use crate::ui::app::{App, Level};

/// What is shown, as a selection: the process looked at, the filtered or
/// grouped list, or every process.
pub fn selection(app: &App) -> Selection {
    match app.level {
        Level::Categories | Level::Mappings => Selection::of_pids(app.pid.into_iter().collect()),
        _ if app.filter.is_empty() && app.group.is_none() => Selection::default(),
        _ => {
            let mut pids: Vec<u32> = Vec::new();
            for r in app.process_rows().iter().filter(|r| !r.gone) {
                match r.pid {
                    Some(pid) => pids.push(pid),
                    // A group row: its processes.
                    None => pids.extend(members(app, &r.label)),
                }
            }
            Selection::of_pids(pids)
        }
    }
}

/// The PIDs of the group row `key` of the current grouping.
pub fn members(app: &App, key: &str) -> Vec<u32> {
    use memtally_core::analyze::top::group_key;
    let Some(top) = &app.top else { return Vec::new() };
    top.scan
        .processes
        .iter()
        .filter(|p| group_key(p, app.by, &|uid| top.users.name(uid)).as_deref() == Some(key))
        .map(|p| p.info.pid)
        .collect()
}

/// Takes and writes the snapshot; the file name says when.
pub fn write(app: &App) -> Result<PathBuf> {
    let sel = selection(app);
    if !sel.is_everything() && sel.pids.is_empty() {
        return Err(Error::Usage("nothing shown to snapshot".into()));
    }
    let stamp: String = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let path = PathBuf::from(format!("memtally-snapshot-{stamp}.json"));
    crate::cli::snapshot::to_file(
        &path,
        memtally_core::usecase::output_access(&app.root),
        |out, error| {
            let output = Output { out, word: &crate::render::notes::word, error };
            take_into(&app.root, &sel, &Silent, Extras::default(), output)
        },
    )?;
    Ok(path)
}
