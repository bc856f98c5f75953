//! Prints the page-level views: page states by category (`show --pages`),
//! what a selection gives back (`show --exact`), and who shares with whom
//! (`shared`). `top --exact`'s column is printed by `render::top`.

pub(crate) mod exact;
pub(crate) mod shared;
pub(crate) mod states;

pub use exact::ExactShow;

/// `12.0M (35%)`: bytes and what they are of `of`.
fn with_share(bytes: u64, of: Option<u64>) -> String {
    let b = crate::render::units::human(bytes);
    match of.filter(|&o| o > 0) {
        Some(o) => format!("{b} ({:.0}%)", bytes as f64 * 100.0 / o as f64),
        None => b,
    }
}
