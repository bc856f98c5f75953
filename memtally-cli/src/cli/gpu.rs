//! `memtally gpu`: GPU memory per process and device, from DRM and dma-buf
//! fdinfo (and `nvidia-smi` where it exists), each client and buffer
//! counted once.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::gpu::{gpu, GpuOptions};
use memtally_core::Result;

use crate::cli::select::SelectArgs;
use crate::render::gpu::GpuView;
use crate::render::{print, Format};

#[derive(Debug, Args)]
pub struct GpuArgs {
    /// Only this process (shares are still counted across the machine);
    /// or select with --pid, --tree, --name, --user, --cgroup.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Stop nvidia-smi after this many seconds (its figures are then left out, with a note).
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub nvidia_timeout: u64,
}

pub fn run(root: &ProcRoot, args: &GpuArgs, out: &mut dyn Write) -> Result<()> {
    let opts = GpuOptions::default()
        .with_pid(args.pid)
        .with_select(args.select.selection(args.pid)?)
        .with_nvidia_timeout(Duration::from_secs(args.nvidia_timeout));
    print(&GpuView { report: gpu(root, &opts)? }, args.format, out)
}
