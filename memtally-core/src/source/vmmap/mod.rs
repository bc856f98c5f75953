//! Reading macOS `vmmap` output from the system: running `vmmap` itself
//! (`runner`), and a large report file parsed on two threads (`split`).
//! The parser they feed is `source::parse::vmmap`.

pub(crate) mod runner;
pub mod split;
