//! What the levels draw from, apart from the levels themselves, so no
//! level imports another: the rows each level lists (built from the use
//! cases' reports) and the table cells they share.

pub mod category_rows;
pub mod cells;
pub mod process_rows;
