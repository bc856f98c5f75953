//! `memtally vmmap --format csv`: one row per selected region, or the
//! table `--csv` names.

use std::io::{self, Write};

use memtally_core::model::vmmap::VRegion;

use super::{VmmapStream, VmmapView};

/// One CSV row per selected region, exact bytes; empty cell = not given.
pub(super) fn csv(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let mut stream = VmmapStream::new(false);
    if r.csv == super::VmmapCsv::Regions {
        for (line, g) in &r.report.regions {
            stream.region(*line, &VRegion::of(g), out)?;
        }
    }
    stream.finish_csv(r, out)
}
