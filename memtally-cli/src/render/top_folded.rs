//! `top --format folded`: every selected process as one folded stack
//! (render::folded), `program;pid` (under its user or cgroup first with
//! `--by user|cgroup`), counting one figure's bytes (PSS unless
//! `--figure` says), so a flame graph's widths add up to top's total of
//! that figure. A process without the figure (PSS of a process read from
//! `status` only) has no line; the notes say which ones, on stderr.

use std::io::{self, Write};

use memtally_core::analyze::top::Top;
use memtally_core::analyze::top::{group_key, TopBy};
use memtally_core::model::Figure;

use crate::render::folded;

/// Writes the folded stacks of `top`'s processes, counting `figure`.
pub fn folded(top: &Top, figure: Figure, out: &mut dyn Write) -> io::Result<()> {
    let user_name = |uid| top.users.name(uid);
    for p in &top.scan.processes {
        let Some(bytes) = p.sizes.figure(figure) else { continue };
        let group = match top.report.by {
            TopBy::User | TopBy::Cgroup => group_key(p, top.report.by, &user_name),
            TopBy::Process | TopBy::Program | TopBy::Tree => None,
        };
        let pid = p.info.pid.to_string();
        let frames = group.as_deref().into_iter().chain([p.info.program.as_str(), pid.as_str()]);
        folded::write(out, frames, bytes)?;
    }
    Ok(())
}
