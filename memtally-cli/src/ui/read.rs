//! The process list's reads: `memtally_core::usecase::top::TopReader`,
//! `top`'s own steps and figures over every process, command lines read
//! once per process rather than at every refresh.

pub use memtally_core::usecase::top::TopReader as Reader;
