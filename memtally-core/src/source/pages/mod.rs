//! Page-level readers: one process's pagemap over what is resident or
//! swapped (`pagemap`, ranges from the `PAGEMAP_SCAN` ioctl in
//! [`scan`]), and the frames' map counts and flags (`kpage`). They read
//! the live procfs only: a recorded tree has no page tables behind it.

pub(crate) mod kconfig;
pub(crate) mod kpage;
pub(crate) mod pagemap;
pub(crate) mod scan;

pub(crate) use kpage::KpageFiles;
