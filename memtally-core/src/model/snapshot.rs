//! A snapshot: everything memtally knew about a selection of processes at
//! one moment, as one JSON document that `diff` and `plot` read back.
//! Linux snapshots come from `memtally snapshot`; a macOS vmmap report
//! becomes a snapshot of one process whose categories are region types.

use serde::{Deserialize, Serialize};

use super::group::{Group, Grouper};
use super::sizes::Sizes;

/// The format version written in `memtally_snapshot`.
pub const SNAPSHOT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// Format version; its presence marks the document as a snapshot.
    pub memtally_snapshot: u32,
    /// `linux` or `vmmap`.
    pub kind: String,
    /// When it was taken, RFC 3339 UTC; null when unknown (vmmap text).
    pub time: Option<String>,
    /// Seconds since the Unix epoch, for arithmetic.
    pub unix_time: Option<f64>,
    pub host: Option<String>,
    /// Kernel release (Linux) or OS version (vmmap header).
    pub kernel: Option<String>,
    /// The /proc tree read (`/proc`, or a recording).
    pub proc_root: Option<String>,
    pub processes: Vec<SnapProcess>,
    /// Sum over every process.
    pub totals: Sizes,
    /// Categories (Linux) or region types (vmmap), summed over processes.
    pub categories: Vec<Group>,
    /// `/proc/meminfo` in bytes, by meminfo name.
    #[serde(default)]
    pub machine: Option<std::collections::BTreeMap<String, u64>>,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapProcess {
    pub pid: Option<u32>,
    #[serde(default)]
    pub ppid: Option<u32>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub comm: String,
    pub command: String,
    /// Where the figures came from (`smaps`, `maps`, `vmmap`).
    pub source: String,
    pub totals: Sizes,
    pub categories: Vec<Group>,
    pub regions: Vec<SnapRegion>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapRegion {
    pub start: Option<u64>,
    pub end: Option<u64>,
    #[serde(default)]
    pub perms: String,
    pub path: Option<String>,
    pub category: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inode: Option<u64>,
    #[serde(flatten)]
    pub sizes: Sizes,
}

impl Snapshot {
    /// A snapshot of `processes` of one `kind` (`linux`, `vmmap`), with
    /// their totals and categories summed; when, where and notes empty.
    pub fn of(processes: Vec<SnapProcess>, kind: &str) -> Snapshot {
        let mut totals = Sizes::default();
        let mut categories = Grouper::new();
        for p in &processes {
            totals.add(&p.totals);
            for g in &p.categories {
                categories.add_group(g);
            }
        }
        Snapshot {
            memtally_snapshot: SNAPSHOT_VERSION,
            kind: kind.into(),
            time: None,
            unix_time: None,
            host: None,
            kernel: None,
            proc_root: None,
            processes,
            totals,
            categories: categories.into_groups(),
            machine: None,
            notes: Vec::new(),
        }
    }
}

impl SnapProcess {
    /// The regions added up by their `category`, first-seen order.
    pub fn categories_of(regions: &[SnapRegion]) -> Vec<Group> {
        let mut g = Grouper::new();
        for r in regions {
            g.add_sizes(&r.category, 1, &r.sizes);
        }
        g.into_groups()
    }
}

impl SnapRegion {
    /// What identifies a mapping across two snapshots of one process.
    pub fn identity(&self) -> (Option<u64>, Option<u64>, &str, Option<&str>) {
        (self.start, self.end, self.perms.as_str(), self.path.as_deref())
    }

    /// The name used for per-path grouping: path, else region type, else
    /// `[anonymous]`.
    pub fn path_key(&self) -> String {
        self.path
            .clone()
            .filter(|p| !p.is_empty())
            .or_else(|| self.region_type.clone())
            .unwrap_or_else(|| "[anonymous]".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_sizes_round_trip_and_other_keys_stay_out() {
        let json = r#"{"start":4096,"end":8192,"perms":"rw-p","path":null,"category":"heap","offset":0,"inode":0,"rss":4096,"private_dirty":4096,"thp_eligible":"0"}"#;
        let r: SnapRegion = serde_json::from_str(json).unwrap();
        assert_eq!(r.sizes.rss, Some(4096));
        assert_eq!(r.sizes.private_dirty, Some(4096));
        assert_eq!(r.sizes.size, None);
        assert!(
            r.sizes.extra.is_empty(),
            "start/end/offset/inode are not sizes: {:?}",
            r.sizes.extra
        );
        let back: SnapRegion = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.sizes, r.sizes);
        assert_eq!(back.identity(), r.identity());
    }
}
