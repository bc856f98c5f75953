//! The process looked at: its last read (categories, the mappings of the
//! chosen category), kept when it exits or a read fails.

use std::time::Instant;

use memtally_core::analyze::show::ShowReport;
use memtally_core::model::Region;

use crate::ui::reader::DetailRead;

/// One process's categories (full smaps, read only for the process being
/// looked at), and the mappings of the chosen category.
#[derive(Debug)]
pub struct Detail {
    pub report: Option<ShowReport>,
    pub mappings: Vec<Region>,
    pub more_mappings: usize,
    /// When the process was found gone; its last figures stay on screen.
    pub gone: Option<Instant>,
    pub error: Option<String>,
}

/// Takes one read of the process looked at: its figures, or that it is
/// gone (its last figures stay), or why it could not be read.
pub fn apply(detail: &mut Option<Detail>, read: DetailRead) {
    match read {
        DetailRead::Read { report, mappings, more } => {
            *detail = Some(Detail {
                report: Some(*report),
                mappings,
                more_mappings: more,
                gone: None,
                error: None,
            });
        }
        DetailRead::Gone => match detail {
            Some(d) => {
                d.gone.get_or_insert_with(Instant::now);
            }
            None => {
                *detail = Some(Detail {
                    report: None,
                    mappings: Vec::new(),
                    more_mappings: 0,
                    gone: Some(Instant::now()),
                    error: None,
                })
            }
        },
        DetailRead::Failed(e) => {
            let error = Some(e);
            match detail {
                Some(d) => d.error = error,
                None => {
                    *detail = Some(Detail {
                        report: None,
                        mappings: Vec::new(),
                        more_mappings: 0,
                        gone: None,
                        error,
                    })
                }
            }
        }
    }
}
