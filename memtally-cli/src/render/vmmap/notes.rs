//! The words of a vmmap document's notes, for the table's warnings and
//! the JSON's `unparsed.notes` alike: the library says what it assumed,
//! the command line says which option changes it.

use memtally_core::model::vmmap::{DocumentNote, OTHER_TYPES};

/// One note, as a line.
pub(super) fn document_note(note: &DocumentNote) -> String {
    match note {
        DocumentNote::PageSizeAssumed { bytes } => format!(
            "sizes are page counts but the input states no VM page size: assumed {bytes} bytes (pass --page-size BYTES)"
        ),
        DocumentNote::ColumnsInferred { line, first_row_seen } => {
            let why = if *first_row_seen { "not understood" } else { "missing" };
            format!(
                "line {line}: the summary table's first header row is {why}; columns inferred from the second row"
            )
        }
        DocumentNote::SummaryHeaderUnknown { line } => format!(
            "line {line}: summary table header not understood; its rows are counted as unreadable"
        ),
        DocumentNote::TypesFolded { kept, regions } => format!(
            "more than {kept} region types: the {regions} region(s) of the types after the first {kept} are summed in one row, \"{OTHER_TYPES}\""
        ),
        DocumentNote::SummaryRowsFolded { kept, rows } => format!(
            "the summary table has more than {kept} rows: the last {rows} are summed in one row, \"{OTHER_TYPES}\""
        ),
        DocumentNote::MallocZonesCut { kept, rows } => format!(
            "the MALLOC ZONE table has more than {kept} rows: the last {rows} are left out"
        ),
        DocumentNote::SeveralReports { line, process } => format!(
            "line {line}: a second report begins (Process: {process}): the input holds several reports, read as one (their regions and tables added together, the first header kept); split the input to read each"
        ),
    }
}
