//! `shared`: which processes (or programs, users, cgroups, trees) share
//! the most resident pages, from the page frames they map; with what those
//! pages are of each one's PSS.

use crate::analyze::select::Selection;
use crate::analyze::sharing::{pairs, SharedView, Sharer};
use crate::analyze::top::{row_members, TopBy};
use crate::error::{PageFigure, Result};
use crate::model::pages::ProcPages;
use crate::model::Note;
use crate::source::ProcRoot;
use crate::usecase::pages::{read_pages, FramesFor};
use crate::usecase::top::{top, TopOptions};
use crate::usecase::Progress;

/// Reads the selection's pages and pairs up its groups (at most `top` pairs).
pub fn shared(
    root: &ProcRoot,
    select: Selection,
    by: TopBy,
    top_pairs: usize,
    progress: &dyn Progress,
) -> Result<SharedView> {
    if !root.is_procfs() {
        return Err(crate::error::Error::LiveOnly {
            root: root.path().to_path_buf(),
            what: crate::error::LiveOnly::Pages(PageFigure::Sharing),
        });
    }
    let opts = TopOptions::default()
        .with_select(select)
        .with_by(by)
        .with_top(None)
        .with_every_identity(true);
    let view = top(root, &opts, progress)?;
    let procs: Vec<(u32, String)> =
        view.scan.processes.iter().map(|p| (p.info.pid, p.info.comm.clone())).collect();
    let read = read_pages(root, &procs, FramesFor::Shared, PageFigure::Sharing)?;
    let user_name = |uid: Option<u32>| view.users.name(uid);
    let members = row_members(&view.scan.processes, &view.report, &user_name);
    // A tree row holds its descendants' rows too: pairs of a subtree with
    // itself say nothing, so trees pair up their top-level rows only.
    let keep: Vec<usize> = (0..view.report.rows.len())
        .filter(|&i| by != TopBy::Tree || view.report.rows[i].depth == 0)
        .collect();
    let groups: Vec<Vec<&ProcPages>> = keep
        .iter()
        .map(|&i| members[i].iter().filter_map(|&m| read.pages[m].as_ref()).collect())
        .collect();
    let (found, skipped) = pairs(&groups, &read.frames, top_pairs);
    let sharers = keep
        .iter()
        .map(|&i| {
            let r = &view.report.rows[i];
            let label = match r.process {
                Some(p) => view.scan.processes[p].info.command(),
                None => r.key.clone(),
            };
            Sharer { key: r.key.clone(), label, processes: r.processes, pss: r.sizes.pss }
        })
        .collect();
    let mut notes = view.notes();
    if skipped > 0 {
        notes.push(Note::SharedTooWidely { frames: skipped });
    }
    if let Some((_, first)) = read.unread.first() {
        notes.push(Note::PagesUnread { count: read.unread.len(), first: first.clone() });
    }
    Ok(SharedView { by, sharers, pairs: found, notes })
}
