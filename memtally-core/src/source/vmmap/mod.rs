//! Running macOS `vmmap` itself (`runner`). The parser it feeds is
//! `source::parse::vmmap`.

pub(crate) mod runner;
