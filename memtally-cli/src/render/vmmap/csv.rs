//! `memtally vmmap --format csv`: one row per selected region.

use std::io::{self, Write};

use super::{VmmapStream, VmmapView};

/// One CSV row per selected region, exact bytes; empty cell = not given.
pub(super) fn csv(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let mut stream = VmmapStream::new(false);
    for (line, g) in &r.report.regions {
        stream.region(*line, g, out)?;
    }
    stream.finish(r, out)
}
