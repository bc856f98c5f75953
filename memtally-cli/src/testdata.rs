//! The repository's recordings (`testdata/` beside this package) for the
//! unit tests. The published crate does not carry them (cargo packages
//! this directory only): there a test that reads them is skipped with a
//! printed reason. In the repository a missing recording fails the test.

use std::path::{Path, PathBuf};

/// `testdata/PATH` of the repository; `None`, with the reason printed,
/// in a published crate (cargo's package has a `Cargo.toml.orig`) that
/// lacks it.
pub(crate) fn testdata(path: &str) -> Option<PathBuf> {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = package.join("../testdata").join(path);
    if !file.exists() && package.join("Cargo.toml.orig").exists() {
        eprintln!("skipped: testdata/{path} is in the repository, not in the published crate");
        return None;
    }
    Some(file)
}

/// The use cases' views of recordings, for the printers' tests (a
/// printer imports no use case: it prints what one returns).
pub(crate) mod views {
    use std::path::Path;

    use memtally_core::analyze::cgroup::CgroupView;
    use memtally_core::analyze::classic::Classic;
    use memtally_core::analyze::vmmap::VmmapReport;
    use memtally_core::usecase::cgroup::{cgroups, CgroupOptions};
    use memtally_core::usecase::vmmap::{read, VmmapInput};
    use memtally_core::{show, GpuOptions, GpuReport, ProcRoot, ShowOptions, ShowView, Shown};
    use memtally_core::{Silent, VmmapOptions};

    /// A saved vmmap report, its regions kept.
    pub(crate) fn vmmap(file: &Path) -> VmmapReport {
        let opts = VmmapOptions::default().with_keep_regions(true);
        read(&VmmapInput::File(file.to_path_buf()), &opts, &mut ()).unwrap()
    }

    /// `gpu` of a recorded machine.
    pub(crate) fn gpu(root: &ProcRoot) -> GpuReport {
        memtally_core::usecase::gpu::gpu(root, &GpuOptions::default()).unwrap()
    }

    /// `cgroup` of a recorded machine, every cgroup.
    pub(crate) fn cgroup(root: &ProcRoot) -> CgroupView {
        cgroups(root, &CgroupOptions::default(), &Silent).unwrap()
    }

    /// `show PID --classic` of a recorded process.
    pub(crate) fn classic(root: &ProcRoot, pid: u32) -> Classic {
        let view = ShowView::Classic(pid);
        let Ok(Shown::Classic(classic)) =
            show(root, &view, &ShowOptions::default(), &mut (), &Silent)
        else {
            panic!("the classic view of a recorded process")
        };
        classic
    }
}
