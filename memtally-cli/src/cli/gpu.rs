//! `memtally gpu`: GPU memory per process and device, from DRM and dma-buf
//! fdinfo (and `nvidia-smi` where it exists), each client and buffer
//! counted once.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::gpu::{gpu, GpuOptions};
use memtally_core::Result;

use crate::cli::duration::duration;
use crate::cli::select::SelectArgs;
use crate::render::gpu::GpuView;
use crate::render::{print, Format, Screen};

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

    /// Stop nvidia-smi after this long (`5s`, `500ms`; a bare number is
    /// seconds): its figures are then left out, with a note.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration)]
    pub nvidia_timeout: Duration,
}

pub fn run(root: &ProcRoot, args: &GpuArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let opts = GpuOptions::default()
        .with_pid(args.pid)
        .with_select(args.select.selection(args.pid)?)
        .with_nvidia_timeout(args.nvidia_timeout);
    print(&GpuView { report: gpu(root, &opts)? }, args.format, screen, out)
}
