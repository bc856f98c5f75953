//! `memtally export`: the metrics of `memtally serve`, once, for
//! node_exporter's textfile collector (`--textfile DIR` writes
//! `DIR/memtally.prom` atomically) or on standard output.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::cli::metrics::{collect, MetricsArgs};
use crate::error::{Error, Result};
use crate::render::prometheus::{encode, Exposition};
use crate::source::ProcRoot;

/// The file written in the textfile directory.
pub const TEXTFILE_NAME: &str = "memtally.prom";

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub metrics: MetricsArgs,

    /// Write DIR/memtally.prom (temporary file + rename, so node_exporter
    /// never reads half a file) instead of printing to standard output.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
}

pub fn run(root: &ProcRoot, args: &ExportArgs, out: &mut dyn Write) -> Result<()> {
    let metrics = collect(root, &args.metrics)?;
    let text = encode(&metrics, Exposition::Text);
    match &args.textfile {
        Some(dir) => write_atomically(dir, TEXTFILE_NAME, text.as_bytes()).map(|_| ()),
        None => out.write_all(text.as_bytes()).map_err(|e| Error::io("standard output", e)),
    }
}

/// Writes `dir/name` through a temporary file in the same directory
/// (`.name.PID.tmp`, which node_exporter ignores: it reads only `*.prom`)
/// that is synced and then renamed over the target. Returns the path.
pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
    if !meta.is_dir() {
        return Err(Error::Usage(format!(
            "--textfile {}: not a directory (give node_exporter's --collector.textfile.directory)",
            dir.display()
        )));
    }
    let target = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(&target, e));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        write_atomically(dir.path(), "m.prom", b"a 1\n").unwrap();
        let p = write_atomically(dir.path(), "m.prom", b"a 2\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"a 2\n");
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("m.prom")]);
    }

    #[test]
    fn a_missing_or_non_directory_target_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomically(&dir.path().join("nope"), "m.prom", b"").unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::NOT_FOUND);
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let e = write_atomically(&file, "m.prom", b"").unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::USAGE);
    }
}
