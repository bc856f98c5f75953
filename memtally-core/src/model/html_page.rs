//! The elements a `memtally report` page carries its recordings in: the
//! HTML printer writes exactly these, and the reader of a page
//! (`source::parse::snapshot_html`) looks for them, so the page itself can
//! be handed to `diff` and `report` again.

/// The opening tag of the element the page carries its snapshot in.
pub const SNAPSHOT_ELEMENT: &str = r#"<script type="application/json" id="memtally-snapshot">"#;

/// The opening tag of the element a page carries its page-fault
/// recording in (`report --faults`, `--faults-input`), after the
/// snapshot's; written as the snapshot is (every `<` escaped).
pub const FAULTS_ELEMENT: &str = r#"<script type="application/json" id="memtally-faults">"#;
