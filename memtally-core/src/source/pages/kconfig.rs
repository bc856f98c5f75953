//! Whether this kernel keeps a map count per page of a large folio or only
//! the folio's average (`CONFIG_NO_PAGE_MAPCOUNT`, Linux 6.15 and later):
//! with the average, kpagecount of a page in a partly shared large folio
//! is not that page's own count, and a note says the exclusive figure may
//! be off for such pages. Read from the kernel's build configuration:
//! `/proc/config.gz` (`CONFIG_IKCONFIG_PROC`), else the plain text file
//! distributions install in `/boot`.

use std::io::Read;

use crate::source::ProcRoot;

/// How kpagecount counts pages of large folios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LargeFolioCount {
    /// Each page's own map count (`CONFIG_PAGE_MAPCOUNT=y`, or a kernel
    /// older than the option, where it is always so).
    Precise,
    /// The folio's average map count (`CONFIG_NO_PAGE_MAPCOUNT=y`).
    Average,
    /// The configuration could not be read.
    Unknown,
}

/// How the running kernel counts; `root` gives its release.
pub(crate) fn large_folio_count(root: &ProcRoot) -> LargeFolioCount {
    if let Ok(f) = std::fs::File::open(root.path().join("config.gz")) {
        // A few hundred KiB of text; bounded all the same.
        let mut text = String::new();
        let gz = flate2::read::GzDecoder::new(f).take(16 << 20);
        if std::io::BufReader::new(gz).read_to_string(&mut text).is_ok() {
            return from_config(&text);
        }
    }
    let release = std::fs::read_to_string(root.path().join("sys/kernel/osrelease"));
    let Ok(release) = release else { return LargeFolioCount::Unknown };
    let config = std::fs::read_to_string(format!("/boot/config-{}", release.trim()));
    match config {
        Ok(text) => from_config(&text),
        Err(_) => LargeFolioCount::Unknown,
    }
}

/// Reads the answer from a kernel configuration's text.
pub(crate) fn from_config(text: &str) -> LargeFolioCount {
    if text.lines().any(|l| l.trim() == "CONFIG_NO_PAGE_MAPCOUNT=y") {
        LargeFolioCount::Average
    } else {
        LargeFolioCount::Precise
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_decides() {
        assert_eq!(from_config("CONFIG_NO_PAGE_MAPCOUNT=y\n"), LargeFolioCount::Average);
        assert_eq!(
            from_config("# CONFIG_NO_PAGE_MAPCOUNT is not set\nCONFIG_PAGE_MAPCOUNT=y\n"),
            LargeFolioCount::Precise
        );
    }
}
