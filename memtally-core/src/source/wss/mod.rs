//! What `wss` needs of the live kernel beyond smaps: resetting a
//! process's referenced bits (`clear_refs`) and telling whether idle page
//! tracking is there. Both are about live processes only.

pub(crate) mod clear_refs;
pub(crate) mod idle;
