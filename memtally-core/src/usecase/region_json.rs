//! One Linux region as `snapshot` writes it, the bytes serde's derived
//! writer makes of [`SnapRegion`](crate::model::snapshot::SnapRegion)
//! (`analyze::snapshot::linux_region`), written straight from the [`Region`] without
//! building one: the key names are fixed, and numbers and strings go
//! through [`json_bytes`](crate::write::json_bytes), serde_json's bytes written straight into the
//! buffer. The generic path
//! made a `SnapRegion` (a `String` for the category), a list of the
//! present sizes, and went through serde's map and flatten machinery for
//! each of a process's regions (issue 25: the writer was a third of
//! `snapshot`'s own CPU over 1,000 processes). The tests below hold it to
//! serde's bytes.

use std::sync::LazyLock;

use crate::model::sizes::KNOWN_KEYS;
use crate::model::Region;
use crate::write::json_bytes::{decimal, opt_string, opt_u64, string, ShortBytes, SHORT_BYTES};

/// Figures a snapshot region leaves out: they describe the mapping, and
/// the snapshot format has never held them (`analyze::snapshot::linux_region`).
const LEFT_OUT: [&str; 2] = ["kernel_page_size", "mmu_page_size"];

/// Beside each of [`KNOWN_KEYS`], what goes before its value (`,"rss":`),
/// or `None` for a figure left out. Each fits a [`ShortBytes`] (the
/// longest known name is 16 bytes), so writing it is no call to `memmove`.
static KEYS: LazyLock<Vec<Option<ShortBytes>>> = LazyLock::new(|| {
    KNOWN_KEYS
        .iter()
        .map(|k| {
            let key = format!(",\"{}\":", k.name);
            (!LEFT_OUT.contains(&k.name)).then(|| ShortBytes::new(key.as_bytes())).flatten()
        })
        .collect()
});

/// What a region's known figures take at most, keys and numbers: reserved
/// once a region.
const FIGURES_MOST: usize = KNOWN_KEYS.len() * (SHORT_BYTES + 20);

/// Appends region `r`, of category key `category`, as its JSON object.
pub(crate) fn write_linux_region(out: &mut Vec<u8>, r: &Region, category: &str) {
    out.extend_from_slice(b"{\"start\":");
    opt_u64(out, r.start);
    out.extend_from_slice(b",\"end\":");
    opt_u64(out, r.end);
    out.extend_from_slice(b",\"perms\":");
    string(out, &r.perms);
    out.extend_from_slice(b",\"path\":");
    opt_string(out, r.path.as_deref());
    out.extend_from_slice(b",\"category\":");
    string(out, category);
    if let Some(t) = &r.region_type {
        out.extend_from_slice(b",\"region_type\":");
        string(out, t);
    }
    if let Some(offset) = r.offset {
        out.extend_from_slice(b",\"offset\":");
        decimal(out, offset);
    }
    if let Some(inode) = r.inode {
        out.extend_from_slice(b",\"inode\":");
        decimal(out, inode);
    }
    out.reserve(FIGURES_MOST);
    for (key, value) in KEYS.iter().zip(r.sizes.known()) {
        if let (Some(key), Some(value)) = (key, value) {
            key.write(out);
            decimal(out, value);
        }
    }
    for (name, value) in &r.sizes.extra {
        out.push(b',');
        string(out, name);
        out.push(b':');
        decimal(out, *value);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::category::categorize;
    use crate::analyze::snapshot::linux_region;
    use crate::model::Backing;
    use crate::source::parse::smaps::SmapsReader;

    fn both(r: &Region) -> (String, String) {
        let category = categorize(r).key();
        let mut ours = Vec::new();
        write_linux_region(&mut ours, r, category);
        let serde = serde_json::to_vec(&linux_region(r)).unwrap();
        (String::from_utf8(ours).unwrap(), String::from_utf8(serde).unwrap())
    }

    #[test]
    fn every_figure_written_has_its_key() {
        for (k, key) in KNOWN_KEYS.iter().zip(KEYS.iter()) {
            assert_eq!(key.is_some(), !LEFT_OUT.contains(&k.name), "{}", k.name);
        }
    }

    #[test]
    fn every_recorded_region_is_serdes_bytes() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/linux");
        let mut compared = 0;
        for tree in std::fs::read_dir(root).unwrap() {
            let proc = tree.unwrap().path().join("proc");
            let Ok(pids) = std::fs::read_dir(&proc) else { continue };
            for pid in pids {
                let smaps = pid.unwrap().path().join("smaps");
                let Ok(text) = std::fs::read(&smaps) else { continue };
                let mut reader = SmapsReader::new(&text[..]);
                while let Some((_, r)) = reader.next_located().unwrap() {
                    let (ours, serde) = both(&r);
                    assert_eq!(ours, serde, "{}", smaps.display());
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000, "only {compared} regions compared");
    }

    #[test]
    fn strings_that_need_escaping_and_odd_regions_are_serdes_bytes() {
        let mut r = Region::new(Backing::File);
        r.perms = "r-xp".into();
        r.path = Some("/tmp/a \"quoted\" \\ name\n\t\u{1}\u{7f} é (deleted)".into());
        r.region_type = Some("tab\there".into());
        r.sizes.rss = Some(0);
        r.sizes.kernel_page_size = Some(4096);
        r.sizes.mmu_page_size = Some(4096);
        r.sizes.swap = Some(u64::MAX);
        r.sizes.extra = vec![("new_key".into(), 7), ("odd\"name".into(), 1)];
        let (ours, serde) = both(&r);
        assert_eq!(ours, serde);
        // No range, no offset or inode, no sizes at all.
        let bare = Region::new(Backing::Anonymous);
        let (ours, serde) = both(&bare);
        assert_eq!(ours, serde);
        assert!(ours.starts_with("{\"start\":null,\"end\":null,"), "{ours}");
    }
}
